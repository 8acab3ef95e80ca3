/**
 * Random-crash soak: a few hundred scheduled runs over generated input (seeded PRNG, so a failure
 * reproduces), where each run either crashes at a random point of a random batch or finishes, and
 * new files arrive between runs. At the end the sink holds exactly what a run schedule without
 * failures leaves.
 *
 * Two parts:
 * - 4 shapes × 81 runs with the DynamoDB state store, lease and sink on DynamoDB Local (the
 *   checkpoint and landing files in memory, for speed): crashes at every point, mid-sink
 *   included, over input whose bursts make batches emit more rows than one sink chunk (98) holds,
 *   so a crash falls between the chunks of a sink write. Every point must have fired.
 * - 2 shapes × 61 runs partitioned (plan, read, partition and commit tasks, 3 at a time, 4 state
 *   partitions: lib/engine/schedule/partitioned.ts), crashes in any task, against the single executor's output.
 * - 40 runs on the full local stack (S3 checkpoint and landing prefix, DynamoDB state and lease,
 *   both guarded sinks, fenced): the same property through the code a deployed pipeline runs.
 *
 * A crashed run keeps its lease, as a killed Lambda does: the next run waits it out on a clock
 * that jumps past the expiry (leaseClock), and every run builds fresh adapters (nothing kept in
 * memory across a crash).
 *
 * Generated input is never late (event times move forward by tick, jitter below the watermark
 * delay), so the result cannot depend on where batch boundaries fall: a crash shifts no-data
 * batches and, with maxFilesPerTrigger > 1, which files share a batch; late-data handling is
 * covered by the conformance cases under every crash point instead.
 */
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { DynamoDbStateStore } from '../../lib/aws/dynamodb/state-store';
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { buildExecutor } from '../../lib/aws/pipeline';
import { CRASH_POINTS, CrashInjector, crashingAt, type CrashPlan, type CrashPoint } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import type { OutputRow } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { canonical, dropFile, guardedSinks } from '../helpers/guarded-sinks';
import { leaseClock, testClients, uniqueName } from '../helpers/stack';
import { testConnection } from '../helpers/stack';

const res = { bucket: uniqueName('soak'), stateTable: uniqueName('soak-state'), sinkTable: uniqueName('soak-sink') };

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, res.bucket), ensureStateTable(c.dynamodb, res.stateTable), ensureStateTable(c.dynamodb, res.sinkTable)]);
});

// ---- generated input ---------------------------------------------------------------------------

/** mulberry32: small, seedable, good enough to pick crash points and rows. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] };
}

const T0 = Date.UTC(2026, 9, 1, 12, 0, 0);
const SCHEMA = 'id STRING, user STRING, event_time TIMESTAMP, amount DOUBLE';
/** The DynamoDB sink's rows per TransactWriteItems chunk (README, Sinks). */
const SINK_CHUNK_ROWS = 98;

/**
 * The files arriving before run `tick`: 0 to 2 files of 1 to 6 rows, event times in that tick's
 * minute, users from a few; with `bursts`, one tick in four also brings a file of 100 to 220 rows
 * over 160 users, so that its batch emits more rows than a sink chunk holds.
 */
function filesForTick(seed: number, tick: number, bursts = false): Array<Array<Record<string, unknown>>> {
  const r = prng(seed * 100_003 + tick);
  const row = (f: number, i: number, user: string) => {
    const id = r.next() < 0.15 && i > 0 ? `t${tick}-f${f}-r0` : `t${tick}-f${f}-r${i}`; // some duplicates
    return { id, user, event_time: new Date(T0 + tick * 60_000 + r.int(60) * 1000).toISOString(), amount: 1 + r.int(9) };
  };
  const files = Array.from({ length: r.int(3) }, (_, f) => Array.from({ length: 1 + r.int(6) }, (_, i) => row(f, i, r.pick(['ann', 'bob', 'cy']))));
  if (bursts && r.next() < 0.25)
    files.push(Array.from({ length: 100 + r.int(121) }, (_, i) => row(files.length, i, `u${String(r.int(160)).padStart(3, '0')}`)));
  return files;
}

type Shape = 'update' | 'append' | 'complete' | 'dedup';

function soakPlan(shape: Shape, name: string, maxFilesPerTrigger?: number): QueryPlan {
  let reader = readStream.format('json').schema(SCHEMA);
  if (maxFilesPerTrigger) reader = reader.option('maxFilesPerTrigger', maxFilesPerTrigger);
  const events = reader.load().withWatermark('event_time', '10 minutes');
  const frame =
    shape === 'dedup'
      ? events.dropDuplicates(['id', 'event_time'])
      : shape === 'complete'
        ? events.groupBy('user').agg(sum('amount').as('total'), count().as('n')) // the result table stays at most 163 rows
        : events.groupBy(window('event_time', '2 minutes'), 'user').agg(sum('amount').as('total'), count().as('n'));
  return frame.writeStream
    .outputMode(shape === 'dedup' ? 'append' : shape)
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();
}

