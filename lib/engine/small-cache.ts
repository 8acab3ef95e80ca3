/** Most entries a SmallCache holds before it starts over. */
const LIMIT = 4096;

/**
 * A Map of values that are dear to make and few at a time (the text of window bounds, a window's
 * grouping value), emptied when it reaches LIMIT entries, so that a long run does not grow it.
 */
export class SmallCache<K, V> extends Map<K, V> {
  /** Stores and returns `value`. */
  put(key: K, value: V): V {
    if (this.size >= LIMIT) this.clear();
    this.set(key, value);
    return value;
  }
}
