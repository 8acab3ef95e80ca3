/**
 * The query API: Spark's vocabulary in TypeScript.
 *
 *   readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
 *     .option('maxFilesPerTrigger', 1).load('s3://bucket/landing/')
 *     .withWatermark('event_time', '10 minutes')
 *     .groupBy(window('event_time', '10 minutes'))
 *     .agg(sum('amount').as('total'), count().as('events'))
 *     .writeStream.outputMode('append').trigger({ availableNow: true }).queryName('totals')
 *
 * Building produces a `QueryPlan` (plain data plus the user's row functions). Spark's analysis and
 * unsupported-operation rules are checked when the query is built (`.plan()` / `toPlan()`), with
 * messages that name the value, the rule and the fix.
 */
import { InvalidOptionError, InvalidQueryError } from '../errors';
import { parseSchema } from '../schema';
import { checkFileFormat } from '../formats';
import type { SourceSpec } from '../plan/types';
import { StreamFrame } from './frame';
import type { AnyColumns, FrameColumns, SchemaColumns } from './types';

export class DataStreamReader<C extends FrameColumns = AnyColumns> {
  private fmt = 'json';
  private ddl: string | undefined;
  private readonly opts: Record<string, string | number | boolean> = {};

  /** json (JSON lines, the default), csv, text or parquet; each also gzip-compressed (`.gz` keys). */
  format(f: string): this {
    if (typeof f !== 'string' || !['json', 'csv', 'text', 'parquet'].includes(f.toLowerCase())) {
      throw new InvalidOptionError(
        `source format ${JSON.stringify(f)} is not supported: sluice reads format('json'), 'csv', 'text' or 'parquet' (each optionally gzip)`,
      );
    }
    this.fmt = f.toLowerCase();
    return this;
  }
  /** Spark DDL. A literal string also gives the frame's column types (SchemaColumns). */
  schema<D extends string>(ddl: D): DataStreamReader<SchemaColumns<D>> {
    this.ddl = ddl;
    return this as unknown as DataStreamReader<SchemaColumns<D>>;
  }
  option(key: string, value: string | number | boolean): this {
    this.opts[key] = value;
    return this;
  }
  options(o: Record<string, string | number | boolean>): this {
    Object.assign(this.opts, o);
    return this;
  }
  private spec(kind: 'files' | 'kinesis', path?: string): SourceSpec {
    if (this.ddl === undefined) {
      throw new InvalidQueryError(
        'the source has no schema: streaming sources need a declared schema, e.g. .schema("user STRING, event_time TIMESTAMP, amount DOUBLE")',
      );
    }
    const schema = parseSchema(this.ddl);
    if (kind === 'kinesis' && this.fmt !== 'json') {
      throw new InvalidOptionError(`a Kinesis stream's records are read as JSON, not format('${this.fmt}'): leave format out, or use format('json')`);
    }
    // the format's options and the schema it can read are checked now, not at the first file
    const format = checkFileFormat(this.fmt, schema, this.opts);
    return { kind, format, path, schema, options: { ...this.opts } };
  }
  /** An S3 landing prefix of JSON-lines objects (`s3://bucket/prefix/`), or leave it to the runtime. */
  json(path?: string): StreamFrame<C> {
    return this.format('json').load(path);
  }
  /** An S3 landing prefix of CSV files (Spark's CSV options: header, sep, quote, nullValue, ...). */
  csv(path?: string): StreamFrame<C> {
    return this.format('csv').load(path);
  }
  /** An S3 landing prefix of text files: one row per line, the schema `value STRING`. */
  text(path?: string): StreamFrame<C> {
    return this.format('text').load(path);
  }
  /** An S3 landing prefix of Parquet files, columns matched by name. */
  parquet(path?: string): StreamFrame<C> {
    return this.format('parquet').load(path);
  }
  load(path?: string): StreamFrame<C> {
    return new StreamFrame<C>(this.spec('files', path), [], []);
  }
  /** A Kinesis data stream of JSON records. */
  kinesis(streamName?: string): StreamFrame<C> {
    return new StreamFrame<C>(this.spec('kinesis', streamName), [], []);
  }
}

/** Entry point, as `spark.readStream`. */
export const readStream = {
  format: (f: string): DataStreamReader<AnyColumns> => new DataStreamReader().format(f),
  schema: <D extends string>(ddl: D): DataStreamReader<SchemaColumns<D>> => new DataStreamReader().schema(ddl),
};
