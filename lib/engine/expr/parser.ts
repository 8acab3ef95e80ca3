/**
 * The parser of Spark SQL expressions: text to a syntax tree (Ast), by recursive descent over
 * Spark's grammar (SqlBaseParser's booleanExpression / valueExpression / primaryExpression), with
 * Spark's precedence, lowest first:
 *
 *   OR < AND < NOT < predicates (IS [NOT] NULL | TRUE | FALSE | UNKNOWN | DISTINCT FROM, [NOT] IN,
 *      [NOT] BETWEEN, [NOT] LIKE | ILIKE [ANY | SOME | ALL], RLIKE)
 *      < comparisons (= == != <> < <= > >= <=>) < | < ^ < & < << >> >>> < + - || < * / % div
 *      < unary - + ~ < postfix (a[i], s.f, x::type)
 *
 * Why a hand-written parser: the npm packages that speak Spark's dialect (dt-sql-parser, built
 * with antlr4ng) parse whole statements with a generated grammar of several megabytes — too much
 * for the Lambda bundle for one expression — and report ANTLR's errors, not Spark's
 * `PARSE_SYNTAX_ERROR` with a position; the generic SQL parsers (node-sql-parser, pgsql-ast-parser...)
 * reject Spark's forms (`1.5BD`, `x::INT`, `a[0]`, backslash escapes, `div`, `<=>`, `RLIKE`). The
 * expression grammar is small, and the DDL types inside it go through lib/engine/ddl.ts's parser.
 * The tokens come from lexer.ts; literals.ts builds the literal nodes (numbers, DATE, TIMESTAMP, INTERVAL).
 */
import { parseDdlType } from '../ddl';
import type { DataType } from '../schema';
import { ExpressionError } from './errors';
import { type Token, tokenize } from './lexer';
import { isIntervalUnit, multiUnitsInterval, numberLiteral, RANGE_UNITS, typedInterval, typedLiteral, unitToUnitInterval } from './literals';
import { BOOLEAN, NULL_TYPE, STRING, type SqlType } from './types';

/** A node of the syntax tree; `pos` is where it starts in the text (0-based). */
export type Ast =
  | { readonly k: 'lit'; readonly pos: number; readonly value: unknown; readonly type: SqlType; readonly sql: string }
  | { readonly k: 'name'; readonly pos: number; readonly parts: readonly string[] }
  | { readonly k: 'star'; readonly pos: number; readonly qualifier: readonly string[] }
  | { readonly k: 'field'; readonly pos: number; readonly base: Ast; readonly name: string }
  | { readonly k: 'index'; readonly pos: number; readonly base: Ast; readonly index: Ast }
  | { readonly k: 'unary'; readonly pos: number; readonly op: '-' | '+' | '~' | 'NOT'; readonly arg: Ast }
  | { readonly k: 'binary'; readonly pos: number; readonly op: string; readonly left: Ast; readonly right: Ast }
  | { readonly k: 'is'; readonly pos: number; readonly arg: Ast; readonly what: 'NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN'; readonly not: boolean }
  | { readonly k: 'in'; readonly pos: number; readonly arg: Ast; readonly list: readonly Ast[]; readonly not: boolean }
  | { readonly k: 'between'; readonly pos: number; readonly arg: Ast; readonly lo: Ast; readonly hi: Ast; readonly not: boolean }
  | {
      readonly k: 'like';
      readonly pos: number;
      readonly op: 'LIKE' | 'ILIKE' | 'RLIKE';
      readonly arg: Ast;
      readonly pattern: Ast;
      readonly not: boolean;
      readonly escapeChar?: string;
    }
  | { readonly k: 'case'; readonly pos: number; readonly operand?: Ast; readonly whens: readonly { when: Ast; result: Ast }[]; readonly otherwise?: Ast }
  | { readonly k: 'cast'; readonly pos: number; readonly arg: Ast; readonly to: DataType; readonly safe: boolean; readonly syntax: 'CAST' | '::' }
  | {
      readonly k: 'call';
      readonly pos: number;
      readonly name: string;
      readonly args: readonly Ast[];
      readonly distinct: boolean;
      readonly star: boolean;
      /** An aggregate's `FILTER (WHERE cond)`: the condition, where its text starts and ends in the parsed text, and where FILTER is. */
      readonly filter?: { readonly cond: Ast; readonly start: number; readonly end: number; readonly at: number };
      /** An aggregate's `IGNORE NULLS` (ignore true) or `RESPECT NULLS` after the call (and its FILTER), and where it is. */
      readonly nulls?: { readonly ignore: boolean; readonly at: number };
      /** An aggregate's `WITHIN GROUP (ORDER BY ...)`: its keys (each with where its text starts and ends), and where WITHIN is. */
      readonly withinGroup?: { readonly keys: readonly SortItem[]; readonly at: number };
      /** struct's arguments are named expressions (Spark's grammar): the name `AS` (or a bare alias) gave each, if any. */
      readonly argNames?: readonly (string | undefined)[];
    }
  /** A higher-order function's argument: `x -> x + 1`, `(acc, x) -> acc + x`. */
  | { readonly k: 'lambda'; readonly pos: number; readonly params: readonly string[]; readonly body: Ast };

