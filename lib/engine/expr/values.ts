/**
 * Exact arithmetic and ordering on row values, with Spark's ANSI errors. INT is a number kept in
 * 32 bits, LONG a number when it is a safe integer and a bigint beyond (never rounded through a
 * double), DECIMAL its canonical text computed on the unscaled BigInt (decimal.ts), DOUBLE a number.
 */
import { divideHalfUp, fitsPrecision, formatDecimal, pow10, rescale, unscaledOf } from '../decimal';
import { SparkRowError } from './errors';
import type { SqlType } from './types';
import { typeName } from './types';

export const LONG_MIN = -(2n ** 63n);
export const LONG_MAX = 2n ** 63n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A LONG value of a bigint: a number when safe. */
export function longValue(v: bigint): number | bigint {
  return v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v;
}

export function big(v: unknown): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

export function overflow(what: string, fn: string): SparkRowError {
  // `what` names the overflow, the expression and the range, ending with ';'. `fn` is the try_
  // function that tolerates it, or (no try_ form: abs) the fix as a sentence ending with '.'
  const fix = fn.endsWith('.') ? fn : `Use '${fn}' to tolerate overflow and return NULL instead.`;
  return new SparkRowError('ARITHMETIC_OVERFLOW', `${what.replace(/;$/, '.')} ${fix}`);
}

/** Checks an integral result against its type's range (TINYINT, SMALLINT, INT, BIGINT); ARITHMETIC_OVERFLOW otherwise. */
export function checkIntegral(v: number | bigint, t: SqlType, sql: string, fn: string): number | bigint {
  if (t.type === 'LONG') {
    if (typeof v === 'number') {
      if (Number.isSafeInteger(v)) return v === 0 ? 0 : v; // (no -0: a Java long has none)
      throw new Error(`internal: inexact BIGINT ${v}`);
    }
    if (v < LONG_MIN || v > LONG_MAX) throw overflow(`long overflow in ${sql}: the result is outside BIGINT's range;`, fn);
    return longValue(v);
  }
  const bits = t.bits ?? 32;
  const max = 2 ** (bits - 1);
  const n = Number(v);
  if (n >= max || n < -max)
    throw overflow(
      `${bits === 32 ? 'integer' : bits === 16 ? 'smallint' : 'tinyint'} overflow in ${sql}: the result ${v} is outside ${typeName(t)}'s range;`,
      fn,
    );
  return n === 0 ? 0 : n; // (-2 * 0 is -0 in JavaScript, 0 in Java)
}

/** a + b, a - b, a * b on integral values of type `t` (ANSI: overflow is an error). */
export function integralOp(op: '+' | '-' | '*', t: SqlType, sql: string, fn: string): (a: unknown, b: unknown) => unknown {
  if (t.bits !== undefined) {
    // TINYINT and SMALLINT: Spark 4 raises BINARY_ARITHMETIC_OVERFLOW, the operands as SMALLINT literals
    const max = 2 ** (t.bits - 1);
    return (a, b) => {
      const x = a as number;
      const y = b as number;
      const r = op === '+' ? x + y : op === '-' ? x - y : x * y;
      if (r >= max || r < -max) {
        throw new SparkRowError('BINARY_ARITHMETIC_OVERFLOW', `${x}S ${op} ${y}S caused overflow. Use \`${fn}\` to ignore overflow problem and return NULL.`);
      }
      return r === 0 ? 0 : r;
    };
  }
  if (t.type !== 'LONG') {
    if (op === '+') return (a, b) => checkIntegral((a as number) + (b as number), t, sql, fn);
    if (op === '-') return (a, b) => checkIntegral((a as number) - (b as number), t, sql, fn);
    return (a, b) => checkIntegral((a as number) * (b as number), t, sql, fn);
  }
  const slow = (x: bigint) => checkIntegral(x, t, sql, fn);
  if (op === '+') {
    return (a, b) => {
      if (typeof a === 'number' && typeof b === 'number') {
        const r = a + b;
        if (Number.isSafeInteger(r)) return r;
      }
      return slow(big(a) + big(b));
    };
  }
  if (op === '-') {
    return (a, b) => {
      if (typeof a === 'number' && typeof b === 'number') {
        const r = a - b;
        if (Number.isSafeInteger(r)) return r;
      }
      return slow(big(a) - big(b));
    };
  }
  return (a, b) => {
    if (typeof a === 'number' && typeof b === 'number') {
      const r = a * b;
      if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
    }
    return slow(big(a) * big(b));
  };
}

