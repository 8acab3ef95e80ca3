/**
 * Join conditions (issue 30): a condition given as a Spark SQL expression, split into its
 * conjuncts and each one placed where Spark puts it (FORMAT-2 "Where condition applies"): pushed
 * into the input that cannot produce outer rows, below its watermark unless it reads the event
 * time, or checked in the join, per side or on the pair. Also FORMAT-2's predicate lists: each
 * pushed filter placed on its own (a windowed join's isnotnull(window) no longer keeps a
 * right-side item above the watermark), a name on both sides refused, an anyOf over both sides
 * checked on the pair.
 */
import type { ColumnInfo } from '../../lib/engine/plan/columns';
import type { JoinPredicate, QueryPlan, StatelessStage, StreamJoinSpec } from '../../lib/engine/plan/types';
import { splitJoinCondition } from '../../lib/engine/query/join-condition';
import { expr } from '../../lib/engine/query/column';
import { readStream } from '../../lib/engine/query/reader';
import { staticTable } from '../../lib/engine/query/static-table';
import { pairRow } from '../../lib/engine/predicate';
import { readFileSync } from 'node:fs';
import { caseToPlan, parseCase } from '../../lib/conformance/case';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { RunReport } from '../../lib/engine/run/types';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { createTestRunner } from './engine-factories';

const sec = (s: number) => new Date(Date.UTC(2026, 9, 1, 12, 0, s)).toISOString().replace('T', ' ').slice(0, 19);
const iso = (s: number) => new Date(Date.UTC(2026, 9, 1, 12, 0, s)).toISOString();

const LEFT: ColumnInfo[] = [
  { name: 'key', type: 'INT' },
  { name: 'lt', type: 'TIMESTAMP' },
  { name: 'amount', type: 'INT' },
];
const RIGHT: ColumnInfo[] = [
  { name: 'key', type: 'INT' },
  { name: 'rt', type: 'TIMESTAMP' },
  { name: 'status', type: 'STRING' },
  { name: 'minAmount', type: 'INT' },
];

describe('a join condition given as an expression is split into conjuncts', () => {
  it('at its top-level ANDs (through parentheses), each one classified by the side it reads', () => {
    const parts = splitJoinCondition(
      "(right.status = 'ok' AND amount > 0) AND (left.key = 1 OR status = 'vip') AND amount >= minAmount AND 1 = 1",
      LEFT,
      RIGHT,
    );
    expect(parts.map((p) => [p.text, p.side, p.columns])).toEqual([
      ["(status = 'ok')", 'right', ['status']],
      ['(amount > 0)', 'left', ['amount']],
      ["((left.key = 1) OR (right.status = 'vip'))", 'both', []],
      ['(left.amount >= right.minAmount)', 'both', []],
      // no column: Spark's split puts it with the left side
      ['(1 = 1)', 'left', []],
    ]);
  });

  it('tests one side on its row and the pair on both rows (null and false reject)', () => {
    const [status, pair] = splitJoinCondition("right.status = 'ok' AND amount >= minAmount", LEFT, RIGHT);
    expect(status.sideTest!({ key: 1, rt: 0, status: 'ok', minAmount: 1 })).toBe(true);
    expect(status.sideTest!({ key: 1, rt: 0, status: null, minAmount: 1 })).toBe(false);
    expect(status.pairTest(pairRow({ key: 1, amount: 5 }, { key: 1, status: 'ok' }))).toBe(true);
    expect(pair.sideTest).toBeNull();
    expect(pair.pairTest(pairRow({ amount: 5 }, { minAmount: 5 }))).toBe(true);
    expect(pair.pairTest(pairRow({ amount: 4 }, { minAmount: 5 }))).toBe(false);
    expect(pair.pairTest(pairRow({ amount: null }, { minAmount: 5 }))).toBe(false);
  });

  it('resolves names case-insensitively, and a column named left as a column', () => {
    const withLeft: ColumnInfo[] = [{ name: 'left', type: 'STRUCT', fields: [{ name: 'x', type: 'INT' }] }];
    const [p] = splitJoinCondition('LEFT.x > 1', withLeft, RIGHT);
    expect([p.side, p.columns]).toEqual(['left', ['left']]);
    expect(splitJoinCondition('MINAMOUNT > 1', LEFT, RIGHT)[0].columns).toEqual(['minAmount']);
  });

  it("refuses what Spark refuses, with Spark's error class", () => {
    expect(() => splitJoinCondition('key > 1', LEFT, RIGHT)).toThrow(
      /^\[AMBIGUOUS_REFERENCE\] Reference `key` is ambiguous, could be: \[`left`.`key`, `right`.`key`\]/,
    );
    expect(() => splitJoinCondition('right.amount > 1', LEFT, RIGHT)).toThrow(/^\[UNRESOLVED_COLUMN.WITH_SUGGESTION\].*`right`.`amount`/);
    expect(() => splitJoinCondition('nope > 1', LEFT, RIGHT)).toThrow(/^\[UNRESOLVED_COLUMN.WITH_SUGGESTION\]/);
    expect(() => splitJoinCondition('amount + 1', LEFT, RIGHT)).toThrow(/^\[DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN\]/);
    expect(() => splitJoinCondition('amount >', LEFT, RIGHT)).toThrow(/^\[PARSE_SYNTAX_ERROR\]/);
  });
});

