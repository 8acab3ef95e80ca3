/** Static tables for a stream-static join's right side: staticTable.s3, .dynamodb and .rows. */
import { InvalidOptionError } from '../errors';
import { parseSchema, type Schema } from '../schema';
import { coerceRecord } from '../json-record';
import type { ROW_TYPE, StaticTableSpec } from '../plan/types';
import type { AnyColumns, FrameColumns, SchemaColumns } from './types';

/** A static table with its columns `C` (types only). Build one with `staticTable`. */
export interface StaticTable<C extends FrameColumns = AnyColumns> {
  readonly [ROW_TYPE]?: C;
  readonly spec: StaticTableSpec;
}

function staticSchema(schema: string | Schema, what: string): Schema {
  if (typeof schema === 'string') return parseSchema(schema);
  if (!schema || !Array.isArray(schema.columns)) throw new InvalidOptionError(`${what}: schema must be Spark DDL, e.g. 'id STRING, name STRING'`);
  return schema;
}

/** Static tables for `frame.join(table, on, type)`. */
export const staticTable = {
  /**
   * Every object under `uri` (s3://bucket/prefix), read once per run: JSON lines, or CSV with a
   * header line; each row typed by `schema` (a bad row fails the run, naming object and line).
   */
  s3<D extends string>(uri: string, opts: { format: 'json' | 'csv'; schema: D }): StaticTable<SchemaColumns<D>> {
    if (typeof uri !== 'string' || !/^s3:\/\/[^/]+/.test(uri)) {
      throw new InvalidOptionError(`staticTable.s3(${JSON.stringify(uri)}): the location must be an S3 URI, e.g. s3://my-bucket/reference/users/`);
    }
    if (opts?.format !== 'json' && opts?.format !== 'csv') {
      throw new InvalidOptionError(`staticTable.s3 format ${JSON.stringify(opts?.format)} is not 'json' (JSON lines) or 'csv' (with a header line)`);
    }
    return { spec: { kind: 's3', uri, format: opts.format, schema: staticSchema(opts.schema, 'staticTable.s3') } };
  },
  /**
   * A DynamoDB table looked up by its key (`key`: the partition key attribute, or [partition,
   * sort]) with BatchGetItem, each key once per run; the item's attributes are the schema's columns.
   */
  dynamodb<D extends string>(tableName: string, opts: { key: string | readonly string[]; schema: D }): StaticTable<SchemaColumns<D>> {
    const schema = staticSchema(opts?.schema, `staticTable.dynamodb(${JSON.stringify(tableName)})`);
    const key = typeof opts?.key === 'string' ? [opts.key] : [...(opts?.key ?? [])];
    if (typeof tableName !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
      throw new InvalidOptionError(`staticTable.dynamodb(${JSON.stringify(tableName)}): a table name is 3-255 letters, digits, '_', '-' or '.'`);
    }
    if (key.length < 1 || key.length > 2) {
      throw new InvalidOptionError(
        `staticTable.dynamodb(${JSON.stringify(tableName)}) key ${JSON.stringify(opts?.key)}: give the partition key attribute, or [partition, sort]`,
      );
    }
    for (const k of key) {
      const c = schema.columns.find((x) => x.name === k);
      if (!c || (c.type !== 'STRING' && c.type !== 'INT' && c.type !== 'LONG')) {
        throw new InvalidOptionError(
          `staticTable.dynamodb(${JSON.stringify(tableName)}): key attribute ${JSON.stringify(k)} must be a STRING, INT or LONG column of the schema (${schema.columns.map((x) => `${x.name} ${x.type}`).join(', ')})`,
        );
      }
    }
    return { spec: { kind: 'dynamodb', tableName, key, schema } };
  },
  /** Rows given here (tests, samples), typed by `schema` as a source types JSON records. */
  rows<D extends string>(schema: D, rows: ReadonlyArray<Record<string, unknown>>): StaticTable<SchemaColumns<D>> {
    const parsed = staticSchema(schema, 'staticTable.rows');
    const typed = rows.map((r, i) => {
      const res = coerceRecord(parsed, { ...r });
      if (!res.ok) throw new InvalidOptionError(`staticTable.rows: row ${i + 1} ${JSON.stringify(r)}: ${res.reason}`);
      return res.row;
    });
    return { spec: { kind: 'rows', schema: parsed, rows: typed } };
  },
};
