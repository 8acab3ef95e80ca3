/**
 * Restart after a crash between the offset write and the commit, on the local stack: the
 * uncommitted batch is replayed with its logged offsets and watermark, and its rows are counted
 * once in the DynamoDB state and the sink, however far the crashed attempt got. The crashed run
 * keeps its DynamoDB lease (a killed Lambda releases nothing): a run before the expiry exits
 * lease-held, the one after takes over.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { CrashPoint } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import { col, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { windowedTotals } from '../../examples/windowed-totals';
import { expireTtlItems, leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const bucket = uniqueName('recovery');
const table = uniqueName('recovery-state');

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, bucket), ensureStateTable(c.dynamodb, table)]);
});

function pipeline(base: string): PipelineConfig {
  return {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: { kind: 's3', bucket, prefix: `${base}/sink` },
  };
}

async function drop(base: string, name: string, rows: object[]) {
  await testClients().s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${name}`, Body: rows.map((r) => JSON.stringify(r)).join('\n') }));
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ user: `u${i % 7}`, event_time: `2026-10-01 12:0${i % 10}:00`, amount: 1 }));

describe.each<CrashPoint>(['after-offsets', 'mid-read', 'after-sink', 'mid-state', 'before-commit'])(
  'when batch 0 crashes at %s, after its offsets are logged and before its commit',
  (point) => {
    it('the next run replays batch 0 once: the window is counted once in state and sink', async () => {
      const base = uniqueName(point);
      const plan = windowedTotals({ outputMode: 'update', name: `recovery-${point}` });
      await drop(base, '001.json', rows(50));
      const time = leaseClock();
      const crashed = buildExecutor(testConnection(), plan, pipeline(base), { crash: { point }, clock: time.clock });
      await expect(crashed.executor.run()).rejects.toBeInstanceOf(InjectedCrash);
      const head = await crashed.checkpoint.head();
      expect(head.latestOffsetBatch).toBe(0);
      expect(head.latestCommitBatch).toBe(-1);

      // The killed run kept its DynamoDB lease: a run before its expiry does nothing.
      const early = await buildExecutor(testConnection(), plan, pipeline(base), { clock: time.clock }).executor.run();
      expect(early).toMatchObject({ stoppedBy: 'lease-held', batches: [] });

      time.waitOutLease();
      const recovered = buildExecutor(testConnection(), plan, pipeline(base), { clock: time.clock });
      const report = await recovered.executor.run();
      expect(report.batches[0]).toMatchObject({ batchId: 0, replay: true, numInputRows: 50 });

      const sink = new S3JsonSink({ client: testClients().s3, bucket, prefix: `${base}/sink` });
      const batch0 = (await sink.readBatch(0))!;
      expect(batch0).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 50, events: 50 }]);

      // The state as the next batch sees it holds 50, not 50 plus the crashed attempt's writes.
      const state = await recovered.state.all({ operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 600_000 }, 0);
      expect(state).toHaveLength(1);
      expect((state[0].value as { b: unknown[] }).b).toEqual([50, 50]);

      // And one more file is added on top of it, once.
      await drop(base, '002.json', rows(10));
      const next = await buildExecutor(testConnection(), plan, pipeline(base), { clock: time.clock }).executor.run({ collectRows: true });
      expect(next.batches.flatMap((b) => b.rows)).toEqual([
        { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 60, events: 60 },
      ]);
    });
  },
);

// ---------------------------------------------------------------------------------------------
// Issue 14: the state store's part, through the pipeline a Lambda runs

/** DynamoDB TTL at a moment the test picks (test/helpers/stack.ts). */
const expireTtl = (atMs: number) => expireTtlItems(table, atMs);

