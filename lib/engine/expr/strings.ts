/** String functions, with Spark's semantics (characters are code points; positions are 1-based). */
import { checkStringLength } from './value-limits';
import { SparkRowError } from './errors';
import { call, codePoints, def, int, simple, str } from './fn-util';
import type { CallCtx, FunctionDef } from './analyze';
import { strict, type Typed } from './typed';
import { BOOLEAN, INT, isIntegral, STRING, type SqlType } from './types';

/** Spark's substring(str, pos, len): 1-based, a negative pos counts from the end, pos 0 is 1. */
function substringSql(s: string, pos: number, len = 2147483647): string {
  const chars = simple(s) ? null : codePoints(s);
  const n = chars === null ? s.length : chars.length;
  let start = pos > 0 ? pos - 1 : pos < 0 ? n + pos : 0;
  const end = start + len;
  start = Math.max(start, 0);
  if (start >= end) return '';
  return chars === null ? s.slice(start, Math.min(end, n)) : chars.slice(start, Math.min(end, n)).join('');
}

function charLength(s: string): number {
  return simple(s) ? s.length : codePoints(s).length;
}

/** Spark's one-argument trim family removes the space character only (0x20), not tabs or newlines. */
const trimStart = (s: string) => s.replace(/^ +/, '');
const trimEnd = (s: string) => s.replace(/ +$/, '');

/** Removes, from the chosen ends, every character (code point) that is one of `chars` (UTF8String.trim(trimString)). */
function trimChars(s: string, chars: string, direction: 'BOTH' | 'LEADING' | 'TRAILING'): string {
  const set = new Set(codePoints(chars));
  const cs = codePoints(s);
  let a = 0;
  let b = cs.length;
  if (direction !== 'TRAILING') while (a < b && set.has(cs[a])) a++;
  if (direction !== 'LEADING') while (b > a && set.has(cs[b - 1])) b--;
  return cs.slice(a, b).join('');
}

/**
 * trim / ltrim / rtrim (str) remove spaces; with two arguments they are Spark's (trimStr, str), as
 * TRIM([BOTH | LEADING | TRAILING] trimStr FROM str) parses to, and are named as Spark names them.
 */
function trimCall(args: readonly Typed[], c: CallCtx, direction: 'BOTH' | 'LEADING' | 'TRAILING') {
  if (args.length === 1) {
    const f = direction === 'BOTH' ? (s: string) => trimEnd(trimStart(s)) : direction === 'LEADING' ? trimStart : trimEnd;
    return call(
      c,
      STRING,
      [str(c, args[0], 0)],
      strict((s) => f(s as string)),
    );
  }
  const ts = [str(c, args[1], 1), str(c, args[0], 0)];
  const sql = `TRIM(${direction} ${args[0].sql} FROM ${args[1].sql})`;
  const name = `TRIM(${direction} ${args[0].name} FROM ${args[1].name})`;
  return {
    ...call(
      c,
      STRING,
      ts,
      strict((s, t) => trimChars(s as string, t as string, direction)),
    ),
    sql,
    name,
  };
}

function pad(s: string, len: number, p: string, left: boolean): string {
  if (len <= 0) return '';
  checkStringLength(len, left ? 'lpad' : 'rpad');
  const chars = codePoints(s);
  if (chars.length >= len) return chars.slice(0, len).join('');
  const padChars = codePoints(p);
  if (padChars.length === 0) return s;
  const need = len - chars.length;
  const fill: string[] = [];
  for (let i = 0; i < need; i++) fill.push(padChars[i % padChars.length]);
  return left ? fill.join('') + s : s + fill.join('');
}

/** Java's Character.toTitleCase for one UTF-16 unit: the simple mapping (the digraphs have their own title form). */
function titleCaseChar(c: string): string {
  const code = c.charCodeAt(0);
  if (code >= 0x1c4 && code <= 0x1cc) return String.fromCharCode(code - ((code - 0x1c4) % 3) + 1);
  if (code >= 0x1f1 && code <= 0x1f3) return '\u01f2';
  const u = c.toUpperCase();
  return u.length === 1 ? u : c;
}

