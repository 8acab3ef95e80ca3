/**
 * The typing of a JSON record into a row of a declared schema (schema.ts), as Spark's JSON reader
 * types it: parseJsonLine reads one line (bare NaN and infinity tokens, single quotes, each
 * number's text where a DECIMAL, a BIGINT beyond 2^53 − 1, a FLOAT or a STRING column needs it),
 * coerceRecord types a parsed record value by value at any depth (coerceValue; from_json's
 * jsonValueOf), and a record that does not fit is bad with the reason (json-bad-values.ts).
 */
import { setEntry } from './map-entries';
import { parse as parseLossless } from 'lossless-json';
import type { Row } from './ports';
import { dateOfEpochDay } from './dates';
import type { DatetimePattern } from './datetime-patterns';
import { dateOfText } from './formats/date-text';
import { elementTexts, firstValueEnd, memberTexts, strictJson } from './formats/lenient-json';
import { givesEveryKeyOnce, hiddenValueReason } from './json-duplicates';
import { JsonObject, mayReorderMembers, NON_NUMERIC_TOKENS, parseOrdered } from './json-ordered';
import { ddlOf } from './ddl';
import { decimalOfText } from './decimal';
import { timestampFromJson } from './timestamp-input';
import { binary32OfNumber, isBinary32Tie } from './binary32';
import { canonicalLong, type Column, type DataType, exactLong, holdsType, MAX_LONG, MIN_LONG, type Schema, setOwn } from './schema';
import { decimalString, describeBad, INTEGER_LITERAL, intRange, isNumberLiteral, nonFiniteAsString, shown, typeName } from './json-bad-values';

const NON_NUMERIC = new Map(NON_NUMERIC_TOKENS);

/** The double of a string Spark's JSON reader takes in a DOUBLE column (NON_NUMERIC_TOKENS); null for any other. */
export function nonFiniteDouble(text: string): number | null {
  return NON_NUMERIC.get(text) ?? null;
}

export type CoerceResult = { ok: true; row: Row } | { ok: false; reason: string };

/** A value that does not fit its type, anywhere in a record: coerceRecord makes the record bad with the reason. */
class BadValue {
  constructor(readonly reason: string) {}
}

/** A plain object (not an array, not a number literal). */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isNumberLiteral(v);
}

/**
 * The value of type `t` for a JSON value at `path` (a column, `lines[2].price`, `tags['k']`), for
 * every type and at any depth; throws BadValue when it does not fit. Numbers may come as double
 * (JSON.parse) or as their literal's text (the schema's numberText mode), and both read the same.
 */
