/**
 * A differential property test of the stateful operators' fast paths: the aggregation
 * (lib/engine/operators/aggregate.ts with its SlotTable leaves, numeric slots and PendingAdds, the
 * tumbling-window memo, the group cache and whole trie kept between the batches of a run, the
 * overflow guard, a partitioned run's partial aggregates) and deduplication (dedup.ts), run by the
 * executor on the in-memory ports, against a small model written here from Spark's rules
 * (docs/semantics.md, the conformance FORMAT):
 *
 *   watermark   batch N evicts and emits with the watermark computed after batch N−1 (the largest
 *               event time, truncated to the ms, minus the delay; never back) and drops late rows
 *               with batch N−1's own evicting watermark; a row without event time never moves it
 *   late        a window whose end is at or before that watermark (µs <= ms × 1000), a row whose
 *               event-time key (or a dedup row whose event time) is; a row every window of which
 *               is late counts once as dropped; complete mode drops nothing
 *   append      a group is emitted once, when the batch's watermark reaches its end (event time)
 *   update      the groups a batch changed, then the expired ones leave the state unseen
 *   complete    the whole table every batch, nothing evicted
 *   no-data     one more batch at the end of a run when the watermark moved past the last batch's
 *               and the operator can use it (not complete mode)
 *   aggregates  Spark's buffers: sum starts at 0.0, a batch's partial aggregate merged after the
 *               stored one (a tie of min/max keeps the stored value), NaN above every double, avg a
 *               double sum over a count; a row that would take a BIGINT sum past 64 bits is a dead
 *               letter that no aggregate counts (sluice's documented departure)
 *   keys        -0.0 is 0.0 and NaN one value (NormalizeFloatingNumbers); null is a group
 *   filters     one right after the aggregation on k moves below it and below withWatermark (a row
 *               it rejects does not move the watermark); one on window.start tests each row's
 *               windows before the row joins them (a row whose windows it all rejects is not late)
 *   dedup       the first row of a key not in state; a key expires at its event time (event time
 *               among the keys) or event time + delay (within the watermark), else never
 *
 * Per run, the engine's batches are compared with the model's: batch ids (no-data batches
 * included), each batch's watermark, its output rows as a multiset (values exactly: doubles by
 * Object.is, but for the sign of a zero: ZERO_SIGN), rows dropped as late, dead letters and state
 * rows, and the run's watermark.
 *
 * The harness it shares with the other differential tests (the time texts, the rows' canonical
 * text, the per-batch view and the aggregations' builders) is test/helpers/differential.ts.
 *
 * The seed is fixed (SLUICE_PROPERTY_SEED overrides it, SLUICE_PROPERTY_RUNS the runs) so that CI
 * is reproducible; hunt with other seeds and more runs locally.
 */
import fc from 'fast-check';
import type { Json, OutputRow } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { partitionedRunReport, partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import {
  AS,
  type AggName,
  aggregationsOfV,
  type BatchSeen,
  canonicalRows,
  floorDiv,
  inputTime,
  outputTime,
  type RunSeen,
  seenOfRun,
} from '../helpers/differential';
import { createTestRunner, TEST_LEASE_MS } from './engine-factories';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261206);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 120);
const check = <T>(property: fc.IAsyncProperty<T>, runs = RUNS) => fc.assert(property, { seed: SEED, numRuns: runs });

/**
 * Whether -0.0 and 0.0 are told apart (SLUICE_DIFF_ZERO_SIGN=strict). By default not: the state
 * stores keep numbers as DynamoDB does, without a sign of zero, so a -0.0 that went through the
 * state comes back as 0.0 (where Spark's state keeps it), and the JSON sinks write both as 0; and
 * a sum of -0.0 alone is 0.0 on both sides (Spark's sum starts at 0.0, and so does sluice's).
 */
const ZERO_SIGN = process.env.SLUICE_DIFF_ZERO_SIGN === 'strict';

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

type ValueType = 'DOUBLE' | 'INT' | 'BIGINT';
type Mode = 'append' | 'update' | 'complete';
type KeyName = 'window' | 'k' | 't' | 'v';
/** A value as the model holds it: DOUBLE and INT as numbers, BIGINT as a bigint. */
type Value = number | bigint | null;

interface InputRow {
  readonly k: string | null;
  /** Event time in epoch µs (null: none); a bigint, as some are beyond 2^53 µs (after the year 2255). */
  readonly t: bigint | null;
  readonly v: Value;
}

/** A run: its files, each a list of rows. */
type Step = InputRow[][];

/** A window's duration, slide and start time, in µs. */
interface WindowSpec {
  readonly durationUs: number;
  readonly slideUs: number;
  readonly startUs: number;
}

/**
 * How the engine runs the query: one executor per run (lib/engine/schedule/single.ts), or a
 * partitioned run (schedule/partitioned.ts: read tasks pre-aggregate, partition tasks merge) on
 * `workers` concurrent tasks; over `statePartitions` state partitions either way.
 */
type Runner = { readonly kind: 'single' } | { readonly kind: 'partitioned'; readonly workers: number };

