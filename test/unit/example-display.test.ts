/**
 * The example's printout (npm start): rows as the reference article shows them, by window start.
 */
import { showTotals } from '../../examples/windowed-totals';

const row = (start: string, end: string, total: number) => ({
  window: { start: `2026-10-01T${start}:00.000Z`, end: `2026-10-01T${end}:00.000Z` },
  total,
  events: 1,
});

describe('showTotals', () => {
  it('prints (start, end, total) with one decimal, ordered by window start whatever the batch order', () => {
    expect(showTotals([row('12:20', '12:30', 3), row('12:00', '12:10', 19)])).toBe('(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)');
  });

  it('prints nothing for a run that emitted nothing', () => {
    expect(showTotals([])).toBe('');
  });
});