function coerceValue(t: DataType, v: unknown, path: string, ordered?: unknown, raw?: RawText): unknown {
  if (v === null || v === undefined) return null;
  const text = isNumberLiteral(v) ? v.value : null;
  switch (t.type) {
    case 'STRING':
      if (typeof v === 'string') return v;
      // a value inside a container as the line writes it (Spark 4's exact string parsing at any depth)
      if (raw !== undefined) {
        const written = raw();
        if (written !== undefined) return written;
      }
      // a number keeps its token as written (Spark 4's exact string parsing of a file's JSON)
      if (text !== null) return text;
      if (typeof v === 'number') {
        if (wantNumberText) throw NEED_NUMBER_TEXT;
        return numberText(v);
      }
      if (typeof v === 'bigint') return String(v);
      return JSON.stringify(v, nonFiniteAsString);
    case 'INT': {
      const n = text !== null ? (INTEGER_LITERAL.test(text) ? Number(text) : NaN) : v;
      const [lo, hi] = intRange(t.bits);
      if (typeof n !== 'number' || !Number.isInteger(n) || n < lo || n > hi) throw new BadValue(describeBad(path, t, v));
      return n === 0 ? 0 : n; // -0 is 0: an integer has no negative zero
    }
    case 'LONG': {
      if (text !== null) {
        const exact = exactLong(text);
        if (exact === null) throw new BadValue(describeBad(path, t, v));
        return exact;
      }
      if (typeof v === 'bigint') {
        if (v < MIN_LONG || v > MAX_LONG) throw new BadValue(describeBad(path, t, v));
        return canonicalLong(v);
      }
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new BadValue(describeBad(path, t, v));
      return v === 0 ? 0 : v; // -0 is 0: an integer has no negative zero
    }
    case 'DOUBLE': {
      let n: number | null = text !== null ? Number(text) : typeof v === 'number' ? v : typeof v === 'string' ? nonFiniteDouble(v) : null;
      if (n === null) throw new BadValue(describeBad(path, t, v));
      if (text !== null) {
        // Jackson reads an integer literal as an int or a long first: -0 is 0 (-0.0 and -0e0 stay
        // -0); and a FLOAT from the text, rounded once to a binary32 (binary32.ts)
        if (n === 0 && INTEGER_LITERAL.test(text)) n = 0;
        return t.binary32 ? binary32OfNumber(n, text, 0, text.length) : n;
      }
      // a double JSON.parse read from -0 or -0.0, or one halfway between two binary32 values:
      // the text decides (read the line again with each number's text)
      if (wantNumberText && typeof v === 'number' && (Object.is(v, -0) || (t.binary32 && isBinary32Tie(v)))) throw NEED_NUMBER_TEXT;
      if (t.binary32) n = Math.fround(n);
      return n;
    }
    case 'BOOLEAN':
      if (typeof v !== 'boolean') throw new BadValue(describeBad(path, t, v));
      return v;
    case 'TIMESTAMP': {
      if (typeof v === 'string' && jsonPatterns?.timestamp) return byPattern(jsonPatterns.timestamp, 'timestampFormat', t, v, path);
      const ts = text !== null && !INTEGER_LITERAL.test(text) ? null : timestampFromJson(text !== null ? Number(text) : v);
      if (ts === null) throw new BadValue(describeBad(path, t, v));
      return ts;
    }
    case 'DECIMAL': {
      const literal =
        text ?? (typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'bigint' ? String(v) : typeof v === 'string' ? decimalString(v) : null);
      const d = literal === null ? null : decimalOfText(literal, t.precision!, t.scale!);
      if (d === null) throw new BadValue(describeBad(path, t, v));
      return d;
    }
    case 'DATE': {
      if (typeof v === 'string' && jsonPatterns?.date) return byPattern(jsonPatterns.date, 'dateFormat', t, v, path);
      const d = typeof v === 'string' ? jsonDate(v) : null;
      if (d === null) throw new BadValue(describeBad(path, t, v));
      return d;
    }
    case 'ARRAY': {
      if (!Array.isArray(v)) throw new BadValue(describeBad(path, t, v));
      const out = new Array(v.length);
      const o = Array.isArray(ordered) ? ordered : undefined;
      let texts: string[] | undefined | null = null;
      const at =
        raw &&
        ((i: number): RawText =>
          () => {
            if (texts === null) {
              const r = raw();
              texts = r === undefined ? undefined : elementTexts(r);
              if (texts?.length !== v.length) texts = undefined;
            }
            return texts?.[i];
          });
      for (let i = 0; i < v.length; i++) out[i] = coerceValue(t.element!, v[i], `${path}[${i}]`, o?.[i], at?.(i));
      return out;
    }
    case 'MAP': {
      if (!isObject(v)) throw new BadValue(describeBad(path, t, v));
      const out: Record<string, unknown> = {};
      const keys = Object.keys(v);
      const written = ordered instanceof JsonObject ? ordered.lastValues() : undefined;
      const at = raw && memberText(raw);
      if (written !== undefined && written.size === keys.length && keys.every((k) => written.has(k))) {
        // the keys in the order the line writes them, where JSON.parse put an integer-like one first
        for (const [key, o] of written) setEntry(out, key, coerceValue(t.value!, v[key], `${path}[${JSON.stringify(key)}]`, o, at?.(key)));
      } else for (const key of keys) setEntry(out, key, coerceValue(t.value!, v[key], `${path}[${JSON.stringify(key)}]`, undefined, at?.(key)));
      return out;
    }
    case 'STRUCT': {
      if (!isObject(v)) throw new BadValue(describeBad(path, t, v));
      const out: Record<string, unknown> = {};
      const written = ordered instanceof JsonObject ? ordered.lastValues() : undefined;
      const at = raw && memberText(raw);
      for (const f of t.fields!)
        setOwn(out, f.name, coerceValue(f, Object.hasOwn(v, f.name) ? v[f.name] : null, `${path}.${f.name}`, written?.get(f.name), at?.(f.name)));
      return out;
    }
  }
}