interface Common {
  readonly runner: Runner;
  readonly statePartitions: number;
  readonly valueType: ValueType;
  /** withWatermark('t', delay), in ms (null: no watermark). */
  readonly delayMs: number | null;
  readonly maxFiles: number | null;
  readonly steps: Step[];
}

interface AggScenario extends Common {
  readonly kind: 'aggregate';
  readonly keys: KeyName[];
  readonly window: WindowSpec;
  readonly aggs: AggName[];
  readonly mode: Mode;
  /**
   * A filter right after the aggregation on k (a plain grouping key): Spark's optimizer moves it
   * below the aggregation and below withWatermark, so a row it rejects makes no group and does not
   * move the watermark (docs/semantics.md).
   */
  readonly keyFilter: KeyFilter | null;
  /**
   * A filter right after the aggregation on window.start, seconds from BASE_US: it moves below the
   * aggregation (each row's window is tested before the row joins it; a row whose windows it all
   * rejects is not late), but stays above withWatermark (it reads the event time).
   */
  readonly windowFilter: { readonly fromSec: number | null; readonly untilSec: number | null } | null;
}

/** A predicate on k: Spark's SQL, and what it keeps (a null k compares to null: rejected). */
type KeyFilter = "k <> 'b'" | "k >= 'b'" | 'k IS NOT NULL';

interface DedupScenario extends Common {
  readonly kind: 'dedup';
  /** The dedup columns (undefined: all of them). */
  readonly columns: Array<'k' | 't' | 'v'> | undefined;
  readonly withinWatermark: boolean;
  readonly mode: 'append' | 'update';
}

type Scenario = AggScenario | DedupScenario;

const SEC = 1_000_000;
/** 2026-10-01 12:00:00 UTC in epoch µs. */
const BASE_US = BigInt(Date.UTC(2026, 9, 1, 12)) * 1000n;
/** 2300-01-01 UTC in epoch µs: far ahead, past 2^53 µs (a bigint time: windows.ts's exact path). */
const FAR_US = BigInt(Date.UTC(2300, 0, 1)) * 1000n;
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

const doubleValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -5, max: 5 }) },
  { weight: 3, arbitrary: fc.constantFrom(0.1, 0.2, 0.3, 1.5, -2.25, 1e16, -1e16, 1e308, -1e308, 5e-324) },
  { weight: 2, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.constantFrom(-0, -0, 0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY) },
  { weight: 2, arbitrary: fc.constant(null) },
);
const intValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -5, max: 5 }) },
  { weight: 2, arbitrary: fc.constantFrom(INT_MAX, -INT_MAX - 1, 1000, -1000) },
  { weight: 2, arbitrary: fc.constant(null) },
);
const bigintValue: fc.Arbitrary<Value> = fc.oneof(
  { weight: 8, arbitrary: fc.bigInt({ min: -5n, max: 5n }) },
  { weight: 3, arbitrary: fc.constantFrom(LONG_MAX, LONG_MIN, 2n ** 62n, -(2n ** 62n), 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 53n) },
  { weight: 1, arbitrary: fc.bigInt({ min: LONG_MIN, max: LONG_MAX }) },
  { weight: 2, arbitrary: fc.constant(null) },
);
const valuesOf: Record<ValueType, fc.Arbitrary<Value>> = { DOUBLE: doubleValue, INT: intValue, BIGINT: bigintValue };

/**
 * A grouping key: mostly a few short ones; sometimes null, empty, one past SlotTable's inline
 * length (20 one-byte characters) or its hashed length (64), with characters beyond U+00FF, or one
 * of many (the leaves' tables grow).
 */
const key: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'a') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(null, '', 'dd', 'é', 'Ω', '😀', 'a\u0000', 'k'.repeat(20), 'k'.repeat(21), 'ü'.repeat(20), 'x'.repeat(64), 'x'.repeat(65)),
  },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 40 }).map((i) => `key-${i}`) },
);

/** The part of an event time below the second, in µs: mostly none, sometimes just past or before a boundary. */
const subSecond = fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.constantFrom(1, 999, 1000, 1001, 500_000, 999_000, 999_999) });

/**
 * A row of run `stepNo`: event times drift forward by run (`spanSec` a run), go back (late),
 * repeat, cross boundaries, and sometimes jump ahead (an hour, a day, to the year 2300) or are null.
 */
function row(valueType: ValueType, spanSec: number) {
  return (stepNo: number): fc.Arbitrary<InputRow> =>
    fc
      .record({
        k: key,
        offsetSec: fc.oneof(
          { weight: 12, arbitrary: fc.integer({ min: -2 * spanSec, max: spanSec }) },
          { weight: 1, arbitrary: fc.constantFrom(3600, 86_400) },
        ),
        sub: subSecond,
        time: fc.oneof(
          { weight: 100, arbitrary: fc.constant('near' as const) },
          { weight: 5, arbitrary: fc.constant('none' as const) },
          { weight: 1, arbitrary: fc.constant('far' as const) },
        ),
        v: valuesOf[valueType],
      })
      .map(({ k, offsetSec, sub, time, v }) => ({
        k,
        t: time === 'none' ? null : (time === 'far' ? FAR_US : BASE_US) + BigInt((stepNo * spanSec + offsetSec) * SEC + sub),
        v,
      }));
}

