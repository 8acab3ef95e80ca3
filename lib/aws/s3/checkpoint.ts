/**
 * The checkpoint on S3: one prefix per query.
 *
 *     <prefix>/metadata          query id, created-at, stateful-shape fingerprint (overwritable)
 *     <prefix>/offsets/<N>       write-once, written before batch N runs
 *     <prefix>/commits/<N>       write-once, written after batch N's sink write and state commit
 *     <prefix>/progress/<N>      the batch's progress report (overwritable)
 *     <prefix>/sources/<i>/<x>   source-private logs, e.g. the file list of batch x (overwritable:
 *                                a plan whose offsets entry never landed is simply re-planned)
 *
 * Write-once entries, with `conditionalWrites` (the default; AWS and LocalStack enforce it):
 *
 *     PUT offsets/N  If-None-Match: *  ──200──▶ done                              (1 PUT)
 *                                      ──412──▶ GET offsets/N, same body? done   (1 PUT + 1 GET)
 *                                                             different? CheckpointMismatchError
 *
 * Without it (s3rver ignores If-None-Match and would silently overwrite), the store checks first:
 *
 *     GET offsets/N ──404──▶ PUT offsets/N                                        (1 GET + 1 PUT)
 *                   ──200──▶ same body? done : CheckpointMismatchError
 *
 * The check-then-write leaves a window between GET and PUT; the DynamoDB lease is the fence that
 * keeps two runs out of it. `head()` costs one ListObjectsV2 of the whole prefix (more only past
 * 1000 keys; `purge` keeps the prefix short) plus one GET of `metadata` when it exists.
 *
 * The end of this file holds the S3 request plumbing the S3 adapters share: request counters,
 * throttling retries with backoff and jitter, listing in S3's key order.
 */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { CheckpointMismatchError, InvalidOptionError, SluiceError } from '../../engine/errors';
import type {
  CheckpointHead,
  CheckpointStore,
  CommitEntry,
  Json,
  OffsetEntry,
  QueryMetadata,
} from '../../engine/ports';
import { sleep } from '../request/concurrency';
import { errorName, httpStatus } from '../request/errors';

export interface S3CheckpointStoreOptions extends S3RetryOptions {
  readonly client: S3Client;
  readonly bucket: string;
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

export class S3CheckpointStore implements CheckpointStore {
  readonly description: string;
  private readonly bucket: string;
  private readonly root: string;
  private readonly conditionalWrites: boolean;
  private readonly pageSize: number;
  private readonly s3: S3Requests;

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
    this.s3 = new S3Requests(opts.client, opts);
    this.description = `s3://${this.bucket}/${prefix}`;
  }

  /** Requests sent so far (each SDK attempt counts), for benchmarks and request-cost tests. */
  stats(): S3RequestStats {
    return this.s3.stats();
  }

