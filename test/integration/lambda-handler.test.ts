/**
 * The scheduled Lambda handler, invoked in-process with a real EventBridge "Scheduled Event"
 * payload against the embedded local stack: a run processes what landed, the next one continues
 * from the checkpoint. The handler is built with the test connection (createScheduledHandler),
 * so nothing here depends on process.env.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SEED_FILES, windowedTotals } from '../../examples/windowed-totals';
import { connectionFromEnv, createClients, type AwsClients } from '../../lib/aws/clients';
import type { AwsConnection } from '../../lib/aws/config';
import { lambdaEnvironmentFrom, pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import {
  createScheduledHandler,
  SUMMARY_PROGRESS_RECORDS,
  type LambdaContextLike,
  type ScheduledRunSummary as RunSummary,
  type ScheduledEventLike,
  type ScheduledHandlerOptions,
} from '../../lib/aws/lambda/handler';
import type { PipelineConfig } from '../../lib/aws/pipeline';
import { SluiceError } from '../../lib/engine/errors';
import type { OutputRow, Sink, SinkContext } from '../../lib/engine/ports';
import { sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { WINDOWED_TOTALS_SCHEMA } from '../../examples/windowed-totals';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';
import { cliEnv } from '../helpers/cli';

jest.setTimeout(60_000);

let conn: AwsConnection;
let s3: S3Client;
let bucket: string;
let stateTable: string;

beforeAll(async () => {
  conn = testConnection();
  const clients = testClients();
  s3 = clients.s3;
  bucket = uniqueName('sluice-lambda').toLowerCase();
  stateTable = uniqueName('sluice-lambda-state');
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(clients.dynamodb, stateTable)]);
});

// ---- factories -------------------------------------------------------------------------------

/** What EventBridge delivers on a `rate(15 minutes)` rule. */
function scheduledEvent(time: string): ScheduledEventLike & Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time,
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:123456789012:rule/SluiceWindowedTotalsS3-WindowedTotalsSchedule'],
    detail: {},
  };
}

