/**
 * keepAlive once per checkpoint (StateStore.keepAliveOnce, CommitEntry.stateKeptForGood): the
 * DynamoDB store's keepAlive only upgrades state an earlier sluice wrote with a TTL, so a run
 * after a commit that notes the upgrade (or whose checkpoint's state this sluice wrote from the
 * start) does not read every slice's head again. Twins, single and partitioned schedulers.
 */
import type { Clock, OperatorStateSpec } from '../../lib/engine/ports';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { CountingStateStore } from '../../lib/engine/testing/counting-state-store';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { YEAR_SCENARIOS } from '../helpers/idle-year';

/**
 * The twin (`inner`, the table every run shares) behind a store whose keepAlive only counts its
 * calls, needed once (as DynamoDbStateStore's) or at every run (an earlier sluice's).
 */
class UpgradingStateStore extends CountingStateStore {
  readonly calls: number[] = [];
  readonly keepAliveAfterMs = 0;
  constructor(
    inner: InMemoryStateStore,
    readonly keepAliveOnce: boolean,
  ) {
    super(inner);
  }
  async keepAlive(_op: OperatorStateSpec, version: number): Promise<void> {
    this.calls.push(version);
  }
}

type Scheduler = 'single' | 'partitioned';

describe.each<Scheduler>(['single', 'partitioned'])('when the state store needs keepAlive once per checkpoint (%s scheduler)', (scheduler) => {
  const scenario = YEAR_SCENARIOS[0];
  let nowMs = Date.UTC(2026, 9, 1, 13, 0);
  const clock: Clock = { now: () => nowMs };
  const plan = scenario.plan('once');
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const shuffle = new InMemoryShuffle();
  const table = new InMemoryStateStore({ clock });
  let file = 0;
  let run = 0;

  /** One run on a store whose keepAlive is needed once (`once`) or at every run (an earlier sluice); the state-keep-alive events it logged. */
  async function runWith(once: boolean, rows?: readonly Record<string, unknown>[]) {
    nowMs += 15 * 60_000;
    if (rows) source.add(`f-${String(++file).padStart(4, '0')}.json`, rows as Array<Record<string, unknown>>);
    const state = new UpgradingStateStore(table, once);
    const events: Array<Record<string, unknown>> = [];
    const deps = {
      plan,
      source,
      inputSources: [],
      checkpoint,
      state,
      sink: new InMemorySink(),
      deadLetters: new InMemoryDeadLetters(),
      lease: new InMemoryLease(() => clock.now()),
      clock,
      log: (e: Record<string, unknown>) => events.push(e),
    };
    run++;
    if (scheduler === 'single') await new MicroBatchExecutor(deps).run();
    else
      await runPartitioned(
        partitionedTasks(() => new PartitionedRun({ ...deps, shuffle }, { maxSplits: 2 })),
        { runId: `run-${run}`, concurrency: 2 },
      );
    return { keepAlives: state.calls.length, logged: events.filter((e) => e.event === 'state-keep-alive').length };
  }
  const lastCommit = async () => {
    const head = await checkpoint.head();
    return checkpoint.readCommit(head.latestCommitBatch);
  };

  it("an earlier sluice's commits lack the note: the next run calls keepAlive, again until one of its batches commits with the note; then runs skip it", async () => {
    const [first, second] = scenario.steps;
    // an earlier sluice's run (its store does not say keepAlive is needed once): no note
    expect(await runWith(false, first.rows as Record<string, unknown>[])).toEqual({ keepAlives: 0, logged: 0 });
    expect((await lastCommit())?.stateKeptForGood).toBeUndefined();
    // this sluice, an empty run: keepAlive upgrades every operator's state; nothing commits, so nothing notes it
    expect(await runWith(true)).toEqual({ keepAlives: 1, logged: 1 });
    expect((await lastCommit())?.stateKeptForGood).toBeUndefined();
    // a run with data: keepAlive once more, and its commits note it
    expect(await runWith(true, second.rows as Record<string, unknown>[])).toEqual({ keepAlives: 1, logged: 1 });
    expect((await lastCommit())?.stateKeptForGood).toBe(true);
    // from now on no run reads the state for it
    expect(await runWith(true)).toEqual({ keepAlives: 0, logged: 0 });
    expect(await runWith(true)).toEqual({ keepAlives: 0, logged: 0 });
    // an earlier sluice runs again (a rollback): its commits drop the note, and the run after it checks again
    expect(await runWith(false, [...(first.rows as Record<string, unknown>[])])).toEqual({ keepAlives: 1, logged: 1 });
    expect((await lastCommit())?.stateKeptForGood).toBeUndefined();
    expect(await runWith(true)).toEqual({ keepAlives: 1, logged: 1 });
  });
});
