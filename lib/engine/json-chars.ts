/**
 * The character-level reading of the line parser (json-scan.ts): tier 2, the charCodeAt scan of a
 * line (lineScanner), with the JSON it reads and skips (numbers as JSON.parse reads them, strings,
 * whole values of fields outside the schema) and the values a token gives in a column of the
 * schema's type; and tier 1's reader of plain timestamps. One module, so that the per-character
 * code calls its helpers and reads its scratch state (numEnd, wsSeen) within it.
 */
import type { Row } from './ports';
import { type Column, exactLong } from './schema';
import { nonFiniteDouble } from './json-record';
import { epochSecondsMicros, parseTimestamp, safeHourMicros } from './timestamps';
import { inputTimestamp } from './timestamp-input';
import { binary32OfNumber } from './binary32';

export const T_STRING = 0;
const T_INT = 1;
const T_LONG = 2;
const T_DOUBLE = 3;
const T_BOOLEAN = 4;
export const T_TIMESTAMP = 5;
/** The narrower INTs (a Column's bits), range-checked to their width. */
const T_TINYINT = 6;
const T_SMALLINT = 7;
/** A DOUBLE column declared FLOAT: binary32 (a Column's binary32). */
const T_FLOAT = 8;

const TYPE_CODES: Record<string, number> = { STRING: T_STRING, INT: T_INT, LONG: T_LONG, DOUBLE: T_DOUBLE, BOOLEAN: T_BOOLEAN, TIMESTAMP: T_TIMESTAMP };

/** The type code of a column: TYPE_CODES of its type, or the code of its width for a narrower INT. */
export function typeCode(col: Column): number {
  return col.bits === 8 ? T_TINYINT : col.bits === 16 ? T_SMALLINT : col.binary32 ? T_FLOAT : TYPE_CODES[col.type];
}

/** Exact powers of ten: a mantissa below 2^53 times or divided by one of them rounds once. */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** Deepest nesting skipped in a field outside the schema; deeper records take the fallback. */
const MAX_DEPTH = 64;

// Character codes.
export const QUOTE = 34;
export const BACKSLASH = 92;
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

/**
 * Whether the last scanned number had a fraction or an exponent: Jackson's VALUE_NUMBER_FLOAT,
 * which Spark's JSON reader takes for no integral type and no TIMESTAMP (1.0 is not an INT).
 */
let numFloat = false;

/** Whether skipWs has skipped any whitespace since it was last reset. */
let wsSeen = false;

/** wsSeen: after a lineScanner's scan, whether the line had whitespace. */
export function sawWhitespace(): boolean {
  return wsSeen;
}

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
  numFloat = false;
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
    numFloat = true;
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
    numFloat = true;
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

/** Returned by the conversions when the value does not fit the column: the reference decides. */
export const BAD: unique symbol = Symbol('bad');

/** The value of a JSON string (without escapes) in a column of type t, as coerceRecord gives it. */
export function fromString(t: number, text: string): unknown {
  switch (t) {
    case T_STRING:
      return text;
    case T_TIMESTAMP: {
      const us = inputTimestamp(text);
      return us === null ? BAD : us;
    }
    case T_DOUBLE:
    case T_FLOAT: {
      const d = nonFiniteDouble(text);
      return d === null ? BAD : d;
    }
    default:
      return BAD;
  }
}

/**
 * The exact value of the number token s[from, to) in a LONG column that is not a safe integer as a
 * double: a bigint for an integer literal within BIGINT's 64 bits, else BAD (the reference gives
 * the reason). Read from the text, never through the double.
 */
function longFromText(s: string, from: number, to: number): unknown {
  const text = s.slice(from, to);
  return exactLong(text) ?? BAD;
}

/**
 * The value of the JSON number just scanned (numFloat says its form), which starts at s[from] and
 * ends at numEnd, in a column of type t other than STRING (which keeps the token's text), as
 * coerceRecord gives it: an integral type or a TIMESTAMP only from an integer literal, as Spark's
 * reader (VALUE_NUMBER_INT). Jackson reads an integer literal as an int or a long first, so -0
 * is 0 in a DOUBLE or a FLOAT too (-0.0 and -0e0 stay -0); a FLOAT is the text rounded once to a
 * binary32 (binary32.ts), not the double rounded again.
 */
