/**
 * JSON files. Without options, JSON lines read by the line parsers (json-scan.ts) a piece of the
 * file at a time, as ever. With Spark's JSON reader options the file is read whole:
 *
 *     multiLine                  the file is one JSON value; an array's elements are rows
 *     allowComments              /* ... *\/ and // ... comments are blanks
 *     allowSingleQuotes          'text' is a string
 *     allowUnquotedFieldNames    {name: 1} names a field
 *     dateFormat, timestampFormat  a DATE or TIMESTAMP string, at any depth, is read by the
 *                                pattern (datetime-patterns.ts), as Spark's JacksonParser; a
 *                                number for a TIMESTAMP stays epoch seconds
 *
 * The lenient forms are rewritten to strict JSON (lines kept, so a record's line is its own) and
 * typed by the one JSON reader (json-record.ts parseJsonLine): numbers are read from their text, so a
 * DECIMAL stays exact. json5 would parse the lenient forms too, but into doubles.
 */
import { ChunkBuilder, invalidUtf8Lines, parseLineChunks, type LineCursor } from '../lines';
import type { LineParser } from '../json-scan';
import type { ReadResult, Row } from '../ports';
import type { Schema } from '../schema';
import { type CoerceResult, parseJsonLine } from '../json-record';
import { keepOnly } from './csv';
import { arrayLineRows, isArrayLine, topLevelValues } from './json-array';
import { strictJson } from './lenient-json';
import { boolOption, patternOption, type ReaderOptions } from './options';
import type { TextPatterns } from './text-values';

export interface JsonOptions {
  readonly multiLine: boolean;
  readonly comments: boolean;
  readonly singleQuotes: boolean;
  readonly unquotedNames: boolean;
  readonly patterns: TextPatterns;
}

export function jsonOptions(options: ReaderOptions): JsonOptions {
  return {
    multiLine: boolOption(options, 'multiLine', false),
    comments: boolOption(options, 'allowComments', false),
    singleQuotes: boolOption(options, 'allowSingleQuotes', true),
    unquotedNames: boolOption(options, 'allowUnquotedFieldNames', false),
    patterns: { date: patternOption(options, 'dateFormat'), timestamp: patternOption(options, 'timestampFormat') },
  };
}

/** Whether the options change how a file is read (else the fast JSON-lines path). */
export function jsonNeedsWholeFile(o: JsonOptions, options: ReaderOptions): boolean {
  return o.multiLine || o.comments || o.unquotedNames || options.allowSingleQuotes !== undefined || o.patterns.date !== null || o.patterns.timestamp !== null;
}

/** JSON lines, a piece of `buf` at a time (pieces cut after a newline, each checked for UTF-8). */
export function* decodeJsonLines(parse: LineParser, file: string, buf: Uint8Array, bytes: number, pieceBytes: number): Generator<ReadResult> {
  const cursor: LineCursor = { lineNo: 0, bytes }; // the bytes go with the file's first chunk
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0; // BOM
  while (pos < b.length) {
    let end = b.length;
    if (end - pos > pieceBytes) {
      const back = b.lastIndexOf(0x0a, pos + pieceBytes);
      if (back >= pos) end = back + 1;
      else {
        const fwd = b.indexOf(0x0a, pos + pieceBytes);
        end = fwd === -1 ? b.length : fwd + 1;
      }
    }
    const invalid = invalidUtf8Lines(b, pos, end);
    const text = b.toString('utf8', pos, end);
    pos = end;
    yield* parseLineChunks(parse, file, text, cursor, invalid);
  }
  if (cursor.bytes > 0 || bytes === 0) yield { rows: [], deadLetters: [], bytes: cursor.bytes };
}

/**
 * JSON lines held as text already: the same rows, dead letters and byte count as decodeJsonLines
 * of the text's UTF-8 bytes (a string has no invalid UTF-8 to find); `bytes` is their count.
 */
export function* decodeJsonLinesText(parse: LineParser, file: string, text: string, bytes = Buffer.byteLength(text, 'utf8')): Generator<ReadResult> {
  const cursor: LineCursor = { lineNo: 0, bytes };
  yield* parseLineChunks(parse, file, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, cursor);
  if (cursor.bytes > 0 || bytes === 0) yield { rows: [], deadLetters: [], bytes: cursor.bytes };
}

/** A record's one row, as arrayLineRows gives rows. */
function oneRow(r: CoerceResult): { ok: true; rows: Row[] } | { ok: false; reason: string } {
  return r.ok ? { ok: true, rows: [r.row] } : r;
}

/** A file read whole with Spark's JSON options: rows and dead letters, each record with its line. */
export function* decodeJsonWhole(schema: Schema, o: JsonOptions, file: string, text: string, bytes: number, keep?: readonly string[]): Generator<ReadResult> {
  const patterns = o.patterns.date !== null || o.patterns.timestamp !== null ? o.patterns : null;
  const strict = strictJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, o);
  const records = o.multiLine
    ? topLevelValues(strict)
    : strict.split('\n').flatMap((l, k) => (l.trim() === '' ? [] : [{ text: l.replace(/\r$/, ''), line: k + 1 }]));
  const rawLines = o.multiLine ? null : text.split('\n');
  const out = new ChunkBuilder(bytes);
  for (const rec of records) {
    const raw = rawLines ? rawLines[rec.line - 1].replace(/\r$/, '') : rec.text;
    // (single quotes: rewritten above as the options say); a line that is an array: its elements' rows
    // (dateFormat, timestampFormat: a DATE or TIMESTAMP string at any depth is read by the pattern)
    const r =
      !o.multiLine && isArrayLine(rec.text) ? arrayLineRows(schema, rec.text, false, patterns) : oneRow(parseJsonLine(schema, rec.text, false, patterns));
    if (!r.ok) {
      const before = out.dead({ source: { file, line: rec.line }, raw, reason: r.reason });
      if (before !== null) yield before;
    } else for (const row of r.rows) out.rows.push(keep ? keepOnly(row, keep) : row);
    const full = out.full();
    if (full !== null) yield full;
  }
  yield out.take();
}
