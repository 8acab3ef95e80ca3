/**
 * Window arithmetic, as Spark's TimeWindowing does it: window k of a window key starts at
 * startMs + k * slideMs and covers [start, start + durationMs). A tumbling window is the case
 * slideMs = durationMs; a sliding one covers an event with ceil(durationMs / slideMs) windows.
 */
import type { WindowKey } from '../plan/types';

/** `a mod b` with the sign of b (for event times before the window offset). */
function floorMod(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? r + b : r;
}

/** The index k of the window that starts at `start` (= startMs + k * slideMs). */
export function windowIndexOf(start: number, w: WindowKey): number {
  return Math.round((start - w.startMs) / w.slideMs);
}

/** The start of window k. */
export function windowStartAt(index: number, w: WindowKey): number {
  return w.startMs + index * w.slideMs;
}

/** The end of the window that starts at `start` (exclusive). */
export function windowEnd(start: number, w: WindowKey): number {
  return start + w.durationMs;
}

/** The index of the last window covering `ts`: windows last - windowsPerEvent + 1 to last may cover it. */
export function lastWindowIndex(ts: number, w: WindowKey): number {
  return windowIndexOf(ts - floorMod(ts - w.startMs, w.slideMs), w);
}

/** How many windows may cover one event time. */
export function windowsPerEvent(w: WindowKey): number {
  return Math.ceil(w.durationMs / w.slideMs);
}

/** Whether the window that starts at `start` covers `ts`. */
export function covers(start: number, ts: number, w: WindowKey): boolean {
  return start <= ts && ts < start + w.durationMs;
}

/** Start times of the windows covering `ts`, oldest first. */
export function windowStarts(ts: number, w: WindowKey): number[] {
  const last = lastWindowIndex(ts, w);
  const out: number[] = [];
  for (let k = last - windowsPerEvent(w) + 1; k <= last; k++) {
    const start = windowStartAt(k, w);
    if (covers(start, ts, w)) out.push(start);
  }
  return out;
}
