/**
 * The stateful operators: windowed/grouped aggregation, session windows, deduplication. Each
 * processes one micro-batch against the state store with Spark's rules:
 *
 *   late rows    filtered with the previous batch's watermark (lateWm), `<=` is late
 *   eviction     with this batch's own watermark (evictWm), after the batch's rows are applied
 *   append       emits a group once, when evicted
 *   update       emits the groups this batch changed, then evicts
 *   complete     emits every group, never evicts nor drops
 *
 * Within a batch everything is aggregated in memory first, so state reads and writes scale with
 * the distinct keys the batch touches, not with its rows.
 */
import { Buffer, CompiledAgg, compileAgg, initBuffer, mergeBuffers, numericAggs, NumericAggs, numericBuffer, resetNumericSlots, updateBuffer, updateNumeric } from './aggregates';
import { SlotTable } from './slot-table';
import { SmallCache } from './small-cache';
import type { Json, OperatorStateSpec, Row, StateChange, StateEntry, StateKey, StateStore } from './ports';
import type { ColumnInfo, GroupKey, OutputMode, SessionKey, StatefulSpec, WindowKey } from './query';

export interface BatchMeta {
  readonly batchId: number;
  /** This batch's watermark: evicts and emits. */
  readonly evictWm: number;
  /** The previous batch's watermark: filters late rows. */
  readonly lateWm: number;
}

export interface BatchInput extends BatchMeta {
  readonly rows: readonly Row[];
}

/**
 * One batch of one operator: rows are added chunk by chunk as the source reads them (so a batch
 * never holds all its rows at once), then `finish` applies the batch to the state.
 */
export interface Accumulator {
  add(rows: readonly Row[]): void;
  finish(state: StateStore): Promise<OperatorOutput>;
}

export interface OperatorOutput {
  /** Internal rows: timestamps as ms, windows as {start, end} in ms. */
  readonly rows: Row[];
  readonly changes: StateChange[];
  /** Input rows dropped as late. */
  readonly late: Row[];
  /** Change in the number of state rows. */
  readonly stateRowsDelta: number;
}

export interface StatefulOperator {
  readonly spec: OperatorStateSpec;
  /** Whether a batch with no data can emit or evict when the watermark advances. */
  readonly runsNoDataBatches: boolean;
  begin(batch: BatchMeta): Accumulator;
}

/** A whole batch at once (tests, small inputs). */
export function processBatch(op: StatefulOperator, input: BatchInput, state: StateStore): Promise<OperatorOutput> {
  const acc = op.begin(input);
  acc.add(input.rows);
  return acc.finish(state);
}

export interface OperatorConfig {
  readonly operatorId: string;
  readonly outputMode: OutputMode;
  readonly inputColumns: readonly ColumnInfo[];
  /** Watermarked columns and their delays. */
  readonly watermarks: ReadonlyMap<string, number>;
}

export function createOperator(spec: StatefulSpec, cfg: OperatorConfig): StatefulOperator {
  if (spec.kind === 'dedup') return new DedupOperator(spec, cfg);
  const session = spec.keys.find((k): k is SessionKey => k.kind === 'session');
  if (session) return new SessionOperator(spec.keys, spec.aggs.map(compileAgg), session, cfg);
  return new AggregateOperator(spec.keys, spec.aggs.map(compileAgg), cfg);
}

// ------------------------------------------------------------------------------------ windows

function floorMod(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? r + b : r;
}

/**
 * The index of the last window covering `ts`, as Spark's TimeWindowing finds it: window k starts
 * at startMs + k * slideMs, and windows k - ceil(duration / slide) + 1 to k may cover ts.
 */
export function lastWindowIndex(ts: number, w: WindowKey): number {
  return windowIndexOf(ts - floorMod(ts - w.startMs, w.slideMs), w);
}

/** The index k of the window that starts at `start` (= startMs + k * slideMs). */
export function windowIndexOf(start: number, w: WindowKey): number {
  return Math.round((start - w.startMs) / w.slideMs);
}

