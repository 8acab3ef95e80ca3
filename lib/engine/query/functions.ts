/**
 * Spark's functions for a query: grouping keys (window, sessionWindow, col), aggregates (count,
 * sum, ... as AggBuilders) and the items of a select (renamed, windowOf, windowStart, ...).
 */
import { InvalidQueryError } from '../errors';
import { HLL_PRECISION } from '../hll';
import { parseInterval, parseWindowDuration } from '../duration';
import { parsePath } from '../plan/paths';
import type { AggFn, AggSpec, ColumnKey, ColumnPath, ExplodeItem, PairAggFn, ProjectItem, SessionKey, SortDirection, WindowKey } from '../plan/types';
import { Column } from './column';

// ---------------------------------------------------------------- grouping and aggregate helpers

/** `window(column, windowDuration, slideDuration?, startTime?)`: tumbling, or sliding with a slide. */
export function window<Col extends string>(on: Col | ColumnKey<Col>, duration: string, slide?: string, startTime?: string): WindowKey<Col> {
  // window(col('window'), ...) / window('window', ...) over an earlier aggregation's window: over its window_time
  const column = (typeof on === 'string' ? on : on.name) as Col;
  const durationUs = parseWindowDuration(duration, `window duration for ${column}`);
  const slideUs = slide === undefined ? durationUs : parseWindowDuration(slide, `window slide for ${column}`);
  const startUs = startTime === undefined ? 0 : parseSignedStart(startTime, column);
  if (slideUs > durationUs) {
    throw new InvalidQueryError(
      `window on ${column}: the slide duration (${slide}) must be less than or equal to the window duration (${duration}): use a shorter slide or a longer window`,
    );
  }
  if (Math.abs(startUs) >= slideUs) {
    throw new InvalidQueryError(
      `window on ${column}: the absolute value of the start time (${startTime}) must be less than the slide duration (${slide ?? duration}): use an offset smaller than the slide`,
    );
  }
  return { kind: 'window', column, durationUs, slideUs, startUs, text: [duration, slide, startTime].filter(Boolean).join(', ') };
}

function parseSignedStart(text: string, column: string): number {
  const t = text.trim();
  if (t.startsWith('-')) return -parseWindowDuration(t.slice(1), `window startTime for ${column}`, true);
  return parseWindowDuration(t, `window startTime for ${column}`, true);
}

/** `session_window(column, gapDuration)`; over an earlier aggregation's window column, over its window_time. */
export function sessionWindow<Col extends string>(column: Col, gap: string): SessionKey<Col> {
  const { us, months } = parseInterval(gap, `session window gap for ${column}`);
  // Spark casts the literal to an interval and takes any: a session ends at time + gap, and a row
  // whose session does not end after it starts is dropped (SessionWindowing's filter). So a zero or
  // negative gap drops every row, and one with months adds calendar months: read per row, as a
  // dynamic gap is (session.ts dynamicEnd)
  if (months !== 0 || us <= 0) return { kind: 'session', column, gapUs: 0, text: gap, calendarGap: true };
  return { kind: 'session', column, gapUs: us, text: gap };
}

export function col<Name extends string>(name: Name): ColumnKey<Name> {
  return { kind: 'column', name };
}

/**
 * A fluent aggregate: `sum('amount').as('total')`, or of an expression: `sum(expr('amount * qty'))`.
 * Its type parameters are the output name, the function and the column (a Column: an expression).
 */