/**
 * A DATE or TIMESTAMP string read by the source's dateFormat or timestampFormat, the only form then
 * read (Spark: no fallback once the option is set); a number for a TIMESTAMP stays epoch seconds.
 */
function byPattern(p: DatetimePattern, option: string, t: DataType, v: string, path: string): unknown {
  const x = t.type === 'DATE' ? p.parseDate(v) : p.parseTimestamp(v);
  if (x === null) {
    throw new BadValue(
      `column ${path} (${ddlOf(t)}) has string ${shown(v)}: not a ${t.type === 'DATE' ? 'date' : 'timestamp'} of ${option} ${JSON.stringify(p.pattern)}; fix the value at the producer, or set the ${option} option to its pattern`,
    );
  }
  return x;
}

/**
 * A JSON string's DATE as Spark's JSON reader takes it without a dateFormat: Spark's date text
 * (date-text.ts), else, as Spark 1.5 wrote dates, a number of days since 1970-01-01 (an Int).
 */
function jsonDate(text: string): string | null {
  const d = dateOfText(text);
  if (d !== null || !/^[+-]?[0-9]{1,10}$/.test(text)) return d;
  const days = Number(text);
  return days >= -(2 ** 31) && days < 2 ** 31 && days >= -719162 && days <= 2932896 ? dateOfEpochDay(days) : null;
}

/** Why a parsed JSON value at `path` does not fit type `t` (the record's reason), or null. */
function badValueReason(t: DataType, v: unknown, path: string): string | null {
  try {
    coerceValue(t, v, path);
    return null;
  } catch (e) {
    if (e instanceof BadValue) return e.reason;
    return unreadableReason(e);
  }
}

/**
 * The value of type `t` for one parsed JSON value (numbers as lossless-json's literals or doubles),
 * or undefined when it does not fit: from_json's typing, which makes such a field null.
 */
export function jsonValueOf(t: DataType, v: unknown): unknown {
  try {
    return coerceValue(t, v, '');
  } catch (e) {
    if (e instanceof BadValue) return undefined;
    throw e;
  }
}

/**
 * Turns a parsed JSON record into a typed row, in place (the parsed object becomes the row:
 * fields outside the schema stay but are never output). A field of the wrong type makes the
 * record bad: the reason names the column, the value and the rule. A field the record does not
 * name is null, as an explicit null is (Spark's JacksonParser leaves it unset: null). This is the
 * hot path of every source, so it allocates nothing per value.
 */
