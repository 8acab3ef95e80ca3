/**
 * The leaf level of the aggregation's trie: a grouping value to its group's slot (a small
 * integer). Strings, the usual last grouping key, go into an open-addressing table of their own;
 * any other value (null, a number, a boolean, a long string) into a Map.
 *
 * Why not a Map for the strings too: a row's key is a string the parser has just made, and a Map
 * looks it up by hashing it natively and then comparing it with each key of the bucket's chain,
 * which loads those key strings (a cache miss each, over tables of 10k+ keys). Here the full hash
 * of each key is kept next to its slot in an Int32Array, so only the key whose hash matches is
 * loaded, to confirm it. In the bench's engine section this is most of what a row's group lookup
 * costs.
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
  /** Entry i: its key, the key's hash, and its slot (EMPTY, DELETED or >= 0). */
  private keys: Array<string | undefined>;
  private hashes: Int32Array;
  private slots: Int32Array;
  private mask: number;
  /** Entries that are not EMPTY (live and deleted). */
  private used = 0;
  private strings = 0;
  private other: Map<unknown, number> | null = null;

  constructor(capacity = 16) {
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.strings + (this.other === null ? 0 : this.other.size);
  }

  get(key: unknown): number | undefined {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.get(key);
    const h = hashString(key);
    const { hashes, slots, keys, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === EMPTY) return undefined;
      if (s >= 0 && hashes[i] === h && keys[i] === key) return s;
    }
  }

  /** Sets the slot of a key that is not in the table. */
  set(key: unknown, slot: number): void {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) {
      (this.other ??= new Map()).set(key, slot);
      return;
    }
    // at most half full, deleted entries included: probes stay short
    if ((this.used + 1) * 2 > this.slots.length) this.rehash(this.strings + 1);
    const h = hashString(key);
    const { slots, mask } = this;
    let i = h & mask;
    while (slots[i] >= 0) i = (i + 1) & mask;
    if (slots[i] === EMPTY) this.used++;
    this.keys[i] = key;
    this.hashes[i] = h;
    slots[i] = slot;
    this.strings++;
  }

  delete(key: unknown): boolean {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.delete(key) ?? false;
    const h = hashString(key);
    const { hashes, slots, keys, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === EMPTY) return false;
      if (s >= 0 && hashes[i] === h && keys[i] === key) {
        slots[i] = DELETED;
        keys[i] = undefined;
        this.strings--;
        return true;
      }
    }
  }

  /** Rebuilds the table for `live` keys (drops deleted entries; grows when it must). */
  private rehash(live: number): void {
    let capacity = this.slots.length;
    while (live * 2 > capacity) capacity *= 2;
    if (live * 4 > capacity) capacity *= 2; // room to grow before the next rebuild
    const { keys, hashes, slots } = this;
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.slots = new Int32Array(capacity).fill(EMPTY);
    this.mask = capacity - 1;
    this.used = 0;
    for (let j = 0; j < slots.length; j++) {
      if (slots[j] < 0) continue;
      let i = hashes[j] & this.mask;
      while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
      this.keys[i] = keys[j];
      this.hashes[i] = hashes[j];
      this.slots[i] = slots[j];
      this.used++;
    }
  }
}