/** A Lambda context with `remainingMs` left on the clock when the handler starts. */
function lambdaContext(remainingMs = 60_000): LambdaContextLike & Record<string, unknown> {
  const deadline = Date.now() + remainingMs;
  return {
    awsRequestId: randomUUID(),
    functionName: 'SluiceWindowedTotalsS3-WindowedTotalsFunction',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

interface Pipeline {
  readonly cfg: PipelineConfig;
  readonly lines: Array<Record<string, unknown>>;
  invoke(time: string, remainingMs?: number): Promise<RunSummary>;
  drop(file: (typeof SEED_FILES)[number]): Promise<void>;
  sinkRows(): Promise<Array<Record<string, unknown>>>;
  sinkKeys(): Promise<string[]>;
}

/** A fresh pipeline (its own prefixes) whose handler logs into `lines`. */
function pipeline(outputMode: 'append' | 'update' = 'append', options: ScheduledHandlerOptions = {}): Pipeline {
  const name = uniqueName('wt');
  // The same variables the construct sets, parsed by the same function the entry uses.
  const cfg = pipelineConfigFromEnv({
    SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/${name}`,
    SLUICE_STATE_TABLE: stateTable,
    SLUICE_SOURCE_URI: `s3://${bucket}/landing/${name}`,
    SLUICE_SINK_URI: `s3://${bucket}/output/${name}`,
    SLUICE_LEASE_SECONDS: '120',
  });
  const lines: Array<Record<string, unknown>> = [];
  const handler = createScheduledHandler(windowedTotals({ outputMode, source: 'files', name: `windowed-totals-${name}` }), cfg, conn, {
    pipelineName: name,
    writeLine: (line) => lines.push(JSON.parse(line)),
    ...options,
  });
  const sinkPrefix = `output/${name}/`;
  const sinkKeys = async () => {
    const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: sinkPrefix }));
    return (res.Contents ?? []).map((c) => c.Key!).sort();
  };
  return {
    cfg,
    lines,
    invoke: (time, remainingMs) => handler(scheduledEvent(time), lambdaContext(remainingMs)),
    drop: async (file) => {
      const body = `${file.rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `landing/${name}/${file.name}`, Body: Buffer.from(body) }));
    },
    sinkKeys,
    sinkRows: async () => {
      const rows: Array<Record<string, unknown>> = [];
      for (const key of await sinkKeys()) {
        const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const text = await res.Body!.transformToString();
        for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
      }
      return rows;
    },
  };
}

const window = (start: string, end: string) => ({ start: `2026-10-01T${start}:00.000Z`, end: `2026-10-01T${end}:00.000Z` });

// ---- scenarios --------------------------------------------------------------------------------

describe('when the schedule fires after the first file landed', () => {
  let p: Pipeline;
  let summary: RunSummary;
  let returnedMs: number;
  beforeAll(async () => {
    p = pipeline('append');
    await p.drop(SEED_FILES[0]);
    summary = await p.invoke('2026-10-01T12:15:00Z');
    returnedMs = Date.now();
  });

  it('processes the file and returns the run summary', () => {
    expect(summary).toMatchObject({
      event: 'run-summary',
      stoppedBy: 'done',
      rowsIn: 3,
      rowsOut: 0, // append: no window is final before the watermark passes its end
      watermark: '2026-10-01T12:02:00.000Z',
      backlogLeft: 0,
      droppedByWatermark: 0,
      deadLetters: 0,
      scheduledAt: '2026-10-01T12:15:00Z',
    });
    expect(summary.batches).toBeGreaterThanOrEqual(1);
    expect(summary.stateRows).toBeGreaterThan(0);
  });

  it('logs one JSON line per batch and a summary line in Embedded Metric Format', () => {
    const batches = p.lines.filter((l) => l.event === 'batch');
    expect(batches).toHaveLength(summary.batches);
    expect(batches[0]).toMatchObject({ batchId: 0, rowsIn: 3, level: 'info' });
    const last = p.lines[p.lines.length - 1];
    expect(last).toMatchObject({ event: 'run-summary', RowsIn: 3, RowsOut: 0, BacklogLeft: 0, Runs: 1, Pipeline: summary.pipeline });
    const emf = (last._aws as { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> })
      .CloudWatchMetrics[0];
    expect(emf.Namespace).toBe('Sluice');
    expect(emf.Dimensions).toEqual([['Pipeline']]);
    expect(emf.Metrics.map((m) => m.Name)).toEqual(expect.arrayContaining(['RowsIn', 'BacklogLeft', 'StateRows', 'DroppedByWatermark']));
    for (const m of emf.Metrics) expect(typeof last[m.Name]).toBe('number');
  });

  it("reports the run's longest batch and the watermark's lag behind the clock at the run's end", () => {
    const batchMs = p.lines.filter((l) => l.event === 'batch').map((l) => l.durationMs as number);
    const last = p.lines[p.lines.length - 1];
    expect(summary.maxBatchDurationMs).toBe(Math.max(...batchMs));
    expect(last.MaxBatchDurationMs).toBe(summary.maxBatchDurationMs);
    // The lag is taken at the run's end: after its last batch, before the summary line's EMF
    // timestamp, which is taken before the handler returns (one clock; how many milliseconds
    // apart is the machine's speed, so only the order is asserted).
    const endedMs = Date.parse(summary.watermark) + summary.watermarkLagMs!;
    const stampMs = (last._aws as { Timestamp: number }).Timestamp;
    const lastBatch = summary.progress[summary.progress.length - 1];
    expect(endedMs).toBeGreaterThanOrEqual(Date.parse(lastBatch.timestamp) + lastBatch.batchDuration);
    expect(endedMs).toBeLessThanOrEqual(stampMs);
    expect(stampMs).toBeLessThanOrEqual(returnedMs);
    expect(last.WatermarkLagMs).toBe(summary.watermarkLagMs);
  });

  it('returns the progress records of its batches, as progress/N holds them, the commit write added', async () => {
    expect(summary.progress.map((p) => p.batchId)).toEqual([...Array(Math.min(summary.batches, SUMMARY_PROGRESS_RECORDS)).keys()]);
    expect(summary.progress.reduce((a, p) => a + p.numInputRows, 0)).toBe(summary.rowsIn);
    for (const record of summary.progress) {
      const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${p.cfg.checkpoint.prefix}/progress/${record.batchId}` }));
      const stored = JSON.parse(await res.Body!.transformToString());
      const { commitOffsets, ...rest } = record.durationMs;
      expect(commitOffsets).toBeGreaterThanOrEqual(0);
      expect(stored).toEqual(JSON.parse(JSON.stringify({ ...record, durationMs: rest })));
    }
    expect(p.lines[p.lines.length - 1].progress).toEqual(JSON.parse(JSON.stringify(summary.progress)));
  });

  it('writes an empty batch object to the sink', async () => {
    expect(await p.sinkRows()).toEqual([]);
    const keys = await p.sinkKeys();
    expect(keys.length).toBe(summary.batches);
    for (const key of keys) expect(key).toMatch(/\/batch-\d{10}\.jsonl$/);
  });

  describe('and fires again after the second file landed', () => {
    let second: RunSummary;
    beforeAll(async () => {
      await p.drop(SEED_FILES[1]);
      second = await p.invoke('2026-10-01T12:30:00Z');
    });

    it('continues from the checkpoint: only the new rows are read', () => {
      expect(second).toMatchObject({ stoppedBy: 'done', rowsIn: 2, watermark: '2026-10-01T12:15:00.000Z', droppedByWatermark: 0 });
      const firstIds = p.lines.filter((l) => l.event === 'batch' && l.scheduledAt === '2026-10-01T12:15:00Z').map((l) => l.batchId as number);
      const secondIds = p.lines.filter((l) => l.event === 'batch' && l.scheduledAt === '2026-10-01T12:30:00Z').map((l) => l.batchId as number);
      expect(Math.min(...secondIds)).toBe(Math.max(...firstIds) + 1);
    });

    it('emits the 12:00 window, now final, with the total of both runs', async () => {
      expect(second.rowsOut).toBe(1);
      expect(await p.sinkRows()).toEqual([{ window: window('12:00', '12:10'), total: 19, events: 3 }]);
    });

    it('does nothing on a tick with nothing new', async () => {
      const third = await p.invoke('2026-10-01T12:45:00Z');
      expect(third).toMatchObject({ stoppedBy: 'done', rowsIn: 0, rowsOut: 0, batches: 0, watermark: '2026-10-01T12:15:00.000Z' });
      expect(await p.sinkRows()).toEqual([{ window: window('12:00', '12:10'), total: 19, events: 3 }]);
    });
  });
});

