/**
 * Declared schemas in Spark DDL ("user STRING, event_time TIMESTAMP, amount DOUBLE") and the
 * conversion of a JSON record into a typed row (value forms: DataType).
 */
import { keyOfStored, mapEntries, setEntry } from './map-entries';
import { parse as parseLossless } from 'lossless-json';
import { InvalidOptionError } from './errors';
import type { Row } from './ports';
import { dateOfEpochDay } from './dates';
import type { DatetimePattern } from './datetime-patterns';
import { dateOfText } from './formats/date-text';
import { elementTexts, firstValueEnd, memberTexts, strictJson } from './formats/lenient-json';
import { givesEveryKeyOnce, hiddenValueReason } from './json-duplicates';
import { JsonObject, mayReorderMembers, NON_NUMERIC_TOKENS, parseOrdered } from './json-ordered';
import { ddlOf, needsNumberText, parseDdlColumns } from './ddl';
import { decimalOfText, javaDigits } from './decimal';
import { formatTimestamp } from './timestamps';
import { timestampFromJson } from './timestamp-input';
import { binary32OfNumber, isBinary32Tie } from './binary32';

/**
 * The kind of a column's values. INT covers TINYINT and SMALLINT (`bits`), DOUBLE covers FLOAT
 * (`binary32`); DECIMAL, ARRAY, MAP and STRUCT carry the rest of their type beside it (DataType).
 */
export type ColumnType = 'STRING' | 'INT' | 'LONG' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP' | 'DECIMAL' | 'DATE' | 'ARRAY' | 'MAP' | 'STRUCT';

/**
 * A type, as DDL declares it. Values in rows: STRING a string, BOOLEAN a boolean, INT a number,
 * LONG a number when a safe integer and a bigint beyond, DOUBLE a number, DECIMAL the canonical
 * text with exactly `scale` fraction digits (decimal.ts), DATE "YYYY-MM-DD" (dates.ts), TIMESTAMP
 * as timestamps.ts decides, ARRAY a JS array, MAP a plain object, STRUCT a plain object holding
 * every declared field (null when absent) and nothing else; null for a null at any level.
 */
export interface DataType {
  readonly type: ColumnType;
  /**
   * An INT declared narrower (TINYINT/BYTE: 8, SMALLINT/SHORT: 16): its values are range-checked
   * to that width on input, and it is otherwise an INT (Spark widens them alike in sum and avg).
   * Absent for a 32-bit INT and every other type.
   */
  readonly bits?: 8 | 16;
  /**
   * A DOUBLE declared FLOAT (REAL): IEEE 754 binary32, so each value is rounded to the nearest
   * binary32 on input (Math.fround) and is output as that double (0.1 as 0.10000000149011612), as
   * Spark writes a FloatType value widened to double. Absent otherwise.
   */
  readonly binary32?: true;
  /** DECIMAL: digits in all (1 to 38). */
  readonly precision?: number;
  /** DECIMAL: digits after the point (0 to precision). */
  readonly scale?: number;
  /** ARRAY: the type of the elements. */
  readonly element?: DataType;
  /** MAP: the type of the values. */
  readonly value?: DataType;
  /**
   * MAP: the type of the keys, absent for STRING (the only key type of a schema: JSON object keys
   * are strings). An expression's map may have another atomic type (`map(1, 'a')`); its keys are
   * then held as their text (map-keys.ts), as Spark's JSON writer names them.
   */
  readonly key?: DataType;
  /** STRUCT: the fields, in order. */
  readonly fields?: readonly Column[];
}

/** The type of a window value ({start, end}), as Spark's window and session_window columns have it. */
export const WINDOW_STRUCT: DataType = {
  type: 'STRUCT',
  fields: [
    { name: 'start', type: 'TIMESTAMP' },
    { name: 'end', type: 'TIMESTAMP' },
  ],
};

/** The type an aggregate sees: a window column (its `{start, end}` under a TIMESTAMP type with the window mark) is Spark's STRUCT<start, end>. */
export function aggregatedType(t: DataType | undefined): DataType | undefined {
  return t !== undefined && (t as { window?: boolean }).window === true ? WINDOW_STRUCT : t;
}

/** A named type: a column of a schema, or a field of a STRUCT. */
export interface Column extends DataType {
  readonly name: string;
}

export interface Schema {
  readonly columns: readonly Column[];
  readonly ddl: string;
  /** Some column needs each number's text to read it exactly (a DECIMAL, or a BIGINT inside a nested type). */
  readonly numberText?: true;
}