export class AggBuilder<Name extends string = string, Fn extends AggFn = AggFn, Col extends string | Column | undefined = string | Column | undefined> {
  constructor(
    readonly fn: Fn,
    readonly column: Col,
    readonly name: Name,
    /** max_by and min_by: the column (or expression) whose extreme picks the row; a pair aggregate's second column (x). */
    readonly by?: string | Column,
    /** percentile and percentile_approx: the percentage, from 0 to 1 (an array of them: from SQL and the case format). */
    readonly percentage?: number | readonly number[],
    /** percentile_approx: its accuracy. */
    readonly accuracy?: number,
    /** first, last and any_value: skip null values. */
    readonly ignoreNulls?: boolean,
    /** listagg's delimiter, and its WITHIN GROUP order (the keys' values in `by`) or mode's (of its own column). */
    readonly within?: { readonly delimiter?: string; readonly order?: readonly SortDirection[] },
  ) {}
  /** Names the output column, as Spark's `.alias` / `.as`. */
  as<N extends string>(name: N): AggBuilder<N, Fn, Col> {
    return new AggBuilder(this.fn, this.column, name, this.by, this.percentage, this.accuracy, this.ignoreNulls, this.within);
  }
  /** The same aggregate over another input column (and ordering column), under `name`. */
  over<C extends string>(column: C, name: string, by?: string): AggBuilder<string, Fn, C> {
    return new AggBuilder(this.fn, column, name, by, this.percentage, this.accuracy, this.ignoreNulls, this.within);
  }
  /** The same aggregate over other inputs (an input, its `by`), under `name`: what a FILTER clause makes of it. */
  withInputs<C extends string | Column | undefined>(
    column: C,
    name: string,
    by: string | Column | undefined,
    ignoreNulls = this.ignoreNulls,
  ): AggBuilder<string, Fn, C> {
    return new AggBuilder(this.fn, column, name, by, this.percentage, this.accuracy, ignoreNulls, this.within);
  }
  alias<N extends string>(name: N): AggBuilder<N, Fn, Col> {
    return this.as(name);
  }
  /** The aggregate of a column (an expression's input is computed by a stage before the aggregation: see GroupedFrame.agg). */
  toSpec(): AggSpec {
    if (this.column instanceof Column || this.by instanceof Column) {
      throw new Error(
        `internal: ${this.fn}(${this.column instanceof Column ? this.column.sql : String(this.column)}) aggregates an expression: it needs its input stage first`,
      );
    }
    const spec: AggSpec = { fn: this.fn, column: this.column as string | undefined, as: this.name };
    return {
      ...spec,
      ...(this.by === undefined ? {} : { by: this.by }),
      ...(this.percentage === undefined ? {} : { percentage: this.percentage }),
      ...(this.accuracy === undefined ? {} : { accuracy: this.accuracy }),
      ...(this.ignoreNulls === true ? { ignoreNulls: true as const } : {}),
      ...(this.within?.delimiter === undefined ? {} : { delimiter: this.within.delimiter }),
      ...(this.within?.order === undefined ? {} : { order: this.within.order }),
    };
  }
}
/** Spark's name of an aggregation function (its prettyName): approxCountDistinct is approx_count_distinct. */
type SparkAggName<F extends string> = F extends 'approxCountDistinct' ? 'approx_count_distinct' : F;
type AggName<F extends string, C> = C extends string
  ? F extends 'first' | 'last'
    ? `${F}(${C}, false)`
    : `${SparkAggName<F>}(${C})`
  : C extends Column
    ? string
    : `${F}(1)`;

/**
 * The name Spark gives an aggregate without AS (toPrettySQL of the aggregate, as its golden files
 * and sql-expression-schema show): `sum(amount)`, `sum((amount * 2))`, `count(1)` for count(*),
 * `approx_count_distinct(x)`, and first/last with their ignoreNulls flag, `first(x, false)`.
 * `arg`: the argument's pretty SQL (expr/index.ts prettySql), absent for count(*); `calledAs`:
 * the SQL name it was called by when Spark keeps it (mean, first_value, last_value); `ignoreNulls`:
 * first's and last's flag, printed `first(x, true)`.
 */
export function aggregateName(fn: AggFn, arg: string | undefined, calledAs?: string, ignoreNulls = false): string {
  if (arg === undefined) return `${calledAs ?? fn}(1)`;
  const name = calledAs ?? (fn === 'approxCountDistinct' ? 'approx_count_distinct' : fn);
  return fn === 'first' || fn === 'last' ? `${name}(${arg}, ${ignoreNulls})` : `${name}(${arg})`;
}

/** A column argument as Spark SQL text: an expression's SQL, a name as it is. */
const sqlOf = (c: string | Column) => (c instanceof Column ? c.sql : c);

