/**
 * The CLI's duration flags and the text of durations in `sluice status` and `sluice run` (lib/observe/format.ts).
 */
import { InvalidOptionError } from '../../lib/engine/errors';
import { formatDuration, formatPercent, parseShortDuration } from '../../lib/observe/format';

describe('duration flags', () => {
  it.each([
    ['15m', 15 * 60_000],
    ['90s', 90_000],
    ['1h30m', 90 * 60_000],
    ['2d', 2 * 86_400_000],
    ['250ms', 250],
    ['15 minutes', 15 * 60_000],
    ['1 hour 30 minutes', 90 * 60_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseShortDuration(text, '--interval')).toBe(ms);
  });

  it.each(['often', '15', '0m', '-5m', ''])('%j is refused with the fix', (text) => {
    expect(() => parseShortDuration(text, '--interval')).toThrow(InvalidOptionError);
    expect(() => parseShortDuration(text, '--interval')).toThrow(/^--interval .* e\.g\. 15m/);
  });
});

describe('durations as text', () => {
  it.each([
    [850, '850ms'],
    [1_240, '1.2s'],
    [31_500, '32s'],
    [60_000, '1m'],
    [14 * 60_000 + 10_000, '14m 10s'],
    [2 * 3_600_000 + 5 * 60_000 + 59_000, '2h 5m'],
    [3 * 86_400_000 + 4 * 3_600_000, '3d 4h'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('a share of an interval is a whole percentage, <1% just above nothing', () => {
    expect(formatPercent(13 / 15)).toBe('87%');
    expect(formatPercent(0.001)).toBe('<1%');
    expect(formatPercent(0)).toBe('0%');
  });
});
