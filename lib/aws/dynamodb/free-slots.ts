/**
 * The free-slot bookkeeping of DynamoDbStateStore's commits (state-commit.ts writes them; the
 * rules are in state-store.ts). The page items a new head stops naming become free slots of its
 * manifest; a later commit of the slice writes its new pages into them first (a conditional
 * PutItem, see putIntoSlot in state-slices.ts), and keeps at most FREE_SLOTS_PER_PAGE of them per
 * live page: the rest are deleted. Pages an attempt that died left under its own keys (strays)
 * become free slots too, once the next commit of the slice has looked them up.
 */
import type { Item } from './requests';
import { type FreeSlot, type Head, type Manifest, type ManifestRecord, type ManifestRef, type SliceKeys, slotOf } from './state-layout';
import { refId } from './state-slices';

/**
 * Free slots a slice keeps per live page. A window's pages are freed at once when it closes, and
 * written again as the next windows fill over the next commits: at the reference workload a batch
 * needs up to twice the pages that stay live after the one before it evicted. Bounded by the live
 * state, never by time: storage of at most twice the live pages more.
 */
const FREE_SLOTS_PER_PAGE = 2;

/** What a head write leaves unnamed: the manifests (deleted after it) and the page items (free slots). */
export interface Retired {
  readonly manifests: Item[];
  readonly slots: FreeSlot[];
}

/** The slots (item keys) the pages of these manifests are stored in. */
export function slotsNamedBy(manifests: Iterable<Manifest>, into: Set<string> = new Set()): Set<string> {
  for (const m of manifests) for (const list of m.values()) for (const p of list) into.add(slotOf(p));
  return into;
}

/**
 * What the head names (cur, prev and their pages) that a head naming `prev` (whose manifest is
 * `prevManifest`) and a new manifest `next` does not. A manifest of it found missing (`load`
 * gives null: removed by hand, or by the TTL of items an earlier sluice wrote) retires nothing of
 * its own: its pages, if any are left, stay (only storage).
 */
export async function retiredBy(
  keys: SliceKeys,
  head: Head | null,
  prev: ManifestRef | null,
  prevManifest: Manifest,
  next: Manifest,
  load: (ref: ManifestRef) => Promise<ManifestRecord | null>,
): Promise<Retired> {
  const manifests: Item[] = [];
  if (head === null) return { manifests, slots: [] };
  const kept = new Set<string>();
  for (const m of [prevManifest, next]) for (const list of m.values()) for (const p of list) kept.add(p.ref);
  const gone = new Map<string, FreeSlot>();
  for (const old of [head.cur, head.prev]) {
    if (old === null || (prev !== null && refId(old) === refId(prev))) continue;
    for (let i = 0; i < old.c; i++) manifests.push(keys.manifestChunk(old, i));
    const record = await load(old);
    if (record === null) continue;
    for (const list of record.pages.values()) for (const p of list) if (!kept.has(p.ref)) gone.set(slotOf(p), { slot: slotOf(p), content: p.ref });
    // The free slots of a head's cur that is dropped (an attempt of this batch that wrote its
    // head): the manifest built upon does not list those its head write freed. (A dropped prev's
    // were handed on by the commit after it.)
    if (old === head.cur) for (const f of record.free) if (!gone.has(f.slot)) gone.set(f.slot, f);
  }
  return { manifests, slots: [...gone.values()] };
}

/** The new pages in order, the first ones into the free slots in order: what goes where, and the slots left. */
export function assignSlots<P>(pages: readonly P[], slots: readonly FreeSlot[]): { into: Array<{ page: P; slot: FreeSlot }>; fresh: P[]; untaken: FreeSlot[] } {
  const take = Math.min(pages.length, slots.length);
  return {
    into: pages.slice(0, take).map((page, i) => ({ page, slot: slots[i] })),
    fresh: pages.slice(take),
    untaken: slots.slice(take),
  };
}

/**
 * The free slots a new manifest naming `livePages` pages keeps: `free` without repeats and without
 * any slot in `named` (a slot the new manifest or the one before it names is no free slot,
 * whatever a list said), up to FREE_SLOTS_PER_PAGE times `livePages` (an emptied slice keeps
 * none); `excess`, the rest, is deleted.
 */
export function keptFreeSlots(free: readonly FreeSlot[], named: ReadonlySet<string>, livePages: number): { kept: FreeSlot[]; excess: FreeSlot[] } {
  const bySlot = new Map<string, FreeSlot>();
  for (const f of free) if (!bySlot.has(f.slot) && !named.has(f.slot)) bySlot.set(f.slot, f);
  const all = [...bySlot.values()];
  const cap = FREE_SLOTS_PER_PAGE * livePages;
  return { kept: all.slice(0, cap), excess: all.slice(cap) };
}

/**
 * The look-up of stray pages, per slice (by sliceId) and store: done at the first commit of a
 * slice by this store, and not again until a commit of it fails. What it found is kept until the
 * slice's next head write: a plan made again lists the same.
 */
export class StrayPages {
  /** Slices this store looked for stray pages in, or whose head it wrote since. */
  private readonly swept = new Set<string>();
  /** What the look-up found, by slice, until the slice's next head write. */
  private readonly found = new Map<string, FreeSlot[]>();

  /** Runs `lookUp` for this slice unless it was done (or the slice's head written) since the last failure. */
  async lookUpOnce(slice: string, lookUp: () => Promise<FreeSlot[]>): Promise<void> {
    if (this.swept.has(slice)) return;
    this.swept.add(slice);
    this.found.set(slice, await lookUp());
  }

  /** What the look-up of this slice found and no head write has superseded. */
  of(slice: string): readonly FreeSlot[] {
    return this.found.get(slice) ?? [];
  }

  /** A commit of the slice failed: what it wrote may be left behind, so its next commit looks again. */
  forget(slice: string): void {
    this.swept.delete(slice);
  }

  /** This store wrote the slice's head: its next commit knows what it left, and need not look. */
  headWritten(slice: string): void {
    this.swept.add(slice);
    this.found.delete(slice);
  }
}
