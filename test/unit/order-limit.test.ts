/**
 * Spark's orderBy / sort and limit on a stream (query/frame.ts, order.ts, plan/analysis.ts
 * checkOrderStages): allowed over an aggregation in complete mode, where each batch emits the whole
 * result table, refused elsewhere with Spark's messages. Expectations worked by hand from the rows.
 */
import { outputColumns } from '../../lib/engine/plan/chain';
import { count, desc, expr, F, readStream, sum, window } from '../../lib/api/query';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { at, createTestRunner } from './engine-factories';

const events = () => readStream.format('json').schema('k STRING, t TIMESTAMP, a INT').load();
const perKey = () => events().groupBy('k').agg(count().as('n'), sum('a').as('total'));

async function batches(plan: QueryPlan, ...files: Array<Array<Record<string, unknown>>>) {
  const r = createTestRunner(plan);
  const out: unknown[][] = [];
  for (const rows of files) {
    r.drop(rows);
    for (const b of (await r.run()).batches) out.push(b.rows);
  }
  return out;
}

describe('orderBy in complete mode', () => {
  it("sorts each batch's whole result table by the keys, descending and then ascending", async () => {
    const plan = perKey().orderBy(desc('n'), 'k').writeStream.outputMode('complete').plan();
    const out = await batches(
      plan,
      [
        { k: 'b', a: 1 },
        { k: 'a', a: 2 },
        { k: 'c', a: 3 },
        { k: 'c', a: 4 },
      ],
      [
        { k: 'a', a: 5 },
        { k: 'a', a: 6 },
      ],
    );
    expect(out).toEqual([
      [
        { k: 'c', n: 2, total: 7 },
        { k: 'a', n: 1, total: 2 },
        { k: 'b', n: 1, total: 1 },
      ],
      [
        { k: 'a', n: 3, total: 13 },
        { k: 'c', n: 2, total: 7 },
        { k: 'b', n: 1, total: 1 },
      ],
    ]);
  });

  it('with limit, keeps the top n of each batch; limit(0) keeps none', async () => {
    const rows = [
      { k: 'x', a: 1 },
      { k: 'y', a: 9 },
      { k: 'z', a: 5 },
    ];
    const top = perKey().orderBy(F.col('total').desc()).limit(2).writeStream.outputMode('complete').plan();
    expect(await batches(top, rows)).toEqual([
      [
        { k: 'y', n: 1, total: 9 },
        { k: 'z', n: 1, total: 5 },
      ],
    ]);
    const none = perKey().limit(0).writeStream.outputMode('complete').plan();
    expect(await batches(none, rows)).toEqual([[]]);
  });

  it('places nulls first ascending and last descending, unless the key says otherwise; an expression is a key', async () => {
    const rows = [
      { k: 'x', a: 1 },
      { k: null, a: 2 },
      { k: 'w', a: 3 },
    ];
    const asc = perKey().orderBy('k').writeStream.outputMode('complete').plan();
    expect((await batches(asc, rows))[0].map((r) => (r as { k: unknown }).k)).toEqual([null, 'w', 'x']);
    const descNullsFirst = perKey().orderBy(expr('k').descNullsFirst()).writeStream.outputMode('complete').plan();
    expect((await batches(descNullsFirst, rows))[0].map((r) => (r as { k: unknown }).k)).toEqual([null, 'x', 'w']);
    const byExpr = perKey().orderBy(expr('total % 3')).writeStream.outputMode('complete').plan();
    // total % 3: x 1, null-key 2, w 0
    expect((await batches(byExpr, rows))[0].map((r) => (r as { k: unknown }).k)).toEqual(['w', 'x', null]);
  });

  it('sorts a window column by its start, and keeps the columns as they were', async () => {
    const plan = events().groupBy(window('t', '10 minutes')).agg(count().as('n')).orderBy(desc('window')).writeStream.outputMode('complete').plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['window', 'n']);
    const out = await batches(plan, [
      { k: 'a', t: at('12:01') },
      { k: 'a', t: at('12:25') },
      { k: 'a', t: at('12:12') },
    ]);
    expect(out[0].map((r) => (r as { window: { start: string } }).window.start)).toEqual([
      '2026-10-01T12:20:00.000Z',
      '2026-10-01T12:10:00.000Z',
      '2026-10-01T12:00:00.000Z',
    ]);
  });
});

