/**
 * The run loop, as Spark's MicroBatchExecution runs it for Trigger.AvailableNow:
 *
 *   take lease ─▶ read checkpoint head ─▶ replay an uncommitted batch N (same offsets, same
 *   watermarks) ─▶ note the source's latest offset once ─▶ for each batch:
 *
 *     plan end offsets (rate limits)
 *     write offsets/N {offsets, batchWatermarkMs, lateWatermarkMs, batchTimestampMs}   ◀─ before reading
 *     read ─▶ stateless stages ─▶ operator op0 ─▶ stages ─▶ op1 ─▶ ... (each evicts with its
 *       input watermark from batchWatermarkMs, drops late rows with the one from lateWatermarkMs)
 *     dead letters, late rows ─▶ sink.addBatch(N) ─▶ state.commit(version N)
 *     ─▶ write progress/N ─▶ write commits/N                                             ◀─ after effects
 *
 *   ─▶ after the last data batch, one no-data batch when the watermark moved and an operator can
 *   evict or emit (or, with option idleTimeout, when a run finds no data on a source idle that
 *   long: idleWatermark) ─▶ stop (or earlier, when the deadline leaves no room for another batch).
 *
 * Each batch's progress record (progress.ts) is timed step by step on the executor's clock,
 * written as progress/N before commits/N, and handed to RunOptions.onProgress after the commit.
 *
 * Offsets are only "processed" in memory until commits/N lands; a crash anywhere before that
 * makes the next run replay batch N from offsets/N, and every effect of N is idempotent by N.
 * The watermark arithmetic lives in watermark.ts; tests crash a run through decorated ports
 * (testing/crash.ts), so nothing here injects failures.
 */
import { createHash, randomUUID } from 'node:crypto';
import { CheckpointMismatchError, SluiceError } from './errors';
import { createOperator, StatefulOperator } from './operators/operator';
import { lateRowColumns } from './operators/stream-join';
import type {
  CheckpointStore,
  Clock,
  CommitEntry,
  DeadLetter,
  DeadLetterSink,
  Json,
  Lease,
  LeaseHandle,
  OffsetEntry,
  OutputColumnType,
  OutputRow,
  ReadOptions,
  ReadResult,
  Row,
  Sink,
  SinkContext,
  Source,
  StateChange,
  StateStore,
  StaticTables,
} from './ports';
import { systemClock } from './ports';
import { ChainedOperator, ColumnInfo, columnsAfter, operatorChain, outputColumns, QueryPlan, StatefulSpec, statefulShape } from './query';
import { backlogCount, type ProgressDurations, type ProgressListener, type SourceBacklog, type StateOperatorProgress, type StreamingProgress } from './progress';
import { applyStages, applyStagesAsync, hasJoin, StageResult, toOutputRow } from './rows';
import { JoinTables, planStages } from './join';
import { BatchWatermarks, MaxEventTimes, NO_WATERMARKS, OperatorWatermarks, operatorInputWatermarks, WatermarkPolicy, watermarkMoved, watermarksAfter } from './watermark';

export interface ExecutorDeps {
  readonly plan: QueryPlan;
  readonly source: Source;
  /** The sources of plan.inputs (stream-stream joins), in their order; their offsets follow `source`'s. */
  readonly inputSources?: readonly Source[];
  readonly checkpoint: CheckpointStore;
  readonly state: StateStore;
  readonly sink: Sink;
  /** Malformed input records go here (with their source location). */
  readonly deadLetters?: DeadLetterSink;
  /** Rows dropped by the watermark go here too, when set (sluice's late-data side output). */
  readonly lateRows?: DeadLetterSink;
  readonly lease?: Lease;
  readonly clock?: Clock;
  readonly log?: (event: Record<string, unknown>) => void;
  /**
   * What the ports' requests consumed, when they are metered (the AWS pipeline passes its
   * clients' RequestMeter): each progress record carries the batch's delta (sluice.consumed).
   */
  readonly meter?: ConsumptionMeter;
  /** Opens the static tables of the plan's stream-static joins (needed for S3 and DynamoDB tables). */
  readonly staticTables?: StaticTables;
}

/** A meter of the ports' billed requests (lib/aws/request/meter.ts's RequestMeter is one). */
export interface ConsumptionMeter {
  snapshot(): RunConsumption;
  since(before: RunConsumption): RunConsumption;
}

export interface ExecutorOptions {
  /** Offsets/commits kept in the checkpoint (older ones are purged). Default 100. */
  readonly retainBatches?: number;
  /** Lease duration; must exceed the longest batch. Default 15 minutes. */
  readonly leaseDurationMs?: number;
  readonly owner?: string;
}

export interface RunOptions {
  /** Absolute time (epoch ms) by which the run must have stopped. */
  readonly deadlineMs?: number;
  /**
   * Keep each batch's output rows in the run report (demos, tests). Off by default, so that a
   * run's memory follows one batch, not the backlog's output; the sink holds the rows.
   */
  readonly collectRows?: boolean;
  /**
   * Called with each batch's progress record once the batch committed (the CLI's live line); an
   * error it throws fails the run after that commit (the next run goes on from it).
   */
  readonly onProgress?: ProgressListener;
}

export interface BatchReport {
  readonly batchId: number;
  readonly replay: boolean;
  readonly noData: boolean;
  readonly numInputRows: number;
  readonly numOutputRows: number;
  /** The batch's output rows when the run collects them (RunOptions.collectRows), else empty. */
  readonly rows: OutputRow[];
  readonly batchWatermarkMs: number;
  readonly nextWatermarkMs: number;
  readonly droppedByWatermark: number;
  readonly deadLetters: number;
  readonly stateRows: number;
  /** State rows of each stateful operator after the batch, in plan order (stateRows is their total). */
  readonly stateRowsByOperator?: number[];
  /** Rows each stateful operator dropped as late, in plan order (droppedByWatermark is their total). */
  readonly droppedByOperator?: number[];
  readonly durationMs: number;
}

export type StopReason = 'done' | 'deadline' | 'lease-held';

export interface RunReport {
  readonly queryId: string;
  readonly queryName: string;
  readonly stoppedBy: StopReason;
  readonly batches: BatchReport[];
  /** The watermark after the run, ms (0 while there is none). */
  readonly watermarkMs: number;
  readonly watermark: string;
  readonly rowsIn: number;
  readonly rowsOut: number;
  readonly droppedByWatermark: number;
  readonly deadLetters: number;
  readonly stateRows: number;
  /** State rows of each stateful operator after the run, in plan order (stateRows is their total); the executor always fills it. */
  readonly stateRowsByOperator?: number[];
  /** Files or records still waiting when the run stopped early (0 when it finished). */
  readonly backlogLeft: number;
  readonly message?: string;
  /**
   * What about the query will hurt it in time, said on every run: e.g. a stream-stream join side
   * without a state watermark, whose buffered rows are never removed (its state grows forever).
   */
  readonly warnings?: string[];
  /** Each batch's progress record, in batch order: what progress/N holds, plus durationMs.commitOffsets. */
  readonly progress: StreamingProgress[];
  /**
   * What the run consumed of the services it ran on, when the ports are metered (the AWS
   * pipeline fills it, lib/aws/request/meter.ts; the in-memory ports leave it out).
   */
  readonly consumed?: RunConsumption;
}

