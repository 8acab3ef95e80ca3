/**
 * More of Spark's string and conversion functions (stringExpressions.scala, urlExpressions.scala,
 * mathExpressions.scala' hex and bin, nullExpressions.scala): URL encoding as java.net.URLEncoder
 * and URLDecoder do it, soundex and levenshtein as UTF8String computes them, elt, find_in_set,
 * chr, base64 of a string's UTF-8 bytes, hex and bin of a BIGINT's 64 bits or a string's bytes,
 * typeof (Spark's simpleString of the type), equal_null, zeroifnull and nullifzero; parse_url and
 * try_parse_url over java.net.URI's parse (java-uri.ts).
 */
import { hiveTypeOf } from '../ddl';
import type { DataType } from '../schema';
import type { CallCtx, FunctionDef } from './analyze';
import { implicitCast } from './analyze';
import { nullOnRowError, SparkRowError } from './errors';
import { call, def, int, str } from './fn-util';
import { type JavaUri, parseJavaUri, UriSyntaxError } from './java-uri';
import { intervalTypeName } from './interval-text';
import { javaRegex } from './patterns';
import { stringFn } from './strings';
import { strict, type Typed } from './typed';
import { BOOLEAN, commonType, INT, isNumeric, LONG, STRING, type SqlType, typeName } from './types';

/** java.net.URLEncoder.encode(s, UTF-8): letters, digits and `.-*_` as they are, a space as `+`, every other byte `%XX`. */
function urlEncode(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    if ((b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 46 || b === 45 || b === 42 || b === 95) out += String.fromCharCode(b);
    else if (b === 32) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** java.net.URLDecoder.decode(s, UTF-8): `+` is a space, `%XX` a byte; a `%` without two hex digits is Spark's CANNOT_DECODE_URL. */
function urlDecode(s: string): string {
  if (!s.includes('%') && !s.includes('+')) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const ch = s[i];
    if (ch === '+') {
      out += ' ';
      i++;
    } else if (ch === '%') {
      const bytes: number[] = [];
      while (i < s.length && s[i] === '%') {
        const hex = s.slice(i + 1, i + 3);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
          throw new SparkRowError(
            'CANNOT_DECODE_URL',
            `The provided URL cannot be decoded: ${s}. Please ensure that the URL is properly formatted and try again (at index ${i}: "%" must be followed by two hex digits; use try_url_decode to get NULL instead)`,
          );
        }
        bytes.push(Number.parseInt(hex, 16));
        i += 3;
      }
      out += Buffer.from(bytes).toString('utf8');
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** UTF8String.soundex: American soundex over the bytes; text not starting with a letter comes back as it is. */
const SOUNDEX = '01230127022455012623017202';
function soundex(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length === 0) return '';
  const upper = (b: number) => (b >= 97 && b <= 122 ? b - 32 : b);
  const first = upper(bytes[0]);
  if (first < 65 || first > 90) return s;
  const sx = [String.fromCharCode(first), '0', '0', '0'];
  let n = 1;
  let last = SOUNDEX[first - 65];
  for (let i = 1; i < bytes.length; i++) {
    const b = upper(bytes[i]);
    if (b < 65 || b > 90) {
      last = '0';
      continue;
    }
    const code = SOUNDEX[b - 65];
    if (code === '7') continue;
    if (code !== '0' && code !== last) {
      sx[n++] = code;
      if (n > 3) break;
    }
    last = code;
  }
  return sx.join('');
}

/** The edit distance between two strings' code points (UTF8String.levenshteinDistance). */
function levenshtein(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  if (x.length === 0) return y.length;
  if (y.length === 0) return x.length;
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[y.length];
}

/** Spark's DataType.simpleString: `int`, `decimal(10,2)`, `array<int>`, `map<string,int>`, `struct<a:int>` (Hive's DDL, and `void`). */
function simpleString(t: SqlType): string {
  switch (t.type) {
    case 'NULL':
      return 'void';
    case 'INTERVAL':
      return intervalTypeName(t).toLowerCase();
    case 'ARRAY':
      return `array<${simpleString(t.element!)}>`;
    case 'MAP':
      return `map<${simpleString(t.key ?? STRING)},${simpleString(t.value!)}>`;
    case 'STRUCT':
      return `struct<${t.fields!.map((f) => `${f.name}:${simpleString(f)}`).join(',')}>`;
    default:
      return hiveTypeOf(t as DataType);
  }
}

/** A BIGINT argument's 64 bits, or a STRING's UTF-8 bytes, for hex and bin. */
function integralOrString(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type === 'STRING') return a;
  if (a.type.type === 'NULL' || (isNumeric(a.type) && a.type.type !== 'DOUBLE' && a.type.type !== 'DECIMAL')) return implicitCast(a, LONG);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `argument ${i + 1} of ${c.name} requires ("BIGINT" or "STRING") type, however ${a.sql} has the type "${typeName(a.type)}"`,
    c.pos,
  );
}

