/**
 * Exact DECIMAL arithmetic for the functions a query gives withColumn and filter, where a DECIMAL
 * is its canonical text ("9.99") and an INT or BIGINT an integer. Spark's rules (DecimalPrecision):
 * an integer counts as a DECIMAL of scale 0, a product's scale is the sum of the scales, a sum's the
 * larger one; null in, null out. The result is the canonical text at that scale, so
 * `withColumn('total', 'DECIMAL(21,2)', (r) => multiplyDecimal(r.qty, r.price))` is exact to the cent.
 */
import { formatDecimal, unscaledOf } from '../decimal';

type Exact = string | number | bigint | null | undefined;

/** An operand as [unscaled, scale]; a JavaScript number must be an integer (a DOUBLE is not exact). */
function operand(v: string | number | bigint, fn: string): [bigint, number] {
  if (typeof v === 'bigint') return [v, 0];
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) {
      throw new TypeError(`${fn}: ${v} is not an exact integer: pass a DECIMAL's text ("9.99") or an INT / BIGINT value, not a DOUBLE`);
    }
    return [BigInt(v), 0];
  }
  if (!/^-?[0-9]+(\.[0-9]+)?$/.test(v)) throw new TypeError(`${fn}: ${JSON.stringify(v)} is not a DECIMAL's text such as "9.99"`);
  const dot = v.indexOf('.');
  return [unscaledOf(v), dot < 0 ? 0 : v.length - dot - 1];
}

/** Spark's `a * b` of DECIMALs and integers, exact: the scale is the sum of the scales (INT × DECIMAL(10,2) is DECIMAL(21,2)). */
export function multiplyDecimal(a: Exact, b: Exact): string | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  const [x, sx] = operand(a, 'multiplyDecimal');
  const [y, sy] = operand(b, 'multiplyDecimal');
  return formatDecimal(x * y, sx + sy);
}

/** Spark's `a + b` of DECIMALs and integers, exact: the scale is the larger one. */
export function addDecimal(a: Exact, b: Exact): string | null {
  if (a === null || a === undefined || b === null || b === undefined) return null;
  const [x, sx] = operand(a, 'addDecimal');
  const [y, sy] = operand(b, 'addDecimal');
  const s = Math.max(sx, sy);
  return formatDecimal(x * 10n ** BigInt(s - sx) + y * 10n ** BigInt(s - sy), s);
}
