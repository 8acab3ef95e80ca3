/**
 * The window memo of a tumbling aggregation (lib/engine/operators/window-memo.ts) may only stand in
 * for the window arithmetic where that arithmetic gives the same window: times in the kept
 * window's [start, end), number bounds that are safe integers.
 */
import { WindowMemo } from '../../lib/engine/operators/window-memo';
import { lastWindowIndex, windowStartAt } from '../../lib/engine/operators/windows';
import type { WindowKey } from '../../lib/engine/plan/types';

const TEN_MINUTES = 600_000_000;
const tumbling: WindowKey = { kind: 'window', column: 'ts', durationUs: TEN_MINUTES, slideUs: TEN_MINUTES, startUs: 0, text: '10 minutes' };

describe('WindowMemo', () => {
  it('holds nothing before a window is kept', () => {
    const memo = new WindowMemo();
    for (const ts of [0, 1, -1, TEN_MINUTES, 2n ** 60n]) expect(memo.holds(ts)).toBe(false);
  });

  it('holds the times of the kept window only, with its index and lateness', () => {
    const memo = new WindowMemo();
    const ts = 1_790_856_123_456_789;
    const index = lastWindowIndex(ts, tumbling);
    memo.keep(index, ts, tumbling, true);
    const start = windowStartAt(index, tumbling) as number;
    expect(memo.holds(start)).toBe(true);
    expect(memo.holds(start + TEN_MINUTES - 1)).toBe(true);
    expect(memo.holds(start - 1)).toBe(false);
    expect(memo.holds(start + TEN_MINUTES)).toBe(false);
    expect(memo.holds(BigInt(start))).toBe(false); // a bigint time takes the general path
    expect([memo.index, memo.late]).toEqual([index, true]);
    // every time it holds lies in the window the arithmetic gives
    for (const t of [start, start + 1, start + TEN_MINUTES - 1]) expect(lastWindowIndex(t, tumbling)).toBe(memo.index);
  });

  it('keeps nothing for bigint indexes or times, or a window that does not cover the time', () => {
    const memo = new WindowMemo();
    memo.keep(5n, 5n * BigInt(TEN_MINUTES), tumbling, false);
    expect(memo.holds(5 * TEN_MINUTES)).toBe(false);
    memo.keep(5, 7 * TEN_MINUTES, tumbling, false);
    expect(memo.holds(5 * TEN_MINUTES)).toBe(false);
    memo.keep(5, 5 * TEN_MINUTES, tumbling, false);
    expect(memo.holds(5 * TEN_MINUTES)).toBe(true);
  });
});
