/**
 * A landing file from its stored bytes to rows: gunzipped when it is gzip data (at most
 * maxDecompressedBytes; a `.gz` key that is not gzip data, a bomb or damaged data is one dead
 * letter naming the file), then parsed, its partition folders' values set on its rows.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { LineParser } from '../../engine/json-scan';
import { invalidUtf8Lines, parseLineChunks, type LineCursor } from '../../engine/lines';
import type { ReadResult } from '../../engine/ports';

const gunzipAsync = promisify(gunzip);

/** A landing file as fetched, its bytes as stored. */
export interface StoredFile {
  readonly key: string;
  readonly buf: Buffer;
  readonly bytes: number;
  readonly gzipped: boolean;
  /** The key ends in .gz: its bytes must be gzip data. */
  readonly gzipKey: boolean;
  /** The declared partition columns' values from its col=value folders. */
  readonly partitions: ReadonlyArray<readonly [string, unknown]>;
  /** A partition folder whose text is not of the column's type: the file is one dead letter. */
  readonly badPartition: string | null;
}

/** A landing file as fetched (and gunzipped), before parsing. */
export interface FetchedFile {
  readonly key: string;
  /** The file's bytes, or null when they cannot be read (`damaged` says why). */
  readonly buf: Buffer | null;
  /** Bytes as stored (before gunzip). */
  readonly bytes: number;
  readonly partitions: ReadonlyArray<readonly [string, unknown]>;
  readonly damaged: string | null;
}

/**
 * Splits a file's bytes into lines and parses them (lib/engine/lines.ts), a chunk of rows at a
 * time. The bytes are decoded in pieces cut at newlines (a 0x0A byte never occurs inside a UTF-8
 * sequence), so no piece nears V8's string limit.
 */
export function* parseFile(parse: LineParser, f: FetchedFile, pieceBytes: number, columns?: readonly string[]): Generator<ReadResult> {
  let first = true; // the file counts with its first chunk, as its bytes do
  for (const chunk of parseFileRows(parse, f, pieceBytes, columns)) {
    yield first ? { ...chunk, files: 1 } : chunk;
    first = false;
  }
}

function* parseFileRows(parse: LineParser, f: FetchedFile, pieceBytes: number, columns?: readonly string[]): Generator<ReadResult> {
  const parts = columns ? f.partitions.filter(([c]) => columns.includes(c)) : f.partitions;
  if (parts.length === 0) {
    yield* parseFileLines(parse, f, pieceBytes);
    return;
  }
  // a partition column's value is its folder's, whatever the file's lines hold (Spark's data schema leaves it out)
  for (const chunk of parseFileLines(parse, f, pieceBytes)) {
    for (const row of chunk.rows) for (const [c, v] of parts) row[c] = v;
    yield chunk;
  }
}

function* parseFileLines(parse: LineParser, f: FetchedFile, pieceBytes: number): Generator<ReadResult> {
  const cursor: LineCursor = { lineNo: 0, bytes: f.bytes }; // the bytes go with the file's first chunk
  const buf = f.buf;
  if (buf === null) {
    yield { rows: [], deadLetters: [{ source: { file: f.key }, raw: '', reason: f.damaged ?? 'unreadable' }], bytes: cursor.bytes };
    return;
  }
  let pos = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0; // BOM
  while (pos < buf.length) {
    let end = buf.length;
    if (end - pos > pieceBytes) {
      const back = buf.lastIndexOf(0x0a, pos + pieceBytes);
      if (back >= pos) end = back + 1;
      else {
        const fwd = buf.indexOf(0x0a, pos + pieceBytes);
        end = fwd === -1 ? buf.length : fwd + 1;
      }
    }
    const invalid = invalidUtf8Lines(buf, pos, end);
    const text = buf.toString('utf8', pos, end);
    pos = end;
    yield* parseLineChunks(parse, f.key, text, cursor, invalid);
  }
  if (cursor.bytes > 0 || f.bytes === 0) yield { rows: [], deadLetters: [], bytes: cursor.bytes };
}

/** A fetched file's bytes, gunzipped (at most maxDecompressedBytes) when it is gzip data. */
export async function inflateFile(stored: StoredFile, maxDecompressed: number): Promise<FetchedFile> {
  const { key, bytes, partitions } = stored;
  let buf = stored.buf;
  if (stored.badPartition !== null) return { key, buf: null, bytes, partitions, damaged: stored.badPartition };
  const magic = buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  if (stored.gzipKey && !magic && buf.length > 0) {
    // never read as text: a .gz name promises gzip data, and its bytes are something else
    return {
      key,
      buf: null,
      bytes,
      partitions,
      damaged: 'the key ends in .gz but the object is not gzip data (no gzip header): re-upload it compressed, or without the .gz suffix',
    };
  }
  if (stored.gzipped && magic) {
    try {
      buf = await gunzipAsync(buf, { maxOutputLength: maxDecompressed });
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        return {
          key,
          buf: null,
          bytes,
          partitions,
          damaged: `gzip data decompresses to more than maxDecompressedBytes ${maxDecompressed}: if the file is genuine, raise .option('maxDecompressedBytes', ...) and the Lambda's memory, else remove it at the producer`,
        };
      }
      return { key, buf: null, bytes, partitions, damaged: `gzip data is damaged (${(e as Error).message}): re-upload the file under a new key` };
    }
  }
  return { key, buf, bytes, partitions, damaged: null };
}
