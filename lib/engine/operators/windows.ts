/**
 * Window arithmetic, as Spark's TimeWindowing does it, in epoch µs: window k of a window key
 * starts at startUs + k * slideUs and covers [start, start + durationUs). A tumbling window is the
 * case slideUs = durationUs; a sliding one covers an event with ceil(durationUs / slideUs) windows.
 *
 * Times are Micros (a number when a safe integer, else a bigint, timestamps.ts): the number path
 * is the common one and stays plain arithmetic; a result that would leave the safe integers, or a
 * bigint time (years before 1685 or after 2255), takes the exact bigint path. A window index is a
 * number when a safe integer, else a bigint too (only a slide under ~30 µs so far from 1970 needs it).
 */
import type { WindowKey } from '../plan/types';
import { addMicros, canonicalMicros, type Micros } from '../timestamps';

/** `a mod b` with the sign of b (for event times before the window offset). */
function floorMod(a: number, b: number): number {
  const r = a % b;
  return r < 0 ? r + b : r;
}

/** floor(a / b) for bigints (b > 0). */
function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** The index k of the window that starts at `start` (= startUs + k * slideUs). */
export function windowIndexOf(start: Micros, w: WindowKey): Micros {
  if (typeof start === 'number') {
    const d = start - w.startUs;
    if (Number.isSafeInteger(d)) return Math.round(d / w.slideUs);
  }
  return canonicalMicros(floorDivBig(BigInt(start) - BigInt(w.startUs), BigInt(w.slideUs)));
}

/** The start of window k. */
export function windowStartAt(index: Micros, w: WindowKey): Micros {
  if (typeof index === 'number') {
    const p = index * w.slideUs;
    if (Number.isSafeInteger(p)) {
      const s = w.startUs + p;
      if (Number.isSafeInteger(s)) return s;
    }
  }
  return canonicalMicros(BigInt(w.startUs) + BigInt(index) * BigInt(w.slideUs));
}

/** The end of the window that starts at `start` (exclusive). */
export function windowEnd(start: Micros, w: WindowKey): Micros {
  return addMicros(start, w.durationUs);
}

/** The index of the last window covering `ts`: windows last - windowsPerEvent + 1 to last may cover it. */
export function lastWindowIndex(ts: Micros, w: WindowKey): Micros {
  if (typeof ts === 'number') {
    // (d − floorMod(d, slide) is a multiple of the slide: the quotient is exact)
    const d = ts - w.startUs;
    if (Number.isSafeInteger(d)) return (d - floorMod(d, w.slideUs)) / w.slideUs;
  }
  return canonicalMicros(floorDivBig(BigInt(ts) - BigInt(w.startUs), BigInt(w.slideUs)));
}

/** How many windows may cover one event time. */
export function windowsPerEvent(w: WindowKey): number {
  return Math.ceil(w.durationUs / w.slideUs);
}

/** Whether the window that starts at `start` covers `ts`. */
export function covers(start: Micros, ts: Micros, w: WindowKey): boolean {
  // (numbers: a sum past 2^53 rounds to a double >= 2^53, still above any safe ts)
  if (typeof start === 'number' && typeof ts === 'number') return start <= ts && ts < start + w.durationUs;
  return start <= ts && ts < windowEnd(start, w);
}

/** The index `k` windows before (negative: after) `index`. */
export function indexBefore(index: Micros, k: number): Micros {
  return addMicros(index, -k);
}

/** Start times of the windows covering `ts`, oldest first. */
export function windowStarts(ts: Micros, w: WindowKey): Micros[] {
  const last = lastWindowIndex(ts, w);
  const out: Micros[] = [];
  for (let k = windowsPerEvent(w) - 1; k >= 0; k--) {
    const start = windowStartAt(indexBefore(last, k), w);
    if (covers(start, ts, w)) out.push(start);
  }
  return out;
}