describe('when one container serves several invocations', () => {
  it('builds the SDK clients once, with the handler, and every invocation sends through the same ones', async () => {
    const built: AwsClients[] = [];
    const p = pipeline('append', {
      createClients: (c) => {
        const clients = createClients(c);
        built.push(clients);
        return clients;
      },
    });
    expect(built).toHaveLength(1); // at container start, before any invocation

    // Which client objects send requests during the invocations (the test's own S3 client aside).
    const s3Send = jest.spyOn(S3Client.prototype, 'send');
    const dynamoSend = jest.spyOn(DynamoDBClient.prototype, 'send');
    const senders = () => ({ s3: new Set(s3Send.mock.contexts.filter((c) => c !== s3)), dynamodb: new Set(dynamoSend.mock.contexts) });
    let first: ReturnType<typeof senders>;
    let both: ReturnType<typeof senders>;
    try {
      await p.drop(SEED_FILES[0]);
      expect(await p.invoke('2026-10-01T12:15:00Z')).toMatchObject({ stoppedBy: 'done', rowsIn: 3 });
      first = senders();
      await p.drop(SEED_FILES[1]);
      expect(await p.invoke('2026-10-01T12:30:00Z')).toMatchObject({ stoppedBy: 'done', rowsIn: 2 });
      both = senders();
    } finally {
      s3Send.mockRestore();
      dynamoSend.mockRestore();
    }
    expect(built).toHaveLength(1);
    expect([...first.s3]).toEqual([built[0].s3]);
    expect([...first.dynamodb]).toEqual([built[0].dynamodb]);
    expect([...both.s3]).toEqual([built[0].s3]);
    expect([...both.dynamodb]).toEqual([built[0].dynamodb]);
  });
});

