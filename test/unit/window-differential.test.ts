/**
 * A differential property test of the windowed aggregations that aggregation-differential.test.ts
 * leaves aside: sliding windows of any size, slide and start time, and session windows
 * (lib/engine/operators/session.ts) with a static or a dynamic gap, run by the executor on the
 * in-memory ports over several scheduled runs (each a fresh executor over the same checkpoint and
 * state: a restart), sometimes with a crash and its recovery, against a small model written here
 * from Spark's rules (looked up in Spark's source, named below; docs/semantics.md):
 *
 *   windows     TimeWindowing: a row at t is in every window [s, s + size) with
 *               s = startTime + k × slide and s <= t < s + size (ceil(size / slide) candidates,
 *               filtered: a slide that does not divide the size is allowed); slide <= size and
 *               |startTime| < slide, else the query is refused; a null t is in none (not late)
 *   sessions    SessionWindowing: a row at t opens [t, t + gap); a dynamic gap is a STRING cast to
 *               an interval (months added as a calendar month), and a row whose session does not
 *               end after it starts (null, unreadable, zero or negative gap) is filtered out (not
 *               late either). A literal gap is a positive fixed duration here: sluice refuses a
 *               literal gap of zero, below zero or in months when the query is built, where Spark
 *               runs it (dropping every row, or adding months) (a departure not in docs/).
 *               MergingSessionsIterator: a key's sessions, the stored ones and the batch's, sorted
 *               by start, merge while start <= the current session's end (touching sessions merge),
 *               the end the largest. Update mode is refused (UnsupportedOperationChecker)
 *   watermark   batch N evicts and emits with the watermark computed after batch N−1 (the largest
 *               event time, truncated to the ms, minus the delay; never back) and drops late rows
 *               with batch N−1's own evicting watermark (µs <= ms × 1000); every row with an event
 *               time moves it (the window and session filters read t: they stay above withWatermark)
 *   late        a window whose end is at or before that watermark: its share of the row is dropped,
 *               and a row every window of which is late counts once as dropped (sluice counts input
 *               rows a user lost, a documented departure from Spark's per-group metric: FORMAT,
 *               docs/semantics.md); complete mode drops none. A session row is late when its own
 *               session [t, t + gap) ends at or before it (SessionWindowStateStoreRestoreExec filters
 *               the per-row sessions before they merge), in every output mode, complete included
 *   append      a window or session is emitted once, when the batch's watermark reaches its end,
 *               and leaves the state (SessionWindowStateStoreSaveExec: removeByValueCondition)
 *   update      (windows only) the groups a batch changed, then the expired ones leave unseen
 *   complete    the whole table (every session held) every batch; nothing is evicted
 *   no-data     one more batch at the end of a run when the watermark moved past the last batch's,
 *               outside complete mode (shouldRunAnotherBatch)
 *   state rows  one per window group, one per session (a key holding two sessions: two)
 *   keys        a null key is a group; event times now, around 1970-01-01 (before the epoch: a
 *               window's start is floored, as TimeWindowing's remainder is since Spark fixed it for
 *               negative times; a watermark of 0 makes whatever ends at or before the epoch late)
 *               or past 2^53 µs (the year 2300: the exact bigint paths)
 *
 * Values are INTs, so the sums (and avg's double sum) are exact in any order, and the model need
 * not follow the order in which Spark's partial aggregates meet. Per run the engine's batches are
 * compared with the model's (batch ids, no-data batches, each batch's watermark, output rows as a
 * multiset, rows dropped as late, dead letters, state rows) and the run's watermark; at the end,
 * what is durable (the sink's rows and the commit log's watermark and state rows per batch) too.
 * A run that crashes is followed by one that recovers; only the durable view and the watermark
 * are compared for it.
 *
 * The harness it shares with the other differential tests (the time texts, the rows' canonical
 * text, the per-batch view and the aggregations' builders) is test/helpers/differential.ts.
 *
 * The seed is fixed (SLUICE_PROPERTY_SEED overrides it, SLUICE_PROPERTY_RUNS the runs) so that CI
 * is reproducible; hunt with other seeds and more runs locally.
 */
