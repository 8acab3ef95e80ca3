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
import type { SourceSpec } from '../plan/types';
import { StreamFrame } from './frame';
import type { AnyColumns, FrameColumns, SchemaColumns } from './types';

export class DataStreamReader<C extends FrameColumns = AnyColumns> {
  private fmt: 'json' = 'json';
  private ddl: string | undefined;
  private readonly opts: Record<string, string | number | boolean> = {};

  format(f: string): this {
    if (f !== 'json') {
      throw new InvalidOptionError(`source format ${JSON.stringify(f)} is not supported: sluice reads JSON lines (optionally gzip); use format('json')`);
    }
    this.fmt = 'json';
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
    return { kind, format: this.fmt, path, schema: parseSchema(this.ddl), options: { ...this.opts } };
  }
  /** An S3 landing prefix of JSON-lines objects (`s3://bucket/prefix/`), or leave it to the runtime. */
  json(path?: string): StreamFrame<C> {
    return this.load(path);
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
