/**
 * Late data, kept: rows the watermark rejects are written to the dead-letter location with the
 * reason and the watermark, exactly once, so the sink plus the late rows equals the input.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { CrashInjector } from '../../lib/engine/testing/crash';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3DeadLetterSink } from '../../lib/aws/s3/dead-letters';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { SEED_FILES } from '../../examples/windowed-totals';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const bucket = uniqueName('late');
const table = uniqueName('late-state');

const plan = readStream
  .format('json')
  .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
  .load()
  .withWatermark('event_time', '10 minutes')
  .groupBy(window('event_time', '10 minutes'))
  .agg(sum('amount').as('total'), count().as('events'))
  .writeStream.outputMode('update')
  .lateRows('dead-letter')
  .queryName('late-kept')
  .plan();

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, bucket), ensureStateTable(c.dynamodb, table)]);
});

describe.each([
  ['without a crash', null],
  ['with a crash after the late rows were written', 'after-sink'],
] as const)('when the seed files arrive one per run %s', (_label, crashPoint) => {
  it('the sink totals plus the dead-lettered late rows equal the input, each late row once', async () => {
    const base = uniqueName('run');
    const cfg: PipelineConfig = {
      checkpoint: { bucket, prefix: `${base}/checkpoint` },
      stateTable: table,
      source: { kind: 's3', bucket, prefix: `${base}/landing` },
      sink: { kind: 's3', bucket, prefix: `${base}/sink` },
      deadLetter: { bucket, prefix: `${base}/dead-letter` },
    };
    const s3 = testClients().s3;
    const time = leaseClock();
    for (const f of SEED_FILES) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${f.name}`, Body: f.rows.map((r) => JSON.stringify(r)).join('\n') }));
      if (crashPoint) {
        await expect(
          buildExecutor(testConnection(), plan, cfg, { crash: new CrashInjector({ point: crashPoint }), clock: time.clock }).executor.run(),
        ).rejects.toThrow(/injected crash/);
        time.waitOutLease(); // the crashed run kept its lease
      }
      await buildExecutor(testConnection(), plan, cfg, { clock: time.clock }).executor.run();
    }
    const sink = new S3JsonSink({ client: s3, bucket, prefix: `${base}/sink` });
    const latest = new Map<string, number>();
    for (const id of await sink.listBatches()) for (const row of (await sink.readBatch(id))!) latest.set(JSON.stringify(row.window), row.total as number);
    const dl = new S3DeadLetterSink({ client: s3, bucket, prefix: `${base}/dead-letter` });
    const late: Array<{ row: { amount: number; event_time: string }; watermark: string; reason: string }> = [];
    for (let id = 0; id <= 6; id++) late.push(...((await dl.read(id, 'late')) as typeof late));

    expect(late).toEqual([
      expect.objectContaining({
        row: expect.objectContaining({ user: 'd', amount: 100, event_time: '2026-10-01T12:03:00.000Z' }),
        watermark: '2026-10-01T12:15:00.000Z',
      }),
    ]);
    expect(late[0].reason).toMatch(/watermark/);
    const input = SEED_FILES.flatMap((f) => f.rows).reduce((a, r) => a + (r.amount as number), 0);
    const sinkTotal = [...latest.values()].reduce((a, b) => a + b, 0);
    expect(sinkTotal + late.reduce((a, l) => a + l.row.amount, 0)).toBe(input);
  });
});
