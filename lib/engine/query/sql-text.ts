/**
 * Spark SQL text for the functions module: names (backticked when Spark's parser would not read
 * them as one name), literals rendered exactly (a JS value to the SQL literal with the same value
 * and type), and the precedence of an expression so that an operand is parenthesized only where
 * the parser needs it: `col('a').multiply(col('b'))` is `a * b`, the text a person writes. And
 * an expression's parsed tree written back as text (astText), for the filters the query builder
 * moves.
 */
import { InvalidQueryError } from '../errors';
import { ddlOf } from '../ddl';
import { type Ast, parseExpression, RESERVED } from '../expr/parser';

/**
 * Precedence levels of lib/engine/expr/parser.ts, lowest first: an operand whose level is below
 * what its position needs is put in parentheses.
 */
export const PREC = {
  or: 1,
  and: 2,
  not: 3,
  predicate: 4,
  comparison: 5,
  bitOr: 6,
  bitXor: 7,
  bitAnd: 8,
  additive: 9,
  multiplicative: 10,
  unary: 11,
  postfix: 12,
  atom: 13,
} as const;

/** Words the parser does not read as a column name: its reserved words, the literals, and INTERVAL (`interval - 1` would start an interval literal). */
const NOT_A_NAME: ReadonlySet<string> = new Set([...RESERVED, 'TRUE', 'FALSE', 'NULL', 'INTERVAL']);

/** A name as SQL text: plain when it is an identifier, else in backticks (a backtick doubled). */
export function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !NOT_A_NAME.has(name.toUpperCase()) ? name : `\`${name.replace(/`/g, '``')}\``;
}

const PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\]|\['[^'\\]*'\])+$/;

/**
 * A column name or nested path (`customer.country`, `lines[0].sku`, `attrs['color']`, as
 * pyspark's `col` takes them) as SQL text; any other name is one column, in backticks.
 */
export function columnText(name: string): string {
  if (typeof name !== 'string' || name === '') throw new InvalidQueryError(`col(${JSON.stringify(name)}): a column is named by a non-empty string`);
  if (PATH.test(name) && !name.split(/[.[]/).some((p) => NOT_A_NAME.has(p.toUpperCase()))) return name;
  return quoteName(name);
}

/** A literal value: what `lit(...)` and the value arguments of the functions take. */
export type Literal = string | number | bigint | boolean | null | Date | readonly Literal[];

const INT_MAX = 2147483647;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/**
 * The SQL text of a literal and its precedence: a string in single quotes (backslash and quote
 * escaped, control characters as escapes), an integer within ±2147483647 as INT, beyond as
 * BIGINT (`3000000000L`), another number as DOUBLE (`1.5D`, `CAST('NaN' AS DOUBLE)`), a bigint as
 * BIGINT (`5L`), a boolean, null as NULL, a Date as a TIMESTAMP literal (UTC, milliseconds), an
 * array as `array(...)`.
 */
export function sqlLiteral(v: Literal): { sql: string; prec: number } {
  const neg = (sql: string) => ({ sql, prec: sql.startsWith('-') ? PREC.unary : PREC.atom });
  if (v === null || v === undefined) return { sql: 'NULL', prec: PREC.atom };
  switch (typeof v) {
    case 'string':
      return { sql: quoteString(v), prec: PREC.atom };
    case 'boolean':
      return { sql: v ? 'true' : 'false', prec: PREC.atom };
    case 'bigint':
      if (v < LONG_MIN || v > LONG_MAX) throw new InvalidQueryError(`lit(${v}n): a bigint literal must fit a BIGINT (±2^63)`);
      // the lexer reads the digits before the minus: BIGINT's minimum has no literal of its own
      if (v === LONG_MIN) return { sql: `CAST('${v}' AS BIGINT)`, prec: PREC.atom };
      return neg(`${v}L`);
    case 'number':
      if (Number.isNaN(v)) return { sql: "CAST('NaN' AS DOUBLE)", prec: PREC.atom };
      if (!Number.isFinite(v)) return { sql: `CAST('${v > 0 ? 'Infinity' : '-Infinity'}' AS DOUBLE)`, prec: PREC.atom };
      if (Number.isInteger(v) && !Object.is(v, -0)) {
        if (Math.abs(v) <= INT_MAX) return neg(String(v));
        if (Number.isSafeInteger(v)) return neg(`${v}L`);
      }
      return neg(`${doubleText(v)}D`);
  }
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw new InvalidQueryError('lit(Invalid Date): a Date literal must be a valid date');
    return { sql: `TIMESTAMP '${v.toISOString().replace('T', ' ').replace('Z', '')}'`, prec: PREC.atom };
  }
  if (Array.isArray(v)) return { sql: `array(${v.map((x) => sqlLiteral(x).sql).join(', ')})`, prec: PREC.atom };
  throw new InvalidQueryError(`lit(${String(v)}): a literal is a string, number, bigint, boolean, null, Date or an array of them`);
}

