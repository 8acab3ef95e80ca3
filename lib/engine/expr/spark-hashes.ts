/**
 * Spark's HashExpression over one value of each type, for Murmur3 x86 32-bit (`hash`) and XXH64
 * (`xxhash64`, and approx_count_distinct's registers: hll.ts): BOOLEAN, INT and DATE as a 4-byte
 * int, BIGINT and TIMESTAMP as an 8-byte long, DOUBLE as its IEEE bits (-0.0 as 0.0, one NaN), a
 * STRING's UTF-8 bytes, a DECIMAL of at most 18 digits as its unscaled long (else the unscaled
 * value's two's-complement bytes), and arrays, maps and structs element by element, each value's
 * hash the seed of the next. Apart from hashes.ts (the SQL functions) so the aggregates can take
 * it without the function registry.
 */
import { epochDayOf } from '../dates';
import { unscaledOf } from '../decimal';
import { mapEntries } from '../map-entries';
import { keyTypeOf, keyValue } from './map-keys';
import { type SqlType, typeName } from './types';

export interface Hasher<H> {
  int(v: number, seed: H): H;
  long(v: bigint, seed: H): H;
  bytes(b: Uint8Array, seed: H): H;
}

// Murmur3 x86 32-bit, as Spark's Murmur3_x86_32 (its tail bytes go one by one as ints: Spark's own variant)
const M_C1 = 0xcc9e2d51;
const M_C2 = 0x1b873593;
function mixK1(k: number): number {
  const a = Math.imul(k, M_C1);
  return Math.imul((a << 15) | (a >>> 17), M_C2);
}
function mixH1(h: number, k: number): number {
  const a = h ^ k;
  return (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
}
function fmix32(h: number, length: number): number {
  let a = h ^ length;
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  return (a ^ (a >>> 16)) | 0;
}
export const MURMUR3: Hasher<number> = {
  int: (v, seed) => fmix32(mixH1(seed, mixK1(v)), 4),
  long: (v, seed) => {
    const low = Number(BigInt.asIntN(32, v));
    const high = Number(BigInt.asIntN(32, v >> 32n));
    return fmix32(mixH1(mixH1(seed, mixK1(low)), mixK1(high)), 8);
  },
  bytes: (b, seed) => {
    const aligned = b.length - (b.length % 4);
    let h = seed;
    for (let i = 0; i < aligned; i += 4) h = mixH1(h, mixK1(b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)));
    for (let i = aligned; i < b.length; i++) h = mixH1(h, mixK1((b[i] << 24) >> 24));
    return fmix32(h, b.length);
  },
};

// XXH64 on 64-bit words held as two unsigned 32-bit halves (hi, lo): BigInt arithmetic cost about
// 1 µs a value, which approx_count_distinct pays on every row. Each step leaves its result in
// RH/RL (no object per step). test/unit/spark-hashes.test.ts checks it against a BigInt XXH64.
let RH = 0;
let RL = 0;
const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;
/** 2^64 − P1 (P1's low half is not 0, so no carry into the high half). */
const NEG_P1H = ~P1H >>> 0;
const NEG_P1L = (~P1L + 1) >>> 0;

/** (ah, al) × (bh, bl) mod 2^64: the low halves' full product from 16-bit parts, the cross terms mod 2^32. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff;
  const a1 = al >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  RL = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const carry = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  RH = (carry + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  RL = lo >>> 0;
  RH = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** Rotation left by 0 < r < 64. */
function rotl(h: number, l: number, r: number): void {
  if (r >= 32) {
    const t = h;
    h = l;
    l = t;
    r -= 32;
  }
  if (r === 0) {
    RH = h;
    RL = l;
    return;
  }
  RH = ((h << r) | (l >>> (32 - r))) >>> 0;
  RL = ((l << r) | (h >>> (32 - r))) >>> 0;
}

/** XXH64's round: rotl(acc + lane × P2, 31) × P1. */
function round(ah: number, al: number, lh: number, ll: number): void {
  mul(lh, ll, P2H, P2L);
  add(ah, al, RH, RL);
  rotl(RH, RL, 31);
  mul(RH, RL, P1H, P1L);
}

