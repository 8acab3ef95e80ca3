/**
 * What the S3 adapters rooted at a prefix share (the sinks, the dead letters, the landing source):
 * a bucket, the prefix their objects go under, and the accounting of their requests.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { SluiceError } from '../../engine/errors';
import type { RetryOptions } from '../request/retry';
import { checkBucket, keyRoot, S3Requests, type S3RequestStats } from './requests';

export interface S3PrefixOptions extends RetryOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Where the objects go, e.g. `output/orders-per-minute`. Empty: the bucket's root. */
  readonly prefix: string;
}

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
    this.description = `s3://${this.bucket}/${this.root}`;
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
  protected async putOnce(rel: string, body: string, contentType: string, what: string, same: (stored: string, body: string) => boolean = (a, b) => a === b): Promise<void> {
    const key = this.root + rel;
    const stored = await this.s3.putTextOnce(this.bucket, key, body, contentType);
    if (stored === null || same(stored, body)) return;
    throw this.otherContent(what, key, `${stored.length} chars, this write ${body.length}`);
  }

  /** putOnce for bytes (a Parquet object): a replay must write the very bytes the key holds. */
  protected async putBytesOnce(rel: string, body: Uint8Array, contentType: string, what: string): Promise<void> {
    const key = this.root + rel;
    const stored = await this.s3.putBytesOnce(this.bucket, key, body, contentType);
    if (stored === null || Buffer.compare(stored, body) === 0) return;
    throw this.otherContent(what, key, `${stored.length} bytes, this write ${body.length}`);
  }

  private otherContent(what: string, key: string, sizes: string): SluiceError {
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
