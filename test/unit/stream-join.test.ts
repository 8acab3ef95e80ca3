/**
 * Stream-stream joins (issue 18): the query API's joins of two streams and Spark's refusals, and
 * the executor with two sources on in-memory ports: each input's offsets and rate limits, the
 * state watermarks, the watermark a downstream operator gets, the min/max policy, late rows of
 * each side, the progress record, the "state grows forever" warning, the checkpoint shape, and
 * exactly-once under every crash point.
 */
import { CheckpointMismatchError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { RunReport } from '../../lib/engine/run/types';
import { statefulShape } from '../../lib/engine/plan/shape';
import { shapeFingerprint } from '../../lib/engine/run/runtime';
import { count, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { createTestRunner } from './engine-factories';

const sec = (s: number) => new Date(Date.UTC(2026, 9, 1, 12, 0, s)).toISOString().replace('T', ' ').slice(0, 19);
const iso = (s: number) => new Date(Date.UTC(2026, 9, 1, 12, 0, s)).toISOString();

const IMPRESSIONS = 'adId STRING, impressionTime TIMESTAMP';
const CLICKS = 'clickAdId STRING, clickTime TIMESTAMP';
const impressions = (delay = '0 seconds') => readStream.format('json').schema(IMPRESSIONS).load().withWatermark('impressionTime', delay);
const clicks = (delay = '0 seconds') => readStream.format('json').schema(CLICKS).load().withWatermark('clickTime', delay);
/** A click counts for an impression when it comes within 10 seconds after it. */
const within10s = { left: 'impressionTime', right: 'clickTime', lower: '-10 seconds', upper: '0 seconds' };

/** The unit tests' runner (engine-factories.ts) with a landing source per joined input; each run a fresh executor. */
function joinRunner(plan: QueryPlan) {
  const inputSources = (plan.inputs ?? []).map((i) => new InMemoryFileSource(i.source.schema));
  const r = createTestRunner(plan, { inputSources });
  let fileNo = 0;
  return {
    ...r,
    inputSources,
    left: (rows: Array<Record<string, unknown>> | string) => r.drop(rows as Parameters<typeof r.drop>[0]),
    right: (rows: Array<Record<string, unknown>> | string, input = 0) => inputSources[input].add(`part-${String(++fileNo).padStart(5, '0')}.json`, rows),
    run: (): Promise<RunReport> => r.run(),
  };
}

const rows = (report: RunReport) => report.batches.flatMap((b) => b.rows);

describe('when a query joins two streams', () => {
  it('plans the other stream as an input with its own watermark stage, rate limits and name', () => {
    const plan = impressions()
      .join(
        readStream.format('json').schema(CLICKS).option('maxFilesPerTrigger', 2).load('s3://b/clicks').withWatermark('clickTime', '5 seconds'),
        { left: 'adId', right: 'clickAdId' },
        'inner',
        { timeRange: within10s, name: 'clicks' },
      )
      .writeStream.plan();
    expect(plan.inputs).toHaveLength(1);
    expect(plan.inputs![0]).toMatchObject({ name: 'clicks', limits: { maxFilesPerTrigger: 2 }, source: { kind: 'files', path: 's3://b/clicks' } });
    // the input's watermark stage gets an id of its own (the checkpoint keeps each one's watermark
    // by id); before each watermark, the filter Spark infers from an inner equi-join (keys not null)
    // (and after it, the isnotnull of the event time the time range reads: a predicate on the event time stays above the watermark)
    expect(plan.inputs![0].stages.map((s) => (s.kind === 'watermark' ? s.id : s.kind))).toEqual(['filter', 'in0wm0', 'filter']);
    expect(plan.stages.map((s) => (s.kind === 'watermark' ? s.id : s.kind))).toEqual(['filter', 'wm0', 'filter']);
    expect(plan.operators.map((o) => o.spec.kind)).toEqual(['streamJoin']);
    expect(statefulShape(plan)).toMatchObject({ kind: 'chain', inputs: [{ name: 'clicks', kind: 'files', watermarks: ['clickTime'] }] });
  });

  it("refuses what Spark refuses, with Spark's messages", () => {
    const join = (type: string, range?: object, lw = true, rw = true) =>
      (lw ? impressions() : readStream.format('json').schema(IMPRESSIONS).load()).join(
        rw ? clicks() : readStream.format('json').schema(CLICKS).load(),
        { left: 'adId', right: 'clickAdId' },
        type,
        range ? { timeRange: range as typeof within10s } : {},
      );
    expect(() => join('inner', within10s).writeStream.outputMode('update').plan()).toThrow(
      /^Join between two streaming DataFrames\/Datasets is not supported in Update output mode, only in Append output mode/,
    );
    // complete mode needs an aggregation first (Spark checks that before the join)
    expect(() => join('inner', within10s).writeStream.outputMode('complete').plan()).toThrow(
      /^Complete output mode not supported when there are no streaming aggregations/,
    );
    // with an aggregation after the join, the join's own refusal of complete mode
    expect(() => join('inner', within10s).groupBy('adId').agg(count().as('n')).writeStream.outputMode('complete').plan()).toThrow(
      /^Join between two streaming DataFrames\/Datasets is not supported in Complete output mode, only in Append output mode/,
    );
    const noWatermark =
      /^Stream-stream (LeftOuter|RightOuter|FullOuter|LeftSemi) join between two streaming DataFrame\/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition/;
    expect(() => join('leftOuter').writeStream.plan()).toThrow(noWatermark);
    expect(() => join('left_semi', within10s, true, false).writeStream.plan()).toThrow(/LeftSemi join/);
    // the check asks the other side's watermark only (getStateValueWatermark of the left side
    // against the right's watermarked column), not the nullable side's own: accepted
    expect(join('leftOuter', within10s, false, true).writeStream.plan().inputs).toHaveLength(1);
    expect(join('rightOuter', within10s, true, false).writeStream.plan().inputs).toHaveLength(1);
    // a range with only a lower bound gives the left side a state watermark, not the right one
    const lowerOnly = { left: 'impressionTime', right: 'clickTime', lower: '-10 seconds' };
    expect(join('leftOuter', lowerOnly).writeStream.plan().inputs).toHaveLength(1);
    expect(() => join('rightOuter', lowerOnly).writeStream.plan()).toThrow(/RightOuter join/);
    // a full outer join needs one side's state watermark at least (Spark's check: either side)
    expect(join('fullOuter', lowerOnly).writeStream.plan().inputs).toHaveLength(1);
    expect(() => join('fullOuter').writeStream.plan()).toThrow(/FullOuter join/);
    expect(() => join('anti', within10s)).toThrow(/^Left anti joins with a streaming DataFrame\/Dataset on the right are not supported/);
    // an inner join without watermarks is allowed (its state grows: the run report says so)
    expect(join('inner', undefined, false, false).writeStream.plan().inputs).toHaveLength(1);
    // a name on both sides, a range over a non-TIMESTAMP column
    expect(() =>
      impressions()
        .join(readStream.format('json').schema('adId STRING, clickTime TIMESTAMP').load(), 'adId')
        .join(clicks(), { left: 'adId', right: 'clickAdId' }),
    ).toThrow(/column clickTime is on both sides/);
    expect(() =>
      impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', { timeRange: { left: 'adId', right: 'clickTime', lower: '0 seconds' } }),
    ).toThrow(/timeRange column adId is STRING, not a TIMESTAMP/);
  });

  it('runs a leftOuter join whose left input has no watermark as Spark does: the left rows stay, and no outer row is ever emitted', async () => {
    // (Spark's check passes on the right's watermark; its join removes a side's rows only when that
    // side has a watermark of its own: StreamingSymmetricHashJoinHelper.getOneSideStateWatermarkPredicate)
    const plan = readStream
      .format('json')
      .schema(IMPRESSIONS)
      .load()
      .join(clicks(), { left: 'adId', right: 'clickAdId' }, 'leftOuter', { timeRange: within10s })
      .writeStream.plan();
    const r = joinRunner(plan);
    r.left([
      { adId: 'a', impressionTime: sec(1) },
      { adId: 'b', impressionTime: sec(2) },
    ]);
    r.right([{ clickAdId: 'a', clickTime: sec(5) }]);
    expect(rows(await r.run())).toEqual([{ adId: 'a', impressionTime: iso(1), clickAdId: 'a', clickTime: iso(5) }]);
    r.right([{ clickAdId: 'z', clickTime: sec(300) }]);
    const later = await r.run();
    // the global watermark is the right's alone (300 s - its delay): far past b, which still waits
    expect(Date.parse(later.watermark)).toBeGreaterThan(Date.parse(iso(200)));
    expect(rows(later)).toEqual([]);
    // a and b, and both right rows: the right's have no state watermark either (the left has no
    // watermarked column to bound them by), so they stay too
    expect(later.stateRows).toBe(4);
  });

  it('joins each batch with the other side buffered so far, and emits an unmatched row of an outer join only when the watermark passes it', async () => {
    const plan = impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, 'leftOuter', { timeRange: within10s }).writeStream.queryName('ads').plan();
    const r = joinRunner(plan);
    r.left([
      { adId: 'a', impressionTime: sec(1) },
      { adId: 'b', impressionTime: sec(2) },
    ]);
    r.right([{ clickAdId: 'a', clickTime: sec(5) }]);
    const run1 = await r.run();
    // both sources read in one batch: the left rows first, then the right row matched with them
    expect(rows(run1)).toEqual([{ adId: 'a', impressionTime: iso(1), clickAdId: 'a', clickTime: iso(5) }]);
    // global watermark min(2, 5) = 2 s: left rows leave at <= 2 - 10 s - 1 ms: nothing yet
    expect(run1.watermark).toBe(iso(2));
    expect(run1.stateRows).toBe(3);
    r.right([{ clickAdId: 'z', clickTime: sec(30) }]);
    r.left([{ adId: 'c', impressionTime: sec(25) }]);
    const run2 = await r.run();
    // watermark min(25, 30) = 25: left rows at <= 14.999 s leave; b never matched: its outer row
    expect(run2.batches.map((b) => b.noData)).toEqual([false, true]);
    expect(rows(run2)).toEqual([{ adId: 'b', impressionTime: iso(2), clickAdId: null, clickTime: null }]);
    // right rows leave at <= 25 - 0 - 1 ms: the click at 5 s; left c (25 s) and right z (30 s) stay
    expect(run2.stateRows).toBe(2);
    expect(run2.warnings).toBeUndefined();
  });

  it('reads each input up to its own latest offset, with its own rate limit', async () => {
    const plan = impressions()
      .join(
        readStream.format('json').schema(CLICKS).option('maxFilesPerTrigger', 1).load().withWatermark('clickTime', '0 seconds'),
        { left: 'adId', right: 'clickAdId' },
        'inner',
        { timeRange: within10s },
      )
      .writeStream.plan();
    const r = joinRunner(plan);
    r.left([{ adId: 'a', impressionTime: sec(1) }]);
    r.right([{ clickAdId: 'a', clickTime: sec(2) }]);
    r.right([{ clickAdId: 'a', clickTime: sec(3) }]);
    r.right([{ clickAdId: 'a', clickTime: sec(4) }]);
    const report = await r.run();
    const data = report.batches.filter((b) => !b.noData);
    // the clicks one file a batch; the impressions, unlimited, all in the first
    expect(data.map((b) => b.numInputRows)).toEqual([2, 1, 1]);
    expect(rows(report).map((x) => x.clickTime)).toEqual([iso(2), iso(3), iso(4)]);
    const progress = report.progress[0];
    expect(progress.sources.map((s) => s.numInputRows)).toEqual([1, 1]);
    expect(progress.stateOperators.map((o) => o.operatorName)).toEqual(['symmetricHashJoin']);
    expect(progress.stateOperators[0].numRowsTotal).toBe(2);
  });

  it('lowers the watermark of an operator after the join by its state watermarks', async () => {
    // state watermarks: impressions at E - 10 s - 1 ms, clicks at E - 0 - 1 ms; the aggregation
    // after the join evicts with min(E, those) = E - 10.001 s
    const plan = impressions()
      .join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', { timeRange: within10s })
      .groupBy(window('impressionTime', '10 seconds'))
      .agg(count().as('clicks'))
      .writeStream.queryName('per-window')
      .plan();
    const r = joinRunner(plan);
    r.left([
      { adId: 'a', impressionTime: sec(1) },
      { adId: 'b', impressionTime: sec(3) },
    ]);
    r.right([
      { clickAdId: 'a', clickTime: sec(4) },
      { clickAdId: 'b', clickTime: sec(9) },
    ]);
    expect(rows(await r.run())).toEqual([]);
    // global 21 s: the aggregation's watermark is 10.999 s, past the end of [0, 10)
    r.left([{ adId: 'c', impressionTime: sec(21) }]);
    r.right([{ clickAdId: 'x', clickTime: sec(22) }]);
    const second = await r.run();
    expect(second.watermark).toBe(iso(21));
    expect(rows(second)).toEqual([{ window: { start: iso(0), end: iso(10) }, clicks: 2 }]);
  });

  it('follows the fastest input with multipleWatermarkPolicy max', async () => {
    const make = (policy?: string) => {
      const w = impressions('5 seconds').join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', { timeRange: within10s }).writeStream;
      return (policy ? w.option('multipleWatermarkPolicy', policy) : w).plan();
    };
    for (const [policy, expected] of [
      [undefined, iso(15)],
      ['max', iso(40)],
    ] as const) {
      const r = joinRunner(make(policy));
      r.left([{ adId: 'a', impressionTime: sec(20) }]);
      r.right([{ clickAdId: 'a', clickTime: sec(40) }]);
      expect((await r.run()).watermark).toBe(expected);
    }
    expect(() => impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }).writeStream.option('multipleWatermarkPolicy', 'avg')).toThrow(
      /multipleWatermarkPolicy="avg" is not 'min' or 'max'/,
    );
    expect(statefulShape(make('max'))).not.toEqual(statefulShape(make()));
  });

  it('drops late rows of each side by its own event-time column, and keeps them with the columns of their side', async () => {
    const plan = impressions()
      .join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', { timeRange: within10s })
      .writeStream.lateRows('dead-letter')
      .plan();
    const r = joinRunner(plan);
    r.left([{ adId: 'a', impressionTime: sec(30) }]);
    r.right([{ clickAdId: 'a', clickTime: sec(31) }]);
    await r.run();
    // watermark 30 s: rows at or before it are late on both sides
    r.left([{ adId: 'old', impressionTime: sec(29) }]);
    r.right([{ clickAdId: 'old', clickTime: sec(30) }]);
    const second = await r.run();
    expect(second.droppedByWatermark).toBe(2);
    const late = r.lateRows.all('late').map((x) => (x as { row: unknown }).row);
    expect(late).toEqual([
      { adId: 'old', impressionTime: iso(29) },
      { clickAdId: 'old', clickTime: iso(30) },
    ]);
  });

  it('says in the run report that a side without a state watermark grows forever', async () => {
    const plan = readStream
      .format('json')
      .schema(IMPRESSIONS)
      .load()
      .join(readStream.format('json').schema(CLICKS).load(), { left: 'adId', right: 'clickAdId' })
      .writeStream.plan();
    const r = joinRunner(plan);
    r.left([{ adId: 'a', impressionTime: sec(1) }]);
    r.right([
      { clickAdId: 'a', clickTime: sec(2) },
      { clickAdId: null, clickTime: sec(3) },
    ]);
    const report = await r.run();
    expect(rows(report)).toEqual([{ adId: 'a', impressionTime: iso(1), clickAdId: 'a', clickTime: iso(2) }]);
    // a null key never matches; in an inner join Spark filters it out before the join (isnotnull
    // inferred from the equi-join), so it is not buffered either
    expect(report.stateRows).toBe(2);
    expect(report.warnings).toEqual([
      expect.stringMatching(
        /^the stream-stream join op0 with input2 keeps every row of its left and right \(input2\) sides in state, so its state grows forever/,
      ),
    ]);
    // a range with one bound leaves one side growing
    const oneSide = impressions()
      .join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', { timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-10 seconds' } })
      .writeStream.plan();
    const r2 = joinRunner(oneSide);
    r2.left([{ adId: 'a', impressionTime: sec(1) }]);
    expect((await r2.run()).warnings).toEqual([expect.stringContaining('keeps every row of its right (input2) side in state')]);
  });

  it('refuses to restart on a checkpoint of another join', async () => {
    const plan = (type: string) => impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, type, { timeRange: within10s }).writeStream.plan();
    const r = joinRunner(plan('inner'));
    r.left([{ adId: 'a', impressionTime: sec(1) }]);
    await r.run();
    const other = new MicroBatchExecutor({
      plan: plan('leftOuter'),
      source: r.source,
      inputSources: r.inputSources,
      checkpoint: r.checkpoint,
      state: r.state,
      sink: r.sink,
    });
    await expect(other.run()).rejects.toBeInstanceOf(CheckpointMismatchError);
  });

  it('needs one source per input', () => {
    const plan = impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }).writeStream.plan();
    const r = joinRunner(plan);
    expect(() => new MicroBatchExecutor({ plan, source: r.source, checkpoint: r.checkpoint, state: r.state, sink: r.sink })).toThrow(
      /reads 1 other stream\(s\), joined or unioned, \(input2\) but the executor was given 0 input source\(s\)/,
    );
  });

  it('joins three streams, each one its own offsets', async () => {
    const views = readStream.format('json').schema('viewAdId STRING, viewTime TIMESTAMP').load();
    const plan = readStream
      .format('json')
      .schema(IMPRESSIONS)
      .load()
      .join(readStream.format('json').schema(CLICKS).load(), { left: 'adId', right: 'clickAdId' })
      .join(views, { left: 'adId', right: 'viewAdId' })
      .writeStream.plan();
    expect(plan.inputs!.map((i) => i.name)).toEqual(['input2', 'input3']);
    const r = joinRunner(plan);
    r.left([{ adId: 'a', impressionTime: sec(1) }]);
    r.right([{ clickAdId: 'a', clickTime: sec(2) }], 0);
    await r.run();
    r.right([{ viewAdId: 'a', viewTime: sec(3) }], 1);
    const second = await r.run();
    expect(rows(second)).toEqual([{ adId: 'a', impressionTime: iso(1), clickAdId: 'a', clickTime: iso(2), viewAdId: 'a', viewTime: iso(3) }]);
    expect(second.stateRowsByOperator).toEqual([2, 2]);
  });
});