import fc from 'fast-check';
import type { Json } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { expr } from '../../lib/engine/query/column';
import { count, sessionWindow, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { CRASH_POINTS, type CrashPoint } from '../../lib/engine/testing/crash';
import {
  AS,
  type AggName,
  aggregationsOfV,
  type BatchSeen,
  canonicalRows,
  type DurableBatch,
  durableBatches,
  floorDiv,
  inputTime,
  outputTime,
  seenOfRun,
} from '../helpers/differential';
import { createTestRunner } from './engine-factories';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261206);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 80);
const check = <T>(property: fc.IAsyncProperty<T>, runs = RUNS) => fc.assert(property, { seed: SEED, numRuns: runs });

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

interface InputRow {
  readonly k: string | null;
  /** Event time in epoch µs (null: none). */
  readonly t: bigint | null;
  readonly v: number | null;
  /** A session gap as text (a dynamic gap reads it). */
  readonly gap: string | null;
}

/** A run: its files, each a list of rows. */
type Step = InputRow[][];

/** A crash in run `step` at `point` (of whichever batch reaches it first), then a run that recovers. */
interface Crash {
  readonly step: number;
  readonly point: CrashPoint;
}

interface Common {
  readonly aggs: AggName[];
  /** withWatermark('t', delay), in ms (null: no watermark). */
  readonly delayMs: number | null;
  readonly maxFiles: number | null;
  readonly statePartitions: number;
  /** The grouping keys as SQL text (groupBy(expr(...))) rather than the builders. */
  readonly sql: boolean;
  readonly crash: Crash | null;
  readonly steps: Step[];
}

/** A window's duration, slide and start time, in µs, and the unit its text is written in. */
interface WindowSpec {
  readonly durationUs: number;
  readonly slideUs: number;
  readonly startUs: number;
  readonly unit: number;
}

interface SlidingScenario extends Common {
  readonly kind: 'sliding';
  readonly window: WindowSpec;
  readonly keys: Array<'window' | 'k'>;
  readonly mode: 'append' | 'update' | 'complete';
}

/** A static gap (µs, and its text) or a dynamic one (SQL over the row; its value per row: `gapOf`). */
type Gap = { readonly kind: 'static'; readonly us: number; readonly text: string } | { readonly kind: 'dynamic'; readonly sql: DynamicGap };

/** The dynamic gaps: the gap column, or a CASE over the key that falls back to it. */
type DynamicGap = 'gap' | "CASE WHEN k = 'a' THEN '2 seconds' ELSE gap END";

interface SessionScenario extends Common {
  readonly kind: 'session';
  readonly gap: Gap;
  readonly keys: Array<'session' | 'k' | 'v'>;
  readonly mode: 'append' | 'complete';
}

type Scenario = SlidingScenario | SessionScenario;

const SEC = 1_000_000;
/** 2026-10-01 12:00:00 UTC in epoch µs. */
const BASE_US = BigInt(Date.UTC(2026, 9, 1, 12)) * 1000n;
/** 2300-01-01 UTC in epoch µs: past 2^53 µs (bigint times: windows.ts's and timestamps.ts's exact paths). */
const FAR_US = BigInt(Date.UTC(2300, 0, 1)) * 1000n;
/** Where a scenario's event times lie: now, around 1970-01-01, or past 2^53 µs (the header's keys). */
const ERAS = { now: BASE_US, epoch: -30n * BigInt(SEC), far: FAR_US } as const;
type Era = keyof typeof ERAS;
const INT_MAX = 2 ** 31 - 1;

/** The gap texts rows carry, and what Spark's cast to an interval makes of each (µs; null: no interval). */
const GAP_US: Record<string, number | null> = {
  '1 second': SEC,
  '3 seconds': 3 * SEC,
  '10 seconds': 10 * SEC,
  '1 minute': 60 * SEC,
  '1500 milliseconds': 1.5 * SEC,
  '250 milliseconds': SEC / 4,
  '2 seconds': 2 * SEC,
  '0 seconds': 0,
  '-2 seconds': -2 * SEC,
  soon: null,
  // (months: added as a calendar month, addMonths)
  '1 month': 0,
};

