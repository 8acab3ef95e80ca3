/** The landing source's options: its constructor's (S3LandingSourceOptions), and those a query's readStream options give (Spark's file-source names). */
import { InvalidOptionError } from '../../engine/errors';
import type { ReaderOptions } from '../../engine/formats/options';
import type { BatchLimits, CheckpointStore } from '../../engine/ports';
import { optionsByName } from '../../engine/plan/to-plan';
import type { Schema } from '../../engine/schema';
import type { FileDiscovery } from './discovery';
import type { S3PrefixOptions } from './prefix';

export interface S3LandingSourceOptions extends S3PrefixOptions {
  /** The landing "folder": `landing/orders` covers `landing/orders/...`. Empty: the whole bucket. */
  readonly prefix: string;
  readonly schema: Schema;
  /** Where the per-batch file lists go (`sources/<sourceIndex>/<batchId>`). */
  readonly checkpoint: CheckpointStore;
  /** The source's position in the query. @default 0 */
  readonly sourceIndex?: number;
  /** Only keys ending in one of these, e.g. [".json", ".json.gz"]. Case-sensitive. @default all keys */
  readonly suffixFilter?: readonly string[];
  /** The files' format: json (JSON lines), csv, text or parquet (lib/engine/formats). @default 'json' */
  readonly format?: string;
  /** The format's reader options, as the query gives them (Spark's names: header, sep, multiLine, ...). @default none */
  readonly readerOptions?: ReaderOptions;
  /** Files fetched at once. @default 8 */
  readonly readParallelism?: number;
  /** Keys per ListObjectsV2 page; only tests lower it. @default 1000 */
  readonly listPageSize?: number;
  /** Bytes of a file decoded into one string (cut after a newline); only tests lower it. @default 64 MiB */
  readonly decodePieceBytes?: number;
  /**
   * The most a gzipped file may decompress to; a file beyond it (a gzip bomb, or a file too big
   * for the Lambda) is one dead letter naming it, never an out-of-memory. Query option
   * `maxDecompressedBytes`. @default 256 MiB
   */
  readonly maxDecompressedBytes?: number;
  /**
   * The query's batch limits (plan.limits), so that a replay can say when the logged batch it
   * must read whole exceeds them. planBatch uses the limits it is given. @default none
   */
  readonly limits?: BatchLimits;
  /** Structured events (an oversized replay, an adopted file list, a failed clean). @default none */
  readonly log?: (event: Record<string, unknown>) => void;
  /** Spark's recursiveFileLookup: read files in every sub-folder, with no partition columns. @default false */
  readonly recursiveFileLookup?: boolean;
  /** Spark's pathGlobFilter: only files whose name (last path part) matches, e.g. '*.json'. @default all */
  readonly pathGlobFilter?: string;
  /** Spark's maxFileAge: files older than this before the newest file seen are ignored and forgotten. @default 7 days */
  readonly maxFileAgeMs?: number;
  /** Spark's latestFirst: the newest files first. @default false */
  readonly latestFirst?: boolean;
  /** Spark's fileNameOnly: a file counts as seen when a file of the same name (in any folder) was read. @default false */
  readonly fileNameOnly?: boolean;
  /** Spark's cleanSource: after a batch committed, archive its files to sourceArchiveDir or delete them. @default 'off' */
  readonly cleanSource?: 'off' | 'archive' | 'delete';
  /** Where cleanSource 'archive' moves files: each keeps its key under this location. */
  readonly sourceArchiveDir?: { readonly bucket: string; readonly prefix: string };
  /** How candidate files are found. @default the listing (ListingDiscovery) */
  readonly discovery?: FileDiscovery;
  /** The listing's rule (discovery.ts): a prefix up to this many objects is listed whole every run. @default 10000 */
  readonly fullListingMaxObjects?: number;
  /** The listing's backfill: a larger prefix is listed whole this often. @default 1 hour */
  readonly backfillIntervalMs?: number;
  /** The listing's LISTs per incremental run for the most recent folders, listed whole (discovery.ts). @default 8 */
  readonly recentFoldersMaxLists?: number;
  /** The wall clock for the listing's backfill interval. @default Date.now */
  readonly now?: () => number;
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3600_000, d: 86_400_000 };