const left = () => readStream.format('json').schema('key INT, lt TIMESTAMP, amount INT').load().withWatermark('lt', '0 seconds');
const right = () => readStream.format('json').schema('key INT, rt TIMESTAMP, status STRING, minAmount INT').load().withWatermark('rt', '0 seconds');
const range = { left: 'lt', right: 'rt', lower: '-10 seconds', upper: '0 seconds' };
const COND = "right.status = 'ok' AND left.amount > 0 AND amount >= minAmount AND rt > TIMESTAMP '2026-01-01 00:00:00'";

/** A stage as the tests name it: a watermark by its column, a filterExpr by its text, else its kind. */
const named = (s: StatelessStage) => (s.kind === 'watermark' ? `watermark ${s.column}` : s.kind === 'filterExpr' ? s.text : s.kind);
const joinOf = (plan: QueryPlan) => plan.operators[0].spec as StreamJoinSpec;
const checks = (plan: QueryPlan) => {
  const c = joinOf(plan).conditionExpr!;
  return { left: c.left.map((x) => x.text), right: c.right.map((x) => x.text), pair: c.pair.map((x) => x.text) };
};

describe('a stream-stream join with an expression condition', () => {
  const plan = (type: string) => left().join(right(), 'key', type, { timeRange: range, condition: COND }).writeStream.plan();
  // below the watermark the key's isnotnull with the conjunct on other columns; above it the isnotnull
  // of the event time, which the time range reads (a predicate on the event time stays above it)
  const L_PUSHED = ['filter', '(amount > 0)', 'watermark lt', 'filter'];
  const R_PUSHED = ['filter', "(status = 'ok')", 'watermark rt', 'filter', "(rt > TIMESTAMP '2026-01-01 00:00:00')"];

  it.each([
    // type, left input's stages, right input's stages, checked in the join per side
    ['inner', L_PUSHED, R_PUSHED, [], []],
    ['leftSemi', L_PUSHED, R_PUSHED, [], []],
    ['leftOuter', ['watermark lt'], R_PUSHED, ['(amount > 0)'], []],
    ['rightOuter', L_PUSHED, ['watermark rt'], [], ["(status = 'ok')", "(rt > TIMESTAMP '2026-01-01 00:00:00')"]],
    ['fullOuter', ['watermark lt'], ['watermark rt'], ['(amount > 0)'], ["(status = 'ok')", "(rt > TIMESTAMP '2026-01-01 00:00:00')"]],
  ])(
    '%s: pushes a one-side conjunct into a side that cannot produce outer rows, below its watermark unless it reads the event time',
    (type, l, r, inLeft, inRight) => {
      const p = plan(type);
      expect(p.stages.map(named)).toEqual(l);
      expect(p.inputs![0].stages.map(named)).toEqual(r);
      // the conjunct on both sides is always checked in the join, on the pair
      expect(checks(p)).toEqual({ left: inLeft, right: inRight, pair: ['(left.amount >= right.minAmount)'] });
      expect(joinOf(p).conditionExpr!.text).toBe(COND);
    },
  );

  it('takes expr(...) as well, and refuses an ambiguous name when the query is built', () => {
    const p = left()
      .join(right(), 'key', 'leftOuter', { timeRange: range, condition: expr("status = 'ok'") })
      .writeStream.plan();
    expect(p.inputs![0].stages.map(named)).toEqual(['filter', "(status = 'ok')", 'watermark rt', 'filter']);
    expect(() => left().join(right(), 'key', 'leftOuter', { timeRange: range, condition: 'key > 2' })).toThrow(/AMBIGUOUS_REFERENCE/);
  });

  it("pushes below the watermark only a conjunct whose columns reach the join unchanged from the input's source", () => {
    // minAmount is computed after the watermark: its conjunct stays after the input's stages
    const r = right().withColumn('minAmount', 'minAmount * 2').withColumn('vip', "status = 'vip'");
    const p = left().join(r, 'key', 'leftOuter', { timeRange: range, condition: "right.minAmount > 3 AND status <> 'void'" }).writeStream.plan();
    expect(p.inputs![0].stages.map(named)).toEqual([
      'filter',
      "(status <> 'void')",
      'watermark rt',
      'withColumnExpr',
      'withColumnExpr',
      'filter',
      '(minAmount > 3)',
    ]);
  });
});

