/**
 * A landing prefix on S3 as a streaming source: producers drop JSON-lines files (optionally
 * gzipped) under the prefix, each run reads the files that arrived since the last one.
 *
 * Offsets are `{ "lastKey": "<the last key covered>" }`. Files are taken in S3's lexical key order
 * and found with ListObjectsV2 StartAfter = the last key already covered, so a run lists only what
 * is new, never the whole prefix.
 *
 * CAVEAT, by design: a key that arrives after a later-sorting key was processed is NOT picked up
 * (it sorts before the offset). Producers must use time-ordered names, e.g.
 * `yyyy/mm/dd/hh/<epoch-ms>-<uuid>.json`, and must not write late into an earlier "folder".
 * Files must be immutable once written: a replay checks each file's ETag against the batch's log.
 *
 *     latestOffset(start)  LIST (start, end of prefix]  once per run, kept in memory
 *     planBatch(N, ...)    files from that listing, up to the limits (maxBytesPerTrigger
 *                          defaults to 128 MiB of stored bytes)
 *                          PUT sources/<i>/N {files: key, size, etag}  once, before returning
 *                          (a list already there from the same start wins: see logOnce)
 *     readChunks(N, s, e)  the file list: in memory, else GET sources/<i>/N (a replay: logged
 *     read(N, s, e)        as oversized when it exceeds today's limit), else (older
 *                          checkpoints) LIST (s, e] again;
 *                          GET each file (8 ahead, as stored), gunzip the next while one is
 *                          parsed (each at most maxDecompressedBytes: at most two files'
 *                          decompressed bytes held at once, see readChunks), check UTF-8,
 *                          split lines, parse; chunks of lines, in key order
 *                          (read: all chunks concatenated)
 *
 * Directory markers (keys ending in "/") and zero-byte objects are skipped; so are keys not
 * ending in one of `suffixFilter` when it is given. `stats()` counts the file GETs and LISTs;
 * the requests for the file lists count in the checkpoint's.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { CheckpointMismatchError, DataLossError, InvalidOptionError } from '../../engine/errors';
import type { BatchLimits, CheckpointStore, DeadLetter, Json, ReadOptions, ReadResult, Row, Source } from '../../engine/ports';
import type { SourceBacklog } from '../../engine/progress';
import type { Schema } from '../../engine/schema';
import { LineParsers, type LineParser } from '../../engine/json-scan';
import { invalidUtf8Lines, parseLineChunks, type LineCursor } from '../../engine/lines';
import { S3Prefix, type S3PrefixOptions } from './prefix';
import { splitOf } from '../../engine/splits';
import { checkPageSize, compareKeys, type S3ListedObject } from './requests';

const gunzipAsync = promisify(gunzip);

export interface S3LandingSourceOptions extends S3PrefixOptions {
  /** The landing "folder": `landing/orders` covers `landing/orders/...`. Empty: the whole bucket. */
  readonly prefix: string;
  readonly schema: Schema;
  /** Where the per-batch file lists go (`sources/<sourceIndex>/<batchId>`). */
  readonly checkpoint: CheckpointStore;
  /** The source's position in the query. @default 0 */
  readonly sourceIndex?: number;
  /** Only keys ending in one of these, e.g. [".json", ".json.gz"]. Case-sensitive. @default all keys */
  readonly suffixFilter?: readonly string[];
  /** Files fetched at once. @default 8 */
  readonly readParallelism?: number;
  /** Keys per ListObjectsV2 page; only tests lower it. @default 1000 */
  readonly listPageSize?: number;
  /** Bytes of a file decoded into one string (cut after a newline); only tests lower it. @default 64 MiB */
  readonly decodePieceBytes?: number;
  /**
   * The most a gzipped file may decompress to; a file beyond it (a gzip bomb, or a file too big
   * for the Lambda) is one dead letter naming it, never an out-of-memory. Query option
   * `maxDecompressedBytes`. @default 256 MiB
   */
  readonly maxDecompressedBytes?: number;
  /**
   * The query's batch limits (plan.limits), so that a replay can say when the logged batch it
   * must read whole exceeds them. planBatch uses the limits it is given. @default none
   */
  readonly limits?: BatchLimits;
  /** Structured events (an oversized replay, an adopted file list). @default none */
  readonly log?: (event: Record<string, unknown>) => void;
}