describe('when a stream-stream join crashes and the next run resumes', () => {
  const plan = () =>
    impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, 'fullOuter', { timeRange: within10s }).writeStream.queryName('full').plan();
  const feed = (r: ReturnType<typeof joinRunner>, step: number) => {
    if (step === 0) {
      r.left([
        { adId: 'a', impressionTime: sec(1) },
        { adId: 'b', impressionTime: sec(2) },
      ]);
      r.right([
        { clickAdId: 'a', clickTime: sec(4) },
        { clickAdId: 'q', clickTime: sec(5) },
      ]);
    } else {
      r.left([{ adId: 'c', impressionTime: sec(40) }]);
      r.right([{ clickAdId: 'c', clickTime: sec(41) }]);
    }
  };
  const clean = async () => {
    const r = joinRunner(plan());
    for (const step of [0, 1]) {
      feed(r, step);
      await r.run();
    }
    return r.sinkRows();
  };

  it("emits the matches and both sides' outer rows", async () => {
    const out = await clean();
    expect(out).toEqual([
      { adId: 'a', impressionTime: iso(1), clickAdId: 'a', clickTime: iso(4) },
      { adId: 'c', impressionTime: iso(40), clickAdId: 'c', clickTime: iso(41) },
      { adId: 'b', impressionTime: iso(2), clickAdId: null, clickTime: null },
      { adId: null, impressionTime: null, clickAdId: 'q', clickTime: iso(5) },
    ]);
  });

  it.each(CRASH_POINTS)('emits the same rows once when every run crashes once at %s', async (point) => {
    const expected = await clean();
    const r = joinRunner(plan());
    let fired = 0;
    for (const step of [0, 1]) {
      feed(r, step);
      if (await r.crashRun({ point })) fired++;
      await r.run();
    }
    expect(r.sinkRows()).toEqual(expected);
    expect(fired).toBeGreaterThan(0);
  });
});

