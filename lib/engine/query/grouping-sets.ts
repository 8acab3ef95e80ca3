/**
 * Spark's rollup and cube (Dataset.rollup / Dataset.cube, SQL's GROUP BY ROLLUP / CUBE /
 * GROUPING SETS): one aggregation over several sets of the grouping columns, a key left out of a
 * set being null in that set's rows. Built as Spark's plan is (Expand, then Aggregate): a `stack`
 * stage gives every input row once per set, its keys as the set has them and the set's grouping id
 * (Spark's spark_grouping_id: a bit per key, 1 when the set leaves it out, the first key the
 * highest bit), then an ordinary aggregation by the keys and that id, then the id dropped. So a
 * subtotal's null key never meets a group whose key is null in the data, and each set's groups are
 * kept in state like any aggregation's (update and complete modes; append needs an event-time key,
 * which a rollup of columns does not have).
 */
import { ddlOf } from '../ddl';
import { InvalidQueryError } from '../errors';
import { resolveName } from '../resolve-name';
import { unknownColumn } from '../plan/columns';
import { quoteName } from './column';
import { type AggBuilder, count, renamed } from './functions';
import type { AggArg, AnyColumns, FrameColumns } from './types';
import type { StreamFrame } from './frame';

/** The sets of Spark's rollup of n keys: (k0..kn-1), (k0..kn-2), ..., (). */
export function rollupSets(n: number): number[][] {
  return Array.from({ length: n + 1 }, (_, s) => Array.from({ length: n - s }, (_, i) => i));
}

/** The sets of Spark's cube of n keys: every subset, the whole set first. */
export function cubeSets(n: number): number[][] {
  const out: number[][] = [];
  for (let mask = (1 << n) - 1; mask >= 0; mask--) out.push(Array.from({ length: n }, (_, i) => i).filter((i) => (mask >> (n - 1 - i)) & 1));
  return out;
}

/** The grouping id of a set of `n` keys: bit n-1-i set when key i is left out. */
function groupingId(set: readonly number[], n: number): number {
  let id = 0;
  for (let i = 0; i < n; i++) if (!set.includes(i)) id |= 1 << (n - 1 - i);
  return id;
}

/** A frame grouped by sets of its columns: `agg` (and `count`) add the aggregation. */
export class GroupingSetsFrame {
  private readonly keys: readonly string[];
  constructor(
    private readonly frame: StreamFrame<FrameColumns>,
    keys: readonly string[],
    private readonly sets: readonly (readonly number[])[],
    what: string,
  ) {
    const cols = frame.columnsNow_();
    this.keys = keys.map((k) => {
      if (typeof k !== 'string') throw new InvalidQueryError(`${what} takes column names: select an expression or a window into a column first`);
      const c = resolveName(cols, k);
      if (c === undefined) throw unknownColumn(k, cols, what);
      if (c.window) throw new InvalidQueryError(`${what}(${k}): a window column cannot be a key of ${what}: group by the window with groupBy`);
      return c.name;
    });
    if (this.keys.length > 16)
      throw new InvalidQueryError(`${what} of ${this.keys.length} columns: at most 16 (each input row is repeated once per grouping set)`);
  }

  agg(...aggs: AggArg<AnyColumns>[]): StreamFrame<AnyColumns> {
    const cols = this.frame.columnsNow_();
    const taken = new Set(cols.map((c) => c.name));
    let n = 0;
    const temp = (base: string): string => {
      let name: string;
      do name = `__${base}${n++}`;
      while (taken.has(name));
      taken.add(name);
      return name;
    };
    const keyNames = this.keys.map(() => temp('gs_key'));
    const idName = temp('gs_id');
    const typeOf = (k: string) => ddlOf(resolveName(cols, k)!);
    const values = this.sets.flatMap((set) => [
      ...this.keys.map((k, i) => (set.includes(i) ? quoteName(k) : `CAST(NULL AS ${typeOf(k)})`)),
      String(groupingId(set, this.keys.length)),
    ]);
    const expanded = this.frame.selectExpr('*', `stack(${this.sets.length}, ${values.join(', ')}) AS (${[...keyNames, idName].join(', ')})`);
    const grouped = expanded.groupBy(...keyNames, idName).agg(...(aggs as AggArg<AnyColumns>[]));
    const aggNames = grouped
      .columnsNow_()
      .slice(keyNames.length + 1)
      .map((c) => c.name);
    return grouped.select(...keyNames.map((t, i) => renamed(t, this.keys[i])), ...aggNames.map((a) => renamed(a, a)));
  }

  /** The count of each set's groups' rows, named `count`. */
  count(): StreamFrame<AnyColumns> {
    return this.agg(count().alias('count') as AggBuilder);
  }
}
