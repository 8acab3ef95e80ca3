/**
 * Declared schemas in Spark DDL ("user STRING, event_time TIMESTAMP, amount DOUBLE") and the
 * conversion of a JSON record into a typed row. Timestamps become epoch milliseconds.
 */
import { InvalidOptionError } from './errors';
import type { Row } from './ports';
import { formatTimestamp, timestampFromJson } from './timestamps';

export type ColumnType = 'STRING' | 'INT' | 'LONG' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  /**
   * An INT column declared narrower (TINYINT/BYTE: 8, SMALLINT/SHORT: 16): its values are
   * range-checked to that width on input, and it is otherwise an INT (Spark widens them alike in
   * sum and avg). Absent for a 32-bit INT and every other type.
   */
  readonly bits?: 8 | 16;
  /**
   * A DOUBLE column declared FLOAT (REAL): IEEE 754 binary32, so each value is rounded to the
   * nearest binary32 on input (Math.fround) and is output as that double (0.1 as
   * 0.10000000149011612), as Spark writes a FloatType value widened to double. Absent otherwise.
   */
  readonly binary32?: true;
}

export interface Schema {
  readonly columns: readonly Column[];
  readonly ddl: string;
}

const TYPE_ALIASES: Record<string, ColumnType> = {
  STRING: 'STRING',
  VARCHAR: 'STRING',
  INT: 'INT',
  INTEGER: 'INT',
  SMALLINT: 'INT',
  SHORT: 'INT',
  TINYINT: 'INT',
  BYTE: 'INT',
  LONG: 'LONG',
  BIGINT: 'LONG',
  DOUBLE: 'DOUBLE',
  FLOAT: 'DOUBLE',
  REAL: 'DOUBLE',
  BOOLEAN: 'BOOLEAN',
  BOOL: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMP',
  TIMESTAMP_LTZ: 'TIMESTAMP',
};

/** The DDL names of the narrower integers (an INT in TYPE_ALIASES) and their width in bits. */
const INT_WIDTHS: Record<string, 8 | 16> = { TINYINT: 8, BYTE: 8, SMALLINT: 16, SHORT: 16 };

/** The DDL names of IEEE 754 binary32 (a DOUBLE in TYPE_ALIASES): Spark's FloatType. */
const BINARY32 = new Set(['FLOAT', 'REAL']);

/** The range of an INT column of `bits` (8, 16, or 32 when absent), as [min, max]. */
function intRange(bits: 8 | 16 | undefined): readonly [number, number] {
  return bits === 8 ? [-128, 127] : bits === 16 ? [-32768, 32767] : [-2147483648, 2147483647];
}

/** The declared type of a column as the DDL spells it (TINYINT, SMALLINT for the narrower INTs). */
function declaredType(col: Column): string {
  return col.bits === 8 ? 'TINYINT' : col.bits === 16 ? 'SMALLINT' : col.binary32 ? 'FLOAT' : col.type;
}

export function parseSchema(ddl: string): Schema {
  if (typeof ddl !== 'string' || ddl.trim() === '') {
    throw new InvalidOptionError(
      `schema ${JSON.stringify(ddl)} is empty: declare the columns in Spark DDL, e.g. "user STRING, event_time TIMESTAMP, amount DOUBLE"`,
    );
  }
  const columns: Column[] = [];
  const seen = new Set<string>();
  for (const part of ddl.split(',')) {
    const m = /^\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*:?\s+([A-Za-z_]+)(\s+NOT\s+NULL)?\s*$/i.exec(part);
    if (!m) {
      throw new InvalidOptionError(
        `schema column ${JSON.stringify(part.trim())} in "${ddl}" is not "name TYPE": write each column as a name and one of ${Object.keys(TYPE_ALIASES).join(', ')}`,
      );
    }
    const type = TYPE_ALIASES[m[2].toUpperCase()];
    if (!type) {
      throw new InvalidOptionError(
        `schema column ${m[1]} has type ${m[2]}, which sluice does not support yet (issue 29): use one of STRING, INT, LONG (BIGINT), DOUBLE, BOOLEAN, TIMESTAMP, TINYINT, SMALLINT`,
      );
    }
    if (m[1] === '__proto__') {
      throw new InvalidOptionError(
        `schema "${ddl}" declares a column named __proto__, which JavaScript objects cannot hold as data: rename the field at the producer`,
      );
    }
    if (seen.has(m[1])) {
      throw new InvalidOptionError(`schema "${ddl}" declares column ${m[1]} twice: give each column one declaration`);
    }
    seen.add(m[1]);
    const bits = INT_WIDTHS[m[2].toUpperCase()];
    if (bits !== undefined) columns.push({ name: m[1], type, bits });
    else if (BINARY32.has(m[2].toUpperCase())) columns.push({ name: m[1], type, binary32: true });
    else columns.push({ name: m[1], type });
  }
  return { columns, ddl };
}

