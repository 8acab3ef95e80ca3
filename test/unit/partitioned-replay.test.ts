/**
 * A batch that a partitioned run failed, replayed by the next run with other code (the fix a user
 * deploys after a processor threw): every task of the replay computes again, so the batch's output
 * and state come from the new code in every partition, as the single executor gives them. A read
 * or partition task's output is reused only by a retry in the run that wrote it
 * (lib/engine/schedule/partitioned.ts). Found by a seed hunt of test/unit/tws-differential.test.ts:
 * partitions the failed run had finished kept its processor's rows and state.
 */
import type { QueryPlan } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import type { ExecutorDeps } from '../../lib/engine/run/types';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { type ProcessorRow, StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from '../../lib/engine/tws/api';
import { memoryPorts, TEST_LEASE_MS } from './engine-factories';

const BASE_MS = Date.UTC(2026, 9, 1, 12);

/** Counts a key's rows in a value state and emits the count with its version; `failOn`: the key it throws on. */
function processorOf(version: number, failOn: number | null, deletes = false) {
  return class extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
    private n!: ValueState<number>;
    init(h: StatefulProcessorHandle): void {
      if (deletes) h.deleteIfExists('n');
      this.n = h.getValueState<number>('n');
    }
    handleInputRows(key: ProcessorRow, rows: IterableIterator<ProcessorRow>, _tv: TimerValues): Iterable<object> {
      if (key.g === failOn) throw new Error(`version ${version} fails on key ${failOn}`);
      this.n.update((this.n.get() ?? 0) + [...rows].length);
      return [{ g: key.g as number, n: this.n.get(), version }];
    }
  };
}

function planOf(processor: ReturnType<typeof processorOf>, statePartitions: number): QueryPlan {
  return readStream
    .format('json')
    .schema('g INT')
    .load()
    .groupBy('g')
    .transformWithState(processor as never, { timeMode: 'none', outputSchema: 'g INT, n INT, version INT' })
    .writeStream.outputMode('update')
    .option('statePartitions', statePartitions)
    .queryName('replayed')
    .plan();
}

/** Runs `versions` one after another on one checkpoint; each run's error (or null), the sink's rows by batch and each batch's state rows. */
async function runs(
  kind: 'single' | 'partitioned',
  statePartitions: number,
  versions: Array<ReturnType<typeof processorOf>>,
  files: Array<Array<{ g: number }>>,
) {
  let now = BASE_MS;
  const clock = { now: () => now };
  const ports = memoryPorts(planOf(versions[0], statePartitions), clock);
  const shuffle = new InMemoryShuffle();
  const errors: Array<string | null> = [];
  for (const [i, processor] of versions.entries()) {
    if (files[i]) ports.source.add(`part-${i}.json`, files[i].map((r) => JSON.stringify(r)).join('\n'));
    const deps: ExecutorDeps = { plan: planOf(processor, statePartitions), ...ports, clock, processingClock: clock };
    try {
      if (kind === 'partitioned') {
        const make = () => new PartitionedRun({ ...deps, inputSources: [], shuffle }, { leaseDurationMs: TEST_LEASE_MS, maxSplits: 2 });
        await runPartitioned(partitionedTasks(make), { runId: `run-${i}`, concurrency: 2 });
      } else await new MicroBatchExecutor(deps, { leaseDurationMs: TEST_LEASE_MS }).run();
      errors.push(null);
    } catch (e) {
      errors.push(String(e instanceof Error ? e.message : e));
    }
    // (a failed run keeps its lease, as a failed Lambda's does: the next run comes after it expired)
    now += TEST_LEASE_MS + 1000;
  }
  const head = await ports.checkpoint.head();
  const batches = [];
  for (let id = 0; id <= head.latestCommitBatch; id++) {
    const rows = (ports.sink.batches.get(id) ?? []).map((r) => JSON.stringify(r)).sort();
    batches.push({ id, rows, stateRows: (await ports.checkpoint.readCommit(id))?.stateRows });
  }
  return { errors, batches };
}

describe('a failed batch replayed with other code', () => {
  const files = [[{ g: 0 }, { g: 1 }, { g: 2 }, { g: 3 }]];

  it.each([
    ['single', 1],
    ['partitioned', 1],
    ['partitioned', 2],
    ['partitioned', 4],
  ] as const)('computes every partition with the code of the run that commits it (%s, %i state partitions)', async (kind, partitions) => {
    const got = await runs(kind, partitions, [processorOf(2, 0), processorOf(3, null)], files);
    expect(got.errors[0]).toMatch(/version 2 fails on key 0/);
    expect(got.errors[1]).toBeNull();
    // one batch, committed by the second run: every key's row from version 3
    expect(got.batches).toEqual([{ id: 0, rows: [0, 1, 2, 3].map((g) => JSON.stringify({ g, n: 1, version: 3 })), stateRows: 4 }]);
  });

  it("applies the new code's deleteIfExists to the partitions the failed run finished", async () => {
    // run 1 commits batch 0 (n = 1 for every key); run 2's code fails batch 1 on key 0; run 3's
    // deletes the state variable first, so every key counts from 0 again in the replayed batch 1
    const more = [...files, [{ g: 0 }, { g: 1 }, { g: 2 }, { g: 3 }]];
    for (const kind of ['single', 'partitioned'] as const) {
      const got = await runs(kind, 4, [processorOf(1, null), processorOf(2, 0), processorOf(3, null, true)], more);
      expect(got.errors).toEqual([null, expect.stringMatching(/version 2 fails on key 0/), null]);
      expect(got.batches[1]).toEqual({ id: 1, rows: [0, 1, 2, 3].map((g) => JSON.stringify({ g, n: 1, version: 3 })), stateRows: 4 });
    }
  });
});
