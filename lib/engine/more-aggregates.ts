/**
 * The aggregates beyond count, sum, avg, min, max, first, last and approx_count_distinct
 * (aggregates.ts), with Spark's semantics and buffers that are JSON, as state stores them:
 *
 * - stddev / stddev_samp / std, stddev_pop, variance / var_samp, var_pop, skewness and kurtosis:
 *   Spark's CentralMomentAgg (of order 2, 3 and 4) over the values cast to DOUBLE
 *   (moment-aggregates.ts): the buffer [n, avg, m2(, m3(, m4))], updated per value and merged
 *   with Spark's formulas; a sample figure of one value is NULL (Spark since 3.1,
 *   spark.sql.legacy.statisticalAggregate false), of no value NULL.
 * - percentile(x, p) and median: Spark's exact Percentile over a buffer of each value's count (so
 *   its state grows with the distinct values); percentile_approx over the same buffer, by the
 *   rank rule of Spark's sketch (exactly Spark's figure while a group holds at most accuracy/2
 *   values).
 * - count_if (BIGINT: the rows whose BOOLEAN is true), bool_and / every and bool_or / some / any
 *   (BOOLEAN over the non-null values; NULL without one).
 * - max_by and min_by: the value of the row whose ordering column is the largest (smallest).
 * - bit_and, bit_or and bit_xor of an integral column (of its type), product (a DOUBLE).
 * - corr, covar_pop, covar_samp, regr_sxx, regr_syy, regr_sxy, regr_slope, regr_intercept and
 *   regr_r2 over the rows where both columns are non-null, cast to DOUBLE (moment-aggregates.ts): Spark's Covariance
 *   ([n, xAvg, yAvg, ck]) and PearsonCorrelation (and the xMk, yMk of each side) buffers with their
 *   update and merge formulas; regr_slope and regr_intercept a covariance of (x, y) and the second
 *   moment of x. A figure Spark would divide by zero for is NULL: covar_samp and corr of one pair,
 *   corr of a column without variance (SPARK-58213; Spark 4.0 raises DIVIDE_BY_ZERO under ANSI),
 *   a slope or intercept when x does not vary. regr_count, regr_avgx and regr_avgy are count and
 *   avg of the pairs (aggregates.ts).
 * - collect_list and collect_set: an ARRAY of the non-null values, in the order the batches and
 *   their rows brought them; collect_set keeps a value once (a DOUBLE's NaN equals NaN, a nested
 *   value by its content). Spark's collect_set lists its values in the order of its
 *   hash set, which no one can rely on: sort it with array_sort when the order matters.
 */
import { lessFor } from './aggregates';
import { keysComparator } from './order';
import { groupingKey } from './operators/state-id';
import type { CompiledAgg } from './aggregates';
import type { Json } from './ports';
import { SparkRowError } from './expr/errors';
import { castFunction } from './expr/cast';
import { STRING } from './expr/types';
import { encodeStateJson } from './state-json';
import type { AggSpec, BitAggFn, BooleanAggFn, ByAggFn, CollectAggFn } from './plan/types';
import { canonicalLong, type DataType } from './schema';
import { isBitAgg, isBooleanAgg, isCollectAgg, isPairAgg, isStatisticalAgg } from './plan/agg-kinds';
import { asDouble, castCheck, pairAgg, statistical } from './moment-aggregates';

/** A value of a column as median counts it: a DECIMAL by its text (one scale per column), an ARRAY or STRUCT (mode's) as an object, others as they are. */
type CountedKey = number | bigint | string | object;

/**
 * Each buffer's index of its values (the buffer is the JSON state keeps; the index is rebuilt when
 * a buffer comes back from state). An ARRAY or STRUCT value (mode's) is indexed by its content, as
 * grouping keys it: equal values count as one, as in Spark's map of value to count.
 */
const countIndexes = new WeakMap<object, Map<unknown, number>>();

function countIndex(list: Json[]): Map<unknown, number> {
  let index = countIndexes.get(list);
  if (index === undefined) {
    index = new Map();
    for (let i = 0; i < list.length; i++) index.set(groupingKey((list[i] as Json[])[0]), i);
    countIndexes.set(list, index);
  }
  return index;
}