/** BIGINT's range: 64-bit two's complement. */
const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;

/**
 * The value of a LONG column for the text of a JSON integer literal that a double cannot hold
 * exactly: a bigint within BIGINT's range; null for other text or a value out of range.
 *
 * A LONG value is a number when it is a safe integer (|v| <= 2^53 − 1) and a bigint only beyond:
 * one value has one form (so grouping and equality need no normalising), the common case stays a
 * double (no allocation on the fast path), and JavaScript's < and > compare a number with a
 * bigint exactly, so min, max and ordering need no special case. A digit string would order
 * wrongly ("9" > "10") and be mistaken for a STRING value.
 */
export function exactLong(text: string): bigint | number | null {
  if (!/^-?[0-9]+$/.test(text)) return null;
  const big = BigInt(text);
  if (big < MIN_LONG || big > MAX_LONG) return null;
  return canonicalLong(big);
}

/** A LONG value in its one form: a number when it is a safe integer, else the bigint. */
export function canonicalLong(big: bigint): bigint | number {
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

/**
 * The words Spark's JSON reader takes as a double where JSON has none: in a string for a DOUBLE
 * column (allowNonNumericNumbers, on by default), and bare, unquoted (Jackson's
 * ALLOW_NON_NUMERIC_NUMBERS, which Spark turns on). Longer spellings first: "-Infinity" before
 * "-INF", for the scan of bare tokens.
 */
const NON_NUMERIC_TOKENS: ReadonlyArray<readonly [string, number]> = [
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['+Infinity', Infinity],
  ['+INF', Infinity],
  ['-Infinity', -Infinity],
  ['-INF', -Infinity],
];
const NON_NUMERIC = new Map(NON_NUMERIC_TOKENS);

/** The double of a string Spark's JSON reader takes in a DOUBLE column (NON_NUMERIC_TOKENS); null for any other. */
export function nonFiniteDouble(text: string): number | null {
  return NON_NUMERIC.get(text) ?? null;
}

export type CoerceResult = { ok: true; row: Row } | { ok: false; reason: string };

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'bigint' ? 'number' : typeof v;
}

const TYPE_CODE: Record<ColumnType, number> = { STRING: 0, INT: 1, LONG: 2, DOUBLE: 3, BOOLEAN: 4, TIMESTAMP: 5 };

