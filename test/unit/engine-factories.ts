/**
 * Small factories for engine unit tests: a query over in-memory ports, and a runner that starts
 * a fresh executor per scheduled run over the same checkpoint, state and landing files (and, for
 * a stream-stream join, the `inputSources` given). A crash
 * is a decorator around those ports (lib/engine/testing/crash.ts), never part of the executor.
 */
import { crashingAt, type CrashPlan } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import type { ExecutorDeps, RunReport } from '../../lib/engine/run/types';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import type { Clock, Source } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';

export type Event = Record<string, unknown>;

/** The lease duration of the runner's executors (the executor's default, made explicit). */
export const TEST_LEASE_MS = 15 * 60_000;

/** The in-memory ports of a test run; the lease and the state's TTLs follow `clock`. */
export function memoryPorts(plan: QueryPlan, clock: Clock = { now: () => Date.now() }) {
  return {
    source: new InMemoryFileSource(plan.source.schema),
    checkpoint: new InMemoryCheckpoint(),
    state: new InMemoryStateStore({ clock }),
    sink: new InMemorySink(),
    deadLetters: new InMemoryDeadLetters(),
    lateRows: new InMemoryDeadLetters(),
    lease: new InMemoryLease(() => clock.now()),
  };
}

/**
 * A runner over in-memory ports; `partial` replaces any of them (or sets the base clock) for the
 * test that needs to. Its clock is the base clock plus the time it let pass: a crashed run keeps
 * its lease, as a killed Lambda does, so `crashRun` lets the lease expire before it returns
 * (`waitOutLease()` does it by hand).
 */
export function createTestRunner<P extends Partial<ReturnType<typeof memoryPorts>>>(
  plan: QueryPlan,
  partial: P & { clock?: Clock; inputSources?: readonly Source[] } = {} as P,
) {
  const { clock: base = { now: () => Date.now() }, ...replaced } = partial;
  let passedMs = 0;
  const clock: Clock = { now: () => base.now() + passedMs };
  const ports = { ...memoryPorts(plan, clock), ...replaced } as ReturnType<typeof memoryPorts> & Omit<P, 'clock'>;
  let fileNo = 0;
  const executor = (crash?: CrashPlan) => {
    const deps: ExecutorDeps = { plan, ...ports, clock };
    return new MicroBatchExecutor(crash ? crashingAt(crash, deps) : deps, { leaseDurationMs: TEST_LEASE_MS });
  };
  const waitOutLease = () => {
    passedMs += TEST_LEASE_MS + 1000;
  };
  return {
    ...ports,
    clock,
    waitOutLease,
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
        if (!(e instanceof InjectedCrash)) throw e;
        waitOutLease();
        return true;
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
