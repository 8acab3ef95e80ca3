/**
 * What the three operators share about their state keys: the state id of a group's grouping
 * values, and the order of state changes by id.
 */
import type { Json, StateKey } from '../ports';
import { fnv1a } from '../hash';

/**
 * The state id of grouping values (strings, numbers, booleans, null, [start, end] windows):
 * JSON.stringify(kv), except that a non-finite number keeps its name (NaN, Infinity, -Infinity)
 * where JSON would write null, as Spark groups NaN, the infinities and null apart.
 */
export function stateId(kv: readonly Json[]): string {
  // joined, not concatenated: the id is one flat string from the start, where `+=` would make a
  // chain of ConsStrings, flattened at its first hash and then kept as a wrapper
  const parts: string[] = ['['];
  for (let i = 0; i < kv.length; i++) {
    if (i > 0) parts.push(',');
    const v = kv[i];
    // a BIGINT beyond 2^53 − 1 is a bigint: its digits, which no number's text equals (one form per value)
    if (typeof v === 'number' || typeof (v as unknown) === 'bigint') parts.push(String(v));
    else if (Array.isArray(v) && v.length === 2 && Number.isFinite(v[0]) && Number.isFinite(v[1]))
      // a window of number bounds: its JSON, written here (JSON.stringify of a finite number is its String)
      parts.push('[', String(v[0]), ',', String(v[1]), ']');
    else if (v !== null && typeof v === 'object') parts.push(objectText(v));
    else parts.push(JSON.stringify(v));
  }
  parts.push(']');
  return parts.join('');
}

/**
 * The text of a window's [start, end] (or a {start, end} join key), or of an ARRAY, STRUCT or MAP
 * grouping value: its JSON, or with bigint bounds bigintDigits's; with a non-finite number inside,
 * that number by its name (JSON would write null, and [NaN] is not [null] in Spark's grouping).
 */
function objectText(v: Json): string {
  try {
    const text = JSON.stringify(v);
    return text.includes('null') ? JSON.stringify(v, nonFiniteNames) : text;
  } catch {
    return JSON.stringify(v, bigintDigits); // (JSON.stringify refuses a bigint: TypeError)
  }
}

/** JSON.stringify's replacer for a value that may hold non-finite numbers: each as its name. */
function nonFiniteNames(_key: string, v: unknown): unknown {
  return typeof v === 'number' && !Number.isFinite(v) ? `${v}` : v;
}

/**
 * One grouping value as an aggregation's trie keys it (aggregate.ts): itself, or for an ARRAY,
 * STRUCT or MAP value (an object, held by identity in a Map) its text, so that equal values are
 * one group, as Spark groups them by content. -0.0 inside is 0.0 (JSON writes it so), as Spark's
 * NormalizeFloatingNumbers makes it; NaN is one value.
 */
export function groupingKey(v: unknown): unknown {
  return typeof v === 'object' && v !== null ? objectText(v as Json) : v;
}

/**
 * A window's [start, end] (or a {start, end} join key) whose bound is a bigint (a TIMESTAMP beyond
 * 2^53 − 1 µs): the bound as the string "<digits>n", which no number (one form per value) and no
 * other bound can spell. A window of number bounds keeps the id it always had.
 */
function bigintDigits(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : typeof v === 'number' && !Number.isFinite(v) ? `${v}` : v;
}

/** Orders state changes (or entries) by their key's id. */
export function byId<T extends { key: StateKey }>(a: T, b: T): number {
  return a.key.id < b.key.id ? -1 : a.key.id > b.key.id ? 1 : 0;
}

/**
 * The state partition of a key whose grouping values without the window have the state id
 * `groupId` (stateId): a hash of it modulo `partitions`, so every window of a key lands in one
 * partition, and a router that sees a row can tell which partition's state it touches.
 */
export function statePartition(groupId: string, partitions: number): number {
  return partitions <= 1 ? 0 : fnv1a(groupId) % partitions;
}