const key: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('a', 'b', 'c') },
  { weight: 2, arbitrary: fc.constantFrom(null, null, '', 'é', 'k'.repeat(21)) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 30 }).map((i) => `key-${i}`) },
);

const value: fc.Arbitrary<number | null> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -5, max: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(INT_MAX, -INT_MAX - 1, 1000) },
  { weight: 2, arbitrary: fc.constant(null) },
);

const gapText: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('1 second', '3 seconds', '10 seconds', '1500 milliseconds', '2 seconds') },
  { weight: 1, arbitrary: fc.constantFrom('1 minute', '250 milliseconds', '1 month') },
  { weight: 2, arbitrary: fc.constantFrom(null, '0 seconds', '-2 seconds', 'soon') },
);

/** The part of an event time below the second, in µs: mostly none, sometimes just past or before a boundary. */
const subSecond = fc.oneof({ weight: 10, arbitrary: fc.constant(0) }, { weight: 3, arbitrary: fc.constantFrom(1, 999, 1000, 1001, 500_000, 999_000, 999_999) });

/** A row of run `stepNo`: times drift forward by run (`spanSec` a run), go back (late), repeat, jump ahead, or are null. */
function row(base: bigint, spanSec: number) {
  return (stepNo: number): fc.Arbitrary<InputRow> =>
    fc
      .record({
        k: key,
        offsetSec: fc.oneof({ weight: 15, arbitrary: fc.integer({ min: -2 * spanSec, max: spanSec }) }, { weight: 1, arbitrary: fc.constantFrom(120, 3600) }),
        sub: subSecond,
        nullTime: fc.integer({ min: 0, max: 30 }).map((n) => n === 0),
        v: value,
        gap: gapText,
      })
      .map(({ k, offsetSec, sub, nullTime, v, gap }) => ({
        k,
        t: nullTime ? null : base + BigInt((stepNo * spanSec + offsetSec) * SEC + sub),
        v,
        gap,
      }));
}

/** One to five runs of 1 to 3 files (sometimes none) of 0 to 15 rows. */
function steps(era: Era, spanSec: number): fc.Arbitrary<Step[]> {
  const rowOf = row(ERAS[era], spanSec);
  return fc
    .integer({ min: 1, max: 5 })
    .chain((n) =>
      fc.tuple(
        ...Array.from({ length: n }, (_, stepNo) =>
          fc.oneof(
            { weight: 12, arbitrary: fc.array(fc.array(rowOf(stepNo), { maxLength: 15 }), { minLength: 1, maxLength: 3 }) },
            { weight: 1, arbitrary: fc.constant([] as InputRow[][]) },
          ),
        ),
      ),
    );
}

/**
 * A sliding window in units of `unit` µs: any duration up to `maxDuration`, any slide from a
 * twelfth of it to all of it (tumbling), any start time with |start| < slide.
 */
function windowIn(unit: number, maxDuration: number): fc.Arbitrary<WindowSpec> {
  return fc
    .integer({ min: 1, max: maxDuration })
    .chain((d) =>
      fc
        .integer({ min: Math.max(1, Math.ceil(d / 12)), max: d })
        .chain((s) =>
          fc
            .oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: -(s - 1), max: s - 1 }) })
            .map((st) => ({ durationUs: d * unit, slideUs: s * unit, startUs: st * unit, unit })),
        ),
    );
}

const windowSpec: fc.Arbitrary<WindowSpec> = fc.oneof(
  { weight: 8, arbitrary: windowIn(SEC, 60) },
  { weight: 1, arbitrary: windowIn(1000, 4000) },
  { weight: 1, arbitrary: windowIn(1, 3000) },
);

