/**
 * The checkpoint on S3: one prefix per query.
 *
 *     <prefix>/metadata          query id, created-at, stateful-shape fingerprint (overwritable)
 *     <prefix>/offsets/<N>       write-once, written before batch N runs
 *     <prefix>/commits/<N>       write-once, written after batch N's sink write and state commit
 *     <prefix>/progress/<N>      the batch's progress report (overwritable)
 *     <prefix>/sources/<i>/<x>   source-private logs, e.g. the file list of batch x (the landing
 *                                source writes it once: writeSourceLogOnce)
 *
 * Write-once entries, with `conditionalWrites` (the default; AWS and LocalStack enforce it):
 *
 *     PUT offsets/N  If-None-Match: *  ──200──▶ done                              (1 PUT)
 *                                      ──412──▶ GET offsets/N, same body? done   (1 PUT + 1 GET)
 *                                                             different? CheckpointMismatchError
 *
 * Without it (an endpoint that ignores If-None-Match would silently overwrite), the store checks first:
 *
 *     GET offsets/N ──404──▶ PUT offsets/N                                        (1 GET + 1 PUT)
 *                   ──200──▶ same body? done : CheckpointMismatchError
 *
 * The check-then-write leaves a window between GET and PUT; the DynamoDB lease is the fence that
 * keeps two runs out of it. `head()` costs one ListObjectsV2 of the whole prefix (more only past
 * 1000 keys; `purge` keeps the prefix short) and, at the same time, one GET of `metadata`.
 */
import { CheckpointMismatchError, InvalidOptionError } from '../../engine/errors';
import type { CheckpointHead, CheckpointStore, CommitEntry, Json, OffsetEntry, QueryMetadata } from '../../engine/ports';
import { httpStatus } from '../request/errors';
import { RetryableResult, retryPolicy, withRetry, type RetryOptions, type RetryPolicy } from '../request/retry';
import type { S3PrefixOptions } from './prefix';
import { checkBucket, checkPageSize, S3Requests, trimSlashes, type S3RequestStats } from './requests';

export interface S3CheckpointStoreOptions extends S3PrefixOptions {
  /** The query's own prefix, e.g. `checkpoints/orders-per-minute`. Never shared between queries. */
  readonly prefix: string;
  /**
   * Send `If-None-Match: *` on write-once entries (offsets, commits). AWS and LocalStack enforce
   * it; s3rver ignores it, so set false there to check with a GET before each write-once PUT.
   * @default true
   */
  readonly conditionalWrites?: boolean;
  /**
   * Keys per ListObjectsV2 page. Only tests lower it, to exercise pagination cheaply.
   * @default 1000 (S3's maximum)
   */
  readonly listPageSize?: number;
}

type WriteOnceLog = 'offsets' | 'commits';

/**
 * A conditional write-once PUT answered 409 (AWS: another conditional write of the key in flight),
 * or 412 for an entry gone before the GET (a concurrent purge): sent again, at most 4 times.
 */
const CONFLICT_RETRY: RetryOptions = { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 2000 };

export class S3CheckpointStore implements CheckpointStore {
  readonly description: string;
  private readonly bucket: string;
  private readonly root: string;
  private readonly conditionalWrites: boolean;
  private readonly pageSize: number;
  private readonly s3: S3Requests;
  private readonly conflictPolicy: RetryPolicy;

  constructor(opts: S3CheckpointStoreOptions) {
    this.bucket = checkBucket(opts.bucket, 'S3CheckpointStore');
    const prefix = trimSlashes(opts.prefix ?? '');
    if (prefix === '') {
      throw new InvalidOptionError(
        `S3CheckpointStore prefix ${JSON.stringify(opts.prefix)} is empty: give each query its own checkpoint prefix, e.g. "checkpoints/<query-name>"`,
      );
    }
    this.root = `${prefix}/`;
    this.conditionalWrites = opts.conditionalWrites ?? true;
    this.pageSize = checkPageSize(opts.listPageSize, 'S3CheckpointStore');
    this.s3 = new S3Requests(opts.client, opts, 'S3CheckpointStore');
    this.conflictPolicy = retryPolicy(CONFLICT_RETRY, 'S3CheckpointStore');
    this.description = `s3://${this.bucket}/${prefix}`;
  }

  /** Requests sent so far (each HTTP attempt counts), for benchmarks and request-cost tests. */
  stats(): S3RequestStats {
    return this.s3.stats();
  }