/** The landing source's options from a query's readStream options (`maxDecompressedBytes`). */
export function landingOptionsFromSpec(options: Readonly<Record<string, string | number | boolean>>): Partial<S3LandingSourceOptions> {
  if (options.maxDecompressedBytes === undefined) return {};
  const n = Number(options.maxDecompressedBytes);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidOptionError(
      `option maxDecompressedBytes=${JSON.stringify(options.maxDecompressedBytes)} must be a positive integer of bytes, e.g. .option('maxDecompressedBytes', 1073741824)`,
    );
  }
  return { maxDecompressedBytes: n };
}

interface S3LandingOffset {
  readonly lastKey: string;
}

/** One file of a batch, as its source log records it: key, size and ETag as listed. */
export type LandingFile = S3ListedObject;

/** The body of `sources/<i>/<batchId>`. */
interface BatchFileLog {
  readonly version: 1;
  readonly batchId: number;
  readonly start: S3LandingOffset | null;
  readonly end: S3LandingOffset;
  readonly files: LandingFile[];
}

/** The listing taken by latestOffset: every file after `startKey`, in key order. */
interface Listing {
  readonly startKey: string | null;
  readonly files: LandingFile[];
}

/**
 * Stored bytes per batch when the query sets no maxBytesPerTrigger: 128 MiB. A stateless batch
 * holds its output rows (about twice their JSON on the V8 heap), so this keeps one within half of
 * the construct's default 1024 MiB Lambda, and a batch's reading within a few minutes.
 */
export const DEFAULT_MAX_BYTES_PER_TRIGGER = 128 * 1024 * 1024;

/** Bytes a gzipped file may decompress to, unless `maxDecompressedBytes` says otherwise: 256 MiB. */
const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/** Lines per decoded chunk are cut at newlines; keeps huge files under V8's string limit. */
const DECODE_CHUNK_BYTES = 64 * 1024 * 1024;

export class S3LandingSource extends S3Prefix implements Source {
  /** Line parsers that learn the producer's line shapes (lib/engine/json-scan.ts), by the columns read. */
  private readonly parsers: LineParsers;
  private readonly checkpoint: CheckpointStore;
  private readonly sourceIndex: number;
  private readonly suffixes: readonly string[] | null;
  private readonly parallelism: number;
  private readonly pageSize: number;
  private readonly pieceBytes: number;
  private readonly maxDecompressed: number;
  private readonly limits: BatchLimits;
  private readonly log: (event: Record<string, unknown>) => void;
  private listing: Listing | null = null;
  /** File bytes held by reads now, and the most at once (peakHeldBytes). */
  private held = 0;
  private peakHeld = 0;
  /** Batches planned by this instance, so the first read needs no GET of the log it just wrote. */
  private readonly planned = new Map<number, BatchFileLog>();

  constructor(opts: S3LandingSourceOptions) {
    super(opts, 'S3LandingSource');
    if (!opts.schema || !Array.isArray(opts.schema.columns)) {
      throw new InvalidOptionError('S3LandingSource needs `schema`: parse the declared columns with parseSchema("user STRING, event_time TIMESTAMP, ...")');
    }
    this.parsers = new LineParsers(opts.schema);
    if (!opts.checkpoint) {
      throw new InvalidOptionError("S3LandingSource needs `checkpoint`: the query's CheckpointStore, where it logs each batch's file list");
    }
    this.checkpoint = opts.checkpoint;
    this.sourceIndex = opts.sourceIndex ?? 0;
    if (!Number.isInteger(this.sourceIndex) || this.sourceIndex < 0) {
      throw new InvalidOptionError(`S3LandingSource sourceIndex ${opts.sourceIndex} must be a non-negative integer: the source's position in the query`);
    }
    if (opts.suffixFilter !== undefined) {
      if (!Array.isArray(opts.suffixFilter) || opts.suffixFilter.length === 0 || opts.suffixFilter.some((s) => typeof s !== 'string' || s === '')) {
        throw new InvalidOptionError(
          `S3LandingSource suffixFilter ${JSON.stringify(opts.suffixFilter)} must be a non-empty list of non-empty suffixes, e.g. [".json", ".json.gz"]; leave it out to take every key`,
        );
      }
    }
    this.suffixes = opts.suffixFilter ?? null;
    this.parallelism = opts.readParallelism ?? 8;
    if (!Number.isInteger(this.parallelism) || this.parallelism < 1) {
      throw new InvalidOptionError(`S3LandingSource readParallelism ${opts.readParallelism} must be a positive integer: leave it out for 8`);
    }
    this.pageSize = checkPageSize(opts.listPageSize, 'S3LandingSource');
    this.pieceBytes = opts.decodePieceBytes ?? DECODE_CHUNK_BYTES;
    if (!Number.isInteger(this.pieceBytes) || this.pieceBytes < 1) {
      throw new InvalidOptionError(`S3LandingSource decodePieceBytes ${opts.decodePieceBytes} must be a positive integer: leave it out for 64 MiB`);
    }
    this.maxDecompressed = opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
    if (!Number.isSafeInteger(this.maxDecompressed) || this.maxDecompressed < 1) {
      throw new InvalidOptionError(
        `S3LandingSource maxDecompressedBytes ${opts.maxDecompressedBytes} must be a positive integer of bytes: leave it out for 256 MiB`,
      );
    }
    this.limits = opts.limits ?? {};
    this.log = opts.log ?? (() => undefined);
  }