describe('when the invocation has too little time left to start a batch', () => {
  it('stops at once with the backlog left, and the next invocation processes it', async () => {
    const p = pipeline('append');
    await p.drop(SEED_FILES[0]);
    const hurried = await p.invoke('2026-10-01T12:15:00Z', 2_000);
    expect(hurried).toMatchObject({ stoppedBy: 'deadline', batches: 0, rowsIn: 0, backlogLeft: 1 });
    expect(p.lines[p.lines.length - 1]).toMatchObject({ event: 'run-summary', BacklogLeft: 1 });

    const next = await p.invoke('2026-10-01T12:30:00Z');
    expect(next).toMatchObject({ stoppedBy: 'done', rowsIn: 3, backlogLeft: 0, watermark: '2026-10-01T12:02:00.000Z' });
  });
});

describe('when the run fails', () => {
  it('logs the failure with `retriable` and rethrows, so the invocation fails (a stream that does not exist)', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const cfg = pipelineConfigFromEnv({
      SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/${uniqueName('k')}`,
      SLUICE_STATE_TABLE: stateTable,
      SLUICE_SOURCE_URI: 'kinesis://no-such-orders-stream',
      SLUICE_SINK_URI: `s3://${bucket}/output/${uniqueName('k')}`,
    });
    const handler = createScheduledHandler(windowedTotals({ source: 'kinesis' }), cfg, conn, { writeLine: (l) => lines.push(JSON.parse(l)) });
    const context = lambdaContext();
    await expect(handler(scheduledEvent('2026-10-01T12:15:00Z'), context)).rejects.toThrow(/stream no-such-orders-stream does not exist/);
    expect(lines[lines.length - 1]).toMatchObject({
      level: 'error',
      event: 'run-failed',
      retriable: false,
      requestId: context.awsRequestId,
      errorMessage: expect.stringMatching(/no-such-orders-stream/),
    });
  });

  it('marks a missing state table as a failure of the run, logged before the rethrow', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const cfg: PipelineConfig = { ...pipeline().cfg, stateTable: uniqueName('no-such-table') };
    const handler = createScheduledHandler(windowedTotals({ source: 'files' }), cfg, conn, { writeLine: (l) => lines.push(JSON.parse(l)) });
    // A missing table is permanent (no retry heals it): retriable false, and the remedy names the table's schema.
    const missing =
      /DynamoDB UpdateItem \(lease acquire\) on dynamodb:\/\/no-such-table-\S+ failed \(ResourceNotFoundException, HTTP 400: .*\): create the table \(pk S, sk S, TTL on `ttl`\) with ensureStateTable or the AvailableNowPipeline construct$/;
    await expect(handler(scheduledEvent('2026-10-01T12:15:00Z'), lambdaContext())).rejects.toMatchObject({
      name: 'SluiceError',
      retriable: false,
      message: expect.stringMatching(missing),
    });
    const failed = lines.find((l) => l.event === 'run-failed');
    expect(failed).toMatchObject({
      level: 'error',
      retriable: false,
      errorName: 'SluiceError',
      errorMessage: expect.stringMatching(missing),
      details: { errorName: 'ResourceNotFoundException', attempts: 1 },
      action: 'fix the cause: every scheduled run will fail the same way',
    });
    expect(failed!.errorMessage).toContain(cfg.stateTable);
    expect(lines.filter((l) => l.event === 'run-summary')).toEqual([]);
  });
});

