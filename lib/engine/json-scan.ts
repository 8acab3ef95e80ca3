/**
 * A schema-driven reader of one JSON-lines record: the fast path of `parseJsonLine`.
 *
 * `compileLineParser(schema)` returns a function that gives what `parseJsonLine(schema, line)`
 * gives for the columns of the schema (the same ok/failed decision, the same typed values, the
 * same reason), without building the fields the schema does not declare. JSON.parse builds every
 * field of every object and is most of the cost of a source; this reads a line in three tiers:
 *
 * 1. A regular expression for the shape of the latest lines: the schema's keys in the order the
 *    producer writes them, other fields anywhere (scalars, or objects and arrays of scalars), and
 *    whitespace only if the lines have any. Irregexp checks and splits the whole line in one
 *    native pass, where a charCodeAt loop costs about as much per character as JSON.parse. The
 *    shapes are learnt from the lines that tier 2 reads (up to 16 per parser); when 16 lines in a
 *    row miss the current one, the next 1024 lines skip this tier, and lines over 1 MiB always do.
 * 2. A charCodeAt scan that takes keys in any order (escaped ones too), with or without
 *    whitespace, and skips nested values of other fields (checking that they are valid JSON).
 * 3. `parseJsonLine(schema, line)` itself, for everything else, so the outcome and the reason of
 *    a bad record are always the reference's: a backslash escape in the value of a column, a key
 *    of the schema given twice (JSON.parse keeps the last one), a nested value for a column,
 *    nesting deeper than 64 levels, anything that is not valid JSON (control characters in
 *    strings, trailing commas, truncated lines, trailing garbage, a top level that is not an
 *    object), and every record the schema rejects (a missing column, a value of the wrong type).
 *
 * Differences from `parseJsonLine`, by design:
 * - a row holds exactly the columns of the schema (or those of `options.columns`), in schema order;
 *   the fields outside the schema are not on it (`parseJsonLine` leaves them on the row, where they are never used). Rows that
 *   come from tier 3 keep them, as `parseJsonLine` does;
 * - string values are slices of the line, so (as V8 shares the characters of slices of 13
 *   characters or more) a row that is kept can keep its line, or the text the line was sliced
 *   from, alive.
 *
 * The returned function is synchronous: it keeps scratch state between calls (the learnt shapes,
 * the last hour of a timestamp) but is done with it when it returns.
 */
import type { Row } from './ports';
import { epochSecondsMs, nonFiniteDouble, numberText, parseJsonLine, parseTimestamp, unreadableReason, type CoerceResult, type Schema } from './schema';

const T_STRING = 0;
const T_INT = 1;
const T_LONG = 2;
const T_DOUBLE = 3;
const T_BOOLEAN = 4;
const T_TIMESTAMP = 5;

const TYPE_CODES: Record<string, number> = { STRING: T_STRING, INT: T_INT, LONG: T_LONG, DOUBLE: T_DOUBLE, BOOLEAN: T_BOOLEAN, TIMESTAMP: T_TIMESTAMP };

/** Exact powers of ten: a mantissa below 2^53 times or divided by one of them rounds once. */
const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** Deepest nesting skipped in a field outside the schema; deeper records take the fallback. */
const MAX_DEPTH = 64;

// Character codes.
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;

/** End of the last scanned number, or -1 when it was not a JSON number. */
let numEnd = -1;

/** Whether skipWs has skipped any whitespace since it was last reset. */
let wsSeen = false;

function skipWs(s: string, i: number): number {
  let c = s.charCodeAt(i);
  if (c === 32 || c === 10 || c === 13 || c === 9) {
    wsSeen = true;
    do c = s.charCodeAt(++i);
    while (c === 32 || c === 10 || c === 13 || c === 9);
  }
  return i;
}

/**
 * Scans the JSON number at i (which starts with '-' or a digit). Sets numEnd to the index after
 * it, or to -1 when the text is not a JSON number, and returns the same double as JSON.parse.
 */
