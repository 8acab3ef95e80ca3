/**
 * JSON-lines text into chunks of parsed rows, for the sources that read files (the S3 landing
 * source, its in-memory twin). Lines are cut with indexOf as they are parsed (no array of every
 * line of a file), and a chunk holds CHUNK_LINES lines: its rows die young, before the next
 * scavenge would copy them, and a batch is aggregated as it is read.
 */
import { isUtf8 } from 'node:buffer';
import type { LineParser } from './json-scan';
import type { DeadLetter, ReadResult, Row } from './ports';

/** Lines per chunk of rows. */
export const CHUNK_LINES = 512;

/** Where a file's reading is: the last line number used, and bytes not yet counted in a chunk. */
export interface LineCursor {
  lineNo: number;
  bytes: number;
}

/** The reason of a line whose bytes are not UTF-8 (Spark's reader flags such a record as corrupt). */
export const INVALID_UTF8_REASON = 'line is not valid UTF-8 (its bad bytes show as U+FFFD here): write the file in UTF-8 at the producer';

/**
 * The lines of `bytes[start, end)` (0-based, counted as parseLineChunks counts them) that are not
 * valid UTF-8, or null when all of it is (the common case: one check of the whole piece). A 0x0A
 * byte never occurs inside a UTF-8 sequence, so lines can be checked one by one.
 */
export function invalidUtf8Lines(bytes: Uint8Array, start = 0, end = bytes.length): Set<number> | null {
  if (isUtf8(bytes.subarray(start, end))) return null;
  const bad = new Set<number>();
  let line = 0;
  for (let from = start; from < end; line++) {
    let nl = bytes.indexOf(0x0a, from);
    if (nl === -1 || nl >= end) nl = end;
    if (!isUtf8(bytes.subarray(from, nl))) bad.add(line);
    from = nl + 1;
  }
  return bad;
}

/**
 * Parses the lines of `text` (a whole file, or a piece of one cut after a newline), numbering
 * them from cursor.lineNo + 1; blank lines are skipped, a trailing CR is dropped. A line the
 * parser rejects is a dead letter with its file and line number. The cursor's bytes go with the
 * first chunk yielded. `invalid` holds the lines of this text (0-based) whose bytes were not
 * UTF-8 (invalidUtf8Lines): each is a dead letter, whatever the parser would make of it.
 * Its chunks are built by a ChunkBuilder (a chunk's dead letters before its rows).
 */
export function* parseLineChunks(
  parse: LineParser,
  file: string,
  text: string,
  cursor: LineCursor,
  invalid: ReadonlySet<number> | null = null,
): Generator<ReadResult> {
  const n = text.length;
  let start = 0;
  let local = -1;
  const out = new ChunkBuilder();
  while (start < n) {
    out.bytes += cursor.bytes;
    cursor.bytes = 0;
    for (let k = 0; k < CHUNK_LINES && start < n; k++) {
      let nl = text.indexOf('\n', start);
      if (nl === -1) nl = n;
      cursor.lineNo++;
      local++;
      let end = nl;
      if (end > start && text.charCodeAt(end - 1) === 13) end--;
      if (end > start && !(text.charCodeAt(start) <= 32 && isBlank(text, start, end))) {
        const line = text.slice(start, end);
        const reason = invalid?.has(local) ? INVALID_UTF8_REASON : parse.into(line, out.rows);
        if (reason !== null) {
          const before = out.dead({ source: { file, line: cursor.lineNo }, raw: line, reason });
          if (before !== null) yield before;
        }
      }
      start = nl + 1;
    }
    yield out.take();
  }
}

/**
 * A reader's chunks as it reads records in order: rows and dead letters, at most CHUNK_LINES
 * records a chunk, and the bytes read that no chunk has counted yet (they go with the next chunk
 * taken). A chunk's dead letters all come before its rows: a dead letter after a row starts a new
 * chunk. The run writes a chunk's dead letters, then its rows' row errors (a stage that fails on a
 * row), so the dead letters of bad records and of failed rows stay in input order (FORMAT-3's
 * deadLetterErrors). Every reader (the line chunks above, CSV, JSON, text, Parquet, the Kinesis
 * source) builds its chunks with one.
 */
export class ChunkBuilder {
  rows: Row[] = [];
  deadLetters: DeadLetter[] = [];

  constructor(public bytes = 0) {}

  /** Adds a dead letter; returns the chunk so far, to be yielded first, when it holds rows (else null). */
  dead(letter: DeadLetter): ReadResult | null {
    const before = this.rows.length > 0 ? this.take() : null;
    this.deadLetters.push(letter);
    return before;
  }

  /** The chunk, to be yielded, once it holds CHUNK_LINES records; else null. */
  full(): ReadResult | null {
    return this.rows.length + this.deadLetters.length >= CHUNK_LINES ? this.take() : null;
  }

  /** The chunk as it is (possibly empty), and a new one started. */
  take(): ReadResult {
    const chunk: ReadResult = { rows: this.rows, deadLetters: this.deadLetters, bytes: this.bytes };
    this.rows = [];
    this.deadLetters = [];
    this.bytes = 0;
    return chunk;
  }
}

function isBlank(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}
