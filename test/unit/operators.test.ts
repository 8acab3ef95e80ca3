/**
 * Operators beyond the windowed sum: stateless stages before and after the watermark, several
 * watermarks (min policy), first/last, approxCountDistinct, grouping by several columns.
 */
import { approxCountDistinct, count, first, last, max, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { at, createTestRunner } from './engine-factories';

const schema = 'user STRING, country STRING, event_time TIMESTAMP, amount DOUBLE';
const src = () => readStream.format('json').schema(schema).load();

describe('when stateless stages surround the watermark', () => {
  it('filters and derives columns before the stateful operator; a filtered row never moves the watermark', async () => {
    const plan = src()
      .filter((r) => (r.amount as number) > 0, 'positive')
      .withColumn('big', 'BOOLEAN', (r) => (r.amount as number) >= 10)
      .withWatermark('event_time', '5 minutes')
      .groupBy(window('event_time', '10 minutes'), 'big')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    const t = createTestRunner(plan);
    t.drop([
      { user: 'a', country: 'DE', event_time: at('12:01'), amount: 12 },
      { user: 'b', country: 'DE', event_time: at('12:02'), amount: 3 },
      { user: 'c', country: 'FR', event_time: at('13:59'), amount: -1 }, // filtered: must not advance the watermark
    ]);
    const r = await t.run();
    expect(r.watermark).toBe('2026-10-01T11:57:00.000Z');
    // a batch's rows are a multiset, as in Spark: the order within a batch is not specified
    expect(r.batches[0].rows).toHaveLength(2);
    expect(r.batches[0].rows).toEqual(
      expect.arrayContaining([
        { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, big: false, n: 1 },
        { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, big: true, n: 1 },
      ]),
    );
  });

  it('passes rows through a stateless query with select, in append mode, without no-data batches', async () => {
    const plan = src().withWatermark('event_time', '1 minute').select('user', 'amount').writeStream.outputMode('append').plan();
    const t = createTestRunner(plan);
    t.drop([{ user: 'a', country: 'DE', event_time: at('12:01'), amount: 1 }]);
    const r = await t.run();
    expect(r.batches.map((b) => b.batchId)).toEqual([0]);
    expect(r.batches[0].rows).toEqual([{ user: 'a', amount: 1 }]);
  });
});

describe('when a query has several watermarks', () => {
  it('the global watermark is the minimum of each one (Spark default policy)', async () => {
    const plan = readStream
      .format('json')
      .schema('a TIMESTAMP, b TIMESTAMP')
      .load()
      .withWatermark('a', '1 minute')
      .withWatermark('b', '10 minutes')
      .groupBy(window('a', '1 minute'))
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    const t = createTestRunner(plan);
    t.drop([{ a: at('12:30'), b: at('12:30') }]);
    const r = await t.run();
    expect(r.watermark).toBe('2026-10-01T12:20:00.000Z');
  });
});

describe('when aggregating with first, last, max and approxCountDistinct over several keys', () => {
  it('computes each per (window, user, country), merging across batches', async () => {
    const plan = src()
      .withWatermark('event_time', '1 hour')
      .groupBy(window('event_time', '1 hour'), 'country', 'user')
      .agg(first('amount').as('first'), last('amount').as('last'), max('amount').as('max'), sum('amount').as('sum'))
      .writeStream.outputMode('update')
      .plan();
    const t = createTestRunner(plan);
    t.drop([
      { user: 'a', country: 'DE', event_time: at('12:01'), amount: 1 },
      { user: 'a', country: 'DE', event_time: at('12:02'), amount: 5 },
    ]);
    await t.run();
    t.drop([{ user: 'a', country: 'DE', event_time: at('12:03'), amount: 2 }]);
    const r = await t.run();
    expect(r.batches[0].rows).toEqual([
      { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T13:00:00.000Z' }, country: 'DE', user: 'a', first: 1, last: 2, max: 5, sum: 8 },
    ]);
  });

  it('estimates distinct counts within HyperLogLog error, and merges sketches across batches', async () => {
    const plan = src().groupBy('country').agg(approxCountDistinct('user').as('users')).writeStream.outputMode('update').plan();
    const t = createTestRunner(plan);
    const rows = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({ user: `u${from + i}`, country: 'DE', event_time: at('12:00'), amount: 1 }));
    t.drop(rows(0, 3000));
    await t.run();
    t.drop(rows(2000, 6000)); // 4000 more, 1000 of them already seen
    const r = await t.run();
    const users = r.batches[0].rows[0].users as number;
    expect(Math.abs(users - 6000) / 6000).toBeLessThan(0.15);
  });
});
