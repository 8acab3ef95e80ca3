/**
 * A JSON parser that keeps what JSON.parse and lossless-json lose: an object's members in the order
 * written, a key given twice included (`{"a":1,"a":2}`), as Jackson's token stream presents them
 * to Spark. Spark's readers act on each member in turn (JacksonParser converts every occurrence,
 * get_json_object takes the first that matches, json_tuple the last that is not null), so these
 * readers need all of them. Numbers are lossless-json's LosslessNumber (the literal's text).
 * Strict JSON (RFC 8259); throws a SyntaxError otherwise.
 */
import { LosslessNumber } from 'lossless-json';

/** A parsed JSON object: its members in the order written, a repeated key as often as written. */
export class JsonObject {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}

  /** Its members as JSON.parse keeps them: each key at its first place, with its last value. */
  lastValues(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    for (const [k, v] of this.entries) out.set(k, v);
    return out;
  }

  /** The object as JSON.parse builds it (a repeated key keeps its last value), for messages and JSON.stringify. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of this.entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  }
}

/**
 * Whether JSON.parse may list some object of `text` in another order than it is written: a member
 * named like an array index (`"10":`), which a JS object lists first. (Escaped names are missed.)
 */
export function mayReorderMembers(text: string): boolean {
  return INDEX_LIKE_MEMBER.test(text);
}

const INDEX_LIKE_MEMBER = /"(?:0|[1-9][0-9]{0,9})"\s*:/;

/**
 * The words Spark's JSON reader takes as a double where JSON has none: in a string for a DOUBLE
 * column (allowNonNumericNumbers, on by default), and bare, unquoted (Jackson's
 * ALLOW_NON_NUMERIC_NUMBERS, which Spark turns on). Longer spellings first: "-Infinity" before
 * "-INF", for the scan of bare tokens.
 */
export const NON_NUMERIC_TOKENS: ReadonlyArray<readonly [string, number]> = [
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['+Infinity', Infinity],
  ['+INF', Infinity],
  ['-Infinity', -Infinity],
  ['-INF', -Infinity],
];
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * The JSON value of `text` (objects as JsonObject, numbers as LosslessNumber); throws a SyntaxError
 * when it is not JSON. With `nonNumeric`, a bare NON_NUMERIC_TOKENS word is a value too, its double
 * (Jackson's ALLOW_NON_NUMERIC_NUMBERS, which from_json turns on).
 */
export function parseOrdered(text: string, nonNumeric = false): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const ws = (): void => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else return;
    }
  };
  const string = (): string => {
    const start = i;
    i++;
    let escaped = false;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c < 0x20) fail('control character in a string');
      if (c === 92) {
        escaped = true;
        i++;
      }
      i++;
    }
    i++;
    // JSON.parse of the token checks and decodes its escapes
    return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
  };
  const value = (): unknown => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 123) {
      i++;
      const entries: [string, unknown][] = [];
      ws();
      if (text.charCodeAt(i) === 125) {
        i++;
        return new JsonObject(entries);
      }
      for (;;) {
        ws();
        if (text.charCodeAt(i) !== 34) fail('a quoted key expected');
        const key = string();
        ws();
        if (text.charCodeAt(i) !== 58) fail("':' expected");
        i++;
        entries.push([key, value()]);
        ws();
        const d = text.charCodeAt(i++);
        if (d === 125) return new JsonObject(entries);
        if (d !== 44) fail("',' or '}' expected");
      }
    }
    if (c === 91) {
      i++;
      const out: unknown[] = [];
      ws();
      if (text.charCodeAt(i) === 93) {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        const d = text.charCodeAt(i++);
        if (d === 93) return out;
        if (d !== 44) fail("',' or ']' expected");
      }
    }
    if (c === 34) return string();
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    if (nonNumeric) {
      const k = NON_NUMERIC_TOKENS.findIndex(([word]) => text.startsWith(word, i));
      if (k >= 0) {
        i += NON_NUMERIC_TOKENS[k][0].length;
        return NON_NUMERIC_TOKENS[k][1];
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) return fail('a JSON value expected');
    i += m[0].length;
    return new LosslessNumber(m[0]);
  };
  const v = value();
  ws();
  if (i < text.length) fail('end of input expected');
  return v;
}
