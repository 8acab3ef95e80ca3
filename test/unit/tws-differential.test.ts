/**
 * A differential property test of transformWithState (lib/engine/operators/transform-with-state.ts,
 * lib/engine/tws/handle.ts): random queries in each time mode, their processors generated from a
 * small random program (data, not code), run on the in-memory ports over one to four scheduled
 * runs (each a fresh executor over the same checkpoint and state: a restart; a later run may bring
 * another program, a new processor on the same checkpoint), by MicroBatchExecutor (sometimes with
 * a crash that the next run recovers from) or as partitioned runs, against a small model written
 * here from FORMAT-4.md (the conformance spec beside the project, ../shared/conformance; FORMAT.md and FORMAT-2.md for the watermark),
 * not from the engine:
 *
 *   late rows   eventTime mode with a watermark only: a row whose event time is at or before the
 *               previous batch's watermark E(N−1) is dropped and counted; the watermark follows
 *               every row that reaches withWatermark, dropped ones included (the largest event
 *               time truncated to the ms, minus the delay, never back). A filter after it that
 *               does not read the event time is pushed below it (Spark's optimizer): its rows do
 *               not count. A renamed event-time column keeps its mark
 *   input       init (deleteIfExists first: the variable goes for every key), then
 *               handleInputRows once per key with rows, its rows in input order
 *   timers      processingTime: expiry <= T (the batch timestamp, the run's clock); eventTime:
 *               expiry <= E(N); none: none, and a timer call fails the batch. Those registered
 *               after the input step, ascending, each removed once its call returned
 *               (listTimers still lists it in the call)
 *   TTL         every write stamps T + the TTL its processor declares (ValueState.update,
 *               ListState.put each element, appendValue/appendList the appended ones,
 *               MapState.updateValue that entry); read as gone in a batch whose T >= expiration;
 *               every batch removes those of the variables its init declares (step 4); a
 *               variable not declared keeps its values, counted, until a deleteIfExists
 *   TimerValues the batch timestamp and E(N) (0 until the watermark moved), in every time mode
 *   batches     a run's data batches (all new files, or maxFilesPerTrigger at a time), each
 *               stamped with the run's clock; then none/eventTime: one no-data batch when the
 *               watermark moved past the last batch's (a query with a watermark); processingTime:
 *               a run that ran no batch runs one no-data batch when a timer or a TTL value is due
 *               at its clock and a batch was committed before
 *   failures    a timer call in time mode none; with eventTimeColumn, a row whose event time is at
 *               or before E(N−1) (EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED); a processor
 *               that adds or drops the TTL of an existing variable
 *               (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE). The batch commits nothing, the run
 *               fails, and the next run replays the batch
 *   replays     a batch that crashed or failed is replayed by the next run (a later clock) with
 *               its logged timestamp and watermarks and that run's processor; the run's own
 *               batches use its clock
 *   stateRows   one per value, list element and map entry over all keys, after the batch
 *
 * The processor's program decides, per call, what to write, which timers to register (at the
 * batch time, the watermark or the rows' largest event time plus an offset, already due ones
 * included) or delete, and what to emit: a row with the key, what the call saw (every declared
 * state variable read back, its timers, TimerValues, the batch id) and an event time. What the
 * spec leaves open is avoided: a timer handler registers only timers not due in its batch
 * (FORMAT-4: "fires in this batch or the next one (unspecified)"), map entries are emitted sorted,
 * the run that replays a crashed batch keeps its processor (a replay must compute the same rows),
 * and the comparison stops at a run FORMAT-4 does not decide (Model.dueAt, Model.incompatible).
 * Rows compare as a multiset per batch (keys share nothing, so their order does not matter).
 *
 * Per run the engine's batches are compared with the model's (batch ids, no-data batches, each
 * batch's watermark, output rows, rows dropped as late, state rows) and the run's watermark, or
 * the error class of a failing run; at the end, what is durable (the sink's rows and the commit
 * log's watermark and state rows per batch). A run that crashes, and the run that recovers it, are
 * compared by their durable result only. The seed is fixed (SLUICE_PROPERTY_SEED overrides it,
 * SLUICE_PROPERTY_RUNS the runs); hunt with other seeds and more runs locally.
 */
import fc from 'fast-check';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import type { ExecutorDeps, RunReport } from '../../lib/engine/run/types';
import { partitionedRunReport, partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { CRASH_POINTS, type CrashPoint, crashingAt } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import {
  type ExpiredTimerInfo,
  type ListState,
  type MapState,
  type ProcessorRow,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type TimeMode,
  type TimerValues,
  type TTLConfig,
  type ValueState,
} from '../../lib/engine/tws/api';
import { type BatchSeen, canonicalRows, type DurableBatch, durableBatches, inputTime, outputTime, seenOfRun } from '../helpers/differential';
import { memoryPorts, TEST_LEASE_MS } from './engine-factories';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261207);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 500);
const check = <T>(property: fc.IAsyncProperty<T>, runs = RUNS) => fc.assert(property, { seed: SEED, numRuns: runs });

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/** A grouping key as the processor's key object, as canonical JSON (what the rows emit). */
type Key = string;

interface InputRow {
  readonly k: string | null;
  readonly g: number | null;
  /** Event time, epoch µs (an integer below 2^53). */
  readonly tUs: number;
  readonly v: number;
}

/** A row as the processor sees it: the event time in epoch ms (a fraction for microseconds). */
interface ProcRow {
  readonly t: number;
  readonly v: number;
}

/**
 * What handleInputRows does, in order. A timer is registered at the batch time, the watermark or
 * the rows' largest event time (in handleExpiredTimer: the expiry) plus an offset.
 */