describe("FORMAT-2's predicate lists", () => {
  const windowed = (r: ReturnType<typeof right>, condition: JoinPredicate[]) =>
    left()
      .select('key', { kind: 'window', as: 'window', window: windowOf('lt') }, 'amount')
      .join(r.select('key', { kind: 'window', as: 'window', window: windowOf('rt') }, 'status', 'minAmount'), ['key', 'window'], 'leftOuter', { condition })
      .writeStream.plan();

  it("place each pushed filter on its own: a windowed join's right-side anyOf goes below the watermark, isnotnull(window) above", () => {
    const p = windowed(right(), [
      {
        anyOf: [
          { column: 'status', op: '=', value: 'ok' },
          { column: 'minAmount', op: '>', value: 7 },
        ],
      },
    ]);
    const stages = p.inputs![0].stages;
    expect(stages.map(named)).toEqual(['filter', 'watermark rt', 'project', 'filter']);
    expect(stages.map((s) => (s.kind === 'filter' ? s.label : null))).toEqual(['isnotnull(key) and condition', null, null, 'isnotnull(window)']);
    // a rejected row is filtered before the watermark sees it
    const below = stages[0] as Extract<StatelessStage, { kind: 'filter' }>;
    expect(below.fn({ key: 1, rt: 0, status: 'void', minAmount: 3 })).toBe(false);
    expect(below.fn({ key: 1, rt: 0, status: 'void', minAmount: 9 })).toBe(true);
    expect(joinOf(p).pushed).toHaveLength(1);
  });

  it('refuse a column both sides have, and check an anyOf over both sides on the pair', () => {
    expect(() => windowed(right(), [{ column: 'key', op: '>', value: 1 }])).toThrow(/\[AMBIGUOUS_REFERENCE\] condition column "key" is on both sides/);
    const mixed: JoinPredicate = {
      anyOf: [
        { column: 'amount', op: '>', value: 1 },
        { column: 'status', op: '=', value: 'ok' },
      ],
    };
    const p = left()
      .join(right(), 'key', 'inner', { timeRange: range, condition: [mixed] })
      .writeStream.plan();
    expect(joinOf(p).condition).toEqual([mixed]);
    expect(joinOf(p).pushed).toEqual([]);
  });
});

function windowOf(column: string) {
  return { kind: 'window' as const, column, durationUs: 10_000_000, slideUs: 10_000_000, startUs: 0, text: '10 seconds' };
}

