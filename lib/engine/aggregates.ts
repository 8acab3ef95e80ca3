/**
 * Aggregation buffers: created per group, updated per row, merged across batches, finished into
 * output values. Buffers are JSON so that they can be stored as state as they are.
 */
import type { Json, Row } from './ports';
import type { AggSpec } from './plan/types';
import { isSparkRowError, SparkRowError } from './expr/errors';
import { hllAdd, hllAddHalves, hllCount, hllMerge, hllNew } from './hll';
import { sparkXxHash64, sparkXxHash64Into } from './expr/spark-hashes';
import { compileMoreAgg } from './more-aggregates';
import { pairCastCheck } from './moment-aggregates';
import { aggregatedType, canonicalLong, type DataType } from './schema';
import { castFunction } from './expr/cast';
import { comparator, compareByCodePoints } from './expr/values';
import type { SqlType } from './expr/types';
import { BOOLEAN, DOUBLE, LONG, STRING } from './expr/types';
import { avgDecimalType, divideHalfUp, fitsPrecision, formatDecimal, rescale, sumDecimalType, unscaledOf } from './decimal';

export type Buffer = Json[];

export interface CompiledAgg {
  readonly spec: AggSpec;
  init(): Json;
  /** Returns the updated buffer slot (may mutate arrays in place). */
  update(slot: Json, row: Row): Json;
  merge(into: Json, other: Json): Json;
  finish(slot: Json): unknown;
  /**
   * A sum or avg that adds exactly (BIGINT values with addLongs, DECIMAL values as BigInts), not
   * doubles: numeric-slots.ts leaves it to this buffer.
   */
  readonly exact?: boolean;
  /**
   * Whether `finish` can raise an ANSI error (a DECIMAL avg whose type holds fewer integer digits
   * than its column's): the overflow guard (operators/overflow-guard.ts) finishes a group's buffer
   * after each row to check it. `update` and `merge` of an exact aggregate raise theirs themselves.
   */
  readonly finishMayFail?: boolean;
  /**
   * Raises the row error the aggregation's input cast raises for a row (sum/avg of a STRING
   * column: Spark's ANSI cast of the text to DOUBLE, CAST_INVALID_INPUT for 'x'). The overflow
   * guard (operators/overflow-guard.ts) calls it before the row reaches any aggregate, so that
   * the row is a dead letter.
   */
  readonly check?: (row: Row) => void;
  /** The column an exact aggregation adds up when it is not `spec.column` (regr_avgx(y, x) averages x): named in overflow advice. */
  readonly addedColumn?: string;
}

/** Spark's ANSI cast of a STRING to DOUBLE, the implicit cast of sum/avg's STRING input ('inf' is Infinity, '1.5d' 1.5, 'x' CAST_INVALID_INPUT). */
export const stringToDouble = castFunction(STRING, DOUBLE, false) as (v: string) => number;

function toNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v); // avg of a BIGINT is a DOUBLE in Spark: its sum is of doubles
  if (typeof v === 'string') return stringToDouble(v);
  return null;
}

/**
 * Spark's order of two values of a column: for doubles, NaN above every other value, Infinity
 * included; for strings, the order of their UTF-8 bytes (UTF8String's binary order), which is the
 * order of their code points, not of their UTF-16 units.
 */
function less(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b || (Number.isNaN(b) && !Number.isNaN(a));
  if (typeof a === 'string' && typeof b === 'string') return compareByCodePoints(a, b) < 0;
  return (a as number) < (b as number);
}

/**
 * Spark's order of two non-null values of a column of type `t` (min, max, max_by, min_by): a
 * DECIMAL by its number (not its text: "9.00" sorts after "10.00" as text); an ARRAY or a STRUCT
 * as Spark's interpreted orderings compare them (below).
 */
