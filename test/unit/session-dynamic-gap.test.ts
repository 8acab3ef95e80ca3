/**
 * session_window with a gap that is not a literal (Spark's dynamic gap): each row's session is
 * [t, t + gap), the gap cast to an interval; a row whose session does not end after it starts
 * (null, unreadable, zero or negative gap) joins no session (SessionWindowing's filter).
 * Expectations worked by hand from Spark's SessionWindowing rule.
 */
import { dynamicEnd } from '../../lib/engine/operators/session';
import { aggregation } from '../../lib/engine/query/expr-agg';
import { expr } from '../../lib/engine/query/column';
import { count, sessionWindow } from '../../lib/engine/query/functions';
import { parseCase } from '../../lib/conformance/case';
import { runCaseInMemory } from '../helpers/memory-case';

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

describe('session_window(t, literal) with a gap that is no positive fixed duration', () => {
  it('keeps a positive fixed gap as a duration, and reads any other literal per row (Spark runs them all)', () => {
    expect(sessionWindow('t', '5 seconds')).toEqual({ kind: 'session', column: 't', gapUs: 5 * S, text: '5 seconds' });
    for (const gap of ['0 seconds', '-5 seconds', '1 month', '1 month -40 days']) {
      expect(sessionWindow('t', gap)).toMatchObject({ kind: 'session', gapUs: 0, text: gap, calendarGap: true });
    }
    expect(() => sessionWindow('t', 'soon')).toThrow(/session window gap for t/);
  });

  it.each(['0 seconds', '-5 seconds', '1 month -40 days'])('a gap of %s drops every row, while the watermark still moves', async (gap) => {
    const c = parseCase(
      JSON.stringify({
        name: 'gap',
        query: {
          schema: 'k STRING, t TIMESTAMP',
          pipeline: [
            { watermark: { column: 't', delay: '0 seconds' } },
            { groupBy: [{ sessionWindow: { column: 't', gap } }, 'k'], aggregations: [{ fn: 'count', as: 'n' }] },
          ],
          outputMode: 'append',
        },
        steps: [
          { add: [{ k: 'a', t: '2026-01-31 00:00:00' }], expect: { rows: [] } },
          { add: [{ k: 'a', t: '2026-03-01 00:00:00' }], expect: { rows: [] } },
        ],
      }),
      'gap.json',
    );
    const r = await runCaseInMemory(c);
    expect(r.steps?.map((step) => [step.rows, step.stateRows, step.watermark])).toEqual([
      [[], [0], '2026-01-31T00:00:00.000Z'],
      [[], [0], '2026-03-01T00:00:00.000Z'],
    ]);
  });
});
