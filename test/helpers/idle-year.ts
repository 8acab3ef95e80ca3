/**
 * "State that is live must never expire": scenarios where a pipeline's state is idle for a year
 * between runs, for every stateful operator kind, run by the twins' unit test
 * (test/unit/idle-year.test.ts) and on DynamoDB Local (test/integration/idle-year.test.ts), on
 * the single and the partitioned scheduler, with DynamoDB's TTL applied at the year's end.
 *
 * Each scenario's steps: runs a day apart, then a year, then the run that needs what the state
 * kept. Along the way (4 state partitions, few keys) partitions stay empty, a slice's state
 * empties (its windows close) and a filter starves the operator for a run whose batches commit
 * without changing the state; the idleTimeout scenario empties its state by idleness.
 */
import type { Json, OutputRow } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { sessionWindow, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from '../../lib/engine/tws/api';

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;

interface YearStep {
  /** Rows landed on input 0 (and input 1: a join's other stream) before the run. */
  readonly rows?: Json[];
  readonly rows1?: Json[];
  /** How long after the previous run this one starts. */
  readonly afterMs: number;
  /** Apply DynamoDB's TTL (delete what has a `ttl` before now) before the run. */
  readonly ttl?: boolean;
  /** The run crashes after its first batch's state commit, before commits/N (the single scheduler; the next run replays). */
  readonly crash?: boolean;
}

export interface YearScenario {
  readonly name: string;
  readonly plan: (name: string) => QueryPlan;
  readonly steps: readonly YearStep[];
  /** Every row the sink received over all runs (only the last batch's: `lastBatchOnly`), as `key(row)`, sorted. */
  readonly expected: readonly string[];
  readonly lastBatchOnly?: boolean;
  readonly key: (row: OutputRow) => string;
}

const at = (hhmm: string) => `2026-10-01 ${hhmm}:00`;
const ev = (user: string, hhmm: string, amount: number, day = '2026-10-01'): Json => ({ user, event_time: `${day} ${hhmm}:00`, amount });
const SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE';
const PARTITIONS = 4;

/** The rows an aggregation or dedup reads, with a filter before it (amount 0 never passes). */
const events = () =>
  readStream
    .format('json')
    .schema(SCHEMA)
    .load()
    .withWatermark('event_time', '10 minutes')
    .where((r) => (r.amount as number) > 0);

const userTotal = (r: OutputRow) => `${String(r.user)}=${String(r.total)}`;
const windowed = (r: OutputRow) => `${String((r.window as { start: string }).start).slice(11, 16)} ${userTotal(r)}`;

/**
 * Run 1: windows of a and b open. Run 2 (a day later): c opens a window and the watermark closes
 * a's and b's (their partitions' state empties). Run 3 (a day later): only rows the filter drops
 * (batches commit, the state does not change). A year later, TTL applied, run 4: a and d come
 * and the watermark closes c's window, whose state was written in run 2.
 */
const STEPS: readonly YearStep[] = [
  { rows: [ev('a', '12:01', 2), ev('b', '12:03', 3)], afterMs: 0 },
  { rows: [ev('c', '12:25', 4)], afterMs: DAY_MS },
  { rows: [ev('z', '12:21', 0), ev('z', '12:22', 0)], afterMs: DAY_MS },
  { rows: [ev('a', '12:59', 7), ev('d', '13:00', 1), ev('c', '12:25', 4)], afterMs: YEAR_MS, ttl: true },
];

/**
 * A user's running total, reported (and cleared) by a processing-time timer 30 days after the
 * user's first event; later events add to the total without moving the timer.
 */
class MonthlyTotals extends StatefulProcessor<{ user: string }, { user: string; amount: number }, { user: string; total: number }> {
  private total!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.total = handle.getValueState<number>('total');
  }

  handleInputRows(_key: { user: string }, rows: IterableIterator<{ user: string; amount: number }>, tv: TimerValues) {
    const handle = this.getHandle();
    if (![...handle.listTimers()].length) handle.registerTimer(tv.getCurrentProcessingTimeInMs() + 30 * DAY_MS);
    let total = this.total.get() ?? 0;
    for (const r of rows) total += r.amount;
    this.total.update(total);
    return [];
  }

  handleExpiredTimer(key: { user: string }) {
    const total = this.total.get();
    this.total.clear();
    return total === undefined ? [] : [{ user: key.user, total }];
  }
}

