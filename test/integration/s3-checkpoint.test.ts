/**
 * S3CheckpointStore on the local stack's S3, which answers If-None-Match with 412 as S3 does
 * (lib/local/s3-conditional-writes.ts in front of s3rver): the conditional-write path is the
 * service's, not a test wrapper's.
 */
import { ListObjectsV2Command, type ListObjectsV2CommandOutput, PutObjectCommand, type S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { S3CheckpointStore, type S3CheckpointStoreOptions } from '../../lib/aws/s3/checkpoint';
import { S3Requests } from '../../lib/aws/s3/requests';
import { CheckpointMismatchError, InvalidOptionError, SluiceError } from '../../lib/engine/errors';
import type { CommitEntry, OffsetEntry, QueryMetadata } from '../../lib/engine/ports';
import { ensureBucket } from '../../lib/local/resources';
import { createS3Client } from '../../lib/aws/clients';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
let bucket: string;

beforeAll(async () => {
  bucket = uniqueName('sluice-ckpt').toLowerCase();
  await ensureBucket(s3, bucket);
});

// ---- factories -------------------------------------------------------------------------------

function newStore(opts: Partial<S3CheckpointStoreOptions> = {}): S3CheckpointStore {
  return new S3CheckpointStore({ client: s3, bucket, prefix: `checkpoints/${uniqueName('q')}`, conditionalWrites: false, ...opts });
}

function offsetEntry(batchId: number, over: Partial<OffsetEntry> = {}): OffsetEntry {
  return {
    batchId,
    offsets: [{ lastKey: `landing/f${batchId}.json` }],
    startOffsets: [batchId === 0 ? null : { lastKey: `landing/f${batchId - 1}.json` }],
    batchWatermarkMs: batchId * 1000,
    batchTimestampMs: 1_700_000_000_000 + batchId,
    lateWatermarkMs: Math.max(0, (batchId - 1) * 1000),
    ...over,
  };
}

function commitEntry(batchId: number, over: Partial<CommitEntry> = {}): CommitEntry {
  return {
    batchId,
    queryId: 'query-1',
    shapeFingerprint: 'shape-1',
    offsets: [{ lastKey: `landing/f${batchId}.json` }],
    batchWatermarkMs: batchId * 1000,
    nextBatchWatermarkMs: (batchId + 1) * 1000,
    committedAtMs: 1_700_000_001_000 + batchId,
    ...over,
  };
}

function metadata(over: Partial<QueryMetadata> = {}): QueryMetadata {
  return { id: 'query-1', name: 'totals', createdAtMs: 1_700_000_000_000, shape: { groupBy: ['user'] }, shapeFingerprint: 'shape-1', ...over };
}

async function writeBatches(store: S3CheckpointStore, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    await store.writeOffsets(offsetEntry(n));
    await store.writeSourceLog(0, String(n), JSON.stringify({ files: [] }));
    await store.writeCommit(commitEntry(n));
    await store.writeProgress(n, { batchId: n, numInputRows: n });
  }
}

async function keysUnder(prefix: string): Promise<string[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  return (res.Contents ?? []).map((c) => c.Key!.slice(prefix.length + 1)).sort();
}

function prefixOf(store: S3CheckpointStore): string {
  return store.description.slice(`s3://${bucket}/`.length);
}

function delta(store: S3CheckpointStore, before: ReturnType<S3CheckpointStore['stats']>) {
  const now = store.stats();
  return { lists: now.lists - before.lists, gets: now.gets - before.gets, puts: now.puts - before.puts, deletes: now.deletes - before.deletes };
}

// ---- client wrappers (what AWS does that s3rver does not) --------------------------------------

type Send = (command: unknown) => Promise<unknown>;

function wrapClient(intercept: (command: unknown, next: Send) => Promise<unknown>): S3Client {
  const next: Send = (c) => s3.send(c as never);
  return { send: (command: unknown) => intercept(command, next) } as unknown as S3Client;
}

function s3Error(name: string, httpStatusCode: number): S3ServiceException {
  return new S3ServiceException({ name, $fault: httpStatusCode >= 500 ? 'server' : 'client', $metadata: { httpStatusCode, attempts: 1 }, message: name });
}

/** Answers the first `times` conditional PUTs with 409 ConditionalRequestConflict (AWS: another conditional write in flight), then enforces If-None-Match. */
function conflicting(times: number): S3Client {
  let left = times;
  return wrapClient(async (command, next) => {
    if (left > 0 && command instanceof PutObjectCommand && command.input.IfNoneMatch === '*') {
      left--;
      throw s3Error('ConditionalRequestConflict', 409);
    }
    return next(command);
  });
}