const bits64 = (v: unknown) => BigInt.asUintN(64, BigInt(v as number | bigint));

/**
 * zeroifnull(x) is Spark's coalesce(x, 0), of their common type (a DECIMAL(10,2) widens to
 * DECIMAL(12,2)); nullifzero(x) is if(x = 0, NULL, x), of x's type.
 */
function zeroOrNull(kind: 'zeroifnull' | 'nullifzero'): FunctionDef {
  return def(1, 1, ([a], c) => {
    const t = kind === 'zeroifnull' ? commonType([a.type, INT]) : a.type.type === 'NULL' ? INT : a.type;
    if (t === null || !isNumeric(t)) {
      throw c.az.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        c.sql,
        `argument 1 of ${c.name} requires a numeric type, however ${a.sql} has the type "${typeName(a.type)}"`,
        c.pos,
      );
    }
    const x = implicitCast(a, t);
    const zero = t.type === 'DECIMAL' ? (v: unknown) => /^-?0(\.0*)?$/.test(v as string) : (v: unknown) => v === 0 || v === 0n;
    const zeroValue = t.type === 'DECIMAL' ? (t.scale! > 0 ? `0.${'0'.repeat(t.scale!)}` : '0') : 0;
    return call(c, t, [x], ([ev]) => (row) => {
      const v = ev(row);
      if (kind === 'zeroifnull') return v ?? zeroValue;
      return v == null || zero(v) ? null : v;
    });
  });
}

/** The part parse_url names, read from a parsed URI (Spark's ParseUrlEvaluator: the raw parts, as java.net.URI gives them). */
const URL_PARTS: Record<string, (u: JavaUri) => string | null> = {
  HOST: (u) => u.host,
  PATH: (u) => u.path,
  QUERY: (u) => u.query,
  REF: (u) => u.fragment,
  PROTOCOL: (u) => u.scheme,
  FILE: (u) => (u.query !== null ? `${u.path}?${u.query}` : u.path),
  AUTHORITY: (u) => u.authority,
  USERINFO: (u) => u.userInfo,
};

/**
 * parse_url(url, part[, key]) as Spark's ParseUrl: the part of the URL as java.net.URI parses it
 * (java-uri.ts), NULL for a part it does not name (they are upper case: 'host' is not one), and with
 * a key, for part 'QUERY' only, the value of the first `key=value` of the query. Spark builds that
 * lookup as the Java regular expression `(&|^)` + key + `=([^&]*)` and takes group 2, so the key is
 * a pattern, not quoted. A URL java.net.URI refuses raises INVALID_URL (ANSI); try_parse_url gives NULL.
 */