/**
 * Now and then a big file of run `stepNo`: over a thousand rows over up to 1500 keys, around the
 * run's times (past PendingAdds' and the numeric slots' first sizes; the leaves' tables grow).
 */
function bulkFile(valueType: ValueType, spanSec: number, stepNo: number): fc.Arbitrary<InputRow[]> {
  return fc
    .record({
      n: fc.integer({ min: 1025, max: 2100 }),
      keys: fc.integer({ min: 1, max: 1500 }),
      spreadSec: fc.integer({ min: 1, max: 3 * spanSec }),
      seed: fc.nat(1000),
    })
    .map(({ n, keys, spreadSec, seed }) =>
      Array.from({ length: n }, (_, i) => {
        const small = ((i * 31 + seed) % 11) - 5;
        return {
          k: `bulk-${(i * 7 + seed) % keys}`,
          t: BASE_US + BigInt((stepNo * spanSec - spreadSec + ((i * 13 + seed) % (2 * spreadSec))) * SEC),
          v: valueType === 'BIGINT' ? BigInt(small) : valueType === 'DOUBLE' ? small / 2 : small,
        };
      }),
    );
}

/** One to five runs of 1 to 3 files (sometimes none) of 0 to 20 rows (now and then a big one). */
function steps(valueType: ValueType, spanSec: number): fc.Arbitrary<Step[]> {
  const rowOf = row(valueType, spanSec);
  const file = (stepNo: number) =>
    fc.oneof({ weight: 40, arbitrary: fc.array(rowOf(stepNo), { maxLength: 20 }) }, { weight: 1, arbitrary: bulkFile(valueType, spanSec, stepNo) });
  return fc
    .integer({ min: 1, max: 5 })
    .chain((n) =>
      fc.tuple(
        ...Array.from({ length: n }, (_, stepNo) =>
          fc.oneof(
            { weight: 12, arbitrary: fc.array(file(stepNo), { minLength: 1, maxLength: 3 }) },
            { weight: 1, arbitrary: fc.constant([] as InputRow[][]) },
          ),
        ),
      ),
    );
}

/**
 * A window in units of `unit` µs: a duration, a slide (the duration: tumbling; a half or a third
 * of it; or one that does not divide it) and a start time within the slide.
 */
function windowIn(unit: number, durations: number[], starts: number[]): fc.Arbitrary<WindowSpec> {
  return fc
    .record({
      duration: fc.constantFrom(...durations),
      slide: fc.constantFrom('tumbling', 'tumbling', 'tumbling', 'half', 'third', 'odd'),
      start: fc.constantFrom(...starts),
    })
    .map(({ duration, slide, start }) => {
      const by =
        slide === 'half' && duration % 2 === 0
          ? duration / 2
          : slide === 'third' && duration % 3 === 0
            ? duration / 3
            : slide === 'odd' && duration >= 5
              ? Math.floor(duration / 3) + 1
              : duration;
      return { durationUs: duration * unit, slideUs: by * unit, startUs: Math.abs(start) < by ? start * unit : 0 };
    });
}

/** Mostly whole seconds; sometimes windows of milliseconds, or of microseconds whose ends fall between milliseconds. */
const windowSpec: fc.Arbitrary<WindowSpec> = fc.oneof(
  { weight: 8, arbitrary: windowIn(SEC, [1, 5, 10, 10, 30, 60], [0, 0, 0, 1, -1, 2]) },
  { weight: 1, arbitrary: windowIn(1000, [500, 1500, 2500], [0, 0, 250, -100]) },
  { weight: 1, arbitrary: windowIn(1, [7, 999, 1000, 1001, 1_000_001], [0, 0, 1, -2]) },
);

const runner: fc.Arbitrary<Runner> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'single' as const }) },
  // (a partitioned run's rows come back through the sink, as JSON: no -0.0 to tell apart)
  { weight: ZERO_SIGN ? 0 : 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((workers) => ({ kind: 'partitioned' as const, workers })) },
);
const statePartitions = fc.constantFrom(1, 1, 2, 4);

const delayMs = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(0, 1000, 5000, 10_000, 30_000, 120_000) },
  { weight: 1, arbitrary: fc.constantFrom(1, 999, 1500) },
);

/**
 * A partitioned run's read tasks pre-aggregate their splits and the partition task merges the
 * partials, so a double sum adds in another order than one task would (as Spark's partial
 * aggregates over its file partitions do): its last bits depend on the splits. There, the values
 * a double sum adds are kept exact: multiples of 0.25 within ±10^6 (the non-finite ones stay), a
 * BIGINT's double in avg within ±1000 (with a BIGINT sum among the aggregations, the rows are not
 * pre-aggregated: overflow-guard.ts).
 */
function exactAddends(valueType: ValueType, aggs: readonly AggName[]): (files: Step) => Step {
  const exact = (v: Value): Value => {
    if (typeof v === 'number' && Number.isFinite(v) && !(Number.isInteger(v * 4) && Math.abs(v) <= 1e6)) return Math.round(v) % 1000;
    if (typeof v === 'bigint' && !aggs.includes('sum')) return v % 1000n;
    return v;
  };
  return (files) => (valueType === 'INT' ? files : files.map((rows) => rows.map((r) => ({ ...r, v: exact(r.v) }))));
}

