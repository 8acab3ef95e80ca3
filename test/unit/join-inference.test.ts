/**
 * Filters Spark's optimizer carries across a stream-stream equi-join (InferFiltersFromConstraints):
 * a predicate one side holds that reads exactly one of its join keys filters the other input with
 * the partner key, in the directions the join type allows. Each expectation worked by hand from
 * Spark's Optimizer.scala (InferFiltersFromConstraints.inferFilters, ConstraintHelper) and
 * FORMAT-2; the engine runs in the conformance cases sluice-join-*-inferred.json.
 */
import type { QueryPlan, StatelessStage, StreamJoinSpec } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import { statefulShape } from '../../lib/engine/plan/shape';

const left = () => readStream.format('json').schema('lk INT, lt TIMESTAMP, amount INT, sku STRING').load().withWatermark('lt', '0 seconds');
const right = () => readStream.format('json').schema('rk INT, rt TIMESTAMP, status STRING, code STRING, big BIGINT').load().withWatermark('rt', '0 seconds');
const range = { left: 'lt', right: 'rt', lower: '-10 seconds', upper: '0 seconds' };

/** A stage as the tests name it: a watermark by its column, a filterExpr by its text, a filter by its label. */
const named = (s: StatelessStage) =>
  s.kind === 'watermark' ? `watermark ${s.column}` : s.kind === 'filterExpr' ? s.text : s.kind === 'filter' ? s.label : s.kind;
const watermarkOf = (st: readonly StatelessStage[]) => st.find((s) => s.kind === 'watermark') as Extract<StatelessStage, { kind: 'watermark' }>;
const stages = (p: QueryPlan) => ({ left: p.stages.map(named), right: p.inputs![0].stages.map(named) });