describe("Spark's refusals", () => {
  it('refuses a sort without an aggregation, or in another mode than complete', () => {
    expect(() => events().orderBy('k')).toThrow(
      /^Sorting is not supported on streaming DataFrames\/Datasets, unless it is on aggregated DataFrame\/Dataset in Complete output mode/,
    );
    expect(() => perKey().orderBy('k').writeStream.outputMode('update').plan()).toThrow(/^Sorting is not supported/);
    const windowed = events().withWatermark('t', '1 minute').groupBy(window('t', '10 minutes')).agg(count().as('n'));
    expect(() => windowed.orderBy('n').writeStream.outputMode('append').plan()).toThrow(/^Sorting is not supported/);
  });

  it('refuses a limit in update mode, before an aggregation in complete mode, and on one input of a union', () => {
    expect(() => perKey().limit(3).writeStream.outputMode('update').plan()).toThrow(
      /^Limits are not supported on streaming DataFrames\/Datasets in Update output mode/,
    );
    expect(() => events().limit(3).groupBy('k').agg(count().as('n')).writeStream.outputMode('complete').plan()).toThrow(
      /^limit before an aggregation in complete mode/,
    );
    expect(() => events().union(events().limit(2))).toThrow(/a limit on one side of a union is not supported/);
    expect(() => events().limit(2).union(events())).toThrow(/a limit on one side of a union is not supported/);
    expect(() => perKey().limit(-1)).toThrow(/whole number, 0 or more/);
  });

  it('refuses to sort by a MAP, as Spark (INVALID_ORDERING_TYPE)', () => {
    const maps = readStream.format('json').schema('k STRING, m MAP<STRING, INT>').load().groupBy('k').agg(count().as('n'));
    expect(() => maps.selectExpr('k', "map('a', n) AS m").orderBy('m')).toThrow(/INVALID_ORDERING_TYPE/);
  });
});

describe('limit in append mode (a count kept in state, as StreamingGlobalLimitExec)', () => {
  const rowsOf = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ k: `r${from + i}`, t: at('12:00'), a: from + i }));

  it('passes the first n rows over all runs, then none', async () => {
    const plan = events().select('k').limit(3).writeStream.plan();
    expect(plan.operators.map((o) => o.spec)).toEqual([{ kind: 'limit', n: 3 }]);
    const r = createTestRunner(plan);
    r.drop(rowsOf(2));
    const first = await r.run();
    expect(first.batches.flatMap((b) => b.rows)).toEqual([{ k: 'r0' }, { k: 'r1' }]);
    r.drop(rowsOf(3, 2));
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([{ k: 'r2' }]);
    r.drop(rowsOf(2, 5));
    const third = await r.run();
    expect(third.batches.flatMap((b) => b.rows)).toEqual([]);
    // the rows still count as read; its one state row is the count
    expect(third.rowsIn).toBe(2);
    expect(third.stateRows).toBe(1);
  });

  it("limits an append-mode aggregation's finished windows, and an aggregation's input when it comes first", async () => {
    const windows = events()
      .withWatermark('t', '0 seconds')
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('n'))
      .limit(1)
      .writeStream.outputMode('append')
      .plan();
    const r = createTestRunner(windows);
    r.drop([
      { k: 'a', t: at('12:01') },
      { k: 'b', t: at('12:11') },
      { k: 'c', t: at('12:31') },
    ]);
    // the watermark (12:31) closes 12:00-12:10 and 12:10-12:20; only the first passes
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 1 }]);

    const firstTwo = events().withWatermark('t', '0 seconds').limit(2).groupBy(window('t', '10 minutes')).agg(count().as('n')).writeStream.plan();
    expect(firstTwo.operators.map((o) => o.spec.kind)).toEqual(['limit', 'aggregate']);
    const r2 = createTestRunner(firstTwo);
    r2.drop([
      { k: 'a', t: at('12:01') },
      { k: 'b', t: at('12:02') },
      { k: 'c', t: at('12:03') },
    ]);
    r2.drop([{ k: 'd', t: at('12:40') }]);
    // the watermark follows every row read (12:40) and closes 12:00-12:10, which holds a and b only
    expect((await r2.run()).batches.flatMap((b) => b.rows)).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 2 }]);
  });

  it.each(CRASH_POINTS)('passes the same first rows once when every run crashes once at %s', async (point) => {
    const plan = () => events().select('k').limit(4).writeStream.plan();
    const r = createTestRunner(plan());
    let fired = 0;
    for (const step of [0, 1, 2]) {
      r.drop(rowsOf(2, 2 * step));
      if (await r.crashRun({ point })) fired++;
      await r.run();
    }
    expect(r.sinkRows()).toEqual([{ k: 'r0' }, { k: 'r1' }, { k: 'r2' }, { k: 'r3' }]);
    expect(fired).toBeGreaterThan(0);
  });
});