export function divideByZero(sql: string, fn = 'try_divide'): SparkRowError {
  return new SparkRowError(
    'DIVIDE_BY_ZERO',
    `Division by zero in ${sql}: the divisor is 0. Use \`${fn}\` to tolerate divisor being 0 and return NULL instead, or filter out the rows whose divisor is 0.`,
  );
}

export function isZero(v: unknown): boolean {
  return v === 0 || v === 0n || (typeof v === 'string' && /^-?[0.]+$/.test(v));
}

/** The unscaled value of a DECIMAL value at `scale` (exact when scale >= the value's own). */
function unscaledAt(v: string, ownScale: number, scale: number): bigint {
  return rescale(unscaledOf(v), ownScale, scale);
}

export function outOfRange(unscaled: bigint, scale: number, t: SqlType, sql: string): SparkRowError {
  return new SparkRowError(
    'NUMERIC_VALUE_OUT_OF_RANGE',
    `${formatDecimal(unscaled, scale)} cannot be represented as ${typeName(t)} in ${sql}: it needs more than ${t.precision} digits. Use a wider DECIMAL, or try_cast / the try_ function to get NULL instead.`,
  );
}

/** An exact unscaled result at `scale` as a value of DECIMAL type `t` (HALF_UP to its scale); NUMERIC_VALUE_OUT_OF_RANGE when it does not fit. */
function decimalResult(unscaled: bigint, scale: number, t: SqlType, sql: string): string {
  const u = rescale(unscaled, scale, t.scale!);
  if (!fitsPrecision(u, t.precision!)) throw outOfRange(u, t.scale!, t, sql);
  return formatDecimal(u, t.scale!);
}

/** + - * / % on DECIMAL values of types `a` and `b` into result type `r` (Spark's DecimalPrecision result). */
export function decimalOp(op: '+' | '-' | '*' | '/' | '%', a: SqlType, b: SqlType, r: SqlType, sql: string, fn: string): (x: unknown, y: unknown) => unknown {
  const s1 = a.scale!;
  const s2 = b.scale!;
  const s = Math.max(s1, s2);
  switch (op) {
    case '+':
      return (x, y) => decimalResult(unscaledAt(x as string, s1, s) + unscaledAt(y as string, s2, s), s, r, sql);
    case '-':
      return (x, y) => decimalResult(unscaledAt(x as string, s1, s) - unscaledAt(y as string, s2, s), s, r, sql);
    case '*':
      return (x, y) => decimalResult(unscaledOf(x as string) * unscaledOf(y as string), s1 + s2, r, sql);
    case '%':
      return (x, y) => {
        const d = unscaledAt(y as string, s2, s);
        if (d === 0n) throw divideByZero(sql, 'try_mod');
        return decimalResult(unscaledAt(x as string, s1, s) % d, s, r, sql);
      };
    case '/':
      return (x, y) => {
        let den = unscaledOf(y as string) * pow10(s1);
        if (den === 0n) throw divideByZero(sql, fn);
        let num = unscaledOf(x as string) * pow10(s2 + r.scale!);
        if (den < 0n) {
          den = -den;
          num = -num;
        }
        return decimalResult(divideHalfUp(num, den), r.scale!, r, sql);
      };
  }
}

/**
 * The sign of a − b for two strings in Spark's order, its UTF-8 bytes', which is code point order:
 * UTF-16 units order the same up to the first unit that differs, where a surrogate (a code point
 * past U+FFFF) must sort above U+E000..U+FFFF, not below as JS's `<` sorts it.
 */