/** A key of ORDER BY: its expression and text span, its direction, where its nulls go (Spark's default: first ascending, last descending). */
export interface SortItem {
  readonly expr: Ast;
  readonly start: number;
  readonly end: number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

/** A selectExpr item: an expression and the name `AS` gave it (or the names `AS (a, b)` gave a generator's columns), or `*` / `s.*`. */
export interface NamedAst {
  readonly ast: Ast;
  readonly alias?: string;
  readonly aliases?: readonly string[];
}

/** Parses one expression. Throws ExpressionError PARSE_SYNTAX_ERROR with the position. */
export function parseExpression(text: string): Ast {
  const p = new Parser(text);
  const e = p.expression();
  p.end();
  return e;
}

/**
 * Parses the expression that starts at token `start` of a statement's tokens (lib/engine/sql) and
 * stops before the first token that cannot continue it; returns it and that token's index.
 */
export function parseExpressionAt(text: string, tokens: Token[], start: number): { ast: Ast; next: number } {
  const p = new Parser(text, tokens, start);
  const ast = p.expression();
  return { ast, next: p.index };
}

/** Parses one selectExpr item: `expr`, `expr AS name`, `expr name`, `*` or `s.*`. */
export function parseNamedExpression(text: string): NamedAst {
  const p = new Parser(text);
  const ast = p.expression();
  let alias: string | undefined;
  if (p.keyword('AS')) {
    if (p.op('(')) {
      // Spark's multi-alias, naming a generator's columns: posexplode(a) AS (p, v)
      const aliases = [p.identifier('a name')];
      while (p.op(',')) aliases.push(p.identifier('a name'));
      p.expectOp(')');
      p.end();
      return { ast, aliases };
    }
    alias = p.identifier('a name after AS');
  } else if (p.peek().kind === 'qident' || (p.peek().kind === 'ident' && !RESERVED.has(p.peek().text.toUpperCase()))) alias = p.identifier('a name');
  p.end();
  return { ast, alias };
}

/** The words the parser never reads as a name: they end an expression or start a clause, never a bare alias (the functions module backticks a column so named). */
export const RESERVED: ReadonlySet<string> = new Set([
  'AND',
  'OR',
  'NOT',
  'AS',
  'IS',
  'IN',
  'BETWEEN',
  'LIKE',
  'ILIKE',
  'RLIKE',
  'REGEXP',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'END',
  'FROM',
  'ESCAPE',
  'DIV',
]);

const COMPARISONS = new Set(['=', '==', '!=', '<>', '<', '<=', '>', '>=', '<=>']);

class Parser {
  private readonly tokens: Token[];
  private i: number;

  constructor(
    private readonly text: string,
    tokens?: Token[],
    start = 0,
  ) {
    this.tokens = tokens ?? tokenize(text);
    this.i = start;
  }

  /** The index of the next token. */
  get index(): number {
    return this.i;
  }

