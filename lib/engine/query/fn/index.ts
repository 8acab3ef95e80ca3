/**
 * The functions module: pyspark's `pyspark.sql.functions` as typed calls that build the Spark SQL
 * text the string form would (`F.upper(F.col('country'))` is `upper(country)`), so
 * `select(F.upper(F.col('country')).as('c'))` and `selectExpr('upper(country) AS c')` make the
 * same plan. Exported as the namespace `F` (`import { F } from 'sluice'`), as pyspark code
 * imports `functions as F`: the top-level `col`, `explode`, ... keep their older meanings.
 */
export { Column, expr } from '../column';
export type { Operand } from '../column';
export type { ColArg, ColOf, ColType, UnknownType } from '../column-types';
export { col, column, lit, when, CaseColumn, coalesce, nullif, nvl, ifnull, nvl2, isnull, isnotnull, greatest, least, not, input_file_name } from './core';
export * from './strings';
export * from './dates';
export * from './collections';
export {
  asc,
  desc,
  window,
  sessionWindow as session_window,
  count,
  sum,
  avg,
  tryAvg as try_avg,
  trySum as try_sum,
  min,
  max,
  first,
  anyValue as any_value,
  last,
  approxCountDistinct as approx_count_distinct,
  stddev,
  stddevSamp as stddev_samp,
  stddevPop as stddev_pop,
  variance,
  varSamp as var_samp,
  varPop as var_pop,
  skewness,
  kurtosis,
  median,
  mode,
  percentile,
  percentileApprox as percentile_approx,
  listagg,
  stringAgg as string_agg,
  countIf as count_if,
  boolAnd as bool_and,
  boolOr as bool_or,
  collectList as collect_list,
  collectSet as collect_set,
  bitAnd as bit_and,
  bitOr as bit_or,
  bitXor as bit_xor,
  product,
  maxBy as max_by,
  minBy as min_by,
  corr,
  covarPop as covar_pop,
  covarSamp as covar_samp,
  regrCount as regr_count,
  regrAvgx as regr_avgx,
  regrAvgy as regr_avgy,
  regrSxx as regr_sxx,
  regrSyy as regr_syy,
  regrSxy as regr_sxy,
  regrSlope as regr_slope,
  regrIntercept as regr_intercept,
  regrR2 as regr_r2,
} from '../functions';
