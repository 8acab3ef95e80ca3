/** JSON functions: to_json, get_json_object and json_tuple, as Spark's Jackson generator and parser write and read JSON (from_json: from-json.ts). */
import { intervalText } from './interval-text';
import { compileSparkDatetimePattern, type DatetimePattern, DatetimePatternError } from '../datetime-patterns';
import { JsonObject, parseOrdered } from '../json-ordered';
import type { CallCtx, FunctionDef } from './analyze';
import { call, def, stringOnly } from './fn-util';
import { formatTimestampIso, type Micros, microsOfDate } from './time';
import { strict, type Typed } from './typed';
import { INT, STRING, type SqlType, typeName } from './types';
import { mapEntries } from '../map-entries';
import { javaDoubleText } from './values';
import { javaDecimalText } from '../decimal';

/** The to_json options sluice honours (Spark's JSONOptions: keys case-insensitive). */
interface JsonWriteOptions {
  /** The pattern of a TIMESTAMP (default `yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]`, which prints `.SSS` and `Z` in UTC). */
  readonly timestamp?: DatetimePattern;
  /** The pattern of a DATE (default `yyyy-MM-dd`). */
  readonly date?: DatetimePattern;
  /** ignoreNullFields (default true): a struct field that is null is left out. */
  readonly ignoreNullFields: boolean;
}

/** Spark's JSON text of a value (to_json): struct fields that are null are left out; timestamps ISO 8601 with milliseconds. */
function jsonWriter(t: SqlType, o: JsonWriteOptions): (v: unknown) => string {
  switch (t.type) {
    case 'STRING':
      return (v) => jacksonString(v as string);
    case 'DATE': {
      const p = o.date;
      return p === undefined ? (v) => `"${v as string}"` : (v) => jacksonString(p.format(microsOfDate(v as string)));
    }
    case 'INT':
    case 'LONG':
      return (v) => String(v);
    case 'DECIMAL':
      return (v) => javaDecimalText(v as string);
    case 'BOOLEAN':
      return (v) => (v ? 'true' : 'false');
    case 'DOUBLE':
      return (v) => (Number.isFinite(v as number) ? javaDoubleText(v as number, t.binary32) : `"${javaDoubleText(v as number)}"`);
    case 'TIMESTAMP': {
      const p = o.timestamp;
      return p === undefined ? (v) => `"${formatTimestampIso(v as Micros)}"` : (v) => jacksonString(p.format(v as Micros));
    }
    case 'ARRAY': {
      const el = jsonWriter(t.element!, o);
      return (v) => `[${(v as unknown[]).map((x) => (x == null ? 'null' : el(x))).join(',')}]`;
    }
    case 'MAP': {
      const val = jsonWriter(t.value!, o);
      // a key is written as its value's toString: a DECIMAL's is Java's BigDecimal.toString (1E-8)
      const key = t.key?.type === 'DECIMAL' ? (k: string) => jacksonString(javaDecimalText(k)) : jacksonString;
      return (v) =>
        `{${mapEntries(v as object)
          .map(([k, x]) => `${key(k)}:${x == null ? 'null' : val(x)}`)
          .join(',')}}`;
    }
    case 'STRUCT': {
      const fs = t.fields!.map((f) => ({ name: f.name, key: jacksonString(f.name), w: jsonWriter(f, o) }));
      return (v) => {
        const parts: string[] = [];
        for (const f of fs) {
          const x = (v as Record<string, unknown>)[f.name];
          if (x != null) parts.push(`${f.key}:${f.w(x)}`);
          else if (!o.ignoreNullFields) parts.push(`${f.key}:null`);
        }
        return `{${parts.join(',')}}`;
      };
    }
    case 'INTERVAL':
      // JacksonGenerator writes an ANSI interval as its text in its fields (toDayTimeIntervalString)
      return (v) => jacksonString(intervalText(v as number, t));
    default:
      return () => 'null';
  }
}

