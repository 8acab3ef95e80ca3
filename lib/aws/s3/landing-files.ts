/**
 * A landing file from its stored bytes to rows: gunzipped when it is gzip data (at most
 * maxDecompressedBytes; a `.gz` key that is not gzip data, a bomb or damaged data is one dead
 * letter naming the file), then parsed, its partition folders' values set on its rows.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { FileDecoder } from '../../engine/formats';
import type { InputFile, ReadResult } from '../../engine/ports';

const gunzipAsync = promisify(gunzip);

/** A landing file as fetched, its bytes as stored. */
export interface StoredFile {
  readonly key: string;
  /** The file as input_file_name() and `_metadata` give it. */
  readonly file: InputFile;
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
  readonly file: InputFile;
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
export async function* parseFile(decoder: FileDecoder, f: FetchedFile, columns?: readonly string[]): AsyncGenerator<ReadResult> {
  if (f.buf === null) {
    yield { rows: [], deadLetters: [{ source: { file: f.key }, raw: '', reason: f.damaged ?? 'unreadable' }], bytes: f.bytes, files: 1 };
    return;
  }
  // (an empty object is no row in any format: decided by fileDecoder, formats/index.ts, for every source)
  // a partition column's value is its folder's, whatever the file's records hold (Spark's data schema leaves it out)
  const parts = columns ? f.partitions.filter(([c]) => columns.includes(c)) : f.partitions;
  const dataColumns = columns && f.partitions.length ? columns.filter((c) => !f.partitions.some(([p]) => p === c)) : columns;
  let first = true; // the file counts with its first chunk, as its bytes do
  for await (const chunk of decoder.decode(f.key, f.buf, f.bytes, dataColumns)) {
    if (parts.length) for (const row of chunk.rows) for (const [c, v] of parts) row[c] = v;
    yield first ? { ...chunk, file: f.file, files: 1 } : { ...chunk, file: f.file };
    first = false;
  }
}

/** A fetched file's bytes, gunzipped (at most maxDecompressedBytes) when it is gzip data. */
export async function inflateFile(stored: StoredFile, maxDecompressed: number): Promise<FetchedFile> {
  const { key, file, bytes, partitions } = stored;
  let buf = stored.buf;
  if (stored.badPartition !== null) return { key, file, buf: null, bytes, partitions, damaged: stored.badPartition };
  const magic = buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  if (stored.gzipKey && !magic && buf.length > 0) {
    // never read as text: a .gz name promises gzip data, and its bytes are something else
    return {
      key,
      file,
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
          file,
          buf: null,
          bytes,
          partitions,
          damaged: `gzip data decompresses to more than maxDecompressedBytes ${maxDecompressed}: if the file is genuine, raise .option('maxDecompressedBytes', ...) and the Lambda's memory, else remove it at the producer`,
        };
      }
      return { key, file, buf: null, bytes, partitions, damaged: `gzip data is damaged (${(e as Error).message}): re-upload the file under a new key` };
    }
  }
  return { key, file, buf, bytes, partitions, damaged: null };
}
