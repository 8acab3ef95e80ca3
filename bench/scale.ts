/**
 * The scale-out section (`npm run bench -- --only scale`, issue 19): one generated backlog on the
 * embedded local stack (DynamoDB Local + s3rver), the benchmark's aggregation (bench/query.ts)
 * run three ways, each on a fresh checkpoint, with the same state partitions:
 *
 *   - the single executor (MicroBatchExecutor through lib/aws/pipeline.ts: today's Lambda);
 *   - partitioned on 1 worker thread and on 2 (lib/local/workers.ts's WorkerPool, each thread
 *     with its own AWS clients, driven by runPartitioned as the state machine drives the Lambdas).
 *
 * Every run's output (the sink's objects, read back) is checked against counts made from the
 * generated input alone. The partitioned runs' rates over the single executor's, measured in the
 * same invocation (`oneWorkerOverSingle`, `twoWorkersOverSingle`; with --scale-rounds R, R rounds
 * of the three runs and the median of each round's ratios), are printed with the machine's load
 * beside them. The partitioned runs' tasks are timed one by one (the pool's handler, wrapped), each
 * read task's files and bytes read back from its shuffle meta, and a task's start measured on its
 * own (tasks sent again once the run is over, which find their work done); from those costs, all
 * measured in this invocation, a model gives the events/s of N Lambdas:
 *
 *   per batch  T(N) = plan + ceil(S/N)·read + ceil(P/N)·partition + commit
 *   events/s   = events per batch / T(N)
 *
 * with S read tasks (splits) and P partition tasks per batch, each task's cost as measured (its
 * start, the message round trip and its own requests included). What a Lambda adds on AWS (a Step
 * Functions state transition, the invoke) is not measured here: --scale-overhead-ms o adds o per
 * task as a what-if column, off by default. S and P bound the parallelism; plan, commit and the
 * sink's one writer per batch are serial.
 */
import { prepareBenchStack, uploadLanding } from './e2e';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { cpus, loadavg } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClients } from '../lib/aws/clients';
import type { AwsConnection } from '../lib/aws/config';
import { buildExecutor, shufflePrefix, type PipelineConfig } from '../lib/aws/pipeline';
import { S3ShuffleStore } from '../lib/aws/s3/shuffle';
import type { S3JsonSink } from '../lib/aws/s3/json-sink';
import type { RunReport } from '../lib/engine/run/types';
import { partitionedRunReport, runPartitioned, type TaskEvent, type TaskHandler } from '../lib/engine/schedule/driver';
import type { PlanResult } from '../lib/engine/schedule/partitioned';
import type { OutputRow } from '../lib/engine/ports';
import { decodeStateJson } from '../lib/engine/state-json';
import { startLocalStack } from '../lib/local/stack';
import { WorkerPool } from '../lib/local/workers';
import { generateEvents } from './generate';
import { eventTimeMs, expectedBatches, type ExpectedBatch } from './pairs';
import { WATERMARK_DELAY_MS, WINDOW_MS } from './query';
import { SCALE_MAX_FILES_ENV, SCALE_PLAN_NAME, scalePlan } from './scale-plan';

const BUCKET = 'sluice-bench-scale';
const TABLE = 'sluice-bench-scale-state';
const KEYS = 10_000;
const SPAN_MINUTES = 60;
/** One Lambda invocation's limit, s. */
const LAMBDA_SECONDS = 15 * 60;

type File = { key: string; body: string };

export interface ScaleOptions {
  readonly events: number;
  readonly files: number;
  readonly maxFilesPerTrigger: number;
  readonly statePartitions: number;
  readonly maxSplits: number;
  /** Worker-thread counts of the partitioned runs, e.g. [1, 2]. */
  readonly workers: readonly number[];
  /** N of the scaling table. */
  readonly lambdas: readonly number[];
  /** A what-if: o ms more per task (what a Lambda invoke and a state transition add on AWS, not measured here); 0: no such column. */
  readonly overheadMs: number;
  /** Rounds of the three runs (single, 1 and 2 workers), each on fresh checkpoints: the ratios are each round's, their median reported. */
  readonly rounds: number;
  /**
   * Rounds run first and not counted: the engine's code is compiled by V8 as it runs, in the main
   * thread and in each worker thread apart, so a first round compares cold threads (warm Lambdas are not).
   */
  readonly warmup: number;
  /** The wide shape of the table: files per batch, with S = P = this many. */
  readonly wide: number;
  readonly out: (s?: string) => void;
  readonly table: (head: string[], rows: Array<Array<string | number>>, align?: string) => string;
  readonly fmtRate: (r: number | null | undefined) => string;
}

/** What a batch must emit, from the input alone: per (window start, user) the events and the sum of amount. */
interface ExpectedGroup {
  events: number;
  total: number;
}

/**
 * The groups each batch emits (append mode: a (window, user) once the batch's watermark passes its
 * window's end), by JSON.parse and arithmetic alone, with the rules bench/pairs.ts states: rows
 * whose window ends at or before the previous batch's watermark are late; a batch evicts with its
 * own watermark, max event time − delay of the batches before it; one no-data batch at the end.
 */
export function expectedGroups(files: readonly File[], filesPerBatch: number, windowMs: number, delayMs: number): Array<Map<string, ExpectedGroup>> {
  const out: Array<Map<string, ExpectedGroup>> = [];
  const live = new Map<string, ExpectedGroup & { end: number }>();
  let wm = 0;
  let lastWm = 0;
  const evict = (batchWm: number) => {
    const emitted = new Map<string, ExpectedGroup>();
    for (const [k, g] of live) {
      if (g.end > batchWm) continue;
      emitted.set(k, { events: g.events, total: g.total });
      live.delete(k);
    }
    return emitted;
  };
  for (let b = 0; b * filesPerBatch < files.length; b++) {
    const lateWm = lastWm;
    const batchWm = wm;
    let maxT = -Infinity;
    for (const f of files.slice(b * filesPerBatch, (b + 1) * filesPerBatch)) {
      for (const line of f.body.split('\n')) {
        if (line === '') continue;
        const o = JSON.parse(line) as { user: string; event_time: string; amount: number };
        const t = eventTimeMs(o.event_time);
        if (t > maxT) maxT = t;
        const start = t - (((t % windowMs) + windowMs) % windowMs);
        if (start + windowMs <= lateWm) continue;
        const k = `${start}|${o.user}`;
        const g = live.get(k);
        if (g) {
          g.events++;
          g.total += o.amount;
        } else live.set(k, { events: 1, total: o.amount, end: start + windowMs });
      }
    }
    out.push(evict(batchWm));
    lastWm = batchWm;
    if (maxT !== -Infinity) wm = Math.max(batchWm, maxT - delayMs);
  }
  if (out.length && wm > lastWm) out.push(evict(wm));
  return out;
}