describe('when a run fails on an output key built from grouping values', () => {
  /** A user id: the grouping value that must stay out of the logs. */
  const USER = 'customer-4711@example.com';

  /**
   * Refuses the batch as DynamoDbSink refuses an oversized item: the message quotes the row key
   * (the JSON of the key columns' values, cut to 120 characters) and the details carry it.
   */
  class OversizedItemSink implements Sink {
    readonly description = 'a sink whose items are all too large';
    async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void> {
      const sk = JSON.stringify(ctx.keyColumns.map((c) => rows[0][c] ?? null));
      throw new SluiceError(
        `output row 0 of batch ${batchId} (key ${sk.slice(0, 120)}) is 512000 bytes as a DynamoDB item; DynamoDB items hold at most 409600 bytes: write fewer or shorter columns`,
        {
          details: { batchId, key: sk.slice(0, 200), sizeBytes: 512_000 },
        },
      );
    }
  }

  /** Totals per user, in update mode, so batch 0 emits the user's row. */
  async function failedRun(options: ScheduledHandlerOptions): Promise<{ line: Record<string, unknown>; error: SluiceError }> {
    const name = uniqueName('per-user');
    const cfg = pipelineConfigFromEnv({
      SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/${name}`,
      SLUICE_STATE_TABLE: stateTable,
      SLUICE_SOURCE_URI: `s3://${bucket}/landing/${name}`,
      SLUICE_SINK_URI: `s3://${bucket}/output/${name}`,
    });
    const plan = readStream
      .format('json')
      .schema(WINDOWED_TOTALS_SCHEMA)
      .load()
      .groupBy('user')
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName(`per-user-${name}`)
      .plan();
    const row = { user: USER, event_time: '2026-10-01 12:01:00', amount: 10 };
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `landing/${name}/001.json`, Body: Buffer.from(`${JSON.stringify(row)}\n`) }));
    const lines: Array<Record<string, unknown>> = [];
    const handler = createScheduledHandler(plan, cfg, conn, {
      writeLine: (l) => lines.push(JSON.parse(l)),
      extras: { sink: new OversizedItemSink() },
      ...options,
    });
    const error = await handler(scheduledEvent('2026-10-01T12:15:00Z'), lambdaContext()).then(
      () => {
        throw new Error('expected the run to fail in the sink');
      },
      (e: unknown) => e as SluiceError,
    );
    const failed = lines.filter((l) => l.event === 'run-failed');
    expect(failed).toHaveLength(1);
    return { line: failed[0], error };
  }

  /** What the Lambda runtime logs for a rejected handler: name, message, stack and every enumerable property. */
  const asTheRuntimeLogsIt = (e: Error) => JSON.stringify({ errorType: e.name, errorMessage: e.message, ...e, stack: e.stack?.split('\n') });

  it('redacts the key from the run-failed line and from the error Lambda logs and hands on, keeping the rest', async () => {
    const { line, error } = await failedRun({});
    expect(line).toMatchObject({
      level: 'error',
      retriable: false,
      details: { batchId: 0, key: '<redacted>', sizeBytes: 512_000 },
      redacted: { fields: ['key'], toLogThem: expect.stringMatching(/SLUICE_LOG_VALUES=true/) },
      errorMessage:
        'output row 0 of batch 0 (key <redacted>) is 512000 bytes as a DynamoDB item; DynamoDB items hold at most 409600 bytes: write fewer or shorter columns',
    });
    expect(JSON.stringify(line)).not.toContain('customer-4711');
    expect(error).toBeInstanceOf(SluiceError);
    expect(error.details).toEqual({ batchId: 0, key: '<redacted>', sizeBytes: 512_000 });
    expect(asTheRuntimeLogsIt(error)).not.toContain('customer-4711');
    expect(error.stack).toMatch(/key <redacted>\) is 512000 bytes/);
  });

  it('keeps the key when logDataValues is set (SLUICE_LOG_VALUES=true)', async () => {
    const { line, error } = await failedRun({ logDataValues: true });
    expect(line).toMatchObject({
      details: { batchId: 0, key: JSON.stringify([USER]), sizeBytes: 512_000 },
      errorMessage: expect.stringContaining(`(key ${JSON.stringify([USER])})`),
    });
    expect(line.redacted).toBeUndefined();
    expect(error.message).toContain(USER);
  });

  it('reads SLUICE_LOG_VALUES from the environment, false when unset, and rejects a non-boolean', () => {
    const env = {
      SLUICE_CHECKPOINT_URI: 's3://ckpt-bucket/checkpoints/totals',
      SLUICE_STATE_TABLE: 'sluice-state',
      SLUICE_SOURCE_URI: 'kinesis://orders',
      SLUICE_SINK_URI: 'dynamodb://totals',
      AWS_REGION: 'eu-west-1',
    };
    expect(lambdaEnvironmentFrom(env).logDataValues).toBe(false);
    expect(lambdaEnvironmentFrom({ ...env, SLUICE_LOG_VALUES: 'true' }).logDataValues).toBe(true);
    expect(lambdaEnvironmentFrom({ ...env, SLUICE_LOG_VALUES: 'false' }).logDataValues).toBe(false);
    expect(() => lambdaEnvironmentFrom({ ...env, SLUICE_LOG_VALUES: 'yes please' })).toThrow(
      /SLUICE_LOG_VALUES="yes please" is not a boolean: set it to true or false/,
    );
  });
});

