/**
 * Spark 4's math and bit functions beyond those of functions.ts, with ANSI mode on. They follow
 * Spark's mathExpressions.scala (expm1, log1p, rint, factorial, hypot, conv and its
 * NumberConverter, width_bucket, the shifts), bitwiseExpressions.scala (bit_count, bit_get /
 * getbit), arithmetic.scala (negative, positive) and stringExpressions.scala (bit_length): their
 * input types and implicit casts (AnsiTypeCoercion), result types, nulls and errors.
 *
 * The DOUBLE functions compute what java.lang.StrictMath does: V8's Math.expm1 and Math.log1p are
 * ports of fdlibm, as StrictMath's are; rint is Math.rint's round half even; hypot is fdlibm's
 * e_hypot algorithm written out below (V8's Math.hypot scales and sums instead, which can differ
 * in the last bit). BIGINT values stay exact (a bigint beyond 2^53), never through a double.
 */
import type { CallCtx, FunctionDef } from './analyze';
import { implicitCast } from './analyze';
import { SparkRowError } from './errors';
import { call, def, double, int, str, what } from './fn-util';
import { strict, type Typed } from './typed';
import { DOUBLE, INT, isIntegral, isNumeric, LONG, type SqlType, typeName } from './types';
import { big, LONG_MAX, LONG_MIN, longValue } from './values';

const TINYINT: SqlType = { type: 'INT', bits: 8 };
const U64_MAX = 2n ** 64n - 1n;
const TWO_52 = 4503599627370496;
const TWO_63 = Number(2n ** 63n);

/** `t` named as Spark prints the call. */
function renamed(t: Typed, sql: string): Typed {
  return { ...t, sql, name: sql };
}

/** The call's text with the function's name in capitals, as Spark prints java.lang.Math's (EXPM1(x), HYPOT(x, y)). */
function capitalized(c: CallCtx): string {
  return c.name.toUpperCase() + c.sql.slice(c.name.length);
}

/** A DOUBLE function of DOUBLE arguments (Spark's UnaryMathExpression / BinaryMathExpression), printed in capitals when `upper`. */
function doubles(arity: number, upper: boolean, f: (...xs: number[]) => number | null): FunctionDef {
  return def(arity, arity, (args, c) => {
    const t = call(
      c,
      DOUBLE,
      args.map((a, i) => double(c, a, i)),
      strict(f as (...xs: unknown[]) => unknown),
    );
    return upper ? renamed(t, capitalized(c)) : t;
  });
}

/** java.lang.Math.rint: the nearest integral double, ties to the even one; the sign kept (rint(-0.4) is -0.0). */
function rint(x: number): number {
  const a = Math.abs(x);
  if (!(a < TWO_52)) return x; // NaN, an infinity, or already integral
  const r = TWO_52 + a - TWO_52;
  return x < 0 || Object.is(x, -0) ? -r : r;
}

// the high 32 bits of a double, and a double of given high bits (low bits 0), as fdlibm reads and writes them
const bits = new DataView(new ArrayBuffer(8));
function high(x: number): number {
  bits.setFloat64(0, x);
  return bits.getInt32(0);
}
function ofHigh(h: number): number {
  bits.setInt32(0, h);
  bits.setInt32(4, 0);
  return bits.getFloat64(0);
}
/** 2^k exactly (k a normal exponent), from its bits. */
function pow2(k: number): number {
  return ofHigh((k + 1023) << 20);
}

/**
 * sqrt(x² + y²) as fdlibm 5.3's e_hypot, which java.lang.StrictMath.hypot (and so Math.hypot, and
 * Spark) computes: the larger and smaller magnitudes a and b, scaled by 2^±600 (or 2^1022 when b
 * is subnormal) into a safe range, then x² + y² summed with a split into high and low parts so that
 * the sum has less than one ulp of error before the one sqrt. An infinity wins over a NaN.
 */