function parseUrl(tolerant: boolean): FunctionDef {
  return def(2, 3, (args, c) => {
    const inputs = args.map((a, i) => str(c, a, i));
    return call(
      c,
      STRING,
      inputs,
      strict((url, part, key) => {
        if (key !== undefined && part !== 'QUERY') return null;
        const extract = URL_PARTS[part as string];
        if (extract === undefined) return null;
        let uri: JavaUri;
        try {
          uri = parseJavaUri(url as string);
        } catch (e) {
          if (!(e instanceof UriSyntaxError)) throw e;
          if (tolerant) return null;
          throw new SparkRowError(
            'INVALID_URL',
            `The url is invalid: ${url as string}. Use \`try_parse_url\` to tolerate invalid URL and return NULL instead. (${e.message})`,
          );
        }
        const value = extract(uri);
        if (key === undefined || value === null) return value;
        const m = javaRegex(`(&|^)${key as string}=([^&]*)`, null, c.pos).exec(value);
        return m === null ? null : (m[2] ?? null);
      }),
    );
  });
}

export const TEXT_FUNCTIONS: Record<string, FunctionDef> = {
  parse_url: parseUrl(false),
  try_parse_url: parseUrl(true),
  url_encode: stringFn(STRING, ['STRING'], urlEncode),
  url_decode: stringFn(STRING, ['STRING'], urlDecode),
  try_url_decode: stringFn(STRING, ['STRING'], nullOnRowError(urlDecode) as (s: string) => string | null),
  soundex: stringFn(STRING, ['STRING'], soundex),
  levenshtein: def(2, 3, (args, c) => {
    const as = [str(c, args[0], 0), str(c, args[1], 1), ...(args.length === 3 ? [int(c, args[2], 2)] : [])];
    return call(
      c,
      INT,
      as,
      strict((a, b, limit) => {
        const d = levenshtein(a as string, b as string);
        return limit !== undefined && d > (limit as number) ? -1 : d;
      }),
    );
  }),
  elt: def(2, Number.POSITIVE_INFINITY, (args, c) => {
    const [n, ...rest] = args;
    const inputs = rest.map((a, i) => str(c, a, i + 1));
    return call(c, STRING, [int(c, n, 0), ...inputs], (evs) => (row) => {
      const i = evs[0](row) as number | null;
      if (i == null) return null;
      if (i < 1 || i > inputs.length) {
        throw new SparkRowError(
          'INVALID_ARRAY_INDEX',
          `The index ${i} is out of bounds. The array has ${inputs.length} elements. Use the SQL function \`get()\` to tolerate accessing element at invalid index and return NULL instead.`,
        );
      }
      return evs[i](row) ?? null;
    });
  }),
  find_in_set: stringFn(INT, ['STRING', 'STRING'], (s, list) => (s.includes(',') ? 0 : list.split(',').indexOf(s) + 1)),
  chr: chr(),
  char: chr(),
  base64: stringFn(STRING, ['STRING'], (s) => Buffer.from(s, 'utf8').toString('base64')),
  hex: def(1, 1, ([a], c) => {
    const x = integralOrString(c, a, 0);
    return call(
      c,
      STRING,
      [x],
      strict((v) => (typeof v === 'string' ? Buffer.from(v, 'utf8').toString('hex').toUpperCase() : bits64(v).toString(16).toUpperCase())),
    );
  }),
  bin: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [c.az.implicit(a, LONG, c.pos, 'argument 1 of bin')],
      strict((v) => bits64(v).toString(2)),
    ),
  ),
  typeof: def(1, 1, ([a], c) => {
    const text = simpleString(a.type);
    return call(c, STRING, [a], () => () => text);
  }),
  equal_null: def(2, 2, ([a, b], c) => ({ ...c.az.binary('<=>', a, b, c.pos), sql: c.sql, name: c.sql, type: BOOLEAN })),
  zeroifnull: zeroOrNull('zeroifnull'),
  nullifzero: zeroOrNull('nullifzero'),
};

/** chr(n) / char(n): the character of n mod 256, empty for a negative n (Spark's Chr). */
function chr(): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [c.az.implicit(a, LONG, c.pos, `argument 1 of ${c.name}`)],
      strict((v) => {
        const n = BigInt(v as number | bigint);
        return n < 0n ? '' : String.fromCharCode(Number(n & 255n));
      }),
    ),
  );
}