/** Spark's initcap: the whole string lower-cased, then each character at the start or after a space (only ' ') title-cased. */
function initcap(s: string): string {
  const lower = s.toLowerCase();
  let out = '';
  for (let i = 0; i < lower.length; i++) out += i === 0 || lower[i - 1] === ' ' ? titleCaseChar(lower[i]) : lower[i];
  return out;
}

type ArgKind = 'STRING' | 'INT';
type ArgValue<K> = K extends 'INT' ? number : string;

/**
 * A function of fixed arity over STRING and INT arguments (each cast as Spark's implicit casts do)
 * whose result is `f` of their values, null when any of them is null.
 */
export function stringFn<const K extends readonly ArgKind[]>(
  type: SqlType,
  kinds: K,
  f: (...values: { [I in keyof K]: ArgValue<K[I]> }) => unknown,
): FunctionDef {
  const fn = f as (...values: unknown[]) => unknown;
  return def(kinds.length, kinds.length, (args, c) =>
    call(
      c,
      type,
      args.map((a, i) => (kinds[i] === 'INT' ? int(c, a, i) : str(c, a, i))),
      strict(fn),
    ),
  );
}

/** length, char_length and character_length: the number of code points (Spark's Length). */
const charLengthDef = stringFn(INT, ['STRING'], charLength);
const lowerDef = stringFn(STRING, ['STRING'], (s) => s.toLowerCase());
const upperDef = stringFn(STRING, ['STRING'], (s) => s.toUpperCase());
const substringDef = def(2, 3, (args, c) => substring(args, c));

