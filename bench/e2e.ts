/**
 * End to end on the embedded local stack: DynamoDB Local (a JVM child process) and s3rver (in
 * this process), the same adapters and wiring a deployed pipeline uses (lib/aws/pipeline.ts).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { RunReport } from '../lib/engine/run/types';
import type { QueryPlan } from '../lib/engine/plan/types';
import { createClients } from '../lib/aws/clients';
import type { AwsConnection } from '../lib/aws/config';
import { buildExecutor, type PipelineConfig } from '../lib/aws/pipeline';
import type { S3LandingSource } from '../lib/aws/s3/landing-source';
import type { S3JsonSink } from '../lib/aws/s3/json-sink';
import { ensureBucket, ensureStateTable } from '../lib/local/resources';
import { startLocalStack } from '../lib/local/stack';
import { diffCounts, RequestCounter } from './counting';

const BUCKET = 'sluice-bench';
const TABLE = 'sluice-bench-state';

export interface E2eInterval {
  /** 'start' (lease, checkpoint head, listing), a batch id, or 'end' (lease release). */
  readonly label: string;
  readonly requests: Record<string, number>;
  readonly stateItemWrites: number;
  readonly stateItemReads: number;
}

export interface E2eResult {
  readonly events: number;
  readonly files: number;
  readonly uploadSeconds: number;
  readonly stackStartMs: Record<string, number | undefined>;
  readonly seconds: number;
  readonly report: RunReport;
  readonly intervals: E2eInterval[];
  readonly adapterStats: Record<string, unknown>;
  /** Wall time with at least one request in flight during the run, s. */
  readonly busySeconds: { dynamodb: number; s3: number };
  readonly emptyRun: { requests: Record<string, number>; total: number; batches: number; onSamePipeline: boolean };
}

function cfgFor(name: string): PipelineConfig {
  return {
    checkpoint: { bucket: BUCKET, prefix: `checkpoints/${name}` },
    stateTable: TABLE,
    source: { kind: 's3', bucket: BUCKET, prefix: `landing/${name}` },
    sink: { kind: 's3', bucket: BUCKET, prefix: `out/${name}` },
  };
}

/** The bucket and the state table a bench section's runs use, on a fresh local stack. */
export async function prepareBenchStack(conn: AwsConnection, bucket: string, table: string): Promise<void> {
  const setup = createClients(conn);
  try {
    await ensureBucket(setup.s3, bucket);
    await ensureStateTable(setup.dynamodb, table);
  } finally {
    setup.destroy();
  }
}

/**
 * Puts generated files under `prefix` of `bucket` (the file's first path segment, e.g. `events/`,
 * left off), 8 at a time: the landing prefix the bench's runs read. Shared by the sections.
 */
export async function uploadLanding(conn: AwsConnection, bucket: string, prefix: string, files: ReadonlyArray<{ key: string; body: string }>): Promise<void> {
  const clients = createClients(conn);
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < files.length) {
          const f = files[next++];
          await clients.s3.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: `${prefix}/${f.key.replace(/^[^/]+\//, '')}`,
              Body: Buffer.from(f.body, 'utf8'),
              ContentType: 'application/json',
            }),
          );
        }
      }),
    );
  } finally {
    clients.destroy();
  }
}

function upload(conn: AwsConnection, name: string, files: ReadonlyArray<{ key: string; body: string }>): Promise<void> {
  return uploadLanding(conn, BUCKET, `landing/${name}`, files);
}

/** One scheduled run with fresh clients (as a new Lambda invocation builds them), every request counted. */
async function countedRun(conn: AwsConnection, plan: QueryPlan, cfg: PipelineConfig): Promise<{ report: RunReport; requests: Record<string, number> }> {
  const built = buildExecutor(conn, plan, cfg);
  const counter = new RequestCounter();
  counter.attach(built.clients.s3, 's3');
  counter.attach(built.clients.dynamodb, 'dynamodb');
  try {
    const report = await built.executor.run();
    return { report, requests: diffCounts(new Map(), counter.snapshot()) };
  } finally {
    built.clients.destroy();
  }
}

