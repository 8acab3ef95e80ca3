/**
 * The aggregation keeps its groups, with the state it committed, between the batches of one run:
 * a group met again needs no read from the store. These tests pin what that must not change: the
 * results, the state, and a replay after a failure, which must start from the store again.
 */
import { crashingAt } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { CountingStateStore } from '../../lib/engine/testing/counting-state-store';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import type { OperatorStateSpec, StateKey } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { avg, count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { at } from './engine-factories';

/** The in-memory store, recording the ids each batch reads. */
class RecordingStore extends CountingStateStore {
  readonly reads = new Map<number, string[]>();
  constructor() {
    super(new InMemoryStateStore());
  }
  get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    this.reads.set(version + 1, [...(this.reads.get(version + 1) ?? []), ...keys.map((k) => k.id)]);
    return super.get(op, keys, version);
  }
}

const plan = (mode: 'append' | 'update'): QueryPlan =>
  readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .option('maxFilesPerTrigger', 1)
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('n'), avg('amount').as('mean'))
    .writeStream.outputMode(mode)
    .plan();

// One file per batch: `a` comes back in every batch, `b` once, and the last file closes 12:00.
const FILES = [
  [
    { user: 'a', event_time: at('12:01'), amount: 1 },
    { user: 'b', event_time: at('12:02'), amount: 2 },
  ],
  [{ user: 'a', event_time: at('12:03'), amount: 3 }],
  [
    { user: 'a', event_time: at('12:04'), amount: 4 },
    { user: 'c', event_time: at('12:05'), amount: 5 },
  ],
  [{ user: 'a', event_time: at('12:31'), amount: 100 }],
];

function ports(mode: 'append' | 'update') {
  const p = plan(mode);
  const source = new InMemoryFileSource(p.source.schema);
  FILES.forEach((rows, i) => source.add(`part-${i}.json`, rows));
  return { plan: p, source, checkpoint: new InMemoryCheckpoint(), state: new RecordingStore(), sink: new InMemorySink() };
}

/** The sink's batches, each batch's rows in one canonical order. */
const bySorted = (sink: InMemorySink) => [...sink.batches.entries()].map(([id, rows]) => [id, rows.map((r) => JSON.stringify(r)).sort()] as const);

const OP: OperatorStateSpec = { operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 1 };

describe('when a run goes on to its next batch', () => {
  it('reads nothing from the store in a run that started at batch 0 (it holds every stored group)', async () => {
    const p = ports('update');
    const r = await new MicroBatchExecutor(p).run({ collectRows: true });
    expect(r.batches.map((b) => b.batchId)).toEqual([0, 1, 2, 3, 4]);
    expect([...p.state.reads.values()].flat()).toEqual([]);
    expect(r.batches[2].rows).toEqual(
      expect.arrayContaining([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, user: 'a', total: 8, n: 3, mean: 8 / 3 }]),
    );
  });

  it('reads from the store only the groups the run has not met yet (a run that started later)', async () => {
    const p = ports('update');
    // the first run stops right after batch 0's commit; the second starts at batch 1
    await expect(new MicroBatchExecutor(crashingAt({ point: 'after-commit', batchId: 0 }, p)).run()).rejects.toBeInstanceOf(InjectedCrash);
    p.state.reads.clear();
    const r = await new MicroBatchExecutor(p).run({ collectRows: true });
    expect(r.batches.map((b) => b.batchId)).toEqual([1, 2, 3, 4]);
    const a = '[[1790856000000000,1790856600000000],"a"]';
    expect(p.state.reads.get(1)).toEqual([a]);
    // a's 12:00 group is kept from batch 1 on: not read again
    expect(p.state.reads.get(2)).toEqual(['[[1790856000000000,1790856600000000],"c"]']);
    expect(r.batches[1].rows).toEqual(
      expect.arrayContaining([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, user: 'a', total: 8, n: 3, mean: 8 / 3 }]),
    );
  });

  it('gives the results and state of runs of one batch each, which read everything from the store', async () => {
    for (const mode of ['append', 'update'] as const) {
      const kept = ports(mode);
      await new MicroBatchExecutor(kept).run();
      // one executor per batch: each stops right after its batch's commit, the next one goes on
      const fresh = ports(mode);
      let executors = 0;
      for (;;) {
        executors++;
        try {
          await new MicroBatchExecutor(crashingAt({ point: 'after-commit' }, fresh)).run();
          break;
        } catch (e) {
          if (!(e instanceof InjectedCrash)) throw e;
        }
      }
      expect(executors).toBe(fresh.checkpoint.commits.size + 1);
      // a batch's rows are a multiset: kept groups come out in the run's order, read ones in the store's
      expect(bySorted(kept.sink)).toEqual(bySorted(fresh.sink));
      expect(await kept.state.all(OP, 99)).toEqual(await fresh.state.all(OP, 99));
      expect(kept.sink.batches.size).toBeGreaterThan(2);
    }
  });
});

describe('when the same executor runs again after a failed batch', () => {
  it.each(['mid-state', 'after-sink', 'before-commit'] as const)('does not count the replayed batch twice (crash %s)', async (point) => {
    const expected = ports('update');
    await new MicroBatchExecutor(expected).run();

    const p = ports('update');
    const executor = new MicroBatchExecutor(crashingAt({ point, batchId: 2 }, p));
    await expect(executor.run()).rejects.toBeInstanceOf(InjectedCrash);
    const r = await executor.run();
    expect(r.batches[0]).toMatchObject({ batchId: 2, replay: true });
    expect(bySorted(p.sink)).toEqual(bySorted(expected.sink));
    expect(await p.state.all(OP, 99)).toEqual(await expected.state.all(OP, 99));
    // the replay read its groups from the store again, at the version before it
    expect(p.state.reads.get(2)).toEqual(expect.arrayContaining(['[[1790856000000000,1790856600000000],"a"]']));
  });
});