type RowAction =
  | { readonly kind: 'val'; readonly op: 'count' | 'sum' | 'clear' }
  | { readonly kind: 'lst'; readonly op: 'appendValue' | 'appendList' | 'put' | 'clear' }
  | { readonly kind: 'map'; readonly op: 'update' | 'remove' | 'clear' }
  | { readonly kind: 'register'; readonly base: 'pt' | 'wm' | 'maxEvent'; readonly offsetMs: number }
  | { readonly kind: 'deleteTimer'; readonly which: 'first' | 'last' }
  | { readonly kind: 'emit'; readonly et: 'none' | 'maxEvent' | 'wm' };

/** What handleExpiredTimer does, in order. */
type TimerAction =
  | { readonly kind: 'val'; readonly op: 'count' | 'clear' }
  | { readonly kind: 'lst'; readonly op: 'appendValue' | 'clear' }
  | { readonly kind: 'map'; readonly op: 'update' | 'clear' }
  | { readonly kind: 'register'; readonly base: 'pt' | 'wm' | 'expiry'; readonly offsetMs: number }
  | { readonly kind: 'emit'; readonly et: 'none' | 'expiry' };

type VarName = 'val' | 'lst' | 'map';

/**
 * A processor: the state variables its init declares (each always of one kind in a scenario) and
 * deletes (deleteIfExists, before it declares), and what its handlers do.
 */
interface Program {
  readonly declare: { readonly [V in VarName]: boolean };
  /**
   * The TTL each variable is declared with (ms, 0: none; processingTime only): mostly the
   * scenario's, sometimes another duration, rarely with a TTL added or dropped (which fails the
   * batch while the variable exists: STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE).
   */
  readonly ttl: { readonly [V in VarName]: number };
  /** No TTL as ttlDurationMs 0 rather than no TTLConfig. */
  readonly zeroTtl: boolean;
  readonly deletes: VarName[];
  readonly rows: RowAction[];
  readonly timer: TimerAction[];
}

interface Step {
  readonly files: InputRow[][];
  /** The run's clock (processing time), epoch ms. */
  readonly clockMs: number;
  readonly program: Program;
}

/** A crash at `point` in the first batch of run `step` (a run with files); the next run recovers. */
interface Crash {
  readonly step: number;
  readonly point: CrashPoint;
}

/** The executor of every run: MicroBatchExecutor, or partitioned runs (PartitionedRun's tasks, `workers` at a time; no crash). */
type Runner = { readonly kind: 'single' } | { readonly kind: 'partitioned'; readonly workers: number };

/** The input columns transformWithState groups by. */
type KeyColumn = 'k' | 'g' | 't';

interface Scenario {
  readonly runner: Runner;
  readonly mode: TimeMode;
  readonly keys: KeyColumn[];
  /**
   * A stateless filter keeping the rows with v >= 0: before the watermark, or after it as `v >= 0`
   * (Spark's optimizer pushes a deterministic conjunct that does not read the event-time column
   * below the watermark: the same), or after it as `v >= 0 OR t IS NULL` (it reads t: it stays
   * above, and the rows it drops still move the watermark).
   */
  readonly filter: 'none' | 'before' | 'pushed' | 'after';
  /** The event time renamed to `ts` before transformWithState (after the watermark: the column keeps its mark, FORMAT-2). */
  readonly renamed: boolean;
  /** A stateless filter after transformWithState, keeping the rows of handleInputRows only. */
  readonly rowsOnly: boolean;
  /** The query's output mode: the processor's rows are emitted as returned in both. */
  readonly outputMode: 'append' | 'update';
  /** withWatermark('t', delay) in ms, or none. */
  readonly delayMs: number | null;
  /** transformWithState's eventTimeColumn 'et' (eventTime with a watermark only). */
  readonly eventTimeColumn: boolean;
  readonly maxFiles: number | null;
  readonly statePartitions: number;
  readonly crash: Crash | null;
  readonly steps: Step[];
}

/** 2026-10-01 12:00:00 UTC, epoch ms: where event times and clocks start. */
const BASE_MS = Date.UTC(2026, 9, 1, 12);

const key: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b') },
  { weight: 3, arbitrary: fc.constant('c') },
  { weight: 1, arbitrary: fc.constant(null) },
);

/** A row of run `stepNo`: event times drift 2 s a run, some go back (late), on a 250 ms grid, sometimes 1 ms or some µs off it. */
const rowOf = (stepNo: number): fc.Arbitrary<InputRow> =>
  fc
    .record({
      k: key,
      g: fc.constantFrom(0, 1, null),
      slot: fc.integer({ min: -12, max: 4 }),
      offUs: fc.oneof(
        { weight: 12, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.constantFrom(-1000, 1000) },
        { weight: 1, arbitrary: fc.constantFrom(-1, 1, 500, 999) },
      ),
      v: fc.integer({ min: -2, max: 6 }),
    })
    .map(({ k, g, slot, offUs, v }) => ({ k, g, tUs: (BASE_MS + stepNo * 2000 + slot * 250) * 1000 + offUs, v }));

const offsetMs = fc.constantFrom(-2000, -1, 0, 1, 250, 500, 1000, 1001, 3000, 10_000);

/** An action of handleInputRows; in time mode none a timer call is rare (it fails the batch). */
const rowAction = (timers: boolean): fc.Arbitrary<RowAction> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('count', 'sum', 'clear').map((op) => ({ kind: 'val' as const, op })) },
    { weight: 3, arbitrary: fc.constantFrom('appendValue', 'appendList', 'put', 'clear').map((op) => ({ kind: 'lst' as const, op })) },
    { weight: 2, arbitrary: fc.constantFrom('update', 'remove', 'clear').map((op) => ({ kind: 'map' as const, op })) },
    {
      weight: timers ? 4 : 1,
      arbitrary: fc.record({ kind: fc.constant('register' as const), base: fc.constantFrom('pt', 'wm', 'maxEvent'), offsetMs }),
    },
    { weight: timers ? 1 : 0, arbitrary: fc.constantFrom('first', 'last').map((which) => ({ kind: 'deleteTimer' as const, which })) },
    { weight: 3, arbitrary: fc.constantFrom('none', 'maxEvent', 'wm').map((et) => ({ kind: 'emit' as const, et })) },
  );