function scanNumber(s: string, i: number): number {
  const start = i;
  let c = s.charCodeAt(i);
  let neg = false;
  if (c === MINUS) {
    neg = true;
    c = s.charCodeAt(++i);
  }
  let mant = 0;
  let nd = 0; // digits accumulated into mant
  if (c === ZERO) {
    c = s.charCodeAt(++i);
  } else if (c > ZERO && c <= NINE) {
    do {
      mant = mant * 10 + (c - ZERO);
      nd++;
      c = s.charCodeAt(++i);
    } while (c >= ZERO && c <= NINE);
  } else {
    numEnd = -1;
    return 0;
  }
  let fd = 0; // fraction digits
  if (c === DOT) {
    c = s.charCodeAt(++i);
    if (!(c >= ZERO && c <= NINE)) {
      numEnd = -1;
      return 0;
    }
    do {
      mant = mant * 10 + (c - ZERO);
      nd++;
      fd++;
      c = s.charCodeAt(++i);
    } while (c >= ZERO && c <= NINE);
  }
  let e10 = -fd;
  if (c === 101 || c === 69) {
    c = s.charCodeAt(++i);
    let eneg = false;
    if (c === MINUS || c === PLUS) {
      eneg = c === MINUS;
      c = s.charCodeAt(++i);
    }
    if (!(c >= ZERO && c <= NINE)) {
      numEnd = -1;
      return 0;
    }
    let exp = 0;
    do {
      if (exp < 100_000) exp = exp * 10 + (c - ZERO);
      c = s.charCodeAt(++i);
    } while (c >= ZERO && c <= NINE);
    e10 += eneg ? -exp : exp;
  }
  numEnd = i;
  let v: number;
  if (nd > 15) return Number(s.slice(start, i)); // mant may not be exact: let the runtime round
  if (e10 === 0) v = mant;
  else if (e10 > 0 && e10 <= 22) v = mant * POW10[e10];
  else if (e10 < 0 && e10 >= -22) v = mant / POW10[-e10];
  else return Number(s.slice(start, i));
  return neg ? -v : v;
}

/**
 * Index of the closing quote of the string whose opening quote is at i - 1, when it has no
 * backslash and no control character; -1 otherwise (the caller falls back).
 */
function plainStringEnd(s: string, i: number, len: number): number {
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c < 32) return -1;
  }
  return -1;
}

function isHex(c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** Index after the string whose opening quote is at i - 1, checking its escapes; -1 if invalid. */
function skipString(s: string, i: number, len: number): number {
  while (i < len) {
    const c = s.charCodeAt(i++);
    if (c === QUOTE) return i;
    if (c < 32) return -1;
    if (c === BACKSLASH) {
      const e = s.charCodeAt(i++);
      if (e === 117) {
        if (!(isHex(s.charCodeAt(i)) && isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3)))) return -1;
        i += 4;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) {
        return -1;
      }
    }
  }
  return -1;
}

/** Index after the literal `word` at i, or -1. */
function skipWord(s: string, i: number, word: string): number {
  return s.startsWith(word, i) ? i + word.length : -1;
}

/** Index after the scalar (string, number, literal) at i, or -1 when it is not one. */
function skipScalar(s: string, i: number, len: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return skipString(s, i + 1, len);
  if (c === MINUS || (c >= ZERO && c <= NINE)) {
    scanNumber(s, i);
    return numEnd;
  }
  if (c === 116) return skipWord(s, i, 'true');
  if (c === 102) return skipWord(s, i, 'false');
  if (c === 110) return skipWord(s, i, 'null');
  return -1;
}

/** Container kinds on the stack of skipValue. */
const stack = new Uint8Array(MAX_DEPTH);