export function lessFor(t: DataType | undefined): (a: unknown, b: unknown) => boolean {
  // a window column an earlier aggregation emitted ({start, end}; its type says TIMESTAMP): Spark's STRUCT<start, end>
  t = aggregatedType(t);
  if (t?.type === 'ARRAY' || t?.type === 'STRUCT') {
    // element by element, a null first, then the shorter first; a STRUCT field by field: the expressions' order
    const cmp = comparator(t as SqlType);
    return (a, b) => cmp(a, b) < 0;
  }
  return t?.type === 'DECIMAL' ? lessDecimal : less;
}

function lessDecimal(a: unknown, b: unknown): boolean {
  return unscaledOf(a as string) < unscaledOf(b as string);
}

/** The text of a DECIMAL type, for messages. */
function decimalDdl(precision: number, scale: number): string {
  return `DECIMAL(${precision},${scale})`;
}

/**
 * The unscaled BigInt `sum` of a DECIMAL sum at the column's scale, checked against the sum's
 * precision. Beyond it, Spark (ANSI) fails the query with ARITHMETIC_OVERFLOW ("Overflow in sum of
 * decimals"); here it is a row error: the aggregate operator's overflow guard makes the row that
 * caused it a dead letter (overflow-guard.ts).
 */
function checkedDecimalSum(sum: bigint, precision: number, scale: number, column: string, fn: string): bigint {
  if (fitsPrecision(sum, precision)) return sum;
  throw new SparkRowError(
    'ARITHMETIC_OVERFLOW',
    `Overflow in sum of decimals: ${fn}(${column}) reached ${formatDecimal(sum, scale)}, which does not fit its type ${decimalDdl(precision, scale)}: declare ${column} with fewer fraction digits (the sum keeps its scale and has at most 38 digits) or sum smaller groups`,
  );
}

/** The unscaled value of a DECIMAL sum buffer (null: nothing added yet), kept as the digits of the BigInt so that it stays JSON. */
function bufferBig(s: Json): bigint {
  return BigInt(s as string);
}

/**
 * sum and avg over DECIMAL(p,s), exact: the buffer holds the unscaled sum as a string of digits
 * (JSON, merged by BigInt addition), never a double. sum is DECIMAL(min(38, p + 10), s); avg keeps
 * [sum, count], its sum at DECIMAL(min(38, p + 10), s) as Spark's buffer does, and finishes as
 * the exact sum divided by the count, rounded HALF_UP to DECIMAL(min(38, p + 4), min(38, s + 4)).
 */
function decimalAgg(spec: AggSpec, inType: DataType): CompiledAgg {
  const column = spec.column!;
  const p = inType.precision ?? 10;
  const s = inType.scale ?? 0;
  const sumType = sumDecimalType(p, s);
  const add = (a: bigint, b: bigint) => checkedDecimalSum(a + b, sumType.precision, s, column, spec.fn);
  if (spec.fn === 'sum') {
    return {
      spec,
      exact: true,
      init: () => null,
      update: (acc, r) => {
        const v = r[column] as string | null | undefined;
        if (v === null || v === undefined) return acc;
        return String(acc === null ? checkedDecimalSum(unscaledOf(v), sumType.precision, s, column, 'sum') : add(bufferBig(acc), unscaledOf(v)));
      },
      merge: (a, b) => (a === null ? b : b === null ? a : String(add(bufferBig(a), bufferBig(b)))),
      finish: (acc) => (acc === null ? null : formatDecimal(bufferBig(acc), s)),
    };
  }
  const avgType = avgDecimalType(p, s);
  return {
    spec,
    exact: true,
    // (the avg's type keeps the column's integer digits unless p + 4 passes 38: then the mean of
    // values that fit the column may not fit the avg's type)
    finishMayFail: avgType.precision - avgType.scale < p - s,
    init: () => ['0', 0],
    update: (acc, r) => {
      const v = r[column] as string | null | undefined;
      if (v === null || v === undefined) return acc;
      const a = acc as [string, number];
      return [String(add(bufferBig(a[0]), unscaledOf(v))), a[1] + 1];
    },
    merge: (a, b) => {
      const x = a as [string, number];
      const y = b as [string, number];
      return [String(add(bufferBig(x[0]), bufferBig(y[0]))), x[1] + y[1]];
    },
    finish: (acc) => {
      const [sum, count] = acc as [string, number];
      if (count === 0) return null;
      // the exact quotient at the result's scale, rounded HALF_UP once
      const avg = divideHalfUp(rescale(bufferBig(sum), s, avgType.scale), BigInt(count));
      if (!fitsPrecision(avg, avgType.precision)) {
        throw new SparkRowError(
          'NUMERIC_VALUE_OUT_OF_RANGE',
          `avg(${column}) is ${formatDecimal(avg, avgType.scale)}, which cannot be represented as ${decimalDdl(avgType.precision, avgType.scale)} (avg of ${decimalDdl(p, s)} has at most 38 digits, ${avgType.scale} of them after the point): declare ${column} with fewer fraction digits`,
        );
      }
      return formatDecimal(avg, avgType.scale);
    },
  };
}