export const STRING_FUNCTIONS: Record<string, FunctionDef> = {
  lower: lowerDef,
  upper: upperDef,
  lcase: lowerDef,
  ucase: upperDef,
  length: charLengthDef,
  // Spark 3.4's name for length
  len: charLengthDef,
  char_length: charLengthDef,
  trim: def(1, 2, (args, c) => trimCall(args, c, 'BOTH')),
  ltrim: def(1, 2, (args, c) => trimCall(args, c, 'LEADING')),
  rtrim: def(1, 2, (args, c) => trimCall(args, c, 'TRAILING')),
  btrim: def(1, 2, (args, c) => trimCall(args.length === 2 ? [args[1], args[0]] : args, c, 'BOTH')),
  substring: substringDef,
  substr: substringDef,
  left: stringFn(STRING, ['STRING', 'INT'], (s, k) => (k <= 0 ? '' : substringSql(s, 1, k))),
  right: stringFn(STRING, ['STRING', 'INT'], (s, k) => (k <= 0 ? '' : substringSql(s, -k))),
  replace: def(2, 3, (args, c) => {
    const ts = args.map((a, i) => str(c, a, i));
    return call(
      c,
      STRING,
      ts,
      strict((s, from, to = '') => ((from as string) === '' ? s : (s as string).split(from as string).join(to as string))),
    );
  }),
  lpad: def(2, 3, (args, c) => padCall(args, c, true)),
  rpad: def(2, 3, (args, c) => padCall(args, c, false)),
  instr: stringFn(INT, ['STRING', 'STRING'], (s, sub) => {
    const i = s.indexOf(sub);
    return i < 0 ? 0 : charLength(s.slice(0, i)) + 1;
  }),
  locate: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
    return call(c, INT, ts, ([sub, s, p]) => (row) => {
      // Spark's StringLocate: a null start is 0 (not found) before the strings are looked at
      const start = p === undefined ? 1 : p(row);
      if (start == null) return 0;
      const x = sub(row);
      if (x == null) return null;
      const y = s(row);
      if (y == null) return null;
      const from = start as number;
      if (from < 1) return 0;
      // UTF8String.indexOf: the empty string is found at 0 whatever the start
      if ((x as string).length === 0) return 1;
      const chars = codePoints(y as string);
      if (from > chars.length) return 0;
      const rest = chars.slice(from - 1).join('');
      const i = rest.indexOf(x as string);
      return i < 0 ? 0 : from + charLength(rest.slice(0, i));
    });
  }),
  initcap: stringFn(STRING, ['STRING'], initcap),
  // Spark 4.1's quote: in single quotes, each single quote inside preceded by a backslash (backslashes left as they are)
  quote: stringFn(STRING, ['STRING'], (s) => `'${s.replaceAll("'", "\\'")}'`),
  repeat: stringFn(STRING, ['STRING', 'INT'], (s, k) => {
    if (k <= 0) return '';
    checkStringLength(s.length * k, 'repeat');
    return s.repeat(k);
  }),
  space: stringFn(STRING, ['INT'], (k) => {
    if (k <= 0) return '';
    checkStringLength(k, 'space');
    return ' '.repeat(k);
  }),
  startswith: stringFn(BOOLEAN, ['STRING', 'STRING'], (s, p) => s.startsWith(p)),
  endswith: stringFn(BOOLEAN, ['STRING', 'STRING'], (s, p) => s.endsWith(p)),
  contains: stringFn(BOOLEAN, ['STRING', 'STRING'], (s, p) => s.includes(p)),
  ascii: stringFn(INT, ['STRING'], (s) => (s.length === 0 ? 0 : s.codePointAt(0)!)),
  concat_ws: def(1, Number.POSITIVE_INFINITY, (args, c) => {
    const sep = str(c, args[0], 0);
    const rest = args.slice(1).map((a) => (a.type.type === 'ARRAY' ? a : c.az.toStringArg(a, c.sql, c.pos)));
    return call(c, STRING, [sep, ...rest], ([s, ...es]) => (row) => {
      const sv = s(row);
      if (sv == null) return null;
      const parts: string[] = [];
      for (const e of es) {
        const v = e(row);
        if (v == null) continue;
        if (Array.isArray(v)) {
          for (const x of v) if (x != null) parts.push(x as string);
        } else parts.push(v as string);
      }
      return parts.join(sv as string);
    });
  }),
  reverse: def(1, 1, ([a], c) => {
    if (a.type.type === 'ARRAY')
      return call(
        c,
        a.type,
        [a],
        strict((v) => [...(v as unknown[])].reverse()),
      );
    return call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) =>
        codePoints(s as string)
          .reverse()
          .join(''),
      ),
    );
  }),
  substring_index: stringFn(STRING, ['STRING', 'STRING', 'INT'], substringIndex),
  translate: stringFn(STRING, ['STRING', 'STRING', 'STRING'], translate),
  character_length: charLengthDef,
  octet_length: stringFn(INT, ['STRING'], (s) => Buffer.byteLength(s, 'utf8')),
  split_part: stringFn(STRING, ['STRING', 'STRING', 'INT'], splitPart),
  format_number: def(2, 2, ([x, d], c) => {
    // DECIMAL and the integral types are formatted from their exact value, as Java's DecimalFormat of a BigDecimal / long
    const exact = x.type.type === 'DECIMAL' || isIntegral(x.type);
    const n = exact ? x : c.az.implicit(x, { type: 'DOUBLE' }, c.pos, 'argument 1 of format_number');
    const num = (v: unknown) => (typeof v === 'number' && !exact ? v : String(v));
    if (d.type.type === 'STRING') {
      // format_number(x, 'pattern'): a DecimalFormat pattern ('' is Spark's default '#,###,...,##0')
      const fixed = d.constant && typeof d.constant.value === 'string' ? decimalPattern(d.constant.value, c) : null;
      return call(
        c,
        STRING,
        [n, d],
        strict((v, f) => formatNumber(num(v), fixed ?? decimalPattern(f as string, null))),
      );
    }
    return call(
      c,
      STRING,
      [n, int(c, d, 1)],
      strict((v, k) => {
        if ((k as number) < 0) return null;
        checkStringLength(k as number, 'format_number');
        return formatNumber(num(v), { prefix: '', suffix: '', minInt: 1, minFrac: k as number, maxFrac: k as number, group: 3, dot: false, multiplier: 1 });
      }),
    );
  }),
};

/** UTF8String.subStringIndex: the text before the count-th delimiter (from the right when count < 0); searches may overlap. */
function substringIndex(s: string, delim: string, count: number): string {
  if (delim.length === 0 || count === 0) return '';
  if (count > 0) {
    let idx = -1;
    for (let k = count; k > 0; k--) {
      idx = s.indexOf(delim, idx + 1);
      if (idx < 0) return s;
    }
    return s.slice(0, idx);
  }
  let idx = s.length - delim.length + 1;
  for (let k = count; k < 0; k++) {
    idx = idx - 1 < 0 ? -1 : s.lastIndexOf(delim, idx - 1);
    if (idx < 0) return s;
  }
  return s.slice(idx + delim.length);
}