/** The value of an argument built only from literals (`map('k', 'v')`), or undefined when it reads a column. */
function foldConstant(t: Typed): { value: unknown } | undefined {
  if (t.constant !== undefined) return t.constant;
  if (t.children.length === 0) return undefined;
  const values: unknown[] = [];
  for (const ch of t.children) {
    const v = foldConstant(ch);
    if (v === undefined) return undefined;
    values.push(v.value);
  }
  return { value: t.build(values.map((v) => () => v))({}) };
}

/** The options of to_json or from_json: their datetime patterns, and any option by its name (case-insensitive, as Spark's JSONOptions). */
export interface JsonOptions {
  readonly timestamp?: DatetimePattern;
  readonly date?: DatetimePattern;
  get(name: string): string | undefined;
}

/** to_json's or from_json's options argument: a constant `map(...)` of strings (Spark's INVALID_OPTIONS otherwise). */
export function jsonOptionsOf(c: CallCtx, a: Typed | undefined, use: 'parse' | 'format'): JsonOptions {
  if (a === undefined) return { get: () => undefined };
  const folded = a.type.type === 'MAP' ? foldConstant(a) : undefined;
  if (folded === undefined || folded.value === null) {
    throw c.az.fail(
      'INVALID_OPTIONS.NON_MAP_FUNCTION',
      `The options of ${c.name} must be a map of constant strings built with the \`map()\` function, e.g. map('timestampFormat', 'yyyy-MM-dd HH:mm:ss'); got ${a.sql}`,
      c.pos,
    );
  }
  const entries = mapEntries(folded.value as object).map(([k, v]) => [k.toLowerCase(), v == null ? null : String(v)] as const);
  const get = (k: string) => entries.find(([key]) => key === k.toLowerCase())?.[1] ?? undefined;
  const pattern = (k: string) => {
    const p = get(k);
    if (p == null) return undefined;
    try {
      return compileSparkDatetimePattern(p, use);
    } catch (e) {
      if (e instanceof DatetimePatternError)
        throw c.az.fail(e.errorClass, `The ${k} option of ${c.name}, ${JSON.stringify(p)}, is not a valid datetime pattern: ${e.message}`, c.pos);
      throw e;
    }
  };
  return { timestamp: pattern('timestampFormat'), date: pattern('dateFormat'), get };
}

function jsonWriteOptions(c: CallCtx, a: Typed | undefined): JsonWriteOptions {
  const o = jsonOptionsOf(c, a, 'format');
  const ignore = o.get('ignoreNullFields');
  return { timestamp: o.timestamp, date: o.date, ignoreNullFields: ignore == null ? true : ignore.trim().toLowerCase() !== 'false' };
}

type PathStep =
  | { kind: 'key'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'wildcard' } // `[*]`
  | { kind: 'child-wildcard' }; // `.*` or `['*']`, which Spark parses but never matches

/**
 * A JSONPath of get_json_object as Spark's JsonPathParser reads it: `$` then any of `.*` and
 * `['*']` (child wildcards), `.name` (up to the next `.` or `[`), `['name']`, `[n]` and `[*]`;
 * whitespace may come before each part. Null when it does not parse (get_json_object is then null).
 */
function parseJsonPath(path: string): PathStep[] | null {
  let i = 0;
  const ws = () => {
    while (i < path.length && /\s/.test(path[i])) i++;
  };
  ws();
  if (path[i] !== '$') return null;
  i++;
  const steps: PathStep[] = [];
  for (;;) {
    ws();
    if (i >= path.length) return steps;
    const rest = path.slice(i);
    if (rest.startsWith('.*') || rest.startsWith("['*']")) {
      steps.push({ kind: 'child-wildcard' });
      i += rest.startsWith('.*') ? 2 : 5;
      continue;
    }
    if (rest[0] === '.') {
      i++;
      ws();
      const m = /^[^.[]+/.exec(path.slice(i));
      if (m === null) return null;
      steps.push({ kind: 'key', name: m[0] });
      i += m[0].length;
      continue;
    }
    const quoted = /^\['\s*([^'?]+)'\]/.exec(rest);
    if (quoted !== null) {
      steps.push({ kind: 'key', name: quoted[1] });
      i += quoted[0].length;
      continue;
    }
    const sub = /^\[\s*(?:(\*)|(\d+))\s*\]/.exec(rest);
    if (sub !== null) {
      steps.push(sub[1] !== undefined ? { kind: 'wildcard' } : { kind: 'index', index: Number(sub[2]) });
      i += sub[0].length;
      continue;
    }
    return null;
  }
}

