/**
 * The types of expressions and Spark's rules between them (ANSI mode): numeric widening, DECIMAL
 * result precision and scale (Spark's DecimalPrecision with `DecimalType.adjustPrecisionScale`),
 * and the implicit casts of strings. Column types are lib/engine/schema.ts's `DataType`; an
 * expression may also have the type of a NULL literal (Spark's VOID) or an INTERVAL (a literal
 * `INTERVAL 10 MINUTES`, only as an operand of + and -, or an argument of window functions).
 */
import { ddlOf, MAX_DECIMAL_PRECISION } from '../ddl';
import { integerAsDecimal } from '../decimal';
import type { ColumnType, DataType } from '../schema';
import { intervalTypeName, widerInterval } from './interval-text';

/** An expression's type: a column type, `NULL` (the type of a NULL literal) or `INTERVAL`. */
export interface SqlType {
  readonly type: ColumnType | 'NULL' | 'INTERVAL';
  readonly bits?: 8 | 16;
  readonly binary32?: true;
  readonly precision?: number;
  readonly scale?: number;
  readonly element?: SqlType;
  readonly value?: SqlType;
  /** MAP: the type of the keys (absent: STRING). */
  readonly key?: SqlType;
  readonly fields?: readonly SqlField[];
  /** INTERVAL: a year-month interval (a value is months); otherwise day-time (a value is microseconds). */
  readonly yearMonth?: true;
  /**
   * INTERVAL: a day-time interval of whole days only (Spark's INTERVAL DAY: `INTERVAL '2' DAY`,
   * `INTERVAL 1 WEEK`), which a DATE adds as days and stays a DATE.
   */
  readonly days?: true;
  /**
   * INTERVAL: its first and last fields, Spark's DayTimeIntervalType(start, end) or
   * YearMonthIntervalType(start, end) (`INTERVAL '10' MINUTE` is MINUTE to MINUTE), which its text
   * shows (interval-text.ts); absent: DAY TO SECOND (YEAR TO MONTH, DAY with `days`).
   */
  readonly units?: readonly [IntervalUnit, IntervalUnit];
}

/** A field of an INTERVAL type. */
export type IntervalUnit = 'YEAR' | 'MONTH' | 'DAY' | 'HOUR' | 'MINUTE' | 'SECOND';

/** A field of a STRUCT type. */
export interface SqlField extends SqlType {
  readonly name: string;
}

export const STRING: SqlType = { type: 'STRING' };
export const BOOLEAN: SqlType = { type: 'BOOLEAN' };
export const INT: SqlType = { type: 'INT' };
export const LONG: SqlType = { type: 'LONG' };
export const DOUBLE: SqlType = { type: 'DOUBLE' };
export const DATE: SqlType = { type: 'DATE' };
export const TIMESTAMP: SqlType = { type: 'TIMESTAMP' };
/** A window column's type: Spark's STRUCT<start: TIMESTAMP, end: TIMESTAMP> (ColumnInfo marks it TIMESTAMP with `window`). */
export const WINDOW_TYPE: SqlType = {
  type: 'STRUCT',
  fields: [
    { ...TIMESTAMP, name: 'start' },
    { ...TIMESTAMP, name: 'end' },
  ],
};
export const NULL_TYPE: SqlType = { type: 'NULL' };
export const MAX_PRECISION = MAX_DECIMAL_PRECISION;

/** A DECIMAL(p,s) type. */
export function decimal(precision: number, scale: number): SqlType {
  return { type: 'DECIMAL', precision, scale };
}

/** The type as Spark's messages name it: INT, BIGINT, DECIMAL(10,2), ARRAY<STRING>, VOID, INTERVAL. */
export function typeName(t: SqlType): string {
  if (t.type === 'NULL') return 'VOID';
  if (t.type === 'INTERVAL') return intervalTypeName(t);
  return ddlOf(toDataType(t));
}

/** The column type of an expression's type (a NULL literal's column is a STRING column of nulls). */
export function toDataType(t: SqlType): DataType {
  if (t.type === 'NULL' || t.type === 'INTERVAL') return { type: 'STRING' };
  if (t.type === 'ARRAY') return { type: 'ARRAY', element: toDataType(t.element!) };
  if (t.type === 'MAP') {
    // a STRING key is left implicit, as a VOID key (map()) becomes one
    const key = t.key === undefined ? undefined : toDataType(t.key);
    return key === undefined || key.type === 'STRING' ? { type: 'MAP', value: toDataType(t.value!) } : { type: 'MAP', key, value: toDataType(t.value!) };
  }
  if (t.type === 'STRUCT') return { type: 'STRUCT', fields: t.fields!.map((f) => ({ ...toDataType(f), name: f.name })) };
  return t as DataType;
}