/** Throttles the first `times` requests with 503 SlowDown. */
function throttling(times: number): S3Client {
  let left = times;
  return wrapClient(async (command, next) => {
    if (left > 0) {
      left--;
      throw s3Error('SlowDown', 503);
    }
    return next(command);
  });
}

/** Serves listings `MaxKeys` at a time (s3rver cannot: its continuation tokens need OpenSSL's legacy DES). */
function paging(): S3Client {
  return wrapClient(async (command, next) => {
    if (command instanceof ListObjectsV2Command && (command.input.MaxKeys ?? 1000) < 1000) {
      const max = command.input.MaxKeys!;
      const res = (await next(new ListObjectsV2Command({ ...command.input, MaxKeys: 1000 }))) as ListObjectsV2CommandOutput;
      const contents = res.Contents ?? [];
      if (contents.length > max) return { ...res, Contents: contents.slice(0, max), IsTruncated: true, KeyCount: max };
      return res;
    }
    return next(command);
  });
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when the checkpoint is new', () => {
  it('head() reports no metadata and no batches, for one LIST and one GET (of the metadata, absent)', async () => {
    const store = newStore();
    await expect(store.head()).resolves.toEqual({ metadata: null, latestOffsetBatch: -1, latestCommitBatch: -1 });
    expect(store.stats()).toMatchObject({ requests: 2, lists: 1, gets: 1 });
  });

  it('reads of missing entries return null', async () => {
    const store = newStore();
    await expect(store.readOffsets(0)).resolves.toBeNull();
    await expect(store.readCommit(0)).resolves.toBeNull();
    await expect(store.readSourceLog(0, '0')).resolves.toBeNull();
    await expect(store.readProgress(0)).resolves.toBeNull();
  });
});

describe('when batches have run', () => {
  it('head() returns the metadata and the latest offset and commit batches, for one LIST and one GET', async () => {
    const store = newStore();
    await store.writeMetadata(metadata());
    await writeBatches(store, 12); // batch 10 and 11 sort before 2 as text: the IDs must compare as numbers
    await store.writeOffsets(offsetEntry(12)); // batch 12 planned, not committed

    const fresh = new S3CheckpointStore({ client: s3, bucket, prefix: prefixOf(store) });
    await expect(fresh.head()).resolves.toEqual({ metadata: metadata(), latestOffsetBatch: 12, latestCommitBatch: 11 });
    expect(fresh.stats()).toMatchObject({ requests: 2, lists: 1, gets: 1, puts: 0 });
  });

  it('head() sends its GET of the metadata without waiting for the LIST', async () => {
    const store = newStore();
    await store.writeMetadata(metadata());
    await writeBatches(store, 2);
    // a client whose LISTs answer 100 ms late, noting when each request was sent and answered
    const events: string[] = [];
    const slow = {
      send: async (command: { constructor: { name: string } }, ...rest: unknown[]) => {
        const name = command.constructor.name;
        events.push(`sent ${name}`);
        if (command instanceof ListObjectsV2Command) await new Promise((r) => setTimeout(r, 100));
        const out = await s3.send(command as never, ...(rest as []));
        events.push(`answered ${name}`);
        return out;
      },
    } as unknown as S3Client;
    const fresh = new S3CheckpointStore({ client: slow, bucket, prefix: prefixOf(store) });
    await expect(fresh.head()).resolves.toEqual({ metadata: metadata(), latestOffsetBatch: 1, latestCommitBatch: 1 });
    expect(events.indexOf('sent GetObjectCommand')).toBeLessThan(events.indexOf('answered ListObjectsV2Command'));
  });

  it('entries read back as written', async () => {
    const store = newStore();
    await writeBatches(store, 2);
    await expect(store.readOffsets(1)).resolves.toEqual(offsetEntry(1));
    await expect(store.readCommit(1)).resolves.toEqual(commitEntry(1));
    await expect(store.readSourceLog(0, '1')).resolves.toBe('{"files":[]}');
    expect(await keysUnder(prefixOf(store))).toEqual([
      'commits/0',
      'commits/1',
      'offsets/0',
      'offsets/1',
      'progress/0',
      'progress/1',
      'sources/0/0',
      'sources/0/1',
    ]);
  });

  it('metadata and progress can be overwritten', async () => {
    const store = newStore();
    await store.writeMetadata(metadata());
    await store.writeMetadata(metadata({ name: 'renamed' }));
    await store.writeProgress(0, { numInputRows: 1 });
    await store.writeProgress(0, { numInputRows: 2 });
    expect((await store.head()).metadata?.name).toBe('renamed');
    await expect(store.readProgress(0)).resolves.toEqual({ numInputRows: 2 });
  });
});