/** A sink row's group key: its window's start (ISO, or "YYYY-MM-DD HH:MM:SS") in ms, and its user. */
function groupKey(row: OutputRow): string {
  const w = row.window as { start: string | number } | null;
  const s = w?.start;
  const ms = typeof s === 'number' ? s : Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(String(s)) ? String(s) : `${String(s).replace(' ', 'T')}Z`);
  return `${ms}|${row.user}`;
}

/** Differences between a run's report and sink output and what the input says, none when they agree. */
function checkRun(report: RunReport, output: Map<number, OutputRow[] | null>, expected: ExpectedBatch[], groups: Array<Map<string, ExpectedGroup>>): string[] {
  const problems: string[] = [];
  if (report.batches.length !== expected.length) problems.push(`${report.batches.length} batches, expected ${expected.length}`);
  for (const e of expected) {
    const b = report.batches.find((x) => x.batchId === e.batchId);
    if (!b) {
      problems.push(`batch ${e.batchId} missing`);
      continue;
    }
    if (b.numInputRows !== e.rows) problems.push(`batch ${e.batchId}: ${b.numInputRows} rows in, expected ${e.rows}`);
    if (b.droppedByWatermark !== e.late) problems.push(`batch ${e.batchId}: ${b.droppedByWatermark} late, expected ${e.late}`);
    const rows = output.get(e.batchId) ?? [];
    const want = groups[e.batchId];
    if (rows.length !== want.size) problems.push(`batch ${e.batchId}: the sink holds ${rows.length} rows, expected ${want.size}`);
    let wrong = 0;
    for (const r of rows) {
      const g = want.get(groupKey(r));
      if (!g || Number(r.events) !== g.events || Math.abs(Number(r.total) - g.total) > 1e-6 * Math.max(1, Math.abs(g.total))) wrong++;
    }
    if (wrong) problems.push(`batch ${e.batchId}: ${wrong} rows differ from the input's (window, user) counts and sums`);
  }
  return problems;
}

function cfgFor(name: string, statePartitions: number): PipelineConfig {
  return {
    checkpoint: { bucket: BUCKET, prefix: `checkpoints/${name}` },
    stateTable: TABLE,
    source: { kind: 's3', bucket: BUCKET, prefix: 'landing/scale' },
    sink: { kind: 's3', bucket: BUCKET, prefix: `out/${name}` },
    statePartitions,
  };
}

function upload(conn: AwsConnection, files: readonly File[]): Promise<void> {
  return uploadLanding(conn, BUCKET, 'landing/scale', files);
}

/** The sink's objects of a run, by batch, read back through the pipeline's own sink. */
async function sinkOutput(conn: AwsConnection, cfg: PipelineConfig, batches: readonly number[]): Promise<Map<number, OutputRow[] | null>> {
  const built = buildExecutor(conn, scalePlan(1), cfg);
  try {
    const sink = built.sink as S3JsonSink;
    const out = new Map<number, OutputRow[] | null>();
    for (const b of batches) out.set(b, await sink.readBatch(b));
    return out;
  } finally {
    built.clients.destroy();
  }
}

interface TaskTiming {
  readonly action: TaskEvent['action'];
  readonly batchId: number;
  readonly index: number;
  readonly ms: number;
  /** When the task was sent and when it answered, ms since the run started. */
  readonly start: number;
  readonly end: number;
  /** plan: the run had nothing left (the run's last plan task). */
  readonly done?: boolean;
  /** read: what the task read (its shuffle meta), and its files. */
  rows?: number;
  bytes?: number;
  files?: number;
}

interface RunResult {
  readonly name: string;
  readonly workers: number | null;
  readonly seconds: number;
  readonly report: RunReport;
  readonly problems: string[];
  readonly tasks: TaskTiming[];
  /** The shuffle's bytes per data batch: the read tasks' rows per partition, the partitions' outputs. */
  readonly shuffle?: { readonly rowsBytes: number; readonly outBytes: number; readonly objects: number };
  /** A task's start, ms: read tasks sent again after the run, which find their meta and return (the median). */
  readonly taskStartMs?: number;
  readonly round: number;
  /** CPU seconds the run took: this process (its main thread with s3rver and the driver, and the worker threads) and DynamoDB Local's JVM. */
  readonly cpu: CpuSeconds;
}

interface CpuSeconds {
  readonly node: number;
  readonly dynamodb: number | null;
}

/**
 * CPU seconds so far of this process (every thread) and of DynamoDB Local's JVM (its
 * /proc/<pid>/stat utime + stime, at Linux's 100 ticks a second; null where /proc is absent).
 */
