/**
 * File formats of the file sources (the S3 landing source, its in-memory twin): the bytes of one
 * file (already gunzipped) into chunks of typed rows and dead letters, each dead letter with its
 * file and line (a Parquet row: its row number). No AWS here: every file source shares it.
 *
 *     json     JSON lines (default), or Spark's JSON options (json.ts)
 *     csv      Spark's CSV reader (csv.ts)
 *     text     one row per line, `value STRING` (text.ts)
 *     parquet  by column name, exact DECIMAL and microsecond TIMESTAMP (parquet.ts)
 *
 * checkFileFormat refuses a format, an option value or a schema the format cannot read when the
 * query is built; fileDecoder is what a source reads files with.
 */
import { InvalidOptionError, InvalidQueryError } from '../errors';
import { LineParsers } from '../json-scan';
import type { ReadResult } from '../ports';
import type { Schema } from '../schema';
import { csvOptions, decodeCsv } from './csv';
import { decodeJsonLines, decodeJsonLinesText, decodeJsonWhole, jsonNeedsWholeFile, jsonOptions } from './json';
import type { ReaderOptions } from './options';
import { decodeParquet } from './parquet';
import { decodeText, textOptions } from './text';

export type FileFormat = 'json' | 'csv' | 'text' | 'parquet';

const FORMATS: readonly FileFormat[] = ['json', 'csv', 'text', 'parquet'];

/** Lines per decoded piece of a JSON-lines file are cut at newlines; keeps huge files under V8's string limit. */
const DECODE_PIECE_BYTES = 64 * 1024 * 1024;

/** The format's name checked, and its options and the schema checked against it (throws with the fix). */
export function checkFileFormat(format: string, schema: Schema, options: ReaderOptions): FileFormat {
  const f = format.toLowerCase() as FileFormat;
  if (!FORMATS.includes(f)) {
    throw new InvalidOptionError(
      `source format ${JSON.stringify(format)} is not supported: sluice reads ${FORMATS.map((x) => `format('${x}')`).join(', ')} (each optionally gzip)`,
    );
  }
  if (f === 'text') {
    const c = schema.columns;
    if (c.length !== 1 || c[0].name !== 'value' || c[0].type !== 'STRING') {
      throw new InvalidQueryError(
        `format('text') reads one column, value STRING (one row per line), but the schema is ${JSON.stringify(schema.ddl)}: declare .schema('value STRING') and parse the line in the query`,
      );
    }
    textOptions(options);
  }
  if (f === 'csv') {
    csvOptions(options);
    const nested = schema.columns.find((c) => c.type === 'ARRAY' || c.type === 'MAP' || c.type === 'STRUCT');
    if (nested) {
      throw new InvalidQueryError(
        `format('csv') cannot read column ${nested.name} of a nested type (as Spark's CSV reader): declare it STRING and parse it in the query, or write the data as JSON or Parquet`,
      );
    }
  }
  if (f === 'json') jsonOptions(options);
  return f;
}

/** Reads one file's bytes: chunks of rows (only `columns`, when given; every column is checked) and dead letters. */
export interface FileDecoder {
  decode(file: string, buf: Uint8Array, bytes: number, columns?: readonly string[]): Iterable<ReadResult> | AsyncIterable<ReadResult>;
  /**
   * The same for a file a source holds as text already (the in-memory twin): JSON lines without
   * options are parsed from the string, with no round trip through UTF-8 bytes; every other
   * format encodes it and takes `decode`. `bytes`: the text's UTF-8 length when the caller knows
   * it (counted otherwise).
   */
  decodeText(file: string, text: string, columns?: readonly string[], bytes?: number): Iterable<ReadResult> | AsyncIterable<ReadResult>;
}

/** A decoder whose text files are read as their UTF-8 bytes. */
function viaBytes(decode: FileDecoder['decode']): FileDecoder {
  return {
    decode,
    decodeText: (file, text, columns) => {
      const buf = Buffer.from(text, 'utf8');
      return decode(file, buf, buf.length, columns);
    },
  };
}

/**
 * The decoder of files of `format` with `options`, for rows of `schema` (a file's data columns).
 * An empty file gives no row in any format: Spark's file source lists it (so a batch takes it) but
 * never reads it, since PartitioningAwareFileIndex.listFiles keeps only files longer than 0 bytes
 * (so no empty Parquet file is a dead letter, and no empty wholetext file a row of ''). That length
 * is the stored one: a gzip file whose content is empty is read, and with wholetext it is one row
 * of '' (Spark's WholeTextFileRecordReader gunzips it and returns the whole content, even empty);
 * in the other formats its empty content holds no record anyway.
 */
export function fileDecoder(schema: Schema, format: string, options: ReaderOptions, pieceBytes = DECODE_PIECE_BYTES): FileDecoder {
  const d = formatDecoder(schema, format, options, pieceBytes);
  const none = (bytes: number): ReadResult[] => [{ rows: [], deadLetters: [], bytes }];
  // `bytes` is the file's stored length (before gunzip): a stored file that unzips to nothing is still read whole
  const wholeText = format.toLowerCase() === 'text' && textOptions(options).wholetext;
  return {
    decode: (file, buf, bytes, columns) => (buf.length === 0 && !(wholeText && bytes > 0) ? none(bytes) : d.decode(file, buf, bytes, columns)),
    decodeText: (file, text, columns, bytes) => (text.length === 0 ? none(bytes ?? 0) : d.decodeText(file, text, columns, bytes)),
  };
}

function formatDecoder(schema: Schema, format: string, options: ReaderOptions, pieceBytes: number): FileDecoder {
  const f = checkFileFormat(format, schema, options);
  const keepOf = (columns?: readonly string[]) => (columns && columns.length < schema.columns.length ? columns : undefined);
  const text = (buf: Uint8Array) => Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8');
  switch (f) {
    case 'csv': {
      const o = csvOptions(options);
      return viaBytes((file, buf, bytes, columns) => decodeCsv(schema, o, file, text(buf), bytes, keepOf(columns)));
    }
    case 'text': {
      const o = textOptions(options);
      return viaBytes((file, buf, bytes) => decodeText(o, file, buf, bytes));
    }
    case 'parquet':
      return viaBytes((file, buf, bytes, columns) => decodeParquet(schema, file, buf, bytes, keepOf(columns)));
    default: {
      const o = jsonOptions(options);
      if (jsonNeedsWholeFile(o, options)) return viaBytes((file, buf, bytes, columns) => decodeJsonWhole(schema, o, file, text(buf), bytes, keepOf(columns)));
      const parsers = new LineParsers(schema);
      return {
        decode: (file, buf, bytes, columns) => decodeJsonLines(parsers.for(columns), file, buf, bytes, pieceBytes),
        decodeText: (file, text, columns, bytes) => decodeJsonLinesText(parsers.for(columns), file, text, bytes),
      };
    }
  }
}
