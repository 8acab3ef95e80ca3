/** Small helpers shared by the AWS adapters: concurrency, stable hashing, ordering. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `fn` over `xs`, at most `limit` at a time (the engine's, which a partitioned run's tasks use too). */
export { mapLimit } from '../../engine/concurrency';

/** FNV-1a, 32 bits, over UTF-16 code units: stable across processes and releases (shard choice). */
export { fnv1a } from '../../engine/hash';

/** Code-unit order of two strings, for sort(). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
