/**
 * Source.committed (cleanSource, notification deletes) is called by the run core after commits/N,
 * never before, whichever scheduler runs the batch; a failure in it is logged, never the run's.
 */
import { caseToPlan } from '../../lib/conformance/case';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { Json } from '../../lib/engine/ports';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

const plan = caseToPlan({
  name: 'committed',
  query: {
    schema: 'k STRING, n INT',
    groupBy: ['k'],
    aggregations: [{ fn: 'sum', column: 'n', as: 'total' }],
    outputMode: 'update',
    options: { maxFilesPerTrigger: 1 },
  },
  steps: [],
});

/** The twin source, recording each committed call with whether commits/N was there at the time. */
class RecordingSource extends InMemoryFileSource {
  calls: Array<{ batchId: number; end: Json; committedBefore: boolean }> = [];
  fail = false;
  constructor(private readonly checkpoint: InMemoryCheckpoint) {
    super(plan.source.schema);
  }
  async committed(batchId: number, end: Json): Promise<void> {
    this.calls.push({ batchId, end, committedBefore: (await this.checkpoint.readCommit(batchId)) !== null });
    if (this.fail) throw new Error('archive bucket gone');
  }
}

function ports() {
  const checkpoint = new InMemoryCheckpoint();
  const source = new RecordingSource(checkpoint);
  source.add('a.json', [{ k: 'x', n: 1 }]);
  source.add('b.json', [{ k: 'x', n: 2 }]);
  const events: Array<Record<string, unknown>> = [];
  const deps = {
    plan,
    source,
    checkpoint,
    state: new InMemoryStateStore(),
    sink: new InMemorySink(),
    lease: new InMemoryLease(() => Date.now()),
    log: (e: Record<string, unknown>) => events.push(e),
  };
  return { deps, source, events };
}

describe('when a batch commits', () => {
  it('the single scheduler tells the source after commits/N, batch by batch, with its end offset', async () => {
    const { deps, source } = ports();
    await new MicroBatchExecutor(deps).run();
    expect(source.calls).toEqual([
      { batchId: 0, end: { lastKey: 'a.json' }, committedBefore: true },
      { batchId: 1, end: { lastKey: 'b.json' }, committedBefore: true },
    ]);
  });

  it('the partitioned scheduler does the same (the one committer)', async () => {
    const { deps, source } = ports();
    const shuffle = new InMemoryShuffle();
    await runPartitioned(
      partitionedTasks(() => new PartitionedRun({ ...deps, shuffle }, { maxSplits: 2 })),
      { runId: 'r1', concurrency: 2 },
    );
    expect(source.calls).toEqual([
      { batchId: 0, end: { lastKey: 'a.json' }, committedBefore: true },
      { batchId: 1, end: { lastKey: 'b.json' }, committedBefore: true },
    ]);
  });

  it('a failure in it is logged and the run goes on', async () => {
    const { deps, source, events } = ports();
    source.fail = true;
    const report = await new MicroBatchExecutor(deps).run();
    expect(report.batches).toHaveLength(2);
    expect(events.filter((e) => e.event === 'source-committed-failed')).toEqual([
      expect.objectContaining({ batchId: 0, error: 'archive bucket gone' }),
      expect.objectContaining({ batchId: 1, error: 'archive bucket gone' }),
    ]);
  });
});
