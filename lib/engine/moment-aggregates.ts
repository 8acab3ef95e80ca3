/**
 * The aggregates of moments (more-aggregates.ts dispatches to them): Spark's CentralMomentAgg
 * (stddev, variance, skewness, kurtosis), Covariance and PearsonCorrelation (covar_pop,
 * covar_samp, corr, regr_sxy, regr_r2) and the regressions built from them (regr_sxx, regr_syy,
 * regr_slope, regr_intercept), each a buffer of counts, means and sums of deviations updated and
 * merged with Spark's formulas, so a batch merged into its stored state gives what Spark's partial
 * and final aggregation give.
 */
import { stringToDouble } from './aggregates';
import type { CompiledAgg } from './aggregates';
import type { AggSpec, PairAggFn, StatisticalAggFn } from './plan/types';
import type { DataType } from './schema';

/** A value as the DOUBLE Spark casts a second-moment aggregate's input to (a DECIMAL's or STRING's text parsed). */
export function asDouble(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return stringToDouble(v);
  return null;
}

/**
 * [n, avg, m2(, m3(, m4))] of Spark's CentralMomentAgg of `order` (2: stddev and variance, 3:
 * skewness, 4: kurtosis) with one more value, by Spark's update formulas (m3 and m4 from the new m2
 * and m3, as Spark writes them). Updated in place.
 */
function addMoment(m: number[], x: number, order: number): void {
  const n = m[0] + 1;
  const delta = x - m[1];
  const deltaN = delta / n;
  const m2 = m[2] + delta * (delta - deltaN);
  m[0] = n;
  m[1] += deltaN;
  m[2] = m2;
  if (order < 3) return;
  const delta2 = delta * delta;
  const deltaN2 = deltaN * deltaN;
  const m3 = m[3] - 3 * deltaN * m2 + delta * (delta2 - deltaN2);
  m[3] = m3;
  if (order < 4) return;
  m[4] = m[4] - 4 * deltaN * m3 - 6 * deltaN2 * m2 + delta * (delta * delta2 - deltaN * deltaN2);
}

/** Two partial buffers of CentralMomentAgg merged as Spark merges them (the higher-order terms of the two-pass formulas). */
function mergeMoments(a: number[], b: number[], order: number): number[] {
  const [n1, avg1, m21] = a;
  const [n2, avg2, m22] = b;
  const n = n1 + n2;
  const delta = avg2 - avg1;
  const deltaN = n === 0 ? 0 : delta / n;
  const out = [n, avg1 + deltaN * n2, m21 + m22 + delta * deltaN * n1 * n2];
  if (order >= 3) out.push(a[3] + b[3] + deltaN * deltaN * delta * n1 * n2 * (n1 - n2) + 3 * deltaN * (n1 * m22 - n2 * m21));
  if (order >= 4) {
    out.push(
      a[4] +
        b[4] +
        deltaN * deltaN * deltaN * delta * n1 * n2 * (n1 * n1 - n1 * n2 + n2 * n2) +
        6 * deltaN * deltaN * (n1 * n1 * m22 + n2 * n2 * m21) +
        4 * deltaN * (n1 * b[3] - n2 * a[3]),
    );
  }
  return out;
}

/** The figure of a CentralMomentAgg buffer: NULL over no value, and where Spark divides by zero (one value of a sample figure, m2 0 of skewness and kurtosis). */
function momentFigure(fn: StatisticalAggFn, m: number[]): number | null {
  const [n, , m2] = m;
  if (n === 0) return null;
  switch (fn) {
    case 'skewness':
      return m2 === 0 ? null : (Math.sqrt(n) * m[3]) / Math.sqrt(m2 * m2 * m2);
    case 'kurtosis':
      return m2 === 0 ? null : (n * m[4]) / (m2 * m2) - 3;
    case 'stddev_pop':
      return Math.sqrt(m2 / n);
    case 'var_pop':
      return m2 / n;
    case 'variance':
    case 'var_samp':
      return n === 1 ? null : m2 / (n - 1);
    default:
      return n === 1 ? null : Math.sqrt(m2 / (n - 1));
  }
}

/**
 * The row check of an aggregate that casts a STRING column to DOUBLE (Spark's ANSI cast: 'x' is
 * CAST_INVALID_INPUT, the row a dead letter), or undefined for a column of another type.
 */
export function castCheck(column: string, inType: DataType | undefined): ((r: Record<string, unknown>) => void) | undefined {
  if (inType?.type !== 'STRING') return undefined;
  return (r) => {
    const v = r[column];
    if (typeof v === 'string') stringToDouble(v);
  };
}

/**
 * The row check of an aggregate of two columns, each cast to DOUBLE when it is a STRING: Spark
 * tests `first IS NULL OR second IS NULL` (left first, and stops at true), so a bad `first` is
 * CAST_INVALID_INPUT whatever `second` holds, and `second` is cast only when `first` is not null.
 */
export function pairCastCheck(
  first: string,
  firstType: DataType | undefined,
  second: string,
  secondType: DataType | undefined,
): ((r: Record<string, unknown>) => void) | undefined {
  const a = castCheck(first, firstType);
  const b = castCheck(second, secondType);
  if (a === undefined && b === undefined) return undefined;
  return (r) => {
    if (r[first] === null || r[first] === undefined) return;
    a?.(r);
    b?.(r);
  };
}