/** XXH64's merge of an accumulator into the hash: (h ^ round(0, v)) × P1 + P4. */
function mergeRound(hh: number, hl: number, vh: number, vl: number): void {
  round(0, 0, vh, vl);
  mul((hh ^ RH) >>> 0, (hl ^ RL) >>> 0, P1H, P1L);
  add(RH, RL, P4H, P4L);
}

/** XXH64's final avalanche of (hh, hl). */
function fmix(hh: number, hl: number): void {
  // h ^= h >>> 33
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  // h ^= h >>> 29
  hh = RH;
  hl = (RL ^ ((RL >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L);
  // h ^= h >>> 32
  RL = (RL ^ RH) >>> 0;
}

function u32le(b: Uint8Array, i: number): number {
  return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
}

/** XXH64 of `b`'s first `n` bytes with seed (sh, sl): the hash in RH/RL. */
function xxh64Halves(b: Uint8Array, sh: number, sl: number, n = b.length): void {
  let i = 0;
  let hh: number;
  let hl: number;
  if (n >= 32) {
    add(sh, sl, P1H, P1L);
    add(RH, RL, P2H, P2L);
    let v1h = RH;
    let v1l = RL;
    add(sh, sl, P2H, P2L);
    let v2h = RH;
    let v2l = RL;
    let v3h = sh;
    let v3l = sl;
    // seed - P1: seed + (2^64 - P1)
    add(sh, sl, NEG_P1H, NEG_P1L);
    let v4h = RH;
    let v4l = RL;
    for (; i <= n - 32; i += 32) {
      round(v1h, v1l, u32le(b, i + 4), u32le(b, i));
      v1h = RH;
      v1l = RL;
      round(v2h, v2l, u32le(b, i + 12), u32le(b, i + 8));
      v2h = RH;
      v2l = RL;
      round(v3h, v3l, u32le(b, i + 20), u32le(b, i + 16));
      v3h = RH;
      v3l = RL;
      round(v4h, v4l, u32le(b, i + 28), u32le(b, i + 24));
      v4h = RH;
      v4l = RL;
    }
    rotl(v1h, v1l, 1);
    let ah = RH;
    let al = RL;
    rotl(v2h, v2l, 7);
    add(ah, al, RH, RL);
    ah = RH;
    al = RL;
    rotl(v3h, v3l, 12);
    add(ah, al, RH, RL);
    ah = RH;
    al = RL;
    rotl(v4h, v4l, 18);
    add(ah, al, RH, RL);
    mergeRound(RH, RL, v1h, v1l);
    mergeRound(RH, RL, v2h, v2l);
    mergeRound(RH, RL, v3h, v3l);
    mergeRound(RH, RL, v4h, v4l);
    hh = RH;
    hl = RL;
  } else {
    add(sh, sl, P5H, P5L);
    hh = RH;
    hl = RL;
  }
  add(hh, hl, 0, n);
  hh = RH;
  hl = RL;
  for (; i + 8 <= n; i += 8) {
    round(0, 0, u32le(b, i + 4), u32le(b, i));
    rotl((hh ^ RH) >>> 0, (hl ^ RL) >>> 0, 27);
    mul(RH, RL, P1H, P1L);
    add(RH, RL, P4H, P4L);
    hh = RH;
    hl = RL;
  }
  if (i + 4 <= n) {
    mul(0, u32le(b, i), P1H, P1L);
    rotl((hh ^ RH) >>> 0, (hl ^ RL) >>> 0, 23);
    mul(RH, RL, P2H, P2L);
    add(RH, RL, P3H, P3L);
    hh = RH;
    hl = RL;
    i += 4;
  }
  for (; i < n; i++) {
    mul(0, b[i], P5H, P5L);
    rotl((hh ^ RH) >>> 0, (hl ^ RL) >>> 0, 11);
    mul(RH, RL, P1H, P1L);
    hh = RH;
    hl = RL;
  }
  fmix(hh, hl);
}

const MASK32 = 0xffffffffn;
const halvesOf = (x: bigint): [number, number] => [Number((x >> 32n) & MASK32), Number(x & MASK32)];
const bigOf = (h: number, l: number): bigint => (BigInt(h) << 32n) | BigInt(l);
const WORD = new Uint8Array(8);
const WORD_VIEW = new DataView(WORD.buffer);
const INT_BYTES = WORD.subarray(0, 4);

export const XXH64: Hasher<bigint> = {
  int: (v, seed) => {
    WORD_VIEW.setInt32(0, v, true);
    const [sh, sl] = halvesOf(seed);
    xxh64Halves(INT_BYTES, sh, sl);
    return bigOf(RH, RL);
  },
  long: (v, seed) => {
    WORD_VIEW.setBigInt64(0, BigInt.asIntN(64, v), true);
    const [sh, sl] = halvesOf(seed);
    xxh64Halves(WORD, sh, sl);
    return bigOf(RH, RL);
  },
  bytes: (b, seed) => {
    const [sh, sl] = halvesOf(seed);
    xxh64Halves(b, sh, sl);
    return bigOf(RH, RL);
  },
};

/** The two's-complement big-endian bytes of a BigInt, shortest form (Java's BigInteger.toByteArray). */
function twosComplement(v: bigint): Uint8Array {
  let bytes = 1;
  while (v < -(1n << BigInt(bytes * 8 - 1)) || v >= 1n << BigInt(bytes * 8 - 1)) bytes++;
  const out = new Uint8Array(bytes);
  let x = BigInt.asUintN(bytes * 8, v);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** The hash of a value of type `t` into `seed`, as Spark's HashExpression walks it. */
export function hashInto<H>(h: Hasher<H>, t: SqlType): (v: unknown, seed: H) => H {
  switch (t.type) {
    case 'NULL':
      return (_v, seed) => seed;
    case 'BOOLEAN':
      return (v, seed) => h.int(v ? 1 : 0, seed);
    case 'INT':
      return (v, seed) => h.int(v as number, seed);
    case 'DATE':
      return (v, seed) => h.int(epochDayOf(v as string), seed);
    case 'LONG':
    case 'TIMESTAMP':
      return (v, seed) => h.long(BigInt(v as number | bigint), seed);
    case 'DOUBLE': {
      const buf = new DataView(new ArrayBuffer(8));
      if (t.binary32) {
        return (v, seed) => {
          buf.setFloat32(0, (v as number) === 0 ? 0 : (v as number));
          return h.int(Number.isNaN(v as number) ? 0x7fc00000 : buf.getInt32(0), seed);
        };
      }
      return (v, seed) => {
        buf.setFloat64(0, (v as number) === 0 ? 0 : (v as number));
        return h.long(Number.isNaN(v as number) ? 0x7ff8000000000000n : buf.getBigInt64(0), seed);
      };
    }
    case 'DECIMAL':
      return t.precision! <= 18 ? (v, seed) => h.long(unscaledOf(v as string), seed) : (v, seed) => h.bytes(twosComplement(unscaledOf(v as string)), seed);
    case 'STRING':
      return (v, seed) => h.bytes(Buffer.from(v as string, 'utf8'), seed);
    case 'ARRAY': {
      const el = hashInto(h, t.element!);
      return (v, seed) => (v as unknown[]).reduce<H>((s, x) => (x == null ? s : el(x, s)), seed);
    }
    case 'MAP': {
      // a key is hashed as a value of the key type (map-keys.ts holds it as its text)
      const kt = keyTypeOf(t);
      const key = hashInto(h, kt);
      const typed = keyValue(kt);
      const val = hashInto(h, t.value!);
      return (v, seed) =>
        mapEntries(v as object).reduce<H>((s, [k, x]) => {
          const ks = key(kt.type === 'STRING' ? k : typed(k), s);
          return x == null ? ks : val(x, ks);
        }, seed);
    }
    case 'STRUCT': {
      const fs = t.fields!.map((f) => ({ name: f.name, fn: hashInto(h, f) }));
      return (v, seed) =>
        fs.reduce<H>((s, f) => {
          const x = (v as Record<string, unknown>)[f.name];
          return x == null ? s : f.fn(x, s);
        }, seed);
    }
    default:
      return () => {
        throw new Error(`internal: no hash for ${typeName(t)}`);
      };
  }
}

/** A UTF-8 buffer reused for the strings that fit it (no allocation a value). */
let utf8 = Buffer.alloc(256);

/** A LONG (a safe-integer number, or a BigInt) into WORD, little-endian. */
function longInto(v: number | bigint): void {
  if (typeof v === 'bigint') WORD_VIEW.setBigInt64(0, BigInt.asIntN(64, v), true);
  else {
    // (ToUint32 of an integral double is it modulo 2^32: two's complement halves)
    WORD_VIEW.setUint32(0, v >>> 0, true);
    WORD_VIEW.setUint32(4, Math.floor(v / 4294967296) >>> 0, true);
  }
}

/**
 * Spark's XXH64 with seed 42 of a value of an atomic type `t`, into out[0] (high half) and out[1]
 * (low half), with no BigInt and no allocation for the common types; null for a nested type
 * (sparkXxHash64 walks those). approx_count_distinct hashes every row with it.
 */
export function sparkXxHash64Into(t: SqlType): ((v: unknown, out: Uint32Array) => void) | null {
  const SEED_H = 0;
  const SEED_L = 42;
  const done = (out: Uint32Array) => {
    out[0] = RH;
    out[1] = RL;
  };
  const int = (i: number, out: Uint32Array) => {
    WORD_VIEW.setInt32(0, i, true);
    xxh64Halves(INT_BYTES, SEED_H, SEED_L);
    done(out);
  };
  const word = (out: Uint32Array) => {
    xxh64Halves(WORD, SEED_H, SEED_L);
    done(out);
  };
  switch (t.type) {
    case 'BOOLEAN':
      return (v, out) => int(v ? 1 : 0, out);
    case 'INT':
      return (v, out) => int(v as number, out);
    case 'DATE':
      return (v, out) => int(epochDayOf(v as string), out);
    case 'LONG':
    case 'TIMESTAMP':
      return (v, out) => {
        longInto(v as number | bigint);
        word(out);
      };
    case 'DOUBLE':
      if (t.binary32) {
        return (v, out) => {
          const x = v as number;
          WORD_VIEW.setFloat32(0, x === 0 ? 0 : x, true);
          int(Number.isNaN(x) ? 0x7fc00000 : WORD_VIEW.getInt32(0, true), out);
        };
      }
      return (v, out) => {
        const x = v as number;
        if (Number.isNaN(x)) {
          WORD_VIEW.setUint32(0, 0, true);
          WORD_VIEW.setUint32(4, 0x7ff80000, true);
        } else WORD_VIEW.setFloat64(0, x === 0 ? 0 : x, true);
        word(out);
      };
    case 'DECIMAL':
      if (t.precision! > 18) return null;
      return (v, out) => {
        longInto(unscaledOf(v as string));
        word(out);
      };
    case 'STRING':
      return (v, out) => {
        const text = v as string;
        // (3 bytes a UTF-16 unit at most)
        if (text.length * 3 > utf8.length) utf8 = Buffer.alloc(Math.max(text.length * 3, utf8.length * 2));
        xxh64Halves(utf8, SEED_H, SEED_L, utf8.write(text, 0, 'utf8'));
        done(out);
      };
    default:
      return null;
  }
}

/**
 * Spark's XXH64 of one value of type `t` with seed 42 (what `xxhash64(v)` gives, as an unsigned
 * 64-bit BigInt): the hash approx_count_distinct's registers are chosen by (hll.ts).
 */
export function sparkXxHash64(t: SqlType): (v: unknown) => bigint {
  const fn = hashInto(XXH64, t);
  return (v) => fn(v, 42n);
}