/** The largest BIGINT, and the smallest: a sum beyond them overflows (ANSI: an error). */
const MAX_LONG = 2n ** 63n - 1n;
const MIN_LONG = -(2n ** 63n);

/**
 * a + b for two BIGINT values (a number when a safe integer, a bigint beyond, as rows carry them):
 * exact, in the same one form; beyond 64 bits it throws Spark's ARITHMETIC_OVERFLOW (a row error:
 * see checkedDecimalSum).
 */
export function addLongs(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  const big = BigInt(a) + BigInt(b);
  if (big > MAX_LONG || big < MIN_LONG) {
    throw new SparkRowError(
      'ARITHMETIC_OVERFLOW',
      `long overflow: a sum of BIGINT values reached ${big}, beyond -9223372036854775808..9223372036854775807: declare the column DECIMAL(38,0) to sum it exactly`,
    );
  }
  return canonicalLong(big);
}

/**
 * `inType`: the type of the aggregated column. A sum of an INT or LONG column is BIGINT in Spark,
 * so it adds exactly (addLongs); sum and avg of a DECIMAL add exactly too (decimalAgg); other
 * sums add doubles. min and max of a DECIMAL compare numbers, not texts.
 */
export function compileAgg(spec: AggSpec, inType?: DataType, byType?: DataType): CompiledAgg {
  const column = spec.column;
  if ((spec.fn === 'regr_count' || spec.fn === 'regr_avgx' || spec.fn === 'regr_avgy') && spec.by !== undefined) return pairCountOrAvg(spec, inType, byType);
  if (spec.fn === 'try_sum' || spec.fn === 'try_avg') return tryAgg(spec, inType);
  if (inType?.type === 'DECIMAL' && (spec.fn === 'sum' || spec.fn === 'avg')) return decimalAgg(spec, inType);
  if (inType?.type === 'STRING' && (spec.fn === 'sum' || spec.fn === 'avg')) {
    const check = (r: Row) => {
      const v = r[column!];
      if (typeof v === 'string') stringToDouble(v);
    };
    return { ...compileAgg(spec), check };
  }
  switch (spec.fn) {
    case 'count':
      if (column === undefined) {
        return { spec, init: () => 0, update: (s) => (s as number) + 1, merge: (a, b) => (a as number) + (b as number), finish: (s) => s };
      }
      return {
        spec,
        init: () => 0,
        update: (s, r) => (r[column] === null || r[column] === undefined ? s : (s as number) + 1),
        merge: (a, b) => (a as number) + (b as number),
        finish: (s) => s,
      };
    case 'sum':
      if (inType?.type === 'INT' || inType?.type === 'LONG') {
        return {
          spec,
          exact: true,
          init: () => null,
          update: (s, r) => {
            const v = r[column!] as number | bigint | null | undefined;
            if (v === null || v === undefined) return s;
            return (s === null ? v : addLongs(s as number, v)) as Json;
          },
          merge: (a, b) => (a === null ? b : b === null ? a : (addLongs(a as number, b as number) as Json)),
          finish: (s) => s,
        };
      }
      return {
        spec,
        init: () => null,
        update: (s, r) => {
          const v = toNumber(r[column!]);
          if (v === null) return s;
          // Spark's sum starts at 0.0 (coalesce(sum, 0.0) + v): a sum of -0.0 alone is 0.0
          return s === null ? 0 + v : (s as number) + v;
        },
        merge: (a, b) => (a === null ? b : b === null ? a : (a as number) + (b as number)),
        finish: (s) => s,
      };
    case 'avg':
      return {
        spec,
        init: () => [0, 0],
        update: (s, r) => {
          const v = toNumber(r[column!]);
          if (v === null) return s;
          const a = s as number[];
          a[0] += v;
          a[1] += 1;
          return a;
        },
        merge: (a, b) => {
          const x = a as number[];
          const y = b as number[];
          return [x[0] + y[0], x[1] + y[1]];
        },
        finish: (s) => {
          const a = s as number[];
          return a[1] === 0 ? null : a[0] / a[1];
        },
      };
    case 'min':
    case 'max': {
      const order = lessFor(inType);
      const better = spec.fn === 'min' ? (a: unknown, b: unknown) => order(a, b) : (a: unknown, b: unknown) => order(b, a);
      const pick = (s: Json, v: unknown): Json => {
        if (v === null || v === undefined) return s;
        return s === null || better(v, s) ? (v as Json) : s;
      };
      return { spec, init: () => null, update: (s, r) => pick(s, r[column!]), merge: (a, b) => pick(a, b), finish: (s) => s };
    }
    case 'first':
    case 'any_value':
      // [seen, value]: Spark's first() without ignoreNulls keeps the first row's value, null or not;
      // with it, the first non-null one (a null row is not seen)
      return {
        spec,
        init: () => [0, null],
        update: (s, r) => ((s as Json[])[0] || (spec.ignoreNulls && (r[column!] ?? null) === null) ? s : [1, (r[column!] ?? null) as Json]),
        merge: (a, b) => ((a as Json[])[0] ? a : b),
        finish: (s) => (s as Json[])[1],
      };
    case 'last':
      return {
        spec,
        init: () => [0, null],
        update: (s, r) => (spec.ignoreNulls && (r[column!] ?? null) === null ? s : [1, (r[column!] ?? null) as Json]),
        merge: (a, b) => ((b as Json[])[0] ? b : a),
        finish: (s) => (s as Json[])[1],
      };
    case 'approxCountDistinct': {
      // (an atomic type: hashed without BigInt, its halves into HALVES; a nested one, or none known: as a BigInt)
      // (a window column, {start, end} under a TIMESTAMP type, hashes as Spark's STRUCT<start, end>)
      const t = aggregatedType(inType);
      const into = t === undefined ? null : sparkXxHash64Into(t);
      const hash = t === undefined ? hashByValue : sparkXxHash64(t);
      return {
        spec,
        init: () => hllNew(),
        update: (s, r) => {
          const v = r[column!];
          if (v === null || v === undefined) return s;
          if (into === null) return hllAdd(s as string, hash(v));
          into(v, HALVES);
          return hllAddHalves(s as string, HALVES[0], HALVES[1]);
        },
        merge: (a, b) => hllMerge(a as string, b as string),
        finish: (s) => hllCount(s as string),
      };
    }
    default: {
      const more = compileMoreAgg(spec, inType, byType);
      if (more === null) throw new Error(`internal: no aggregate ${spec.fn}`);
      return more;
    }
  }
}