function describeBad(col: Column, v: unknown): string {
  const head = `column ${col.name} (${declaredType(col)}) has ${typeName(v)} ${typeof v === 'number' || typeof v === 'bigint' ? String(v) : JSON.stringify(v)}: `;
  switch (col.type) {
    case 'INT':
      return (
        head +
        (typeof v === 'number' && Number.isInteger(v)
          ? `out of the ${declaredType(col)} range ${intRange(col.bits).join('..')}; declare the column ${col.bits === 8 ? 'SMALLINT, INT' : col.bits === 16 ? 'INT' : 'BIGINT'} or wider`
          : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'LONG':
      return (
        head +
        (typeof v === 'bigint'
          ? 'out of the BIGINT range -9223372036854775808..9223372036854775807; declare the column DECIMAL(38,0) or STRING'
          : typeof v === 'number' && Number.isInteger(v)
            ? "beyond ±9007199254740991 (2^53 − 1) and not written as an integer literal (a fraction or an exponent makes it a double, which cannot hold it exactly); write the integer's digits"
            : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'DOUBLE':
      return `${head}expected a JSON number; fix the producer or declare the column STRING`;
    case 'BOOLEAN':
      return `${head}expected true or false`;
    default:
      return (
        head +
        (typeof v === 'number'
          ? 'epoch seconds outside 0001-01-01..9999-12-31 (milliseconds or microseconds?): send seconds, or a "YYYY-MM-DD HH:MM:SS[.ffffff]" string'
          : 'expected "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC, years 0001-9999, up to 6 fraction digits), ISO 8601 with Z or an offset up to ±18:00, or epoch seconds')
      );
  }
}

/**
 * Turns a parsed JSON record into a typed row, in place (the parsed object becomes the row:
 * fields outside the schema stay but are never output). A field that is missing or of the wrong
 * type makes the record bad: the reason names the column, the value and the rule. Explicit
 * nulls are nulls. This is the hot path of every source, so it allocates nothing per value.
 */
export function coerceRecord(schema: Schema, record: unknown): CoerceResult {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return {
      ok: false,
      reason: `record is a JSON ${typeName(record)}, not an object: each line must be one JSON object with the columns ${schema.columns.map((c) => c.name).join(', ')}`,
    };
  }
  const row = record as Row;
  const cols = schema.columns;
  for (let i = 0; i < cols.length; i++) {
    const col = cols[i];
    const name = col.name;
    // own fields only: a record without "constructor" must not read Object.prototype's
    const v = Object.hasOwn(row, name) ? row[name] : undefined;
    if (v === undefined) {
      if (!Object.hasOwn(row, name)) {
        return { ok: false, reason: `column ${name} (${col.type}) is missing: add it to the record, or send null explicitly when the value is unknown` };
      }
      row[name] = null;
      continue;
    }
    if (v === null) continue;
    switch (TYPE_CODE[col.type]) {
      case 0: // STRING: Spark's JSON reader keeps the JSON text of a non-string token
        if (typeof v !== 'string') row[name] = typeof v === 'number' ? numberText(v) : typeof v === 'bigint' ? String(v) : JSON.stringify(v, nonFiniteAsString);
        break;
      case 1: {
        const [lo, hi] = intRange(col.bits);
        if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) return { ok: false, reason: describeBad(col, v) };
        break;
      }
      case 2:
        if (typeof v === 'bigint') {
          if (v < MIN_LONG || v > MAX_LONG) return { ok: false, reason: describeBad(col, v) };
          row[name] = canonicalLong(v);
        } else if (typeof v !== 'number' || !Number.isSafeInteger(v)) return { ok: false, reason: describeBad(col, v) };
        break;
      case 3:
        if (typeof v !== 'number') {
          const d = typeof v === 'string' ? nonFiniteDouble(v) : null;
          if (d === null) return { ok: false, reason: describeBad(col, v) };
          row[name] = d;
        } else if (col.binary32) row[name] = Math.fround(v);
        break;
      case 4:
        if (typeof v !== 'boolean') return { ok: false, reason: describeBad(col, v) };
        break;
      case 5: {
        const us = timestampFromJson(v); // epoch µs (timestamps.ts Micros)
        if (us === null) return { ok: false, reason: describeBad(col, v) };
        row[name] = us;
        break;
      }
    }
  }
  return { ok: true, row };
}

/**
 * The text a STRING column keeps for a JSON number, as Spark's reader writes it back out with
 * Jackson: the number, or for NaN and the infinities the quoted name (Jackson's generator quotes
 * non-numeric numbers), e.g. `"NaN"` with its quotes.
 */
export function numberText(v: number): string {
  return Number.isFinite(v) ? JSON.stringify(v) : `"${String(v)}"`;
}

/** JSON.stringify's replacer for the same rule inside arrays and objects. */
function nonFiniteAsString(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v); // a nested integer JSON.parse would have read as this double (parseBigIntegers)
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
}

/** Two characters no well-formed text has in this order (a low surrogate, then a high one). */
const MARK = '\udc00\ud800';

/**
 * JSON.parse of a line that holds bare NaN or infinity tokens outside its strings: each becomes a
 * marked string, and the reviver puts the number back. undefined when the line has no such token,
 * is still not JSON, has a token where a key belongs, or already holds the mark's characters.
 */
function parseNonNumeric(line: string): unknown {
  if (line.includes(MARK) || /\\u[dD][cC]00/.test(line)) return undefined;
  let text = '';
  let from = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      // skip the string, escapes included (an unclosed one: JSON.parse reports it)
      for (i++; i < line.length && line.charCodeAt(i) !== 34; i++) if (line.charCodeAt(i) === 92) i++;
      continue;
    }
    if (c !== 78 && c !== 73 && c !== 43 && c !== 45) continue; // N, I, +, -
    const k = NON_NUMERIC_TOKENS.findIndex(([tok]) => line.startsWith(tok, i));
    if (k < 0) continue;
    text += `${line.slice(from, i)}"\\udc00\\ud800${k}"`;
    i += NON_NUMERIC_TOKENS[k][0].length - 1;
    from = i + 1;
  }
  if (from === 0) return undefined;
  text += line.slice(from);
  let keyed = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value) => {
      if (key.startsWith(MARK)) keyed = true;
      return typeof value === 'string' && value.length === 3 && value.startsWith(MARK) ? NON_NUMERIC_TOKENS[value.charCodeAt(2) - 48][1] : value;
    });
  } catch {
    return undefined;
  }
  return keyed ? undefined : parsed;
}

