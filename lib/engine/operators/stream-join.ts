/**
 * Stream-stream joins (Spark's StreamingSymmetricHashJoinExec, FORMAT-2 "Stream-stream joins"):
 * both sides' rows are buffered in the state store until the state watermark says no future row
 * of the other side can match them.
 *
 *   left rows of the batch (late ones dropped) ─▶ matched with the buffered right rows ─▶ buffered
 *   right rows of the batch ─▶ matched with the buffered left rows (this batch's included) ─▶ buffered
 *   ─▶ rows the state watermark removes leave the buffer; an outer side's unmatched ones are
 *      emitted with nulls for the other side (typically in the no-data batch after the watermark moved)
 *
 * State: blocks of rows, as aggregation state is packed into few items. A block holds rows of one
 * side and one state partition that one batch buffered, cut in order of the time they leave the
 * buffer (their removal time) into runs of at most BLOCK_ROWS rows (and about BLOCK_BYTES): its id
 * `<side><partition>.<batch>.<n>`, its value the rows column by column,
 * `{ m: "0110…", c: [[values of the side's first column], …] }` (m: whether each row has matched; a
 * TIMESTAMP column as `{ d: [first, differences…] }` where that is exact), its evictAt the earliest
 * removal time of its rows (fixed for its life: rows only leave it), so the store keeps the blocks
 * of one stretch of event time together and `expired` would find every block with a row to
 * remove. A batch writes new blocks for the rows it buffers; rewrites a block only when a row left
 * it and others stay; deletes a block whose rows all left (eviction mostly deletes whole items); and
 * a flag set on a row of an earlier batch (an outer side's or a semi join's first match) is written
 * to the block's flags entry (`<block id>~`, `{ m }`), not the block. Rows of one key can lie in
 * many blocks, so the operator reads its whole state (`all`) at the first batch of a run and keeps
 * it, indexed by side and key, for the run's later batches (as the aggregation keeps its groups),
 * and reads it again after a replay. The two sides of a key share a state partition. State of the
 * per-key layout of an earlier sluice is refused by the checkpoint's stateful shape (plan/shape.ts,
 * `joinState`).
 */
import { SluiceError } from '../errors';
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

/** Most rows in a block. */
const BLOCK_ROWS = 1024;
/**
 * About the most bytes of JSON text a block's rows take (estimated: rowBytes, a string by its
 * length): even if every character of its strings took six bytes escaped, a block stays below the
 * 400 KB of an item uncompressed.
 */
const BLOCK_BYTES = 60 * 1024;

/** A buffered row. */
interface Buffered {
  readonly row: Row;
  /** Whether it has matched a row of the other side. */
  matched: boolean;
  /** Its index key (joinKeyOf), null when a key value is null: buffered, never matched. */
  readonly key: string | null;
  /** When it leaves the buffer (ms; null: never). */
  readonly removeAt: number | null;
  /** The stored block holding it (null: buffered by this batch, not yet in a block). */
  block: Block | null;
  /** The next buffered row of its side with its key (the index's list, oldest first). */
  next: Buffered | undefined;
  /** On the first row of a key's list: the last one. */
  last: Buffered | undefined;
}

/** A block of one side's rows, as stored. */
interface Block {
  readonly key: StateKey;
  readonly side: Side;
  rows: Buffered[];
  /** A row left it in this batch: rewritten, or deleted when empty. */
  changed: boolean;
  /** A row's flag was set in this batch: its flags entry is written (unless the block is). */
  flagged: boolean;
  /** Whether a flags entry is stored beside it (its rows' flags since the block was written). */
  hasFlags: boolean;
}

/** The id of a block's flags entry. */
const flagsId = (blockId: string) => `${blockId}~`;

/** A block's value: its rows' flags ("1": matched), and its columns, each an array or, a TIMESTAMP column, `{ d: [first, differences…] }`. */
interface BlockValue {
  readonly m: string;
  readonly c: Array<Json[] | { d: number[] }>;
}