/** Adds `count` of value `v` to a buffer of [value, count] pairs (Spark's Percentile keeps a map of value to count). */
function addCount(list: Json[], v: CountedKey, count: number): void {
  const index = countIndex(list);
  const key = groupingKey(v);
  const at = index.get(key);
  if (at !== undefined) (list[at] as number[])[1] += count;
  else {
    index.set(key, list.length);
    list.push([v as Json, count]);
  }
}

/**
 * The init, update and merge of a buffer of [value, count] pairs of a column's non-null values
 * (percentile, median, percentile_approx); with `frequency`, each row's value counts that
 * column's value times (percentile's third argument: a row whose frequency is null or 0 adds nothing).
 */
function valueCounts(column: string, frequency?: string): Pick<CompiledAgg, 'init' | 'update' | 'merge'> {
  return {
    init: () => [],
    update: (s, r) => {
      const v = r[column];
      if (v === null || v === undefined) return s;
      const n = frequency === undefined ? 1 : Number(r[frequency] ?? 0);
      if (n > 0) addCount(s as Json[], v as CountedKey, n);
      return s;
    },
    merge: (a, b) => {
      const out = (a as Json[]).map((e) => [...(e as Json[])] as Json);
      for (const e of b as Json[]) addCount(out, (e as Json[])[0] as CountedKey, (e as number[])[1]);
      return out;
    },
  };
}

/** The column's order, or its reverse when the aggregate's one WITHIN GROUP key is descending (mode, percentile_cont, percentile_disc). */
function withinGroupLess(spec: AggSpec, inType: DataType | undefined): (a: unknown, b: unknown) => boolean {
  const ascending = lessFor(inType);
  return spec.order?.[0]?.desc === true ? (a, b) => ascending(b, a) : ascending;
}

/** A value-count buffer's [value, count] pairs in the column's order. */
function sortedCounts(s: Json, less: (a: unknown, b: unknown) => boolean): Json[][] {
  return [...(s as Json[][])].sort((x, y) => (less(x[0], y[0]) ? -1 : less(y[0], x[0]) ? 1 : 0));
}

/**
 * percentile(x, p) and median (Spark's Median is `percentile(x, 0.5)`), exact as Spark's Percentile:
 * the values sorted, the position (count − 1) × p, and between two values the linear interpolation
 * Spark computes, on the values as DOUBLE. NULL over no value; at an array of percentages, the
 * array of their figures.
 */
function percentile(spec: AggSpec, column: string, inType: DataType | undefined, percentage: number | readonly number[], frequency?: string): CompiledAgg {
  // percentile_cont/percentile_disc WITHIN GROUP (ORDER BY x DESC): the values from the highest
  const less = withinGroupLess(spec, inType);
  const discrete = spec.fn === 'percentile_disc';
  const toDouble = (v: Json): number => (typeof v === 'number' ? v : Number(v as string | bigint));
  return {
    spec,
    ...valueCounts(column, frequency),
    ...(frequency === undefined ? {} : { check: frequencyCheck(spec, column, frequency) }),
    finish: (s) => {
      const entries = sortedCounts(s, less);
      if (entries.length === 0) return null;
      const cumulative: number[] = [];
      let total = 0;
      for (const e of entries) cumulative.push((total += e[1] as number));
      // the first entry whose cumulative count reaches n
      const at = (n: number) => cumulative.findIndex((c) => c >= n);
      const figure = (p: number): number => {
        // percentile_disc: the value whose cumulative share first reaches p (the smallest cume_dist() >= p)
        if (discrete) return toDouble(entries[Math.max(0, at(Math.ceil(total * p)))][0]);
        const position = (total - 1) * p;
        const lower = Math.floor(position);
        const higher = Math.ceil(position);
        const lowerKey = entries[at(lower + 1)][0];
        if (higher === lower) return toDouble(lowerKey);
        const higherKey = entries[at(higher + 1)][0];
        if (higherKey === lowerKey) return toDouble(lowerKey);
        return (higher - position) * toDouble(lowerKey) + (position - lower) * toDouble(higherKey);
      };
      return typeof percentage === 'number' ? figure(percentage) : percentage.map(figure);
    },
  };
}