function hypot(x: number, y: number): number {
  let a = Math.abs(x);
  let b = Math.abs(y);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === Infinity || b === Infinity ? Infinity : a + b;
  if (b > a) [a, b] = [b, a];
  let ha = high(a);
  let hb = high(b);
  if (ha - hb > 0x3c00000) return a + b; // a / b > 2^60: b does not count
  let k = 0;
  if (ha > 0x5f300000) {
    // a > 2^500: scale both down by 2^600
    ha -= 0x25800000;
    hb -= 0x25800000;
    a *= pow2(-600);
    b *= pow2(-600);
    k += 600;
  }
  if (hb < 0x20b00000) {
    // b < 2^-500
    if (b === 0) return a;
    if (hb <= 0x000fffff) {
      // b subnormal: scale both by 2^1022 (the high words keep their unscaled values, as fdlibm's do)
      a *= pow2(1022);
      b *= pow2(1022);
      k -= 1022;
    } else {
      ha += 0x25800000;
      hb += 0x25800000;
      a *= pow2(600);
      b *= pow2(600);
      k -= 600;
    }
  }
  let w = a - b;
  if (w > b) {
    const t1 = ofHigh(ha);
    const t2 = a - t1;
    w = Math.sqrt(t1 * t1 - (b * -b - t2 * (a + t1)));
  } else {
    a += a;
    const y1 = ofHigh(hb);
    const y2 = b - y1;
    const t1 = ofHigh(ha + 0x00100000);
    const t2 = a - t1;
    w = Math.sqrt(t1 * y1 - (w * -w - (t1 * y2 + t2 * b)));
  }
  return k === 0 ? w : pow2(k) * w;
}

/** n! for n in 0..20 (Spark's table), NULL otherwise. */
const FACTORIALS: (number | bigint)[] = [];
for (let n = 0, f = 1n; n <= 20; n++) {
  if (n > 0) f *= BigInt(n);
  FACTORIALS.push(longValue(f));
}

/** An INT or BIGINT argument of a shift (Spark's TypeCollection(INT, BIGINT)): TINYINT, SMALLINT, a DOUBLE, DECIMAL, STRING or NULL is cast to INT. */
function intOrLong(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type;
  if (t.type === 'LONG' || (t.type === 'INT' && t.bits === undefined)) return a;
  if (isNumeric(t) || t.type === 'STRING' || t.type === 'NULL') return implicitCast(a, INT);
  throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires ("INT" or "BIGINT") type, however ${a.sql} has the type "${typeName(t)}"`, c.pos);
}

/** An integral argument (Spark's IntegralType: TINYINT, SMALLINT, INT, BIGINT; a NULL is an INT), with no implicit cast from other types. */
function integral(c: CallCtx, a: Typed, i: number, or = ''): Typed {
  if (isIntegral(a.type)) return a;
  if (a.type.type === 'NULL') return implicitCast(a, INT);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `${what(c, i)} requires ("INTEGRAL"${or}) type, however ${a.sql} has the type "${typeName(a.type)}"`,
    c.pos,
  );
}

/** shiftleft, shiftright, shiftrightunsigned: Java's <<, >>, >>> on an int (the count's low 5 bits) or a long (its low 6 bits). */
function shift(op: '<<' | '>>' | '>>>'): FunctionDef {
  return def(2, 2, ([a, b], c) => {
    const x = intOrLong(c, a, 0);
    const n = int(c, b, 1);
    if (x.type.type === 'LONG') {
      const f =
        op === '<<'
          ? (v: bigint, s: bigint) => BigInt.asIntN(64, v << s)
          : op === '>>'
            ? (v: bigint, s: bigint) => v >> s
            : (v: bigint, s: bigint) => BigInt.asIntN(64, BigInt.asUintN(64, v) >> s);
      return call(
        c,
        LONG,
        [x, n],
        strict((v, s) => longValue(f(big(v), BigInt((s as number) & 63)))),
      );
    }
    // JavaScript's shifts of a 32-bit integer are Java's (the count taken mod 32); >>> back to signed
    const f = op === '<<' ? (v: number, s: number) => v << s : op === '>>' ? (v: number, s: number) => v >> s : (v: number, s: number) => (v >>> s) | 0;
    return call(
      c,
      INT,
      [x, n],
      strict((v, s) => f(v as number, s as number)),
    );
  });
}

/** Long.bitCount of the value sign-extended to 64 bits (bit_count(-1) is 64 for an INT too). */
function bitCount(v: unknown): number {
  let u = BigInt.asUintN(64, big(v));
  let n = 0;
  for (; u !== 0n; u &= u - 1n) n++;
  return n;
}

/** bit_get / getbit: the bit at `pos` (0 the lowest) of the value, a TINYINT; a position outside the type's bits is INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE. */
function bitGet(): FunctionDef {
  return def(2, 2, ([a, b], c) => {
    const x = integral(c, a, 0);
    const size = x.type.type === 'LONG' ? 64 : (x.type.bits ?? 32);
    return call(
      c,
      TINYINT,
      [x, int(c, b, 1)],
      strict((v, p) => {
        const pos = p as number;
        if (pos < 0 || pos >= size) {
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE',
            `The value of parameter(s) \`pos\` in \`${c.name}\` is invalid: expects an integer value in [0, ${size}), but got ${pos}.`,
          );
        }
        return typeof v === 'number' && pos < 32 && size <= 32 ? (v >> pos) & 1 : Number((big(v) >> BigInt(pos)) & 1n);
      }),
    );
  });
}

