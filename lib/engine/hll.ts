/**
 * approx_count_distinct as Spark's HyperLogLogPlusPlus at its default relative error (rsd 0.05:
 * p = 9, 512 registers): each value hashed by Spark's XXH64 of its type (seed 42, as the
 * `xxhash64` function: expr/spark-hashes.ts, on 32-bit halves), the top 9 bits of the hash choosing the register, which
 * keeps the most leading zeros (plus one) of the other 55 bits seen; the count is the raw estimate
 * less its bias interpolated from the HLL++ paper's figures (hll-bias.ts, the 6 nearest), or
 * linear counting while a register is empty and the count is small. So a group's count equals
 * Spark's for the same values, at any cardinality.
 *
 * The registers are kept as a string (one character a register, '0' + rank) behind the marker 'H',
 * so they live in a state item and merge register by register. A group whose registers an earlier
 * sluice wrote (512 characters, no marker: values hashed by a 32-bit murmur of their text) keeps
 * counting in them (new values hashed Spark's way; a value seen both before and after the upgrade
 * may count twice) and keeps the old estimate (raw, or linear counting below 2.5m) until its
 * window closes.
 */
import { BIAS_P9, RAW_ESTIMATES_P9 } from './hll-bias';

/** Spark's precision at its default relative standard deviation (0.05): 2^9 registers. */
export const HLL_PRECISION = 9;
const P = HLL_PRECISION;
const M = 1 << P;
const ALPHA_M2 = (0.7213 / (1 + 1.079 / M)) * M * M;
const BASE = 48; // '0'
const MARK = 'H';
/** HLL++'s threshold at p = 9 below which linear counting is used. */
const LINEAR_THRESHOLD = 400;
/** Points of the bias interpolation. */
const K = 6;

export function hllNew(): string {
  return MARK + String.fromCharCode(BASE).repeat(M);
}

/** Where register 0 is: after the marker, or at 0 in an earlier sluice's registers. */
function offset(regs: string): number {
  return regs.length === M + 1 ? 1 : 0;
}

/** The registers with a value of 64-bit hash `hash` (Spark's XXH64 of it) added. */
export function hllAdd(regs: string, hash: bigint): string {
  return hllAddHalves(regs, Number((hash >> 32n) & 0xffffffffn), Number(hash & 0xffffffffn));
}

/**
 * The same with the hash as its high and low 32 bits: the register is the top 9 bits of `hi`,
 * the rank the leading zeros of the other 55 bits (with the padding bit below them) plus one.
 */
export function hllAddHalves(regs: string, hi: number, lo: number): string {
  const idx = hi >>> (32 - P);
  const restHi = ((hi << P) | (lo >>> (32 - P))) >>> 0;
  const restLo = ((lo << P) | (1 << (P - 1))) >>> 0;
  const rank = (restHi !== 0 ? Math.clz32(restHi) : 32 + Math.clz32(restLo)) + 1;
  const at = offset(regs) + idx;
  if (regs.charCodeAt(at) - BASE >= rank) return regs;
  return regs.slice(0, at) + String.fromCharCode(BASE + rank) + regs.slice(at + 1);
}

/** Register by register, the larger; an earlier sluice's registers on either side make the result one of those. */
export function hllMerge(a: string, b: string): string {
  const oa = offset(a);
  const ob = offset(b);
  let out = oa === 1 && ob === 1 ? MARK : '';
  for (let i = 0; i < M; i++) {
    out += String.fromCharCode(Math.max(a.charCodeAt(oa + i), b.charCodeAt(ob + i)));
  }
  return out;
}

/** The mean bias of the K raw estimates nearest `e` (Spark's estimateBias). */
function estimateBias(e: number): number {
  const n = RAW_ESTIMATES_P9.length;
  // the index of e, or where it would go (Java's Arrays.binarySearch, as Spark uses it)
  let lo = 0;
  let hi = n - 1;
  let nearest = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = RAW_ESTIMATES_P9[mid];
    if (v < e) lo = mid + 1;
    else if (v > e) hi = mid - 1;
    else {
      nearest = mid;
      break;
    }
  }
  if (nearest < 0) nearest = lo;
  const distance = (i: number) => (e - RAW_ESTIMATES_P9[i]) ** 2;
  let low = Math.max(nearest - K + 1, 0);
  let high = Math.min(low + K, n);
  while (high < n && distance(high) < distance(low)) {
    low++;
    high++;
  }
  let sum = 0;
  for (let i = low; i < high; i++) sum += BIAS_P9[i];
  return sum / (high - low);
}

export function hllCount(regs: string): number {
  const o = offset(regs);
  let zInverse = 0;
  let zeros = 0;
  for (let i = 0; i < M; i++) {
    const r = regs.charCodeAt(o + i) - BASE;
    zInverse += 1 / 2 ** r;
    if (r === 0) zeros++;
  }
  const e = ALPHA_M2 / zInverse;
  if (o === 0) return Math.round(e <= 2.5 * M && zeros > 0 ? M * Math.log(M / zeros) : e);
  const corrected = () => (e < 5 * M ? e - estimateBias(e) : e);
  if (zeros > 0) {
    const h = M * Math.log(M / zeros);
    // (Math.round rounds halves up, as Java's)
    return Math.round(h <= LINEAR_THRESHOLD || e <= 2.5 * M ? h : corrected());
  }
  return Math.round(corrected());
}