// ---- part 1: DynamoDB state, lease and sink; checkpoint and files in memory ------------------------

interface SoakOutcome {
  rows: OutputRow[];
  runs: number;
  crashes: Record<CrashPoint, number>;
  /** The most rows one batch emitted. */
  maxBatchRows: number;
}

/** `runs` scheduled runs; with `crashRate` > 0 each may crash at a random point and batch. */
async function dynamoSoak(
  shape: Shape,
  seed: number,
  runs: number,
  crashRate: number,
  maxFilesPerTrigger?: number,
  statePartitions = 1,
  workers = 0,
): Promise<SoakOutcome> {
  const plan = { ...soakPlan(shape, `soak-${shape}`, maxFilesPerTrigger), statePartitions };
  const key = uniqueName(`soak-${shape}-${crashRate > 0 ? 'crash' : 'clean'}`);
  const { dynamodb } = testClients();
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const shuffle = new InMemoryShuffle();
  const time = leaseClock();
  const fast = { baseDelayMs: 1, maxDelayMs: 20 };
  const r = prng(seed);
  let fileNo = 0;
  const crashes = Object.fromEntries(CRASH_POINTS.map((p) => [p, 0])) as Record<CrashPoint, number>;
  let maxBatchRows = 0;
  for (let tick = 0; tick <= runs; tick++) {
    const last = tick === runs; // one more run at the end, without a crash, drains everything
    if (!last) for (const rows of filesForTick(seed, tick, true)) source.add(`f-${String(++fileNo).padStart(6, '0')}.json`, rows);
    let crash: CrashPlan | undefined;
    if (!last && r.next() < crashRate) {
      const next = (await checkpoint.head()).latestCommitBatch + 1;
      crash = { point: r.pick(CRASH_POINTS), batchId: next + (r.next() < 0.7 ? 0 : 1 + r.int(2)) };
    }
    // A fresh Lambda: new adapters (no cache survives a crash), the same tables.
    const state = new DynamoDbStateStore({
      client: dynamodb,
      tableName: res.stateTable,
      namespace: key,
      partitions: statePartitions,
      clock: time.clock,
      ...fast,
    });
    const lease = new DynamoDbLease({ client: dynamodb, tableName: res.stateTable, leaseKey: key, clock: time.clock, ...fast });
    const sink = new DynamoDbSink({
      client: dynamodb,
      tableName: res.sinkTable,
      queryKey: key,
      leaseTable: res.stateTable,
      leaseKey: key,
      clock: time.clock,
      ...fast,
    });
    const deps = { plan, source, checkpoint, state, sink, lease, clock: time.clock };
    try {
      if (workers > 0) {
        // partitioned: every task on decorated ports of its own, one injector for the run
        const injector = crash ? new CrashInjector(crash) : null;
        const make = () => new PartitionedRun({ ...(injector ? crashingAt(injector, deps) : deps), shuffle }, { maxSplits: 3 });
        await runPartitioned(partitionedTasks(make), { runId: `${key}-${tick}`, concurrency: workers });
      } else {
        const report = await new MicroBatchExecutor(crash ? crashingAt(crash, deps) : deps).run();
        expect(report.stoppedBy).toBe('done');
        for (const b of report.batches) maxBatchRows = Math.max(maxBatchRows, b.numOutputRows);
      }
    } catch (e) {
      if (!(e instanceof InjectedCrash)) throw e;
      crashes[e.point as CrashPoint]++;
      time.waitOutLease();
    }
  }
  const reader = new DynamoDbSink({ client: dynamodb, tableName: res.sinkTable, queryKey: key });
  return { rows: canonical(await reader.readAll()), runs: runs + 1, crashes, maxBatchRows };
}