const timerAction: fc.Arbitrary<TimerAction> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('count', 'clear').map((op) => ({ kind: 'val' as const, op })) },
  { weight: 2, arbitrary: fc.constantFrom('appendValue', 'clear').map((op) => ({ kind: 'lst' as const, op })) },
  { weight: 1, arbitrary: fc.constantFrom('update', 'clear').map((op) => ({ kind: 'map' as const, op })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('register' as const), base: fc.constantFrom('pt', 'wm', 'expiry'), offsetMs }) },
  { weight: 4, arbitrary: fc.constantFrom('none', 'expiry').map((et) => ({ kind: 'emit' as const, et })) },
);

/** Mostly declared, sometimes not (its values stay, unread and uncleaned). */
const declared = fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });

const ttlMs = fc.constantFrom(0, 500, 1000, 2500, 2500);

/** A program's TTL of a variable whose scenario TTL is `base` (processingTime). */
const ttlOf = (base: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(base) },
    { weight: base ? 3 : 0, arbitrary: fc.constantFrom(500, 1000, 2500) },
    { weight: 1, arbitrary: fc.constant(base ? 0 : 1000) },
  );

type Ttls = { readonly [V in VarName]: number };

const program = (mode: TimeMode, base: Ttls): fc.Arbitrary<Program> =>
  fc.record({
    declare: fc.record({ val: declared, lst: declared, map: declared }),
    ttl: mode === 'processingTime' ? fc.record({ val: ttlOf(base.val), lst: ttlOf(base.lst), map: ttlOf(base.map) }) : fc.constant(base),
    zeroTtl: fc.boolean(),
    deletes: fc.oneof(
      { weight: 8, arbitrary: fc.constant<VarName[]>([]) },
      { weight: 1, arbitrary: fc.subarray<VarName>(['val', 'lst', 'map'], { minLength: 1, maxLength: 1 }) },
    ),
    rows: fc.array(rowAction(mode !== 'none'), { minLength: 1, maxLength: 5 }),
    timer: mode === 'none' ? fc.constant([]) : fc.array(timerAction, { maxLength: 3 }),
  });

/** How far a run's clock is past the previous run's: not at all, a little, past a TTL or a timer, far. */
const advance = fc.constantFrom(0, 0, 1, 499, 500, 999, 1000, 1500, 2500, 3000, 10_000, 60_000);

/** 1 to 4 runs: files (sometimes none: a run that only lets time pass) of 0 to 4 rows, a clock, a program (often the previous one). */
const steps = (mode: TimeMode, base: Ttls): fc.Arbitrary<Step[]> =>
  fc.integer({ min: 1, max: 4 }).chain((n) =>
    fc
      .tuple(
        fc.integer({ min: 0, max: 8 }),
        program(mode, base),
        ...Array.from({ length: n }, (_, stepNo) =>
          fc.record({
            files: fc.oneof(
              { weight: 8, arbitrary: fc.array(fc.array(rowOf(stepNo), { maxLength: 4 }), { minLength: 1, maxLength: 3 }) },
              { weight: 3, arbitrary: fc.constant([] as InputRow[][]) },
            ),
            advance,
            newProgram: fc.option(program(mode, base), { nil: null, freq: 2 }),
          }),
        ),
      )
      .map(([start, first, ...ss]) => {
        let clockMs = BASE_MS + start * 250;
        let prog = first as Program;
        return (ss as Array<{ files: InputRow[][]; advance: number; newProgram: Program | null }>).map((s, i) => {
          if (i > 0) clockMs += s.advance;
          if (i > 0 && s.newProgram) prog = s.newProgram;
          return { files: s.files, clockMs, program: prog };
        });
      }),
  );

const scenario: fc.Arbitrary<Scenario> = fc
  .constantFrom<TimeMode>('none', 'processingTime', 'processingTime', 'eventTime', 'eventTime')
  .chain((mode) =>
    (mode === 'processingTime' ? fc.record({ val: ttlMs, lst: ttlMs, map: ttlMs }) : fc.constant({ val: 0, lst: 0, map: 0 })).map((ttl) => ({ mode, ttl })),
  )
  .chain(({ mode, ttl }) =>
    fc.record({
      mode: fc.constant(mode),
      delayMs:
        mode === 'eventTime'
          ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(0, 1000, 3000) }, { weight: 1, arbitrary: fc.constant(null) })
          : fc.option(fc.constantFrom(0, 1000), { nil: null, freq: 2 }),
      eventTimeColumn: mode === 'eventTime' ? fc.boolean() : fc.constant(false),
      keys: fc.constantFrom<KeyColumn[]>(['k'], ['k'], ['k'], ['k'], ['k', 'g'], ['g', 'k'], ['g'], ['t']),
      filter: fc.constantFrom<Scenario['filter']>('none', 'none', 'none', 'none', 'before', 'pushed', 'after'),
      renamed: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      rowsOnly: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
      outputMode: fc.constantFrom<Scenario['outputMode']>('append', 'update'),
      runner: fc.oneof(
        { weight: 3, arbitrary: fc.constant<Runner>({ kind: 'single' }) },
        { weight: 1, arbitrary: fc.constantFrom(1, 2).map((workers): Runner => ({ kind: 'partitioned', workers })) },
      ),
      maxFiles: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null, freq: 2 }),
      statePartitions: fc.constantFrom(1, 1, 2, 3),
      crash: fc.oneof(
        { weight: 4, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.record({ step: fc.nat(3), point: fc.constantFrom(...CRASH_POINTS) }) },
      ),
      steps: steps(mode, ttl),
    }),
  )
  .map((s) => {
    const crash = s.crash !== null && s.runner.kind === 'single' && s.crash.step < s.steps.length && s.steps[s.crash.step].files.length > 0 ? s.crash : null;
    // the run that replays a crashed batch keeps its processor: a replayed batch must compute the
    // same rows and state (FORMAT-4 "Lifecycle"), which another processor need not
    const steps = s.steps.map((st, i) => (crash !== null && i === crash.step + 1 ? { ...st, program: s.steps[crash.step].program } : st));
    return { ...s, eventTimeColumn: s.eventTimeColumn && s.delayMs !== null, crash, steps };
  });

