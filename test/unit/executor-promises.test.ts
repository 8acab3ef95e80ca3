/**
 * What the README promises of the run loop, each shown by a test that fails when the promise is
 * broken: the deadline's 1.5x term, a replay that respects the deadline, an overlap that really
 * overlaps, the lease renewed between batches, checkpoint entries purged beyond 100 batches, and
 * a gap in the offsets log, an unreadable commit and a failed progress write.
 */
import { CheckpointMismatchError, SluiceError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import type { Json, LeaseHandle, ReadOptions, ReadResult } from '../../lib/engine/ports';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { at, createTestRunner, memoryPorts, TEST_LEASE_MS } from './engine-factories';

const totals = (maxFilesPerTrigger = 1) =>
  readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .option('maxFilesPerTrigger', maxFilesPerTrigger)
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('promises')
    .plan();

/** A landing prefix whose reads take `readMs` of the test's clock each (a batch's own time). */
class SlowSource extends InMemoryFileSource {
  onRead: () => void | Promise<void> = () => undefined;
  async *readChunks(id: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    await this.onRead();
    yield* super.readChunks(id, start, end, options);
  }
}

function slowRunner(readMs: number) {
  const time = { now: 1_000_000 };
  const plan = totals();
  const source = new SlowSource(plan.source.schema);
  source.onRead = () => void (time.now += readMs);
  const t = createTestRunner(plan, { source, clock: { now: () => time.now } });
  for (let i = 0; i < 5; i++) t.drop([{ user: 'a', event_time: at(`12:0${i}`), amount: 1 }]);
  return { t, time, source };
}

describe('when the deadline is near', () => {
  it('stops once the time left is less than 1.5 times the longest batch, above the 3 s floor', async () => {
    const { t, time } = slowRunner(10_000);
    // After batch 0 (10 s), 14 s are left: more than the 3 s floor, less than 1.5 x 10 s.
    const r = await t.run(time.now + 24_000);
    expect(r.stoppedBy).toBe('deadline');
    expect(r.batches.map((b) => b.batchId)).toEqual([0]);
    expect(r.backlogLeft).toBe(4);
  });

  it('goes on while the time left exceeds 1.5 times the longest batch', async () => {
    const { t, time } = slowRunner(10_000);
    // 16 s left after batch 0: room for batch 1 (1.5 x 10 s = 15 s), then 6 s left: stop.
    const r = await t.run(time.now + 26_000);
    expect(r.stoppedBy).toBe('deadline');
    expect(r.batches.map((b) => b.batchId)).toEqual([0, 1]);
  });

  it('does not start a pending replay past the deadline: it stops, and the next run replays', async () => {
    const { t } = slowRunner(0);
    expect(await t.crashRun({ point: 'mid-state', batchId: 0 })).toBe(true);
    const r = await t.run(t.clock.now() + 1000);
    expect(r.stoppedBy).toBe('deadline');
    expect(r.batches).toEqual([]);
    expect([...t.checkpoint.commits.keys()]).toEqual([]);
    const next = await t.run(t.clock.now() + 60_000);
    expect(next.batches[0]).toMatchObject({ batchId: 0, replay: true, numInputRows: 1 });
  });
});

describe('when a second run starts while the first is in the middle of a batch', () => {
  it('the second exits lease-held while the first provably still runs, and the first then finishes', async () => {
    const plan = totals();
    const source = new SlowSource(plan.source.schema);
    const t = createTestRunner(plan, { source });
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 1 }]);
    let release!: () => void;
    let reading!: () => void;
    const inRead = new Promise<void>((r) => (reading = r));
    source.onRead = () =>
      new Promise<void>((r) => {
        reading();
        release = r;
      });

    const first = t.executor().run();
    await inRead; // the first run holds the lease and is inside batch 0's read
    source.onRead = () => undefined;
    const second = await t.executor().run();
    expect(second.stoppedBy).toBe('lease-held');
    expect(t.sink.calls).toBe(0); // the first had not reached its sink: the two overlapped
    release();
    expect((await first).batches.map((b) => [b.batchId, b.numInputRows])).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(t.sink.calls).toBe(2);
  });
});

describe('when a run outlasts half of its lease', () => {
  it('renews the lease between batches, so no other run can take it when the first term ends', async () => {
    const { t, time, source } = slowRunner(TEST_LEASE_MS / 3);
    const renewed: LeaseHandle[] = [];
    const renew = t.lease.renew.bind(t.lease);
    t.lease.renew = async (h, ms) => {
      const next = await renew(h, ms);
      renewed.push(next);
      return next;
    };
    const start = time.now;
    const takeovers: Array<LeaseHandle | null> = [];
    source.onRead = async () => {
      time.now += TEST_LEASE_MS / 3;
      // Past the first term's end (start + lease), a competitor tries to take the lease.
      if (time.now > start + TEST_LEASE_MS) takeovers.push(await t.lease.acquire('competitor', TEST_LEASE_MS));
    };
    const r = await t.run();
    expect(r.batches.filter((b) => !b.noData).length).toBe(5);
    expect(renewed.length).toBeGreaterThanOrEqual(2);
    expect(renewed[0].expiresAtMs).toBeGreaterThan(start + TEST_LEASE_MS);
    expect(takeovers.length).toBeGreaterThan(0);
    expect(takeovers).toEqual(takeovers.map(() => null));
  });
});

