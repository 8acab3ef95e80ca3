/**
 * Spark's union and unionByName of two streams (query/frame.ts union_, column-ops.ts unionSteps,
 * run/batch.ts streamSources): both inputs read in every batch from their own offsets, the other
 * stream's rows renamed and widened into this one's columns, a watermark on each input counting
 * toward the query's (the minimum by default). Expectations worked by hand from the rows below.
 */
import { outputColumns } from '../../lib/engine/plan/chain';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, readStream, sum, window } from '../../lib/api/query';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { compileSql } from '../../lib/engine/sql';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { at, createTestRunner } from './engine-factories';

const orders = () => readStream.format('json').schema('id STRING, amount INT, t TIMESTAMP').load();
const refunds = () => readStream.format('json').schema('ref STRING, value BIGINT, at TIMESTAMP').load();

/** A runner with a landing source per other input; `into(k, rows)` drops a file into input k (0: the first source). */
function unionRunner(plan: QueryPlan) {
  const inputSources = (plan.inputs ?? []).map((i) => new InMemoryFileSource(i.source.schema));
  const r = createTestRunner(plan, { inputSources });
  let fileNo = 0;
  return {
    ...r,
    into(k: number, rows: Array<Record<string, unknown>> | string) {
      if (k === 0) r.drop(rows);
      else inputSources[k - 1].add(`part-${String(++fileNo).padStart(5, '0')}.json`, rows);
    },
  };
}

const sorted = (rows: readonly object[]) => [...rows].map((r) => JSON.stringify(r)).sort();

