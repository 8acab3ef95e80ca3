/**
 * One discovery's files as the landing source (landing-source.ts) takes them, by Spark's listing
 * rules (file-rules.ts): the candidates it may read, what it never reads, and what it tells the
 * user about (partition folders of undeclared columns).
 */
import { CheckpointMismatchError } from '../../engine/errors';
import type { Schema } from '../../engine/schema';
import { checkLayout, classifyKey, type FileShape, type ListingRules, undeclaredPartitionColumns } from './file-rules';
import type { Candidate } from './landing-logs';
import { compareKeys } from './requests';
import type { DiscoveredFile } from './discovery';

export interface ListingPlace {
  /** The landing prefix's root (ending in `/`, or empty) and bucket. */
  readonly root: string;
  readonly bucket: string;
  readonly rules: ListingRules;
  /** suffixFilter (null: every key). */
  readonly suffixes: readonly string[] | null;
  /** A checkpoint of the key-ordered source before: the last key it read (null: none). */
  readonly legacyLastKey: string | null;
  readonly description: string;
}

/** Whether a key passes suffixFilter. */
export function acceptsSuffix(key: string, suffixes: readonly string[] | null): boolean {
  if (suffixes === null) return true;
  for (const s of suffixes) if (key.endsWith(s)) return true;
  return false;
}

/**
 * The candidates of one discovery, classified by Spark's listing rules, the newest modification
 * time among them, and the keys never read (outside the rules: pathGlobFilter, sub-folders, `_`/`.`
 * names, directory markers, files in sub-folders without partition folders). An empty object is a file, as Spark's file stream source lists it
 * (its index's allFiles has no size filter): its batch reads no rows. A complete listing is checked for Spark's layout rule, and, on a checkpoint of the
 * key-ordered source, for files it read in sub-folders that these rules no longer read.
 */
export function classifyListing(
  files: readonly DiscoveredFile[],
  complete: boolean,
  place: ListingPlace,
): { candidates: Candidate[]; listedUntilMs: number; dropped: string[] } {
  const { root, rules } = place;
  const candidates: Candidate[] = [];
  let listedUntilMs = 0;
  let skippedSubfolder: string | null = null;
  const dropped: string[] = [];
  /** Where each listed file sits, for Spark's layout check (glob-filtered files count: Spark discovers partitions before the glob). */
  const shapes: FileShape[] = [];
  for (const f of files) {
    if (!f.key.startsWith(root) || !acceptsSuffix(f.key, place.suffixes)) {
      dropped.push(f.key);
      continue;
    }
    if (f.lastModifiedMs > listedUntilMs) listedUntilMs = f.lastModifiedMs;
    const kind = classifyKey(f.key.slice(root.length), rules, f.key);
    if (kind.kind !== 'hidden' && kind.shape) shapes.push(kind.shape);
    if (kind.kind === 'file') candidates.push({ key: f.key, size: f.size, etag: f.etag, lastModifiedMs: f.lastModifiedMs, partitions: kind.partitions });
    else dropped.push(f.key);
    if (kind.kind === 'subfolder' && place.legacyLastKey !== null && compareKeys(f.key, place.legacyLastKey) <= 0) skippedSubfolder ??= f.key;
  }
  if (skippedSubfolder !== null) {
    throw new CheckpointMismatchError(
      `the checkpoint was written by a sluice that read every sub-folder of ${place.description} (it read s3://${place.bucket}/${skippedSubfolder}), ` +
        `but files in sub-folders that are not col=value partition folders are now read only with recursiveFileLookup, as in Spark: ` +
        `add .option('recursiveFileLookup', true) to the query to go on reading them, or move the files into col=value folders`,
      { details: { key: skippedSubfolder } },
    );
  }
  if (complete && !rules.recursiveFileLookup) checkLayout(shapes, place.description);
  return { candidates, listedUntilMs, dropped };
}

/**
 * The log event for partition folders naming columns the schema does not declare (null: none).
 * Spark would add them (typed by inference); sluice fixes a query's columns when the query is
 * built, before any listing, so their values are not read, and the event says which columns to
 * declare, in which type.
 */
export function undeclaredColumnsEvent(schema: Schema, candidates: readonly Candidate[], description: string): Record<string, unknown> | null {
  const undeclared = undeclaredPartitionColumns(schema, candidates);
  if (undeclared.length === 0) return null;
  const names = undeclared.map((u) => u.name);
  return {
    event: 'undeclared-partition-columns',
    columns: undeclared.map((u) => ({ column: u.name, inferred: u.ddl, examples: u.examples })),
    message:
      `partition folders under ${description} name column(s) the schema does not declare: ${undeclared.map((u) => `${u.name} (e.g. ${u.name}=${u.examples[u.examples.length - 1]})`).join(', ')}; ` +
      `their values are not read, because a sluice query's columns are fixed when it is built, before any listing. ` +
      `To read them, declare them in the source's schema as Spark would infer them: add ${undeclared.map((u) => JSON.stringify(u.ddl)).join(', ')} to .schema(...)` +
      ` (or leave ${names.join(', ')} undeclared to keep ignoring ${names.length === 1 ? 'it' : 'them'})`,
  };
}