export async function runE2e(
  plan: QueryPlan,
  files: ReadonlyArray<{ key: string; body: string }>,
  opts: { budgetMs: number; log: (msg: string) => void },
): Promise<E2eResult> {
  const t0 = Date.now();
  const stack = await startLocalStack({ services: ['dynamodb', 's3'] });
  opts.log(`  local stack up in ${Date.now() - t0} ms (dynamodb ${stack.startupMs.dynamodb} ms, s3 ${stack.startupMs.s3} ms)`);
  try {
    const conn = stack.connection;
    await prepareBenchStack(conn, BUCKET, TABLE);
    const name = 'bench';
    const tu = Date.now();
    await upload(conn, name, files);
    const uploadSeconds = (Date.now() - tu) / 1000;
    const events = files.reduce((n, f) => n + (f.body.length ? f.body.split('\n').length : 0), 0);
    opts.log(`  uploaded ${files.length} files (${events} events) in ${uploadSeconds.toFixed(1)} s`);

    const cfg = cfgFor(name);
    const intervals: E2eInterval[] = [];
    const counter = new RequestCounter();
    let built: ReturnType<typeof buildExecutor> | undefined;
    let last = { counts: new Map<string, number>(), writes: 0, reads: 0 };
    const mark = (label: string) => {
      const counts = counter.snapshot();
      const st = built!.state.stats();
      intervals.push({ label, requests: diffCounts(last.counts, counts), stateItemWrites: st.writes - last.writes, stateItemReads: st.reads - last.reads });
      last = { counts, writes: st.writes, reads: st.reads };
    };
    built = buildExecutor(conn, plan, cfg, {
      log: (e) => {
        if (e.event === 'batch') {
          mark(String(e.batchId));
          opts.log(`  batch ${e.batchId}: ${e.rowsIn} rows in, ${e.rowsOut} out, ${e.durationMs} ms`);
        }
      },
    });
    counter.attach(built.clients.s3, 's3');
    counter.attach(built.clients.dynamodb, 'dynamodb');
    // Split the run's opening requests (lease, checkpoint head, the listing) from batch 0's.
    const source = built.source as S3LandingSource;
    const latestOffset = source.latestOffset.bind(source);
    source.latestOffset = async (start) => {
      const r = await latestOffset(start);
      mark('start');
      return r;
    };
    const tr = performance.now();
    const report = await built.executor.run({ deadlineMs: Date.now() + opts.budgetMs });
    const seconds = (performance.now() - tr) / 1000;
    mark('end');
    const busySeconds = { dynamodb: counter.busyMs('dynamodb') / 1000, s3: counter.busyMs('s3') / 1000 };
    const adapterStats = {
      state: built.state.stats(),
      checkpoint: built.checkpoint.stats(),
      source: source.stats(),
      sink: (built.sink as S3JsonSink).stats(),
      deadLetters: built.deadLetters.stats(),
    };
    built.clients.destroy();

    // The empty scheduled run: nothing new since the last run.
    let emptyCfg = cfg;
    let onSamePipeline = true;
    if (report.stoppedBy !== 'done') {
      // The big run stopped at its time budget, so its pipeline is not caught up: measure the
      // empty run on a small pipeline of its own that is.
      onSamePipeline = false;
      emptyCfg = cfgFor('empty-check');
      await upload(conn, 'empty-check', files.slice(0, 2));
      await countedRun(conn, plan, emptyCfg);
    }
    const empty = await countedRun(conn, plan, emptyCfg);
    const emptyTotal = Object.values(empty.requests).reduce((a, b) => a + b, 0);
    return {
      events,
      files: files.length,
      uploadSeconds,
      stackStartMs: { ...stack.startupMs },
      seconds,
      report,
      intervals,
      adapterStats,
      busySeconds,
      emptyRun: { requests: empty.requests, total: emptyTotal, batches: empty.report.batches.length, onSamePipeline },
    };
  } finally {
    await stack.stop();
  }
}
