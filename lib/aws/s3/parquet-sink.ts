/**
 * The S3 Parquet sink: each batch's rows as Parquet objects (SNAPPY) for Athena, Glue and Spark,
 * with the file sink's keys, sink log and exactly-once rules (logged-sink.ts):
 *
 *     <prefix>/<column>=<value>/part-<batchId 10>-<n 5>.parquet    the rows, sorted within a partition
 *     <prefix>/part-<batchId 10>-<n 5>.parquet                       (without partitionBy)
 *     <prefix>/_sink_log/<batchId 10>                               {"objects": [...]}: written last
 *
 * Types as Spark writes them (with spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS), from
 * each column's full type (SinkContext.columnTypes), at any depth:
 *
 *     STRING     BYTE_ARRAY, UTF8 / STRING            TIMESTAMP  INT64, TIMESTAMP(MICROS, isAdjustedToUTC)
 *     INT        INT32 (TINYINT/SMALLINT: INT_8/16)   WINDOW     group window { start, end } of TIMESTAMP
 *     LONG       INT64                                BOOLEAN    BOOLEAN
 *     DOUBLE     DOUBLE (FLOAT: FLOAT; NaN, ±Inf)     batch_id   INT64: the batch that wrote the row
 *     DECIMAL    DECIMAL(p,s) in INT32 (p <= 9), INT64 (p <= 18), else FIXED_LEN_BYTE_ARRAY (16 bytes
 *                for p = 38): the unscaled value from the canonical text by BigInt, never a double
 *     DATE       INT32, DATE: days since 1970-01-01 (dates.ts epochDayOf)
 *     ARRAY      <name> (LIST) { repeated group list { element } }
 *     MAP        <name> (MAP) { repeated group key_value { required key (UTF8); value } }
 *     STRUCT     group <name> { the fields }
 *
 * Every column, element, map value and field is OPTIONAL (null in every type, at every level).
 * Microseconds, not Spark's default INT96: a TIMESTAMP is epoch microseconds in the engine
 * (epoch µs), kept exactly, and every reader (Athena engine 2 and 3, Trino, DuckDB, Spark) reads
 * INT64 micros with its logical type. `batch_id` is appended so a
 * reader of update mode can keep the latest row per key (the README's Sinks section).
 *
 * A replay writes the very bytes the first attempt wrote (the writer is deterministic, and its
 * `created_by` names no version), so it passes on a 412 by comparing bytes. A replay after an
 * upgrade of hyparquet-writer that changed its output fails loudly instead: deploy upgrades
 * between runs that committed, or replay the batch with the old version.
 */
import { ParquetWriter, ByteWriter } from 'hyparquet-writer';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { epochDayOf, parseDate } from '../../engine/dates';
import { ddlOf } from '../../engine/ddl';
import { decimalOfText, pow10, unscaledOf } from '../../engine/decimal';
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
    this.columnTypesOf(ctx);
    if (ctx.columns.includes(BATCH_ID_COLUMN)) {
      throw new InvalidOptionError(
        `S3ParquetSink appends a column ${BATCH_ID_COLUMN}, and query ${ctx.queryName} already has one: rename yours (withColumn/select) before the sink`,
      );
    }
  }

  /** A row with a value of another type than its column's: no attempt could encode it (the dead letter says which). */
  protected rowRefusal(row: OutputRow, ctx: SinkContext): string | null {
    const types = this.columnTypesOf(ctx);
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
    const types = this.columnTypesOf(ctx);
    return parquetBytesOf(
      ctx.columns.map((name) => ({ name, type: types[name] })),
      part.rows,
      { name: BATCH_ID_COLUMN, value: BigInt(batchId) },
    );
  }
}

/**
 * One Parquet file (SNAPPY, one row group) of `rows` with the columns' types, as the sink writes
 * each object; `appended` is an INT64 column of one value in every row (the sink's batch_id).
 * Also what `sluice init --format parquet` writes its sample files with (bin/init.ts).
 */
