/**
 * The S3 request layer the S3 adapters (checkpoint, landing source, sinks, dead letters) share:
 * every request goes through `withRetry` (lib/aws/request/retry.ts) with S3's retriable-error
 * table, is counted per kind, and "not found" comes back as null.
 *
 *     call ─✗ SlowDown / 5xx / network ─▶ backoff ─▶ call again … up to maxAttempts ─▶ SluiceError (retriable)
 *          ─✗ NoSuchBucket             ─▶ SluiceError naming the remedy
 *          ─✗ anything else            ─▶ thrown as the SDK threw it (the caller may read its status)
 *
 * The SDK clients make one attempt per `send` (lib/aws/clients.ts), so each call counts as one
 * HTTP request. Listings page with StartAfter and compare keys in S3's order (`compareKeys`).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { errorName, httpStatus, isRetriable } from '../request/errors';
import { RetryableResult, retryPolicy, withRetry, type RetryFailure, type RetryOptions, type RetryPolicy } from '../request/retry';

export interface S3RequestStats {
  /** Every HTTP request sent, retries included. */
  readonly requests: number;
  readonly gets: number;
  readonly puts: number;
  readonly lists: number;
  readonly deletes: number;
  /** Requests sent again after throttling, a 5xx or a network failure. */
  readonly throttleRetries: number;
}

export interface S3ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  /** LastModified in ms, as S3 set it when the object was written (0 when the endpoint gave none). */
  readonly lastModifiedMs?: number;
}

export interface S3GotObject {
  readonly body: Uint8Array;
  readonly etag: string;
  readonly contentEncoding: string;
}

type RequestKind = 'gets' | 'puts' | 'lists' | 'deletes';

/** S3's longest key: 1,024 bytes of UTF-8 (a longer one is refused with 400 KeyTooLongError). */
export const S3_KEY_MAX_BYTES = 1024;

/**
 * A write-once PUT answered 409 (AWS: another conditional write of the key in flight), or 412 for
 * an object gone before the GET that reads it: sent again, at most 4 times.
 */
const CONFLICT_RETRY: RetryOptions = { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 2000 };

type PutInput = ConstructorParameters<typeof PutObjectCommand>[0];

/** Sends S3 requests for one adapter: counts them, retries what S3 says may pass, maps "not found" to null. */
export class S3Requests {
  private readonly counts = { requests: 0, gets: 0, puts: 0, lists: 0, deletes: 0, throttleRetries: 0 };
  private readonly policy: RetryPolicy;
  private readonly conflictPolicy: RetryPolicy;

  /** `who` names the adapter in the errors about its options. */
  constructor(
    private readonly client: S3Client,
    opts: RetryOptions = {},
    who = 'S3 adapter',
  ) {
    if (!client || typeof (client as { send?: unknown }).send !== 'function') {
      throw new InvalidOptionError(`${who} needs \`client\`, an S3Client from @aws-sdk/client-s3: create it once per Lambda container and pass it in`);
    }
    this.policy = retryPolicy(opts, who);
    this.conflictPolicy = retryPolicy(CONFLICT_RETRY, who);
  }

  stats(): S3RequestStats {
    return { ...this.counts };
  }

