/**
 * Aggregation buffers: created per group, updated per row, merged across batches, finished into
 * output values. Buffers are JSON so that they can be stored as state as they are.
 */
import type { Json, Row } from './ports';
import type { AggSpec } from './plan/types';
import { SluiceError } from './errors';
import { hllAdd, hllCount, hllMerge, hllNew } from './hll';
import { canonicalLong, type ColumnType } from './schema';

export type Buffer = Json[];

export interface CompiledAgg {
  readonly spec: AggSpec;
  init(): Json;
  /** Returns the updated buffer slot (may mutate arrays in place). */
  update(slot: Json, row: Row): Json;
  merge(into: Json, other: Json): Json;
  finish(slot: Json): unknown;
  /** A sum that adds BIGINT values exactly (addLongs), not doubles. */
  readonly exactLongs?: boolean;
}

function toNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v); // avg of a BIGINT is a DOUBLE in Spark: its sum is of doubles
  if (typeof v === 'string') {
    // Spark casts a string to DOUBLE for sum/avg; text that is not a number is null.
    const n = Number(v.trim());
    return v.trim() === '' || Number.isNaN(n) ? null : n;
  }
  return null;
}

/** Spark's order of two values of a column: for doubles, NaN above every other value, Infinity included. */
function less(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b || (Number.isNaN(b) && !Number.isNaN(a));
  return (a as number) < (b as number);
}

/** The largest BIGINT, and the smallest: a sum beyond them overflows (ANSI: an error). */
const MAX_LONG = 2n ** 63n - 1n;
const MIN_LONG = -(2n ** 63n);

/**
 * a + b for two BIGINT values (a number when a safe integer, a bigint beyond, as rows carry them):
 * exact, in the same one form; beyond 64 bits it throws Spark's ARITHMETIC_OVERFLOW.
 */
export function addLongs(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  const big = BigInt(a) + BigInt(b);
  if (big > MAX_LONG || big < MIN_LONG) {
    throw new SluiceError(
      `[ARITHMETIC_OVERFLOW] long overflow: a sum of BIGINT values reached ${big}, beyond -9223372036854775808..9223372036854775807: declare the column DECIMAL(38,0) to sum it exactly`,
      { retriable: false },
    );
  }
  return canonicalLong(big);
}

/**
 * `inType`: the type of the aggregated column. A sum of an INT or LONG column is BIGINT in Spark,
 * so it adds exactly (addLongs); other sums add doubles.
 */
export function compileAgg(spec: AggSpec, inType?: ColumnType): CompiledAgg {
  const column = spec.column;
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
      if (inType === 'INT' || inType === 'LONG') {
        return {
          spec,
          exactLongs: true,
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
          return s === null ? v : (s as number) + v;
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
      const better = spec.fn === 'min' ? (a: unknown, b: unknown) => less(a, b) : (a: unknown, b: unknown) => less(b, a);
      const pick = (s: Json, v: unknown): Json => {
        if (v === null || v === undefined) return s;
        return s === null || better(v, s) ? (v as Json) : s;
      };
      return { spec, init: () => null, update: (s, r) => pick(s, r[column!]), merge: (a, b) => pick(a, b), finish: (s) => s };
    }
    case 'first':
      // [seen, value]: Spark's first() without ignoreNulls keeps the first row's value, null or not.
      return {
        spec,
        init: () => [0, null],
        update: (s, r) => ((s as Json[])[0] ? s : [1, (r[column!] ?? null) as Json]),
        merge: (a, b) => ((a as Json[])[0] ? a : b),
        finish: (s) => (s as Json[])[1],
      };
    case 'last':
      return {
        spec,
        init: () => [0, null],
        update: (_s, r) => [1, (r[column!] ?? null) as Json],
        merge: (a, b) => ((b as Json[])[0] ? b : a),
        finish: (s) => (s as Json[])[1],
      };
    case 'approxCountDistinct':
      return {
        spec,
        init: () => hllNew(),
        update: (s, r) => (r[column!] === null || r[column!] === undefined ? s : hllAdd(s as string, r[column!])),
        merge: (a, b) => hllMerge(a as string, b as string),
        finish: (s) => hllCount(s as string),
      };
  }
}

export function initBuffer(aggs: readonly CompiledAgg[]): Buffer {
  const b = new Array<Json>(aggs.length);
  for (let i = 0; i < aggs.length; i++) b[i] = aggs[i].init();
  return b;
}

export function updateBuffer(aggs: readonly CompiledAgg[], buf: Buffer, row: Row): void {
  for (let i = 0; i < aggs.length; i++) buf[i] = aggs[i].update(buf[i], row);
}

/** The merge of two buffers: a new one, or `other` itself, overwritten, when `inPlace`. */
export function mergeBuffers(aggs: readonly CompiledAgg[], into: Buffer, other: Buffer, inPlace = false): Buffer {
  const out = inPlace ? other : new Array<Json>(aggs.length);
  for (let i = 0; i < aggs.length; i++) out[i] = aggs[i].merge(into[i], other[i]);
  return out;
}