const delayMs = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(0, 1000, 5000, 10_000, 30_000) }, { weight: 1, arbitrary: fc.constantFrom(1, 999, 1500) });

const aggs = fc.subarray<AggName>(['countAll', 'count', 'sum', 'min', 'max', 'avg'], { minLength: 1 });

const common = {
  aggs,
  delayMs: fc.option(delayMs, { nil: null, freq: 6 }),
  maxFiles: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  statePartitions: fc.constantFrom(1, 1, 2, 4),
  sql: fc.boolean(),
  crash: fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.record({ step: fc.nat(4), point: fc.constantFrom(...CRASH_POINTS) }) },
  ),
  era: fc.constantFrom<Era>('now', 'now', 'now', 'now', 'now', 'now', 'now', 'now', 'epoch', 'far'),
};

/** A crash only in a run that exists. */
function crashIn(crash: Crash | null, runs: number): Crash | null {
  return crash !== null && crash.step < runs ? crash : null;
}

const slidingScenario: fc.Arbitrary<SlidingScenario> = fc
  .record({
    ...common,
    window: windowSpec,
    keys: fc.constantFrom<Array<'window' | 'k'>>(['window', 'k'], ['window', 'k'], ['k', 'window'], ['window']),
    mode: fc.constantFrom<SlidingScenario['mode']>('append', 'append', 'update', 'complete'),
    spanSec: fc.constantFrom(5, 20, 60),
  })
  .chain((s) => steps(s.era, s.spanSec).map((st) => ({ ...s, steps: st })))
  .map(({ spanSec: _, era: __, ...s }) => ({
    kind: 'sliding' as const,
    ...s,
    // append needs a watermark on the window's column (Spark refuses the query otherwise)
    delayMs: s.mode === 'append' && s.delayMs === null ? 10_000 : s.delayMs,
    crash: crashIn(s.crash, s.steps.length),
  }));

const gap: fc.Arbitrary<Gap> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .constantFrom<[number, string]>(
        [SEC, '1 second'],
        [3 * SEC, '3 seconds'],
        [10 * SEC, '10 seconds'],
        [SEC / 2, '500 milliseconds'],
        [1001, '1001 microseconds'],
      )
      .map(([us, text]) => ({ kind: 'static' as const, us, text })),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<DynamicGap>('gap', "CASE WHEN k = 'a' THEN '2 seconds' ELSE gap END").map((sql) => ({ kind: 'dynamic' as const, sql })),
  },
);

const sessionScenario: fc.Arbitrary<SessionScenario> = fc
  .record({
    ...common,
    gap,
    keys: fc.constantFrom<Array<'session' | 'k' | 'v'>>(['session', 'k'], ['session', 'k'], ['k', 'session'], ['v', 'session', 'k']),
    mode: fc.constantFrom<SessionScenario['mode']>('append', 'append', 'complete'),
    spanSec: fc.constantFrom(3, 10, 20),
  })
  .chain((s) => steps(s.era, s.spanSec).map((st) => ({ ...s, steps: st })))
  .map(({ spanSec: _, era: __, ...s }) => ({
    kind: 'session' as const,
    ...s,
    delayMs: s.mode === 'append' && s.delayMs === null ? 5000 : s.delayMs,
    crash: crashIn(s.crash, s.steps.length),
  }));

// ---------------------------------------------------------------------------------------------
// Text in and out
// ---------------------------------------------------------------------------------------------

function fileText(rows: readonly InputRow[]): string {
  return rows
    .map(
      (r) =>
        `{"k":${JSON.stringify(r.k)},"t":${r.t === null ? 'null' : JSON.stringify(inputTime(r.t))},"v":${JSON.stringify(r.v)},"gap":${JSON.stringify(r.gap)}}`,
    )
    .join('\n');
}

/** A duration of `us` µs as Spark's interval text, in the window's unit. */
function durationText(us: number, unit: number): string {
  const n = us / unit;
  return unit === SEC ? `${n} seconds` : unit === 1000 ? `${n} milliseconds` : `${n} microseconds`;
}

