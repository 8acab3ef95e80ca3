/**
 * The line shapes of tier 1 of the line parser (json-scan.ts): the regular expression that reads
 * the lines of one shape in one native pass.
 */
import type { Row } from './ports';
import { T_STRING, T_TIMESTAMP } from './json-chars';

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** A line shape: the schema's keys in one order, other fields anywhere, spaced or not. */
export interface Shape {
  /** The column at each position. */
  readonly cols: Int32Array;
  /** The first capture group of each position (see shapeRegExp). */
  readonly groups: Int32Array;
  /** Whether the expression allows whitespace between tokens. */
  readonly spaced: boolean;
  readonly re: RegExp;
  /** The row from a match (null: a value does not fit its column), compiled for the shape. */
  readonly extract: (m: RegExpExecArray) => Row | null;
}

/**
 * The regular expression of the lines whose schema keys come in the order `cols`: exactly the
 * valid JSON objects of that shape where the values of the schema's keys are scalars without
 * escapes and the other fields have scalar values, or objects or arrays of scalars. A key of the
 * schema only matches at its own place (the other keys exclude it), so a duplicated or escaped
 * schema key never matches.
 *
 * Capture groups of a position, from its first group g: the text of a string at g and a number or
 * literal at g + 1 (none, and g = -1, for a STRING column that rows leave off); for a TIMESTAMP
 * column, "YYYY-MM-DD HH:MM:SS[.ffffff]" at g when the string has that plain form, any other string
 * at g + 1, a number or literal at g + 2.
 */
export function shapeRegExp(
  names: readonly string[],
  types: readonly number[],
  keep: readonly boolean[],
  cols: Int32Array,
  spaced: boolean,
): { re: RegExp; groups: Int32Array } {
  const ws = spaced ? '[ \\t\\n\\r]*' : '';
  const num = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?';
  const plain = '[^"\\\\\\x00-\\x1f]*';
  const token = `${num}|true|false|null`;
  const value = `(?:"(${plain})"|(${token}))`;
  // a STRING column the rows leave off takes any scalar: nothing to capture
  const anyScalar = `(?:"${plain}"|${token})`;
  const timestamp = `(?:"(?:([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,6})?)|(${plain}))"|(${token}))`;
  const otherKey = `"(?!(?:${names.map(escapeRegExp).join('|')})")${plain}"`;
  // (the unrolled loop: runs of plain characters between escapes, which backtracks little)
  const otherString = `"${plain}(?:\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4})${plain})*"`;
  const scalar = `(?:${otherString}|${token})`;
  // other fields may hold an object or an array of scalars (deeper nesting: tier 2)
  const member = `${otherString}${ws}:${ws}${scalar}`;
  const object = `\\{${ws}(?:${member}(?:${ws},${ws}${member})*)?${ws}\\}`;
  const array = `\\[${ws}(?:${scalar}(?:${ws},${ws}${scalar})*)?${ws}\\]`;
  const other = `${otherKey}${ws}:${ws}(?:${scalar}|${object}|${array})`;
  // lazy repetitions of the other fields: a line without them matches at the first try
  let src = `^${ws}\\{${ws}(?:${other}${ws},${ws})*?`;
  const groups = new Int32Array(cols.length);
  let group = 1;
  for (let p = 0; p < cols.length; p++) {
    if (p > 0) src += `${ws},${ws}`;
    const ts = types[cols[p]] === T_TIMESTAMP;
    const dropped = types[cols[p]] === T_STRING && !keep[cols[p]];
    src += `"${escapeRegExp(names[cols[p]])}"${ws}:${ws}${ts ? timestamp : dropped ? anyScalar : value}(?:${ws},${ws}${other})*?`;
    groups[p] = dropped ? -1 : group;
    group += ts ? 3 : dropped ? 0 : 2;
  }
  src += `${ws}\\}${ws}$`;
  return { re: new RegExp(src), groups };
}
