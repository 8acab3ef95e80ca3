/**
 * The token cursor of the statement parser (statement.ts): the statement's tokens from the
 * expression lexer, the steps over words and operators that every clause's parser takes, and the
 * hand-off of an expression to the expression parser (parseExpressionAt), which stops where the
 * expression ends; each expression keeps its text as written (a slice of the statement).
 */
import { ExpressionError } from '../expr/errors';
import { type Token, tokenize } from '../expr/lexer';
import { type Ast, parseExpressionAt } from '../expr/parser';
import { reasonOf, SqlError, syntaxError } from './errors';
import type { SqlExpr } from './syntax';

/** Words that end a select item or a relation: never taken as a bare alias. */
export const CLAUSE_WORDS = new Set([
  'FROM',
  'WITH',
  'WHERE',
  'GROUP',
  'HAVING',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'TABLESAMPLE',
  'PIVOT',
  'JOIN',
  'INNER',
  'LEFT',
  'RIGHT',
  'FULL',
  'CROSS',
  'SEMI',
  'ANTI',
  'ON',
  'USING',
  'WATERMARK',
  'UNION',
  'WINDOW',
  'CLUSTER',
  'DISTRIBUTE',
  'SORT',
  'LATERAL',
  'UNPIVOT',
  'QUALIFY',
]);

/** A statement's tokens and the place of the next one. */
export class SqlCursor {
  protected readonly tokens: Token[];
  /** The next token's index. */
  protected i = 0;

  constructor(protected readonly sql: string) {
    try {
      this.tokens = tokenize(sql);
    } catch (e) {
      throw e instanceof ExpressionError ? new SqlError(e.errorClass, reasonOf(e), sql, e.position ?? 0) : e;
    }
  }

  protected peek(ahead = 0): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)];
  }
  protected isWord(word: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'ident' && t.text.toUpperCase() === word;
  }
  protected word(word: string): boolean {
    if (!this.isWord(word)) return false;
    this.i++;
    return true;
  }
  protected expectWord(word: string, expected = word): Token {
    const t = this.peek();
    if (!this.word(word)) throw syntaxError(this.sql, t.pos, expected);
    return t;
  }
  protected isOp(op: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === 'op' && t.text === op;
  }
  protected op(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.i++;
    return true;
  }
  protected expectOp(op: string, expected = `'${op}'`): void {
    if (!this.op(op)) throw syntaxError(this.sql, this.peek().pos, expected);
  }
  protected identifier(expected: string): string {
    const t = this.peek();
    if (t.kind !== 'ident' && t.kind !== 'qident') throw syntaxError(this.sql, t.pos, expected);
    this.i++;
    return t.text;
  }
  /** The text of tokens [from, to): the statement as written, comments after the last token left out. */
  protected slice(from: number, to: number): string {
    return this.sql
      .slice(this.tokens[from].pos, this.tokens[to].pos)
      .replace(/(\s|--[^\n]*)+$/, '')
      .trimEnd();
  }

  protected expression(): SqlExpr {
    const start = this.i;
    let parsed: { ast: Ast; next: number };
    try {
      parsed = parseExpressionAt(this.sql, this.tokens, start);
    } catch (e) {
      if (e instanceof ExpressionError) {
        throw new SqlError(e.errorClass, reasonOf(e), this.sql, e.position ?? 0);
      }
      throw e;
    }
    this.i = parsed.next;
    return { ast: parsed.ast, text: this.slice(start, parsed.next), pos: this.tokens[start].pos };
  }

  /** `AS name`, or a bare name that is not a clause's word. */
  protected alias(): string | undefined {
    if (this.word('AS')) return this.identifier('a name after AS');
    const t = this.peek();
    if (t.kind === 'qident' || (t.kind === 'ident' && !CLAUSE_WORDS.has(t.text.toUpperCase()))) {
      this.i++;
      return t.text;
    }
    return undefined;
  }
}