/** The unit tests' runner with a landing source for the joined input. */
function joinRunner(plan: QueryPlan) {
  const inputSources = (plan.inputs ?? []).map((i) => new InMemoryFileSource(i.source.schema));
  const r = createTestRunner(plan, { inputSources });
  let fileNo = 0;
  return {
    left: (rows: Array<Record<string, unknown>>) => r.drop(rows),
    right: (rows: Array<Record<string, unknown>>) => inputSources[0].add(`part-${String(++fileNo).padStart(5, '0')}.json`, rows),
    run: (): Promise<RunReport> => r.run(),
  };
}
const rows = (report: RunReport) => report.batches.flatMap((b) => b.rows);

describe('an expression condition through the engine', () => {
  it('leftOuter: a right row failing the pushed conjunct is invisible to the right watermark, a pair failing the pair conjunct is no match', async () => {
    const l = () => readStream.format('json').schema('lk STRING, lt TIMESTAMP, amount INT').load().withWatermark('lt', '0 seconds');
    const r = () => readStream.format('json').schema('rk STRING, rt TIMESTAMP, status STRING, minAmount INT').load().withWatermark('rt', '0 seconds');
    const plan = l()
      .join(r(), { left: 'lk', right: 'rk' }, 'leftOuter', { timeRange: range, condition: "right.status = 'ok' AND amount >= minAmount" })
      .writeStream.plan();
    const run = joinRunner(plan);
    run.left([
      { lk: 'a', lt: sec(1), amount: 50 },
      { lk: 'b', lt: sec(2), amount: 5 },
      { lk: 'c', lt: sec(30), amount: 1 },
    ]);
    run.right([
      { rk: 'a', rt: sec(5), status: 'ok', minAmount: 10 },
      // b's partner fails the pair conjunct (5 < 10): no match, both stay buffered
      { rk: 'b', rt: sec(6), status: 'ok', minAmount: 10 },
      // fails the pushed conjunct: never seen, not even by the right watermark (it would be 40 s)
      { rk: 'x', rt: sec(40), status: 'void', minAmount: 0 },
    ]);
    const first = await run.run();
    expect(rows(first)).toEqual([{ lk: 'a', lt: iso(1), amount: 50, rk: 'a', rt: iso(5), status: 'ok', minAmount: 10 }]);
    // min(30 - 0, 6 - 0) = 6 s (min(30, 40) = 30 s if the void row counted)
    expect(first.watermark).toBe(iso(6));
    // left a, b, c; right b (right a@5 left at <= 6 s - 0 - 1 ms)
    expect(first.stateRows).toBe(4);
    run.right([{ rk: 'y', rt: sec(45), status: 'ok', minAmount: 0 }]);
    const second = await run.run();
    // min(30, 45) = 30 s: left rows at <= 30 - 10 s - 1 ms leave; b never matched: its outer row
    expect(second.watermark).toBe(iso(30));
    expect(rows(second)).toEqual([{ lk: 'b', lt: iso(2), amount: 5, rk: null, rt: null, status: null, minAmount: null }]);
  });
});

