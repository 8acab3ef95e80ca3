/**
 * A landing prefix on S3 as a streaming source: producers drop files (JSON lines, CSV, text or
 * Parquet, optionally gzipped; decoded by lib/engine/formats) under the prefix, each run reads the
 * files that arrived since the last one, whatever their keys (Spark's FileStreamSource: a
 * seen-files map, files taken by modification time). Its parts: landing-options.ts (the query's
 * options), landing-logs.ts (offsets and file lists), landing-seen.ts (seen logs),
 * landing-clean.ts (cleanSource), landing-files.ts (a file's bytes to rows).
 *
 * Which files: as Spark lists them (file-rules.ts): the prefix's own files and those in
 * `col=value` partition folders (their values become the declared partition columns), other
 * sub-folders only with recursiveFileLookup, never `_x`/`.x` names; pathGlobFilter on the name.
 * Folders naming a column the schema does not declare are reported once a run
 * (`undeclared-partition-columns`, with the type Spark would infer), not read.
 * How they are found: a FileDiscovery (discovery.ts), the listing by default.
 *
 * Offsets are `{ "batch": N }`: the batch whose file list (sources/<i>/N) is the last one read.
 * What the source has seen is stored beside it, so that it is bounded and consistent with the
 * offsets at every crash point:
 *
 *     sources/<i>/<N>        {start, end, files: key, size, etag, lastModifiedMs, partitions}
 *                            write-once, before offsets/N; a replay reads exactly these files
 *     sources/<i>/seen-<N>   the seen files as of batch N: the files read since the last snapshot
 *                            (`base`), or, every COMPACT_EVERY batches, a snapshot of the files
 *                            within maxFileAge of the newest (older ones forgotten); so a run reads
 *                            at most two. A pure function of the start and sources/<i>/<N>, so a
 *                            plan again after a crash writes the same; the logs older than a
 *                            committed snapshot are deleted (committed)
 *     sources/<i>/discovery  the listing's hint (discovery.ts), a cache
 *     sources/<i>/cleaned    cleanSource's progress: the last batch cleaned, keys left to retry
 *
 *     latestOffset(start)  the seen files as of start (seen-<start.batch> and its snapshot), one
 *                          discovery; the new files in order, kept in memory. Target:
 *                          {listedUntilMs, files}: a plan in another process (a partitioned
 *                          run's plan task) discovers again and takes files up to listedUntilMs
 *     planBatch(N, ...)    the first new files within the limits (maxBytesPerTrigger defaults
 *                          to 128 MiB of stored bytes); PUT sources/<i>/N once (a list already
 *                          there from the same start wins), PUT seen-<N>
 *     readChunks(N, s, e)  the file list (in memory, else GET sources/<i>/e.batch), GET each file
 *                          (8 ahead, as stored), gunzip the next while one is parsed (each at
 *                          most maxDecompressedBytes), decode by the format (JSON lines:
 *                          check UTF-8, split lines, parse); in the batch's order. A `.gz` file that is not gzip data is one dead letter.
 *     committed(N, e)      cleanSource (archive or delete the batch's files), best effort
 *
 * A checkpoint of the key-ordered source before it (offsets `{lastKey}`) keeps working: files
 * with a key up to lastKey count as seen, its logged batches replay as they were logged, and a
 * checkpoint that read files in sub-folders refuses to run without recursiveFileLookup.
 * Files must be immutable once written: a replay checks each file's ETag against the batch's log.
 * Directory markers are skipped; a zero-byte object is a file with no rows, as Spark's file stream
 * source lists it (the key-ordered source skipped them: its batches replay so). `stats()` counts the file GETs and LISTs;
 * `discoveryStats()` the LISTs spent finding files; the checkpoint's requests count in its own.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { CheckpointMismatchError, DataLossError, InvalidOptionError } from '../../engine/errors';
import { fileUri } from '../../engine/input-file';
import type { BatchLimits, CheckpointStore, DeadLetter, Json, ReadOptions, ReadResult, Row, Source } from '../../engine/ports';
import type { SourceBacklog } from '../../engine/progress';
import type { Schema } from '../../engine/schema';
import { type FileDecoder, fileDecoder } from '../../engine/formats';
import type { ReaderOptions } from '../../engine/formats/options';
import { S3Prefix } from './prefix';
import { checkLimit, type S3LandingSourceOptions } from './landing-options';
import { splitOf } from '../../engine/splits';
import { checkPageSize, type S3ListedObject } from './requests';
import { acceptsSuffix, classifyListing, undeclaredColumnsEvent } from './landing-listing';
import { type DiscoveryStats, type FileDiscovery, ListingDiscovery } from './discovery';
import { compileGlob, type ListingRules, partitionValues } from './file-rules';
import {
  type Candidate,
  fileOf,
  type FilesLog,
  type FilesTarget,
  type LoggedFile,
  loggedFile,
  type LogPlace,
  type ParsedOffset,
  parseJsonLog,
  parseOffset,
} from './landing-logs';
import { type FetchedFile, inflateFile, parseFile, type StoredFile } from './landing-files';
import { cleanUpTo } from './landing-clean';
import { type SeenAt, SeenLogs } from './landing-seen';
import { DEFAULT_MAX_FILE_AGE_MS, newFileRules, newFiles, type NewFileRules, stillNew, takeBatch } from './seen-files';

const _gunzipAsync = promisify(gunzip);

export type { S3LandingSourceOptions } from './landing-options';

/** Announced files HEADed at once before a batch logs them (notification mode). */
const HEAD_CONCURRENCY = 16;