export const YEAR_SCENARIOS: readonly YearScenario[] = [
  {
    name: 'windowed aggregation (append)',
    plan: (name) =>
      events()
        .groupBy(window('event_time', '10 minutes'), 'user')
        .agg(sum('amount').as('total'))
        .writeStream.outputMode('append')
        .option('statePartitions', PARTITIONS)
        .queryName(name)
        .plan(),
    steps: STEPS,
    // c's window holds 4 + 4: the run-4 row at 12:25 is on time (the watermark is 12:15 then)
    expected: ['12:00 a=2', '12:00 b=3', '12:20 c=8'],
    key: windowed,
  },
  {
    name: 'aggregation (complete mode)',
    plan: (name) =>
      events().groupBy('user').agg(sum('amount').as('total')).writeStream.outputMode('complete').option('statePartitions', PARTITIONS).queryName(name).plan(),
    steps: STEPS,
    expected: ['a=9', 'b=3', 'c=8', 'd=1'],
    lastBatchOnly: true,
    key: userTotal,
  },
  {
    name: 'session window (append)',
    plan: (name) =>
      events()
        .groupBy(sessionWindow('event_time', '5 minutes'), 'user')
        .agg(sum('amount').as('total'))
        .writeStream.outputMode('append')
        .option('statePartitions', PARTITIONS)
        .queryName(name)
        .plan(),
    steps: STEPS,
    expected: ['a=2', 'b=3', 'c=8'],
    key: userTotal,
  },
  {
    name: 'deduplication',
    plan: (name) =>
      events().dropDuplicates(['user', 'event_time']).writeStream.outputMode('append').option('statePartitions', PARTITIONS).queryName(name).plan(),
    steps: STEPS,
    // run 4's c at 12:25 is a duplicate of run 2's, still in the state: dropped
    expected: ['a=2', 'a=7', 'b=3', 'c=4', 'd=1'],
    key: (r) => `${String(r.user)}=${String(r.amount)}`,
  },
  {
    name: 'stream-stream join (left outer)',
    plan: (name) => {
      const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '10 minutes');
      return readStream
        .format('json')
        .schema('ad STRING, it TIMESTAMP')
        .load()
        .withWatermark('it', '10 minutes')
        .where((r) => r.ad !== 'skip')
        .join(clicks, { left: 'ad', right: 'cad' }, 'leftOuter', { timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds' } })
        .writeStream.option('statePartitions', PARTITIONS)
        .queryName(name)
        .plan();
    },
    steps: [
      // x joins at once; y waits
      {
        rows: [
          { ad: 'x', it: at('12:00') },
          { ad: 'y', it: at('12:01') },
        ],
        rows1: [{ cad: 'x', ct: at('12:02') }],
        afterMs: 0,
      },
      // both watermarks pass y's range: y is emitted alone and leaves the state; z waits
      { rows: [{ ad: 'z', it: at('12:40') }], rows1: [{ cad: 'w', ct: at('12:41') }], afterMs: DAY_MS },
      // only an impression the filter drops
      { rows: [{ ad: 'skip', it: at('12:42') }], afterMs: DAY_MS },
      // a year later z's click comes
      { rows1: [{ cad: 'z', ct: at('12:43') }], afterMs: YEAR_MS, ttl: true },
    ],
    expected: ['x-x', 'y-null', 'z-z'],
    key: (r) => `${String(r.ad)}-${String(r.cad ?? null)}`,
  },
  {
    // Runs 1-3 add to a, b, c and set their timers 30 days on; run 4, a year later, adds a 7, d 1
    // and c 4 (totals a 9, c 8), then fires the timers of a, b and c from a year before.
    name: 'transformWithState (processing-time timers)',
    plan: (name) =>
      events()
        .groupBy('user')
        .transformWithState(MonthlyTotals, { timeMode: 'processingTime', outputSchema: 'user STRING, total DOUBLE' })
        .writeStream.outputMode('update')
        .option('statePartitions', PARTITIONS)
        .queryName(name)
        .plan(),
    steps: STEPS,
    expected: ['a=9', 'b=3', 'c=8'],
    key: userTotal,
  },
];

/** The windowed aggregation, its run 2 crashing after its state commit and replayed a year later. */
export const REPLAY_SCENARIO: YearScenario = {
  ...YEAR_SCENARIOS[0],
  name: 'windowed aggregation replayed a year after a crash',
  steps: [STEPS[0], { ...STEPS[1], crash: true }, { afterMs: YEAR_MS, ttl: true }, STEPS[2], { ...STEPS[3], afterMs: DAY_MS }],
};

/**
 * idleTimeout: run 1 opens a's window; run 2 (a day later, no data) closes it by idleness, and
 * the state empties; a year later, TTL applied, run 3 brings b; run 4 (a day later, no data)
 * closes b's window by idleness.
 */
export const IDLE_TIMEOUT_SCENARIO: YearScenario = {
  name: 'idleTimeout, state emptied',
  plan: (name) =>
    readStream
      .format('json')
      .schema(SCHEMA)
      .load()
      .withWatermark('event_time', '10 minutes')
      .groupBy(window('event_time', '10 minutes'), 'user')
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('append')
      .option('idleTimeout', '30 minutes')
      .option('statePartitions', PARTITIONS)
      .queryName(name)
      .plan(),
  steps: [
    { rows: [ev('a', '12:01', 2)], afterMs: 0 },
    { afterMs: DAY_MS },
    // (a day later than a: the idle day moved the watermark past 2026-10-02 11:50)
    { rows: [ev('b', '12:21', 5, '2026-10-03')], afterMs: YEAR_MS, ttl: true },
    { afterMs: DAY_MS },
  ],
  expected: ['12:00 a=2', '12:20 b=5'],
  key: windowed,
};

/** The sink's rows (by batch, in batch order) as the scenario compares them: keys, sorted. */
export function keysOf(s: YearScenario, batches: ReadonlyArray<readonly OutputRow[]>): string[] {
  return (s.lastBatchOnly ? batches.slice(-1) : batches).flatMap((rows) => rows.map(s.key)).sort();
}
