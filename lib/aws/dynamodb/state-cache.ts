/**
 * The immutable part of what a DynamoDbStateStore reads, kept in memory: manifests and page
 * entries, by slice and ref. A ref is never reused (it names the version and the attempt that
 * wrote it), so what is cached under it is what any later read of it returns: several stores may
 * share one cache. That is how a partitioned run's task Lambda (or worker thread) keeps what one
 * task read or wrote for the next task on the same container, each task on a store of its own
 * (a store's heads, which change, are never shared: every store reads them afresh).
 */
import type { ManifestRecord, PageEntry } from './state-layout';

export class DynamoDbStateCache {
  /** Manifests by slice and ref, at most two per slice (those a commit and a replay read). */
  private readonly manifests = new Map<string, ManifestRecord>();
  /** Page entries by slice and page ref, oldest first. */
  private readonly pages = new Map<string, PageEntry[]>();
  private cachedEntries = 0;

  /** @param maxEntries page entries kept at most (the oldest go first) */
  constructor(readonly maxEntries = 250_000) {}

  manifest(slice: string, ref: string): ManifestRecord | undefined {
    return this.manifests.get(`${slice}@${ref}`);
  }

  rememberManifest(slice: string, ref: string, record: ManifestRecord): void {
    const prefix = `${slice}@`;
    const ofSlice = [...this.manifests.keys()].filter((k) => k.startsWith(prefix));
    // keep the newest of this slice: a commit reads N-1's, a replay N's
    for (const k of ofSlice.slice(0, Math.max(0, ofSlice.length - 1))) this.manifests.delete(k);
    this.manifests.set(`${slice}@${ref}`, record);
  }

  /** The entries of a page, and it counts as the most recently used. */
  page(slice: string, ref: string): PageEntry[] | undefined {
    const key = `${slice}@${ref}`;
    const hit = this.pages.get(key);
    if (hit) {
      this.pages.delete(key);
      this.pages.set(key, hit);
    }
    return hit;
  }

  rememberPage(slice: string, ref: string, entries: PageEntry[]): void {
    const key = `${slice}@${ref}`;
    if (this.pages.has(key)) return;
    this.pages.set(key, entries);
    this.cachedEntries += entries.length;
    while (this.cachedEntries > this.maxEntries && this.pages.size > 0) {
      const [oldest, dropped] = this.pages.entries().next().value as [string, PageEntry[]];
      this.pages.delete(oldest);
      this.cachedEntries -= dropped.length;
    }
  }
}
