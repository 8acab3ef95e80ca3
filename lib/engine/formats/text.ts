/**
 * Text files as Spark's text source reads them: one row per line (`\n`, `\r\n` or `\r` ends a
 * line, or with lineSep only that text; a last line without one counts, an empty file has no
 * rows; empty lines are rows of ""), or with wholetext one row of the whole file (lineSep does
 * not apply; an empty file is never read, formats/index.ts fileDecoder). A
 * UTF-8 BOM opening the file is dropped from the first line, kept by wholetext, as Hadoop's readers
 * do. The schema is `value STRING` (checked when the query is built). A line whose bytes are not
 * UTF-8 is a dead letter with its line.
 */
import { ChunkBuilder, INVALID_UTF8_REASON } from '../lines';
import { isUtf8 } from 'node:buffer';
import { InvalidOptionError } from '../errors';
import type { ReadResult } from '../ports';
import { boolOption, type ReaderOptions } from './options';

export interface TextOptions {
  readonly wholetext: boolean;
  /** the bytes that end a line (unset: \n, \r or \r\n) */
  readonly lineSep: Buffer | null;
}

/** Spark's text options (TextOptions): wholetext, and lineSep (any non-empty text). */
export function textOptions(options: ReaderOptions): TextOptions {
  const sep = options.lineSep === undefined ? null : String(options.lineSep);
  if (sep === '') throw new InvalidOptionError("option lineSep must not be empty: give the text that ends a line, e.g. .option('lineSep', '\\n')");
  return { wholetext: boolOption(options, 'wholetext', false), lineSep: sep === null ? null : Buffer.from(sep, 'utf8') };
}

export function* decodeText(o: TextOptions, file: string, buf: Uint8Array, bytes: number): Generator<ReadResult> {
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (o.wholetext) {
    if (!isUtf8(buf)) return yield { rows: [], deadLetters: [{ source: { file, line: 1 }, raw: text.toString('utf8'), reason: INVALID_UTF8_REASON }], bytes };
    return yield { rows: [{ value: text.toString('utf8') }], deadLetters: [], bytes };
  }
  const out = new ChunkBuilder(bytes);
  let line = 0;
  // a UTF-8 byte order mark opening the file is no text (Hadoop's LineRecordReader skips it; wholetext keeps it)
  let i = text.length >= 3 && text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf ? 3 : 0;
  const n = text.length;
  const sep = o.lineSep;
  while (i < n) {
    // [j, next): the line's end and where the next line starts
    let j: number;
    let next: number;
    if (sep === null) {
      j = i;
      while (j < n && text[j] !== 0x0a && text[j] !== 0x0d) j++;
      next = j < n && text[j] === 0x0d && text[j + 1] === 0x0a ? j + 2 : j + 1;
    } else {
      const at = text.indexOf(sep, i);
      j = at < 0 ? n : at;
      next = at < 0 ? n : at + sep.length;
    }
    line++;
    const piece = text.subarray(i, j);
    if (isUtf8(piece)) out.rows.push({ value: piece.toString('utf8') });
    else {
      const before = out.dead({ source: { file, line }, raw: piece.toString('utf8'), reason: INVALID_UTF8_REASON });
      if (before !== null) yield before;
    }
    i = next;
    const full = out.full();
    if (full !== null) yield full;
  }
  yield out.take();
}
