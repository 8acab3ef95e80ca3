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

/** Spark's order of two values of a column: for doubles, NaN above every other value, Infinity included. */
function less(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a < b || (b !== b && a === a);
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
        if (v === null || v === undefined) return s;
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
 * The in-batch form of count, sum and avg: two double slots per aggregation, for every group of
 * a batch in one Float64Array (group k at offset k * width), updated without allocating per row
 * (a Json[] buffer boxes every new sum) and without a load of a per-group object. Turned into the
 * stored Buffer form once per group, with the same values updateBuffer would have given (the same
 * additions in the same order; a sum slot starts at -0, which leaves any first value as is).
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

/** Sets the slots of the group at offset `o` to their start values. */
export function resetNumericSlots(n: NumericAggs, s: Float64Array, o: number): void {
  for (let k = 0; k < n.width; k++) s[o + k] = 0;
  for (let i = 0; i < n.ops.length; i++) if (n.ops[i] === OP_SUM) s[o + 2 * i] = -0;
}

export function updateNumeric(n: NumericAggs, s: Float64Array, o: number, row: Row): void {
  const { ops, columns } = n;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    const at = o + 2 * i;
    if (op === OP_COUNT_ALL) {
      s[at]++;
      continue;
    }
    const raw = row[columns[i]];
    if (raw === null || raw === undefined) continue;
    if (op === OP_COUNT) {
      s[at]++;
      continue;
    }
    const v = typeof raw === 'number' ? raw : toNumber(raw);
    if (v === null) continue;
    s[at] += v;
    s[at + 1]++;
  }
}

/** The Buffer (stored form) of the group at offset `o`. */
export function numericBuffer(n: NumericAggs, s: Float64Array, o: number): Buffer {
  const b = new Array<Json>(n.ops.length);
  for (let i = 0; i < n.ops.length; i++) {
    const op = n.ops[i];
    const at = o + 2 * i;
    if (op === OP_COUNT_ALL || op === OP_COUNT) b[i] = s[at];
    else if (op === OP_SUM) b[i] = s[at + 1] > 0 ? s[at] : null;
    else b[i] = [s[at], s[at + 1]];
  }
  return b;
}
