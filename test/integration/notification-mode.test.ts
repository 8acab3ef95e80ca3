/**
 * Notification mode end to end on the local stack: the local S3 (s3rver) notifies the local SQS
 * (local-aws-sqs) over HTTP, and availableNow runs go through the real pipeline (buildExecutor
 * with a notification queue, as the Lambda handler builds it from SLUICE_NOTIFICATION_QUEUE_URL).
 *
 *   each file read once over two runs; a duplicate notification, one for a key outside the
 *   prefix, one for a `_` name and one for a deleted object read nothing, and their messages go
 *   a crash before the commit (mid-sink, before-commit) leaves the batch's messages; the next run
 *   replays the batch from its log and reads nothing twice; after-commit: same, messages deleted
 *   by the run after
 *   a file that arrives after the run began waits for the next run
 */
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { InjectedCrash } from '../../lib/engine/errors';
import { readStream } from '../../lib/engine/query/reader';
import type { CrashPoint } from '../../lib/engine/testing/crash';
import type { Row } from '../../lib/engine/ports';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureNotificationQueue, ensureStateTable } from '../../lib/local/resources';
import { queueCounts, s3EventBody, sendBodies, waitForMessages } from '../helpers/s3-notifications';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, sqs } = testClients() as ReturnType<typeof testClients> & { sqs: SQSClient };
const bucket = uniqueName('notify-mode');
const table = uniqueName('notify-mode-state');

const plan = (opts: { maxFilesPerTrigger?: number } = {}) => {
  let reader = readStream.format('json').schema('id STRING').option('discovery', 'notifications');
  if (opts.maxFilesPerTrigger) reader = reader.option('maxFilesPerTrigger', opts.maxFilesPerTrigger);
  return reader.load().writeStream.queryName('notified-copy').plan();
};

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(testClients().dynamodb, table)]);
});

/** A query's own prefixes and queue, S3 notifying the queue of ObjectCreated under its landing prefix. */
async function setUp(): Promise<{ base: string; cfg: PipelineConfig; queueUrl: string }> {
  const base = uniqueName('q');
  const { queueUrl } = await ensureNotificationQueue({ s3, sqs }, { bucket, prefix: `${base}/landing`, name: uniqueName('nq') });
  await waitForMessages(sqs, queueUrl, 1); // S3's test event
  const cfg: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: { kind: 's3-files', bucket, prefix: `${base}/out` },
    notificationQueueUrl: queueUrl,
  };
  return { base, cfg, queueUrl };
}