describe('when a batch that evicted state crashed before its commit and is replayed days later (hole 2)', () => {
  const DAY = 86_400_000;

  /** Batch 0: 50 rows in 12:00-12:10; batch 1: a row at 13:00; batch 2 (no data) evicts the window, and crashes before commits/2. */
  async function crashedEviction(base: string) {
    let now = Date.parse('2026-10-02T00:00:00Z');
    const clock = { now: () => now };
    const plan = windowedTotals({ outputMode: 'append', name: `late-${base}`, maxFilesPerTrigger: 1 });
    await drop(base, '001.json', rows(50));
    await drop(base, '002.json', [{ user: 'z', event_time: '2026-10-01 13:00:00', amount: 1 }]);
    const crashed = buildExecutor(testConnection(), plan, pipeline(base), { clock, crash: { point: 'before-commit', batchId: 2 } });
    await expect(crashed.executor.run()).rejects.toBeInstanceOf(InjectedCrash);
    expect((await crashed.checkpoint.head()).latestCommitBatch).toBe(1);
    const planned = (await crashed.checkpoint.readOffsets(2))!.batchTimestampMs;
    return {
      plan,
      clock,
      /** Moves the clock to `ms` after batch 2 was planned, and lets TTL delete what it may. */
      async later(ms: number) {
        now = planned + ms;
        return expireTtl(now);
      },
    };
  }

  it('emits the evicted window on a replay 2 days later: the pages of the evicted window stay readable for the replay', async () => {
    const base = uniqueName('late2d');
    const { plan, clock, later } = await crashedEviction(base);
    await later(2 * DAY);
    const report = await buildExecutor(testConnection(), plan, pipeline(base), { clock }).executor.run({ collectRows: true });
    expect(report.batches[0]).toMatchObject({ batchId: 2, replay: true, stateRows: 1 });
    expect(report.batches[0].rows).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 50, events: 50 }]);
  });

  it('replays a year later too: the state keeps what a replay reads until the next commit, whatever TTL does', async () => {
    const base = uniqueName('late1y');
    const { plan, clock, later } = await crashedEviction(base);
    expect(await later(365 * DAY)).toBe(0);
    const report = await buildExecutor(testConnection(), plan, pipeline(base), { clock }).executor.run({ collectRows: true });
    expect(report.batches[0]).toMatchObject({ batchId: 2, replay: true, stateRows: 1 });
    const sink = new S3JsonSink({ client: testClients().s3, bucket, prefix: `${base}/sink` });
    expect(await sink.readBatch(2)).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 50, events: 50 }]);
  });
});

describe('when the watermark delay of a deduplication changes between runs (hole 8)', () => {
  const dedup = (delay: string) =>
    readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
      .load()
      .withWatermark('event_time', delay)
      .dropDuplicates(['user', 'event_time'])
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('dedup-delay')
      .plan();

  it('the next run reads the state with the layout it was written with, and deduplicates across the change', async () => {
    const base = uniqueName('delay');
    await drop(base, '001.json', [
      { user: 'a', event_time: '2026-10-01 12:01:00', amount: 1 },
      { user: 'b', event_time: '2026-10-01 12:02:00', amount: 1 },
    ]);
    const first = await buildExecutor(testConnection(), dedup('10 minutes'), pipeline(base)).executor.run({ collectRows: true });
    expect(first.rowsOut).toBe(2);
    await drop(base, '002.json', [
      { user: 'a', event_time: '2026-10-01 12:01:00', amount: 2 },
      { user: 'c', event_time: '2026-10-01 12:05:00', amount: 1 },
    ]);
    const second = await buildExecutor(testConnection(), dedup('1 hour'), pipeline(base)).executor.run({ collectRows: true });
    expect(second.batches.flatMap((b) => b.rows).map((r) => r.user)).toEqual(['c']);
    await drop(base, '003.json', [
      { user: 'b', event_time: '2026-10-01 12:02:00', amount: 3 },
      { user: 'd', event_time: '2026-10-01 14:00:00', amount: 1 },
    ]);
    const third = await buildExecutor(testConnection(), dedup('30 seconds'), pipeline(base)).executor.run({ collectRows: true });
    expect(third.batches.flatMap((b) => b.rows).map((r) => r.user)).toEqual(['d']);
  });
});

describe('when a grouping value is longer than a DynamoDB sort key holds (hole 3c)', () => {
  it('aggregates it under its hash and emits it whole', async () => {
    const base = uniqueName('longkey');
    const plan = readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
      .load()
      .withWatermark('event_time', '10 minutes')
      .groupBy(col('user'))
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('longkey')
      .plan();
    const user = 'u'.repeat(2048);
    await drop(base, '001.json', [
      { user, event_time: '2026-10-01 12:01:00', amount: 1 },
      { user: 'short', event_time: '2026-10-01 12:01:00', amount: 5 },
    ]);
    await buildExecutor(testConnection(), plan, pipeline(base)).executor.run();
    await drop(base, '002.json', [{ user, event_time: '2026-10-01 12:02:00', amount: 2 }]);
    const r = await buildExecutor(testConnection(), plan, pipeline(base)).executor.run({ collectRows: true });
    expect(r.batches.flatMap((b) => b.rows)).toEqual([{ user, total: 3 }]);
  });
});