/** Index after the JSON value at i (any value, nesting up to MAX_DEPTH), or -1. */
function skipValue(s: string, i: number, len: number): number {
  let depth = 0;
  for (;;) {
    // a value starts at i
    const c = s.charCodeAt(i);
    if (c === LBRACE || c === LBRACKET) {
      if (depth === MAX_DEPTH) return -1;
      stack[depth++] = c;
      i = skipWs(s, i + 1);
      const d = s.charCodeAt(i);
      if (d === (c === LBRACE ? RBRACE : RBRACKET)) {
        i++;
        depth--;
      } else {
        if (c === LBRACE) {
          if (d !== QUOTE) return -1;
          i = skipString(s, i + 1, len);
          if (i < 0) return -1;
          i = skipWs(s, i);
          if (s.charCodeAt(i) !== COLON) return -1;
          i = skipWs(s, i + 1);
        }
        continue; // the first member's value
      }
    } else {
      i = skipScalar(s, i, len);
      if (i < 0) return -1;
    }
    // after a value: close containers or go to the next member
    for (;;) {
      if (depth === 0) return i;
      i = skipWs(s, i);
      const d = s.charCodeAt(i);
      const open = stack[depth - 1];
      if (d === COMMA) {
        i = skipWs(s, i + 1);
        if (open === LBRACE) {
          if (s.charCodeAt(i) !== QUOTE) return -1;
          i = skipString(s, i + 1, len);
          if (i < 0) return -1;
          i = skipWs(s, i);
          if (s.charCodeAt(i) !== COLON) return -1;
          i = skipWs(s, i + 1);
        }
        break; // the next value
      }
      if (d === (open === LBRACE ? RBRACE : RBRACKET)) {
        i++;
        depth--;
        continue;
      }
      return -1;
    }
  }
}

function rowFactory(names: readonly string[], kept: readonly number[], codegen: boolean): (vals: unknown[]) => Row {
  // An object literal gives every row the same shape at once; the loop is for runtimes that
  // refuse code generation from strings.
  if (codegen) {
    try {
      const body = `return {${kept.map((c) => `${JSON.stringify(names[c])}: v[${c}]`).join(', ')}};`;
      const f = new Function('v', body) as (vals: unknown[]) => Row;
      const probe = f(names.map((_, i) => i));
      if (kept.every((c) => Object.hasOwn(probe, names[c]) && probe[names[c]] === c) && Object.keys(probe).length === kept.length) return f;
    } catch {
      // code generation from strings is disallowed: the loop below
    }
  }
  return (vals) => {
    const row: Row = {};
    for (const c of kept) row[names[c]] = vals[c];
    return row;
  };
}

/** Returned by the conversions when the value does not fit the column: the reference decides. */
const BAD: unique symbol = Symbol('bad');

/** The value of a JSON string (without escapes) in a column of type t, as coerceRecord gives it. */
function fromString(t: number, text: string): unknown {
  switch (t) {
    case T_STRING:
      return text;
    case T_TIMESTAMP: {
      const ms = parseTimestamp(text);
      return ms === null ? BAD : ms;
    }
    case T_DOUBLE: {
      const d = nonFiniteDouble(text);
      return d === null ? BAD : d;
    }
    default:
      return BAD;
  }
}

/** The value of a JSON number in a column of type t, as coerceRecord gives it. */
function fromNumber(t: number, v: number): unknown {
  switch (t) {
    case T_DOUBLE:
      return v;
    case T_TIMESTAMP:
      return epochSecondsMs(v) ?? BAD; // epoch seconds, as Spark reads numbers
    case T_LONG:
      return Number.isSafeInteger(v) ? v : BAD;
    case T_INT:
      return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? v : BAD;
    case T_STRING:
      return numberText(v); // Spark keeps the JSON text of a non-string token
    default:
      return BAD;
  }
}

/** The value of true or false in a column of type t, as coerceRecord gives it. */
function fromBoolean(t: number, b: boolean): unknown {
  if (t === T_BOOLEAN) return b;
  if (t === T_STRING) return b ? 'true' : 'false';
  return BAD;
}

