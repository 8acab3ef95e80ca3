/**
 * Runs conformance cases through the guarded sinks (DynamoDbSink and S3FileSink, both written by
 * every batch through a tee) on the local stack, the way lib/conformance/runner.ts runs them: each
 * step's files land under the prefix, then a fresh executor runs availableNow; with a crash
 * point, the step's first run crashes there and the next run finishes.
 *
 * What it returns is what the sinks durably hold: the DynamoDB table's rows (minus bookkeeping),
 * the S3 sink's committed rows and object keys, and the case result read back from the S3 sink's
 * log (so the case's expectations can be checked too).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3FileSink } from '../../lib/aws/s3/file-sink';
import { S3Requests } from '../../lib/aws/s3/requests';
import {
  caseSourceInputs,
  caseStageOrder,
  caseToPlan,
  type ConformanceCase,
  isPipelineCase,
  type StepFile,
  stepFileBytes,
  stepFileKey,
  stepInputFiles,
} from '../../lib/conformance/case';
import { isTransformWithStateCase, processorChangesAt, stepClockMs } from '../../lib/conformance/format-4';
import { addPerStage, asPipelineStep, type CaseResult, droppedByStageInProgress, type StepResult, stepFromBatches } from '../../lib/conformance/results';
import { LANDING_CONTENT_TYPE, stepFileBody } from '../../lib/conformance/runner';
import { timersAfter } from '../../lib/conformance/tws-steps';
import { partitionedRunReport } from '../../lib/engine/schedule/driver';
import type { CrashPoint } from '../../lib/engine/testing/crash';
import { InjectedCrash } from '../../lib/engine/errors';
import type { Clock, OutputRow, Sink, SinkContext } from '../../lib/engine/ports';
import type { QueryPlan, SourceSpec } from '../../lib/engine/plan/types';
import { outputColumnTypes } from '../../lib/engine/run/runtime';
import { leaseClock, testClients, testConnection } from './stack';

/** Writes each batch to every sink, in order (a crash point after the sink sees all of them written). */
class TeeSink implements Sink {
  readonly description: string;
  constructor(private readonly sinks: Sink[]) {
    this.description = sinks.map((s) => s.description).join(' + ');
  }
  async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void> {
    for (const s of this.sinks) await s.addBatch(batchId, rows, ctx);
  }
}

/** The lease key buildExecutor gives a query (pipeline.ts: `${plan.name}@${bucket}/${prefix}`). */
export function leaseKeyFor(plan: QueryPlan, cfg: PipelineConfig): string {
  return `${plan.name}@${cfg.checkpoint.bucket}/${cfg.checkpoint.prefix}`;
}

export interface GuardedResources {
  readonly bucket: string;
  /** State and lease table. */
  readonly stateTable: string;
  /** The DynamoDB sink's table (pk/sk). */
  readonly sinkTable: string;
}

export interface GuardedSinks {
  readonly base: string;
  readonly cfg: PipelineConfig;
  readonly dynamo: DynamoDbSink;
  readonly files: S3FileSink;
  readonly tee: TeeSink;
}

/** The two guarded sinks of one query (fenced on its lease), under a fresh prefix. */
export function guardedSinks(plan: QueryPlan, res: GuardedResources, base = randomUUID().slice(0, 12)): GuardedSinks {
  const { bucket } = res;
  const cfg: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: res.stateTable,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    // a stream-stream join's other inputs land beside the first (dropFile's sourceIndex)
    ...(plan.inputs?.length ? { inputs: plan.inputs.map((_, k) => ({ kind: 's3' as const, bucket, prefix: `${base}/landing-in${k + 1}` })) } : {}),
    sink: { kind: 's3', bucket, prefix: `${base}/unused` },
    deadLetter: { bucket, prefix: `${base}/dead-letter` },
  };
  const c = testClients();
  const dynamo = new DynamoDbSink({
    client: c.dynamodb,
    tableName: res.sinkTable,
    queryKey: base,
    leaseTable: res.stateTable,
    leaseKey: leaseKeyFor(plan, cfg),
  });
  const files = new S3FileSink({ client: c.s3, bucket, prefix: `${base}/files` });
  return { base, cfg, dynamo, files, tee: new TeeSink([dynamo, files]) };
}

/** Writes a step's file as the runner does (its own key, or one sorting after `lastKey`); returns its key under the landing prefix. */
export async function dropFile(
  bucket: string,
  base: string,
  fileNo: number,
  given: StepFile | Array<Record<string, unknown>>,
  sourceIndex = 0,
  lastKey?: string,
  spec?: SourceSpec,
): Promise<string> {
  const file: StepFile = Array.isArray(given) ? { input: '', rows: given } : given;
  // as the conformance runner writes them: named and encoded by the source's format (a Parquet file by DuckDB)
  const rel = stepFileKey(file, fileNo, lastKey, spec?.format);
  const key = `${base}/${sourceIndex === 0 ? 'landing' : `landing-in${sourceIndex}`}/${rel}`;
  const body = spec === undefined ? stepFileBytes(file, rel) : await stepFileBody(file, rel, spec);
  await s3Requests().putBytes(bucket, key, body, LANDING_CONTENT_TYPE);
  return rel;
}

/** The test's S3 requests, with the engine's retries: eight runs at once load the machine, and a reused keep-alive socket can be reset. */
let requests: S3Requests | undefined;
const s3Requests = () => (requests ??= new S3Requests(testClients().s3, {}, 'guarded-sinks helper'));

async function objectKeys(bucket: string, prefix: string): Promise<string[]> {
  const listed = await s3Requests().listAll(bucket, `${prefix}/`);
  return listed.map((o) => o.key.slice(prefix.length + 1)).sort();
}