/** The range of an INT column of `bits` (8, 16, or 32 when absent), as [min, max]. */
function intRange(bits: 8 | 16 | undefined): readonly [number, number] {
  return bits === 8 ? INT8 : bits === 16 ? INT16 : INT32;
}
const INT8 = [-128, 127] as const;
const INT16 = [-32768, 32767] as const;
const INT32 = [-2147483648, 2147483647] as const;

export function parseSchema(ddl: string): Schema {
  if (typeof ddl !== 'string' || ddl.trim() === '') {
    throw new InvalidOptionError(
      `schema ${JSON.stringify(ddl)} is empty: declare the columns in Spark DDL, e.g. "user STRING, event_time TIMESTAMP, amount DOUBLE"`,
    );
  }
  const columns = parseDdlColumns(ddl);
  return columns.some((c) => needsNumberText(c)) ? { columns, ddl, numberText: true } : { columns, ddl };
}

/** A JSON integer literal (Jackson's VALUE_NUMBER_INT): no fraction, no exponent. */
const INTEGER_LITERAL = /^-?[0-9]+$/;

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

/** A number as lossless-json's parse gives it: the literal's text, for the column's type to read. */
interface NumberLiteral {
  readonly isLosslessNumber: true;
  readonly value: string;
}

function isNumberLiteral(v: unknown): v is NumberLiteral {
  return typeof v === 'object' && v !== null && (v as NumberLiteral).isLosslessNumber === true;
}