/** Character.digit of an ASCII code in `radix`, -1 when it is not a digit of it. */
function digit(code: number, radix: number): number {
  const d = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 122 ? code - 87 : code >= 65 && code <= 90 ? code - 55 : -1;
  return d < radix ? d : -1;
}

/**
 * conv(num, from, to) as Spark's NumberConverter: NULL for a base outside 2..36 (|to| for `to`) or
 * an empty number (spaces trimmed); a leading '-' and then the longest prefix of digits of `from`,
 * read as an unsigned 64-bit value (more is ARITHMETIC_OVERFLOW under ANSI). A positive `to`
 * writes the 64 bits unsigned (a '-' number as its two's complement), a negative `to` signed.
 */
function conv(num: string, from: number, to: number, sql: string): string | null {
  if (from < 2 || from > 36 || Math.abs(to) < 2 || Math.abs(to) > 36) return null;
  const s = num.replace(/^ +| +$/g, '');
  if (s === '') return null;
  let negative = s[0] === '-';
  const radix = BigInt(from);
  let u = 0n;
  for (let i = negative ? 1 : 0; i < s.length; i++) {
    const d = digit(s.charCodeAt(i), from);
    if (d < 0) break;
    u = u * radix + BigInt(d);
    if (u > U64_MAX) {
      throw new SparkRowError('ARITHMETIC_OVERFLOW', `Overflow in function conv(): ${sql} reads '${num}' in base ${from} as more than 64 unsigned bits.`);
    }
  }
  let v = BigInt.asIntN(64, u);
  if (negative && to > 0) v = v < 0n ? -1n : -v;
  if (to < 0 && v < 0n) {
    v = -v;
    negative = true;
  }
  const text = BigInt.asUintN(64, v).toString(Math.abs(to)).toUpperCase();
  return negative && to < 0 ? `-${text}` : text;
}

/** Java's (long) of a double: truncated, NaN 0, saturated at BIGINT's bounds. */
function javaLong(d: number): bigint {
  if (Number.isNaN(d)) return 0n;
  if (d >= TWO_63) return LONG_MAX;
  if (d <= -TWO_63) return LONG_MIN;
  return BigInt(Math.trunc(d));
}

