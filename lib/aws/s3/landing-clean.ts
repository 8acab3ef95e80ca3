/**
 * Spark's cleanSource for the landing source: after a batch committed, the files of every batch
 * not cleaned yet are archived (copied under sourceArchiveDir) or deleted. Progress is kept in
 * sources/<i>/cleaned (the last batch cleaned, keys left to retry), so a crash or a failed key is
 * tried again on the next commit.
 */
import type { CheckpointStore } from '../../engine/ports';
import { type FilesLog, parseOffset } from './landing-logs';
import type { S3Requests } from './requests';

/** The source a clean works on: its bucket and checkpoint, and where archived files go (null: delete). */
export interface CleanPlace {
  readonly s3: S3Requests;
  readonly bucket: string;
  readonly checkpoint: CheckpointStore;
  readonly sourceIndex: number;
  readonly archive: { readonly bucket: string; readonly root: string } | null;
}

/** cleanSource: archive or delete the files of this source's batches after the last cleaned, up to `batch`. */
export async function cleanUpTo(
  place: CleanPlace,
  batch: number,
  done: string[],
  filesLog: (batch: number) => Promise<FilesLog | null>,
  onEvent: (event: Record<string, unknown>) => void,
): Promise<void> {
  const stateText = await place.checkpoint.readSourceLog(place.sourceIndex, 'cleaned');
  const state = stateText === null ? { through: -1, retry: [] as string[] } : (JSON.parse(stateText) as { through: number; retry: string[] });
  if (state.through >= batch && state.retry.length === 0) return;
  const keys: string[] = [...state.retry];
  let log = state.through >= batch ? null : await filesLog(batch);
  while (log) {
    for (const f of log.files) keys.push(f.key);
    const s = parseOffset(log.start, 'start');
    if (s.kind !== 'files' || s.batch <= state.through) break;
    log = await filesLog(s.batch);
  }
  const failed: string[] = [];
  for (const key of keys) {
    try {
      if (place.archive) await place.s3.copyObject(place.bucket, key, place.archive.bucket, place.archive.root + key);
      await place.s3.deleteKeys(place.bucket, [key]);
      done.push(key);
    } catch (e) {
      failed.push(key);
      onEvent({ event: 'clean-source-failed', key, error: (e as Error).message });
    }
  }
  await place.checkpoint.writeSourceLog(place.sourceIndex, 'cleaned', JSON.stringify({ through: Math.max(batch, state.through), retry: failed }));
}