  /**
   * Write-once PutObject of UTF-8 text: null when it was written, else the text the key already
   * holds, for the caller to compare. S3 answers an existing key with 412 (If-None-Match: *):
   *
   *     PUT If-None-Match: *  ──200──▶ null                           (1 PUT)
   *                           ──412──▶ GET ──▶ the stored text         (1 PUT + 1 GET)
   *                           ──409, or 412 and the GET finds nothing ──▶ again (CONFLICT_RETRY)
   */
  async putTextOnce(bucket: string, key: string, text: string, contentType: string): Promise<string | null> {
    const stored = await this.putBytesOnce(bucket, key, Buffer.from(text, 'utf8'), contentType);
    return stored === null ? null : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength).toString('utf8');
  }

  /** putTextOnce for bytes (a Parquet object): null when written, else the bytes the key holds. */
  putBytesOnce(bucket: string, key: string, body: Uint8Array, contentType: string): Promise<Uint8Array | null> {
    return withRetry(
      this.conflictPolicy,
      (e) => httpStatus(e) === 409,
      async () => {
        const refused = await this.tryPutIfAbsent(bucket, key, body, contentType);
        if (refused === null) return null;
        const stored = await this.getObject(bucket, key);
        if (stored === null) throw new RetryableResult(`s3://${bucket}/${key} answered 412 but is gone`, refused);
        return stored.body;
      },
      { fail: ({ error }) => (error instanceof RetryableResult ? error.value : error) as Error },
    );
  }

  /**
   * Write-once PutObject (If-None-Match: *) that leaves the comparison to the caller: true when it
   * was written, false when the key exists (412). A 409 (another conditional write in flight) is
   * sent again (CONFLICT_RETRY).
   */
  putBytesIfAbsent(bucket: string, key: string, body: Uint8Array, contentType: string): Promise<boolean> {
    return withRetry(
      this.conflictPolicy,
      (e) => httpStatus(e) === 409,
      async () => (await this.tryPutIfAbsent(bucket, key, body, contentType)) === null,
    );
  }

  /** One write-once PutObject (If-None-Match: *): null when written, else S3's 412 refusal (the key exists). */
  private async tryPutIfAbsent(bucket: string, key: string, body: Uint8Array, contentType: string): Promise<unknown> {
    try {
      await this.putBytes(bucket, key, body, contentType, { onlyIfAbsent: true });
      return null;
    } catch (e) {
      if (httpStatus(e) === 412) return e;
      throw e;
    }
  }

  /**
   * GetObject with the body as a stream of byte chunks, for an object too large to hold (read it
   * once, to the end); null when the key does not exist. The request is retried; a failure while
   * the body streams is thrown to the reader.
   */
  getStream(bucket: string, key: string): Promise<AsyncIterable<Uint8Array> | null> {
    return this.run('gets', `GetObject s3://${bucket}/${key}`, async () => {
      try {
        const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return (res.Body as AsyncIterable<Uint8Array> | undefined) ?? emptyStream();
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    });
  }

  /** CreateMultipartUpload: the upload's ID. */
  async createMultipartUpload(bucket: string, key: string, contentType: string): Promise<string> {
    const res = await this.run('puts', `CreateMultipartUpload s3://${bucket}/${key}`, () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType })),
    );
    if (!res.UploadId) throw new SluiceError(`CreateMultipartUpload s3://${bucket}/${key} answered without an UploadId: the endpoint is not S3-compatible`);
    return res.UploadId;
  }

  /** UploadPart: the part's ETag, for the completion. */
  async uploadPart(bucket: string, key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<string> {
    const res = await this.run('puts', `UploadPart ${partNumber} of s3://${bucket}/${key}`, () =>
      this.client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, Body: body })),
    );
    return res.ETag ?? '';
  }

  /**
   * CompleteMultipartUpload with If-None-Match: * (S3 makes the object only if the key is absent):
   * true when it made the object, false when the key exists (412; the upload is left, for the
   * caller to abort). A 409 is sent again (CONFLICT_RETRY).
   */
  completeMultipartUploadIfAbsent(bucket: string, key: string, uploadId: string, etags: readonly string[]): Promise<boolean> {
    const parts = etags.map((ETag, i) => ({ ETag, PartNumber: i + 1 }));
    return withRetry(
      this.conflictPolicy,
      (e) => httpStatus(e) === 409,
      async () => {
        try {
          await this.run('puts', `CompleteMultipartUpload s3://${bucket}/${key}`, () =>
            this.client.send(
              new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, IfNoneMatch: '*', MultipartUpload: { Parts: parts } }),
            ),
          );
          return true;
        } catch (e) {
          if (httpStatus(e) === 412) return false;
          throw e;
        }
      },
    );
  }

  /** AbortMultipartUpload, best effort: a failure is left to the bucket's lifecycle rule for incomplete uploads. */
  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    try {
      await this.run('deletes', `AbortMultipartUpload s3://${bucket}/${key}`, () =>
        this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })),
      );
    } catch {
      // the parts stay until the lifecycle rule removes them; the write's own outcome stands
    }
  }

  /** GetObject with the body read in full; null when the key does not exist. */
  getObject(bucket: string, key: string): Promise<S3GotObject | null> {
    return this.run('gets', `GetObject s3://${bucket}/${key}`, async () => {
      try {
        const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const body = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
        return { body, etag: res.ETag ?? '', contentEncoding: res.ContentEncoding ?? '' };
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    });
  }

  /** HeadObject (counted with the GETs): size, ETag and LastModified; null when the key does not exist. */
  headObject(bucket: string, key: string): Promise<S3ListedObject | null> {
    return this.run('gets', `HeadObject s3://${bucket}/${key}`, async () => {
      try {
        const res = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { key, size: res.ContentLength ?? 0, etag: res.ETag ?? '', lastModifiedMs: res.LastModified?.getTime() ?? 0 };
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    });
  }

  /** Bytes [start, end) of the object as UTF-8 text (a range GET: `Range: bytes=start-(end-1)`); null when the key does not exist. */
  getRangeText(bucket: string, key: string, start: number, end: number): Promise<string | null> {
    return this.run('gets', `GetObject s3://${bucket}/${key} bytes=${start}-${end - 1}`, async () => {
      try {
        const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }));
        const body = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
        return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
      } catch (e) {
        if (isNoSuchKey(e)) return null;
        throw e;
      }
    });
  }

  /** The object as UTF-8 text; null when the key does not exist. */
  async getText(bucket: string, key: string): Promise<string | null> {
    const got = await this.getObject(bucket, key);
    return got === null ? null : Buffer.from(got.body.buffer, got.body.byteOffset, got.body.byteLength).toString('utf8');
  }

  /** The object parsed as one JSON value; null when the key does not exist; `damaged` builds the error for text that is not JSON. */
  async getJson<T>(bucket: string, key: string, damaged: (cause: Error) => Error): Promise<T | null> {
    const text = await this.getText(bucket, key);
    if (text === null) return null;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw damaged(e as Error);
    }
  }

  /** PutObject of UTF-8 text; `onlyIfAbsent` sends `If-None-Match: *` (a 412 when the key exists, where S3 enforces it). */
  putText(bucket: string, key: string, text: string, contentType: string, opts: { onlyIfAbsent?: boolean } = {}): Promise<void> {
    return this.putBytes(bucket, key, Buffer.from(text, 'utf8'), contentType, opts);
  }

  /** PutObject of bytes; `onlyIfAbsent` as for putText. */
  putBytes(bucket: string, key: string, body: Uint8Array, contentType: string, opts: { onlyIfAbsent?: boolean } = {}): Promise<void> {
    const input: PutInput = { Bucket: bucket, Key: key, Body: body, ContentType: contentType };
    if (opts.onlyIfAbsent) input.IfNoneMatch = '*';
    return this.run('puts', `PutObject s3://${bucket}/${key}`, async () => {
      await this.client.send(new PutObjectCommand(input));
    });
  }

  /** PutObject of `value` as JSON. */
  putJson(bucket: string, key: string, value: unknown): Promise<void> {
    return this.putText(bucket, key, JSON.stringify(value), 'application/json');
  }

  /**
   * Lists every object under `prefix` after `startAfter`, in S3's key order, stopping once past
   * `until` (inclusive bound) when given. Pages with StartAfter = the last key seen rather than
   * continuation tokens (s3rver's tokens need OpenSSL's legacy DES; StartAfter works everywhere).
   */
  async listAll(
    bucket: string,
    prefix: string,
    opts: { startAfter?: string | null; until?: string | null; pageSize?: number } = {},
  ): Promise<S3ListedObject[]> {
    const out: S3ListedObject[] = [];
    const until = opts.until ?? null;
    let after = opts.startAfter ?? undefined;
    for (;;) {
      const page = await this.run('lists', `ListObjectsV2 s3://${bucket}/${prefix}`, () =>
        this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, StartAfter: after, MaxKeys: opts.pageSize ?? 1000 })),
      );
      const contents = page.Contents ?? [];
      for (const c of contents) {
        const key = c.Key!;
        if (until !== null && compareKeys(key, until) > 0) return out;
        out.push({ key, size: c.Size ?? 0, etag: c.ETag ?? '', lastModifiedMs: c.LastModified?.getTime() ?? 0 });
      }
      if (!page.IsTruncated || contents.length === 0) return out;
      after = contents[contents.length - 1].Key!;
    }
  }

  /** CopyObject within or across buckets (cleanSource's archive), keeping the object's bytes and metadata. */
  async copyObject(fromBucket: string, fromKey: string, toBucket: string, toKey: string): Promise<void> {
    await this.run('puts', `CopyObject s3://${fromBucket}/${fromKey} to s3://${toBucket}/${toKey}`, () =>
      this.client.send(
        new CopyObjectCommand({ Bucket: toBucket, Key: toKey, CopySource: `${fromBucket}/${encodeURIComponent(fromKey).replace(/%2F/g, '/')}` }),
      ),
    );
  }

  /** DeleteObjects in batches of 1000; any per-key error fails the call (retriable). */
  async deleteKeys(bucket: string, keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000);
      const res = await this.run('deletes', `DeleteObjects s3://${bucket} (${chunk.length} keys)`, () =>
        this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } })),
      );
      const errors = res.Errors ?? [];
      if (errors.length > 0) {
        const first = errors[0];
        throw new SluiceError(
          `DeleteObjects on s3://${bucket} failed for ${errors.length} of ${chunk.length} keys (first: ${first.Key}: ${first.Code} ${first.Message}): check the role may s3:DeleteObject there, then run the purge again`,
          { retriable: true, details: { bucket, errors } },
        );
      }
    }
  }

  /** One request of `kind`: each call of `send` is one HTTP attempt, counted. */
  private run<T>(kind: RequestKind, what: string, send: () => Promise<T>): Promise<T> {
    return withRetry(
      this.policy,
      (e) => isRetriable('s3', e),
      () => {
        this.counts.requests++;
        this.counts[kind]++;
        return send();
      },
      { onRetry: () => void this.counts.throttleRetries++, fail: (f) => failure(what, f) },
    );
  }
}

