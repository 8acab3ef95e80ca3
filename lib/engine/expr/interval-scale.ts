/**
 * An ANSI interval times or divided by a number: Spark's MultiplyDTInterval, MultiplyYMInterval,
 * DivideDTInterval and DivideYMInterval (`INTERVAL '10' MINUTE * 2`, `2 * INTERVAL 1 DAY`,
 * `(t2 - t1) / 3`). The result is the whole range of its kind (DAY TO SECOND, YEAR TO MONTH), as
 * those expressions type it, and is exact: an integral or DECIMAL factor multiplies the
 * microseconds (months) exactly, a fractional result rounds HALF_UP, as Guava's
 * DoubleMath.roundToLong and BigDecimal.setScale(0, HALF_UP) do there; a result beyond a BIGINT of
 * microseconds (an INT of months) is ARITHMETIC_OVERFLOW, a zero divisor INTERVAL_DIVIDED_BY_ZERO.
 */
import { SparkRowError } from './errors';
import { strictNode, type Typed } from './typed';
import { isIntegral, isNumeric, type SqlType } from './types';
import { unscaledOf } from '../decimal';
import { isZero, LONG_MAX, LONG_MIN, overflow } from './values';

const INT_RANGE = [-(2n ** 31n), 2n ** 31n - 1n] as const;
const LONG_RANGE = [LONG_MIN, LONG_MAX] as const;

/** The node of `l op r` when one side is an ANSI interval and the other a number (the interval first for `/`), else null. */
export function intervalByNumber(op: string, l: Typed, r: Typed): Typed | null {
  if (op !== '*' && op !== '/') return null;
  const swapped = op === '*' && r.type.type === 'INTERVAL' && l.type.type !== 'INTERVAL';
  const iv = swapped ? r : l;
  const num = swapped ? l : r;
  if (iv.type.type !== 'INTERVAL' || !(isNumeric(num.type) || num.type.type === 'NULL')) return null;
  const ym = iv.type.yearMonth === true;
  const type: SqlType = ym ? { type: 'INTERVAL', yearMonth: true } : { type: 'INTERVAL' };
  // Spark rewrites `n * interval` to MultiplyDTInterval(interval, n): its text puts the interval first
  const sql = `(${iv.sql} ${op} ${num.sql})`;
  const [lo, hi] = ym ? INT_RANGE : LONG_RANGE;
  const checked = (v: bigint): number => {
    if (v < lo || v > hi) throw overflow(`${ym ? 'integer' : 'long'} overflow in ${sql};`, op === '*' ? 'try_multiply' : 'try_divide');
    return Number(v) + 0;
  };
  const nt = num.type;
  return strictNode(type, sql, [iv, num], (a, b) => {
    const x = BigInt(a as number);
    if (op === '/' && isZero(b)) {
      throw new SparkRowError(
        'INTERVAL_DIVIDED_BY_ZERO',
        `Division by zero in ${sql}. Use \`try_divide\` to tolerate divisor being 0 and return NULL instead.`,
      );
    }
    if (isIntegral(nt)) {
      const n = BigInt(b as number | bigint);
      return checked(op === '*' ? x * n : divideHalfUp(x, n));
    }
    if (nt.type === 'DECIMAL') {
      const unscaled = unscaledOf(b as string);
      const ten = 10n ** BigInt(nt.scale ?? 0);
      return checked(op === '*' ? divideHalfUp(x * unscaled, ten) : divideHalfUp(x * ten, unscaled));
    }
    const d = op === '*' ? (a as number) * (b as number) : (a as number) / (b as number);
    if (!Number.isFinite(d)) throw overflow(`${ym ? 'integer' : 'long'} overflow in ${sql};`, op === '*' ? 'try_multiply' : 'try_divide');
    return checked(BigInt(Math.sign(d) * Math.floor(Math.abs(d) + 0.5)));
  });
}

/** a / b rounded HALF_UP (half away from zero), as Guava's LongMath.divide(a, b, HALF_UP). */
function divideHalfUp(a: bigint, b: bigint): bigint {
  const q = a / b;
  const rem = a % b;
  const twice = 2n * (rem < 0n ? -rem : rem);
  if (twice < (b < 0n ? -b : b)) return q;
  return a < 0n !== b < 0n ? q - 1n : q + 1n;
}
