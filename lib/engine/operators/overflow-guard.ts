/**
 * FORMAT-3 departure 2 for the aggregates' own ANSI errors: a row that would take a group's exact
 * sum past its type (a BIGINT sum past 64 bits, a DECIMAL sum past its precision:
 * ARITHMETIC_OVERFLOW) or a DECIMAL avg out of its type (NUMERIC_VALUE_OUT_OF_RANGE) is a dead
 * letter, and no aggregate of the stage takes it, count(*) included; the other rows go on.
 *
 * The same guard makes a row a dead letter when an aggregation's input cast fails for it (aggregates.ts
 * `check`: sum/avg of a STRING column, whose text Spark casts to DOUBLE: CAST_INVALID_INPUT).
 * What refuses a row is one rule, aggregates.ts guardRow, which session windows (session.ts) run
 * too; this file is how the aggregate operator applies it to its groups.
 *
 * The aggregate operator (aggregate.ts) hands its rows to a guard only when an aggregation adds
 * exactly (aggregates.ts `exact`) or checks its input (`check`): the numeric fast path (numeric-slots.ts) holds none of those,
 * and sums of doubles do not overflow (they reach Infinity, as in Spark). Then:
 *
 *  - the fold defers each row, with the slot of the group it goes to, to the end of its chunk;
 *    `fold` reads the stored state (version N−1) of the chunk's groups not known yet, in one get,
 *    and folds the rows in their order;
 *  - a group's exact aggregates start the batch from its stored value, so that a row is checked
 *    against the group's true running total; its other aggregates start afresh and merge with
 *    the stored value when the batch finishes (`mergeFolded`), as before (a double sum adds in
 *    the same order as Spark's partial-then-merge);
 *  - a row is checked first, against every exact aggregate of every group it goes to (a sliding
 *    window's several), and applied to all only when none overflows: a refused row leaves every
 *    aggregate of every group as it was;
 *  - a partitioned run does not pre-aggregate a stage with an exact aggregate (the operator's
 *    `checksRowsAgainstState`): its partition tasks get the rows and fold them as above, against
 *    their partition's stored state. Only a batch planned by an earlier sluice, whose read tasks
 *    pre-aggregated, is replayed with partials: a read task checks each row against its own
 *    partial (`apply` without a load), and an overflow met when partials merge, with each other
 *    or with the stored value, has no row to blame: the batch fails (`mergeChecked`), as Spark
 *    fails the query, with a message that names the group.
 */
import { applyGuarded, type Buffer, type CompiledAgg, guardRow, type Refusal, refusesRows } from '../aggregates';
import { SluiceError } from '../errors';
import { isSparkRowError } from '../expr/errors';
import type { GroupKey } from '../plan/types';
import type { Json, Row } from '../ports';
import type { RowErrorHandler } from '../rows';
import { formatTimestamp, type Micros } from '../timestamps';

/** What the guard reads and sets of an aggregate operator's group. */
export interface GuardedGroup {
  readonly kv: Json[];
  /** The batch's buffer (valid when touchedIn is the batch). */
  buf: Buffer;
  touchedIn: number;
  /** The stored buffer at version N−1: null when none, undefined while unknown. */
  state: Buffer | null | undefined;
}

/** Where one batch's deferred rows go. */
export interface FoldTarget<G extends GuardedGroup> {
  readonly batchId: number;
  /** The group in a slot. */
  group(slot: number): G;
  /** The groups the batch touched, in first-touch order: a group's first applied row appends it. */
  readonly touched: G[];
  readonly onRowError: RowErrorHandler;
  /** Sets `state` of the groups given (read at version N−1); absent in a read task (no state: its partial starts empty). */
  readonly load?: (groups: G[]) => Promise<void>;
}

/** An aggregation as messages name it: `sum(n) AS total`. */
function describeAgg(agg: CompiledAgg): string {
  const { fn, column, by, as } = agg.spec;
  return `${fn}(${column ?? '*'}${by === undefined ? '' : `, ${by}`}) AS ${as}`;
}

/** A value in a message: a BIGINT beyond 2^53 as its digits. */
export function valueText(v: unknown): string {
  return typeof v === 'bigint' ? String(v) : v === undefined ? 'null' : JSON.stringify(v);
}

/** A group as messages name it, by its grouping values (a window or session window as [start, end]): `the group where window is [start, end) and k is "a"`. */
function describeGroup(keys: readonly GroupKey[], kv: readonly Json[]): string {
  if (keys.length === 0) return "the query's one group";
  const parts = keys.map((k, i) => {
    if (k.kind === 'column') return `${k.name} is ${valueText(kv[i])}`;
    const [start, end] = kv[i] as Micros[];
    return `${k.kind === 'window' ? 'window' : 'session_window'} is [${formatTimestamp(start)}, ${formatTimestamp(end)})`;
  });
  return `the group where ${parts.join(' and ')}`;
}

/**
 * The dead letter's reason for a row an aggregation refuses (aggregates.ts guardRow): the error,
 * then the aggregation, the group (`kv`, by `keys`) and the row's value.
 */
export function refusalReason({ error, agg }: Refusal, keys: readonly GroupKey[], kv: readonly Json[], row: Row): string {
  const { column, by } = agg.spec;
  const values = [column!, ...(by === undefined ? [] : [by])].map((c) => `${c} = ${valueText(row[c])}`).join(', ');
  return `${error.message} (in ${describeAgg(agg)} of ${describeGroup(keys, kv)}, with this row's ${values}: the row is a dead letter and no aggregate of the group counts it)`;
}