  async head(): Promise<CheckpointHead> {
    const objects = await this.s3.listAll(this.bucket, this.root, { pageSize: this.pageSize });
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
    const metadata = hasMetadata ? await this.readJson<QueryMetadata>('metadata') : null;
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

  async readSourceLog(sourceIndex: number, name: string): Promise<string | null> {
    const got = await this.s3.getObject(this.bucket, this.key(sourceLogPath(sourceIndex, name)));
    return got === null ? null : bytesToString(got.body);
  }

  async writeSourceLog(sourceIndex: number, name: string, body: string): Promise<void> {
    await this.s3.putObject({ Bucket: this.bucket, Key: this.key(sourceLogPath(sourceIndex, name)), Body: Buffer.from(body, 'utf8'), ContentType: 'application/json' });
  }

  /**
   * Deletes offsets, commits, progress and source logs of batches below `keepFrom` (source logs
   * whose name is a batch ID; others stay). Metadata stays. One LIST (per 1000 keys) and one
   * DeleteObjects per 1000 deleted keys.
   */
  async purge(keepFrom: number): Promise<void> {
    if (!Number.isInteger(keepFrom)) {
      throw new InvalidOptionError(`purge(keepFrom) got ${keepFrom}: pass the lowest batch ID to keep, an integer`);
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

  private async readJson<T>(rel: string): Promise<T | null> {
    const got = await this.s3.getObject(this.bucket, this.key(rel));
    if (got === null) return null;
    return this.parseStored<T>(rel, bytesToString(got.body));
  }

  private parseStored<T>(rel: string, text: string): T {
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new CheckpointMismatchError(
        `checkpoint entry ${this.description}/${rel} is not valid JSON (${(e as Error).message}): the checkpoint is damaged. Restore the object from a backup or S3 versioning, or start the query on a new checkpoint prefix`,
        { cause: e, details: { key: this.key(rel) } },
      );
    }
  }

  private async putJson(rel: string, value: unknown): Promise<void> {
    await this.s3.putObject({ Bucket: this.bucket, Key: this.key(rel), Body: Buffer.from(JSON.stringify(value), 'utf8'), ContentType: 'application/json' });
  }

  private async writeOnce(log: WriteOnceLog, batchId: number, entry: OffsetEntry | CommitEntry): Promise<void> {
    const rel = `${log}/${checkBatchId(batchId)}`;
    const body = JSON.stringify(entry);
    const attempted = JSON.parse(body) as Json;
    const input = { Bucket: this.bucket, Key: this.key(rel), Body: Buffer.from(body, 'utf8'), ContentType: 'application/json' };

    if (!this.conditionalWrites) {
      const existing = await this.readJson<Json>(rel);
      if (existing !== null) return this.compareExisting(log, batchId, existing, attempted);
      await this.s3.putObject(input);
      return;
    }

    // 412: the entry exists, compare. 409 (AWS: a concurrent conditional write in flight) or a
    // 412 whose entry vanished before the GET (a concurrent purge): try again, a few times.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.s3.putObject({ ...input, IfNoneMatch: '*' });
        return;
      } catch (e) {
        const status = httpStatus(e);
        if (attempt < 3 && status === 409) {
          await sleep(backoffMs(attempt, 100, 2000));
          continue;
        }
        if (status !== 412) throw e;
        const existing = await this.readJson<Json>(rel);
        if (existing !== null) return this.compareExisting(log, batchId, existing, attempted);
        if (attempt >= 3) throw e;
      }
    }
  }