export function compareByCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Spark's ordering of non-null values of one type (numbers with NaN greatest and -0.0 = 0.0; strings by code point). */
export function comparator(t: SqlType): (a: unknown, b: unknown) => number {
  switch (t.type) {
    case 'STRING':
      return (a, b) => compareByCodePoints(a as string, b as string);
    case 'INT':
    case 'DATE':
    case 'INTERVAL':
      return (a, b) => ((a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0);
    case 'LONG':
    case 'TIMESTAMP':
      return (a, b) => {
        if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
        const x = big(a);
        const y = big(b);
        return x < y ? -1 : x > y ? 1 : 0;
      };
    case 'DOUBLE':
      return (a, b) => {
        const x = a as number;
        const y = b as number;
        if (x < y) return -1;
        if (x > y) return 1;
        if (x === y) return 0;
        const nx = Number.isNaN(x);
        const ny = Number.isNaN(y);
        return nx && ny ? 0 : nx ? 1 : -1;
      };
    case 'DECIMAL':
      return (a, b) => {
        const x = a as string;
        const y = b as string;
        const sx = fractionDigits(x);
        const sy = fractionDigits(y);
        const s = Math.max(sx, sy);
        const u = unscaledAt(x, sx, s);
        const v = unscaledAt(y, sy, s);
        return u < v ? -1 : u > v ? 1 : 0;
      };
    case 'BOOLEAN':
      return (a, b) => (a === b ? 0 : a ? 1 : -1);
    case 'ARRAY': {
      const el = nullsFirst(comparator(t.element!));
      return (a, b) => {
        const x = a as unknown[];
        const y = b as unknown[];
        for (let i = 0; i < Math.min(x.length, y.length); i++) {
          const c = el(x[i], y[i]);
          if (c !== 0) return c;
        }
        return x.length - y.length;
      };
    }
    case 'STRUCT': {
      const fs = t.fields!.map((f) => ({ name: f.name, cmp: nullsFirst(comparator(f)) }));
      return (a, b) => {
        for (const f of fs) {
          const c = f.cmp((a as Record<string, unknown>)[f.name], (b as Record<string, unknown>)[f.name]);
          if (c !== 0) return c;
        }
        return 0;
      };
    }
    default:
      return (a, b) => (a === b ? 0 : String(a) < String(b) ? -1 : 1);
  }
}

/** Null sorts after any value (array_sort's order). */
export function nullsLast(cmp: (a: unknown, b: unknown) => number): (a: unknown, b: unknown) => number {
  return (a, b) => (a == null ? (b == null ? 0 : 1) : b == null ? -1 : cmp(a, b));
}

/** Null sorts before any value (Spark's ascending NULLS FIRST). */
export function nullsFirst(cmp: (a: unknown, b: unknown) => number): (a: unknown, b: unknown) => number {
  return (a, b) => (a == null ? (b == null ? 0 : -1) : b == null ? 1 : cmp(a, b));
}

function fractionDigits(v: string): number {
  const dot = v.indexOf('.');
  return dot < 0 ? 0 : v.length - dot - 1;
}

/** Java's Double.toString, as Spark casts a DOUBLE to STRING: 1.0, 0.1, 1.0E7, 1.0E-4, NaN, Infinity. */
export function javaDoubleText(d: number, binary32 = false): string {
  if (Number.isNaN(d)) return 'NaN';
  if (d === Number.POSITIVE_INFINITY) return 'Infinity';
  if (d === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (d === 0) return Object.is(d, -0) ? '-0.0' : '0.0';
  let digits = String(d);
  if (binary32) {
    // the shortest text that reads back as the same binary32
    for (let p = 1; p <= 9; p++) {
      const t = d.toPrecision(p);
      if (Math.fround(Number(t)) === d) {
        digits = String(Number(t));
        break;
      }
    }
  }
  // Java's shortest form takes two digits where one would do and two are closer (Double.MIN_VALUE is
  // 4.9E-324, not 5.0E-324; Float.MIN_VALUE 1.4E-45): only a subnormal has so wide a rounding interval
  let exponential: string | undefined;
  if (digits.replace(/e.*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '').length === 1) {
    const two = d.toExponential(1);
    if ((binary32 ? Math.fround(Number(two)) : Number(two)) === d) exponential = two;
  }
  const v = Number(digits);
  const abs = Math.abs(v);
  if (abs >= 1e-3 && abs < 1e7) {
    const plain = abs < 1e-6 ? v.toFixed(20).replace(/0+$/, '') : String(v);
    return plain.includes('.') ? plain : `${plain}.0`;
  }
  const [mant, exp] = (exponential ?? v.toExponential()).split('e');
  return `${mant.includes('.') ? mant : `${mant}.0`}E${Number(exp)}`;
}
