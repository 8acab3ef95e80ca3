/**
 * A schema-driven scanner for one JSON-lines record: the fast path of `parseJsonLine`.
 *
 * `compileLineParser(schema)` returns a function that gives exactly what
 * `parseJsonLine(schema, line)` gives for the columns of the schema, without building the
 * fields the schema does not declare. It scans the line once with `charCodeAt`, matches keys
 * against the column names (the next column in schema order is tried first, so records written
 * in schema order never create a key string), types the values in the same way as
 * `coerceRecord`, and skips the values of other keys while still checking that they are valid
 * JSON.
 *
 * Whatever the scanner does not handle itself goes to `parseJsonLine(schema, line)`, so the
 * outcome and the reason of a bad record are always the reference's: a backslash escape in a key
 * or in the value of a column, a key of the schema given twice (JSON.parse keeps the last one), a
 * nested object or array as the value of a column, anything that is not valid JSON (control
 * characters in strings, trailing commas, truncated lines, trailing garbage, a top level that is
 * not an object), and every record the schema rejects (a missing column, a wrong type).
 *
 * Differences from `parseJsonLine`, by design:
 * - the row holds exactly the columns of the schema, in schema order; fields outside the schema
 *   are not on it (`parseJsonLine` leaves them on the row, where they are never used). Rows that
 *   come from the fallback keep them, as `parseJsonLine` does;
 * - string values are slices of the line, so (as V8 shares the characters of slices of 13
 *   characters or more) a row that is kept can keep its line, or the text the line was sliced
 *   from, alive.
 *
 * The returned function is synchronous: it keeps scratch state per parser between calls, but is
 * done with it when it returns.
 */
import type { Row } from './ports';
import { parseJsonLine, parseTimestamp, type CoerceResult, type Schema } from './schema';

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

function skipWs(s: string, i: number): number {
  let c = s.charCodeAt(i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++i);
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

function rowFactory(names: readonly string[]): (vals: unknown[]) => Row {
  // An object literal gives every row the same shape at once; the loop is for runtimes that
  // refuse code generation from strings.
  try {
    const body = `return {${names.map((n, i) => `${JSON.stringify(n)}: v[${i}]`).join(', ')}};`;
    const f = new Function('v', body) as (vals: unknown[]) => Row;
    const probe = f(names.map((_, i) => i));
    if (names.every((n, i) => Object.prototype.hasOwnProperty.call(probe, n) && probe[n] === i) && Object.keys(probe).length === names.length) return f;
  } catch {
    // fall through
  }
  return (vals) => {
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i]] = vals[i];
    return row;
  };
}

/**
 * Compiles the scanner of one schema. The result behaves as `(line) => parseJsonLine(schema,
 * line)` except that rows carry only the schema's columns (see the file comment).
 */
export function compileLineParser(schema: Schema): (line: string) => CoerceResult {
  const cols = schema.columns;
  const n = cols.length;
  const names = cols.map((c) => c.name);
  const types = cols.map((c) => TYPE_CODES[c.type]);
  const reference = (line: string): CoerceResult => parseJsonLine(schema, line);
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
  if (n === 0 || unsafe || new Set(names).size !== n || types.some((t) => t === undefined)) return reference;

  const byName = new Map<string, number>(names.map((name, i) => [name, i]));
  let lengths = 0; // bit k set: some name has length k (lengths up to 31)
  let longNames = false;
  for (const name of names) {
    if (name.length < 32) lengths |= 1 << name.length;
    else longNames = true;
  }
  const makeRow = rowFactory(names);
  const vals: unknown[] = new Array(n).fill(null);
  const seen = new Uint32Array(n);
  let gen = 0;

  return function parseLine(line: string): CoerceResult {
    const len = line.length;
    if (++gen === 0xffffffff) {
      seen.fill(0);
      gen = 1;
    }
    let i = skipWs(line, 0);
    if (line.charCodeAt(i) !== LBRACE) return reference(line);
    i = skipWs(line, i + 1);
    let found = 0;
    let expected = 0;
    if (line.charCodeAt(i) === RBRACE) {
      i++;
    } else {
      for (;;) {
        if (line.charCodeAt(i) !== QUOTE) return reference(line);
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
          if (ke < 0) return reference(line); // an escaped or invalid key
          const kl = ke - ks;
          if (kl < 32 ? (lengths & (1 << kl)) !== 0 : longNames) {
            const hit = byName.get(line.slice(ks, ke));
            if (hit !== undefined) col = hit;
          }
          i = ke + 1;
        }
        i = skipWs(line, i);
        if (line.charCodeAt(i) !== COLON) return reference(line);
        i = skipWs(line, i + 1);
        const c = line.charCodeAt(i);
        if (col < 0) {
          i = skipValue(line, i, len);
          if (i < 0) return reference(line);
        } else {
          if (seen[col] === gen) return reference(line); // JSON.parse keeps the last one
          seen[col] = gen;
          found++;
          expected = col + 1;
          const t = types[col];
          if (c === QUOTE) {
            const e = plainStringEnd(line, i + 1, len);
            if (e < 0) return reference(line);
            const text = line.slice(i + 1, e);
            i = e + 1;
            if (t === T_STRING) vals[col] = text;
            else if (t === T_TIMESTAMP) {
              const ms = parseTimestamp(text);
              if (ms === null) return reference(line);
              vals[col] = ms;
            } else if (t === T_DOUBLE) {
              if (text === 'NaN') vals[col] = NaN;
              else if (text === 'Infinity' || text === '+Infinity') vals[col] = Infinity;
              else if (text === '-Infinity') vals[col] = -Infinity;
              else return reference(line);
            } else return reference(line);
          } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
            const v = scanNumber(line, i);
            if (numEnd < 0) return reference(line);
            i = numEnd;
            switch (t) {
              case T_DOUBLE:
                vals[col] = v;
                break;
              case T_TIMESTAMP:
                if (!Number.isFinite(v)) return reference(line);
                vals[col] = v * 1000; // epoch seconds, as Spark reads numbers
                break;
              case T_LONG:
                if (!Number.isInteger(v)) return reference(line);
                vals[col] = v;
                break;
              case T_INT:
                if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) return reference(line);
                vals[col] = v;
                break;
              case T_STRING:
                vals[col] = JSON.stringify(v); // Spark keeps the JSON text of a non-string token
                break;
              default:
                return reference(line);
            }
          } else if (c === 110) {
            if (!line.startsWith('null', i)) return reference(line);
            i += 4;
            vals[col] = null;
          } else if (c === 116 || c === 102) {
            const b = c === 116;
            const word = b ? 'true' : 'false';
            if (!line.startsWith(word, i)) return reference(line);
            i += word.length;
            if (t === T_BOOLEAN) vals[col] = b;
            else if (t === T_STRING) vals[col] = word;
            else return reference(line);
          } else {
            return reference(line); // a nested value for a column, or not JSON
          }
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
        return reference(line);
      }
    }
    if (skipWs(line, i) !== len || found !== n) return reference(line);
    return { ok: true, row: makeRow(vals) };
  };
}
