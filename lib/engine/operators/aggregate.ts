/**
 * Windowed and keyed aggregation (Spark's StateStoreSaveExec): groupBy(window(...), columns) or
 * groupBy(columns) with aggregations, in the three output modes (see operator.ts).
 *
 * A batch adds each row to its group in a trie of Maps, one level per grouping key, keyed by the
 * raw values (a window by its index), so no key string is built per row; a group's state id is
 * built once, when its first batch finishes. The trie and its groups live on to the next batch of
 * the same run, with the state that batch committed: a group met again needs no read from the store.
 */
import { type Buffer, type CompiledAgg, initBuffer, mergeBuffers, updateBuffer } from '../aggregates';
import type { Json, OperatorStateSpec, Row, StateChange, StateKey, StateStore } from '../ports';
import type { GroupKey, WindowFilter, WindowKey } from '../plan/types';
import { timeOfValue, watermarkTimeOf } from '../plan/columns';
import { type BatchMeta, isExpired, isLate } from './batch';
import type { Accumulator, OperatorConfig, OperatorIo, OperatorOutput, StatefulOperator } from './operator';
import { NumericSlots, PendingAdds } from './numeric-slots';
import { type FoldTarget, OverflowGuard } from './overflow-guard';
import type { RowErrorHandler } from '../rows';
import { byId, groupingKey, stateId, statePartition } from './state-id';
import { SlotTable } from './slot-table';
import { WindowMemo } from './window-memo';
import { covers, indexBefore, lastWindowIndex, windowEnd, windowIndexOf, windowsPerEvent, windowStartAt } from './windows';
import { ceilMillis, type Micros } from '../timestamps';

interface Group {
  /**
   * The state key {id, evictAt}, id the JSON of kv (see stateId): made once, when the group's
   * first batch finishes, and the same object in every batch's reads and changes.
   */
  key: StateKey | null;
  /** The grouping values, a window as [start, end]. */
  kv: Json[];
  evictAt: number | null;
  /** The batch's aggregate (with count/sum/avg only: filled from its numeric slots in finish), then merged with the stored one. */
  buf: Buffer;
  /** The batch that last added a row to it (-1: a group read back for output only). */
  touchedIn: number;
  /** Its slot in the operator's groups, which the trie's leaves hold (-1: read back for output only). */
  slot: number;
  /**
   * Its stored value as of the last batch the operator finished: undefined while unknown (a group
   * first met in this batch, whose state is read in finish), null when the store has none.
   */
  state: Buffer | null | undefined;
}

/** The value a group's state entry holds: its grouping values and its aggregate. */
type StoredGroup = {
  readonly k: Json[];
  readonly b: Buffer;
};

/** The last level of the groups' trie: a grouping value to its group's slot. */
type Leaf = SlotTable;

/**
 * A level of the groups' trie: a grouping value to the next level or, at the last level (and at
 * the root without grouping keys, under undefined), to the group's slot.
 */
type Level = Map<unknown, Level> | Leaf;

/** Groups kept between the batches of one run: their trie, with every group's latest state. */
interface GroupCache {
  readonly root: Level;
  readonly groups: Group[];
  /** The batch whose state they hold. */
  readonly version: number;
  /**
   * Whether they are every group the store holds at `version`: the run started at batch 0 (the
   * store empty at version -1) and each batch since kept all its groups. A group the trie does not
   * hold then has no stored state (no read for it), and the store has no expired group the cache
   * does not know (no scan for them).
   */
  readonly whole: boolean;
}

/**
 * Most groups kept between batches. Past it the operator reads all its state from the store again
 * (the memory a run holds stays bounded whatever the number of live keys).
 */
const MAX_CACHED_GROUPS = 250_000;

