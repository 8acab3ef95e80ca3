/**
 * A FLOAT (binary32) read from a JSON number as Spark's JSON reader reads it: Jackson's
 * getFloatValue rounds the text's exact value to the nearest binary32 once (Float.parseFloat, or
 * `(float)` of the long an integer token fits in). Math.fround of the number's double rounds twice,
 * which differs only when the double falls exactly halfway between two binary32 values while the
 * text's value does not: "16777217.000000001" is 16777218 in Spark (the text is above the midpoint
 * 16777217), 16777216 through the double (a tie, to even). The readers keep the double they scanned
 * and take the text (decimal.ts float32OfText) for those ties alone.
 */
import { float32OfText } from './decimal';

const cell = new Float32Array(1);
const cellBits = new Uint32Array(cell.buffer);

/** Whether the double d lies exactly halfway between two adjacent binary32 values (Infinity as 2^128). */
export function isBinary32Tie(d: number): boolean {
  const f = Math.fround(d);
  if (f === d || !Number.isFinite(d)) return false;
  if (!Number.isFinite(f)) return Math.abs(d) === 2 ** 128 - 2 ** 103; // halfway between the largest binary32 and 2^128
  let other: number;
  if (f === 0) other = Math.sign(d) * 2 ** -149;
  else {
    cell[0] = f;
    // the bits of a binary32 count its magnitude up from zero
    cellBits[0] += Math.abs(d) > Math.abs(f) ? 1 : -1;
    other = Number.isFinite(cell[0]) ? cell[0] : Math.sign(d) * 2 ** 128;
  }
  return (f + other) / 2 === d;
}

/**
 * The FLOAT of the JSON number token s[from, to) whose double is `d` (Number of the token, or 0 for
 * an integer literal -0): Math.fround(d), except for a double halfway between two binary32 values,
 * where the token's exact value decides.
 */
export function binary32OfNumber(d: number, s: string, from: number, to: number): number {
  return isBinary32Tie(d) ? float32OfText(s.slice(from, to)) : Math.fround(d);
}