describe('union', () => {
  it("emits both streams' rows under this stream's names, each column of the wider type", async () => {
    const plan = orders().union(refunds()).writeStream.plan();
    const cols = outputColumns(plan);
    expect(cols.map((c) => `${c.name} ${c.type}`)).toEqual(['id STRING', 'amount LONG', 't TIMESTAMP']);
    const r = unionRunner(plan);
    r.into(0, [{ id: 'o1', amount: 5, t: at('12:01') }]);
    // (a BIGINT past 2^53 as the file's text has it: exact through the widening)
    r.into(1, `{"ref":"r1","value":9007199254740993,"at":"${at('12:02')}"}\n`);
    const report = await r.run();
    expect(sorted(report.batches.flatMap((b) => b.rows))).toEqual(
      sorted([
        { id: 'o1', amount: 5, t: '2026-10-01T12:01:00.000Z' },
        { id: 'r1', amount: '9007199254740993', t: '2026-10-01T12:02:00.000Z' },
      ]),
    );
  });

  it('reads each input from its own offsets: a run reads only what is new on either', async () => {
    const r = unionRunner(orders().union(refunds()).writeStream.plan());
    r.into(0, [{ id: 'o1', amount: 1, t: at('12:01') }]);
    r.into(1, [{ ref: 'r1', value: 2, at: at('12:02') }]);
    expect((await r.run()).batches.flatMap((b) => b.rows)).toHaveLength(2);
    r.into(1, [{ ref: 'r2', value: 3, at: at('12:03') }]);
    const second = (await r.run()).batches.flatMap((b) => b.rows);
    expect(second).toEqual([{ id: 'r2', amount: 3, t: '2026-10-01T12:03:00.000Z' }]);
    expect((await r.run()).batches).toHaveLength(0);
  });

  it("aggregates both streams' rows, the window closed by the minimum of the two inputs' watermarks", async () => {
    const plan = orders()
      .withWatermark('t', '0 seconds')
      .union(refunds().withWatermark('at', '0 seconds'))
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('n'), sum('amount').as('total'))
      .writeStream.outputMode('append')
      .plan();
    const r = unionRunner(plan);
    r.into(0, [
      { id: 'o1', amount: 1, t: at('12:01') },
      { id: 'o2', amount: 2, t: at('12:21') },
    ]);
    r.into(1, [{ ref: 'r1', value: 10, at: at('12:02') }]);
    // the orders' watermark is 12:21, the refunds' 12:02: the minimum, 12:02, closes no window
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([]);
    r.into(1, [{ ref: 'r2', value: 20, at: at('12:15') }]);
    // now min(12:21, 12:15) = 12:15 closes 12:00-12:10 (o1 and r1); 12:10-12:20 holds r2, 12:20-12:30 o2
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([
      { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 2, total: 11 },
    ]);
  });

  it("runs a filter after the union on each input, before its watermark: a row it rejects moves neither input's watermark (Spark's PushPredicateThroughNonJoin)", async () => {
    const plan = orders()
      .withWatermark('t', '0 seconds')
      .union(refunds().withWatermark('at', '0 seconds'))
      .filter('amount > 0')
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('append')
      .plan();
    // the filter is in both inputs, as each one's watermark gate
    expect(plan.stages.find((st) => st.kind === 'watermark')).toMatchObject({ gates: [expect.any(Function)] });
    expect(plan.inputs![0].stages.find((st) => st.kind === 'watermark')).toMatchObject({ gates: [expect.any(Function)] });
    const rows = async () => (await r.run()).batches.flatMap((b) => b.rows);
    const r = unionRunner(plan);
    r.into(0, [{ id: 'o1', amount: 1, t: at('12:25') }]);
    // r0 is rejected: the refunds' watermark is 12:02, not 12:30, so min(12:25, 12:02) closes nothing
    r.into(1, [
      { ref: 'r1', value: 5, at: at('12:02') },
      { ref: 'r0', value: -1, at: at('12:30') },
    ]);
    expect(await rows()).toEqual([]);
    // min(12:25, 12:21) = 12:21 closes 12:00-12:10 (r1)
    r.into(1, [{ ref: 'r2', value: 3, at: at('12:21') }]);
    expect(await rows()).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 1 }]);
    // o0 is rejected: the orders' watermark stays 12:25, so min(12:25, 12:40) leaves 12:20-12:30 open
    r.into(0, [{ id: 'o0', amount: 0, t: at('12:59') }]);
    r.into(1, [{ ref: 'r3', value: 1, at: at('12:40') }]);
    expect(await rows()).toEqual([]);
  });

  it('in SQL, a subquery of UNION ALL aggregated by the outer SELECT runs as the frame API does', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT id, count(*) AS n, sum(amount) AS total FROM (
  SELECT id, amount FROM STREAM read_files(format => 'json', schema => 'id STRING, amount INT, t TIMESTAMP')
  UNION ALL
  SELECT ref, value FROM STREAM read_files(format => 'json', schema => 'ref STRING, value BIGINT, at TIMESTAMP') WHERE value > 0
) GROUP BY id`);
    const r = unionRunner(plan);
    r.into(0, [
      { id: 'a', amount: 1, t: at('12:01') },
      { id: 'b', amount: 2, t: at('12:02') },
    ]);
    r.into(1, [
      { ref: 'a', value: 10, at: at('12:03') },
      { ref: 'a', value: -5, at: at('12:04') },
    ]);
    expect(sorted((await r.run()).batches.flatMap((b) => b.rows))).toEqual(
      sorted([
        { id: 'a', n: 2, total: 11 },
        { id: 'b', n: 1, total: 2 },
      ]),
    );
    // the next run: only the group a new row touches, its totals over both runs
    r.into(1, [{ ref: 'b', value: 5, at: at('12:05') }]);
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([{ id: 'b', n: 2, total: 7 }]);
  });

  it('refuses another number of columns, incompatible types, and a union after a stateful operator', () => {
    expect(() => orders().union(refunds().drop('at'))).toThrow(/NUM_COLUMNS_MISMATCH.*first input has 3 columns.*second input has 2 columns/);
    const flags = readStream.format('json').schema('id STRING, amount BOOLEAN, t TIMESTAMP').load();
    expect(() => orders().union(flags)).toThrow(/INCOMPATIBLE_COLUMN_TYPE.*second column of the second input is "BOOLEAN".*"INT"/);
    const counted = orders().groupBy('id').agg(count().as('n'));
    expect(() => counted.union(counted)).toThrow(/union the streams before any groupBy/);
    expect(() => orders().union(orders().groupBy('id').agg(count().as('n')))).toThrow(/before any groupBy/);
    expect(() => orders().union(orders().union(orders()))).toThrow(/one at a time from the left/);
  });
});

describe('unionByName', () => {
  it('matches the columns by name, in any case', async () => {
    const other = readStream.format('json').schema('T TIMESTAMP, ID STRING, Amount INT').load();
    const plan = orders().unionByName(other).writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['id', 'amount', 't']);
    const r = unionRunner(plan);
    r.into(1, [{ T: at('12:05'), ID: 'x', Amount: 7 }]);
    expect((await r.run()).batches.flatMap((b) => b.rows)).toEqual([{ id: 'x', amount: 7, t: '2026-10-01T12:05:00.000Z' }]);
  });

  it('with allowMissingColumns, fills the columns a side lacks with NULL, the other stream extra ones last', async () => {
    const other = readStream.format('json').schema('id STRING, note STRING').load();
    const plan = orders().unionByName(other, true).writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['id', 'amount', 't', 'note']);
    const r = unionRunner(plan);
    r.into(0, [{ id: 'o', amount: 1, t: at('12:01') }]);
    r.into(1, [{ id: 'n', note: 'hi' }]);
    expect(sorted((await r.run()).batches.flatMap((b) => b.rows))).toEqual(
      sorted([
        { id: 'o', amount: 1, t: '2026-10-01T12:01:00.000Z', note: null },
        { id: 'n', amount: null, t: null, note: 'hi' },
      ]),
    );
  });

  it('without it, refuses a column one side lacks, naming the fix', () => {
    const other = readStream.format('json').schema('id STRING, note STRING').load();
    expect(() => orders().unionByName(other)).toThrow(/no column `?amount`?.*allowMissingColumns true/);
  });
});

describe('a union under crashes', () => {
  const plan = () =>
    orders()
      .withWatermark('t', '0 seconds')
      .union(refunds().withWatermark('at', '0 seconds'))
      .groupBy(window('t', '10 minutes'))
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('append')
      .plan();
  const feed = (r: ReturnType<typeof unionRunner>, step: number) => {
    r.into(0, [{ id: `o${step}`, amount: 1 + step, t: at(`12:${step}1`) }]);
    r.into(1, [{ ref: `r${step}`, value: 10 * (step + 1), at: at(`12:${step}5`) }]);
  };

  it.each(CRASH_POINTS)('emits the same rows once when every run crashes once at %s', async (point) => {
    const clean = unionRunner(plan());
    for (const step of [0, 1, 2]) {
      feed(clean, step);
      await clean.run();
    }
    const expected = clean.sinkRows();
    // 12:00-12:10 holds o0 (1) and r0 (10); 12:10-12:20 o1 (2) and r1 (20): both closed by min(12:21, 12:25)
    expect(expected).toEqual([
      { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 11 },
      { window: { start: '2026-10-01T12:10:00.000Z', end: '2026-10-01T12:20:00.000Z' }, total: 22 },
    ]);
    const r = unionRunner(plan());
    let fired = 0;
    for (const step of [0, 1, 2]) {
      feed(r, step);
      if (await r.crashRun({ point })) fired++;
      await r.run();
    }
    expect(r.sinkRows()).toEqual(expected);
    expect(fired).toBeGreaterThan(0);
  });
});

describe('a union, then a stream-stream join', () => {
  it("joins both unioned streams' rows with the third input (the join names its own input after the union's)", async () => {
    const ads = () => readStream.format('json').schema('ad STRING, it TIMESTAMP').load().withWatermark('it', '0 seconds');
    const moreAds = readStream.format('json').schema('ad STRING, it TIMESTAMP').load().withWatermark('it', '0 seconds');
    const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '0 seconds');
    const plan = ads()
      .union(moreAds)
      .join(clicks, { left: 'ad', right: 'cad' }, 'inner', { timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds' } })
      .writeStream.plan();
    // (the other ads join the stream after its join-keys filter, watermark stage and event-time
    // filter: the join's derived filters went into both inputs of the union, the keys' before each
    // one's watermark, the event time's isnotnull after it)
    expect(plan.inputs![0].stages.map((s) => s.kind)).toEqual(['filter', 'watermark', 'filter']);
    expect(plan.inputs!.map((i) => [i.name, i.unionAt])).toEqual([
      ['input2', 3],
      ['input3', undefined],
    ]);
    const r = unionRunner(plan);
    r.into(0, [{ ad: 'a', it: at('12:00') }]);
    r.into(1, [{ ad: 'b', it: at('12:01') }]);
    r.into(2, [
      { cad: 'a', ct: at('12:02') },
      { cad: 'b', ct: at('12:03') },
    ]);
    expect(sorted((await r.run()).batches.flatMap((b) => b.rows))).toEqual(
      sorted([
        { ad: 'a', it: '2026-10-01T12:00:00.000Z', cad: 'a', ct: '2026-10-01T12:02:00.000Z' },
        { ad: 'b', it: '2026-10-01T12:01:00.000Z', cad: 'b', ct: '2026-10-01T12:03:00.000Z' },
      ]),
    );
  });
});

describe('a union, then a filter Spark derives from a join', () => {
  /** Ads (with a watermark) and more ads (with one or not), unioned, joined with the clicks of the 5 minutes after. */
  const adsUnionClicks = (moreAdsWatermark: boolean) => {
    const ads = readStream.format('json').schema('ad STRING, it TIMESTAMP').load().withWatermark('it', '0 seconds');
    const more = readStream.format('json').schema('ad STRING, it TIMESTAMP').load();
    const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '0 seconds');
    return ads
      .union(moreAdsWatermark ? more.withWatermark('it', '0 seconds') : more)
      .join(clicks, { left: 'ad', right: 'cad' }, 'inner', { timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds' } })
      .writeStream.plan();
  };

  it("keeps the other stream's rows out of this stream's watermark: the join's filter goes into each input, not before the union point", async () => {
    // the other stream has no watermark of its own: its event times must not move the query's
    const r = unionRunner(adsUnionClicks(false));
    r.into(0, [{ ad: 'a', it: at('12:00') }]);
    r.into(1, [{ ad: 'b', it: at('13:00') }]);
    r.into(2, [{ cad: 'z', ct: at('13:30') }]);
    const report = await r.run();
    // min(the ads' 12:00, the clicks' 13:30): the other ads' 13:00 counts for no watermark
    expect(report.watermark).toBe('2026-10-01T12:00:00.000Z');
  });

  it("puts the join's inferred key filter into each input of the union, before its watermark: a null key moves neither", async () => {
    const r = unionRunner(adsUnionClicks(true));
    r.into(0, [{ ad: 'a', it: at('12:40') }]);
    r.into(1, [
      { ad: 'b', it: at('12:01') },
      { ad: null, it: at('13:00') },
    ]);
    r.into(2, [{ cad: 'z', ct: at('13:30') }]);
    const report = await r.run();
    // Spark's isnotnull(ad) runs below the other ads' watermark: theirs is 12:01, not 13:00, and the query's min(12:40, 12:01, 13:30)
    expect(report.watermark).toBe('2026-10-01T12:01:00.000Z');
  });
});
