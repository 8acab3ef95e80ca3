/**
 * The conformance runner (FORMAT.md): every case through the code a deployed pipeline runs, the
 * S3 landing source, the S3 checkpoint, the DynamoDB state store and a recording S3 sink, on the
 * local AWS stack (or the endpoint configured).
 *
 * Each step is one scheduled run: the step's files land under the prefix, then a fresh executor
 * (nothing kept in memory) runs availableNow. With a crash point, the step's first run crashes
 * there and the next run finishes; the step's result is then read back from what is durable: the
 * sink's batch objects, the checkpoint's progress reports and its last commit.
 *
 * A crashed run keeps its lease, as a killed Lambda does, so the runs of a case share a clock
 * that jumps past the lease's expiry after each crash (the next run would otherwise stop with
 * `lease-held`):
 *
 *   crash run: acquire (until t+15 min) ─▶ InjectedCrash, lease still held
 *   clock += 15 min + 1 s
 *   next run:  acquire (expired: taken over, new token) ─▶ replay ─▶ commit ─▶ release
 */
import { gzipSync } from 'node:zlib';
import { parquetFileOf } from './parquet-file';
import { randomUUID } from 'node:crypto';
import {
  caseSourceInputs,
  caseStageOrder,
  caseToPlan,
  type CaseStaticTables,
  type ConformanceCase,
  isPipelineCase,
  recordLines,
  recordText,
  type StepFile,
  stepFileBytes,
  stepFileKey,
  stepInputFiles,
} from './case';
import { isTransformWithStateCase, processorChangesAt, stepClockMs } from './format-4';
import { staticTable } from '../engine/query/static-table';
import { addPerStage, asPipelineStep, type CaseResult, droppedByStageInProgress, type StepResult, stepFromBatches } from './results';
import type { CrashPlan, CrashPoint } from '../engine/testing/crash';
import { InjectedCrash, SluiceError } from '../engine/errors';
import type { Clock, OutputColumnType, OutputRow, Source } from '../engine/ports';
import { outputColumnTypes } from '../engine/run/runtime';
import type { SourceLocation } from '../aws/pipeline';
import type { QueryPlan, SourceSpec } from '../engine/plan/types';
import type { AwsConnection } from '../aws/config';
import { buildExecutor, type PipelineConfig } from '../aws/pipeline';
import { S3JsonSink } from '../aws/s3/json-sink';
import { S3FileSink } from '../aws/s3/file-sink';
import { DynamoDbSink } from '../aws/dynamodb/sink';
import { ensureBucket, ensureStateTable } from '../local/resources';
import { createClients } from '../aws/clients';
import { S3Requests } from '../aws/s3/requests';
import { partitionedRunReport, runPartitioned } from '../engine/schedule/driver';
import { WorkerPool } from '../local/workers';
import { timersAfter } from './tws-steps';

/** The lease of the runner's runs (the default of a pipeline), which its clock jumps past after a crash. */
const LEASE_MS = 15 * 60_000;

export interface ConformanceOptions {
  readonly connection: AwsConnection;
  /** Crash each step's first run: at a point (any batch), or a plan (`mid-sink@2`: that batch only). */
  readonly crash?: CrashPoint | CrashPlan;
  readonly bucket?: string;
  readonly stateTable?: string;
  /**
   * Which sink the case writes to and is read back from: s3 (one object per batch), files
   * (S3FileSink: the batches its log lists), dynamodb (DynamoDbSink: after each step, the items
   * the step's batches wrote; in update mode a key updated twice in one step shows its last value).
   */
  readonly sink?: 's3' | 'files' | 'dynamodb';
  /**
   * Builds the source for a case when not the S3 landing prefix (e.g. Kinesis): source 0 is the
   * query's first input, source k + 1 its plan.inputs[k] (a stream-stream join's).
   */
  readonly sourceFactory?: (plan: QueryPlan, caseId: string, sourceIndex: number) => Promise<CaseSource>;
  /** Runs the case with this many state partitions (the query's option('statePartitions', P)). */
  readonly statePartitions?: number;
  /**
   * Runs each step as a partitioned run on this many worker threads (lib/local/workers.ts): plan,
   * read, partition and commit tasks, as the deployed state machine runs them. S3 landing source only.
   */
  readonly workers?: number;
}

/** A place the runner can put a step's files and a source that reads them. */
export interface CaseSource {
  readonly source: Source;
  /** Where the source reads, for runs that build their own ports from the config (--workers). */
  readonly location?: SourceLocation;
  put(fileIndex: number, rows: Array<Record<string, unknown>>): Promise<void>;
}

