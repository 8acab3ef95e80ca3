/**
 * The CSV sink (s3://…?format=csv): the file sink's objects, keys, partition folders and log
 * (logged-sink.ts), each object's rows as CSV records the way Spark's CSV writer writes them
 * (lib/engine/formats/csv-writer.ts: univocity's quoting and escaping; a TIMESTAMP as
 * `2026-10-01T12:00:00.000Z`, a DOUBLE or DECIMAL as Java prints it, NULL as an empty field, the
 * empty string as `""`), `\n` (or `lineSep`) after each, a header of the column names first with `header`.
 * Columns are the query's output columns in order. As Spark's CSV source, it writes no nested type:
 * a query whose output has an ARRAY, MAP, STRUCT or window column is refused before any write.
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { parseDate } from '../../engine/dates';
import { ddlOf } from '../../engine/ddl';
import { decimalOfText } from '../../engine/decimal';
import { csvColumnsRefusal, csvRecordText, csvSinkFormatOf, csvValueText } from '../../engine/formats/csv-writer';
import type { DataType } from '../../engine/schema';
import type { Json, OutputColumnType, OutputRow, SinkContext } from '../../engine/ports';
import { parseTimestamp } from '../../engine/timestamps';
import { S3LoggedSink, type ObjectRows, type S3LoggedSinkOptions } from './logged-sink';

export interface S3CsvSinkOptions extends S3LoggedSinkOptions {
  /** Each object starts with a record of the column names (Spark's `header`). @default false */
  readonly header?: boolean;
  /**
   * Spark's CSV writer options by name: sep, quote, escape, charToEscapeQuoteEscaping, nullValue,
   * emptyValue, comment, quoteAll, escapeQuotes, ignoreLeadingWhiteSpace, ignoreTrailingWhiteSpace,
   * lineSep, timestampFormat, dateFormat. @default Spark's defaults
   */
  readonly options?: Readonly<Record<string, string>>;
}

export class S3CsvSink extends S3LoggedSink {
  protected readonly extension = '.csv';
  protected readonly contentType = 'text/csv';
  private readonly header: boolean;
  private readonly format: ReturnType<typeof csvSinkFormatOf>;

  constructor(opts: S3CsvSinkOptions) {
    super(opts, 'S3CsvSink');
    this.header = opts.header ?? false;
    this.format = csvSinkFormatOf(opts.options);
  }

  protected checkContext(ctx: SinkContext): void {
    const refusal = csvColumnsRefusal(ctx.columns, this.columnTypesOf(ctx), ctx.queryName);
    if (refusal !== null) throw new InvalidOptionError(refusal);
  }

  protected rowRefusal(row: OutputRow, ctx: SinkContext): string | null {
    const types = this.columnTypesOf(ctx);
    for (const name of ctx.columns) {
      try {
        csvValue(row[name], types[name], name, this.format);
      } catch (e) {
        if (e instanceof SluiceError) return e.message;
        throw e;
      }
    }
    return null;
  }

  protected encode(part: ObjectRows, _batchId: number, ctx: SinkContext): string {
    const types = this.columnTypesOf(ctx);
    const { writer } = this.format;
    const lines = part.rows.map((row) =>
      csvRecordText(
        ctx.columns.map((name) => csvValue(row[name], types[name], name, this.format)),
        writer,
      ),
    );
    if (this.header) lines.unshift(csvRecordText(ctx.columns, writer));
    return lines.map((l) => `${l}${writer.lineSep}`).join('');
  }
}

/** An output row's value as Spark's CSV writer's text of it (null: a null field); a value of another type throws. */
function csvValue(v: Json | undefined, type: OutputColumnType, column: string, format: ReturnType<typeof csvSinkFormatOf>): string | null {
  if (v === null || v === undefined) return null;
  const engine = type === 'WINDOW' ? undefined : engineValue(v, type);
  if (engine !== undefined && type !== 'WINDOW') return csvValueText(type, engine, format);
  const name = type === 'WINDOW' ? 'WINDOW' : ddlOf(type);
  throw new SluiceError(
    `S3CsvSink: column ${column} (${name}) holds ${JSON.stringify(v).slice(0, 80)}, which is not a ${name}: make the withColumn function return the type it declares, or declare the type its values have`,
  );
}

/** The engine's value of an output row's value of `type` (undefined: not of that type), for csvValueText. */
function engineValue(v: Json, type: DataType): unknown {
  switch (type.type) {
    case 'STRING':
      return typeof v === 'string' ? v : undefined;
    case 'BOOLEAN':
      return typeof v === 'boolean' ? v : undefined;
    case 'INT':
      return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
    case 'LONG':
      // beyond 2^53 − 1 a BIGINT is output as its digits (FORMAT-3)
      return (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?[0-9]+$/.test(v)) ? v : undefined;
    case 'DOUBLE':
      if (typeof v === 'number') return v;
      return v === 'NaN' ? Number.NaN : v === 'Infinity' ? Number.POSITIVE_INFINITY : v === '-Infinity' ? Number.NEGATIVE_INFINITY : undefined;
    case 'DECIMAL':
      return typeof v === 'string' && decimalOfText(v, type.precision ?? 10, type.scale ?? 0) === v ? v : undefined;
    case 'DATE':
      return typeof v === 'string' && parseDate(v) !== null ? v : undefined;
    case 'TIMESTAMP':
      return (typeof v === 'string' ? parseTimestamp(v) : null) ?? undefined;
    default:
      return undefined;
  }
}