export class OverflowGuard {
  /** Per aggregation: whether it adds exactly and can raise an ANSI error. */
  private readonly exact: readonly boolean[];
  /** The deferred rows of the chunk, and the slot of the group each goes to (a row in several windows: once per window, in a run). */
  private slots: number[] = [];
  private rows: Row[] = [];
  /** Per group of the row being checked: its exact aggregates' values with the row. */
  private readonly candidates: Json[][] = [];

  /** The guard of the aggregations, or null when none adds exactly (nothing can overflow). */
  static of(aggs: readonly CompiledAgg[], keys: readonly GroupKey[]): OverflowGuard | null {
    return refusesRows(aggs) ? new OverflowGuard(aggs, keys) : null;
  }

  private constructor(
    private readonly aggs: readonly CompiledAgg[],
    private readonly keys: readonly GroupKey[],
  ) {
    this.exact = aggs.map((a) => a.exact === true);
  }

  /** Forgets deferred rows (a batch begins: an earlier one may have failed mid-chunk). */
  clear(): void {
    this.slots = [];
    this.rows = [];
  }

  /** A row for the group in `slot`, folded at the chunk's end. */
  defer(slot: number, row: Row): void {
    this.slots.push(slot);
    this.rows.push(row);
  }

  /** Folds the deferred rows, after reading the state of their groups not known yet (one get). */
  async fold<G extends GuardedGroup>(t: FoldTarget<G>): Promise<void> {
    const unknown = new Set<G>();
    if (t.load !== undefined) {
      for (const slot of this.slots) {
        const g = t.group(slot);
        if (g.state === undefined) unknown.add(g);
      }
      if (unknown.size > 0) await t.load([...unknown]);
    }
    this.apply(t);
    // A group read here whose rows were all refused is not the batch's: its state is read again
    // when a later batch meets it (the store's value, not this one, may change meanwhile: eviction).
    for (const g of unknown) if (g.touchedIn !== t.batchId) g.state = undefined;
  }

  /** Folds the deferred rows into their groups, each row checked first (the groups' state known, or none: a read task). */
  apply<G extends GuardedGroup>(t: FoldTarget<G>): void {
    const { slots, rows } = this;
    this.clear();
    let i = 0;
    while (i < rows.length) {
      const row = rows[i];
      let end = i + 1;
      while (end < rows.length && rows[end] === row) end++;
      this.applyRow(t, row, slots, i, end);
      i = end;
    }
  }

  /** One row into the groups in slots[from..to): all of them, or none when the guard (aggregates.ts guardRow) refuses it for one. */
  private applyRow<G extends GuardedGroup>(t: FoldTarget<G>, row: Row, slots: readonly number[], from: number, to: number): void {
    const { aggs, candidates } = this;
    for (let j = from; j < to; j++) {
      const g = t.group(slots[j]);
      const current = g.touchedIn !== t.batchId ? (g.state ?? null) : g.buf;
      const cand = (candidates[j - from] ??= new Array<Json>(aggs.length));
      // (the input cast is the row's own: checked once, with its first group)
      const refusal = guardRow(aggs, current, row, cand, j === from);
      if (refusal !== null) {
        t.onRowError(row, refusalReason(refusal, this.keys, g.kv, row));
        return;
      }
    }
    for (let j = from; j < to; j++) {
      const g = t.group(slots[j]);
      if (g.touchedIn !== t.batchId) {
        g.buf = this.start(g);
        g.touchedIn = t.batchId;
        t.touched.push(g);
      }
      applyGuarded(aggs, g.buf, candidates[j - from], row);
    }
  }

  /** A group's buffer at its first row of the batch: the exact aggregates at the stored value, the others afresh. */
  private start(g: GuardedGroup): Buffer {
    const { aggs, exact } = this;
    const state = g.state;
    const buf = new Array<Json>(aggs.length);
    for (let i = 0; i < aggs.length; i++) buf[i] = exact[i] && state != null ? state[i] : aggs[i].init();
    return buf;
  }

  /** A group's folded buffer (`buf`, overwritten) completed with its stored one: the exact aggregates hold it already. */
  mergeFolded(state: Buffer, buf: Buffer): Buffer {
    const { aggs, exact } = this;
    for (let i = 0; i < aggs.length; i++) if (!exact[i]) buf[i] = aggs[i].merge(state[i], buf[i]);
    return buf;
  }

  /**
   * mergeBuffers(into, other, inPlace) of aggregates.ts for buffers that hold no row any more (partials of read
   * tasks, a partial with the stored value): an overflow fails the batch, naming the group.
   * `what`: what merges, for the message.
   */
  mergeChecked(into: Buffer, other: Buffer, kv: Json[], batchId: number, what: string, inPlace = false): Buffer {
    const { aggs } = this;
    const out = inPlace ? other : new Array<Json>(aggs.length);
    for (let i = 0; i < aggs.length; i++) {
      try {
        out[i] = aggs[i].merge(into[i], other[i]);
      } catch (e) {
        if (!isSparkRowError(e)) throw e;
        throw new SluiceError(
          `[${e.errorClass}] ${describeAgg(aggs[i])} of ${describeGroup(this.keys, kv)} overflows where batch ${batchId} merges ${what}: ${e.message.slice(e.errorClass.length + 3)}. ` +
            'No single row can be blamed for a merge, so the batch fails, as Spark fails the query. To go on, run the batches in one task ' +
            "(the single Lambda, not the partitioned state machine), where each row is checked against the group's running total and the row that overflows it is a dead letter, " +
            `or declare ${aggs[i].addedColumn ?? aggs[i].spec.column} with a wider type under a new checkpoint`,
          { retriable: false, details: { errorClass: e.errorClass, group: kv, batchId } },
        );
      }
    }
    return out;
  }
}