describe('when a stream-stream join buffers its rows in blocks (issue 31)', () => {
  const spec = { operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 1000 };
  const leftOuter = () =>
    impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, 'leftOuter', { timeRange: within10s }).writeStream.queryName('blocks').plan();

  it('writes a batch’s rows as blocks of columns, and a later match as a flags entry beside its block', async () => {
    const r = joinRunner(leftOuter());
    r.left([
      { adId: 'a', impressionTime: sec(1) },
      { adId: 'b', impressionTime: sec(2) },
    ]);
    await r.run();
    const first = await r.state.all(spec, 0);
    expect(first.map((e) => e.key.id)).toEqual(['L0.0.0']);
    // the rows in order of removal time (when the watermark reaches impressionTime + 10 s + 1 ms), times as exact differences
    expect(first[0].value).toEqual({ m: '00', c: [['a', 'b'], { d: [Date.UTC(2026, 9, 1, 12, 0, 1) * 1000, 1_000_000] }] });
    expect(first[0].key.evictAt).toBe(Date.UTC(2026, 9, 1, 12, 0, 1) + 10_001);

    r.right([{ clickAdId: 'b', clickTime: sec(5) }]);
    const second = await r.run();
    expect(rows(second)).toEqual([{ adId: 'b', impressionTime: iso(2), clickAdId: 'b', clickTime: iso(5) }]);
    const at = second.batches.at(-1)!.batchId;
    const entries = new Map((await r.state.all(spec, at)).map((e) => [e.key.id, e]));
    // the block is as batch 0 wrote it; b's flag is in the flags entry; the click is a block of its own
    expect(entries.get('L0.0.0')!.value).toEqual(first[0].value);
    expect(entries.get('L0.0.0~')!.value).toEqual({ m: '01' });
    expect(entries.get('L0.0.0~')!.key.evictAt).toBe(first[0].key.evictAt);
    expect([...entries.keys()].sort()).toEqual(['L0.0.0', 'L0.0.0~', `R0.${at}.0`]);

    // a fresh run reads blocks and flags back: only a, unmatched, gets its row with nulls
    r.left([{ adId: 'z', impressionTime: sec(60) }]);
    r.right([{ clickAdId: 'y', clickTime: sec(61) }]);
    const third = await r.run();
    expect(rows(third)).toEqual([{ adId: 'a', impressionTime: iso(1), clickAdId: null, clickTime: null }]);
    // a's and b's block left whole, with its flags entry
    const left = (await r.state.all(spec, third.batches.at(-1)!.batchId)).map((e) => e.key.id);
    expect(left.filter((id) => id.startsWith('L0.0.0'))).toEqual([]);
  });

  it('cuts a batch’s rows into blocks of at most 1,024 rows and about 60 KB, and reads them all back', async () => {
    const r = joinRunner(leftOuter());
    const at = (ms: number) => new Date(Date.UTC(2026, 9, 1, 12, 0, 0) + ms).toISOString().replace('T', ' ').slice(0, 23);
    const ids = Array.from({ length: 2500 }, (_, i) => `ad${i}`);
    r.left(ids.map((adId, i) => ({ adId, impressionTime: at(i) })));
    await r.run();
    const blocks = (await r.state.all(spec, 0)).map((e) => (e.value as { m: string }).m.length).sort((a, b) => b - a);
    expect(blocks).toEqual([1024, 1024, 452]);
    // every 7th impression clicked 5 s after it, in a fresh run (the blocks read back)
    const clicked = ids.filter((_, i) => i % 7 === 0);
    r.right(clicked.map((adId) => ({ clickAdId: adId, clickTime: at(ids.indexOf(adId) + 5000) })));
    const out = rows(await r.run());
    expect(out.map((o) => o.adId).sort()).toEqual([...clicked].sort());
    for (const o of out) expect(o.clickAdId).toBe(o.adId);

    // rows of 31,000 characters: two would pass 60 KB (61,440 bytes), so each is a block of its own
    const wide = joinRunner(
      readStream
        .format('json')
        .schema('adId STRING, impressionTime TIMESTAMP, note STRING')
        .load()
        .withWatermark('impressionTime', '0 seconds')
        .join(clicks(), { left: 'adId', right: 'clickAdId' }, 'leftOuter', { timeRange: within10s })
        .writeStream.plan(),
    );
    wide.left(['x', 'y', 'z'].map((adId, i) => ({ adId, impressionTime: sec(i + 1), note: adId.repeat(31_000) })));
    await wide.run();
    expect((await wide.state.all(spec, 0)).map((e) => (e.value as { m: string }).m)).toEqual(['0', '0', '0']);
  });

  it.each(['mid-state', 'before-commit', 'after-sink'] as const)(
    'reads its state again when the same executor replays a batch that crashed at %s (the rows it kept in memory are not the store’s)',
    async (point) => {
      const feed = (r: ReturnType<typeof joinRunner>) => {
        r.left([
          { adId: 'a', impressionTime: sec(1) },
          { adId: 'b', impressionTime: sec(2) },
        ]);
        r.right([{ clickAdId: 'a', clickTime: sec(3) }]);
      };
      const later = (r: ReturnType<typeof joinRunner>) => {
        r.left([{ adId: 'c', impressionTime: sec(30) }]);
        r.right([
          { clickAdId: 'b', clickTime: sec(4) },
          { clickAdId: 'c', clickTime: sec(31) },
        ]);
      };
      const clean = joinRunner(leftOuter());
      feed(clean);
      await clean.run();
      later(clean);
      await clean.run();

      const r = joinRunner(leftOuter());
      feed(r);
      await r.run();
      later(r);
      // one executor, so one operator and what it keeps between batches: its first attempt at the
      // batch crashes after the operator finished it, the same executor's next run replays it
      const executor = r.executor({ point, times: 1 });
      await expect(executor.run()).rejects.toThrow();
      r.waitOutLease();
      await executor.run();
      expect(r.sinkRows()).toEqual(clean.sinkRows());
    },
  );

  it('keeps event times to the microsecond through its blocks', async () => {
    const r = joinRunner(leftOuter());
    r.left([
      { adId: 'a', impressionTime: '2026-10-01 12:00:01.000001' },
      { adId: 'b', impressionTime: '2026-10-01 12:00:02.999999' },
    ]);
    await r.run();
    r.right([
      { clickAdId: 'a', clickTime: '2026-10-01 12:00:05.000002' },
      { clickAdId: 'b', clickTime: '2026-10-01 12:00:03.000000' },
    ]);
    expect(rows(await r.run())).toEqual([
      { adId: 'a', impressionTime: '2026-10-01T12:00:01.000001Z', clickAdId: 'a', clickTime: '2026-10-01T12:00:05.000002Z' },
      { adId: 'b', impressionTime: '2026-10-01T12:00:02.999999Z', clickAdId: 'b', clickTime: '2026-10-01T12:00:03.000Z' },
    ]);
  });

  it('keeps event times beyond 2^53 µs (bigints) as they are, not as differences', async () => {
    const r = joinRunner(leftOuter());
    // 10,413,792,000,123,457 µs and on: past 2^53
    r.left([
      { adId: 'f', impressionTime: '2300-01-01 00:00:00.123457' },
      { adId: 'g', impressionTime: '2300-01-01 00:00:00.123459' },
    ]);
    await r.run();
    const block = (await r.state.all(spec, 0)).map((e) => e.value as { c: unknown[] });
    expect(block).toHaveLength(1);
    expect(Array.isArray(block[0].c[1])).toBe(true);
    r.right([{ clickAdId: 'g', clickTime: '2300-01-01 00:00:00.123460' }]);
    expect(rows(await r.run())).toEqual([
      { adId: 'g', impressionTime: '2300-01-01T00:00:00.123459Z', clickAdId: 'g', clickTime: '2300-01-01T00:00:00.123460Z' },
    ]);
  });

  it('matches BIGINT keys beyond 2^53 exactly', async () => {
    const plan = readStream
      .format('json')
      .schema('k BIGINT, t TIMESTAMP')
      .load()
      .join(readStream.format('json').schema('k2 BIGINT, t2 TIMESTAMP').load(), { left: 'k', right: 'k2' })
      .writeStream.plan();
    const r = joinRunner(plan);
    // (as JSON text: a BIGINT beyond 2^53 is read from its digits)
    r.left('{"k":9007199254740993,"t":"2026-10-01 12:00:01"}\n{"k":1,"t":"2026-10-01 12:00:01"}');
    await r.run();
    r.right(
      ['{"k2":9007199254740992,"t2":"2026-10-01 12:00:02"}', '{"k2":9007199254740993,"t2":"2026-10-01 12:00:03"}', '{"k2":1,"t2":"2026-10-01 12:00:04"}'].join(
        '\n',
      ),
    );
    const out = rows(await r.run());
    expect(out.map((o) => [String(o.k), String(o.k2), o.t2])).toEqual([
      ['9007199254740993', '9007199254740993', iso(3)],
      ['1', '1', iso(4)],
    ]);
  });

  it('refuses a checkpoint whose join state is in the per-key layout, naming the remedy', async () => {
    const plan = leftOuter();
    const r = joinRunner(plan);
    const before = statefulShape(plan, false, true);
    await r.checkpoint.writeMetadata({ id: 'q', name: 'blocks', createdAtMs: 0, shape: before, shapeFingerprint: shapeFingerprint(before) });
    r.left([{ adId: 'a', impressionTime: sec(1) }]);
    await expect(r.run()).rejects.toThrow(/per-key layout of an earlier sluice.*new checkpoint location and backfill/);
    expect(statefulShape(plan)).toMatchObject({ operators: [{ joinState: 'blocks' }] });
  });
});