export interface GuardedCaseRun {
  readonly name: string;
  /** Read back from the S3 sink's log, step by step, as the conformance runner does. */
  readonly result: CaseResult;
  /** The DynamoDB sink's rows, canonical order. */
  readonly dynamoRows: OutputRow[];
  /** The S3 sink's committed rows, batch order. */
  readonly fileRows: OutputRow[];
  /** Every object under the S3 sink's prefix (log entries included). */
  readonly fileKeys: string[];
  /** Crash runs that did crash (a point may not be reached, e.g. mid-state with no state). */
  readonly crashes: number;
  readonly ms: number;
}

export async function runCaseGuarded(c: ConformanceCase, res: GuardedResources, crash?: CrashPoint): Promise<GuardedCaseRun> {
  const t0 = Date.now();
  const planName = `guarded-${c.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-')}`.slice(0, 100);
  let plan = caseToPlan(c, planName);
  const tws = isTransformWithStateCase(c);
  const sinks = guardedSinks(plan, res);
  // the sinks write DECIMAL and big BIGINT values as JSON numbers and N: read back by the plan's types, exactly
  const types = outputColumnTypes(plan);
  const inputs = caseSourceInputs(c, plan);
  const steps: StepResult[] = [];
  let fileNo = 0;
  const lastKeys: string[] = [];
  let lastCommitted = -1;
  let crashes = 0;
  // A crashed run keeps its lease: the next run waits it out on this clock.
  const time = leaseClock();
  for (const [stepNo, step] of c.steps.entries()) {
    // FORMAT-4, as the conformance runner reads it: the step's processing time, and a processor
    // module that may change from this step on (same checkpoint, state and timers)
    const at = tws ? stepClockMs(c, step) : undefined;
    const processingClock: Clock | undefined = at === undefined ? undefined : { now: () => at };
    if (tws && processorChangesAt(c, stepNo)) plan = caseToPlan(c, planName, undefined, stepNo);
    for (const f of stepInputFiles(step)) {
      const at = inputs.indexOf(f.input);
      const rel = await dropFile(res.bucket, sinks.base, ++fileNo, f, at, lastKeys[at], at === 0 ? plan.source : plan.inputs![at - 1].source);
      if (lastKeys[at] === undefined || rel > lastKeys[at]) lastKeys[at] = rel;
    }
    if (crash) {
      try {
        await buildExecutor(testConnection(), plan, sinks.cfg, { crash: { point: crash }, sink: sinks.tee, clock: time.clock, processingClock }).executor.run();
      } catch (e) {
        // (a FORMAT-4 step that fails fails before the crash point too: the next run shows it)
        if (!(e instanceof InjectedCrash) && !tws) throw e;
        if (e instanceof InjectedCrash) crashes++;
        time.waitOutLease();
      }
    }
    const built = buildExecutor(testConnection(), plan, sinks.cfg, { sink: sinks.tee, clock: time.clock, processingClock });
    // FORMAT-4: a run that fails is the step's result (its `error`), and the case's last step
    let failed: string | undefined;
    let report: { watermark: string; stateRows: number; stateRowsByOperator?: number[] };
    try {
      report = await built.executor.run();
    } catch (e) {
      if (!tws || e instanceof InjectedCrash) throw e;
      failed = e instanceof Error ? e.message : String(e);
      report = await partitionedRunReport(plan, built.checkpoint, []);
      time.waitOutLease();
    }
    const head = await built.checkpoint.head();
    const batches: Array<{ batchId: number; rows: OutputRow[] }> = [];
    const droppedByStage: number[] = [];
    const deadLetterReasons: string[] = [];
    for (let id = lastCommitted + 1; id <= head.latestCommitBatch; id++) {
      batches.push({ batchId: id, rows: (await sinks.files.readBatch(id, types)) ?? [] });
      addPerStage(droppedByStage, droppedByStageInProgress(await built.checkpoint.readProgress(id)));
      for (const d of await built.deadLetters.read(id, 'malformed')) deadLetterReasons.push(String((d as { reason?: unknown }).reason ?? ''));
    }
    lastCommitted = head.latestCommitBatch;
    const result = {
      ...stepFromBatches(plan, batches, {
        watermark: report.watermark,
        stateRows: report.stateRows,
        droppedByWatermark: droppedByStage.reduce((a, b) => a + b, 0),
      }),
      // FORMAT-3: the dead letters the step's batches wrote, as the conformance runner reads them
      deadLetters: deadLetterReasons.length,
      deadLetterReasons,
      ...(tws ? { timers: await timersAfter(plan, built.state, head.latestCommitBatch) } : {}),
      ...(failed !== undefined ? { error: failed } : {}),
    };
    steps.push(isPipelineCase(c) ? asPipelineStep(result, { stateRows: report.stateRowsByOperator, droppedByStage }, caseStageOrder(c, plan)) : result);
    if (failed !== undefined) break;
  }
  return {
    name: c.name,
    result: { name: c.name, steps },
    dynamoRows: canonical(await sinks.dynamo.readAll(undefined, types)),
    fileRows: await sinks.files.readCommitted(types),
    fileKeys: await objectKeys(res.bucket, `${sinks.base}/files`),
    crashes,
    ms: Date.now() - t0,
  };
}

/** Rows in a canonical order (by their JSON with sorted keys), for multiset comparisons. */
export function canonical(rows: readonly OutputRow[]): OutputRow[] {
  return [...rows].sort((a, b) => (stableJson(a) < stableJson(b) ? -1 : stableJson(a) > stableJson(b) ? 1 : 0));
}

export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  return `{${Object.keys(v as object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

/** `fn` over `xs`, at most `limit` at a time, results in order. */
export async function pool<T, R>(xs: readonly T[], limit: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, xs.length) }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await fn(xs[i], i);
      }
    }),
  );
  return out;
}