  private compareExisting(log: WriteOnceLog, batchId: number, stored: Json, attempted: Json): void {
    // A commit's wall-clock time is not part of what it commits: a re-commit of the same batch
    // with the same offsets and watermarks is the same commit.
    const ignore = log === 'commits' ? 'committedAtMs' : undefined;
    if (jsonEqual(stored, attempted, ignore)) return;
    const what = log === 'offsets' ? 'offset' : 'commit';
    throw new CheckpointMismatchError(
      `batch ${batchId} already has a different ${what} entry in ${this.description}/${log}/${batchId} ` +
        `(stored ${preview(stored)}, this run wrote ${preview(attempted)}): ${log} entries are write-once. ` +
        `Another run wrote this batch, or the query's sources changed under the same checkpoint. ` +
        `Make sure one run at a time uses this checkpoint (the lease), or start the changed query on a new checkpoint prefix`,
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
    if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}

function preview(v: Json): string {
  const s = JSON.stringify(v);
  return s.length > 300 ? `${s.slice(0, 300)}...` : s;
}

// ---------------------------------------------------------------------------------------------
// S3 request plumbing shared by the S3 adapters (checkpoint, landing source, sinks).
// ---------------------------------------------------------------------------------------------

export interface S3RequestStats {
  /** Every HTTP request sent, SDK retries included. */
  readonly requests: number;
  readonly gets: number;
  readonly puts: number;
  readonly lists: number;
  readonly deletes: number;
  /** Retries this layer made after the SDK's own retries gave up on throttling or a 5xx. */
  readonly throttleRetries: number;
}

export interface S3RetryOptions {
  /**
   * Extra attempts after the SDK's own retries when S3 throttles (SlowDown, 503) or fails with a
   * 5xx, with exponential backoff and full jitter.
   * @default 5
   */
  readonly maxThrottleRetries?: number;
  /** @default 200 */
  readonly retryBaseDelayMs?: number;
  /** @default 10000 */
  readonly retryMaxDelayMs?: number;
}

export interface S3ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
}

export interface S3GotObject {
  readonly body: Uint8Array;
  readonly etag: string;
  readonly contentEncoding: string;
}

type RequestKind = 'gets' | 'puts' | 'lists' | 'deletes';

type PutInput = ConstructorParameters<typeof PutObjectCommand>[0];

/** Sends S3 requests for one adapter: counts them, retries throttling, maps "not found" to null. */
export class S3Requests {
  private readonly counts = { requests: 0, gets: 0, puts: 0, lists: 0, deletes: 0, throttleRetries: 0 };
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly client: S3Client, opts: S3RetryOptions = {}) {
    if (!client || typeof (client as { send?: unknown }).send !== 'function') {
      throw new InvalidOptionError('the S3 adapters need `client`, an S3Client from @aws-sdk/client-s3: create it once per Lambda container and pass it in');
    }
    this.maxRetries = opts.maxThrottleRetries ?? 5;
    this.baseDelayMs = opts.retryBaseDelayMs ?? 200;
    this.maxDelayMs = opts.retryMaxDelayMs ?? 10_000;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) {
      throw new InvalidOptionError(`maxThrottleRetries ${this.maxRetries} must be a non-negative integer (0 leaves retries to the SDK)`);
    }
  }

  stats(): S3RequestStats {
    return { ...this.counts };
  }

  /** GetObject with the body read in full; null when the key does not exist. */
  getObject(bucket: string, key: string): Promise<S3GotObject | null> {
    return this.run('gets', `GetObject s3://${bucket}/${key}`, async () => {
      try {
        const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const body = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
        return { value: { body, etag: res.ETag ?? '', contentEncoding: res.ContentEncoding ?? '' }, attempts: res.$metadata.attempts };
      } catch (e) {
        if (isNoSuchKey(e)) return { value: null, attempts: attemptsOf(e) };
        throw e;
      }
    });
  }

  putObject(input: PutInput): Promise<void> {
    return this.run('puts', `PutObject s3://${input.Bucket}/${input.Key}`, async () => {
      const res = await this.client.send(new PutObjectCommand(input));
      return { value: undefined, attempts: res.$metadata.attempts };
    });
  }

  /**
   * Lists every object under `prefix` after `startAfter`, in S3's key order, stopping once past
   * `until` (inclusive bound) when given. Pages with StartAfter = the last key seen rather than
   * continuation tokens (s3rver's tokens need OpenSSL's legacy DES; StartAfter works everywhere).
   */
  async listAll(bucket: string, prefix: string, opts: { startAfter?: string | null; until?: string | null; pageSize?: number } = {}): Promise<S3ListedObject[]> {
    const out: S3ListedObject[] = [];
    const until = opts.until ?? null;
    let after = opts.startAfter ?? undefined;
    for (;;) {
      const page = await this.run('lists', `ListObjectsV2 s3://${bucket}/${prefix}`, async () => {
        const res = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, StartAfter: after, MaxKeys: opts.pageSize ?? 1000 }));
        return { value: res, attempts: res.$metadata.attempts };
      });
      const contents = page.Contents ?? [];
      for (const c of contents) {
        const key = c.Key!;
        if (until !== null && compareKeys(key, until) > 0) return out;
        out.push({ key, size: c.Size ?? 0, etag: c.ETag ?? '' });
      }
      if (!page.IsTruncated || contents.length === 0) return out;
      after = contents[contents.length - 1].Key!;
    }
  }

  /** DeleteObjects in batches of 1000; any per-key error fails the call (retriable). */
  async deleteKeys(bucket: string, keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const res = await this.run('deletes', `DeleteObjects s3://${bucket} (${chunk.length} keys)`, async () => {
        const r = await this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }));
        return { value: r, attempts: r.$metadata.attempts };
      });
      const errors = res.Errors ?? [];
      if (errors.length > 0) {
        const first = errors[0];
        throw new SluiceError(
          `DeleteObjects on s3://${bucket} failed for ${errors.length} of ${chunk.length} keys (first: ${first.Key}: ${first.Code} ${first.Message}): check the role may s3:DeleteObject there; the purge can be run again`,
          { retriable: true, details: { bucket, errors } },
        );
      }
    }
  }

  private async run<T>(kind: RequestKind, what: string, call: () => Promise<{ value: T; attempts?: number }>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        const { value, attempts } = await call();
        this.count(kind, attempts);
        return value;
      } catch (e) {
        this.count(kind, attemptsOf(e));
        if (errorName(e) === 'NoSuchBucket') {
          throw new SluiceError(`${what}: bucket does not exist: create it (deploy the stack, or ensureBucket for the local stack) or fix the bucket name`, { cause: e });
        }
        if (!isRetriable(e)) throw e;
        if (retry >= this.maxRetries) {
          throw new SluiceError(
            `${what} still failed after ${retry + 1} tries (${errorName(e)}, HTTP ${httpStatus(e) ?? '-'}): S3 is throttling or unavailable. The run can be retried; if it persists, lower the request rate (fewer, larger files; smaller parallelism) or spread keys over more prefixes`,
            { cause: e, retriable: true },
          );
        }
        this.counts.throttleRetries++;
        await sleep(backoffMs(retry, this.baseDelayMs, this.maxDelayMs));
      }
    }
  }

  private count(kind: RequestKind, attempts: number | undefined): void {
    const n = attempts && attempts > 0 ? attempts : 1;
    this.counts.requests += n;
    this.counts[kind] += n;
  }
}