/** A run's billed requests: DynamoDB request units and requests, S3 requests by price class. */
export interface RunConsumption {
  /** DynamoDB write request units the responses reported (on-demand WRU). */
  readonly writeUnits: number;
  /** DynamoDB read request units the responses reported (on-demand RRU). */
  readonly readUnits: number;
  readonly dynamodbRequests: number;
  /** Writes refused by their condition: billed by DynamoDB, but their error reports no units. */
  readonly dynamodbRefusedWrites: number;
  /** put: PUT, COPY, POST, LIST; get: GET, HEAD and the rest; free: DELETE (S3 charges nothing). */
  readonly s3Requests: { readonly put: number; readonly get: number; readonly free: number };
}

/** What a run carries from one batch to the next: the last commit, in effect. */
export interface Progress {
  nextBatchId: number;
  /** Per source (the first, then plan.inputs'), the end offset of the last batch. */
  offsets: Array<Json | null>;
  /** The watermarks the next batch runs with. */
  watermarks: BatchWatermarks;
  operatorWatermarksMs: OperatorWatermarks;
  stateRows: number;
  stateRowsByOperator: number[];
  hasCommit: boolean;
  /** The last batch's planned timestamp (inputRowsPerSecond's interval starts there), null before the first. */
  lastBatchTimestampMs: number | null;
  /** When a batch last read rows (option idleTimeout), null when unknown. */
  lastInputAtMs: number | null;
}

/** What the run loop measured of a batch before runBatch: its start and the steps before reading. */
export interface BatchStart {
  /** When the trigger started (before latestOffset on the run's first batch, else before planning). */
  readonly startedAtMs: number;
  readonly latestOffsetMs?: number;
  readonly walCommitMs?: number;
  /** The run's targets (latestOffset), per source: the backlog is measured up to them; undefined on a replay. */
  readonly targets?: ReadonlyArray<Json | null>;
  readonly consumedBefore?: RunConsumption;
}

/** The progress a run starts from: after its checkpoint's last commit, or from nothing. */
export function progressAfter(last: CommitEntry | null, latestCommitBatch: number, operators: number, sources: number): Progress {
  return {
    stateRowsByOperator: stateRowsOf(last, operators),
    nextBatchId: latestCommitBatch + 1,
    offsets: offsetsOf(last, sources),
    watermarks: last ? watermarksAfter(last) : NO_WATERMARKS,
    operatorWatermarksMs: { ...(last?.operatorWatermarksMs ?? {}) },
    stateRows: last?.stateRows ?? 0,
    hasCommit: last !== null,
    lastBatchTimestampMs: last ? (last.batchTimestampMs ?? last.committedAtMs) : null,
    // A checkpoint written before idleTimeout was set: count the idle time from its last commit.
    lastInputAtMs: last ? (last.lastInputAtMs ?? last.committedAtMs) : null,
  };
}

/** Each source's end offset in a commit (null for a source it does not list: none read yet). */
function offsetsOf(commit: CommitEntry | null, sources: number): Array<Json | null> {
  return Array.from({ length: sources }, (_, i) => commit?.offsets[i] ?? null);
}

/** Each operator's state rows after a commit (a one-operator commit has only the total). */
function stateRowsOf(commit: CommitEntry | null, operators: number): number[] {
  if (commit?.stateRowsByOperator && commit.stateRowsByOperator.length === operators) return [...commit.stateRowsByOperator];
  const out = new Array<number>(operators).fill(0);
  if (operators > 0) out[0] = commit?.stateRows ?? 0;
  return out;
}

/** Whether a batch reads nothing: no source's offsets moved (a no-data batch). */
export function movesNoSource(entry: OffsetEntry, sources: number): boolean {
  for (let i = 0; i < sources; i++) if (JSON.stringify(entry.startOffsets[i] ?? null) !== JSON.stringify(entry.offsets[i] ?? null)) return false;
  return true;
}

/** The watermarks an offset-log entry runs its batch with. */
export function watermarksOf(entry: OffsetEntry): BatchWatermarks {
  return { batchWatermarkMs: entry.batchWatermarkMs, lateWatermarkMs: entry.lateWatermarkMs };
}

/** What reading a batch gathered. */
export interface BatchRead {
  numInputRows: number;
  /** Rows read from each source (index as in OffsetEntry.offsets). */
  readonly perSource: number[];
  bytes: number;
  readonly deadLetters: DeadLetter[];
  readonly maxEventTimes: MaxEventTimes;
  /** A stateless query's rows after the stages (a stateful one feeds its operator instead). */
  readonly rows: Row[];
}

export type Accumulator = ReturnType<StatefulOperator['begin']>;
export type OperatorOutput = Awaited<ReturnType<Accumulator['finish']>>;

/** A stateful operator of the plan, built, with what it receives (its columns, its event-time columns) and the stages after it. */
export interface RunningOperator {
  readonly op: StatefulOperator;
  readonly chained: ChainedOperator;
}

/** What the batch's operators produced: the last stage's rows, and each operator's own output. */
export interface ChainOutput {
  readonly rows: Row[];
  readonly perOperator: OperatorOutput[];
}

/** The source's chunks, or its whole read as one chunk when it has no chunked read. */
export async function* readChunks(source: Source, batchId: number, start: Json | null, end: Json, options: ReadOptions): AsyncIterable<ReadResult> {
  if (source.readChunks) yield* source.readChunks(batchId, start, end, options);
  else yield await source.read(batchId, start, end, options);
}

/**
 * The type of each column a plan emits (after its post stages), by name: the window and session
 * keys are WINDOW (their rows hold `{start, end}`), unless a later stage replaced the column.
 */
export function outputColumnTypes(plan: QueryPlan): Record<string, OutputColumnType> {
  const out: Record<string, OutputColumnType> = {};
  for (const c of columnsAfter(outputColumns(plan), plan.post)) out[c.name] = c.window ? 'WINDOW' : c.type;
  return out;
}

/**
 * The source columns a plan reads, when they are known: an aggregation behind watermarks only
 * reads its keys, its aggregated columns and its watermark columns. Undefined (all columns) when
 * a stage runs user code over whole rows (filter, withColumn), for deduplication and stateless
 * queries (they emit input rows), and when late rows are written out whole.
 */
export function columnsRead(plan: QueryPlan, writesLateRows: boolean): string[] | undefined {
  const stateful = plan.stateful;
  if (writesLateRows || !stateful || stateful.kind !== 'aggregate') return undefined;
  const cols = new Set<string>();
  for (const stage of plan.stages) {
    if (stage.kind !== 'watermark') return undefined;
    cols.add(stage.column);
  }
  for (const k of stateful.keys) cols.add(k.kind === 'column' ? k.name : k.column);
  for (const a of stateful.aggs) if (a.column !== undefined && a.column !== '*') cols.add(a.column);
  return plan.source.schema.columns.map((c) => c.name).filter((c) => cols.has(c));
}

export function shapeFingerprint(shape: Json): string {
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 32);
}

const LATE_ROW_REASON = 'older than the watermark: its window or event time is at or before the watermark of the previous batch';