export function parquetBytesOf(
  columns: ReadonlyArray<{ readonly name: string; readonly type: OutputColumnType }>,
  rows: ReadonlyArray<OutputRow>,
  appended?: { readonly name: string; readonly value: bigint },
): Uint8Array {
  const schema: SchemaElement[] = [{ name: 'schema', num_children: columns.length + (appended ? 1 : 0) }];
  const columnData: Array<{ name: string; data: unknown[] }> = [];
  for (const { name, type } of columns) {
    schema.push(...schemaOf(name, type));
    columnData.push({ name, data: rows.map((row) => parquetValue(row[name], type, name)) });
  }
  if (appended) {
    schema.push({ name: appended.name, type: 'INT64', repetition_type: 'OPTIONAL' });
    columnData.push({ name: appended.name, data: rows.map(() => appended.value) });
  }
  const writer = new ByteWriter();
  const pq = new ParquetWriter({ writer, schema, codec: 'SNAPPY', createdBy: 'sluice (hyparquet-writer)' });
  // One row group per object (objects hold at most maxRowsPerObject rows): Athena splits by row group.
  pq.write({ columnData: columnData as never, rowGroupSize: Math.max(1, rows.length) });
  pq.finish();
  return writer.getBytes();
}

/**
 * The schema elements of a column or field of `type` (a group's children after it, depth first),
 * as Spark writes them: LIST and MAP in the standard three-level layout, a STRUCT as a plain group.
 */
function schemaOf(name: string, type: OutputColumnType, repetition: 'OPTIONAL' | 'REQUIRED' = 'OPTIONAL'): SchemaElement[] {
  const rep = { repetition_type: repetition } as const;
  if (type === 'WINDOW') {
    return [
      { name, num_children: 2, ...rep },
      { name: 'start', ...TIMESTAMP_MICROS, repetition_type: 'OPTIONAL' },
      { name: 'end', ...TIMESTAMP_MICROS, repetition_type: 'OPTIONAL' },
    ];
  }
  switch (type.type) {
    case 'STRING':
      return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, ...rep }];
    case 'INT':
      // INT_8/INT_16 as the converted type alone: hyparquet-writer 0.17.0 writes the INTEGER
      // logical type's bitWidth as a thrift i32 where the format has an i8, which readers refuse
      if (type.bits !== undefined) return [{ name, type: 'INT32', converted_type: `INT_${type.bits}`, ...rep }];
      return [{ name, type: 'INT32', ...rep }];
    case 'LONG':
      return [{ name, type: 'INT64', ...rep }];
    case 'DOUBLE':
      return [{ name, type: type.binary32 ? 'FLOAT' : 'DOUBLE', ...rep }];
    case 'BOOLEAN':
      return [{ name, type: 'BOOLEAN', ...rep }];
    case 'DECIMAL': {
      const precision = type.precision ?? 10;
      const scale = type.scale ?? 0;
      const decimal = { converted_type: 'DECIMAL', precision, scale, logical_type: { type: 'DECIMAL', precision, scale } } as const;
      if (precision <= 9) return [{ name, type: 'INT32', ...decimal, ...rep }];
      if (precision <= 18) return [{ name, type: 'INT64', ...decimal, ...rep }];
      return [{ name, type: 'FIXED_LEN_BYTE_ARRAY', type_length: decimalBytes(precision), ...decimal, ...rep }];
    }
    case 'DATE':
      return [{ name, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' }, ...rep }];
    case 'TIMESTAMP':
      return [{ name, ...TIMESTAMP_MICROS, ...rep }];
    case 'ARRAY':
      return [
        { name, num_children: 1, converted_type: 'LIST', logical_type: { type: 'LIST' }, ...rep },
        { name: 'list', num_children: 1, repetition_type: 'REPEATED' },
        ...schemaOf('element', type.element!),
      ];
    case 'MAP':
      return [
        { name, num_children: 1, converted_type: 'MAP', logical_type: { type: 'MAP' }, ...rep },
        { name: 'key_value', num_children: 2, repetition_type: 'REPEATED' },
        ...schemaOf('key', { type: 'STRING' }, 'REQUIRED'),
        ...schemaOf('value', type.value!),
      ];
    case 'STRUCT':
      return [{ name, num_children: type.fields!.length, ...rep }, ...type.fields!.flatMap((f) => schemaOf(f.name, f))];
  }
}