export function statistical(spec: AggSpec, fn: StatisticalAggFn, column: string, inType: DataType | undefined): CompiledAgg {
  const order = fn === 'skewness' ? 3 : fn === 'kurtosis' ? 4 : 2;
  const check = castCheck(column, inType);
  return {
    spec,
    ...(check ? { check } : {}),
    init: () => new Array<number>(order + 1).fill(0),
    update: (s, r) => {
      const x = asDouble(r[column]);
      if (x !== null) addMoment(s as number[], x, order);
      return s;
    },
    merge: (a, b) => mergeMoments(a as number[], b as number[], order),
    finish: (s) => momentFigure(fn, s as number[]),
  };
}

/**
 * Spark's Covariance buffer [n, xAvg, yAvg, ck] (ck: the sum of the co-deviations) with one more
 * pair, by its update formulas; with `full`, PearsonCorrelation's [.., xMk, yMk] (each side's
 * sum of squared deviations) too. Updated in place.
 */
function addPair(b: number[], x: number, y: number, full: boolean): void {
  const n = b[0] + 1;
  const dx = x - b[1];
  const dy = y - b[2];
  const dyN = dy / n;
  const xAvg = b[1] + dx / n;
  const yAvg = b[2] + dyN;
  b[0] = n;
  b[1] = xAvg;
  b[2] = yAvg;
  b[3] += dx * (y - yAvg);
  if (!full) return;
  b[4] += dx * (x - xAvg);
  b[5] += dy * (y - yAvg);
}

/** Two Covariance (or, with six slots, PearsonCorrelation) buffers merged as Spark merges them. */
function mergePairs(a: number[], b: number[]): number[] {
  const [n1, xAvg1, yAvg1, ck1] = a;
  const [n2, xAvg2, yAvg2, ck2] = b;
  const n = n1 + n2;
  const dx = xAvg2 - xAvg1;
  const dxN = n === 0 ? 0 : dx / n;
  const dy = yAvg2 - yAvg1;
  const dyN = n === 0 ? 0 : dy / n;
  const out = [n, xAvg1 + dxN * n2, yAvg1 + dyN * n2, ck1 + ck2 + dx * dyN * n1 * n2];
  if (a.length > 4) out.push(a[4] + b[4] + dx * dxN * n1 * n2, a[5] + b[5] + dy * dyN * n1 * n2);
  return out;
}

/** The figure of a pair aggregate's buffer (see pairAgg for the buffers). */
function pairFigure(fn: PairAggFn, b: number[]): number | null {
  const n = b[0];
  switch (fn) {
    case 'covar_pop':
      return n === 0 ? null : b[3] / n;
    case 'covar_samp':
      return n <= 1 ? null : b[3] / (n - 1);
    case 'regr_sxy':
      return n === 0 ? null : b[3];
    case 'corr':
      return n <= 1 || b[4] === 0 || b[5] === 0 ? null : b[3] / Math.sqrt(b[4] * b[5]);
    case 'regr_r2': {
      // PearsonCorrelation(y, x): its first side is y
      if (b[4] === 0) return null;
      if (b[5] === 0) return 1;
      const r = b[3] / Math.sqrt(b[4] * b[5]);
      return r * r;
    }
    case 'regr_sxx':
    case 'regr_syy':
      return n === 0 ? null : b[2];
    case 'regr_slope':
      // [covariance of (x, y): n, xAvg, yAvg, ck; the moments of x: n, avg, m2]
      return b[6] === 0 ? null : b[3] / b[6];
    default:
      // regr_intercept
      return b[6] === 0 ? null : b[2] - (b[3] / b[6]) * b[1];
  }
}

/**
 * corr, covar_pop, covar_samp and the regressions that are not a count or an avg, of the rows
 * where both `first` and `second` are non-null (each cast to DOUBLE). Buffers: covar_* and
 * regr_sxy a Covariance of (first, second); corr and regr_r2 a PearsonCorrelation of (first,
 * second); regr_sxx and regr_syy the moments [n, avg, m2] of x (second) or y (first); regr_slope
 * and regr_intercept a Covariance of (x, y) then the moments of x.
 */
export function pairAgg(
  spec: AggSpec,
  fn: PairAggFn,
  first: string,
  second: string,
  firstType: DataType | undefined,
  secondType: DataType | undefined,
): CompiledAgg {
  const check = pairCastCheck(first, firstType, second, secondType);
  const regression = fn === 'regr_slope' || fn === 'regr_intercept';
  const moments = fn === 'regr_sxx' || fn === 'regr_syy';
  const full = fn === 'corr' || fn === 'regr_r2';
  const size = regression ? 7 : moments ? 3 : full ? 6 : 4;
  return {
    spec,
    ...(check ? { check } : {}),
    init: () => new Array<number>(size).fill(0),
    update: (s, r) => {
      // (y first: a null y leaves x uncast, as pairCastCheck says)
      const y = asDouble(r[first]);
      if (y === null) return s;
      const x = asDouble(r[second]);
      if (x === null) return s;
      const b = s as number[];
      if (moments) {
        const m = [b[0], b[1], b[2]];
        addMoment(m, fn === 'regr_sxx' ? x : y, 2);
        b[0] = m[0];
        b[1] = m[1];
        b[2] = m[2];
      } else if (regression) {
        const m = [b[4], b[5], b[6]];
        addPair(b, x, y, false);
        addMoment(m, x, 2);
        b[4] = m[0];
        b[5] = m[1];
        b[6] = m[2];
      } else addPair(b, y, x, full);
      return s;
    },
    merge: (a, b) => {
      const p = a as number[];
      const q = b as number[];
      if (moments) return mergeMoments(p, q, 2);
      if (regression) return [...mergePairs(p.slice(0, 4), q.slice(0, 4)), ...mergeMoments(p.slice(4), q.slice(4), 2)];
      return mergePairs(p, q);
    },
    finish: (s) => pairFigure(fn, s as number[]),
  };
}
