/**
 * The in-batch form of count, sum and avg: two double slots per aggregation, after a mark (the
 * batch that last touched the group), for every group of a batch in one Float64Array (the group
 * in slot k at offset k * width), updated without allocating per row (a Json[] buffer boxes every
 * new sum in a fresh HeapNumber) and without loading the group's buffer. Turned into the stored Buffer form once per group and batch, with
 * the values updateBuffer would have given: the same additions in the same order, from 0 (Spark's
 * sum starts at 0.0, so a sum of -0.0 alone is 0.0).
 *
 * PERFORMANCE TRICK (STYLE: one marked module with the benchmark that justifies it). Measured
 * by issue 13's A/B on the engine section of `npm run bench` (bench/engine-run.ts on the bench's
 * plain ports, 1M events, 3 rounds a process; shared 2-core machine, load 1-8; the shipped code
 * and a copy with this off, interleaved, 10 processes each): the engine at a median 0.72x the
 * JSON.parse floor with it (0.63x-1.04x), 0.66x without (0.54x-0.77x); lower without it in 9 of
 * the 10 pairs (each pair's ratio a median 0.91 of the shipped one), its best whole run 15% slower.
 * The same A/B could not tell SlotTable (a hash table for the trie's leaves) or SmallCache (the
 * window texts) from noise, and they were removed; a CPU profile then put the group lookup and the
 * load of each row's group object at a fifth of the engine, and SlotTable came back with short keys
 * inline, the batch mark here (README Benchmark: 0.91x against 0.74x in an interleaved A/B).
 * Remove it only with a benchmark run that cannot tell it from noise.
 */
import { type Buffer, type CompiledAgg, stringToDouble } from '../aggregates';
import type { Json, Row } from '../ports';

/** What one aggregation does with its two slots. */
type NumericOp = typeof OP_COUNT_ALL | typeof OP_COUNT | typeof OP_SUM | typeof OP_AVG;
/** count(*): slot 0 counts rows. */
const OP_COUNT_ALL = 0;
/** count(column): slot 0 counts non-null values. */
const OP_COUNT = 1;
/** sum(column): slot 0 adds up, slot 1 counts the values added (none: null). */
const OP_SUM = 2;
/** avg(column): slot 0 adds up, slot 1 counts; stored as [sum, count]. */
const OP_AVG = 3;

const SLOTS_PER_AGG = 2;
const INITIAL_GROUPS = 1024;

/** A value of a sum or avg column as a number (as aggregates.ts reads it), or null when it adds nothing. */
function addend(raw: unknown): number | null {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'bigint') return Number(raw); // avg of a BIGINT: a DOUBLE, as in Spark
  if (typeof raw !== 'string') return null;
  // (a STRING column's sum/avg has a check and so no numeric slots: NumericSlots.of)
  return stringToDouble(raw);
}

/** The group's first double: the batch that last touched it (NaN: none since the slot was given). */
const MARK = 0;

export class NumericSlots {
  /** Per aggregation: what it counts or adds up. */
  private readonly ops: readonly NumericOp[];
  /** Per aggregation: its column ('' for count(*)). */
  private readonly columns: readonly string[];
  /** Doubles per group. */
  private readonly width: number;
  private values: Float64Array;

  /** The numeric form of the aggregations, or null when one of them is not count, sum or avg. */
  static of(aggs: readonly CompiledAgg[]): NumericSlots | null {
    const ops: NumericOp[] = [];
    const columns: string[] = [];
    for (const agg of aggs) {
      // a row error of the input (a STRING column's bad text) is checked by the overflow guard
      if (agg.check) return null;
      const { fn, column } = agg.spec;
      if (fn === 'count') ops.push(column === undefined ? OP_COUNT_ALL : OP_COUNT);
      else if (fn === 'sum') {
        // a BIGINT or DECIMAL sum adds exactly (aggregates.ts), which doubles cannot
        if (agg.exact) return null;
        ops.push(OP_SUM);
      } else if (fn === 'avg') {
        if (agg.exact) return null; // a DECIMAL avg: exact too
        ops.push(OP_AVG);
      } else return null;
      columns.push(column ?? '');
    }
    return new NumericSlots(ops, columns);
  }

  private constructor(ops: NumericOp[], columns: string[]) {
    this.ops = ops;
    this.columns = columns;
    this.width = 1 + SLOTS_PER_AGG * ops.length;
    this.values = new Float64Array(INITIAL_GROUPS * this.width).fill(NaN);
  }

