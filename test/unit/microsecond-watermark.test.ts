/**
 * Event times in µs against a watermark in ms (FORMAT-3): the watermark stage takes the largest
 * event time truncated to the millisecond, and a row is late, a window closed, when its time in
 * µs is <= the watermark's ms × 1000.
 */
import { count, max, min, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { createTestRunner } from './engine-factories';

const plan = () =>
  readStream
    .format('json')
    .schema('id STRING, ts TIMESTAMP')
    .load()
    .withWatermark('ts', '0 seconds')
    .groupBy(window('ts', '10 seconds'))
    .agg(count().as('n'), min('ts').as('first'), max('ts').as('last'))
    .writeStream.outputMode('append')
    .plan();

describe('a watermark in milliseconds over event times in microseconds', () => {
  it('truncates the largest event time to the ms, and closes a window whose end in µs is <= the watermark × 1000', async () => {
    const t = createTestRunner(plan());
    t.drop([
      { id: 'a', ts: '2026-10-01 12:00:09.999999' },
      { id: 'b', ts: '2026-10-01 12:00:10.000999' },
    ]);
    const r1 = await t.run();
    // 12:00:10.000999 truncated: the watermark is 12:00:10.000, so [12:00:00, 12:00:10) closes
    expect(r1.watermark).toBe('2026-10-01T12:00:10.000Z');
    expect(r1.batches.flatMap((b) => b.rows)).toEqual([
      {
        window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:00:10.000Z' },
        n: 1,
        first: '2026-10-01T12:00:09.999999Z',
        last: '2026-10-01T12:00:09.999999Z',
      },
    ]);
    // a row of the closed window is late; [12:00:10, 12:00:20) takes 10.000000 and 10.000001
    t.drop([
      { id: 'z', ts: '2026-10-01 12:00:09.999999' },
      { id: 'c', ts: '2026-10-01 12:00:10.000000' },
      { id: 'd', ts: '2026-10-01 12:00:10.000001' },
      { id: 'e', ts: '2026-10-01 12:00:20' },
    ]);
    const r2 = await t.run();
    expect(r2.droppedByWatermark).toBe(1);
    expect(r2.batches.flatMap((b) => b.rows)).toEqual([
      {
        window: { start: '2026-10-01T12:00:10.000Z', end: '2026-10-01T12:00:20.000Z' },
        n: 3,
        first: '2026-10-01T12:00:10.000Z',
        last: '2026-10-01T12:00:10.000999Z',
      },
    ]);
  });

  it('drops a row whose event time in µs is <= the watermark × 1000, not one a µs after it (dropDuplicates)', async () => {
    const dedup = readStream
      .format('json')
      .schema('id STRING, ts TIMESTAMP')
      .load()
      .withWatermark('ts', '0 seconds')
      .dropDuplicates(['id', 'ts'])
      .writeStream.plan();
    const t = createTestRunner(dedup);
    t.drop([{ id: 'a', ts: '2026-10-01 12:00:10.000999' }]);
    expect((await t.run()).watermark).toBe('2026-10-01T12:00:10.000Z');
    t.drop([
      { id: 'c', ts: '2026-10-01 12:00:10.000000' },
      { id: 'd', ts: '2026-10-01 12:00:10.000001' },
    ]);
    const r = await t.run();
    expect(r.droppedByWatermark).toBe(1);
    expect(r.batches.flatMap((b) => b.rows)).toEqual([{ id: 'd', ts: '2026-10-01T12:00:10.000001Z' }]);
  });

  it('assigns windows to times beyond 2^53 µs (bigints, after 2255) exactly, and formats them', async () => {
    const t = createTestRunner(plan());
    t.drop([
      { id: 'a', ts: '9999-12-30 23:59:49.999999' },
      { id: 'b', ts: '9999-12-30 23:59:40.000001' },
      { id: 'c', ts: '9999-12-31 00:00:00.000999' },
    ]);
    const r = await t.run();
    // the watermark 9999-12-31T00:00:00.000 closes [23:59:40, 23:59:50) of the 30th
    expect(r.watermark).toBe('9999-12-31T00:00:00.000Z');
    expect(r.batches.flatMap((b) => b.rows)).toEqual([
      {
        window: { start: '9999-12-30T23:59:40.000Z', end: '9999-12-30T23:59:50.000Z' },
        n: 2,
        first: '9999-12-30T23:59:40.000001Z',
        last: '9999-12-30T23:59:49.999999Z',
      },
    ]);
    expect(r.stateRows).toBe(1);
  });
});
