/**
 * The landing source's offsets and the logs it writes in the checkpoint (sources/<i>/<N>,
 * seen-<N>): their shapes, and reading them back, refusing a damaged one with the remedy.
 */
import type { Json } from '../../engine/ports';
import { CheckpointMismatchError } from '../../engine/errors';
import type { DiscoveredFile } from './discovery';
import type { S3ListedObject } from './requests';

/** Offsets of this source: the batch whose file list was read last. */
interface FilesOffset {
  readonly batch: number;
}

/** Offsets of the key-ordered source before it (still read: replays and migration). */
interface LegacyOffset {
  readonly lastKey: string;
}

/** latestOffset's answer: what a run may read (files found up to listedUntilMs). */
export interface FilesTarget {
  readonly listedUntilMs: number;
  readonly files: number;
}

export type ParsedOffset = { kind: 'none' } | { kind: 'files'; batch: number } | { kind: 'legacy'; lastKey: string };

/** A file of a batch as its log records it. */
export interface LoggedFile {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModifiedMs: number;
  /** Its `col=value` folders (absent: none). */
  readonly partitions?: ReadonlyArray<readonly [string, string]>;
}

/** The body of `sources/<i>/<batchId>`. */
export interface FilesLog {
  readonly version: 2;
  readonly batchId: number;
  readonly start: Json | null;
  readonly end: FilesOffset;
  readonly files: LoggedFile[];
}

/** The body of `sources/<i>/seen-<batchId>`. */
export interface SeenLog {
  readonly version: 2;
  readonly batchId: number;
  /** The snapshot this one adds to (its files: every file read since); null: a snapshot. */
  readonly base: number | null;
  /** Logs since the last snapshot, this one included (0: a snapshot). */
  readonly depth: number;
  readonly files: ReadonlyArray<readonly [string, number]>;
  readonly newestMs: number | null;
  readonly legacyLastKey: string | null;
}

/** A candidate file, classified. */
export interface Candidate extends LoggedFile {
  readonly partitions: ReadonlyArray<readonly [string, string]>;
}

/** A file of a batch of the key-ordered source before this one (its logs: version 1). */
type LegacyFile = S3ListedObject;

/** The body of `sources/<i>/<batchId>` as the key-ordered source wrote it. */
export interface LegacyLog {
  readonly version: 1;
  readonly batchId: number;
  readonly start: LegacyOffset | null;
  readonly end: LegacyOffset;
  readonly files: LegacyFile[];
}

/** A discovered or listed file as a batch's log records it. */
export function fileOf(f: S3ListedObject | DiscoveredFile): LoggedFile {
  return { key: f.key, size: f.size, etag: f.etag, lastModifiedMs: f.lastModifiedMs ?? 0 };
}

/** A candidate as its batch's log records it (no empty partitions list). */
export function loggedFile(c: Candidate): LoggedFile {
  const { partitions, ...rest } = c;
  return partitions.length ? { ...rest, partitions } : rest;
}

/** Where a source's log lives, for messages: the checkpoint's description and the source's index. */
export interface LogPlace {
  readonly checkpoint: string;
  readonly sourceIndex: number;
}

/**
 * A file list of batch `batchId` read back: version 2 (this source's, end {batch}) or version 1
 * (the key-ordered source's, end {lastKey}); anything else is a damaged log, refused.
 */
export function parseJsonLog(place: LogPlace, batchId: number, text: string, version: 2): FilesLog;
export function parseJsonLog(place: LogPlace, batchId: number, text: string, version: 1): LegacyLog;
export function parseJsonLog(place: LogPlace, batchId: number, text: string, version: 1 | 2): FilesLog | LegacyLog {
  let log: { version?: unknown; files?: unknown; end?: { batch?: unknown; lastKey?: unknown } | null } = {};
  try {
    log = JSON.parse(text) ?? {};
  } catch {
    log = {};
  }
  const fits =
    Array.isArray(log.files) && !!log.end && (version === 2 ? log.version === 2 && typeof log.end.batch === 'number' : typeof log.end.lastKey === 'string');
  if (!fits) {
    throw new CheckpointMismatchError(
      `the file list of batch ${batchId} (${place.checkpoint}/sources/${place.sourceIndex}/${batchId}) is damaged (${text.slice(0, 80)}): ` +
        'restore it from a backup or S3 versioning, or start the query on a new checkpoint prefix',
      { details: { batchId } },
    );
  }
  return log as unknown as FilesLog | LegacyLog;
}

/** An offset of this source ({batch}) or of the key-ordered one ({lastKey}); another kind of source's is refused. */
export function parseOffset(offset: Json | null | undefined, what: string): ParsedOffset {
  if (offset === null || offset === undefined) return { kind: 'none' };
  if (typeof offset === 'object' && !Array.isArray(offset)) {
    const o = offset as Partial<FilesOffset & LegacyOffset>;
    if (typeof o.batch === 'number' && Number.isInteger(o.batch) && o.batch >= 0) return { kind: 'files', batch: o.batch };
    if (typeof o.lastKey === 'string') return { kind: 'legacy', lastKey: o.lastKey };
  }
  throw new CheckpointMismatchError(
    `${what} offset ${JSON.stringify(offset).slice(0, 100)} is not an S3 landing offset ({"batch": N}, or {"lastKey": "..."} of an earlier sluice), so the checkpoint belongs to another kind of source: ` +
      `use the source it was made with, or start this query on a new checkpoint prefix`,
    { details: { offset } },
  );
}
