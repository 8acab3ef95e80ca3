/**
 * One run of a plan on the in-memory ports (the engine's twins) over one landing file of
 * `records`: its report, the rows it emitted and its dead letters. For unit tests of what a query
 * does to rows.
 */
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

/** `records` as objects (JSON lines), or a file's text as it is. */
export async function runPlanOnce(plan: QueryPlan, records: Record<string, unknown>[] | string) {
  return runPlanOnFiles(plan, { 'in.json': records });
}

/** One run of a plan over several landing files, each (by key) as runPlanOnce takes its one file. */
export async function runPlanOnFiles(plan: QueryPlan, files: Record<string, Record<string, unknown>[] | string>) {
  const source = new InMemoryFileSource(plan.source.schema);
  for (const [key, body] of Object.entries(files)) source.add(key, body);
  const deadLetters = new InMemoryDeadLetters();
  const report = await new MicroBatchExecutor({
    plan,
    source,
    checkpoint: new InMemoryCheckpoint(),
    state: new InMemoryStateStore(),
    sink: new InMemorySink(),
    deadLetters,
  }).run({ collectRows: true });
  return { rows: report.batches.flatMap((b) => b.rows), report, deadLetters };
}
