/** How a partitioned run's read tasks share a batch's files (ReadOptions.split). */

/**
 * Split `index` of `count` of a batch's files (ReadOptions.split): contiguous groups in key order,
 * the first `files % count` one file longer, so that every file is in exactly one split.
 */
export function splitOf<T>(files: readonly T[], split: { readonly index: number; readonly count: number }): T[] {
  const base = Math.floor(files.length / split.count);
  const extra = files.length % split.count;
  const from = split.index * base + Math.min(split.index, extra);
  return files.slice(from, from + base + (split.index < extra ? 1 : 0));
}
