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
import { tempNames } from './temp-names';
import { type AggBuilder, count, renamed } from './functions';
import type { AggArg, AnyColumns, FrameColumns, GroupArg } from './types';
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

/** groupingSets' sets of column names as indexes into `columns`; a name not among them is refused. */
export function setsOf(sets: ReadonlyArray<ReadonlyArray<string>>, columns: readonly string[]): number[][] {
  return sets.map((set) =>
    set.map((name) => {
      const i = columns.findIndex((c) => c.toLowerCase() === String(name).toLowerCase());
      if (i < 0)
        throw new InvalidQueryError(
          `groupingSets: the set [${set.join(', ')}] names ${name}, which is not one of the grouping columns (${columns.join(', ')}): add it to them`,
        );
      return i;
    }),
  );
}

/** The grouping id of a set of `n` keys: bit n-1-i set when key i is left out. */
function setId(set: readonly number[], n: number): number {
  let id = 0;
  for (let i = 0; i < n; i++) if (!set.includes(i)) id |= 1 << (n - 1 - i);
  return id;
}

/** Spark's most grouping sets in one aggregation (GROUPING_SIZE_LIMIT_EXCEEDED past it). */
export const MAX_GROUPING_SETS = 4096;
/** The most keys: the grouping id is an INT with a bit per key. */
const MAX_KEYS = 30;

/**
 * A key of every set grouped by as it is, not through the sets' expansion: a window (SQL's
 * `GROUP BY window(t, '10 minutes'), ROLLUP(a)`), so that each set's groups keep the window's
 * event-time key and append mode works. `arg` is the groupBy key, `name` its output column.
 */
export interface DirectKey {
  readonly arg: GroupArg<AnyColumns>;
  readonly name: string;
}

/**
 * A frame grouped by sets of its columns: `agg` (and `count`) add the aggregation. `keys` are
 * column names (or direct keys, in every set), `sets` lists of indexes into them (a set may come
 * twice: its rows then come twice, kept apart by the set's position, as Spark's
 * `_gen_grouping_pos`), and `names` the output columns' names of the keys (the keys' own by default).
 */
export class GroupingSetsFrame {
  private readonly keys: ReadonlyArray<string | DirectKey>;
  private readonly names: readonly string[];
  constructor(
    private readonly frame: StreamFrame<FrameColumns>,
    keys: ReadonlyArray<string | DirectKey>,
    private readonly sets: readonly (readonly number[])[],
    what: string,
    names?: readonly string[],
  ) {
    const cols = frame.columnsNow_();
    this.keys = keys.map((k, i) => {
      if (typeof k === 'object' && k !== null && 'arg' in k) {
        if (!sets.every((set) => set.includes(i))) throw new InvalidQueryError(`${what}: ${k.name} must be in every grouping set: group by it beside the sets`);
        return k;
      }
      if (typeof k !== 'string') throw new InvalidQueryError(`${what} takes column names: select an expression or a window into a column first`);
      const c = resolveName(cols, k);
      if (c === undefined) throw unknownColumn(k, cols, what);
      if (c.window) throw new InvalidQueryError(`${what}(${k}): a window column cannot be a key of ${what}: group by the window with groupBy`);
      return c.name;
    });
    this.names = names ?? this.keys.map((k) => (typeof k === 'string' ? k : k.name));
    if (this.keys.length > MAX_KEYS)
      throw new InvalidQueryError(`${what} of ${this.keys.length} columns: at most ${MAX_KEYS} (the grouping id holds a bit per column)`);
    if (sets.length > MAX_GROUPING_SETS)
      throw new InvalidQueryError(
        `[GROUPING_SIZE_LIMIT_EXCEEDED] Grouping sets size cannot be greater than ${MAX_GROUPING_SETS}: ${what} makes ${sets.length} (each input row is repeated once per grouping set); group by fewer columns`,
      );
  }

  /** The aggregates, and grouping(k) / groupingId() columns, in the order given. */
  agg(...aggs: Array<AggArg<AnyColumns> | GroupingCall>): StreamFrame<AnyColumns> {
    const calls = aggs.filter((a): a is GroupingCall => a instanceof GroupingCall);
    if (calls.length === 0) return this.aggregate_(aggs as AggArg<AnyColumns>[]);
    const idAs = '__gs_grouping_id';
    const out = this.aggregate_(
      aggs.filter((a) => !(a instanceof GroupingCall)),
      idAs,
    );
    const cols = out.columnsNow_().map((c) => c.name);
    const n = this.keys.length;
    let next = n;
    const items = [
      ...cols.slice(0, n).map(quoteName),
      ...aggs.map((a) => {
        if (!(a instanceof GroupingCall)) return quoteName(cols[next++]);
        return `${a.valueOver(quoteName(idAs), this.names)} AS ${quoteName(a.name)}`;
      }),
    ];
    return out.selectExpr(...items);
  }