export class MicroBatchExecutor {
  protected readonly plan: QueryPlan;
  /** The stateful operators in plan order (op0, op1, ...). */
  protected readonly operators: RunningOperator[];
  protected readonly outColumns: ColumnInfo[];
  protected readonly clock: Clock;
  protected readonly shape: Json;
  protected readonly fingerprint: string;
  protected readonly log: (event: Record<string, unknown>) => void;
  protected readonly retain: number;
  protected readonly leaseMs: number;
  protected readonly owner: string;
  protected readonly watermarks: WatermarkPolicy;
  /** The lease this run holds (renewed between batches). */
  protected currentLease: LeaseHandle | null = null;
  protected collectRows = false;
  protected readonly readOptions: ReadOptions;
  /** The run's static tables when the plan joins one (its stages then run on the async path). */
  protected joins: JoinTables | null = null;
  /** The query's sources: the first, then those of plan.inputs; each with its own rate limits. */
  protected readonly sources: readonly Source[];
  protected readonly limits: readonly QueryPlan['limits'][];
  /** RunReport.warnings: the same for every run of the plan. */
  protected readonly warnings: string[];

  constructor(private readonly deps: ExecutorDeps, options: ExecutorOptions = {}) {
    this.plan = deps.plan;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? (() => undefined);
    this.retain = options.retainBatches ?? 100;
    this.leaseMs = options.leaseDurationMs ?? 15 * 60_000;
    this.owner = options.owner ?? randomUUID();
    this.shape = statefulShape(this.plan);
    this.fingerprint = shapeFingerprint(this.shape);
    this.watermarks = new WatermarkPolicy(this.plan);
    // each operator with its own input columns and event-time columns (its marks)
    this.operators = operatorChain(this.plan).operators.map((chained) => ({
      chained,
      op: createOperator(chained.spec, { operatorId: chained.operatorId, outputMode: this.plan.outputMode, inputColumns: chained.inputColumns, watermarks: chained.marks, statePartitions: this.plan.statePartitions, join: chained.join }),
    }));
    this.outColumns = columnsAfter(outputColumns(this.plan), this.plan.post);
    this.readOptions = { columns: columnsRead(this.plan, deps.lateRows !== undefined) };
    JoinTables.check(this.plan, deps.staticTables);
    const inputs = this.plan.inputs ?? [];
    if ((deps.inputSources?.length ?? 0) !== inputs.length) {
      throw new SluiceError(`query ${this.plan.name} joins ${inputs.length} other stream(s) (${inputs.map((i) => i.name).join(', ') || 'none'}) but the executor was given ${deps.inputSources?.length ?? 0} input source(s): pass one Source per input in inputSources`, { retriable: false });
    }
    this.sources = [deps.source, ...(deps.inputSources ?? [])];
    this.limits = [this.plan.limits, ...inputs.map((i) => i.limits)];
    this.warnings = stateWarnings(this.plan, this.operators.map((o) => o.chained));
  }

  get sinkContext(): Omit<SinkContext, 'queryId'> {
    const stateful = this.operators.length ? this.operators[this.operators.length - 1].chained.spec : null;
    const keyColumns =
      stateful && stateful.kind === 'aggregate'
        ? stateful.keys.map((k) => (k.kind === 'column' ? k.name : k.kind === 'window' ? 'window' : 'session_window'))
        : [];
    const columnTypes = outputColumnTypes(this.plan);
    return { queryName: this.plan.name, outputMode: this.plan.outputMode, columns: this.outColumns.map((c) => c.name), columnTypes, keyColumns };
  }

  /** Runs availableNow: everything present at the start, then stop. */
  async run(opts: RunOptions = {}): Promise<RunReport> {
    // Static tables are read (or looked up) once per run: a new run sees the table as it is now.
    if (hasJoin(planStages(this.plan))) this.joins = new JoinTables(this.deps.staticTables);
    let handle: LeaseHandle | null = null;
    if (this.deps.lease) {
      handle = await this.deps.lease.acquire(this.owner, this.leaseMs);
      if (!handle) {
        const message = `another run of query ${this.plan.name} holds its lease; this run exits without doing anything (the next scheduled run continues)`;
        this.log({ event: 'lease-held', query: this.plan.name });
        return this.emptyReport('', 'lease-held', message);
      }
    }
    this.currentLease = handle;
    this.collectRows = opts.collectRows ?? false;
    // A run that ends, or fails with an error it can report, gives the lease back so that the next
    // scheduled run need not wait. A killed Lambda never gets here: its lease stays held until it
    // expires (the crash decorators' lease does the same after an injected crash; testing/crash.ts).
    try {
      return await this.runHeld(opts);
    } finally {
      if (this.currentLease && this.deps.lease) await this.deps.lease.release(this.currentLease);
      this.currentLease = null;
    }
  }

  protected emptyReport(queryId: string, stoppedBy: StopReason, message?: string): RunReport {
    return {
      queryId, queryName: this.plan.name, stoppedBy, batches: [], watermarkMs: 0, watermark: new Date(0).toISOString(),
      rowsIn: 0, rowsOut: 0, droppedByWatermark: 0, deadLetters: 0, stateRows: 0, stateRowsByOperator: this.operators.map(() => 0), backlogLeft: 0, progress: [], message,
    };
  }

  /**
   * A no-data batch is due when some operator that can evict or emit would evict with a later
   * input watermark than in the last batch (each derived from the global one: watermark.ts).
   */
  protected noDataBatchDue(progress: Progress): boolean {
    return progress.hasCommit && this.operators.some((o) => o.op.runsNoDataBatches && watermarkMoved(progress.watermarks, o.chained.watermarkOffsetMs));
  }

  protected runsNoDataBatches(): boolean {
    return this.operators.some((o) => o.op.runsNoDataBatches);
  }

  /**
   * option idleTimeout (sluice's, not Spark's): the watermark of a no-data batch on a source that
   * has had no rows for at least the timeout, or null when none is due. Event time is taken to
   * have kept pace with the wall clock since the last batch that read rows:
   *
   *     rows read ─── L ──────── idle ≥ timeout ──────── now (a run without new data)
   *     watermark     W (from the data: max event time − delay)     W + (now − L)
   *
   * never beyond that, never back (only when it exceeds the watermark the next batch would run
   * with), and only while state holds rows a later watermark could emit or drop.
   */
  protected idleWatermark(progress: Progress): number | null {
    const timeoutMs = this.plan.idleTimeoutMs;
    if (timeoutMs === undefined || !this.runsNoDataBatches() || !progress.hasCommit) return null;
    if (progress.stateRows === 0 || progress.lastInputAtMs === null) return null;
    const idleMs = this.clock.now() - progress.lastInputAtMs;
    if (idleMs < timeoutMs || Object.keys(progress.operatorWatermarksMs).length === 0) return null;
    const candidate = this.watermarks.global(NO_WATERMARKS, progress.operatorWatermarksMs) + idleMs;
    return candidate > progress.watermarks.batchWatermarkMs ? candidate : null;
  }

