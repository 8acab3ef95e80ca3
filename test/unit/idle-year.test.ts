/**
 * "State that is live must never expire", on the twins: a year without a run between two runs,
 * DynamoDB's TTL applied (InMemoryStateStore.expireBefore), for every stateful operator kind, on
 * both schedulers (test/helpers/idle-year.ts has the scenarios; test/integration/idle-year.test.ts
 * runs them on DynamoDB Local). The next run succeeds and emits what it would have a minute later.
 */
import { InjectedCrash } from '../../lib/engine/errors';
import type { Clock, OutputRow } from '../../lib/engine/ports';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { crashingAt } from '../../lib/engine/testing/crash';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { IDLE_TIMEOUT_SCENARIO, keysOf, REPLAY_SCENARIO, YEAR_SCENARIOS, type YearScenario } from '../helpers/idle-year';

type Scheduler = 'single' | 'partitioned';

/** The scenario's runs on the in-memory ports; the sink's rows by batch. */
async function runScenario(s: YearScenario, scheduler: Scheduler): Promise<OutputRow[][]> {
  let nowMs = Date.UTC(2026, 9, 1, 13, 0);
  const clock: Clock = { now: () => nowMs };
  const plan = s.plan('year');
  const schemas = [plan.source.schema, ...(plan.inputs ?? []).map((i) => i.source.schema)];
  const sources = schemas.map((schema) => new InMemoryFileSource(schema));
  const state = new InMemoryStateStore({ clock });
  const sink = new InMemorySink();
  const [source, ...inputSources] = sources;
  const deps = {
    plan,
    source,
    inputSources,
    checkpoint: new InMemoryCheckpoint(),
    state,
    sink,
    deadLetters: new InMemoryDeadLetters(),
    lease: new InMemoryLease(() => clock.now()),
    clock,
  };
  const shuffle = new InMemoryShuffle();
  let file = 0;
  let run = 0;
  for (const step of s.steps) {
    nowMs += step.afterMs + 60_000;
    if (step.rows) sources[0].add(`f-${String(++file).padStart(4, '0')}.json`, step.rows as Array<Record<string, unknown>>);
    if (step.rows1) sources[1].add(`f-${String(++file).padStart(4, '0')}.json`, step.rows1 as Array<Record<string, unknown>>);
    if (step.ttl) state.expireBefore(nowMs);
    run++;
    if (step.crash) {
      await expect(new MicroBatchExecutor(crashingAt({ point: 'before-commit' }, deps)).run()).rejects.toBeInstanceOf(InjectedCrash);
    } else if (scheduler === 'single') await new MicroBatchExecutor(deps).run();
    else
      await runPartitioned(
        partitionedTasks(() => new PartitionedRun({ ...deps, shuffle }, { maxSplits: 2 })),
        { runId: `run-${run}`, concurrency: 2 },
      );
  }
  return [...sink.batches.entries()].sort(([a], [b]) => a - b).map(([, rows]) => rows);
}

describe.each<Scheduler>(['single', 'partitioned'])('when state is idle for a year between runs (%s scheduler, twins)', (scheduler) => {
  it.each([...YEAR_SCENARIOS, IDLE_TIMEOUT_SCENARIO].map((s) => [s.name, s] as const))(
    '%s: the run after the year succeeds with the right output',
    async (_n, s) => {
      expect(keysOf(s, await runScenario(s, scheduler))).toEqual([...s.expected].sort());
    },
  );
});

describe('when a batch crashed after its state commit and the replay comes a year later (twins)', () => {
  it('replays it from the version before, with the right output', async () => {
    expect(keysOf(REPLAY_SCENARIO, await runScenario(REPLAY_SCENARIO, 'single'))).toEqual([...REPLAY_SCENARIO.expected].sort());
  });
});
