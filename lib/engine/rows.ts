/**
 * Stateless stages (filter, select, withColumn, the watermark's event-time tracking) and the
 * conversion of internal rows (timestamps in epoch µs) into output rows (ISO strings).
 */
import type { InputFile, OutputRow, Row } from './ports';
import { withInputFile } from './input-file';
import { outputValue } from './schema';
import type { ExplodeItem, ProjectItem, RowExtender, StatelessStage } from './plan/types';
import { RowError, valueAt } from './plan/paths';
import type { ColumnInfo } from './plan/columns';
import { windowEnd, windowStarts } from './operators/windows';
import { floorMillis, formatTimestamp, type Micros, subMicros } from './timestamps';
import { EventTimeStats } from './watermark';
import type { JoinTables } from './join';
import { isSparkRowError } from './expr';
import { keyValue } from './expr/map-keys';
import { mapEntries } from './map-entries';

export interface StageResult {
  readonly rows: Row[];
  /**
   * Max event time seen at each watermark stage, by its id, in epoch ms: event times are µs, but
   * a watermark stage keeps them truncated to the millisecond (floor), as Spark's EventTimeStats.
   */
  readonly maxEventTime: Map<string, number>;
  /** Min, max and average event time (ms, as maxEventTime) over the watermark stages (the progress record's eventTime). */
  readonly eventTimes: EventTimeStats;
}

/**
 * A row that a stage cannot evaluate (an array index out of bounds: Spark's INVALID_ARRAY_INDEX)
 * goes to `onRowError` with the reason, and no further; without it, the error fails the batch, as
 * Spark's ANSI mode fails the query.
 */
export type RowErrorHandler = (row: Row, reason: string) => void;

/**
 * Runs the stages over a batch's chunk. Rows are not mutated: withColumn/select copy. `file`: the
 * file every row of the chunk comes from, which input_file_name() and `_metadata` read while the
 * stages run (expr/input-file.ts).
 */
export function applyStages(stages: readonly StatelessStage[], input: readonly Row[], onRowError?: RowErrorHandler, file?: InputFile): StageResult {
  return file === undefined ? stageRows(stages, input, onRowError) : withInputFile(file, () => stageRows(stages, input, onRowError));
}

