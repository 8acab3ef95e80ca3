/**
 * Where a pipeline writes must lie outside where it reads: a checkpoint, an S3 sink or a
 * dead-letter prefix inside the S3 landing prefix would be listed as input, its objects read as
 * (malformed) records, and the source's last key would jump past producers' keys.
 */
import { InvalidOptionError } from '../engine/errors';

export interface NamedS3Location {
  /** How the user set it, for the message: "--checkpoint", "the sink", ... */
  readonly name: string;
  readonly bucket: string;
  /** Key prefix without a leading slash; '' for the whole bucket. */
  readonly prefix: string;
}

function trim(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, '');
}

/** Whether keys under `inner` are also under `outer` ('' holds every key of the bucket). */
export function prefixContains(outer: string, inner: string): boolean {
  const o = trim(outer);
  const i = trim(inner);
  return o === '' || i === o || i.startsWith(`${o}/`);
}

/** Refuses the first written location that the source's listing would see, or that holds the source. */
export function checkOutsideSource(source: NamedS3Location, written: readonly NamedS3Location[]): void {
  for (const w of written) {
    if (w.bucket !== source.bucket) continue;
    if (prefixContains(source.prefix, w.prefix) || prefixContains(w.prefix, source.prefix)) {
      const where = trim(source.prefix) === '' ? `the whole bucket ${source.bucket}` : `s3://${source.bucket}/${trim(source.prefix)}`;
      const what = source.name === 'the source' ? 'the source' : source.name;
      throw new InvalidOptionError(
        `${w.name} s3://${w.bucket}/${trim(w.prefix)} overlaps ${what} ${where}, which would read sluice's own objects as input: give ${what} a prefix of its own (e.g. s3://${source.bucket}/landing) or write ${w.name} elsewhere`,
      );
    }
  }
}
