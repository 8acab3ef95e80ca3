/**
 * format_string(fmt, args...) and its alias printf: Spark's FormatString, which hands the format and
 * the arguments' Catalyst values to java.util.Formatter (Locale.US). This module follows the JDK's
 * Formatter (JDK 17+, which Spark 4 runs on): its specifier syntax
 * `%[index$][flags][width][.precision]conversion`, its checks of flags against conversions and its
 * exceptions, its ordinary, explicit (`2$`) and relative (`<`) argument indexes, and its output.
 *
 * The arguments are what Spark passes: a STRING is a UTF8String (its text; its hashCode is Murmur3
 * of its UTF-8 bytes, seed 42), TINYINT/SMALLINT/INT a Byte/Short/Integer, BIGINT a Long, FLOAT and
 * DOUBLE a Float/Double, BOOLEAN a Boolean, a DATE the Integer of its day since 1970-01-01, a
 * TIMESTAMP the Long of its microseconds, and a DECIMAL Spark's own Decimal class: `%s` prints it
 * as java.math.BigDecimal's toString, but `%e %f %g` (which take only Float, Double and
 * BigDecimal) refuse it, as Spark 4 does. A double under `%e %f %g` is rounded HALF_UP from its
 * shortest decimal digits (FormattedFloatingDecimal), so `%.2f` of 1.005 is 1.01.
 *
 * Java's exceptions are INVALID_PARAMETER_VALUE.PATTERN errors naming the exception: when the
 * format is a literal, raised at analysis (sluice knows the argument types), else as the row's
 * error. A literal containing `%0$` is Spark's INVALID_PARAMETER_VALUE.ZERO_INDEX. Not done
 * (UNSUPPORTED_FEATURE): `%t`/`%T` (they read a Long as epoch milliseconds in the JVM's zone), `%a`,
 * `%h` of a DECIMAL, and ARRAY, MAP or STRUCT arguments (Spark prints an object reference).
 */
import { MAX_BUILT_LENGTH } from './value-limits';
import { epochDayOf } from '../dates';
import type { CallCtx, FunctionDef } from './analyze';
import { SparkRowError } from './errors';
import { call, def, str } from './fn-util';
import type { Typed } from './typed';
import { STRING, type SqlType, typeName } from './types';
import { javaDoubleText } from './values';
import { javaDecimalText } from '../decimal';

/** One `%...` specifier, as Java's FormatSpecifier holds it. */
interface Spec {
  /** The conversion in lower case: b s h c d o x e f g a n % (t: a date/time conversion). */
  readonly conv: string;
  readonly upper: boolean;
  /** The flags given, of `-#+ 0,(<`. */
  readonly flags: string;
  /** 0 ordinary, -1 the previous argument (`<`), k > 0 the k-th (`k$`), -2 none (`%n`, `%%`). */
  readonly index: number;
  readonly width: number;
  readonly precision: number;
  /** The specifier as the format has it. */
  readonly text: string;
}

/** A Formatter exception or a sluice refusal, before it is given the format and the function. */
class FormatError extends Error {
  constructor(
    readonly errorClass: string,
    message: string,
  ) {
    super(message);
  }
}

const javaError = (exception: string, detail: string, why: string) =>
  new FormatError('INVALID_PARAMETER_VALUE.PATTERN', `java.util.${exception}: ${detail} (${why})`);
const unsupported = (why: string) => new FormatError('UNSUPPORTED_FEATURE', why);

const has = (s: Spec, flag: string) => s.flags.includes(flag);

/** Java's Flags.toString: the flags in its order, `^` for an upper-case conversion. */
function flagText(s: Spec): string {
  return [...'-^#+ 0,(<'].filter((f) => (f === '^' ? s.upper : has(s, f))).join('');
}

/** Java's FormatSpecifier.toString, which its messages quote: flags, then index, width, precision. */
function specText(s: Spec): string {
  const flags = flagText({ ...s, upper: false });
  const index = s.index > 0 ? `${s.index}$` : '';
  const width = s.width >= 0 ? String(s.width) : '';
  const precision = s.precision >= 0 ? `.${s.precision}` : '';
  return `%${flags}${index}${width}${precision}${s.upper ? s.conv.toUpperCase() : s.conv}`;
}