export function coerceRecord(schema: Schema, record: unknown): CoerceResult {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    return {
      ok: false,
      reason: `record is a JSON ${typeName(record)}, not an object: each line must be one JSON object with the columns ${schema.columns.map((c) => c.name).join(', ')}`,
    };
  }
  const row = record as Row;
  const cols = schema.columns;
  for (let i = 0; i < cols.length; i++) {
    const col = cols[i];
    const name = col.name;
    // own fields only: a record without "constructor" must not read Object.prototype's
    const v = Object.hasOwn(row, name) ? row[name] : undefined;
    if (v === undefined) {
      // absent is null, as Spark's reader leaves a field the record does not name
      setOwn(row, name, null);
      continue;
    }
    if (v === null) continue;
    if (col.type === 'STRING' && rawLine !== null && (typeof v === 'number' || (typeof v === 'object' && !isNumberLiteral(v)))) {
      // a number, an object or an array: its text as the line has it (Spark 4's exact string parsing)
      rawMembers ??= memberTexts(rawLine);
      const raw = rawMembers.get(name);
      if (raw !== undefined) {
        row[name] = raw;
        continue;
      }
    }
    try {
      const nested = typeof v === 'object' && rawLine !== null;
      row[name] = coerceValue(
        col,
        v,
        name,
        nested ? writtenOrder(col, name) : undefined,
        nested && holdsNestedString(col) ? () => columnText(name) : undefined,
      );
    } catch (e) {
      if (e instanceof BadValue) return { ok: false, reason: e.reason };
      throw e;
    }
  }
  return { ok: true, row };
}

/**
 * The column's value as the line writes it (parseOrdered: members in order), when the order
 * JSON.parse gave a map's keys may differ from it: the column holds a MAP at some depth and its
 * text names an integer-like key. Otherwise undefined (the order JSON.parse gave is the line's).
 */
function writtenOrder(col: Column, name: string): unknown {
  let maps = columnsWithMaps.get(col);
  if (maps === undefined) columnsWithMaps.set(col, (maps = holdsType(col, (t) => t.type === 'MAP')));
  if (!maps) return undefined;
  rawMembers ??= memberTexts(rawLine!);
  const raw = rawMembers.get(name);
  if (raw === undefined || !mayReorderMembers(raw)) return undefined;
  try {
    return parseOrdered(raw);
  } catch {
    return undefined; // not strict JSON (single quotes, NaN): the order JSON.parse's fallbacks gave
  }
}

/**
 * The column's text as the line writes it, when the column is a container holding a STRING at
 * some depth (a STRUCT field, an element, a MAP value): Spark's reader gives such a STRING a
 * number, an object or an array as its bytes in the line, which the parsed value no longer has.
 */
function holdsNestedString(col: Column): boolean {
  let strings = columnsWithStrings.get(col);
  if (strings === undefined) columnsWithStrings.set(col, (strings = col.type !== 'STRING' && holdsType(col, (t) => t.type === 'STRING')));
  return strings;
}

function columnText(name: string): string | undefined {
  rawMembers ??= memberTexts(rawLine!);
  return rawMembers.get(name);
}

/**
 * A value's text as the line writes it, asked for only when a STRING is given something other
 * than a string (rare): the text of the container, then of its member, are found only then.
 */
type RawText = () => string | undefined;

/** The texts of an object's members, by key, from the object's text, found once when first asked. */
function memberText(raw: RawText): (key: string) => RawText {
  let texts: Map<string, string> | undefined | null = null;
  return (key) => () => {
    if (texts === null) {
      const r = raw();
      texts = r === undefined ? undefined : memberTexts(r);
    }
    return texts?.get(key);
  };
}

const columnsWithStrings = new WeakMap<Column, boolean>();

/** Whether a column holds a MAP at some depth, per column object (a schema's columns are made once). */
const columnsWithMaps = new WeakMap<Column, boolean>();

/**
 * The text a STRING column keeps for a JSON number, as Spark's reader writes it back out with
 * Jackson: the number, or for NaN and the infinities the quoted name (Jackson's generator quotes
 * non-numeric numbers), e.g. `"NaN"` with its quotes.
 */
function numberText(v: number): string {
  return Number.isFinite(v) ? JSON.stringify(v) : `"${String(v)}"`;
}

/** Two characters no well-formed text has in this order (a low surrogate, then a high one). */
const MARK = '\udc00\ud800';

/**
 * JSON.parse of a line that holds bare NaN or infinity tokens outside its strings: each becomes a
 * marked string, and the reviver puts the number back. undefined when the line has no such token,
 * is still not JSON, has a token where a key belongs, or already holds the mark's characters.
 * `parse`: JSON.parse, or lossless-json's parse (numbers as their literals' text, losslessRow).
 */
