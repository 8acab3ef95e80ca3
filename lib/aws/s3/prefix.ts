/**
 * What the S3 adapters rooted at a prefix share (the sinks, the dead letters, the landing source):
 * a bucket, the prefix their objects go under, and the accounting of their requests.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { SluiceError } from '../../engine/errors';
import { LinesDigest } from './batch-files';
import type { RetryOptions } from '../request/retry';
import { s3PrefixIdentity } from '../source-identity';
import { checkBucket, keyRoot, S3Requests, type S3RequestStats } from './requests';

export interface S3PrefixOptions extends RetryOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Where the objects go, e.g. `output/orders-per-minute`. Empty: the bucket's root. */
  readonly prefix: string;
}

const MIB = 1024 * 1024;
/** Bytes per part of a multipart upload of JSON lines (putLinesOnce). */
export const DEFAULT_PART_BYTES = 8 * MIB;
/** S3's smallest part but the last. */
export const MIN_PART_BYTES = 5 * MIB;
/** S3's most parts per upload. */
const MAX_PARTS = 10_000;
const NDJSON = 'application/x-ndjson';
const NEWLINE = Buffer.from('\n');

export abstract class S3Prefix {
  /** `s3://bucket/prefix/` */
  readonly description: string;
  protected readonly bucket: string;
  /** The prefix with one trailing slash ('' for the bucket's root): keys are root + name. */
  protected readonly root: string;
  protected readonly s3: S3Requests;

  /** `who` names the class in the errors about its options. */
  protected constructor(opts: S3PrefixOptions, who: string) {
    this.bucket = checkBucket(opts.bucket, who);
    this.root = keyRoot(opts.prefix);
    this.s3 = new S3Requests(opts.client, opts, who);
    this.description = s3PrefixIdentity(this.bucket, opts.prefix);
  }

  /** Requests sent so far (each HTTP attempt counts), for benchmarks and request-cost tests. */
  stats(): S3RequestStats {
    return this.s3.stats();
  }

  /**
   * Writes `root + rel` once (If-None-Match: *). When the key exists, `same(stored, body)` decides:
   * a replay that writes what is there passes; other content (a stale run, or an earlier
   * checkpoint that used this prefix) is a loud error, never an overwrite.
   */
  protected async putOnce(
    rel: string,
    body: string,
    contentType: string,
    what: string,
    same: (stored: string, body: string) => boolean = (a, b) => a === b,
  ): Promise<void> {
    const key = this.root + rel;
    const stored = await this.s3.putTextOnce(this.bucket, key, body, contentType);
    if (stored === null || same(stored, body)) return;
    throw this.otherContent(what, key, `${stored.length} chars, this write ${body.length}`);
  }

