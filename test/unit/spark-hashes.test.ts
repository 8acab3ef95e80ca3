/**
 * XXH64 as lib/engine/expr/spark-hashes.ts computes it, on 32-bit halves: the same words as a
 * plain BigInt XXH64 written here from the algorithm's definition (stripes of 32 bytes in four
 * accumulators, then 8-byte lanes, a 4-byte word and single bytes, then the avalanche), and the
 * published test vectors of the reference implementation.
 */
import { sparkXxHash64, sparkXxHash64Into, XXH64 } from '../../lib/engine/expr/spark-hashes';
import type { SqlType } from '../../lib/engine/expr/types';

const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const w = (x: bigint) => BigInt.asUintN(64, x);
const rot = (x: bigint, r: bigint) => w((x << r) | (x >> (64n - r)));
const rnd = (acc: bigint, lane: bigint) => w(rot(w(acc + w(lane * P2)), 31n) * P1);
const lane64 = (b: Uint8Array, i: number) => new DataView(b.buffer, b.byteOffset).getBigUint64(i, true);

function reference(b: Uint8Array, seed: bigint): bigint {
  const n = b.length;
  let i = 0;
  let h: bigint;
  if (n >= 32) {
    const v = [w(seed + P1 + P2), w(seed + P2), seed, w(seed - P1)];
    for (; i <= n - 32; i += 32) for (let k = 0; k < 4; k++) v[k] = rnd(v[k], lane64(b, i + 8 * k));
    h = w(rot(v[0], 1n) + rot(v[1], 7n) + rot(v[2], 12n) + rot(v[3], 18n));
    for (const x of v) h = w(w((h ^ rnd(0n, x)) * P1) + P4);
  } else h = w(seed + P5);
  h = w(h + BigInt(n));
  for (; i + 8 <= n; i += 8) h = w(rot(h ^ rnd(0n, lane64(b, i)), 27n) * P1 + P4);
  if (i + 4 <= n) {
    h = w(rot(h ^ w(BigInt(new DataView(b.buffer, b.byteOffset).getUint32(i, true)) * P1), 23n) * P2 + P3);
    i += 4;
  }
  for (; i < n; i++) h = w(rot(h ^ w(BigInt(b[i]) * P5), 11n) * P1);
  h = w((h ^ (h >> 33n)) * P2);
  h = w((h ^ (h >> 29n)) * P3);
  return h ^ (h >> 32n);
}

/** A deterministic generator (an LCG), so a failure reproduces. */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
}

describe('XXH64 on 32-bit halves', () => {
  it("gives the reference implementation's test vectors", () => {
    const text = (t: string) => new TextEncoder().encode(t);
    expect(XXH64.bytes(text(''), 0n)).toBe(0xef46db3751d8e999n);
    expect(XXH64.bytes(text('a'), 0n)).toBe(0xd24ec4f1a98c6e5bn);
    expect(XXH64.bytes(text('abc'), 0n)).toBe(0x44bc2cf5ad770999n);
  });

  it('equals a BigInt XXH64 on bytes of every length from 0 to 100, with any seed', () => {
    const next = lcg(7);
    for (let n = 0; n <= 100; n++) {
      for (let t = 0; t < 5; t++) {
        const b = new Uint8Array(n).map(() => next() & 0xff);
        const seed = (BigInt(next()) << 32n) | BigInt(next());
        expect(XXH64.bytes(b, seed)).toBe(reference(b, seed));
      }
    }
  });

  it("equals it on an INT's 4 and a BIGINT's 8 little-endian bytes, negative and extreme values too", () => {
    const next = lcg(11);
    const ints = [0, 1, -1, 2147483647, -2147483648, ...Array.from({ length: 50 }, () => next() | 0)];
    for (const v of ints) {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setInt32(0, v, true);
      expect(XXH64.int(v, 42n)).toBe(reference(b, 42n));
    }
    const longs = [0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), ...Array.from({ length: 50 }, () => BigInt.asIntN(64, (BigInt(next()) << 32n) | BigInt(next())))];
    for (const v of longs) {
      const b = new Uint8Array(8);
      new DataView(b.buffer).setBigInt64(0, v, true);
      expect(XXH64.long(v, 42n)).toBe(reference(b, 42n));
    }
  });
});

describe("a value's XXH64 without BigInt (approx_count_distinct's)", () => {
  const cases: Array<[SqlType, unknown[]]> = [
    [{ type: 'STRING' }, ['', 'a', 'héllo wörld', '😀 emoji', 'x'.repeat(300), 'é'.repeat(200)]],
    [{ type: 'INT' }, [0, 1, -1, 2147483647, -2147483648]],
    [{ type: 'INT', bits: 8 }, [127, -128]],
    [{ type: 'BOOLEAN' }, [true, false]],
    [{ type: 'DATE' }, ['2024-01-02', '1969-12-31', '0001-01-01']],
    [{ type: 'LONG' }, [0, -1, 9007199254740991, -9007199254740991, 4294967296, -4294967297, 2n ** 63n - 1n, -(2n ** 63n)]],
    [{ type: 'TIMESTAMP' }, [1704189600123456, -1, 0]],
    [{ type: 'DOUBLE' }, [0, -0, Number.NaN, 1.5, -1e300, Number.POSITIVE_INFINITY, 5e-324]],
    [{ type: 'DOUBLE', binary32: true }, [0, -0, Number.NaN, 1.5, -3.25]],
    [{ type: 'DECIMAL', precision: 10, scale: 2 }, ['123.45', '-0.01', '0.00']],
  ];
  for (const [t, values] of cases) {
    it(`equals the BigInt walk's for ${JSON.stringify(t)}`, () => {
      const into = sparkXxHash64Into(t)!;
      const big = sparkXxHash64(t);
      const out = new Uint32Array(2);
      for (const v of values) {
        into(v, out);
        expect((BigInt(out[0]) << 32n) | BigInt(out[1])).toBe(big(v));
      }
    });
  }

  it('leaves nested types and wide DECIMALs to the BigInt walk', () => {
    expect(sparkXxHash64Into({ type: 'ARRAY', element: { type: 'INT' } })).toBeNull();
    expect(sparkXxHash64Into({ type: 'DECIMAL', precision: 38, scale: 2 })).toBeNull();
  });
});