/** A value for a message: numbers as written, others as JSON, cut short when long. */
function shown(v: unknown): string {
  if (isNumberLiteral(v)) return v.value;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  let text: string;
  try {
    text = JSON.stringify(v, nonFiniteAsString) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Why a number does not fit DECIMAL(p,s), and the type that would hold it: a wider DECIMAL while
 * its digits before the point and the scale fit in 38, else a smaller scale, else DOUBLE or STRING.
 */
function decimalTooWide(t: DataType, n: number): string {
  const p = t.precision!;
  const s = t.scale!;
  // the digits before the point (a number past a double's range: more than any DECIMAL holds)
  const digits = Number.isFinite(n) ? Math.max(1, Math.floor(Math.log10(Math.abs(n))) + 1) : Number.POSITIVE_INFINITY;
  const why = `needs more than ${p - s} digits before the point`;
  if (digits + s <= 38) return `${why}; declare the column DECIMAL(${Math.min(38, Math.max(p + 10, digits + s))},${s}) or wider (at most 38 digits)`;
  if (digits <= 38) return `${why}; declare the column with a smaller scale, e.g. DECIMAL(38,${38 - digits}), or DOUBLE`;
  if (Number.isFinite(n)) return `${why}, more than the 38 a DECIMAL holds: declare the column DOUBLE or STRING`;
  return `${why}, more than a DECIMAL or a DOUBLE holds: declare the column STRING to keep its text`;
}

function describeBad(path: string, t: DataType, v: unknown): string {
  const kind = isNumberLiteral(v) ? 'number' : typeName(v);
  // (a number token past a double's range reaches here as an infinity: its text is not kept on that path)
  const head =
    typeof v === 'number' && !Number.isFinite(v) && !Number.isNaN(v)
      ? `column ${path} (${ddlOf(t)}) has a number ${v > 0 ? 'above' : 'below'} ${v > 0 ? '' : '-'}1.8e308 (a huge exponent): `
      : `column ${path} (${ddlOf(t)}) has ${kind} ${shown(v)}: `;
  const n = isNumberLiteral(v) ? Number(v.value) : v;
  if (isNumberLiteral(v) && !INTEGER_LITERAL.test(v.value) && (t.type === 'INT' || t.type === 'LONG' || t.type === 'TIMESTAMP')) {
    return t.type === 'TIMESTAMP'
      ? `${head}a number is epoch seconds only as a JSON integer (a fraction or an exponent makes it another token, which Spark's JSON reader refuses for a TIMESTAMP): write whole seconds, or a "YYYY-MM-DD HH:MM:SS[.ffffff]" string`
      : `${head}expected a JSON integer (a fraction or an exponent makes it another token, which Spark's JSON reader refuses for ${ddlOf(t)}, even 1.0 or 1e2): write the integer's digits at the producer, or declare the column DOUBLE or DECIMAL`;
  }
  switch (t.type) {
    case 'INT':
      return (
        head +
        (typeof n === 'number' && Number.isInteger(n)
          ? `out of the ${ddlOf(t)} range ${intRange(t.bits).join('..')}; declare the column ${t.bits === 8 ? 'SMALLINT, INT' : t.bits === 16 ? 'INT' : 'BIGINT'} or wider`
          : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'LONG':
      return (
        head +
        (typeof v === 'bigint' || (isNumberLiteral(v) && /^-?[0-9]+$/.test(v.value))
          ? 'out of the BIGINT range -9223372036854775808..9223372036854775807; declare the column DECIMAL(38,0) or STRING'
          : typeof n === 'number' && Number.isInteger(n)
            ? "beyond ±9007199254740991 (2^53 − 1) and not written as an integer literal (a fraction or an exponent makes it a double, which cannot hold it exactly); write the integer's digits"
            : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'DOUBLE':
      return `${head}expected a JSON number; fix the producer or declare the column STRING`;
    case 'BOOLEAN':
      return `${head}expected true or false`;
    case 'DECIMAL': {
      // (a string of a number: what its text needs)
      const written = typeof v === 'string' ? decimalString(v) : null;
      const wide = written !== null && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(written) ? Number(written) : n;
      return typeof wide === 'number'
        ? head + decimalTooWide(t, wide)
        : `${head}expected a JSON number, or a string of one (Java's BigDecimal text: an optional sign, digits with an optional point and exponent, commas ignored); fix the producer or declare the column STRING`;
    }
    case 'DATE':
      return `${head}expected "YYYY-MM-DD", a day of years 0001-9999; fix the producer or declare the column STRING`;
    case 'ARRAY':
      return `${head}expected a JSON array; fix the producer or declare the column STRING`;
    case 'MAP':
    case 'STRUCT':
      return `${head}expected a JSON object; fix the producer or declare the column STRING`;
    default:
      return (
        head +
        (typeof n === 'number'
          ? 'epoch seconds outside 0001-01-01..9999-12-31 (milliseconds or microseconds?): send seconds, or a "YYYY-MM-DD HH:MM:SS[.ffffff]" string'
          : 'expected "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC, years 0001-9999, up to 6 fraction digits), ISO 8601 with Z or an offset up to ±18:00, or epoch seconds')
      );
  }
}

/**
 * The text Spark's JSON reader gives Java's BigDecimal for a DECIMAL written as a JSON string
 * (JacksonParser's VALUE_STRING case, ExprUtils.getDecimalParser for the default locale): its
 * commas dropped (`"1,234.50"`), digits of other scripts read as Java reads them; null for the
 * empty string, which Spark refuses for every type but STRING.
 */
function decimalString(v: string): string | null {
  return v.length === 0 ? null : javaDigits(v.replace(/,/g, ''));
}

/** A value that does not fit its type, anywhere in a record: coerceRecord makes the record bad with the reason. */
class BadValue {
  constructor(readonly reason: string) {}
}

/** A plain object (not an array, not a number literal). */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isNumberLiteral(v);
}

/** Sets `key` of a fresh object as data, "__proto__" included (a MAP's keys are the producer's). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * The value of type `t` for a JSON value at `path` (a column, `lines[2].price`, `tags['k']`), for
 * every type and at any depth; throws BadValue when it does not fit. Numbers may come as double
 * (JSON.parse) or as their literal's text (the schema's numberText mode), and both read the same.
 */
function coerceValue(t: DataType, v: unknown, path: string, ordered?: unknown, raw?: RawText): unknown {
  if (v === null || v === undefined) return null;
  const text = isNumberLiteral(v) ? v.value : null;
  switch (t.type) {
    case 'STRING':
      if (typeof v === 'string') return v;
      // a value inside a container as the line writes it (Spark 4's exact string parsing at any depth)
      if (raw !== undefined) {
        const written = raw();
        if (written !== undefined) return written;
      }
      // a number keeps its token as written (Spark 4's exact string parsing of a file's JSON)
      if (text !== null) return text;
      if (typeof v === 'number') {
        if (wantNumberText) throw NEED_NUMBER_TEXT;
        return numberText(v);
      }
      if (typeof v === 'bigint') return String(v);
      return JSON.stringify(v, nonFiniteAsString);
    case 'INT': {
      const n = text !== null ? (INTEGER_LITERAL.test(text) ? Number(text) : NaN) : v;
      const [lo, hi] = intRange(t.bits);
      if (typeof n !== 'number' || !Number.isInteger(n) || n < lo || n > hi) throw new BadValue(describeBad(path, t, v));
      return n === 0 ? 0 : n; // -0 is 0: an integer has no negative zero
    }
    case 'LONG': {
      if (text !== null) {
        const exact = exactLong(text);
        if (exact === null) throw new BadValue(describeBad(path, t, v));
        return exact;
      }
      if (typeof v === 'bigint') {
        if (v < MIN_LONG || v > MAX_LONG) throw new BadValue(describeBad(path, t, v));
        return canonicalLong(v);
      }
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new BadValue(describeBad(path, t, v));
      return v === 0 ? 0 : v; // -0 is 0: an integer has no negative zero
    }
    case 'DOUBLE': {
      let n: number | null = text !== null ? Number(text) : typeof v === 'number' ? v : typeof v === 'string' ? nonFiniteDouble(v) : null;
      if (n === null) throw new BadValue(describeBad(path, t, v));
      if (text !== null) {
        // Jackson reads an integer literal as an int or a long first: -0 is 0 (-0.0 and -0e0 stay
        // -0); and a FLOAT from the text, rounded once to a binary32 (binary32.ts)
        if (n === 0 && INTEGER_LITERAL.test(text)) n = 0;
        return t.binary32 ? binary32OfNumber(n, text, 0, text.length) : n;
      }
      // a double JSON.parse read from -0 or -0.0, or one halfway between two binary32 values:
      // the text decides (read the line again with each number's text)
      if (wantNumberText && typeof v === 'number' && (Object.is(v, -0) || (t.binary32 && isBinary32Tie(v)))) throw NEED_NUMBER_TEXT;
      if (t.binary32) n = Math.fround(n);
      return n;
    }
    case 'BOOLEAN':
      if (typeof v !== 'boolean') throw new BadValue(describeBad(path, t, v));
      return v;
    case 'TIMESTAMP': {
      if (typeof v === 'string' && jsonPatterns?.timestamp) return byPattern(jsonPatterns.timestamp, 'timestampFormat', t, v, path);
      const ts = text !== null && !INTEGER_LITERAL.test(text) ? null : timestampFromJson(text !== null ? Number(text) : v);
      if (ts === null) throw new BadValue(describeBad(path, t, v));
      return ts;
    }
    case 'DECIMAL': {
      const literal =
        text ?? (typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'bigint' ? String(v) : typeof v === 'string' ? decimalString(v) : null);
      const d = literal === null ? null : decimalOfText(literal, t.precision!, t.scale!);
      if (d === null) throw new BadValue(describeBad(path, t, v));
      return d;
    }
    case 'DATE': {
      if (typeof v === 'string' && jsonPatterns?.date) return byPattern(jsonPatterns.date, 'dateFormat', t, v, path);
      const d = typeof v === 'string' ? jsonDate(v) : null;
      if (d === null) throw new BadValue(describeBad(path, t, v));
      return d;
    }
    case 'ARRAY': {
      if (!Array.isArray(v)) throw new BadValue(describeBad(path, t, v));
      const out = new Array(v.length);
      const o = Array.isArray(ordered) ? ordered : undefined;
      let texts: string[] | undefined | null = null;
      const at =
        raw &&
        ((i: number): RawText =>
          () => {
            if (texts === null) {
              const r = raw();
              texts = r === undefined ? undefined : elementTexts(r);
              if (texts?.length !== v.length) texts = undefined;
            }
            return texts?.[i];
          });
      for (let i = 0; i < v.length; i++) out[i] = coerceValue(t.element!, v[i], `${path}[${i}]`, o?.[i], at?.(i));
      return out;
    }
    case 'MAP': {
      if (!isObject(v)) throw new BadValue(describeBad(path, t, v));
      const out: Record<string, unknown> = {};
      const keys = Object.keys(v);
      const written = ordered instanceof JsonObject ? ordered.lastValues() : undefined;
      const at = raw && memberText(raw);
      if (written !== undefined && written.size === keys.length && keys.every((k) => written.has(k))) {
        // the keys in the order the line writes them, where JSON.parse put an integer-like one first
        for (const [key, o] of written) setEntry(out, key, coerceValue(t.value!, v[key], `${path}[${JSON.stringify(key)}]`, o, at?.(key)));
      } else for (const key of keys) setEntry(out, key, coerceValue(t.value!, v[key], `${path}[${JSON.stringify(key)}]`, undefined, at?.(key)));
      return out;
    }
    case 'STRUCT': {
      if (!isObject(v)) throw new BadValue(describeBad(path, t, v));
      const out: Record<string, unknown> = {};
      const written = ordered instanceof JsonObject ? ordered.lastValues() : undefined;
      const at = raw && memberText(raw);
      for (const f of t.fields!)
        setOwn(out, f.name, coerceValue(f, Object.hasOwn(v, f.name) ? v[f.name] : null, `${path}.${f.name}`, written?.get(f.name), at?.(f.name)));
      return out;
    }
  }
}

/**
 * A DATE or TIMESTAMP string read by the source's dateFormat or timestampFormat, the only form then
 * read (Spark: no fallback once the option is set); a number for a TIMESTAMP stays epoch seconds.
 */
function byPattern(p: DatetimePattern, option: string, t: DataType, v: string, path: string): unknown {
  const x = t.type === 'DATE' ? p.parseDate(v) : p.parseTimestamp(v);
  if (x === null) {
    throw new BadValue(
      `column ${path} (${ddlOf(t)}) has string ${shown(v)}: not a ${t.type === 'DATE' ? 'date' : 'timestamp'} of ${option} ${JSON.stringify(p.pattern)}; fix the value at the producer, or set the ${option} option to its pattern`,
    );
  }
  return x;
}

/**
 * A JSON string's DATE as Spark's JSON reader takes it without a dateFormat: Spark's date text
 * (date-text.ts), else, as Spark 1.5 wrote dates, a number of days since 1970-01-01 (an Int).
 */
function jsonDate(text: string): string | null {
  const d = dateOfText(text);
  if (d !== null || !/^[+-]?[0-9]{1,10}$/.test(text)) return d;
  const days = Number(text);
  return days >= -(2 ** 31) && days < 2 ** 31 && days >= -719162 && days <= 2932896 ? dateOfEpochDay(days) : null;
}

/** Why a parsed JSON value at `path` does not fit type `t` (the record's reason), or null. */
function badValueReason(t: DataType, v: unknown, path: string): string | null {
  try {
    coerceValue(t, v, path);
    return null;
  } catch (e) {
    if (e instanceof BadValue) return e.reason;
    return unreadableReason(e);
  }
}

/**
 * The value of type `t` for one parsed JSON value (numbers as lossless-json's literals or doubles),
 * or undefined when it does not fit: from_json's typing, which makes such a field null.
 */
export function jsonValueOf(t: DataType, v: unknown): unknown {
  try {
    return coerceValue(t, v, '');
  } catch (e) {
    if (e instanceof BadValue) return undefined;
    throw e;
  }
}

/**
 * Turns a parsed JSON record into a typed row, in place (the parsed object becomes the row:
 * fields outside the schema stay but are never output). A field of the wrong type makes the
 * record bad: the reason names the column, the value and the rule. A field the record does not
 * name is null, as an explicit null is (Spark's JacksonParser leaves it unset: null). This is the
 * hot path of every source, so it allocates nothing per value.
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
      // absent is null, as Spark's reader leaves a field the record does not name
      setOwn(row, name, null);
      continue;
    }
    if (v === null) continue;
    if (col.type === 'STRING' && rawLine !== null && (typeof v === 'number' || (typeof v === 'object' && !isNumberLiteral(v)))) {
      // a number, an object or an array: its text as the line has it (Spark 4's exact string parsing)
      rawMembers ??= memberTexts(rawLine);
      const raw = rawMembers.get(name);
      if (raw !== undefined) {
        row[name] = raw;
        continue;
      }
    }
    try {
      const nested = typeof v === 'object' && rawLine !== null;
      row[name] = coerceValue(
        col,
        v,
        name,
        nested ? writtenOrder(col, name) : undefined,
        nested && holdsNestedString(col) ? () => columnText(name) : undefined,
      );
    } catch (e) {
      if (e instanceof BadValue) return { ok: false, reason: e.reason };
      throw e;
    }
  }
  return { ok: true, row };
}

/**
 * The column's value as the line writes it (parseOrdered: members in order), when the order
 * JSON.parse gave a map's keys may differ from it: the column holds a MAP at some depth and its
 * text names an integer-like key. Otherwise undefined (the order JSON.parse gave is the line's).
 */
function writtenOrder(col: Column, name: string): unknown {
  let maps = columnsWithMaps.get(col);
  if (maps === undefined) columnsWithMaps.set(col, (maps = holdsType(col, (t) => t.type === 'MAP')));
  if (!maps) return undefined;
  rawMembers ??= memberTexts(rawLine!);
  const raw = rawMembers.get(name);
  if (raw === undefined || !mayReorderMembers(raw)) return undefined;
  try {
    return parseOrdered(raw);
  } catch {
    return undefined; // not strict JSON (single quotes, NaN): the order JSON.parse's fallbacks gave
  }
}

/**
 * The column's text as the line writes it, when the column is a container holding a STRING at
 * some depth (a STRUCT field, an element, a MAP value): Spark's reader gives such a STRING a
 * number, an object or an array as its bytes in the line, which the parsed value no longer has.
 */
function holdsNestedString(col: Column): boolean {
  let strings = columnsWithStrings.get(col);
  if (strings === undefined) columnsWithStrings.set(col, (strings = col.type !== 'STRING' && holdsType(col, (t) => t.type === 'STRING')));
  return strings;
}

function columnText(name: string): string | undefined {
  rawMembers ??= memberTexts(rawLine!);
  return rawMembers.get(name);
}

/**
 * A value's text as the line writes it, asked for only when a STRING is given something other
 * than a string (rare): the text of the container, then of its member, are found only then.
 */
type RawText = () => string | undefined;

/** The texts of an object's members, by key, from the object's text, found once when first asked. */
function memberText(raw: RawText): (key: string) => RawText {
  let texts: Map<string, string> | undefined | null = null;
  return (key) => () => {
    if (texts === null) {
      const r = raw();
      texts = r === undefined ? undefined : memberTexts(r);
    }
    return texts?.get(key);
  };
}

const columnsWithStrings = new WeakMap<Column, boolean>();

/** Whether `t`, or a type inside it (an array's element, a map's value, a struct's field), passes `test`. */
export function holdsType(t: DataType, test: (t: DataType) => boolean): boolean {
  if (test(t)) return true;
  switch (t.type) {
    case 'ARRAY':
      return holdsType(t.element!, test);
    case 'MAP':
      return holdsType(t.value!, test);
    case 'STRUCT':
      return t.fields!.some((f) => holdsType(f, test));
    default:
      return false;
  }
}

/** Whether a column holds a MAP at some depth, per column object (a schema's columns are made once). */
const columnsWithMaps = new WeakMap<Column, boolean>();

/**
 * The text a STRING column keeps for a JSON number, as Spark's reader writes it back out with
 * Jackson: the number, or for NaN and the infinities the quoted name (Jackson's generator quotes
 * non-numeric numbers), e.g. `"NaN"` with its quotes.
 */
function numberText(v: number): string {
  return Number.isFinite(v) ? JSON.stringify(v) : `"${String(v)}"`;
}

/** JSON.stringify's replacer for the same rule inside arrays and objects. */
function nonFiniteAsString(_key: string, v: unknown): unknown {
  if (isNumberLiteral(v)) return Number(v.value); // the double JSON.parse would have read (numberText mode)
  if (typeof v === 'bigint') return Number(v); // a nested integer JSON.parse would have read as this double (parseBigIntegers)
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
}

/** Two characters no well-formed text has in this order (a low surrogate, then a high one). */
const MARK = '\udc00\ud800';

/**
 * JSON.parse of a line that holds bare NaN or infinity tokens outside its strings: each becomes a
 * marked string, and the reviver puts the number back. undefined when the line has no such token,
 * is still not JSON, has a token where a key belongs, or already holds the mark's characters.
 * `parse`: JSON.parse, or lossless-json's parse (numbers as their literals' text, losslessRow).
 */
function parseNonNumeric(line: string, parse: (text: string, reviver: (key: string, value: unknown) => unknown) => unknown = JSON.parse): unknown {
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
    parsed = parse(text, (key, value) => {
      if (key.startsWith(MARK)) keyed = true;
      return typeof value === 'string' && value.length === 3 && value.startsWith(MARK) ? NON_NUMERIC_TOKENS[value.charCodeAt(2) - 48][1] : value;
    });
  } catch {
    return undefined;
  }
  return keyed ? undefined : parsed;
}

/**
 * A run of 16 digits and points: the line may hold a number literal with 16 significant digits or
 * more. A literal with at most 15 is exact through a double: two such decimals never share a
 * double (IEEE 754's 15-digit guarantee), so the double's shortest text (String(v)) has the
 * literal's value, and a DECIMAL can be read from it. Lines without such a run (most) take
 * JSON.parse, three times faster than lossless-json; a run inside a string only costs the slower
 * parse. (Doubles below 1e-307 lose digits, but round to 0 at any DECIMAL scale up to 38.)
 */
const LONG_NUMBER = /[0-9.]{16,}/;

/**
 * Parses one JSON line into a row, or gives the reason it is malformed. As Spark's reader, it also
 * takes the bare tokens NaN, Infinity, +Infinity, +INF, -Infinity and -INF as numbers, and (unless
 * `singleQuotes` is false: the allowSingleQuotes option) 'single-quoted' strings and names.
 */
export function parseJsonLine(schema: Schema, line: string, singleQuotes = true, patterns: JsonPatterns | null = null): CoerceResult {
  const outer = rawLine;
  const outerPatterns = jsonPatterns;
  rawLine = line;
  rawMembers = undefined;
  jsonPatterns = patterns;
  try {
    return parseLine(schema, line, singleQuotes);
  } finally {
    rawLine = outer;
    rawMembers = undefined;
    jsonPatterns = outerPatterns;
  }
}

/** The dateFormat and timestampFormat options of a JSON source, compiled (null: Spark's default forms). */
export interface JsonPatterns {
  readonly date: DatetimePattern | null;
  readonly timestamp: DatetimePattern | null;
}

/** The patterns of the line parseJsonLine is typing: a DATE or TIMESTAMP string at any depth is read by them. */
let jsonPatterns: JsonPatterns | null = null;

function parseLine(schema: Schema, line: string, singleQuotes: boolean): CoerceResult {
  // a key given twice: JSON.parse keeps the last value, Spark's reader converts each in turn; a
  // line JSON.parse reads is checked through only when its keys are not all there once
  const lossless = (schema.numberText && LONG_NUMBER.test(line)) || floatProbe(schema)?.test(line) === true;
  if (lossless) {
    const reason = hiddenValueReason(schema, line, badValueReason);
    if (reason !== null) return { ok: false, reason };
    const exact = losslessRow(schema, line);
    if (exact !== undefined) return exact;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    parsed = parseNonNumeric(line);
    if (parsed === undefined && singleQuotes && line.includes("'")) {
      // Spark's allowSingleQuotes, on by default: 'text' is a string
      const strict = strictJson(line, SINGLE_QUOTES);
      if (strict !== line) return parseJsonLine(schema, strict, false, jsonPatterns);
    }
    if (parsed === undefined && line.trimStart().startsWith('{')) {
      // Spark's parser reads the line's first JSON value and never looks past it: text after a
      // complete object (a trailing comma, a second object) is ignored
      const end = firstValueEnd(line);
      if (end < line.length && line.slice(end).trim() !== '') {
        const first = parseJsonLine(schema, line.slice(0, end), singleQuotes, jsonPatterns);
        if (first.ok || !first.reason.startsWith('malformed JSON')) return first;
      }
    }
    if (parsed === undefined) return { ok: false, reason: `malformed JSON (${(e as Error).message}): each line must be one complete JSON object` };
  }
  // (a line with bare NaN or infinity tokens too: parseNonNumeric's object, and hiddenValueReason
  // reads the tokens as numbers; {"b":-INF,"b":true} once gave a BOOLEAN b true)
  if (!lossless && !givesEveryKeyOnce(line, parsed)) {
    const reason = hiddenValueReason(schema, line, badValueReason);
    if (reason !== null) return { ok: false, reason };
  }
  if (hasInexactLong(schema, parsed)) return losslessRow(schema, line) ?? guardedCoerce(schema, parsed);
  // a STRING column that holds a number needs the number's text: read the line again with it
  wantNumberText = true;
  let r: CoerceResult | typeof NEED_NUMBER_TEXT;
  try {
    r = guardedCoerce(schema, parsed);
  } catch (e) {
    if (e !== NEED_NUMBER_TEXT) throw e;
    r = NEED_NUMBER_TEXT;
  } finally {
    wantNumberText = false;
  }
  return r !== NEED_NUMBER_TEXT ? r : (losslessRow(schema, line) ?? guardedCoerce(schema, parsed));
}

const SINGLE_QUOTES = { singleQuotes: true, comments: false, unquotedNames: false } as const;

/**
 * The line parseJsonLine is typing (null elsewhere: static rows, from_json), for a STRING column
 * that holds an object or an array to keep its text as written; its members' texts, once read.
 */
let rawLine: string | null = null;
let rawMembers: Map<string, string> | undefined;

/**
 * Set while parseJsonLine types a record JSON.parse read: a STRING column that holds a number then
 * throws NEED_NUMBER_TEXT, for the line to be read again with each number's text (lossless-json),
 * which the column keeps as written. Elsewhere (from_json, static rows) the double's text.
 */
let wantNumberText = false;
const NEED_NUMBER_TEXT: unique symbol = Symbol('need number text');

/**
 * A probe of a line for a number with a fraction or an exponent where the schema has an integral
 * or TIMESTAMP value, which only an integer literal fits (Spark's VALUE_NUMBER_INT): JSON.parse
 * reads 1.0 and 1 alike, so a line the probe matches is read with each number's text. The probe
 * may match lines without such a number (only a cost) and misses none: a key written with an
 * escape (`"\u0069":1.0`, which names column i as Jackson decodes it) is matched whatever it spells.
 */
const floatProbes = new WeakMap<Schema, RegExp | null>();

function floatProbe(schema: Schema): RegExp | null {
  let probe = floatProbes.get(schema);
  if (probe !== undefined) return probe;
  const keys = new Set<string>();
  let anywhere = false;
  const walk = (t: DataType, key: string | null): void => {
    if (t.type === 'INT' || t.type === 'LONG' || t.type === 'TIMESTAMP') {
      if (key === null || [...key].some((ch) => ch === '"' || ch === '\\' || ch < ' ')) anywhere = true;
      else keys.add(key);
    } else if (t.type === 'ARRAY') walk(t.element!, null);
    else if (t.type === 'MAP') walk(t.value!, null);
    else if (t.type === 'STRUCT') for (const f of t.fields!) walk(f, f.name);
  };
  for (const c of schema.columns) walk(c, c.name);
  const float = '-?[0-9]+(?:\\.|[eE])';
  if (anywhere) probe = /[:,[]\s*-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)\s*[,}\]]/;
  else if (keys.size > 0) {
    // (the second alternative: any key with an escape, which may spell one of them; it once went
    // unmatched, so {"\u0069":1.0} gave an INT i the value 1 where Spark's reader refuses 1.0. It
    // starts after a { or a comma, as a key does: a quote inside a string has a backslash before
    // it, so the probe reads each string once, not once from each escaped quote in it)
    const named = `"(?:${[...keys].map((k) => k.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|')})"`;
    probe = new RegExp(`(?:${named}|[{,]\\s*"(?:[^"\\\\]*\\\\.)+[^"\\\\]*")\\s*:\\s*${float}`);
  } else probe = null;
  floatProbes.set(schema, probe);
  return probe;
}

/**
 * The row of a line read with every number as its literal's text (lossless-json), for a DECIMAL or
 * a BIGINT beyond 2^53 − 1 at any depth; undefined when lossless-json refuses the line (bare NaN
 * tokens), which JSON.parse then reads. A key given twice keeps its last value, as JSON.parse does
 * (lossless-json would refuse the line). The row keeps the schema's columns
 * only: other fields would still hold lossless-json's number objects.
 */
const LOSSLESS_OPTIONS = { onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue };

function losslessRow(schema: Schema, line: string): CoerceResult | undefined {
  let literal: unknown;
  try {
    literal = parseLossless(line, null, LOSSLESS_OPTIONS);
  } catch {
    // bare NaN or infinity tokens (Spark's allowNonNumericNumbers), which lossless-json refuses:
    // marked as JSON.parse's fallback marks them, so the other numbers keep their text (a FLOAT's
    // tie, a -0 literal, a BIGINT beyond 2^53 on the same line)
    literal = parseNonNumeric(line, (text, reviver) => parseLossless(text, reviver, LOSSLESS_OPTIONS));
    if (literal === undefined) return undefined;
  }
  const r = guardedCoerce(schema, literal);
  if (!r.ok) return r;
  const row: Row = {};
  for (const c of schema.columns) setOwn(row, c.name, r.row[c.name]);
  return { ok: true, row };
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
 * coerceRecord, with any failure of it a bad record rather than an error of the batch: a STRING
 * column that holds a value nested thousands of levels deep overflows JSON.stringify's stack.
 */
function guardedCoerce(schema: Schema, record: unknown): CoerceResult {
  try {
    return coerceRecord(schema, record);
  } catch (e) {
    if (e === NEED_NUMBER_TEXT) throw e;
    return { ok: false, reason: unreadableReason(e) };
  }
}

/** Why a record that made the reader throw is bad (a RangeError: nested too deeply to keep as text). */
export function unreadableReason(e: unknown): string {
  if (e instanceof RangeError) return `record nests too deeply to keep a column's value as text (${e.message}): flatten the value at the producer`;
  return `record could not be read (${e instanceof Error ? e.message : String(e)}): fix the producer`;
}

/** Converts a typed value for output: timestamps to ISO strings, a BIGINT beyond 2^53 − 1 to its digits (FORMAT-3), everything else as is. */
export function outputValue(type: DataType | ColumnType | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const t = typeof type === 'string' ? { type } : type;
  if (t?.type === 'TIMESTAMP' && (typeof v === 'number' || typeof v === 'bigint')) return formatTimestamp(v);
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((e) => outputValue(t?.element, e));
  const out: Record<string, unknown> = {};
  if (t?.type === 'MAP') {
    // the keys' texts (map-entries.ts); an integer-like key comes first in a JS object again
    for (const [key, x] of mapEntries(v)) setOwn(out, key, outputValue(t.value, x));
    return out;
  }
  const fields = t?.type === 'STRUCT' ? t.fields : undefined;
  for (const name of Object.keys(v)) {
    const fieldType = fields ? fields.find((f) => f.name === name) : undefined;
    // untyped: a map's stored key shown as its text
    setOwn(out, fields ? name : keyOfStored(name), outputValue(fieldType, (v as Record<string, unknown>)[name]));
  }
  return out;
}