/** A double's digits as Spark's lexer reads them: `1.5`, `0.0` for -0's magnitude, `1.0E21`. */
function doubleText(v: number): string {
  const s = Object.is(v, -0) ? '-0.0' : String(v);
  return s.replace('e+', 'E').replace('e-', 'E-');
}

/** A string literal: single quotes, with the characters the lexer unescapes written as escapes. */
export function quoteString(s: string): string {
  return `'${s.replace(/[\\'\n\r\t\0]/g, (c) => ESCAPES[c])}'`;
}
const ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };

/**
 * An expression's tree as SQL text the parser reads back into the same tree (positions apart):
 * each operator's text in parentheses, string literals escaped, names backticked where needed,
 * each construct in the syntax it was written in. The analyzer's `sql` is Spark's display of an
 * expression (a string literal shown unescaped, `'\d'` for the regex `\d`), which the parser would
 * read as another value; a filter moved as text (query/projection-pushdown.ts, join-condition.ts)
 * is written with this instead.
 */
export function astText(ast: Ast): string {
  const p = (a: Ast) => (isAtom(a) ? astText(a) : `(${astText(a)})`);
  switch (ast.k) {
    case 'lit':
      return ast.type.type === 'STRING' && typeof ast.value === 'string' ? quoteString(ast.value) : ast.sql;
    case 'name':
      return ast.parts.map(quoteName).join('.');
    case 'star':
      return ast.qualifier.length ? `${ast.qualifier.map(quoteName).join('.')}.*` : '*';
    case 'field':
      return `${p(ast.base)}.${quoteName(ast.name)}`;
    case 'index':
      return `${p(ast.base)}[${astText(ast.index)}]`;
    case 'unary':
      // (a literal in parentheses: -1 would be read as the literal -1)
      return `(${ast.op === 'NOT' ? 'NOT ' : ast.op}${ast.arg.k === 'lit' ? `(${astText(ast.arg)})` : p(ast.arg)})`;
    case 'binary':
      return `(${p(ast.left)} ${ast.op} ${p(ast.right)})`;
    case 'is':
      return `(${p(ast.arg)} IS ${ast.not ? 'NOT ' : ''}${ast.what})`;
    case 'in':
      return `(${p(ast.arg)} ${ast.not ? 'NOT ' : ''}IN (${ast.list.map(p).join(', ')}))`;
    case 'between':
      return `(${p(ast.arg)} ${ast.not ? 'NOT ' : ''}BETWEEN ${p(ast.lo)} AND ${p(ast.hi)})`;
    case 'like':
      return `(${p(ast.arg)} ${ast.not ? 'NOT ' : ''}${ast.op} ${p(ast.pattern)}${ast.escapeChar === undefined ? '' : ` ESCAPE ${quoteString(ast.escapeChar)}`})`;
    case 'case':
      return `CASE${ast.operand ? ` ${p(ast.operand)}` : ''}${ast.whens.map((w) => ` WHEN ${p(w.when)} THEN ${p(w.result)}`).join('')}${ast.otherwise ? ` ELSE ${p(ast.otherwise)}` : ''} END`;
    case 'cast':
      return ast.syntax === '::' ? `(${p(ast.arg)}::${ddlOf(ast.to)})` : `${ast.safe ? 'TRY_CAST' : 'CAST'}(${p(ast.arg)} AS ${ddlOf(ast.to)})`;
    case 'call': {
      // EXTRACT(field FROM source) is the parser's call extract(field as a string, source)
      const [field, source] = ast.args;
      if (ast.name === 'extract' && ast.args.length === 2 && field.k === 'lit' && typeof field.value === 'string' && /^[A-Za-z_]+$/.test(field.value))
        return `EXTRACT(${field.value} FROM ${p(source)})`;
      return `${quoteName(ast.name)}(${ast.star ? '*' : `${ast.distinct ? 'DISTINCT ' : ''}${ast.args.map((a) => (a.k === 'lambda' ? astText(a) : p(a))).join(', ')}`})`;
    }
    case 'lambda':
      return `${ast.params.length === 1 ? quoteName(ast.params[0]) : `(${ast.params.map(quoteName).join(', ')})`} -> ${p(ast.body)}`;
  }
}

