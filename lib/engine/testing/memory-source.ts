/** The Source twin: a landing prefix in memory (the twins' common rules: twins.ts). */
import type { BatchLimits, InputFile, Json, ReadOptions, ReadResult, Source } from '../ports';
import { fileUri } from '../input-file';
import type { SourceBacklog } from '../progress';
import type { Schema } from '../schema';
import { splitOf } from '../splits';
import { type FileDecoder, fileDecoder } from '../formats';
import type { ReaderOptions } from '../formats/options';

/**
 * A text file's UTF-8 length, counted once for its body: a file is read again by every run and
 * replay, and by every source its object is handed to (a benchmark's passes, a test's runs). The
 * S3 source has the count for free (its bytes' length); counting 200 MB of text costs a twin
 * about 80 ms, which a benchmark would time as the engine's.
 */
const utf8Bytes = new WeakMap<object, { body: string; bytes: number }>();

/**
 * A landing prefix in memory: files of JSON lines read in key order, offsets {lastKey} (the S3
 * source before it remembered its files). Cases whose files have keys of their own (FORMAT-3) need
 * the S3 landing source, which reads any key order: test/helpers/supported-cases.ts leaves them out here.
 */
export class InMemoryFileSource implements Source {
  readonly description = 'memory://landing';
  readonly files: Array<{ key: string; body: string | Uint8Array }> = [];
  reads = 0;

  /** The files' reader: the S3 source's (lib/engine/formats), JSON lines unless `format` says otherwise. */
  private readonly decoder: FileDecoder;

  constructor(schema: Schema, format = 'json', options: ReaderOptions = {}) {
    this.decoder = fileDecoder(schema, format, options);
  }

  /** A file: rows (as JSON lines), text, or bytes (a Parquet file). */
  add(key: string, rows: Array<Record<string, unknown>> | string | Uint8Array) {
    this.files.push({ key, body: rows instanceof Uint8Array || typeof rows === 'string' ? rows : rows.map((r) => JSON.stringify(r)).join('\n') });
    this.files.sort((a, b) => (a.key < b.key ? -1 : 1));
  }
  private after(start: Json | null, target: Json | null) {
    const s = start ? (start as { lastKey: string }).lastKey : '';
    const t = target ? (target as { lastKey: string }).lastKey : '\uffff';
    return this.files.filter((f) => f.key > s && f.key <= t);
  }
  async latestOffset(start: Json | null): Promise<Json | null> {
    const all = this.after(start, null);
    return all.length ? { lastKey: all[all.length - 1].key } : start;
  }
  async planBatch(_id: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    let files = this.after(start, target);
    if (!files.length) return null;
    if (limits.maxFilesPerTrigger) files = files.slice(0, limits.maxFilesPerTrigger);
    if (limits.maxBytesPerTrigger) {
      let bytes = 0;
      let n = 0;
      for (const f of files) {
        if (n > 0 && bytes + f.body.length > limits.maxBytesPerTrigger) break;
        bytes += f.body.length;
        n++;
      }
      files = files.slice(0, n);
    }
    return { lastKey: files[files.length - 1].key };
  }
  async read(id: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const out: ReadResult = { rows: [], deadLetters: [], bytes: 0 };
    let bytes = 0;
    for await (const chunk of this.readChunks(id, start, end, options)) {
      for (const r of chunk.rows) out.rows.push(r);
      for (const d of chunk.deadLetters) out.deadLetters.push(d);
      bytes += chunk.bytes;
    }
    return { ...out, bytes };
  }
  async *readChunks(_id: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    this.reads++;
    const files = this.after(start, end);
    for (const f of options?.split ? splitOf(files, options.split) : files) {
      let first = true; // the file counts with its first chunk, as its bytes do (as the S3 source's)
      const body = f.body;
      const chunks =
        typeof body === 'string'
          ? this.decoder.decodeText(f.key, body, options?.columns, this.textBytes(f, body))
          : this.decoder.decode(f.key, body, body.length, options?.columns);
      const file = this.inputFile(f);
      for await (const chunk of chunks) {
        yield first ? { ...chunk, file, files: 1 } : { ...chunk, file };
        first = false;
      }
      if (first) yield { rows: [], deadLetters: [], bytes: 0, files: 1 };
    }
  }
  /** The file as input_file_name() and `_metadata` give it: `memory://landing/<key>`, its UTF-8 bytes, no modification time. */
  private inputFile(f: { key: string; body: string | Uint8Array }): InputFile {
    return { path: fileUri(this.description, f.key), size: typeof f.body === 'string' ? this.textBytes(f, f.body) : f.body.length, modifiedMs: null };
  }
  private textBytes(f: object, body: string): number {
    const known = utf8Bytes.get(f);
    if (known !== undefined && known.body === body) return known.bytes;
    const bytes = Buffer.byteLength(body, 'utf8');
    utf8Bytes.set(f, { body, bytes });
    return bytes;
  }
  /** As the S3 landing source: contiguous groups of the batch's files, at most one a file. */
  async planSplits(_id: number, start: Json | null, end: Json, maxSplits: number): Promise<number> {
    return Math.max(1, Math.min(maxSplits, this.after(start, end).length));
  }
  async backlog(from: Json | null, target: Json | null): Promise<SourceBacklog> {
    const files = target ? this.after(from, target) : [];
    return { files: files.length, bytes: files.reduce((a, f) => a + f.body.length, 0) };
  }
}
