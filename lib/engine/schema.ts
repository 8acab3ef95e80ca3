/**
 * Declared schemas in Spark DDL ("user STRING, event_time TIMESTAMP, amount DOUBLE") and the
 * conversion of a JSON record into a typed row. Timestamps become epoch milliseconds.
 */
import { InvalidOptionError } from './errors';
import type { Row } from './ports';

export type ColumnType = 'STRING' | 'INT' | 'LONG' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
}

export interface Schema {
  readonly columns: readonly Column[];
  readonly ddl: string;
}

const TYPE_ALIASES: Record<string, ColumnType> = {
  STRING: 'STRING', VARCHAR: 'STRING',
  INT: 'INT', INTEGER: 'INT', SMALLINT: 'INT', SHORT: 'INT', TINYINT: 'INT', BYTE: 'INT',
  LONG: 'LONG', BIGINT: 'LONG',
  DOUBLE: 'DOUBLE', FLOAT: 'DOUBLE', REAL: 'DOUBLE',
  BOOLEAN: 'BOOLEAN', BOOL: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMP', TIMESTAMP_LTZ: 'TIMESTAMP',
};

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
        `schema column ${m[1]} has type ${m[2]}, which sluice does not support: use one of STRING, INT, LONG (BIGINT), DOUBLE, BOOLEAN, TIMESTAMP`,
      );
    }
    if (seen.has(m[1])) {
      throw new InvalidOptionError(`schema "${ddl}" declares column ${m[1]} twice: give each column one declaration`);
    }
    seen.add(m[1]);
    columns.push({ name: m[1], type });
  }
  return { columns, ddl };
}

export function columnType(schema: Schema, name: string): ColumnType | undefined {
  return schema.columns.find((c) => c.name === name)?.type;
}

const SPACE_TS = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses a timestamp as Spark does with spark.sql.session.timeZone=UTC:
 * "YYYY-MM-DD HH:MM:SS[.fff]" (UTC), ISO 8601 with T, Z or an offset, or a date alone.
 * Returns epoch ms, or null when the text is not a timestamp.
 */
export function parseTimestamp(text: string): number | null {
  const m = SPACE_TS.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  let ms = Date.UTC(Number(y), month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (check.getUTCDate() !== day) return null; // e.g. 2026-02-30
  if (frac) ms += Number((frac + '000').slice(0, 3)) + Number(`0.${frac.slice(3) || '0'}`);
  if (zone && zone.toUpperCase() !== 'Z' && zone.toUpperCase() !== 'UTC') {
    const zm = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offset = (Number(zm[2]) * 60 + Number(zm[3])) * 60_000;
    ms += zm[1] === '+' ? -offset : offset;
  }
  return ms;
}

/** ISO 8601 UTC with milliseconds, as output rows carry timestamps. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

export type CoerceResult = { ok: true; row: Row } | { ok: false; reason: string };

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Turns a parsed JSON record into a typed row. A field that is missing or of the wrong type is a
 * bad record: the reason names the column, the value and the rule. Explicit nulls are nulls.
 */
export function coerceRecord(schema: Schema, record: unknown): CoerceResult {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return { ok: false, reason: `record is a JSON ${typeName(record)}, not an object: each line must be one JSON object with the columns ${schema.columns.map((c) => c.name).join(', ')}` };
  }
  const obj = record as Record<string, unknown>;
  const row: Row = {};
  for (const col of schema.columns) {
    if (!(col.name in obj)) {
      return { ok: false, reason: `column ${col.name} (${col.type}) is missing: add it to the record, or send null explicitly when the value is unknown` };
    }
    const v = obj[col.name];
    if (v === null) {
      row[col.name] = null;
      continue;
    }
    const converted = coerceValue(col, v);
    if (typeof converted === 'object' && converted !== null && 'error' in converted) return { ok: false, reason: (converted as { error: string }).error };
    row[col.name] = converted;
  }
  return { ok: true, row };
}

function coerceValue(col: Column, v: unknown): unknown {
  const bad = (rule: string) => ({ error: `column ${col.name} (${col.type}) has ${typeName(v)} ${JSON.stringify(v)}: ${rule}` });
  switch (col.type) {
    case 'STRING':
      if (typeof v === 'string') return v;
      // Spark's JSON reader keeps the JSON text of a non-string token for a STRING column.
      return JSON.stringify(v);
    case 'INT':
    case 'LONG': {
      if (typeof v !== 'number' || !Number.isInteger(v)) return bad('expected a JSON integer; fix the producer or declare the column DOUBLE/STRING');
      if (col.type === 'INT' && (v < -2147483648 || v > 2147483647)) return bad('out of the INT range; declare the column LONG');
      return v;
    }
    case 'DOUBLE':
      if (typeof v === 'number') return v;
      if (v === 'NaN') return NaN;
      if (v === 'Infinity' || v === '+Infinity') return Infinity;
      if (v === '-Infinity') return -Infinity;
      return bad('expected a JSON number; fix the producer or declare the column STRING');
    case 'BOOLEAN':
      if (typeof v === 'boolean') return v;
      return bad('expected true or false');
    case 'TIMESTAMP': {
      if (typeof v === 'number' && Number.isFinite(v)) return v * 1000; // seconds since the epoch, as Spark reads numbers
      if (typeof v === 'string') {
        const ms = parseTimestamp(v);
        if (ms !== null) return ms;
      }
      return bad('expected "YYYY-MM-DD HH:MM:SS[.fff]" (UTC), ISO 8601 with Z or an offset, or epoch seconds');
    }
  }
}

/** Parses one JSON line into a row, or gives the reason it is malformed. */
export function parseJsonLine(schema: Schema, line: string): CoerceResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    return { ok: false, reason: `malformed JSON (${(e as Error).message}): each line must be one complete JSON object` };
  }
  return coerceRecord(schema, parsed);
}

/** Converts a typed value for output: timestamps to ISO strings, everything else as is. */
export function outputValue(type: ColumnType | undefined, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'TIMESTAMP' && typeof v === 'number') return formatTimestamp(v);
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
}