function parseNonNumeric(line: string, parse: (text: string, reviver: (key: string, value: unknown) => unknown) => unknown = JSON.parse): unknown {
  if (line.includes(MARK) || /\\u[dD][cC]00/.test(line)) return undefined;
  let text = '';
  let from = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) {
      // skip the string, escapes included (an unclosed one: JSON.parse reports it)
      for (i++; i < line.length && line.charCodeAt(i) !== 34; i++) if (line.charCodeAt(i) === 92) i++;
      continue;
    }
    if (c !== 78 && c !== 73 && c !== 43 && c !== 45) continue; // N, I, +, -
    const k = NON_NUMERIC_TOKENS.findIndex(([tok]) => line.startsWith(tok, i));
    if (k < 0) continue;
    text += `${line.slice(from, i)}"\\udc00\\ud800${k}"`;
    i += NON_NUMERIC_TOKENS[k][0].length - 1;
    from = i + 1;
  }
  if (from === 0) return undefined;
  text += line.slice(from);
  let keyed = false;
  let parsed: unknown;
  try {
    parsed = parse(text, (key, value) => {
      if (key.startsWith(MARK)) keyed = true;
      return typeof value === 'string' && value.length === 3 && value.startsWith(MARK) ? NON_NUMERIC_TOKENS[value.charCodeAt(2) - 48][1] : value;
    });
  } catch {
    return undefined;
  }
  return keyed ? undefined : parsed;
}

/**
 * A run of 16 digits and points: the line may hold a number literal with 16 significant digits or
 * more. A literal with at most 15 is exact through a double: two such decimals never share a
 * double (IEEE 754's 15-digit guarantee), so the double's shortest text (String(v)) has the
 * literal's value, and a DECIMAL can be read from it. Lines without such a run (most) take
 * JSON.parse, three times faster than lossless-json; a run inside a string only costs the slower
 * parse. (Doubles below 1e-307 lose digits, but round to 0 at any DECIMAL scale up to 38.)
 */
const LONG_NUMBER = /[0-9.]{16,}/;

/**
 * Parses one JSON line into a row, or gives the reason it is malformed. As Spark's reader, it also
 * takes the bare tokens NaN, Infinity, +Infinity, +INF, -Infinity and -INF as numbers, and (unless
 * `singleQuotes` is false: the allowSingleQuotes option) 'single-quoted' strings and names.
 */
export function parseJsonLine(schema: Schema, line: string, singleQuotes = true, patterns: JsonPatterns | null = null): CoerceResult {
  const outer = rawLine;
  const outerPatterns = jsonPatterns;
  rawLine = line;
  rawMembers = undefined;
  jsonPatterns = patterns;
  try {
    return parseLine(schema, line, singleQuotes);
  } finally {
    rawLine = outer;
    rawMembers = undefined;
    jsonPatterns = outerPatterns;
  }
}

/** The dateFormat and timestampFormat options of a JSON source, compiled (null: Spark's default forms). */
export interface JsonPatterns {
  readonly date: DatetimePattern | null;
  readonly timestamp: DatetimePattern | null;
}

/** The patterns of the line parseJsonLine is typing: a DATE or TIMESTAMP string at any depth is read by them. */
let jsonPatterns: JsonPatterns | null = null;

