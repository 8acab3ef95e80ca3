/**
 * Where a pipeline writes must lie outside where its S3 source reads (hole 7 of issue 14): a
 * source of the whole bucket would list sluice's own checkpoint, output and dead letters as input.
 * buildExecutor refuses it, before any request, for the CLI, the handler and the conformance runner.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { runPipeline, type PipelineConfig } from '../../lib/aws/pipeline';
import { InvalidOptionError } from '../../lib/engine/errors';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { windowedTotals } from '../../examples/windowed-totals';
import { readStream } from '../../lib/engine/query/reader';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();
let stateTable: string;

beforeAll(async () => {
  stateTable = uniqueName('loc-state');
  await ensureStateTable(dynamodb, stateTable);
});

async function freshBucketWithOneFile(): Promise<string> {
  const bucket = uniqueName('sluice-loc');
  await ensureBucket(s3, bucket);
  const line = JSON.stringify({ user: 'a', event_time: '2026-03-01 10:00:00', amount: 1 });
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: '2026/03/01/00.json', Body: `${line}\n` }));
  return bucket;
}

async function keysOf(bucket: string): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (page.Contents ?? []).map((o) => o.Key!).sort();
}

describe("when the S3 source is a whole bucket that also holds the CLI's default locations", () => {
  it('the run is refused before any request, so it never reads its own checkpoint and output as input', async () => {
    const bucket = await freshBucketWithOneFile();
    const plan = windowedTotals({ name: 'own-files' });
    // The CLI's defaults for `--source s3://<bucket>` (bin/commands.ts).
    const cfg: PipelineConfig = {
      source: { kind: 's3', bucket, prefix: '' },
      checkpoint: { bucket, prefix: '_sluice/own-files/checkpoint' },
      sink: { kind: 's3', bucket, prefix: '_sluice/own-files/output' },
      stateTable,
    };
    const runs = async () => {
      await runPipeline(testConnection(), plan, cfg);
      return runPipeline(testConnection(), plan, cfg);
    };
    await expect(runs()).rejects.toThrow(InvalidOptionError);
    await expect(runs()).rejects.toThrow(
      /the checkpoint s3:\/\/\S+\/_sluice\/own-files\/checkpoint overlaps the source the whole bucket .*give the source a prefix of its own/,
    );
    expect(await keysOf(bucket)).toEqual(['2026/03/01/00.json']);
  });
});

describe('when a written location lies inside a source prefix', () => {
  const plan = windowedTotals({ name: 'nested' });
  const base = (bucket: string): PipelineConfig => ({
    source: { kind: 's3', bucket, prefix: 'landing' },
    checkpoint: { bucket, prefix: 'state/checkpoint' },
    sink: { kind: 's3', bucket, prefix: 'out' },
    stateTable,
  });

  it('the S3 sink, the file sink and an explicit dead-letter prefix are each refused by name', async () => {
    const bucket = await freshBucketWithOneFile();
    await expect(runPipeline(testConnection(), plan, { ...base(bucket), sink: { kind: 's3', bucket, prefix: 'landing/out' } })).rejects.toThrow(
      /^the sink s3:\/\/\S+\/landing\/out overlaps/,
    );
    await expect(runPipeline(testConnection(), plan, { ...base(bucket), sink: { kind: 's3-files', bucket, prefix: 'landing/files' } })).rejects.toThrow(
      /^the sink s3:\/\/\S+\/landing\/files overlaps/,
    );
    await expect(runPipeline(testConnection(), plan, { ...base(bucket), deadLetter: { bucket, prefix: 'landing/dead' } })).rejects.toThrow(
      /^the dead-letter location s3:\/\/\S+\/landing\/dead overlaps/,
    );
    expect(await keysOf(bucket)).toEqual(['2026/03/01/00.json']);
  });

  it('the default dead-letter location (a sibling of the checkpoint) is checked too', async () => {
    const bucket = await freshBucketWithOneFile();
    const cfg: PipelineConfig = { ...base(bucket), source: { kind: 's3', bucket, prefix: 'state/checkpoint-dead-letter' } };
    await expect(runPipeline(testConnection(), plan, cfg)).rejects.toThrow(/^the dead-letter location s3:\/\/\S+\/state\/checkpoint-dead-letter overlaps/);
  });

  it('locations in other buckets or sibling prefixes are accepted and the run reads the landing file', async () => {
    const bucket = await freshBucketWithOneFile();
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'landing/00.json',
        Body: `${JSON.stringify({ user: 'a', event_time: '2026-03-01 10:00:00', amount: 1 })}\n`,
      }),
    );
    const report = await runPipeline(testConnection(), plan, { ...base(bucket), sink: { kind: 's3', bucket, prefix: 'landing-out' } });
    expect(report.rowsIn).toBe(1);
    expect(report.deadLetters).toBe(0);
  });
});

describe("when the sink lies inside a stream-stream join's second input", () => {
  it("is refused by name before any request, as for the first input, so the sink's own files are never read as clicks", async () => {
    const bucket = await freshBucketWithOneFile();
    const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '10 minutes');
    const plan = readStream
      .format('json')
      .schema('ad STRING, it TIMESTAMP')
      .load()
      .withWatermark('it', '10 minutes')
      .join(clicks, { left: 'ad', right: 'cad' }, 'inner', { timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds' } })
      .writeStream.queryName('joined-into-clicks')
      .plan();
    const cfg: PipelineConfig = {
      source: { kind: 's3', bucket, prefix: 'impressions' },
      inputs: [{ kind: 's3', bucket, prefix: 'clicks' }],
      checkpoint: { bucket, prefix: 'state/checkpoint' },
      sink: { kind: 's3', bucket, prefix: 'clicks/joined' },
      stateTable,
    };
    await expect(runPipeline(testConnection(), plan, cfg)).rejects.toThrow(
      /^the sink s3:\/\/\S+\/clicks\/joined overlaps input \S+ s3:\/\/\S+\/clicks, which would read sluice's own objects/,
    );
    expect(await keysOf(bucket)).toEqual(['2026/03/01/00.json']);
  });
});