/** What latestOffset found: the candidates (classified) and when they were found up to. */
interface Listing {
  readonly candidates: Candidate[];
  readonly listedUntilMs: number;
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
  /** The files' format and its reader options (lib/engine/formats). */
  private readonly format: string;
  private readonly readerOptions: ReaderOptions;
  /** The decoders of files, by their partition columns (decoderOf): Spark's data schema less those. */
  private readonly decoders = new Map<string, FileDecoder>();
  private readonly schema: Schema;
  private readonly checkpoint: CheckpointStore;
  private readonly sourceIndex: number;
  private readonly suffixes: readonly string[] | null;
  private readonly parallelism: number;
  private readonly pageSize: number;
  private readonly pieceBytes: number;
  private readonly maxDecompressed: number;
  private readonly limits: BatchLimits;
  private readonly log: (event: Record<string, unknown>) => void;
  private readonly rules: ListingRules;
  private readonly maxFileAgeMs: number;
  private readonly latestFirst: boolean;
  private readonly fileNameOnly: boolean;
  private readonly clean: 'off' | 'archive' | 'delete';
  private readonly archive: { readonly bucket: string; readonly root: string } | null;
  private readonly discovery: FileDiscovery;
  /** What the source has seen as of its offsets (sources/<i>/seen-<N>). */
  private readonly seen: SeenLogs;
  private listing: Listing | null = null;
  /**
   * The new files of the listing as of a start (its seen files) under some rules, in batch order:
   * computed once, and after each batch this instance plans, what the batch left (stillNew), so
   * that a run of many batches over 10^6 candidates does not look each up and sort them per batch.
   */
  private fresh: { readonly at: SeenAt; readonly rules: string; readonly files: Candidate[] } | null = null;
  /** The undeclared partition columns were reported (once an instance: each run's source is new). */
  private warnedUndeclared = false;
  /** Announced files found gone (404) before a batch logged them: not taken again this run. */
  private readonly gone = new Set<string>();
  /** File bytes held by reads now, and the most at once (peakHeldBytes). */
  private held = 0;
  private peakHeld = 0;
  /** Batches planned by this instance, so the first read needs no GET of the log it just wrote. */
  private readonly planned = new Map<number, FilesLog>();

