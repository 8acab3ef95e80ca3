/**
 * Stream-stream joins (Spark's StreamingSymmetricHashJoinExec, FORMAT-2 "Stream-stream joins"):
 * both sides' rows are buffered in the state store, by side and join key, until the state
 * watermark says no future row of the other side can match them.
 *
 *   left rows of the batch (late ones dropped) ─▶ matched with the buffered right rows ─▶ buffered
 *   right rows of the batch ─▶ matched with the buffered left rows (this batch's included) ─▶ buffered
 *   ─▶ rows the state watermark removes leave the buffer; an outer side's unmatched ones are
 *      emitted with nulls for the other side (typically in the no-data batch after the watermark moved)
 *
 * State: one entry per (side, key): its rows as [matched, ...values] in the side's column order;
 * its eviction time is the earliest of its rows' removal times, so `expired` finds every entry
 * with a row to remove. The two sides of a key share a state partition.
 */
import type { Json, OperatorStateSpec, Row, StateChange, StateEntry, StateKey, StateStore } from '../ports';
import type { JoinConditionCheck, StreamJoinSpec } from '../plan/types';
import { type ColumnInfo, predicateSide, watermarkTimeOf } from '../plan/columns';
import { addMicros, ceilMillis, type Micros } from '../timestamps';
import type { JoinRemoval, JoinSides } from '../plan/chain';
import { holds, pairRow, rowHolds } from '../predicate';
import { type BatchMeta, isLate } from './batch';
import type { Accumulator, OperatorConfig, OperatorOutput, StatefulOperator } from './operator';
import { byId, stateId, statePartition } from './state-id';

type Side = 'L' | 'R';

/** A buffered row and whether it has matched a row of the other side. */
interface Buffered {
  readonly row: Row;
  matched: boolean;
}

/** One (side, key) entry as the batch holds it. */
interface Entry {
  readonly side: Side;
  readonly keyId: string;
  rows: Buffered[];
  /** Rows it held at version N−1 (0 for a new entry). */
  readonly storedRows: number;
  changed: boolean;
}