  protected async runHeld(opts: RunOptions): Promise<RunReport> {
    const { checkpoint } = this.deps;
    const head = await checkpoint.head();
    let last: CommitEntry | null = null;
    if (head.latestCommitBatch >= 0) {
      last = await checkpoint.readCommit(head.latestCommitBatch);
      if (!last) throw new CheckpointMismatchError(`checkpoint ${checkpoint.description} lists commits/${head.latestCommitBatch} but it cannot be read: restore it from a backup or start a new checkpoint location`);
    }
    const queryId = await this.checkShape(last, head.metadata);
    const progress = progressAfter(last, head.latestCommitBatch, this.operators.length, this.sources.length);
    await this.keepStateAlive(last);
    const reports: BatchReport[] = [];
    const records: StreamingProgress[] = [];
    const runId = randomUUID();
    let maxBatchMs = 0;
    let dataBatches = 0;
    const runBatch = async (entry: OffsetEntry, replay: boolean, noData: boolean, start: BatchStart) => {
      const t0 = this.clock.now();
      const done = await this.runBatch({ queryId, runId }, entry, progress, replay, noData, start);
      reports.push(done.report);
      records.push(done.record);
      if (!noData) dataBatches++;
      maxBatchMs = Math.max(maxBatchMs, this.clock.now() - t0);
      opts.onProgress?.(done.record);
      await this.renewLeaseIfHalfGone();
    };
    const batchStart = (): Pick<BatchStart, 'startedAtMs' | 'consumedBefore'> => ({ startedAtMs: this.clock.now(), consumedBefore: this.deps.meter?.snapshot() });

    /** Too little time left for another batch: less than 1.5 times the longest so far, at least 3 s. */
    const deadlineNear = () => opts.deadlineMs !== undefined && this.clock.now() + Math.max(3000, maxBatchMs * 1.5) > opts.deadlineMs;

    // Recovery: offsets/N without commits/N means batch N may have had some effects. Re-run it
    // with exactly the logged offsets and watermarks, unless the deadline leaves no room for a
    // batch (the 3 s floor): then the run stops before it, and the next run replays it.
    if (head.latestOffsetBatch >= progress.nextBatchId && deadlineNear()) {
      this.log({ event: 'replay-deferred', batchId: progress.nextBatchId });
      let backlogLeft = 0;
      for (let i = 0; i < this.sources.length; i++) {
        const src = this.sources[i];
        if (src.backlog) backlogLeft += backlogCount(await src.backlog(progress.offsets[i], await src.latestOffset(progress.offsets[i])));
      }
      return { ...this.emptyReport(queryId, 'deadline'), watermarkMs: progress.watermarks.batchWatermarkMs, watermark: new Date(progress.watermarks.batchWatermarkMs).toISOString(), stateRows: progress.stateRows, stateRowsByOperator: [...progress.stateRowsByOperator], backlogLeft };
    }
    if (head.latestOffsetBatch >= progress.nextBatchId) {
      const start = batchStart();
      const entry = await checkpoint.readOffsets(progress.nextBatchId);
      if (!entry) {
        throw new CheckpointMismatchError(
          `checkpoint ${checkpoint.description} has offsets up to batch ${head.latestOffsetBatch} but no offsets/${progress.nextBatchId} after commits/${progress.nextBatchId - 1}: restore the missing entry or start a new checkpoint location`,
        );
      }
      this.checkReplayAge(entry);
      this.log({ event: 'replay', batchId: entry.batchId });
      await runBatch(entry, true, movesNoSource(entry, this.sources.length), start);
    }

    // availableNow: note the target once; data arriving during the run waits for the next one.
    let first: Pick<BatchStart, 'startedAtMs' | 'consumedBefore' | 'latestOffsetMs'> | null = batchStart();
    const targets: Array<Json | null> = [];
    for (let i = 0; i < this.sources.length; i++) targets.push(await this.sources[i].latestOffset(progress.offsets[i]));
    first = { ...first, latestOffsetMs: this.clock.now() - first.startedAtMs };
    let stoppedBy: StopReason = 'done';
    let idleTried = false;
    for (;;) {
      if (deadlineNear()) {
        stoppedBy = 'deadline';
        break;
      }
      const start: Pick<BatchStart, 'startedAtMs' | 'consumedBefore' | 'latestOffsetMs'> = first ?? batchStart();
      first = null;
      // each source planned on its own, with its own limits; one without new data stays where it was
      const ends: Array<Json | null> = [];
      for (let i = 0; i < this.sources.length; i++) {
        const target = targets[i];
        ends.push(target === null ? null : await this.sources[i].planBatch(progress.nextBatchId, progress.offsets[i], target, this.limits[i]));
      }
      const noData = ends.every((e) => e === null);
      let watermarks = progress.watermarks;
      let idle = false;
      if (noData) {
        if (!this.noDataBatchDue(progress)) {
          // A run without new data on a source idle for idleTimeout: one no-data batch whose
          // watermark follows the wall clock (idleWatermark), so that the last windows close.
          const idleWm = dataBatches === 0 && !idleTried ? this.idleWatermark(progress) : null;
          idleTried = true;
          if (idleWm === null) break;
          watermarks = { ...watermarks, batchWatermarkMs: idleWm };
          idle = true;
        }
      }
      const entry: OffsetEntry = {
        batchId: progress.nextBatchId,
        startOffsets: [...progress.offsets],
        offsets: ends.map((e, i) => e ?? progress.offsets[i]),
        batchWatermarkMs: watermarks.batchWatermarkMs,
        lateWatermarkMs: watermarks.lateWatermarkMs,
        batchTimestampMs: this.clock.now(),
        ...(idle ? { watermarkAdvancedByIdleness: true } : {}),
      };
      await checkpoint.writeOffsets(entry);
      await runBatch(entry, false, noData, { ...start, walCommitMs: this.clock.now() - start.startedAtMs - (start.latestOffsetMs ?? 0), targets });
      // Trigger.Once: one data batch (plus the no-data batch it makes due), then stop.
      if (this.plan.trigger === 'once' && !noData && !this.noDataBatchDue(progress)) break;
    }
    let backlogLeft = 0;
    if (stoppedBy === 'deadline') {
      for (let i = 0; i < this.sources.length; i++) {
        const src = this.sources[i];
        if (src.backlog) backlogLeft += backlogCount(await src.backlog(progress.offsets[i], targets[i]));
      }
    }
    const sum = (f: (b: BatchReport) => number) => reports.reduce((a, b) => a + f(b), 0);
    const watermarkMs = progress.watermarks.batchWatermarkMs;
    const report: RunReport = {
      queryId,
      queryName: this.plan.name,
      stoppedBy,
      batches: reports,
      watermarkMs,
      watermark: new Date(watermarkMs).toISOString(),
      rowsIn: sum((b) => b.numInputRows),
      rowsOut: sum((b) => b.numOutputRows),
      droppedByWatermark: sum((b) => b.droppedByWatermark),
      deadLetters: sum((b) => b.deadLetters),
      stateRows: progress.stateRows,
      stateRowsByOperator: [...progress.stateRowsByOperator],
      backlogLeft,
      progress: records,
    };
    for (const warning of this.warnings) this.log({ event: 'state-grows-forever', query: this.plan.name, warning });
    this.log({ event: 'run-finished', query: this.plan.name, stoppedBy, batches: reports.length, watermark: report.watermark, rowsIn: report.rowsIn, rowsOut: report.rowsOut, backlogLeft });
    return this.warnings.length ? { ...report, warnings: [...this.warnings] } : report;
  }