/** Spark's WidthBucket.computeBucketNumber, in its double arithmetic. */
function widthBucket(value: number, min: number, max: number, buckets: unknown): number | bigint | null {
  const n = big(buckets);
  if (n <= 0n || n === LONG_MAX || Number.isNaN(value) || min === max || !Number.isFinite(min) || !Number.isFinite(max)) return null;
  const lower = Math.min(min, max);
  const upper = Math.max(min, max);
  let q: number;
  if (min < max) {
    if (value < lower) return 0;
    if (value >= upper) return longValue(n + 1n);
    q = (Number(n) * (value - lower)) / (upper - lower);
  } else {
    if (value > upper) return 0;
    if (value <= lower) return longValue(n + 1n);
    q = (Number(n) * (upper - value)) / (upper - lower);
  }
  return longValue(BigInt.asIntN(64, javaLong(q) + 1n));
}

/**
 * width_bucket's value, min and max: DOUBLE (numbers and strings cast) or intervals, all three of
 * one kind (DOUBLE, year-month or day-time, as Spark's check); else DATA_DIFF_TYPES.
 */
function bucketBounds(args: readonly Typed[], c: CallCtx): Typed[] {
  const xs = args.map((a, i) => (a.type.type === 'INTERVAL' ? a : double(c, a, i)));
  const kinds = new Set(xs.map((x) => (x.type.type !== 'INTERVAL' ? 'DOUBLE' : x.type.yearMonth ? 'YEAR TO MONTH' : 'DAY TO SECOND')));
  if (kinds.size === 1) return xs;
  throw c.az.mismatch(
    'DATA_DIFF_TYPES',
    c.sql,
    `the input to \`width_bucket\` should all be the same type, but it's [${xs.map((x) => `"${typeName(x.type)}"`).join(', ')}]`,
    c.pos,
  );
}

/** negative(x) / positive(x): unary - and + (an overflow is ARITHMETIC_OVERFLOW); a STRING or NULL is a DOUBLE. */
function sign(op: '-' | '+'): FunctionDef {
  return def(1, 1, ([a], c) => {
    const x = a.type.type === 'NULL' ? implicitCast(a, DOUBLE) : a;
    return renamed(c.az.unary(op, x, c.pos), op === '-' ? c.sql : `(+ ${a.sql})`);
  });
}

export const MATH_FUNCTIONS: Record<string, FunctionDef> = {
  expm1: doubles(1, true, Math.expm1),
  // Spark's UnaryLogExpression: NULL at and below the asymptote (-1), not -Infinity or NaN
  log1p: doubles(1, true, (x) => (x <= -1 ? null : Math.log1p(x))),
  rint: doubles(1, false, rint),
  hypot: doubles(2, true, hypot),
  factorial: def(1, 1, ([a], c) =>
    call(
      c,
      LONG,
      [int(c, a, 0)],
      strict((n) => FACTORIALS[n as number] ?? null),
    ),
  ),
  shiftleft: shift('<<'),
  shiftright: shift('>>'),
  shiftrightunsigned: shift('>>>'),
  bit_count: def(1, 1, ([a], c) => {
    if (a.type.type === 'BOOLEAN')
      return call(
        c,
        INT,
        [a],
        strict((v) => (v ? 1 : 0)),
      );
    return call(c, INT, [integral(c, a, 0, ' or "BOOLEAN"')], strict(bitCount));
  }),
  bit_get: bitGet(),
  getbit: bitGet(),
  // the bits of the string's UTF-8 bytes (a number, boolean or date is cast to its text)
  bit_length: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [str(c, a, 0)],
      strict((s) => Buffer.byteLength(s as string, 'utf8') * 8),
    ),
  ),
  conv: def(3, 3, (args, c) =>
    call(
      c,
      { type: 'STRING' },
      [str(c, args[0], 0), int(c, args[1], 1), int(c, args[2], 2)],
      strict((n, f, t) => conv(n as string, f as number, t as number, c.sql)),
    ),
  ),
  width_bucket: def(4, 4, (args, c) =>
    call(
      c,
      LONG,
      [...bucketBounds(args.slice(0, 3), c), c.az.implicit(args[3], LONG, c.pos, what(c, 3))],
      strict((v, lo, hi, n) => widthBucket(Number(v), Number(lo), Number(hi), n)),
    ),
  ),
  negative: sign('-'),
  positive: sign('+'),
};
