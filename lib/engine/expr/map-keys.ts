/**
 * The keys of a MAP whose key type is not STRING (`map(1, 'a')` is MAP<INT, STRING>, as in Spark).
 * A map value is a plain object, so each key is held as its text: the name Spark's JSON writer
 * gives it (Jackson's field name is the key's `toString`: `1`, `1.0` for a DOUBLE, the days since
 * 1970-01-01 for a DATE, the microseconds for a TIMESTAMP), which to_json and the output rows
 * write as they are. One key, one text, so equal keys meet: a DOUBLE's -0.0 and NaN are normalized
 * first, as Spark's map builder does.
 */
import { dateOfEpochDay, epochDayOf } from '../dates';
import { exactLong } from '../schema';
import type { CallCtx } from './analyze';
import { SparkRowError } from './errors';
import { bigMicros, type Micros, microsValue } from './time';
import { STRING, type SqlType, typeName } from './types';
import { javaDoubleText } from './values';

/** The type of a map's keys (STRING unless it says). */
export function keyTypeOf(map: SqlType): SqlType {
  return map.key ?? STRING;
}

/** The MAP type of these keys and values (a STRING key is left implicit, as schemas write it). */
export function mapType(key: SqlType, value: SqlType): SqlType {
  return key.type === 'STRING' ? { type: 'MAP', value } : { type: 'MAP', key, value };
}

/** Refuses a key type Spark refuses (a MAP: INVALID_MAP_KEY_TYPE) or sluice cannot hold as text (an ARRAY or a STRUCT). */
export function checkKeyType(c: CallCtx, key: SqlType): void {
  if (key.type === 'MAP') {
    throw c.az.mismatch('INVALID_MAP_KEY_TYPE', c.sql, `The input key of ${c.name} can't be "${typeName(key)}": a map cannot be a map key`, c.pos);
  }
  if (key.type === 'ARRAY' || key.type === 'STRUCT' || key.type === 'INTERVAL') {
    throw c.az.fail(
      'UNSUPPORTED_FEATURE',
      `${c.sql}: sluice holds map keys of atomic types only (STRING, numbers, BOOLEAN, DATE, TIMESTAMP), not "${typeName(key)}"; use a STRING key such as to_json(...) of the value`,
      c.pos,
    );
  }
}

/** A key's text for a map of key type `t` (null keys are refused by the caller). */
export function keyText(t: SqlType): (v: unknown) => string {
  switch (t.type) {
    case 'STRING':
    case 'DECIMAL':
      return (v) => v as string;
    case 'DOUBLE':
      // Spark's map builder normalizes -0.0 to 0.0 and every NaN to one NaN
      return (v) => javaDoubleText((v as number) === 0 ? 0 : (v as number), t.binary32);
    case 'DATE':
      return (v) => String(epochDayOf(v as string));
    case 'TIMESTAMP':
      return (v) => String(bigMicros(v as Micros));
    default:
      return (v) => String(v);
  }
}

/** A key's value of key type `t` from its text (keyText's inverse). */
export function keyValue(t: SqlType): (text: string) => unknown {
  switch (t.type) {
    case 'STRING':
    case 'DECIMAL':
      return (s) => s;
    case 'INT':
      return (s) => Number(s);
    case 'LONG':
      return (s) => exactLong(s);
    case 'DOUBLE':
      return t.binary32 ? (s) => Math.fround(Number(s)) : (s) => Number(s);
    case 'BOOLEAN':
      return (s) => s === 'true';
    case 'DATE':
      return (s) => dateOfEpochDay(Number(s));
    case 'TIMESTAMP':
      return (s) => microsValue(BigInt(s));
    default:
      return (s) => s;
  }
}

/** Spark's NULL_MAP_KEY. */
export function nullMapKey(): SparkRowError {
  return new SparkRowError('NULL_MAP_KEY', 'Cannot use null as map key: filter out the rows whose key is null, or coalesce it');
}

/** Spark's DUPLICATED_MAP_KEY (spark.sql.mapKeyDedupPolicy's default, EXCEPTION). */
export function duplicatedMapKey(key: unknown): SparkRowError {
  return new SparkRowError(
    'DUPLICATED_MAP_KEY',
    `Duplicate map key ${String(key)} was found: keys must be distinct (spark.sql.mapKeyDedupPolicy is EXCEPTION)`,
  );
}
