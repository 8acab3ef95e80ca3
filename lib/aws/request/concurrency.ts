/** Small helpers shared by the AWS adapters: concurrency, stable hashing, ordering. */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `fn` over `xs`, at most `limit` at a time, results in input order. After a failure no new call
 * starts, and the first error is thrown once the calls in flight have settled (no request
 * outlives the caller's operation).
 */
export async function mapLimit<T, R>(xs: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < xs.length && failure === null) {
      const i = next++;
      try {
        out[i] = await fn(xs[i]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, xs.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return out;
}

/** FNV-1a, 32 bits, over UTF-16 code units: stable across processes and releases (shard choice). */
export { fnv1a } from '../../engine/hash';

/** Code-unit order of two strings, for sort(). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