/** Whether a text holds a control character (below U+0020). */
function hasControlChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x20) return true;
  return false;
}

/**
 * The first JSON value of `text` as Spark's Jackson parsers read it, for parseOrdered: a string in
 * single quotes becomes a standard string (Jackson's ALLOW_SINGLE_QUOTES, on in from_json's
 * defaults and in get_json_object/json_tuple), with `controlChars` a raw control character in a
 * string is taken (ALLOW_UNESCAPED_CONTROL_CHARS, get_json_object/json_tuple only), and what
 * follows the first object or array is not read. Malformed text stays malformed.
 */
export function jacksonInput(text: string, controlChars: boolean): string {
  if (!text.includes("'") && !(controlChars && hasControlChar(text)) && !/[}\]][^}\]]*\S/.test(text)) return text;
  let out = '';
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"' || ch === "'") {
      let body = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== ch; j++) {
        const d = text[j];
        if (d === '\\' && j + 1 < text.length) {
          // an escaped quote of the other kind is not a JSON escape: keep the character
          body += text[j + 1] === "'" ? "'" : d + text[j + 1];
          j++;
        } else if (d === '"') body += '\\"';
        else if (controlChars && d.charCodeAt(0) < 0x20) body += `\\u${d.charCodeAt(0).toString(16).padStart(4, '0')}`;
        else body += d;
      }
      if (j >= text.length) return text; // unterminated: malformed as it is
      out += `"${body}"`;
      i = j + 1;
      continue;
    }
    out += ch;
    i++;
    if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return out;
    }
  }
  return out;
}