/** Start times of the windows covering `ts`, oldest first. */
export function windowStarts(ts: number, w: WindowKey): number[] {
  const last = lastWindowIndex(ts, w);
  const out: number[] = [];
  for (let k = last - Math.ceil(w.durationMs / w.slideMs) + 1; k <= last; k++) {
    const start = w.startMs + k * w.slideMs;
    if (start <= ts && ts < start + w.durationMs) out.push(start);
  }
  return out;
}

interface Group {
  /**
   * The state key {id, evictAt}, id the JSON of kv (see stateId): made once, when the group's
   * first batch is applied, and the same object in every batch's reads and changes.
   */
  key: StateKey | null;
  kv: Json[];
  evictAt: number | null;
  /** The batch's aggregate (with count/sum/avg only, filled from its numeric slots in finish), then the merged one. */
  buf: Buffer;
  /** Its slot in GroupSlots (-1: a group read back for output only). */
  slot: number;
  /**
   * Its stored value as of the last batch the operator finished: undefined while unknown (a group
   * first met in this batch, whose state is read in finish), null when the store has none.
   */
  state: Buffer | null | undefined;
}

/**
 * The groups of an aggregation by slot, a small integer: the trie's leaves hold slots, the numeric
 * slots of group k (count/sum/avg) are at k * width in one Float64Array, and the batch that last
 * touched it is in an Int32Array. A row of a group loads no per-group object, only a Map entry
 * and its place in the two arrays.
 */
class GroupSlots {
  groups: Array<Group | undefined> = [];
  acc: Float64Array;
  touchedIn: Int32Array;
  private free: number[] = [];

  constructor(private readonly width: number) {
    this.acc = new Float64Array(1024 * width);
    this.touchedIn = new Int32Array(1024).fill(-1);
  }

  add(g: Group): number {
    const slot = this.free.length > 0 ? this.free.pop()! : this.groups.length;
    if (slot >= this.touchedIn.length) {
      const n = this.touchedIn.length * 2;
      const acc = new Float64Array(n * this.width);
      acc.set(this.acc);
      this.acc = acc;
      const touched = new Int32Array(n).fill(-1);
      touched.set(this.touchedIn);
      this.touchedIn = touched;
    }
    this.groups[slot] = g;
    this.touchedIn[slot] = -1;
    g.slot = slot;
    return slot;
  }

  release(g: Group): void {
    this.groups[g.slot] = undefined;
    this.free.push(g.slot);
  }

  clear(): void {
    this.groups = [];
    this.free = [];
  }
}

/**
 * A level of the groups' trie, keyed by one grouping value: a Map of the next levels, or at the
 * last level (and at the root without grouping keys) a SlotTable of the groups' slots.
 */
type Level = Map<unknown, Level> | SlotTable;

/** Groups kept between the batches of one run: their trie, with every group's latest state. */
interface GroupCache {
  readonly root: Level;
  readonly groups: Group[];
  /** The batch whose state they hold. */
  readonly version: number;
}

/**
 * Most groups kept between batches. Past it the operator reads all its state from the store again
 * (the memory a run holds stays bounded whatever the number of live keys).
 */
export const MAX_CACHED_GROUPS = 250_000;

function byId<T extends { key: StateKey }>(a: T, b: T): number {
  return a.key.id < b.key.id ? -1 : a.key.id > b.key.id ? 1 : 0;
}

/**
 * The state id of grouping values (strings, numbers, booleans, null, [start, end] windows):
 * JSON.stringify(kv), written out, except that a non-finite number keeps its name (NaN, Infinity,
 * -Infinity), where JSON would write null: Spark groups NaN, the infinities and null apart. It is
 * built once per group and run; `windows` caches the text of window elements by start (a batch
 * has many groups per window, and the text of an epoch-ms number is the dearest part).
 */