// ---------------------------------------------------------------------------------------------
// What both sides report
// ---------------------------------------------------------------------------------------------

/** A run: its batches (null for a run that crashed and the one that recovered it), the watermark after it. */
interface RunSeen {
  batches: BatchSeen[] | null;
  watermarkMs: number;
}

interface Seen {
  runs: RunSeen[];
  durable: DurableBatch[];
}

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

function planOf(s: Scenario): QueryPlan {
  let reader = readStream.format('json').schema('k STRING, t TIMESTAMP, v INT, gap STRING');
  if (s.maxFiles !== null) reader = reader.option('maxFilesPerTrigger', s.maxFiles);
  let frame = reader.load();
  if (s.delayMs !== null) frame = frame.withWatermark('t', `${s.delayMs} milliseconds`);
  let timeKey: ReturnType<typeof window> | ReturnType<typeof sessionWindow> | ReturnType<typeof expr>;
  if (s.kind === 'sliding') {
    const w = s.window;
    const texts = [durationText(w.durationUs, w.unit), durationText(w.slideUs, w.unit), durationText(w.startUs, w.unit)];
    const sliding = w.slideUs !== w.durationUs || w.startUs !== 0;
    const starting = w.startUs !== 0;
    if (s.sql) timeKey = expr(`window(t, ${texts.slice(0, starting ? 3 : sliding ? 2 : 1).map((x) => `'${x}'`)})`);
    else timeKey = window('t', texts[0], sliding ? texts[1] : undefined, starting ? texts[2] : undefined);
  } else {
    const g = s.gap;
    if (g.kind === 'dynamic') timeKey = expr(`session_window(t, ${g.sql})`);
    else timeKey = s.sql ? expr(`session_window(t, '${g.text}')`) : sessionWindow('t', g.text);
  }
  const keys = (s.keys as string[]).map((k) => (k === 'k' || k === 'v' ? k : timeKey));
  // biome-ignore lint/suspicious/noExplicitAny: the keys' types are checked when the plan is built
  return (frame.groupBy as (...k: any[]) => any)(...keys)
    .agg(...aggregationsOfV(s.aggs))
    .writeStream.outputMode(s.mode)
    .option('statePartitions', s.statePartitions)
    .plan();
}

/** The scenario's runs, each a fresh executor over the same checkpoint, state and landing files. */
async function runEngine(s: Scenario): Promise<Seen> {
  const t = createTestRunner(planOf(s));
  const runs: RunSeen[] = [];
  for (const [stepNo, files] of s.steps.entries()) {
    for (const f of files) t.drop(fileText(f));
    const crashing = s.crash?.step === stepNo;
    if (crashing) await t.crashRun({ point: s.crash!.point });
    const seen = seenOfRun(await t.run());
    runs.push(crashing ? { watermarkMs: seen.watermarkMs, batches: null } : seen);
  }
  const durable = await durableBatches(t.checkpoint, t.sink);
  return { runs, durable };
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/** Spark's buffers for count(*), count(v), sum(v), min(v), max(v), avg(v) of an INT v: all exact here. */
interface Buf {
  n: number;
  nv: number;
  sum: number | null;
  min: number | null;
  max: number | null;
}

const newBuf = (): Buf => ({ n: 0, nv: 0, sum: null, min: null, max: null });

function update(b: Buf, v: number | null): void {
  b.n++;
  if (v === null) return;
  b.nv++;
  b.sum = (b.sum ?? 0) + v;
  b.min = b.min === null || v < b.min ? v : b.min;
  b.max = b.max === null || v > b.max ? v : b.max;
}

function merge(into: Buf, b: Buf): void {
  into.n += b.n;
  into.nv += b.nv;
  if (b.sum !== null) into.sum = (into.sum ?? 0) + b.sum;
  if (b.min !== null && (into.min === null || b.min < into.min)) into.min = b.min;
  if (b.max !== null && (into.max === null || b.max > into.max)) into.max = b.max;
}

function finish(aggs: readonly AggName[], b: Buf): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const a of aggs) {
    out[AS[a]] =
      a === 'countAll' ? b.n : a === 'count' ? b.nv : a === 'sum' ? b.sum : a === 'min' ? b.min : a === 'max' ? b.max : b.nv === 0 ? null : b.sum! / b.nv;
  }
  return out;
}

