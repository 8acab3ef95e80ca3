/**
 * The identity of a source: its `description`, which a run records in the checkpoint
 * (metadata.sources) and a later run or `sluice status`/`show` compares with the source it is
 * given. `s3://bucket/prefix/` (the prefix as keys start with it, one trailing slash) or
 * `kinesis://stream`. The adapters describe themselves with these, and the CLI names a location
 * with them, so the two never drift apart.
 */
import type { SourceLocation } from './pipeline';
import { keyRoot } from './s3/requests';

/** `s3://bucket/prefix/` of an S3 prefix ('' or undefined: the bucket's root). */
export function s3PrefixIdentity(bucket: string, prefix: string | undefined): string {
  return `s3://${bucket}/${keyRoot(prefix)}`;
}

/** `kinesis://stream` of a Kinesis stream. */
export function kinesisIdentity(stream: string): string {
  return `kinesis://${stream}`;
}

/** The identity the source at `loc` records in its checkpoint. */
export function sourceIdentity(loc: SourceLocation): string {
  return loc.kind === 's3' ? s3PrefixIdentity(loc.bucket, loc.prefix) : kinesisIdentity(loc.streamName);
}
