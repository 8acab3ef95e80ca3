/**
 * A Map of values that are dear to make and few at a time, emptied when it reaches LIMIT entries
 * so that a long run does not grow it. Used for what a batch makes once per group or output row
 * but that depends on the window alone: the ISO text of window bounds (rows.ts), the text of a
 * window in a state id and the [start, end] grouping value a window's groups share
 * (operators/aggregate.ts). A batch has thousands of groups and rows in a few windows.
 *
 * PERFORMANCE TRICK (STYLE: one marked module with the benchmark that justifies it). Issue 13
 * removed it; measured on `npm run bench -- --only engine` (shared 2-core machine, load 12-16):
 *   npm run bench -- --only engine (x JSON.parse, rate / CPU-time ratio): before issue 13 (9a90dd3)
 *   0.80x / 0.89x; after it (979d2e2) 0.72x; numeric slots alone back 0.64x; numeric slots and
 *   SmallCache back 0.52x: at load 11-16 on 2 cores the rate ratio is noise (the floor itself
 *   moved 141k-272k ev/s). Engine-only CPU seconds for the bench's 1M events (bench/engine-run.ts,
 *   two runs per process, processes interleaved): 9a90dd3 2.55-3.34 s; 979d2e2 3.33-3.83 s;
 *   979d2e2 + numeric slots + SmallCache 3.27-4.00 s (alone: not told from noise); all of it with
 *   the allocation-free state twin 2.74-3.57 s (8 runs) against 3.51-4.15 s for the twin alone
 *   without numeric slots and SmallCache (4 runs): the two together pay about 10-15% engine CPU.
 *   Each alone was not measured apart on this machine: an A/B of each is the open question.
 * Remove it only with a benchmark run that cannot tell it from noise.
 */

/** Most entries a SmallCache holds before it starts over. */
const LIMIT = 4096;

export class SmallCache<K, V> {
  private readonly entries = new Map<K, V>();

  /** The value kept for `key`, if any. */
  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Keeps and returns `value` (starting over first when LIMIT entries are kept). */
  put(key: K, value: V): V {
    if (this.entries.size >= LIMIT) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}
