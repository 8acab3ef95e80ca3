/**
 * The peer bench's own logic (bench/peer.ts): that the engine's totals and DuckDB's are of the same
 * work on a small input (the check every timed round makes), and the arithmetic it reports with.
 * No timings are asserted.
 */
import { rmSync } from 'node:fs';
import { generateEvents } from '../../bench/generate';
import { enginePass, median, openDuckdb, sameWork, selfTimes, writeInput } from '../../bench/peer';

describe('when the peer bench compares the engine with DuckDB', () => {
  it('finds the same groups, events and sum of amounts on both sides of a small input', async () => {
    const input = generateEvents({ events: 3_000, keys: 50, files: 6, spanMinutes: 60 });
    const dir = writeInput(input.files);
    const duck = await openDuckdb(dir);
    try {
      const engine = await enginePass(input.files, 2);
      const d1 = await duck.pass(1);
      const d2 = await duck.pass(2);
      expect(engine.totals.events).toBe(3_000);
      expect(engine.totals.groups).toBeGreaterThan(50);
      // the store's commits are timed, and are part of the pass
      expect(engine.storeSeconds).toBeGreaterThan(0);
      expect(engine.storeSeconds).toBeLessThan(engine.seconds);
      expect(sameWork(engine.totals, d1.totals)).toEqual([]);
      expect(sameWork(engine.totals, d2.totals)).toEqual([]);
    } finally {
      duck.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every difference that makes the work unequal', () => {
    const a = { groups: 10, events: 100, total: 1234.5 };
    expect(sameWork(a, { ...a, total: 1234.5 + 1e-8 })).toEqual([]);
    expect(sameWork(a, { groups: 11, events: 99, total: 1235 })).toEqual([
      'groups: engine 10, duckdb 11',
      'events: engine 100, duckdb 99',
      'sum of amounts: engine 1234.5, duckdb 1235',
    ]);
  });

  it('takes the median of the rounds', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
  });
});

describe('when the peer bench reads a CPU profile (selfTimes)', () => {
  it('adds up the self time of each function over its nodes, largest first, as shares of the whole', () => {
    const frame = (functionName: string, url = 'run.js') => ({ functionName, url, lineNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', '') },
        { id: 2, callFrame: frame('accumulate') },
        { id: 3, callFrame: frame('fastRow') },
        { id: 4, callFrame: frame('accumulate') }, // the same function under another caller
        { id: 5, callFrame: frame('', '') },
      ],
      samples: [2, 3, 4, 5, 2],
      timeDeltas: [10, 30, 20, 20, 20],
    };
    expect(selfTimes(profile, 2)).toEqual([
      ['accumulate', 0.5],
      ['fastRow', 0.3],
    ]);
    expect(selfTimes(profile, 5).map(([name]) => name)).toEqual(['accumulate', 'fastRow', '(native)']);
  });
});
