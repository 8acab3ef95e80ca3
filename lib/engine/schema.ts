/**
 * Declared schemas in Spark DDL ("user STRING, event_time TIMESTAMP, amount DOUBLE"): the types of
 * columns and the forms of their values in rows (DataType), a LONG value's one form (exactLong,
 * canonicalLong), and a typed value's output form (outputValue). A JSON record is typed into a
 * row by json-record.ts, which shares holdsType, setOwn and BIGINT's range with this module.
 */
import { keyOfStored, mapEntries } from './map-entries';
import { InvalidOptionError } from './errors';
import { needsNumberText, parseDdlColumns } from './ddl';
import { formatTimestamp } from './timestamps';

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

export function parseSchema(ddl: string): Schema {
  if (typeof ddl !== 'string' || ddl.trim() === '') {
    throw new InvalidOptionError(
      `schema ${JSON.stringify(ddl)} is empty: declare the columns in Spark DDL, e.g. "user STRING, event_time TIMESTAMP, amount DOUBLE"`,
    );
  }
  const columns = parseDdlColumns(ddl);
  return columns.some((c) => needsNumberText(c)) ? { columns, ddl, numberText: true } : { columns, ddl };
}

/** BIGINT's range: 64-bit two's complement. */
export const MIN_LONG = -(2n ** 63n);
export const MAX_LONG = 2n ** 63n - 1n;

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

/** Sets `key` of a fresh object as data, "__proto__" included (a MAP's keys are the producer's). */
export function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

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