  /** One listing of everything after `start`, kept for planBatch and backlog. */
  async latestOffset(start: Json | null): Promise<Json | null> {
    const startKey = this.parseOffset(start, 'start');
    const files = await this.listFiles(startKey, null);
    this.listing = { startKey, files };
    if (files.length === 0) return startKey === null ? null : { lastKey: startKey };
    return { lastKey: files[files.length - 1].key };
  }

  async planBatch(batchId: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    const startKey = this.parseOffset(start, 'start');
    const targetKey = this.parseOffset(target, 'target');
    if (targetKey === null || (startKey !== null && compareKeys(targetKey, startKey) <= 0)) return null;
    const maxFiles = checkLimit(limits.maxFilesPerTrigger, 'maxFilesPerTrigger');
    const maxBytes = checkLimit(limits.maxBytesPerTrigger, 'maxBytesPerTrigger', DEFAULT_MAX_BYTES_PER_TRIGGER);

    const { files, from, to } = await this.range(startKey, targetKey);
    if (from >= to) return null;
    let end = from;
    let bytes = 0;
    while (end < to) {
      const size = files[end].size;
      if (end > from && (end - from >= maxFiles || bytes + size > maxBytes)) break;
      bytes += size;
      end++;
    }
    const batchFiles = files.slice(from, end);
    const log: BatchFileLog = {
      version: 1,
      batchId,
      start: startKey === null ? null : { lastKey: startKey },
      end: { lastKey: batchFiles[batchFiles.length - 1].key },
      files: batchFiles,
    };
    const planned = await this.logOnce(batchId, log);
    for (const id of this.planned.keys()) if (id < batchId) this.planned.delete(id);
    this.planned.set(batchId, planned);
    return { lastKey: planned.end.lastKey };
  }

  /**
   * Writes the batch's file list once. A list already there for the same start is a plan whose
   * offsets entry never landed (a crash between the two), or another run's: the first list wins
   * and the batch takes it, so the offsets and every replay agree with it. One for another start
   * means the checkpoint's history changed under it: a loud error, never an overwrite.
   *
   *     PUT sources/<i>/N If-None-Match: *  ──200──▶ this plan
   *                                        ──412──▶ GET: same start? that list : CheckpointMismatchError
   */
  private async logOnce(batchId: number, log: BatchFileLog): Promise<BatchFileLog> {
    const body = JSON.stringify(log);
    const stored = await this.checkpoint.writeSourceLogOnce(this.sourceIndex, String(batchId), body);
    if (stored === null || stored === body) return log;
    const existing = this.parseLog(batchId, stored);
    const startKey = log.start?.lastKey ?? null;
    const storedStart = existing.start?.lastKey ?? null;
    if (storedStart === startKey) {
      this.log({ event: 'source-log-adopted', batchId, files: existing.files.length, lastKey: existing.end.lastKey });
      return existing;
    }
    throw new CheckpointMismatchError(
      `the file list of batch ${batchId} (${this.checkpoint.description}/sources/${this.sourceIndex}/${batchId}) starts after ${JSON.stringify(storedStart)}, but the batch starts after ${JSON.stringify(startKey)}, ` +
        `and file lists are write-once: let one run at a time use this checkpoint, or start the query on a new checkpoint prefix`,
      { details: { batchId, storedStart, start: startKey } },
    );
  }

  /** A partitioned run's splits of the batch: contiguous groups of its files, at most one a file. */
  async planSplits(batchId: number, start: Json | null, end: Json, maxSplits: number): Promise<number> {
    const endKey = this.parseOffset(end, 'end');
    if (endKey === null) return 1;
    const { files } = await this.batchFiles(batchId, this.parseOffset(start, 'start'), endKey);
    return Math.max(1, Math.min(maxSplits, files.length));
  }