/** Jackson's generator text of a JSON string: `"` and `\` escaped, \b \t \n \f \r, other controls as \u00XX. */
function jacksonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c < 0x20) {
      const short = { 8: 'b', 9: 't', 10: 'n', 12: 'f', 13: 'r' }[c];
      out += short !== undefined ? `\\${short}` : `\\u00${c.toString(16).toUpperCase().padStart(2, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

/**
 * A parsed JSON number as Jackson's generator copies it (get_json_object, json_tuple, a STRING
 * field of from_json): an integer as its digits (`-0` is `0`), any number with a fraction or an
 * exponent through a double, as Java prints it (`1.50` is `1.5`, `1e2` is `100.0`); a double out
 * of range is Jackson's quoted `"Infinity"`.
 */
function jacksonNumber(text: string): string {
  if (/^-?\d+$/.test(text)) return BigInt(text).toString();
  const d = Number(text);
  return Number.isFinite(d) ? javaDoubleText(d) : `"${javaDoubleText(d)}"`;
}

export const isLossless = (v: unknown): v is { value: string } => (v as { isLosslessNumber?: boolean } | null)?.isLosslessNumber === true;

/** The compact JSON text of a parsed value as Jackson's copyCurrentStructure writes it. */
export function jacksonCopy(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return jacksonString(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (isLossless(v)) return jacksonNumber(v.value);
  // a bare NaN or infinity (from_json only): Jackson's generator quotes a non-finite double
  if (typeof v === 'number') return `"${javaDoubleText(v)}"`;
  if (Array.isArray(v)) return `[${v.map(jacksonCopy).join(',')}]`;
  return `{${(v as JsonObject).entries.map(([k, x]) => `${jacksonString(k)}:${jacksonCopy(x)}`).join(',')}}`;
}

/** A JSON generator as get_json_object drives Jackson's: values in an array are comma-separated; raw text is not a value. */
class JsonOut {
  text = '';
  private readonly open: boolean[] = [];
  private separate(): void {
    const n = this.open.length;
    if (n === 0) return;
    if (this.open[n - 1]) this.text += ',';
    this.open[n - 1] = true;
  }
  value(t: string): void {
    this.separate();
    this.text += t;
  }
  raw(t: string): void {
    this.text += t;
  }
  startArray(): void {
    this.separate();
    this.text += '[';
    this.open.push(false);
  }
  endArray(): void {
    this.open.pop();
    this.text += ']';
  }
}

type WriteStyle = 'raw' | 'quoted' | 'flatten';

/**
 * Spark's GetJsonObject walk of `path` over `v`, writing matches to `out`; true when a leaf was
 * written. A string matched with no array wildcard above it is written without quotes; `[*]`
 * gathers its matches in an array, unwrapped when there is exactly one; `[*][*]` flattens.
 */
function evaluatePath(v: unknown, out: JsonOut, style: WriteStyle, path: readonly PathStep[]): boolean {
  if (path.length === 0) {
    if (typeof v === 'string' && style === 'raw') {
      out.raw(v);
      return true;
    }
    if (Array.isArray(v) && style === 'flatten') {
      let dirty = false;
      for (const x of v) dirty = evaluatePath(x, out, style, path) || dirty;
      return dirty;
    }
    out.value(jacksonCopy(v));
    return true;
  }
  const [step, ...rest] = path;
  if (step.kind === 'key') {
    if (!(v instanceof JsonObject)) return false;
    for (const [k, x] of v.entries) {
      // a null value does not match, and the scan goes on to a later field of the same name
      if (k === step.name && x !== null && evaluatePath(x, out, style, rest)) return true;
    }
    return false;
  }
  if (!Array.isArray(v)) return false;
  if (step.kind === 'wildcard') {
    if (rest[0]?.kind === 'wildcard') {
      out.startArray();
      let dirty = false;
      for (const x of v) dirty = evaluatePath(x, out, 'flatten', rest.slice(1)) || dirty;
      out.endArray();
      return dirty;
    }
    if (style !== 'quoted') {
      const buffer = new JsonOut();
      buffer.startArray();
      let matches = 0;
      for (const x of v) if (evaluatePath(x, buffer, style === 'raw' ? 'quoted' : style, rest)) matches++;
      buffer.endArray();
      if (matches > 1) out.value(buffer.text);
      else if (matches === 1) out.value(buffer.text.slice(1, -1));
      return matches > 0;
    }
    out.startArray();
    let dirty = false;
    for (const x of v) dirty = evaluatePath(x, out, 'quoted', rest) || dirty;
    out.endArray();
    return dirty;
  }
  if (step.kind === 'index') {
    if (step.index >= v.length) return false;
    return evaluatePath(v[step.index], out, rest[0]?.kind === 'wildcard' ? 'quoted' : style, rest);
  }
  return false; // a child wildcard never matches in Spark
}

/**
 * The outermost JSON value of `text` as the Jackson parser of get_json_object, json_tuple,
 * json_array_length and json_object_keys reads it (single quotes and raw control characters
 * taken, only the first value read), or undefined when it is malformed up to there.
 */
function outermostValue(text: string): unknown {
  try {
    return parseOrdered(jacksonInput(text, true));
  } catch {
    return undefined;
  }
}

function getJsonObject(json: string, steps: readonly PathStep[]): string | null {
  const v = outermostValue(json);
  if (v === undefined) return null;
  const out = new JsonOut();
  return evaluatePath(v, out, 'raw', steps) ? out.text : null;
}

/** A JSON value as json_tuple returns it: a string as itself, null for null, else Jackson's copy of it. */
function jsonText(v: unknown): string | null {
  if (v == null) return null;
  if (typeof v === 'string') return v;
  return jacksonCopy(v);
}

/**
 * json_tuple(json, k1, k2...): Spark's generator of one row with the STRING columns c0, c1...:
 * each key's value (as get_json_object returns it), null for a missing key or a null key; a null
 * json, a text that is not JSON or not an object gives the row of nulls.
 */
function jsonTuple(args: readonly Typed[], c: CallCtx): Typed {
  // JsonTuple takes STRING arguments as they are: no implicit cast, a NULL literal included (NON_STRING_TYPE)
  if (args.some((a) => a.type.type !== 'STRING')) {
    throw c.az.mismatch('NON_STRING_TYPE', c.sql, 'all arguments of the function `json_tuple` must be strings: cast the others to STRING', c.pos);
  }
  const [json, ...keys] = args;
  const columns = keys.map((_, i) => ({ name: `c${i}`, type: STRING }));
  const n = keys.length;
  return {
    type: { type: 'STRUCT', fields: columns.map((col) => ({ ...STRING, name: col.name })) },
    sql: c.sql,
    name: c.sql,
    children: [json, ...keys],
    build: ([j, ...ks]) => {
      return (row) => {
        const out: unknown[] = new Array(n).fill(null);
        const text = j(row);
        if (text == null) return out;
        const v = outermostValue(text as string);
        if (!(v instanceof JsonObject)) return out;
        const names = ks.map((k) => k(row));
        // each member in turn (Spark's JsonTuple): a key given twice sets its columns again, unless its value is null
        for (const [k, x] of v.entries) {
          if (x === null) continue;
          for (let i = 0; i < n; i++) if (names[i] === k) out[i] = jsonText(x);
        }
        return out;
      };
    },
    generator: { kind: 'json_tuple', columns },
  };
}

export const JSON_FUNCTIONS: Record<string, FunctionDef> = {
  // the number of elements of the outermost array; null for any other JSON, or text that is not JSON
  json_array_length: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [stringOnly(c, a, 0)],
      strict((json) => {
        const v = outermostValue(json as string);
        return Array.isArray(v) ? v.length : null;
      }),
    ),
  ),
  // the keys of the outermost object in their order (a repeated key each time); null for any other JSON, or text that is not JSON
  json_object_keys: def(1, 1, ([a], c) =>
    call(
      c,
      { type: 'ARRAY', element: STRING },
      [stringOnly(c, a, 0)],
      strict((json) => {
        const v = outermostValue(json as string);
        return v instanceof JsonObject ? v.entries.map(([k]) => k) : null;
      }),
    ),
  ),
  to_json: def(1, 2, ([a, opts], c) => {
    if (a.type.type !== 'STRUCT' && a.type.type !== 'MAP' && a.type.type !== 'ARRAY') {
      throw c.az.mismatch(
        'INVALID_JSON_SCHEMA',
        c.sql,
        `Input schema "${typeName(a.type)}" must be a struct, an array or a map; wrap the value in struct(...)`,
        c.pos,
      );
    }
    const w = jsonWriter(a.type, jsonWriteOptions(c, opts));
    return call(
      c,
      STRING,
      [a],
      strict((v) => w(v)),
    );
  }),
  json_tuple: def(2, Number.POSITIVE_INFINITY, jsonTuple),
  get_json_object: def(2, 2, ([j, p], c) => {
    const js = stringOnly(c, j, 0);
    const ps = stringOnly(c, p, 1);
    const fixed = ps.constant && typeof ps.constant.value === 'string' ? parseJsonPath(ps.constant.value) : undefined;
    return call(
      c,
      STRING,
      [js, ps],
      strict((json, path) => {
        const steps = fixed === undefined ? parseJsonPath(path as string) : fixed;
        return steps === null ? null : getJsonObject(json as string, steps);
      }),
    );
  }),
};