/** Where sparkXxHash64Into leaves a hash's halves for approx_count_distinct (one per process: update runs to its end before the next). */
const HALVES = new Uint32Array(2);

const HASH_OF = { string: sparkXxHash64(STRING), long: sparkXxHash64(LONG), double: sparkXxHash64(DOUBLE), boolean: sparkXxHash64(BOOLEAN) };

/** A value's XXH64 when its column's type is not known (a twin's plan, a test): its own kind's. */
function hashByValue(v: unknown): bigint {
  if (typeof v === 'string') return HASH_OF.string(v);
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))) return HASH_OF.long(v);
  if (typeof v === 'number') return HASH_OF.double(v);
  if (typeof v === 'boolean') return HASH_OF.boolean(v);
  return HASH_OF.string(JSON.stringify(v));
}

/**
 * regr_count(y, x), regr_avgx(y, x) and regr_avgy(y, x): Spark's count, and avg of x or of y, over
 * the rows where both are non-null (RegrCount is Count(y, x); RegrAvgX is Average(If(both non-null,
 * x, null))): the avg keeps its type and exactness (a DECIMAL's avg is a DECIMAL).
 */
function pairCountOrAvg(spec: AggSpec, yType: DataType | undefined, xType: DataType | undefined): CompiledAgg {
  const y = spec.column!;
  const x = spec.by!;
  const inner =
    spec.fn === 'regr_count'
      ? compileAgg({ fn: 'count', column: x, as: spec.as })
      : spec.fn === 'regr_avgx'
        ? compileAgg({ fn: 'avg', column: x, as: spec.as }, xType)
        : compileAgg({ fn: 'avg', column: y, as: spec.as }, yType);
  const paired = (r: Row) => r[x] !== null && r[x] !== undefined && r[y] !== null && r[y] !== undefined;
  // both columns cast as Spark casts them, the averaged one's included (a DECIMAL avg's overflow
  // is its exact update's to raise, not a check's)
  const casts = pairCastCheck(y, yType, x, xType);
  return {
    ...inner,
    spec,
    ...(casts ? { check: casts } : {}),
    ...(spec.fn === 'regr_avgx' ? { addedColumn: x } : {}),
    update: (s, r) => (paired(r) ? inner.update(s, r) : s),
  };
}

