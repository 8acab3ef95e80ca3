/**
 * The run loop on in-memory ports: batch numbering, no-data batches, rate limits with Spark's
 * two watermarks, recovery after a crash at every point, the lease, shape checks, dead letters.
 */
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { randomBytes } from 'node:crypto';
import { CheckpointMismatchError, SluiceError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { col, count, max, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { windowedTotals, SEED_FILES } from '../../examples/windowed-totals';
import { at, createTestRunner } from './engine-factories';

const totals = (mode: 'append' | 'update' | 'complete', maxFilesPerTrigger?: number) =>
  readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .options(maxFilesPerTrigger ? { maxFilesPerTrigger } : {})
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode(mode)
    .trigger({ availableNow: true })
    .queryName('t')
    .plan();

const win = (start: string, end: string) => ({ start: `2026-10-01T${start}:00.000Z`, end: `2026-10-01T${end}:00.000Z` });

describe('when the seed example runs as three scheduled runs', () => {
  it('numbers batches as Spark does, with a no-data batch when the watermark moves', async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'append' }));
    const ids: number[][] = [];
    for (const f of SEED_FILES) {
      t.drop(f.rows);
      ids.push((await t.run()).batches.map((b) => b.batchId));
    }
    expect(ids).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
  });

  it('does nothing, and writes nothing, when nothing new arrived', async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'append' }));
    t.drop(SEED_FILES[0].rows);
    await t.run();
    const offsetsBefore = t.checkpoint.offsets.size;
    const r = await t.run();
    expect(r.batches).toEqual([]);
    expect(r.watermark).toBe('2026-10-01T12:02:00.000Z');
    expect(t.checkpoint.offsets.size).toBe(offsetsBefore);
  });
});

describe('when a rate limit splits one run into several data batches', () => {
  it('filters late rows with the previous batch watermark and evicts with its own (Spark >= 3.4)', async () => {
    const t = createTestRunner(totals('append', 1));
    t.drop([{ user: 'a', event_time: at('12:30'), amount: 1 }]); // batch 0: watermark becomes 12:20
    t.drop([{ user: 'b', event_time: at('12:05'), amount: 2 }]); // batch 1: evicts with 12:20, filters with 0
    const r = await t.run();
    expect(r.batches.map((b) => [b.batchId, b.noData])).toEqual([
      [0, false],
      [1, false],
    ]);
    expect(r.batches[1].rows).toEqual([{ window: win('12:00', '12:10'), total: 2, events: 1 }]);
    expect(r.droppedByWatermark).toBe(0);

    t.drop([{ user: 'c', event_time: at('12:06'), amount: 4 }]); // batch 2 filters with 12:20: late
    const r2 = await t.run();
    expect(r2.droppedByWatermark).toBe(1);
    expect(r2.batches.flatMap((b) => b.rows)).toEqual([]);
  });

  it('keeps the late rows it drops in the side output, so sink plus late rows equals the input', async () => {
    const t = createTestRunner(totals('update'));
    t.drop([
      { user: 'a', event_time: at('12:30'), amount: 1 },
      { user: 'a', event_time: at('12:31'), amount: 1 },
    ]);
    await t.run();
    t.drop([
      { user: 'b', event_time: at('12:05'), amount: 2 },
      { user: 'c', event_time: at('12:35'), amount: 3 },
    ]);
    const r = await t.run();
    expect(r.droppedByWatermark).toBe(1);
    const late = t.lateRows.all('late') as Array<{ row: Record<string, unknown>; watermark: string }>;
    expect(late).toEqual([
      expect.objectContaining({ row: { user: 'b', event_time: '2026-10-01T12:05:00.000Z', amount: 2 }, watermark: '2026-10-01T12:21:00.000Z' }),
    ]);
    const latest = new Map<string, number>();
    for (const row of t.sinkRows()) latest.set(JSON.stringify(row.window), row.total as number);
    const sinkTotal = [...latest.values()].reduce((a, b) => a + b, 0);
    expect(sinkTotal + late.reduce((a, l) => a + (l.row.amount as number), 0)).toBe(1 + 1 + 2 + 3);
  });
});

