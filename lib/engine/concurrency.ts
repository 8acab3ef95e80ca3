/** Running promises a few at a time: the AWS adapters' requests, a partitioned run's shuffle reads and writes. */

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
