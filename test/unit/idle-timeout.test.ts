/**
 * option('idleTimeout', ...): sluice's documented departure from Spark. A run that finds no new
 * data on a source idle for the timeout advances the watermark by the wall clock that passed since
 * the last input, so a quiet stream's last windows are emitted; off, nothing ever changes.
 */
import { InvalidOptionError } from '../../lib/engine/errors';
import { statefulShape } from '../../lib/engine/plan/shape';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { at, createTestRunner } from './engine-factories';

const MIN = 60_000;
const DELAY_MIN = 10;
const TIMEOUT_MIN = 30;

const totals = (idleTimeout?: string) => {
  const w = readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .load()
    .withWatermark('event_time', `${DELAY_MIN} minutes`)
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('append')
    .queryName('idle');
  return (idleTimeout === undefined ? w : w.option('idleTimeout', idleTimeout)).plan();
};

const T0 = Date.UTC(2026, 9, 1, 12, 15);
const ms = (hhmm: string) => Date.parse(`${at(hhmm).replace(' ', 'T')}Z`);
const window1200 = { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 3, events: 2 };

/** A runner on a clock the test steps; the quiet stream's only file lands before the first run. */
function quietStream(idleTimeout?: string) {
  let nowMs = T0;
  const t = createTestRunner(totals(idleTimeout), { clock: { now: () => nowMs } });
  t.drop([
    { user: 'a', event_time: at('12:01'), amount: 1 },
    { user: 'b', event_time: at('12:04'), amount: 2 },
  ]);
  return { t, setMinutesAfterFirstRun: (m: number) => void (nowMs = T0 + m * MIN) };
}

/** The watermark the data gives: the max event time minus the delay. */
const DATA_WM = ms('12:04') - DELAY_MIN * MIN;