/** Grouping keys: a window (first or not), the event time itself, plain columns only, none (a global aggregation). */
const KEY_SETS: KeyName[][] = [
  ['window', 'k', 'v'],
  ['k', 'v', 'window'],
  ['t', 'k', 'v'],
  ['window'],
  ['window', 'k'],
  ['window', 'k'],
  ['k', 'window'],
  ['window', 'v'],
  ['k', 't'],
  ['t', 'k'],
  ['t'],
  ['k'],
  ['v'],
  ['k', 'v'],
  [],
];

const aggScenario: fc.Arbitrary<AggScenario> = fc
  .record({
    valueType: fc.constantFrom<ValueType>('DOUBLE', 'DOUBLE', 'INT', 'BIGINT'),
    keys: fc.constantFrom(...KEY_SETS),
    window: windowSpec,
    aggs: fc.oneof(
      // (count, sum and avg alone: the numeric slots, with a DOUBLE)
      fc.subarray<AggName>(['countAll', 'count', 'sum', 'avg'], { minLength: 1 }),
      fc.subarray<AggName>(['countAll', 'count', 'sum', 'min', 'max', 'avg'], { minLength: 1 }),
    ),
    mode: fc.constantFrom<Mode>('append', 'append', 'update', 'complete'),
    delayMs: fc.option(delayMs, { nil: null, freq: 6 }),
    maxFiles: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    runner,
    statePartitions,
    keyFilter: fc.option(fc.constantFrom<KeyFilter>("k <> 'b'", "k >= 'b'", 'k IS NOT NULL'), { nil: null, freq: 5 }),
    windowFilter: fc.option(
      fc.record({ fromSec: fc.option(fc.constantFrom(-20, 0, 10, 40), { nil: null }), untilSec: fc.option(fc.constantFrom(30, 60, 120), { nil: null }) }),
      { nil: null, freq: 5 },
    ),
    spanSec: fc.constantFrom(5, 20, 60),
  })
  .chain((s) => steps(s.valueType, s.spanSec).map((st) => ({ ...s, steps: st })))
  .map(({ spanSec: _, ...s }) => {
    // append needs a watermarked event-time key, as Spark refuses the query otherwise
    const timed = s.keys.includes('window') || s.keys.includes('t');
    const delay = timed && s.delayMs === null && s.mode === 'append' ? 10_000 : s.delayMs;
    const mode: Mode = s.mode === 'append' && !timed ? 'update' : s.mode;
    const runs = s.runner.kind === 'partitioned' ? s.steps.map(exactAddends(s.valueType, s.aggs)) : s.steps;
    const keyFilter = s.keys.includes('k') ? s.keyFilter : null;
    const windowFilter = s.keys.includes('window') ? s.windowFilter : null;
    return { kind: 'aggregate' as const, ...s, steps: runs, delayMs: delay, mode, keyFilter, windowFilter };
  });

const dedupScenario: fc.Arbitrary<DedupScenario> = fc
  .record({
    valueType: fc.constantFrom<ValueType>('DOUBLE', 'INT', 'BIGINT'),
    columns: fc.constantFrom<Array<'k' | 't' | 'v'> | undefined>(undefined, ['k'], ['k', 't'], ['t'], ['v'], ['k', 'v']),
    withinWatermark: fc.boolean(),
    mode: fc.constantFrom<'append' | 'update'>('append', 'update'),
    delayMs: fc.option(delayMs, { nil: null, freq: 6 }),
    maxFiles: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    runner,
    statePartitions,
    spanSec: fc.constantFrom(5, 20),
  })
  .chain((s) => steps(s.valueType, s.spanSec).map((st) => ({ ...s, steps: st })))
  .map(({ spanSec: _, ...s }) => ({
    kind: 'dedup' as const,
    ...s,
    // (-0.0 and 0.0 as dedup keys: Spark's streaming dedup compares the keys' bytes, not
    // normalised, where sluice's state ids take them as one; left out)
    steps: s.steps.map((files) => files.map((rows) => rows.map((r) => (Object.is(r.v, -0) ? { ...r, v: 0 } : r)))),
    // dropDuplicatesWithinWatermark needs a watermark
    delayMs: s.withinWatermark && s.delayMs === null ? 5000 : s.delayMs,
  }));

// ---------------------------------------------------------------------------------------------
// Text in and out
// ---------------------------------------------------------------------------------------------

/** A value as a JSON line writes it (Spark's JSON reader takes "NaN" and the infinities as strings). */
function valueText(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return String(v);
  if (Number.isNaN(v)) return '"NaN"';
  if (v === Number.POSITIVE_INFINITY) return '"Infinity"';
  if (v === Number.NEGATIVE_INFINITY) return '"-Infinity"';
  return Object.is(v, -0) ? '-0.0' : JSON.stringify(v);
}

