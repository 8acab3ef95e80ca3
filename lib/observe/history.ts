/**
 * The retained progress records of a checkpoint, oldest first: what `sluice status` and
 * `sluice report` look at. The checkpoint keeps the progress of its last `retainBatches`
 * batches (100 by default); older ones are purged with their offsets and commits.
 */
import type { CheckpointHead, CheckpointStore } from '../engine/ports';
import type { StreamingProgress } from '../engine/progress';

export interface HistoryOptions {
  /** At most this many records, the most recent ones. Default: every retained record. */
  readonly limit?: number;
  /** Reads in flight at once. Default 8. */
  readonly concurrency?: number;
  /** The checkpoint's head when the caller has read it already (a head lists the checkpoint). */
  readonly head?: CheckpointHead;
}

/**
 * Reads `progress/N` from the latest batch with offsets down to the first one missing (purged,
 * or never written), returned in batch order. Records written by older versions of sluice lack
 * some fields: callers treat every field but `batchId` and `timestamp` as optional.
 */
export async function loadProgressHistory(checkpoint: CheckpointStore, options: HistoryOptions = {}): Promise<StreamingProgress[]> {
  const head = options.head ?? (await checkpoint.head());
  const newest = Math.max(head.latestCommitBatch, head.latestOffsetBatch);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const found: StreamingProgress[] = [];
  let next = newest;
  while (next >= 0 && found.length < limit) {
    const ids: number[] = [];
    for (let i = 0; i < concurrency && next - i >= 0; i++) ids.push(next - i);
    const records = await Promise.all(ids.map((id) => checkpoint.readProgress(id)));
    let gap = false;
    for (let i = 0; i < records.length && !gap && found.length < limit; i++) {
      const r = records[i];
      // The newest batch may have offsets but no progress yet (running, or crashed before it).
      if (r === null) gap = !(ids[i] === newest && found.length === 0);
      else found.push(r as unknown as StreamingProgress);
    }
    if (gap) break;
    next -= ids.length;
  }
  return found.reverse();
}
