/**
 * The leaf level of the aggregation's trie: a grouping value to its group's slot (a small
 * integer). Strings, the usual last grouping key, go into an open-addressing table of their own;
 * any other value (null, a number, a boolean, a long string) into a Map.
 *
 * Why not a Map for the strings too: a row's key is a string the parser has just made, and a Map
 * looks it up by hashing it natively and then comparing it with each key of the bucket's chain,
 * which loads those key strings (a cache miss each, over tables of 10k+ keys). Here an entry is
 * 32 bytes of one Int32Array: the key's full hash, its slot and, for a key of at most 20
 * characters below U+0100 (user ids, country codes...), its length and characters, packed four
 * to a word. A probe reads one cache line and compares words; only a longer or wider key is
 * loaded from the keys array, to confirm it.
 *
 * PERFORMANCE TRICK (STYLE: one marked module with the benchmark that justifies it): see the
 * figures in README.md's Benchmark section (issue 13's A/B on the engine section, the shipped
 * code against a copy with a Map at the leaves). Remove it only with a benchmark run that cannot
 * tell it from noise.
 */

/** Strings longer than this go to the Map (hashing them here would cost more than it saves). */
const MAX_HASHED_LENGTH = 64;

const EMPTY = -1;
const DELETED = -2;

/** Int32 words per entry: hash, slot, inline length (-1: the key is not inline), packed characters. */
const STRIDE = 8;
const HASH = 0;
const SLOT = 1;
const LENGTH = 2;
const CHARS = 3;
/** Longest key kept inline: four one-byte characters in each of the entry's last five words. */
const INLINE_CHARS = 4 * (STRIDE - CHARS);

/** A seed per process, so that which keys collide is not known in advance. */
const SEED = (Math.random() * 0x7fffffff) | 0;

/** The characters of the key last hashed, four to a word (when `packable`), and whether it is kept inline. */
const packed = new Int32Array(STRIDE - CHARS);
let packable = false;

/** The hash of `s`; with it, its characters in `packed` and whether they fit (`packable`). */
function hashAndPack(s: string): number {
  const n = s.length;
  let h = SEED ^ n;
  if (n <= INLINE_CHARS) {
    for (let w = 0; w < packed.length; w++) packed[w] = 0;
    let high = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      h = Math.imul(h ^ c, 0x01000193);
      high |= c;
      packed[i >> 2] |= c << ((i & 3) << 3);
    }
    packable = high < 0x100;
  } else {
    for (let i = 0; i < n; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    packable = false;
  }
  // finalizer: spreads the last characters' bits into the low bits the mask keeps
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

export class SlotTable {
  /** Entry i: its key at keys[i]; its words at meta[STRIDE * i ...] (slot: EMPTY, DELETED or >= 0). */
  private keys: Array<string | undefined>;
  private meta: Int32Array;
  private mask: number;
  /** Entries that are not EMPTY (live and deleted). */
  private used = 0;
  private strings = 0;
  private other: Map<unknown, number> | null = null;

  constructor(capacity = 16) {
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.meta = SlotTable.emptyMeta(capacity);
    this.mask = capacity - 1;
  }

  private static emptyMeta(capacity: number): Int32Array {
    const meta = new Int32Array(STRIDE * capacity);
    for (let at = SLOT; at < meta.length; at += STRIDE) meta[at] = EMPTY;
    return meta;
  }

  get size(): number {
    return this.strings + (this.other === null ? 0 : this.other.size);
  }

  /**
   * The entry of the string key just hashed (hash h, characters in `packed`), or -1. A key kept
   * inline matches on its words; one that is not, on the key itself (an inline entry and a key
   * that is not packable never hold the same string, and the other way round).
   */
  private find(key: string, h: number): number {
    const { meta, keys, mask } = this;
    const n = key.length;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const at = STRIDE * i;
      const s = meta[at + SLOT];
      if (s === EMPTY) return -1;
      if (s < 0 || meta[at + HASH] !== h) continue;
      if (packable) {
        if (
          meta[at + LENGTH] === n &&
          meta[at + CHARS] === packed[0] &&
          meta[at + CHARS + 1] === packed[1] &&
          meta[at + CHARS + 2] === packed[2] &&
          meta[at + CHARS + 3] === packed[3] &&
          meta[at + CHARS + 4] === packed[4]
        )
          return i;
      } else if (meta[at + LENGTH] === -1 && keys[i] === key) {
        return i;
      }
    }
  }

  get(key: unknown): number | undefined {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.get(key);
    const i = this.find(key, hashAndPack(key));
    return i < 0 ? undefined : this.meta[STRIDE * i + SLOT];
  }

  /** Sets the slot of a key that is not in the table. */
  set(key: unknown, slot: number): void {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) {
      (this.other ??= new Map()).set(key, slot);
      return;
    }
    // at most three quarters full, deleted entries included
    if ((this.used + 1) * 4 > (this.mask + 1) * 3) this.rehash(this.strings + 1);
    const h = hashAndPack(key);
    const { meta, mask } = this;
    let i = h & mask;
    while (meta[STRIDE * i + SLOT] >= 0) i = (i + 1) & mask;
    const at = STRIDE * i;
    if (meta[at + SLOT] === EMPTY) this.used++;
    this.keys[i] = key;
    meta[at + HASH] = h;
    meta[at + SLOT] = slot;
    meta[at + LENGTH] = packable ? key.length : -1;
    for (let w = 0; w < packed.length; w++) meta[at + CHARS + w] = packable ? packed[w] : 0;
    this.strings++;
  }

  delete(key: unknown): boolean {
    if (typeof key !== 'string' || key.length > MAX_HASHED_LENGTH) return this.other?.delete(key) ?? false;
    const i = this.find(key, hashAndPack(key));
    if (i < 0) return false;
    this.meta[STRIDE * i + SLOT] = DELETED;
    this.keys[i] = undefined;
    this.strings--;
    return true;
  }

  /** Rebuilds the table for `live` keys, at most half full (drops deleted entries; grows when it must). */
  private rehash(live: number): void {
    let capacity = 16;
    while (live * 2 > capacity) capacity *= 2;
    const { keys, meta } = this;
    this.keys = new Array<string | undefined>(capacity).fill(undefined);
    this.meta = SlotTable.emptyMeta(capacity);
    this.mask = capacity - 1;
    this.used = 0;
    for (let j = 0; j < keys.length; j++) {
      const from = STRIDE * j;
      if (meta[from + SLOT] < 0) continue;
      let i = meta[from + HASH] & this.mask;
      while (this.meta[STRIDE * i + SLOT] !== EMPTY) i = (i + 1) & this.mask;
      this.keys[i] = keys[j];
      this.meta.set(meta.subarray(from, from + STRIDE), STRIDE * i);
      this.used++;
    }
  }
}