/** A try_sum or try_avg buffer whose sum overflowed: the aggregate is NULL from then on (Spark's TrySum keeps a null sum once it overflows). */
const OVERFLOWED = false;

/**
 * try_sum(x) and try_avg(x): sum and avg, of their types, whose overflow (a BIGINT sum beyond 64
 * bits, a DECIMAL sum or avg beyond its type) makes the group's aggregate NULL, for good, where
 * sum and avg make the row a dead letter: no row is refused, so the overflow guard leaves them
 * alone (not exact). A STRING column is still cast to DOUBLE, a bad text a dead letter, as in Spark.
 */
function tryAgg(spec: AggSpec, inType: DataType | undefined): CompiledAgg {
  const inner = compileAgg({ ...spec, fn: spec.fn === 'try_sum' ? 'sum' : 'avg' }, inType);
  /** OVERFLOWED for the overflow `e` is, else `e` thrown again (no closure per row: update runs on every row). */
  const overflowed = (e: unknown): Json => {
    if (isSparkRowError(e) && (e.errorClass === 'ARITHMETIC_OVERFLOW' || e.errorClass === 'NUMERIC_VALUE_OUT_OF_RANGE')) return OVERFLOWED;
    throw e;
  };
  return {
    spec,
    ...(inner.check ? { check: inner.check } : {}),
    init: inner.init,
    update: (s, r) => {
      if (s === OVERFLOWED) return s;
      try {
        return inner.update(s, r);
      } catch (e) {
        return overflowed(e);
      }
    },
    merge: (a, b) => {
      if (a === OVERFLOWED || b === OVERFLOWED) return OVERFLOWED;
      try {
        return inner.merge(a, b);
      } catch (e) {
        return overflowed(e);
      }
    },
    finish: (s) => {
      if (s === OVERFLOWED) return null;
      try {
        return inner.finish(s);
      } catch (e) {
        overflowed(e); // (throws what is not an overflow)
        return null;
      }
    },
  };
}

