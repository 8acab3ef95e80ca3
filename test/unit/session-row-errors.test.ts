/**
 * Session windows refuse a row as the other aggregations do (FORMAT-3 departure 2, one rule:
 * aggregates.ts guardRow): sum of a STRING column whose text is not a number (Spark's ANSI cast to
 * DOUBLE: CAST_INVALID_INPUT) and a BIGINT sum past 2^63 − 1 (ARITHMETIC_OVERFLOW) make the row a
 * dead letter; the batch goes on, and no aggregate of the session counts the row, nor does the
 * row extend the session. Expected values worked by hand: a session is [first t, last t + gap),
 * rows of a key merge in the order of their times (Spark's MergingSessionsExec), and
 * 9223372036854775800 + 10 passes 9223372036854775807.
 */
import { count, sessionWindow, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { createTestRunner } from './engine-factories';

type DeadLetter = { raw: string; reason: string };

const lines = (rows: string[]) => rows.join('\n');

const plan = readStream
  .schema('k STRING, t TIMESTAMP, s STRING, n BIGINT')
  .load()
  .groupBy(sessionWindow('t', '5 minutes'), 'k')
  // (the typed builders take numeric columns only; Spark takes a STRING and casts it)
  .agg(count().as('c'), sum('s').as('total_s') as never, sum('n').as('total_n'))
  .writeStream.outputMode('complete')
  .trigger({ availableNow: true })
  .queryName('session-row-errors')
  .plan();

/** The sink's rows of the last batch as [k, session start, session end, c, total_s, total_n], sorted. */
function sessions(rows: Record<string, unknown>[]): unknown[][] {
  return rows
    .map((r) => {
      const w = r.session_window as { start: string; end: string };
      return [r.k, w.start, w.end, r.c, r.total_s, r.total_n];
    })
    .sort((a, b) => (String(a[0]) + a[1] < String(b[0]) + b[1] ? -1 : 1));
}

describe('a session window whose rows an aggregation refuses', () => {
  it('makes a bad text and an overflowing row dead letters, neither counted nor extending the session, in the batch and against the stored session', async () => {
    const runner = createTestRunner(plan);
    runner.drop(
      lines([
        '{"k":"a","t":"2026-10-01 12:00:00","s":"1.5","n":9223372036854775800}', // a: [12:00, 12:05)
        '{"k":"a","t":"2026-10-01 12:01:00","s":"x","n":1}', // not a number: refused (would end the session at 12:06)
        '{"k":"a","t":"2026-10-01 12:02:00","s":"2","n":10}', // ...800 + 10 = ...810: refused (would end it at 12:07)
        '{"k":"a","t":"2026-10-01 12:06:30","s":"3","n":7}', // after 12:05: a session of its own
        '{"k":"b","t":"2026-10-01 12:00:00","s":" 1 ","n":1}', // b: [12:00, 12:05)
      ]),
    );
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([
      { k: 'a', t: expect.anything(), s: 'x', n: 1 },
      { k: 'a', t: expect.anything(), s: '2', n: 10 },
    ]);
    expect(dead[0].reason).toMatch(/^\[CAST_INVALID_INPUT\] The value 'x' of the type "STRING" cannot be cast to "DOUBLE"/);
    expect(dead[0].reason).toMatch(
      /in sum\(s\) AS total_s of the group where session_window is \[2026-10-01T12:01:00\.000Z, 2026-10-01T12:06:00\.000Z\) and k is "a"/,
    );
    expect(dead[1].reason).toMatch(/^\[ARITHMETIC_OVERFLOW\] long overflow: a sum of BIGINT values reached 9223372036854775810, /);
    expect(dead[1].reason).toMatch(
      /in sum\(n\) AS total_n of the group where session_window is \[2026-10-01T12:00:00\.000Z, 2026-10-01T12:05:00\.000Z\) and k is "a", with this row's n = 10/,
    );
    expect(sessions(runner.sinkRows())).toEqual([
      ['a', '2026-10-01T12:00:00.000Z', '2026-10-01T12:05:00.000Z', 1, 1.5, '9223372036854775800'],
      ['a', '2026-10-01T12:06:30.000Z', '2026-10-01T12:11:30.000Z', 1, 3, 7],
      ['b', '2026-10-01T12:00:00.000Z', '2026-10-01T12:05:00.000Z', 1, 1, 1],
    ]);

    // the next batch merges its rows with the stored sessions: a's +8 passes 2^63 − 1 there
    runner.drop(
      lines([
        '{"k":"a","t":"2026-10-01 12:04:00","s":"1","n":8}', // ...800 + 8 = ...808: refused
        '{"k":"b","t":"2026-10-01 12:03:00","s":"2.5","n":2}', // b: [12:00, 12:08)
      ]),
    );
    const report = await runner.run();
    const dead2 = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead2.map((d) => JSON.parse(d.raw).n)).toEqual([1, 10, 8]);
    expect(dead2[2].reason).toMatch(/^\[ARITHMETIC_OVERFLOW\] .*reached 9223372036854775808, /);
    expect(sessions(report.batches.at(-1)!.rows as Record<string, unknown>[])).toEqual([
      ['a', '2026-10-01T12:00:00.000Z', '2026-10-01T12:05:00.000Z', 1, 1.5, '9223372036854775800'],
      ['a', '2026-10-01T12:06:30.000Z', '2026-10-01T12:11:30.000Z', 1, 3, 7],
      ['b', '2026-10-01T12:00:00.000Z', '2026-10-01T12:08:00.000Z', 2, 3.5, 3],
    ]);
  });
});
