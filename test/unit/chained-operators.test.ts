/**
 * Several stateful operators in one query (issue 18, part 1): the query API's chains and
 * refusals, and the executor's operator loop on in-memory ports: each operator's state, late
 * rows and progress entry, the checkpoint shape, and exactly-once under every crash point.
 */
import { CheckpointMismatchError, InvalidQueryError } from '../../lib/engine/errors';
import { shapeFingerprint } from '../../lib/engine/run/runtime';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { statefulShape } from '../../lib/engine/plan/shape';
import { col, count, sessionWindow, sum, window, windowEnd, windowOf, windowStart, windowTime, renamed } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import type { StreamingProgress } from '../../lib/engine/progress';
import { createTestRunner } from './engine-factories';

const SCHEMA = 'id STRING, t TIMESTAMP, amount LONG';
const events = () => readStream.format('json').schema(SCHEMA).load().withWatermark('t', '0 seconds');
const sec = (s: number) => `2026-10-01 12:00:${String(s).padStart(2, '0')}`;
const iso = (s: number) => `2026-10-01T12:00:${String(s).padStart(2, '0')}.000Z`;
const win = (a: number, b: number) => ({ start: iso(a), end: iso(b) });

/** dropDuplicates(id) (keys kept for good: no event time among them), then count and sum per 10-second window. */
const dedupThenTotals = (partitions = 1) =>
  events()
    .dropDuplicates(['id'])
    .groupBy(window('t', '10 seconds'))
    .agg(count().as('events'), sum('amount').as('total'))
    .writeStream.option('statePartitions', partitions)
    .outputMode('append')
    .queryName('chain')
    .plan();

