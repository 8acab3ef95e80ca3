/**
 * A filter right after a projection moves below it, each column replaced by the one it copies or
 * the expression that computes it, as Spark's PushPredicateThroughNonJoin (its Project case) moves
 * it, and on from there. Expectations worked by hand from that rule; the engine runs in
 * sluice-operators-filter-after-select-below-aggregate.json and
 * sluice-operators-filter-after-withcolumn-gates-watermark.json.
 */
import type { QueryPlan, StatelessStage, StreamJoinSpec } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import { window } from '../../lib/engine/query/functions';
import { runPlanOnce } from '../helpers/run-plan';

const named = (s: StatelessStage) =>
  s.kind === 'filterExpr' ? s.text : s.kind === 'watermark' ? `watermark ${s.column}` : s.kind === 'filter' ? s.label : s.kind;
const events = () => readStream.format('json').schema('country STRING, t TIMESTAMP, amount INT').load().withWatermark('t', '5 seconds');

describe('a filter right after a projection', () => {
  it('moves below the projection renamed, and below an aggregation when it reads a grouping column', () => {
    const p = events()
      .groupBy(window('t', '10 seconds'), 'country')
      .count()
      .selectExpr('window', 'country AS c', 'count')
      .filter("c = 'DE'")
      .writeStream.outputMode('update')
      .plan();
    // below the aggregation, under the input's name
    expect(p.stages.map(named)).toEqual(['watermark t', "(country = 'DE')"]);
    // after it: the moved filter below the projection, the projection, the filter as written
    expect(p.operators[0].post.map(named)).toEqual(["(country = 'DE')", 'selectExpr', "c = 'DE'"]);
  });

  it('moves below select() as below a selectExpr of bare columns', () => {
    const p = events().groupBy('country').count().select('country', 'count').filter("country = 'DE'").writeStream.outputMode('update').plan();
    expect(p.stages.map(named)).toEqual(['watermark t', "(country = 'DE')"]);
  });

  it('moves below a projection that computes, the expression in place of its name, and below an aggregation when that reads only grouping columns', () => {
    const computed = events().groupBy('country').count().selectExpr('upper(country) AS c', 'count').filter("c = 'DE'").writeStream.outputMode('update').plan();
    expect(computed.stages.map(named)).toEqual(['watermark t', "(upper(country) = 'DE')"]);
    expect(computed.operators[0].post.map(named)).toEqual(["(upper(country) = 'DE')", 'selectExpr', "c = 'DE'"]);
    // an aggregate's output in the expression: below the projection only
    const mixed = events().groupBy('country').count().selectExpr('country', 'count * 2 AS twice').filter('twice > 2').writeStream.outputMode('update').plan();
    expect(mixed.stages.map(named)).toEqual(['watermark t']);
    expect(mixed.operators[0].post.map(named)).toEqual(['((count * 2) > 2)', 'selectExpr', 'twice > 2']);
  });

  it('moves below withColumn: of an expression in its place, of a function when the filter reads other columns', () => {
    const expr = events().withColumn('big', 'amount * 10').filter('big > 100').writeStream.plan();
    expect(expr.stages.map(named)).toEqual(['watermark t', '((amount * 10) > 100)', 'withColumnExpr', 'big > 100']);
    const fn = events()
      .withColumn('tag', 'STRING', (r) => `${r.country}!`)
      .filter("country = 'DE'")
      .writeStream.plan();
    expect(fn.stages.map(named)).toEqual(['watermark t', "(country = 'DE')", 'withColumn', "country = 'DE'"]);
    // a filter on the function's column stays after it
    const onFn = events()
      .withColumn('tag', 'STRING', (r) => `${r.country}!`)
      .filter("tag = 'DE!'")
      .writeStream.plan();
    expect(onFn.stages.map(named)).toEqual(['watermark t', 'withColumn', "tag = 'DE!'"]);
  });

  it('stays after an item whose output is not its expression (a DAY TO SECOND interval is output as text)', () => {
    const interval = events().selectExpr('country', "INTERVAL '2' HOUR AS d").filter("d = 'INTERVAL ''02'' HOUR'").writeStream.plan();
    expect(interval.stages.map(named)).toEqual(['watermark t', 'selectExpr', "d = 'INTERVAL ''02'' HOUR'"]);
  });

  it("moves through a generator the conjuncts that read none of its columns (Spark's Generate case)", () => {
    const items = () => readStream.format('json').schema('id INT, s STRING, xs ARRAY<INT>').load().selectExpr('id', 'upper(s) AS u', 'explode(xs) AS x');
    expect(items().filter("id > 1 AND x > 2 AND u = 'A'").writeStream.plan().stages.map(named)).toEqual([
      "((id > 1) AND (upper(s) = 'A'))",
      'selectExpr',
      "id > 1 AND x > 2 AND u = 'A'",
    ]);
    expect(items().filter('x > 2').writeStream.plan().stages.map(named)).toEqual(['selectExpr', 'x > 2']);
    // a conjunct mixing both stays whole: an OR is one conjunct
    expect(items().filter('id > 1 OR x > 2').writeStream.plan().stages.map(named)).toEqual(['selectExpr', 'id > 1 OR x > 2']);
    // posexplode's two columns are its own as well
    const pos = readStream.format('json').schema('id INT, xs ARRAY<INT>').load().selectExpr('posexplode(xs)', 'id').filter('pos > 0 AND id = 3');
    expect(pos.writeStream.plan().stages.map(named)).toEqual(['(id = 3)', 'selectExpr', 'pos > 0 AND id = 3']);
  });

  it("reads a computed STRUCT's field as the field of the expression", () => {
    const p = events().selectExpr("named_struct('c', country, 'a', amount) AS s", 't').filter('s.a > 3').writeStream.plan();
    expect(p.stages.map(named)[1]).toMatch(/named_struct\('c', country, 'a', amount\)\.a > 3/);
  });

  it('moves through a stream-stream join behind the projection: a leftOuter join runs as inner when the moved filter rejects its null rows', () => {
    const left = readStream.format('json').schema('lk INT, lt TIMESTAMP').load().withWatermark('lt', '0 seconds');
    const right = readStream.format('json').schema('rk INT, rt TIMESTAMP, status STRING').load().withWatermark('rt', '0 seconds');
    const range = { left: 'lt', right: 'rt', lower: '-10 seconds', upper: '0 seconds' };
    const joined = left.join(right, { left: 'lk', right: 'rk' }, 'leftOuter', { timeRange: range });
    const p = joined.selectExpr('lk', 'status AS s').filter("s = 'ok'").writeStream.plan();
    expect((p.operators[0].spec as StreamJoinSpec).type).toBe('inner');
    // (and last, the isnotnull of rt the time range gives, above the watermark: a predicate on the event time)
    expect(p.inputs![0].stages.map(named)).toEqual(['isnotnull(rk)', 'watermark rt', "(status = 'ok')", 'isnotnull(rt)']);
    // a computed item: the expression moves through the join, and rejects null rows as well
    // (upper(NULL) = 'OK' is null), so the join runs as inner too
    const computed = joined.selectExpr('lk', 'upper(status) AS s').filter("s = 'OK'").writeStream.plan();
    expect((computed.operators[0].spec as StreamJoinSpec).type).toBe('inner');
    expect(computed.inputs![0].stages.map(named)).toEqual(['isnotnull(rk)', 'watermark rt', "(upper(status) = 'OK')", 'isnotnull(rt)']);
    // one that keeps its null rows (coalesce) leaves the join leftOuter
    const keeps = joined.selectExpr('lk', "coalesce(status, 'none') AS s").filter("s = 'none'").writeStream.plan();
    expect((keeps.operators[0].spec as StreamJoinSpec).type).toBe('leftOuter');
  });

  it('before any operator: a renamed column that is not the event time gates the watermark', () => {
    const gates = (p: QueryPlan) => (p.stages.find((s) => s.kind === 'watermark') as Extract<StatelessStage, { kind: 'watermark' }>).gates ?? [];
    const p = events().selectExpr('country AS c', 't').filter("c = 'DE'").writeStream.plan();
    expect(gates(p)).toHaveLength(1);
    expect(gates(p)[0]({ country: 'DE', t: 0 })).toBe(true);
    expect(gates(p)[0]({ country: 'FR', t: 0 })).toBe(false);
    // on the event time itself: no gate (it stays after the watermark, as Spark keeps it)
    expect(gates(events().selectExpr('country', 't AS ts').filter("ts > TIMESTAMP '1970-01-01 00:00:00'").writeStream.plan())).toHaveLength(0);
  });

  it("takes adjacent filters as one before it moves them (Spark's CombineFilters)", () => {
    // a filter on an aggregate's output, then one on a grouping column: the second moves below the aggregation
    const p = events().groupBy('country').count().filter('count > 1').filter("country = 'DE'").writeStream.outputMode('update').plan();
    expect(p.stages.map(named)).toEqual(['watermark t', "(country = 'DE')"]);
    expect(p.operators[0].post.map(named)).toEqual(["(count > 1) AND (country = 'DE')"]);
    // both through a projection that computes, and both ahead of the watermark
    const q = events().withColumn('big', 'amount * 10').filter('amount > 0').filter('big > 100').writeStream.plan();
    expect(q.stages.map(named)).toEqual(['watermark t', '((amount > 0) AND ((amount * 10) > 100))', 'withColumnExpr', '(amount > 0) AND (big > 100)']);
    expect((q.stages[0] as Extract<StatelessStage, { kind: 'watermark' }>).gates).toHaveLength(2);
    // a filter that is a function is not SQL: the next one is not combined with it
    const fn = events()
      .filter((r) => r.amount !== 0)
      .filter('amount > 1')
      .writeStream.plan();
    expect(fn.stages.map(named)).toEqual(['watermark t', 'filter', 'amount > 1']);
  });

  it('checks each filter as written before it is combined: an unknown name is refused with its own text', () => {
    expect(() => events().filter('amount > 0').filter('nope > 1')).toThrow(/nope/);
  });

  it('tests the second of two adjacent filters where the first is null, as one AND does: its error is a dead letter', async () => {
    const plan = readStream.format('json').schema('id INT, a INT, d INT').load().filter('a > 0').filter('10 / d > 1').writeStream.plan();
    const { rows, deadLetters } = await runPlanOnce(plan, [
      { id: 1, a: 1, d: 2 }, // passes both
      { id: 2, a: 0, d: 0 }, // a > 0 is false: the division is never made
      { id: 3, a: null, d: 0 }, // a > 0 is null: the AND goes on to 10 / 0
    ]);
    expect(rows.map((r) => r.id)).toEqual([1]);
    const letters = deadLetters.all('malformed') as Array<{ reason: string; raw: string }>;
    expect(letters.map((d) => d.reason)).toEqual([expect.stringMatching(/^\[DIVIDE_BY_ZERO\]/)]);
    expect(letters[0].raw).toContain('"id":3');
  });

  it("keeps a string literal's escapes when it moves: a regex's backslash stays (the analyzer's display would drop it)", async () => {
    const src = () => readStream.format('json').schema('s STRING').load();
    const rows = [{ s: 'A1' }, { s: 'Ad' }];
    // below a computed projection
    const projected = src().withColumn('u', "concat(s, '')").filter(String.raw`u RLIKE '^A\\d$'`).writeStream.plan();
    expect(projected.stages.map(named)[0]).toBe(String.raw`(concat(s, '') RLIKE '^A\\d$')`);
    expect((await runPlanOnce(projected, rows)).rows.map((r) => r.s)).toEqual(['A1']);
    // below an aggregation (the conjunct on the grouping column)
    const grouped = src().groupBy('s').count().filter(String.raw`s RLIKE '^A\\d$'`).writeStream.outputMode('update').plan();
    expect(grouped.stages.map(named)).toEqual([String.raw`(s RLIKE '^A\\d$')`]);
    expect((await runPlanOnce(grouped, rows)).rows.map((r) => r.s)).toEqual(['A1']);
  });
});