/**
 * Spark's time strings (JavaUtils.timeStringAsMs: a whole number and an optional unit, us ms s m
 * min h d, a bare number being ms; '7d', '1h', '0'), 0 or more (SeenFilesMap requires it).
 */
function timeOption(name: string, v: string | number | boolean): number {
  const m = /^(\d+)(us|ms|s|m|min|h|d)?$/.exec(String(v).trim().toLowerCase());
  if (typeof v === 'boolean' || !m) {
    throw new InvalidOptionError(`option ${name}=${JSON.stringify(v)} must be a duration such as '7d', '12h', '30m' or a whole number of milliseconds`);
  }
  return Math.floor(Number(m[1]) * TIME_UNITS[m[2] ?? 'ms']);
}

/** Scala's String.toBoolean, as Spark reads a boolean option: true or false in any case. */
function boolOption(name: string, v: string | number | boolean): boolean {
  if (v === true || (typeof v === 'string' && v.toLowerCase() === 'true')) return true;
  if (v === false || (typeof v === 'string' && v.toLowerCase() === 'false')) return false;
  throw new InvalidOptionError(`option ${name}=${JSON.stringify(v)} must be true or false`);
}

/** The readStream options the landing source reads (any case, as Spark's options). */
const LANDING_OPTIONS = [
  'maxDecompressedBytes',
  'recursiveFileLookup',
  'latestFirst',
  'fileNameOnly',
  'pathGlobFilter',
  'maxFileAge',
  'cleanSource',
  'sourceArchiveDir',
];

/** The landing source's options from a query's readStream options (Spark's file-source names). */
export function landingOptionsFromSpec(given: Readonly<Record<string, string | number | boolean>>): Partial<S3LandingSourceOptions> {
  const options = optionsByName(given, LANDING_OPTIONS);
  const out: { -readonly [K in keyof S3LandingSourceOptions]?: S3LandingSourceOptions[K] } = {};
  if (options.maxDecompressedBytes !== undefined) {
    const n = Number(options.maxDecompressedBytes);
    if (!Number.isSafeInteger(n) || n <= 0) {
      throw new InvalidOptionError(
        `option maxDecompressedBytes=${JSON.stringify(options.maxDecompressedBytes)} must be a positive integer of bytes, e.g. .option('maxDecompressedBytes', 1073741824)`,
      );
    }
    out.maxDecompressedBytes = n;
  }
  if (options.recursiveFileLookup !== undefined) out.recursiveFileLookup = boolOption('recursiveFileLookup', options.recursiveFileLookup);
  if (options.latestFirst !== undefined) out.latestFirst = boolOption('latestFirst', options.latestFirst);
  if (options.fileNameOnly !== undefined) out.fileNameOnly = boolOption('fileNameOnly', options.fileNameOnly);
  if (options.pathGlobFilter !== undefined) out.pathGlobFilter = String(options.pathGlobFilter);
  if (options.maxFileAge !== undefined) out.maxFileAgeMs = timeOption('maxFileAge', options.maxFileAge);
  if (options.cleanSource !== undefined) {
    const c = String(options.cleanSource).toLowerCase();
    if (c !== 'off' && c !== 'archive' && c !== 'delete') {
      throw new InvalidOptionError(`option cleanSource=${JSON.stringify(options.cleanSource)} must be 'off', 'archive' (with sourceArchiveDir) or 'delete'`);
    }
    out.cleanSource = c;
  }
  if (options.sourceArchiveDir !== undefined) {
    const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(String(options.sourceArchiveDir));
    if (!m)
      throw new InvalidOptionError(`option sourceArchiveDir=${JSON.stringify(options.sourceArchiveDir)} must be an S3 location, e.g. s3://bucket/archive/`);
    out.sourceArchiveDir = { bucket: m[1], prefix: m[2] };
  }
  return out;
}

/** A batch limit given to planBatch: a positive number, or `fallback` when the query sets none. */
export function checkLimit(v: number | undefined, name: string, fallback = Infinity): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !(v > 0)) {
    throw new InvalidOptionError(`${name} ${v} must be a positive number; leave it out for ${fallback === Infinity ? 'no limit' : `the default ${fallback}`}`);
  }
  return v;
}
