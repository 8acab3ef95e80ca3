import { randomBytes } from 'node:crypto';
/**
 * The in-memory twins are as strict as the services: the state store's order is shuffled (seeded),
 * its keys and items have DynamoDB's limits and its tombstones a TTL a test can expire; the sink
 * writes in pieces and records every write; the checkpoint is write-once as S3 with If-None-Match.
 * And the `mid-sink` crash point, which the sink twin's pieces make reachable in unit tests.
 */
import { crashingAt, parseCrashPlan } from '../../lib/engine/testing/crash';
import { CheckpointMismatchError, SluiceError } from '../../lib/engine/errors';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { TWIN_SEED } from '../../lib/engine/testing/twins';
import type { CommitEntry, OperatorStateSpec, OutputRow, SinkContext, StateChange } from '../../lib/engine/ports';
import { count, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { createTestRunner } from './engine-factories';

const op: OperatorStateSpec = { operatorId: 'op0', fixedEviction: false, evictionGranularityMs: 60_000 };
const puts = (n: number, version = 0): StateChange[] =>
  Array.from({ length: n }, (_, i) => ({ key: { id: `k${String(i).padStart(3, '0')}`, evictAt: i }, value: { n: i + version } }));
const ctx: SinkContext = { queryId: 'q', queryName: 'q', outputMode: 'update', columns: ['k'], keyColumns: [] };

describe('the in-memory state store', () => {
  it('returns entries in a shuffled order that its seed reproduces', async () => {
    const ids = async (seed: number) => {
      const s = new InMemoryStateStore({ seed });
      await s.commit(op, 0, puts(50));
      return [(await s.all(op, 0)).map((e) => e.key.id), (await s.expired(op, 1000, 0)).map((e) => e.key.id)];
    };
    const [all1, expired1] = await ids(7);
    expect(await ids(7)).toEqual([all1, expired1]);
    expect(all1).not.toEqual([...all1].sort());
    expect(all1).not.toEqual(expired1);
    expect([...all1].sort()).toEqual(puts(50).map((c) => c.key.id));
    expect(new InMemoryStateStore().description).toContain(`SLUICE_TWIN_SEED ${TWIN_SEED}`);
  });

  it("takes a key id over 1,024 bytes (the DynamoDB store hashes long ids) and refuses an item over 400 KB with the store's error, writing nothing", async () => {
    const s = new InMemoryStateStore();
    const long = 'x'.repeat(2048);
    await expect(s.commit(op, 0, [{ key: { id: long, evictAt: null }, value: 1 }])).resolves.toBeUndefined();
    // random text: gzip cannot bring it under 400 KB, as it would a repeated character
    const big = { key: { id: 'big', evictAt: null }, value: randomBytes(450 * 1024).toString('base64') };
    const err = await s.commit(op, 1, [big]).catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.message).toMatch(
      /state of operator `op0` for key `big` needs a state item \(its value as JSON, gzipped above 32 KB\) of \d+ bytes, above the limit of 409600 bytes: per-key state must stay smaller/,
    );
    expect((await s.all(op, 1)).map((e) => e.key.id)).toEqual([long]);
  });

  it('refuses a key read or written in another partition than the one it lives in, as the DynamoDB store would not find it there', async () => {
    const s = new InMemoryStateStore();
    await s.commit(op, 0, [{ key: { id: 'k', evictAt: null, partition: 2 }, value: 1 }]);
    expect([...(await s.get(op, [{ id: 'k', evictAt: null, partition: 2 }], 0)).values()].map((e) => e.key)).toEqual([
      { id: 'k', evictAt: null, partition: 2 },
    ]);
    await expect(s.get(op, [{ id: 'k', evictAt: null, partition: 1 }], 0)).rejects.toThrow(/read from partition 1, but it lives in partition 2/);
    await expect(s.commit(op, 1, [{ key: { id: 'k', evictAt: null }, value: 2 }])).rejects.toThrow(/written to partition 0, but it lives in partition 2/);
  });

  it('keeps a tombstone (the value before the deletion) until the next commit, however late, and drops it then', async () => {
    const s = new InMemoryStateStore();
    await s.commit(op, 0, puts(2));
    await s.commit(op, 1, [{ key: { id: 'k000', evictAt: 0 }, value: null }]);
    // A replay of batch 1 reads version 0, a year later too: nothing a read can see carries a TTL.
    expect(s.expireBefore(Date.UTC(2027, 9, 1))).toBe(0);
    expect((await s.get(op, [{ id: 'k000', evictAt: 0 }], 0)).get('k000')?.value).toEqual({ n: 0 });
    expect(s.size()).toBe(2);
    // Batch 2 commits: no read at version 0 is possible any more, and the tombstone goes.
    await s.commit(op, 2, [{ key: { id: 'k001', evictAt: 0 }, value: { n: 9 } }]);
    expect(s.size()).toBe(1);
    expect((await s.all(op, 2)).map((e) => [e.key.id, e.value])).toEqual([['k001', { n: 9 }]]);
  });
});