describe('when a query has run more than 100 batches', () => {
  it('purges checkpoint entries older than the last 100 (every 10 batches)', async () => {
    const plan = readStream
      .format('json')
      .schema('user STRING, amount DOUBLE')
      .option('maxFilesPerTrigger', 1)
      .load()
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('purge')
      .plan();
    const t = createTestRunner(plan);
    for (let i = 0; i < 115; i++) t.drop([{ user: `u${i}`, amount: i }]);
    const r = await t.run();
    expect(r.batches.length).toBe(115);
    // Purged at batch 110 down to 110 - 100 = 10; batches 10..114 stay.
    for (const log of [t.checkpoint.offsets, t.checkpoint.commits, t.checkpoint.progress]) {
      expect(Math.min(...log.keys())).toBe(10);
      expect(log.size).toBe(105);
    }
    t.drop([{ user: 'late', amount: 1 }]);
    expect((await t.run()).batches.map((b) => b.batchId)).toEqual([115]);
  });

  it('logs a failed purge and goes on: the batches are committed, and the next purge removes what the failed one left', async () => {
    const plan = readStream
      .format('json')
      .schema('user STRING, amount DOUBLE')
      .option('maxFilesPerTrigger', 1)
      .load()
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('purge-fails')
      .plan();
    const ports = memoryPorts(plan);
    const purge = ports.checkpoint.purge.bind(ports.checkpoint);
    let failures = 0;
    ports.checkpoint.purge = async (keepFrom: number) => {
      if (keepFrom === 10) {
        failures++;
        throw new Error('DeleteObjects failed for 1 of 8 keys');
      }
      return purge(keepFrom);
    };
    for (let i = 0; i < 125; i++) ports.source.add(`part-${String(i).padStart(5, '0')}.json`, [{ user: `u${i}`, amount: i }]);
    const logs: Array<Record<string, unknown>> = [];
    const r = await new MicroBatchExecutor({ plan, ...ports, log: (e) => logs.push(e) }).run();
    expect(failures).toBe(1);
    expect(r.batches.length).toBe(125);
    expect(logs.filter((l) => l.event === 'purge-failed')).toEqual([
      expect.objectContaining({ batchId: 110, keepFrom: 10, error: 'DeleteObjects failed for 1 of 8 keys' }),
    ]);
    // Purged at 120 down to 20: what the purge at 110 failed to remove went then.
    expect(Math.min(...ports.checkpoint.commits.keys())).toBe(20);
  });
});

describe('when the checkpoint is damaged', () => {
  const started = async () => {
    const t = createTestRunner(totals());
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 1 }]);
    await t.run();
    t.drop([{ user: 'b', event_time: at('12:02'), amount: 2 }]);
    return t;
  };

  it('refuses a gap in the offsets log, naming the missing entry, and writes nothing', async () => {
    const t = await started();
    const last = Math.max(...t.checkpoint.commits.keys());
    t.checkpoint.offsets.set(last + 2, { ...t.checkpoint.offsets.get(last)!, batchId: last + 2 });
    const calls = t.sink.calls;
    const err = await t.run().catch((e) => e);
    expect(err).toBeInstanceOf(CheckpointMismatchError);
    expect(err.message).toBe(
      `checkpoint memory://checkpoint has offsets up to batch ${last + 2} but no offsets/${last + 1} after commits/${last}: restore the missing entry or start a new checkpoint location`,
    );
    expect(t.sink.calls).toBe(calls);
    expect(t.checkpoint.offsets.has(last + 1)).toBe(false);
  });

  it('fails on an unreadable commit with the remedy, and writes nothing', async () => {
    const t = await started();
    const last = Math.max(...t.checkpoint.commits.keys());
    t.checkpoint.unreadable.add(`commits/${last}`);
    const offsets = t.checkpoint.offsets.size;
    await expect(t.run()).rejects.toThrow(
      `checkpoint entry memory://checkpoint/commits/${last} is not valid JSON (damaged in the twin): restore the object from a backup or S3 versioning, or start the query on a new checkpoint prefix`,
    );
    expect(t.checkpoint.offsets.size).toBe(offsets);
  });
});

describe('when the progress report cannot be written', () => {
  it('a transient failure is logged and the batch still commits (progress is informational)', async () => {
    const t = createTestRunner(totals());
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 1 }]);
    const events: Array<Record<string, unknown>> = [];
    const checkpoint = Object.assign(Object.create(t.checkpoint), {
      writeProgress: async () => {
        throw new SluiceError('S3 answered 503 Slow Down', { retriable: true });
      },
    });
    const r = await new MicroBatchExecutor({ plan: totals(), ...t, checkpoint, log: (e) => events.push(e) }).run();
    expect(r.stoppedBy).toBe('done');
    expect([...t.checkpoint.commits.keys()]).toEqual([0, 1]);
    expect(t.checkpoint.progress.size).toBe(0);
    expect(events.filter((e) => e.event === 'progress-write-failed')).toEqual([
      { event: 'progress-write-failed', batchId: 0, error: 'S3 answered 503 Slow Down' },
      { event: 'progress-write-failed', batchId: 1, error: 'S3 answered 503 Slow Down' },
    ]);
  });

  it('a permanent failure fails the batch before its commit, and the next run replays it', async () => {
    const t = createTestRunner(totals());
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 1 }]);
    const checkpoint = Object.assign(Object.create(t.checkpoint), {
      writeProgress: async () => {
        throw new SluiceError('access denied to progress/0: grant s3:PutObject', { retriable: false });
      },
    });
    await expect(new MicroBatchExecutor({ plan: totals(), ...t, checkpoint }).run()).rejects.toThrow('access denied to progress/0: grant s3:PutObject');
    expect([...t.checkpoint.commits.keys()]).toEqual([]);
    const r = await t.run();
    expect(r.batches[0]).toMatchObject({ batchId: 0, replay: true });
    expect(t.checkpoint.progress.has(0)).toBe(true);
  });
});