  /** The whole batch at once: the chunks of `readChunks`, concatenated. */
  async read(batchId: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const chunks: ReadResult[] = [];
    let rowCount = 0;
    let deadCount = 0;
    let bytes = 0;
    for await (const c of this.readChunks(batchId, start, end, options)) {
      chunks.push(c);
      rowCount += c.rows.length;
      deadCount += c.deadLetters.length;
      bytes += c.bytes;
    }
    if (chunks.length === 1) return chunks[0];
    const rows: Row[] = new Array(rowCount);
    const deadLetters: DeadLetter[] = new Array(deadCount);
    let r = 0;
    let d = 0;
    for (const c of chunks) {
      for (let i = 0; i < c.rows.length; i++) rows[r++] = c.rows[i];
      for (let i = 0; i < c.deadLetters.length; i++) deadLetters[d++] = c.deadLetters[i];
    }
    return { rows, deadLetters, bytes };
  }

  /**
   * The batch in key order, up to `readParallelism` files fetched ahead (their bytes as stored),
   * each decompressed only when the file before it is being parsed, and parsed when its turn comes,
   * yielded CHUNK_LINES lines at a time (the file's bytes counted with its first chunk). So a batch
   * holds at most two files' decompressed bytes at once (the one parsed and the next, each at most
   * maxDecompressedBytes), plus the stored bytes of the files fetched ahead, and one chunk of rows,
   * whatever the number and the ratio of its files: a batch of five 1.7 MiB gzip files of 120 MiB
   * each holds 240 MiB of text at most, never 600 (the sink streams what it is given:
   * Sink.addBatchChunks; stateful operators aggregate chunk by chunk).
   */
  async *readChunks(batchId: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    const startKey = this.parseOffset(start, 'start');
    const endKey = this.parseOffset(end, 'end');
    if (endKey === null) return;
    const listed = await this.batchFiles(batchId, startKey, endKey);
    const fromLog = listed.fromLog;
    // a partitioned run's read task takes one contiguous group of the batch's files
    const files = options?.split ? splitOf(listed.files, options.split) : listed.files;
    this.checkReplaySize(batchId, files);
    const parse = this.parsers.for(options?.columns);
    const ahead: Promise<StoredFile>[] = [];
    let next = 0;
    // Awaited in order below; the catches only keep a failure of a file further ahead (or one
    // left behind when the caller stops early) from surfacing as an unhandled rejection.
    const fill = () => {
      while (next < files.length && ahead.length < this.parallelism) {
        const p = this.readFile(batchId, files[next++], fromLog);
        p.catch(() => undefined);
        ahead.push(p);
      }
    };
    const inflateNext = (): Promise<FetchedFile> | null => {
      const stored = ahead.shift();
      if (!stored) return null;
      const p = stored.then((f) => this.inflate(f));
      p.catch(() => undefined);
      return p;
    };
    fill();
    let coming = inflateNext();
    try {
      while (coming) {
        const fetched = await coming;
        try {
          fill();
          coming = inflateNext();
          yield* parseFile(parse, fetched, this.pieceBytes);
        } finally {
          this.release(fetched);
        }
      }
    } finally {
      // the caller stopped early, or a read failed: the file decompressed ahead is dropped
      coming?.then(
        (f) => this.release(f),
        () => undefined,
      );
    }
  }

  private release(f: FetchedFile): void {
    this.held -= f.buf?.byteLength ?? 0;
  }

  /**
   * The most file bytes (decompressed, or as stored for a plain file) this source's reads have
   * held at once since it was created, counted from a file's decompression until it is parsed
   * (not the stored bytes of the files fetched ahead): at most two files' (see readChunks). For
   * tests and benchmarks.
   */
  peakHeldBytes(): number {
    return this.peakHeld;
  }