describe('a filter on the window after a windowed aggregation', () => {
  it('tests each row and window inside the aggregation, a conjunct on an aggregate or the event time staying after it', () => {
    const p = events()
      .groupBy(window('t', '10 seconds', '5 seconds'), 'country')
      .count()
      .filter("window.start >= TIMESTAMP '2026-10-01 12:00:10' AND country <> 'FR' AND count > 1 AND window.end > window.start")
      .writeStream.outputMode('update')
      .plan();
    const spec = p.operators[0].spec;
    expect(spec.kind === 'aggregate' && spec.windowFilter?.texts).toEqual([
      "(window.start >= TIMESTAMP '2026-10-01 12:00:10')",
      '(window.`end` > window.start)',
    ]);
    // the country conjunct moves below as a row filter, as before; the whole filter stays after the aggregation
    expect(p.stages.map(named)).toEqual(['watermark t', "(country <> 'FR')"]);
    expect(p.operators[0].post.map(named)).toEqual([
      "window.start >= TIMESTAMP '2026-10-01 12:00:10' AND country <> 'FR' AND count > 1 AND window.end > window.start",
    ]);
  });

  it('keeps a row of a sliding window out of the windows it rejects, and out of the late rows when it rejects all of them', async () => {
    const p = events()
      .groupBy(window('t', '10 seconds', '5 seconds'))
      .count()
      .filter("window.start >= TIMESTAMP '2026-10-01 12:00:05'")
      .writeStream.outputMode('update')
      .plan();
    const { rows, report } = await runPlanOnce(p, [
      { country: 'DE', t: '2026-10-01 12:00:07', amount: 1 },
      { country: 'DE', t: '2026-10-01 12:00:03', amount: 1 },
    ]);
    // 12:00:07 is in [00:00, 00:10) (rejected) and [00:05, 00:15); 12:00:03 only in rejected windows
    expect(rows.map((r) => [(r.window as { start: string }).start, r.count])).toEqual([['2026-10-01T12:00:05.000Z', 1]]);
    expect(report.batches[0].stateRows).toEqual(1);
    expect(report.batches.reduce((n, b) => n + (b.droppedByWatermark ?? 0), 0)).toBe(0);
  });
});