  constructor(opts: S3LandingSourceOptions) {
    super(opts, 'S3LandingSource');
    if (!opts.schema || !Array.isArray(opts.schema.columns)) {
      throw new InvalidOptionError('S3LandingSource needs `schema`: parse the declared columns with parseSchema("user STRING, event_time TIMESTAMP, ...")');
    }
    this.schema = opts.schema;
    this.format = opts.format ?? 'json';
    this.readerOptions = opts.readerOptions ?? {};
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
    this.rules = { recursiveFileLookup: opts.recursiveFileLookup ?? false, glob: opts.pathGlobFilter !== undefined ? compileGlob(opts.pathGlobFilter) : null };
    this.maxFileAgeMs = opts.maxFileAgeMs ?? DEFAULT_MAX_FILE_AGE_MS;
    if (!(this.maxFileAgeMs >= 0))
      throw new InvalidOptionError(`S3LandingSource maxFileAgeMs ${opts.maxFileAgeMs} must be a number of ms, 0 or more: leave it out for 7 days`);
    this.latestFirst = opts.latestFirst ?? false;
    this.fileNameOnly = opts.fileNameOnly ?? false;
    this.clean = opts.cleanSource ?? 'off';
    if (this.clean === 'archive') {
      const dir = opts.sourceArchiveDir;
      if (!dir) throw new InvalidOptionError("option cleanSource 'archive' needs sourceArchiveDir, e.g. .option('sourceArchiveDir', 's3://bucket/archive/')");
      const root = dir.prefix === '' || dir.prefix.endsWith('/') ? dir.prefix : `${dir.prefix}/`;
      if (dir.bucket === this.bucket && (root.startsWith(this.root) || this.root.startsWith(root))) {
        throw new InvalidOptionError(
          `sourceArchiveDir s3://${dir.bucket}/${root} overlaps the source ${this.description}: archived files would be listed again (Spark refuses it too); archive to another prefix`,
        );
      }
      this.archive = { bucket: dir.bucket, root };
    } else this.archive = null;
    this.seen = new SeenLogs(this.checkpoint, this.sourceIndex, (batch) => this.filesLog(batch), this.log);
    this.discovery =
      opts.discovery ??
      new ListingDiscovery({
        s3: this.s3,
        bucket: this.bucket,
        root: this.root,
        pageSize: this.pageSize,
        hints: {
          read: () => this.checkpoint.readSourceLog(this.sourceIndex, 'discovery'),
          write: (body) => this.checkpoint.writeSourceLog(this.sourceIndex, 'discovery', body),
        },
        fullListingMaxObjects: opts.fullListingMaxObjects,
        backfillIntervalMs: opts.backfillIntervalMs,
        recentFoldersMaxLists: opts.recentFoldersMaxLists,
        now: opts.now,
      });
  }

  private get logPlace(): LogPlace {
    return { checkpoint: this.checkpoint.description, sourceIndex: this.sourceIndex };
  }

  /** The LISTs (and full or incremental listings) spent finding files, for benchmarks and tests. */
  discoveryStats(): DiscoveryStats {
    return this.discovery.stats();
  }

  /** Spark's rules for what is new under these limits (seen-files.ts). */
  private newRules(limits: BatchLimits): NewFileRules {
    return newFileRules({ maxFileAgeMs: this.maxFileAgeMs, latestFirst: this.latestFirst, fileNameOnly: this.fileNameOnly }, limits);
  }

  /** The new files of this run's listing as of `at`, in batch order (kept: see `fresh`). */
  private newOf(at: SeenAt, listing: Listing, limits: BatchLimits): Candidate[] {
    const rules = this.newRules(limits);
    const key = JSON.stringify(rules);
    if (this.fresh && this.fresh.at === at && this.fresh.rules === key) return this.fresh.files;
    const files = newFiles(at.seen, listing.candidates, rules);
    this.fresh = { at, rules: key, files };
    return files;
  }

  /** One discovery, kept for planBatch and backlog; the target says how many files are new now. */
  async latestOffset(start: Json | null): Promise<Json | null> {
    const { at, listing } = await this.seenAndListing(start, true);
    this.fresh = null; // of another listing
    const fresh = this.newOf(at, listing, this.limits);
    // seen already (a duplicate or redelivered notification) or older than maxFileAge: never read
    const taken = new Set(fresh.map((f) => f.key));
    await this.forget(listing.candidates.filter((c) => !taken.has(c.key)).map((c) => c.key));
    if (fresh.length === 0) return start;
    const target: FilesTarget = { listedUntilMs: listing.listedUntilMs, files: fresh.length };
    return target as unknown as Json;
  }

  async planBatch(batchId: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    const t = target as unknown as Partial<FilesTarget> | null;
    if (!t || typeof t !== 'object' || typeof t.listedUntilMs !== 'number') return null; // nothing was new at the run's start
    const maxFiles = checkLimit(limits.maxFilesPerTrigger, 'maxFilesPerTrigger');
    const maxBytes = checkLimit(limits.maxBytesPerTrigger, 'maxBytesPerTrigger', DEFAULT_MAX_BYTES_PER_TRIGGER);
    const { at, listing } = await this.seenAndListing(start, false);
    const all = this.newOf(at, listing, limits);
    const fresh = all.filter((c) => c.lastModifiedMs <= t.listedUntilMs!);
    if (fresh.length === 0) return null;
    const taken = this.discovery.announced ? await this.takePresent(fresh, maxFiles, maxBytes) : takeBatch(fresh, maxFiles, maxBytes);
    if (taken.length === 0) return null;
    const files = taken.map(loggedFile);
    // A list logged by an earlier plan of this batch (its offsets never landed) is the batch: logOnce adopts it.
    const planned: FilesLog = { version: 2, batchId, start, end: { batch: batchId }, files };
    const log = await this.logOnce(batchId, planned, start);
    const next = await this.seen.write(batchId, at, log.files, this.newRules(limits).maxFileAgeMs);
    // the batch took the first of the new files (not so when an adopted list or a HEAD decided): the rest stays new
    const prefix = log === planned && !this.discovery.announced && fresh.length === all.length;
    this.fresh = prefix
      ? { at: next, rules: JSON.stringify(this.newRules(limits)), files: stillNew(next.seen, all.slice(taken.length), this.newRules(limits), taken) }
      : null;
    this.planned.set(batchId, log);
    return log.end as unknown as Json;
  }