function agg<F extends AggFn, C extends string | Column | undefined>(fn: F, column: C): AggBuilder<AggName<F, C>, F, C> {
  const name = aggregateName(fn, column === undefined ? undefined : sqlOf(column));
  return new AggBuilder(fn, column, name as AggName<F, C>);
}
/** `count()` / `count('*')` counts rows, `count(column)` the non-null values of the column. */
export function count(): AggBuilder<'count(1)', 'count', undefined>;
export function count<C extends string>(column: C): AggBuilder<C extends '*' ? 'count(1)' : `count(${C})`, 'count', C extends '*' ? undefined : C>;
export function count(column: Column): AggBuilder<string, 'count', Column>;
export function count(column?: string | Column): AggBuilder<string, 'count', string | Column | undefined>;
export function count(column?: string | Column): AggBuilder<string, 'count', string | Column | undefined> {
  return agg('count', column === '*' ? undefined : column);
}
export const sum = <C extends string | Column>(column: C) => agg('sum', column);
export const min = <C extends string | Column>(column: C) => agg('min', column);
export const max = <C extends string | Column>(column: C) => agg('max', column);
export const avg = <C extends string | Column>(column: C) => agg('avg', column);
/** Spark's try_sum: sum, whose overflow (a BIGINT beyond 64 bits, a DECIMAL beyond its type) makes the group's sum NULL instead of a dead letter. */
export const trySum = <C extends string | Column>(column: C) => agg('try_sum', column);
/** Spark's try_avg: avg, whose overflow (a DECIMAL's) makes the group's avg NULL instead of a dead letter. */
export const tryAvg = <C extends string | Column>(column: C) => agg('try_avg', column);
/**
 * The first row's value (null or not), as Spark's first; `first(column, true)` skips nulls (its
 * ignoreNulls), named `first(x, true)`. `last` and `anyValue` alike.
 */
export function first<C extends string | Column>(column: C, ignoreNulls?: false): AggBuilder<AggName<'first', C>, 'first', C>;
export function first<C extends string | Column>(column: C, ignoreNulls: boolean): AggBuilder<string, 'first', C>;
export function first<C extends string | Column>(column: C, ignoreNulls = false): AggBuilder<string, 'first', C> {
  return skippingNulls(agg('first', column), ignoreNulls);
}
/** An aggregate of first, last or any_value with its ignoreNulls flag (in its name too, for first and last). */
function skippingNulls<F extends 'first' | 'last' | 'any_value', C extends string | Column>(
  b: AggBuilder<string, F, C>,
  ignoreNulls: boolean,
): AggBuilder<string, F, C> {
  if (!ignoreNulls) return b;
  const name = aggregateName(b.fn, b.column instanceof Column ? b.column.sql : (b.column as string), undefined, true);
  return new AggBuilder(b.fn, b.column, name, undefined, undefined, undefined, true);
}
/** Spark's any_value: some value of the group, here the first row's (null or not), as Spark's replacement of it by first; named `any_value(x)`. */
export function anyValue<C extends string | Column>(column: C, ignoreNulls?: false): AggBuilder<AggName<'any_value', C>, 'any_value', C>;
export function anyValue<C extends string | Column>(column: C, ignoreNulls: boolean): AggBuilder<string, 'any_value', C>;
export function anyValue<C extends string | Column>(column: C, ignoreNulls = false): AggBuilder<string, 'any_value', C> {
  return skippingNulls(agg('any_value', column), ignoreNulls);
}
export function last<C extends string | Column>(column: C, ignoreNulls?: false): AggBuilder<AggName<'last', C>, 'last', C>;
export function last<C extends string | Column>(column: C, ignoreNulls: boolean): AggBuilder<string, 'last', C>;
export function last<C extends string | Column>(column: C, ignoreNulls = false): AggBuilder<string, 'last', C> {
  return skippingNulls(agg('last', column), ignoreNulls);
}
/**
 * Spark's approx_count_distinct: HyperLogLog++ (lib/engine/hll.ts), a BIGINT. `rsd`, its relative
 * standard deviation, is taken where it gives Spark's default precision (512 registers: from
 * 0.0489 up to but not including 0.0692, the default 0.05 among them); others need HLL++'s bias
 * tables at their precision, not carried here.
 */
export function approxCountDistinct<C extends string | Column>(column: C, rsd?: number) {
  if (rsd !== undefined) checkRelativeSd(rsd);
  return agg('approxCountDistinct', column);
}