describe('when a query chains stateful operators', () => {
  it('plans each operator with the stages after it, the first one also as plan.stateful', () => {
    const plan = events()
      .groupBy(window('t', '5 seconds'))
      .count()
      .groupBy(window(col('window'), '10 seconds'))
      .agg(sum('count').as('n'))
      .select('window', 'n')
      .writeStream.plan();
    expect(plan.operators.map((o) => o.spec.kind)).toEqual(['aggregate', 'aggregate']);
    expect(plan.stateful).toBe(plan.operators[0].spec);
    expect(plan.post).toEqual([{ kind: 'select', columns: ['window', 'n'] }]);
    expect(plan.operators[0].post).toEqual([]);
  });

  it("refuses a stateful operator after an aggregation in update and complete mode, with Spark's correctness message", () => {
    const twoAggs = () => events().groupBy(window('t', '5 seconds')).count().groupBy(window('window', '10 seconds')).agg(sum('count').as('n'));
    for (const mode of ['update', 'complete']) {
      expect(() => twoAggs().writeStream.outputMode(mode).plan()).toThrow(InvalidQueryError);
      expect(() => twoAggs().writeStream.outputMode(mode).plan()).toThrow(
        /^Detected pattern of possible 'correctness' issue due to global watermark: in (update|complete) output mode, an aggregation downstream/,
      );
    }
    const withinWatermark = () => events().groupBy(window('t', '5 seconds')).count().dropDuplicatesWithinWatermark(['count']);
    expect(() => withinWatermark().writeStream.outputMode('update').plan()).toThrow(/'correctness' issue.*dropDuplicatesWithinWatermark downstream/);
    // dropDuplicates without an event-time column is not a stateful operation to Spark's check
    const plainDedup = events().groupBy(window('t', '5 seconds')).count().select('count').dropDuplicates(['count']);
    expect(plainDedup.writeStream.outputMode('update').plan().operators).toHaveLength(2);
    // and append mode allows every chain
    expect(twoAggs().writeStream.outputMode('append').plan().operators).toHaveLength(2);
  });

  it('refuses, in append mode, an aggregation after another whose keys carry no watermark', () => {
    // the second groups by `events` (an aggregate: no watermark), so its groups never close
    const q = () => events().groupBy(window('t', '5 seconds')).agg(count().as('events')).groupBy('events').count();
    expect(() => q().writeStream.outputMode('append').plan()).toThrow(
      /^Append output mode not supported when there are streaming aggregations on streaming DataFrames\/DataSets without watermark/,
    );
  });

  it("refuses dropDuplicatesWithinWatermark without a watermark with Spark's text", () => {
    const q = readStream.format('json').schema(SCHEMA).load().dropDuplicatesWithinWatermark(['id']);
    expect(() => q.writeStream.plan()).toThrow(/^dropDuplicatesWithinWatermark is not supported on streaming DataFrames\/DataSets without watermark/);
  });

  it("keeps a one-operator query's checkpoint shape, and gives a chain a shape of its own", () => {
    const one = events().groupBy(window('t', '5 seconds')).count().writeStream.plan();
    // the shape written by checkpoints before chains existed, spelled out
    const before = {
      kind: 'aggregate',
      keys: [{ window: 't', durationMs: 5000, slideMs: 5000, startMs: 0 }],
      aggs: [{ fn: 'count', column: null, as: 'count' }],
      watermarks: ['t'],
      outputMode: 'append',
    };
    // (the shape as it was when TIMESTAMP state was in ms: what recovery recognises to refuse it by name)
    expect(shapeFingerprint(statefulShape(one, true))).toBe(shapeFingerprint(before));
    // since issue 29: bounds in µs, and the mark that the state's times are µs
    const now = { ...before, keys: [{ window: 't', durationUs: 5_000_000, slideUs: 5_000_000, startUs: 0 }] };
    expect(statefulShape(one)).toEqual({ ...now, timestamps: 'us' });
    const chain = events().groupBy(window('t', '5 seconds')).count().groupBy(window('window', '10 seconds')).count().writeStream.plan();
    expect(statefulShape(chain)).toEqual({
      kind: 'chain',
      operators: [now, { ...now, keys: [{ window: 'window', durationUs: 10_000_000, slideUs: 10_000_000, startUs: 0 }] }],
      watermarks: ['t'],
      outputMode: 'append',
      timestamps: 'us',
    });
  });

  it('refuses a checkpoint whose state was written with millisecond TIMESTAMPs, naming the remedy', async () => {
    const plan = events().groupBy(window('t', '5 seconds')).count().writeStream.queryName('ms-state').plan();
    const t = createTestRunner(plan);
    // a checkpoint as a version before issue 29 created it: the shape with ms bounds, no mark
    const legacy = statefulShape(plan, true);
    await t.checkpoint.writeMetadata({ id: 'q', name: 'ms-state', createdAtMs: 0, shape: legacy, shapeFingerprint: shapeFingerprint(legacy) });
    t.drop([{ id: 'a', t: sec(1), amount: 1 }]);
    await expect(t.run()).rejects.toThrow(/TIMESTAMP values were epoch milliseconds.*new checkpoint location/);
    // a stateful query with no time in its state keeps its checkpoint: its shape did not change
    const counts = readStream.format('json').schema('id STRING, amount DOUBLE').load().groupBy('id').count().writeStream.outputMode('update').plan();
    expect(statefulShape(counts)).toEqual(statefulShape(counts, true));
  });

  it('refuses to run a chain on the checkpoint of its first operator alone', async () => {
    const single = events().dropDuplicates(['id']).writeStream.queryName('chain').plan();
    const t = createTestRunner(single);
    t.drop([{ id: 'a', t: sec(1), amount: 1 }]);
    await t.run();
    const chained = createTestRunner(dedupThenTotals(), { checkpoint: t.checkpoint, state: t.state });
    await expect(chained.run()).rejects.toThrow(CheckpointMismatchError);
  });
});