  /**
   * A batch's file list is write-once, so a replay reads it whole whatever the limits are now: a
   * batch that was too big for the Lambda's time or memory fails the same way on every replay.
   * When it holds more than the current maxBytesPerTrigger allows (a lowered limit, or one file
   * bigger than the limit), say so with the remedy before reading, so that failure is explained.
   * Not for this instance's own plans: those were just cut to the limits.
   */
  private checkReplaySize(batchId: number, files: readonly LandingFile[]): void {
    if (this.planned.has(batchId)) return;
    const limit = this.limits.maxBytesPerTrigger ?? DEFAULT_MAX_BYTES_PER_TRIGGER;
    let bytes = 0;
    for (const f of files) bytes += f.size;
    if (bytes <= limit) return;
    this.log({
      event: 'oversized-replay',
      batchId,
      files: files.length,
      bytes,
      maxBytesPerTrigger: limit,
      message:
        `batch ${batchId} is replayed with ${bytes} stored bytes in ${files.length} files, more than maxBytesPerTrigger ${limit}, because its file list is write-once: ` +
        `if the run fails by the Lambda's timeout or memory, raise them (lambdaTimeoutSeconds, lambdaMemoryMiB) for the replay, or run the batch once with \`sluice run\` on this checkpoint`,
    });
  }

  /** Files in (from, target] and their stored bytes, from the run's listing. */
  async backlog(from: Json | null, target: Json | null): Promise<SourceBacklog> {
    const fromKey = this.parseOffset(from, 'from');
    const targetKey = this.parseOffset(target, 'target');
    if (targetKey === null || (fromKey !== null && compareKeys(targetKey, fromKey) <= 0)) return { files: 0, bytes: 0 };
    const { files, from: lo, to: hi } = await this.range(fromKey, targetKey);
    let bytes = 0;
    for (let i = lo; i < hi; i++) bytes += files[i].size;
    return { files: Math.max(0, hi - lo), bytes };
  }

  // -------------------------------------------------------------------------------------------

  /** The files of (startKey, targetKey] as [from, to) of a sorted array: the cached listing when it covers the range. */
  private async range(startKey: string | null, targetKey: string): Promise<{ files: LandingFile[]; from: number; to: number }> {
    const l = this.listing;
    const covers =
      l !== null &&
      (l.startKey === null || (startKey !== null && compareKeys(l.startKey, startKey) <= 0)) &&
      l.files.length > 0 &&
      compareKeys(l.files[l.files.length - 1].key, targetKey) >= 0;
    if (covers) {
      return { files: l.files, from: upperBound(l.files, startKey), to: upperBound(l.files, targetKey) };
    }
    const files = await this.listFiles(startKey, targetKey);
    return { files, from: 0, to: files.length };
  }

  private async listFiles(startKey: string | null, untilKey: string | null): Promise<LandingFile[]> {
    const listed = await this.s3.listAll(this.bucket, this.root, { startAfter: startKey, until: untilKey, pageSize: this.pageSize });
    return listed.filter((o) => this.accepts(o));
  }

  private accepts(o: S3ListedObject): boolean {
    if (o.size <= 0 || o.key.endsWith('/')) return false;
    if (this.suffixes === null) return true;
    for (const s of this.suffixes) if (o.key.endsWith(s)) return true;
    return false;
  }

  /** The batch's file list: planned here, logged in the checkpoint (a replay), or re-listed. */
  private async batchFiles(batchId: number, startKey: string | null, endKey: string): Promise<{ files: LandingFile[]; fromLog: boolean }> {
    const matches = (log: BatchFileLog) => (log.start?.lastKey ?? null) === startKey && log.end.lastKey === endKey;
    const planned = this.planned.get(batchId);
    if (planned && matches(planned)) return { files: planned.files, fromLog: true };
    const text = await this.checkpoint.readSourceLog(this.sourceIndex, String(batchId));
    if (text !== null) {
      const log = this.parseLog(batchId, text);
      // A log for other offsets belongs to a plan whose offsets entry never landed; the offsets
      // entry wins, and (start, end] is listed again.
      if (matches(log)) return { files: log.files, fromLog: true };
    }
    return { files: await this.listFiles(startKey, endKey), fromLog: false };
  }

  private parseLog(batchId: number, text: string): BatchFileLog {
    let log: BatchFileLog | null = null;
    try {
      log = JSON.parse(text) as BatchFileLog;
    } catch {
      log = null;
    }
    if (!log || !Array.isArray(log.files) || !log.end || typeof log.end.lastKey !== 'string') {
      throw new CheckpointMismatchError(
        `the file list of batch ${batchId} (${this.checkpoint.description}/sources/${this.sourceIndex}/${batchId}) is damaged (${text.slice(0, 80)}): ` +
          `delete it to have the batch's range listed again, which also reads files that arrived since and sort before the range's end`,
        { details: { batchId } },
      );
    }
    return log;
  }

