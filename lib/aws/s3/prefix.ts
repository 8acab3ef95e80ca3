/**
 * What the S3 sinks share: a bucket, the prefix their objects go under, and the accounting of
 * their requests.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { checkBucket, S3Requests, trimSlashes, type S3RequestStats, type S3RetryOptions } from './checkpoint';

export interface S3PrefixOptions extends S3RetryOptions {
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

  /** `who` names the class in the error about an empty bucket. */
  protected constructor(opts: S3PrefixOptions, who: string) {
    this.bucket = checkBucket(opts.bucket, who);
    const p = trimSlashes(opts.prefix ?? '');
    this.root = p === '' ? '' : `${p}/`;
    this.s3 = new S3Requests(opts.client, opts);
    this.description = `s3://${this.bucket}/${this.root}`;
  }

  stats(): S3RequestStats {
    return this.s3.stats();
  }
}