/**
 * An operand as it is (an operator's text brings its own parentheses; a name, a call, a CAST,
 * a CASE and a literal need none), but a literal that starts with a minus.
 */
function isAtom(a: Ast): boolean {
  return a.k !== 'lit' || a.type.type === 'STRING' || !a.sql.startsWith('-');
}

/**
 * `ast` as astText writes it, when the parser reads that back into the same tree; null when it
 * would not (then nothing may move as that text).
 */
export function exactText(ast: Ast): string | null {
  const text = astText(ast);
  try {
    return sameAst(parseExpression(text), ast) ? text : null;
  } catch {
    return null;
  }
}

/** Whether two trees are the same expression: equal but for positions (and a string literal's display text). */
export function sameAst(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return typeof a === 'number' && typeof b === 'number' && Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const lit = (x: object) => (x as { k?: unknown }).k === 'lit';
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === 'pos' || (k === 'sql' && lit(a) && lit(b))) continue;
    if (!sameAst((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return Object.getPrototypeOf(a) === Object.getPrototypeOf(b);
}

/**
 * `ast` with each name replaced by what `f` gives for it (a name renamed, an expression in place);
 * `f` may throw to give up. Literals and stars stay.
 */
export function mapNames(ast: Ast, f: (name: Extract<Ast, { k: 'name' }>) => Ast): Ast {
  // a lambda's parameters hide columns of the same name (case-insensitive) in its body
  const walk = (node: Ast, hidden: ReadonlySet<string> = new Set()): Ast => {
    if (node.k === 'lit' || node.k === 'star') return node;
    if (node.k === 'name') return hidden.has(node.parts[0].toLowerCase()) ? node : f(node);
    if (node.k === 'lambda') return { ...node, body: walk(node.body, new Set([...hidden, ...node.params.map((x) => x.toLowerCase())])) };
    const copy: Record<string, unknown> = { ...node };
    for (const [key, v] of Object.entries(node)) {
      if (isAst(v)) copy[key] = walk(v, hidden);
      else if (Array.isArray(v))
        copy[key] = v.map((x) => (isAst(x) ? walk(x, hidden) : isWhen(x) ? { when: walk(x.when, hidden), result: walk(x.result, hidden) } : x));
    }
    return copy as unknown as Ast;
  };
  return walk(ast);
}

function isAst(v: unknown): v is Ast {
  return typeof v === 'object' && v !== null && typeof (v as { k?: unknown }).k === 'string';
}

function isWhen(v: unknown): v is { when: Ast; result: Ast } {
  return typeof v === 'object' && v !== null && isAst((v as { when?: unknown }).when) && isAst((v as { result?: unknown }).result);
}