const SPECIFIER = /%(\d+\$)?([-#+ 0,(<]*)?(\d+)?(\.\d+)?([tT])?([a-zA-Z%])/y;
const CONVERSIONS = 'bBhHsScCdoxXeEfgGaAn%';
const INT_MAX = 2147483647;

const unknownConversion = (c: string) =>
  javaError(
    'UnknownFormatConversionException',
    `Conversion = '${c}'`,
    `a specifier is %[index$][flags][width][.precision]conversion with a conversion of ${CONVERSIONS.split('').join(' ')}; write a literal percent sign as %%`,
  );

/** The format's fixed texts and specifiers (Formatter.parse), each specifier checked as Java checks it. */
function parse(format: string): (string | Spec)[] {
  const out: (string | Spec)[] = [];
  let i = 0;
  while (i < format.length) {
    const n = format.indexOf('%', i);
    if (n < 0) {
      out.push(format.slice(i));
      break;
    }
    if (n > i) out.push(format.slice(i, n));
    if (n + 1 >= format.length) throw unknownConversion('%');
    SPECIFIER.lastIndex = n;
    const m = SPECIFIER.exec(format);
    if (m === null) throw unknownConversion(format[n + 1]);
    out.push(specifier(m));
    i = SPECIFIER.lastIndex;
  }
  return out;
}

function specifier(m: RegExpExecArray): Spec {
  const [src, index, flags = '', width, precision, dt, conversion] = m;
  let ix = 0;
  if (index !== undefined) {
    ix = Number(index.slice(0, -1));
    if (ix <= 0 || ix > INT_MAX) {
      throw javaError(
        'IllegalFormatArgumentIndexException',
        ix > INT_MAX ? 'Format argument index: (not representable as int)' : `Illegal format argument index = ${ix}`,
        'arguments are numbered from 1$',
      );
    }
  }
  for (let k = 0; k < flags.length; k++) {
    if (flags.indexOf(flags[k]) !== k) {
      throw javaError('DuplicateFormatFlagsException', `Flags = '${flags[k]}'`, `the flag '${flags[k]}' is given twice in ${src}; give it once`);
    }
  }
  if (flags.includes('<')) ix = -1;
  const w = width === undefined ? -1 : Number(width);
  if (w > INT_MAX) throw javaError('IllegalFormatWidthException', String(-INT_MAX - 1), `the width of ${src} is past 2147483647`);
  const p = precision === undefined ? -1 : Number(precision.slice(1));
  if (p > INT_MAX) throw javaError('IllegalFormatPrecisionException', String(-INT_MAX - 1), `the precision of ${src} is past 2147483647`);
  if (w > MAX_BUILT_LENGTH || p > MAX_BUILT_LENGTH) {
    // (Java would try to build it; a Node.js process dies of it: value-limits.ts)
    throw new FormatError(
      'STRING_SIZE_LIMIT_EXCEEDED',
      `the ${w > MAX_BUILT_LENGTH ? 'width' : 'precision'} of ${src} is past ${MAX_BUILT_LENGTH}, the most characters sluice builds for one value: use a smaller one`,
    );
  }
  if (dt !== undefined) {
    throw unsupported(
      `the date/time conversion ${src} is not supported by sluice (Spark hands it a DATE as a day count and a TIMESTAMP as microseconds, which Java reads as epoch milliseconds in the JVM's zone); format date_format(ts, pattern) with %s instead`,
    );
  }
  if (!CONVERSIONS.includes(conversion)) throw unknownConversion(conversion);
  const conv = conversion.toLowerCase();
  const s: Spec = { conv, upper: conversion !== conv, flags, index: conv === 'n' || conv === '%' ? -2 : ix, width: w, precision: p, text: src };
  checkSpec(s);
  return s;
}

/** Java's checkGeneral, checkCharacter, checkInteger, checkFloat and checkText. */
function checkSpec(s: Spec): void {
  const { conv: c, width: w, precision: p } = s;
  const mismatch = (flag: string) =>
    javaError('FormatFlagsConversionMismatchException', `Conversion = ${c}, Flags = ${flag}`, `%${c} does not take the flag '${flag}'; drop it from ${s.text}`);
  const bad = (...flags: string[]) => {
    for (const f of flags) if (has(s, f)) throw mismatch(f);
  };
  const noWidth = () =>
    javaError('MissingFormatWidthException', specText(s), `the flags '-' and '0' of ${s.text} need a width: write e.g. %-10${c} or %010${c}`);
  const noPrecision = () => javaError('IllegalFormatPrecisionException', String(p), `%${c} takes no precision; drop the .${p} of ${s.text}`);
  const badFlags = () =>
    javaError('IllegalFormatFlagsException', `Flags = '${flagText(s)}'`, `${s.text} combines flags that exclude each other ('+' and ' ', '-' and '0')`);
  const numeric = () => {
    if (w < 0 && (has(s, '-') || has(s, '0'))) throw noWidth();
    if ((has(s, '+') && has(s, ' ')) || (has(s, '-') && has(s, '0'))) throw badFlags();
  };
  if ('bsh'.includes(c)) {
    if (c !== 's' && has(s, '#')) throw mismatch('#');
    if (w < 0 && has(s, '-')) throw noWidth();
    bad('+', ' ', '0', ',', '(');
  } else if (c === 'c') {
    if (p >= 0) throw noPrecision();
    bad('#', '+', ' ', '0', ',', '(');
    if (w < 0 && has(s, '-')) throw noWidth();
  } else if ('dox'.includes(c)) {
    numeric();
    if (p >= 0) throw noPrecision();
    bad(c === 'd' ? '#' : ',');
  } else if ('efga'.includes(c)) {
    numeric();
    if (c === 'a') bad('(', ',');
    if (c === 'e') bad(',');
    if (c === 'g') bad('#');
    if (c === 'a') throw unsupported(`the hexadecimal floating-point conversion ${s.text} is not supported by sluice; use %e or %s`);
  } else {
    if (p >= 0) throw noPrecision();
    if (c === '%' && s.flags !== '' && s.flags !== '-') throw badFlags();
    if (c === '%' && w < 0 && has(s, '-')) throw noWidth();
    if (c === 'n' && w >= 0) throw javaError('IllegalFormatWidthException', String(w), '%n takes no width');
    if (c === 'n' && s.flags !== '') throw badFlags();
  }
}

const CLASSES: Record<string, string> = {
  DATE: 'java.lang.Integer',
  LONG: 'java.lang.Long',
  TIMESTAMP: 'java.lang.Long',
  DECIMAL: 'org.apache.spark.sql.types.Decimal',
  BOOLEAN: 'java.lang.Boolean',
  STRING: 'org.apache.spark.unsafe.types.UTF8String',
};

/** The Java class Spark hands the Formatter for a value of type `t` (null: a NULL literal). */
function javaClass(t: SqlType): string | null {
  if (t.type === 'INT') return `java.lang.${t.bits === 8 ? 'Byte' : t.bits === 16 ? 'Short' : 'Integer'}`;
  if (t.type === 'DOUBLE') return `java.lang.${t.binary32 ? 'Float' : 'Double'}`;
  return CLASSES[t.type] ?? null;
}

const TAKES: Record<string, string> = {
  c: 'a TINYINT, SMALLINT or INT code point',
  d: 'a TINYINT, SMALLINT, INT or BIGINT',
  e: 'a FLOAT or DOUBLE',
};

/** The error Java raises printing a non-null value of type `t` under `s` (%#s: any value), or null. */
function typeError(s: Spec, t: SqlType): FormatError | null {
  if (s.conv === 's')
    return has(s, '#')
      ? javaError('FormatFlagsConversionMismatchException', 'Conversion = s, Flags = #', "%s takes no '#' flag (only a Formattable does)")
      : null;
  const cls = javaClass(t);
  if (cls === null || s.conv === 'b') return null;
  if (s.conv === 'h')
    return t.type === 'DECIMAL'
      ? unsupported(`${s.text} of a DECIMAL (Spark's Decimal.hashCode) is not supported by sluice; use %h of CAST(x AS STRING)`)
      : null;
  const kind = s.conv === 'c' ? 'c' : 'dox'.includes(s.conv) ? 'd' : 'e';
  const ok = kind === 'e' ? t.type === 'DOUBLE' : t.type === 'INT' || t.type === 'DATE' || (kind === 'd' && (t.type === 'LONG' || t.type === 'TIMESTAMP'));
  if (!ok) {
    const fix =
      t.type === 'DECIMAL'
        ? 'Spark hands a DECIMAL over as its own Decimal class, which %e %f %g refuse: CAST it to DOUBLE, or print its exact digits with %s or format_number'
        : kind === 'd' && t.type === 'DOUBLE'
          ? 'use %.0f, or CAST it to BIGINT'
          : `CAST the argument to such a type, or use %s`;
    return javaError('IllegalFormatConversionException', `${s.conv} != ${cls}`, `%${s.conv} takes ${TAKES[kind]}, not "${typeName(t)}"; ${fix}`);
  }
  const flag = kind === 'd' && s.conv !== 'd' ? ['(', ' ', '+'].find((f) => has(s, f)) : undefined;
  if (flag === undefined) return null;
  return javaError(
    'FormatFlagsConversionMismatchException',
    `Conversion = ${s.conv}, Flags = ${flag}`,
    `%${s.conv} of a ${typeName(t)} has no sign: drop '${flag}'`,
  );
}

/** Formatter.print(String): cut to the precision, upper-cased, justified. */
function text(s: Spec, v: string): string {
  const cut = s.precision >= 0 && s.precision < v.length ? v.slice(0, s.precision) : v;
  return justify(s, s.upper ? cut.toUpperCase() : cut);
}

/** Formatter.appendJustified: spaces up to the width, after the text with '-'. */
function justify(s: Spec, v: string): string {
  return has(s, '-') ? v.padEnd(s.width, ' ') : v.padStart(s.width, ' ');
}

/** A magnitude with Java's sign (leadingSign, trailingSign), grouping and zero padding (localizedMagnitude). */
function signed(s: Spec, neg: boolean, magnitude: string, suffix = '', pad = true): string {
  const pre = neg ? (has(s, '(') ? '(' : '-') : has(s, '+') ? '+' : has(s, ' ') ? ' ' : '';
  const post = suffix + (neg && has(s, '(') ? ')' : '');
  let m = has(s, ',') ? magnitude.replace(/^\d+/, (d) => d.replace(/\B(?=(\d{3})+$)/g, ',')) : magnitude;
  if (pad && has(s, '0')) m = m.padStart(s.width - pre.length - post.length, '0');
  return justify(s, pre + m + post);
}

/** %d of a value's decimal digits; %o and %x of its two's complement in its type's bits (Byte 8 ... Long 64). */
function integral(s: Spec, v: bigint, bits: number): string {
  if (s.conv === 'd') return signed(s, v < 0n, (v < 0n ? -v : v).toString());
  const digits = BigInt.asUintN(bits, v).toString(s.conv === 'o' ? 8 : 16);
  const prefix = has(s, '#') ? (s.conv === 'o' ? '0' : s.upper ? '0X' : '0x') : '';
  const body = has(s, '0') ? digits.padStart(s.width - prefix.length, '0') : digits;
  return justify(s, prefix + (s.upper ? body.toUpperCase() : body));
}

/** A positive double's value as 0.digits × 10^exp, its digits the shortest that read back as it (Double.toString's). */
interface Digits {
  readonly digits: string;
  readonly exp: number;
}

function digitsOf(v: number): Digits {
  if (v === 0) return { digits: '0', exp: 1 };
  const [m, e = '0'] = String(v).split('e');
  const [i, f = ''] = m.split('.');
  const all = i + f;
  const lead = all.length - all.replace(/^0+/, '').length;
  return { digits: all.slice(lead).replace(/0+$/, ''), exp: i.length + Number(e) - lead };
}

/** FormattedFloatingDecimal.applyPrecision: the first `keep` digits, rounded HALF_UP on the decimal digits (none kept: 0 or 1). */
function round(d: Digits, keep: number): Digits {
  if (keep < 0 || keep >= d.digits.length) return d;
  if (keep === 0) return d.digits[0] >= '5' ? { digits: '1', exp: d.exp + 1 } : { digits: '0', exp: d.exp };
  const head = d.digits.slice(0, keep);
  if (d.digits[keep] < '5') return { digits: head, exp: d.exp };
  const up = (BigInt(head) + 1n).toString();
  return up.length > head.length ? { digits: '1', exp: d.exp + 1 } : { digits: up, exp: d.exp };
}

/** The rounded digits with `p` fraction digits; `alt` ('.' for '#') after a precision of 0. */
function fixed(d: Digits, p: number, alt: string): string {
  const int = d.exp > 0 ? d.digits.slice(0, d.exp).padEnd(d.exp, '0') : '0';
  const frac = (d.exp >= 0 ? d.digits.slice(d.exp) : '0'.repeat(-d.exp) + d.digits).slice(0, p).padEnd(p, '0');
  return p > 0 ? `${int}.${frac}` : int + alt;
}

/** The rounded digits as d.ddd with `p` fraction digits, and the exponent (sign and two digits at least). */
function scientific(d: Digits, p: number, alt: string): [string, string] {
  const mantissa = d.digits[0] + (p > 0 ? `.${d.digits.slice(1, p + 1).padEnd(p, '0')}` : alt);
  const e = d.digits === '0' ? 0 : d.exp - 1;
  return [mantissa, `${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`];
}

/** %e %f %g of a double (a FLOAT widened to the double it is, as Formatter.print(float) does). */
function floating(s: Spec, v: number): string {
  if (Number.isNaN(v)) return justify(s, s.upper ? 'NAN' : 'NaN');
  const neg = v < 0 || Object.is(v, -0);
  if (!Number.isFinite(v)) return signed(s, neg, s.upper ? 'INFINITY' : 'Infinity', '', false);
  const d = digitsOf(Math.abs(v));
  const alt = has(s, '#') ? '.' : '';
  const e = s.upper ? 'E' : 'e';
  if (s.conv === 'f') {
    const p = s.precision < 0 ? 6 : s.precision;
    return signed(s, neg, fixed(round(d, d.exp + p), p, alt));
  }
  if (s.conv === 'e') {
    const p = s.precision < 0 ? 6 : s.precision;
    const [m, x] = scientific(round(d, p + 1), p, alt);
    return signed(s, neg, m, e + x);
  }
  // %g: `p` significant digits; scientific when the rounded value is below 10^-4 or at least 10^p
  const p = s.precision < 0 ? 6 : s.precision === 0 ? 1 : s.precision;
  const r = round(d, p);
  const x = r.digits === '0' ? 0 : r.exp - 1;
  if (x < -4 || x >= p) {
    const [m, exp] = scientific(r, p - 1, '');
    return signed(s, neg, m, e + exp);
  }
  return signed(s, neg, fixed(r, p - 1 - x, ''));
}

/** Spark's UTF8String.hashCode: Murmur3 x86 32 of the UTF-8 bytes, seed 42, its tail bytes one by one (Spark's variant). */
function utf8Hash(s: string): number {
  const b = Buffer.from(s, 'utf8');
  const mix = (h: number, k: number) => {
    let x = Math.imul(k, 0xcc9e2d51);
    x = Math.imul((x << 15) | (x >>> 17), 0x1b873593);
    const y = h ^ x;
    return (Math.imul((y << 13) | (y >>> 19), 5) + 0xe6546b64) | 0;
  };
  let h = 42;
  const aligned = b.length - (b.length % 4);
  for (let i = 0; i < aligned; i += 4) h = mix(h, b.readInt32LE(i));
  for (let i = aligned; i < b.length; i++) h = mix(h, (b[i] << 24) >> 24);
  h ^= b.length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The hashCode of the Java value Spark passes (Integer its value, Long and Double their halves xor'ed, Boolean 1231/1237). */
function hashCode(v: unknown, t: SqlType): number {
  const long = (x: bigint) => Number(BigInt.asIntN(32, BigInt.asUintN(64, x) ^ (BigInt.asUintN(64, x) >> 32n)));
  const view = new DataView(new ArrayBuffer(8));
  if (t.type === 'STRING') return utf8Hash(v as string);
  if (t.type === 'BOOLEAN') return v ? 1231 : 1237;
  if (t.type === 'DATE') return epochDayOf(v as string);
  if (t.type === 'LONG' || t.type === 'TIMESTAMP') return long(BigInt(v as number | bigint));
  if (t.type !== 'DOUBLE') return v as number;
  // Float.floatToIntBits and Double.doubleToLongBits, whose NaN is the canonical one
  if (Number.isNaN(v)) return t.binary32 ? 0x7fc00000 : long(0x7ff8000000000000n);
  if (t.binary32) {
    view.setFloat32(0, v as number);
    return view.getInt32(0);
  }
  view.setFloat64(0, v as number);
  return long(view.getBigInt64(0));
}

/** The text of a non-null value under `s`, as Formatter prints the Java value of type `t`. */
function printValue(s: Spec, v: unknown, t: SqlType): string {
  switch (s.conv) {
    case 'b':
      return text(s, t.type === 'BOOLEAN' ? String(v) : 'true');
    case 'h':
      return text(s, (hashCode(v, t) >>> 0).toString(16));
    case 'c': {
      const cp = t.type === 'DATE' ? epochDayOf(v as string) : (v as number);
      if (cp < 0 || cp > 0x10ffff) {
        throw javaError('IllegalFormatCodePointException', `Code point = 0x${(cp >>> 0).toString(16)}`, `${s.text} takes a Unicode code point, 0 to 0x10ffff`);
      }
      return text(s, String.fromCodePoint(cp));
    }
    case 'd':
    case 'o':
    case 'x':
      if (t.type === 'DATE') return integral(s, BigInt(epochDayOf(v as string)), 32);
      return integral(s, BigInt(v as number | bigint), t.type === 'INT' ? (t.bits ?? 32) : 64);
    case 'e':
    case 'f':
    case 'g':
      return floating(s, v as number);
    default: {
      if (t.type === 'DOUBLE') return text(s, javaDoubleText(v as number, t.binary32));
      if (t.type === 'DECIMAL') return text(s, javaDecimalText(v as string));
      return text(s, t.type === 'DATE' ? String(epochDayOf(v as string)) : String(v));
    }
  }
}

/** A step of a formatted row: fixed text, an argument under a specifier, or a missing argument (raised when reached). */
type Step = string | FormatError | { readonly spec: Spec; readonly arg: number; readonly error: FormatError | null; readonly type: SqlType };

/** The format's steps over arguments of `types` (Formatter.format's ordinary, explicit and relative indexes). */
function plan(format: string, types: readonly SqlType[]): Step[] {
  let last = -1;
  let ordinary = -1;
  return parse(format).map((p): Step => {
    if (typeof p === 'string') return p;
    if (p.index === -2) return p.conv === 'n' ? '\n' : text(p, '%');
    if (p.index === 0) ordinary = last = ordinary + 1;
    else if (p.index > 0) last = p.index - 1;
    if (last < 0 || last >= types.length) {
      const why =
        p.index === -1 && last < 0
          ? `${p.text} refers to the previous argument, and there is none`
          : `${p.text} wants argument ${last + 1}, and ${types.length} ${types.length === 1 ? 'is' : 'are'} given`;
      return javaError('MissingFormatArgumentException', `Format specifier '${specText(p)}'`, `${why}; pass it or change the format`);
    }
    return { spec: p, arg: last, error: typeError(p, types[last]), type: types[last] };
  });
}

function run(steps: readonly Step[], values: readonly unknown[]): string {
  let out = '';
  for (const st of steps) {
    if (typeof st === 'string') out += st;
    else if (st instanceof FormatError) throw st;
    else {
      const v = values[st.arg];
      if (st.error !== null && (v != null || st.spec.conv === 's')) throw st.error;
      out += v == null ? text(st.spec, st.spec.conv === 'b' ? 'false' : 'null') : printValue(st.spec, v, st.type);
    }
  }
  // UTF8String.fromString: a lone surrogate (a %c of one, a precision cutting a pair) becomes '?'
  return out.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '?');
}

const message = (e: FormatError, format: string, name: string) =>
  e.errorClass === 'UNSUPPORTED_FEATURE'
    ? `${name}('${format}', ...): ${e.message}`
    : `The value of parameter(s) \`strfmt\` in \`${name}\` is invalid: '${format}' fails with ${e.message}`;

const SUPPORTED = new Set(['STRING', 'INT', 'LONG', 'DOUBLE', 'DECIMAL', 'BOOLEAN', 'DATE', 'TIMESTAMP', 'NULL']);
const CACHE_LIMIT = 256;

function formatString(args: readonly Typed[], c: CallCtx): Typed {
  const fmt = str(c, args[0], 0);
  const rest = args.slice(1);
  rest.forEach((a, i) => {
    if (!SUPPORTED.has(a.type.type)) {
      throw c.az.fail(
        'UNSUPPORTED_FEATURE',
        `${c.sql}: argument ${i + 2} of ${c.name} is "${typeName(a.type)}", which Spark hands java.util.Formatter as an internal object printed as a reference; sluice refuses it: format a text of it (to_json(x), array_join(x, ','), CAST(x AS STRING))`,
        c.pos,
      );
    }
  });
  const types = rest.map((a) => a.type);
  let fixedSteps: Step[] | null = null;
  const literal = fmt.constant?.value;
  if (typeof literal === 'string') {
    if (literal.includes('%0$')) {
      throw c.az.fail(
        'INVALID_PARAMETER_VALUE.ZERO_INDEX',
        'The value of parameter(s) `strfmt` in `format_string` is invalid: expects `%1$`, `%2$` and so on, but got `%0$`.',
        c.pos,
      );
    }
    try {
      fixedSteps = plan(literal, types);
      for (const st of fixedSteps) {
        if (st instanceof FormatError) throw st;
        if (typeof st !== 'string' && st.error !== null && (st.type.type !== 'NULL' || st.spec.conv === 's')) throw st.error;
      }
    } catch (e) {
      if (e instanceof FormatError) throw c.az.fail(e.errorClass, message(e, literal, c.name), c.pos);
      throw e;
    }
  }
  const cache = new Map<string, Step[] | FormatError>();
  const stepsOf = (format: string): Step[] => {
    let s = cache.get(format);
    if (s === undefined) {
      try {
        s = plan(format, types);
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
        s = e;
      }
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(format, s);
    }
    if (s instanceof FormatError) throw s;
    return s;
  };
  return call(c, STRING, [fmt, ...rest], ([evFormat, ...evArgs]) => (row) => {
    const format = evFormat(row) as string | null;
    if (format == null) return null;
    // Spark evaluates every argument, referenced or not
    const values = evArgs.map((ev) => ev(row));
    try {
      return run(fixedSteps ?? stepsOf(format), values);
    } catch (e) {
      if (e instanceof FormatError) throw new SparkRowError(e.errorClass, message(e, format, c.name));
      throw e;
    }
  });
}

export const FORMAT_FUNCTIONS: Record<string, FunctionDef> = {
  format_string: def(1, Number.POSITIVE_INFINITY, formatString),
  printf: def(1, Number.POSITIVE_INFINITY, formatString),
};