function stageRows(stages: readonly StatelessStage[], input: readonly Row[], onRowError?: RowErrorHandler): StageResult {
  const maxEventTime = new Map<string, number>();
  const eventTimes = new EventTimeStats();
  if (stages.length === 0) return { rows: input as Row[], maxEventTime, eventTimes };
  // Fast path for the common shape: only watermarks. The figures are taken over the µs numbers
  // and truncated to ms once at the end (floor is monotonic: the floor of the max is the max of
  // the floors); a bigint time (beyond the years 1685 to 2255) goes through trackEventTime.
  if (stages.every((s) => s.kind === 'watermark')) {
    for (const stage of stages) {
      if (stage.kind !== 'watermark') continue;
      const c = stage.column;
      let max = -Infinity;
      let min = Infinity;
      let base = 0;
      let sum = 0;
      let count = 0;
      for (let i = 0; i < input.length; i++) {
        // a null event time is 0 (NULL_TIME), as Spark's EventTimeWatermarkExec reads it
        const t = input[i][c] ?? NULL_TIME;
        if (typeof t !== 'number') {
          trackEventTime(stage.id, t as Micros, maxEventTime, eventTimes);
          continue;
        }
        if (t > max) max = t;
        if (t < min) min = t;
        if (count === 0) base = t;
        sum += t - base;
        count++;
      }
      if (count > 0) {
        const maxMs = floorMillis(max);
        const m = maxEventTime.get(stage.id);
        if (m === undefined || maxMs > m) maxEventTime.set(stage.id, maxMs);
        const baseMs = floorMillis(base);
        const sumMs = (sum + (base - baseMs * 1000) * count) / 1000;
        eventTimes.merge(Object.assign(new EventTimeStats(), { min: floorMillis(min), max: maxMs, base: baseMs, sum: sumMs, count }));
      }
    }
    return { rows: input as Row[], maxEventTime, eventTimes };
  }
  const out: Row[] = [];
  const generates = stages.map((s) => (s.kind === 'project' && s.items.some((i) => i.kind === 'explode')) || (s.kind === 'selectExpr' && s.compiled.generates));
  /** The stage a row is in (a row error's reason names it). */
  let at = 0;
  /** The row through stages[from...]; an explode sends each of its rows through the stages after it. */
  const run = (original: Row, from: number): void => {
    let row = original;
    for (let i = from; i < stages.length; i++) {
      const stage = stages[i];
      at = i;
      switch (stage.kind) {
        case 'filter':
          if (!stage.fn(row)) return;
          break;
        case 'filterExpr':
          if (!stage.test(row)) return;
          break;
        case 'selectExpr':
          if (generates[i]) {
            for (const r of stage.compiled.generate(row)) run(r, i + 1);
            return;
          }
          row = stage.compiled.project(row);
          break;
        case 'withColumnExpr':
          row = extended(stage, row, stage.compiled.evaluate(row));
          break;
        case 'select': {
          const next: Row = {};
          for (const c of stage.columns) next[c] = row[c];
          row = next;
          break;
        }
        case 'project':
          if (generates[i]) {
            for (const r of projectExploded(stage.items, row)) run(r, i + 1);
            return;
          }
          row = project(stage.items, row);
          break;
        case 'withColumn':
          row = extended(stage, row, stage.fn(row));
          break;
        case 'extract':
          row = extended(stage, row, stage.unread ? null : valueAt(row, stage.path));
          break;
        case 'sort':
        case 'limit':
          throw new Error(`a ${stage.kind} stage takes a batch's rows at once (QueryRuntime.runStages), never row by row`);
        case 'watermark': {
          const t = (row[stage.column] as Micros | null) ?? NULL_TIME;
          if (passesGates(stage.gates, row)) trackEventTime(stage.id, t, maxEventTime, eventTimes);
          break;
        }
      }
    }
    out.push(row);
  };
  for (const original of input) {
    if (!onRowError) {
      run(original, 0);
      continue;
    }
    // a row error (FORMAT-3 departure 2): the row's own output so far is taken back, it goes no further
    const before = out.length;
    try {
      run(original, 0);
    } catch (e) {
      if (e instanceof RowError) onRowError(original, e.message);
      else if (isSparkRowError(e)) onRowError(original, `${e.message} (in ${describeStage(stages[at])})`);
      else if (isTooLarge(e)) onRowError(original, `${tooLargeReason(e)} (in ${describeStage(stages[at])})`);
      else throw e;
      out.length = before;
    }
  }
  return { rows: out, maxEventTime, eventTimes };
}

/**
 * `{...row, [name]: value}` for rows of the given columns, as one generated object literal: the
 * spread with a computed key makes a dictionary-mode object per row, about 100 times slower to
 * build (and slower to read in every stage after it) than a literal, whose rows share one hidden
 * class. The columns are the stage's input columns (the row's keys, as the plan knows them; a
 * key the plan does not know is not copied, which no later stage could name), `name` last (the
 * plan's column order, columnsAfter).
 */
export function rowExtender(columns: readonly string[], name: string): RowExtender {
  const keys = [...columns.filter((c) => c !== name), name];
  if (keys.includes('__proto__')) return (row, value) => ({ ...row, [name]: value }); // a literal key "__proto__" would set the prototype
  const fields = keys.map((k) => `${JSON.stringify(k)}: ${k === name ? 'value' : `row[${JSON.stringify(k)}]`}`).join(', ');
  return new Function(`'use strict'; return function (row, value) { return { ${fields} }; };`)() as RowExtender;
}

/** The row with the stage's column `name` set to `value`: by its extender, else a spread (a stage built without one). */
function extended(stage: { readonly name: string; readonly extend?: RowExtender }, row: Row, value: unknown): Row {
  return stage.extend ? stage.extend(row, value) : { ...row, [stage.name]: value };
}

/**
 * A value too large for JavaScript (V8's RangeError for a string past about 2^29 characters or an
 * array past 2^32 - 1 elements), which no function's own check caught (value-limits.ts): `concat`
 * doubling a string in an `aggregate` lambda, say. Failing the batch would fail every run that
 * reads the row, so it is the row's error, as a value past a limit is in Spark.
 */
