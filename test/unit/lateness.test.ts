/**
 * The lateness statistics (lib/observe/lateness.ts) on samples small enough to check by hand:
 * nearest-rank percentiles, what each delay drops, the recommended delay, the duration flags and
 * the event-time reader (the engine's TIMESTAMP rules).
 */
import { InvalidOptionError } from '../../lib/engine/errors';
import {
  countAbove,
  eventTimeReader,
  formatLateness,
  formatLatenessText,
  latenessHistogram,
  latenessStats,
  nearestRank,
  parseDurationFlag,
  roundUpToStep,
  sparkInterval,
} from '../../lib/observe/lateness';

const MIN = 60_000;
const minutes = (...m: number[]) => m.map((x) => x * MIN);

describe('nearest-rank percentiles', () => {
  it('takes the value of rank ceil(p·n) of the sorted sample', () => {
    // 1..10 minutes, shuffled: p50 is rank 5, p90 rank 9, p99 and p99.9 rank 10.
    const stats = latenessStats(minutes(5, 1, 4, 2, 3, 10, 9, 8, 7, 6));
    expect(stats.percentiles).toEqual({ p50: 5 * MIN, p90: 9 * MIN, p99: 10 * MIN, p999: 10 * MIN, max: 10 * MIN, min: 1 * MIN });
    expect(stats.method).toBe('nearest-rank');
  });

  it('on 1..200: p50 = 100, p90 = 180, p99 = 198, p99.9 = 200', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(
      [0.5, 0.9, 0.99, 0.999].map((p) =>
        nearestRank(
          [...values].sort((a, b) => a - b),
          p,
        ),
      ),
    ).toEqual([100, 180, 198, 200]);
  });

  it('a single value is every percentile', () => {
    expect(latenessStats([42]).percentiles).toMatchObject({ p50: 42, p99: 42, max: 42, min: 42 });
  });

  it('an empty source is refused saying it is empty, not blaming --column', () => {
    expect(() => latenessStats([])).toThrow(InvalidOptionError);
    expect(() => latenessStats([])).toThrow(/the source holds no rows in the time sampled.*--source/);
    expect(() => latenessStats([])).not.toThrow(/--column/);
  });

  it('rows whose event time cannot be read are refused pointing at --column', () => {
    expect(() => latenessStats([], { unreadable: { count: 3, examples: [] } })).toThrow(/no row with a readable event time.*--column/);
  });
});

