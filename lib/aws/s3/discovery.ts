/**
 * How the landing source finds candidate files: a small interface, so that the listing (here) and
 * a notification-based discovery (S3 events through SQS) plug into the same source. The source
 * decides which candidates are new (its seen files, seen-files.ts), logs each batch's files in the
 * checkpoint before reading them, and tells the discovery once a batch committed.
 *
 * ListingDiscovery, the default, keeps an empty run cheap on large prefixes (docs/sources.md
 * "Finding new files"):
 *
 *     prefix ≤ fullListingMaxObjects at the last full listing   ─▶ full listing (≤ 10 LISTs at 10^4)
 *     larger, backfill due (backfillIntervalMs since the last)   ─▶ full listing
 *     larger, otherwise                                          ─▶ LIST StartAfter = newest key
 *                                                                   + LIST the most recent folders whole
 *
 * The most recent folders: the folders (a key's path up to its last `/`) last in key order, which
 * for `dt=.../hour=...` and `yyyy/mm/dd/hh/` layouts are the latest, newest first, as many as
 * recentFoldersMaxLists LISTs cover by their object counts at their last listing (the newest
 * folder always, whatever its size). That is where an out-of-order key mostly lands (a late upload
 * into the previous hour, Firehose buffers finishing out of order); one into an older folder is
 * found by the next backfill.
 *
 * What it needs between runs (the last full listing's time and size, the newest key, the recent
 * folders and their object counts) is a hint in `sources/<i>/discovery`, overwritten when it
 * changes: losing it costs one full listing, never a file, because which files are new is decided
 * by the seen files, not by the listing.
 */
import { InvalidOptionError } from '../../engine/errors';
import { compareKeys, type S3Requests } from './requests';

/** A candidate file as found: key, stored size, ETag and S3's LastModified. */
export interface DiscoveredFile {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModifiedMs: number;
}

export interface DiscoveryStats {
  readonly lists: number;
  readonly fullListings: number;
  readonly incrementalListings: number;
  /** Notification mode: the SQS requests spent (sqs/notification-file-discovery.ts). */
  readonly sqs?: {
    readonly getQueueAttributes: number;
    readonly receiveMessage: number;
    readonly deleteMessageBatch: number;
    readonly changeMessageVisibilityBatch: number;
  };
}

export interface FileDiscovery {
  /**
   * The candidate files now (any order; the source sorts them). `complete` says whether every
   * file under the prefix was listed (a full listing): the source checks the prefix's layout only then.
   */
  discover(): Promise<{ files: DiscoveredFile[]; complete: boolean }>;
  /** The batch that read these keys committed (e.g. delete their notifications). Optional. */
  committed?(keys: readonly string[]): Promise<void>;
  /**
   * The source will not read these candidates (seen already, outside the listing rules, older
   * than maxFileAge, gone before they were logged): e.g. delete their notifications. Optional.
   */
  forget?(keys: readonly string[]): Promise<void>;
  /**
   * Candidates were announced, not listed, so an object may be gone (deleted after its
   * notification): the source HEADs each file of a batch before logging it, and drops (and
   * forgets) the missing ones. A listing needs no such check.
   */
  readonly announced?: boolean;
  stats(): DiscoveryStats;
}

/** Where a discovery keeps its hint between runs (the source gives its checkpoint's source log). */
interface HintStore {
  read(): Promise<string | null>;
  write(body: string): Promise<void>;
}

export interface ListingDiscoveryOptions {
  readonly s3: S3Requests;
  readonly bucket: string;
  /** The prefix's root, with its trailing slash ('' for a bucket). */
  readonly root: string;
  readonly pageSize: number;
  readonly hints: HintStore;
  /** A prefix up to this many objects is listed whole every run. @default 10000 */
  readonly fullListingMaxObjects?: number;
  /** A larger prefix is listed whole at most this often (Auto Loader's backfillInterval). @default 1 hour */
  readonly backfillIntervalMs?: number;
  /**
   * LISTs an incremental listing spends listing the most recent folders whole (by their object
   * counts at their last listing; the newest folder is listed whatever its size). @default 8
   */
  readonly recentFoldersMaxLists?: number;
  readonly now?: () => number;
}

interface ListingHint {
  readonly version: 1;
  readonly lastFullMs: number;
  readonly objects: number;
  readonly newestKey: string | null;
  /** The last folders in key order and their objects at their last listing, in key order (absent in an older hint). */
  readonly folders?: ReadonlyArray<readonly [string, number]>;
}

const DEFAULT_FULL_LISTING_MAX = 10_000;
const DEFAULT_BACKFILL_MS = 60 * 60_000;
const DEFAULT_RECENT_FOLDERS_MAX_LISTS = 8;
/** Recent folders the hint remembers (more than the LIST budget reaches on small folders). */
const HINT_FOLDERS = 32;

export class ListingDiscovery implements FileDiscovery {
  private readonly o: ListingDiscoveryOptions;
  private readonly fullMax: number;
  private readonly backfillMs: number;
  private readonly recentMaxLists: number;
  private readonly now: () => number;
  private readonly counts = { lists: 0, fullListings: 0, incrementalListings: 0 };

