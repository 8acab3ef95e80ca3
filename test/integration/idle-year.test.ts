/**
 * "State that is live must never expire", on DynamoDB Local: the scenarios of
 * test/helpers/idle-year.ts (a year between two runs, for every stateful operator kind: a
 * partition that stays empty or whose state emptied, a filter that starves the operator while
 * batches commit, an idleTimeout query whose state emptied), through the AWS adapters
 * (lib/aws/pipeline.ts: S3 landing source and sink, DynamoDB state and lease), on the single
 * scheduler and the partitioned one (runPartitioned over partitionedTasks, each task on its own
 * PartitionedRun). DynamoDB Local runs no TTL of its own at a test's clock, so the year's TTL is
 * applied by expireTtlItems (every item whose `ttl` is before the clock, deleted).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { InjectedCrash } from '../../lib/engine/errors';
import type { Json, OutputRow } from '../../lib/engine/ports';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { IDLE_TIMEOUT_SCENARIO, keysOf, REPLAY_SCENARIO, YEAR_SCENARIOS, type YearScenario } from '../helpers/idle-year';
import { clockStart, expireTtlItems, testClients, testConnection, uniqueName } from '../helpers/stack';

jest.setTimeout(180_000);

const bucket = uniqueName('idle-year');
const table = uniqueName('idle-year-state');

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, bucket), ensureStateTable(c.dynamodb, table)]);
});

type Scheduler = 'single' | 'partitioned';

function pipeline(base: string): PipelineConfig {
  return {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    inputs: [{ kind: 's3', bucket, prefix: `${base}/landing1` }],
    sink: { kind: 's3', bucket, prefix: `${base}/sink` },
  };
}

async function land(prefix: string, name: string, rows: readonly Json[]): Promise<void> {
  await testClients().s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${name}`, Body: rows.map((r) => JSON.stringify(r)).join('\n') }));
}

/** The scenario's runs on the local stack; the sink's rows by batch. */
async function runScenario(s: YearScenario, scheduler: Scheduler): Promise<OutputRow[][]> {
  const base = uniqueName(`${scheduler}-${s.name}`);
  let now = clockStart();
  const clock = { now: () => now };
  const plan = s.plan(`year-${base}`);
  const cfg = pipeline(base);
  const clients = testClients();
  let file = 0;
  let run = 0;
  for (const step of s.steps) {
    now += step.afterMs + 60_000;
    if (step.rows) await land(`${base}/landing`, `f-${String(++file).padStart(4, '0')}.json`, step.rows);
    if (step.rows1) await land(`${base}/landing1`, `f-${String(++file).padStart(4, '0')}.json`, step.rows1);
    if (step.ttl) await expireTtlItems(table, now);
    run++;
    if (step.crash) {
      const crashed = buildExecutor(testConnection(), plan, cfg, { clock, clients, crash: { point: 'before-commit' } });
      await expect(crashed.executor.run()).rejects.toBeInstanceOf(InjectedCrash);
    } else if (scheduler === 'single') {
      await buildExecutor(testConnection(), plan, cfg, { clock, clients }).executor.run();
    } else {
      await runPartitioned(
        partitionedTasks(() => buildExecutor(testConnection(), plan, cfg, { clock, clients }).partitioned({ maxSplits: 2 })),
        { runId: `run-${run}`, concurrency: 2 },
      );
    }
  }
  const sink = new S3JsonSink({ client: clients.s3, bucket, prefix: `${base}/sink` });
  const batches = (await sink.listBatches()).sort((a, b) => a - b);
  return Promise.all(batches.map(async (b) => (await sink.readBatch(b)) ?? []));
}

describe.each<Scheduler>(['single', 'partitioned'])('when state is idle for a year between runs, TTL applied (%s scheduler, DynamoDB Local)', (scheduler) => {
  it.each([...YEAR_SCENARIOS, IDLE_TIMEOUT_SCENARIO].map((s) => [s.name, s] as const))(
    '%s: the run after the year succeeds with the right output',
    async (_n, s) => {
      expect(keysOf(s, await runScenario(s, scheduler))).toEqual([...s.expected].sort());
    },
  );
});

describe('when a batch crashed after its state commit and the replay comes a year later, TTL applied (DynamoDB Local)', () => {
  it('replays it from the version before, with the right output', async () => {
    expect(keysOf(REPLAY_SCENARIO, await runScenario(REPLAY_SCENARIO, 'single'))).toEqual([...REPLAY_SCENARIO.expected].sort());
  });
});