/** The buffered rows as of a version: the blocks and, per side, the rows by key (each key's first row, its list through `next`). */
interface JoinState {
  readonly version: number;
  readonly blocks: Map<string, Block>;
  readonly index: Record<Side, Map<string, Buffered>>;
}

/** An output row of a pair (or of one side and nulls): the using keys, the left's other columns, the right's. */
type Joiner = (l: Row | null, r: Row | null) => Row;

export class StreamJoinOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly partitions: number;
  private readonly leftNames: string[];
  private readonly rightNames: string[];
  /** Per side, whether each column is a TIMESTAMP (stored as differences where exact: encodeTimes). */
  private readonly leftTimes: boolean[];
  private readonly rightTimes: boolean[];
  private readonly leftOthers: string[];
  private readonly rightOthers: string[];
  private readonly usingKeys: string[];
  private readonly leftKeys: string[];
  private readonly rightKeys: string[];
  /** One key, a STRING on both sides: its value itself indexes the rows. */
  private readonly stringKey: boolean;
  private readonly leftOuter: boolean;
  private readonly rightOuter: boolean;
  private readonly semi: boolean;
  /** Condition items checked in the join, per side (the others filter the inputs: query/frame.ts pushFilter). */
  private readonly leftChecks: StreamJoinSpec['condition'];
  private readonly rightChecks: StreamJoinSpec['condition'];
  /** Condition items on the pair (an anyOf naming columns of both sides): a pair failing one is not a match. */
  private readonly pairChecks: StreamJoinSpec['condition'];
  /** The buffered rows as the last batch of this run left them (null: read them from the store). */
  private cache: JoinState | null = null;
  /** An output row: the using keys, the left's other columns, the right's (nulls for a missing side). */
  private readonly joined: Joiner;

  constructor(
    private readonly join: StreamJoinSpec,
    private readonly sides: JoinSides,
    cfg: OperatorConfig,
  ) {
    this.partitions = cfg.statePartitions ?? 1;
    this.leftNames = cfg.inputColumns.map((c) => c.name);
    this.rightNames = sides.rightColumns.map((c) => c.name);
    this.leftTimes = cfg.inputColumns.map((c) => c.type === 'TIMESTAMP' && !c.window);
    this.rightTimes = sides.rightColumns.map((c) => c.type === 'TIMESTAMP' && !c.window);
    const using = new Set(join.on.filter((k) => k.using).map((k) => k.left));
    this.usingKeys = [...using];
    this.leftKeys = join.on.map((k) => k.left);
    this.rightKeys = join.on.map((k) => k.right);
    const keyColumn = join.on.length === 1 ? cfg.inputColumns.find((c) => c.name === join.on[0].left) : undefined;
    this.stringKey = keyColumn !== undefined && keyColumn.type === 'STRING' && !keyColumn.window;
    this.leftOthers = this.leftNames.filter((c) => !using.has(c));
    this.rightOthers = this.rightNames.filter((c) => !using.has(c));
    this.leftOuter = join.type === 'leftOuter' || join.type === 'fullOuter';
    this.rightOuter = join.type === 'rightOuter' || join.type === 'fullOuter';
    this.semi = join.type === 'leftSemi';
    const left = cfg.inputColumns;
    this.leftChecks = join.condition.filter((p) => predicateSide(p, left) === 'left');
    this.rightChecks = join.condition.filter((p) => predicateSide(p, left) === 'right');
    this.pairChecks = join.condition.filter((p) => predicateSide(p, left) === 'both');
    // a block's evictAt is the earliest removal time of its rows, fixed when it is written; the
    // store keeps blocks by it, a second's blocks together
    this.spec = { operatorId: cfg.operatorId, fixedEviction: true, evictionGranularityMs: 1000 };
    this.runsNoDataBatches = sides.leftRemoval !== null || sides.rightRemoval !== null;
    this.joined = this.joiner();
  }

  begin(batch: BatchMeta): Accumulator {
    const left: Row[] = [];
    const right: Row[] = [];
    const lateLeft: Row[] = [];
    const lateRight: Row[] = [];
    const take = (rows: readonly Row[], column: string | null, into: Row[], late: Row[]) => {
      if (column === null) {
        for (const r of rows) into.push(r);
        return;
      }
      for (const r of rows) {
        if (isLate(watermarkTimeOf(r[column]), batch)) late.push(r);
        else into.push(r);
      }
    };
    return {
      add: (rows) => take(rows, this.sides.leftEventColumn, left, lateLeft),
      addRight: (rows) => take(rows, this.sides.rightEventColumn, right, lateRight),
      finish: (state) => this.finish(batch, left, right, lateLeft, lateRight, state),
    };
  }

  /**
   * The index key of a row's key values (null when one is null: such a row is buffered but never
   * matches). Equal for equal values as stateId sees them (a number and a bigint of one value
   * alike), different for values of different kinds (the string "1" and the number 1). The index
   * lives in memory only: no key is stored. A STRING key (both sides' types agree: plan/chain.ts
   * joinSides) is its own index key.
   */
  private joinKeyOf(row: Row, columns: readonly string[]): string | null {
    if (this.stringKey) {
      const v = row[columns[0]];
      if (typeof v === 'string') return v;
      if (v === null || v === undefined) return null;
      // (a STRING column holds strings: the readers and stages make them so; anything else by its state id)
      return `\u0000${stateId([v as Json])}`;
    }
    if (columns.length === 1) {
      const v = row[columns[0]];
      if (v === null || v === undefined) return null;
      if (typeof v === 'string') return `s${v}`;
      if (typeof v === 'number' || typeof v === 'bigint') return `n${String(v)}`;
      return `j${stateId([v as Json])}`;
    }
    const values: Json[] = [];
    for (const c of columns) {
      const v = row[c];
      if (v === null || v === undefined) return null;
      values.push(v as Json);
    }
    return `j${stateId(values)}`;
  }

  /** The state partition of a row: a hash of its key values (the two sides of a key share it). */
  private partitionOfRow(row: Row, columns: readonly string[]): number {
    if (this.partitions <= 1) return 0;
    return statePartition(stateId(columns.map((c) => (row[c] ?? null) as Json)), this.partitions);
  }

  /** Whether the pair satisfies the time range: right + lower <= left <= right + upper (strict where asked). */
  private inRange(l: Row, r: Row): boolean {
    const tr = this.join.timeRange;
    if (!tr) return true;
    const lt = l[tr.left] as Micros | null | undefined;
    const rt = r[tr.right] as Micros | null | undefined;
    if (typeof lt === 'number' && typeof rt === 'number') {
      // (the bounds as numbers: exact while the sums stay safe integers, else the exact path below)
      const lo = tr.lowerUs === null ? null : rt + tr.lowerUs;
      const hi = tr.upperUs === null ? null : rt + tr.upperUs;
      if ((lo === null || Number.isSafeInteger(lo)) && (hi === null || Number.isSafeInteger(hi))) {
        if (lo !== null && (tr.lowerStrict ? !(lo < lt) : !(lo <= lt))) return false;
        if (hi !== null && (tr.upperStrict ? !(lt < hi) : !(lt <= hi))) return false;
        return true;
      }
    }
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
  private removeAt(row: Row, removal: JoinRemoval): number | null {
    if (removal === null) return null;
    const t = watermarkTimeOf(row[removal.column]);
    if (t === null || t === undefined) return null;
    return removal.kind === 'key' ? ceilMillis(t) : ceilMillis(t) - removal.offsetMs;
  }

  /**
   * The output row's function: one generated object literal (every row of one hidden class, as
   * rows.ts rowExtender makes them), or the loops when a column is named `__proto__`.
   */
  private joiner(): Joiner {
    const { usingKeys, leftOthers, rightOthers } = this;
    const all = [...usingKeys, ...leftOthers, ...rightOthers];
    if (all.includes('__proto__') || new Set(all).size !== all.length) {
      return (l, r) => {
        const out: Row = {};
        for (const k of usingKeys) out[k] = l ? (l[k] ?? null) : (r![k] ?? null);
        for (const c of leftOthers) out[c] = l ? (l[c] ?? null) : null;
        for (const c of rightOthers) out[c] = r ? (r[c] ?? null) : null;
        return out;
      };
    }
    const q = JSON.stringify;
    const fields = [
      ...usingKeys.map((k) => `${q(k)}: l !== null ? (l[${q(k)}] ?? null) : (r[${q(k)}] ?? null)`),
      ...leftOthers.map((c) => `${q(c)}: l !== null ? (l[${q(c)}] ?? null) : null`),
      ...rightOthers.map((c) => `${q(c)}: r !== null ? (r[${q(c)}] ?? null) : null`),
    ];
    return new Function(`'use strict'; return function (l, r) { return { ${fields.join(', ')} }; };`)() as Joiner;
  }

  /** The buffered rows as of `version`: those this run's last batch left, else read whole from the store. */
  private async load(state: StateStore, version: number): Promise<JoinState> {
    const cached = this.cache;
    // (dropped while a batch works on it: a batch that fails leaves nothing half changed behind)
    this.cache = null;
    if (cached !== null && cached.version === version) return cached;
    const loaded: JoinState = { version, blocks: new Map(), index: { L: new Map(), R: new Map() } };
    const flags: StateEntry[] = [];
    for (const e of await state.all(this.spec, version)) {
      const side = e.key.id[0] as Side;
      if (side !== 'L' && side !== 'R') throw this.foreign(e);
      if (e.key.id.endsWith('~')) {
        flags.push(e);
        continue;
      }
      const block: Block = { key: e.key, side, rows: [], changed: false, flagged: false, hasFlags: false };
      block.rows = this.decode(e, block);
      loaded.blocks.set(e.key.id, block);
    }
    for (const e of flags) {
      const block = loaded.blocks.get(e.key.id.slice(0, -1));
      const m = (e.value as { m?: unknown } | null)?.m;
      if (block === undefined || typeof m !== 'string' || m.length !== block.rows.length) throw this.foreign(e);
      block.hasFlags = true;
      for (let i = 0; i < m.length; i++) block.rows[i].matched = m.charCodeAt(i) === 49;
    }
    for (const block of loaded.blocks.values()) {
      const index = loaded.index[block.side];
      for (const b of block.rows) if (b.key !== null) indexAdd(index, b);
    }
    return loaded;
  }

  private foreign(e: StateEntry): Error {
    return new SluiceError(
      `state of stream-stream join \`${this.spec.operatorId}\` holds an entry \`${e.key.id.slice(0, 80)}\` that is no block of buffered rows: it was written by another sluice (the per-key layout) or outside sluice; give the query a new checkpoint location and backfill`,
    );
  }

  private decode(entry: StateEntry, block: Block): Buffered[] {
    const side = block.side;
    const names = side === 'L' ? this.leftNames : this.rightNames;
    const keys = side === 'L' ? this.leftKeys : this.rightKeys;
    const removal = side === 'L' ? this.sides.leftRemoval : this.sides.rightRemoval;
    const value = entry.value as { m?: unknown; c?: unknown } | null;
    const m = value?.m;
    const stored = value?.c;
    if (typeof m !== 'string' || !Array.isArray(stored) || stored.length !== names.length) throw this.foreign(entry);
    const c: Json[][] = [];
    for (const col of stored as unknown[]) {
      const values = decodeColumn(col);
      if (values === null || values.length !== m.length) throw this.foreign(entry);
      c.push(values);
    }
    const out: Buffered[] = new Array(m.length);
    for (let i = 0; i < m.length; i++) {
      const row: Row = {};
      for (let j = 0; j < names.length; j++) row[names[j]] = c[j][i] as Row[string];
      out[i] = {
        row,
        matched: m.charCodeAt(i) === 49,
        key: this.joinKeyOf(row, keys),
        removeAt: this.removeAt(row, removal),
        block,
        next: undefined,
        last: undefined,
      };
    }
    return out;
  }

  private encode(rows: readonly Buffered[], side: Side): Json {
    const names = side === 'L' ? this.leftNames : this.rightNames;
    const times = side === 'L' ? this.leftTimes : this.rightTimes;
    const columns: BlockValue['c'] = [];
    for (let j = 0; j < names.length; j++) {
      const name = names[j];
      const values: Json[] = new Array(rows.length);
      for (let i = 0; i < rows.length; i++) values[i] = (rows[i].row[name] ?? null) as Json;
      columns.push(times[j] ? encodeTimes(values) : values);
    }
    const value: BlockValue = { m: flagsOf(rows), c: columns };
    return value as unknown as Json;
  }

  private async finish(batch: BatchMeta, left: Row[], right: Row[], lateLeft: Row[], lateRight: Row[], state: StateStore): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    const st = await this.load(state, version);
    const out: Row[] = [];
    const fresh: Record<Side, Buffered[]> = { L: [], R: [] };
    const { leftRemoval, rightRemoval } = this.sides;
    const leftCheck = this.join.conditionExpr?.left;
    const rightCheck = this.join.conditionExpr?.right;
    const plainPair = this.pairChecks.length === 0 && !this.join.conditionExpr?.pair?.length;
    const indexL = st.index.L;
    const indexR = st.index.R;

    // 1. the batch's left rows, matched with the right rows buffered by earlier batches
    for (const l of left) {
      if ((this.leftChecks.length > 0 && !rowHolds(this.leftChecks, l)) || (leftCheck !== undefined && !passes(leftCheck, l))) {
        if (this.leftOuter) out.push(this.joined(l, null));
        continue;
      }
      const key = this.joinKeyOf(l, this.leftKeys);
      let matched = false;
      for (let p = key === null ? undefined : indexR.get(key); p !== undefined; p = p.next) {
        if (!this.inRange(l, p.row) || (!plainPair && !this.pairHolds(l, p.row))) continue;
        matched = true;
        if (!this.semi) out.push(this.joined(l, p.row));
        if (!p.matched && this.rightOuter) setMatched(p);
      }
      if (this.semi && matched) {
        out.push(l);
        continue;
      }
      const b: Buffered = { row: l, matched, key, removeAt: this.removeAt(l, leftRemoval), block: null, next: undefined, last: undefined };
      fresh.L.push(b);
      if (key !== null) indexAdd(indexL, b);
    }

    // 2. the batch's right rows, matched with the buffered left rows (this batch's included)
    for (const r of right) {
      if ((this.rightChecks.length > 0 && !rowHolds(this.rightChecks, r)) || (rightCheck !== undefined && !passes(rightCheck, r))) {
        if (this.rightOuter) out.push(this.joined(null, r));
        continue;
      }
      const key = this.joinKeyOf(r, this.rightKeys);
      let matched = false;
      for (let p = key === null ? undefined : indexL.get(key); p !== undefined; p = p.next) {
        if (this.semi && p.matched) continue;
        if (!this.inRange(p.row, r) || (!plainPair && !this.pairHolds(p.row, r))) continue;
        matched = true;
        // (a semi join's left row from the buffer is copied: a later stage may change the row it is handed)
        out.push(this.semi ? { ...p.row } : this.joined(p.row, r));
        // (a left row's flag only matters where it decides: its outer row, a semi join's first match)
        if (!p.matched && (this.leftOuter || this.semi)) setMatched(p);
      }
      // a right row the state watermark already removes is not kept, unless it is an outer side's unmatched row
      const at = this.removeAt(r, rightRemoval);
      const removable = at !== null && at <= batch.evictWm;
      if (!removable || (this.rightOuter && !matched)) {
        const b: Buffered = { row: r, matched, key, removeAt: at, block: null, next: undefined, last: undefined };
        fresh.R.push(b);
        if (key !== null) indexAdd(indexR, b);
      }
    }

    // 3. what the state watermarks remove leaves the buffer; an outer side's unmatched rows are emitted
    let delta = fresh.L.length + fresh.R.length;
    const changes: StateChange[] = [];
    if (this.runsNoDataBatches) {
      const outer: Record<Side, Row[]> = { L: [], R: [] };
      const emitsOuter: Record<Side, boolean> = { L: this.leftOuter, R: this.rightOuter };
      const removed = (b: Buffered, side: Side) => {
        if (!b.matched && emitsOuter[side]) outer[side].push(side === 'L' ? this.joined(b.row, null) : this.joined(null, b.row));
        if (b.key !== null) indexRemove(st.index[side], b);
      };
      for (const block of st.blocks.values()) {
        const evictAt = block.key.evictAt;
        if (evictAt === null || evictAt > batch.evictWm) continue;
        const kept: Buffered[] = [];
        for (const b of block.rows) {
          if (b.removeAt !== null && b.removeAt <= batch.evictWm) {
            removed(b, block.side);
            delta--;
          } else kept.push(b);
        }
        if (kept.length !== block.rows.length) {
          block.rows = kept;
          block.changed = true;
        }
      }
      for (const side of ['L', 'R'] as const) {
        const rows = fresh[side];
        let n = 0;
        for (const b of rows) {
          if (b.removeAt !== null && b.removeAt <= batch.evictWm) {
            removed(b, side);
            delta--;
          } else rows[n++] = b;
        }
        rows.length = n;
      }
      out.push(...outer.L, ...outer.R);
    }

    // 4. the changed blocks rewritten (or deleted), the batch's kept rows in new blocks
    // (a flag set alone writes the block's small flags entry, not its rows)
    for (const [id, block] of st.blocks) {
      if (block.changed) {
        if (block.rows.length === 0) {
          changes.push({ key: block.key, value: null });
          st.blocks.delete(id);
        } else changes.push({ key: block.key, value: this.encode(block.rows, block.side) });
        if (block.hasFlags) changes.push({ key: { ...block.key, id: flagsId(id) }, value: null });
        block.hasFlags = false;
      } else if (block.flagged) {
        changes.push({ key: { ...block.key, id: flagsId(id) }, value: { m: flagsOf(block.rows) } });
        block.hasFlags = true;
      }
      block.changed = false;
      block.flagged = false;
    }
    for (const side of ['L', 'R'] as const) {
      for (const block of this.newBlocks(fresh[side], side, batch.batchId)) {
        st.blocks.set(block.key.id, block);
        changes.push({ key: block.key, value: this.encode(block.rows, side) });
      }
    }
    this.cache = { ...st, version: batch.batchId };
    return { rows: out, changes: changes.sort(byId), late: [...lateLeft, ...lateRight], lateRightFrom: lateLeft.length, stateRowsDelta: delta };
  }

  /**
   * The blocks of rows a batch buffers on one side: by state partition, in order of removal time
   * (rows that are never removed apart), cut at BLOCK_ROWS rows or about BLOCK_BYTES of text.
   * Their ids are `<side><partition>.<batch>.<n>`, new in every batch.
   */
  private newBlocks(rows: Buffered[], side: Side, batchId: number): Block[] {
    if (rows.length === 0) return [];
    const keys = side === 'L' ? this.leftKeys : this.rightKeys;
    const byPartition = new Map<number, Buffered[]>();
    if (this.partitions <= 1) byPartition.set(0, rows);
    else {
      for (const b of rows) {
        const p = this.partitionOfRow(b.row, keys);
        let list = byPartition.get(p);
        if (!list) byPartition.set(p, (list = []));
        list.push(b);
      }
    }
    const names = side === 'L' ? this.leftNames : this.rightNames;
    const out: Block[] = [];
    for (const [partition, list] of [...byPartition].sort(([a], [b]) => a - b)) {
      const timed: Buffered[] = [];
      const never: Buffered[] = [];
      for (const b of list) (b.removeAt === null ? never : timed).push(b);
      if (!inOrder(timed)) timed.sort((a, b) => a.removeAt! - b.removeAt!);
      for (const run of [timed, never]) {
        let start = 0;
        while (start < run.length) {
          let end = start;
          let bytes = 0;
          // (a row joins the block while the block stays within BLOCK_BYTES; a bigger row alone makes one)
          while (end < run.length && end - start < BLOCK_ROWS) {
            const size = rowBytes(run[end].row, names);
            if (end > start && bytes + size > BLOCK_BYTES) break;
            bytes += size;
            end++;
          }
          const rows = run.slice(start, end);
          const id = `${side}${partition}.${batchId}.${out.length}`;
          const key: StateKey = partition === 0 ? { id, evictAt: rows[0].removeAt } : { id, evictAt: rows[0].removeAt, partition };
          const block: Block = { key, side, rows, changed: false, flagged: false, hasFlags: false };
          for (const b of rows) b.block = block;
          out.push(block);
          start = end;
        }
      }
    }
    return out;
  }
}