export function isIntegral(t: SqlType): boolean {
  return t.type === 'INT' || t.type === 'LONG';
}

export function isNumeric(t: SqlType): boolean {
  return t.type === 'INT' || t.type === 'LONG' || t.type === 'DOUBLE' || t.type === 'DECIMAL';
}

/** Two types are the same type (DECIMAL with its precision and scale, nested types field by field). */
export function sameType(a: SqlType, b: SqlType): boolean {
  if (a.type !== b.type || a.bits !== b.bits || a.binary32 !== b.binary32 || a.yearMonth !== b.yearMonth) return false;
  if (a.type === 'DECIMAL') return a.precision === b.precision && a.scale === b.scale;
  if (a.type === 'ARRAY') return sameType(a.element!, b.element!);
  if (a.type === 'MAP') return sameType(a.key ?? STRING, b.key ?? STRING) && sameType(a.value!, b.value!);
  if (a.type === 'STRUCT') {
    const fa = a.fields!;
    const fb = b.fields!;
    return fa.length === fb.length && fa.every((f, i) => f.name.toLowerCase() === fb[i].name.toLowerCase() && sameType(f, fb[i]));
  }
  return true;
}

/** Rank of a numeric type in Spark's widening order: TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT < DOUBLE. */
function rank(t: SqlType): number {
  switch (t.type) {
    case 'INT':
      return t.bits === 8 ? 0 : t.bits === 16 ? 1 : 2;
    case 'LONG':
      return 3;
    case 'DECIMAL':
      return 4;
    case 'DOUBLE':
      return t.binary32 ? 5 : 6;
    default:
      return -1;
  }
}

/** The DECIMAL an integral type widens to (TINYINT 3, SMALLINT 5, INT 10, BIGINT 20 digits); a DECIMAL stays. */
export function asDecimal(t: SqlType): SqlType {
  if (t.type === 'DECIMAL') return t;
  const d = integerAsDecimal(t.type === 'LONG' ? 64 : (t.bits ?? 32));
  return decimal(d.precision, d.scale);
}

/** Spark's `DecimalType.bounded`. */
function bounded(precision: number, scale: number): SqlType {
  return decimal(Math.min(precision, MAX_PRECISION), Math.min(scale, MAX_PRECISION));
}

/**
 * The common type of two numeric types (Spark's findWiderTypeForTwo): the wider of two integral
 * or floating types (an integral beside FLOAT is DOUBLE under ANSI); an integral and a DECIMAL meet in a DECIMAL that holds both
 * (DECIMAL(max integer digits + max scale, max scale), bounded at 38); FLOAT or DOUBLE beside a DECIMAL is DOUBLE.
 */
export function widerNumeric(a: SqlType, b: SqlType): SqlType {
  if (a.type === 'DECIMAL' || b.type === 'DECIMAL') {
    if (a.type === 'DOUBLE' || b.type === 'DOUBLE') return DOUBLE;
    const da = asDecimal(a);
    const db = asDecimal(b);
    const scale = Math.max(da.scale!, db.scale!);
    const range = Math.max(da.precision! - da.scale!, db.precision! - db.scale!);
    return bounded(range + scale, scale);
  }
  // ANSI: an integral type beside FLOAT meets it in DOUBLE (AnsiTypeCoercion.findTightestCommonType)
  if ((a.binary32 && isIntegral(b)) || (b.binary32 && isIntegral(a))) return DOUBLE;
  return rank(a) >= rank(b) ? a : b;
}

/**
 * Spark's `DecimalType.adjustPrecisionScale` (spark.sql.decimalOperations.allowPrecisionLoss on,
 * its default): a result needing more than 38 digits keeps its integer digits and gives up
 * fraction digits, down to a scale of min(scale, 6).
 */
function adjustPrecisionScale(precision: number, scale: number): SqlType {
  if (precision <= MAX_PRECISION) return decimal(precision, scale);
  const intDigits = precision - scale;
  const minScale = Math.min(scale, 6);
  return decimal(MAX_PRECISION, Math.max(MAX_PRECISION - intDigits, minScale));
}