  /**
   * The aggregation; with `idAs`, Spark's grouping id (spark_grouping_id) is kept as a last column
   * of that name, for grouping() and grouping_id() to read (sql/grouping.ts).
   * @internal
   */
  aggregate_(aggs: readonly AggArg<AnyColumns>[], idAs?: string): StreamFrame<AnyColumns> {
    const cols = this.frame.columnsNow_();
    const temp = tempNames(cols);
    const keyNames = this.keys.map(() => temp('gs_key'));
    const idName = temp('gs_id');
    // a set written twice keeps its rows apart by its position
    const seen = this.sets.map((set) => [...new Set(set)].sort((a, b) => a - b).join(','));
    const duplicated = new Set(seen).size < seen.length;
    const hidden = duplicated ? [idName, temp('gs_pos')] : [idName];
    const typeOf = (k: string) => ddlOf(resolveName(cols, k)!);
    const stacked = this.keys.flatMap((k, i) => (typeof k === 'string' ? [{ k, i }] : []));
    const direct = this.keys.flatMap((k, i) => (typeof k === 'string' ? [] : [{ k, i }]));
    const values = this.sets.flatMap((set, pos) => [
      ...stacked.map(({ k, i }) => (set.includes(i) ? quoteName(k) : `CAST(NULL AS ${typeOf(k)})`)),
      String(setId(set, this.keys.length)),
      ...(duplicated ? [String(pos)] : []),
    ]);
    const stackedNames = stacked.map(({ i }) => keyNames[i]);
    const expanded = this.frame.selectExpr('*', `stack(${this.sets.length}, ${values.join(', ')}) AS (${[...stackedNames, ...hidden].join(', ')})`);
    const grouped = expanded.groupBy(...direct.map(({ k }) => k.arg), ...stackedNames, ...hidden).agg(...(aggs as AggArg<AnyColumns>[]));
    const out = grouped.columnsNow_().map((c) => c.name);
    // the columns after the aggregation: the direct keys', the stacked keys', the hidden, the aggregates'
    const columnOf = (i: number) => {
      const d = direct.findIndex((x) => x.i === i);
      return d >= 0 ? out[d] : keyNames[i];
    };
    const aggNames = out.slice(direct.length + stackedNames.length + hidden.length);
    return grouped.select(
      ...this.keys.map((_, i) => renamed(columnOf(i), this.names[i])),
      ...aggNames.map((a) => renamed(a, a)),
      ...(idAs === undefined ? [] : [renamed(idName, idAs)]),
    );
  }

  /** The count of each set's groups' rows, named `count`. */
  count(): StreamFrame<AnyColumns> {
    return this.agg(count().alias('count') as AggBuilder);
  }
}

/**
 * Spark's grouping(column) and grouping_id(...columns) for the frame API's rollup, cube and
 * groupingSets: `agg(grouping('city'), sum('n'))`. grouping is 1 (a TINYINT) in the rows of a set
 * that leaves the column out, else 0; grouping_id the set's grouping id (a BIGINT, a bit per key,
 * the first key the highest), of every key when given none.
 */
export class GroupingCall {
  private constructor(
    private readonly fn: 'grouping' | 'grouping_id',
    private readonly columns: readonly string[],
    private readonly as_?: string,
  ) {}

  /** @internal */
  static of_(fn: 'grouping' | 'grouping_id', columns: readonly string[]): GroupingCall {
    return new GroupingCall(fn, columns);
  }

  /** The output column's name (Spark's: `grouping(city)`, `grouping_id()`). */
  get name(): string {
    return this.as_ ?? `${this.fn}(${this.columns.join(', ')})`;
  }

  alias(name: string): GroupingCall {
    return new GroupingCall(this.fn, this.columns, name);
  }

  as(name: string): GroupingCall {
    return this.alias(name);
  }

  /**
   * The value as an expression over the grouping id `id` of the keys named `keys` (their output
   * names), checked as Spark's analyzer checks the call.
   * @internal
   */
  valueOver(id: string, keys: readonly string[]): string {
    const index = (c: string) => {
      const lower = c.toLowerCase();
      return keys.findIndex((k) => k.toLowerCase() === lower);
    };
    if (this.fn === 'grouping') {
      const i = index(this.columns[0]);
      if (i < 0)
        throw new InvalidQueryError(
          `[GROUPING_COLUMN_MISMATCH] Column of grouping (${this.columns[0]}) can't be found in grouping columns ${keys.join(',')}: pass one of the keys`,
        );
      return `CAST(shiftright(${id}, ${keys.length - 1 - i}) & 1 AS TINYINT)`;
    }
    if (this.columns.length > 0 && (this.columns.length !== keys.length || this.columns.some((c, i) => index(c) !== i)))
      throw new InvalidQueryError(
        `[GROUPING_ID_COLUMN_MISMATCH] Columns of grouping_id (${this.columns.join(',')}) does not match grouping columns (${keys.join(',')}): list every key in that order, or none`,
      );
    return `CAST(${id} AS BIGINT)`;
  }
}

/** Spark's `grouping(column)` in `rollup(...)`, `cube(...)` or `groupingSets(...)`'s `agg`: 1 where the row's set leaves the column out, else 0. */
export function grouping(column: string): GroupingCall {
  return GroupingCall.of_('grouping', [column]);
}

/** Spark's `grouping_id(...columns)` in `rollup(...)`, `cube(...)` or `groupingSets(...)`'s `agg`: the row's set's grouping id (of every key when given none). */
export function groupingId(...columns: string[]): GroupingCall {
  return GroupingCall.of_('grouping_id', columns);
}