export function stateId(kv: readonly Json[], windows?: SmallCache<number, string>): string {
  // joined, not concatenated: the id is one flat string from the start, where `+=` would make a
  // chain of ConsStrings, flattened at its first hash and then kept as a wrapper
  const parts: string[] = ['['];
  for (let i = 0; i < kv.length; i++) {
    if (i > 0) parts.push(',');
    const v = kv[i];
    if (typeof v === 'string') parts.push(JSON.stringify(v));
    else if (typeof v === 'number') parts.push(String(v));
    else if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number' && Number.isFinite(v[0]) && Number.isFinite(v[1])) {
      // (one operator has one window length: its start gives its end)
      let w = windows?.get(v[0]);
      if (w === undefined) {
        w = `[${v[0]},${v[1]}]`;
        windows?.put(v[0], w);
      }
      parts.push(w);
    } else parts.push(JSON.stringify(v));
  }
  parts.push(']');
  return parts.join('');
}

// ---------------------------------------------------------------------------------- aggregation

class AggregateOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly window: WindowKey | undefined;
  private readonly windowIndex: number;
  /** The key that carries event time under a watermark: eviction and lateness follow it. */
  private readonly timeIndex: number;
  /** The column of each grouping key ('' for the window). */
  private readonly names: readonly string[];
  private readonly numeric: NumericAggs | null;
  /** Text of window keys, for stateId. */
  private readonly windowText = new SmallCache<number, string>();
  /**
   * The [start, end] grouping value of each window by index, one array for all the groups of a
   * window (groups never change their kv): a batch makes thousands of groups in few windows.
   */
  private readonly windowValues = new SmallCache<number, number[]>();
  /**
   * The groups of the previous batch of this run and their state (what it committed), so that a
   * group the next batch touches again needs no read from the store, nor a new id. Valid for
   * batch N only when it holds version N-1: a replay (after a failure of the run) starts afresh.
   */
  private cache: GroupCache | null = null;
  /** The batch being accumulated. */
  private batchId = -1;
  private readonly slots: GroupSlots;
  /** The last first-level lookup of the trie in this batch (key, its map). */
  private lastFirst: { key: unknown; map: Level | null } = { key: undefined, map: null };

  constructor(private readonly keys: readonly GroupKey[], private readonly aggs: CompiledAgg[], private readonly cfg: OperatorConfig) {
    this.windowIndex = keys.findIndex((k) => k.kind === 'window');
    this.window = this.windowIndex >= 0 ? (keys[this.windowIndex] as WindowKey) : undefined;
    this.timeIndex = keys.findIndex((k) => (k.kind === 'column' ? cfg.watermarks.has(k.name) : cfg.watermarks.has(k.column)));
    this.names = keys.map((k) => (k.kind === 'column' ? k.name : ''));
    this.numeric = numericAggs(aggs);
    this.slots = new GroupSlots(this.numeric ? this.numeric.width : 0);
    const granularity = this.window ? this.window.slideMs : Math.max(60_000, ...cfg.watermarks.values());
    this.spec = { operatorId: cfg.operatorId, fixedEviction: true, evictionGranularityMs: granularity };
    this.runsNoDataBatches = cfg.outputMode !== 'complete' && cfg.watermarks.size > 0;
  }

  private get evicts(): boolean {
    return this.cfg.outputMode !== 'complete' && this.timeIndex >= 0;
  }

  begin(input: BatchMeta): Accumulator {
    // Groups in a trie of Maps, one level per grouping key, keyed by the raw values: no key
    // strings are built per row (a group's state id is built once, in finish). The trie of the
    // previous batch is kept when it holds the state this batch starts from.
    const cached = this.cache !== null && this.cache.version === input.batchId - 1 ? this.cache : null;
    this.cache = null;
    this.batchId = input.batchId;
    this.lastFirst = { key: undefined, map: null };
    if (!cached) this.slots.clear();
    const root: Level = cached ? cached.root : this.names.length <= 1 ? new SlotTable() : new Map<unknown, Level>();
    const groups: Group[] = [];
    const late: Row[] = [];
    return {
      add: (rows) => this.accumulate(input, rows, root, groups, late),
      finish: (state) => this.finish(input, root, cached, groups, late, state),
    };
  }

  private accumulate(input: BatchMeta, rows: readonly Row[], root: Level, groups: Group[], late: Row[]): void {
    const w = this.window;
    const ti = this.timeIndex;
    const lateWm = this.evicts ? input.lateWm : -Infinity;
    const byWindow = w !== undefined && ti === this.windowIndex;
    // the column whose value is the group's eviction time, when it is not the window
    const timeCol = ti >= 0 && !byWindow ? this.names[ti] : '';
    if (w === undefined) {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        if (timeCol !== '') {
          const t = (row[timeCol] as number | null | undefined) ?? null;
          if (t !== null && t <= lateWm) {
            late.push(row);
            continue;
          }
        }
        this.addTo(this.slotOf(row, 0, root), row, groups);
      }
      return;
    }
    const col = w.column;
    const size = w.durationMs;
    const slide = w.slideMs;
    const offset = w.startMs;
    const windows = Math.ceil(size / slide);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      const ts = row[col] as number | null;
      if (ts === null || ts === undefined) continue; // Spark's window() filters null event times
      if (timeCol !== '') {
        const t = (row[timeCol] as number | null | undefined) ?? null;
        if (t !== null && t <= lateWm) {
          late.push(row);
          continue;
        }
      }
      // The windows covering ts (as windowStarts), by index: an index is a small integer, where a
      // start in epoch ms is a double that the calls below would box.
      const last = lastWindowIndex(ts, w);
      let accepted = false;
      for (let k = last - windows + 1; k <= last; k++) {
        const start = offset + k * slide;
        if (!(start <= ts && ts < start + size)) continue;
        if (byWindow && start + size <= lateWm) continue;
        this.addTo(this.slotOf(row, k, root), row, groups);
        accepted = true;
      }
      if (!accepted) late.push(row);
    }
  }

  /** The slot of the row's group in window `index` (0 without a window), made when new. */
  private slotOf(row: Row, index: number, root: Level): number {
    const { names } = this;
    const nk = names.length;
    const wi = this.windowIndex;
    let level: Level = root;
    for (let i = 0; i < nk - 1; i++) {
      const v = i === wi ? index : (row[names[i]] ?? null);
      let next: Level | undefined;
      // consecutive rows mostly share their first key (their window): skip its lookup then
      const lf = this.lastFirst;
      if (i === 0 && lf.map !== null && (lf.key === v || (v !== v && lf.key !== lf.key))) next = lf.map;
      else {
        const map = level as Map<unknown, Level>;
        next = map.get(v);
        if (next === undefined) map.set(v, (next = i === nk - 2 ? new SlotTable() : new Map<unknown, Level>()));
        if (i === 0) this.lastFirst = { key: v, map: next };
      }
      level = next;
    }
    // (no grouping keys at all: one global group, under undefined)
    const v = nk === 0 ? undefined : nk - 1 === wi ? index : (row[names[nk - 1]] ?? null);
    const leaf = level as SlotTable;
    let slot = leaf.get(v);
    if (slot === undefined) leaf.set(v, (slot = this.newGroup(row, index)));
    return slot;
  }

  private addTo(slot: number, row: Row, groups: Group[]): void {
    const slots = this.slots;
    if (slots.touchedIn[slot] !== this.batchId) this.touch(slot, groups);
    if (this.numeric !== null) updateNumeric(this.numeric, slots.acc, slot * this.numeric.width, row);
    else updateBuffer(this.aggs, slots.groups[slot]!.buf, row);
  }

  /** A new group for the row's keys in window `index`; returns its slot. */
  private newGroup(row: Row, index: number): number {
    const { names } = this;
    const nk = names.length;
    const w = this.window;
    const start = w ? w.startMs + index * w.slideMs : 0;
    const ti = this.timeIndex;
    const evictAt = ti < 0 ? null : ti === this.windowIndex ? start + w!.durationMs : ((row[names[ti]] as number | null | undefined) ?? null);
    const kv: Json[] = new Array(nk);
    for (let i = 0; i < nk; i++) kv[i] = i === this.windowIndex ? this.windowValue(index, start) : ((row[names[i]] ?? null) as Json);
    return this.slots.add({ key: null, kv, evictAt, buf: EMPTY_BUFFER, slot: -1, state: undefined });
  }

  private windowValue(index: number, start: number): number[] {
    return this.windowValues.get(index) ?? this.windowValues.put(index, [start, start + this.window!.durationMs]);
  }

  /** The first row of this batch for the group in `slot`: starts its in-batch aggregate. */
  private touch(slot: number, groups: Group[]): void {
    const { slots, numeric } = this;
    const g = slots.groups[slot]!;
    if (numeric !== null) resetNumericSlots(numeric, slots.acc, slot * numeric.width);
    else g.buf = initBuffer(this.aggs);
    slots.touchedIn[slot] = this.batchId;
    groups.push(g);
  }

  /** Removes an evicted group from the trie (and the levels it leaves empty). */
  private unlink(root: Level, g: Group): void {
    const nk = this.names.length;
    if (nk === 0) {
      root.delete(undefined);
      return;
    }
    const w = this.window;
    const keyAt = (i: number) => (i === this.windowIndex ? windowIndexOf((g.kv[i] as number[])[0], w!) : g.kv[i]);
    // Evicted by its window's end, under a window first in the trie: every group of that window
    // goes at once, and with it the window's level.
    if (this.windowIndex === 0 && this.timeIndex === 0) {
      root.delete(keyAt(0));
      return;
    }
    const path: Level[] = [root];
    for (let i = 0; i < nk - 1; i++) {
      const next = (path[i] as Map<unknown, Level>).get(keyAt(i));
      if (next === undefined) return;
      path.push(next);
    }
    for (let i = nk - 1; i >= 0; i--) {
      path[i].delete(keyAt(i));
      if (path[i].size > 0) return;
    }
  }

  private async finish(input: BatchMeta, root: Level, cached: GroupCache | null, touched: Group[], late: Row[], state: StateStore): Promise<OperatorOutput> {
    const { aggs, numeric } = this;
    const version = input.batchId - 1;
    // Only the groups first met in this batch are read from the store: the others carry their state.
    const unknown: Group[] = [];
    for (let i = 0; i < touched.length; i++) {
      const g = touched[i];
      if (g.key === null) g.key = { id: stateId(g.kv, this.windowText), evictAt: g.evictAt };
      if (numeric) g.buf = numericBuffer(numeric, this.slots.acc, g.slot * numeric.width);
      if (g.state === undefined) unknown.push(g);
    }
    if (unknown.length > 0) {
      const keys: StateKey[] = new Array(unknown.length);
      for (let i = 0; i < unknown.length; i++) keys[i] = unknown[i].key!;
      const stored = await state.get(this.spec, keys, version);
      for (const g of unknown) g.state = ((stored.get(g.key!.id)?.value as { b: Buffer } | undefined)?.b ?? null);
    }

    // Groups of this batch, merged with their stored state, in the order the batch first saw them.
    let delta = 0;
    for (const g of touched) {
      if (g.state !== null) g.buf = mergeBuffers(aggs, g.state!, g.buf, numeric !== null);
      else delta++;
    }

    const out: Row[] = [];
    const changes: StateChange[] = [];
    const mode = this.cfg.outputMode;
    const evictWm = input.evictWm;

    if (mode === 'complete') {
      // every group is read back each batch: nothing is kept between batches
      const all = await state.all(this.spec, version);
      const table = new Map<string, Group>();
      for (const e of all) {
        const v = e.value as { k: Json[]; b: Buffer };
        table.set(e.key.id, { key: e.key, kv: v.k, evictAt: e.key.evictAt, buf: v.b, slot: -1, state: v.b });
      }
      for (const g of touched) table.set(g.key!.id, g);
      for (const g of touched) changes.push(this.put(g));
      const ids = [...table.keys()].sort();
      for (const id of ids) out.push(this.toRow(table.get(id)!));
      return { rows: out, changes: changes.sort(byId), late, stateRowsDelta: delta };
    }

    // Output and changes follow the batch's first-seen order, then the kept groups' order, then
    // the store's order of expired groups. A replay gives the same rows, maybe in another order
    // (its kept groups differ): rows of a batch are a multiset, as in Spark, and the sinks sort or
    // partition them. A sort of every touched group is what a batch with many keys would
    // otherwise spend most of its per-group time on.
    const evicts = this.evicts;
    const evicted: Group[] = [];
    for (const g of touched) {
      if (mode === 'update') out.push(this.toRow(g));
      if (evicts && g.evictAt !== null && g.evictAt <= evictWm) {
        if (mode === 'append') out.push(this.toRow(g));
        changes.push({ key: g.key!, value: null });
        evicted.push(g);
        delta--;
      } else {
        changes.push(this.put(g));
      }
    }
    const kept: Group[] = [];
    if (cached) {
      for (const g of cached.groups) {
        if (this.slots.touchedIn[g.slot] === input.batchId) continue; // touched: done above
        if (evicts && g.evictAt !== null && g.evictAt <= evictWm) {
          // expired without new rows: its state is the one kept
          if (mode === 'append') out.push(this.toRow(g));
          changes.push({ key: g.key!, value: null });
          evicted.push(g);
          delta--;
        } else kept.push(g);
      }
    }
    if (evicts) {
      const expired = await state.expired(this.spec, evictWm, version);
      // The store's expired groups include every group evicted above that it holds (visible at
      // the version read, evictAt at or before the watermark): as many means those very groups.
      let stored = 0;
      for (const g of evicted) if (g.state !== null) stored++;
      if (expired.length > stored) {
        const seen = new Set<string>();
        for (const g of evicted) seen.add(g.key!.id);
        for (const e of expired) {
          if (seen.has(e.key.id)) continue;
          const v = e.value as { k: Json[]; b: Buffer };
          if (mode === 'append') out.push(this.toRow({ key: e.key, kv: v.k, evictAt: e.key.evictAt, buf: v.b, slot: -1, state: v.b }));
          changes.push({ key: e.key, value: null });
          delta--;
        }
      }
    }

    // Keep the groups that live on, with the state this batch commits, for the next batch.
    for (const g of touched) {
      if (g.evictAt !== null && evicts && g.evictAt <= evictWm) continue;
      g.state = g.buf;
      kept.push(g);
    }
    if (kept.length <= MAX_CACHED_GROUPS) {
      for (const g of evicted) {
        this.unlink(root, g);
        this.slots.release(g);
      }
      this.cache = { root, groups: kept, version: input.batchId };
    }
    return { rows: out, changes, late, stateRowsDelta: delta };
  }

  private put(g: Group): StateChange {
    return { key: g.key!, value: { k: g.kv, b: g.buf } };
  }

  private toRow(g: Group): Row {
    const row: Row = {};
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i];
      if (k.kind === 'window') {
        const [start, end] = g.kv[i] as number[];
        row.window = { start, end };
      } else if (k.kind === 'column') {
        row[k.name] = g.kv[i];
      }
    }
    for (let i = 0; i < this.aggs.length; i++) row[this.aggs[i].spec.as] = this.aggs[i].finish(g.buf[i]);
    return row;
  }
}

