/**
 * The engine alone: MicroBatchExecutor on the in-memory file source (lib/engine/testing/memory-source.ts)
 * and the bench's plain state store, checkpoint and counting sink (bench/plain-ports.ts): the
 * strict twins, test oracles, would be timed too.
 */
import { MicroBatchExecutor } from '../lib/engine/schedule/single';
import type { RunReport } from '../lib/engine/run/types';
import { CountingStateStore } from '../lib/engine/testing/counting-state-store';
import { InMemoryFileSource } from '../lib/engine/testing/memory-source';
import type { Sink, StateStore } from '../lib/engine/ports';
import type { QueryPlan } from '../lib/engine/plan/types';
import { CountingSink, PlainCheckpoint, PlainStateStore } from './plain-ports';
import { benchPlan } from './query';

export interface EngineRun {
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly report: RunReport;
  readonly state: CountingStateStore;
  /** process.memoryUsage() after each batch. */
  readonly memoryAfterBatch: Array<{ batchId: number; rss: number; heapUsed: number }>;
}

export async function runEngine(
  files: ReadonlyArray<{ readonly key: string; readonly body: string }>,
  opts: { maxFilesPerTrigger: number; sink?: Sink; state?: StateStore; onBatch?: () => void; plan?: QueryPlan },
): Promise<EngineRun> {
  const plan = opts.plan ?? benchPlan(opts.maxFilesPerTrigger);
  const source = new InMemoryFileSource(plan.source.schema);
  // Keys are generated in order; `add` would re-sort after every file.
  for (const f of files) source.files.push(f as { key: string; body: string });
  const state = new CountingStateStore(opts.state ?? new PlainStateStore());
  const memoryAfterBatch: EngineRun['memoryAfterBatch'] = [];
  const executor = new MicroBatchExecutor({
    plan,
    source,
    checkpoint: new PlainCheckpoint(),
    state,
    sink: opts.sink ?? new CountingSink(),
    log: (e) => {
      if (e.event !== 'batch') return;
      const m = process.memoryUsage();
      memoryAfterBatch.push({ batchId: e.batchId as number, rss: m.rss, heapUsed: m.heapUsed });
      opts.onBatch?.();
    },
  });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await executor.run();
  const seconds = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { seconds, cpuSeconds: (c.user + c.system) / 1e6, report, state, memoryAfterBatch };
}
