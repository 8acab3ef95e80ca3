/**
 * HyperLogLog for approxCountDistinct, with mergeable state kept as a compact string (one
 * character per register) so it can live in a state item. p = 9 (512 registers) matches the
 * relative error Spark's approx_count_distinct targets by default (rsd 0.05).
 */
const P = 9;
const M = 1 << P;
const ALPHA = 0.7213 / (1 + 1.079 / M);
const BASE = 48; // '0'

function murmur32(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    let k = text.charCodeAt(i);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= text.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hllNew(): string {
  return String.fromCharCode(BASE).repeat(M);
}

function rank(h2: number): number {
  // position of the first 1 bit in a 32-bit word (1-based); 33 when the word is zero
  return h2 === 0 ? 33 : Math.clz32(h2) + 1;
}

export function hllAdd(regs: string, value: unknown): string {
  const text = typeof value === 'string' ? `s${value}` : `v${JSON.stringify(value)}`;
  const idx = murmur32(text, 0x9747b28c) & (M - 1);
  const r = rank(murmur32(text, 0x5bd1e995));
  if (regs.charCodeAt(idx) - BASE >= r) return regs;
  return regs.slice(0, idx) + String.fromCharCode(BASE + r) + regs.slice(idx + 1);
}

export function hllMerge(a: string, b: string): string {
  let out = '';
  for (let i = 0; i < M; i++) out += a.charCodeAt(i) >= b.charCodeAt(i) ? a[i] : b[i];
  return out;
}

export function hllCount(regs: string): number {
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < M; i++) {
    const r = regs.charCodeAt(i) - BASE;
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const estimate = (ALPHA * M * M) / sum;
  if (estimate <= 2.5 * M && zeros > 0) return Math.round(M * Math.log(M / zeros));
  return Math.round(estimate);
}