describe.each([
  { mode: 'check-then-write (conditionalWrites: false, as on s3rver)', client: () => s3, conditionalWrites: false, writeCost: { gets: 1, puts: 1 } },
  {
    mode: 'If-None-Match enforced by the local S3 (conditionalWrites: true, as on AWS)',
    client: () => s3,
    conditionalWrites: true,
    writeCost: { gets: 0, puts: 1 },
  },
])('when a batch entry is written again, $mode', ({ client, conditionalWrites, writeCost }) => {
  const store = () => newStore({ client: client(), conditionalWrites });

  it('a first write costs the expected requests', async () => {
    const s = store();
    const before = s.stats();
    await s.writeOffsets(offsetEntry(0));
    expect(delta(s, before)).toEqual({ lists: 0, deletes: 0, ...writeCost });
  });

  it('the same offsets entry again is a no-op (a replay)', async () => {
    const s = store();
    await s.writeOffsets(offsetEntry(3));
    await expect(s.writeOffsets({ ...offsetEntry(3) })).resolves.toBeUndefined();
    await expect(s.readOffsets(3)).resolves.toEqual(offsetEntry(3));
  });

  it('a different offsets entry is refused with CheckpointMismatchError naming the batch, and the stored one stays', async () => {
    const s = store();
    await s.writeOffsets(offsetEntry(3));
    const attempt = s.writeOffsets(offsetEntry(3, { offsets: [{ lastKey: 'landing/other.json' }] }));
    await expect(attempt).rejects.toThrow(CheckpointMismatchError);
    await expect(attempt).rejects.toThrow(/batch 3 already has a different offset entry .*offsets\/3/);
    await expect(s.readOffsets(3)).resolves.toEqual(offsetEntry(3));
  });

  it('a commit that differs only in committedAtMs is the same commit', async () => {
    const s = store();
    await s.writeCommit(commitEntry(5));
    await expect(s.writeCommit(commitEntry(5, { committedAtMs: 42 }))).resolves.toBeUndefined();
    await expect(s.readCommit(5)).resolves.toEqual(commitEntry(5));
  });

  it('a commit with another watermark is refused', async () => {
    const s = store();
    await s.writeCommit(commitEntry(5));
    await expect(s.writeCommit(commitEntry(5, { nextBatchWatermarkMs: 1 }))).rejects.toThrow(/batch 5 already has a different commit entry/);
  });
});

describe('when a conditional write meets a concurrent one (409)', () => {
  it('sends the write again and succeeds', async () => {
    const store = newStore({ client: conflicting(2), conditionalWrites: true });
    await store.writeOffsets(offsetEntry(0));
    expect(store.stats()).toMatchObject({ requests: 3, puts: 3, gets: 0, throttleRetries: 0 });
    await expect(store.readOffsets(0)).resolves.toEqual(offsetEntry(0));
  });

  it('gives up after 4 attempts with the 409', async () => {
    const store = newStore({ client: conflicting(10), conditionalWrites: true });
    await expect(store.writeOffsets(offsetEntry(0))).rejects.toMatchObject({ name: 'ConditionalRequestConflict' });
    expect(store.stats()).toMatchObject({ puts: 4, throttleRetries: 0 });
  });
});