/** Map's equality of keys (SameValueZero: NaN is NaN, -0 is 0). */
function sameKey(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

/**
 * A grouping value as its group keeps and shows it: a DOUBLE's -0.0 as 0.0, as Spark's
 * NormalizeFloatingNumbers makes a grouping key (its output column too). The trie's Map already
 * takes -0.0 and 0.0 as one key, and stateId writes both "0"; without this, a group first met with
 * -0.0 showed -0 until its state was read back (the stores keep no sign of zero), to the
 * expressions after the aggregation, foreachBatch and a Parquet sink alike
 * (test/unit/aggregation-differential.test.ts found it).
 */
function normalizedKey(v: unknown): Json {
  return (v === 0 ? 0 : (v ?? null)) as Json;
}

/** A group read back from the store (for output only). */
function storedGroup(key: StateKey, value: StoredGroup): Group {
  return { key, kv: value.k, evictAt: key.evictAt, buf: value.b, touchedIn: -1, slot: -1, state: value.b };
}

export class AggregateOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly window: WindowKey | undefined;
  /** The position of the window among the grouping keys (-1: none). */
  private readonly windowPosition: number;
  /** The position of the key that carries event time under a watermark: eviction and lateness follow it (-1: none). */
  private readonly eventTimePosition: number;
  /** The column of each grouping key ('' for the window). */
  private readonly names: readonly string[];
  /** Whether groups expire (and rows are late): a watermarked key, and not complete mode. */
  private readonly evicts: boolean;
  /** Whether the grouping key that carries event time is the window (groups expire with their window's end). */
  private readonly timedByWindow: boolean;
  /**
   * The groups of the previous batch of this run and their state (what it committed). Valid for
   * batch N only when it holds version N-1: a replay (after a failure of the run) starts afresh.
   */
  private cache: GroupCache | null = null;
  /** The groups the trie's leaves point to, by slot, and the slots free for reuse. */
  private groups: Array<Group | undefined> = [];
  private freeSlots: number[] = [];
  /** The in-batch aggregates by slot, when every aggregation is count, sum or avg (see numeric-slots.ts). */
  private readonly numeric: NumericSlots | null;
  /** The query's state partitions (StateKey.partition). */
  private readonly partitions: number;
  /** The check of exact sums for overflow (null: no aggregation adds exactly; see overflow-guard.ts). */
  private readonly guard: OverflowGuard | null;
  /**
   * Whether this batch's rows go through the guard (it has somewhere to send a refused row): then
   * a group's exact aggregates start the batch from its stored value (overflow-guard.ts).
   */
  private guarded = false;
  /** A chunk's rows waiting for their numeric adds (numeric slots only; see numeric-slots.ts). */
  private readonly pending = new PendingAdds();
  /** Whether this batch's trie holds every group the store has at the version it reads (GroupCache.whole). */
  private whole = false;
  /** The last first-level lookup of the trie in this batch (key, its level). */
  private lastFirst: { key: unknown; level: Level | null } = { key: undefined, level: null };

  constructor(
    private readonly keys: readonly GroupKey[],
    private readonly aggs: CompiledAgg[],
    private readonly cfg: OperatorConfig,
    /** The conjuncts of a later filter on the window, tested per (row, window) before a row joins the window's group. */
    private readonly windowFilter?: WindowFilter,
  ) {
    this.windowPosition = keys.findIndex((k) => k.kind === 'window');
    this.window = this.windowPosition >= 0 ? (keys[this.windowPosition] as WindowKey) : undefined;
    this.eventTimePosition = keys.findIndex((k) => cfg.watermarks.has(k.kind === 'column' ? k.name : k.column));
    this.names = keys.map((k) => (k.kind === 'column' ? k.name : ''));
    this.evicts = cfg.outputMode !== 'complete' && this.eventTimePosition >= 0;
    this.timedByWindow = this.window !== undefined && this.eventTimePosition === this.windowPosition;
    this.numeric = NumericSlots.of(aggs);
    this.guard = OverflowGuard.of(aggs, keys);
    const granularity = this.window ? Math.max(1, Math.floor(this.window.slideUs / 1000)) : Math.max(60_000, ...cfg.watermarks.values());
    this.spec = { operatorId: cfg.operatorId, fixedEviction: true, evictionGranularityMs: granularity };
    // Spark's StateStoreSaveExec.shouldRunAnotherBatch asks for its input watermark, which follows the
    // plan (FORMAT-2 "Input watermark of a stateful stage"), not its columns: a withWatermark upstream
    // whose column a select dropped still moves it, and a no-data batch still runs
    this.runsNoDataBatches = cfg.outputMode !== 'complete' && (cfg.watermarked ?? cfg.watermarks.size > 0);
    this.partitions = cfg.statePartitions ?? 1;
  }

  /** A group's state key: its id (given when known), eviction time and partition (groupPartition). */
  private stateKey(g: Pick<Group, 'kv' | 'evictAt'>, id = stateId(g.kv)): StateKey {
    if (this.partitions <= 1) return { id, evictAt: g.evictAt };
    return { id, evictAt: g.evictAt, partition: this.groupPartition(g.kv, id) };
  }

  /** The state partition of grouping values: by their id without the window (`id`: theirs, when known). */
  private groupPartition(kv: readonly Json[], id?: string): number {
    if (this.partitions <= 1) return 0;
    const groupId = this.windowPosition < 0 ? (id ?? stateId(kv)) : stateId(kv.filter((_, i) => i !== this.windowPosition));
    return statePartition(groupId, this.partitions);
  }

  /** An exact sum (BIGINT, DECIMAL) checks each row against its group's running total (overflow-guard.ts). */
  get checksRowsAgainstState(): boolean {
    return this.guard !== null;
  }

  /** The partition of a row's groups: its grouping values without the window (stateKey's groupId). */
  partitionOf(row: Row): number {
    const kv: Json[] = [];
    for (let i = 0; i < this.names.length; i++) if (i !== this.windowPosition) kv.push((row[this.names[i]] ?? null) as Json);
    return statePartition(stateId(kv), this.partitions);
  }

  /** Whether a row is late by its event-time column (when that is a column, not the window). */
  private isRowLate(row: Row, batch: BatchMeta): boolean {
    return this.evicts && !this.timedByWindow && isLate(watermarkTimeOf(row[this.names[this.eventTimePosition]]), batch);
  }

  /** Whether the window that starts at `start` is late: it ended at or before the previous batch's watermark. */
  private isWindowLate(start: Micros, batch: BatchMeta): boolean {
    if (!this.evicts || !this.timedByWindow) return false;
    const end = typeof start === 'number' ? start + this.window!.durationUs : NaN;
    return isLate(Number.isSafeInteger(end) ? end : windowEnd(start, this.window!), batch);
  }

  /** Whether a group expires in this batch: its eviction time is at or before the batch's watermark. */
  private isGroupExpired(g: Group, batch: BatchMeta): boolean {
    return this.evicts && isExpired(g.evictAt, batch);
  }

  begin(batch: BatchMeta, io?: OperatorIo): Accumulator {
    const cached = this.cache !== null && this.cache.version === batch.batchId - 1 ? this.cache : null;
    this.cache = null;
    this.lastFirst = { key: undefined, level: null };
    // (batch 0 reads version -1, where a store holds nothing)
    this.whole = cached ? cached.whole : batch.batchId === 0;
    if (!cached) {
      this.groups = [];
      this.freeSlots = [];
      this.numeric?.unmarkAll();
    }
    const root: Level = cached ? cached.root : this.names.length <= 1 ? new SlotTable() : new Map<unknown, Level>();
    const touched: Group[] = [];
    const late: Row[] = [];
    const partialGroups = new Map<string, Group>();
    const target = this.foldTarget(batch, touched, io?.onRowError, io && ((groups) => this.loadStates(groups, io.state, batch.batchId - 1)));
    return {
      add:
        target === null
          ? (rows) => this.accumulate(batch, rows, root, touched, late)
          : (rows) => {
              this.accumulate(batch, rows, root, touched, late);
              return this.guard!.fold(target);
            },
      addPartials: (entries) => this.addPartials(batch, entries, partialGroups, touched),
      finish: (state) => this.finish(batch, root, cached, touched, late, state),
    };
  }

  /** Where the guard folds this batch's rows, when there is a guard and somewhere to send a refused row (else null). */
  private foldTarget(
    batch: BatchMeta,
    touched: Group[],
    onRowError: RowErrorHandler | undefined,
    load: ((groups: Group[]) => Promise<void>) | undefined,
  ): FoldTarget<Group> | null {
    this.guard?.clear();
    this.guarded = this.guard !== null && onRowError !== undefined;
    if (!this.guarded) return null;
    return { batchId: batch.batchId, group: (slot) => this.groups[slot]!, touched, onRowError: onRowError!, ...(load ? { load } : {}) };
  }

  /**
   * A read task's pre-aggregation (a partitioned run, lib/engine/schedule/partitioned.ts): the groups its
   * rows make, each with its in-batch aggregate, by state partition, as `[kv, evictAt, buffer]`
   * entries a partition task merges (addPartials); late rows are dropped here, as the batch would.
   */
  beginPartials(batch: BatchMeta, onRowError?: RowErrorHandler): { add(rows: readonly Row[]): void; take(): { partials: Map<number, Json[]>; late: Row[] } } {
    this.cache = null;
    this.whole = false;
    this.lastFirst = { key: undefined, level: null };
    this.groups = [];
    this.freeSlots = [];
    this.numeric?.unmarkAll();
    const root: Level = this.names.length <= 1 ? new SlotTable() : new Map<unknown, Level>();
    const touched: Group[] = [];
    const late: Row[] = [];
    // (no state here: the guard checks each row against this task's own partial)
    const target = this.foldTarget(batch, touched, onRowError, undefined);
    return {
      add: (rows) => {
        this.accumulate(batch, rows, root, touched, late);
        if (target !== null) this.guard!.apply(target);
      },
      take: () => {
        const partials = new Map<number, Json[]>();
        for (const g of touched) {
          const buf = this.numeric !== null ? this.numeric.buffer(g.slot) : g.buf;
          const p = this.groupPartition(g.kv);
          let list = partials.get(p);
          if (!list) partials.set(p, (list = []));
          list.push([g.kv, g.evictAt, buf]);
        }
        return { partials, late };
      },
    };
  }

  /** Merges read tasks' partial groups (beginPartials' entries) into the batch's groups, in the order given. */
  private addPartials(batch: BatchMeta, entries: readonly Json[], index: Map<string, Group>, touched: Group[]): void {
    for (const e of entries) {
      const [kv, evictAt, buf] = e as [Json[], number | null, Buffer];
      const id = stateId(kv);
      const g = index.get(id);
      if (g)
        g.buf = this.guard ? this.guard.mergeChecked(g.buf, buf, kv, batch.batchId, "the read tasks' partial aggregates") : mergeBuffers(this.aggs, g.buf, buf);
      else {
        // (its state key now, from the id in hand)
        const fresh: Group = { key: this.stateKey({ kv, evictAt }, id), kv, evictAt, buf, touchedIn: batch.batchId, slot: -1, state: undefined };
        index.set(id, fresh);
        touched.push(fresh);
      }
    }
  }

  private accumulate(batch: BatchMeta, rows: readonly Row[], root: Level, touched: Group[], late: Row[]): void {
    this.pending.clear(); // (nothing left by a chunk that threw)
    this.groupRows(batch, rows, root, touched, late);
    if (this.pending.size > 0) this.pending.flush(this.numeric!, batch.batchId, this.groups, touched);
  }

  /** Each row to its groups (addTo), or to `late`. */
  private groupRows(batch: BatchMeta, rows: readonly Row[], root: Level, touched: Group[], late: Row[]): void {
    const window = this.window;
    if (window === undefined) {
      for (const row of rows) {
        if (this.isRowLate(row, batch)) late.push(row);
        else this.addTo(this.slotOf(row, 0, root), row, batch, touched);
      }
      return;
    }
    const col = window.column;
    const perEvent = windowsPerEvent(window);
    const filter = this.windowFilter?.test;
    // (a tumbling window: the window of the row before, see window-memo.ts; not with a window filter, which each row's window goes through)
    const memo = perEvent === 1 && filter === undefined ? new WindowMemo() : null;
    for (const row of rows) {
      // (a window over an earlier aggregation's window column: over its window_time)
      const ts = timeOfValue(row[col]);
      if (ts === null || ts === undefined) continue; // Spark's window() filters null event times
      if (this.isRowLate(row, batch)) {
        late.push(row);
        continue;
      }
      if (memo?.holds(ts)) {
        if (memo.late) late.push(row);
        else this.addTo(this.slotOf(row, memo.index, root), row, batch, touched);
        continue;
      }
      // The windows covering ts (as windowStarts), by index: an index is a small integer, where a
      // start in epoch µs is a double that the calls below would box. (A bigint index, far from
      // 1970 under a tiny slide, takes windows.ts's exact path.)
      const last = lastWindowIndex(ts, window);
      let accepted = false;
      // (false when a window filter rejects every window of the row: it is filtered, not late)
      let passed = filter === undefined;
      for (let j = perEvent - 1; j >= 0; j--) {
        const k = typeof last === 'number' && Number.isSafeInteger(last - j) ? last - j : indexBefore(last, j);
        const start = windowStartAt(k, window);
        if (!covers(start, ts, window)) continue;
        if (filter !== undefined) {
          const probe = Object.create(row) as Row;
          probe.window = { start, end: windowEnd(start, window) };
          if (!filter(probe)) continue;
          passed = true;
        }
        if (this.isWindowLate(start, batch)) continue;
        this.addTo(this.slotOf(row, k, root), row, batch, touched);
        accepted = true;
      }
      if (!accepted && passed) late.push(row);
      memo?.keep(last, ts, window, !accepted);
    }
  }

  /** The grouping value of key `i` in the trie: the window's index, or the row's column value. */
  private trieKey(row: Row, i: number, windowIndex: Micros): unknown {
    return i === this.windowPosition ? windowIndex : groupingKey(row[this.names[i]] ?? null);
  }

  /** The slot of the row's group in window `windowIndex` (0 without a window), made when new. */
  private slotOf(row: Row, windowIndex: Micros, root: Level): number {
    const keyCount = this.names.length;
    // (no grouping keys at all: one global group, under undefined)
    let level: Level = root;
    for (let i = 0; i < keyCount - 1; i++) {
      const value = this.trieKey(row, i, windowIndex);
      let next: Level | undefined;
      // consecutive rows mostly share their first key (their window): skip its lookup then
      const lastFirst = this.lastFirst;
      if (i === 0 && lastFirst.level !== null && sameKey(lastFirst.key, value)) next = lastFirst.level as Level;
      else {
        const map = level as Map<unknown, Level>;
        next = map.get(value);
        if (next === undefined) map.set(value, (next = i === keyCount - 2 ? new SlotTable() : new Map<unknown, Level>()));
        if (i === 0) this.lastFirst = { key: value, level: next };
      }
      level = next;
    }
    // (no grouping keys at all: one global group, under undefined)
    const value = keyCount === 0 ? undefined : this.trieKey(row, keyCount - 1, windowIndex);
    const leaf = level as Leaf;
    const slot = leaf.get(value);
    return slot === undefined ? this.newGroup(row, windowIndex, leaf, value) : slot;
  }

  /** A new group for the row's keys in window `windowIndex`, put into `leaf` under `value`: its slot. */
  private newGroup(row: Row, windowIndex: Micros, leaf: Leaf, value: unknown): number {
    const keyCount = this.names.length;
    const window = this.window;
    const start = window ? windowStartAt(windowIndex, window) : 0;
    const timeAt = this.eventTimePosition;
    // (in ms, as the stores keep it: the least whole ms at or after the µs time; batch.ts)
    const evictTime = timeAt < 0 ? null : timeAt === this.windowPosition ? windowEnd(start, window!) : (watermarkTimeOf(row[this.names[timeAt]]) ?? null);
    const evictAt = evictTime === null ? null : ceilMillis(evictTime);
    const kv: Json[] = new Array(keyCount);
    for (let i = 0; i < keyCount; i++) kv[i] = i === this.windowPosition ? ([start, windowEnd(start, window!)] as Json) : normalizedKey(row[this.names[i]]);
    const slot = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.groups.length;
    // (a trie that holds every stored group: one it does not hold has no stored state)
    const g: Group = { key: null, kv, evictAt, buf: EMPTY_BUFFER, touchedIn: -1, slot, state: this.whole ? null : undefined };
    this.groups[slot] = g;
    this.numeric?.unmark(slot);
    leaf.set(value, slot);
    return slot;
  }

  /**
   * Adds a row to the in-batch aggregate of the group in `slot` (started at the group's first row
   * of the batch). With numeric slots, the row waits in `pending` until the chunk's rows all have
   * their slots (PendingAdds).
   */
  private addTo(slot: number, row: Row, batch: BatchMeta, touched: Group[]): void {
    if (this.numeric !== null) {
      this.pending.push(slot, row);
      return;
    }
    if (this.guarded) {
      this.guard!.defer(slot, row);
      return;
    }
    const g = this.groups[slot]!;
    if (g.touchedIn !== batch.batchId) {
      g.buf = initBuffer(this.aggs);
      g.touchedIn = batch.batchId;
      touched.push(g);
    }
    updateBuffer(this.aggs, g.buf, row);
  }

  /** Removes an evicted group from the trie (and the levels it leaves empty). */
  private unlink(root: Level, g: Group): void {
    const keyCount = this.names.length;
    if (keyCount === 0) {
      root.delete(undefined);
      return;
    }
    const keyAt = (i: number) => (i === this.windowPosition ? windowIndexOf((g.kv[i] as Micros[])[0], this.window!) : groupingKey(g.kv[i]));
    // Evicted by its window's end, under a window first in the trie: every group of that window
    // goes at once, and with it the window's level.
    if (this.windowPosition === 0 && this.eventTimePosition === 0) {
      root.delete(keyAt(0));
      return;
    }
    const path: Level[] = [root];
    for (let i = 0; i < keyCount - 1; i++) {
      const next = (path[i] as Map<unknown, Level>).get(keyAt(i));
      if (next === undefined) return;
      path.push(next);
    }
    for (let i = keyCount - 1; i >= 0; i--) {
      path[i].delete(keyAt(i));
      if (path[i].size > 0) return;
    }
  }

  /** Reads the stored state (at `version`) of groups whose state is not known. */
  private async loadStates(groups: Group[], state: StateStore, version: number): Promise<void> {
    for (const g of groups) if (g.key === null) g.key = this.stateKey(g);
    const stored = await state.get(
      this.spec,
      groups.map((g) => g.key!),
      version,
    );
    for (const g of groups) g.state = (stored.get(g.key!.id)?.value as StoredGroup | undefined)?.b ?? null;
  }

  private async finish(batch: BatchMeta, root: Level, cached: GroupCache | null, touched: Group[], late: Row[], state: StateStore): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    // Only the groups first met in this batch are read from the store: the others carry their state.
    const unknown: Group[] = [];
    for (const g of touched) {
      if (g.key === null) g.key = this.stateKey(g);
      if (this.numeric !== null && g.slot >= 0) g.buf = this.numeric.buffer(g.slot);
      if (g.state === undefined) unknown.push(g);
    }
    if (unknown.length > 0) await this.loadStates(unknown, state, version);

    // Groups of this batch, merged with their stored state, in the order the batch first saw them
    // (g.buf is this batch's own buffer: the merge may overwrite it).
    let delta = 0;
    for (const g of touched) {
      if (g.state !== null) g.buf = this.withState(g, batch.batchId);
      else delta++;
    }
    const mode = this.cfg.outputMode;
    if (touched.length === 0 && this.names.length === 0 && mode !== 'append' && this.ownsGlobalGroup(batch)) {
      delta += await this.touchGlobalGroup(root, batch, state, touched);
    }

    const out: Row[] = [];
    const changes: StateChange[] = [];

    if (mode === 'complete') {
      // every group is read back each batch: nothing is kept between batches
      const table = new Map<string, Group>();
      for (const e of await state.all(this.spec, version)) table.set(e.key.id, storedGroup(e.key, e.value as StoredGroup));
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
    const evicted: Group[] = [];
    const evict = (g: Group) => {
      if (mode === 'append') out.push(this.toRow(g));
      changes.push({ key: g.key!, value: null });
      evicted.push(g);
      delta--;
    };
    for (const g of touched) {
      if (mode === 'update') out.push(this.toRow(g));
      if (this.isGroupExpired(g, batch)) evict(g);
      else changes.push(this.put(g));
    }
    const kept: Group[] = [];
    for (const g of cached?.groups ?? []) {
      if (g.touchedIn === batch.batchId) continue; // touched: done above
      // expired without new rows: its state is the one kept
      if (this.isGroupExpired(g, batch)) evict(g);
      else kept.push(g);
    }
    // (a whole trie: the store's expired groups are the cached ones evicted above)
    if (this.evicts && !this.whole) {
      const expired = await state.expired(this.spec, batch.evictWm, version);
      // The store's expired groups include every group evicted above that it holds (visible at
      // the version read, evictAt at or before the watermark): as many means those very groups.
      let stored = 0;
      for (const g of evicted) if (g.state !== null) stored++;
      if (expired.length > stored) {
        const seen = new Set<string>();
        for (const g of evicted) seen.add(g.key!.id);
        for (const e of expired) {
          if (seen.has(e.key.id)) continue;
          if (mode === 'append') out.push(this.toRow(storedGroup(e.key, e.value as StoredGroup)));
          changes.push({ key: e.key, value: null });
          delta--;
        }
      }
    }

    // Keep the groups that live on, with the state this batch commits, for the next batch.
    for (const g of touched) {
      if (this.isGroupExpired(g, batch)) continue;
      g.state = g.buf;
      kept.push(g);
    }
    // (a batch of partial groups, slot -1, is a partitioned run's partition task: nothing to keep)
    if (touched.some((g) => g.slot < 0)) this.cache = null;
    else if (kept.length <= MAX_CACHED_GROUPS) {
      for (const g of evicted) {
        this.unlink(root, g);
        this.groups[g.slot] = undefined;
        this.freeSlots.push(g.slot);
      }
      this.cache = { root, groups: kept, version: batch.batchId, whole: this.whole };
    }
    return { rows: out, changes, late, stateRowsDelta: delta };
  }

  /** Whether this computation of the batch writes the global group's state partition (a partition task writes its own only). */
  private ownsGlobalGroup(batch: BatchMeta): boolean {
    if (batch.partitions === undefined) return true;
    return batch.partitions.includes(this.partitions <= 1 ? 0 : statePartition(stateId([]), this.partitions));
  }

  /**
   * A global aggregation (no grouping key) whose batch brought it no row, in update or complete
   * mode: Spark's plan still carries its one row (an aggregate without grouping keys yields a row
   * for empty input, merged with the stored one by StateStoreRestoreExec), so StateStoreSaveExec
   * stores it and emits it, the initial values (count 0, sum null) before any row. The group is
   * made touched with its stored value, or the initial one; returns 1 when it is new to the state.
   */
  private async touchGlobalGroup(root: Level, batch: BatchMeta, state: StateStore, touched: Group[]): Promise<number> {
    const g = this.groups[this.slotOf({}, 0, root)]!;
    if (g.key === null) g.key = this.stateKey(g);
    if (g.state === undefined) await this.loadStates([g], state, batch.batchId - 1);
    g.buf = g.state !== null && g.state !== undefined ? [...g.state] : initBuffer(this.aggs);
    g.touchedIn = batch.batchId;
    touched.push(g);
    return g.state === null ? 1 : 0;
  }

  /** A touched group's buffer merged with its stored one (its batch buffer overwritten). */
  private withState(g: Group, batchId: number): Buffer {
    const guard = this.guard;
    if (guard === null) return mergeBuffers(this.aggs, g.state!, g.buf, true);
    // (rows folded by the guard: its exact aggregates hold the stored value already)
    if (this.guarded && g.slot >= 0) return guard.mergeFolded(g.state!, g.buf);
    return guard.mergeChecked(g.state!, g.buf, g.kv, batchId, 'its partial aggregate with the stored one', true);
  }

  private put(g: Group): StateChange {
    const value: StoredGroup = { k: g.kv, b: g.buf };
    return { key: g.key!, value };
  }

  private toRow(g: Group): Row {
    const row: Row = {};
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i];
      if (k.kind === 'window') {
        const [start, end] = g.kv[i] as Micros[];
        row.window = { start, end };
      } else if (k.kind === 'column') {
        row[k.name] = g.kv[i];
      }
    }
    for (let i = 0; i < this.aggs.length; i++) row[this.aggs[i].spec.as] = this.aggs[i].finish(g.buf[i]);
    return row;
  }
}

/** The buffer of a group until its first row (replaced then). */
const EMPTY_BUFFER: Buffer = [];