function fileText(rows: readonly InputRow[]): string {
  return rows.map((r) => `{"k":${JSON.stringify(r.k)},"t":${r.t === null ? 'null' : JSON.stringify(inputTime(r.t))},"v":${valueText(r.v)}}`).join('\n');
}

/** A value as an output row holds it: a non-finite double by its name, a BIGINT beyond 2^53 − 1 as its digits. */
function outputValue(v: Value): Json {
  if (v === null) return null;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === v ? Number(v) : String(v);
  return Number.isFinite(v) ? v : String(v);
}

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

function planOf(s: Scenario): QueryPlan {
  let reader = readStream.format('json').schema(`k STRING, t TIMESTAMP, v ${s.valueType}` as string);
  if (s.maxFiles !== null) reader = reader.option('maxFilesPerTrigger', s.maxFiles);
  let frame = reader.load();
  if (s.delayMs !== null) frame = frame.withWatermark('t', `${s.delayMs} milliseconds`);
  if (s.kind === 'dedup') {
    const deduped = s.withinWatermark ? frame.dropDuplicatesWithinWatermark(s.columns) : frame.dropDuplicates(s.columns);
    return deduped.writeStream.outputMode(s.mode).option('statePartitions', s.statePartitions).plan();
  }
  const w = s.window;
  const us = (n: number) => `${n} microseconds`;
  const keys = s.keys.map((k) =>
    k === 'window' ? window('t', us(w.durationUs), w.slideUs === w.durationUs ? undefined : us(w.slideUs), w.startUs === 0 ? undefined : us(w.startUs)) : k,
  );
  let aggregated = frame.groupBy(...keys).agg(...aggregationsOfV(s.aggs));
  if (s.keyFilter !== null) aggregated = aggregated.filter(s.keyFilter);
  const wf = s.windowFilter;
  if (wf !== null && (wf.fromSec !== null || wf.untilSec !== null)) {
    const at = (sec: number) => `TIMESTAMP '${inputTime(BASE_US + BigInt(sec * SEC))}'`;
    const conjuncts = [
      ...(wf.fromSec === null ? [] : [`window.start >= ${at(wf.fromSec)}`]),
      ...(wf.untilSec === null ? [] : [`window.start < ${at(wf.untilSec)}`]),
    ];
    aggregated = aggregated.filter(conjuncts.join(' AND '));
  }
  return aggregated.writeStream.outputMode(s.mode).option('statePartitions', s.statePartitions).plan();
}

/** The scenario's runs, each a fresh executor over the same checkpoint, state and landing files. */
async function runEngine(s: Scenario): Promise<RunSeen[]> {
  if (s.runner.kind === 'partitioned') return runPartitionedEngine(s, s.runner.workers);
  const t = createTestRunner(planOf(s));
  const out: RunSeen[] = [];
  for (const files of s.steps) {
    for (const f of files) t.drop(fileText(f));
    out.push(seenOfRun(await t.run(), { zeroSign: ZERO_SIGN }));
  }
  return out;
}