export class StreamJoinOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly partitions: number;
  private readonly leftNames: string[];
  private readonly rightNames: string[];
  private readonly leftOthers: string[];
  private readonly rightOthers: string[];
  private readonly usingKeys: string[];
  private readonly leftOuter: boolean;
  private readonly rightOuter: boolean;
  private readonly semi: boolean;
  /** Condition items checked in the join, per side (the others filter the inputs: query/frame.ts pushFilter). */
  private readonly leftChecks: StreamJoinSpec['condition'];
  private readonly rightChecks: StreamJoinSpec['condition'];
  /** Condition items on the pair (an anyOf naming columns of both sides): a pair failing one is not a match. */
  private readonly pairChecks: StreamJoinSpec['condition'];

  constructor(
    private readonly join: StreamJoinSpec,
    private readonly sides: JoinSides,
    cfg: OperatorConfig,
  ) {
    this.partitions = cfg.statePartitions ?? 1;
    this.leftNames = cfg.inputColumns.map((c) => c.name);
    this.rightNames = sides.rightColumns.map((c) => c.name);
    const using = new Set(join.on.filter((k) => k.using).map((k) => k.left));
    this.usingKeys = [...using];
    this.leftOthers = this.leftNames.filter((c) => !using.has(c));
    this.rightOthers = this.rightNames.filter((c) => !using.has(c));
    this.leftOuter = join.type === 'leftOuter' || join.type === 'fullOuter';
    this.rightOuter = join.type === 'rightOuter' || join.type === 'fullOuter';
    this.semi = join.type === 'leftSemi';
    const left = cfg.inputColumns;
    this.leftChecks = join.condition.filter((p) => predicateSide(p, left) === 'left');
    this.rightChecks = join.condition.filter((p) => predicateSide(p, left) === 'right');
    this.pairChecks = join.condition.filter((p) => predicateSide(p, left) === 'both');
    // an entry's eviction time moves as rows come and go (the earliest of its rows'), and a lookup
    // by key cannot know it: the store must find an entry by its id alone (not fixed)
    this.spec = { operatorId: cfg.operatorId, fixedEviction: false, evictionGranularityMs: 1000 };
    this.runsNoDataBatches = sides.leftRemoval !== null || sides.rightRemoval !== null;
  }

  begin(batch: BatchMeta): Accumulator {
    const left: Row[] = [];
    const right: Row[] = [];
    const lateLeft: Row[] = [];
    const lateRight: Row[] = [];
    const take = (rows: readonly Row[], column: string | null, into: Row[], late: Row[]) => {
      for (const r of rows) {
        if (column !== null && isLate(watermarkTimeOf(r[column]), batch)) late.push(r);
        else into.push(r);
      }
    };
    return {
      add: (rows) => take(rows, this.sides.leftEventColumn, left, lateLeft),
      addRight: (rows) => take(rows, this.sides.rightEventColumn, right, lateRight),
      finish: (state) => this.finish(batch, left, right, lateLeft, lateRight, state),
    };
  }

  /** The state id of a row's key values (all of them, nulls too: a row with a null key is buffered but never matches). */
  private keyOf(row: Row, side: Side): { id: string; matchable: boolean } {
    const values = this.join.on.map((k) => (row[side === 'L' ? k.left : k.right] ?? null) as Json);
    return { id: stateId(values), matchable: values.every((v) => v !== null) };
  }

  /** Whether the pair satisfies the time range: right + lower <= left <= right + upper (strict where asked). */
  private inRange(l: Row, r: Row): boolean {
    const tr = this.join.timeRange;
    if (!tr) return true;
    const lt = l[tr.left] as Micros | null | undefined;
    const rt = r[tr.right] as Micros | null | undefined;
    if (lt === null || lt === undefined || rt === null || rt === undefined) return false;
    if (tr.lowerUs !== null) {
      const lo = addMicros(rt, tr.lowerUs);
      if (tr.lowerStrict ? !(lo < lt) : !(lo <= lt)) return false;
    }
    if (tr.upperUs !== null) {
      const hi = addMicros(rt, tr.upperUs);
      if (tr.upperStrict ? !(lt < hi) : !(lt <= hi)) return false;
    }
    return true;
  }

  /** Whether the pair satisfies the condition items on both sides' columns. */
  private pairHolds(l: Row, r: Row): boolean {
    for (const p of this.pairChecks) if (!holds(p, l, r)) return false;
    const pair = this.join.conditionExpr?.pair;
    return !pair?.length || passes(pair, pairRow(l, r));
  }

  /**
   * When a buffered row of a side leaves the state (ms): removable once this is <= the eviction
   * watermark (null: never). Its time t is in µs: t − offset × 1000 <= W × 1000 exactly when
   * ceilMillis(t) − offset <= W (batch.ts).
   */
  private removeAt(row: Row, side: Side): number | null {
    const removal: JoinRemoval = side === 'L' ? this.sides.leftRemoval : this.sides.rightRemoval;
    if (removal === null) return null;
    const t = watermarkTimeOf(row[removal.column]);
    if (t === null || t === undefined) return null;
    return removal.kind === 'key' ? ceilMillis(t) : ceilMillis(t) - removal.offsetMs;
  }

  /** An output row: the using keys, the left's other columns, the right's (nulls for a missing side). */
  private joined(l: Row | null, r: Row | null): Row {
    const out: Row = {};
    for (const k of this.usingKeys) out[k] = l ? (l[k] ?? null) : (r![k] ?? null);
    for (const c of this.leftOthers) out[c] = l ? (l[c] ?? null) : null;
    for (const c of this.rightOthers) out[c] = r ? (r[c] ?? null) : null;
    return out;
  }

  private entryId(side: Side, keyId: string): string {
    return side + keyId;
  }

  private decode(entry: StateEntry, side: Side): Buffered[] {
    const names = side === 'L' ? this.leftNames : this.rightNames;
    const value = entry.value as { r?: Json[][] } | null;
    return (value?.r ?? []).map((cells) => {
      const row: Row = {};
      names.forEach((n, i) => (row[n] = cells[i + 1] as Row[string]));
      return { row, matched: cells[0] === 1 };
    });
  }

  private encode(rows: readonly Buffered[], side: Side): Json {
    const names = side === 'L' ? this.leftNames : this.rightNames;
    return { r: rows.map((b) => [b.matched ? 1 : 0, ...names.map((n) => (b.row[n] ?? null) as Json)]) };
  }

  private async finish(batch: BatchMeta, left: Row[], right: Row[], lateLeft: Row[], lateRight: Row[], state: StateStore): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    const entries = new Map<string, Entry>();
    const leftKeys = left.map((r) => this.keyOf(r, 'L'));
    const rightKeys = right.map((r) => this.keyOf(r, 'R'));
    // both sides of every key the batch touches, as of version N−1
    const wanted = new Set<string>();
    for (const k of [...leftKeys, ...rightKeys]) {
      wanted.add(this.entryId('L', k.id));
      wanted.add(this.entryId('R', k.id));
    }
    const keyOfEntry = (id: string): StateKey => ({ id, evictAt: null, partition: statePartition(id.slice(1), this.partitions) });
    const stored = wanted.size ? await state.get(this.spec, [...wanted].map(keyOfEntry), version) : new Map<string, StateEntry>();
    const load = (side: Side, keyId: string, found?: StateEntry): Entry => {
      const id = this.entryId(side, keyId);
      let e = entries.get(id);
      if (!e) {
        const s = found ?? stored.get(id);
        const rows = s ? this.decode(s, side) : [];
        e = { side, keyId, rows, storedRows: rows.length, changed: false };
        entries.set(id, e);
      }
      return e;
    };
    const out: Row[] = [];

    // 1. the batch's left rows, matched with the right rows buffered by earlier batches
    left.forEach((l, i) => {
      if (!rowHolds(this.leftChecks, l) || !passes(this.join.conditionExpr?.left, l)) {
        if (this.leftOuter) out.push(this.joined(l, null));
        return;
      }
      const key = leftKeys[i];
      let matched = false;
      if (key.matchable) {
        const partners = load('R', key.id);
        for (const p of partners.rows) {
          if (!this.inRange(l, p.row) || !this.pairHolds(l, p.row)) continue;
          matched = true;
          if (!this.semi) out.push(this.joined(l, p.row));
          if (!p.matched && this.rightOuter) {
            p.matched = true;
            partners.changed = true;
          }
        }
      }
      if (this.semi && matched) {
        out.push(l);
        return;
      }
      const own = load('L', key.id);
      own.rows.push({ row: l, matched });
      own.changed = true;
    });

    // 2. the batch's right rows, matched with the buffered left rows (this batch's included)
    right.forEach((r, i) => {
      if (!rowHolds(this.rightChecks, r) || !passes(this.join.conditionExpr?.right, r)) {
        if (this.rightOuter) out.push(this.joined(null, r));
        return;
      }
      const key = rightKeys[i];
      let matched = false;
      if (key.matchable) {
        const partners = load('L', key.id);
        for (const p of partners.rows) {
          if (this.semi && p.matched) continue;
          if (!this.inRange(p.row, r) || !this.pairHolds(p.row, r)) continue;
          matched = true;
          out.push(this.semi ? p.row : this.joined(p.row, r));
          // (a left row's flag only matters where it decides: its outer row, a semi join's first match)
          if (!p.matched && (this.leftOuter || this.semi)) {
            p.matched = true;
            partners.changed = true;
          }
        }
      }
      // a right row the state watermark already removes is not kept, unless it is an outer side's unmatched row
      const at = this.removeAt(r, 'R');
      const removable = at !== null && at <= batch.evictWm;
      if (!removable || (this.rightOuter && !matched)) {
        const own = load('R', key.id);
        own.rows.push({ row: r, matched });
        own.changed = true;
      }
    });

    // 3. what the state watermarks remove leaves the buffer; an outer side's unmatched rows are emitted
    if (this.runsNoDataBatches) {
      for (const e of await state.expired(this.spec, batch.evictWm, version)) {
        const side = e.key.id[0] as Side;
        load(side, e.key.id.slice(1), e);
      }
      const outer: Record<Side, Row[]> = { L: [], R: [] };
      for (const e of entries.values()) {
        const kept: Buffered[] = [];
        for (const b of e.rows) {
          const at = this.removeAt(b.row, e.side);
          if (at !== null && at <= batch.evictWm) {
            if (!b.matched && (e.side === 'L' ? this.leftOuter : this.rightOuter))
              outer[e.side].push(e.side === 'L' ? this.joined(b.row, null) : this.joined(null, b.row));
          } else kept.push(b);
        }
        if (kept.length !== e.rows.length) {
          e.rows = kept;
          e.changed = true;
        }
      }
      out.push(...outer.L, ...outer.R);
    }

    const changes: StateChange[] = [];
    let delta = 0;
    for (const [id, e] of entries) {
      if (!e.changed) continue;
      delta += e.rows.length - e.storedRows;
      if (e.rows.length === 0 && e.storedRows === 0) continue;
      let evictAt: number | null = null;
      for (const b of e.rows) {
        const at = this.removeAt(b.row, e.side);
        if (at !== null && (evictAt === null || at < evictAt)) evictAt = at;
      }
      const key: StateKey = { id, evictAt, partition: statePartition(e.keyId, this.partitions) };
      changes.push({ key, value: e.rows.length ? this.encode(e.rows, e.side) : null });
    }
    return { rows: out, changes: changes.sort(byId), late: [...lateLeft, ...lateRight], lateRightFrom: lateLeft.length, stateRowsDelta: delta };
  }
}

/** Whether `row` passes every check (a condition's conjuncts compiled from an expression). */
function passes(checks: readonly JoinConditionCheck[] | undefined, row: Row): boolean {
  if (checks) for (const c of checks) if (!c.test(row)) return false;
  return true;
}

/** The columns of a join's late rows: the left side's, then (from lateRightFrom) the right side's. */
export function lateRowColumns(inputColumns: ColumnInfo[], sides: JoinSides | undefined, index: number, lateRightFrom: number | undefined): ColumnInfo[] {
  return sides && lateRightFrom !== undefined && index >= lateRightFrom ? sides.rightColumns : inputColumns;
}
