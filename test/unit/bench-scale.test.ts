/**
 * The scale bench's own arithmetic (bench/scale.ts): the counts its runs are checked against, and
 * the model of N Lambdas its table prints. Expected values worked out by hand from the rules.
 */
import { batchMs, expectedGroups } from '../../bench/scale';

const line = (user: string, hhmm: string, amount: number) => JSON.stringify({ user, event_time: `2026-10-01 ${hhmm}:00.000`, amount });
const at = (hhmm: string) => Date.parse(`2026-10-01T${hhmm}:00Z`);
const MIN = 60_000;

describe('when the scale bench counts what a run must emit from the input alone (expectedGroups)', () => {
  it('emits a (window, user) once a batch watermark passes its end, drops rows late for the previous watermark, and closes with a no-data batch', () => {
    const files = [
      [line('a', '12:01', 1), line('b', '12:05', 2), line('a', '12:09', 3)], // wm after: 12:09 − 10 = 11:59
      [line('a', '12:25', 4)], // evicts with 11:59: nothing; wm after: 12:15
      [line('c', '12:02', 5)], // not late (its window ends 12:10 > 11:59); evicts with 12:15: the 12:00 windows
      [line('d', '12:40', 6), line('e', '12:05', 7)], // e late (12:10 <= 12:15); wm after: 12:30
    ].map((l, i) => ({ key: `f${i}`, body: l.join('\n') }));
    const got = expectedGroups(files, 1, 10 * MIN, 10 * MIN).map((m) => Object.fromEntries(m));
    expect(got).toEqual([
      {},
      {},
      { [`${at('12:00')}|a`]: { events: 2, total: 4 }, [`${at('12:00')}|b`]: { events: 1, total: 2 }, [`${at('12:00')}|c`]: { events: 1, total: 5 } },
      {},
      { [`${at('12:20')}|a`]: { events: 1, total: 4 } }, // the no-data batch, watermark 12:30
    ]);
  });
});

describe('when the model spreads one batch over N Lambdas (batchMs)', () => {
  const shape = { events: 1000, S: 4, P: 2, plan: 10, read: 100, partition: 50, commit: 20 };
  it('runs the read and partition tasks in waves of N, each task paying the overhead', () => {
    expect(batchMs(shape, 1, 5)).toBe(10 + 4 * 100 + 2 * 50 + 20 + 5 * (2 + 4 + 2));
    expect(batchMs(shape, 2, 5)).toBe(10 + 2 * 100 + 1 * 50 + 20 + 5 * (2 + 2 + 1));
    expect(batchMs(shape, 3, 0)).toBe(10 + 2 * 100 + 50 + 20);
  });
  it('stops falling once N reaches max(S, P)', () => {
    expect(batchMs(shape, 4, 5)).toBe(10 + 100 + 50 + 20 + 5 * 4);
    expect(batchMs(shape, 64, 5)).toBe(batchMs(shape, 4, 5));
  });
});