// ---------------------------------------------------------------------------------------------
// The processor's program, run against a handle: the engine's (the processor) or the model's
// ---------------------------------------------------------------------------------------------

/** The state variables a processor declared (each of one kind in every processor of a scenario). */
interface Vars {
  readonly val?: ValueState<number>;
  readonly lst?: ListState<number>;
  readonly map?: MapState<string, number>;
}

/** The key's timers (in time mode none, each call fails the batch). */
interface Timers {
  register(ms: number): void;
  remove(ms: number): void;
  list(): number[];
}

/** What a handler is given besides its arguments: the variables, the key's timers, getQueryInfo().getBatchId(). */
interface Ctx {
  readonly vars: Vars;
  readonly timers: Timers;
  /** Whether the emitted rows list the timers (not in time mode none). */
  readonly listed: boolean;
  readonly batchId: number;
}

/** An output row as the processor emits it. */
interface OutRow {
  readonly k: Key;
  readonly src: 'rows' | 'timer';
  /** The rows' count, or the timer's expiry (a fraction when registered at one). */
  readonly x: number;
  /** Each variable read back (null when not declared). */
  readonly val: string | null;
  readonly lst: string | null;
  readonly map: string | null;
  /** exists() of val, lst and map ('-': not declared). */
  readonly ex: string;
  readonly timers: string | null;
  readonly pt: number;
  readonly wm: number;
  readonly bid: number;
  /** Event time, epoch ms. */
  readonly et: number | null;
}

const OUTPUT_SCHEMA = 'k STRING, src STRING, x DOUBLE, val STRING, lst STRING, map STRING, ex STRING, timers STRING, pt LONG, wm LONG, bid INT, et TIMESTAMP';