describe('filters carried across the join keys', () => {
  it.each([
    // type, left input's stages, right input's stages
    ['inner', ['isnotnull(lk)', '(lk > 2)', 'watermark lt', 'isnotnull(lt)'], ['isnotnull(rk)', '(rk > 2)', 'watermark rt', 'isnotnull(rt)']],
    ['leftSemi', ['isnotnull(lk)', '(lk > 2)', 'watermark lt', 'isnotnull(lt)'], ['isnotnull(rk)', '(rk > 2)', 'watermark rt', 'isnotnull(rt)']],
    // the right side's pushed conjunct is carried to the left only where Spark infers for the left
    ['rightOuter', ['isnotnull(lk)', '(lk > 2)', 'watermark lt', 'isnotnull(lt)'], ['watermark rt']],
    ['leftOuter', ['watermark lt'], ['isnotnull(rk)', '(rk > 2)', 'watermark rt', 'isnotnull(rt)']],
    ['fullOuter', ['watermark lt'], ['watermark rt']],
  ])('%s: a condition conjunct on one key filters the other input with its partner, where Spark infers', (type, l, r) => {
    const p = left().join(right(), { left: 'lk', right: 'rk' }, type, { timeRange: range, condition: 'rk > 2' }).writeStream.plan();
    const got = stages(p);
    // (the conjunct itself: pushed to the right for inner, leftSemi, leftOuter; checked in the join otherwise)
    // (and the isnotnull of each key, below the watermark, and of each event time the range reads, above it)
    expect(got.left).toEqual(l);
    expect(got.right).toEqual(r);
  });

  it('carries the filter of a side’s own pipeline, under the partner’s name, and tests it on the partner column', () => {
    const p = left().filter("upper(sku) LIKE 'A%'").join(right(), { left: 'sku', right: 'code' }, 'inner', { timeRange: range }).writeStream.plan();
    const carried = p.inputs![0].stages.find((s) => s.kind === 'filterExpr') as Extract<StatelessStage, { kind: 'filterExpr' }>;
    expect(carried.text).toBe("(upper(code) LIKE 'A%')");
    expect(carried.test({ rk: 1, rt: 0, status: 'x', code: 'abc', big: 1 })).toBe(true);
    expect(carried.test({ rk: 1, rt: 0, status: 'x', code: 'b', big: 1 })).toBe(false);
    expect(carried.test({ rk: 1, rt: 0, status: 'x', code: null, big: 1 })).toBe(false);
    // before the right watermark: it does not read the event time
    expect(stages(p).right.indexOf("(upper(code) LIKE 'A%')")).toBeLessThan(stages(p).right.indexOf('watermark rt'));
  });

  it('carries FORMAT-2 condition items on a key, renamed, and nothing that reads another column too', () => {
    const p = left()
      .join(
        right(),
        [
          { left: 'lk', right: 'rk' },
          { left: 'sku', right: 'code' },
        ],
        'inner',
        {
          timeRange: range,
          condition: [
            { column: 'lk', op: '>=', value: 3 },
            { column: 'amount', op: '>', value: 0 },
            {
              anyOf: [
                { column: 'sku', op: '=', value: 'a' },
                { column: 'amount', op: '=', value: 1 },
              ],
            },
          ],
        },
      )
      .writeStream.plan();
    const filters = p.inputs![0].stages.filter((s): s is Extract<StatelessStage, { kind: 'filter' }> => s.kind === 'filter');
    const row = (rk: number | null, code: string | null) => ({ rk, rt: 0, status: 's', code, big: 1 });
    // the right input: its keys not null, and rk >= 3 (carried from lk >= 3); the anyOf reads amount too: not carried
    const passes = (r: ReturnType<typeof row>) => filters.every((f) => f.fn(r));
    expect(passes(row(3, 'zzz'))).toBe(true);
    expect(passes(row(2, 'a'))).toBe(false);
    expect(passes(row(null, 'a'))).toBe(false);
  });

  it('does not carry a filter between keys of different types, nor a filter applied before the key is replaced', () => {
    const typed = left().filter('lk > 2').join(right(), { left: 'lk', right: 'big' }, 'inner', { timeRange: range }).writeStream.plan();
    expect(stages(typed).right).not.toContain('(big > 2)');
    const replaced = left()
      .filter('lk > 2')
      .withColumn('lk', 'lk - 10')
      .join(right(), { left: 'lk', right: 'rk' }, 'inner', { timeRange: range })
      .writeStream.plan();
    expect(stages(replaced).right).not.toContain('(rk > 2)');
  });
});

