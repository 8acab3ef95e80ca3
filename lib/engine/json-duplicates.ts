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
  if (!mayRepeatKey(line)) return null;
  let parsed: unknown;
  try {
    // bare NaN and infinity tokens are numbers, as the reader takes them (Spark's
    // allowNonNumericNumbers): a line with one still has its hidden values checked
    parsed = parseOrdered(line, true);
  } catch {
    return null;
  }
  return parsed instanceof JsonObject ? objectReason(schema.columns, parsed, null, false, bad) : null;
}

/**
 * Whether `line`, which JSON.parse read as `parsed`, certainly gives no key twice in one object: its
 * key tokens (a string followed by a colon) are as many as the keys of the objects JSON.parse made
 * (which keeps one member of a repeated key). The count of tokens may take a colon after an escaped
 * quote inside a string for a key (then the lines differ and the caller checks the line through):
 * it never counts fewer than the line has. One pass of indexOf where mayRepeatKey walks the line.
 */
export function givesEveryKeyOnce(line: string, parsed: unknown): boolean {
  let tokens = 0;
  for (let i = line.indexOf('":'); i >= 0; i = line.indexOf('":', i + 2)) tokens++;
  // (whitespace between a key and its colon)
  tokens += line.match(SPACED_KEYS)?.length ?? 0;
  return tokens === keysIn(parsed);
}

const SPACED_KEYS = /"[ \t\r\n]+:/g;

/** The keys of every object in a value JSON.parse made (a stack of its own: values may nest thousands deep). */
function keysIn(value: unknown): number {
  let n = 0;
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') todo.push(x);
      continue;
    }
    for (const k in v) {
      n++;
      const x = (v as Record<string, unknown>)[k];
      if (x !== null && typeof x === 'object') todo.push(x);
    }
  }
  return n;
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

/** Keys an object holds in `starts`/`ends` before it switches to a set of their texts. */
const LINEAR_KEYS = 16;

/**
 * Whether some object in `line` gives a key twice, as written (a key with an escape may equal
 * another: it counts). No parse: it jumps from quote to brace with indexOf, misses no such line,
 * and takes any text (what is not JSON the reader decides).
 */
function mayRepeatKey(line: string): boolean {
  const n = line.length;
  // the keys of the open objects: the innermost one's are starts/ends[from..], or its set
  const starts: number[] = [];
  const ends: number[] = [];
  const froms: number[] = [];
  const sets: (Set<string> | null)[] = [];
  const backslash = line.indexOf('\\');
  let quote = line.indexOf('"');
  let open = line.indexOf('{');
  let close = line.indexOf('}');
  for (;;) {
    // the next of the three, skipping none: -1 is past the end
    const q = quote < 0 ? n : quote;
    const o = open < 0 ? n : open;
    const c = close < 0 ? n : close;
    if (o < q && o < c) {
      froms.push(starts.length);
      sets.push(null);
      open = line.indexOf('{', o + 1);
      continue;
    }
    if (c < q && c < o) {
      if (froms.length > 0) {
        starts.length = ends.length = froms.pop()!;
        sets.pop();
      }
      close = line.indexOf('}', c + 1);
      continue;
    }
    if (q >= n) return false;
    // a string: its closing quote is the next one after an even run of backslashes
    const s = q + 1;
    let j = line.indexOf('"', s);
    while (j > 0 && line.charCodeAt(j - 1) === 92) {
      let b = j - 2;
      while (line.charCodeAt(b) === 92) b--;
      if ((j - 1 - b) % 2 === 0) break;
      j = line.indexOf('"', j + 1);
    }
    if (j < 0) return false;
    quote = line.indexOf('"', j + 1);
    if (open >= 0 && open < j) open = line.indexOf('{', j + 1);
    if (close >= 0 && close < j) close = line.indexOf('}', j + 1);
    let k = j + 1;
    while (k < n && (line.charCodeAt(k) === 32 || line.charCodeAt(k) === 9 || line.charCodeAt(k) === 10 || line.charCodeAt(k) === 13)) k++;
    if (k >= n || line.charCodeAt(k) !== 58 || froms.length === 0) continue;
    // a key with an escape may equal another key
    if (backslash >= 0 && backslash < j) for (let p = s; p < j; p++) if (line.charCodeAt(p) === 92) return true;
    const top = froms.length - 1;
    const set = sets[top];
    if (set !== null) {
      const key = line.slice(s, j);
      if (set.has(key)) return true;
      set.add(key);
      continue;
    }
    const from = froms[top];
    const len = j - s;
    for (let x = from; x < starts.length; x++) {
      if (ends[x] - starts[x] !== len) continue;
      let p = 0;
      while (p < len && line.charCodeAt(starts[x] + p) === line.charCodeAt(s + p)) p++;
      if (p === len) return true;
    }
    if (starts.length - from < LINEAR_KEYS) {
      starts.push(s);
      ends.push(j);
    } else {
      const keys = new Set([line.slice(s, j)]);
      for (let x = from; x < starts.length; x++) keys.add(line.slice(starts[x], ends[x]));
      sets[top] = keys;
      starts.length = ends.length = from;
    }
  }
}
