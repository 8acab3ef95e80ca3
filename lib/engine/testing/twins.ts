/**
 * In-memory twins of the ports, for unit tests of the engine and the engine-only benchmark, one a
 * file: memory-checkpoint.ts, memory-state.ts, memory-source.ts, memory-sink.ts,
 * memory-dead-letters.ts, memory-lease.ts, memory-static-tables.ts, memory-shuffle.ts (and
 * counting-state-store.ts, a wrapper that records what a state store is asked). This file holds
 * what they share: the copies they hand back and the seed of their shuffled orders.
 *
 * They keep the same contracts as the AWS adapters (versioned state, write-once logs, replayable
 * source), so a unit test can crash a run and start a new executor over the same objects.
 *
 * They are as strict as the services where it matters, never kinder:
 * - the state store returns entries in an order shuffled per call (seeded: TWIN_SEED, set by
 *   SLUICE_TWIN_SEED to reproduce), refuses keys and items beyond DynamoDB's limits with the
 *   DynamoDB store's errors, and keeps tombstones with a `ttl` that `expireBefore(ms)` expires;
 * - the sink writes a batch in pieces (sorted rows, `pieceRows` a piece), tells
 *   `SinkContext.onPieceWritten` after each, and records every write, so a duplicate shows; a
 *   streamed batch (addBatchChunks) is written in pieces as its chunks come, each chunk recorded
 *   as received, and a replayed piece with other rows than the stored one fails loudly;
 * - the checkpoint keeps offsets and commits write-once as S3 with If-None-Match does (the first
 *   write stays), stores copies (JSON), and can make an entry unreadable.
 */
import { SluiceError } from '../errors';

/** What S3 would hand back: a copy through JSON, never the caller's object. */
export function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * The seed of the twins' shuffled orders in this process: SLUICE_TWIN_SEED when set (to reproduce
 * a failure; the test setup sets it for the whole run and prints it when a test fails), else random.
 */
export const TWIN_SEED: number = (() => {
  const text = process.env.SLUICE_TWIN_SEED;
  if (text !== undefined && text !== '') {
    if (!/^\d+$/.test(text))
      throw new SluiceError(`SLUICE_TWIN_SEED ${JSON.stringify(text)} is not a non-negative integer: set it to the seed a failing run printed, or unset it`);
    return Number(text) >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
})();

/** mulberry32: a small seeded PRNG (the twins' orders must reproduce from TWIN_SEED). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