describe('the in-memory sink', () => {
  const rows = (n: number): OutputRow[] => Array.from({ length: n }, (_, i) => ({ k: n - i }));

  it('writes sorted rows in pieces, tells onPieceWritten after each, and records every write', async () => {
    const sink = new InMemorySink({ pieceRows: 2 });
    const told: number[] = [];
    await sink.addBatch(0, rows(5), { ...ctx, onPieceWritten: (i) => told.push(i) });
    expect(told).toEqual([0, 1, 2]);
    expect(sink.writes.map((w) => [w.piece, w.rows])).toEqual([
      [0, [{ k: 1 }, { k: 2 }]],
      [1, [{ k: 3 }, { k: 4 }]],
      [2, [{ k: 5 }]],
    ]);
    // A replay in another order writes the same pieces: visible as a second write, no conflict.
    await sink.addBatch(0, [...rows(5)].reverse(), ctx);
    expect(sink.timesWritten(0)).toBe(2);
    expect(sink.conflicts()).toEqual([]);
    // A replay with other rows is a conflict.
    await sink.addBatch(0, [{ k: 0 }, ...rows(4)], ctx);
    expect(sink.conflicts()).toEqual([
      { batchId: 0, piece: 0 },
      { batchId: 0, piece: 1 },
      { batchId: 0, piece: 2 },
    ]);
    expect(() => new InMemorySink({ pieceRows: 0 })).toThrow(/pieceRows \(0\) must be a positive integer/);
  });
});

describe('the in-memory checkpoint', () => {
  const commit = (committedAtMs: number, nextBatchWatermarkMs = 0): CommitEntry => ({
    batchId: 0,
    queryId: 'q',
    shapeFingerprint: 'f',
    offsets: [{ lastKey: 'a' }],
    batchWatermarkMs: 0,
    nextBatchWatermarkMs,
    committedAtMs,
  });

  it('keeps the first commit of a batch, as S3 does with If-None-Match, and refuses a different one', async () => {
    const c = new InMemoryCheckpoint();
    await c.writeCommit(commit(1));
    await c.writeCommit(commit(2));
    expect((await c.readCommit(0))!.committedAtMs).toBe(1);
    await expect(c.writeCommit(commit(3, 5))).rejects.toThrow(/commits\/0 already exists with different content/);
  });

  it('hands back copies, and can hold an entry that does not parse', async () => {
    const c = new InMemoryCheckpoint();
    const e = commit(1);
    await c.writeCommit(e);
    (e.offsets as unknown[]).push('changed after the write');
    expect((await c.readCommit(0))!.offsets).toEqual([{ lastKey: 'a' }]);
    c.unreadable.add('commits/0');
    await expect(c.readCommit(0)).rejects.toThrow(CheckpointMismatchError);
    await expect(c.readCommit(0)).rejects.toThrow(/commits\/0 is not valid JSON .*restore the object from a backup or S3 versioning/);
  });
});

describe('the mid-sink crash point', () => {
  const plan = readStream
    .format('json')
    .schema('k STRING, v DOUBLE')
    .load()
    .groupBy('k')
    .agg(sum('v').as('total'), count().as('n'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('mid-sink')
    .plan();

  it('parses with @batch like the other points', () => {
    expect(parseCrashPlan('mid-sink@3')).toEqual({ point: 'mid-sink', batchId: 3 });
  });

  it('stops a batch after its first piece; the replay writes every piece, the same content, nothing lost', async () => {
    const t = createTestRunner(plan, { sink: new InMemorySink({ pieceRows: 3 }) });
    t.drop(Array.from({ length: 10 }, (_, i) => ({ k: `k${i}`, v: i })));
    expect(await t.crashRun({ point: 'mid-sink', batchId: 0 })).toBe(true);
    expect(t.sink.writes.map((w) => w.piece)).toEqual([0]);
    expect([...t.checkpoint.commits.keys()]).toEqual([]);
    await t.run();
    expect(t.sink.writes.map((w) => w.piece)).toEqual([0, 0, 1, 2, 3]);
    expect(t.sink.conflicts()).toEqual([]);
    expect(
      t
        .sinkRows()
        .map((r) => r.k)
        .sort(),
    ).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
  });

  it('does not fire for a sink that never says it wrote a piece', async () => {
    const t = createTestRunner(plan);
    t.drop([{ k: 'a', v: 1 }]);
    const onePiece = { description: 'one piece', addBatch: async () => undefined };
    const deps = { plan, source: t.source, checkpoint: t.checkpoint, state: t.state, sink: onePiece };
    const { MicroBatchExecutor } = await import('../../lib/engine/schedule/single');
    await expect(new MicroBatchExecutor(crashingAt({ point: 'mid-sink' }, deps)).run()).resolves.toMatchObject({ stoppedBy: 'done' });
  });
});