describe('what a delay drops', () => {
  it('is the share of rows later than the delay (a row exactly at the delay is kept)', () => {
    const sorted = minutes(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    expect(countAbove(sorted, 5 * MIN)).toBe(5);
    expect(countAbove(sorted, 10 * MIN)).toBe(0);
    expect(countAbove(sorted, 0)).toBe(10);
    const stats = latenessStats(sorted, { currentDelayMs: 3 * MIN });
    const at = (ms: number) => stats.candidates.find((c) => c.delayMs === ms)!;
    expect(at(1 * MIN)).toMatchObject({ droppedRows: 9, dropFraction: 0.9 });
    expect(at(5 * MIN)).toMatchObject({ droppedRows: 5, dropFraction: 0.5 });
    expect(at(10 * MIN)).toMatchObject({ droppedRows: 0, recommended: true });
    expect(at(3 * MIN)).toMatchObject({ droppedRows: 7, current: true });
    // the fixed ladder, the current delay and the recommended one, in order, each once
    expect(stats.candidates.map((c) => c.delayMs / MIN)).toEqual([1, 3, 5, 10, 30, 60, 120, 360]);
  });

  it('counts rows whose event time is after their arrival', () => {
    expect(latenessStats([-2000, -1, 0, 5000]).early).toBe(2);
  });
});

describe('the recommended delay', () => {
  it('is p99 rounded up to a readable step', () => {
    expect(roundUpToStep(7 * MIN + 12_000)).toBe(10 * MIN);
    expect(roundUpToStep(4 * MIN)).toBe(5 * MIN);
    expect(roundUpToStep(10 * MIN)).toBe(10 * MIN);
    expect(roundUpToStep(61 * MIN)).toBe(120 * MIN);
    expect(roundUpToStep(8.5 * 24 * 60 * MIN)).toBe(9 * 24 * 60 * MIN);
    expect(roundUpToStep(-5000)).toBe(1000);
    // 100 rows: 99 at 3 minutes, one at 6 hours; p99 is 3 minutes, so 5 minutes, dropping the one
    const stats = latenessStats([...minutes(...new Array(99).fill(3)), 360 * MIN]);
    expect(stats.recommendedDelay).toBe('5 minutes');
    expect(stats.candidates.find((c) => c.recommended)).toMatchObject({ delayMs: 5 * MIN, droppedRows: 1 });
  });

  it('is written as withWatermark takes it', () => {
    expect(sparkInterval(10 * MIN)).toBe('10 minutes');
    expect(sparkInterval(60 * MIN)).toBe('1 hour');
    expect(sparkInterval(2 * 24 * 60 * MIN)).toBe('2 days');
    expect(sparkInterval(30_000)).toBe('30 seconds');
  });

  it('is printed with the percentiles and the reasoning', () => {
    const stats = latenessStats(minutes(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), {
      unreadable: { count: 2, examples: [{ where: 'f line 3', reason: 'column event_time is missing' }] },
    });
    const text = formatLatenessText(stats, { source: 's3://b/landing', column: 'event_time' });
    expect(text).toContain('p50 5m   p90 9m   p99 10m');
    expect(text).toContain(".withWatermark('event_time', '10 minutes')");
    expect(text).toContain('2 rows had no readable event_time');
    expect(text).toContain('f line 3: column event_time is missing');
    expect(text).toMatch(/state/);
    expect(text).toContain('only 10 rows: their p99 is their maximum');
  });
});

describe('duration flags', () => {
  it.each([
    ['15m', 15 * MIN],
    ['1h30m', 90 * MIN],
    ['7d', 7 * 24 * 60 * MIN],
    ['90s', 90_000],
    ['15 minutes', 15 * MIN],
    ['1 hour 30 minutes', 90 * MIN],
  ])('%s', (text, ms) => expect(parseDurationFlag(text, '--since')).toBe(ms));

  it('refuses what is not a duration, with the fix', () => {
    expect(() => parseDurationFlag('soon', '--since')).toThrow(/--since "soon" is not a duration: write e.g. 15m/);
    expect(() => parseDurationFlag('1 month', '--since')).toThrow(InvalidOptionError);
  });

  it('prints durations for people', () => {
    expect(formatLateness(432_000)).toBe('7m 12s');
    expect(formatLateness(350)).toBe('350ms');
    expect(formatLateness(2 * 3_600_000 + 5 * MIN)).toBe('2h 05m');
    expect(formatLateness(-2000)).toBe('-2s');
    expect(formatLateness(10 * MIN)).toBe('10m');
    expect(formatLateness(3 * 24 * 3_600_000)).toBe('3d');
  });
});

describe('the event-time reader', () => {
  const read = eventTimeReader('event_time');
  it("reads the engine's timestamp forms", () => {
    expect(read('{"event_time":"2026-10-01 12:00:00"}')).toEqual({ ms: Date.UTC(2026, 9, 1, 12) });
    expect(read('{"event_time":"2026-10-01T12:00:00+02:00","x":1}')).toEqual({ ms: Date.UTC(2026, 9, 1, 10) });
    expect(read('{"event_time":1790000000}')).toEqual({ ms: 1790000000 * 1000 });
  });
  it('gives the reason for what it cannot read', () => {
    expect(read('{"user":"a"}')).toEqual({ reason: expect.stringMatching(/event_time is null/) });
    expect(read('{"event_time":null}')).toEqual({ reason: expect.stringMatching(/is null/) });
    expect(read('{"event_time":"yesterday"}')).toEqual({ reason: expect.stringMatching(/expected "YYYY-MM-DD/) });
    expect(read('{"event_time":')).toEqual({ reason: expect.stringMatching(/malformed JSON/) });
  });
});

describe('the histogram', () => {
  it('bins up to p99.9 and counts what lies above apart', () => {
    const values = [...Array.from({ length: 1999 }, (_, i) => (i % 10) * MIN), 500 * MIN];
    const h = latenessHistogram(values, 10);
    // p99.9 of 2000 values is rank 1998: 9 minutes; bins of 0.9 minutes from 0
    expect(h.edgesMs[0]).toBe(0);
    expect(h.edgesMs[10]).toBe(9 * MIN);
    expect(h.above).toBe(1);
    expect(h.counts.reduce((a, b) => a + b, 0)).toBe(1999);
    expect(h.counts[0]).toBe(200); // the zeros
    expect(h.counts[8]).toBe(200); // 8 minutes, in [7.2, 8.1)
    expect(h.counts[9]).toBe(199); // 9 minutes, the top edge, in the last bin
  });
});