/** Sets a buffered row's flag: its block's flags, if stored, are written again. */
function setMatched(b: Buffered): void {
  b.matched = true;
  if (b.block !== null) b.block.flagged = true;
}

/** Appends a row to its key's list. */
function indexAdd(index: Map<string, Buffered>, b: Buffered): void {
  const first = index.get(b.key!);
  b.next = undefined;
  if (first === undefined) {
    b.last = b;
    index.set(b.key!, b);
  } else {
    first.last!.next = b;
    first.last = b;
  }
}

/** Takes a row out of its key's list (rows leave about in the order they came: mostly the first). */
function indexRemove(index: Map<string, Buffered>, b: Buffered): void {
  const first = index.get(b.key!);
  if (first === undefined) return;
  if (first === b) {
    const rest = b.next;
    if (rest === undefined) index.delete(b.key!);
    else {
      rest.last = b.last;
      index.set(b.key!, rest);
    }
  } else {
    let prev = first;
    while (prev.next !== undefined && prev.next !== b) prev = prev.next;
    if (prev.next !== b) return;
    prev.next = b.next;
    if (first.last === b) first.last = prev;
  }
  b.next = undefined;
  b.last = undefined;
}

function flagsOf(rows: readonly Buffered[]): string {
  let m = '';
  for (const b of rows) m += b.matched ? '1' : '0';
  return m;
}

