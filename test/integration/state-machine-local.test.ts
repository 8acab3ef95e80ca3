/**
 * The scale-out state machine the example stack deploys (bin/app.ts, SluiceWindowedTotalsScaleOut),
 * taken from its synthesized template and run as it is by the local interpreter
 * (lib/local/state-machine.ts), with a TaskHandler that plays a run of two data batches and one
 * no-data batch and records every call.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EXAMPLE_PARALLELISM, buildApp } from '../../bin/app';
import { SEED_FILES, windowedTotals } from '../../examples/windowed-totals';
import { createClients } from '../../lib/aws/clients';
import { pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import { createPartitionedTaskLambda } from '../../lib/aws/lambda/scale-out-handler';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from '../helpers/stack';
import { CheckpointMismatchError } from '../../lib/engine/errors';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { partitionedTasks } from '../../lib/engine/schedule/driver';
import { count, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { LocalExecutionError, definitionFromTemplate, runStateMachineLocally, type AslDefinition, type LocalEvent } from '../../lib/local/state-machine';
import type { PlanResult, TaskEvent, TaskHandler } from '../../lib/scale/contract';

jest.setTimeout(120_000);

const PAYLOAD_LIMIT_BYTES = 256 * 1024;
const RUN_ID = '20261201T180000Z-example-tick';

/** The example stack's state machine definition, intrinsics resolved (nothing bundled: the definition does not depend on the code). */
function exampleDefinition(): AslDefinition {
  const { scaleOut } = buildApp(new App({ context: { 'aws:cdk:bundling-stacks': [] } }));
  return definitionFromTemplate(Template.fromStack(scaleOut).toJSON() as { Resources: never }, { region: 'eu-west-1', accountId: '123456789012' });
}

interface Call {
  readonly seq: number;
  readonly event: TaskEvent;
  readonly result?: unknown;
}

/**
 * A run that starts at batch `firstBatch`: `dataBatches` batches of `splits` splits, then one
 * no-data batch (no split: a partition-only pass), then plan says done. Every batch has
 * `partitions` partitions; commit says more after every batch. Tasks take a few ms, so the
 * interpreter's map runs them concurrently; `inFlight` records the most at once per action.
 */
function simulatedRun(opts: {
  firstBatch: number;
  dataBatches: number;
  splits: number;
  partitions: number;
  fail?: (e: TaskEvent, attempt: number) => Error | undefined;
}) {
  const calls: Call[] = [];
  const attempts = new Map<string, number>();
  const running = { read: 0, partition: 0 };
  const inFlight = { read: 0, partition: 0 };
  let seq = 0;
  let next = opts.firstBatch;
  const lastBatch = opts.firstBatch + opts.dataBatches; // the no-data batch
  const handler: TaskHandler = async (event) => {
    const key = JSON.stringify(event);
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const failure = opts.fail?.(event, attempt);
    if (failure) {
      calls.push({ seq: seq++, event, result: `failed: ${failure.name}` });
      throw failure;
    }
    if (event.action === 'read' || event.action === 'partition') {
      running[event.action]++;
      inFlight[event.action] = Math.max(inFlight[event.action], running[event.action]);
      await new Promise((r) => setTimeout(r, 5 + ((event.action === 'read' ? event.split : event.partition) % 3) * 7));
      running[event.action]--;
    }
    let result: PlanResult | { ok: true } | { runId: string; batchId: number; more: boolean };
    if (event.action === 'plan') {
      const batchId = next;
      const done = batchId > lastBatch;
      const splits = done || batchId === lastBatch ? 0 : opts.splits;
      result = {
        runId: event.runId,
        batchId,
        done,
        splits: Array.from({ length: splits }, (_, split) => ({ split })),
        partitions: done ? [] : Array.from({ length: opts.partitions }, (_, partition) => ({ partition })),
      };
    } else if (event.action === 'commit') {
      next = event.batchId + 1;
      result = { runId: event.runId, batchId: event.batchId, more: true };
    } else {
      result = { ok: true };
    }
    calls.push({ seq: seq++, event, result });
    return result;
  };
  return { handler, calls, inFlight };
}

const ofBatch = (calls: readonly Call[], action: TaskEvent['action'], batchId: number) =>
  calls.filter((c) => c.event.action === action && (c.event as { batchId?: number }).batchId === batchId);
const planOf = (calls: readonly Call[], batchId: number) => calls.filter((c) => c.event.action === 'plan' && (c.result as PlanResult).batchId === batchId);
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v ?? null), 'utf8');