  peek(ahead = 0): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)];
  }

  private next(): Token {
    return this.tokens[this.i++];
  }

  /** Consumes the keyword (case-insensitive) when it is next. */
  keyword(word: string): boolean {
    const t = this.peek();
    if (t.kind === 'ident' && t.text.toUpperCase() === word) {
      this.i++;
      return true;
    }
    return false;
  }

  private isKeyword(word: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'ident' && t.text.toUpperCase() === word;
  }

  op(o: string): boolean {
    const t = this.peek();
    if (t.kind === 'op' && t.text === o) {
      this.i++;
      return true;
    }
    return false;
  }

  error(expected: string, t: Token = this.peek()): ExpressionError {
    const near = t.kind === 'eof' ? 'end of input' : `'${t.kind === 'str' ? `'${t.text}'` : t.text}'`;
    return new ExpressionError('PARSE_SYNTAX_ERROR', `Syntax error at or near ${near}: expected ${expected}`, this.text, t.pos);
  }

  expectOp(o: string, expected = `'${o}'`): void {
    if (!this.op(o)) throw this.error(expected);
  }

  private expectKeyword(word: string): void {
    if (!this.keyword(word)) throw this.error(word);
  }

  end(): void {
    if (this.peek().kind !== 'eof') throw this.error('the end of the expression (an operator, or AS and a name, may be missing)');
  }

  identifier(expected: string): string {
    const t = this.peek();
    if (t.kind === 'ident' || t.kind === 'qident') {
      this.i++;
      return t.text;
    }
    throw this.error(expected);
  }

  expression(): Ast {
    return this.or();
  }

  private or(): Ast {
    return this.leftAssociative('OR', () => this.and());
  }

  private and(): Ast {
    return this.leftAssociative('AND', () => this.not());
  }

  /** `operand (word operand)*`, grouped from the left. */
  private leftAssociative(word: 'OR' | 'AND', operand: () => Ast): Ast {
    let left = operand();
    for (;;) {
      const t = this.peek();
      if (!this.keyword(word)) return left;
      left = { k: 'binary', pos: t.pos, op: word, left, right: operand() };
    }
  }

  private not(): Ast {
    const t = this.peek();
    if (this.keyword('NOT') || this.op('!')) return { k: 'unary', pos: t.pos, op: 'NOT', arg: this.not() };
    return this.predicated();
  }

  private predicated(): Ast {
    const arg = this.comparison();
    const t = this.peek();
    if (this.keyword('IS')) {
      const not = this.keyword('NOT');
      if (this.keyword('NULL')) return { k: 'is', pos: t.pos, arg, what: 'NULL', not };
      // x IS [NOT] TRUE / FALSE is Spark's [NOT] (x <=> true / false); IS [NOT] UNKNOWN its IsUnknown of a BOOLEAN
      const b = this.peek();
      if (this.keyword('TRUE') || this.keyword('FALSE')) {
        const value = b.text.toUpperCase() === 'TRUE';
        const same: Ast = { k: 'binary', pos: t.pos, op: '<=>', left: arg, right: { k: 'lit', pos: b.pos, value, type: BOOLEAN, sql: String(value) } };
        return not ? { k: 'unary', pos: t.pos, op: 'NOT', arg: same } : same;
      }
      if (this.keyword('UNKNOWN')) return { k: 'is', pos: t.pos, arg, what: 'UNKNOWN', not };
      if (this.keyword('DISTINCT')) {
        this.expectKeyword('FROM');
        const right = this.comparison();
        const same: Ast = { k: 'binary', pos: t.pos, op: '<=>', left: arg, right };
        return not ? same : { k: 'unary', pos: t.pos, op: 'NOT', arg: same };
      }
      throw this.error('NULL, TRUE, FALSE or DISTINCT FROM after IS (or UNKNOWN)');
    }
    const not = this.isKeyword('NOT') && ['IN', 'BETWEEN', 'LIKE', 'ILIKE', 'RLIKE', 'REGEXP'].some((w) => this.isKeyword(w, 1));
    if (not) this.i++;
    if (this.keyword('IN')) {
      this.expectOp('(', "'(' after IN");
      if (this.isKeyword('SELECT')) throw this.subquery(not ? 'NOT IN (SELECT ...)' : 'IN (SELECT ...)');
      const list: Ast[] = [this.expression()];
      while (this.op(',')) list.push(this.expression());
      this.expectOp(')', "',' or ')' in the IN list");
      return { k: 'in', pos: t.pos, arg, list, not };
    }
    if (this.keyword('BETWEEN')) {
      const lo = this.comparison();
      this.expectKeyword('AND');
      const hi = this.comparison();
      return { k: 'between', pos: t.pos, arg, lo, hi, not };
    }
    for (const op of ['LIKE', 'ILIKE', 'RLIKE', 'REGEXP'] as const) {
      if (this.keyword(op)) {
        const quantified = op === 'LIKE' || op === 'ILIKE' ? this.likeQuantified(op, arg, not, t) : null;
        if (quantified !== null) return quantified;
        const pattern = this.comparison();
        let escapeChar: string | undefined;
        if (op !== 'RLIKE' && op !== 'REGEXP' && this.keyword('ESCAPE')) {
          const e = this.next();
          if (e.kind !== 'str') throw this.error('one character in quotes after ESCAPE', e);
          if (Array.from(e.text).length !== 1) {
            throw new ExpressionError(
              'INVALID_ESC',
              `Found an invalid escape string: '${e.text}'. The escape string must contain only one character; write ESCAPE '!' or another single character`,
              this.text,
              e.pos,
            );
          }
          escapeChar = e.text;
        }
        return { k: 'like', pos: t.pos, op: op === 'REGEXP' ? 'RLIKE' : op, arg, pattern, not, escapeChar };
      }
    }
    return arg;
  }

  /**
   * `x [NOT] LIKE ANY | SOME | ALL (p1, p2, ...)` (and ILIKE) after the LIKE: Spark's LikeAny /
   * LikeAll, the same as each `x [NOT] LIKE p` joined by OR (ANY, SOME) or AND (ALL), which is
   * what this builds; null when no quantifier follows.
   */
  private likeQuantified(op: 'LIKE' | 'ILIKE', arg: Ast, not: boolean, t: Token): Ast | null {
    const q = this.peek();
    const open = this.peek(1);
    if (q.kind !== 'ident' || !['ANY', 'SOME', 'ALL'].includes(q.text.toUpperCase()) || open.kind !== 'op' || open.text !== '(') return null;
    this.i += 2;
    if (this.peek().kind === 'op' && this.peek().text === ')') throw this.error(`something between '(' and ')' after ${op} ${q.text.toUpperCase()}`);
    const likes: Ast[] = [];
    do likes.push({ k: 'like', pos: t.pos, op, arg, pattern: this.expression(), not });
    while (this.op(','));
    this.expectOp(')', `',' or ')' in the patterns of ${op} ${q.text.toUpperCase()}`);
    const join = q.text.toUpperCase() === 'ALL' ? 'AND' : 'OR';
    return likes.reduce((left, right) => ({ k: 'binary', pos: t.pos, op: join, left, right }));
  }

  /** Comparisons are the lowest binary level of Spark's valueExpression, left-associative. */
  private comparison(): Ast {
    let left = this.binaryLevel(0);
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op' || !COMPARISONS.has(t.text)) return left;
      this.i++;
      left = { k: 'binary', pos: t.pos, op: t.text === '==' ? '=' : t.text === '!=' ? '<>' : t.text, left, right: this.binaryLevel(0) };
    }
  }

  private static readonly LEVELS: readonly (readonly string[])[] = [['|'], ['^'], ['&'], ['<<', '>>', '>>>'], ['+', '-', '||'], ['*', '/', '%', 'DIV']];

  private binaryLevel(level: number): Ast {
    if (level === Parser.LEVELS.length) return this.unary();
    const ops = Parser.LEVELS[level];
    let left = this.binaryLevel(level + 1);
    for (;;) {
      const t = this.peek();
      const shift = this.shiftAt();
      const op = shift ?? (t.kind === 'op' ? t.text : t.kind === 'ident' ? t.text.toUpperCase() : '');
      if (!ops.includes(op)) return left;
      this.i += shift?.length ?? 1;
      left = { k: 'binary', pos: t.pos, op, left, right: this.binaryLevel(level + 1) };
    }
  }

  /**
   * Spark 4's shift operators `<<`, `>>`, `>>>` at the current token: the lexer gives each `<`
   * and `>` alone (a type's `ARRAY<ARRAY<INT>>` closes with two), so a shift is that many of them
   * written together; null for anything else.
   */
  private shiftAt(): '<<' | '>>' | '>>>' | null {
    const t = this.peek();
    if (t.kind !== 'op' || (t.text !== '<' && t.text !== '>')) return null;
    let n = 1;
    for (
      let next = this.tokens[this.i + n];
      n < (t.text === '<' ? 2 : 3) && next?.kind === 'op' && next.text === t.text && next.pos === t.pos + n;
      next = this.tokens[this.i + n]
    )
      n++;
    if (n === 1) return null;
    return t.text === '<' ? '<<' : n === 2 ? '>>' : '>>>';
  }

  private unary(): Ast {
    const t = this.peek();
    if (t.kind === 'op' && (t.text === '-' || t.text === '+' || t.text === '~')) {
      // A negative number is one literal, as in Spark's grammar (MINUS? INTEGER_VALUE...): its signed
      // value is range-checked and typed (-2147483648 is an INT, -128Y a TINYINT, -9223372036854775808 a BIGINT).
      const n = this.tokens[this.i + 1];
      if (t.text === '-' && n?.kind === 'num') {
        this.i += 2;
        return this.postfix({ ...(numberLiteral(n, this.text, true) as Extract<Ast, { k: 'lit' }>), pos: t.pos });
      }
      this.i++;
      const arg = this.unary();
      return { k: 'unary', pos: t.pos, op: t.text as '-' | '+' | '~', arg };
    }
    return this.postfix(this.primary());
  }

  private postfix(base: Ast): Ast {
    for (;;) {
      const t = this.peek();
      if (this.op('[')) {
        const index = this.expression();
        this.expectOp(']', "']' after the index");
        base = { k: 'index', pos: t.pos, base, index };
      } else if (this.op('.')) {
        if (this.op('*')) {
          if (base.k !== 'name') throw this.error('a column name before .*', t);
          return { k: 'star', pos: base.pos, qualifier: base.parts };
        }
        const name = this.identifier('a field name after .');
        base = base.k === 'name' ? { k: 'name', pos: base.pos, parts: [...base.parts, name] } : { k: 'field', pos: t.pos, base, name };
      } else if (this.op('::')) {
        base = { k: 'cast', pos: base.pos, arg: base, to: this.castType(false), safe: false, syntax: '::' };
      } else return base;
    }
  }

  /** A DDL type: after `AS` inside CAST(...) up to the closing parenthesis, or after `::` (a name and its <...> or (...)). */
  private castType(inParens: boolean): DataType {
    const start = this.peek();
    if (start.kind !== 'ident') throw this.error('a type name (INT, DECIMAL(10,2), ARRAY<STRING>...)');
    const isOpen = (t: Token) => t.kind === 'op' && (t.text === '(' || t.text === '<');
    const isClose = (t: Token) => t.kind === 'op' && (t.text === ')' || t.text === '>');
    let j = this.i + 1;
    if (inParens) {
      for (let depth = 0; this.tokens[j].kind !== 'eof'; j++) {
        const t = this.tokens[j];
        if (isOpen(t)) depth++;
        else if (isClose(t)) {
          if (depth === 0) break;
          depth--;
        }
      }
    } else {
      const word = start.text.toUpperCase();
      const opens = this.tokens[j];
      const group = (opens.text === '<' && ['ARRAY', 'MAP', 'STRUCT'].includes(word)) || (opens.text === '(' && ['DECIMAL', 'DEC', 'NUMERIC'].includes(word));
      if (opens.kind === 'op' && group) {
        for (let depth = 0; this.tokens[j].kind !== 'eof'; j++) {
          const t = this.tokens[j];
          if (isOpen(t)) depth++;
          else if (isClose(t) && --depth === 0) {
            j++;
            break;
          }
        }
      }
    }
    const typeText = this.text.slice(start.pos, this.tokens[j].pos).trim();
    let to: DataType;
    try {
      to = parseDdlType(typeText);
    } catch (e) {
      throw new ExpressionError('UNSUPPORTED_DATATYPE', `Unsupported data type ${JSON.stringify(typeText)}: ${(e as Error).message}`, this.text, start.pos);
    }
    this.i = j;
    return to;
  }

  private primary(): Ast {
    const t = this.peek();
    switch (t.kind) {
      case 'num':
        this.i++;
        return numberLiteral(t, this.text);
      case 'str': {
        let s = '';
        while (this.peek().kind === 'str') s += this.next().text;
        return { k: 'lit', pos: t.pos, value: s, type: STRING, sql: `'${s}'` };
      }
      case 'qident':
        this.i++;
        return this.nameOrCall(t);
      case 'op':
        if (this.op('(')) {
          const e = this.expression();
          this.expectOp(')', "')'");
          return e;
        }
        if (this.op('*')) return { k: 'star', pos: t.pos, qualifier: [] };
        throw this.error('an expression');
      case 'eof':
        throw this.error('an expression');
    }
    const word = t.text.toUpperCase();
    const after = this.peek(1);
    if (word === 'TRUE' || word === 'FALSE') {
      this.i++;
      return { k: 'lit', pos: t.pos, value: word === 'TRUE', type: BOOLEAN, sql: word.toLowerCase() };
    }
    if (word === 'NULL') {
      this.i++;
      return { k: 'lit', pos: t.pos, value: null, type: NULL_TYPE, sql: 'NULL' };
    }
    if ((word === 'DATE' || word === 'TIMESTAMP') && after.kind === 'str') {
      this.i += 2;
      return typedLiteral(word, after, this.text);
    }
    if (word === 'INTERVAL' && (after.kind === 'str' || after.kind === 'num' || (after.kind === 'op' && (after.text === '-' || after.text === '+')))) {
      this.i++;
      return this.interval(t);
    }
    if (word === 'CASE') {
      this.i++;
      return this.caseExpr(t);
    }
    if (word === 'EXTRACT' && after.kind === 'op' && after.text === '(') {
      // EXTRACT(field FROM source): Spark's date_part(field, source), named as written
      this.i += 2;
      const f = this.peek();
      if (f.kind !== 'ident') throw this.error('a field to extract (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, DAYOFWEEK...)', f);
      this.i++;
      this.expectKeyword('FROM');
      const source = this.expression();
      this.expectOp(')', "')' after the source of EXTRACT");
      const field: Ast = { k: 'lit', pos: f.pos, value: f.text, type: STRING, sql: f.text };
      return { k: 'call', pos: t.pos, name: 'extract', args: [field, source], distinct: false, star: false };
    }
    if ((word === 'CAST' || word === 'TRY_CAST') && after.kind === 'op' && after.text === '(') {
      this.i += 2;
      const arg = this.expression();
      this.expectKeyword('AS');
      const to = this.castType(true);
      this.expectOp(')', "')' after the type");
      return { k: 'cast', pos: t.pos, arg, to, safe: word === 'TRY_CAST', syntax: 'CAST' };
    }
    // rlike(...) and regexp(...) are also functions (Spark's keywords are non-reserved there)
    const asFunction = (word === 'RLIKE' || word === 'REGEXP') && after.kind === 'op' && after.text === '(';
    if (RESERVED.has(word) && !asFunction) throw this.error('an expression');
    this.i++;
    return this.nameOrCall(t);
  }

  /**
   * Spark's TRIM([BOTH | LEADING | TRAILING] [trimStr] FROM str), after `TRIM(`, as the call
   * trim / ltrim / rtrim (trimStr, str), or (str) without trimStr; null (nothing read) for a plain call.
   */
  private trimFrom(t: Token): Ast | null {
    const start = this.i;
    const dirs: Record<string, string> = { BOTH: 'trim', LEADING: 'ltrim', TRAILING: 'rtrim' };
    const next = this.peek(1);
    const word = this.peek().kind === 'ident' ? this.peek().text.toUpperCase() : '';
    const hasDir = word in dirs && !(next.kind === 'op' && (next.text === ')' || next.text === ','));
    let name = 'trim';
    if (hasDir) {
      name = dirs[word];
      this.i++;
    }
    let trimStr: Ast | undefined;
    if (!this.isKeyword('FROM')) {
      if (!hasDir && this.peek().kind === 'op' && this.peek().text === ')') return null;
      trimStr = this.expression();
      if (!this.isKeyword('FROM')) {
        if (hasDir) throw this.error('FROM');
        this.i = start;
        return null;
      }
    }
    this.expectKeyword('FROM');
    const src = this.expression();
    this.expectOp(')', "')' after TRIM(... FROM ...)");
    return { k: 'call', pos: t.pos, name, args: trimStr === undefined ? [src] : [trimStr, src], distinct: false, star: false };
  }

  /**
   * The calls Spark's grammar writes with keywords, after `name(`: TRIM(... FROM ...) (trimFrom),
   * POSITION(substr IN str), OVERLAY(input PLACING replace FROM pos [FOR len]) and
   * SUBSTR/SUBSTRING(str FROM pos [FOR len]), as the calls AstBuilder builds; null (nothing read)
   * for a plain call. Their operands are valueExpressions: `IN` after the first is POSITION's.
   */
  private specialForm(t: Token): Ast | null {
    const word = t.text.toUpperCase();
    if (word === 'TRIM') return this.trimFrom(t);
    if (word !== 'POSITION' && word !== 'OVERLAY' && word !== 'SUBSTR' && word !== 'SUBSTRING') return null;
    if (this.peek().kind === 'op' && this.peek().text === ')') return null;
    const start = this.i;
    const call = (name: string, args: Ast[]): Ast => {
      this.expectOp(')', `')' after ${word}(...)`);
      return { k: 'call', pos: t.pos, name, args, distinct: false, star: false };
    };
    let first: Ast;
    try {
      first = this.comparison();
    } catch {
      // not a valueExpression (a lambda...): the plain call reports it
      this.i = start;
      return null;
    }
    if (word === 'POSITION' && this.keyword('IN')) {
      // StringLocate(substr, str), named locate(substr, str, 1)
      return call('locate', [first, this.comparison()]);
    }
    if (word === 'OVERLAY' && this.keyword('PLACING')) {
      const replace = this.comparison();
      this.expectKeyword('FROM');
      const pos = this.comparison();
      return call('overlay', this.keyword('FOR') ? [first, replace, pos, this.comparison()] : [first, replace, pos]);
    }
    if (word === 'SUBSTR' || word === 'SUBSTRING') {
      // (FROM | ,) pos ((FOR | ,) len)?: a Substring, named substring(...) whichever word was written
      const from = this.keyword('FROM');
      if (from || this.op(',')) {
        const pos = this.comparison();
        if (this.keyword('FOR')) return call('substring', [first, pos, this.comparison()]);
        if (from) return call('substring', this.op(',') ? [first, pos, this.comparison()] : [first, pos]);
      }
    }
    this.i = start;
    return null;
  }

  /** A subquery inside an expression (`IN (SELECT ...)`, `EXISTS (SELECT ...)`): refused, with the join that does it. */
  private subquery(form: string): ExpressionError {
    return new ExpressionError(
      'UNSUPPORTED_FEATURE',
      `a subquery in an expression (${form}) is not supported: join the stream with the table instead (LEFT SEMI JOIN t USING (k) for IN and EXISTS, LEFT ANTI JOIN t USING (k) for NOT IN and NOT EXISTS)`,
      this.text,
      this.peek().pos,
    );
  }

  private nameOrCall(t: Token): Ast {
    if (t.kind === 'ident' && this.op('(')) {
      const distinct = this.keyword('DISTINCT');
      if (this.peek().kind === 'op' && this.peek().text === '*' && this.peek(1).kind === 'op' && this.peek(1).text === ')') {
        this.i += 2;
        return this.withFilter({ k: 'call', pos: t.pos, name: t.text.toLowerCase(), args: [], distinct, star: true });
      }
      const args: Ast[] = [];
      if (!distinct) {
        const special = this.specialForm(t);
        if (special !== null) return special;
      }
      const name = t.text.toLowerCase();
      if (this.isKeyword('SELECT')) throw this.subquery(`${t.text.toUpperCase()} (SELECT ...)`);
      if (name === 'struct' && !distinct) return this.structCall(t.pos);
      if (!this.op(')')) {
        args.push(this.argument());
        while (this.op(',')) args.push(this.argument());
        this.expectOp(')', "',' or ')' in the argument list");
      }
      return this.withFilter({ k: 'call', pos: t.pos, name, args, distinct, star: false });
    }
    return { k: 'name', pos: t.pos, parts: [t.text] };
  }

  /**
   * A call followed by `WITHIN GROUP (ORDER BY ...)`, `FILTER (WHERE cond)` (Spark's aggregate
   * filter) and then `IGNORE NULLS` or `RESPECT NULLS`, as Spark's grammar orders them, each noted
   * on the call; else the call as it is.
   */
  private withFilter(call: Extract<Ast, { k: 'call' }>): Ast {
    let out = call;
    if (this.isKeyword('WITHIN') && this.isKeyword('GROUP', 1) && this.peek(2).kind === 'op' && this.peek(2).text === '(') {
      const at = this.peek().pos;
      this.i += 3;
      if (!this.keyword('ORDER') || !this.keyword('BY')) throw this.error("ORDER BY after 'WITHIN GROUP ('");
      const keys: SortItem[] = [];
      do keys.push(this.sortItem());
      while (this.op(','));
      this.expectOp(')', "',' or ')' after the WITHIN GROUP's keys");
      out = { ...out, withinGroup: { keys, at } };
    }
    if (this.isKeyword('FILTER') && this.peek(1).kind === 'op' && this.peek(1).text === '(' && this.isKeyword('WHERE', 2)) {
      const at = this.peek().pos;
      this.i += 3;
      const start = this.peek().pos;
      const cond = this.expression();
      const end = this.peek().pos;
      this.expectOp(')', "')' after the FILTER's condition");
      out = { ...out, filter: { cond, start, end, at } };
    }
    // (a bare alias named ignore or respect is not followed by NULLS)
    if ((this.isKeyword('IGNORE') || this.isKeyword('RESPECT')) && this.isKeyword('NULLS', 1)) {
      const at = this.peek().pos;
      const ignore = this.isKeyword('IGNORE');
      this.i += 2;
      out = { ...out, nulls: { ignore, at } };
    }
    // a window function (`row_number() OVER (...)`, `sum(x) OVER (PARTITION BY k)`, `OVER w` of a
    // named window): Spark's UnsupportedOperationChecker refuses it on a stream
    const after = this.peek(1);
    if (
      this.isKeyword('OVER') &&
      ((after.kind === 'op' && after.text === '(') || after.kind === 'qident' || (after.kind === 'ident' && !RESERVED.has(after.text.toUpperCase())))
    ) {
      const fn = this.text.slice(call.pos, this.peek().pos).trim();
      throw new ExpressionError(
        'NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING',
        `Window function is not supported in "${fn}" on streaming DataFrames/Datasets. Structured Streaming only supports time-window aggregation using the WINDOW function: group by window(<event time>, '<duration>') (or session_window), or compute it per batch in foreachBatch`,
        this.text,
        this.peek().pos,
      );
    }
    return out;
  }

  /** `expr [ASC | DESC] [NULLS FIRST | NULLS LAST]`. */
  private sortItem(): SortItem {
    const start = this.peek().pos;
    const expr = this.expression();
    const end = this.peek().pos;
    const desc = this.keyword('DESC');
    if (!desc) this.keyword('ASC');
    let nullsFirst = !desc;
    if (this.isKeyword('NULLS') && (this.isKeyword('FIRST', 1) || this.isKeyword('LAST', 1))) {
      nullsFirst = this.isKeyword('FIRST', 1);
      this.i += 2;
    }
    return { expr, start, end, desc, nullsFirst };
  }

  /** A function's argument: an expression, or a lambda (`x -> ...`, `(x, i) -> ...`). */
  /** struct(...)'s arguments after its `(`: named expressions, `x AS name` or `x name` naming the field (Spark's #struct rule). */
  private structCall(pos: number): Ast {
    const args: Ast[] = [];
    const argNames: (string | undefined)[] = [];
    if (!this.op(')')) {
      do {
        args.push(this.expression());
        const next = this.peek();
        if (this.keyword('AS')) argNames.push(this.identifier('a field name after AS'));
        else if (next.kind === 'qident' || (next.kind === 'ident' && !RESERVED.has(next.text.toUpperCase()))) argNames.push(this.identifier('a field name'));
        else argNames.push(undefined);
      } while (this.op(','));
      this.expectOp(')', "',' or ')' in the argument list");
    }
    return { k: 'call', pos, name: 'struct', args, distinct: false, star: false, ...(argNames.some((n) => n !== undefined) ? { argNames } : {}) };
  }

  private argument(): Ast {
    const t = this.peek();
    const isName = (k: Token) => k.kind === 'ident' || k.kind === 'qident';
    const isOp = (k: Token, o: string) => k.kind === 'op' && k.text === o;
    if (isName(t) && isOp(this.peek(1), '->')) {
      this.i += 2;
      return { k: 'lambda', pos: t.pos, params: [t.text], body: this.expression() };
    }
    if (isOp(t, '(')) {
      // (a, b) -> ...: names separated by commas, then ')' and '->'
      const params: string[] = [];
      let j = 1;
      while (isName(this.peek(j)) && (isOp(this.peek(j + 1), ',') || isOp(this.peek(j + 1), ')'))) {
        params.push(this.peek(j).text);
        if (isOp(this.peek(j + 1), ')')) break;
        j += 2;
      }
      if (params.length > 0 && isOp(this.peek(j + 1), ')') && isOp(this.peek(j + 2), '->')) {
        this.i += j + 3;
        return { k: 'lambda', pos: t.pos, params, body: this.expression() };
      }
    }
    return this.expression();
  }

  private caseExpr(t: Token): Ast {
    const operand = this.isKeyword('WHEN') ? undefined : this.expression();
    const whens: { when: Ast; result: Ast }[] = [];
    while (this.keyword('WHEN')) {
      const when = this.expression();
      this.expectKeyword('THEN');
      whens.push({ when, result: this.expression() });
    }
    if (whens.length === 0) throw this.error('WHEN');
    const otherwise = this.keyword('ELSE') ? this.expression() : undefined;
    if (!this.keyword('END')) throw this.error(otherwise === undefined ? 'WHEN, ELSE or END' : 'END');
    return { k: 'case', pos: t.pos, operand, whens, otherwise };
  }

  /**
   * What follows INTERVAL (Spark's `interval` rule): unit value pairs, `'10' MINUTE`, `10 MINUTES`,
   * `1 HOUR -'30' MINUTES` (each value a number or a string, with a sign); one from-to range,
   * `'1-5' YEAR TO MONTH`, `-'3 04:05:06.789' DAY TO SECOND`; or the typed literal's string alone,
   * `'1 hour 30 minutes'`. A pair is read only when a unit follows its value, so
   * `INTERVAL 1 DAY - INTERVAL 1 HOUR` and `INTERVAL 1 DAY - 1` keep their minus.
   */
  private interval(t: Token): Ast {
    const parts: { sign: string; value: Token; unit: Token }[] = [];
    const source = () => this.text.slice(t.pos, this.peek().pos).trim();
    for (;;) {
      const start = this.i;
      const s = this.peek();
      const sign = s.kind === 'op' && (s.text === '-' || s.text === '+') ? s.text : '';
      if (sign !== '') this.i++;
      const value = this.peek();
      const unit = this.peek(1);
      const isValue = value.kind === 'str' || value.kind === 'num';
      if (!isValue || unit.kind !== 'ident' || !isIntervalUnit(unit.text)) {
        if (parts.length > 0) {
          this.i = start;
          break;
        }
        if (value.kind === 'str' && sign === '') {
          this.i++;
          return typedInterval(value, this.text, t.pos, source());
        }
        throw isValue
          ? this.error('an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND)', unit)
          : this.error("an interval value ('10' MINUTE, 10 MINUTES, '1-5' YEAR TO MONTH)", value);
      }
      if (value.kind === 'num' && (value.suffix !== '' || /[eE]/.test(value.text)))
        throw this.error('a plain number or a string before the interval unit', value);
      this.i += 2;
      if (this.keyword('TO')) {
        const to = this.peek();
        if (!RANGE_UNITS.has(unit.text.toUpperCase()) || to.kind !== 'ident' || !RANGE_UNITS.has(to.text.toUpperCase())) {
          throw this.error(
            'a range of YEAR, MONTH, DAY, HOUR, MINUTE or SECOND (singular): YEAR TO MONTH, DAY TO SECOND...',
            RANGE_UNITS.has(unit.text.toUpperCase()) ? to : unit,
          );
        }
        this.i++;
        // one range alone: no pairs before it, no pair or range after it (Spark's errorCapturingUnitToUnitInterval)
        const n = this.peek().kind === 'op' && (this.peek().text === '-' || this.peek().text === '+') ? 1 : 0;
        const more = ['str', 'num'].includes(this.peek(n).kind) && this.peek(n + 1).kind === 'ident' && isIntervalUnit(this.peek(n + 1).text);
        if (parts.length > 0 || more) {
          throw new ExpressionError(
            '_LEGACY_ERROR_TEMP_0024',
            `Can only have a single from-to unit in the interval literal syntax: ${source()}; add two interval literals instead`,
            this.text,
            t.pos,
          );
        }
        return unitToUnitInterval(sign, value, unit.text, to.text, this.text, (sign === '' ? value : s).pos);
      }
      parts.push({ sign, value, unit });
    }
    return multiUnitsInterval(parts, this.text, t.pos, source());
  }
}
