/**
 * Hash functions: md5, sha1, sha2 (node:crypto) and crc32 over a STRING's UTF-8 bytes, as Spark
 * over the BINARY a STRING is implicitly cast to; and Spark's `hash` (Murmur3 x86 32-bit, seed 42)
 * and `xxhash64` (XXH64, seed 42) over its own form of each type (Spark's HashExpression, in
 * spark-hashes.ts); a null leaves the seed as it is.
 */
import { createHash } from 'node:crypto';
import type { CallCtx, FunctionDef } from './analyze';
import { call, def, int, str } from './fn-util';
import { strict, type Typed } from './typed';
import { INT, LONG, type SqlType, STRING, typeName } from './types';
import { type Hasher, hashInto, MURMUR3, XXH64 } from './spark-hashes';
import { longValue } from './values';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, java.util.zip.CRC32) of bytes, as an unsigned number. */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The BINARY argument of md5, sha1, sha2 and crc32: sluice has no BINARY type, so a STRING (its UTF-8
 * bytes, as Spark's implicit cast) or a NULL. Spark's ANSI coercion casts nothing else to BINARY (a
 * number, a BOOLEAN, a DATE or a TIMESTAMP is UNEXPECTED_INPUT_TYPE): sluice refuses them alike.
 */
function bytesArg(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type === 'STRING' || a.type.type === 'NULL') return str(c, a, i);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `argument ${i + 1} of ${c.name} requires the "BINARY" type, however ${a.sql} has the type "${typeName(a.type)}"; cast it to STRING first to hash its text`,
    c.pos,
  );
}

function digest(alg: string): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [bytesArg(c, a, 0)],
      strict((s) =>
        createHash(alg)
          .update(s as string, 'utf8')
          .digest('hex'),
      ),
    ),
  );
}

/** The node:crypto algorithm of sha2's bit length (0 is 256); null for another length, which Spark answers with null. */
function sha2Algorithm(bits: unknown): string | null {
  return bits === 0 || bits === 256 ? 'sha256' : bits === 224 ? 'sha224' : bits === 384 ? 'sha384' : bits === 512 ? 'sha512' : null;
}

function sha2(args: readonly Typed[], c: CallCtx): Typed {
  // the bit length may be a column: Spark evaluates it per row
  return call(
    c,
    STRING,
    [bytesArg(c, args[0], 0), int(c, args[1], 1)],
    strict((s, bits) => {
      const alg = sha2Algorithm(bits);
      return alg === null
        ? null
        : createHash(alg)
            .update(s as string, 'utf8')
            .digest('hex');
    }),
  );
}

/** A hash family over Spark's encodings: a 4-byte int, an 8-byte long, bytes. */
function sparkHash<H>(h: Hasher<H>, seed: H, out: (x: H) => unknown, type: SqlType): FunctionDef {
  return def(1, Number.POSITIVE_INFINITY, (args, c) => {
    for (const a of args) {
      if (a.type.type === 'INTERVAL') {
        throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${c.name} cannot hash "${typeName(a.type)}"`, c.pos);
      }
    }
    const fns = args.map((a) => hashInto(h, a.type));
    return call(c, type, args, (evs) => (row) => {
      let s = seed;
      for (let i = 0; i < evs.length; i++) {
        const v = evs[i](row);
        if (v != null) s = fns[i](v, s);
      }
      return out(s);
    });
  });
}

export const HASH_FUNCTIONS: Record<string, FunctionDef> = {
  md5: digest('md5'),
  sha1: digest('sha1'),
  sha: digest('sha1'),
  sha2: def(2, 2, sha2),
  hash: sparkHash(MURMUR3, 42, (x) => x, INT),
  xxhash64: sparkHash(XXH64, 42n, (x) => longValue(BigInt.asIntN(64, x)), LONG),
  crc32: def(1, 1, ([a], c) =>
    call(
      c,
      LONG,
      [bytesArg(c, a, 0)],
      strict((s) => crc32(Buffer.from(s as string, 'utf8'))),
    ),
  ),
};
