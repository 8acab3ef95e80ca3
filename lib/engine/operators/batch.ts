/**
 * A batch as an operator sees it (its id and its two watermarks), and the two rules of Spark's
 * that every operator applies with them: what is late, what expires.
 */

export interface BatchMeta {
  readonly batchId: number;
  /** This batch's watermark: evicts and emits. */
  readonly evictWm: number;
  /** The previous batch's watermark: filters late rows. */
  readonly lateWm: number;
}

/** Whether an event time is late for the batch: at or before the previous batch's watermark (null never is). */
export function isLate(eventTime: number | null | undefined, batch: BatchMeta): boolean {
  return eventTime !== null && eventTime !== undefined && eventTime <= batch.lateWm;
}

/** Whether a state entry that lives until `evictAt` expires in the batch: at or before its watermark (null never does). */
export function isExpired(evictAt: number | null, batch: BatchMeta): boolean {
  return evictAt !== null && evictAt <= batch.evictWm;
}