describe("the example stack's state machine, run locally", () => {
  let definition: AslDefinition;
  beforeAll(() => {
    definition = exampleDefinition();
  });

  it("is the deployed definition: Distributed Maps with the example's concurrencies, Lambda tasks", () => {
    const maps = Object.entries(definition.States).filter(([, s]) => s.Type === 'Map');
    expect(maps.map(([name, s]) => [name, s.ItemProcessor?.ProcessorConfig?.Mode, s.MaxConcurrency]).sort()).toEqual([
      ['Partition', 'DISTRIBUTED', EXAMPLE_PARALLELISM.partitionConcurrency],
      ['Read', 'DISTRIBUTED', EXAMPLE_PARALLELISM.readConcurrency],
    ]);
    expect(definition.States.Plan.Resource).toBe('arn:aws:states:::lambda:invoke');
  });

  describe('when a run has two data batches and a no-data batch', () => {
    const FIRST = 7;
    let sim: ReturnType<typeof simulatedRun>;
    let events: LocalEvent[];
    let output: unknown;
    beforeAll(async () => {
      sim = simulatedRun({ firstBatch: FIRST, dataBatches: 2, splits: 3, partitions: 4 });
      ({ events, output } = await runStateMachineLocally(
        definition,
        sim.handler,
        { tick: { id: 'example-tick', time: '2026-12-01T18:00:00Z' } },
        { executionName: RUN_ID },
      ));
    });

    it('calls plan 4 times, read 3 + 3 + 0 times, partition 4 times a batch and commit once a batch', () => {
      const count = (action: string) => sim.calls.filter((c) => c.event.action === action).length;
      expect({ plan: count('plan'), read: count('read'), partition: count('partition'), commit: count('commit') }).toEqual({
        plan: 4,
        read: 6,
        partition: 12,
        commit: 3,
      });
      const reads = sim.calls
        .filter((c) => c.event.action === 'read')
        .map((c) => `${(c.event as { batchId: number }).batchId}/${(c.event as { split: number }).split}`);
      expect(reads.sort()).toEqual(['7/0', '7/1', '7/2', '8/0', '8/1', '8/2']);
      expect(ofBatch(sim.calls, 'commit', 7).length + ofBatch(sim.calls, 'commit', 8).length + ofBatch(sim.calls, 'commit', 9).length).toBe(3);
    });

    it('gives every task the execution name as runId', () => {
      expect(new Set(sim.calls.map((c) => c.event.runId))).toEqual(new Set([RUN_ID]));
    });

    it('reads batch N after plan N and before any partition of N; partitions N before commit N; plans N+1 after commit N', () => {
      for (const n of [FIRST, FIRST + 1, FIRST + 2]) {
        const [plan] = planOf(sim.calls, n);
        const reads = ofBatch(sim.calls, 'read', n);
        const partitions = ofBatch(sim.calls, 'partition', n);
        const [commit] = ofBatch(sim.calls, 'commit', n);
        const [nextPlan] = planOf(sim.calls, n + 1);
        expect(plan && commit && nextPlan).toBeTruthy();
        expect(partitions).toHaveLength(4);
        const firstPartition = Math.min(...partitions.map((c) => c.seq));
        for (const r of reads) expect(plan.seq < r.seq && r.seq < firstPartition).toBe(true);
        for (const p of partitions) expect(plan.seq < p.seq && p.seq < commit.seq).toBe(true);
        expect(commit.seq).toBeLessThan(nextPlan.seq);
      }
    });

    it('runs the no-data batch as a partition-only pass', () => {
      expect(ofBatch(sim.calls, 'read', FIRST + 2)).toEqual([]);
      expect(
        ofBatch(sim.calls, 'partition', FIRST + 2)
          .map((c) => (c.event as { partition: number }).partition)
          .sort(),
      ).toEqual([0, 1, 2, 3]);
    });

    it('ends when plan says done, with no task after it', () => {
      const last = sim.calls[sim.calls.length - 1];
      expect(last.event.action).toBe('plan');
      expect(last.result).toMatchObject({ batchId: FIRST + 3, done: true });
      expect((output as { plan: PlanResult }).plan).toEqual({ runId: RUN_ID, batchId: FIRST + 3, done: true, splits: [], partitions: [] });
      const ended = events.filter((e) => e.type === 'ExecutionSucceeded');
      expect(ended).toHaveLength(1);
    });

    it('runs the tasks of a map at once, up to its MaxConcurrency', () => {
      expect(sim.inFlight.read).toBe(3); // 3 splits, MaxConcurrency 8
      expect(sim.inFlight.partition).toBeGreaterThan(1);
      expect(sim.inFlight.partition).toBeLessThanOrEqual(EXAMPLE_PARALLELISM.partitionConcurrency);
    });

    it("keeps every state's input and output far below the 256 KiB payload limit", () => {
      const sized = events.filter((e) => e.state).flatMap((e) => [bytes(e.state!.input), ...(e.state!.output !== undefined ? [bytes(e.state!.output)] : [])]);
      expect(sized.length).toBeGreaterThan(50);
      expect(Math.max(...sized)).toBeLessThanOrEqual(PAYLOAD_LIMIT_BYTES);
    });
  });

  describe('when a task fails', () => {
    it('retries a transient error and finishes the run, calling the task again', async () => {
      const sim = simulatedRun({
        firstBatch: 0,
        dataBatches: 1,
        splits: 2,
        partitions: 2,
        fail: (e, attempt) => (e.action === 'read' && e.split === 1 && attempt === 1 ? new Error('socket hang up') : undefined),
      });
      await runStateMachineLocally(definition, sim.handler, {}, { executionName: RUN_ID });
      const reads = sim.calls.filter((c) => c.event.action === 'read' && (c.event as { split: number }).split === 1);
      expect(reads.map((c) => c.result)).toEqual(['failed: Error', { ok: true }]);
      expect(sim.calls.filter((c) => c.event.action === 'commit')).toHaveLength(2);
    });

    it('fails the execution at once on an error a retry cannot fix, and commits nothing', async () => {
      const sim = simulatedRun({
        firstBatch: 0,
        dataBatches: 1,
        splits: 2,
        partitions: 2,
        fail: (e) => (e.action === 'partition' && e.partition === 0 ? new CheckpointMismatchError('the checkpoint belongs to another query') : undefined),
      });
      const run = runStateMachineLocally(definition, sim.handler, {}, { executionName: RUN_ID });
      await expect(run).rejects.toBeInstanceOf(LocalExecutionError);
      expect(sim.calls.filter((c) => c.event.action === 'partition' && (c.event as { partition: number }).partition === 0)).toHaveLength(1);
      expect(sim.calls.filter((c) => c.event.action === 'commit')).toEqual([]);
    });
  });

  describe("when it drives the engine's own tasks (partitionedTasks on the in-memory ports)", () => {
    // Counts per user and 10-second window, append mode, 4 state partitions; 6 files, so the plan
    // splits the batch into reads. Each of u0..u4 has two events in [12:00:00, 12:00:10); the
    // late-comer at 12:00:30 moves the watermark to 30 s, so the no-data batch closes those windows
    // and leaves its own [30 s, 40 s) open.
    const plan = readStream
      .format('json')
      .schema('user STRING, t TIMESTAMP')
      .load()
      .withWatermark('t', '0 seconds')
      .groupBy('user', window('t', '10 seconds'))
      .agg(count().as('n'))
      .writeStream.option('statePartitions', 4)
      .queryName('sfn-local')
      .plan();
    const at = (sec: number) => `2026-10-01 12:00:${String(sec).padStart(2, '0')}`;

    it('writes each closed window once: two events per user, and commits the data batch and the no-data batch', async () => {
      const ports = {
        plan,
        source: new InMemoryFileSource(plan.source.schema),
        checkpoint: new InMemoryCheckpoint(),
        state: new InMemoryStateStore(),
        sink: new InMemorySink(),
        lease: new InMemoryLease(),
        shuffle: new InMemoryShuffle(),
      };
      for (let f = 0; f < 5; f++)
        ports.source.add(`f${f}.json`, [
          { user: `u${f}`, t: at(1) },
          { user: `u${(f + 1) % 5}`, t: at(2) },
        ]);
      ports.source.add('f5.json', [{ user: 'late-comer', t: at(30) }]);
      const engine = partitionedTasks(() => new PartitionedRun(ports, { maxSplits: 3 }));
      const seen: TaskEvent[] = [];
      await runStateMachineLocally(
        definition,
        async (e) => {
          seen.push(e);
          return engine(e);
        },
        {},
        { executionName: RUN_ID },
      );
      const rows = [...ports.sink.batches.values()].flat();
      expect(rows.map((r) => [r.user, r.n]).sort()).toEqual([0, 1, 2, 3, 4].map((i) => [`u${i}`, 2]));
      expect((await ports.checkpoint.head()).latestCommitBatch).toBe(1);
      const commits = seen.filter((e) => e.action === 'commit').map((e) => (e as { batchId: number }).batchId);
      expect(commits).toEqual([0, 1]);
      expect(seen.filter((e) => e.action === 'read' && (e as { batchId: number }).batchId === 0).length).toBeGreaterThan(1);
    });
  });

  describe("when it drives the task Lambda's handler on the AWS adapters against the embedded stack", () => {
    // The example query (a 10-minute window's sum and count of `amount`, 10-minute watermark,
    // append) over the three seed files landed before one run, on 4 state partitions. Worked by
    // hand: batch 0 reads all 7 rows (max event time 12:41, so the watermark becomes 12:31); the
    // no-data batch 1 then emits the windows that end by 12:31: [12:00, 12:10) = 10 + 5 + 4 + 100
    // over 4 events, [12:10, 12:20) = 7, [12:20, 12:30) = 3; [12:40, 12:50) stays open.
    it('writes the closed windows once, as the single executor would, through Plan, Read, Partition and Commit', async () => {
      const conn = testConnection();
      const clients = createClients(conn);
      const bucket = uniqueName('sfn-local').toLowerCase();
      const table = uniqueName('sfn-local-state');
      await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
      const name = uniqueName('wt');
      const cfg = pipelineConfigFromEnv({
        SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/${name}`,
        SLUICE_STATE_TABLE: table,
        SLUICE_SOURCE_URI: `s3://${bucket}/landing/${name}`,
        SLUICE_SINK_URI: `s3://${bucket}/output/${name}`,
        SLUICE_LEASE_SECONDS: '120',
      });
      for (const file of SEED_FILES) {
        await clients.s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: `landing/${name}/${file.name}`, Body: `${file.rows.map((r) => JSON.stringify(r)).join('\n')}\n` }),
        );
      }
      const plan = windowedTotals({ outputMode: 'append', source: 'files', name: `windowed-totals-${name}` });
      // The task Lambda's own handler, as lambdas/windowed-totals-tasks.ts builds it, on the test's clients.
      const lines: Array<Record<string, unknown>> = [];
      const engine = createPartitionedTaskLambda(plan, cfg, conn, {
        statePartitions: EXAMPLE_PARALLELISM.statePartitions,
        maxSplits: 3,
        createClients: () => clients,
        writeLine: (l) => void lines.push(JSON.parse(l)),
        pipelineName: 'wt',
      });
      const seen: TaskEvent[] = [];
      try {
        await runStateMachineLocally(
          definition,
          async (e) => {
            seen.push(e);
            return engine(e);
          },
          {},
          { executionName: RUN_ID },
        );

        const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `output/${name}/` }));
        const rows: Array<Record<string, unknown>> = [];
        for (const { Key } of listed.Contents ?? []) {
          const text = await (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: Key! }))).Body!.transformToString();
          for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
        }
        const w = (start: string, end: string) => ({ start: `2026-10-01T12:${start}:00.000Z`, end: `2026-10-01T12:${end}:00.000Z` });
        expect(rows.sort((a, b) => JSON.stringify(a.window).localeCompare(JSON.stringify(b.window)))).toEqual([
          { window: w('00', '10'), total: 119, events: 4 },
          { window: w('10', '20'), total: 7, events: 1 },
          { window: w('20', '30'), total: 3, events: 1 },
        ]);
        expect(seen.filter((e) => e.action === 'commit').map((e) => (e as { batchId: number }).batchId)).toEqual([0, 1]);
        expect(seen.filter((e) => e.action === 'read' && (e as { batchId: number }).batchId === 0)).toHaveLength(3); // one split per file
        expect(seen.filter((e) => e.action === 'partition' && (e as { batchId: number }).batchId === 1)).not.toHaveLength(0);
        // the plan that ends the run writes its summary, with the EMF metrics the alarms read:
        // the seed's 7 events in, the 3 windows out, over the data batch and the no-data batch
        const summaries = lines.filter((l) => l.event === 'run-summary');
        expect(summaries).toHaveLength(1);
        expect(summaries[0]).toMatchObject({ pipeline: 'wt', stoppedBy: 'done', batches: 2, rowsIn: 7, rowsOut: 3, deadLetters: 0 });
        expect(summaries[0]._aws).toBeDefined();
      } finally {
        clients.destroy();
      }
    });
  });
});