function isTooLarge(e: unknown): e is RangeError {
  return e instanceof RangeError && /^Invalid (string|array) length/.test(e.message);
}

function tooLargeReason(e: RangeError): string {
  const kind = e.message.includes('string') ? 'STRING_SIZE_LIMIT_EXCEEDED' : 'COLLECTION_SIZE_LIMIT_EXCEEDED';
  return `[${kind}] a value of this row is larger than JavaScript can hold (${e.message}): check what builds it`;
}

/** An expression stage as a dead letter's reason names it. */
function describeStage(stage: StatelessStage): string {
  if (stage.kind === 'selectExpr') return `selectExpr(${stage.items.map((t) => JSON.stringify(t)).join(', ')})`;
  if (stage.kind === 'filterExpr') return `filter(${JSON.stringify(stage.text)})`;
  if (stage.kind === 'withColumnExpr') return `withColumn(${JSON.stringify(stage.name)}, ${JSON.stringify(stage.text)})`;
  return stage.kind;
}

/**
 * Whether a row reaches a watermark stage past the filter conjuncts Spark pushes below it (a
 * conjunct that raises an error counts as passed: the row's error belongs to its filter stage, and
 * the watermark saw the row, FORMAT-3 "Row errors").
 */
function passesGates(gates: ReadonlyArray<(row: Row) => boolean> | undefined, row: Row): boolean {
  if (gates === undefined) return true;
  for (const gate of gates) {
    let ok = true;
    try {
      ok = gate(row);
    } catch {
      ok = true;
    }
    if (!ok) return false;
  }
  return true;
}

/**
 * The event time a watermark stage records for a row whose event time is null: 0, the epoch, as
 * Spark's EventTimeWatermarkExec reads the column (UnsafeRow.getLong of a null field). It never
 * raises a watermark (0 − delay is below any), but the stage has then seen a row, so with several
 * inputs it holds the global watermark (the minimum) where a stage that saw nothing would not.
 */
const NULL_TIME = 0;

/** A watermark stage's record of one event time (µs): truncated to ms, into the stage's max and the stats. */
function trackEventTime(id: string, t: Micros, maxEventTime: Map<string, number>, eventTimes: EventTimeStats): void {
  const ms = floorMillis(t);
  const m = maxEventTime.get(id);
  if (m === undefined || ms > m) maxEventTime.set(id, ms);
  eventTimes.add(ms);
}

/** Adds what `from`'s watermark stages saw (each stage's max event time, the event-time stats) into `into`'s: two runs of stages over one chunk. */
export function mergeEventTimes(into: Pick<StageResult, 'maxEventTime' | 'eventTimes'>, from: Pick<StageResult, 'maxEventTime' | 'eventTimes'>): void {
  for (const [id, ms] of from.maxEventTime) {
    const m = into.maxEventTime.get(id);
    if (m === undefined || ms > m) into.maxEventTime.set(id, ms);
  }
  into.eventTimes.merge(from.eventTimes);
}

/** Whether the stages hold a stream-static join (they then run with applyStagesAsync). */
export function hasJoin(stages: readonly StatelessStage[]): boolean {
  return stages.some((s) => s.kind === 'join');
}

/**
 * The stages over a chunk when they hold joins: the stages between joins as applyStages runs
 * them, each join over the whole chunk (a lookup table needs the chunk's keys first).
 */
export async function applyStagesAsync(
  stages: readonly StatelessStage[],
  input: readonly Row[],
  joins: JoinTables,
  onRowError?: RowErrorHandler,
  file?: InputFile,
): Promise<StageResult> {
  const maxEventTime = new Map<string, number>();
  const eventTimes = new EventTimeStats();
  let rows = input as Row[];
  let from = 0;
  const runSegment = (to: number) => {
    if (to <= from) return;
    const r = applyStages(stages.slice(from, to), rows, onRowError, file);
    rows = r.rows;
    mergeEventTimes({ maxEventTime, eventTimes }, r);
  };
  for (let i = 0; i < stages.length; i++) {
    const stage = stages[i];
    if (stage.kind !== 'join') continue;
    runSegment(i);
    rows = await joins.join(stage, rows);
    from = i + 1;
  }
  runSegment(stages.length);
  return { rows, maxEventTime, eventTimes };
}

