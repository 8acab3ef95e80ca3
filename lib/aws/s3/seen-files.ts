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
  /** key → LastModified ms of every file read (within maxFileAge of newestMs once compacted). */
  readonly files: Map<string, number>;
  /** The newest LastModified seen (−Infinity before the first file). */
  newestMs: number;
  /** A checkpoint of the key-ordered source (offsets {lastKey}): keys up to it were read. */
  readonly legacyLastKey: string | null;
}

export function emptySeen(legacyLastKey: string | null = null): SeenFiles {
  return { files: new Map(), newestMs: Number.NEGATIVE_INFINITY, legacyLastKey };
}

export interface NewFileRules {
  readonly maxFileAgeMs: number;
  readonly latestFirst: boolean;
  /** Spark: with latestFirst and maxFilesPerTrigger, maxFileAge is ignored. */
  readonly ignoreAge: boolean;
}

export interface TimedFile {
  readonly key: string;
  readonly size: number;
  readonly lastModifiedMs: number;
}

function isNewFile(seen: SeenFiles, f: TimedFile, rules: NewFileRules): boolean {
  if (seen.files.has(f.key)) return false;
  if (seen.legacyLastKey !== null && compareKeys(f.key, seen.legacyLastKey) <= 0) return false;
  if (!rules.ignoreAge && f.lastModifiedMs < seen.newestMs - rules.maxFileAgeMs) return false;
  return true;
}

/** The new files among `candidates`, in the order batches take them. */
export function newFiles<T extends TimedFile>(seen: SeenFiles, candidates: readonly T[], rules: NewFileRules): T[] {
  const out = candidates.filter((f) => isNewFile(seen, f, rules));
  out.sort((a, b) => (rules.latestFirst ? b.lastModifiedMs - a.lastModifiedMs : a.lastModifiedMs - b.lastModifiedMs) || compareKeys(a.key, b.key));
  return out;
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

/** What a compaction keeps: the files within maxFileAge of the newest (older ones are no longer new anyway). */
export function compacted(seen: SeenFiles, maxFileAgeMs: number): Array<[string, number]> {
  const from = seen.newestMs - maxFileAgeMs;
  const out: Array<[string, number]> = [];
  for (const [k, ms] of seen.files) if (ms >= from) out.push([k, ms]);
  out.sort((a, b) => compareKeys(a[0], b[0]));
  return out;
}