const EMPTY_BUFFER: Buffer = [];

// ------------------------------------------------------------------------------ session windows

/** [start, end, buffer, changedInThisBatch] */
type Session = [number, number, Buffer, boolean];

class SessionOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly others: string[];
  private readonly watermarked: boolean;

  constructor(private readonly keys: readonly GroupKey[], private readonly aggs: CompiledAgg[], private readonly session: SessionKey, private readonly cfg: OperatorConfig) {
    this.others = keys.filter((k) => k.kind === 'column').map((k) => (k as { name: string }).name);
    this.watermarked = cfg.watermarks.has(session.column);
    this.spec = { operatorId: cfg.operatorId, fixedEviction: false, evictionGranularityMs: session.gapMs };
    this.runsNoDataBatches = cfg.outputMode !== 'complete' && cfg.watermarks.size > 0;
  }

  begin(input: BatchMeta): Accumulator {
    const fresh = new Map<string, { kv: Json[]; sessions: Session[] }>();
    const late: Row[] = [];
    return {
      add: (rows) => this.accumulate(input, rows, fresh, late),
      finish: (state) => this.finish(input, fresh, late, state),
    };
  }

  private accumulate(input: BatchMeta, rows: readonly Row[], fresh: Map<string, { kv: Json[]; sessions: Session[] }>, late: Row[]): void {
    const { aggs, session, others } = this;
    // Unlike other aggregations, Spark filters late rows for session windows in every output
    // mode (SessionWindowStateStoreRestoreExec), complete included; only eviction is mode-bound.
    const dropsLate = this.watermarked;
    for (const row of rows) {
      const ts = row[session.column] as number | null;
      if (ts === null || ts === undefined) continue;
      const end = ts + session.gapMs;
      if (dropsLate && end <= input.lateWm) {
        late.push(row);
        continue;
      }
      const kv = others.map((c) => (row[c] ?? null) as Json);
      const id = stateId(kv);
      let g = fresh.get(id);
      if (!g) fresh.set(id, (g = { kv, sessions: [] }));
      const buf = initBuffer(aggs);
      updateBuffer(aggs, buf, row);
      g.sessions.push([ts, end, buf, true]);
    }

  }

  private async finish(input: BatchMeta, fresh: Map<string, { kv: Json[]; sessions: Session[] }>, late: Row[], state: StateStore): Promise<OperatorOutput> {
    const evicts = this.cfg.outputMode !== 'complete' && this.watermarked;
    const version = input.batchId - 1;
    const ids = [...fresh.keys()];
    const stored = ids.length ? await state.get(this.spec, ids.map((id) => ({ id, evictAt: null })), version) : new Map<string, StateEntry>();
    const groups = new Map<string, { kv: Json[]; sessions: Session[]; before: number }>();
    for (const [id, g] of fresh) {
      const prev = stored.get(id)?.value as { k: Json[]; s: Array<[number, number, Buffer]> } | undefined;
      const existing: Session[] = prev ? prev.s.map(([s, e, b]) => [s, e, b, false]) : [];
      groups.set(id, { kv: g.kv, sessions: this.merge([...existing, ...g.sessions]), before: existing.length });
    }
    const mode = this.cfg.outputMode;
    if (mode === 'complete') {
      for (const e of await state.all(this.spec, version)) {
        if (groups.has(e.key.id)) continue;
        const v = e.value as { k: Json[]; s: Array<[number, number, Buffer]> };
        groups.set(e.key.id, { kv: v.k, sessions: v.s.map(([s, en, b]) => [s, en, b, false]), before: v.s.length });
      }
    } else if (evicts) {
      for (const e of await state.expired(this.spec, input.evictWm, version)) {
        if (groups.has(e.key.id)) continue;
        const v = e.value as { k: Json[]; s: Array<[number, number, Buffer]> };
        groups.set(e.key.id, { kv: v.k, sessions: v.s.map(([s, en, b]) => [s, en, b, false]), before: v.s.length });
      }
    }

    const out: Row[] = [];
    const changes: StateChange[] = [];
    let delta = 0;
    const sortedIds = [...groups.keys()].sort();
    for (const id of sortedIds) {
      const g = groups.get(id)!;
      const keep: Session[] = [];
      let changed = g.sessions.length !== g.before;
      for (const s of g.sessions) {
        if (s[3]) changed = true;
        const expired = evicts && s[1] <= input.evictWm;
        if (mode === 'complete' || (mode === 'update' && s[3])) out.push(this.toRow(g.kv, s));
        if (expired) {
          if (mode === 'append') out.push(this.toRow(g.kv, s));
          changed = true;
        } else keep.push(s);
      }
      delta += keep.length - g.before;
      if (!changed) continue;
      const evictAt = keep.length ? Math.min(...keep.map((s) => s[1])) : null;
      changes.push({
        key: { id, evictAt: evicts ? evictAt : null },
        value: keep.length ? { k: g.kv, s: keep.map(([s, e, b]) => [s, e, b]) } : null,
      });
    }
    return { rows: out, changes, late, stateRowsDelta: delta };
  }

  /** Sorts and merges overlapping or touching sessions (Spark merges when start <= current end). */
  private merge(sessions: Session[]): Session[] {
    sessions.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const out: Session[] = [];
    for (const s of sessions) {
      const cur = out[out.length - 1];
      if (cur && s[0] <= cur[1]) {
        cur[1] = Math.max(cur[1], s[1]);
        cur[2] = mergeBuffers(this.aggs, cur[2], s[2]);
        cur[3] = cur[3] || s[3];
      } else out.push([s[0], s[1], s[2], s[3]]);
    }
    return out;
  }

  private toRow(kv: Json[], s: Session): Row {
    const row: Row = {};
    let i = 0;
    for (const k of this.keys) {
      if (k.kind === 'session') row.session_window = { start: s[0], end: s[1] };
      else if (k.kind === 'column') row[k.name] = kv[i++];
    }
    for (let a = 0; a < this.aggs.length; a++) row[this.aggs[a].spec.as] = this.aggs[a].finish(s[2][a]);
    return row;
  }
}