  constructor(o: ListingDiscoveryOptions) {
    this.o = o;
    this.fullMax = o.fullListingMaxObjects ?? DEFAULT_FULL_LISTING_MAX;
    this.backfillMs = o.backfillIntervalMs ?? DEFAULT_BACKFILL_MS;
    if (!(this.fullMax >= 0) || !(this.backfillMs > 0)) {
      throw new InvalidOptionError(
        `ListingDiscovery fullListingMaxObjects ${o.fullListingMaxObjects} and backfillIntervalMs ${o.backfillIntervalMs} must be positive numbers`,
      );
    }
    this.recentMaxLists = o.recentFoldersMaxLists ?? DEFAULT_RECENT_FOLDERS_MAX_LISTS;
    if (!Number.isInteger(this.recentMaxLists) || this.recentMaxLists < 0) {
      throw new InvalidOptionError(
        `ListingDiscovery recentFoldersMaxLists ${o.recentFoldersMaxLists} must be a non-negative integer of LIST requests: leave it out for ${DEFAULT_RECENT_FOLDERS_MAX_LISTS}`,
      );
    }
    this.now = o.now ?? Date.now;
  }

  stats(): DiscoveryStats {
    return { ...this.counts };
  }

  async discover(): Promise<{ files: DiscoveredFile[]; complete: boolean }> {
    const hint = parseHint(await this.o.hints.read());
    const now = this.now();
    if (hint === null || hint.newestKey === null || hint.objects <= this.fullMax || now - hint.lastFullMs >= this.backfillMs) {
      const files = await this.list(null);
      this.counts.fullListings++;
      const newestKey = files.length ? files[files.length - 1].key : null;
      // a small prefix is listed whole every run: its hint changes only when it outgrows the rule
      if (hint === null || files.length > this.fullMax || hint.objects > this.fullMax) {
        await this.writeHint({ version: 1, lastFullMs: now, objects: files.length, newestKey, folders: this.lastFolders(new Map(), files) });
      }
      return { files, complete: true };
    }
    this.counts.incrementalListings++;
    const after = await this.list(hint.newestKey);
    const recent = this.recentFolders(hint);
    const listedWhole = new Map<string, number>();
    const byKey = new Map<string, DiscoveredFile>();
    for (const folder of recent) {
      const inFolder = await this.list(null, folder);
      listedWhole.set(folder, inFolder.length);
      for (const f of inFolder) byKey.set(f.key, f);
    }
    for (const f of after) byKey.set(f.key, f);
    const known = new Map(hint.folders ?? []);
    for (const [folder, n] of listedWhole) known.set(folder, n);
    const folders = this.lastFolders(
      known,
      after.filter((f) => !listedWhole.has(this.folderOf(f.key) ?? '')),
    );
    const changed = after.length > 0 || JSON.stringify(folders) !== JSON.stringify(hint.folders ?? []);
    if (changed) {
      const newestKey = after.length ? after[after.length - 1].key : hint.newestKey;
      await this.writeHint({ ...hint, newestKey, objects: hint.objects + after.length, folders });
    }
    return { files: [...byKey.values()], complete: false };
  }

  /** The folder of a key (its path up to the last '/'), or null for a key directly under the root. */
  private folderOf(key: string): string | null {
    const slash = key.lastIndexOf('/');
    return slash >= this.o.root.length ? key.slice(0, slash + 1) : null;
  }

  /**
   * The folders to list whole: the newest (the newest key's, or the last known) always, then the
   * ones before it, newest first, while their LISTs (by their object counts) fit recentFoldersMaxLists.
   */
  private recentFolders(hint: ListingHint): string[] {
    const known = hint.folders?.length ? hint.folders : null;
    if (known === null) {
      // an older hint: the newest key's folder, as before
      const folder = this.folderOf(hint.newestKey!);
      return folder === null ? [] : [folder];
    }
    const out: string[] = [];
    let lists = 0;
    for (let i = known.length - 1; i >= 0; i--) {
      const [folder, objects] = known[i];
      const cost = Math.max(1, Math.ceil(objects / Math.min(this.o.pageSize, 1000)));
      if (out.length > 0 && lists + cost > this.recentMaxLists) break;
      out.push(folder);
      lists += cost;
    }
    return out;
  }

  /** The last HINT_FOLDERS folders in key order: `known` counts, plus the folders of `files` (each file one more object). */
  private lastFolders(known: Map<string, number>, files: readonly DiscoveredFile[]): Array<[string, number]> {
    const counts = new Map(known);
    // files in key order come folder by folder: a key in the folder of the one before is counted without slicing it
    let folder: string | null = null;
    let n = 0;
    for (const f of files) {
      const k = f.key;
      if (folder !== null && k.length > folder.length && k.startsWith(folder) && k.indexOf('/', folder.length) === -1) {
        n++;
        continue;
      }
      if (folder !== null) counts.set(folder, (counts.get(folder) ?? 0) + n);
      folder = this.folderOf(k);
      n = 1;
    }
    if (folder !== null) counts.set(folder, (counts.get(folder) ?? 0) + n);
    const sorted = [...counts].sort((a, b) => compareKeys(a[0], b[0]));
    return sorted.slice(-HINT_FOLDERS);
  }

  private async list(startAfter: string | null, prefix = this.o.root): Promise<DiscoveredFile[]> {
    const before = this.o.s3.stats().lists;
    const listed = await this.o.s3.listAll(this.o.bucket, prefix, { startAfter, pageSize: this.o.pageSize });
    this.counts.lists += this.o.s3.stats().lists - before;
    return listed.map((x) => ({ key: x.key, size: x.size, etag: x.etag, lastModifiedMs: x.lastModifiedMs ?? 0 }));
  }

  private async writeHint(h: ListingHint): Promise<void> {
    try {
      await this.o.hints.write(JSON.stringify(h));
    } catch {
      // a hint only saves LISTs: without it the next run lists the prefix whole
    }
  }
}

function parseHint(text: string | null): ListingHint | null {
  if (text === null) return null;
  try {
    const h = JSON.parse(text) as ListingHint;
    return h && h.version === 1 && typeof h.lastFullMs === 'number' && typeof h.objects === 'number' ? h : null;
  } catch {
    return null;
  }
}
