/**
 * Small factories for engine unit tests: a query over in-memory ports, and a runner that starts
 * a fresh executor per scheduled run over the same checkpoint, state and landing files.
 */
import { CrashInjector, CrashPlan } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import { MicroBatchExecutor, RunReport } from '../../lib/engine/executor';
import { InMemoryCheckpoint, InMemoryDeadLetters, InMemoryFileSource, InMemoryLease, InMemorySink, InMemoryStateStore } from '../../lib/engine/testing/memory';
import type { Clock } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/query';

export type Event = Record<string, unknown>;

export function createTestRunner(plan: QueryPlan, opts: { clock?: Clock } = {}) {
  const ports = {
    source: new InMemoryFileSource(plan.source.schema),
    checkpoint: new InMemoryCheckpoint(),
    state: new InMemoryStateStore(),
    sink: new InMemorySink(),
    deadLetters: new InMemoryDeadLetters(),
    lateRows: new InMemoryDeadLetters(),
    lease: new InMemoryLease(),
  };
  let fileNo = 0;
  const executor = (crash?: CrashPlan) =>
    new MicroBatchExecutor({ plan, ...ports, clock: opts.clock, crash: crash ? new CrashInjector(crash) : undefined });
  return {
    ...ports,
    drop(rows: Event[] | string) {
      ports.source.add(`part-${String(++fileNo).padStart(5, '0')}.json`, rows);
    },
    run(deadlineMs?: number): Promise<RunReport> {
      return executor().run({ deadlineMs, collectRows: true });
    },
    /** Runs with a crash planned; returns true when it fired. */
    async crashRun(crash: CrashPlan): Promise<boolean> {
      try {
        await executor(crash).run();
        return false;
      } catch (e) {
        if (e instanceof InjectedCrash) return true;
        throw e;
      }
    },
    executor,
    /** Every row the sink holds, by batch, in batch order. */
    sinkRows() {
      return [...ports.sink.batches.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, rows]) => rows);
    },
  };
}

export const at = (hhmm: string, day = '2026-10-01') => `${day} ${hhmm}:00`;