describe('when the Lambda entry is configured by the environment, as the construct configures it', () => {
  it('reaches the local stack through AWS_ENDPOINT_URL_* and runs the windowed-totals query', async () => {
    const p = pipeline('append');
    await p.drop(SEED_FILES[0]);
    // One key pair for every service, as in a Lambda: the one S3 accepts (s3rver takes only its own).
    const entryTable = uniqueName('sluice-entry-state');
    const env: Record<string, string | undefined> = {
      SLUICE_CHECKPOINT_URI: `s3://${p.cfg.checkpoint.bucket}/${p.cfg.checkpoint.prefix}-entry`,
      SLUICE_STATE_TABLE: entryTable,
      SLUICE_SOURCE_URI: p.cfg.source.kind === 's3' ? `s3://${p.cfg.source.bucket}/${p.cfg.source.prefix}` : undefined,
      SLUICE_SINK_URI: `s3://${bucket}/output/${uniqueName('entry')}`,
      SLUICE_LEASE_SECONDS: '660',
      SLUICE_METRICS_NAMESPACE: 'SluiceTest',
      SLUICE_PIPELINE_NAME: 'entry-test',
      SLUICE_OUTPUT_MODE: 'append',
      ...cliEnv(conn, 's3'),
    };
    // DynamoDB Local keeps one namespace per access key: create the table as the entry will see it.
    const entryConn = connectionFromEnv(env);
    expect(entryConn?.endpoints?.s3).toBe(conn.endpoints?.s3);
    const entryClients = createClients(entryConn!);
    await ensureStateTable(entryClients.dynamodb, entryTable);
    entryClients.destroy();

    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    let handler!: (event: unknown, context: LambdaContextLike) => Promise<RunSummary>;
    try {
      for (const [k, v] of Object.entries(env))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        handler = require('../../lambdas/windowed-totals').handler;
      });
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }

    const printed: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    let summary: RunSummary;
    try {
      summary = await handler(scheduledEvent('2026-10-01T12:15:00Z'), lambdaContext());
    } finally {
      write.mockRestore();
    }
    expect(summary).toMatchObject({
      pipeline: 'entry-test',
      query: 'windowed-totals-append',
      stoppedBy: 'done',
      rowsIn: 3,
      watermark: '2026-10-01T12:02:00.000Z',
    });
    const lines = printed
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
    const last = lines[lines.length - 1];
    expect(last).toMatchObject({ event: 'run-summary', Pipeline: 'entry-test', RowsIn: 3 });
    expect(last._aws.CloudWatchMetrics[0].Namespace).toBe('SluiceTest');
  });

  it('fails every invocation with a JSON line naming the variable when the environment is wrong', async () => {
    const saved = process.env.SLUICE_CHECKPOINT_URI;
    let handler!: (event: unknown, context: LambdaContextLike) => Promise<RunSummary>;
    try {
      delete process.env.SLUICE_CHECKPOINT_URI;
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        handler = require('../../lambdas/windowed-totals').handler;
      });
    } finally {
      if (saved !== undefined) process.env.SLUICE_CHECKPOINT_URI = saved;
    }
    const printed: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      await expect(handler(scheduledEvent('2026-10-01T12:15:00Z'), lambdaContext())).rejects.toThrow(/SLUICE_CHECKPOINT_URI is not set/);
    } finally {
      write.mockRestore();
    }
    expect(JSON.parse(printed.join('').trim().split('\n').pop()!)).toMatchObject({
      event: 'run-failed',
      retriable: false,
      errorMessage: expect.stringMatching(/SLUICE_CHECKPOINT_URI/),
    });
  });
});