function parseLine(schema: Schema, line: string, singleQuotes: boolean): CoerceResult {
  // a key given twice: JSON.parse keeps the last value, Spark's reader converts each in turn; a
  // line JSON.parse reads is checked through only when its keys are not all there once
  const lossless = (schema.numberText && LONG_NUMBER.test(line)) || floatProbe(schema)?.test(line) === true;
  if (lossless) {
    const reason = hiddenValueReason(schema, line, badValueReason);
    if (reason !== null) return { ok: false, reason };
    const exact = losslessRow(schema, line);
    if (exact !== undefined) return exact;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    parsed = parseNonNumeric(line);
    if (parsed === undefined && singleQuotes && line.includes("'")) {
      // Spark's allowSingleQuotes, on by default: 'text' is a string
      const strict = strictJson(line, SINGLE_QUOTES);
      if (strict !== line) return parseJsonLine(schema, strict, false, jsonPatterns);
    }
    if (parsed === undefined && line.trimStart().startsWith('{')) {
      // Spark's parser reads the line's first JSON value and never looks past it: text after a
      // complete object (a trailing comma, a second object) is ignored
      const end = firstValueEnd(line);
      if (end < line.length && line.slice(end).trim() !== '') {
        const first = parseJsonLine(schema, line.slice(0, end), singleQuotes, jsonPatterns);
        if (first.ok || !first.reason.startsWith('malformed JSON')) return first;
      }
    }
    if (parsed === undefined) return { ok: false, reason: `malformed JSON (${(e as Error).message}): each line must be one complete JSON object` };
  }
  // (a line with bare NaN or infinity tokens too: parseNonNumeric's object, and hiddenValueReason
  // reads the tokens as numbers; {"b":-INF,"b":true} once gave a BOOLEAN b true)
  if (!lossless && !givesEveryKeyOnce(line, parsed)) {
    const reason = hiddenValueReason(schema, line, badValueReason);
    if (reason !== null) return { ok: false, reason };
  }
  if (hasInexactLong(schema, parsed)) return losslessRow(schema, line) ?? guardedCoerce(schema, parsed);
  // a STRING column that holds a number needs the number's text: read the line again with it
  wantNumberText = true;
  let r: CoerceResult | typeof NEED_NUMBER_TEXT;
  try {
    r = guardedCoerce(schema, parsed);
  } catch (e) {
    if (e !== NEED_NUMBER_TEXT) throw e;
    r = NEED_NUMBER_TEXT;
  } finally {
    wantNumberText = false;
  }
  return r !== NEED_NUMBER_TEXT ? r : (losslessRow(schema, line) ?? guardedCoerce(schema, parsed));
}

const SINGLE_QUOTES = { singleQuotes: true, comments: false, unquotedNames: false } as const;

/**
 * The line parseJsonLine is typing (null elsewhere: static rows, from_json), for a STRING column
 * that holds an object or an array to keep its text as written; its members' texts, once read.
 */
let rawLine: string | null = null;
let rawMembers: Map<string, string> | undefined;

/**
 * Set while parseJsonLine types a record JSON.parse read: a STRING column that holds a number then
 * throws NEED_NUMBER_TEXT, for the line to be read again with each number's text (lossless-json),
 * which the column keeps as written. Elsewhere (from_json, static rows) the double's text.
 */
let wantNumberText = false;
const NEED_NUMBER_TEXT: unique symbol = Symbol('need number text');

/**
 * A probe of a line for a number with a fraction or an exponent where the schema has an integral
 * or TIMESTAMP value, which only an integer literal fits (Spark's VALUE_NUMBER_INT): JSON.parse
 * reads 1.0 and 1 alike, so a line the probe matches is read with each number's text. The probe
 * may match lines without such a number (only a cost) and misses none: a key written with an
 * escape (`"\u0069":1.0`, which names column i as Jackson decodes it) is matched whatever it spells.
 */
const floatProbes = new WeakMap<Schema, RegExp | null>();