describe('when a run crashes', () => {
  const noCrash = async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'update' }));
    for (const f of SEED_FILES) {
      t.drop(f.rows);
      await t.run();
    }
    return t;
  };

  it.each(CRASH_POINTS)('at %s in every run, the next run ends with the same sink, state and watermark', async (point) => {
    const expected = await noCrash();
    const t = createTestRunner(windowedTotals({ outputMode: 'update' }));
    let fired = 0;
    for (const f of SEED_FILES) {
      t.drop(f.rows);
      if (await t.crashRun({ point })) fired++;
      await t.run();
    }
    expect(fired).toBe(3);
    expect([...t.sink.batches.entries()]).toEqual([...expected.sink.batches.entries()]);
    expect(await t.state.all({ operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 1 }, 99)).toEqual(
      await expected.state.all({ operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 1 }, 99),
    );
    const last = Math.max(...t.checkpoint.commits.keys());
    expect(t.checkpoint.commits.get(last)!.nextBatchWatermarkMs).toBe(expected.checkpoint.commits.get(last)!.nextBatchWatermarkMs);
    expect(t.checkpoint.commits.get(last)!.stateRows).toBe(expected.checkpoint.commits.get(last)!.stateRows);
  });

  it.each(['after-offsets', 'mid-read'] as const)('at %s of a no-data batch, the next run replays it as a no-data batch', async (point) => {
    const expected = await noCrash();
    const t = createTestRunner(windowedTotals({ outputMode: 'update' }));
    t.drop(SEED_FILES[0].rows);
    expect(await t.crashRun({ point, batchId: 1 })).toBe(true); // batch 0 has data, batch 1 none
    expect([...t.checkpoint.commits.keys()]).toEqual([0]);
    const r = await t.run();
    expect(r.batches.map((b) => [b.batchId, b.replay, b.noData])).toEqual([[1, true, true]]);
    for (const f of SEED_FILES.slice(1)) {
      t.drop(f.rows);
      await t.run();
    }
    expect([...t.sink.batches.entries()]).toEqual([...expected.sink.batches.entries()]);
  });

  it('replays an uncommitted batch with its logged watermarks even when more files arrived meanwhile', async () => {
    const t = createTestRunner(totals('append', 1));
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 10 }]);
    expect(await t.crashRun({ point: 'mid-state' })).toBe(true);
    t.drop([{ user: 'b', event_time: at('12:30'), amount: 1 }]);
    const r = await t.run();
    expect(r.batches[0]).toMatchObject({ batchId: 0, replay: true, numInputRows: 1 });
    expect(r.batches.map((b) => b.batchId)).toEqual([0, 1, 2]);
    expect(t.sinkRows()).toEqual([{ window: win('12:00', '12:10'), total: 10, events: 1 }]);
  });
});

describe('when a run is killed (an injected crash) while it holds the lease', () => {
  it('keeps the lease: the next run exits lease-held, and one after the expiry takes over and replays the batch', async () => {
    const t = createTestRunner(totals('update'));
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 5 }]);
    await expect(t.executor({ point: 'after-sink', batchId: 0 }).run()).rejects.toThrow('injected crash at after-sink in batch 0');

    const early = await t.run();
    expect(early.stoppedBy).toBe('lease-held');
    expect(early.batches).toEqual([]);
    expect([...t.checkpoint.commits.keys()]).toEqual([]);

    t.waitOutLease();
    const late = await t.run();
    expect(late.stoppedBy).toBe('done');
    expect(late.batches.map((b) => [b.batchId, b.replay, b.noData])).toEqual([
      [0, true, false],
      [1, false, true],
    ]);
    expect(t.sinkRows()).toEqual([{ window: win('12:00', '12:10'), total: 5, events: 1 }]);
    // The replay rewrote batch 0 with the same rows: written twice, never with other content.
    expect(t.sink.timesWritten(0)).toBe(2);
    expect(t.sink.conflicts()).toEqual([]);
  });

  it('releases the lease after an ordinary error, so the next run need not wait', async () => {
    const t = createTestRunner(totals('update'));
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 5 }]);
    const failing = {
      ...t.sink,
      description: 'fails',
      addBatch: async () => {
        throw new Error('sink unavailable');
      },
    };
    await expect(new MicroBatchExecutor({ plan: totals('update'), ...t, sink: failing, clock: t.clock }).run()).rejects.toThrow('sink unavailable');
    const next = await t.run();
    expect(next.stoppedBy).toBe('done');
    expect(next.batches.map((b) => [b.batchId, b.replay, b.noData])).toEqual([
      [0, true, false],
      [1, false, true],
    ]);
  });
});