  async head(): Promise<CheckpointHead> {
    // The listing and the metadata at once (its key is known; a new checkpoint answers 404): a
    // run's start, and each task of a partitioned run, waits for one request less.
    const [objects, stored] = await Promise.all([
      this.s3.listAll(this.bucket, this.root, { pageSize: this.pageSize }),
      this.readJson<QueryMetadata>('metadata'),
    ]);
    let hasMetadata = false;
    let latestOffsetBatch = -1;
    let latestCommitBatch = -1;
    const rootLength = this.root.length;
    for (const o of objects) {
      const rel = o.key.slice(rootLength);
      if (rel === 'metadata') {
        hasMetadata = true;
      } else if (rel.startsWith('offsets/')) {
        const n = parseBatchId(rel, 8);
        if (n > latestOffsetBatch) latestOffsetBatch = n;
      } else if (rel.startsWith('commits/')) {
        const n = parseBatchId(rel, 8);
        if (n > latestCommitBatch) latestCommitBatch = n;
      }
    }
    const metadata = hasMetadata ? stored : null;
    return { metadata, latestOffsetBatch, latestCommitBatch };
  }

  async writeMetadata(meta: QueryMetadata): Promise<void> {
    await this.putJson('metadata', meta);
  }

  readOffsets(batchId: number): Promise<OffsetEntry | null> {
    return this.readJson<OffsetEntry>(`offsets/${checkBatchId(batchId)}`);
  }

  writeOffsets(entry: OffsetEntry): Promise<void> {
    return this.writeOnce('offsets', entry.batchId, entry);
  }

  readCommit(batchId: number): Promise<CommitEntry | null> {
    return this.readJson<CommitEntry>(`commits/${checkBatchId(batchId)}`);
  }

  writeCommit(entry: CommitEntry): Promise<void> {
    return this.writeOnce('commits', entry.batchId, entry);
  }

  async writeProgress(batchId: number, progress: Json): Promise<void> {
    await this.putJson(`progress/${checkBatchId(batchId)}`, progress);
  }

  readProgress(batchId: number): Promise<Json | null> {
    return this.readJson<Json>(`progress/${checkBatchId(batchId)}`);
  }

  readSourceLog(sourceIndex: number, name: string): Promise<string | null> {
    return this.s3.getText(this.bucket, this.key(sourceLogPath(sourceIndex, name)));
  }

  writeSourceLog(sourceIndex: number, name: string, body: string): Promise<void> {
    return this.s3.putText(this.bucket, this.key(sourceLogPath(sourceIndex, name)), body, 'application/json');
  }

  deleteSourceLog(sourceIndex: number, name: string): Promise<void> {
    return this.s3.deleteKeys(this.bucket, [this.key(sourceLogPath(sourceIndex, name))]);
  }

  /** Write-once `sources/<i>/<name>`: null when written, else the body already there (the caller compares). */
  async writeSourceLogOnce(sourceIndex: number, name: string, body: string): Promise<string | null> {
    const key = this.key(sourceLogPath(sourceIndex, name));
    if (this.conditionalWrites) return this.s3.putTextOnce(this.bucket, key, body, 'application/json');
    const stored = await this.s3.getText(this.bucket, key);
    if (stored !== null) return stored;
    await this.s3.putText(this.bucket, key, body, 'application/json');
    return null;
  }

  /**
   * Deletes offsets, commits, progress and source logs of batches below `keepFrom` (source logs
   * whose name is a batch ID; others stay). Metadata stays. One LIST (per 1000 keys) and one
   * DeleteObjects per 1000 deleted keys.
   */
  async purge(keepFrom: number): Promise<void> {
    if (!Number.isInteger(keepFrom)) {
      throw new InvalidOptionError(`purge(keepFrom) got ${keepFrom}, which is not an integer: pass the lowest batch ID to keep`);
    }
    const objects = await this.s3.listAll(this.bucket, this.root, { pageSize: this.pageSize });
    const doomed: string[] = [];
    const rootLength = this.root.length;
    for (const o of objects) {
      const rel = o.key.slice(rootLength);
      let n = -1;
      if (rel.startsWith('offsets/') || rel.startsWith('commits/')) n = parseBatchId(rel, 8);
      else if (rel.startsWith('progress/')) n = parseBatchId(rel, 9);
      else if (rel.startsWith('sources/')) {
        const slash = rel.indexOf('/', 8);
        if (slash > 8) n = parseBatchId(rel, slash + 1);
      }
      if (n >= 0 && n < keepFrom) doomed.push(o.key);
    }
    await this.s3.deleteKeys(this.bucket, doomed);
  }

  private key(rel: string): string {
    return this.root + rel;
  }