/** What one batch of the model's operator did. */
interface BatchDone {
  rows: Array<Record<string, Json>>;
  dropped: number;
  stateRows: number;
}

interface ModelOperator {
  /** One batch: its rows, its evicting watermark and the late one (each in µs, ms × 1000). */
  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone;
  /** Whether a no-data batch can change anything for it (Spark's shouldRunAnotherBatch). */
  readonly usesNoDataBatches: boolean;
}

interface WindowGroup {
  readonly k: string | null;
  readonly start: bigint;
  readonly end: bigint;
  readonly buf: Buf;
}

class SlidingModel implements ModelOperator {
  readonly usesNoDataBatches: boolean;
  private readonly state = new Map<string, WindowGroup>();
  /** Whether windows close and rows are late: a watermark, outside complete mode. */
  private readonly evicts: boolean;
  private readonly size: bigint;
  private readonly slide: bigint;
  private readonly offset: bigint;

  constructor(private readonly s: SlidingScenario) {
    this.evicts = s.mode !== 'complete' && s.delayMs !== null;
    this.usesNoDataBatches = this.evicts;
    this.size = BigInt(s.window.durationUs);
    this.slide = BigInt(s.window.slideUs);
    this.offset = BigInt(s.window.startUs);
  }

  /** The windows [start, end) that hold `t`: start = startTime + k × slide, start <= t < start + size. */
  private windows(t: bigint): Array<[bigint, bigint]> {
    const out: Array<[bigint, bigint]> = [];
    for (let k = floorDiv(t - this.offset, this.slide); ; k--) {
      const start = this.offset + k * this.slide;
      if (start + this.size <= t) return out;
      out.push([start, start + this.size]);
    }
  }

  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone {
    const withK = this.s.keys.includes('k');
    const partial = new Map<string, WindowGroup>();
    let dropped = 0;
    for (const r of rows) {
      if (r.t === null) continue;
      const live = this.windows(r.t).filter(([, end]) => !this.evicts || end > lateUs);
      if (live.length === 0) {
        dropped++;
        continue;
      }
      for (const [start, end] of live) {
        const k = withK ? r.k : null;
        const id = `${start}|${JSON.stringify(k)}`;
        let g = partial.get(id);
        if (!g) partial.set(id, (g = { k, start, end, buf: newBuf() }));
        update(g.buf, r.v);
      }
    }
    const rowOf = (g: WindowGroup) => ({
      window: { start: outputTime(g.start), end: outputTime(g.end) },
      ...(withK ? { k: g.k } : {}),
      ...finish(this.s.aggs, g.buf),
    });
    const out: Array<Record<string, Json>> = [];
    for (const [id, p] of partial) {
      const stored = this.state.get(id);
      const merged: WindowGroup = { ...p, buf: newBuf() };
      if (stored) merge(merged.buf, stored.buf);
      merge(merged.buf, p.buf);
      this.state.set(id, merged);
      if (this.s.mode === 'update') out.push(rowOf(merged));
    }
    if (this.s.mode === 'complete') for (const g of this.state.values()) out.push(rowOf(g));
    if (this.evicts) {
      for (const [id, g] of this.state) {
        if (g.end > evictUs) continue;
        if (this.s.mode === 'append') out.push(rowOf(g));
        this.state.delete(id);
      }
    }
    return { rows: out, dropped, stateRows: this.state.size };
  }
}

interface Session {
  start: bigint;
  end: bigint;
  buf: Buf;
}