  /**
   * Writes `root + rel` once (If-None-Match: *) as JSON lines, one per value of `chunks`, without
   * ever holding the whole text: one PutObject when it fits in a part of `partBytes`, else a
   * multipart upload of parts as they fill, completed with If-None-Match: * (and aborted on a
   * failure or a 412). When the key exists, a replay passes if the stored object holds the same
   * lines in any order, compared by their digests (LinesDigest; the stored one read as its body
   * streams); other lines are a loud error. Memory: one part, plus the chunk given. (No HeadObject
   * to spare a replay its upload: without s3:ListBucket on the prefix, S3 answers a HEAD of a
   * missing key 403, not 404; the If-None-Match of the completion decides instead.)
   *
   *     under one part ─▶ PUT If-None-Match: * ──412──▶ GET (streamed) ─▶ compare digests
   *     more           ─▶ Create ─▶ UploadPart 1, 2, … as they fill ─▶ Complete If-None-Match: *
   *                                                                  ──412──▶ Abort, compare
   *     a failure of the upload (or of the chunks) ─▶ Abort (best effort), the error stands
   */
  protected async putLinesOnce(
    rel: string,
    chunks: AsyncIterable<readonly unknown[]>,
    what: string,
    partBytes: number = DEFAULT_PART_BYTES,
    lineOf: (row: never) => string = JSON.stringify,
  ): Promise<void> {
    const key = this.root + rel;
    const digest = new LinesDigest();
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** The multipart upload once the first part filled, until it is completed or aborted. */
    let upload: { id: string; etags: string[] } | null = null;
    const flush = async (u: { id: string; etags: string[] }) => {
      if (u.etags.length >= MAX_PARTS) {
        throw new SluiceError(
          `${what} s3://${this.bucket}/${key} needs more than ${MAX_PARTS} parts of ${partBytes} bytes: raise partBytes, or lower maxBytesPerTrigger / maxFilesPerTrigger`,
          { retriable: false },
        );
      }
      const body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      u.etags.push(await this.s3.uploadPart(this.bucket, key, u.id, u.etags.length + 1, body));
    };
    try {
      for await (const rows of chunks) {
        for (const row of rows) {
          const line = Buffer.from(lineOf(row as never), 'utf8');
          digest.addLine(line);
          pending.push(line, NEWLINE);
          pendingBytes += line.byteLength + 1;
          if (pendingBytes < partBytes) continue;
          upload ??= { id: await this.s3.createMultipartUpload(this.bucket, key, NDJSON), etags: [] };
          await flush(upload);
        }
      }
      if (upload === null) {
        if (await this.s3.putBytesIfAbsent(this.bucket, key, Buffer.concat(pending, pendingBytes), NDJSON)) return;
      } else {
        if (pendingBytes > 0) await flush(upload);
        const { id, etags } = upload;
        const made = await this.s3.completeMultipartUploadIfAbsent(this.bucket, key, id, etags);
        upload = null;
        if (made) return;
        await this.s3.abortMultipartUpload(this.bucket, key, id);
      }
    } catch (e) {
      if (upload !== null) await this.s3.abortMultipartUpload(this.bucket, key, upload.id);
      throw e;
    }
    // The key exists: a replay passes if it holds the same lines, in any order.
    const stored = await this.storedDigest(key, what);
    if (!stored.equals(digest)) throw this.otherContent(what, key, `${stored.describe()}, this write ${digest.describe()}`);
  }

  /** The digest of the stored object's lines, read as its body streams. */
  private async storedDigest(key: string, what: string): Promise<LinesDigest> {
    const body = await this.s3.getStream(this.bucket, key);
    if (body === null) {
      throw new SluiceError(
        `${what} s3://${this.bucket}/${key} answered 412 (it exists) but is gone: another writer deleted it meanwhile; the run can be retried`,
        { retriable: true },
      );
    }
    const digest = new LinesDigest();
    for await (const bytes of body) digest.addText(bytes);
    return digest.end();
  }

  /** putOnce for bytes (a Parquet object): a replay must write the very bytes the key holds. */
  protected async putBytesOnce(rel: string, body: Uint8Array, contentType: string, what: string): Promise<void> {
    const key = this.root + rel;
    const stored = await this.s3.putBytesOnce(this.bucket, key, body, contentType);
    if (stored === null || Buffer.compare(stored, body) === 0) return;
    throw this.otherContent(what, key, `${stored.length} bytes, this write ${body.length}`);
  }

  protected otherContent(what: string, key: string, sizes: string): SluiceError {
    return new SluiceError(
      `${what} s3://${this.bucket}/${key} already holds other content (${sizes}), and it is write-once: ` +
        `another run wrote it (keep one run per query, the lease) or an earlier checkpoint used this prefix (give each checkpoint its own prefix)`,
      { details: { bucket: this.bucket, key } },
    );
  }

  /** The batch IDs of the objects under `root + dir` whose rest of the key `name` matches (its first group: the 10-digit ID), ascending. */
  protected async listBatchIds(dir: string, name: RegExp): Promise<number[]> {
    const from = this.root + dir;
    const ids: number[] = [];
    for (const o of await this.s3.listAll(this.bucket, from)) {
      const m = name.exec(o.key.slice(from.length));
      if (m) ids.push(Number(m[1]));
    }
    return ids.sort((a, b) => a - b);
  }
}