  private readJson<T>(rel: string): Promise<T | null> {
    return this.s3.getJson<T>(
      this.bucket,
      this.key(rel),
      (e) =>
        new CheckpointMismatchError(
          `checkpoint entry ${this.description}/${rel} is not valid JSON (${e.message}): restore the object from a backup or S3 versioning, or start the query on a new checkpoint prefix`,
          { cause: e, details: { key: this.key(rel) } },
        ),
    );
  }

  private putJson(rel: string, value: unknown): Promise<void> {
    return this.s3.putJson(this.bucket, this.key(rel), value);
  }

  private async writeOnce(log: WriteOnceLog, batchId: number, entry: OffsetEntry | CommitEntry): Promise<void> {
    const rel = `${log}/${checkBatchId(batchId)}`;
    const body = JSON.stringify(entry);
    const attempted = JSON.parse(body) as Json;

    if (!this.conditionalWrites) {
      const existing = await this.readJson<Json>(rel);
      if (existing !== null) return this.compareExisting(log, batchId, existing, attempted);
      return this.s3.putText(this.bucket, this.key(rel), body, 'application/json');
    }

    // 412: the entry exists, compare. 409, or a 412 whose entry is gone: see CONFLICT_RETRY.
    return withRetry(
      this.conflictPolicy,
      (e) => httpStatus(e) === 409,
      async () => {
        try {
          await this.s3.putText(this.bucket, this.key(rel), body, 'application/json', { onlyIfAbsent: true });
        } catch (e) {
          if (httpStatus(e) !== 412) throw e;
          const existing = await this.readJson<Json>(rel);
          if (existing === null) throw new RetryableResult(`${rel} answered 412 but is gone`, e);
          this.compareExisting(log, batchId, existing, attempted);
        }
      },
      { fail: ({ error }) => (error instanceof RetryableResult ? error.value : error) as Error },
    );
  }

  private compareExisting(log: WriteOnceLog, batchId: number, stored: Json, attempted: Json): void {
    // A commit's wall-clock time is not part of what it commits: a re-commit of the same batch
    // with the same offsets and watermarks is the same commit.
    const ignore = log === 'commits' ? 'committedAtMs' : undefined;
    if (jsonEqual(stored, attempted, ignore)) return;
    const what = log === 'offsets' ? 'offset' : 'commit';
    throw new CheckpointMismatchError(
      `batch ${batchId} already has a different ${what} entry in ${this.description}/${log}/${batchId} (they differ in ${differingKeys(stored, attempted, ignore)}), ` +
        `but ${log} entries are write-once: let one run at a time use this checkpoint (the lease), or start a changed query on a new checkpoint prefix`,
      { details: { batchId, key: this.key(`${log}/${batchId}`), stored, attempted } },
    );
  }
}

function sourceLogPath(sourceIndex: number, name: string): string {
  if (!Number.isInteger(sourceIndex) || sourceIndex < 0) {
    throw new InvalidOptionError(`source index ${sourceIndex} is not a non-negative integer: pass the source's position in the query (0 for the first)`);
  }
  if (typeof name !== 'string' || name === '' || name.includes('/')) {
    throw new InvalidOptionError(`source log name ${JSON.stringify(name)} must be a non-empty name without "/", e.g. the batch ID`);
  }
  return `sources/${sourceIndex}/${name}`;
}

function checkBatchId(batchId: number): number {
  if (!Number.isInteger(batchId) || batchId < 0) {
    throw new InvalidOptionError(`batch ID ${batchId} is not a non-negative integer: batch IDs count up from 0`);
  }
  return batchId;
}

/** The decimal batch ID at `rel[from..]`, or -1 when the rest is not a plain non-negative integer. */
function parseBatchId(rel: string, from: number): number {
  const n = rel.length;
  if (from >= n || n - from > 15) return -1;
  let v = 0;
  for (let i = from; i < n; i++) {
    const c = rel.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Deep equality of two JSON values, independent of key order, optionally ignoring a top-level key. */
function jsonEqual(a: Json, b: Json, ignoreTopKey?: string): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ak = Object.keys(a).filter((k) => k !== ignoreTopKey);
  const bk = Object.keys(b).filter((k) => k !== ignoreTopKey);
  if (ak.length !== bk.length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}

/** The top-level keys in which two entries differ, for the error about them (`their type` when either is no object). */
function differingKeys(a: Json, b: Json, ignoreTopKey?: string): string {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) || Array.isArray(b)) return 'their type';
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const differ = [...keys].filter((k) => k !== ignoreTopKey && !(k in a && k in b && jsonEqual(a[k], b[k])));
  return differ.map((k) => JSON.stringify(k)).join(', ');
}