/** `t` plus one month, as a timestamp plus an interval of months adds it: the day of month clamped to the month's last. */
function addMonth(t: bigint): bigint {
  const dayUs = 86_400n * BigInt(SEC);
  const day = floorDiv(t, dayUs);
  const d = new Date(Number(day) * 86_400_000);
  const [y, m] = [d.getUTCFullYear(), d.getUTCMonth()];
  const last = new Date(Date.UTC(y, m + 2, 0)).getUTCDate();
  const next = BigInt(Date.UTC(y, m + 1, Math.min(d.getUTCDate(), last))) / 86_400_000n;
  return next * dayUs + (t - day * dayUs);
}

/** The gap of a row under a dynamic gap's SQL, as text. */
function gapOf(sql: DynamicGap, r: InputRow): string | null {
  return sql === 'gap' ? r.gap : r.k === 'a' ? '2 seconds' : r.gap;
}

class SessionModel implements ModelOperator {
  readonly usesNoDataBatches: boolean;
  /** Each key's sessions, by the key's JSON. */
  private readonly state = new Map<string, { kv: Record<string, Json>; sessions: Session[] }>();
  private readonly evicts: boolean;

  constructor(private readonly s: SessionScenario) {
    this.evicts = s.mode !== 'complete' && s.delayMs !== null;
    this.usesNoDataBatches = this.evicts;
  }

  /** The end of the session a row opens, or null when SessionWindowing's filter drops it. */
  private endOf(r: InputRow): bigint | null {
    if (r.t === null) return null;
    const g = this.s.gap;
    if (g.kind === 'static') return r.t + BigInt(g.us);
    const text = gapOf(g.sql, r);
    if (text === '1 month') return addMonth(r.t);
    const us = text === null ? null : GAP_US[text];
    if (us === undefined) throw new Error(`no gap for ${text}`);
    return us === null || us <= 0 ? null : r.t + BigInt(us);
  }

  batch(rows: readonly InputRow[], evictUs: bigint, lateUs: bigint): BatchDone {
    const fresh = new Map<string, { kv: Record<string, Json>; sessions: Session[] }>();
    let dropped = 0;
    for (const r of rows) {
      const end = this.endOf(r);
      if (end === null) continue;
      // late in every output mode (the restore step filters before anything merges)
      if (this.s.delayMs !== null && end <= lateUs) {
        dropped++;
        continue;
      }
      const kv: Record<string, Json> = this.s.keys.includes('v') ? { k: r.k, v: r.v } : { k: r.k };
      const id = JSON.stringify(kv);
      let f = fresh.get(id);
      if (!f) fresh.set(id, (f = { kv, sessions: [] }));
      const buf = newBuf();
      update(buf, r.v);
      f.sessions.push({ start: r.t!, end, buf });
    }
    for (const [id, f] of fresh) {
      const all = [...(this.state.get(id)?.sessions ?? []), ...f.sessions].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
      const merged: Session[] = [];
      for (const s of all) {
        const cur = merged.at(-1);
        if (cur !== undefined && s.start <= cur.end) {
          merge(cur.buf, s.buf);
          if (s.end > cur.end) cur.end = s.end;
        } else {
          const buf = newBuf();
          merge(buf, s.buf);
          merged.push({ start: s.start, end: s.end, buf });
        }
      }
      this.state.set(id, { kv: f.kv, sessions: merged });
    }
    const rowOf = (kv: Record<string, Json>, s: Session) => ({
      session_window: { start: outputTime(s.start), end: outputTime(s.end) },
      ...kv,
      ...finish(this.s.aggs, s.buf),
    });
    const out: Array<Record<string, Json>> = [];
    let stateRows = 0;
    for (const [id, key] of this.state) {
      if (this.s.mode === 'complete') for (const s of key.sessions) out.push(rowOf(key.kv, s));
      if (this.evicts) {
        for (const s of key.sessions) if (s.end <= evictUs) out.push(rowOf(key.kv, s));
        key.sessions = key.sessions.filter((s) => s.end > evictUs);
      }
      if (key.sessions.length === 0) this.state.delete(id);
      stateRows += key.sessions.length;
    }
    return { rows: out, dropped, stateRows };
  }
}