describe('random-crash soak on the DynamoDB state store, lease and sink (DynamoDB Local)', () => {
  // [shape, maxFilesPerTrigger, statePartitions]
  const shapes: Array<[Shape, number | undefined, number]> = [
    ['update', 2, 4],
    ['append', 1, 1],
    ['complete', undefined, 4],
    ['dedup', 2, 1],
  ];
  const outcomes = new Map<Shape, SoakOutcome>();
  it.each(shapes)(
    '%s output (maxFilesPerTrigger %s, statePartitions %s): 80 runs with random crashes leave what 80 runs without failures leave',
    async (shape, maxFiles, partitions) => {
      const seed = 20261001 + shapes.findIndex(([s]) => s === shape);
      const t0 = Date.now();
      const [crashed, clean] = await Promise.all([
        dynamoSoak(shape, seed, 80, 0.6, maxFiles, partitions),
        dynamoSoak(shape, seed, 80, 0, maxFiles, partitions),
      ]);
      outcomes.set(shape, crashed);
      const fired = Object.values(crashed.crashes).reduce((a, b) => a + b, 0);
      // eslint-disable-next-line no-console
      console.log(
        `dynamodb soak ${shape}: seed ${seed}, ${crashed.runs} runs (and ${clean.runs} clean), ${fired} crashes ${JSON.stringify(crashed.crashes)}, ${crashed.rows.length} sink rows, largest batch ${crashed.maxBatchRows} rows, ${Date.now() - t0} ms`,
      );
      expect(fired).toBeGreaterThan(20);
      expect(clean.maxBatchRows).toBeGreaterThan(SINK_CHUNK_ROWS);
      expect(clean.rows.length).toBeGreaterThan(SINK_CHUNK_ROWS);
      expect(crashed.rows).toEqual(clean.rows);
    },
    300_000,
  );

  it.each([
    ['update', 2],
    ['dedup', 2],
  ] as Array<[Shape, number]>)(
    '%s output run partitioned (4 state partitions, 3 tasks at a time): 60 runs with random crashes in any task leave what the single executor leaves',
    async (shape, maxFiles) => {
      const seed = 20261101 + (shape === 'update' ? 0 : 1);
      const t0 = Date.now();
      const [crashed, clean] = await Promise.all([dynamoSoak(shape, seed, 60, 0.6, maxFiles, 4, 3), dynamoSoak(shape, seed, 60, 0, maxFiles, 4)]);
      const fired = Object.values(crashed.crashes).reduce((a, b) => a + b, 0);
      // eslint-disable-next-line no-console
      console.log(
        `partitioned soak ${shape}: seed ${seed}, ${crashed.runs} runs, ${fired} crashes ${JSON.stringify(crashed.crashes)}, ${crashed.rows.length} sink rows, ${Date.now() - t0} ms`,
      );
      expect(fired).toBeGreaterThan(15);
      expect(clean.rows.length).toBeGreaterThan(SINK_CHUNK_ROWS);
      expect(crashed.rows).toEqual(clean.rows);
    },
    300_000,
  );

  it('crashed at every point, mid-sink (between the chunks of a sink write) included', () => {
    const total = Object.fromEntries(CRASH_POINTS.map((p) => [p, [...outcomes.values()].reduce((a, o) => a + o.crashes[p], 0)]));
    expect(outcomes.size).toBe(shapes.length);
    // eslint-disable-next-line no-console
    console.log(`dynamodb soak crashes by point: ${JSON.stringify(total)}`);
    expect(CRASH_POINTS.filter((p) => total[p] === 0)).toEqual([]);
  });
});

// ---- part 2: the full local stack, both guarded sinks --------------------------------------------

describe('random-crash soak on the full local stack with both guarded sinks, fenced on the lease', () => {
  it('40 runs with random crashes leave the DynamoDB table and the S3 sink as 40 runs without failures do', async () => {
    const seed = 4242;
    const runs = 40;
    const t0 = Date.now();
    const soak = async (crashRate: number) => {
      const plan = soakPlan('update', 'soak-stack', 1);
      const g = guardedSinks(plan, res);
      const r = prng(seed);
      let fileNo = 0;
      let crashes = 0;
      const time = leaseClock();
      for (let tick = 0; tick <= runs; tick++) {
        const last = tick === runs;
        if (!last) for (const rows of filesForTick(seed, tick)) await dropFile(res.bucket, g.base, ++fileNo, rows);
        let crash: CrashPlan | undefined;
        const built = () => buildExecutor(testConnection(), plan, g.cfg, { sink: g.tee, crash, clock: time.clock });
        if (!last && r.next() < crashRate) {
          const next = (await built().checkpoint.head()).latestCommitBatch + 1;
          crash = { point: r.pick(CRASH_POINTS), batchId: next + (r.next() < 0.7 ? 0 : 1) };
        }
        try {
          expect((await built().executor.run()).stoppedBy).toBe('done');
        } catch (e) {
          if (!(e instanceof InjectedCrash)) throw e;
          crashes++;
          time.waitOutLease();
        }
      }
      return { crashes, dynamo: canonical(await g.dynamo.readAll()), files: canonical(await g.files.readCommitted()) };
    };
    const [crashed, clean] = await Promise.all([soak(0.6), soak(0)]);
    // eslint-disable-next-line no-console
    console.log(
      `stack soak: seed ${seed}, ${runs + 1} runs, ${crashed.crashes} crashes, ${crashed.dynamo.length} table rows, ${crashed.files.length} file rows, ${Date.now() - t0} ms`,
    );
    expect(crashed.crashes).toBeGreaterThan(10);
    expect(clean.dynamo.length).toBeGreaterThan(0);
    expect(crashed.dynamo).toEqual(clean.dynamo);
    // Update mode with one file per batch: the same batches, so the same emitted history.
    expect(crashed.files).toEqual(clean.files);
  }, 240_000);
});
