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

// XXH64 (64-bit arithmetic in BigInt, wrapped to unsigned 64 bits)
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const u64 = (x: bigint) => BigInt.asUintN(64, x);
const rotl = (x: bigint, r: bigint) => u64((x << r) | (x >> (64n - r)));
function round64(acc: bigint, lane: bigint): bigint {
  return u64(rotl(u64(acc + u64(lane * P2)), 31n) * P1);
}
function merge64(h: bigint, v: bigint): bigint {
  return u64(u64((h ^ round64(0n, v)) * P1) + P4);
}
function fmix64(h: bigint): bigint {
  let a = h ^ (h >> 33n);
  a = u64(a * P2);
  a ^= a >> 29n;
  a = u64(a * P3);
  return a ^ (a >> 32n);
}
function xxh64(b: Uint8Array, seed: bigint): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const n = b.length;
  let i = 0;
  let h: bigint;
  if (n >= 32) {
    let v1 = u64(seed + P1 + P2);
    let v2 = u64(seed + P2);
    let v3 = seed;
    let v4 = u64(seed - P1);
    for (; i <= n - 32; i += 32) {
      v1 = round64(v1, view.getBigUint64(i, true));
      v2 = round64(v2, view.getBigUint64(i + 8, true));
      v3 = round64(v3, view.getBigUint64(i + 16, true));
      v4 = round64(v4, view.getBigUint64(i + 24, true));
    }
    h = u64(rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n));
    h = merge64(merge64(merge64(merge64(h, v1), v2), v3), v4);
  } else h = u64(seed + P5);
  h = u64(h + BigInt(n));
  for (; i + 8 <= n; i += 8) h = u64(rotl(h ^ round64(0n, view.getBigUint64(i, true)), 27n) * P1 + P4);
  if (i + 4 <= n) {
    h = u64(rotl(h ^ u64(BigInt(view.getUint32(i, true)) * P1), 23n) * P2 + P3);
    i += 4;
  }
  for (; i < n; i++) h = u64(rotl(h ^ u64(BigInt(b[i]) * P5), 11n) * P1);
  return fmix64(h);
}
export const XXH64: Hasher<bigint> = {
  int: (v, seed) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, v, true);
    return xxh64(b, seed);
  },
  long: (v, seed) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigInt64(0, BigInt.asIntN(64, v), true);
    return xxh64(b, seed);
  },
  bytes: xxh64,
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

/**
 * Spark's XXH64 of one value of type `t` with seed 42 (what `xxhash64(v)` gives, as an unsigned
 * 64-bit BigInt): the hash approx_count_distinct's registers are chosen by (hll.ts).
 */
export function sparkXxHash64(t: SqlType): (v: unknown) => bigint {
  const fn = hashInto(XXH64, t);
  return (v) => fn(v, 42n);
}