function floatProbe(schema: Schema): RegExp | null {
  let probe = floatProbes.get(schema);
  if (probe !== undefined) return probe;
  const keys = new Set<string>();
  let anywhere = false;
  const walk = (t: DataType, key: string | null): void => {
    if (t.type === 'INT' || t.type === 'LONG' || t.type === 'TIMESTAMP') {
      if (key === null || [...key].some((ch) => ch === '"' || ch === '\\' || ch < ' ')) anywhere = true;
      else keys.add(key);
    } else if (t.type === 'ARRAY') walk(t.element!, null);
    else if (t.type === 'MAP') walk(t.value!, null);
    else if (t.type === 'STRUCT') for (const f of t.fields!) walk(f, f.name);
  };
  for (const c of schema.columns) walk(c, c.name);
  const float = '-?[0-9]+(?:\\.|[eE])';
  if (anywhere) probe = /[:,[]\s*-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)\s*[,}\]]/;
  else if (keys.size > 0) {
    // (the second alternative: any key with an escape, which may spell one of them; it once went
    // unmatched, so {"\u0069":1.0} gave an INT i the value 1 where Spark's reader refuses 1.0. It
    // starts after a { or a comma, as a key does: a quote inside a string has a backslash before
    // it, so the probe reads each string once, not once from each escaped quote in it)
    const named = `"(?:${[...keys].map((k) => k.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|')})"`;
    probe = new RegExp(`(?:${named}|[{,]\\s*"(?:[^"\\\\]*\\\\.)+[^"\\\\]*")\\s*:\\s*${float}`);
  } else probe = null;
  floatProbes.set(schema, probe);
  return probe;
}

/**
 * The row of a line read with every number as its literal's text (lossless-json), for a DECIMAL or
 * a BIGINT beyond 2^53 − 1 at any depth; undefined when lossless-json refuses the line (bare NaN
 * tokens), which JSON.parse then reads. A key given twice keeps its last value, as JSON.parse does
 * (lossless-json would refuse the line). The row keeps the schema's columns
 * only: other fields would still hold lossless-json's number objects.
 */
const LOSSLESS_OPTIONS = { onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue };

function losslessRow(schema: Schema, line: string): CoerceResult | undefined {
  let literal: unknown;
  try {
    literal = parseLossless(line, null, LOSSLESS_OPTIONS);
  } catch {
    // bare NaN or infinity tokens (Spark's allowNonNumericNumbers), which lossless-json refuses:
    // marked as JSON.parse's fallback marks them, so the other numbers keep their text (a FLOAT's
    // tie, a -0 literal, a BIGINT beyond 2^53 on the same line)
    literal = parseNonNumeric(line, (text, reviver) => parseLossless(text, reviver, LOSSLESS_OPTIONS));
    if (literal === undefined) return undefined;
  }
  const r = guardedCoerce(schema, literal);
  if (!r.ok) return r;
  const row: Row = {};
  for (const c of schema.columns) setOwn(row, c.name, r.row[c.name]);
  return { ok: true, row };
}

/** Whether a LONG column of the parsed record holds an integer JSON.parse could not keep exactly. */
function hasInexactLong(schema: Schema, parsed: unknown): boolean {
  if (parsed === null || typeof parsed !== 'object') return false;
  for (const c of schema.columns) {
    if (c.type !== 'LONG' || !Object.hasOwn(parsed, c.name)) continue;
    const v = (parsed as Row)[c.name];
    if (typeof v === 'number' && Number.isInteger(v) && !Number.isSafeInteger(v)) return true;
  }
  return false;
}

/**
 * coerceRecord, with any failure of it a bad record rather than an error of the batch: a STRING
 * column that holds a value nested thousands of levels deep overflows JSON.stringify's stack.
 */
function guardedCoerce(schema: Schema, record: unknown): CoerceResult {
  try {
    return coerceRecord(schema, record);
  } catch (e) {
    if (e === NEED_NUMBER_TEXT) throw e;
    return { ok: false, reason: unreadableReason(e) };
  }
}

/** Why a record that made the reader throw is bad (a RangeError: nested too deeply to keep as text). */
export function unreadableReason(e: unknown): string {
  if (e instanceof RangeError) return `record nests too deeply to keep a column's value as text (${e.message}): flatten the value at the producer`;
  return `record could not be read (${e instanceof Error ? e.message : String(e)}): fix the producer`;
}