/** A row through a projection (FORMAT-2's select items); a window of a null time is null. */
function project(items: readonly ProjectItem[], row: Row): Row {
  const next: Row = {};
  for (const item of items) {
    if (item.kind === 'explode') continue; // (projectExploded)
    if (item.kind === 'path') {
      next[item.as] = item.unread ? null : valueAt(row, item.path);
      continue;
    }
    const v = row[item.kind === 'window' ? item.window.column : item.column];
    if (item.kind === 'column') next[item.as] = v;
    else if (v === null || v === undefined) next[item.as] = null;
    else if (item.kind === 'window') {
      const [start] = windowStarts(v as Micros, item.window);
      next[item.as] = { start, end: windowEnd(start, item.window) };
    } else {
      const w = v as { start: Micros; end: Micros };
      // window_time: the end − 1 µs
      next[item.as] = item.kind === 'windowStart' ? w.start : item.kind === 'windowEnd' ? w.end : subMicros(w.end, 1);
    }
  }
  return next;
}

/**
 * The rows of a projection with a generator (Spark's explode family): the other items once, and
 * one row per element of the ARRAY (`col`, with `pos` first for posexplode) or entry of the MAP
 * (`key`, `value`), in order. A null or empty one gives no row; an outer one, one row of nulls.
 */
function projectExploded(items: readonly ProjectItem[], row: Row): Row[] {
  const gen = items.find((i): i is ExplodeItem => i.kind === 'explode')!;
  const base = project(items, row);
  const v = valueAt(row, gen.path);
  const parts: unknown[][] = [];
  if (Array.isArray(v)) v.forEach((e, i) => parts.push(gen.position ? [i, e ?? null] : [e ?? null]));
  else if (v !== null && v !== undefined) {
    let i = 0;
    const typed = gen.keyType === undefined ? null : keyValue(gen.keyType);
    for (const [k, x] of mapEntries(v)) {
      const key = typed === null ? k : typed(k);
      parts.push(gen.position ? [i++, key, x ?? null] : [key, x ?? null]);
    }
  }
  const names = gen.names ?? [...(gen.position ? ['pos'] : []), ...(Array.isArray(v) || v === null || v === undefined ? ['col'] : ['key', 'value'])];
  if (parts.length === 0) {
    if (!gen.outer) return [];
    parts.push(names.map(() => null));
  }
  const out: Row[] = [];
  for (const p of parts) {
    // the generator's columns at its place among the items
    const next: Row = {};
    for (const item of items) {
      if (item.kind === 'explode') names.forEach((n, j) => (next[n] = p[j]));
      else next[item.as] = base[item.as];
    }
    out.push(next);
  }
  return out;
}

/** Internal row to output row: timestamps and windows as ISO strings, in the plan's column order. */
export function toOutputRow(row: Row, columns: readonly ColumnInfo[]): OutputRow {
  const out: OutputRow = {};
  for (const c of columns) {
    const v = row[c.name];
    if ((c.window || c.name === 'window' || c.name === 'session_window') && v && typeof v === 'object') {
      const w = v as { start: Micros; end: Micros };
      out[c.name] = { start: windowBound(w.start), end: windowBound(w.end) };
    } else {
      out[c.name] = outputValue(c, v) as OutputRow[string];
    }
  }
  return out;
}

/**
 * The last two window bounds formatted, and their text: the rows of a batch's output come window
 * by window, each with its start and its end, so the text of a bound is made once per window,
 * not once per row.
 */
let boundUs0: Micros = NaN;
let boundText0 = '';
let boundUs1: Micros = NaN;
let boundText1 = '';

/** ISO text of a window bound, by epoch µs (formatTimestamp: 3 fraction digits, 6 below the ms). */
function windowBound(us: Micros): string {
  if (us === boundUs0) return boundText0;
  if (us === boundUs1) return boundText1;
  const text = formatTimestamp(us);
  boundUs1 = boundUs0;
  boundText1 = boundText0;
  boundUs0 = us;
  boundText0 = text;
  return text;
}