  /**
   * Refuses to replay a batch planned longer ago than what the replay relies on is kept: the state
   * store's superseded versions (StateStore.retentionMs, stateful queries) and the sink's replay
   * records (Sink.retentionMs: the DynamoDB sink's chunk markers, foreachBatch's effect markers).
   * Past the shortest of them the replay would emit wrong output or repeat effects instead of failing.
   */
  protected checkReplayAge(entry: OffsetEntry): void {
    const { state, sink } = this.deps;
    const kept = [
      ...(this.operators.length && state.retentionMs !== undefined ? [{ ms: state.retentionMs, what: `${state.description} keeps the state versions a replay reads`, fix: 'restore the state table (point-in-time recovery) to before then and run again' }] : []),
      ...(sink.retentionMs !== undefined ? [{ ms: sink.retentionMs, what: `${sink.description} keeps the records that make its replay skip what it wrote`, fix: 'restore the sink table (point-in-time recovery) to before then and run again' }] : []),
    ].sort((a, b) => a.ms - b.ms);
    if (!kept.length) return;
    const { ms: retentionMs, what, fix } = kept[0];
    const ageMs = this.clock.now() - entry.batchTimestampMs;
    if (ageMs < retentionMs) return;
    const days = (ms: number) => `${(ms / 86_400_000).toFixed(1)} days`;
    throw new CheckpointMismatchError(
      `batch ${entry.batchId} of query ${this.plan.name} waits for its replay since ${new Date(entry.batchTimestampMs).toISOString()} (${days(ageMs)}), longer than ${what} (${days(retentionMs)}): ` +
        `${fix}, or start a new checkpoint location and backfill`,
      { details: { batchId: entry.batchId, batchTimestampMs: entry.batchTimestampMs, ageMs, retentionMs } },
    );
  }

  /**
   * An idle pipeline's state outlives the idle time: when the last commit is older than the
   * store's keepAliveAfterMs, the store rewrites what of the committed state would expire.
   */
  protected async keepStateAlive(last: CommitEntry | null): Promise<void> {
    const { state } = this.deps;
    if (!this.operators.length || !last || !state.keepAlive || state.keepAliveAfterMs === undefined) return;
    if (this.clock.now() - last.committedAtMs < state.keepAliveAfterMs) return;
    this.log({ event: 'state-keep-alive', batchId: last.batchId, idleMs: this.clock.now() - last.committedAtMs });
    for (const o of this.operators) await state.keepAlive(o.op.spec, last.batchId, this.currentLease ?? undefined);
  }

  /** Renews the lease between batches once half of it has gone by. */
  protected async renewLeaseIfHalfGone(): Promise<void> {
    const held = this.currentLease;
    if (held && this.deps.lease && held.expiresAtMs - this.clock.now() < this.leaseMs / 2) {
      this.currentLease = await this.deps.lease.renew(held, this.leaseMs);
    }
  }

  /** Refuses a checkpoint written by a query of another stateful shape; returns the query id. */
  protected async checkShape(last: CommitEntry | null, meta: { id: string; shapeFingerprint: string; shape: Json; statePartitions?: number } | null): Promise<string> {
    const stored = last
      ? { id: last.queryId, fp: last.shapeFingerprint, partitions: last.statePartitions ?? 1 }
      : meta
        ? { id: meta.id, fp: meta.shapeFingerprint, partitions: meta.statePartitions ?? 1 }
        : null;
    if (stored) {
      if (this.plan.stateful && stored.partitions !== this.plan.statePartitions) {
        throw new CheckpointMismatchError(
          `query ${this.plan.name} asks for statePartitions ${this.plan.statePartitions}, but its checkpoint ${this.deps.checkpoint.description} was created with ${stored.partitions}: the partition count is fixed with the state, so set option('statePartitions', ${stored.partitions}), or give the query a new checkpoint location and backfill`,
          { details: { stored: stored.partitions, given: this.plan.statePartitions } },
        );
      }
      if (stored.fp !== this.fingerprint) {
        const was = meta ? ` (checkpoint: ${JSON.stringify(meta.shape)})` : '';
        throw new CheckpointMismatchError(
          `query ${this.plan.name} does not match its checkpoint ${this.deps.checkpoint.description}: its stateful shape (grouping keys, aggregations, window, dedup keys, output mode) is now ${JSON.stringify(this.shape)}${was}, and state of another shape cannot be reused; revert the change, or give the query a new checkpoint location and backfill`,
        );
      }
      return stored.id;
    }
    const id = randomUUID();
    await this.deps.checkpoint.writeMetadata({
      id,
      name: this.plan.name,
      createdAtMs: this.clock.now(),
      shape: this.shape,
      shapeFingerprint: this.fingerprint,
      ...(this.plan.statePartitions > 1 ? { statePartitions: this.plan.statePartitions } : {}),
    });
    return id;
  }

  /**
   * One batch, its effects in the order that makes each of them safe to repeat on a replay:
   *
   *   read ─▶ operator (state reads at N−1) ─▶ state.check(N) ─▶ dead letters, late rows
   *     ─▶ sink.addBatch(N) ─▶ state.commit(N, lease) ─▶ progress/N ─▶ commits/N
   *   └─ getBatch ─┘└──────────────────── addBatch ──────────────────┘└ stateCommit ┘     └ commitOffsets
   *
   * A stateless batch to a sink with addBatchChunks: read ─▶ stages ─▶ sink, a chunk at a time
   * (streamToSink) ─▶ dead letters ─▶ progress/N ─▶ commits/N.
   */
  protected async runBatch(
    ids: { readonly queryId: string; readonly runId: string },
    entry: OffsetEntry,
    progress: Progress,
    replay: boolean,
    noData: boolean,
    start: BatchStart,
  ): Promise<{ report: BatchReport; record: StreamingProgress }> {
    const { queryId } = ids;
    const t0 = this.clock.now();
    const statsBefore = this.storeStats();
    const id = entry.batchId;
    // Each operator evicts with its input watermark derived from the batch's and drops late rows with
    // the one derived from the previous batch's (operatorInputWatermarks).
    const accs = this.beginOperators(entry);
    // the first operator of the query's own pipeline takes the first source's rows as they are read
    const first = this.operators.findIndex((o) => o.chained.input === null);
    const acc = first >= 0 ? accs[first] : null;
    const sinkCtx: SinkContext = { ...this.sinkContext, queryId, lease: this.currentLease ?? undefined };
    // A stateless batch goes to a sink that takes chunks as it is read (streamToSink): first effect.
    // Its getBatch time then includes the sink's writes.
    const streamed = !acc && !noData && this.deps.sink.addBatchChunks ? await this.streamToSink(entry, sinkCtx) : null;
    const read = streamed ?? (noData ? emptyRead() : await this.read(entry, acc));
    const tRead = this.clock.now();
    const result: ChainOutput = acc ? await this.runOperators(accs, entry, read) : { rows: read.rows, perOperator: [] };
    // Before any effect: a change a store cannot hold fails the batch here, not after the sink.
    if (this.deps.state.check) {
      for (let i = 0; i < this.operators.length; i++) {
        const changes = result.perOperator[i].changes;
        if (changes.length) await this.deps.state.check(this.operators[i].op.spec, id, changes);
      }
    }
    const output = streamed ? (streamed.rows as OutputRow[]) : result.rows.map((r) => toOutputRow(r, this.outColumns));

    await this.writeDeadLetters(id, read.deadLetters);
    await this.writeLateRows(entry, result.perOperator);
    if (!streamed) await this.deps.sink.addBatch(id, output, sinkCtx);
    const tAdd = this.clock.now();
    const commitTimes = await this.commitState(id, result.perOperator);
    const tState = this.clock.now();

    const stateRowsByOperator = this.operators.map((_, i) => progress.stateRowsByOperator[i] + result.perOperator[i].stateRowsDelta);
    const droppedByOperator = result.perOperator.map((r) => r.late.length);
    const commit = this.commitEntry(queryId, entry, progress, read, stateRowsByOperator);
    const durationMs = this.clock.now() - t0;
    const report: BatchReport = {
      batchId: id,
      replay,
      noData,
      numInputRows: read.numInputRows,
      numOutputRows: streamed ? streamed.numOutputRows : output.length,
      rows: this.collectRows ? output : [],
      batchWatermarkMs: entry.batchWatermarkMs,
      nextWatermarkMs: commit.nextBatchWatermarkMs,
      droppedByWatermark: droppedByOperator.reduce((a, b) => a + b, 0),
      deadLetters: read.deadLetters.length,
      stateRows: commit.stateRows!,
      stateRowsByOperator,
      droppedByOperator,
      durationMs,
    };
    const backlog: Array<SourceBacklog | undefined> = [];
    for (let i = 0; i < this.sources.length; i++) {
      const src = this.sources[i];
      backlog.push(start.targets !== undefined && src.backlog ? await src.backlog(commit.offsets[i] ?? null, start.targets[i] ?? null) : undefined);
    }
    const record = this.progressRecord(ids, entry, progress, report, read, {
      start,
      durations: { getBatch: tRead - t0, addBatch: tAdd - tRead, stateCommit: tState - tAdd },
      perOperator: result.perOperator,
      commitTimes,
      numLateRowsKept: this.deps.lateRows ? report.droppedByWatermark : 0,
      storeStats: diffStats(statsBefore, this.storeStats()),
      backlog,
    });
    // Progress before the commit, so that a batch that committed always has its report (a replay
    // rewrites it with the same figures); the commit's own time joins the reported record only.
    await this.writeProgress(record);
    const tCommit = this.clock.now();
    await this.deps.checkpoint.writeCommit(commit);
    const commitOffsets = this.clock.now() - tCommit;
    advance(progress, commit);

    if (id > 0 && id % 10 === 0 && id - this.retain > 0) await this.purge(id, id - this.retain);
    this.log({ event: 'batch', batchId: id, replay, noData, rowsIn: report.numInputRows, rowsOut: report.numOutputRows, watermark: new Date(entry.batchWatermarkMs).toISOString(), droppedByWatermark: report.droppedByWatermark, deadLetters: report.deadLetters, durationMs });
    return { report, record: { ...record, durationMs: { ...record.durationMs, commitOffsets } } };
  }