/** The error a request that gave up ends with: a missing bucket and spent retries get a remedy; the rest stays the SDK's. */
function failure(what: string, { error, attempts, retriable }: RetryFailure): Error {
  const name = errorName(error);
  if (name === 'NoSuchBucket') {
    return new SluiceError(`${what}: the bucket does not exist: create it (deploy the stack, or ensureBucket on the local stack) or fix the bucket name`, {
      cause: error,
    });
  }
  if (!retriable) return error as Error;
  return new SluiceError(
    `${what} still failed after ${attempts} tries (${name || 'Error'}, HTTP ${httpStatus(error) ?? '-'}): S3 is throttling or unreachable, so the run can be retried; if it persists, send fewer requests (fewer, larger files; less parallelism)`,
    { cause: error, retriable: true, details: { errorName: name, attempts } },
  );
}

async function* emptyStream(): AsyncGenerator<Uint8Array> {}

function isNoSuchKey(e: unknown): boolean {
  const name = errorName(e);
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(e) === 404 && name !== 'NoSuchBucket');
}

/**
 * Orders keys as S3 lists them (UTF-8 byte order). JavaScript's `<` compares UTF-16 code units,
 * which puts code points above U+FFFF (surrogate pairs) before U+E000..U+FFFF; this does not.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
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

export function trimSlashes(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === 47) start++;
  while (end > start && s.charCodeAt(end - 1) === 47) end--;
  return s.slice(start, end);
}

/** A prefix as the start of keys: without leading slashes and with one trailing slash; '' for the bucket's root. */
export function keyRoot(prefix: string | undefined): string {
  const p = trimSlashes(prefix ?? '');
  return p === '' ? '' : `${p}/`;
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
    throw new InvalidOptionError(`${who} listPageSize ${size} must be an integer from 1 to 1000 (S3's maximum page): leave it out for 1000`);
  }
  return v;
}