function snapshot(k: Key, src: OutRow['src'], x: number, { vars, timers, listed, batchId }: Ctx, tv: TimerValues, et: number | null): OutRow {
  const entries = vars.map && [...vars.map.iterator()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const ex = (v: { exists(): boolean } | undefined) => (v ? String(Number(v.exists())) : '-');
  return {
    k,
    src,
    x,
    val: vars.val ? JSON.stringify(vars.val.get() ?? null) : null,
    lst: vars.lst ? JSON.stringify([...vars.lst.get()]) : null,
    map: entries ? JSON.stringify(entries) : null,
    ex: `${ex(vars.val)}${ex(vars.lst)}${ex(vars.map)}`,
    timers: listed ? JSON.stringify(timers.list()) : null,
    pt: tv.getCurrentProcessingTimeInMs(),
    wm: tv.getCurrentWatermarkInMs(),
    bid: batchId,
    et,
  };
}

const mapKey = (v: number) => `m${((v % 3) + 3) % 3}`;

/** handleInputRows: the program's actions in order (those on a variable it does not declare do nothing). */
function onRows(p: Program, ctx: Ctx, k: Key, rows: readonly ProcRow[], tv: TimerValues): OutRow[] {
  const { vars, timers } = ctx;
  const out: OutRow[] = [];
  const maxEvent = Math.max(...rows.map((r) => r.t));
  for (const a of p.rows) {
    switch (a.kind) {
      case 'val':
        if (!vars.val) break;
        if (a.op === 'clear') vars.val.clear();
        else vars.val.update((vars.val.get() ?? 0) + (a.op === 'count' ? rows.length : rows.reduce((n, r) => n + r.v, 0)));
        break;
      case 'lst':
        if (!vars.lst) break;
        if (a.op === 'clear') vars.lst.clear();
        else if (a.op === 'appendValue') vars.lst.appendValue(rows[0].v);
        else if (a.op === 'appendList') vars.lst.appendList(rows.map((r) => r.v));
        else vars.lst.put(rows.map((r) => r.v));
        break;
      case 'map': {
        const map = vars.map;
        if (!map) break;
        if (a.op === 'clear') map.clear();
        else if (a.op === 'remove') map.removeKey(mapKey(rows[0].v));
        else for (const r of rows) map.updateValue(mapKey(r.v), (map.getValue(mapKey(r.v)) ?? 0) + 1);
        break;
      }
      case 'register': {
        const base = a.base === 'pt' ? tv.getCurrentProcessingTimeInMs() : a.base === 'wm' ? tv.getCurrentWatermarkInMs() : maxEvent;
        timers.register(base + a.offsetMs);
        break;
      }
      case 'deleteTimer': {
        const all = timers.list();
        if (all.length) timers.remove(a.which === 'first' ? all[0] : all[all.length - 1]);
        break;
      }
      case 'emit':
        out.push(snapshot(k, 'rows', rows.length, ctx, tv, a.et === 'maxEvent' ? maxEvent : a.et === 'wm' ? tv.getCurrentWatermarkInMs() : null));
        break;
    }
  }
  return out;
}

/** handleExpiredTimer; `dueAt` is the time up to which timers fire in the batch (it registers none due). */
function onTimer(p: Program, ctx: Ctx, k: Key, expiry: number, tv: TimerValues, dueAt: number): OutRow[] {
  const { vars, timers } = ctx;
  const out: OutRow[] = [];
  for (const a of p.timer) {
    switch (a.kind) {
      case 'val':
        if (!vars.val) break;
        if (a.op === 'clear') vars.val.clear();
        else vars.val.update((vars.val.get() ?? 0) + 1);
        break;
      case 'lst':
        if (!vars.lst) break;
        if (a.op === 'clear') vars.lst.clear();
        else vars.lst.appendValue(((expiry % 7) + 7) % 7);
        break;
      case 'map':
        if (!vars.map) break;
        if (a.op === 'clear') vars.map.clear();
        else vars.map.updateValue('t', (vars.map.getValue('t') ?? 0) + 1);
        break;
      case 'register': {
        const at = (a.base === 'pt' ? tv.getCurrentProcessingTimeInMs() : a.base === 'wm' ? tv.getCurrentWatermarkInMs() : expiry) + a.offsetMs;
        if (at > dueAt) timers.register(at);
        break;
      }
      case 'emit':
        out.push(snapshot(k, 'timer', expiry, ctx, tv, a.et === 'expiry' ? expiry : null));
        break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

/** A key object's JSON, its members sorted by name. */
function canonicalJson(o: object): string {
  const r = o as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(r)
        .sort()
        .map((c) => [c, r[c]]),
    ),
  );
}

function processorOf(s: Scenario, p: Program) {
  const ttl = (ms: number): TTLConfig | undefined => (ms || p.zeroTtl ? { ttlDurationMs: ms } : undefined);
  return class extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
    private vars!: Vars;
    init(h: StatefulProcessorHandle): void {
      for (const name of p.deletes) h.deleteIfExists(name);
      this.vars = {
        ...(p.declare.val ? { val: h.getValueState<number>('val', ttl(p.ttl.val)) } : {}),
        ...(p.declare.lst ? { lst: h.getListState<number>('lst', ttl(p.ttl.lst)) } : {}),
        ...(p.declare.map ? { map: h.getMapState<string, number>('map', ttl(p.ttl.map)) } : {}),
      };
    }
    private ctx(): Ctx {
      const h = this.getHandle();
      const timers: Timers = { register: (ms) => h.registerTimer(ms), remove: (ms) => h.deleteTimer(ms), list: () => [...h.listTimers()] };
      return { vars: this.vars, timers, listed: s.mode !== 'none', batchId: h.getQueryInfo().getBatchId() };
    }
    handleInputRows(key: ProcessorRow, rows: IterableIterator<ProcessorRow>, tv: TimerValues): Iterable<object> {
      const rs = [...rows].map((r) => ({ t: (s.renamed ? r.ts : r.t) as number, v: r.v as number }));
      return onRows(p, this.ctx(), canonicalJson(s.renamed && 'ts' in key ? { t: key.ts } : key), rs, tv);
    }
    handleExpiredTimer(key: ProcessorRow, tv: TimerValues, info: ExpiredTimerInfo): Iterable<object> {
      const dueAt = s.mode === 'processingTime' ? tv.getCurrentProcessingTimeInMs() : tv.getCurrentWatermarkInMs();
      return onTimer(p, this.ctx(), canonicalJson(s.renamed && 'ts' in key ? { t: key.ts } : key), info.getExpiryTimeInMs(), tv, dueAt);
    }
  };
}

function planOf(s: Scenario, p: Program): QueryPlan {
  // (the schema as a plain string: the frame's columns change with the scenario)
  const schema: string = 'k STRING, g INT, t TIMESTAMP, v INT';
  let reader = readStream.format('json').schema(schema);
  if (s.maxFiles !== null) reader = reader.option('maxFilesPerTrigger', s.maxFiles);
  let frame = reader.load();
  if (s.filter === 'before') frame = frame.filter('v >= 0');
  if (s.delayMs !== null) frame = frame.withWatermark('t', `${s.delayMs} milliseconds`);
  if (s.filter === 'pushed') frame = frame.filter('v >= 0');
  if (s.filter === 'after') frame = frame.filter('v >= 0 OR t IS NULL');
  if (s.renamed) frame = frame.withColumnRenamed('t', 'ts');
  let out = frame.groupBy(...s.keys.map((c) => (c === 't' && s.renamed ? 'ts' : c))).transformWithState(processorOf(s, p) as never, {
    timeMode: s.mode,
    outputSchema: OUTPUT_SCHEMA,
    ...(s.eventTimeColumn ? { eventTimeColumn: 'et' } : {}),
  });
  if (s.rowsOnly) out = out.filter("src = 'rows'");
  return out.writeStream.outputMode(s.outputMode).option('statePartitions', s.statePartitions).queryName('tws-differential').plan();
}

function fileText(rows: readonly InputRow[]): string {
  return rows.map((r) => JSON.stringify({ k: r.k, g: r.g, t: inputTime(BigInt(r.tUs)), v: r.v })).join('\n');
}

/** A run: its batches (null for a run that crashed, and for the run that recovered it), the watermark after it; or its error class. */
type RunSeen = { batches: BatchSeen[] | null; watermarkMs: number } | { error: string };

interface Seen {
  runs: RunSeen[];
  durable: DurableBatch[];
}

/** The error class a failing run's message begins with (the whole message when it has none). */
function errorClass(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return /^\[([A-Z_.]+)\]/.exec(msg)?.[1] ?? msg;
}

/** The engine's runs; `crashed` tells whether the planned crash fired (the model needs it). */
async function runEngine(s: Scenario): Promise<Seen & { crashed: boolean }> {
  let passedMs = 0;
  const clock = { now: () => BASE_MS + passedMs };
  const ports = memoryPorts(planOf(s, s.steps[0].program), clock);
  const shuffle = new InMemoryShuffle();
  const runs: RunSeen[] = [];
  let crashed = false;
  /** Whether a run failed: the planned crash is left out after one (the model's crash starts from a run without a replay). */
  let failed = false;
  let fileNo = 0;
  const stepsRun = crashStepsOf(s);
  for (const [stepNo, step] of stepsRun.entries()) {
    for (const f of step.files) ports.source.add(`part-${String(++fileNo).padStart(5, '0')}.json`, fileText(f));
    const deps: ExecutorDeps = { plan: planOf(s, step.program), ...ports, clock, processingClock: { now: () => step.clockMs } };
    if (s.runner.kind === 'partitioned') {
      const make = () => new PartitionedRun({ ...deps, inputSources: [], shuffle }, { leaseDurationMs: TEST_LEASE_MS, maxSplits: 3 });
      try {
        const { batches } = await runPartitioned(partitionedTasks(make), { runId: `run-${stepNo}`, concurrency: s.runner.workers });
        const r = await partitionedRunReport(deps.plan, ports.checkpoint, batches);
        runs.push(seenOfRun(r, { rowsOf: (b) => ports.sink.batches.get(b.batchId) ?? [] }));
      } catch (e) {
        // a failed partitioned run keeps its lease (its retries are the state machine's): the next run waits it out
        runs.push({ error: errorClass(e) });
        passedMs += TEST_LEASE_MS + 1000;
      }
      continue;
    }
    const crash = s.crash?.step === stepNo && !failed ? { point: s.crash.point, batchId: (await ports.checkpoint.head()).latestCommitBatch + 1 } : null;
    let report: RunReport;
    try {
      report = await new MicroBatchExecutor(crash ? crashingAt(crash, deps) : deps, { leaseDurationMs: TEST_LEASE_MS }).run({ collectRows: true });
    } catch (e) {
      if (e instanceof InjectedCrash) {
        crashed = true;
        passedMs += TEST_LEASE_MS + 1000;
        runs.push({ batches: null, watermarkMs: -1 });
        continue;
      }
      runs.push({ error: errorClass(e) });
      failed = true;
      continue;
    }
    const seen = seenOfRun(report);
    // the run that recovers a crash: compared by what is durable
    runs.push(crashed && s.crash!.step === stepNo - 1 ? { batches: null, watermarkMs: seen.watermarkMs } : seen);
  }
  const durable = await durableBatches(ports.checkpoint, ports.sink);
  return { runs, durable, crashed };
}

/** The scenario's steps, with a run without files at the same clock after a crash in the last one (to recover it). */
function crashStepsOf(s: Scenario): Step[] {
  if (s.crash === null || s.crash.step < s.steps.length - 1) return s.steps;
  const last = s.steps[s.steps.length - 1];
  return [...s.steps, { files: [], clockMs: last.clockMs, program: last.program }];
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

interface Item {
  readonly v: number;
  /** TTL expiration, ms; null without TTL. */
  readonly exp: number | null;
}

interface KeyState {
  val: Item | null;
  lst: Item[];
  map: Map<string, Item>;
  timers: Set<number>;
}

/** A row's grouping key as the processor sees it (TIMESTAMP as epoch ms), as canonical JSON. */
function keyOf(s: Scenario, r: InputRow): Key {
  const values: Record<KeyColumn, string | number | null> = { k: r.k, g: r.g, t: r.tUs / 1000 };
  return canonicalJson(Object.fromEntries(s.keys.map((c) => [c, values[c]])));
}

/** A batch the model fails, with the error class FORMAT-4 gives. */
class BatchFailure extends Error {}

/** What FORMAT-4 leaves open: the comparison stops at the run where the model meets it. */
class Undecided extends Error {}

const VAR_NAMES: readonly VarName[] = ['val', 'lst', 'map'];

interface ModelState {
  keys: Map<string, { k: Key; st: KeyState }>;
  /** The state variables that exist (declared by a committed batch, not deleted since), and whether each has a TTL. */
  recorded: Map<VarName, boolean>;
}

/** FORMAT-4's state, timers and TTL of one scenario, and its batch (steps 2 to 4: late rows are dropped by the caller). */
class Model {
  private keys = new Map<string, { k: Key; st: KeyState }>();
  private recorded = new Map<VarName, boolean>();

  constructor(private readonly s: Scenario) {}

  /** A copy of the state, to go back to when a batch fails (it commits nothing). */
  save(): ModelState {
    const keys = new Map<string, { k: Key; st: KeyState }>();
    for (const [id, { k, st }] of this.keys) keys.set(id, { k, st: { val: st.val, lst: [...st.lst], map: new Map(st.map), timers: new Set(st.timers) } });
    return { keys, recorded: new Map(this.recorded) };
  }

  restore(saved: ModelState): void {
    this.keys = saved.keys;
    this.recorded = saved.recorded;
  }

  /**
   * Whether `p` declares an existing variable with a TTL added or dropped, which fails its batches
   * (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE). Undecided when its init also deletes the variable
   * (FORMAT-4 does not say whether the check comes before the delete).
   */
  incompatible(p: Program): boolean {
    const bad = VAR_NAMES.filter((name) => p.declare[name] && this.recorded.has(name) && this.recorded.get(name) !== p.ttl[name] > 0);
    if (bad.some((name) => p.deletes.includes(name))) throw new Undecided();
    return bad.length > 0;
  }

  private stateOf(k: Key): KeyState {
    const id = k;
    let e = this.keys.get(id);
    if (!e) this.keys.set(id, (e = { k, st: { val: null, lst: [], map: new Map(), timers: new Set() } }));
    return e.st;
  }

  /** The handle's view of a key's state in a batch at T: reads see the unexpired items, writes stamp T + ttl. */
  private varsOf(st: KeyState, T: number, p: Program): Vars {
    const { ttl } = p;
    const live = (i: Item | null | undefined): i is Item => i !== null && i !== undefined && (i.exp === null || T < i.exp);
    const stamp = (v: number, ms: number): Item => ({ v, exp: ms ? T + ms : null });
    const val: ValueState<number> = {
      exists: () => live(st.val),
      get: () => (live(st.val) ? st.val.v : undefined),
      update: (v) => {
        st.val = stamp(v, ttl.val);
      },
      clear: () => {
        st.val = null;
      },
    };
    const lst: ListState<number> = {
      exists: () => st.lst.some(live),
      get: () =>
        st.lst
          .filter(live)
          .map((i) => i.v)
          [Symbol.iterator](),
      put: (vs) => {
        st.lst = vs.map((v) => stamp(v, ttl.lst));
      },
      appendValue: (v) => {
        st.lst = [...st.lst, stamp(v, ttl.lst)];
      },
      appendList: (vs) => {
        st.lst = [...st.lst, ...vs.map((v) => stamp(v, ttl.lst))];
      },
      clear: () => {
        st.lst = [];
      },
    };
    const liveEntries = () => [...st.map].filter(([, i]) => live(i));
    const map: MapState<string, number> = {
      exists: () => liveEntries().length > 0,
      getValue: (mk) => {
        const i = st.map.get(mk);
        return live(i) ? i.v : undefined;
      },
      containsKey: (mk) => live(st.map.get(mk)),
      updateValue: (mk, v) => {
        st.map.set(mk, stamp(v, ttl.map));
      },
      iterator: () =>
        liveEntries()
          .map(([mk, i]): [string, number] => [mk, i.v])
          [Symbol.iterator](),
      keys: () =>
        liveEntries()
          .map(([mk]) => mk)
          [Symbol.iterator](),
      values: () =>
        liveEntries()
          .map(([, i]) => i.v)
          [Symbol.iterator](),
      removeKey: (mk) => {
        st.map.delete(mk);
      },
      clear: () => {
        st.map.clear();
      },
    };
    return { ...(p.declare.val ? { val } : {}), ...(p.declare.lst ? { lst } : {}), ...(p.declare.map ? { map } : {}) };
  }

  private ctxOf(st: KeyState, T: number, p: Program, batchId: number): Ctx {
    return { vars: this.varsOf(st, T, p), timers: this.timersOf(st), listed: this.s.mode !== 'none', batchId };
  }

  private timersOf(st: KeyState): Timers {
    if (this.s.mode === 'none') {
      const fail = () => {
        throw new BatchFailure('STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE');
      };
      return { register: fail, remove: fail, list: fail };
    }
    return {
      register: (ms) => st.timers.add(ms),
      remove: (ms) => st.timers.delete(ms),
      list: () => [...st.timers].sort((a, b) => a - b),
    };
  }

  /**
   * One batch at T with eviction watermark E: init's deletes (every key), input per key, then the
   * due timers ascending, then the TTL cleanup of the declared variables.
   */
  batch(rows: readonly InputRow[], p: Program, T: number, E: number, batchId: number): OutRow[] {
    const tv: TimerValues = { getCurrentProcessingTimeInMs: () => T, getCurrentWatermarkInMs: () => E };
    if (this.incompatible(p)) throw new BatchFailure('STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE');
    for (const name of p.deletes) this.recorded.delete(name);
    for (const name of VAR_NAMES) if (p.declare[name]) this.recorded.set(name, p.ttl[name] > 0);
    for (const { st } of this.keys.values()) {
      if (p.deletes.includes('val')) st.val = null;
      if (p.deletes.includes('lst')) st.lst = [];
      if (p.deletes.includes('map')) st.map.clear();
    }
    const groups = new Map<string, { k: Key; rows: ProcRow[] }>();
    for (const r of rows) {
      const id = keyOf(this.s, r);
      let g = groups.get(id);
      if (!g) groups.set(id, (g = { k: id, rows: [] }));
      g.rows.push({ t: r.tUs / 1000, v: r.v });
    }
    const out: OutRow[] = [];
    // 2: input
    for (const g of groups.values()) out.push(...onRows(p, this.ctxOf(this.stateOf(g.k), T, p, batchId), g.k, g.rows, tv));
    // 3: the timers due after the input, ascending
    if (this.s.mode !== 'none') {
      const dueAt = this.s.mode === 'processingTime' ? T : E;
      const due: Array<{ k: Key; st: KeyState; t: number }> = [];
      for (const { k, st } of this.keys.values()) for (const t of st.timers) if (t <= dueAt) due.push({ k, st, t });
      due.sort((a, b) => a.t - b.t);
      for (const { k, st, t } of due) {
        out.push(...onTimer(p, this.ctxOf(st, T, p, batchId), k, t, tv, dueAt));
        st.timers.delete(t);
      }
    }
    // 4: TTL cleanup at T, of the variables init declared
    const live = (i: Item) => i.exp === null || T < i.exp;
    for (const [id, { st }] of this.keys) {
      if (p.declare.val && st.val && !live(st.val)) st.val = null;
      if (p.declare.lst) st.lst = st.lst.filter(live);
      if (p.declare.map) for (const [mk, i] of st.map) if (!live(i)) st.map.delete(mk);
      if (st.val === null && st.lst.length === 0 && st.map.size === 0 && st.timers.size === 0) this.keys.delete(id);
    }
    return out;
  }

  stateRows(): number {
    let n = 0;
    for (const { st } of this.keys.values()) n += (st.val ? 1 : 0) + st.lst.length + st.map.size;
    return n;
  }

  /**
   * Whether a timer or a TTL value is due at T (processingTime's rule for a run without new data):
   * counting the values of the variables `p` declares with a TTL only (those its batch would
   * clean), and counting every value stored with a TTL. FORMAT-4 does not say which of the two a
   * variable the processor no longer declares, or declares without its TTL, follows; where they
   * differ the comparison stops.
   */
  dueAt(T: number, p: Program): { declared: boolean; all: boolean } {
    const due = (i: Item | null) => i !== null && i.exp !== null && i.exp <= T;
    let declared = false;
    let all = false;
    for (const { st } of this.keys.values()) {
      if ([...st.timers].some((t) => t <= T)) declared = all = true;
      const vars: Array<[VarName, boolean]> = [
        ['val', due(st.val)],
        ['lst', st.lst.some(due)],
        ['map', [...st.map.values()].some(due)],
      ];
      for (const [name, d] of vars) {
        if (d && p.declare[name] && p.ttl[name] > 0) declared = true;
        if (d) all = true;
      }
    }
    return { declared, all };
  }
}

/** An output row as the sink holds it (LONG as a number, TIMESTAMP as ISO 8601 text). */
function sinkRow(r: OutRow): Record<string, unknown> {
  return { ...r, et: r.et === null ? null : outputTime(BigInt(Math.round(r.et * 1000))) };
}

/** The model's runs; `crashed` says whether the scenario's crash fired in the engine. */
/**
 * The model's runs; `crashed` says whether the scenario's crash fired in the engine. `undecided`:
 * the runs from the first one FORMAT-4 leaves open on are left out (Model.dueAt).
 */
function runModel(s: Scenario, crashed: boolean): Seen & { undecided: boolean } {
  const model = new Model(s);
  const watermarked = s.delayMs !== null;
  let watermarkMs = 0;
  let lastEvictMs = 0;
  let maxEventMs = Number.NEGATIVE_INFINITY;
  let batchId = 0;
  /** Files read by no batch yet (a crashed run leaves those after its first batch's). */
  const pending: InputRow[][] = [];
  /**
   * The batch the next run replays (one that crashed before its commit, or failed): its rows, its
   * run's clock, whether it read data. It runs then, with the logged clock and watermarks and the
   * processor of the run that replays it.
   */
  let replay: { rows: InputRow[]; clockMs: number; noData: boolean } | null = null;
  const runs: RunSeen[] = [];
  const durable: DurableBatch[] = [];
  /** One batch, or the error class it fails with (it commits nothing). */
  const runBatch = (read: readonly InputRow[], noData: boolean, p: Program, clockMs: number): BatchSeen | string => {
    // the rows that reach the watermark, and those that reach transformWithState
    const watched = s.filter === 'before' || s.filter === 'pushed' ? read.filter((r) => r.v >= 0) : read;
    const rows = s.filter === 'none' ? read : read.filter((r) => r.v >= 0);
    const evictMs = watermarkMs;
    const lateMs = lastEvictMs;
    const isLate = (r: InputRow) => s.mode === 'eventTime' && watermarked && r.tUs <= lateMs * 1000;
    const saved = model.save();
    let out: OutRow[];
    try {
      out = model.batch(
        rows.filter((r) => !isLate(r)),
        p,
        clockMs,
        evictMs,
        batchId,
      );
      if (s.eventTimeColumn && out.some((r) => r.et !== null && Math.round(r.et * 1000) <= lateMs * 1000))
        throw new BatchFailure('EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED');
    } catch (e) {
      if (!(e instanceof BatchFailure)) throw e;
      model.restore(saved);
      return e.message;
    }
    // (the watermark is in ms: the largest event time truncated to the ms, minus the delay)
    for (const r of watched) maxEventMs = Math.max(maxEventMs, Math.floor(r.tUs / 1000));
    if (watermarked && maxEventMs - s.delayMs! > watermarkMs) watermarkMs = maxEventMs - s.delayMs!;
    lastEvictMs = evictMs;
    const seen: BatchSeen = {
      batchId: batchId++,
      noData,
      watermarkMs: evictMs,
      rows: canonicalRows(out.filter((r) => !s.rowsOnly || r.src === 'rows').map(sinkRow)),
      droppedByWatermark: rows.filter(isLate).length,
      deadLetters: 0,
      stateRows: model.stateRows(),
    };
    durable.push({ batchId: seen.batchId, watermarkMs: evictMs, rows: seen.rows, stateRows: seen.stateRows });
    return seen;
  };
  for (const [stepNo, step] of crashStepsOf(s).entries()) {
    try {
      runStep(stepNo, step);
    } catch (e) {
      if (!(e instanceof Undecided)) throw e;
      return { runs, durable, undecided: true };
    }
  }
  return { runs, durable, undecided: false };

  /** One run of the model. */
  function runStep(stepNo: number, step: Step): void {
    pending.push(...step.files);
    const crashing = crashed && s.crash?.step === stepNo;
    const recovering = crashed && s.crash?.step === stepNo - 1;
    const batches: BatchSeen[] = [];
    let error: string | null = null;
    /** Runs a batch; a failing one is the run's error, and the next run replays it. */
    const attempt = (rows: InputRow[], noData: boolean, clockMs: number) => {
      const b = runBatch(rows, noData, step.program, clockMs);
      if (typeof b !== 'string') return batches.push(b);
      error = b;
      replay = { rows, clockMs, noData };
    };
    if (replay !== null) {
      const r: { rows: InputRow[]; clockMs: number; noData: boolean } = replay;
      replay = null;
      attempt(r.rows, r.noData, r.clockMs);
    }
    while (pending.length > 0 && error === null) {
      const rows = pending.splice(0, s.maxFiles ?? pending.length).flat();
      if (crashing && s.crash!.point !== 'after-commit') {
        replay = { rows, clockMs: step.clockMs, noData: false };
        break;
      }
      attempt(rows, false, step.clockMs);
      if (crashing) break;
    }
    if (crashing && error === null) {
      runs.push({ batches: null, watermarkMs: -1 });
      return;
    }
    if (error === null) {
      let noDataDue = false;
      if (s.mode !== 'processingTime') noDataDue = batchId > 0 && watermarked && watermarkMs > lastEvictMs;
      else if (batchId > 0 && batches.length === 0) {
        const due = model.dueAt(step.clockMs, step.program);
        if (due.declared !== due.all) throw new Undecided();
        noDataDue = due.declared;
      }
      if (noDataDue) attempt([], true, step.clockMs);
    }
    // a processor refused by the variables' schema, in a run without batches: sluice may fail it before the first batch, or not
    if (batches.length === 0 && error === null && model.incompatible(step.program)) throw new Undecided();
    runs.push(error !== null ? { error } : { batches: recovering ? null : batches, watermarkMs });
  }
}

// ---------------------------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------------------------

describe('transformWithState on the in-memory ports, against a model of FORMAT-4', () => {
  it('runs input, timers and TTL, the batches of each run and their failures as the model does, in every time mode', async () => {
    await check(
      fc.asyncProperty(scenario, async (s) => {
        const { crashed, ...engine } = await runEngine(s);
        const { undecided, ...model } = runModel(s, crashed);
        if (undecided) {
          engine.runs = engine.runs.slice(0, model.runs.length);
          engine.durable = engine.durable.slice(0, model.durable.length);
        }
        expect(engine).toEqual(model);
      }),
    );
  });
});
