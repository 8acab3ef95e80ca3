/**
 * The S3 Parquet sink: each batch's rows as Parquet objects (SNAPPY) for Athena, Glue and Spark,
 * with the file sink's keys, sink log and exactly-once rules (logged-sink.ts):
 *
 *     <prefix>/<column>=<value>/part-<batchId 10>-<n 5>.parquet    the rows, sorted within a partition
 *     <prefix>/part-<batchId 10>-<n 5>.parquet                       (without partitionBy)
 *     <prefix>/_sink_log/<batchId 10>                               {"objects": [...]}: written last
 *
 * Types as Spark writes them (with spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS):
 *
 *     STRING     BYTE_ARRAY, UTF8 / STRING            TIMESTAMP  INT64, TIMESTAMP(MICROS, isAdjustedToUTC)
 *     INT        INT32                                WINDOW     group window { start, end } of TIMESTAMP
 *     LONG       INT64                                BOOLEAN    BOOLEAN
 *     DOUBLE     DOUBLE (NaN, ±Infinity kept)         batch_id   INT64: the batch that wrote the row
 *
 * Every column is OPTIONAL (null in every type). Microseconds, not Spark's default INT96: a
 * TIMESTAMP is epoch microseconds in the engine (issue 29), kept exactly, and every reader (Athena
 * engine 2 and 3, Trino, DuckDB, Spark) reads INT64 micros with its logical type. `batch_id` is appended so a
 * reader of update mode can keep the latest row per key (the README's Sinks section).
 *
 * A replay writes the very bytes the first attempt wrote (the writer is deterministic, and its
 * `created_by` names no version), so it passes on a 412 by comparing bytes. A replay after an
 * upgrade of hyparquet-writer that changed its output fails loudly instead: deploy upgrades
 * between runs that committed, or replay the batch with the old version.
 */
import { ParquetWriter, ByteWriter } from 'hyparquet-writer';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { Json, OutputColumnType, OutputRow, SinkContext } from '../../engine/ports';
import { parseTimestamp } from '../../engine/timestamps';
import { S3LoggedSink, type ObjectRows, type S3LoggedSinkOptions } from './logged-sink';

export type S3ParquetSinkOptions = S3LoggedSinkOptions;

/** The column the sink appends: the batch ID that wrote the row. */
export const BATCH_ID_COLUMN = 'batch_id';

type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

const TIMESTAMP_MICROS = {
  type: 'INT64',
  converted_type: 'TIMESTAMP_MICROS',
  logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
} as const;

export class S3ParquetSink extends S3LoggedSink {
  protected readonly extension = '.parquet';
  protected readonly contentType = 'application/vnd.apache.parquet';

  constructor(opts: S3ParquetSinkOptions) {
    super(opts, 'S3ParquetSink');
  }

  protected checkContext(ctx: SinkContext): void {
    columnTypesOf(ctx);
    if (ctx.columns.includes(BATCH_ID_COLUMN)) {
      throw new InvalidOptionError(
        `S3ParquetSink appends a column ${BATCH_ID_COLUMN}, and query ${ctx.queryName} already has one: rename yours (withColumn/select) before the sink`,
      );
    }
  }

  /** A row with a value of another type than its column's: no attempt could encode it (the dead letter says which). */
  protected rowRefusal(row: OutputRow, ctx: SinkContext): string | null {
    const types = columnTypesOf(ctx);
    for (const name of ctx.columns) {
      try {
        parquetValue(row[name], types[name], name);
      } catch (e) {
        if (e instanceof SluiceError) return e.message;
        throw e;
      }
    }
    return null;
  }