  /**
   * The first files of `fresh` within the limits that still exist (HEAD each): an announced file
   * may have been deleted since its notification. One found gone is dropped and forgotten before
   * any batch logs it, and the next files take its place; once a batch logged a file, a missing
   * one is a DataLossError at read, as in listing mode. The HEAD's size and ETag are logged.
   */
  private async takePresent(fresh: readonly Candidate[], maxFiles: number, maxBytes: number): Promise<Candidate[]> {
    let rest = fresh.filter((f) => !this.gone.has(f.key));
    while (rest.length > 0) {
      const batch = takeBatch(rest, maxFiles, maxBytes);
      const heads: Array<S3ListedObject | null> = [];
      for (let i = 0; i < batch.length; i += HEAD_CONCURRENCY)
        heads.push(...(await Promise.all(batch.slice(i, i + HEAD_CONCURRENCY).map((f) => this.s3.headObject(this.bucket, f.key)))));
      const missing = batch.filter((_, i) => heads[i] === null).map((f) => f.key);
      if (missing.length === 0) return batch.map((f, i) => ({ ...f, size: heads[i]!.size, etag: heads[i]!.etag || f.etag }));
      for (const key of missing) this.gone.add(key);
      this.log({
        event: 'announced-file-gone',
        keys: missing,
        message: `${missing.length} announced file(s) no longer exist (deleted after their notification): not read, their notifications deleted`,
      });
      await this.forget(missing);
      rest = rest.filter((f) => !this.gone.has(f.key));
    }
    return [];
  }

  /** Candidates the source will not read: the discovery lets go of them (notification mode deletes their messages). */
  private async forget(keys: readonly string[]): Promise<void> {
    if (keys.length === 0 || !this.discovery.forget) return;
    try {
      await this.discovery.forget(keys);
    } catch (e) {
      // never fails the run: a notification left comes back and is dropped again
      this.log({ event: 'discovery-forget-failed', keys: keys.length, error: (e as Error).message });
    }
  }

  /** A stored file list for this batch: taken when it starts where the batch starts. */
  private adopt(batchId: number, start: Json | null, stored: string): FilesLog {
    const existing = parseJsonLog(this.logPlace, batchId, stored, 2);
    if (JSON.stringify(existing.start ?? null) === JSON.stringify(start ?? null)) {
      this.log({ event: 'source-log-adopted', batchId, files: existing.files.length });
      return existing;
    }
    throw new CheckpointMismatchError(
      `the file list of batch ${batchId} (${this.checkpoint.description}/sources/${this.sourceIndex}/${batchId}) starts at ${JSON.stringify(existing.start)}, but the batch starts at ${JSON.stringify(start)}, ` +
        `and file lists are write-once: let one run at a time use this checkpoint, or start the query on a new checkpoint prefix`,
      { details: { batchId, storedStart: existing.start, start } },
    );
  }

  /**
   * Writes the batch's file list once. A list already there (a plan of the same batch whose
   * offsets never landed, or a run racing this one) wins when it starts where this batch starts.
   */
  private async logOnce(batchId: number, log: FilesLog, start: Json | null): Promise<FilesLog> {
    const body = JSON.stringify(log);
    const stored = await this.checkpoint.writeSourceLogOnce(this.sourceIndex, String(batchId), body);
    if (stored === null || stored === body) return log;
    return this.adopt(batchId, start, stored);
  }

  /**
   * The seen files as of `start`, and the run's listing (`this.listing`): one discovery, made
   * again only when `relist` (latestOffset) or when this instance has none yet; both read at once.
   */
  private async seenAndListing(start: Json | null, relist: boolean): Promise<{ at: SeenAt; listing: Listing }> {
    const seen = this.seen.as(start);
    if (this.listing && !relist) return { at: await seen, listing: this.listing };
    const [at, found] = await Promise.all([seen, this.discovery.discover()]);
    this.listing = await this.classify(found, at);
    return { at, listing: this.listing };
  }

