/**
 * A key given twice in a JSON-lines record (`{"a":"x","a":2}`), as Spark's JSON reader sees it:
 * JacksonParser converts every member of an object in turn, so a value that does not fit its type
 * makes the record bad even when a later value of the same key fits (and replaces it). JSON.parse
 * keeps only the last value, so the reader checks the others here, on the lines that may repeat
 * a key of the schema.
 */
import { JsonObject, parseOrdered } from './json-ordered';
import type { Column, DataType, Schema } from './schema';

/** Why a value of type `t` at `path` does not fit (the reader's own reason), or null when it fits. */
export type BadValueReason = (t: DataType, v: unknown, path: string) => string | null;

/**
 * Why the record of `line` is bad because of a value that a later member with the same key hides
 * (at any depth), or null: no such value, or the line is not strict JSON (the reader then decides).
 */
export function hiddenValueReason(schema: Schema, line: string, bad: BadValueReason): string | null {
  if (!mayRepeatKey(schema, line)) return null;
  let parsed: unknown;
  try {
    parsed = parseOrdered(line);
  } catch {
    return null;
  }
  return parsed instanceof JsonObject ? objectReason(schema.columns, parsed, null, false, bad) : null;
}

/** The members of `o` that are fields of `fields`, each checked; `hidden`: a later member hides `o` itself. */
function objectReason(fields: readonly Column[], o: JsonObject, prefix: string | null, hidden: boolean, bad: BadValueReason): string | null {
  const { entries } = o;
  for (let i = 0; i < entries.length; i++) {
    const [key, v] = entries[i];
    const f = fields.find((g) => g.name === key);
    if (f === undefined) continue;
    const repeated = entries.some(([k], j) => j > i && k === key);
    const r = valueReason(f, v, prefix === null ? key : `${prefix}.${key}`, hidden || repeated, bad);
    if (r !== null) return repeated && !hidden ? givenTwice(r, key) : r;
  }
  return null;
}

/** The reason of a value that a later member of the same key hides, saying so. */
function givenTwice(reason: string, key: string): string {
  return `${reason} (the key ${JSON.stringify(key)} is given more than once: Spark's reader converts each value in turn, so a value that does not fit makes the record bad even when a later one fits; send the key once)`;
}

/**
 * Why `v` (a member's value) makes the record bad: when `hidden` (the reader never sees it), any
 * value that does not fit; otherwise only such a value nested in it (the reader checks the rest).
 */
function valueReason(t: DataType, v: unknown, path: string, hidden: boolean, bad: BadValueReason): string | null {
  if (v === null || t.type === 'STRING') return null;
  if (t.type === 'STRUCT' && v instanceof JsonObject) return objectReason(t.fields as readonly Column[], v, path, hidden, bad);
  if (t.type === 'MAP' && v instanceof JsonObject) {
    // Spark's map keeps every entry of a repeated key (JSON.parse the last): each value must fit
    const { entries } = v;
    for (let i = 0; i < entries.length; i++) {
      const [k, x] = entries[i];
      const repeated = entries.some(([key], j) => j > i && key === k);
      const r = valueReason(t.value!, x, `${path}[${JSON.stringify(k)}]`, hidden || repeated, bad);
      if (r !== null) return repeated && !hidden ? givenTwice(r, k) : r;
    }
    return null;
  }
  if (t.type === 'ARRAY' && Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = valueReason(t.element!, v[i], `${path}[${i}]`, hidden, bad);
      if (r !== null) return r;
    }
    return null;
  }
  return hidden ? bad(t, v, path) : null;
}

const probes = new WeakMap<Schema, RegExp | null>();

/** A key without escapes, any key: a MAP's keys are the producer's. */
const ANY_KEY = /"([^"\\]*)"\s*:/g;

/** The names of the schema's struct fields at any depth, as a line may write them as keys (any key, with a MAP). */
function keyProbe(schema: Schema): RegExp | null {
  let probe = probes.get(schema);
  if (probe !== undefined) return probe;
  const names = new Set<string>();
  let map = false;
  const walk = (t: DataType): void => {
    if (t.type === 'ARRAY') walk(t.element!);
    else if (t.type === 'MAP') {
      map = true;
      walk(t.value!);
    } else if (t.type === 'STRUCT') for (const f of t.fields!) named(f);
  };
  const named = (f: Column): void => {
    names.add(f.name);
    walk(f);
  };
  for (const c of schema.columns) named(c);
  if (map) {
    probes.set(schema, ANY_KEY);
    return ANY_KEY;
  }
  const plain = [...names].filter((n) => ![...n].some((ch) => ch === '"' || ch === '\\' || ch < ' '));
  probe = plain.length === 0 ? null : new RegExp(`"(${plain.map((n) => n.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|')})"\\s*:`, 'g');
  probes.set(schema, probe);
  return probe;
}

/** A key with an escape (`"\u0061":`): it may be a name of the schema. */
const ESCAPED_KEY = /\\.(?:[^"\\]|\\.)*"\s*:/;

/**
 * Whether `line` may give a key of the schema twice (at any depth): a name written twice, or a key
 * written with an escape. It misses no such line; it may take some that do not (only a cost).
 */
function mayRepeatKey(schema: Schema, line: string): boolean {
  const probe = keyProbe(schema);
  if (probe !== null) {
    const seen = new Set<string>();
    probe.lastIndex = 0;
    for (let m = probe.exec(line); m !== null; m = probe.exec(line)) {
      if (seen.has(m[1])) return true;
      seen.add(m[1]);
    }
  }
  return ESCAPED_KEY.test(line);
}
