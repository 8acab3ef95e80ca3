/**
 * S3FileSink on the local stack's S3: deterministic object keys per batch, partition folders, and
 * a sink log that readers follow, so they never see a half-written batch and a replay adds
 * nothing.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { escapePartition, S3FileSink } from '../../lib/aws/s3/file-sink';
import { InvalidOptionError } from '../../lib/engine/errors';
import type { OutputRow, SinkContext } from '../../lib/engine/ports';
import { ensureBucket } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
const bucket = uniqueName('file-sink');

beforeAll(async () => {
  await ensureBucket(s3, bucket);
});

// ---- factories -------------------------------------------------------------------------------

const ctx: SinkContext = { queryId: 'qid-1', queryName: 'totals', outputMode: 'append', columns: ['window', 'user', 'total'], keyColumns: ['window', 'user'] };

function windowRow(user: string, total: number, day = 1, hour = 12): OutputRow {
  const start = new Date(Date.UTC(2026, 9, day, hour)).toISOString();
  const end = new Date(Date.UTC(2026, 9, day, hour, 10)).toISOString();
  return { window: { start, end }, user, total };
}

function newSink(over: Partial<ConstructorParameters<typeof S3FileSink>[0]> = {}) {
  const prefix = `out/${uniqueName('fs')}`;
  return { prefix, sink: new S3FileSink({ client: s3, bucket, prefix, ...over }) };
}

async function keysUnder(prefix: string): Promise<string[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  return (res.Contents ?? []).map((c) => c.Key!.slice(prefix.length + 1)).sort();
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when a batch is written', () => {
  it('puts the rows in part-<batch>-<n>.jsonl, then the log entry naming them', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(3, [windowRow('alice', 10), windowRow('bob', 5)], ctx);
    expect(await keysUnder(prefix)).toEqual(['_sink_log/0000000003', 'part-0000000003-00000.jsonl']);
    expect(await sink.readLog(3)).toEqual({
      version: 1,
      batchId: 3,
      queryId: 'qid-1',
      rows: 2,
      objects: [{ key: 'part-0000000003-00000.jsonl', partition: null, rows: 2, bytes: expect.any(Number) }],
    });
    expect(await sink.readBatch(3)).toEqual([windowRow('alice', 10), windowRow('bob', 5)]);
  });

  it("partitions by a column's day into Hive-style folders", async () => {
    const { prefix, sink } = newSink({ partitionBy: 'window.start', partitionGranularity: 'day' });
    await sink.addBatch(0, [windowRow('alice', 1, 2), windowRow('bob', 2, 1), windowRow('carol', 3, 2, 23)], ctx);
    expect(await keysUnder(prefix)).toEqual([
      '_sink_log/0000000000',
      'window_start=2026-10-01/part-0000000000-00000.jsonl',
      'window_start=2026-10-02/part-0000000000-00001.jsonl',
    ]);
    expect(await sink.readCommitted()).toEqual([windowRow('bob', 2, 1), windowRow('alice', 1, 2), windowRow('carol', 3, 2, 23)]);
  });

  it('splits a large partition into several objects', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 2 });
    await sink.addBatch(1, [windowRow('a', 1), windowRow('b', 2), windowRow('c', 3)], ctx);
    expect(await keysUnder(prefix)).toEqual(['_sink_log/0000000001', 'part-0000000001-00000.jsonl', 'part-0000000001-00001.jsonl']);
    expect(await sink.readBatch(1)).toHaveLength(3);
  });

  it("cuts objects at maxBytesPerObject of JSON too, so no object's text nears V8's longest string; a row wider than that is an object of its own", async () => {
    const wide = (user: string, n: number) => ({ ...windowRow(user, 1), note: 'w'.repeat(n) });
    const rows = [wide('a', 300), wide('b', 300), wide('c', 300), wide('d', 300), wide('e', 2000), wide('f', 300)];
    const batched = newSink({ maxBytesPerObject: 1000 });
    await batched.sink.addBatch(1, rows, ctx);
    const entry = (await batched.sink.readLog(1))!;
    expect(entry.objects.map((o) => o.rows)).toEqual([2, 2, 1, 1]);
    expect(entry.objects.every((o) => o.bytes <= 1000 || o.rows === 1)).toBe(true);
    expect(await batched.sink.readBatch(1)).toEqual(rows);
    async function* twoChunks(): AsyncIterable<OutputRow[]> {
      yield rows.slice(0, 3);
      yield rows.slice(3);
    }
    const streamed = newSink({ maxBytesPerObject: 1000 });
    await streamed.sink.addBatchChunks(1, twoChunks(), ctx);
    expect((await streamed.sink.readLog(1))!.objects.map((o) => o.rows)).toEqual([2, 2, 1, 1]);
    expect(await streamed.sink.readBatch(1)).toEqual(rows);
  });

  it('records an empty batch as a log entry with no objects', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(2, [], ctx);
    expect(await keysUnder(prefix)).toEqual(['_sink_log/0000000002']);
    expect(await sink.readBatch(2)).toEqual([]);
    expect(await sink.readBatch(3)).toBeNull();
  });

  it('escapes partition values so that "/" and "=" never split a key', () => {
    expect(escapePartition('a/b=c d')).toBe('a%2Fb%3Dc%20d');
    expect(escapePartition(null)).toBe('__HIVE_DEFAULT_PARTITION__');
  });
});

describe('when a batch is half-written (crash before its log entry)', () => {
  it('readers do not see its objects', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(0, [windowRow('alice', 1)], ctx);
    // What a crash between the object PUTs and the log PUT leaves: an object no entry names.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/part-0000000001-00000.jsonl`, Body: `${JSON.stringify(windowRow('bob', 2))}\n` }));
    expect(await sink.committedBatches()).toEqual([0]);
    expect(await sink.readCommitted()).toEqual([windowRow('alice', 1)]);
    expect(await sink.readBatch(1)).toBeNull();
  });
});

describe('when batch N is replayed', () => {
  it('finds the same keys with the same bytes (412, compared) and adds no object', async () => {
    const { prefix, sink } = newSink({ partitionBy: 'user' });
    const rows = [windowRow('alice', 1), windowRow('bob', 2)];
    await sink.addBatch(5, rows, ctx);
    const before = await keysUnder(prefix);
    const log = await sink.readLog(5);
    await sink.addBatch(5, rows, ctx);
    expect(await keysUnder(prefix)).toEqual(before);
    expect(await sink.readLog(5)).toEqual(log);
    expect(await sink.readCommitted()).toEqual(rows);
  });
});

describe('when batch N is replayed with its rows in another order', () => {
  it('the objects hold the same rows as the first attempt, so the replay passes and adds nothing', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 2 });
    const rows = [windowRow('alice', 1), windowRow('bob', 2), windowRow('carol', 3), windowRow('dave', 4), windowRow('erin', 5)];
    await sink.addBatch(4, rows, ctx);
    const before = await keysUnder(prefix);
    await new S3FileSink({ client: s3, bucket, prefix, maxRowsPerObject: 2 }).addBatch(4, [...rows].reverse(), ctx);
    expect(await keysUnder(prefix)).toEqual(before);
    expect(sortedUsers(await sink.readBatch(4))).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);
  });
});

describe('when a stale run writes other rows for a batch', () => {
  it('an object with other bytes fails loudly and is not overwritten', async () => {
    const { sink } = newSink();
    await sink.addBatch(6, [windowRow('alice', 1)], ctx);
    await expect(sink.addBatch(6, [windowRow('alice', 2)], ctx)).rejects.toThrow(
      /^object part-0000000006-00000\.jsonl of batch 6, s3:\/\/\S+ already holds other content .*write-once/,
    );
    expect(await sink.readBatch(6)).toEqual([windowRow('alice', 1)]);
  });

  it('a log entry with other content fails loudly and is not overwritten', async () => {
    const { sink } = newSink();
    await sink.addBatch(7, [windowRow('alice', 1)], ctx);
    await expect(sink.addBatch(7, [windowRow('alice', 1)], { ...ctx, queryId: 'qid-2' })).rejects.toThrow(
      /^the sink log entry of batch 7, s3:\/\/\S+\/_sink_log\/0000000007 already holds other content/,
    );
    expect((await sink.readLog(7))!.queryId).toBe('qid-1');
  });
});

describe('when a batch is written in several objects', () => {
  it('calls onPieceWritten after each object (the mid-sink crash point), 0 to n-1, before the log entry', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 1 });
    const pieces: number[] = [];
    await sink.addBatch(8, [windowRow('a', 1), windowRow('b', 2), windowRow('c', 3)], {
      ...ctx,
      onPieceWritten: (i) => pieces.push(i),
    });
    expect(pieces.sort()).toEqual([0, 1, 2]);
    expect(await keysUnder(prefix)).toContain('_sink_log/0000000008');
  });

  it('a crash thrown from onPieceWritten after the first object leaves the batch uncommitted', async () => {
    const { sink } = newSink({ maxRowsPerObject: 1, maxConcurrency: 1 });
    const crash = new Error('crash after piece 0');
    await expect(
      sink.addBatch(9, [windowRow('a', 1), windowRow('b', 2)], {
        ...ctx,
        onPieceWritten: () => {
          throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(await sink.readLog(9)).toBeNull();
    await sink.addBatch(9, [windowRow('b', 2), windowRow('a', 1)], ctx);
    expect(sortedUsers(await sink.readBatch(9))).toEqual(['a', 'b']);
  });
});

function sortedUsers(rows: OutputRow[] | null): string[] {
  return (rows ?? []).map((r) => r.user as string).sort();
}

describe('when the options are wrong', () => {
  it('says which column to partition by', async () => {
    const { sink } = newSink({ partitionBy: 'date' });
    await expect(sink.addBatch(0, [windowRow('a', 1)], ctx)).rejects.toThrow(/partitionBy "date" names no output column .* \(columns: window, user, total\)/);
    expect(() => new S3FileSink({ client: s3, bucket, prefix: 'x', partitionGranularity: 'day' })).toThrow(InvalidOptionError);
    expect(() => new S3FileSink({ client: s3, bucket, prefix: 'x', partitionBy: 'a/b' })).toThrow(/must be a column name/);
  });
});

// ---- streamed stateless batches (hole 9) ------------------------------------------------------

describe('when a stateless batch is streamed (addBatchChunks)', () => {
  const stateless: SinkContext = { ...ctx, keyColumns: [] };
  /** 4 chunks of 3 rows, users u00..u11, alternating between two days. */
  const sourceChunks = (): OutputRow[][] =>
    Array.from({ length: 4 }, (_, c) =>
      Array.from({ length: 3 }, (_, i) => windowRow(`u${String(c * 3 + i).padStart(2, '0')}`, c * 3 + i, 1 + ((c * 3 + i) % 2))),
    );
  /** The rows as objects of `n` hold them: in the order they came, n at a time, sorted by JSON text within an object. */
  const asObjects = (rows: OutputRow[], n: number) =>
    Array.from({ length: Math.ceil(rows.length / n) }, (_, k) =>
      rows.slice(k * n, k * n + n).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
    ).flat();
  /** The chunks as an iterable, noting the sink's objects under `prefix` as each is yielded. */
  async function* stream(chunks: OutputRow[][], prefix: string, seen: number[] = []): AsyncIterable<OutputRow[]> {
    for (const c of chunks) {
      seen.push((await keysUnder(prefix)).length);
      yield c;
    }
  }

  it('writes an object as soon as it holds maxRowsPerObject rows, before the next chunk is read, then the rest and the log', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 4 });
    const seen: number[] = [];
    const pieces: number[] = [];
    await sink.addBatchChunks(3, stream(sourceChunks(), prefix, seen), { ...stateless, onPieceWritten: (i) => pieces.push(i) });
    // 12 rows in one partition: objects fill at rows 4, 8 and 12 (during chunks 1, 2 and 3).
    expect(seen).toEqual([0, 0, 1, 2]);
    expect(pieces).toEqual([0, 1, 2]);
    expect(await keysUnder(prefix)).toEqual([
      '_sink_log/0000000003',
      'part-0000000003-00000.jsonl',
      'part-0000000003-00001.jsonl',
      'part-0000000003-00002.jsonl',
    ]);
    expect(await sink.readBatch(3)).toEqual(asObjects(sourceChunks().flat(), 4));
    expect(await sink.readLog(3)).toMatchObject({ rows: 12, objects: [{ rows: 4 }, { rows: 4 }, { rows: 4 }] });
  });

  it('keeps one open object per partition; the ones not full are written at the end in partition order', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 5, partitionBy: 'window.start', partitionGranularity: 'day' });
    await sink.addBatchChunks(1, stream(sourceChunks(), prefix), stateless);
    // 6 rows a day: each day fills one object of 5 (day 1 first: its 5th row is u08, day 2's u09), then a row each.
    expect(await keysUnder(prefix)).toEqual([
      '_sink_log/0000000001',
      'window_start=2026-10-01/part-0000000001-00000.jsonl',
      'window_start=2026-10-01/part-0000000001-00002.jsonl',
      'window_start=2026-10-02/part-0000000001-00001.jsonl',
      'window_start=2026-10-02/part-0000000001-00003.jsonl',
    ]);
    expect(sortedUsers(await sink.readBatch(1))).toEqual(
      sourceChunks()
        .flat()
        .map((r) => r.user)
        .sort(),
    );
  });

  it('a replay after a crash following the first object writes the same objects and commits the batch once', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 4 });
    const crash = new Error('crash after piece 0');
    const seen: number[] = [];
    await expect(
      sink.addBatchChunks(7, stream(sourceChunks(), prefix, seen), {
        ...stateless,
        onPieceWritten: () => {
          throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(seen).toEqual([0, 0]); // the source had yielded two chunks of four
    expect(await sink.readLog(7)).toBeNull();
    const replay = new S3FileSink({ client: s3, bucket, prefix, maxRowsPerObject: 4 });
    await replay.addBatchChunks(7, stream(sourceChunks(), prefix), stateless);
    const after = await keysUnder(prefix);
    expect(after).toHaveLength(4);
    expect(await replay.readBatch(7)).toEqual(asObjects(sourceChunks().flat(), 4));
    // A replay of the committed batch adds and rewrites nothing.
    await replay.addBatchChunks(7, stream(sourceChunks(), prefix), stateless);
    expect(await keysUnder(prefix)).toEqual(after);
  });

  it('a replay that yields other rows under an object already written fails loudly and leaves it as it was', async () => {
    const { prefix, sink } = newSink({ maxRowsPerObject: 4 });
    await expect(
      sink.addBatchChunks(8, stream(sourceChunks(), prefix), {
        ...stateless,
        onPieceWritten: () => {
          throw new Error('crash');
        },
      }),
    ).rejects.toThrow('crash');
    const changed = sourceChunks().map((c) => c.map((r) => ({ ...r, total: -1 })));
    await expect(new S3FileSink({ client: s3, bucket, prefix, maxRowsPerObject: 4 }).addBatchChunks(8, stream(changed, prefix), stateless)).rejects.toThrow(
      /part-0000000008-00000\.jsonl/,
    );
    expect(await keysUnder(prefix)).toEqual(['part-0000000008-00000.jsonl']);
  });
});