/** The model's runs: batches of at most maxFiles files, the watermark after each, a no-data batch when it can change something. */
function runModel(s: Scenario): Seen {
  const op: ModelOperator = s.kind === 'sliding' ? new SlidingModel(s) : new SessionModel(s);
  let watermarkMs = 0;
  let lastEvictMs = 0;
  let maxEventMs = Number.NEGATIVE_INFINITY;
  let batchId = 0;
  const runs: RunSeen[] = [];
  const durable: DurableBatch[] = [];
  const runBatch = (rows: readonly InputRow[], noData: boolean): BatchSeen => {
    const evictMs = watermarkMs;
    const done = op.batch(rows, BigInt(evictMs) * 1000n, BigInt(lastEvictMs) * 1000n);
    for (const r of rows) if (r.t !== null) maxEventMs = Math.max(maxEventMs, Number(floorDiv(r.t, 1000n)));
    if (s.delayMs !== null && maxEventMs - s.delayMs > watermarkMs) watermarkMs = maxEventMs - s.delayMs;
    lastEvictMs = evictMs;
    const seen = {
      batchId: batchId++,
      noData,
      watermarkMs: evictMs,
      rows: canonicalRows(done.rows),
      droppedByWatermark: done.dropped,
      deadLetters: 0,
      stateRows: done.stateRows,
    };
    durable.push({ batchId: seen.batchId, watermarkMs: evictMs, rows: seen.rows, stateRows: done.stateRows });
    return seen;
  };
  for (const [stepNo, files] of s.steps.entries()) {
    const batches: BatchSeen[] = [];
    const per = s.maxFiles ?? Math.max(1, files.length);
    for (let i = 0; i < files.length; i += per) batches.push(runBatch(files.slice(i, i + per).flat(), false));
    if (op.usesNoDataBatches && watermarkMs > lastEvictMs) batches.push(runBatch([], true));
    runs.push({ batches: s.crash?.step === stepNo ? null : batches, watermarkMs });
  }
  return { runs, durable };
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

describe('sliding windows on the in-memory ports, against a model of Spark’s rules', () => {
  it('puts each row in every window that holds it, and emits, drops and evicts as the model does, in every output mode', async () => {
    await check(
      fc.asyncProperty(slidingScenario, async (s) => {
        expect(await runEngine(s)).toEqual(runModel(s));
      }),
    );
  });
});

describe('session windows on the in-memory ports, against a model of Spark’s rules', () => {
  it('merges sessions within and across batches, and emits, drops and evicts as the model does, in append and complete mode', async () => {
    await check(
      fc.asyncProperty(sessionScenario, async (s) => {
        expect(await runEngine(s)).toEqual(runModel(s));
      }),
    );
  });

  it('refuses update mode, as Spark does (UnsupportedOperationChecker)', () => {
    const frame = readStream.format('json').schema('k STRING, t TIMESTAMP, v INT, gap STRING').load().withWatermark('t', '5 seconds');
    expect(() => frame.groupBy(sessionWindow('t', '5 seconds'), 'k').agg(count().as('n')).writeStream.outputMode('update').plan()).toThrow(
      /Update output mode not supported for session window/,
    );
    expect(() => frame.groupBy(expr('session_window(t, gap)'), 'k').agg(count().as('n')).writeStream.outputMode('update').plan()).toThrow(
      /Update output mode not supported for session window/,
    );
  });
});

describe('window specs Spark refuses', () => {
  it('refuses a slide longer than the window and a start time not within the slide (TimeWindow.checkInputDataTypes)', () => {
    expect(() => window('t', '10 seconds', '11 seconds')).toThrow(/must be less than or equal to the window duration/);
    expect(() => window('t', '10 seconds', '3 seconds', '3 seconds')).toThrow(/must be less than the slide duration/);
    expect(() => window('t', '10 seconds', '3 seconds', '-3 seconds')).toThrow(/must be less than the slide duration/);
    expect(() => window('t', '10 seconds', '3 seconds', '-2 seconds')).not.toThrow();
  });
});