describe('when a stored entry is damaged', () => {
  it('reading it fails with CheckpointMismatchError naming the key', async () => {
    const store = newStore();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefixOf(store)}/offsets/0`, Body: Buffer.from('{not json') }));
    await expect(store.readOffsets(0)).rejects.toThrow(/offsets\/0 is not valid JSON/);
  });
});

describe('when old batches are purged', () => {
  it('removes offsets, commits, progress and source logs below keepFrom, with one LIST and one DeleteObjects', async () => {
    const store = newStore();
    await store.writeMetadata(metadata());
    await writeBatches(store, 5);
    await store.writeSourceLog(1, '1', 'second source');
    await store.writeSourceLog(0, 'state', 'not a batch log');

    const before = store.stats();
    await store.purge(3);
    expect(delta(store, before)).toEqual({ lists: 1, gets: 0, puts: 0, deletes: 1 });
    expect(await keysUnder(prefixOf(store))).toEqual([
      'commits/3',
      'commits/4',
      'metadata',
      'offsets/3',
      'offsets/4',
      'progress/3',
      'progress/4',
      'sources/0/3',
      'sources/0/4',
      'sources/0/state',
    ]);
    await expect(store.head()).resolves.toMatchObject({ latestOffsetBatch: 4, latestCommitBatch: 4 });
  });

  it('with nothing to purge, sends no DeleteObjects', async () => {
    const store = newStore();
    await writeBatches(store, 2);
    const before = store.stats();
    await store.purge(0);
    expect(delta(store, before)).toEqual({ lists: 1, gets: 0, puts: 0, deletes: 0 });
  });
});

describe('when DeleteObjects refuses some keys (a per-key error in a 200 answer)', () => {
  /** A real client whose DeleteObjects leaves `refused` out of the request and reports it as AccessDenied, as S3 does for a key the role may not delete. */
  function refusing(refused: (key: string) => boolean) {
    const client = createS3Client(testConnection());
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'DeleteObjectsCommand') return next(args);
        const input = args.input as { Delete: { Objects: Array<{ Key: string }> } };
        const kept = input.Delete.Objects.filter((o) => refused(o.Key));
        input.Delete = { ...input.Delete, Objects: input.Delete.Objects.filter((o) => !refused(o.Key)) };
        const out = await next(args);
        (out.output as { Errors?: unknown[] }).Errors = kept.map((o) => ({ Key: o.Key, Code: 'AccessDenied', Message: 'Access Denied' }));
        return out;
      },
      { step: 'initialize', name: 'refuseSomeDeletes' },
    );
    return client;
  }

  it('purge fails with a retriable error naming the key and the fix, deletes the rest, and a later purge finishes', async () => {
    const store = newStore();
    await writeBatches(store, 3);
    const prefix = prefixOf(store);
    const failing = new S3CheckpointStore({ client: refusing((k) => k.endsWith('commits/1')), bucket, prefix, conditionalWrites: false });
    const err = await failing.purge(2).catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.retriable).toBe(true);
    expect(err.message).toBe(
      `DeleteObjects on s3://${bucket} failed for 1 of 8 keys (first: ${prefix}/commits/1: AccessDenied Access Denied): check the role may s3:DeleteObject there, then run the purge again`,
    );
    expect(await keysUnder(prefix)).toEqual(['commits/1', 'commits/2', 'offsets/2', 'progress/2', 'sources/0/2']);
    await store.purge(2);
    expect(await keysUnder(prefix)).toEqual(['commits/2', 'offsets/2', 'progress/2', 'sources/0/2']);
  });
});

describe('when more than 1000 keys are deleted', () => {
  it('sends one DeleteObjects per 1000 keys', async () => {
    const requests = new S3Requests(s3);
    const keys = Array.from({ length: 2500 }, (_, i) => `purge-test/${uniqueName('gone')}/${i}`);
    await requests.deleteKeys(bucket, keys); // deleting absent keys succeeds, as on AWS
    expect(requests.stats()).toMatchObject({ deletes: 3, requests: 3 });
  });
});

describe('when the prefix holds more keys than one listing page', () => {
  it('head() pages through all of them', async () => {
    const store = newStore({ client: paging(), listPageSize: 3 });
    await writeBatches(store, 3); // 12 keys: 4 full pages and an empty last one at most
    await expect(store.head()).resolves.toEqual({ metadata: null, latestOffsetBatch: 2, latestCommitBatch: 2 });
    expect(store.stats().lists).toBeGreaterThanOrEqual(4);
  });
});

describe('when S3 throttles', () => {
  it('retries SlowDown with backoff and succeeds, counting the retries', async () => {
    const store = newStore({ client: throttling(2), baseDelayMs: 1 });
    await expect(store.head()).resolves.toMatchObject({ latestOffsetBatch: -1 });
    // (its LIST and its GET of the metadata go at once: the first two answers are the throttled ones)
    const stats = store.stats();
    expect(stats).toMatchObject({ throttleRetries: 2, requests: 4 });
    expect(stats.lists + stats.gets).toBe(4);
  });

  it('gives up after maxAttempts with a retriable SluiceError', async () => {
    const store = newStore({ client: throttling(10), baseDelayMs: 1, maxAttempts: 3 });
    const attempt = store.head();
    await expect(attempt).rejects.toThrow(SluiceError);
    await expect(attempt).rejects.toMatchObject({
      retriable: true,
      message: expect.stringMatching(/ListObjectsV2 .* still failed after 3 tries \(SlowDown, HTTP 503\)/),
    });
  });
});

describe('when options are wrong', () => {
  it('an empty prefix is refused before any request', () => {
    expect(() => new S3CheckpointStore({ client: s3, bucket, prefix: '/' })).toThrow(/prefix "\/" is empty: give each query its own checkpoint prefix/);
  });

  it('retry options out of range are refused with InvalidOptionError before any request', () => {
    expect(() => newStore({ maxAttempts: 0 })).toThrow(InvalidOptionError);
    expect(() => newStore({ maxAttempts: 0 })).toThrow(/S3CheckpointStore maxAttempts \(0\) must be an integer from 1 to 100/);
    expect(() => newStore({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(/maxDelayMs \(5\) must be at least baseDelayMs \(10\)/);
  });

  it('a missing bucket is reported with the remedy', async () => {
    const store = new S3CheckpointStore({ client: s3, bucket: uniqueName('missing').toLowerCase(), prefix: 'q' });
    await expect(store.head()).rejects.toThrow(/bucket does not exist: create it/);
  });
});
