/**
 * The window of the last row a tumbling window's aggregation placed: its index and whether it was
 * late hold for every event time in [lo, hi), and consecutive rows mostly fall in the window of the
 * row before, so such a row skips the window arithmetic (lastWindowIndex, windowStartAt, covers,
 * the lateness check). Only a window of safe-integer bounds that covers the row's time is kept;
 * anything else (bigint times or indexes, sliding windows) takes the general path every time.
 *
 * PERFORMANCE TRICK (STYLE: one marked module with the benchmark that justifies it). Measured by
 * bench/ab-engine.ts on 2026-12-03 (5 interleaved rounds, load 0.9 to 1.5; the aggregation with
 * and without it): 1.05x by CPU time (median of the per-round ratios; 0.97x to 1.12x). Remove it
 * only with a benchmark run that cannot tell it from noise.
 */
import type { WindowKey } from '../plan/types';
import type { Micros } from '../timestamps';
import { windowStartAt } from './windows';

export class WindowMemo {
  /** The window's bounds (lo > hi: none yet). */
  lo = 1;
  hi = 0;
  /** Its index. */
  index = 0;
  /** Whether it is late in this batch. */
  late = false;

  /** Whether the memo's window covers `ts` (then `index` and `late` are its). */
  holds(ts: Micros): boolean {
    return typeof ts === 'number' && ts >= this.lo && ts < this.hi;
  }

  /** Keeps window `index` of the tumbling `window` (late or not), if its bounds are safe numbers and it covers `ts`. */
  keep(index: Micros, ts: Micros, window: WindowKey, late: boolean): void {
    if (typeof index !== 'number' || typeof ts !== 'number') return;
    const start = windowStartAt(index, window);
    if (typeof start !== 'number') return;
    const end = start + window.durationUs;
    if (!Number.isSafeInteger(end) || !(start <= ts && ts < end)) return;
    this.lo = start;
    this.hi = end;
    this.index = index;
    this.late = late;
  }
}