/** The bytes of a FIXED_LEN_BYTE_ARRAY DECIMAL of `precision` digits: the fewest whose two's complement holds ±(10^p − 1), as Spark sizes it. */
function decimalBytes(precision: number): number {
  const max = pow10(precision) - 1n;
  let n = 1;
  while (max >= 1n << BigInt(8 * n - 1)) n++;
  return n;
}

/** A type's name in a refusal: its Spark DDL. */
function typeName(type: OutputColumnType): string {
  return type === 'WINDOW' ? 'WINDOW' : ddlOf(type);
}

/**
 * An output row's value (JSON-ready: ISO timestamps, "NaN" and the infinities as strings, a
 * DECIMAL as its canonical text, a BIGINT beyond 2^53 as its digits) as the writer takes it, at
 * any depth: a DECIMAL as its unscaled bigint (never through a double), a DATE as its epoch day,
 * a MAP as its key/value entries. `column` names where the value is, for the refusal.
 */
function parquetValue(v: Json | undefined, type: OutputColumnType, column: string): unknown {
  if (v === null || v === undefined) return null;
  if (type === 'WINDOW') {
    if (typeof v === 'object' && !Array.isArray(v)) {
      const start = v.start === null || v.start === undefined ? null : timestampMicros(v.start);
      const end = v.end === null || v.end === undefined ? null : timestampMicros(v.end);
      if ((start !== null || v.start === null) && (end !== null || v.end === null)) return { start, end };
    }
    throw notOfType(v, type, column);
  }
  switch (type.type) {
    case 'STRING':
      if (typeof v === 'string') return v;
      break;
    case 'BOOLEAN':
      if (typeof v === 'boolean') return v;
      break;
    case 'INT': {
      const bits = type.bits ?? 32;
      if (typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** (bits - 1)) && v < 2 ** (bits - 1)) return v;
      break;
    }
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
    case 'DECIMAL': {
      // the canonical text of a value of this precision and scale, and nothing else
      const precision = type.precision ?? 10;
      const scale = type.scale ?? 0;
      if (typeof v === 'string' && decimalOfText(v, precision, scale) === v) return unscaledOf(v);
      break;
    }
    case 'DATE':
      if (typeof v === 'string' && parseDate(v) !== null) return epochDayOf(v);
      break;
    case 'TIMESTAMP': {
      const us = timestampMicros(v);
      if (us !== null) return us;
      break;
    }
    case 'ARRAY':
      if (Array.isArray(v)) return v.map((e, i) => parquetValue(e, type.element!, `${column}[${i}]`));
      break;
    case 'MAP':
      if (typeof v === 'object' && !Array.isArray(v)) {
        return Object.entries(v).map(([key, value]) => ({ key, value: parquetValue(value, type.value!, `${column}[${JSON.stringify(key)}]`) }));
      }
      break;
    case 'STRUCT':
      if (typeof v === 'object' && !Array.isArray(v)) {
        const out: Record<string, unknown> = {};
        for (const f of type.fields!) out[f.name] = parquetValue(Object.hasOwn(v, f.name) ? v[f.name] : null, f, `${column}.${f.name}`);
        return out;
      }
      break;
  }
  throw notOfType(v, type, column);
}

function notOfType(v: Json, type: OutputColumnType, column: string): SluiceError {
  const name = typeName(type);
  return new SluiceError(
    `S3ParquetSink: column ${column} (${name}) holds ${JSON.stringify(v).slice(0, 80)}, which is not a ${name}: make the withColumn function return the type it declares, or declare the type its values have`,
  );
}

/** Epoch µs as the INT64 the writer stores, from an output row's ISO text (or an integer number of µs), exactly. */
function timestampMicros(v: Json): bigint | null {
  const us = typeof v === 'number' ? (Number.isSafeInteger(v) ? v : null) : typeof v === 'string' ? parseTimestamp(v) : null;
  return us === null ? null : BigInt(us);
}