  /** Each operator's accumulator for batch N, with its input watermarks derived from the batch's. */
  protected beginOperators(entry: OffsetEntry): Accumulator[] {
    const inputWms = operatorInputWatermarks(watermarksOf(entry), this.operators.map((o) => o.chained.watermarkOffsetMs));
    return this.operators.map((o, i) => o.op.begin({ batchId: entry.batchId, evictWm: inputWms[i].batchWatermarkMs, lateWm: inputWms[i].lateWatermarkMs }));
  }

  /**
   * The batch's operators: the first of the query's pipeline has taken the batch's rows as they
   * were read; each next one takes what the one before emitted, after the stateless stages between
   * them; a stream-stream join also takes its input's rows, after that input's own pipeline. Each
   * reads its state at version N−1 (nothing is committed before all of them finished).
   */
  protected async runOperators(accs: Accumulator[], entry: OffsetEntry, read: BatchRead, state: StateStore = this.deps.state): Promise<ChainOutput> {
    const perOperator: OperatorOutput[] = new Array(accs.length);
    const rows = await this.finishPipeline(null, accs, entry, read, perOperator, state);
    return { rows, perOperator };
  }

  /** The operators of one pipeline (the query's: null, or an input's) in order; their last stage's rows. */
  protected async finishPipeline(input: number | null, accs: Accumulator[], entry: OffsetEntry, read: BatchRead, perOperator: OperatorOutput[], state: StateStore): Promise<Row[]> {
    let rows: Row[] = [];
    let fed = true;
    for (let i = 0; i < this.operators.length; i++) {
      const o = this.operators[i];
      if (o.chained.input !== input) continue;
      if (!fed && rows.length) accs[i].add(rows);
      fed = false;
      const spec = o.chained.spec;
      if (spec.kind === 'streamJoin') accs[i].addRight!(await this.inputRows(spec.input, accs, entry, read, perOperator, state));
      const out = await accs[i].finish(state);
      perOperator[i] = out;
      rows = (this.joins ? await this.runStages(o.chained.post, out.rows) : applyStages(o.chained.post, out.rows)).rows;
    }
    return rows;
  }

  /** Input k's rows of the batch (plan.inputs[k]), after its own pipeline: read, its stages, its operators. */
  protected async inputRows(k: number, accs: Accumulator[], entry: OffsetEntry, read: BatchRead, perOperator: OperatorOutput[], state: StateStore): Promise<Row[]> {
    const first = this.operators.findIndex((o) => o.chained.input === k);
    const rows: Row[] = [];
    for await (const chunk of this.stagedChunks(entry, read, k + 1)) {
      if (first >= 0) accs[first].add(chunk);
      else for (const r of chunk) rows.push(r);
    }
    return first >= 0 ? this.finishPipeline(k, accs, entry, read, perOperator, state) : rows;
  }