describe('when two runs of one query overlap', () => {
  it('the second exits at once, without side effects', async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'append' }));
    t.drop(SEED_FILES[0].rows);
    const holder = await t.lease.acquire('other-run', 60_000);
    expect(holder).not.toBeNull();
    const r = await t.run();
    expect(r.stoppedBy).toBe('lease-held');
    expect(t.checkpoint.offsets.size).toBe(0);
    expect(t.sink.calls).toBe(0);
  });
});

describe('when the query changes its stateful shape', () => {
  it('refuses the checkpoint with a message naming the remedy', async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'append', name: 'same' }));
    t.drop(SEED_FILES[0].rows);
    await t.run();
    const changed = new (await import('../../lib/engine/schedule/single')).MicroBatchExecutor({
      plan: windowedTotals({ outputMode: 'update', name: 'same' }),
      source: t.source,
      checkpoint: t.checkpoint,
      state: t.state,
      sink: t.sink,
    });
    await expect(changed.run()).rejects.toThrow(CheckpointMismatchError);
    await expect(changed.run()).rejects.toThrow(/new checkpoint location/);
  });
});

describe('when input is malformed', () => {
  it('keeps each bad line with its file and line number, and goes on', async () => {
    const t = createTestRunner(windowedTotals({ outputMode: 'update' }));
    t.drop(
      [
        '{"user":"a","event_time":"2026-10-01 12:01:00","amount":10}',
        '{"user":"b","event_time":"noon","amount":5}',
        'not json',
        '{"user":"c","event_time":"2026-10-01 12:02:00"}',
      ].join('\n'),
    );
    const r = await t.run();
    // line 4 leaves amount out: null, as Spark's reader gives a field the record does not name
    expect(r.deadLetters).toBe(2);
    expect(r.rowsIn).toBe(2);
    const dl = t.deadLetters.all('malformed') as Array<{ source: { file: string; line: number }; raw: string; reason: string }>;
    expect(dl.map((d) => d.source.line)).toEqual([2, 3]);
    expect(dl[0]).toMatchObject({ source: { file: 'part-00001.json' }, raw: '{"user":"b","event_time":"noon","amount":5}' });
  });
});

describe('when the deadline is near', () => {
  it('stops starting batches, reports the backlog, and the next run continues', async () => {
    let now = 1_000_000;
    const t = createTestRunner(totals('append', 1), { clock: { now: () => now } });
    for (let i = 0; i < 3; i++) t.drop([{ user: 'a', event_time: at(`12:0${i}`), amount: 1 }]);
    const r = await t.run(now + 1000);
    expect(r.stoppedBy).toBe('deadline');
    expect(r.batches).toEqual([]);
    expect(r.backlogLeft).toBe(3);
    now += 10_000;
    const r2 = await t.run();
    expect(r2.batches.filter((b) => !b.noData).length).toBe(3);
  });
});

// ---------------------------------------------------------------------------------------------
// Issue 14: the state store's part

describe('when a state value cannot fit in a store item (hole 3d)', () => {
  const longest = readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, note STRING')
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), col('user'))
    .agg(max('note').as('longest'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('longest')
    .plan();

  it('fails the batch before its dead letters, sink and state are written, naming the operator, key, size and fix', async () => {
    const t = createTestRunner(longest);
    // Random text, so that gzip cannot bring it under 400 KB.
    const huge = randomBytes(450 * 1024).toString('base64');
    t.drop(
      [
        JSON.stringify({ user: 'a', event_time: at('12:01'), note: huge }),
        'not json',
        JSON.stringify({ user: 'b', event_time: at('12:02'), note: 'short' }),
      ].join('\n'),
    );
    const err = await t.run().catch((e: unknown) => e as SluiceError);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.message).toMatch(/operator `op0` for key `\[\[.*"a"\]` needs .* of \d{6} bytes, above the limit of 409600 bytes: per-key state/);
    expect(t.sink.calls).toBe(0);
    expect(t.deadLetters.all('malformed')).toEqual([]);
    expect(t.checkpoint.commits.size).toBe(0);
    expect(t.state.size()).toBe(0);
  });

  it('lets a large value through when it fits (gzipped, as the DynamoDB store keeps it)', async () => {
    const t = createTestRunner(longest);
    t.drop([{ user: 'a', event_time: at('12:01'), note: 'x'.repeat(600 * 1024) }]);
    const r = await t.run();
    expect([r.deadLetters, r.rowsOut]).toEqual([0, 1]);
  });
});