export function initBuffer(aggs: readonly CompiledAgg[]): Buffer {
  const b = new Array<Json>(aggs.length);
  for (let i = 0; i < aggs.length; i++) b[i] = aggs[i].init();
  return b;
}

export function updateBuffer(aggs: readonly CompiledAgg[], buf: Buffer, row: Row): void {
  for (let i = 0; i < aggs.length; i++) buf[i] = aggs[i].update(buf[i], row);
}

/** Why an aggregation refuses a row: its ANSI error and the aggregation that raised it. */
export interface Refusal {
  readonly error: SparkRowError;
  readonly agg: CompiledAgg;
}

/** Whether any of the aggregations can refuse a row (an exact aggregate or an input check): then its operator guards each row. */
export function refusesRows(aggs: readonly CompiledAgg[]): boolean {
  return aggs.some((a) => a.exact === true || a.check !== undefined);
}

/**
 * The per-row input guard of every aggregation operator (FORMAT-3 departure 2): the windowed and
 * global aggregate (aggregate.ts, through overflow-guard.ts) and session windows (session.ts).
 * Checks a row against a buffer it would join (`current`; null: a fresh buffer): each
 * aggregation's input cast (`check`, when `checkInput`: once per row, not per group it joins),
 * then each exact aggregate's value with the row (its update and, when `finishMayFail`, its
 * finish), kept in `cand` for applyGuarded. Returns the first refusal, in the aggregations'
 * order, or null: a refused row is a dead letter that no aggregate of its group takes.
 * (An exact aggregate's update and finish are pure: `current` is left as it was.)
 */
export function guardRow(aggs: readonly CompiledAgg[], current: Buffer | null, row: Row, cand: Json[], checkInput = true): Refusal | null {
  for (let i = 0; i < aggs.length; i++) {
    const agg = aggs[i];
    try {
      if (agg.exact !== true) {
        if (checkInput && agg.check !== undefined) agg.check(row);
        continue;
      }
      cand[i] = agg.update(current === null ? agg.init() : current[i], row);
      if (agg.finishMayFail) agg.finish(cand[i]);
    } catch (e) {
      if (!isSparkRowError(e)) throw e;
      return { error: e, agg };
    }
  }
  return null;
}

/** Adds a row that guardRow passed with `cand` to `buf`: the exact aggregates take their candidates, the others update. */
export function applyGuarded(aggs: readonly CompiledAgg[], buf: Buffer, cand: readonly Json[], row: Row): void {
  for (let i = 0; i < aggs.length; i++) buf[i] = aggs[i].exact === true ? cand[i] : aggs[i].update(buf[i], row);
}

/**
 * guardRow for a row held as its own one-row buffer (`rowBuf`, made by guardRow and applyGuarded
 * from a fresh buffer) that merges into `into` (a session window's row joining its session:
 * session.ts): the merge of every aggregate into `out`, each exact one checked as guardRow checks
 * it. `into` is left as it was.
 */
export function guardMerge(aggs: readonly CompiledAgg[], into: Buffer, rowBuf: Buffer, out: Buffer): Refusal | null {
  for (let i = 0; i < aggs.length; i++) {
    const agg = aggs[i];
    try {
      out[i] = agg.merge(into[i], rowBuf[i]);
      if (agg.exact === true && agg.finishMayFail) agg.finish(out[i]);
    } catch (e) {
      if (!isSparkRowError(e)) throw e;
      return { error: e, agg };
    }
  }
  return null;
}

/** The merge of two buffers: a new one, or `other` itself, overwritten, when `inPlace`. */
export function mergeBuffers(aggs: readonly CompiledAgg[], into: Buffer, other: Buffer, inPlace = false): Buffer {
  const out = inPlace ? other : new Array<Json>(aggs.length);
  for (let i = 0; i < aggs.length; i++) out[i] = aggs[i].merge(into[i], other[i]);
  return out;
}