  /** The state store's counters now (StateStore.stats), numbers only; null when it keeps none. */
  protected storeStats(): Record<string, number> | null {
    if (!this.operators.length || !this.deps.state.stats) return null;
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(this.deps.state.stats())) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
    return out;
  }

  /**
   * Reads the batch chunk by chunk, running the stateless stages and feeding the operator's
   * in-memory aggregate as it goes: memory follows the batch's distinct keys, not its rows.
   */
  protected async read(entry: OffsetEntry, acc: Accumulator | null): Promise<BatchRead> {
    const read = emptyRead();
    for await (const rows of this.stagedChunks(entry, read)) {
      if (acc) acc.add(rows);
      else for (const r of rows) read.rows.push(r);
    }
    return read;
  }

  /**
   * A source's chunks after its stateless stages, noting in `read` what they held (source 0: the
   * query's first; source k + 1: plan.inputs[k]). A source whose offsets did not move is not read.
   */
  protected async *stagedChunks(entry: OffsetEntry, read: BatchRead, sourceIndex = 0): AsyncGenerator<Row[]> {
    const start = entry.startOffsets[sourceIndex] ?? null;
    const end = entry.offsets[sourceIndex] ?? null;
    if (end === null || JSON.stringify(start) === JSON.stringify(end)) return;
    const stages = sourceIndex === 0 ? this.plan.stages : this.plan.inputs![sourceIndex - 1].stages;
    const options = sourceIndex === 0 ? this.readOptions : {};
    for await (const chunk of readChunks(this.sources[sourceIndex], entry.batchId, start, end, options)) {
      read.numInputRows += chunk.rows.length;
      read.perSource[sourceIndex] = (read.perSource[sourceIndex] ?? 0) + chunk.rows.length;
      read.bytes += chunk.bytes;
      for (const d of chunk.deadLetters) read.deadLetters.push(d);
      const staged = this.joins ? await this.runStages(stages, chunk.rows) : applyStages(stages, chunk.rows);
      read.maxEventTimes.observe(staged.maxEventTime, staged.eventTimes);
      yield staged.rows;
    }
  }

  /**
   * A stateless batch, streamed: each source chunk through the stages to the sink's
   * addBatchChunks, the next read only when the sink asks for it, so memory follows one chunk.
   * The chunks (empty ones left out) are the same on a replay: same offsets, same order, row by row.
   * `rows` keeps the output only for RunOptions.collectRows.
   *
   *   source chunk 0 ─▶ stages ─▶ sink writes it ─▶ source chunk 1 ─▶ ... ─▶ sink returns
   *   ─▶ dead letters (gathered over the read) ─▶ progress/N ─▶ commits/N
   */
  protected async streamToSink(entry: OffsetEntry, ctx: SinkContext): Promise<BatchRead & { numOutputRows: number }> {
    const read = { ...emptyRead(), numOutputRows: 0 };
    let ended = false;
    const output = async function* (this: MicroBatchExecutor): AsyncGenerator<OutputRow[]> {
      for await (const rows of this.stagedChunks(entry, read)) {
        const out = (this.joins ? await this.runStages(this.plan.post, rows) : applyStages(this.plan.post, rows)).rows.map((r) => toOutputRow(r, this.outColumns));
        read.numOutputRows += out.length;
        if (this.collectRows) for (const r of out) read.rows.push(r);
        if (out.length > 0) yield out;
      }
      ended = true;
    }.call(this);
    await this.deps.sink.addBatchChunks!(entry.batchId, output, ctx);
    if (!ended) throw new SluiceError(`sink ${this.deps.sink.description} returned from addBatchChunks of batch ${entry.batchId} before it took every chunk: a sink must consume the whole iterable (or leave addBatchChunks out and take addBatch)`, { retriable: false });
    return read;
  }

  /**
   * Purges the checkpoint below `keepFrom` once batch N committed. The batch is done whatever
   * happens here: a failed purge is logged and the run goes on (the next purge, ten batches on,
   * removes everything below its own bound, so nothing is left behind for good).
   */
  protected async purge(batchId: number, keepFrom: number): Promise<void> {
    try {
      await this.deps.checkpoint.purge(keepFrom);
    } catch (e) {
      this.log({ event: 'purge-failed', batchId, keepFrom, error: (e as Error).message });
    }
  }

  /** Stateless stages over a chunk: the sync path, or the async one when the plan joins a static table. */
  protected runStages(stages: QueryPlan['stages'], rows: readonly Row[]): StageResult | Promise<StageResult> {
    return this.joins && hasJoin(stages) ? applyStagesAsync(stages, rows, this.joins) : applyStages(stages, rows);
  }

  /** Malformed records, with where they came from (a replay overwrites the batch's own). */
  protected async writeDeadLetters(batchId: number, deadLetters: readonly DeadLetter[]): Promise<void> {
    if (!this.deps.deadLetters || deadLetters.length === 0) return;
    await this.deps.deadLetters.write(batchId, 'malformed', deadLetters.map((d) => ({ source: { ...d.source }, raw: d.raw, reason: d.reason, batchId })));
  }

  /**
   * The late-data side output: every row the watermark dropped, at any operator, with the
   * watermark that did, as that operator received it (one write a batch, in plan order).
   */
  protected async writeLateRows(entry: OffsetEntry, perOperator: readonly OperatorOutput[]): Promise<void> {
    if (!this.deps.lateRows || !perOperator.some((o) => o.late.length)) return;
    await this.deps.lateRows.write(entry.batchId, 'late', perOperator.flatMap((o, i) => this.lateRecords(entry, i, o.late, o.lateRightFrom)));
  }

  /** The late-rows records of operator i's late rows (a join's from `rightFrom` on are its right side's), as the side output holds them. */
  protected lateRecords(entry: OffsetEntry, i: number, rows: readonly Row[], rightFrom?: number): Json[] {
    const watermark = new Date(entry.lateWatermarkMs).toISOString();
    const many = this.operators.length > 1;
    const o = this.operators[i].chained;
    return rows.map((r, j) => ({ row: toOutputRow(r, lateRowColumns(o.inputColumns, o.join, j, rightFrom)), reason: LATE_ROW_REASON, watermark, batchId: entry.batchId, ...(many ? { operatorId: o.operatorId } : {}) }));
  }

  /** State version N of every operator: its changes (none: nothing to write); each one's commit time. */
  protected async commitState(batchId: number, perOperator: readonly OperatorOutput[]): Promise<number[]> {
    const times: number[] = [];
    for (let i = 0; i < perOperator.length; i++) {
      const t = this.clock.now();
      const changes = perOperator[i].changes;
      if (changes.length) await this.deps.state.commit(this.operators[i].op.spec, batchId, changes, this.currentLease ?? undefined);
      times.push(this.clock.now() - t);
    }
    return times;
  }

  /** commits/N: the end offsets and the watermarks the next batch runs with. */
  protected commitEntry(queryId: string, entry: OffsetEntry, progress: Progress, read: BatchRead, stateRowsByOperator: number[]): CommitEntry {
    const stateRows = stateRowsByOperator.reduce((a, b) => a + b, 0);
    const operatorWatermarksMs = this.watermarks.advance(progress.operatorWatermarksMs, read.maxEventTimes);
    const lastInputAtMs = read.numInputRows > 0 ? entry.batchTimestampMs : progress.lastInputAtMs;
    return {
      batchId: entry.batchId,
      queryId,
      shapeFingerprint: this.fingerprint,
      offsets: entry.offsets,
      batchWatermarkMs: entry.batchWatermarkMs,
      nextBatchWatermarkMs: this.watermarks.global(watermarksOf(entry), operatorWatermarksMs),
      operatorWatermarksMs,
      stateRows,
      // (a one-operator query's entry stays as it was: its total is its operator's)
      ...(stateRowsByOperator.length > 1 ? { stateRowsByOperator } : {}),
      ...(this.plan.statePartitions > 1 ? { statePartitions: this.plan.statePartitions } : {}),
      batchTimestampMs: entry.batchTimestampMs,
      ...(this.plan.idleTimeoutMs !== undefined && lastInputAtMs !== null ? { lastInputAtMs } : {}),
      committedAtMs: this.clock.now(),
    };
  }

  /** The batch's progress record (lib/engine/progress.ts): Spark's StreamingQueryProgress fields, plus sluice's. */
  protected progressRecord(
    ids: { readonly queryId: string; readonly runId: string },
    entry: OffsetEntry,
    progress: Progress,
    r: BatchReport,
    read: BatchRead,
    m: {
      readonly start: BatchStart;
      readonly durations: Required<Pick<ProgressDurations, 'getBatch' | 'addBatch' | 'stateCommit'>>;
      readonly perOperator: readonly OperatorOutput[];
      readonly commitTimes: readonly number[];
      readonly numLateRowsKept: number;
      readonly storeStats: Record<string, number> | null;
      readonly backlog: ReadonlyArray<SourceBacklog | undefined>;
    },
  ): StreamingProgress {
    const triggerMs = this.clock.now() - m.start.startedAtMs;
    const perSecond = (rows: number, ms: number) => (ms > 0 ? (rows * 1000) / ms : 0);
    const inputIntervalMs = progress.lastBatchTimestampMs === null ? 0 : entry.batchTimestampMs - progress.lastBatchTimestampMs;
    const inputRowsPerSecond = perSecond(r.numInputRows, inputIntervalMs);
    const processedRowsPerSecond = perSecond(r.numInputRows, Math.max(1, triggerMs));
    const stats = read.maxEventTimes.stats;
    const iso = (ms: number) => new Date(ms).toISOString();
    const avg = stats.avg();
    const consumed = m.start.consumedBefore && this.deps.meter ? this.deps.meter.since(m.start.consumedBefore) : undefined;
    return {
      id: ids.queryId,
      runId: ids.runId,
      name: this.plan.name,
      timestamp: iso(entry.batchTimestampMs),
      batchId: r.batchId,
      batchDuration: triggerMs,
      numInputRows: r.numInputRows,
      inputRowsPerSecond,
      processedRowsPerSecond,
      durationMs: {
        ...(m.start.latestOffsetMs !== undefined ? { latestOffset: m.start.latestOffsetMs } : {}),
        ...(m.start.walCommitMs !== undefined ? { walCommit: m.start.walCommitMs } : {}),
        ...m.durations,
        triggerExecution: triggerMs,
      },
      eventTime: {
        ...(stats.count > 0 ? { min: iso(stats.min), max: iso(stats.max), avg: iso(Math.round(avg!)) } : {}),
        watermark: iso(entry.batchWatermarkMs),
      },
      // one entry per operator in plan order (Spark lists them downstream first); the store's
      // counters (customMetrics) are the whole store's, so only the first operator carries them
      stateOperators: this.operators.map((o, i) =>
        this.stateOperatorProgress(o.chained.spec, r.stateRowsByOperator![i], r.droppedByOperator![i], m.perOperator[i]?.changes ?? [], m.commitTimes[i] ?? 0, i === 0 ? m.storeStats : null),
      ),
      // one entry per source (Spark's SourceProgress); the bytes are the batch's, on the first
      sources: this.sources.map((src, i) => {
        const rows = this.sources.length === 1 ? r.numInputRows : (read.perSource[i] ?? 0);
        return {
          description: src.description,
          startOffset: entry.startOffsets[i] ?? null,
          endOffset: entry.offsets[i] ?? null,
          latestOffset: m.start.targets?.[i] ?? null,
          numInputRows: rows,
          inputRowsPerSecond: perSecond(rows, inputIntervalMs),
          processedRowsPerSecond: perSecond(rows, Math.max(1, triggerMs)),
          metrics: { ...(m.backlog[i] ?? {}), ...(i === 0 ? { inputBytes: read.bytes } : {}) },
        };
      }),
      sink: { description: this.deps.sink.description, numOutputRows: r.numOutputRows },
      sluice: {
        replay: r.replay,
        noData: r.noData,
        numDeadLetters: r.deadLetters,
        numLateRowsKept: m.numLateRowsKept,
        ...(entry.watermarkAdvancedByIdleness ? { watermarkAdvancedByIdleness: true } : {}),
        ...(consumed ? { consumed: consumed as unknown as Json } : {}),
      },
    };
  }

  /** Spark's StateOperatorProgress of the batch, from its state changes (never from inside the operator). */
  protected stateOperatorProgress(spec: StatefulSpec, stateRows: number, dropped: number, changes: readonly StateChange[], commitTimeMs: number, storeStats: Record<string, number> | null): StateOperatorProgress {
    let removed = 0;
    for (const c of changes) if (c.value === null) removed++;
    return {
      operatorName: sparkOperatorName(spec),
      numRowsTotal: stateRows,
      numRowsUpdated: changes.length - removed,
      numRowsRemoved: removed,
      numRowsDroppedByWatermark: dropped,
      commitTimeMs,
      memoryUsedBytes: estimateStateBytes(changes),
      numShufflePartitions: this.plan.statePartitions,
      numStateStoreInstances: this.plan.statePartitions,
      ...(storeStats ? { customMetrics: storeStats } : {}),
    };
  }

  /** progress/N. Informational: a failed write is logged and the batch goes on, unless it can never succeed. */
  protected async writeProgress(record: StreamingProgress): Promise<void> {
    try {
      await this.deps.checkpoint.writeProgress(record.batchId, record as unknown as Json);
    } catch (e) {
      // Progress is informational; the batch is committed. Report and go on.
      this.log({ event: 'progress-write-failed', batchId: record.batchId, error: (e as Error).message });
      if (e instanceof SluiceError && !e.retriable) throw e;
    }
  }
}