describe('when a batch is replayed a year after its crash (hole 2)', () => {
  const YEAR = 365 * 86_400_000;

  it('replays it: the state keeps the version the replay reads (no retention bound), whatever TTL does meanwhile', async () => {
    let now = Date.parse('2026-10-02T00:00:00Z');
    const state = new InMemoryStateStore();
    const t = createTestRunner(totals('append'), { state, clock: { now: () => now } });
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 10 }]);
    expect(await t.crashRun({ point: 'before-commit' })).toBe(true);
    now = t.checkpoint.offsets.get(0)!.batchTimestampMs + YEAR;
    expect((state as { retentionMs?: number }).retentionMs).toBeUndefined();
    expect(state.expireBefore(now)).toBe(0);
    const r = await t.run();
    expect(r.batches[0]).toMatchObject({ batchId: 0, replay: true, numInputRows: 1 });
  });
});

describe('when the run holds a lease (hole 4)', () => {
  it("passes the lease to the state commit, so the store fences its writes on the lease's token", async () => {
    const fences: Array<number | undefined> = [];
    class Recording extends InMemoryStateStore {
      async commit(...args: Parameters<InMemoryStateStore['commit']>) {
        fences.push((args as unknown as [unknown, unknown, unknown, { token: number } | undefined])[3]?.token);
        return super.commit(args[0], args[1], args[2]);
      }
    }
    const t = createTestRunner(totals('update'), { state: new Recording() });
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 10 }]);
    await t.run();
    await t.lease.release((await t.lease.acquire('someone', 60_000))!); // another holder came and went: the next run's token is 3
    t.drop([{ user: 'a', event_time: at('12:02'), amount: 1 }]);
    await t.run();
    expect(fences).toEqual([1, 3]);
  });
});

describe("when a run has a batch, the state store's heads", () => {
  /** The in-memory store, noting each readAhead and each read of state, in order. */
  class NotingStore extends InMemoryStateStore {
    readonly calls: string[] = [];
    readAhead(op: { operatorId: string }, partitions?: readonly number[]) {
      this.calls.push(`readAhead ${op.operatorId} ${partitions === undefined ? 'all' : partitions.join(',')}`);
    }
    override async get(...args: Parameters<InMemoryStateStore['get']>) {
      this.calls.push('get');
      return super.get(...args);
    }
  }

  it('are asked for once, before the first batch reads state, and not at all by a run without a batch', async () => {
    const state = new NotingStore();
    const t = createTestRunner(totals('update', 1), { state });
    t.drop([{ user: 'a', event_time: at('12:01'), amount: 1 }]);
    await t.run();
    state.calls.length = 0;
    // a later run: its groups are read from the store, after the heads were asked for
    t.drop([{ user: 'b', event_time: at('12:12'), amount: 2 }]);
    t.drop([{ user: 'c', event_time: at('12:23'), amount: 3 }]);
    const report = await t.run();
    expect(report.batches.length).toBeGreaterThanOrEqual(2);
    const ahead = state.calls.filter((c) => c.startsWith('readAhead'));
    expect(ahead).toHaveLength(1);
    expect(ahead[0]).toMatch(/ all$/);
    expect(state.calls).toContain('get');
    expect(state.calls.indexOf(ahead[0])).toBeLessThan(state.calls.indexOf('get'));
    // a run with nothing to read asks for nothing
    state.calls.length = 0;
    expect((await t.run()).batches).toEqual([]);
    expect(state.calls).toEqual([]);
  });
});