  protected encode(part: ObjectRows, batchId: number, ctx: SinkContext): Uint8Array {
    const types = columnTypesOf(ctx);
    const schema: SchemaElement[] = [{ name: 'schema', num_children: ctx.columns.length + 1 }];
    const columnData: Array<{ name: string; data: unknown[] }> = [];
    for (const name of ctx.columns) {
      const type = types[name];
      schema.push(...schemaOf(name, type));
      columnData.push({ name, data: part.rows.map((row) => parquetValue(row[name], type, name)) });
    }
    schema.push({ name: BATCH_ID_COLUMN, type: 'INT64', repetition_type: 'OPTIONAL' });
    columnData.push({ name: BATCH_ID_COLUMN, data: part.rows.map(() => BigInt(batchId)) });
    const writer = new ByteWriter();
    const pq = new ParquetWriter({ writer, schema, codec: 'SNAPPY', createdBy: 'sluice (hyparquet-writer)' });
    // One row group per object (objects hold at most maxRowsPerObject rows): Athena splits by row group.
    pq.write({ columnData: columnData as never, rowGroupSize: Math.max(1, part.rows.length) });
    pq.finish();
    return writer.getBytes();
  }
}

/** The output column types the executor passes (SinkContext.columnTypes), checked for every column. */
function columnTypesOf(ctx: SinkContext): Readonly<Record<string, OutputColumnType>> {
  const types = ctx.columnTypes;
  const missing = types ? ctx.columns.filter((c) => types[c] === undefined) : ctx.columns;
  if (!types || missing.length > 0) {
    throw new InvalidOptionError(
      `S3ParquetSink needs the type of every output column of query ${ctx.queryName} (SinkContext.columnTypes), and ${missing.join(', ')} has none: run it through MicroBatchExecutor, which passes them, or pass columnTypes with the context`,
    );
  }
  return types;
}

function schemaOf(name: string, type: OutputColumnType): SchemaElement[] {
  const optional = { repetition_type: 'OPTIONAL' } as const;
  switch (type) {
    case 'STRING':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, ...optional }];
    case 'INT':
      return [{ name, type: 'INT32', ...optional }];
    case 'LONG':
      return [{ name, type: 'INT64', ...optional }];
    case 'DOUBLE':
      return [{ name, type: 'DOUBLE', ...optional }];
    case 'BOOLEAN':
      return [{ name, type: 'BOOLEAN', ...optional }];
    case 'TIMESTAMP':
      return [{ name, ...TIMESTAMP_MICROS, ...optional }];
    case 'WINDOW':
      return [
        { name, num_children: 2, ...optional },
        { name: 'start', ...TIMESTAMP_MICROS, ...optional },
        { name: 'end', ...TIMESTAMP_MICROS, ...optional },
      ];
  }
}

/** An output row's value (JSON-ready: ISO timestamps, "NaN" and the infinities as strings) as the writer takes it. */
function parquetValue(v: Json | undefined, type: OutputColumnType, column: string): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'STRING':
      if (typeof v === 'string') return v;
      break;
    case 'BOOLEAN':
      if (typeof v === 'boolean') return v;
      break;
    case 'INT':
      if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31) return v;
      break;
    case 'LONG':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
      // beyond 2^53 − 1 a BIGINT is output as its digits (FORMAT-3): INT64 holds it exactly
      if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) {
        const big = BigInt(v);
        if (big >= -(2n ** 63n) && big < 2n ** 63n) return big;
      }
      break;
    case 'DOUBLE':
      if (typeof v === 'number') return v;
      if (v === 'NaN') return NaN;
      if (v === 'Infinity') return Infinity;
      if (v === '-Infinity') return -Infinity;
      break;
    case 'TIMESTAMP': {
      const us = timestampMicros(v);
      if (us !== null) return us;
      break;
    }
    case 'WINDOW':
      if (typeof v === 'object' && !Array.isArray(v)) {
        const start = v.start === null || v.start === undefined ? null : timestampMicros(v.start);
        const end = v.end === null || v.end === undefined ? null : timestampMicros(v.end);
        if ((start !== null || v.start === null) && (end !== null || v.end === null)) return { start, end };
      }
      break;
  }
  throw new SluiceError(
    `S3ParquetSink: column ${column} (${type}) holds ${JSON.stringify(v).slice(0, 80)}, which is not a ${type}: make the withColumn function return the type it declares, or declare the type its values have`,
  );
}

/** Epoch µs as the INT64 the writer stores, from an output row's ISO text (or an integer number of µs), exactly. */
function timestampMicros(v: Json): bigint | null {
  const us = typeof v === 'number' ? (Number.isSafeInteger(v) ? v : null) : typeof v === 'string' ? parseTimestamp(v) : null;
  return us === null ? null : BigInt(us);
}