  /**
   * Whether the group in `slot` is touched for the first time in batch `batchId`; if so, its
   * doubles are reset. The mark sits next to the group's aggregates, so a row of a group already
   * seen in the batch costs one cache line here.
   */
  touch(slot: number, batchId: number): boolean {
    const at = slot * this.width;
    if (at + this.width <= this.values.length && this.values[at + MARK] === batchId) return false;
    this.reset(slot);
    this.values[at + MARK] = batchId;
    return true;
  }

  /** Forgets which batch touched the group in `slot` (a new group there). */
  unmark(slot: number): void {
    const at = slot * this.width;
    if (at + this.width <= this.values.length) this.values[at + MARK] = NaN;
  }

  /** Forgets which batch touched every slot (the operator starts its groups afresh). */
  unmarkAll(): void {
    this.values.fill(NaN);
  }

  /** Sets the doubles of the group in `slot` to their start values (growing the array to hold it). */
  reset(slot: number): void {
    const at = slot * this.width;
    if (at + this.width > this.values.length) this.grow(slot);
    const values = this.values;
    for (let i = 1; i < this.width; i++) values[at + i] = 0;
  }

  /** Adds a row to the group in `slot` (reset in this batch). */
  add(slot: number, row: Row): void {
    const { ops, columns, values } = this;
    const groupAt = slot * this.width + 1;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      const at = groupAt + SLOTS_PER_AGG * i;
      if (op === OP_COUNT_ALL) {
        values[at]++;
        continue;
      }
      const raw = row[columns[i]];
      if (raw === null || raw === undefined) continue;
      if (op === OP_COUNT) {
        values[at]++;
        continue;
      }
      const value = addend(raw);
      if (value === null) continue;
      values[at] += value;
      values[at + 1]++;
    }
  }

  /** The Buffer (the stored form, as initBuffer and updateBuffer make it) of the group in `slot`. */
  buffer(slot: number): Buffer {
    const { ops, values } = this;
    const groupAt = slot * this.width + 1;
    const buffer = new Array<Json>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      const at = groupAt + SLOTS_PER_AGG * i;
      if (op === OP_COUNT_ALL || op === OP_COUNT) buffer[i] = values[at];
      else if (op === OP_SUM) buffer[i] = values[at + 1] > 0 ? values[at] : null;
      else buffer[i] = [values[at], values[at + 1]];
    }
    return buffer;
  }

  private grow(slot: number): void {
    let groups = this.values.length / this.width;
    while (groups <= slot) groups *= 2;
    const values = new Float64Array(groups * this.width).fill(NaN);
    values.set(this.values);
    this.values = values;
  }
}

/**
 * A chunk's rows waiting for their numeric adds, with their groups' slots: the aggregation first
 * finds every row's slot (the trie and SlotTable lookups), then `flush` adds them in the order they
 * came (the same additions in the same order: the same doubles). The short loop of `flush` lets the
 * CPU overlap the first loads of several groups' doubles (a cache miss each over the tens of
 * thousands of live groups), which the long per-row path of the lookups could not.
 * bench/ab-engine.ts (9 interleaved rounds, 2026-12-03, load 1.3 to 1.7): 1.06x by CPU time
 * (median of the per-round ratios) over adding each row as its slot was found.
 */
export class PendingAdds {
  private slots = new Int32Array(1024);
  private readonly rows: Row[] = [];
  private n = 0;

  get size(): number {
    return this.n;
  }

  /** Forgets the rows (a chunk that threw left them). */
  clear(): void {
    this.n = 0;
    this.rows.length = 0;
  }

  push(slot: number, row: Row): void {
    if (this.n === this.slots.length) {
      const grown = new Int32Array(this.slots.length * 2);
      grown.set(this.slots);
      this.slots = grown;
    }
    this.slots[this.n] = slot;
    this.rows[this.n++] = row;
  }

  /**
   * Adds the rows to their groups' slots in `numeric`, in order; a group's first row of batch
   * `batchId` marks the group touched (touchedIn) and puts it on `touched`. Then forgets the rows.
   */
  flush<G extends { touchedIn: number }>(numeric: NumericSlots, batchId: number, groups: ReadonlyArray<G | undefined>, touched: G[]): void {
    const { slots, rows } = this;
    const n = this.n;
    for (let i = 0; i < n; i++) {
      const slot = slots[i];
      if (numeric.touch(slot, batchId)) {
        const g = groups[slot]!;
        g.touchedIn = batchId;
        touched.push(g);
      }
      numeric.add(slot, rows[i]);
    }
    this.clear();
  }
}