async function put(key: string, ids: string[]): Promise<string> {
  const res = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${ids.map((id) => JSON.stringify({ id })).join('\n')}\n` }));
  return res.ETag!.replace(/"/g, '');
}

/** Waits until the queue holds at least `n` visible messages (the local S3 notifies asynchronously). */
const ids = (rows: readonly Row[] | undefined) => (rows ?? []).map((r) => String((r as Record<string, unknown>).id)).sort();
const allIds = (report: { batches: ReadonlyArray<{ rows?: readonly Row[] }> }) => report.batches.flatMap((b) => ids(b.rows)).sort();

describe('notification mode through the real pipeline', () => {
  it('reads each announced file once over two runs; duplicates, keys outside the prefix or the listing rules, and deleted objects read nothing; every message is deleted', async () => {
    const { base, cfg, queueUrl } = await setUp();
    const etagA = await put(`${base}/landing/a.json`, ['a1', 'a2']);
    await put(`${base}/landing/b.json`, ['b1']);
    await put(`${base}/landing/_partial.json`, ['hidden']); // a `_` name: outside Spark's listing rules
    await put(`${base}/landing/gone.json`, ['gone']);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${base}/landing/gone.json` })); // announced, then deleted
    await put(`${base}/other/x.json`, ['outside']);
    await waitForMessages(sqs, queueUrl, 4);
    // S3 sends an event twice now and then; and a message for a key outside the prefix (a wider rule)
    await sendBodies(sqs, queueUrl, [
      s3EventBody({ bucket, key: `${base}/landing/a.json`, etag: etagA, size: 12, eventTime: new Date().toISOString() }),
      s3EventBody({ bucket, key: `${base}/other/x.json`, size: 16 }),
    ]);
    await waitForMessages(sqs, queueUrl, 6);

    const first = await buildExecutor(testConnection(), plan(), cfg).executor.run({ collectRows: true });
    expect(allIds(first)).toEqual(['a1', 'a2', 'b1']);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });

    // the same notification again (a redelivery across runs) and one new file
    await sendBodies(sqs, queueUrl, [s3EventBody({ bucket, key: `${base}/landing/a.json`, etag: etagA, size: 12, eventTime: new Date().toISOString() })]);
    await put(`${base}/landing/c.json`, ['c1']);
    await waitForMessages(sqs, queueUrl, 2);
    const second = await buildExecutor(testConnection(), plan(), cfg).executor.run({ collectRows: true });
    expect(allIds(second)).toEqual(['c1']);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });

    const third = await buildExecutor(testConnection(), plan(), cfg).executor.run({ collectRows: true });
    expect(third.batches).toEqual([]);
  });

  it('leaves files that arrive after the run began to the next run', async () => {
    const { base, cfg, queueUrl } = await setUp();
    await put(`${base}/landing/a.json`, ['a1']);
    await put(`${base}/landing/b.json`, ['b1']);
    await waitForMessages(sqs, queueUrl, 2);
    const first = await buildExecutor(testConnection(), plan({ maxFilesPerTrigger: 1 }), cfg).executor.run({
      collectRows: true,
      onProgress: async (p) => {
        if (p.batchId !== 0) return;
        await put(`${base}/landing/late.json`, ['late1']);
        await waitForMessages(sqs, queueUrl, 1);
      },
    });
    expect(first.batches.map((b) => ids(b.rows))).toEqual([['a1'], ['b1']]);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 1, inFlight: 0 });
    const second = await buildExecutor(testConnection(), plan({ maxFilesPerTrigger: 1 }), cfg).executor.run({ collectRows: true });
    expect(allIds(second)).toEqual(['late1']);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  describe.each<CrashPoint>(['mid-sink', 'before-commit', 'after-commit'])('a run that crashes at %s', (point) => {
    it('leaves or deletes messages only as its commit says, and the next run reads nothing twice', async () => {
      const { base, cfg, queueUrl } = await setUp();
      await put(`${base}/landing/a.json`, ['a1', 'a2']);
      await put(`${base}/landing/b.json`, ['b1']);
      await waitForMessages(sqs, queueUrl, 2);
      const time = leaseClock();
      const crashed = buildExecutor(testConnection(), plan(), cfg, { crash: { point }, clock: time.clock });
      await expect(crashed.executor.run()).rejects.toBeInstanceOf(InjectedCrash);
      const head = await crashed.checkpoint.head();
      expect(head.latestCommitBatch).toBe(point === 'after-commit' ? 0 : -1);
      // not deleted before the commit (and after it only once the source heard of it, which a crash at after-commit prevents)
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 2, inFlight: 0 });

      time.waitOutLease();
      const recovered = await buildExecutor(testConnection(), plan(), cfg, { clock: time.clock }).executor.run({ collectRows: true });
      if (point === 'after-commit') expect(recovered.batches).toEqual([]);
      else {
        expect(recovered.batches).toHaveLength(1);
        expect(recovered.batches[0]).toMatchObject({ batchId: 0, replay: true });
        expect(ids(recovered.batches[0].rows)).toEqual(['a1', 'a2', 'b1']);
      }
      // the redelivered messages name files the source has read: forgotten, so deleted
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
      const again = await buildExecutor(testConnection(), plan(), cfg, { clock: time.clock }).executor.run({ collectRows: true });
      expect(again.batches).toEqual([]);
    });
  });
});
