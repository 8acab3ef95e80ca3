/** The landing source's options from a query's readStream options (Spark's file-source names). */
import { InvalidOptionError } from '../../engine/errors';
import type { S3LandingSourceOptions } from './landing-source';

const TIME_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3600_000, d: 86_400_000 };

/** Spark's time strings ('7d', '1h', '30m', '10s', '500ms'; a bare number is ms). */
function timeOption(name: string, v: string | number | boolean): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)?\s*$/i.exec(String(v));
  if (typeof v === 'boolean' || !m || !(Number(m[1]) > 0)) {
    throw new InvalidOptionError(`option ${name}=${JSON.stringify(v)} must be a positive duration such as '7d', '12h', '30m' or a number of milliseconds`);
  }
  return Number(m[1]) * TIME_UNITS[(m[2] ?? 'ms').toLowerCase()];
}

function boolOption(name: string, v: string | number | boolean): boolean {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  throw new InvalidOptionError(`option ${name}=${JSON.stringify(v)} must be true or false`);
}

/** The landing source's options from a query's readStream options (Spark's file-source names). */
export function landingOptionsFromSpec(options: Readonly<Record<string, string | number | boolean>>): Partial<S3LandingSourceOptions> {
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
