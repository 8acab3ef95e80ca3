/**
 * session_window with a gap that is not a literal (Spark's dynamic gap): each row's session is
 * [t, t + gap), the gap cast to an interval; a row whose session does not end after it starts
 * (null, unreadable, zero or negative gap) joins no session (SessionWindowing's filter).
 * Expectations worked by hand from Spark's SessionWindowing rule.
 */
import { dynamicEnd } from '../../lib/engine/operators/session';
import { aggregation } from '../../lib/engine/query/expr-agg';
import { expr } from '../../lib/engine/query/column';
import { count } from '../../lib/engine/query/functions';

const S = 1_000_000;

describe('dynamicEnd', () => {
  it('reads a STRING gap as an interval, with or without the INTERVAL word', () => {
    expect(dynamicEnd(10 * S, '5 seconds')).toBe(15 * S);
    expect(dynamicEnd(10 * S, 'interval 1 minute 2 seconds')).toBe(72 * S);
  });

  it('adds months as a calendar add, clamping the day of month', () => {
    // 2026-01-31T00:00:00Z plus 1 month is 2026-02-28T00:00:00Z
    const jan31 = Date.UTC(2026, 0, 31) * 1000;
    expect(dynamicEnd(jan31, '1 month')).toBe(Date.UTC(2026, 1, 28) * 1000);
  });

  it('gives no session for a null, unreadable, zero or negative gap', () => {
    expect(dynamicEnd(10 * S, null)).toBeNull();
    expect(dynamicEnd(10 * S, 'soon')).toBeNull();
    expect(dynamicEnd(10 * S, '0 seconds')).toBeNull();
    expect(dynamicEnd(10 * S, '-5 seconds')).toBeNull();
  });
});

describe('session_window(t, expression) as a grouping expression', () => {
  const cols = [
    { name: 'user', type: 'STRING' },
    { name: 't', type: 'TIMESTAMP' },
  ] as const;

  it('computes the gap into a column the session key reads', () => {
    const a = aggregation(cols as never, [expr("session_window(t, CASE WHEN user = 'a' THEN '5 seconds' END)"), 'user'], [count('*').as('n')]);
    const key = a.keys[0] as { kind: string; column: string; gapColumn?: string };
    expect(key.kind).toBe('session');
    expect(key.column).toBe('t');
    expect(a.items).toContain(`CASE WHEN user = 'a' THEN '5 seconds' END AS ${key.gapColumn}`);
  });

  it('refuses a gap that is neither an INTERVAL nor a STRING', () => {
    expect(() => aggregation(cols as never, [expr('session_window(t, 5)'), 'user'], [count('*').as('n')])).toThrow(
      /Gap duration expression used in session window must be CalendarIntervalType, but got INT/,
    );
  });
});