describe('when dropDuplicates feeds a window aggregation', () => {
  // Step 1: a@1 (5), b@2 (7), a@3 (duplicate of a), c@12 (11): the dedup keeps a, b, c; windows
  // [0,10) events 2 total 12 and [10,20) events 1 total 11. Watermark 12 s: the no-data batch
  // emits [0,10). Step 2: d@4 is late at the dedup (4 s <= 12 s); b@15 is a duplicate; e@25 (3)
  // opens [20,30). Watermark 25 s: the no-data batch emits [10,20).
  const step1 = [
    { id: 'a', t: sec(1), amount: 5 },
    { id: 'b', t: sec(2), amount: 7 },
    { id: 'a', t: sec(3), amount: 100 },
    { id: 'c', t: sec(12), amount: 11 },
  ];
  const step2 = [
    { id: 'd', t: sec(4), amount: 1 },
    { id: 'b', t: sec(15), amount: 100 },
    { id: 'e', t: sec(25), amount: 3 },
  ];

  it('emits each window once, counts state rows per operator and late rows where they were dropped', async () => {
    const t = createTestRunner(dedupThenTotals());
    t.drop(step1);
    const r1 = await t.run();
    expect(r1.batches.flatMap((b) => b.rows)).toEqual([{ window: win(0, 10), events: 2, total: 12 }]);
    expect(r1.stateRowsByOperator).toEqual([3, 1]);
    expect(r1.stateRows).toBe(4);
    t.drop(step2);
    const r2 = await t.run();
    expect(r2.batches.flatMap((b) => b.rows)).toEqual([{ window: win(10, 20), events: 1, total: 11 }]);
    // dedup keys a, b, c, e (kept for good); windows [20,30) open
    expect(r2.stateRowsByOperator).toEqual([4, 1]);
    expect(r2.droppedByWatermark).toBe(1);
    expect(r2.batches[0].droppedByOperator).toEqual([1, 0]);
  });

  it("gives each operator its own progress entry and its own state, and records every operator's rows in commits/N", async () => {
    const t = createTestRunner(dedupThenTotals());
    t.drop(step1);
    await t.run();
    t.drop(step2);
    const r = await t.run();
    const data = r.progress[0] as StreamingProgress;
    expect(data.stateOperators.map((o) => o.operatorName)).toEqual(['dedupe', 'stateStoreSave']);
    expect(data.stateOperators.map((o) => o.numRowsDroppedByWatermark)).toEqual([1, 0]);
    // batch 2: the dedup writes e; the aggregation writes [20,30)
    expect(data.stateOperators.map((o) => o.numRowsUpdated)).toEqual([1, 1]);
    const noData = r.progress[1] as StreamingProgress;
    expect(noData.stateOperators.map((o) => [o.numRowsTotal, o.numRowsRemoved])).toEqual([
      [4, 0],
      [1, 1],
    ]);
    const commit = await t.checkpoint.readCommit(r.batches[1].batchId);
    expect(commit).toMatchObject({ stateRows: 5, stateRowsByOperator: [4, 1] });
    expect((await t.state.all({ operatorId: 'op0', fixedEviction: false, evictionGranularityMs: 1000 }, r.batches[1].batchId)).length).toBe(4);
  });

  it('writes the late rows of any operator to the side output, with the operator that dropped them', async () => {
    const t = createTestRunner(dedupThenTotals());
    t.drop(step1);
    await t.run();
    t.drop(step2);
    await t.run();
    expect(t.lateRows.all('late')).toEqual([expect.objectContaining({ row: { id: 'd', t: iso(4), amount: 1 }, operatorId: 'op0', watermark: iso(12) })]);
  });

  it.each(
    CRASH_POINTS.flatMap(
      (p) =>
        [
          [p, 1],
          [p, 4],
        ] as const,
    ),
  )('gives the no-crash result after a crash at %s (state partitions %d)', async (point, partitions) => {
    const clean = createTestRunner(dedupThenTotals(partitions));
    const crashed = createTestRunner(dedupThenTotals(partitions));
    let fired = 0;
    for (const rows of [step1, step2]) {
      clean.drop(rows);
      crashed.drop(rows);
      await clean.run();
      if (await crashed.crashRun({ point })) fired++;
      await crashed.run();
    }
    expect(fired).toBeGreaterThan(0);
    const byBatch = (t: typeof clean) => [...t.sink.batches.entries()].sort((a, b) => a[0] - b[0]);
    expect(byBatch(crashed)).toEqual(byBatch(clean));
    const head = await crashed.checkpoint.head();
    const last = await crashed.checkpoint.readCommit(head.latestCommitBatch);
    expect(last?.stateRowsByOperator).toEqual([4, 1]);
  });
});