/**
 * Parses one JSON line into a row, or gives the reason it is malformed. As Spark's reader, it also
 * takes the bare tokens NaN, Infinity, +Infinity, +INF, -Infinity and -INF as numbers.
 */
export function parseJsonLine(schema: Schema, line: string): CoerceResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    parsed = parseNonNumeric(line);
    if (parsed === undefined) return { ok: false, reason: `malformed JSON (${(e as Error).message}): each line must be one complete JSON object` };
  }
  if (hasInexactLong(schema, parsed)) parsed = parseBigIntegers(schema, line) ?? parsed;
  return guardedCoerce(schema, parsed);
}

/** Whether a LONG column of the parsed record holds an integer JSON.parse could not keep exactly. */
function hasInexactLong(schema: Schema, parsed: unknown): boolean {
  if (parsed === null || typeof parsed !== 'object') return false;
  for (const c of schema.columns) {
    if (c.type !== 'LONG' || !Object.hasOwn(parsed, c.name)) continue;
    const v = (parsed as Row)[c.name];
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) return true;
  }
  return false;
}

/**
 * JSON.parse of a line whose LONG columns hold integers beyond 2^53 − 1, with those read from their
 * text: each integer literal of 16 digits or more outside strings becomes a marked string, and the
 * reviver gives a bigint for it under a LONG column's key (exactLong, or the literal's bigint
 * when out of range, for coerceRecord to refuse with its digits) and JSON.parse's double
 * elsewhere. undefined when the line holds the mark's characters or is still not JSON.
 */
function parseBigIntegers(schema: Schema, line: string): unknown {
  if (line.includes(MARK) || /\\u[dD][cC]00/.test(line)) return undefined;
  const longs = new Set(schema.columns.filter((c) => c.type === 'LONG').map((c) => c.name));
  const literal = /-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  let text = '';
  let from = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      for (i++; i < line.length && line.charCodeAt(i) !== 34; i++) if (line.charCodeAt(i) === 92) i++;
      continue;
    }
    if (c !== 45 && (c < 48 || c > 57)) continue;
    literal.lastIndex = i;
    const m = literal.exec(line);
    if (m === null) continue;
    const tok = m[0];
    if (/^-?[0-9]{16,}$/.test(tok)) {
      text += `${line.slice(from, i)}"${MARK}B${tok}"`;
      from = i + tok.length;
    }
    i += tok.length - 1;
  }
  text += line.slice(from);
  try {
    return JSON.parse(text, (key, value) => {
      if (typeof value !== 'string' || !value.startsWith(`${MARK}B`)) return value;
      const digits = value.slice(MARK.length + 1);
      return longs.has(key) ? (exactLong(digits) ?? BigInt(digits)) : Number(digits);
    });
  } catch {
    return undefined;
  }
}

/**
 * coerceRecord, with any failure of it a bad record rather than an error of the batch: a STRING
 * column that holds a value nested thousands of levels deep overflows JSON.stringify's stack.
 */
function guardedCoerce(schema: Schema, record: unknown): CoerceResult {
  try {
    return coerceRecord(schema, record);
  } catch (e) {
    return { ok: false, reason: unreadableReason(e) };
  }
}

/** Why a record that made the reader throw is bad (a RangeError: nested too deeply to keep as text). */
export function unreadableReason(e: unknown): string {
  if (e instanceof RangeError) return `record nests too deeply to keep a column's value as text (${e.message}): flatten the value at the producer`;
  return `record could not be read (${e instanceof Error ? e.message : String(e)}): fix the producer`;
}

/** Converts a typed value for output: timestamps to ISO strings, a BIGINT beyond 2^53 − 1 to its digits (FORMAT-3), everything else as is. */
export function outputValue(type: ColumnType | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'TIMESTAMP' && (typeof v === 'number' || typeof v === 'bigint')) return formatTimestamp(v);
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}