describe('a filter right after a stream-stream join', () => {
  const joinSpec = (p: QueryPlan) => p.operators[0].spec as StreamJoinSpec;
  const joined = (type: string, opts: { timeRange?: typeof range } = { timeRange: range }) => left().join(right(), { left: 'lk', right: 'rk' }, type, opts);

  it('runs a leftOuter join as inner when the filter rejects its null rows, and pushes each side its conjuncts (EliminateOuterJoin, PushPredicateThroughJoin)', () => {
    const p = joined('leftOuter').filter("status = 'ok' AND amount > 0").writeStream.plan();
    expect([joinSpec(p).type, joinSpec(p).declaredType]).toEqual(['inner', 'leftOuter']);
    // each conjunct filters its input after its stages, and gates its watermark (it does not read the event time)
    // (and the event time's isnotnull, which the time range reads, above the watermark)
    expect(stages(p).right).toEqual(['isnotnull(rk)', 'watermark rt', "(status = 'ok')", 'isnotnull(rt)']);
    expect(stages(p).left).toEqual(['isnotnull(lk)', 'watermark lt', '(amount > 0)', 'isnotnull(lt)']);
    const [gate] = watermarkOf(p.inputs![0].stages).gates!;
    expect([gate({ rk: 1, status: 'ok' }), gate({ rk: 1, status: 'no' }), gate({ rk: 1, status: null })]).toEqual([true, false, false]);
    // the whole filter still follows the join
    expect(p.operators[0].post.map(named)).toEqual(["status = 'ok' AND amount > 0"]);
  });

  it('keeps an outer join whose null rows the filter lets through, pushing only into the side that keeps its rows', () => {
    const p = joined('leftOuter').filter("amount > 0 AND (status IS NULL OR status = 'ok')").writeStream.plan();
    expect([joinSpec(p).type, joinSpec(p).declaredType]).toEqual(['leftOuter', undefined]);
    expect(stages(p).left).toEqual(['watermark lt', '(amount > 0)']);
    expect(watermarkOf(p.stages).gates).toHaveLength(1);
    expect(stages(p).right).toEqual(['isnotnull(rk)', 'watermark rt', 'isnotnull(rt)']);
  });

  it.each([
    ['amount > 0', 'leftOuter'],
    ["status <> 'x'", 'rightOuter'],
    ["amount > 0 AND status <> 'x'", 'inner'],
    ['coalesce(amount, 0) >= 0', 'fullOuter'],
    // reads both sides: no side's condition, so it decides nothing (Spark's split)
    ['amount > length(status)', 'fullOuter'],
  ])('fullOuter with %s runs as %s', (filter, type) => {
    expect(joinSpec(joined('fullOuter').filter(filter).writeStream.plan()).type).toBe(type);
  });

  it('takes adjacent filters after the join as one (CombineFilters runs before the pushdown)', () => {
    const two = joined('fullOuter').filter('amount > 0').filter("status <> 'x'").writeStream.plan();
    expect(joinSpec(two).type).toBe('inner');
    expect(stages(two).left).toEqual(['isnotnull(lk)', 'watermark lt', '(amount > 0)', 'isnotnull(lt)']);
    expect(stages(two).right).toEqual(['isnotnull(rk)', 'watermark rt', "(status <> 'x')", 'isnotnull(rt)']);
    // each filter still follows the join, as written
    expect(two.operators[0].post.map(named)).toEqual(['amount > 0', "status <> 'x'"]);
    // the first filter alone keeps the leftOuter join and pushes nothing right; with the second,
    // the join runs as inner and both go to the right input (taken one at a time, the first would not)
    const first = joined('leftOuter').filter("status IS NULL OR status = 'ok'");
    expect(joinSpec(first.writeStream.plan()).type).toBe('leftOuter');
    expect(stages(first.writeStream.plan()).right).toEqual(['isnotnull(rk)', 'watermark rt', 'isnotnull(rt)']);
    const both = first.filter("status = 'ok'").writeStream.plan();
    expect(joinSpec(both).type).toBe('inner');
    // (the two conjuncts pushed into the right input are adjacent filters there: one filter)
    // (then the event time's isnotnull, which the time range reads)
    expect(stages(both).right).toHaveLength(4);
    expect(stages(both).right.slice(0, 2)).toEqual(['isnotnull(rk)', 'watermark rt']);
    expect(stages(both).right[3]).toBe('isnotnull(rt)');
    expect(stages(both).right[2]).toMatch(/^\(\(\(status IS NULL\) OR \(status = 'ok'\)\)\) AND \(\(status = 'ok'\)\)$/);
  });

  it('puts the type the join runs as in the checkpoint shape, so a filter that changes it needs a new checkpoint', () => {
    const shape = (filter: string) => statefulShape(joined('leftOuter').filter(filter).writeStream.plan());
    expect(shape("status IS NULL OR status = 'ok'")).not.toEqual(shape("status = 'ok'"));
    expect(shape("status IS NULL OR status = 'ok'")).toEqual(statefulShape(joined('leftOuter').writeStream.plan()));
  });

  it('refuses the join as written, not as it runs: a leftOuter join with no range stays refused (UnsupportedOperationChecker runs before the optimizer)', () => {
    expect(() => joined('leftOuter', {}).filter("status = 'ok'").writeStream.plan()).toThrow(
      /Stream-stream LeftOuter join .* not supported without a watermark/,
    );
  });
});
