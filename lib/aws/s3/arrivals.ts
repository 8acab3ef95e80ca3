/**
 * Samples the lateness of an S3 landing prefix for `sluice lateness`: each row's arrival is its
 * object's LastModified (when the producer's PUT completed), its event time the given column.
 *
 *     LIST the prefix (every page; LastModified comes with the listing)
 *     keep objects with LastModified >= since; newest first
 *     GET 8 at a time (gunzip .gz), split lines, read the column, until `sample` rows are taken
 *
 * Keys under `_sluice/` (the CLI's default checkpoint and output when the source is a bucket's
 * root), directory markers and empty objects are not data and are left out; rows whose event
 * time cannot be read are counted with their reason, never dropped silently.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { LatenessSampler, type ArrivalSample } from '../../observe/lateness';
import { isRetriable } from '../request/errors';
import { retryPolicy, withRetry } from '../request/retry';
import { checkBucket, keyRoot, S3Requests } from './requests';

const gunzipAsync = promisify(gunzip);
const MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;
const PARALLEL_GETS = 8;

export interface S3ArrivalsOptions {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  /** The event-time column (read as a TIMESTAMP, as the engine reads it). */
  readonly column: string;
  /** Only objects written at or after this instant (epoch ms). */
  readonly sinceMs: number;
  /** At most this many rows (readable or not). */
  readonly sample: number;
}

interface Listed {
  readonly key: string;
  readonly size: number;
  readonly lastModifiedMs: number;
}

export async function sampleS3Arrivals(opts: S3ArrivalsOptions): Promise<ArrivalSample> {
  const bucket = checkBucket(opts.bucket, 'sluice lateness');
  const root = keyRoot(opts.prefix);
  const requests = new S3Requests(opts.client, {}, 'sluice lateness');
  const listed = (await listWithTimes(opts.client, bucket, root)).filter(
    (o) => o.lastModifiedMs >= opts.sinceMs && o.size > 0 && !o.key.endsWith('/') && !o.key.startsWith('_sluice/') && !o.key.includes('/_sluice/'),
  );
  listed.sort((a, b) => b.lastModifiedMs - a.lastModifiedMs || (a.key < b.key ? -1 : 1));
  const sampler = new LatenessSampler(opts.column, opts.sample);
  let used = 0;
  for (let i = 0; i < listed.length && !sampler.full; i += PARALLEL_GETS) {
    const group = listed.slice(i, i + PARALLEL_GETS);
    const texts = await Promise.all(group.map((o) => readText(requests, bucket, o.key)));
    for (let j = 0; j < group.length && !sampler.full; j++) {
      used++;
      const text = texts[j];
      if (typeof text !== 'string') {
        sampler.unreadable(`s3://${bucket}/${group[j].key}`, text.damaged);
        continue;
      }
      const lines = text.split('\n');
      for (let n = 0; n < lines.length && !sampler.full; n++) {
        const line = lines[n].trim();
        if (line !== '') sampler.add(line, group[j].lastModifiedMs, `s3://${bucket}/${group[j].key} line ${n + 1}`);
      }
    }
  }
  const since = new Date(opts.sinceMs).toISOString();
  return {
    latenessMs: sampler.latenessMs,
    unreadable: sampler.summary(),
    sampled: `from the ${used} newest of ${listed.length} objects written since ${since}`,
    capped: sampler.full && used < listed.length,
  };
}

/** ListObjectsV2 of every key under `root`, with its LastModified (paged by StartAfter, which s3rver supports). */
async function listWithTimes(client: S3Client, bucket: string, root: string): Promise<Listed[]> {
  const policy = retryPolicy({}, 'sluice lateness');
  const out: Listed[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await withRetry(
      policy,
      (e) => isRetriable('s3', e),
      () => client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: root || undefined, StartAfter: after, MaxKeys: 1000 })),
    );
    const contents = page.Contents ?? [];
    for (const c of contents) out.push({ key: c.Key!, size: c.Size ?? 0, lastModifiedMs: c.LastModified?.getTime() ?? 0 });
    if (!page.IsTruncated || contents.length === 0) return out;
    after = contents[contents.length - 1].Key!;
  }
}

/** The object's text (gunzipped when it is gzip), or why it cannot be read. */
async function readText(requests: S3Requests, bucket: string, key: string): Promise<string | { damaged: string }> {
  const got = await requests.getObject(bucket, key);
  if (got === null) return { damaged: 'the object was deleted while sampling' };
  let buf = Buffer.from(got.body.buffer, got.body.byteOffset, got.body.byteLength);
  const gzipped = key.endsWith('.gz') || got.contentEncoding.toLowerCase().includes('gzip');
  if (gzipped && buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) {
    try {
      buf = await gunzipAsync(buf, { maxOutputLength: MAX_DECOMPRESSED_BYTES });
    } catch (e) {
      return { damaged: `gzip data cannot be read (${(e as Error).message}): its rows are not measured` };
    }
  }
  return buf.toString('utf8');
}