function fromNumber(t: number, v: number, s: string, from: number): unknown {
  switch (t) {
    case T_DOUBLE:
      return numFloat ? v : v + 0;
    case T_FLOAT:
      return binary32OfNumber(numFloat ? v : v + 0, s, from, numEnd); // binary32, as Spark's FloatType
    case T_TIMESTAMP:
      return numFloat ? BAD : (epochSecondsMicros(v) ?? BAD); // epoch seconds, as Spark reads numbers (as µs)
    // (v + 0: -0 is 0, an integer has no negative zero)
    case T_LONG:
      return !numFloat && Number.isSafeInteger(v) ? v + 0 : BAD;
    case T_INT:
      return !numFloat && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? v + 0 : BAD;
    case T_SMALLINT:
      return !numFloat && Number.isInteger(v) && v >= -32768 && v <= 32767 ? v + 0 : BAD;
    case T_TINYINT:
      return !numFloat && Number.isInteger(v) && v >= -128 && v <= 127 ? v + 0 : BAD;
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
export function fromToken(t: number, tok: string): unknown {
  const c = tok.charCodeAt(0);
  if (c === 110) return null;
  if (c === 116) return fromBoolean(t, true);
  if (c === 102) return fromBoolean(t, false);
  if (t === T_STRING) return tok; // the token as written (Spark 4's exact string parsing)
  const x = scanNumber(tok, 0);
  return t === T_LONG && !Number.isSafeInteger(x) ? longFromText(tok, 0, tok.length) : fromNumber(t, x, tok, 0);
}

/** µs = fraction digits × FRACTION_SCALE[their count] (1 to 6). */
const FRACTION_SCALE = [1, 100_000, 10_000, 1000, 100, 10, 1];

/** The plain-timestamp reader of tier 1 of a line parser (json-scan.ts), with its own hour cache. */
export function plainTimestampReader(): (text: string) => unknown {
  /**
   * The hour of the last plain timestamp, as the number YYYYMMDDHH, and its epoch µs; and the hour
   * before that one: around the turn of an hour, late events of the previous hour interleave with
   * the new hour's. -1: none yet. Only an hour whose every µs is a safe integer is cached (years
   * 1685 to 2255): the others take the reference path, whose bigint form is exact.
   */
  let hourKey = -1;
  let hourUs = 0;
  let prevHourKey = -1;
  let prevHourUs = 0;

  /**
   * parseTimestamp(text) for text "YYYY-MM-DD HH:MM:SS[.f{1,6}]" (or with T), which the shape's
   * expression matched (so the places read below hold digits): what its plain path computes, with
   * the hour parsed once for the lines of that hour. The hour is compared as a number made of its
   * digits, not as text (startsWith on the captured string costs twice as much).
   */
  function plainTimestamp(text: string): unknown {
    const year = text.charCodeAt(0) * 1000 + text.charCodeAt(1) * 100 + text.charCodeAt(2) * 10 + text.charCodeAt(3) - ZERO * 1111;
    const monthDay = (text.charCodeAt(5) * 10 + text.charCodeAt(6) - ZERO * 11) * 100 + text.charCodeAt(8) * 10 + text.charCodeAt(9) - ZERO * 11;
    const key = (year * 10_000 + monthDay) * 100 + text.charCodeAt(11) * 10 + text.charCodeAt(12) - ZERO * 11;
    if (key !== hourKey) {
      let us: number | null;
      if (key === prevHourKey) us = prevHourUs;
      else {
        const ms = parseTimestamp(`${text.slice(0, 13)}:00:00`);
        us = typeof ms === 'number' ? safeHourMicros(ms / 1000) : null;
        if (us === null) return fromString(T_TIMESTAMP, text);
      }
      prevHourKey = hourKey;
      prevHourUs = hourUs;
      hourKey = key;
      hourUs = us;
    }
    const minute = (text.charCodeAt(14) - ZERO) * 10 + (text.charCodeAt(15) - ZERO);
    const second = (text.charCodeAt(17) - ZERO) * 10 + (text.charCodeAt(18) - ZERO);
    if (minute > 59 || second > 59) return fromString(T_TIMESTAMP, text);
    let frac = 0;
    const len = text.length;
    if (len === 23) {
      // milliseconds, the common case: unrolled
      frac = ((text.charCodeAt(20) - ZERO) * 100 + (text.charCodeAt(21) - ZERO) * 10 + (text.charCodeAt(22) - ZERO)) * 1000;
    } else if (len > 20) {
      for (let i = 20; i < len; i++) frac = frac * 10 + (text.charCodeAt(i) - ZERO);
      frac *= FRACTION_SCALE[len - 20];
    }
    return hourUs + minute * 60_000_000 + second * 1_000_000 + frac;
  }
  return plainTimestamp;
}

/**
 * Tier 2 of a line parser (json-scan.ts): the scan of a line for the columns `names` (type codes
 * `types`), which puts their values in `vals` and the order it met them in in `order`, and
 * returns `makeRow(vals)`, or null for the reference to decide. sawWhitespace() then says
 * whether the line had whitespace.
 */
export function lineScanner(
  names: readonly string[],
  types: readonly number[],
  vals: unknown[],
  order: Int32Array,
  makeRow: (vals: unknown[]) => Row,
): (line: string) => Row | null {
  const n = names.length;
  const byName = new Map<string, number>(names.map((name, i) => [name, i]));
  let lengths = 0; // bit k set: some name has length k (lengths up to 31)
  let longNames = false;
  for (const name of names) {
    if (name.length < 32) lengths |= 1 << name.length;
    else longNames = true;
  }
  const seen = new Uint32Array(n);
  let gen = 0;

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
            // a STRING keeps the token as written (Spark 4's exact string parsing)
            v = t === T_STRING ? line.slice(i, numEnd) : t === T_LONG && !Number.isSafeInteger(x) ? longFromText(line, i, numEnd) : fromNumber(t, x, line, i);
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
  return scan;
}