/**
 * A row of percentile(x, p, f) whose frequency is negative: Spark's
 * NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION, a dead letter here (FORMAT-3 departure 2). One past
 * 2^53 − 1 too, where Spark would count it: the counts are kept as doubles, exact only that far.
 */
function frequencyCheck(spec: AggSpec, column: string, frequency: string): (r: Record<string, unknown>) => void {
  return (r) => {
    const f = r[frequency];
    if (r[column] === null || r[column] === undefined || f === null || f === undefined) return;
    if ((f as number | bigint) < 0)
      throw new SparkRowError(
        'NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION',
        `Found the negative value in \`${frequency}\`: ${f}, but expected a positive integral value (${spec.as}: make the frequency 0 to leave a row out)`,
      );
    if (typeof f === 'bigint' && f > BigInt(Number.MAX_SAFE_INTEGER))
      throw new SparkRowError(
        'ARITHMETIC_OVERFLOW',
        `the frequency ${f} in \`${frequency}\` is beyond 9007199254740991, the most sluice counts exactly (${spec.as}): split the row's weight`,
      );
  };
}

/**
 * mode(x): the most frequent non-null value, of the column's type (an ARRAY or STRUCT, a window
 * too, counted by content); NULL over no value. Of values
 * equally frequent, the lowest in the column's order: Spark 4's mode(x, true), where Spark's
 * mode(x) returns any of them (its hash map's first), which a replay of a batch could not repeat.
 * The buffer is median's value counts.
 */
function mode(spec: AggSpec, column: string, inType: DataType | undefined): CompiledAgg {
  // mode() WITHIN GROUP (ORDER BY x DESC): of equally frequent values, the highest
  const less = withinGroupLess(spec, inType);
  return {
    spec,
    ...valueCounts(column),
    finish: (s) => {
      let best: Json[] | null = null;
      for (const e of s as Json[][]) {
        const n = e[1] as number;
        const top = best === null ? -1 : (best[1] as number);
        if (n > top || (n === top && less(e[0], best![0]))) best = e;
      }
      return best === null ? null : best[0];
    },
  };
}

/**
 * percentile_approx(x, p, accuracy): the rank rule of Spark's QuantileSummaries.query over the
 * exact values (its sketch keeps every value exactly while a group holds at most accuracy/2 of
 * them, where the two agree; beyond, Spark's is within count/accuracy ranks of this one): the least value at p <= 1/accuracy, the greatest at p >= 1 - 1/accuracy,
 * else the value at rank ceil(p × count) in sorted order, itself (the column's type). The buffer
 * is median's value counts.
 */
function percentileApprox(spec: AggSpec, column: string, inType: DataType | undefined, percentage: number | readonly number[], accuracy: number): CompiledAgg {
  const less = lessFor(inType);
  const relativeError = 1 / accuracy;
  return {
    spec,
    ...valueCounts(column),
    finish: (s) => {
      const entries = sortedCounts(s, less);
      if (entries.length === 0) return null;
      let count = 0;
      for (const e of entries) count += e[1] as number;
      const figure = (p: number): Json => {
        if (p <= relativeError) return entries[0][0];
        if (p >= 1 - relativeError) return entries[entries.length - 1][0];
        const rank = Math.ceil(p * count);
        let seen = 0;
        for (const e of entries) {
          seen += e[1] as number;
          if (seen >= rank) return e[0];
        }
        return entries[entries.length - 1][0];
      };
      return typeof percentage === 'number' ? figure(percentage) : percentage.map(figure);
    },
  };
}

function booleanAgg(spec: AggSpec, fn: BooleanAggFn, column: string): CompiledAgg {
  if (fn === 'count_if') {
    return {
      spec,
      init: () => 0,
      update: (s, r) => (r[column] === true ? (s as number) + 1 : s),
      merge: (a, b) => (a as number) + (b as number),
      finish: (s) => s,
    };
  }
  const all = fn === 'bool_and' || fn === 'every';
  const pick = (s: Json, v: unknown): Json => {
    if (typeof v !== 'boolean') return s;
    if (s === null) return v;
    return all ? (s as boolean) && v : (s as boolean) || v;
  };
  return { spec, init: () => null, update: (s, r) => pick(s, r[column]), merge: (a, b) => pick(a, b), finish: (s) => s };
}