  /**
   * The candidates of one discovery, classified by Spark's listing rules (landing-listing.ts); what
   * the rules never read is let go of (forget).
   */
  private async classify({ files, complete }: Awaited<ReturnType<FileDiscovery['discover']>>, at: SeenAt): Promise<Listing> {
    const { candidates, listedUntilMs, dropped } = classifyListing(files, complete, {
      root: this.root,
      rules: this.rules,
      suffixes: this.suffixes,
      legacyLastKey: at.seen.legacyLastKey,
      description: this.description,
      bucket: this.bucket,
    });
    if (!this.warnedUndeclared) {
      const event = undeclaredColumnsEvent(this.schema, candidates, this.description);
      if (event) {
        this.warnedUndeclared = true;
        this.log(event);
      }
    }
    // outside Spark's listing rules (pathGlobFilter, sub-folders, `_`/`.` names, empty): never read
    await this.forget(dropped);
    return { candidates, listedUntilMs };
  }

  /** A partitioned run's splits of the batch: contiguous groups of its files, at most one a file. */
  async planSplits(batchId: number, start: Json | null, end: Json, maxSplits: number): Promise<number> {
    const { files } = await this.batchFiles(batchId, start, end);
    return Math.max(1, Math.min(maxSplits, files.length));
  }

  /** The whole batch at once: the chunks of `readChunks`, concatenated. */
  async read(batchId: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const chunks: ReadResult[] = [];
    let rowCount = 0;
    let deadCount = 0;
    let bytes = 0;
    let files = 0;
    for await (const c of this.readChunks(batchId, start, end, options)) {
      chunks.push(c);
      rowCount += c.rows.length;
      deadCount += c.deadLetters.length;
      bytes += c.bytes;
      files += c.files ?? 0;
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
    return { rows, deadLetters, bytes, files };
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
    const listed = await this.batchFiles(batchId, start, end);
    const fromLog = listed.fromLog;
    // a partitioned run's read task takes one contiguous group of the batch's files
    const files = options?.split ? splitOf(listed.files, options.split) : listed.files;
    this.checkReplaySize(batchId, files);
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
          yield* parseFile(this.decoderOf(fetched.partitions), fetched, options?.columns);
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

  /**
   * The decoder of a file: Spark's data schema, the declared columns less the file's partition
   * columns (their values come from its folders; a record need not hold them).
   */
  private decoderOf(partitions: ReadonlyArray<readonly [string, unknown]>): FileDecoder {
    const names = partitions.map(([c]) => c);
    const key = names.join('/');
    let d = this.decoders.get(key);
    if (!d) {
      const schema = names.length ? { ddl: this.schema.ddl, columns: this.schema.columns.filter((c) => !names.includes(c.name)) } : this.schema;
      d = fileDecoder(schema, this.format, this.readerOptions, this.pieceBytes);
      this.decoders.set(key, d);
    }
    return d;
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
  private checkReplaySize(batchId: number, files: readonly LoggedFile[]): void {
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

  /** What is left of the run's new files after `from`, and their stored bytes, from the run's discovery. */
  async backlog(from: Json | null, target: Json | null): Promise<SourceBacklog> {
    const t = target as unknown as Partial<FilesTarget> | null;
    if (!t || typeof t !== 'object' || typeof t.listedUntilMs !== 'number') return { files: 0, bytes: 0 };
    // (a process that has not listed, lists once, as a plan does)
    const { at, listing } = await this.seenAndListing(from, false);
    const fresh = this.newOf(at, listing, this.limits).filter((c) => c.lastModifiedMs <= t.listedUntilMs!);
    let bytes = 0;
    for (const f of fresh) bytes += f.size;
    return { files: fresh.length, bytes };
  }

  /**
   * Batch `batchId` committed: cleanSource archives or deletes the files of every batch of this
   * source up to it not cleaned yet (a crash after a commit leaves them to the next call), and
   * the seen logs below a committed snapshot are deleted. Never throws: a failure is logged, and
   * what failed is tried again on the next call.
   */
  async committed(batchId: number, end: Json): Promise<void> {
    const off = parseOffset(end, 'end');
    if (off.kind !== 'files') return;
    await this.seen.dropOld(off.batch);
    const keys: string[] = [];
    try {
      if (this.clean !== 'off') {
        const place = { s3: this.s3, bucket: this.bucket, checkpoint: this.checkpoint, sourceIndex: this.sourceIndex, archive: this.archive };
        await cleanUpTo(place, off.batch, keys, (b) => this.filesLog(b), this.log);
      }
      if (this.discovery.committed) {
        const log = await this.filesLog(off.batch);
        if (log) await this.discovery.committed(log.files.map((f) => f.key));
      }
    } catch (e) {
      this.log({
        event: 'clean-source-failed',
        batchId,
        error: (e as Error).message,
        message: `cleaning the files of batch ${batchId} failed; the next batch's commit tries again`,
      });
    }
  }

  // -------------------------------------------------------------------------------------------

  /** The file list of batch `batch` of this source (in memory when planned here), or null. */
  private async filesLog(batch: number): Promise<FilesLog | null> {
    const planned = this.planned.get(batch);
    if (planned) return planned;
    const text = await this.checkpoint.readSourceLog(this.sourceIndex, String(batch));
    return text === null ? null : parseJsonLog(this.logPlace, batch, text, 2);
  }

  /** The batch's file list: planned here or logged in the checkpoint (a replay); a key-ordered checkpoint's, or re-listed. */
  private async batchFiles(batchId: number, start: Json | null, end: Json): Promise<{ files: LoggedFile[]; fromLog: boolean }> {
    const e = parseOffset(end, 'end');
    if (e.kind === 'none') return { files: [], fromLog: true };
    if (e.kind === 'legacy') return this.legacyBatchFiles(batchId, parseOffset(start, 'start'), e.lastKey);
    if (JSON.stringify(start ?? null) === JSON.stringify(end)) return { files: [], fromLog: true };
    const log = await this.filesLog(e.batch);
    if (log === null) {
      throw new CheckpointMismatchError(
        `the file list of batch ${e.batch} (${this.checkpoint.description}/sources/${this.sourceIndex}/${e.batch}) is missing, so batch ${batchId} cannot be read as it was planned: ` +
          `restore the object (e.g. from S3 versioning), or start the query on a new checkpoint prefix`,
        { details: { batchId } },
      );
    }
    return { files: log.files, fromLog: true };
  }

  /** A batch planned by the key-ordered source: its version-1 log, else (s, e] listed again. */
  private async legacyBatchFiles(batchId: number, s: ParsedOffset, endKey: string): Promise<{ files: LoggedFile[]; fromLog: boolean }> {
    const startKey = s.kind === 'legacy' ? s.lastKey : null;
    const text = await this.checkpoint.readSourceLog(this.sourceIndex, String(batchId));
    if (text !== null) {
      const log = parseJsonLog(this.logPlace, batchId, text, 1);
      if ((log.start?.lastKey ?? null) === startKey && log.end.lastKey === endKey) return { files: log.files.map(fileOf), fromLog: true };
    }
    const listed = await this.s3.listAll(this.bucket, this.root, { startAfter: startKey, until: endKey, pageSize: this.pageSize });
    return { files: listed.filter((o) => o.size > 0 && !o.key.endsWith('/') && acceptsSuffix(o.key, this.suffixes)).map(fileOf), fromLog: false };
  }

  /** GETs a file and checks it is the one the batch planned; its bytes as stored (decompressed later: inflate). */
  private async readFile(batchId: number, file: LoggedFile, fromLog: boolean): Promise<StoredFile> {
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
    const gzipKey = file.key.endsWith('.gz');
    const gzipped = gzipKey || got.contentEncoding.toLowerCase().includes('gzip');
    const parts = partitionValues(this.schema, file.partitions ?? []);
    return {
      key: file.key,
      file: { path: fileUri(`s3://${this.bucket}`, file.key), size: got.body.byteLength, modifiedMs: file.lastModifiedMs > 0 ? file.lastModifiedMs : null },
      buf,
      bytes: got.body.byteLength,
      gzipped,
      gzipKey,
      partitions: 'values' in parts ? parts.values : [],
      badPartition: 'error' in parts ? parts.error : null,
    };
  }

  /** A fetched file's bytes, gunzipped (at most maxDecompressedBytes) when it is gzip data; counted as held. */
  private async inflate(stored: StoredFile): Promise<FetchedFile> {
    const f = await inflateFile(stored, this.maxDecompressed);
    if (f.buf !== null) {
      this.held += f.buf.byteLength;
      this.peakHeld = Math.max(this.peakHeld, this.held);
    }
    return f;
  }
}