/**
 * The run report's warnings about state that nothing removes: each side of a stream-stream join
 * without a state watermark (no event-time key and no usable time range: FORMAT-2 "State
 * watermarks") keeps every row it buffers.
 */
function stateWarnings(plan: QueryPlan, chain: readonly ChainedOperator[]): string[] {
  const out: string[] = [];
  for (const o of chain) {
    if (o.spec.kind !== 'streamJoin' || !o.join) continue;
    const input = plan.inputs?.[o.spec.input]?.name ?? `input ${o.spec.input + 2}`;
    const sides = [o.join.leftRemoval === null ? 'left' : null, o.join.rightRemoval === null ? `right (${input})` : null].filter((x): x is string => x !== null);
    if (!sides.length) continue;
    out.push(
      `the stream-stream join ${o.operatorId} with ${input} keeps every row of its ${sides.join(' and ')} side${sides.length > 1 ? 's' : ''} in state, so its state grows forever: ` +
        'put withWatermark on both inputs and join on an event-time column (a window) or add a timeRange between the two event-time columns with both bounds',
    );
  }
  return out;
}

/** Spark's operator names: StateStoreSaveExec, SessionWindowStateStoreSaveExec, StreamingDeduplicateExec (and its WithinWatermark twin), StreamingSymmetricHashJoinExec. */
function sparkOperatorName(st: StatefulSpec): string {
  if (st.kind === 'streamJoin') return 'symmetricHashJoin';
  if (st.kind === 'dedup') return st.withinWatermark ? 'dedupeWithinWatermark' : 'dedupe';
  return st.keys.some((k) => k.kind === 'session') ? 'sessionWindowStateStoreSaveExec' : 'stateStoreSave';
}

/** Changes sampled for memoryUsedBytes: JSON text of up to this many, scaled to all of them. */
const MEMORY_SAMPLE = 256;

/** The batch's changed state as the JSON text the store writes (ids and values), from an even sample. */
export function estimateStateBytes(changes: readonly StateChange[]): number {
  const n = changes.length;
  if (n === 0) return 0;
  const k = Math.min(n, MEMORY_SAMPLE);
  let bytes = 0;
  for (let i = 0; i < k; i++) {
    const c = changes[Math.floor((i * n) / k)];
    bytes += c.key.id.length + (c.value === null ? 0 : JSON.stringify(c.value).length);
  }
  return Math.round((bytes * n) / k);
}

/** What a store's counters moved by over the batch. */
export function diffStats(before: Record<string, number> | null, after: Record<string, number> | null): Record<string, number> | null {
  if (!before || !after) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}

export function emptyRead(): BatchRead {
  return { numInputRows: 0, perSource: [], bytes: 0, deadLetters: [], maxEventTimes: new MaxEventTimes(), rows: [] };
}

/** The run's progress once batch N committed: the next batch starts where N ended. */
export function advance(progress: Progress, commit: CommitEntry): void {
  progress.nextBatchId = commit.batchId + 1;
  progress.offsets = progress.offsets.map((_, i) => commit.offsets[i] ?? null);
  progress.watermarks = watermarksAfter(commit);
  progress.operatorWatermarksMs = commit.operatorWatermarksMs ?? {};
  progress.stateRows = commit.stateRows ?? 0;
  progress.stateRowsByOperator = stateRowsOf(commit, progress.stateRowsByOperator.length);
  progress.hasCommit = true;
  progress.lastBatchTimestampMs = commit.batchTimestampMs ?? commit.committedAtMs;
  if (commit.lastInputAtMs !== undefined) progress.lastInputAtMs = commit.lastInputAtMs;
}
