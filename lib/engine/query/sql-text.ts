/**
 * Spark SQL text for the functions module: names (backticked when Spark's parser would not read
 * them as one name), literals rendered exactly (a JS value to the SQL literal with the same value
 * and type), and the precedence of an expression so that an operand is parenthesized only where
 * the parser needs it: `col('a').multiply(col('b'))` is `a * b`, the text a person writes.
 */
import { InvalidQueryError } from '../errors';
import { RESERVED } from '../expr/parser';

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
