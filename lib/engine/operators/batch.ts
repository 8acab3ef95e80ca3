/**
 * A batch as an operator sees it (its id and its two watermarks), and the two rules of Spark's
 * that every operator applies with them: what is late, what expires.
 *
 * Watermarks have millisecond precision and event times microsecond precision, as in Spark
 * (FORMAT-3): an event time t (epoch µs) is at or before a watermark W (epoch ms) when
 * t <= W × 1000. Each watermark is also given in µs (timestamps.ts Micros) so that the per-row test
 * is one comparison, exact for a number and a bigint event time alike. A state entry's eviction
 * time (evictAt) stays in ms, as the state stores keep it: ceilMillis of the µs it stands for, so
 * that evictAt <= W exactly when that time is <= W × 1000.
 */
import { type Micros, watermarkMicros } from '../timestamps';

export interface BatchMeta {
  readonly batchId: number;
  /** This batch's watermark (ms): evicts and emits. */
  readonly evictWm: number;
  /** The previous batch's watermark (ms): filters late rows. */
  readonly lateWm: number;
  /** evictWm in epoch µs. */
  readonly evictWmUs: Micros;
  /** lateWm in epoch µs. */
  readonly lateWmUs: Micros;
  /** The batch's processing time (ms), as logged with its offsets (transformWithState's batch timestamp). */
  readonly processingTimeMs: number;
  /** The query's id and the run's, when the run core knows them (transformWithState's QueryInfo). */
  readonly queryId?: string;
  readonly runId?: string;
  /** The state partitions this computation of the batch writes (a partition task: its own); absent: all of them. */
  readonly partitions?: readonly number[];
}

/** A batch's meta from its id, its two watermarks (ms) and its processing time (ms). */
export function batchMeta(batchId: number, evictWm: number, lateWm: number, processingTimeMs = 0): BatchMeta {
  return { batchId, evictWm, lateWm, evictWmUs: watermarkMicros(evictWm), lateWmUs: watermarkMicros(lateWm), processingTimeMs };
}

/** Whether an event time (µs) is late for the batch: at or before the previous batch's watermark (null never is). */
export function isLate(eventTime: Micros | null | undefined, batch: BatchMeta): boolean {
  return eventTime !== null && eventTime !== undefined && eventTime <= batch.lateWmUs;
}

/** Whether an event time (µs) is at or before the batch's own watermark (a session that closes). */
export function isPastWatermark(eventTime: Micros, batch: BatchMeta): boolean {
  return eventTime <= batch.evictWmUs;
}

/** Whether a state entry that lives until `evictAt` (ms) expires in the batch: at or before its watermark (null never does). */
export function isExpired(evictAt: number | null, batch: BatchMeta): boolean {
  return evictAt !== null && evictAt <= batch.evictWm;
}
