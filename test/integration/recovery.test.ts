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
import { buildExecutor, PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { windowedTotals } from '../../examples/windowed-totals';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

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