/** Spark's translate: each character of `from` becomes the character of `to` at its place, or is removed past its end; the first mapping of a character wins. */
function translate(s: string, from: string, to: string): string {
  const map = new Map<string, string>();
  const f = codePoints(from);
  const t = codePoints(to);
  f.forEach((ch, i) => {
    if (!map.has(ch)) map.set(ch, i < t.length ? t[i] : '');
  });
  return codePoints(s)
    .map((ch) => map.get(ch) ?? ch)
    .join('');
}

/** split_part(str, delim, n): the n-th part split on the literal delimiter (from the end when n < 0), '' past the parts; n = 0 is INVALID_INDEX_OF_ZERO. */
function splitPart(s: string, delim: string, n: number): string {
  if (n === 0)
    throw new SparkRowError(
      'INVALID_INDEX_OF_ZERO',
      'The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1); count split_part parts from 1',
    );
  const parts = delim.length === 0 ? [s] : s.split(delim);
  const i = n > 0 ? n - 1 : parts.length + n;
  return i >= 0 && i < parts.length ? parts[i] : '';
}

function substring(args: readonly Typed[], c: CallCtx) {
  const ts = [str(c, args[0], 0), int(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
  return call(
    c,
    STRING,
    ts,
    strict((s, p, l) => substringSql(s as string, p as number, l === undefined ? undefined : (l as number))),
  );
}

function padCall(args: readonly Typed[], c: CallCtx, left: boolean) {
  const ts = [str(c, args[0], 0), int(c, args[1], 1), ...(args[2] ? [str(c, args[2], 2)] : [])];
  return call(
    c,
    STRING,
    ts,
    strict((s, n, p = ' ') => pad(s as string, n as number, p as string, left)),
  );
}

/** A DecimalFormat pattern's layout: digits before and after the point, grouping, literal prefix and suffix. */
interface NumberPattern {
  readonly prefix: string;
  readonly suffix: string;
  readonly minInt: number;
  readonly minFrac: number;
  readonly maxFrac: number;
  /** Digits per group (0: no grouping). */
  readonly group: number;
  /** Whether the point is shown even without fraction digits (a pattern such as '#.'). */
  readonly dot: boolean;
  /** 100 for a % in the prefix or suffix, 1000 for a per-mille sign: the value is multiplied before it is formatted. */
  readonly multiplier: number;
}

/**
 * A DecimalFormat pattern (Locale.US) of the form prefix #,##0.00## suffix, where one % (or ‰) in the
 * prefix or suffix multiplies the value by 100 (1000). Patterns with other special characters (¤ E ' ;
 * -), or two of % and ‰ (Java's "too many percent/per mille characters"), are refused (at analysis
 * for a literal, else for the row).
 */
function decimalPattern(pattern: string, c: CallCtx | null): NumberPattern {
  const p = pattern === '' ? '#,###,###,###,###,###,##0' : pattern;
  const m = /^([^#0,.;\u00a4'\-1-9]*)([#,]*[0,]*)(?:(\.)(0*)(#*))?([^#0,.;\u00a4E'\-1-9]*)$/.exec(p);
  const intPart = m?.[2] ?? '';
  const lastComma = intPart.lastIndexOf(',');
  const marks = m === null ? [] : (`${m[1]}${m[6]}`.match(/[%\u2030]/g) ?? []);
  if (m === null || (intPart.replace(/,/g, '') === '' && m[3] === undefined) || (lastComma >= 0 && lastComma === intPart.length - 1) || marks.length > 1) {
    const why = `format_number's pattern '${pattern}' is not one sluice formats: it takes DecimalFormat patterns of the form [prefix]#,##0.00##[suffix] (with at most one % or \u2030, no \u00a4 E ' ; or -); use a number of decimals or such a pattern`;
    if (c !== null) throw c.az.fail('INVALID_PARAMETER_VALUE.PATTERN', why, c.pos);
    throw new SparkRowError('INVALID_PARAMETER_VALUE.PATTERN', why);
  }
  return {
    prefix: m[1],
    suffix: m[6],
    minInt: (intPart.match(/0/g) ?? []).length,
    minFrac: m[4]?.length ?? 0,
    maxFrac: (m[4]?.length ?? 0) + (m[5]?.length ?? 0),
    group: lastComma < 0 ? 0 : intPart.length - lastComma - 1,
    dot: m[3] !== undefined && (m[4] ?? '') === '' && (m[5] ?? '') === '',
    multiplier: marks.length === 0 ? 1 : marks[0] === '%' ? 100 : 1000,
  };
}

/** An exact decimal text times 10^k (k > 0), the point moved right. */
function shiftPoint(text: string, k: number): string {
  const neg = text.startsWith('-');
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.');
  const frac = f.padEnd(k, '0');
  const whole = `${i}${frac.slice(0, k)}`.replace(/^0+(?=\d)/, '');
  const rest = frac.slice(k);
  return `${neg ? '-' : ''}${whole}${rest === '' ? '' : `.${rest}`}`;
}

/**
 * format_number as Java's DecimalFormat in Locale.US: rounded HALF_EVEN to maxFrac decimals on the
 * exact value (a double's binary value, as the JDK does since 8), trailing fraction zeros beyond
 * minFrac dropped, grouped, and the sign kept when x is negative even if it rounds to zero ("-0.00",
 * a DecimalFormat trait). format_number(x, d) is the pattern #,##0.00 with d zeros; null for d < 0.
 */
function formatNumber(value: number | string, f: NumberPattern): string {
  // DecimalFormat multiplies a double in double arithmetic, a BigDecimal or a long exactly
  const v = f.multiplier === 1 ? value : typeof value === 'number' ? value * f.multiplier : shiftPoint(value, f.multiplier === 100 ? 2 : 3);
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : `${v > 0 ? '' : '-'}${f.prefix}\u221e${f.suffix}`;
  const d = f.maxFrac;
  let text = typeof v === 'number' ? plainNumber(v) : v;
  const neg = typeof v === 'number' ? v < 0 || Object.is(v, -0) : text.startsWith('-') && /[1-9]/.test(text);
  if (text.startsWith('-')) text = text.slice(1);
  let [intPart, frac = ''] = text.split('.');
  if (typeof v === 'number' && frac.length > d) [intPart, frac = ''] = exactDouble(Math.abs(v)).split('.');
  let digits = BigInt(intPart + frac.padEnd(d, '0').slice(0, Math.max(d, frac.length)));
  const dropped = frac.length - d;
  if (dropped > 0) {
    const p = 10n ** BigInt(dropped);
    const q = digits / p;
    const r = digits % p;
    digits = r * 2n > p || (r * 2n === p && q % 2n === 1n) ? q + 1n : q;
  }
  const all = digits.toString().padStart(d + 1, '0');
  let ip = all
    .slice(0, all.length - d)
    .replace(/^0+/, '')
    .padStart(f.minInt, '0');
  let fp = all.slice(all.length - d);
  while (fp.length > f.minFrac && fp.endsWith('0')) fp = fp.slice(0, -1);
  if (ip === '' && fp === '') ip = '0';
  if (f.group > 0) ip = ip.replace(new RegExp(`\\B(?=(\\d{${f.group}})+(?!\\d))`, 'g'), ',');
  const point = fp !== '' || f.dot ? `.${fp}` : '';
  return `${neg ? '-' : ''}${f.prefix}${ip}${point}${f.suffix}`;
}

/** The exact decimal value of a finite non-negative double (every binary digit, no exponent). */
function exactDouble(v: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const e = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  const m = e === 0 ? frac : frac | (1n << 52n);
  const exp = (e === 0 ? 1 : e) - 1075;
  if (exp >= 0) return (m << BigInt(exp)).toString();
  const scale = -exp;
  const digits = (m * 5n ** BigInt(scale)).toString().padStart(scale + 1, '0');
  return `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/** A double's shortest text without an exponent. */
function plainNumber(v: number): string {
  const s = String(v);
  if (!/e/i.test(s)) return s;
  const [m, e] = s.split(/e/i);
  const exp = Number(e);
  const neg = m.startsWith('-');
  const [i, f = ''] = (neg ? m.slice(1) : m).split('.');
  const digits = i + f;
  const point = i.length + exp;
  const out =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return neg ? `-${out}` : out;
}