describe('when a quiet stream has idleTimeout set', () => {
  it('holds the last window, as Spark does, until the source has been idle for the timeout', async () => {
    const { t, setMinutesAfterFirstRun } = quietStream(`${TIMEOUT_MIN} minutes`);
    const first = await t.run();
    expect(first.batches.map((b) => [b.batchId, b.noData])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect(first.watermarkMs).toBe(DATA_WM);
    expect(t.sinkRows()).toEqual([]);

    setMinutesAfterFirstRun(TIMEOUT_MIN - 1);
    const early = await t.run();
    expect(early.batches).toEqual([]);
    expect(early.watermarkMs).toBe(DATA_WM);
    expect(t.checkpoint.offsets.size).toBe(2);
  });

  it('after the timeout, advances the watermark by the wall clock since the last input and emits the window', async () => {
    const { t, setMinutesAfterFirstRun } = quietStream(`${TIMEOUT_MIN} minutes`);
    await t.run();
    const idleMin = TIMEOUT_MIN + 1;
    setMinutesAfterFirstRun(idleMin);
    const r = await t.run();
    expect(r.batches.map((b) => [b.batchId, b.noData])).toEqual([[2, true]]);
    // never beyond the data's watermark plus the idle time: 11:54 + 31 min
    expect(r.batches[0].batchWatermarkMs).toBe(DATA_WM + idleMin * MIN);
    expect(r.batches[0].rows).toEqual([window1200]);
    expect(r.progress[0].sluice.watermarkAdvancedByIdleness).toBe(true);
    expect(r.progress[0].eventTime.watermark).toBe(new Date(DATA_WM + idleMin * MIN).toISOString());
    expect((await t.checkpoint.readProgress(2)) as { sluice: { watermarkAdvancedByIdleness?: boolean } }).toMatchObject({
      sluice: { watermarkAdvancedByIdleness: true },
    });
    expect(t.checkpoint.offsets.get(2)).toMatchObject({ batchWatermarkMs: DATA_WM + idleMin * MIN, watermarkAdvancedByIdleness: true });
    // The earlier batches' records do not say so.
    expect((await t.checkpoint.readProgress(1)) as { sluice: object }).not.toHaveProperty('sluice.watermarkAdvancedByIdleness');

    // The state is empty now: a later idle run has nothing to close and writes nothing.
    setMinutesAfterFirstRun(120);
    expect((await t.run()).batches).toEqual([]);
  });

  it('keeps the time of the last input in the checkpoint, so a restarted executor carries on', async () => {
    const { t, setMinutesAfterFirstRun } = quietStream(`${TIMEOUT_MIN} minutes`);
    await t.run();
    // Each run is a new executor (a new Lambda): only the checkpoint knows when data last came.
    expect(t.checkpoint.commits.get(1)).toMatchObject({ lastInputAtMs: T0 });
    setMinutesAfterFirstRun(10);
    expect((await t.executor().run()).batches).toEqual([]);
    setMinutesAfterFirstRun(TIMEOUT_MIN);
    const r = await t.executor().run({ collectRows: true });
    expect(r.batches[0].rows).toEqual([window1200]);
    expect(r.watermarkMs).toBe(DATA_WM + TIMEOUT_MIN * MIN);
  });

  it('never moves the watermark back, and rows older than the advanced watermark are late', async () => {
    const { t, setMinutesAfterFirstRun } = quietStream(`${TIMEOUT_MIN} minutes`);
    await t.run();
    setMinutesAfterFirstRun(TIMEOUT_MIN + 5);
    const advanced = (await t.run()).watermarkMs;
    expect(advanced).toBe(DATA_WM + (TIMEOUT_MIN + 5) * MIN);
    // New data whose event time lags the clock: its own watermark (12:31 − 10 min) is below the
    // advanced one (12:29), which stays; the 12:06 row's window ended before it, so it is dropped.
    t.drop([
      { user: 'c', event_time: at('12:06'), amount: 4 },
      { user: 'd', event_time: at('12:31'), amount: 8 },
    ]);
    setMinutesAfterFirstRun(TIMEOUT_MIN + 10);
    const r = await t.run();
    expect(r.droppedByWatermark).toBe(1);
    expect(r.batches.every((b) => b.batchWatermarkMs >= advanced)).toBe(true);
    expect(r.watermarkMs).toBe(advanced);
  });
});

describe('when idleTimeout is not set', () => {
  it('never advances the watermark without data, however long the source is quiet', async () => {
    const { t, setMinutesAfterFirstRun } = quietStream();
    await t.run();
    for (const m of [TIMEOUT_MIN + 1, 24 * 60, 30 * 24 * 60]) {
      setMinutesAfterFirstRun(m);
      const r = await t.run();
      expect(r.batches).toEqual([]);
      expect(r.watermarkMs).toBe(DATA_WM);
    }
    expect(t.sinkRows()).toEqual([]);
    expect(t.checkpoint.commits.get(1)).not.toHaveProperty('lastInputAtMs');
  });
});

describe('when the option is given a bad value or the wrong query', () => {
  it.each([['soon'], ['0 minutes'], ['1 month'], [30]])('refuses idleTimeout %p with the fix', (value) => {
    const w = readStream
      .format('json')
      .schema('event_time TIMESTAMP')
      .load()
      .withWatermark('event_time', '1 minute')
      .groupBy(window('event_time', '1 minute'))
      .agg(count().as('n')).writeStream;
    expect(() => w.option('idleTimeout', value as string)).toThrow(InvalidOptionError);
    expect(() => w.option('idleTimeout', value as string)).toThrow(/idleTimeout/);
  });

  it('refuses it on a stateless query, which has no windows to close', () => {
    const w = readStream
      .format('json')
      .schema('event_time TIMESTAMP')
      .load()
      .withWatermark('event_time', '1 minute')
      .writeStream.option('idleTimeout', '30 minutes');
    expect(() => w.plan()).toThrow(InvalidOptionError);
    expect(() => w.plan()).toThrow(/stateless.*remove the option/);
  });

  it('refuses it on an aggregation without a watermark, and in complete mode', () => {
    const agg = () => readStream.format('json').schema('user STRING, event_time TIMESTAMP').load();
    expect(() => agg().groupBy('user').agg(count().as('n')).writeStream.outputMode('update').option('idleTimeout', '30 minutes').plan()).toThrow(
      /no withWatermark/,
    );
    expect(() =>
      agg()
        .withWatermark('event_time', '1 minute')
        .groupBy(window('event_time', '1 minute'))
        .agg(count().as('n'))
        .writeStream.outputMode('complete')
        .option('idleTimeout', '30 minutes')
        .plan(),
    ).toThrow(/complete mode never evicts/);
  });

  it('takes a Spark interval and keeps it in the plan, outside the stateful shape', () => {
    expect(totals('1 hour 30 minutes').idleTimeoutMs).toBe(90 * MIN);
    expect(totals().idleTimeoutMs).toBeUndefined();
    // Turning it on or off later keeps the checkpoint: it is not part of the stateful shape.
    expect(statefulShape(totals('30 minutes'))).toEqual(statefulShape(totals()));
  });
});