/** The value of a token that the shape's expression matched as a number, true, false or null. */
function fromToken(t: number, tok: string): unknown {
  const c = tok.charCodeAt(0);
  if (c === 110) return null;
  if (c === 116) return fromBoolean(t, true);
  if (c === 102) return fromBoolean(t, false);
  return fromNumber(t, scanNumber(tok, 0));
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/** A line shape: the schema's keys in one order, other fields anywhere, spaced or not. */
interface Shape {
  /** The column at each position. */
  readonly cols: Int32Array;
  /** The first capture group of each position (see shapeRegExp). */
  readonly groups: Int32Array;
  /** Whether the expression allows whitespace between tokens. */
  readonly spaced: boolean;
  readonly re: RegExp;
  /** The row from a match (null: a value does not fit its column), compiled for the shape. */
  readonly extract: (m: RegExpExecArray) => Row | null;
}

const MAX_SHAPES = 16;

/** After this many lines in a row that the current shape misses, ... */
const MAX_MISSES = 16;
/** ... this many lines skip tier 1 (then the shape gets another try). */
const REST_LINES = 1024;

/**
 * Longest line tried with a shape's expression. Irregexp keeps a backtrack entry for each
 * repetition of a field or an escape, and throws past a few million of them (about 18 MB of
 * `"x":1,`); longer lines go to tier 2, which is linear and keeps nothing per field.
 */
const MAX_SHAPE_LINE = 1 << 20;

/**
 * The regular expression of the lines whose schema keys come in the order `cols`: exactly the
 * valid JSON objects of that shape where the values of the schema's keys are scalars without
 * escapes and the other fields have scalar values, or objects or arrays of scalars. A key of the
 * schema only matches at its own place (the other keys exclude it), so a duplicated or escaped
 * schema key never matches.
 *
 * Capture groups of a position, from its first group g: the text of a string at g and a number or
 * literal at g + 1 (none, and g = -1, for a STRING column that rows leave off); for a TIMESTAMP
 * column, "YYYY-MM-DD HH:MM:SS[.fff]" at g when the string has that plain form, any other string
 * at g + 1, a number or literal at g + 2.
 */
function shapeRegExp(names: readonly string[], types: readonly number[], keep: readonly boolean[], cols: Int32Array, spaced: boolean): { re: RegExp; groups: Int32Array } {
  const ws = spaced ? '[ \\t\\n\\r]*' : '';
  const num = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?';
  const plain = '[^"\\\\\\x00-\\x1f]*';
  const token = `${num}|true|false|null`;
  const value = `(?:"(${plain})"|(${token}))`;
  // a STRING column the rows leave off takes any scalar: nothing to capture
  const anyScalar = `(?:"${plain}"|${token})`;
  const timestamp = `(?:"(?:([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,3})?)|(${plain}))"|(${token}))`;
  const otherKey = `"(?!(?:${names.map(escapeRegExp).join('|')})")${plain}"`;
  // (the unrolled loop: runs of plain characters between escapes, which backtracks little)
  const otherString = `"${plain}(?:\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4})${plain})*"`;
  const scalar = `(?:${otherString}|${token})`;
  // other fields may hold an object or an array of scalars (deeper nesting: tier 2)
  const member = `${otherString}${ws}:${ws}${scalar}`;
  const object = `\\{${ws}(?:${member}(?:${ws},${ws}${member})*)?${ws}\\}`;
  const array = `\\[${ws}(?:${scalar}(?:${ws},${ws}${scalar})*)?${ws}\\]`;
  const other = `${otherKey}${ws}:${ws}(?:${scalar}|${object}|${array})`;
  // lazy repetitions of the other fields: a line without them matches at the first try
  let src = `^${ws}\\{${ws}(?:${other}${ws},${ws})*?`;
  const groups = new Int32Array(cols.length);
  let group = 1;
  for (let p = 0; p < cols.length; p++) {
    if (p > 0) src += `${ws},${ws}`;
    const ts = types[cols[p]] === T_TIMESTAMP;
    const dropped = types[cols[p]] === T_STRING && !keep[cols[p]];
    src += `"${escapeRegExp(names[cols[p]])}"${ws}:${ws}${ts ? timestamp : dropped ? anyScalar : value}(?:${ws},${ws}${other})*?`;
    groups[p] = dropped ? -1 : group;
    group += ts ? 3 : dropped ? 0 : 2;
  }
  src += `${ws}\\}${ws}$`;
  return { re: new RegExp(src), groups };
}

/** How many lines each tier has read (a line that tier 1 or 2 hands on counts once, where it ended). */
interface LineParserStats {
  /** Read by the expression of a learnt shape (tier 1). */
  shape: number;
  /** Read by the charCodeAt scan (tier 2). */
  scan: number;
  /** Given to parseJsonLine (tier 3): every bad record, and the good ones the tiers above leave. */
  reference: number;
}

export type LineParser = ((line: string) => CoerceResult) & {
  readonly stats: LineParserStats;
  /** Pushes the line's row onto `rows` and returns null, or returns why the line is bad (no result object per line). */
  readonly into: (line: string, rows: Row[]) => string | null;
};

export interface LineParserOptions {
  /** Learn line shapes and match them with a regular expression (default true; false: tests, benchmarks). */
  readonly shapes?: boolean;
  /**
   * Compile the code that builds rows with `new Function` (default true; false: tests, and what
   * happens anyway where code generation from strings is disallowed).
   */
  readonly codegen?: boolean;
  /**
   * After 16 lines in a row that the shape's expression missed, read the next 1024 with tier 2
   * alone (default true; false: tests that want tier 1 to see every line).
   */
  readonly backoff?: boolean;
  /**
   * The columns to put on rows (default: all of the schema's). The others are still read and
   * checked, so a line is good or bad, and for the same reason, whatever the query reads; only
   * their values are not kept (strings are not even cut out of the line). Rows from tier 3 carry
   * every column.
   */
  readonly columns?: readonly string[];
}

/**
 * Compiles the reader of one schema. The result behaves as `(line) => parseJsonLine(schema,
 * line)` except that rows carry only the schema's columns (see the file comment).
 */
export function compileLineParser(schema: Schema, options: LineParserOptions = {}): LineParser {
  const useShapes = options.shapes ?? true;
  const codegen = options.codegen ?? true;
  const backoff = options.backoff ?? true;
  const stats: LineParserStats = { shape: 0, scan: 0, reference: 0 };
  const cols = schema.columns;
  const n = cols.length;
  const names = cols.map((c) => c.name);
  const types = cols.map((c) => TYPE_CODES[c.type]);
  const reference = (line: string): CoerceResult => {
    stats.reference++;
    return parseJsonLine(schema, line);
  };
  /** The reference, with anything it throws a bad record: no line can fail the batch. */
  const guardedReference = (line: string): CoerceResult => {
    try {
      return reference(line);
    } catch (e) {
      return { ok: false, reason: unreadableReason(e) };
    }
  };
  // Column names the scanner cannot match byte for byte, or that an object reads through its
  // prototype ("constructor", "__proto__"...), where the reference does odd but defined things.
  const unsafe = names.some((name) => {
    if (name in {} || name === '__proto__') return true;
    for (let k = 0; k < name.length; k++) {
      const c = name.charCodeAt(k);
      if (c < 32 || c === QUOTE || c === BACKSLASH) return true;
    }
    return false;
  });
  if (n === 0 || unsafe || new Set(names).size !== n || types.some((t) => t === undefined)) return Object.assign(guardedReference, { stats, into: (line: string, rows: Row[]) => pushRow(guardedReference(line), rows) });

  const byName = new Map<string, number>(names.map((name, i) => [name, i]));
  let lengths = 0; // bit k set: some name has length k (lengths up to 31)
  let longNames = false;
  for (const name of names) {
    if (name.length < 32) lengths |= 1 << name.length;
    else longNames = true;
  }
  const keep = names.map((name) => options.columns === undefined || options.columns.includes(name));
  const kept = names.map((_, c) => c).filter((c) => keep[c]);
  const makeRow = rowFactory(names, kept, codegen);
  const vals: unknown[] = new Array(n).fill(null);
  const seen = new Uint32Array(n);
  let gen = 0;
  /** The columns in the order of the last line scanned. */
  const order = new Int32Array(n);
  const shapes = new Map<string, Shape>();
  let shape: Shape | null = null;
  /** Lines in a row that the shape's expression missed. */
  let misses = 0;
  /** Lines still to read without trying the expression. */
  let resting = 0;
  /**
   * The hour of the last plain timestamp, as the number YYYYMMDDHH, and its epoch ms; and the hour
   * before that one: around the turn of an hour, late events of the previous hour interleave with
   * the new hour's. -1: none yet.
   */
  let hourKey = -1;
  let hourMs = 0;
  let prevHourKey = -1;
  let prevHourMs = 0;

  /**
   * parseTimestamp(text) for text "YYYY-MM-DD HH:MM:SS[.f{1,3}]" (or with T), which the shape's
   * expression matched (so the places read below hold digits): what its plain path computes, with
   * the hour parsed once for the lines of that hour. The hour is compared as a number made of its
   * digits, not as text (startsWith on the captured string costs twice as much).
   */
  function plainTimestamp(text: string): unknown {
    const year = text.charCodeAt(0) * 1000 + text.charCodeAt(1) * 100 + text.charCodeAt(2) * 10 + text.charCodeAt(3) - ZERO * 1111;
    const monthDay = (text.charCodeAt(5) * 10 + text.charCodeAt(6) - ZERO * 11) * 100 + text.charCodeAt(8) * 10 + text.charCodeAt(9) - ZERO * 11;
    const key = (year * 10_000 + monthDay) * 100 + text.charCodeAt(11) * 10 + text.charCodeAt(12) - ZERO * 11;
    if (key !== hourKey) {
      let ms: number | null;
      if (key === prevHourKey) ms = prevHourMs;
      else {
        ms = parseTimestamp(`${text.slice(0, 13)}:00:00`);
        if (ms === null) return fromString(T_TIMESTAMP, text);
      }
      prevHourKey = hourKey;
      prevHourMs = hourMs;
      hourKey = key;
      hourMs = ms;
    }
    const minute = (text.charCodeAt(14) - ZERO) * 10 + (text.charCodeAt(15) - ZERO);
    const second = (text.charCodeAt(17) - ZERO) * 10 + (text.charCodeAt(18) - ZERO);
    if (minute > 59 || second > 59) return fromString(T_TIMESTAMP, text);
    let frac = 0;
    const len = text.length;
    if (len > 20) {
      frac = text.charCodeAt(20) - ZERO;
      if (len === 21) frac *= 100;
      else {
        frac = frac * 10 + (text.charCodeAt(21) - ZERO);
        if (len === 22) frac *= 10;
        else frac = frac * 10 + (text.charCodeAt(22) - ZERO);
      }
    }
    return hourMs + minute * 60_000 + second * 1000 + frac;
  }

  /** Tier 1: the row from a match of a shape, or null when a value does not fit its column. */
  function fromMatch(m: RegExpExecArray, pos: Int32Array, groups: Int32Array): Row | null {
    for (let p = 0; p < n; p++) {
      const col = pos[p];
      const t = types[col];
      const g = groups[p];
      let v: unknown;
      if (g < 0) continue; // a STRING column left off the row: any scalar fits
      if (t === T_TIMESTAMP) {
        const plainText = m[g];
        if (plainText !== undefined) v = plainTimestamp(plainText);
        else {
          const text = m[g + 1];
          v = text !== undefined ? fromString(t, text) : fromToken(t, m[g + 2]);
        }
      } else {
        const text = m[g];
        v = text !== undefined ? fromString(t, text) : fromToken(t, m[g + 1]);
      }
      if (v === BAD) return null;
      vals[col] = v;
    }
    return makeRow(vals);
  }

  /**
   * fromMatch unrolled for one shape: straight-line code with the groups, the types and the row
   * literal written in (a fifth faster than the loop). Falls back to the loop without codegen.
   */
  function extractor(pos: Int32Array, groups: Int32Array): (m: RegExpExecArray) => Row | null {
    const generic = (m: RegExpExecArray) => fromMatch(m, pos, groups);
    if (!codegen) return generic;
    let body = '';
    for (let p = 0; p < n; p++) {
      const t = types[pos[p]];
      const g = groups[p];
      const v = `v${pos[p]}`;
      if (g < 0) continue; // a STRING column left off the row: nothing captured, nothing to check
      if (t === T_TIMESTAMP) {
        body += `  let ${v}; if ((x = m[${g}]) !== undefined) ${v} = ts(x); else if ((x = m[${g + 1}]) !== undefined) ${v} = str(${t}, x); else ${v} = tok(${t}, m[${g + 2}]);\n  if (${v} === BAD) return null;\n`;
      } else if (t === T_STRING) {
        body += `  let ${v} = m[${g}]; if (${v} === undefined) ${v} = tok(${t}, m[${g + 1}]); // never BAD\n`;
      } else {
        body += `  let ${v}; if ((x = m[${g}]) !== undefined) ${v} = str(${t}, x); else ${v} = tok(${t}, m[${g + 1}]);\n  if (${v} === BAD) return null;\n`;
      }
    }
    const row = kept.map((c) => `${JSON.stringify(names[c])}: v${c}`).join(', ');
    const src = `return function extract(m) {\n  let x;\n${body}  return { ${row} };\n};`;
    try {
      return new Function('BAD', 'str', 'tok', 'ts', src)(BAD, fromString, fromToken, plainTimestamp);
    } catch {
      return generic;
    }
  }

  /** Tier 2: the row from a charCodeAt scan of the line, or null for the reference to decide. */
  function scan(line: string): Row | null {
    const len = line.length;
    if (++gen === 0xffffffff) {
      seen.fill(0);
      gen = 1;
    }
    wsSeen = false;
    let i = skipWs(line, 0);
    if (line.charCodeAt(i) !== LBRACE) return null;
    i = skipWs(line, i + 1);
    let found = 0;
    let expected = 0;
    if (line.charCodeAt(i) === RBRACE) {
      i++;
    } else {
      for (;;) {
        if (line.charCodeAt(i) !== QUOTE) return null;
        const ks = i + 1;
        // the key: the expected column, or looked up
        let col = -1;
        if (expected < n) {
          const name = names[expected];
          const ke = ks + name.length;
          if (line.charCodeAt(ke) === QUOTE && line.startsWith(name, ks)) {
            col = expected;
            i = ke + 1;
          }
        }
        if (col < 0) {
          const ke = plainStringEnd(line, ks, len);
          if (ke >= 0) {
            const kl = ke - ks;
            if (kl < 32 ? (lengths & (1 << kl)) !== 0 : longNames) {
              const hit = byName.get(line.slice(ks, ke));
              if (hit !== undefined) col = hit;
            }
            i = ke + 1;
          } else {
            // an escaped key, which may spell a column ("\u0073"): decode it (rare)
            const end = skipString(line, ks, len);
            if (end < 0) return null;
            const hit = byName.get(JSON.parse(line.slice(i, end)) as string);
            if (hit !== undefined) col = hit;
            i = end;
          }
        }
        i = skipWs(line, i);
        if (line.charCodeAt(i) !== COLON) return null;
        i = skipWs(line, i + 1);
        if (col < 0) {
          i = skipValue(line, i, len);
          if (i < 0) return null;
        } else {
          if (seen[col] === gen) return null; // JSON.parse keeps the last one
          seen[col] = gen;
          order[found++] = col;
          expected = col + 1;
          const t = types[col];
          const c = line.charCodeAt(i);
          let v: unknown;
          if (c === QUOTE) {
            const e = plainStringEnd(line, i + 1, len);
            if (e < 0) return null;
            v = fromString(t, line.slice(i + 1, e));
            i = e + 1;
          } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
            const x = scanNumber(line, i);
            if (numEnd < 0) return null;
            v = fromNumber(t, x);
            i = numEnd;
          } else if (c === 110) {
            if (!line.startsWith('null', i)) return null;
            v = null;
            i += 4;
          } else if (c === 116) {
            if (!line.startsWith('true', i)) return null;
            v = fromBoolean(t, true);
            i += 4;
          } else if (c === 102) {
            if (!line.startsWith('false', i)) return null;
            v = fromBoolean(t, false);
            i += 5;
          } else {
            return null; // a nested value for a column, or not JSON
          }
          if (v === BAD) return null;
          vals[col] = v;
        }
        i = skipWs(line, i);
        const d = line.charCodeAt(i);
        if (d === COMMA) {
          i = skipWs(line, i + 1);
          continue;
        }
        if (d === RBRACE) {
          i++;
          break;
        }
        return null;
      }
    }
    if (skipWs(line, i) !== len || found !== n) return null;
    return makeRow(vals);
  }

  /**
   * After tier 2 read a line: makes its shape (the order of its keys, whether it has whitespace)
   * the one tried first, unless the current shape already covers it.
   */
  function learn(spaced: boolean): void {
    if (shape !== null && (shape.spaced || !spaced)) {
      const cur = shape.cols;
      let same = true;
      for (let p = 0; p < n; p++) {
        if (cur[p] !== order[p]) {
          same = false;
          break;
        }
      }
      if (same) return; // the line has the shape but something the expression does not take
    }
    const key = `${order.join(',')}${spaced ? ' spaced' : ''}`;
    let next = shapes.get(key);
    if (next === undefined) {
      if (shapes.size >= MAX_SHAPES) return; // shapes vary too much: tier 2 reads them all
      const pos = Int32Array.from(order);
      const { re, groups } = shapeRegExp(names, types, keep, pos, spaced);
      next = { cols: pos, groups, spaced, re, extract: extractor(pos, groups) };
      shapes.set(key, next);
    }
    shape = next;
    misses = 0;
    resting = 0;
  }

  /** The row of a line by tier 1 or 2, or null for the reference to decide. */
  function fastRow(line: string): Row | null {
    if (shape !== null && line.length <= MAX_SHAPE_LINE) {
      if (resting > 0) resting--;
      else {
        const m = shape.re.exec(line);
        if (m !== null) {
          misses = 0;
          const r = shape.extract(m);
          if (r === null) return null;
          stats.shape++;
          return r;
        }
        // a miss costs about what tier 2 does: when the lines keep missing (values nested
        // deeper, escapes in the schema's values), stop trying for a while
        if (++misses === MAX_MISSES && backoff) {
          misses = 0;
          resting = REST_LINES;
        }
      }
    }
    const r = scan(line);
    if (r === null) return null;
    stats.scan++;
    if (useShapes) learn(wsSeen);
    return r;
  }

  function parseLine(line: string): CoerceResult {
    const row = guardedFastRow(line);
    return row !== null ? { ok: true, row } : guardedReference(line);
  }

  function into(line: string, rows: Row[]): string | null {
    const row = guardedFastRow(line);
    if (row !== null) {
      rows.push(row);
      return null;
    }
    return pushRow(guardedReference(line), rows);
  }

  /** Tiers 1 and 2; a line that makes them throw goes to the reference, which decides. */
  function guardedFastRow(line: string): Row | null {
    try {
      return fastRow(line);
    } catch {
      return null;
    }
  }
  return Object.assign(parseLine, { stats, into });
}

function pushRow(r: CoerceResult, rows: Row[]): string | null {
  if (!r.ok) return r.reason;
  rows.push(r.row);
  return null;
}

/** The parsers of one schema by the columns their rows keep, compiled on first use. */
export class LineParsers {
  private readonly byColumns = new Map<string, LineParser>();
  constructor(private readonly schema: Schema) {}

  /** The parser whose rows keep `columns` (all of the schema's when absent). */
  for(columns?: readonly string[]): LineParser {
    const key = columns === undefined ? '*' : JSON.stringify(columns);
    let p = this.byColumns.get(key);
    if (p === undefined) this.byColumns.set(key, (p = compileLineParser(this.schema, { columns })));
    return p;
  }
}
