/** Which family an aggregate function belongs to (its output type, its input check, its buffer: more-aggregates.ts). */
import type { BitAggFn, BooleanAggFn, CollectAggFn, PairAggFn, StatisticalAggFn } from './types';

export const STATISTICAL: ReadonlySet<string> = new Set<StatisticalAggFn>([
  'stddev',
  'stddev_samp',
  'std',
  'stddev_pop',
  'variance',
  'var_samp',
  'var_pop',
  'skewness',
  'kurtosis',
]);
export const BOOLEAN_AGGS: ReadonlySet<string> = new Set<BooleanAggFn>(['count_if', 'bool_and', 'every', 'bool_or', 'some', 'any']);
export const COLLECT: ReadonlySet<string> = new Set<CollectAggFn>(['collect_list', 'collect_set']);
export const PAIR: ReadonlySet<string> = new Set<PairAggFn>([
  'corr',
  'covar_pop',
  'covar_samp',
  'regr_count',
  'regr_avgx',
  'regr_avgy',
  'regr_sxx',
  'regr_syy',
  'regr_sxy',
  'regr_slope',
  'regr_intercept',
  'regr_r2',
]);

/** stddev, variance and their variants, skewness and kurtosis: a DOUBLE of the values cast to DOUBLE. */
export function isStatisticalAgg(fn: string): fn is StatisticalAggFn {
  return STATISTICAL.has(fn);
}

/** count_if, bool_and, bool_or and their aliases: over a BOOLEAN column. */
export function isBooleanAgg(fn: string): fn is BooleanAggFn {
  return BOOLEAN_AGGS.has(fn);
}

/** collect_list and collect_set: an ARRAY of the column's values. */
export function isCollectAgg(fn: string): fn is CollectAggFn {
  return COLLECT.has(fn);
}

/** corr, covar_pop, covar_samp and the regr_* aggregates: over the pairs of two numeric columns. */
export function isPairAgg(fn: string): fn is PairAggFn {
  return PAIR.has(fn);
}

export const BIT: ReadonlySet<string> = new Set<BitAggFn>(['bit_and', 'bit_or', 'bit_xor']);

/** bit_and, bit_or and bit_xor: over an integral column, of its type. */
export function isBitAgg(fn: string): fn is BitAggFn {
  return BIT.has(fn);
}