/** The register count (2^p) a relative standard deviation gives, as Spark's HyperLogLogPlusPlusHelper computes p. */
function checkRelativeSd(rsd: number): void {
  const p = Math.ceil((2 * Math.log(1.106 / rsd)) / Math.log(2));
  if (p !== HLL_PRECISION) {
    throw new InvalidQueryError(
      `approx_count_distinct's relative standard deviation ${rsd} needs ${Number.isFinite(p) && p >= 4 ? `2^${p} registers` : 'an impossible register count (HLL++ takes at most 0.39)'}; sluice carries HLL++'s bias figures for 512 (Spark's default, rsd 0.05): give an rsd from 0.0489 to below 0.0692, or leave it out`,
    );
  }
}
/** Spark's stddev (sample standard deviation, as stddev_samp and std): a DOUBLE, NULL for fewer than two values. */
export const stddev = <C extends string | Column>(column: C) => agg('stddev', column);
export const stddevSamp = <C extends string | Column>(column: C) => agg('stddev_samp', column);
/** Population standard deviation: a DOUBLE, 0 for one value. */
export const stddevPop = <C extends string | Column>(column: C) => agg('stddev_pop', column);
/** Spark's variance (sample variance, as var_samp). */
export const variance = <C extends string | Column>(column: C) => agg('variance', column);
export const varSamp = <C extends string | Column>(column: C) => agg('var_samp', column);
export const varPop = <C extends string | Column>(column: C) => agg('var_pop', column);
/** Spark's skewness: sqrt(n) m3 / m2^1.5 over the values cast to DOUBLE (NULL when they are all equal). */
export const skewness = <C extends string | Column>(column: C) => agg('skewness', column);
/** Spark's kurtosis (excess): n m4 / m2² − 3 (NULL when the values are all equal). */
export const kurtosis = <C extends string | Column>(column: C) => agg('kurtosis', column);
/** The exact median of a numeric column, a DOUBLE (Spark's median: percentile(x, 0.5), interpolated between two middle values). */
export const median = <C extends string | Column>(column: C) => agg('median', column);
/**
 * The exact percentile of a numeric column at `percentage` (0 to 1), a DOUBLE interpolated between
 * the two nearest values, as Spark's percentile(x, p); named `percentile(x, p, 1)` as Spark names it.
 * `frequency`: an integral column that says how many times each row's value counts (Spark's third
 * argument; a null or 0 leaves the row out, a negative one makes it a dead letter), named
 * `percentile(x, p, f)`.
 */
export function percentile<C extends string | Column>(column: C, percentage: number, frequency?: string | Column): AggBuilder<string, 'percentile', C> {
  const text = sqlOf(column);
  return new AggBuilder('percentile', column, `percentile(${text}, ${percentage}, ${frequencyText(frequency)})`, frequency, percentage);
}

/** The frequency argument as Spark prints it: 1 when absent. */
function frequencyText(frequency: string | Column | undefined): string {
  return frequency === undefined ? '1' : sqlOf(frequency);
}
/**
 * percentile or percentile_approx at an array of percentages (SQL's `percentile(x, array(0.25,
 * 0.75))`, the case format's "percentage" list): an ARRAY of the figures, named as Spark names it,
 * `percentile(x, array(0.25, 0.75), 1)`. Not in the typed API (one aggregation a percentage there).
 */
export function percentilesAt(
  fn: 'percentile' | 'percentile_approx' | 'approx_percentile',
  column: string | Column,
  percentages: readonly number[],
  accuracy: number = DEFAULT_PERCENTILE_ACCURACY,
  frequency?: string | Column,
): AggBuilder {
  const text = sqlOf(column);
  const list = `array(${percentages.join(', ')})`;
  if (fn === 'percentile') return new AggBuilder('percentile', column, `percentile(${text}, ${list}, ${frequencyText(frequency)})`, frequency, percentages);
  return new AggBuilder('percentile_approx', column, `${fn}(${text}, ${list}, ${accuracy})`, undefined, percentages, accuracy);
}

/** A sort key (orderBy, listagg's WITHIN GROUP): a column or an expression, ascending unless `desc`; its nulls first ascending, last descending, unless `nullsFirst` says. */
export interface SortKey {
  readonly key: string | Column;
  readonly desc?: boolean;
  readonly nullsFirst?: boolean;
}