describe("when a select takes a window's parts (FORMAT-2's select items)", () => {
  it('emits a window, its start, end and window_time, and renames, as the items say', async () => {
    const plan = readStream
      .format('json')
      .schema(SCHEMA)
      .load()
      .select(windowOf(window('t', '10 seconds'), 'w'), renamed('id', 'key'))
      .select('w', 'key', windowStart('w', 'from'), windowEnd('w', 'to'), windowTime('w', 'wt'))
      .writeStream.plan();
    const t = createTestRunner(plan);
    t.drop([{ id: 'a', t: sec(13), amount: 1 }]);
    const r = await t.run();
    // window_time is the end - 1 µs, exactly (TIMESTAMP values are epoch µs)
    expect(r.batches.flatMap((b) => b.rows)).toEqual([{ w: win(10, 20), key: 'a', from: iso(10), to: iso(20), wt: '2026-10-01T12:00:19.999999Z' }]);
  });

  it('refuses a window part of a column that is not a window', () => {
    expect(() => readStream.format('json').schema(SCHEMA).load().select(windowEnd('t', 'end')).writeStream.plan()).toThrow(
      /windowEnd\(t\) needs a window column/,
    );
  });
});

describe('when a session window is taken over an earlier aggregation’s window', () => {
  it('opens each session at the window_time of the window (its end − 1 µs)', async () => {
    // a@1, b@6, c@7, d@40 counted per 5 s: [0,5) 1, [5,10) 2, [40,45) 1. Sessions of 3 s gap over
    // their window_times 4.999 s and 9.999 s: 9.999 > 4.999 + 3, so two sessions, [4.999, 7.999)
    // of 1 and [9.999, 12.999) of 2.
    // (grouped by amount too, 1 on every row: a streaming session window needs a column besides it)
    const plan = events()
      .groupBy(window('t', '5 seconds'), 'amount')
      .count()
      .groupBy(sessionWindow('window', '3 seconds'), 'amount')
      .agg(sum('count').as('events'))
      .writeStream.plan();
    const t = createTestRunner(plan);
    t.drop([
      { id: 'a', t: sec(1), amount: 1 },
      { id: 'b', t: sec(6), amount: 1 },
      { id: 'c', t: sec(7), amount: 1 },
      { id: 'd', t: sec(40), amount: 1 },
    ]);
    const r = await t.run();
    // watermark 40 s: both sessions (ending 7.999 s and 12.999 s) close; [40,45) stays in op0
    const rows = r.batches
      .flatMap((b) => b.rows)
      .sort((x, y) => ((x.session_window as { start: string }).start < (y.session_window as { start: string }).start ? -1 : 1));
    expect(rows.map((row) => row.events)).toEqual([1, 2]);
    // (window_time is the end − 1 µs, kept exactly: the sessions start at 4.999999 s and 9.999999 s)
    expect(rows.map((row) => (row.session_window as { start: string }).start)).toEqual(['2026-10-01T12:00:04.999999Z', '2026-10-01T12:00:09.999999Z']);
    expect(rows.map((row) => (row.session_window as { end: string }).end)).toEqual(['2026-10-01T12:00:07.999999Z', '2026-10-01T12:00:12.999999Z']);
  });
});