  /** GETs a file and checks it is the one the batch planned; its bytes as stored (decompressed later: inflate). */
  private async readFile(batchId: number, file: LandingFile, fromLog: boolean): Promise<StoredFile> {
    const got = await this.s3.getObject(this.bucket, file.key);
    if (got === null) {
      throw new DataLossError(
        `file s3://${this.bucket}/${file.key} of batch ${batchId} is gone from S3 (listed in ${this.checkpoint.description}/sources/${this.sourceIndex}/${batchId}), ` +
          `but landing files must stay until their batch commits: restore the object (e.g. from S3 versioning) and run again, or start the query on a new checkpoint prefix`,
        { details: { batchId, key: file.key } },
      );
    }
    if (fromLog && file.etag && got.etag && file.etag !== got.etag) {
      throw new DataLossError(
        `file s3://${this.bucket}/${file.key} of batch ${batchId} changed since the batch was planned (ETag ${file.etag} in the file list, ${got.etag} now), ` +
          `but landing files must be immutable: restore the original object, or write changed data under a new key`,
        { details: { batchId, key: file.key, loggedEtag: file.etag, etag: got.etag } },
      );
    }
    const buf = Buffer.from(got.body.buffer, got.body.byteOffset, got.body.byteLength);
    const gzipped = file.key.endsWith('.gz') || got.contentEncoding.toLowerCase().includes('gzip');
    return { key: file.key, buf, bytes: got.body.byteLength, gzipped };
  }

  /** A fetched file's bytes, gunzipped (at most maxDecompressedBytes) when it is gzip data. */
  private async inflate(stored: StoredFile): Promise<FetchedFile> {
    const { key, bytes } = stored;
    let buf = stored.buf;
    if (stored.gzipped && buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) {
      try {
        buf = await gunzipAsync(buf, { maxOutputLength: this.maxDecompressed });
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          return {
            key,
            buf: null,
            bytes,
            damaged: `gzip data decompresses to more than maxDecompressedBytes ${this.maxDecompressed}: if the file is genuine, raise .option('maxDecompressedBytes', ...) and the Lambda's memory, else remove it at the producer`,
          };
        }
        return { key, buf: null, bytes, damaged: `gzip data is damaged (${(e as Error).message}): re-upload the file under a new key` };
      }
    }
    this.held += buf.byteLength;
    this.peakHeld = Math.max(this.peakHeld, this.held);
    return { key, buf, bytes, damaged: null };
  }

  private parseOffset(offset: Json | null | undefined, what: string): string | null {
    if (offset === null || offset === undefined) return null;
    const key = (offset as { lastKey?: unknown }).lastKey;
    if (typeof offset !== 'object' || Array.isArray(offset) || typeof key !== 'string') {
      throw new CheckpointMismatchError(
        `${what} offset ${JSON.stringify(offset).slice(0, 100)} is not an S3 landing offset {"lastKey": "..."}, so the checkpoint belongs to another kind of source: ` +
          `use the source it was made with, or start this query on a new checkpoint prefix`,
        { details: { offset } },
      );
    }
    return key;
  }
}

function checkLimit(v: number | undefined, name: string, fallback = Infinity): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !(v > 0)) {
    throw new InvalidOptionError(`${name} ${v} must be a positive number; leave it out for ${fallback === Infinity ? 'no limit' : `the default ${fallback}`}`);
  }
  return v;
}

/** Index of the first file whose key sorts after `key` (0 for null). */
function upperBound(files: readonly LandingFile[], key: string | null): number {
  if (key === null) return 0;
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(files[mid].key, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A landing file as fetched, its bytes as stored. */
interface StoredFile {
  readonly key: string;
  readonly buf: Buffer;
  readonly bytes: number;
  readonly gzipped: boolean;
}

/** A landing file as fetched (and gunzipped), before parsing. */
interface FetchedFile {
  readonly key: string;
  /** The file's bytes, or null when they cannot be read (`damaged` says why). */
  readonly buf: Buffer | null;
  /** Bytes as stored (before gunzip). */
  readonly bytes: number;
  readonly damaged: string | null;
}

/**
 * Splits a file's bytes into lines and parses them (lib/engine/lines.ts), a chunk of rows at a
 * time. The bytes are decoded in pieces cut at newlines (a 0x0A byte never occurs inside a UTF-8
 * sequence), so no piece nears V8's string limit.
 */
function* parseFile(parse: LineParser, f: FetchedFile, pieceBytes: number): Generator<ReadResult> {
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