/**
 * Whether two values of a column are one in collect_set: as Spark's hash set of the values finds
 * them (a DOUBLE as java.lang.Double.equals: NaN is NaN), a nested value by its whole content.
 */
function sameEntry(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null) return Object.is(a, b);
  return typeof b === 'object' && b !== null && encodeStateJson(a as Json) === encodeStateJson(b as Json);
}

function collect(spec: AggSpec, fn: CollectAggFn, column: string): CompiledAgg {
  const add = (list: Json[], v: unknown): void => {
    if (v === null || v === undefined) return;
    if (fn === 'collect_set') {
      for (const x of list) if (sameEntry(x, v)) return;
    }
    list.push(v as Json);
  };
  return {
    spec,
    init: () => [],
    update: (s, r) => {
      add(s as Json[], r[column]);
      return s;
    },
    merge: (a, b) => {
      const out = [...(a as Json[])];
      for (const v of b as Json[]) add(out, v);
      return out;
    },
    finish: (s) => [...(s as Json[])],
  };
}

/**
 * max_by / min_by: the buffer [seen, by, value] of the row with the largest (smallest) non-null
 * `by` so far; a tie keeps the earlier row, within a batch and across (Spark's MaxBy and MinBy
 * take the new row or the other buffer only when its ordering is strictly greater or less).
 */
function byAgg(spec: AggSpec, fn: ByAggFn, column: string, by: string, byType: DataType | undefined): CompiledAgg {
  const less = lessFor(byType);
  const better = fn === 'max_by' ? (a: unknown, b: unknown) => less(b, a) : less;
  const pick = (s: Json, b: unknown, v: unknown): Json => {
    if (b === null || b === undefined) return s;
    const cur = s as Json[];
    return cur[0] === 0 || better(b, cur[1]) ? [1, b as Json, (v ?? null) as Json] : s;
  };
  return {
    spec,
    init: () => [0, null, null],
    update: (s, r) => pick(s, r[by], r[column]),
    merge: (a, b) => {
      const other = b as Json[];
      return other[0] === 0 ? a : pick(a, other[1], other[2]);
    },
    finish: (s) => (s as Json[])[2],
  };
}

/**
 * bit_and, bit_or and bit_xor of an integral column (Spark's BitAndAgg, BitOrAgg, BitXorAgg): the
 * operation over the non-null values, NULL without one, of the column's type. An INT's values
 * combine as JS's 32-bit operations do; a BIGINT's as 64-bit BigInts (JS's operators would cut it
 * to 32 bits), kept a number while it is a safe integer.
 */
function bitAgg(spec: AggSpec, fn: BitAggFn, column: string, inType: DataType | undefined): CompiledAgg {
  const long = inType?.type === 'LONG';
  const op32 = fn === 'bit_and' ? (a: number, b: number) => a & b : fn === 'bit_or' ? (a: number, b: number) => a | b : (a: number, b: number) => a ^ b;
  const op64 = fn === 'bit_and' ? (a: bigint, b: bigint) => a & b : fn === 'bit_or' ? (a: bigint, b: bigint) => a | b : (a: bigint, b: bigint) => a ^ b;
  const combine = (s: Json, v: unknown): Json => {
    if (v === null || v === undefined) return s;
    if (s === null) return v as Json;
    if (!long) return op32(s as number, v as number);
    return canonicalLong(BigInt.asIntN(64, op64(BigInt(s as number | bigint), BigInt(v as number | bigint)))) as Json;
  };
  return { spec, init: () => null, update: (s, r) => combine(s, r[column]), merge: (a, b) => combine(a, b), finish: (s) => s };
}

/** product(x): Spark's Product, the values cast to DOUBLE multiplied in order, NULL without a value. */
function product(spec: AggSpec, column: string, inType: DataType | undefined): CompiledAgg {
  const check = castCheck(column, inType);
  const times = (s: Json, x: number | null): Json => (x === null ? s : s === null ? x : (s as number) * x);
  return {
    spec,
    ...(check ? { check } : {}),
    init: () => null,
    update: (s, r) => times(s, asDouble(r[column])),
    merge: (a, b) => times(a, b as number | null),
    finish: (s) => s,
  };
}

