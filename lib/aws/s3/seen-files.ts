/**
 * The landing source's memory of the files it has read (Spark's FileStreamSource.SeenFilesMap),
 * and which candidates are new, in which order a batch takes them. Pure: the landing source
 * stores it (seen-<N> objects in the checkpoint) and lists; unit tests drive it with any times.
 *
 *     new        not seen, not covered by a migrated {lastKey} offset (key ≤ lastKey), and not
 *                older than maxFileAge before the newest file seen (Spark's isNewFile; a first
 *                listing takes every file)
 *     order      by LastModified, ties by ascending key; latestFirst: newest first, ties by key
 *     forgotten  at a compaction, files older than maxFileAge before the newest seen
 */
import { compareKeys } from './requests';

/** Spark's maxFileAge default: 7 days. */
export const DEFAULT_MAX_FILE_AGE_MS = 7 * 24 * 3600_000;

export interface SeenFiles {
  /**
   * The last snapshot's files, [key, LastModified ms] in key order (compareKeys), as its seen log
   * holds them: looked up by binary search, never copied into a map, so that a run that finds
   * nothing new reads a snapshot of 10^5 files without building 10^5 map entries.
   */
  readonly base: ReadonlyArray<readonly [string, number]>;
  /** key → LastModified ms of the files read since that snapshot (the deltas, this run's batches). */
  readonly files: Map<string, number>;
  /** The newest LastModified seen (−Infinity before the first file). */
  newestMs: number;
  /** A checkpoint of the key-ordered source (offsets {lastKey}): keys up to it were read. */
  readonly legacyLastKey: string | null;
}

export function emptySeen(legacyLastKey: string | null = null, base: ReadonlyArray<readonly [string, number]> = []): SeenFiles {
  return { base, files: new Map(), newestMs: Number.NEGATIVE_INFINITY, legacyLastKey };
}

/** Whether `key` was seen: in the files since the snapshot, or (binary search) in the snapshot. */
export function hasSeen(seen: SeenFiles, key: string): boolean {
  return seenAt(seen, key) !== undefined;
}

/** The LastModified `key` was seen with (the files since the snapshot first), or undefined. */
function seenAt(seen: SeenFiles, key: string): number | undefined {
  const since = seen.files.get(key);
  if (since !== undefined) return since;
  const base = seen.base;
  let lo = 0;
  let hi = base.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(base[mid][0], key);
    if (c === 0) return base[mid][1];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}