/**
 * A TIMESTAMP column's values (epoch µs) as `{ d: [first, differences…] }` when every value and
 * every difference is a safe integer (so the sums that read them back are exact), else as they are.
 * Rows of a block come in time order: the differences are short, and compress well.
 */
function encodeTimes(values: Json[]): Json[] | { d: number[] } {
  const d: number[] = new Array(values.length);
  let prev = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || Object.is(v, -0)) return values;
    const diff = v - prev;
    if (!Number.isSafeInteger(diff)) return values;
    d[i] = diff;
    prev = v;
  }
  return { d };
}

/** A stored column's values (null: not a column encode wrote). */
function decodeColumn(col: unknown): Json[] | null {
  if (Array.isArray(col)) return col as Json[];
  const d = (col as { d?: unknown } | null)?.d;
  if (!Array.isArray(d)) return null;
  const out: Json[] = new Array(d.length);
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    const x = d[i];
    if (typeof x !== 'number' || !Number.isSafeInteger(x)) return null;
    sum += x;
    if (!Number.isSafeInteger(sum)) return null;
    out[i] = sum;
  }
  return out;
}

/** Whether rows (all with a removal time) are in order of it. */
function inOrder(rows: readonly Buffered[]): boolean {
  for (let i = 1; i < rows.length; i++) if (rows[i].removeAt! < rows[i - 1].removeAt!) return false;
  return true;
}

/** About the bytes a row takes in a block's JSON. */
function rowBytes(row: Row, names: readonly string[]): number {
  let n = 2;
  for (const c of names) {
    const v = row[c];
    n +=
      typeof v === 'string'
        ? v.length + 3
        : v !== null && typeof v === 'object'
          ? JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)).length + 1
          : 21;
  }
  return n;
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