/**
 * listagg(x[, delimiter]) [WITHIN GROUP (ORDER BY k ...)] (string_agg): Spark 4's ListAgg. The
 * non-null values, as STRING (a value of another type cast as Spark casts it), joined by the
 * delimiter (none when absent, Spark's NULL); NULL over no value. Without an order, in the order
 * the rows came (Spark's is the order after its shuffle, which it calls non-deterministic); with
 * one, sorted by the keys (a stable sort: equal keys keep that order), each key ascending with its
 * nulls first or descending with its nulls last unless the clause says otherwise. The buffer is
 * the values, or [value, keys] pairs, so the state grows with the rows, as collect_list's does.
 */
function listagg(spec: AggSpec, column: string, inType: DataType | undefined, byType: DataType | undefined): CompiledAgg {
  const text = inType === undefined || inType.type === 'STRING' ? (v: unknown) => v as string : (castFunction(inType, STRING, false) as (v: unknown) => string);
  const order = spec.order ?? [];
  const by = spec.by;
  const ordered = order.length > 0 && by !== undefined;
  // one key: the key itself; several: the fields of a STRUCT, k0, k1, ...
  const keyTypes = order.length === 1 ? [byType] : order.map((_, i) => byType?.fields?.[i]);
  const keyOf = (k: unknown, i: number): unknown => (order.length === 1 ? k : k === null || k === undefined ? null : (k as Record<string, unknown>)[`k${i}`]);
  const compare = keysComparator<Json[]>(
    order.map((o, i) => {
      const less = lessFor(keyTypes[i]);
      return { value: (e) => keyOf(e[1], i), compare: (x, y) => (less(x, y) ? -1 : less(y, x) ? 1 : 0), desc: o.desc, nullsFirst: o.nullsFirst };
    }),
  );
  return {
    spec,
    init: () => [],
    update: (s, r) => {
      const v = r[column];
      if (v === null || v === undefined) return s;
      (s as Json[]).push(ordered ? [text(v), (r[by] ?? null) as Json] : text(v));
      return s;
    },
    merge: (a, b) => [...(a as Json[]), ...(b as Json[])],
    finish: (s) => {
      const items = s as Json[];
      if (items.length === 0) return null;
      const values = ordered ? [...(items as Json[][])].sort(compare).map((e) => e[0] as string) : (items as string[]);
      return values.join(spec.delimiter ?? '');
    },
  };
}

/** The aggregate of `spec` when it is one of this module's, else null. `inType`: the column's type; `byType`: max_by's and min_by's ordering column's. */
export function compileMoreAgg(spec: AggSpec, inType: DataType | undefined, byType?: DataType): CompiledAgg | null {
  const column = spec.column!;
  if ((spec.fn === 'max_by' || spec.fn === 'min_by') && spec.by !== undefined) return byAgg(spec, spec.fn, column, spec.by, byType);
  if (isPairAgg(spec.fn) && spec.by !== undefined) return pairAgg(spec, spec.fn, column, spec.by, inType, byType);
  if (isStatisticalAgg(spec.fn)) return statistical(spec, spec.fn, column, inType);
  if (spec.fn === 'median') return percentile(spec, column, inType, 0.5);
  if (spec.fn === 'mode') return mode(spec, column, inType);
  if (spec.fn === 'listagg') return listagg(spec, column, inType, byType);
  if (spec.fn === 'percentile' || spec.fn === 'percentile_disc') return percentile(spec, column, inType, spec.percentage ?? 0.5, spec.by);
  if (spec.fn === 'percentile_approx') return percentileApprox(spec, column, inType, spec.percentage ?? 0.5, spec.accuracy ?? 10_000);
  if (isBooleanAgg(spec.fn)) return booleanAgg(spec, spec.fn, column);
  if (isBitAgg(spec.fn)) return bitAgg(spec, spec.fn, column, inType);
  if (spec.fn === 'product') return product(spec, column, inType);
  if (isCollectAgg(spec.fn)) return collect(spec, spec.fn, column);
  return null;
}
