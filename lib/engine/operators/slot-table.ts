/**
 * The leaf level of the aggregation's trie: a grouping value to its group's slot (a small
 * integer). Strings, the usual last grouping key, go into an open-addressing table of their own;
 * any other value (null, a number, a boolean, a long string) into a Map.
 *
 * Why not a Map for the strings too: a row's key is a string the parser has just made, and a Map
 * looks it up by hashing it natively and then comparing it with each key of the bucket's chain,
 * which loads those key strings (a cache miss each, over tables of 10k+ keys). Here each entry's
 * full hash sits next to its slot in one Int32Array (8 bytes an entry, up to three quarters full),
 * so a probe reads one cache line and only the key whose hash matches is loaded, to confirm it.
 * A lookup of a fresh 11-character key among 10,000 takes about 105 ns against 135 ns for a Map
 * (a micro-benchmark on the development machine), and the bench's engine runs faster by more than
 * that, as the tables stay smaller than a Map's.
 *
 * PERFORMANCE TRICK, kept while issue 13's measurement is open (figures from a shared, noisy
 * 2-core machine): the engine section of `npm run bench -- --only engine` gave 1.14x the JSON.parse
 * floor with it, the numeric slots and SmallCache, 0.70x with all three removed, 0.97x with only
 * this table replaced by a Map (0.76x without only the numeric slots, 0.86x without only
 * SmallCache); an engine-CPU A/B put this table's share at +15% CPU. Remove it only with a
 * benchmark run that cannot tell it from noise.
 */

/** Strings longer than this go to the Map (hashing them here would cost more than it saves). */
const MAX_HASHED_LENGTH = 64;

const EMPTY = -1;
const DELETED = -2;

/** A seed per process, so that which keys collide is not known in advance. */
const SEED = (Math.random() * 0x7fffffff) | 0;

function hashString(s: string): number {
  let h = SEED ^ s.length;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  // finalizer: spreads the last characters' bits into the low bits the mask keeps
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

export class SlotTable {
  /** Entry i: its key at keys[i]; its hash at meta[2i] and its slot (EMPTY, DELETED or >= 0) at meta[2i + 1]. */
  private keys: Array<string | undefined>;
  private meta: Int32Array;
  private mask: number;
  /** Entries that are not EMPTY (live and deleted). */
  private used = 0;
  private strings = 0;
  private other: Map<unknown, number> | null = null;

  constructor(capacity = 16) {
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.meta = new Int32Array(2 * capacity);
    for (let i = 1; i < this.meta.length; i += 2) this.meta[i] = EMPTY;
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.strings + (this.other === null ? 0 : this.other.size);
  }

  get(key: unknown): number | undefined {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.get(key);
    const h = hashString(key);
    const { meta, keys, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = meta[2 * i + 1];
      if (s === EMPTY) return undefined;
      if (meta[2 * i] === h && s >= 0 && keys[i] === key) return s;
    }
  }

  /** Sets the slot of a key that is not in the table. */
  set(key: unknown, slot: number): void {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) {
      (this.other ??= new Map()).set(key, slot);
      return;
    }
    // at most three quarters full, deleted entries included
    if ((this.used + 1) * 4 > (this.mask + 1) * 3) this.rehash(this.strings + 1);
    const h = hashString(key);
    const { meta, mask } = this;
    let i = h & mask;
    while (meta[2 * i + 1] >= 0) i = (i + 1) & mask;
    if (meta[2 * i + 1] === EMPTY) this.used++;
    this.keys[i] = key;
    meta[2 * i] = h;
    meta[2 * i + 1] = slot;
    this.strings++;
  }

  delete(key: unknown): boolean {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.delete(key) ?? false;
    const h = hashString(key);
    const { meta, keys, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = meta[2 * i + 1];
      if (s === EMPTY) return false;
      if (meta[2 * i] === h && s >= 0 && keys[i] === key) {
        meta[2 * i + 1] = DELETED;
        keys[i] = undefined;
        this.strings--;
        return true;
      }
    }
  }

  /** Rebuilds the table for `live` keys, at most half full (drops deleted entries; grows when it must). */
  private rehash(live: number): void {
    let capacity = 16;
    while (live * 2 > capacity) capacity *= 2;
    const { keys, meta } = this;
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.meta = new Int32Array(2 * capacity);
    for (let i = 1; i < this.meta.length; i += 2) this.meta[i] = EMPTY;
    this.mask = capacity - 1;
    this.used = 0;
    for (let j = 0; j < keys.length; j++) {
      const s = meta[2 * j + 1];
      if (s < 0) continue;
      const h = meta[2 * j];
      let i = h & this.mask;
      while (this.meta[2 * i + 1] !== EMPTY) i = (i + 1) & this.mask;
      this.keys[i] = keys[j];
      this.meta[2 * i] = h;
      this.meta[2 * i + 1] = s;
      this.used++;
    }
  }
}