/** The result type of DECIMAL(p1,s1) op DECIMAL(p2,s2) for + - * / % (Spark's DecimalPrecision). */
export function decimalResult(op: '+' | '-' | '*' | '/' | '%', a: SqlType, b: SqlType): SqlType {
  const p1 = a.precision!;
  const s1 = a.scale!;
  const p2 = b.precision!;
  const s2 = b.scale!;
  switch (op) {
    case '+':
    case '-': {
      const scale = Math.max(s1, s2);
      return adjustPrecisionScale(Math.max(p1 - s1, p2 - s2) + scale + 1, scale);
    }
    case '*':
      return adjustPrecisionScale(p1 + p2 + 1, s1 + s2);
    case '/': {
      const scale = Math.max(6, s1 + p2 + 1);
      return adjustPrecisionScale(p1 - s1 + s2 + scale, scale);
    }
    case '%': {
      const scale = Math.max(s1, s2);
      return adjustPrecisionScale(Math.min(p1 - s1, p2 - s2) + scale, scale);
    }
  }
}

/**
 * The type a STRING meets another type in under ANSI (Spark 4's AnsiTypeCoercion
 * findWiderTypeForString): BIGINT beside an integral type, DOUBLE beside another numeric type,
 * the other type beside DATE, TIMESTAMP or BOOLEAN; null when there is none.
 */
export function stringPromotion(other: SqlType): SqlType | null {
  if (isIntegral(other)) return LONG;
  if (isNumeric(other)) return DOUBLE;
  if (other.type === 'DATE' || other.type === 'TIMESTAMP' || other.type === 'BOOLEAN') return other;
  return null;
}

/**
 * The common type of several values (CASE branches, coalesce, IN lists, array elements...), or
 * null when Spark finds none: NULL gives way to anything, numbers widen, DATE and TIMESTAMP meet in
 * TIMESTAMP, a STRING beside a number, a DATE or a TIMESTAMP takes the other's type (ANSI).
 */
export function commonType(types: readonly SqlType[], promoteStrings = true): SqlType | null {
  let acc: SqlType = NULL_TYPE;
  for (const t of types) {
    const next = commonTwo(acc, t, promoteStrings);
    if (next === null) return null;
    acc = next;
  }
  return acc;
}

/** `promoteStrings` false: Spark's findWiderTypeWithoutStringPromotion (greatest, least), where a STRING meets only a STRING. */
function commonTwo(a: SqlType, b: SqlType, promoteStrings: boolean): SqlType | null {
  if (a.type === 'NULL') return b;
  if (b.type === 'NULL') return a;
  if (a.type === 'INTERVAL' && b.type === 'INTERVAL' && a.yearMonth === b.yearMonth) return widerInterval(a, b);
  if (sameType(a, b)) return a;
  if (isNumeric(a) && isNumeric(b)) return widerNumeric(a, b);
  if ((a.type === 'DATE' && b.type === 'TIMESTAMP') || (a.type === 'TIMESTAMP' && b.type === 'DATE')) return TIMESTAMP;
  if (a.type === 'STRING' && b.type !== 'STRING') return promoteStrings ? stringPromotion(b) : null;
  if (b.type === 'STRING' && a.type !== 'STRING') return promoteStrings ? stringPromotion(a) : null;
  if (a.type === 'ARRAY' && b.type === 'ARRAY') {
    const e = commonTwo(a.element!, b.element!, promoteStrings);
    return e === null ? null : { type: 'ARRAY', element: e };
  }
  if (a.type === 'MAP' && b.type === 'MAP') {
    const v = commonTwo(a.value!, b.value!, promoteStrings);
    const k = commonTwo(a.key ?? STRING, b.key ?? STRING, promoteStrings);
    return v === null || k === null ? null : k.type === 'STRING' ? { type: 'MAP', value: v } : { type: 'MAP', key: k, value: v };
  }
  if (a.type === 'STRUCT' && b.type === 'STRUCT' && a.fields!.length === b.fields!.length) {
    const fields: SqlField[] = [];
    for (let i = 0; i < a.fields!.length; i++) {
      const fa = a.fields![i];
      const fb = b.fields![i];
      if (fa.name.toLowerCase() !== fb.name.toLowerCase()) return null;
      const t = commonTwo(fa, fb, promoteStrings);
      if (t === null) return null;
      fields.push({ ...t, name: fa.name });
    }
    return { type: 'STRUCT', fields };
  }
  return null;
}