export async function prepareConformance(conn: AwsConnection, bucket: string, table: string): Promise<void> {
  const clients = createClients(conn);
  await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
}

/** A case input's landing prefix: the first input's `landing`, the others' `landing-inK` (never a prefix of another's: listing appends the slash). */
function landingPrefix(base: string, sourceIndex: number): string {
  return sourceIndex === 0 ? `${base}/landing` : `${base}/landing-in${sourceIndex}`;
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 60);
}

/** The plan's output column types; none for a plan the executor will refuse (it says why). */
function typesOf(plan: QueryPlan): Readonly<Record<string, OutputColumnType>> {
  try {
    return outputColumnTypes(plan);
  } catch {
    return {};
  }
}

/**
 * Reads back the rows a sink durably holds for batches (from, to], by batch, each value read for
 * its output column's type (a DECIMAL with its scale, which a JSON number or a DynamoDB N alone
 * does not keep).
 */
function sinkReader(
  kind: NonNullable<ConformanceOptions['sink']>,
  clients: ReturnType<typeof createClients>,
  where: { bucket: string; table: string; base: string },
  types: Readonly<Record<string, OutputColumnType>>,
): (from: number, to: number) => Promise<Map<number, OutputRow[]>> {
  const { bucket, table, base } = where;
  if (kind === 'dynamodb') {
    const tableSink = new DynamoDbSink({ client: clients.dynamodb, tableName: table, queryKey: base });
    return async (from, to) => {
      const out = new Map<number, OutputRow[]>();
      for (const item of await tableSink.readItems(undefined, types)) {
        if (item.batchId > from && item.batchId <= to) out.set(item.batchId, [...(out.get(item.batchId) ?? []), item.row]);
      }
      return out;
    };
  }
  const reader =
    kind === 'files'
      ? new S3FileSink({ client: clients.s3, bucket, prefix: `${base}/sink` })
      : new S3JsonSink({ client: clients.s3, bucket, prefix: `${base}/sink` });
  return async (from, to) => {
    const out = new Map<number, OutputRow[]>();
    for (let id = from + 1; id <= to; id++) out.set(id, (await reader.readBatch(id, types)) ?? []);
    return out;
  };
}

/** What a case's landing files are written as: the source reads them by their key's format, not this. */
export const LANDING_CONTENT_TYPE = 'application/octet-stream';