// -------------------------------------------------------------------------------- deduplication

class DedupOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly columns: string[];
  private readonly eventCol: string | undefined;
  private readonly delayMs: number;
  /** Eviction time is the event-time column of the key itself (dropDuplicates with it in the key). */
  private readonly keyTimed: boolean;

  constructor(private readonly dd: Extract<StatefulSpec, { kind: 'dedup' }>, cfg: OperatorConfig) {
    this.columns = dd.columns ? [...dd.columns] : cfg.inputColumns.map((c) => c.name);
    const [first] = [...cfg.watermarks.entries()].filter(([c]) => cfg.inputColumns.some((x) => x.name === c));
    this.eventCol = first?.[0];
    this.delayMs = first?.[1] ?? 0;
    this.keyTimed = !dd.withinWatermark && this.eventCol !== undefined && this.columns.includes(this.eventCol);
    this.spec = {
      operatorId: cfg.operatorId,
      fixedEviction: !dd.withinWatermark,
      evictionGranularityMs: Math.max(1000, this.delayMs),
    };
    this.runsNoDataBatches = this.eventCol !== undefined;
  }

  private evictAtOf(row: Row): number | null {
    if (!this.eventCol) return null;
    const t = row[this.eventCol] as number | null;
    if (t === null || t === undefined) return null;
    if (this.dd.withinWatermark) return t + this.delayMs;
    return this.keyTimed ? t : null;
  }

  begin(input: BatchMeta): Accumulator {
    const firsts = new Map<string, { row: Row; evictAt: number | null }>();
    const late: Row[] = [];
    return {
      add: (rows) => this.accumulate(input, rows, firsts, late),
      finish: (state) => this.finish(input, firsts, late, state),
    };
  }

  private accumulate(input: BatchMeta, rows: readonly Row[], firsts: Map<string, { row: Row; evictAt: number | null }>, late: Row[]): void {
    const ec = this.eventCol;
    for (const row of rows) {
      if (ec) {
        const t = row[ec] as number | null;
        if (t !== null && t !== undefined && t <= input.lateWm) {
          late.push(row);
          continue;
        }
      }
      const id = stateId(this.columns.map((c) => (row[c] ?? null) as Json));
      if (!firsts.has(id)) firsts.set(id, { row, evictAt: this.evictAtOf(row) });
    }
  }

  private async finish(input: BatchMeta, firsts: Map<string, { row: Row; evictAt: number | null }>, late: Row[], state: StateStore): Promise<OperatorOutput> {
    const ec = this.eventCol;
    const version = input.batchId - 1;
    const stored = firsts.size
      ? await state.get(this.spec, [...firsts].map(([id, f]) => ({ id, evictAt: this.dd.withinWatermark ? null : f.evictAt })), version)
      : new Map<string, StateEntry>();
    const out: Row[] = [];
    const changes: StateChange[] = [];
    let delta = 0;
    const evictWm = input.evictWm;
    const evicts = ec !== undefined && (this.keyTimed || this.dd.withinWatermark);
    for (const [id, f] of firsts) {
      if (stored.has(id)) continue;
      out.push(f.row);
      if (evicts && f.evictAt !== null && f.evictAt <= evictWm) continue; // emitted, and already past the watermark
      changes.push({ key: { id, evictAt: f.evictAt }, value: f.evictAt ?? 1 });
      delta++;
    }
    if (evicts) {
      for (const e of await state.expired(this.spec, evictWm, version)) {
        changes.push({ key: e.key, value: null });
        delta--;
      }
    }
    return { rows: out, changes: changes.sort(byId), late, stateRowsDelta: delta };
  }
}
