/**
 * Event-time watermarks, as Spark computes them (WatermarkTracker, MultipleWatermarkPolicy):
 *
 *   batch N reads ─▶ max event time per withWatermark operator
 *     ─▶ operator watermark = max(its previous, max event time − its delay)
 *     ─▶ global watermark   = max(N's batch watermark, min over the operators)   (Spark's default
 *                                                                                 "min" policy)
 *   batch N+1 runs with the pair (batch: that global watermark, late: N's batch watermark)
 *
 * A batch evicts and emits with its batch watermark and drops late rows with its late watermark
 * (the previous batch's batch watermark, Spark >= 3.4), so a run split by a rate limit into
 * several data batches drops what Spark drops. Neither ever moves back.
 */
import type { QueryPlan } from './plan/types';

/** The two watermarks a batch runs with; offsets/N logs them, so a replay runs with the same. */
export interface BatchWatermarks {
  /** Evicts and emits with this (Spark's batchWatermarkMs): the global watermark after N−1. */
  readonly batchWatermarkMs: number;
  /** Drops late rows with this: batch N−1's own batchWatermarkMs (0 for the first batch). */
  readonly lateWatermarkMs: number;
}

/** Each withWatermark operator's own watermark so far, by stage id (commits/N keeps them). */
export type OperatorWatermarks = Readonly<Record<string, number>>;

/** The first batch's pair: no watermark yet. */
export const NO_WATERMARKS: BatchWatermarks = { batchWatermarkMs: 0, lateWatermarkMs: 0 };

/** The pair of the batch after a committed one (its batch watermark, and the one after it). */
export function watermarksAfter(commit: { readonly batchWatermarkMs: number; readonly nextBatchWatermarkMs: number }): BatchWatermarks {
  return { batchWatermarkMs: commit.nextBatchWatermarkMs, lateWatermarkMs: commit.batchWatermarkMs };
}

/**
 * A stateful operator's input watermark derived from a global watermark G (FORMAT-2, "Input
 * watermark of a stateful stage"): G plus the operator's offset (0 on a plain chain; a
 * stream-stream join upstream lowers it by its state watermarks), 0 when no withWatermark is
 * upstream (offset null), when G is 0, or when it would be negative.
 */
function derivedWatermark(globalMs: number, offsetMs: number | null): number {
  if (offsetMs === null || globalMs <= 0) return 0;
  return Math.max(0, globalMs + offsetMs);
}

/**
 * The watermarks each stateful operator runs a batch with, in plan order: each of the pair
 * derived from its own global watermark (derivedWatermark).
 */
export function operatorInputWatermarks(batch: BatchWatermarks, offsets: ReadonlyArray<number | null>): BatchWatermarks[] {
  return offsets.map((o) => ({ batchWatermarkMs: derivedWatermark(batch.batchWatermarkMs, o), lateWatermarkMs: derivedWatermark(batch.lateWatermarkMs, o) }));
}

/**
 * Whether a no-data batch would change anything: the next batch evicts with a later watermark
 * than the last one did, so windows may close (the operator must also be able to evict or emit).
 */
export function watermarkMoved(next: BatchWatermarks, offsetMs: number | null = 0): boolean {
  return derivedWatermark(next.batchWatermarkMs, offsetMs) > derivedWatermark(next.lateWatermarkMs, offsetMs);
}

/**
 * The event times the withWatermark stages saw, over all of them (Spark's EventTimeStats, merged
 * across the watermark operators as its progress reporter does): min, max, and the average as a
 * sum of differences from the first time seen, so that a sum of epoch milliseconds never loses
 * precision. In epoch ms, as Spark's: a watermark stage truncates each event time (µs) to the
 * millisecond (rows.ts), so watermarks and these figures keep millisecond precision.
 */
export class EventTimeStats {
  min = Infinity;
  max = -Infinity;
  count = 0;
  /** The first event time seen; `sum` adds the others' differences from it. */
  base = 0;
  sum = 0;

  add(t: number): void {
    if (this.count === 0) this.base = t;
    if (t < this.min) this.min = t;
    if (t > this.max) this.max = t;
    this.sum += t - this.base;
    this.count++;
  }

  /** Takes in another's figures (a chunk's). */
  merge(other: EventTimeStats): void {
    if (other.count === 0) return;
    if (this.count === 0) this.base = other.base;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
    this.sum += other.sum + (other.base - this.base) * other.count;
    this.count += other.count;
  }

  /** The average event time (ms), null when none was seen. */
  avg(): number | null {
    return this.count === 0 ? null : this.base + this.sum / this.count;
  }
}

/** The largest event time each withWatermark operator saw in one batch, by stage id. */
export class MaxEventTimes {
  private readonly byOperator = new Map<string, number>();
  /** Min, max and average over every watermark stage, for the progress record's eventTime. */
  readonly stats = new EventTimeStats();

  /** Takes in one chunk's maxima, and its min/avg figures when the stages gave them. */
  observe(chunk: ReadonlyMap<string, number>, stats?: EventTimeStats): void {
    for (const [id, t] of chunk) {
      const seen = this.byOperator.get(id);
      if (seen === undefined || !(seen >= t)) this.byOperator.set(id, t);
    }
    if (stats) this.stats.merge(stats);
  }

  entries(): IterableIterator<[string, number]> {
    return this.byOperator.entries();
  }

  /** The largest over all operators (progress's eventTime.max), null when the batch had none. */
  overall(): number | null {
    return this.byOperator.size ? Math.max(...this.byOperator.values()) : null;
  }
}

/**
 * A plan's watermark policy: each withWatermark operator's delay (on every input), combined by
 * the minimum (Spark's default), or the maximum with spark.sql.streaming.multipleWatermarkPolicy=max.
 */
export class WatermarkPolicy {
  /** Delay (ms) per withWatermark stage id. */
  private readonly delaysMs = new Map<string, number>();
  private readonly max: boolean;

  constructor(plan: Pick<QueryPlan, 'stages' | 'inputs' | 'watermarkPolicy'>) {
    for (const stages of [plan.stages, ...(plan.inputs ?? []).map((i) => i.stages)]) {
      for (const s of stages) if (s.kind === 'watermark') this.delaysMs.set(s.id, s.delayMs);
    }
    this.max = plan.watermarkPolicy === 'max';
  }

  /** The operators' watermarks after a batch that saw `seen`: each max(previous, max − delay). */
  advance(previous: OperatorWatermarks, seen: MaxEventTimes): Record<string, number> {
    const next = { ...previous };
    for (const [id, max] of seen.entries()) {
      const candidate = max - (this.delaysMs.get(id) ?? 0);
      if (next[id] === undefined || candidate > next[id]) next[id] = candidate;
    }
    return next;
  }

  /**
   * The global watermark after a batch: the minimum (or maximum) over the watermark operators
   * that have seen a row, never below the batch's own.
   */
  global(batch: BatchWatermarks, operators: OperatorWatermarks): number {
    const known = Object.values(operators);
    if (!known.length) return batch.batchWatermarkMs;
    return Math.max(batch.batchWatermarkMs, this.max ? Math.max(...known) : Math.min(...known));
  }
}