function cpuNow(dynamodbPid: number | undefined): CpuSeconds {
  const u = process.cpuUsage();
  let dynamodb: number | null = null;
  if (dynamodbPid !== undefined) {
    try {
      // the fields after the command's closing parenthesis: utime and stime are the 12th and 13th
      const stat = readFileSync(`/proc/${dynamodbPid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      dynamodb = (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      dynamodb = null;
    }
  }
  return { node: (u.user + u.system) / 1e6, dynamodb };
}

function cpuSince(before: CpuSeconds, pid: number | undefined): CpuSeconds {
  const now = cpuNow(pid);
  return { node: now.node - before.node, dynamodb: now.dynamodb === null || before.dynamodb === null ? null : now.dynamodb - before.dynamodb };
}

/** Splits of `count` over `files` files, the sizes (lib/engine/splits.ts shares them the same way: contiguous, the first files % count one longer). */
function filesOfSplit(files: number, count: number, index: number): number {
  return Math.floor(files / count) + (index < files % count ? 1 : 0);
}

async function partitionedRun(
  conn: AwsConnection,
  o: ScaleOptions,
  pool: WorkerPool,
  expected: ExpectedBatch[],
  groups: Array<Map<string, ExpectedGroup>>,
  round: number,
  dynamodbPid: number | undefined,
): Promise<RunResult> {
  const workers = pool.size;
  const name = `workers-${workers}-r${round}`;
  const cfg = cfgFor(name, o.statePartitions);
  const tasks: TaskTiming[] = [];
  let seconds: number;
  let batches: number[];
  let taskStartMs: number;
  let cpu: CpuSeconds;
  {
    // this run's pipeline on the pool's threads (warm from the rounds before, as warm Lambdas are)
    const inner = pool.handler({ config: cfg });
    let t0 = 0;
    const timed: TaskHandler = async (e) => {
      const start = performance.now() - t0;
      const r = await inner(e);
      const end = performance.now() - t0;
      const ms = end - start;
      if (e.action === 'plan') {
        const p = r as PlanResult;
        tasks.push({ action: 'plan', batchId: p.batchId, index: 0, ms, start, end, done: p.done });
      } else
        tasks.push({ action: e.action, batchId: e.batchId, index: e.action === 'read' ? e.split : e.action === 'partition' ? e.partition : 0, ms, start, end });
      return r;
    };
    t0 = performance.now();
    const c0 = cpuNow(dynamodbPid);
    const runId = `bench-scale-${name}-${Date.now()}`;
    ({ batches } = await runPartitioned(timed, { runId, concurrency: workers }));
    seconds = (performance.now() - t0) / 1000;
    cpu = cpuSince(c0, dynamodbPid);
    // A task's start: the last data batch's read tasks again, one at a time; each finds its meta
    // (the task is done) and returns: the message round trip, the task's executor and one read.
    const last = tasks.filter((t) => t.action === 'read').reduce((a, t) => Math.max(a, t.batchId), -1);
    const again: number[] = [];
    for (let k = 0; k < 3; k++)
      for (const t of tasks.filter((x) => x.action === 'read' && x.batchId === last)) {
        const s = performance.now();
        await inner({ action: 'read', runId, batchId: t.batchId, split: t.index });
        again.push(performance.now() - s);
      }
    taskStartMs = again.sort((a, b) => a - b)[Math.floor(again.length / 2)] ?? 0;
  }
  // Each read task's shuffle meta: the rows and bytes it read (the plan says how many files its split had).
  const clients = createClients(conn);
  let shuffleBytes: RunResult['shuffle'];
  try {
    // what the tasks handed each other through S3: N/read/<split>/data (every partition's rows or
    // partials; N/read/<split>/<partition> as an earlier sluice wrote them) and N/out/<partition>
    const root = `${shufflePrefix(cfg.checkpoint)}/`;
    let rowsBytes = 0;
    let outBytes = 0;
    let objects = 0;
    let token: string | undefined;
    do {
      const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: root, ContinuationToken: token }));
      for (const obj of page.Contents ?? []) {
        const k = (obj.Key ?? '').slice(root.length);
        objects++;
        if (/^\d+\/read\/\d+\/(\d+|data)$/.test(k)) rowsBytes += obj.Size ?? 0;
        else if (/^\d+\/out\/\d+$/.test(k)) outBytes += obj.Size ?? 0;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const dataBatches = expected.filter((e) => !e.noData).length;
    shuffleBytes = { rowsBytes: rowsBytes / dataBatches, outBytes: outBytes / dataBatches, objects };
    const shuffle = new S3ShuffleStore({ client: clients.s3, bucket: BUCKET, prefix: shufflePrefix(cfg.checkpoint) });
    for (const t of tasks.filter((x) => x.action === 'read')) {
      const meta = decodeStateJson((await shuffle.get(`${t.batchId}/read/${t.index}/meta`)) ?? 'null') as { numInputRows: number; bytes: number } | null;
      const count = tasks.filter((x) => x.action === 'read' && x.batchId === t.batchId).length;
      const batchFiles = Math.min(o.maxFilesPerTrigger, o.files - t.batchId * o.maxFilesPerTrigger);
      t.rows = meta?.numInputRows;
      t.bytes = meta?.bytes;
      t.files = filesOfSplit(batchFiles, count, t.index);
    }
  } finally {
    clients.destroy();
  }
  const built = buildExecutor(conn, scalePlan(o.maxFilesPerTrigger), cfg);
  let report: RunReport;
  try {
    report = await partitionedRunReport(scalePlan(o.maxFilesPerTrigger), built.checkpoint, batches);
  } finally {
    built.clients.destroy();
  }
  const problems = checkRun(report, await sinkOutput(conn, cfg, batches), expected, groups);
  return {
    name: `partitioned, ${workers} worker thread${workers > 1 ? 's' : ''}`,
    workers,
    seconds,
    report,
    problems,
    tasks,
    shuffle: shuffleBytes,
    taskStartMs,
    round,
    cpu,
  };
}

async function singleRun(
  conn: AwsConnection,
  o: ScaleOptions,
  expected: ExpectedBatch[],
  groups: Array<Map<string, ExpectedGroup>>,
  round: number,
  dynamodbPid: number | undefined,
): Promise<RunResult> {
  const cfg = cfgFor(`single-r${round}`, o.statePartitions);
  const built = buildExecutor(conn, scalePlan(o.maxFilesPerTrigger), cfg);
  let report: RunReport;
  let seconds: number;
  let cpu: CpuSeconds;
  try {
    const t0 = performance.now();
    const c0 = cpuNow(dynamodbPid);
    report = await built.executor.run();
    seconds = (performance.now() - t0) / 1000;
    cpu = cpuSince(c0, dynamodbPid);
  } finally {
    built.clients.destroy();
  }
  const problems = checkRun(
    report,
    await sinkOutput(
      conn,
      cfg,
      report.batches.map((b) => b.batchId),
    ),
    expected,
    groups,
  );
  return { name: 'single executor (one Lambda)', workers: null, seconds, report, problems, tasks: [], round, cpu };
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Least squares y = a + b·x; b clamped at 0 (a cost does not fall with more work). */
function leastSquares(points: ReadonlyArray<[number, number]>): { a: number; b: number } {
  if (points.length < 2) return { a: mean(points.map((p) => p[1])), b: 0 };
  const mx = mean(points.map((p) => p[0]));
  const my = mean(points.map((p) => p[1]));
  const sxx = sum(points.map(([x]) => (x - mx) ** 2));
  const b = sxx > 0 ? Math.max(0, sum(points.map(([x, y]) => (x - mx) * (y - my))) / sxx) : 0;
  return { a: Math.max(0, my - b * mx), b };
}

/** The per-task costs of a partitioned run's data batches, ms. */
export interface TaskCosts {
  readonly dataBatches: number;
  readonly eventsPerBatch: number;
  readonly bytesPerBatch: number;
  readonly filesPerBatch: number;
  readonly splits: number;
  readonly partitions: number;
  readonly plan: number;
  readonly read: number;
  readonly readPerFile: number;
  readonly readPerMB: number;
  readonly partition: number;
  /** The no-data batch's partition tasks (eviction only), ms. */
  readonly partitionNoData: number | null;
  readonly commit: number;
  /** commit ≈ commitFixed + commitPerRow · output rows of the batch. */
  readonly commitFixed: number;
  readonly commitPer1000Rows: number;
  readonly rowsOutPerBatch: number;
  /** The run's last plan task (it finds no more work and releases the lease). */
  readonly finalPlan: number;
}

/** The commit tasks of every partitioned run as (output rows, ms): a commit runs alone whatever the threads, so the runs' commits pool. */
function commitPoints(runs: readonly RunResult[]): Array<[number, number]> {
  return runs.flatMap((run) => {
    const data = new Map(run.report.batches.filter((b) => !b.noData).map((b) => [b.batchId, b.numOutputRows]));
    return run.tasks.filter((t) => t.action === 'commit' && data.has(t.batchId)).map((t): [number, number] => [data.get(t.batchId)!, t.ms]);
  });
}

function costsOf(run: RunResult, commitFit: { a: number; b: number }): TaskCosts {
  const data = run.report.batches.filter((b) => !b.noData);
  const ids = new Set(data.map((b) => b.batchId));
  const of = (action: TaskEvent['action']) => run.tasks.filter((t) => t.action === action && ids.has(t.batchId) && !t.done);
  const reads = of('read');
  const parts = of('partition');
  const commits = of('commit');
  const noDataIds = new Set(run.report.batches.filter((b) => b.noData).map((b) => b.batchId));
  const noDataParts = run.tasks.filter((t) => t.action === 'partition' && noDataIds.has(t.batchId));
  const bytes = sum(reads.map((t) => t.bytes ?? 0));
  const files = sum(reads.map((t) => t.files ?? 0));
  return {
    dataBatches: data.length,
    eventsPerBatch: mean(data.map((b) => b.numInputRows)),
    bytesPerBatch: bytes / Math.max(1, data.length),
    filesPerBatch: files / Math.max(1, data.length),
    splits: reads.length / Math.max(1, data.length),
    partitions: parts.length / Math.max(1, data.length),
    plan: mean(of('plan').map((t) => t.ms)),
    read: mean(reads.map((t) => t.ms)),
    readPerFile: sum(reads.map((t) => t.ms)) / Math.max(1, files),
    readPerMB: sum(reads.map((t) => t.ms)) / Math.max(1e-9, bytes / 2 ** 20),
    partition: mean(parts.map((t) => t.ms)),
    partitionNoData: noDataParts.length ? mean(noDataParts.map((t) => t.ms)) : null,
    commit: mean(commits.map((t) => t.ms)),
    commitFixed: commitFit.a,
    commitPer1000Rows: commitFit.b * 1000,
    rowsOutPerBatch: mean(data.map((b) => b.numOutputRows)),
    finalPlan: mean(run.tasks.filter((t) => t.action === 'plan' && t.done).map((t) => t.ms)),
  };
}

/** A batch's shape for the model: S read tasks of `read` ms, P partition tasks of `partition` ms. */
export interface BatchShape {
  readonly events: number;
  readonly S: number;
  readonly P: number;
  readonly plan: number;
  readonly read: number;
  readonly partition: number;
  readonly commit: number;
}

/** The model: one batch on N Lambdas, ms. */
export function batchMs(s: BatchShape, n: number, overheadMs: number): number {
  const readWaves = Math.ceil(s.S / n);
  const partitionWaves = Math.ceil(s.P / n);
  return s.plan + readWaves * s.read + partitionWaves * s.partition + s.commit + overheadMs * (2 + readWaves + partitionWaves);
}

export async function runScaleSection(o: ScaleOptions): Promise<Record<string, unknown>> {
  const { out, table, fmtRate } = o;
  const loadAtStart = loadavg();
  const tg = performance.now();
  const input = generateEvents({ events: o.events, keys: KEYS, files: o.files, spanMinutes: SPAN_MINUTES });
  const expected = expectedBatches(input.files, o.maxFilesPerTrigger, WINDOW_MS, WATERMARK_DELAY_MS);
  const groups = expectedGroups(input.files, o.maxFilesPerTrigger, WINDOW_MS, WATERMARK_DELAY_MS);
  const emitted = sum(groups.map((g) => g.size));
  out(
    `  input: ${input.events} events, ${(input.bytes / input.events).toFixed(0)} bytes/event (${(input.bytes / 2 ** 20).toFixed(0)} MB), ${KEYS} users, ${SPAN_MINUTES} min of event time, ` +
      `${o.files} files, maxFilesPerTrigger ${o.maxFilesPerTrigger} (${expected.filter((e) => !e.noData).length} data batches + ${expected.filter((e) => e.noData).length} no-data), ` +
      `state partitions ${o.statePartitions}, maxSplits ${o.maxSplits} (generated in ${((performance.now() - tg) / 1000).toFixed(1)} s)`,
  );
  out(`  expected from the input alone: ${emitted} (window, user) rows emitted, ${sum(expected.map((e) => e.late))} late rows`);
  // The workers load the plan from a module: the bundle's scale-plan.js beside this bundle (bench/build-and-run.js), or the .ts through tsx.
  const planModule = existsSync(join(__dirname, 'scale-plan.js')) ? join(__dirname, 'scale-plan.js') : join(__dirname, 'scale-plan.ts');

  const t0 = Date.now();
  const stack = await startLocalStack({ services: ['dynamodb', 's3'] });
  out(`  local stack up in ${Date.now() - t0} ms; every run on its own checkpoint, state namespace and sink prefix, over the same landing prefix`);
  // every round: the single executor, then partitioned on each thread count, each on fresh checkpoints
  const rounds: Array<{ runs: RunResult[]; load: { start: number[]; end: number[] } }> = [];
  // One pool per thread count for every round: the threads stay up between runs, as warm Lambda
  // containers do (each run on its own checkpoint: the pool's handler takes the run's pipeline).
  const pools: WorkerPool[] = [];
  try {
    const conn = stack.connection;
    await prepareBenchStack(conn, BUCKET, TABLE);
    await upload(conn, input.files);
    process.env[SCALE_MAX_FILES_ENV] = String(o.maxFilesPerTrigger);
    for (const w of o.workers) {
      const pool = new WorkerPool(w, {
        connection: conn,
        config: cfgFor(`workers-${w}`, o.statePartitions),
        plan: { kind: 'module', path: planModule },
        maxSplits: o.maxSplits,
      });
      pools.push(pool);
      // each thread loads its plan and clients when it starts: give each one task first that fails
      // at once (a read task of a batch no plan task wrote)
      const h = pool.handler();
      await Promise.allSettled(Array.from({ length: w }, () => h({ action: 'read', runId: 'warm-up', batchId: 1e9, split: 0 })));
    }
    for (let round = -o.warmup; round < Math.max(1, o.rounds); round++) {
      const start = loadavg();
      // (a negative round is a warm-up round: the same three runs, on their own checkpoints, not counted)
      const label = round < 0 ? `warm-up round ${o.warmup + round + 1} (not counted): ` : o.rounds > 1 ? `round ${round + 1}: ` : '';
      const runsOfRound: RunResult[] = [await singleRun(conn, o, expected, groups, round, stack.pids.dynamodb)];
      out(`  ${label}${runsOfRound[0].name}: ${runsOfRound[0].seconds.toFixed(1)} s`);
      for (const pool of pools) {
        const r = await partitionedRun(conn, o, pool, expected, groups, round, stack.pids.dynamodb);
        runsOfRound.push(r);
        out(`  ${label}${r.name}: ${r.seconds.toFixed(1)} s`);
      }
      if (round < 0) continue;
      rounds.push({ runs: runsOfRound, load: { start, end: loadavg() } });
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    await stack.stop();
  }
  const loadAtEnd = loadavg();

  // ---- side by side
  const rateOf = (r: RunResult) => r.report.rowsIn / r.seconds;
  // each round's ratios, over that round's single executor; the median round's runs below
  const over = (w: number) => rounds.map((rd) => rateOf(rd.runs.find((r) => r.workers === w)!) / rateOf(rd.runs[0]));
  const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const ratios = { oneWorker: over(1), twoWorkers: over(2) };
  const chosen = rounds.find((rd) => rateOf(rd.runs.find((r) => r.workers === 1)!) / rateOf(rd.runs[0]) === median(ratios.oneWorker)) ?? rounds[0];
  const runs = chosen.runs;
  const single = runs[0];
  const fmtLoad = (l: readonly number[]) => l.map((x) => x.toFixed(1)).join(' ');
  out(
    `  [9a] side by side, ${cpus().length} cores, load average ${fmtLoad(loadAtStart)} at the start, ${fmtLoad(loadAtEnd)} at the end` +
      (rounds.length > 1 ? ` (${rounds.length} rounds; the round of the median one-worker ratio shown)` : ''),
  );
  out(
    table(
      ['run', 'events/s', 'x single', 'time', 'batches', 'tasks', 'task time', 'in flight', "output vs the input's counts"],
      runs.map((r) => [
        r.name,
        fmtRate(rateOf(r)),
        (rateOf(r) / rateOf(single)).toFixed(2),
        `${r.seconds.toFixed(1)} s`,
        r.report.batches.length,
        r.tasks.length || '',
        r.tasks.length ? `${(taskSeconds(r)).toFixed(1)} s` : '',
        r.tasks.length ? (taskSeconds(r) / r.seconds).toFixed(2) : '',
        r.problems.length ? `MISMATCH: ${r.problems.slice(0, 3).join('; ')}` : 'match',
      ]),
      'lrrrrrrrl',
    ),
  );
  out('  time: the run alone (the worker threads started and warm before, as warm Lambdas; the local stack shares the 2 cores with them);');
  const fmtRatios = (xs: readonly number[]) => (xs.length > 1 ? ` (rounds: ${xs.map((x) => x.toFixed(2)).join(', ')})` : '');
  out(
    `  oneWorkerOverSingle ${median(ratios.oneWorker).toFixed(2)}${fmtRatios(ratios.oneWorker)}, twoWorkersOverSingle ${median(ratios.twoWorkers).toFixed(2)}${fmtRatios(ratios.twoWorkers)}; ` +
      `load average (1, 5, 15 min) ${rounds.map((rd) => `${fmtLoad(rd.load.start)} → ${fmtLoad(rd.load.end)}`).join('; ')} on ${cpus().length} cores`,
  );
  out(
    "  task time: the sum of every task's time; in flight: task time / time, the tasks running at once on average (the driver keeps up to one per thread busy)",
  );
  // ---- CPU: what each run cost the machine, the emulators included
  const cpuTotal = (c: CpuSeconds) => c.node + (c.dynamodb ?? 0);
  out(`  [9a'] CPU seconds of each run: this process (the driver, s3rver and the worker threads) and DynamoDB Local's JVM, on ${cpus().length} cores`);
  out(
    table(
      ['run', 'node CPU', 'DynamoDB Local CPU', 'total CPU', 'CPU ms / 1,000 events', 'cores busy', 'x single by CPU'],
      runs.map((r) => {
        const c = r.cpu;
        return [
          r.name,
          `${c.node.toFixed(1)} s`,
          c.dynamodb === null ? 'n/a' : `${c.dynamodb.toFixed(1)} s`,
          `${cpuTotal(c).toFixed(1)} s`,
          ((cpuTotal(c) * 1e6) / r.report.rowsIn).toFixed(1),
          (cpuTotal(c) / r.seconds).toFixed(2),
          (cpuTotal(single.cpu) / cpuTotal(c)).toFixed(2),
        ];
      }),
      'lrrrrrr',
    ),
  );
  // a run's CPU, spread perfectly over every core, still takes CPU / cores: no partitioned run can be faster than that
  const bound = (r: RunResult) => (single.seconds * cpus().length) / cpuTotal(r.cpu);
  out(
    `  cores busy: total CPU / time. The single executor keeps ${(cpuTotal(single.cpu) / single.seconds).toFixed(2)} of the ${cpus().length} cores busy (its thread and DynamoDB Local's); ` +
      `a partitioned run needs at least its total CPU / ${cpus().length} cores of time, so here it can reach at most ` +
      runs
        .filter((r) => r.workers !== null)
        .map((r) => `${bound(r).toFixed(2)}x the single executor (${r.name})`)
        .join(', ') +
      ', whatever its thread count',
  );

  // ---- per-task costs
  const partitionedRuns = runs.filter((r) => r.workers !== null);
  const commitFit = leastSquares(commitPoints(partitionedRuns));
  const costs = partitionedRuns.map((r) => costsOf(r, commitFit));
  const f0 = (x: number | null) => (x === null ? '' : x.toFixed(0));
  const f1 = (x: number | null) => (x === null ? '' : x.toFixed(1));
  out(
    "  [9b] measured per-task costs (each task timed at the pool's handler: the task on its thread plus the message round trip), mean over the data batches, ms",
  );
  out(
    table(
      [
        'run',
        'plan',
        'read task',
        'read per file',
        'read per MB',
        'partition task',
        'no-data partition',
        'commit',
        'last plan',
        'task start',
        'shuffle per batch: rows, outputs',
      ],
      partitionedRuns.map((r, i) => {
        const c = costs[i];
        return [
          r.name,
          f0(c.plan),
          `${f0(c.read)} (${f1(c.filesPerBatch / c.splits)} files, ${(c.bytesPerBatch / c.splits / 2 ** 20).toFixed(1)} MB)`,
          f0(c.readPerFile),
          f0(c.readPerMB),
          `${f0(c.partition)} (~${Math.round(c.eventsPerBatch / c.partitions)} rows)`,
          f0(c.partitionNoData),
          `${f0(c.commit)} (${Math.round(c.rowsOutPerBatch)} rows)`,
          f0(c.finalPlan),
          f0(r.taskStartMs ?? null),
          r.shuffle ? `${(r.shuffle.rowsBytes / 2 ** 20).toFixed(1)} MB, ${(r.shuffle.outBytes / 2 ** 20).toFixed(1)} MB` : '',
        ];
      }),
      'lrrrrrrrrrr',
    ),
  );
  out(
    `  per data batch: ${f1(costs[0].splits)} read tasks (S), ${f1(costs[0].partitions)} partition tasks (P), ${Math.round(costs[0].eventsPerBatch)} events, ${f1(costs[0].filesPerBatch)} files ` +
      `(${(costs[0].bytesPerBatch / 2 ** 20).toFixed(1)} MB); commit ≈ ${f0(commitFit.a)} ms + ${f1(commitFit.b * 1000)} ms per 1,000 output rows (least squares over both runs' commits)`,
  );

  // ---- the model
  const c = costs[0]; // the 1-thread run: each task had a core to itself beside the local stack
  const start = partitionedRuns[0].taskStartMs ?? 0;
  const measured: BatchShape = {
    events: c.eventsPerBatch,
    S: Math.round(c.splits),
    P: Math.round(c.partitions),
    plan: c.plan,
    read: c.read,
    partition: c.partition,
    commit: c.commit,
  };
  // The wide shape: `wide` files per batch, S = P = wide. A read task reads one file (a task's
  // start, measured, plus one file's share of the rest of the measured read task); a partition
  // task its share of the rows (the measured one's cost beyond the no-data task's, scaled by its
  // rows); the commit its fixed part and the batch's output rows.
  const scale = o.wide / c.filesPerBatch;
  const fixedPartition = Math.min(c.partitionNoData ?? 0, c.partition);
  const rowsPerPartition = (c.eventsPerBatch * scale) / o.wide;
  const filesPerSplit = c.filesPerBatch / c.splits;
  const readStart = Math.min(start, c.read);
  const wide: BatchShape = {
    events: c.eventsPerBatch * scale,
    S: o.wide,
    P: o.wide,
    plan: c.plan,
    read: readStart + (c.read - readStart) / filesPerSplit,
    partition: fixedPartition + (c.partition - fixedPartition) * (rowsPerPartition / (c.eventsPerBatch / c.partitions)),
    commit: c.commitFixed + (c.commitPer1000Rows / 1000) * c.rowsOutPerBatch * scale,
  };
  const rateAt = (s: BatchShape, n: number, oh = 0) => s.events / (batchMs(s, n, oh) / 1000);
  // check the model against the partitioned runs on this machine
  const modelCheck = partitionedRuns.map((r, i) => ({
    workers: r.workers!,
    measured: (costs[i].eventsPerBatch * costs[i].dataBatches) / dataBatchSeconds(r),
    model: rateAt(measured, r.workers!),
  }));
  out("  [9c] scaling model for N Lambdas, from the 1-thread run's task costs, measured in this invocation:");
  out('       per batch T(N) = plan + ceil(S/N)·read + ceil(P/N)·partition + commit; events/s = events per batch / T(N)');
  out(
    `       each cost as measured, a task's start included: ${f0(start)} ms (median of the last batch's read tasks sent again after the run, which find their work done: ` +
      "the message round trip, the task's executor and one read); what a Lambda adds on AWS (the invoke, a state transition) is not measured here" +
      (o.overheadMs > 0 ? `: the last column adds --scale-overhead-ms ${o.overheadMs} ms per task as a what-if` : ''),
  );
  out(
    `       measured shape: ${Math.round(measured.events)} events per batch, S = ${measured.S}, P = ${measured.P}, plan ${f0(measured.plan)}, read ${f0(measured.read)}, partition ${f0(measured.partition)}, commit ${f0(measured.commit)} ms`,
  );
  out(
    `       wide shape (extrapolated): ${o.wide} files per batch (${Math.round(wide.events)} events), S = P = ${o.wide}: read = a task's start + one file ${f0(wide.read)} ms, partition ${f0(wide.partition)} ms ` +
      `(the no-data task's ${f0(fixedPartition)} ms + the rest scaled by rows), commit ${f0(wide.commit)} ms (${f0(c.commitFixed)} + ${f1(c.commitPer1000Rows)} per 1000 output rows)`,
  );
  out(
    `       model vs the runs above (data batches only): ${modelCheck.map((m) => `${m.workers} thread${m.workers > 1 ? 's' : ''}: model ${fmtRate(m.model)}, measured ${fmtRate(m.measured)}`).join('; ')}`,
  );
  const singleRate = rateOf(single);
  const whatIf = o.overheadMs > 0;
  const rows = o.lambdas.map((n) => [
    n,
    fmtRate(rateAt(measured, n)),
    (rateAt(measured, n) / rateAt(measured, 1)).toFixed(2),
    (rateAt(measured, n) / singleRate).toFixed(2),
    fmtRate(rateAt(wide, n)),
    (rateAt(wide, n) / rateAt(wide, 1)).toFixed(2),
    (rateAt(wide, n) / singleRate).toFixed(2),
    ...(whatIf ? [fmtRate(rateAt(wide, n, o.overheadMs))] : []),
  ]);
  out(
    table(
      [
        'N Lambdas',
        `measured shape (S=${measured.S}, P=${measured.P})`,
        'x N=1',
        'x single',
        `wide shape (S=P=${o.wide})`,
        'x N=1',
        'x single',
        ...(whatIf ? [`wide, o = ${o.overheadMs} ms`] : []),
      ],
      rows,
    ),
  );
  out(`  x single: against the single executor's ${fmtRate(singleRate)} measured above (one Lambda without parallelism)`);
  // the fewest Lambdas at which the partitioned run passes the single executor, per shape
  const breakEven = (s: BatchShape) => o.lambdas.find((n) => rateAt(s, n) > singleRate) ?? null;
  const even = { measured: breakEven(measured), wide: breakEven(wide) };
  const serialMs = (s: BatchShape) => s.plan + s.commit;
  const limit = (s: BatchShape) => s.events / ((serialMs(s) + s.read + s.partition) / 1000);
  out(
    `  stops scaling at N = max(S, P) (${Math.max(measured.S, measured.P)} for the measured shape, ${o.wide} for the wide one): beyond it every wave is one task, and T = plan + read + partition + commit, ` +
      `the ceiling ${fmtRate(limit(measured))} and ${fmtRate(limit(wide))}. The serial part of each batch (plan, commit with its one sink writer) is ` +
      `${f0(serialMs(measured))} and ${f0(serialMs(wide))} ms; batches run one after another.`,
  );
  const bytesPerEvent = input.bytes / input.events;
  const lambdaEvents = singleRate * LAMBDA_SECONDS;
  out(
    `  one Lambda (the single executor at its rate here, on a whole core against the local emulators; a Lambda has one vCPU at 1,769 MB, less below) clears at most ${(lambdaEvents / 1e6).toFixed(0)} M events (${((lambdaEvents * bytesPerEvent) / 2 ** 30).toFixed(1)} GiB of ~${bytesPerEvent.toFixed(0)}-byte lines) in 15 minutes; ` +
      `a schedule every I minutes keeps up while the stream stays below ${fmtRate(singleRate)} and one interval's backlog fits that. Turn on parallelism when a run's backlog ` +
      `regularly passes about half of it (the margin for a slower batch or a retry), or the batch's state no longer fits one function; ` +
      `partitioned on one worker runs at ${median(ratios.oneWorker).toFixed(2)}x the single executor and on two at ${median(ratios.twoWorkers).toFixed(2)}x (the shuffle through S3 and the tasks' own reads of the checkpoint), and the model ` +
      `passes one Lambda ${even.measured ? `from N = ${even.measured}` : 'at no N'} with S = ${measured.S}, P = ${measured.P} and ${even.wide ? `from N = ${even.wide}` : 'at no N'} with S = P = ${o.wide}: ` +
      'turn it on with at least that many splits and partitions, or it only costs.',
  );
  out();

  const round = (x: number | null) => (x === null ? null : Math.round(x));
  return {
    date: new Date().toISOString(),
    node: process.version,
    cores: cpus().length,
    loadAverage: { start: loadAtStart.map((x) => Number(x.toFixed(2))), end: loadAtEnd.map((x) => Number(x.toFixed(2))) },
    // the partitioned runs' rates over the single executor's, measured in this invocation (the median over the rounds), the load beside them
    oneWorkerOverSingle: Number(median(ratios.oneWorker).toFixed(3)),
    twoWorkersOverSingle: Number(median(ratios.twoWorkers).toFixed(3)),
    ratiosByRound: rounds.map((rd, i) => ({
      oneWorkerOverSingle: Number(ratios.oneWorker[i].toFixed(3)),
      twoWorkersOverSingle: Number(ratios.twoWorkers[i].toFixed(3)),
      eventsPerSecond: rd.runs.map((r) => Math.round(rateOf(r))),
      // CPU seconds per run (single, then each thread count): this process's and DynamoDB Local's
      cpuSeconds: rd.runs.map((r) => ({
        node: Number(r.cpu.node.toFixed(2)),
        dynamodb: r.cpu.dynamodb === null ? null : Number(r.cpu.dynamodb.toFixed(2)),
      })),
      loadAverage: { start: rd.load.start.map((x) => Number(x.toFixed(2))), end: rd.load.end.map((x) => Number(x.toFixed(2))) },
    })),
    input: {
      events: input.events,
      bytesPerEvent: Math.round(bytesPerEvent),
      users: KEYS,
      files: o.files,
      maxFilesPerTrigger: o.maxFilesPerTrigger,
      spanMinutes: SPAN_MINUTES,
      statePartitions: o.statePartitions,
      maxSplits: o.maxSplits,
    },
    expected: { rowsEmitted: emitted, late: sum(expected.map((e) => e.late)), batches: expected.length },
    runs: runs.map((r) => ({
      run: r.name,
      workers: r.workers,
      eventsPerSecond: Math.round(rateOf(r)),
      seconds: Number(r.seconds.toFixed(2)),
      batches: r.report.batches.length,
      rowsIn: r.report.rowsIn,
      rowsOut: r.report.rowsOut,
      tasks: r.tasks.length,
      taskSeconds: r.tasks.length ? Number(taskSeconds(r).toFixed(2)) : null,
      matchesIndependentCount: r.problems.length === 0,
      problems: r.problems,
    })),
    taskCostsMs: partitionedRuns.map((r, i) => ({
      workers: r.workers,
      plan: round(costs[i].plan),
      read: round(costs[i].read),
      readPerFile: round(costs[i].readPerFile),
      readPerMB: round(costs[i].readPerMB),
      partition: round(costs[i].partition),
      partitionNoData: round(costs[i].partitionNoData),
      commit: round(costs[i].commit),
      commitFixed: round(costs[i].commitFixed),
      commitPer1000Rows: Number(costs[i].commitPer1000Rows.toFixed(1)),
      lastPlan: round(costs[i].finalPlan),
      taskStart: round(r.taskStartMs ?? null),
      shuffleBytesPerBatch: r.shuffle ? { rows: Math.round(r.shuffle.rowsBytes), outputs: Math.round(r.shuffle.outBytes) } : null,
      splitsPerBatch: costs[i].splits,
      partitionsPerBatch: costs[i].partitions,
      eventsPerBatch: Math.round(costs[i].eventsPerBatch),
      bytesPerBatch: Math.round(costs[i].bytesPerBatch),
      rowsOutPerBatch: Math.round(costs[i].rowsOutPerBatch),
    })),
    tasks: partitionedRuns.map((r) => ({
      workers: r.workers,
      tasks: r.tasks.map((t) => ({
        a: t.action,
        b: t.batchId,
        i: t.index,
        ms: Math.round(t.ms),
        ...(t.bytes !== undefined ? { bytes: t.bytes, rows: t.rows, files: t.files } : {}),
      })),
    })),
    model: {
      formula: 'T(N) = plan + ceil(S/N)*read + ceil(P/N)*partition + commit; events/s = events per batch / T(N)',
      costsFrom: "the 1-thread partitioned run's tasks, measured in this invocation (each with its start, the message round trip and its requests)",
      taskStartMs: Math.round(start),
      taskStartSource: "median of the last data batch's read tasks sent again after the run (each finds its work done)",
      ...(whatIf ? { whatIfOverheadMsPerTask: o.overheadMs } : {}),
      measuredShape: roundShape(measured),
      wideShape: roundShape(wide),
      check: modelCheck.map((m) => ({ workers: m.workers, model: Math.round(m.model), measured: Math.round(m.measured) })),
      table: o.lambdas.map((n) => ({
        lambdas: n,
        measuredShape: Math.round(rateAt(measured, n)),
        wideShape: Math.round(rateAt(wide, n)),
        ...(whatIf ? { wideShapeWhatIfOverhead: Math.round(rateAt(wide, n, o.overheadMs)) } : {}),
      })),
      passesSingleExecutorAtN: even,
      ceiling: { measuredShape: Math.round(limit(measured)), wideShape: Math.round(limit(wide)) },
    },
    oneLambda: {
      eventsPerSecond: Math.round(singleRate),
      eventsIn15Minutes: Math.round(lambdaEvents),
      bytesIn15Minutes: Math.round(lambdaEvents * bytesPerEvent),
    },
  };
}

/** Every task's time added up, s. */
function taskSeconds(r: RunResult): number {
  return sum(r.tasks.map((t) => t.ms)) / 1000;
}

/** The wall time of a partitioned run's data batches: each from its plan task's start to its commit's answer, s. */
function dataBatchSeconds(r: RunResult): number {
  const data = new Set(r.report.batches.filter((b) => !b.noData).map((b) => b.batchId));
  let ms = 0;
  for (const id of data) {
    const ts = r.tasks.filter((t) => t.batchId === id && !t.done);
    ms += Math.max(...ts.map((t) => t.end)) - Math.min(...ts.map((t) => t.start));
  }
  return ms / 1000;
}

function roundShape(s: BatchShape): Record<string, number> {
  return {
    events: Math.round(s.events),
    S: s.S,
    P: s.P,
    plan: Math.round(s.plan),
    read: Math.round(s.read),
    partition: Math.round(s.partition),
    commit: Math.round(s.commit),
  };
}

export { SCALE_PLAN_NAME };