describe('a time range read from an expression condition', () => {
  const l = () => readStream.format('json').schema('lk STRING, lt TIMESTAMP, lv INT').load().withWatermark('lt', '0 seconds');
  const r = () => readStream.format('json').schema('rk STRING, rt TIMESTAMP, rv INT').load().withWatermark('rt', '0 seconds');
  const build = (options: Parameters<ReturnType<typeof l>['join']>[3]) => l().join(r(), { left: 'lk', right: 'rk' }, 'leftOuter', options).writeStream.plan();

  it.each([
    ['lt BETWEEN rt - INTERVAL 10 SECONDS AND rt', { lowerUs: -10_000_000, upperUs: 0, lowerStrict: false, upperStrict: false }, []],
    // Spark's self-join form, sides swapped: rt >= lt is lt <= rt + 0; rt <= lt + 10 s is lt >= rt - 10 s
    [
      'rt >= lt AND rt <= lt + INTERVAL 10 SECONDS AND lv > rv',
      { lowerUs: -10_000_000, upperUs: 0, lowerStrict: false, upperStrict: false },
      ['(left.lv > right.rv)'],
    ],
    [
      'left.lt + INTERVAL 1 MINUTE > right.rt AND lt < rt + INTERVAL 2 SECONDS',
      { lowerUs: -60_000_000, upperUs: 2_000_000, lowerStrict: true, upperStrict: true },
      [],
    ],
    // two bounds on one side: the loosest is the range (Spark keeps a row until the least of the
    // state watermarks the conjuncts give passes it), the tighter one is still checked on the pair
    [
      'lt >= rt - INTERVAL 5 SECONDS AND lt >= rt - INTERVAL 10 SECONDS AND lt <= rt',
      { lowerUs: -10_000_000, upperUs: 0, lowerStrict: false, upperStrict: false },
      ["(left.lt >= right.rt - INTERVAL '05' SECOND)"],
    ],
    [
      'lt <= rt AND lt <= rt + INTERVAL 3 SECONDS AND lt >= rt - INTERVAL 10 SECONDS',
      { lowerUs: -10_000_000, upperUs: 3_000_000, lowerStrict: false, upperStrict: false },
      ['(left.lt <= right.rt)'],
    ],
    // (a BETWEEN whose lower bound is the tighter one stays a check; its upper bound is still the range's)
    [
      'lt BETWEEN rt - INTERVAL 5 SECONDS AND rt AND lt > rt - INTERVAL 10 SECONDS',
      { lowerUs: -10_000_000, upperUs: 0, lowerStrict: true, upperStrict: false },
      ["between(left.lt, right.rt - INTERVAL '05' SECOND, right.rt)"],
    ],
    // (at the same value, <= lets more pairs through than <)
    [
      'lt > rt - INTERVAL 10 SECONDS AND lt >= rt - INTERVAL 10 SECONDS AND lt <= rt',
      { lowerUs: -10_000_000, upperUs: 0, lowerStrict: false, upperStrict: false },
      ["(left.lt > right.rt - INTERVAL '10' SECOND)"],
    ],
  ])('%s: the conjuncts bounding lt by rt become the timeRange, the rest stays a check on the pair', (condition, bounds, pair) => {
    const j = joinOf(build({ condition }));
    expect(j.timeRange).toEqual({ left: 'lt', right: 'rt', ...bounds });
    expect(j.conditionExpr!.pair.map((c) => c.text)).toEqual(pair);
  });

  it('keeps a given timeRange and checks the conjuncts on the pair; refuses a leftOuter join whose condition gives the left side no state watermark', () => {
    const j = joinOf(build({ timeRange: range, condition: 'lt <= rt' }));
    expect(j.timeRange).toMatchObject({ lowerUs: -10_000_000, upperUs: 0 });
    expect(j.conditionExpr!.pair.map((c) => c.text)).toEqual(['(left.lt <= right.rt)']);
    expect(() => build({ condition: 'lt < rt - INTERVAL 5 SECONDS' })).toThrow(/not supported without a watermark in the join keys/);
  });

  it('runs as the same join with the range given as timeRange', async () => {
    const feed = async (plan: QueryPlan) => {
      const run = joinRunner(plan);
      run.left([
        { lk: 'a', lt: sec(1), lv: 1 },
        { lk: 'b', lt: sec(2), lv: 2 },
      ]);
      run.right([
        { rk: 'a', rt: sec(5), rv: 0 },
        { rk: 'b', rt: sec(20), rv: 0 },
      ]);
      const first = await run.run();
      run.right([{ rk: 'z', rt: sec(40), rv: 0 }]);
      run.left([{ lk: 'z', lt: sec(40), lv: 0 }]);
      const second = await run.run();
      return [first, second].map((x) => ({ rows: rows(x), watermark: x.watermark, stateRows: x.stateRows }));
    };
    const derived = await feed(build({ condition: 'lt BETWEEN rt - INTERVAL 10 SECONDS AND rt' }));
    expect(derived).toEqual(await feed(build({ timeRange: range })));
    // a matched at once; b (2 s) and its click (20 s) are 18 s apart: b's outer row when the watermark passes 12 s
    expect(derived[0].rows).toEqual([{ lk: 'a', lt: iso(1), lv: 1, rk: 'a', rt: iso(5), rv: 0 }]);
    expect(derived[1].rows).toContainEqual({ lk: 'b', lt: iso(2), lv: 2, rk: null, rt: null, rv: null });
  });
  it("keeps a left row until the loosest of two lower bounds lets it go, as Spark's least state watermark does", async () => {
    const run = joinRunner(build({ condition: 'lt >= rt - INTERVAL 5 SECONDS AND lt >= rt - INTERVAL 10 SECONDS AND lt <= rt' }));
    run.left([{ lk: 'b', lt: sec(2), lv: 2 }]);
    run.right([{ rk: 'z', rt: sec(1), rv: 0 }]);
    await run.run();
    run.left([{ lk: 'q', lt: sec(10), lv: 0 }]);
    run.right([{ rk: 'w', rt: sec(10), rv: 0 }]);
    const second = await run.run();
    // at a watermark of 10 s: 10 - 5 s would let b (2 s) go; 10 - 10 s does not (a right row at
    // 10 s or later could still meet it by the looser bound, though not by both)
    expect(second.watermark).toBe(iso(10));
    expect(rows(second)).not.toContainEqual(expect.objectContaining({ lk: 'b' }));
    run.left([{ lk: 'q', lt: sec(13), lv: 0 }]);
    run.right([{ rk: 'w', rt: sec(13), rv: 0 }]);
    const third = await run.run();
    // at 13 s: 13 - 10 s = 3 s passes b: its outer row
    expect(rows(third)).toContainEqual({ lk: 'b', lt: iso(2), lv: 2, rk: null, rt: null, rv: null });
  });
});