const THROTTLING = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequestsException', 'RequestThrottled', 'ServiceUnavailable', 'InternalError', 'RequestTimeout']);
const NETWORK = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'TimeoutError']);

function isRetriable(e: unknown): boolean {
  const status = httpStatus(e);
  if (status === 429 || status === 500 || status === 502 || status === 503 || status === 504) return true;
  const name = errorName(e);
  if (THROTTLING.has(name) || NETWORK.has(name)) return true;
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && NETWORK.has(code);
}

function isNoSuchKey(e: unknown): boolean {
  const name = errorName(e);
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(e) === 404 && name !== 'NoSuchBucket');
}


function attemptsOf(e: unknown): number | undefined {
  return (e as { $metadata?: { attempts?: number } } | null)?.$metadata?.attempts;
}

/** Exponential backoff with full jitter: a uniform delay in [0, min(cap, base * 2^attempt)]. */
function backoffMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}


/**
 * Orders keys as S3 lists them (UTF-8 byte order). JavaScript's `<` compares UTF-16 code units,
 * which puts code points above U+FFFF (surrogate pairs) before U+E000..U+FFFF; this does not.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x < y ? -1 : 1;
    }
  }
  return a.length - b.length;
}

export function bytesToString(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

export function trimSlashes(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === 47) start++;
  while (end > start && s.charCodeAt(end - 1) === 47) end--;
  return s.slice(start, end);
}

export function checkBucket(bucket: unknown, who: string): string {
  if (typeof bucket !== 'string' || bucket.trim() === '') {
    throw new InvalidOptionError(`${who} bucket ${JSON.stringify(bucket)} is empty: pass the name of an existing S3 bucket`);
  }
  return bucket;
}

export function checkPageSize(size: number | undefined, who: string): number {
  const v = size ?? 1000;
  if (!Number.isInteger(v) || v < 1 || v > 1000) {
    throw new InvalidOptionError(`${who} listPageSize ${size} must be an integer from 1 to 1000 (S3's maximum page)`);
  }
  return v;
}