/** The scenario as partitioned runs, each read back as the conformance runner reads it: progress records, the sink's rows. */
async function runPartitionedEngine(s: Scenario, workers: number): Promise<RunSeen[]> {
  const plan = planOf(s);
  const clock = { now: () => Date.now() };
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const sink = new InMemorySink();
  const deps = {
    plan,
    source,
    inputSources: [],
    checkpoint,
    state: new InMemoryStateStore({ clock }),
    sink,
    lease: new InMemoryLease(() => clock.now()),
    clock,
    deadLetters: new InMemoryDeadLetters(),
    shuffle: new InMemoryShuffle(),
  };
  const out: RunSeen[] = [];
  let fileNo = 0;
  for (const [stepNo, files] of s.steps.entries()) {
    for (const f of files) source.add(`part-${String(++fileNo).padStart(5, '0')}.json`, fileText(f));
    const make = () => new PartitionedRun(deps, { leaseDurationMs: TEST_LEASE_MS, maxSplits: 3 });
    const { batches } = await runPartitioned(partitionedTasks(make), { runId: `run-${stepNo}`, concurrency: workers });
    const r = await partitionedRunReport(plan, checkpoint, batches);
    out.push(seenOfRun(r, { zeroSign: ZERO_SIGN, rowsOf: (b) => sink.batches.get(b.batchId) ?? [] }));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/** What one batch of the model's operator did. */
interface BatchDone {
  rows: OutputRow[];
  dropped: number;
  refused: number;
  stateRows: number;
}

interface ModelOperator {
  /** One batch: its rows, its evicting watermark and the late one (each in µs, ms × 1000). */
  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone;
  /** Whether a no-data batch can change anything for it (Spark's shouldRunAnotherBatch). */
  readonly usesNoDataBatches: boolean;
}

/** Spark's order of a column's values: NaN above every double (-0.0 and 0.0 are equal). */
function less(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b || (Number.isNaN(b) && !Number.isNaN(a));
  return a < b;
}

type AggBuffer = Array<number | bigint | null | [number, number]>;

/** Spark's aggregate buffers for the scenario's aggregations (Count, Sum, Min, Max, Average). */
class Aggs {
  constructor(
    private readonly names: readonly AggName[],
    /** A sum of INT or BIGINT: a BIGINT, exact. */
    private readonly exact: boolean,
  ) {}

  init(): AggBuffer {
    return this.names.map((a) => (a === 'countAll' || a === 'count' ? 0 : a === 'avg' ? [0, 0] : null));
  }

  /** Whether the row's value takes an exact sum past 64 bits, over the buffers given (the stored one, the batch's). */
  overflows(bufs: ReadonlyArray<AggBuffer | undefined>, v: Value): boolean {
    const at = this.names.indexOf('sum');
    if (!this.exact || at < 0 || v === null) return false;
    let total = BigInt(v);
    for (const b of bufs) if (b !== undefined && b[at] !== null) total += b[at] as bigint;
    return total < LONG_MIN || total > LONG_MAX;
  }

  /** A row into a partial aggregate (Spark's updateExpressions). */
  update(buf: AggBuffer, v: Value): void {
    this.names.forEach((a, i) => {
      const s = buf[i];
      if (a === 'countAll') buf[i] = (s as number) + 1;
      else if (v === null) return;
      else if (a === 'count') buf[i] = (s as number) + 1;
      // coalesce(coalesce(sum, 0) + v, sum): the first value is added to 0.0
      else if (a === 'sum') buf[i] = this.exact ? ((s as bigint | null) ?? 0n) + BigInt(v) : ((s as number | null) ?? 0) + (v as number);
      else if (a === 'min') buf[i] = s === null || less(v, s as number | bigint) ? v : s;
      else if (a === 'max') buf[i] = s === null || less(s as number | bigint, v) ? v : s;
      else {
        const [total, n] = s as [number, number];
        buf[i] = [total + Number(v), n + 1];
      }
    });
  }

  /**
   * The stored buffer and the batch's merged (Spark's mergeExpressions into a buffer at its
   * initial values, the stored row first, as StateStoreRestoreExec emits it).
   */
  merge(stored: AggBuffer | undefined, batch: AggBuffer): AggBuffer {
    const out = this.init();
    for (const b of stored === undefined ? [batch] : [stored, batch]) {
      this.names.forEach((a, i) => {
        const m = out[i];
        const x = b[i];
        if (a === 'countAll' || a === 'count') out[i] = (m as number) + (x as number);
        else if (a === 'sum') {
          if (x !== null) out[i] = this.exact ? ((m as bigint | null) ?? 0n) + (x as bigint) : ((m as number | null) ?? 0) + (x as number);
        } else if (a === 'min') out[i] = x !== null && (m === null || less(x as number | bigint, m as number | bigint)) ? x : m;
        else if (a === 'max') out[i] = x !== null && (m === null || less(m as number | bigint, x as number | bigint)) ? x : m;
        else {
          const [mt, mn] = m as [number, number];
          const [xt, xn] = x as [number, number];
          out[i] = [mt + xt, mn + xn];
        }
      });
    }
    return out;
  }

  /** The aggregations' output columns. */
  finish(buf: AggBuffer): Record<string, Json> {
    const out: Record<string, Json> = {};
    this.names.forEach((a, i) => {
      const s = buf[i];
      if (a === 'avg') {
        const [total, n] = s as [number, number];
        out[AS[a]] = n === 0 ? null : outputValue(total / n);
      } else out[AS[a]] = outputValue(s as Value);
    });
    return out;
  }
}

/** A group of the model: its identity and when it expires, and (in a table) its aggregate. */
interface GroupOf {
  readonly id: string;
  /** The grouping columns of its output rows. */
  readonly columns: Record<string, Json>;
  /** When it expires (µs; null: never). */
  readonly evictUs: bigint | null;
}

interface ModelGroup extends GroupOf {
  buf: AggBuffer;
}

class AggregateModel implements ModelOperator {
  readonly usesNoDataBatches: boolean;
  private readonly state = new Map<string, ModelGroup>();
  private readonly aggs: Aggs;
  /** Whether groups expire and rows are late: an event-time key under a watermark, outside complete mode. */
  private readonly evicts: boolean;
  private readonly durationUs: bigint;
  private readonly slideUs: bigint;
  private readonly startUs: bigint;

  constructor(private readonly s: AggScenario) {
    this.aggs = new Aggs(s.aggs, s.valueType !== 'DOUBLE');
    this.evicts = s.mode !== 'complete' && s.delayMs !== null && (s.keys.includes('window') || s.keys.includes('t'));
    this.usesNoDataBatches = s.mode !== 'complete' && s.delayMs !== null;
    this.durationUs = BigInt(s.window.durationUs);
    this.slideUs = BigInt(s.window.slideUs);
    this.startUs = BigInt(s.window.startUs);
  }

  /** The windows [start, end) that cover `t`, as Spark's TimeWindowing gives them: start = startTime + k × slide. */
  private windows(t: bigint): Array<[bigint, bigint]> {
    const out: Array<[bigint, bigint]> = [];
    for (let k = floorDiv(t - this.startUs, this.slideUs); ; k--) {
      const start = this.startUs + k * this.slideUs;
      if (start + this.durationUs <= t) return out;
      out.push([start, start + this.durationUs]);
    }
  }

  /** Whether the window filter keeps the window that starts at `start`. */
  private windowPasses(start: bigint): boolean {
    const f = this.s.windowFilter;
    if (f === null) return true;
    return (f.fromSec === null || start >= BASE_US + BigInt(f.fromSec * SEC)) && (f.untilSec === null || start < BASE_US + BigInt(f.untilSec * SEC));
  }

  /** The group of a row (in window `w`). */
  private group(r: InputRow, w: [bigint, bigint] | null): GroupOf {
    const columns: Record<string, Json> = {};
    const id: string[] = [];
    for (const key of this.s.keys) {
      if (key === 'window') {
        columns.window = { start: outputTime(w![0]), end: outputTime(w![1]) };
        id.push(`w${w![0]}`);
      } else if (key === 'k') {
        columns.k = r.k;
        id.push(JSON.stringify(r.k));
      } else if (key === 't') {
        columns.t = r.t === null ? null : outputTime(r.t);
        id.push(String(r.t));
      } else {
        // NormalizeFloatingNumbers: -0.0 groups (and shows) as 0.0, every NaN as one
        const v = typeof r.v === 'number' && r.v === 0 ? 0 : r.v;
        columns.v = outputValue(v);
        id.push(typeof v === 'bigint' ? `${v}n` : String(v));
      }
    }
    const evictUs = !this.evicts ? null : w !== null ? w[1] : r.t;
    return { id: id.join('|'), columns, evictUs };
  }

  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone {
    const partial = new Map<string, ModelGroup>();
    let dropped = 0;
    let refused = 0;
    const windowed = this.s.keys.includes('window');
    for (const r of rows) {
      let groups: GroupOf[];
      if (windowed) {
        if (r.t === null) continue; // window() filters a null event time: not late either
        const passed = this.windows(r.t).filter(([start]) => this.windowPasses(start));
        if (passed.length === 0) continue; // the filter rejects every window of the row: filtered, not late
        const live = passed.filter(([, end]) => !this.evicts || end > lateUs);
        if (live.length === 0) {
          dropped++;
          continue;
        }
        groups = live.map((w) => this.group(r, w));
      } else {
        if (this.evicts && this.s.keys.includes('t') && r.t !== null && r.t <= lateUs) {
          dropped++;
          continue;
        }
        groups = [this.group(r, null)];
      }
      // a BIGINT sum past 64 bits in any of the row's groups, with its stored value: a dead letter
      if (groups.some((g) => this.aggs.overflows([this.state.get(g.id)?.buf, partial.get(g.id)?.buf], r.v))) {
        refused++;
        continue;
      }
      for (const g of groups) {
        let p = partial.get(g.id);
        if (!p) partial.set(g.id, (p = { ...g, buf: this.aggs.init() }));
        this.aggs.update(p.buf, r.v);
      }
    }
    // a global aggregation has its one row in every batch (its initial values before any row)
    if (this.s.keys.length === 0 && !partial.has('')) partial.set('', { id: '', columns: {}, evictUs: null, buf: this.aggs.init() });

    const out: OutputRow[] = [];
    const rowOf = (g: ModelGroup): OutputRow => ({ ...g.columns, ...this.aggs.finish(g.buf) });
    for (const [id, p] of partial) {
      const merged: ModelGroup = { ...p, buf: this.aggs.merge(this.state.get(id)?.buf, p.buf) };
      this.state.set(id, merged);
      if (this.s.mode === 'update') out.push(rowOf(merged));
    }
    if (this.s.mode === 'complete') for (const g of this.state.values()) out.push(rowOf(g));
    for (const [id, g] of this.state) {
      if (g.evictUs === null || g.evictUs > evictUs) continue;
      if (this.s.mode === 'append') out.push(rowOf(g));
      this.state.delete(id);
    }
    return { rows: out, dropped, refused, stateRows: this.state.size };
  }
}

class DedupModel implements ModelOperator {
  readonly usesNoDataBatches: boolean;
  /** Each key held and when it expires (µs; null: never). */
  private readonly state = new Map<string, bigint | null>();
  private readonly columns: Array<'k' | 't' | 'v'>;

  constructor(private readonly s: DedupScenario) {
    this.usesNoDataBatches = s.delayMs !== null;
    this.columns = s.columns ?? ['k', 't', 'v'];
  }

  private expiresAt(r: InputRow): bigint | null {
    const delay = this.s.delayMs;
    if (delay === null) return null;
    // (within the watermark a null event time reads as the epoch, as Spark's UnsafeRow.getLong gives 0)
    if (this.s.withinWatermark) return (r.t ?? 0n) + BigInt(delay) * 1000n;
    return this.columns.includes('t') ? r.t : null;
  }

  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone {
    const out: OutputRow[] = [];
    let dropped = 0;
    for (const r of rows) {
      if (this.s.delayMs !== null && r.t !== null && r.t <= lateUs) {
        dropped++;
        continue;
      }
      const id = this.columns.map((c) => (c === 'k' ? JSON.stringify(r.k) : typeof r[c] === 'bigint' && c === 'v' ? `${r.v}n` : String(r[c]))).join('|');
      if (this.state.has(id)) continue;
      this.state.set(id, this.expiresAt(r));
      out.push({ k: r.k, t: r.t === null ? null : outputTime(r.t), v: outputValue(r.v) });
    }
    for (const [id, at] of this.state) if (at !== null && at <= evictUs) this.state.delete(id);
    return { rows: out, dropped, refused: 0, stateRows: this.state.size };
  }
}

/** Whether a filter on k keeps a row's k (SQL: a comparison with null is null, which rejects). */
function keyPasses(f: KeyFilter, k: string | null): boolean {
  if (k === null) return false;
  if (f === "k <> 'b'") return k !== 'b';
  // (UTF8String's order, of code points: for a one-character bound, that of the first UTF-16 unit)
  if (f === "k >= 'b'") return k >= 'b';
  return true;
}

/** The model's runs: batches of at most maxFiles files, the watermark after each, a no-data batch when it can change something. */
function runModel(s: Scenario): RunSeen[] {
  const op: ModelOperator = s.kind === 'aggregate' ? new AggregateModel(s) : new DedupModel(s);
  let watermarkMs = 0;
  let lastEvictMs = 0;
  let maxEventMs = Number.NEGATIVE_INFINITY;
  let batchId = 0;
  const out: RunSeen[] = [];
  const runBatch = (read: readonly InputRow[], noData: boolean): BatchSeen => {
    // (a filter on k moved below withWatermark: the rows it rejects are gone before the watermark)
    const rows = s.kind === 'aggregate' && s.keyFilter !== null ? read.filter((r) => keyPasses(s.keyFilter!, r.k)) : read;
    const evictMs = watermarkMs;
    const done = op.batch(rows, BigInt(evictMs) * 1000n, BigInt(lastEvictMs) * 1000n);
    for (const r of rows) if (r.t !== null) maxEventMs = Math.max(maxEventMs, Number(floorDiv(r.t, 1000n)));
    if (s.delayMs !== null && maxEventMs - s.delayMs > watermarkMs) watermarkMs = maxEventMs - s.delayMs;
    lastEvictMs = evictMs;
    return {
      batchId: batchId++,
      noData,
      watermarkMs: evictMs,
      rows: canonicalRows(done.rows, { zeroSign: ZERO_SIGN }),
      droppedByWatermark: done.dropped,
      deadLetters: done.refused,
      stateRows: done.stateRows,
    };
  };
  for (const files of s.steps) {
    const batches: BatchSeen[] = [];
    const per = s.maxFiles ?? Math.max(1, files.length);
    for (let i = 0; i < files.length; i += per) batches.push(runBatch(files.slice(i, i + per).flat(), false));
    if (op.usesNoDataBatches && watermarkMs > lastEvictMs) batches.push(runBatch([], true));
    out.push({ batches, watermarkMs });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

describe('the aggregation on the in-memory ports, against a model of Spark’s rules', () => {
  it('emits, drops, evicts and keeps what the model does, batch by batch, in every output mode', async () => {
    await check(
      fc.asyncProperty(aggScenario, async (s) => {
        expect(await runEngine(s)).toEqual(runModel(s));
      }),
    );
  });
});

describe('deduplication on the in-memory ports, against a model of Spark’s rules', () => {
  it('emits the first row of each key, drops late rows and expires keys as the model does', async () => {
    await check(
      fc.asyncProperty(dedupScenario, async (s) => {
        expect(await runEngine(s)).toEqual(runModel(s));
      }),
      Math.max(1, Math.round(RUNS / 3)),
    );
  });
});

describe('counterexamples the differential test found', () => {
  it('shows a DOUBLE grouping key first met as -0.0 as 0.0, in the run that made the group (NormalizeFloatingNumbers)', async () => {
    // found by the property: keys [window, v], complete mode, one row with v = -0.0; the group was
    // shown with v = -0 until its state came back from the store, which keeps no sign of zero
    const plan = readStream
      .format('json')
      .schema('k STRING, t TIMESTAMP, v DOUBLE')
      .load()
      .groupBy(window('t', '1 second'), 'v')
      .agg(count().as('n'))
      .writeStream.outputMode('complete')
      .plan();
    const t = createTestRunner(plan);
    t.drop('{"k":"a","t":"2026-10-01 12:00:05","v":-0.0}');
    const [batch] = (await t.run()).batches;
    expect(batch.rows).toHaveLength(1);
    expect(Object.is(batch.rows[0].v, 0)).toBe(true);
  });

  it('gives the expressions after the aggregation the normalised key: -0.0 and 0.0 are one group, shown as 0.0', async () => {
    const plan = readStream
      .format('json')
      .schema('v DOUBLE')
      .load()
      .groupBy('v')
      .count()
      .selectExpr('v', 'CAST(v AS STRING) AS text', 'count')
      .writeStream.outputMode('update')
      .plan();
    const t = createTestRunner(plan);
    t.drop('{"v":-0.0}\n{"v":0.0}\n{"v":-0.0}');
    const [batch] = (await t.run()).batches;
    expect(batch.rows).toEqual([{ v: 0, text: '0.0', count: 3 }]);
    expect(Object.is(batch.rows[0].v, 0)).toBe(true);
  });
});