/** A key's file name (fileNameOnly: Spark's seen-files map is keyed by it). */
function nameOf(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** fileNameOnly: the file names seen, each with the newest LastModified seen under it. */
function seenNames(seen: SeenFiles): Map<string, number> {
  const names = new Map<string, number>();
  const add = (key: string, ms: number) => {
    const name = nameOf(key);
    const was = names.get(name);
    if (was === undefined || ms > was) names.set(name, ms);
  };
  for (const [k, ms] of seen.base) add(k, ms);
  for (const [k, ms] of seen.files) add(k, ms);
  return names;
}

/** Whether entries are in key order (a snapshot is written so; one that is not is sorted when read). */
export function inKeyOrder(entries: ReadonlyArray<readonly [string, number]>): boolean {
  for (let i = 1; i < entries.length; i++) if (compareKeys(entries[i - 1][0], entries[i][0]) >= 0) return false;
  return true;
}

export interface NewFileRules {
  readonly maxFileAgeMs: number;
  readonly latestFirst: boolean;
  /** Spark: with latestFirst and maxFilesPerTrigger (or maxBytesPerTrigger), maxFileAge is ignored. */
  readonly ignoreAge: boolean;
  /** Spark's fileNameOnly: a file is seen when a file of the same name (last path part) was, in any folder. */
  readonly fileNameOnly?: boolean;
}

/**
 * Spark's rules for what is new under a query's limits: with latestFirst and a limit the query
 * sets (maxFilesPerTrigger or maxBytesPerTrigger), maxFileAge is ignored (FileStreamSource).
 */
export function newFileRules(
  opts: { readonly maxFileAgeMs: number; readonly latestFirst: boolean; readonly fileNameOnly: boolean },
  limits: { readonly maxFilesPerTrigger?: number; readonly maxBytesPerTrigger?: number },
): NewFileRules {
  const ignoreAge = opts.latestFirst && (limits.maxFilesPerTrigger !== undefined || limits.maxBytesPerTrigger !== undefined);
  return {
    maxFileAgeMs: ignoreAge ? Number.POSITIVE_INFINITY : opts.maxFileAgeMs,
    latestFirst: opts.latestFirst,
    ignoreAge,
    ...(opts.fileNameOnly ? { fileNameOnly: true } : {}),
  };
}

export interface TimedFile {
  readonly key: string;
  readonly size: number;
  readonly lastModifiedMs: number;
}

/**
 * Spark's SeenFilesMap.isNewFile: not older than maxFileAge before the newest file seen, and not
 * in the map, from which purge() drops the entries older than that too (so a key rewritten after
 * its entry was forgotten is new again). `names`: fileNameOnly's map, by name.
 */
function isNewFile(seen: SeenFiles, f: TimedFile, rules: NewFileRules, names: Map<string, number> | null): boolean {
  const from = rules.ignoreAge ? Number.NEGATIVE_INFINITY : seen.newestMs - rules.maxFileAgeMs;
  if (f.lastModifiedMs < from) return false;
  const at = names ? names.get(nameOf(f.key)) : seenAt(seen, f.key);
  if (at !== undefined && at >= from) return false;
  if (seen.legacyLastKey !== null && compareKeys(f.key, seen.legacyLastKey) <= 0) return false;
  return true;
}

/**
 * The new files among `candidates`, in the order batches take them. Candidates already in key
 * order (a listing's) are sorted by time alone, the sort being stable: ties stay in key order
 * without comparing keys.
 */
export function newFiles<T extends TimedFile>(seen: SeenFiles, candidates: readonly T[], rules: NewFileRules): T[] {
  const names = rules.fileNameOnly ? seenNames(seen) : null;
  const out = candidates.filter((f) => isNewFile(seen, f, rules, names));
  let keyOrdered = true;
  for (let i = 1; i < out.length && keyOrdered; i++) keyOrdered = compareKeys(out[i - 1].key, out[i].key) < 0;
  const byTime = rules.latestFirst ? (a: T, b: T) => b.lastModifiedMs - a.lastModifiedMs : (a: T, b: T) => a.lastModifiedMs - b.lastModifiedMs;
  out.sort(keyOrdered ? byTime : (a, b) => byTime(a, b) || compareKeys(a.key, b.key));
  return out;
}

/**
 * What is still new of `rest` (the new files a batch did not take) once the batch's files are
 * seen: the same files but those now older than maxFileAge before the newest seen. None of them
 * was seen (they were new, and the batch took others), so no lookup is needed; but with
 * fileNameOnly, a file whose name the batch took is seen now (Spark filters each batch's
 * listing again under Trigger.AvailableNow).
 */
export function stillNew<T extends TimedFile>(seen: SeenFiles, rest: readonly T[], rules: NewFileRules, taken: readonly TimedFile[] = []): T[] {
  const from = rules.ignoreAge ? Number.NEGATIVE_INFINITY : seen.newestMs - rules.maxFileAgeMs;
  const takenNames = rules.fileNameOnly ? new Set(taken.map((f) => nameOf(f.key))) : null;
  return rest.filter((f) => f.lastModifiedMs >= from && !takenNames?.has(nameOf(f.key)));
}

/** The first files of `ordered` within the limits (at least one file, however big). */
export function takeBatch<T extends TimedFile>(ordered: readonly T[], maxFiles: number, maxBytes: number): T[] {
  let n = 0;
  let bytes = 0;
  while (n < ordered.length) {
    const size = ordered[n].size;
    if (n > 0 && (n >= maxFiles || bytes + size > maxBytes)) break;
    bytes += size;
    n++;
  }
  return ordered.slice(0, n);
}

/** Adds a batch's files to what is seen. */
export function addSeen(seen: SeenFiles, files: readonly TimedFile[]): void {
  for (const f of files) {
    seen.files.set(f.key, f.lastModifiedMs);
    if (f.lastModifiedMs > seen.newestMs) seen.newestMs = f.lastModifiedMs;
  }
}

/**
 * What a compaction keeps, in key order: the files within maxFileAge of the newest (older ones are
 * no longer new anyway), of the snapshot, the files since and `added` (a batch's files, not in
 * `seen`: newestMs must count them already). The snapshot is in key order, so only the rest is
 * sorted (not at all when it comes in key order, as a first listing's files do), then merged.
 */
export function compacted(seen: SeenFiles, maxFileAgeMs: number, added: readonly TimedFile[] = []): Array<readonly [string, number]> {
  const from = seen.newestMs - maxFileAgeMs;
  const more: Array<readonly [string, number]> = [];
  for (const [k, ms] of seen.files) if (ms >= from) more.push([k, ms]);
  for (const f of added) if (f.lastModifiedMs >= from) more.push([f.key, f.lastModifiedMs]);
  if (!inKeyOrder(more)) more.sort((a, b) => compareKeys(a[0], b[0]));
  const out: Array<readonly [string, number]> = [];
  const base = seen.base;
  let i = 0;
  let j = 0;
  while (i < base.length || j < more.length) {
    const c = i >= base.length ? 1 : j >= more.length ? -1 : compareKeys(base[i][0], more[j][0]);
    // a key in both: the later one (read since the snapshot) wins
    const e = c < 0 ? base[i++] : more[j++];
    if (c === 0) i++;
    if (e[1] < from) continue;
    if (out.length > 0 && out[out.length - 1][0] === e[0]) out[out.length - 1] = e;
    else out.push(e);
  }
  return out;
}