describe('when the environment is incomplete or wrong', () => {
  it('names every variable, its value and the fix, in one error', () => {
    expect(() =>
      pipelineConfigFromEnv({
        SLUICE_CHECKPOINT_URI: 'my-bucket/checkpoints',
        SLUICE_SOURCE_URI: 'sqs://queue',
        SLUICE_SINK_URI: 's3://out-bucket/totals',
        SLUICE_LEASE_SECONDS: 'ten',
      }),
    ).toThrow(
      new RegExp(
        [
          '4 problems',
          'SLUICE_CHECKPOINT_URI "my-bucket/checkpoints" is not an S3 URI: write s3://',
          'SLUICE_STATE_TABLE is not set: set it to the DynamoDB state/lease table name',
          'SLUICE_SOURCE_URI="sqs://queue" has an unknown scheme: write s3://<bucket>/<prefix> .* or kinesis://<stream-name>',
          'SLUICE_LEASE_SECONDS="ten" must be a positive whole number of seconds',
        ].join('[\\s\\S]*'),
      ),
    );
  });

  it('reads a complete environment into a PipelineConfig', () => {
    expect(
      pipelineConfigFromEnv({
        SLUICE_CHECKPOINT_URI: 's3://ckpt-bucket/checkpoints/totals/',
        SLUICE_STATE_TABLE: 'sluice-state',
        SLUICE_SOURCE_URI: 'kinesis://orders',
        SLUICE_SINK_URI: 'dynamodb://totals',
        SLUICE_DEAD_LETTER_URI: 's3://dl-bucket/dead',
        SLUICE_KEEP_LATE_ROWS: 'true',
        SLUICE_LEASE_SECONDS: '660',
      }),
    ).toEqual({
      checkpoint: { bucket: 'ckpt-bucket', prefix: 'checkpoints/totals' },
      stateTable: 'sluice-state',
      source: { kind: 'kinesis', streamName: 'orders' },
      sink: { kind: 'dynamodb', table: 'totals' },
      deadLetter: { bucket: 'dl-bucket', prefix: 'dead' },
      keepLateRows: true,
      leaseDurationMs: 660_000,
    });
  });
});
