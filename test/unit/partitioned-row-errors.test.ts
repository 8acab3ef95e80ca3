/**
 * A row error in the stages after the aggregation (FORMAT-3 departure 2: a `selectExpr` over the
 * aggregate's output) is a dead letter in a partitioned run too: the partition task that ran the
 * stages hands it to the commit, as a read task hands on the dead letters of its stages. Expected
 * by hand: `total / (c - 1)` raises DIVIDE_BY_ZERO (ANSI) for a group of one row.
 */
import { count, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

const plan = readStream
  .schema('k STRING, n INT')
  .load()
  .groupBy('k')
  .agg(sum('n').as('total'), count().as('c'))
  .selectExpr('k', 'total / (c - 1) AS per_other')
  .writeStream.outputMode('update')
  .option('statePartitions', 2)
  .trigger({ availableNow: true })
  .queryName('post-stage-errors')
  .plan();

function ports() {
  const p = {
    plan,
    source: new InMemoryFileSource(plan.source.schema),
    checkpoint: new InMemoryCheckpoint(),
    state: new InMemoryStateStore(),
    sink: new InMemorySink(),
    deadLetters: new InMemoryDeadLetters(),
    lease: new InMemoryLease(),
    shuffle: new InMemoryShuffle(),
  };
  p.source.add('f0.json', [
    { k: 'a', n: 4 },
    { k: 'b', n: 1 },
  ]);
  p.source.add('f1.json', [{ k: 'a', n: 6 }]);
  return p;
}

describe('a row error after the aggregation', () => {
  it.each(['single', 'partitioned'] as const)('is a dead letter in a %s run, and the other groups are output', async (scheduler) => {
    const p = ports();
    if (scheduler === 'single') await new MicroBatchExecutor(p).run();
    else
      await runPartitioned(
        partitionedTasks(() => new PartitionedRun(p, { maxSplits: 2 })),
        { runId: 'r1', concurrency: 2 },
      );
    const dead = p.deadLetters.all('malformed') as Array<{ raw: string; reason: string }>;
    expect(dead.map((d) => [JSON.parse(d.raw), d.reason.slice(0, 18)])).toEqual([[{ k: 'b', total: 1, c: 1 }, '[DIVIDE_BY_ZERO] D']]);
    // a: 4 + 6 = 10 over 2 rows, 10 / 1
    expect([...p.sink.batches.values()].flat()).toEqual([{ k: 'a', per_other: 10 }]);
    expect((p.checkpoint.progress.get(0) as unknown as { sluice: { numDeadLetters: number } }).sluice.numDeadLetters).toBe(1);
  });
});