describe('a stream-static join with an expression condition', () => {
  const catalog = staticTable.rows('sku STRING, name STRING, price DOUBLE', [
    { sku: 'a', name: 'apple', price: 1.5 },
    { sku: 'a', name: 'apricot', price: 2.5 },
    { sku: 'b', name: 'banana', price: 0.5 },
  ]);
  const orders = () => readStream.format('json').schema('orderId INT, sku STRING, qty LONG').load();

  it('checks every conjunct on the pair, pushing none (FORMAT-2): a pair failing one is no match', async () => {
    const plan = orders()
      .join(catalog, 'sku', 'leftOuter', { condition: 'price > 2 AND qty < 5 AND left.sku = right.sku' })
      .select('orderId', 'name')
      .writeStream.plan();
    expect(plan.stages.map(named)).toEqual(['join', 'select']);
    const stage = plan.stages[0] as Extract<StatelessStage, { kind: 'join' }>;
    expect(stage.conditionExpr!.pair.map((c) => c.text)).toEqual(['(price > 2)', '(qty < 5)', '(left.sku = right.sku)']);
    const source = new InMemoryFileSource(plan.source.schema);
    source.add('f0.json', [
      { orderId: 1, sku: 'a', qty: 1 },
      { orderId: 4, sku: 'b', qty: 1 },
      { orderId: 5, sku: 'a', qty: 9 },
    ]);
    const executor = new MicroBatchExecutor({ plan, source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() });
    const report = await executor.run({ collectRows: true });
    expect(report.batches.flatMap((b) => b.rows)).toEqual([
      { orderId: 1, name: 'apricot' },
      { orderId: 4, name: null },
      { orderId: 5, name: null },
    ]);
  });

  it('refuses an unqualified name both sides have', () => {
    expect(() => orders().join(catalog, 'sku', 'inner', { condition: "sku = 'a'" })).toThrow(/AMBIGUOUS_REFERENCE/);
  });
});

describe("a conformance case's join condition", () => {
  it('is a list of predicates (FORMAT-2): the case format has no expression form, so text is refused', () => {
    const file = 'test/conformance/cases/sluice-join-left-outer-window-any-of-right.json';
    const c = parseCase(readFileSync(file, 'utf8'), file);
    expect(() => caseToPlan(c)).not.toThrow();
    (c.query.pipeline![0] as { join: { condition: unknown } }).join.condition = "rv > 7 OR tag = 'vip'";
    expect(() => caseToPlan(c)).toThrow(/the join's "condition" must be a list of predicates/);
  });
});