/** Spark's `asc(column)`: the column ascending, its nulls first. */
export function asc(column: string | Column): SortKey {
  return { key: column };
}

/** Spark's `desc(column)`: the column descending, its nulls last. */
export function desc(column: string | Column): SortKey {
  return { key: column, desc: true };
}

/** A delimiter as Spark prints a STRING literal: quoted, a quote or backslash escaped; NULL when absent. */
function delimiterSql(delimiter: string | null | undefined): string {
  return delimiter === undefined || delimiter === null ? 'NULL' : `'${delimiter.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/**
 * Spark 4's listagg (string_agg): the column's non-null values as STRING, joined by `delimiter`
 * (none when absent or null), NULL over no value; in the order the rows came, or sorted by
 * `orderBy` (Spark's WITHIN GROUP (ORDER BY ...): each a column, an expression, or {key, desc,
 * nullsFirst}). Named as Spark names it: `listagg(name, ', ')`, `listagg(name, NULL) WITHIN GROUP
 * (ORDER BY name ASC NULLS FIRST)`. Its state holds every value until the group is emitted for
 * good, as collect_list's.
 */
export function listagg<C extends string | Column>(
  column: C,
  delimiter?: string | null,
  orderBy: ReadonlyArray<string | Column | SortKey> = [],
): AggBuilder<string, 'listagg', C> {
  const keys: SortKey[] = orderBy.map((k) => (typeof k === 'string' || k instanceof Column ? { key: k } : k));
  const order = keys.map(direction);
  const by =
    keys.length === 0
      ? undefined
      : keys.length === 1
        ? keys[0].key
        : new Column(`named_struct(${keys.map((k, i) => `'k${i}', (${sqlOf(k.key)})`).join(', ')})`);
  return new AggBuilder('listagg', column, listaggName(sqlOf(column), delimiter, keys), by, undefined, undefined, undefined, {
    ...(delimiter === undefined || delimiter === null ? {} : { delimiter }),
    ...(keys.length === 0 ? {} : { order }),
  });
}
/** A sort key's direction and null placement, Spark's defaults filled in. */
function direction(k: SortKey): SortDirection {
  return { desc: k.desc === true, nullsFirst: k.nullsFirst ?? k.desc !== true };
}

/** listagg's name as Spark's ListAgg.sql prints it, over the value's and keys' texts: `listagg(x, ', ') WITHIN GROUP (ORDER BY k DESC NULLS LAST)`. */
export function listaggName(value: string, delimiter: string | null | undefined, keys: readonly SortKey[]): string {
  const within =
    keys.length === 0
      ? ''
      : ` WITHIN GROUP (ORDER BY ${keys
          .map((k) => {
            const d = direction(k);
            return `${sqlOf(k.key)} ${d.desc ? 'DESC' : 'ASC'} NULLS ${d.nullsFirst ? 'FIRST' : 'LAST'}`;
          })
          .join(', ')})`;
  return `listagg(${value}, ${delimiterSql(delimiter)})${within}`;
}

/** string_agg: listagg by its other name (Spark names both listagg). */
export function stringAgg<C extends string | Column>(
  column: C,
  delimiter?: string | null,
  orderBy: ReadonlyArray<string | Column | SortKey> = [],
): AggBuilder<string, 'listagg', C> {
  return listagg(column, delimiter, orderBy);
}

/**
 * Spark 4's percentile_cont(p) WITHIN GROUP (ORDER BY x [DESC]): percentile(x, p) (interpolated),
 * over the values sorted descending with `desc`; percentile_disc the same without interpolation:
 * the first value whose cumulative share reaches p. An array of percentages gives an ARRAY. Named
 * as Spark names them, `percentile_disc(0.25) WITHIN GROUP (ORDER BY x DESC)`.
 */
export function percentileWithinGroup<C extends string | Column>(
  fn: 'percentile_cont' | 'percentile_disc',
  column: C,
  percentage: number | readonly number[],
  desc = false,
): AggBuilder<string, 'percentile' | 'percentile_disc', C> {
  const text = sqlOf(column);
  const p = typeof percentage === 'number' ? String(percentage) : `array(${percentage.join(', ')})`;
  const name = `${fn}(${p}) WITHIN GROUP (ORDER BY ${text}${desc ? ' DESC' : ''})`;
  return new AggBuilder(fn === 'percentile_cont' ? 'percentile' : 'percentile_disc', column, name, undefined, percentage, undefined, undefined, {
    ...(desc ? { order: [{ desc: true, nullsFirst: false }] } : {}),
  });
}

/** Spark's default accuracy of percentile_approx (its relative error 1/10000). */
const DEFAULT_PERCENTILE_ACCURACY = 10_000;

/**
 * Spark's percentile_approx (approx_percentile) at `percentage`: a value of the column itself (of
 * its type, not interpolated), the smallest whose rank reaches ceil(percentage × count), the least
 * value at a percentage within 1/accuracy of 0 and the greatest within it of 1; named
 * `percentile_approx(x, p, accuracy)` as Spark names it. See docs/writing-queries.md for how it
 * compares with Spark's sketch.
 */
export function percentileApprox<C extends string | Column>(
  column: C,
  percentage: number,
  accuracy: number = DEFAULT_PERCENTILE_ACCURACY,
  calledAs: 'percentile_approx' | 'approx_percentile' = 'percentile_approx',
): AggBuilder<string, 'percentile_approx', C> {
  const text = sqlOf(column);
  return new AggBuilder('percentile_approx', column, `${calledAs}(${text}, ${percentage}, ${accuracy})`, undefined, percentage, accuracy);
}
/** Spark's bit_and, bit_or and bit_xor: the bitwise AND, OR or XOR of an integral column's non-null values, of its type (NULL without one). */
export const bitAnd = <C extends string | Column>(column: C) => agg('bit_and', column);
export const bitOr = <C extends string | Column>(column: C) => agg('bit_or', column);
export const bitXor = <C extends string | Column>(column: C) => agg('bit_xor', column);
/** Spark's product: the values cast to DOUBLE multiplied together, a DOUBLE (NULL without a value). */
export const product = <C extends string | Column>(column: C) => agg('product', column);
/**
 * Spark's mode: the most frequent non-null value, of the column's type; of equally frequent ones
 * the lowest, as Spark 4's mode(x, true) (Spark's mode(x) returns any of them, which a replay
 * could not repeat). `deterministic` true names it as Spark names mode(x, true), `mode() WITHIN
 * GROUP (ORDER BY x DESC)`.
 */
export function mode<C extends string | Column>(column: C, deterministic = false): AggBuilder<string, 'mode', C> {
  const b = agg('mode', column);
  return deterministic ? b.as(`mode() WITHIN GROUP (ORDER BY ${sqlOf(column)} DESC)`) : b;
}

/**
 * mode() WITHIN GROUP (ORDER BY x [DESC]): the most frequent value, of equally frequent ones the
 * lowest (ascending) or the highest (descending); named as Spark names it, which prints the
 * opposite direction (its reverse flag): `mode() WITHIN GROUP (ORDER BY x DESC)` for ascending.
 */
export function modeWithinGroup<C extends string | Column>(column: C, desc = false): AggBuilder<string, 'mode', C> {
  const text = sqlOf(column);
  return new AggBuilder('mode', column, `mode() WITHIN GROUP (ORDER BY ${text}${desc ? '' : ' DESC'})`, undefined, undefined, undefined, undefined, {
    ...(desc ? { order: [{ desc: true, nullsFirst: false }] } : {}),
  });
}
/** The rows whose BOOLEAN column (or condition) is true, a BIGINT. */
export const countIf = <C extends string | Column>(column: C) => agg('count_if', column);
/** Whether every non-null BOOLEAN is true (NULL without one): Spark's bool_and / every. */
export const boolAnd = <C extends string | Column>(column: C) => agg('bool_and', column);
/** Whether some non-null BOOLEAN is true (NULL without one): Spark's bool_or / some / any. */
export const boolOr = <C extends string | Column>(column: C) => agg('bool_or', column);
/** The column's non-null values as an ARRAY, in the order the rows came. */
export const collectList = <C extends string | Column>(column: C) => agg('collect_list', column);
/** The column's distinct non-null values as an ARRAY (first-seen order here; Spark's is its hash set's). */
export const collectSet = <C extends string | Column>(column: C) => agg('collect_set', column);
/**
 * `maxBy(x, by)`: x on the row whose `by` is the largest (Spark's max_by; a null `by` never
 * counts, the first row wins a tie); `minBy` the smallest. The latest value per key:
 * `maxBy('status', 'event_time')`.
 */
export function maxBy<C extends string | Column>(column: C, by: string | Column): AggBuilder<string, 'max_by', C> {
  return byAgg('max_by', column, by);
}
export function minBy<C extends string | Column>(column: C, by: string | Column): AggBuilder<string, 'min_by', C> {
  return byAgg('min_by', column, by);
}
/**
 * `corr(y, x)`: the Pearson correlation of the pairs where both are non-null (a DOUBLE; NULL for
 * fewer than two pairs or a column that does not vary). The other aggregates of number pairs, all
 * `(y, x)` with y the dependent variable: `covarPop`, `covarSamp`, `regrCount` (a BIGINT),
 * `regrAvgx`, `regrAvgy`, `regrSxx`, `regrSyy`, `regrSxy`, `regrSlope`, `regrIntercept`, `regrR2`,
 * Spark's covar_pop ... regr_r2.
 */
export const corr = <C extends string | Column>(y: C, x: string | Column) => pairAgg('corr', y, x);
export const covarPop = <C extends string | Column>(y: C, x: string | Column) => pairAgg('covar_pop', y, x);
export const covarSamp = <C extends string | Column>(y: C, x: string | Column) => pairAgg('covar_samp', y, x);
export const regrCount = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_count', y, x);
export const regrAvgx = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_avgx', y, x);
export const regrAvgy = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_avgy', y, x);
export const regrSxx = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_sxx', y, x);
export const regrSyy = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_syy', y, x);
export const regrSxy = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_sxy', y, x);
export const regrSlope = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_slope', y, x);
export const regrIntercept = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_intercept', y, x);
export const regrR2 = <C extends string | Column>(y: C, x: string | Column) => pairAgg('regr_r2', y, x);

/** The aggregates of two columns by their names in Spark SQL (max_by, min_by and the pair aggregates), for the SQL front end and the conformance format. */
export const TWO_COLUMN_AGGREGATES_BY_NAME: Readonly<Record<string, (y: string | Column, x: string | Column) => AggBuilder>> = {
  max_by: maxBy,
  min_by: minBy,
  corr,
  covar_pop: covarPop,
  covar_samp: covarSamp,
  regr_count: regrCount,
  regr_avgx: regrAvgx,
  regr_avgy: regrAvgy,
  regr_sxx: regrSxx,
  regr_syy: regrSyy,
  regr_sxy: regrSxy,
  regr_slope: regrSlope,
  regr_intercept: regrIntercept,
  regr_r2: regrR2,
};

/**
 * The one-argument aggregates by their names in Spark SQL (aliases too: `mean`, `std`, `every`,
 * ...), for the SQL front end and the conformance format; count and the two-argument max_by and
 * min_by are read apart.
 */
export const AGGREGATES_BY_NAME: Readonly<Record<string, (c: string | Column) => AggBuilder>> = {
  sum,
  min,
  max,
  avg,
  mean: avg,
  try_sum: trySum,
  try_avg: tryAvg,
  first,
  first_value: first,
  any_value: anyValue,
  last,
  last_value: last,
  approx_count_distinct: approxCountDistinct,
  stddev,
  stddev_samp: stddevSamp,
  std: stddev,
  stddev_pop: stddevPop,
  variance,
  var_samp: varSamp,
  var_pop: varPop,
  skewness,
  kurtosis,
  median,
  mode: (c) => mode(c),
  count_if: countIf,
  bool_and: boolAnd,
  every: boolAnd,
  bool_or: boolOr,
  some: boolOr,
  any: boolOr,
  collect_list: collectList,
  array_agg: collectList,
  bit_and: bitAnd,
  bit_or: bitOr,
  bit_xor: bitXor,
  product,
  collect_set: collectSet,
  listagg: (c) => listagg(c),
  string_agg: (c) => stringAgg(c),
};

function byAgg<F extends 'max_by' | 'min_by', C extends string | Column>(fn: F, column: C, by: string | Column): AggBuilder<string, F, C> {
  return twoColumns(fn, column, by);
}

function pairAgg<F extends PairAggFn, C extends string | Column>(fn: F, y: C, x: string | Column): AggBuilder<string, F, C> {
  return twoColumns(fn, y, x);
}

/** An aggregate of two columns, named `fn(a, b)` as Spark names it. */
function twoColumns<F extends AggFn, C extends string | Column>(fn: F, column: C, by: string | Column): AggBuilder<string, F, C> {
  return new AggBuilder(fn, column, `${fn}(${sqlOf(column)}, ${sqlOf(by)})`, by);
}

// ------------------------------------------------------------------------------ select items

/**
 * A generator as a select item (Spark's explode family): `select('orderId', explode('lines'))`
 * gives one row per element. Its type parameters are the path, whether it adds `pos`, whether it
 * is outer, and the names given by `.as(...)` (null: Spark's names).
 */
export class GeneratorItem<P extends string = string, Pos extends boolean = boolean, Outer extends boolean = boolean, A extends readonly string[] | null = null>
  implements ExplodeItem
{
  readonly kind = 'explode';
  readonly path: ColumnPath;
  constructor(
    readonly text: P,
    readonly position: Pos,
    readonly outer: Outer,
    readonly names: A,
  ) {
    this.path = parsePath(text, `${position ? 'pos' : ''}explode${outer ? '_outer' : ''}`);
  }
  /** Names the columns, in order, as Spark's `.as('line')` or `.as('pos', 'line')`. */
  as<const N extends readonly string[]>(...names: N): GeneratorItem<P, Pos, Outer, N> {
    return new GeneratorItem(this.text, this.position, this.outer, names);
  }
  alias<const N extends readonly string[]>(...names: N): GeneratorItem<P, Pos, Outer, N> {
    return this.as(...names);
  }
}
/** `explode(column)`: one row per element of an ARRAY (column `col`) or entry of a MAP (`key`, `value`); a null or empty one gives none. */
export function explode<P extends string>(column: P): GeneratorItem<P, false, false> {
  return new GeneratorItem(column, false, false, null);
}
/** `explode_outer(column)`: as explode, but a null or empty ARRAY or MAP gives one row of nulls. */
export function explodeOuter<P extends string>(column: P): GeneratorItem<P, false, true> {
  return new GeneratorItem(column, false, true, null);
}
/** `posexplode(column)`: as explode, with the element's 0-based position first (column `pos`, INT). */
export function posexplode<P extends string>(column: P): GeneratorItem<P, true, false> {
  return new GeneratorItem(column, true, false, null);
}
/** `posexplode_outer(column)`: as posexplode, but a null or empty one gives one row of nulls. */
export function posexplodeOuter<P extends string>(column: P): GeneratorItem<P, true, true> {
  return new GeneratorItem(column, true, true, null);
}

/** `select(renamed('eventTime', 'ts'))`: column `column` under the name `as`. */
export function renamed(column: string, as: string): ProjectItem {
  return { kind: 'column', as, column };
}
/** `select(windowTime('window', 'wt'))`: Spark's window_time(window), the window's end − 1 µs, a TIMESTAMP that keeps the window's watermark. */
export function windowTime(column: string, as = 'window_time'): ProjectItem {
  return { kind: 'windowTime', as, column };
}
/** `select(windowStart('window', 'start'))`: the window's start as a TIMESTAMP (no watermark). */
export function windowStart(column: string, as: string): ProjectItem {
  return { kind: 'windowStart', as, column };
}
/** `select(windowEnd('window', 'end'))`: the window's end as a TIMESTAMP (no watermark). */
export function windowEnd(column: string, as: string): ProjectItem {
  return { kind: 'windowEnd', as, column };
}
/** `select(windowOf(window('eventTime', '10 seconds'), 'w'))`: the tumbling window that contains the column's time. */
export function windowOf(w: WindowKey, as: string): ProjectItem {
  if (w.slideUs !== w.durationUs)
    throw new InvalidQueryError(
      `select: the window on ${w.column} (${w.text}) slides, so a row has several: a select takes a tumbling window; group by the sliding window instead`,
    );
  return { kind: 'window', as, window: w };
}
