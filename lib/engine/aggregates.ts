/**
 * Aggregation buffers: created per group, updated per row, merged across batches, finished into
 * output values. Buffers are JSON so that they can be stored as state as they are.
 */
import type { Json, Row } from './ports';
import type { AggSpec } from './query';
import { hllAdd, hllCount, hllMerge, hllNew } from './hll';

export type Buffer = Json[];

export interface CompiledAgg {
  readonly spec: AggSpec;
  init(): Json;
  /** Returns the updated buffer slot (may mutate arrays in place). */
  update(slot: Json, row: Row): Json;
  merge(into: Json, other: Json): Json;
  finish(slot: Json): unknown;
}

function toNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    // Spark casts a string to DOUBLE for sum/avg; text that is not a number is null.
    const n = Number(v.trim());
    return v.trim() === '' || Number.isNaN(n) ? null : n;
  }
  return null;
}

function less(a: unknown, b: unknown): boolean {
  return (a as number) < (b as number);
}

export function compileAgg(spec: AggSpec): CompiledAgg {
  const c = spec.column;
  switch (spec.fn) {
    case 'count':
      if (c === undefined) {
        return { spec, init: () => 0, update: (s) => (s as number) + 1, merge: (a, b) => (a as number) + (b as number), finish: (s) => s };
      }
      return {
        spec,
        init: () => 0,
        update: (s, r) => (r[c] === null || r[c] === undefined ? s : (s as number) + 1),
        merge: (a, b) => (a as number) + (b as number),
        finish: (s) => s,
      };
    case 'sum':
      return {
        spec,
        init: () => null,
        update: (s, r) => {
          const v = toNumber(r[c!]);
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
          const v = toNumber(r[c!]);
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
        if (v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v))) return s;
        return s === null || better(v, s) ? (v as Json) : s;
      };
      return { spec, init: () => null, update: (s, r) => pick(s, r[c!]), merge: (a, b) => pick(a, b), finish: (s) => s };
    }
    case 'first':
      // [seen, value]: Spark's first() without ignoreNulls keeps the first row's value, null or not.
      return {
        spec,
        init: () => [0, null],
        update: (s, r) => ((s as Json[])[0] ? s : [1, (r[c!] ?? null) as Json]),
        merge: (a, b) => ((a as Json[])[0] ? a : b),
        finish: (s) => (s as Json[])[1],
      };
    case 'last':
      return {
        spec,
        init: () => [0, null],
        update: (_s, r) => [1, (r[c!] ?? null) as Json],
        merge: (a, b) => ((b as Json[])[0] ? b : a),
        finish: (s) => (s as Json[])[1],
      };
    case 'approxCountDistinct':
      return {
        spec,
        init: () => hllNew(),
        update: (s, r) => (r[c!] === null || r[c!] === undefined ? s : hllAdd(s as string, r[c!])),
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

/**
 * The in-batch form of count, sum and avg: two double slots per aggregation in one array per
 * group, updated without allocating per row (a Json[] buffer boxes every new sum). Turned into
 * the stored Buffer form once per group, with the same values updateBuffer would have given (the
 * same additions in the same order; a sum slot starts at -0, which leaves any first value as is).
 */
export interface NumericAggs {
  /** Per aggregation: what it counts or adds up. */
  readonly ops: Uint8Array;
  /** Per aggregation: its column ('' for count(*)). */
  readonly columns: readonly string[];
  /** Slots per group. */
  readonly width: number;
}

const OP_COUNT_ALL = 0;
const OP_COUNT = 1;
const OP_SUM = 2;
const OP_AVG = 3;

/** The numeric form of the aggregations, or null when one of them is not count, sum or avg. */
export function numericAggs(aggs: readonly CompiledAgg[]): NumericAggs | null {
  const ops = new Uint8Array(aggs.length);
  const columns: string[] = [];
  for (let i = 0; i < aggs.length; i++) {
    const { fn, column } = aggs[i].spec;
    if (fn === 'count') ops[i] = column === undefined ? OP_COUNT_ALL : OP_COUNT;
    else if (fn === 'sum') ops[i] = OP_SUM;
    else if (fn === 'avg') ops[i] = OP_AVG;
    else return null;
    columns.push(column ?? '');
  }
  return { ops, columns, width: 2 * aggs.length };
}

export function newNumericSlots(n: NumericAggs): number[] {
  // A plain array, cheaper to allocate per group than a typed array. Its first element is a
  // double (0.5, then set), so it holds unboxed doubles from the start: an array of zeros would
  // hold small integers and be copied on its first fractional sum.
  const s: number[] = [0.5];
  for (let k = 1; k < n.width; k++) s.push(0);
  s[0] = 0;
  for (let i = 0; i < n.ops.length; i++) if (n.ops[i] === OP_SUM) s[2 * i] = -0;
  return s;
}

/** Slots as newNumericSlots makes them, in an array that held a previous batch's. */
export function resetNumericSlots(n: NumericAggs, s: number[]): void {
  for (let k = 0; k < n.width; k++) s[k] = 0;
  for (let i = 0; i < n.ops.length; i++) if (n.ops[i] === OP_SUM) s[2 * i] = -0;
}

export function updateNumeric(n: NumericAggs, s: number[], row: Row): void {
  const { ops, columns } = n;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op === OP_COUNT_ALL) {
      s[2 * i]++;
      continue;
    }
    const raw = row[columns[i]];
    if (raw === null || raw === undefined) continue;
    if (op === OP_COUNT) {
      s[2 * i]++;
      continue;
    }
    const v = typeof raw === 'number' ? raw : toNumber(raw);
    if (v === null) continue;
    s[2 * i] += v;
    s[2 * i + 1]++;
  }
}

/** The Buffer that updateBuffer would have built from the same rows. */
export function numericBuffer(n: NumericAggs, s: number[]): Buffer {
  const b = new Array<Json>(n.ops.length);
  for (let i = 0; i < n.ops.length; i++) {
    const op = n.ops[i];
    if (op === OP_COUNT_ALL || op === OP_COUNT) b[i] = s[2 * i];
    else if (op === OP_SUM) b[i] = s[2 * i + 1] > 0 ? s[2 * i] : null;
    else b[i] = [s[2 * i], s[2 * i + 1]];
  }
  return b;
}