export async function runCase(c: ConformanceCase, opts: ConformanceOptions): Promise<CaseResult> {
  const bucket = opts.bucket ?? 'sluice-conformance';
  const table = opts.stateTable ?? 'sluice-conformance-state';
  const base = `${randomUUID().slice(0, 8)}-${slug(c.name)}`;
  // The case's static tables become JSON-lines objects under the case's prefix, read back by the
  // S3 static table a deployed pipeline would use (written before the first run, below).
  const staticObjects: Array<{ key: string; rows: Array<Record<string, unknown>> }> = [];
  const tables: CaseStaticTables = (name, t) => {
    const key = `${base}/static/${slug(name)}/part-000000.json`;
    staticObjects.push({ key, rows: t.rows });
    return staticTable.s3(`s3://${bucket}/${base}/static/${slug(name)}/`, { format: 'json', schema: t.schema });
  };
  let plan: QueryPlan;
  const planName = `conf-${slug(c.name)}`.slice(0, 120);
  /** The plan of step `i` (FORMAT-4: a step may switch the processor module). */
  const planAt = (i: number): QueryPlan => {
    const p = caseToPlan(c, planName, tables, i);
    return opts.statePartitions !== undefined ? { ...p, statePartitions: opts.statePartitions } : p;
  };
  try {
    plan = planAt(0);
  } catch (e) {
    return { name: c.name, error: (e as Error).message };
  }
  const tws = isTransformWithStateCase(c);
  // A case that expects a refusal and got a plan: the query was accepted (compareCase says so).
  if (c.expectError !== undefined) return { name: c.name, steps: [] };
  let cfg: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: landingPrefix(base, 0) },
    ...(plan.inputs?.length ? { inputs: plan.inputs.map((_, k) => ({ kind: 's3' as const, bucket, prefix: landingPrefix(base, k + 1) })) } : {}),
    sink: { kind: 's3', bucket, prefix: `${base}/sink` },
    deadLetter: { bucket, prefix: `${base}/dead-letter` },
    leaseDurationMs: LEASE_MS,
  };
  const clients = createClients(opts.connection);
  // The case's files go through the engine's S3 request layer, whose retries ride out a dropped
  // connection (a keep-alive socket the endpoint closed as it was reused) as a run's own requests do.
  const s3 = new S3Requests(clients.s3, {}, 'conformance runner');
  for (const o of staticObjects) await s3.putText(bucket, o.key, recordLines(o.rows), LANDING_CONTENT_TYPE);
  // one source per input of the case: source 0 reads `from` (or the only input), k + 1 the plan's inputs[k]
  const inputNames = caseSourceInputs(c, plan);
  const caseSources = opts.sourceFactory ? await Promise.all(inputNames.map((_, i) => opts.sourceFactory!(plan, base, i))) : null;
  const sources = () => (caseSources ? { source: caseSources[0].source, inputSources: caseSources.slice(1).map((s) => s.source) } : {});
  const sinkKind = opts.sink ?? 's3';
  if (sinkKind === 'files') cfg = { ...cfg, sink: { kind: 's3-files', bucket, prefix: `${base}/sink` } };
  if (sinkKind === 'dynamodb') cfg = { ...cfg, sink: { kind: 'dynamodb', table, queryKey: base } };
  const readBatches = sinkReader(sinkKind, clients, { bucket, table, base }, typesOf(plan));
  const steps: StepResult[] = [];
  let fileNo = 0;
  /** Per input, the key (relative to its landing prefix) that sorts last of those written so far. */
  const lastKeys: string[] = [];
  let lastCommitted = -1;
  let passedMs = 0;
  let crashesFired = 0;
  const clock: Clock = { now: () => Date.now() + passedMs };
  const crashPlan: CrashPlan | undefined = typeof opts.crash === 'string' ? { point: opts.crash } : opts.crash;
  if (opts.workers !== undefined && caseSources) {
    // worker threads build their own ports from the config: point it at the case's streams
    if (caseSources.some((x) => !x.location)) return { name: c.name, error: '--workers needs sources the config can name (an S3 prefix or a Kinesis stream)' };
    cfg = { ...cfg, source: caseSources[0].location!, ...(caseSources.length > 1 ? { inputs: caseSources.slice(1).map((x) => x.location!) } : {}) };
  }
  const staticLines = Object.fromEntries(Object.entries(c.query.static ?? {}).map(([name, t]) => [name, t.rows.map(recordText)]));
  const poolAt = (step: number) =>
    opts.workers !== undefined
      ? new WorkerPool(opts.workers, {
          connection: opts.connection,
          config: cfg,
          plan: { kind: 'case', case: c, name: plan.name, statePartitions: opts.statePartitions, step, staticLines },
          maxSplits: 3,
        })
      : null;
  let pool = poolAt(0);
  /** The processing time of the step's runs (FORMAT-4 `clock`), undefined: the wall clock. */
  let processingTimeMs: number | undefined;
  const processingClock = (): Clock | undefined => {
    const at = processingTimeMs;
    return at === undefined ? undefined : { now: () => at };
  };
  let runNo = 0;
  const crashText = crashPlan ? `${crashPlan.point}${crashPlan.batchId !== undefined ? `@${crashPlan.batchId}` : ''}` : undefined;
  /** One scheduled run: the executor's, or a partitioned run on the pool (its result read back from the checkpoint). */
  const runOnce = async (crash?: CrashPlan): Promise<{ watermark: string; stateRows: number; stateRowsByOperator?: number[] }> => {
    if (!pool) {
      const r = await buildExecutor(opts.connection, plan, cfg, { crash, ...sources(), clock, processingClock: processingClock() }).executor.run();
      return r;
    }
    const { batches } = await runPartitioned(pool.handler({ crash: crash ? crashText : undefined, clockOffsetMs: passedMs, processingTimeMs }), {
      runId: `${base}-run-${++runNo}`,
      concurrency: opts.workers,
    });
    return partitionedRunReport(plan, buildExecutor(opts.connection, plan, cfg, { clock }).checkpoint, batches);
  };

  try {
    for (const [stepNo, step] of c.steps.entries()) {
      if (tws) {
        processingTimeMs = stepClockMs(c, step);
        if (processorChangesAt(c, stepNo)) {
          // a new processor module from this step on: the same checkpoint, state and timers (FORMAT-4 "Steps")
          plan = planAt(stepNo);
          if (pool) {
            await pool.close();
            pool = poolAt(stepNo);
          }
        }
      }
      for (const f of stepInputFiles(step)) {
        fileNo++;
        const at = inputNames.indexOf(f.input);
        if (at < 0)
          throw new SluiceError(
            `case ${c.name}: a step adds rows to input ${JSON.stringify(f.input)}, which the query does not have (${inputNames.join(', ')})`,
          );
        if (caseSources) {
          if (f.rows === undefined || f.key !== undefined)
            throw new SluiceError(
              `case ${c.name}: a file with "text" or a "key" of its own needs the S3 landing source, not --source ${caseSources[at].source.description}`,
            );
          await caseSources[at].put(fileNo, f.rows);
        } else {
          // FORMAT-3: a file's own key, or a name sorting after every key the case wrote before
          const spec = at === 0 ? plan.source : plan.inputs![at - 1].source;
          const rel = stepFileKey(f, fileNo, lastKeys[at], spec.format);
          if (lastKeys[at] === undefined || rel > lastKeys[at]) lastKeys[at] = rel;
          const body = await stepFileBody(f, rel, spec);
          await s3.putBytes(bucket, `${landingPrefix(base, at)}/${rel}`, body, LANDING_CONTENT_TYPE);
        }
      }
      if (crashPlan) {
        try {
          await runOnce(crashPlan);
        } catch (e) {
          // (a FORMAT-4 step that fails fails before the crash point too: the next run shows it)
          if (!(e instanceof InjectedCrash) && !tws) throw e;
          if (e instanceof InjectedCrash) crashesFired++;
          passedMs += LEASE_MS + 1000;
        }
      }
      // FORMAT-4: a run that fails is the step's result (its `error`), and the case's last step
      let failed: string | undefined;
      let report: { watermark: string; stateRows: number; stateRowsByOperator?: number[] };
      try {
        report = await runOnce();
      } catch (e) {
        if (!tws || e instanceof InjectedCrash) throw e;
        failed = e instanceof Error ? e.message : String(e);
        report = await partitionedRunReport(plan, buildExecutor(opts.connection, plan, cfg, { clock }).checkpoint, []);
      }
      const built = buildExecutor(opts.connection, plan, cfg, { ...sources(), clock });
      // What is durable: the step's batches are those committed since the previous step.
      const head = await built.checkpoint.head();
      const batches: Array<{ batchId: number; rows: OutputRow[] }> = [];
      const droppedByStage: number[] = [];
      const held = await readBatches(lastCommitted, head.latestCommitBatch);
      const deadLetterReasons: string[] = [];
      for (let id = lastCommitted + 1; id <= head.latestCommitBatch; id++) {
        batches.push({ batchId: id, rows: held.get(id) ?? [] });
        addPerStage(droppedByStage, droppedByStageInProgress(await built.checkpoint.readProgress(id)));
        for (const d of await built.deadLetters.read(id, 'malformed')) deadLetterReasons.push(String((d as { reason?: unknown }).reason ?? ''));
      }
      lastCommitted = head.latestCommitBatch;
      const dropped = droppedByStage.reduce((a, b) => a + b, 0);
      const result = {
        ...stepFromBatches(plan, batches, { watermark: report.watermark, stateRows: report.stateRows, droppedByWatermark: dropped }),
        deadLetters: deadLetterReasons.length,
        deadLetterReasons,
        ...(tws ? { timers: await timersAfter(plan, built.state, head.latestCommitBatch) } : {}),
        ...(failed !== undefined ? { error: failed } : {}),
      };
      steps.push(isPipelineCase(c) ? asPipelineStep(result, { stateRows: report.stateRowsByOperator, droppedByStage }, caseStageOrder(c, plan)) : result);
      if (failed !== undefined) break;
    }
  } catch (e) {
    const msg = e instanceof SluiceError ? e.message : `${(e as Error).name}: ${(e as Error).message}`;
    return { name: c.name, error: msg };
  } finally {
    await pool?.close();
    // (its sockets closed now, not when the endpoint times them out: a test run makes many cases' clients in one process)
    clients.destroy();
  }
  return { name: c.name, steps, ...(crashPlan ? { crashesFired } : {}) };
}

/**
 * A step file's bytes (FORMAT-3 "Step files"): its text, its rows as JSON lines, or for a Parquet
 * source its rows as one Parquet file written by DuckDB; gzip-compressed when its key ends in `.gz`.
 */
export async function stepFileBody(f: StepFile, key: string, spec: SourceSpec): Promise<Buffer> {
  if (spec.format !== 'parquet' || f.text !== undefined) return stepFileBytes(f, key);
  const bytes = await parquetFileOf(spec.schema, f.rows ?? []);
  return key.endsWith('.gz') ? gzipSync(bytes) : bytes;
}
