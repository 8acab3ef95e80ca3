/**
 * Hash functions: md5, sha1, sha2 (node:crypto) and crc32 over a STRING's UTF-8 bytes, as Spark
 * over the BINARY a STRING is implicitly cast to. Spark's `hash` (Murmur3) and `xxhash64` hash
 * each type's binary form in Spark's own way and are not supported yet.
 */
import { createHash } from 'node:crypto';
import type { CallCtx, FunctionDef } from './analyze';
import { call, constantArg, def, str } from './fn-util';
import { strict, type Typed } from './typed';
import { LONG, STRING } from './types';

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

function digest(alg: string): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) =>
        createHash(alg)
          .update(s as string, 'utf8')
          .digest('hex'),
      ),
    ),
  );
}

function sha2(args: readonly Typed[], c: CallCtx): Typed {
  const bits = constantArg(c, args[1], 1, 'the bit length: 224, 256, 384 or 512 (0 is 256)');
  const alg = bits === 0 || bits === 256 ? 'sha256' : bits === 224 ? 'sha224' : bits === 384 ? 'sha384' : bits === 512 ? 'sha512' : null;
  // Spark returns null for another bit length
  return call(
    c,
    STRING,
    [str(c, args[0], 0)],
    strict((s) =>
      alg === null
        ? null
        : createHash(alg)
            .update(s as string, 'utf8')
            .digest('hex'),
    ),
  );
}

export const HASH_FUNCTIONS: Record<string, FunctionDef> = {
  md5: digest('md5'),
  sha1: digest('sha1'),
  sha: digest('sha1'),
  sha2: def(2, 2, sha2),
  crc32: def(1, 1, ([a], c) =>
    call(
      c,
      LONG,
      [str(c, a, 0)],
      strict((s) => crc32(Buffer.from(s as string, 'utf8'))),
    ),
  ),
};
