/**
 * The run loop, as Spark's MicroBatchExecution runs it for Trigger.AvailableNow:
 *
 *   take lease ─▶ read checkpoint head ─▶ replay an uncommitted batch N (same offsets, same
 *   watermarks) ─▶ note the source's latest offset once ─▶ for each batch:
 *
 *     plan end offsets (rate limits)
 *     write offsets/N {offsets, batchWatermarkMs, lateWatermarkMs, batchTimestampMs}   ◀─ before reading
 *     read ─▶ stateless stages ─▶ stateful operator (evict with batchWatermarkMs,
 *                                                      drop late rows with lateWatermarkMs)
 *     sink.addBatch(N) ─▶ state.commit(version N) ─▶ write commits/N                    ◀─ after effects
 *
 *   ─▶ after the last data batch, one no-data batch when the watermark moved and an operator can
 *   evict or emit ─▶ stop (or earlier, when the deadline leaves no room for another batch).
 *
 * Offsets are only "processed" in memory until commits/N lands; a crash anywhere before that
 * makes the next run replay batch N from offsets/N, and every effect of N is idempotent by N.
 */
import { createHash, randomUUID } from 'node:crypto';
import { CrashInjector } from './testing/crash';
import { CheckpointMismatchError, SluiceError } from './errors';
import { createOperator, StatefulOperator } from './operators/operator';
import type {
  CheckpointStore,
  Clock,
  DeadLetter,
  ReadResult,
  CommitEntry,
  DeadLetterSink,
  Json,
  Lease,
  LeaseHandle,
  OffsetEntry,
  OutputRow,
  ReadOptions,
  Row,
  Sink,
  SinkContext,
  Source,
  StateStore,
} from './ports';
import { systemClock } from './ports';
import { ColumnInfo, columnsAfter, outputColumns, QueryPlan, statefulShape } from './query';
import { applyStages, toOutputRow } from './rows';

export interface ExecutorDeps {
  readonly plan: QueryPlan;
  readonly source: Source;
  readonly checkpoint: CheckpointStore;
  readonly state: StateStore;
  readonly sink: Sink;
  /** Malformed input records go here (with their source location). */
  readonly deadLetters?: DeadLetterSink;
  /** Rows dropped by the watermark go here too, when set (sluice's late-data side output). */
  readonly lateRows?: DeadLetterSink;
  readonly lease?: Lease;
  readonly clock?: Clock;
  readonly crash?: CrashInjector;
  readonly log?: (event: Record<string, unknown>) => void;
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
  /** Files or records still waiting when the run stopped early (0 when it finished). */
  readonly backlogLeft: number;
  readonly message?: string;
}

/** What a run carries from one batch to the next: the last commit, in effect. */
interface Progress {
  nextBatchId: number;
  offsets: Json | null;
  /** Eviction watermark of the next batch. */
  watermarkMs: number;
  /** The last batch's own watermark: the next batch filters late rows with it. */
  lastBatchWatermarkMs: number;
  operatorWatermarksMs: Record<string, number>;
  stateRows: number;
  hasCommit: boolean;
}

/** The source's chunks, or its whole read as one chunk when it has no chunked read. */
async function* readChunks(source: Source, batchId: number, start: Json | null, end: Json, options: ReadOptions): AsyncIterable<ReadResult> {
  if (source.readChunks) yield* source.readChunks(batchId, start, end, options);
  else yield await source.read(batchId, start, end, options);
}

/**
 * The source columns a plan reads, when they are known: an aggregation behind watermarks only
 * reads its keys, its aggregated columns and its watermark columns. Undefined (all columns) when
 * a stage runs user code over whole rows (filter, withColumn), for deduplication and stateless
 * queries (they emit input rows), and when late rows are written out whole.
 */
export function columnsRead(plan: QueryPlan, writesLateRows: boolean): string[] | undefined {
  const st = plan.stateful;
  if (writesLateRows || !st || st.kind !== 'aggregate') return undefined;
  const cols = new Set<string>();
  for (const s of plan.stages) {
    if (s.kind !== 'watermark') return undefined;
    cols.add(s.column);
  }
  for (const k of st.keys) cols.add(k.kind === 'column' ? k.name : k.column);
  for (const a of st.aggs) if (a.column !== undefined && a.column !== '*') cols.add(a.column);
  return plan.source.schema.columns.map((c) => c.name).filter((c) => cols.has(c));
}

export function shapeFingerprint(shape: Json): string {
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 32);
}

export class MicroBatchExecutor {
  private readonly plan: QueryPlan;
  private readonly operator: StatefulOperator | null;
  private readonly outColumns: ColumnInfo[];
  private readonly clock: Clock;
  private readonly crash: CrashInjector;
  private readonly shape: Json;
  private readonly fingerprint: string;
  private readonly log: (event: Record<string, unknown>) => void;
  private readonly retain: number;
  private readonly leaseMs: number;
  private readonly owner: string;
  private readonly watermarkDelays: Map<string, number>;
  /** The lease this run holds (renewed between batches). */
  private currentLease: LeaseHandle | null = null;
  private collectRows = false;
  private readonly readOptions: ReadOptions;

  constructor(private readonly deps: ExecutorDeps, options: ExecutorOptions = {}) {
    this.plan = deps.plan;
    this.clock = deps.clock ?? systemClock;
    this.crash = deps.crash ?? new CrashInjector(null);
    this.log = deps.log ?? (() => undefined);
    this.retain = options.retainBatches ?? 100;
    this.leaseMs = options.leaseDurationMs ?? 15 * 60_000;
    this.owner = options.owner ?? randomUUID();
    this.shape = statefulShape(this.plan);
    this.fingerprint = shapeFingerprint(this.shape);
    const inputColumns = columnsAfter(this.plan.source.schema.columns, this.plan.stages);
    const wms = new Map<string, number>();
    this.watermarkDelays = new Map();
    for (const s of this.plan.stages) {
      if (s.kind !== 'watermark') continue;
      wms.set(s.column, s.delayMs);
      this.watermarkDelays.set(s.id, s.delayMs);
    }
    this.operator = this.plan.stateful
      ? createOperator(this.plan.stateful, { operatorId: 'op0', outputMode: this.plan.outputMode, inputColumns, watermarks: wms })
      : null;
    this.outColumns = columnsAfter(outputColumns(this.plan), this.plan.post);
    this.readOptions = { columns: columnsRead(this.plan, deps.lateRows !== undefined) };
  }

  get sinkContext(): Omit<SinkContext, 'queryId'> {
    const st = this.plan.stateful;
    const keyColumns =
      st && st.kind === 'aggregate' ? st.keys.map((k) => (k.kind === 'column' ? k.name : k.kind === 'window' ? 'window' : 'session_window')) : [];
    return { queryName: this.plan.name, outputMode: this.plan.outputMode, columns: this.outColumns.map((c) => c.name), keyColumns };
  }

  /** Runs availableNow: everything present at the start, then stop. */
  async run(opts: RunOptions = {}): Promise<RunReport> {
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
    try {
      return await this.runHeld(opts);
    } finally {
      if (this.currentLease && this.deps.lease) await this.deps.lease.release(this.currentLease);
      this.currentLease = null;
    }
  }

  private emptyReport(queryId: string, stoppedBy: StopReason, message?: string): RunReport {
    return {
      queryId, queryName: this.plan.name, stoppedBy, batches: [], watermarkMs: 0, watermark: new Date(0).toISOString(),
      rowsIn: 0, rowsOut: 0, droppedByWatermark: 0, deadLetters: 0, stateRows: 0, backlogLeft: 0, message,
    };
  }

  private async runHeld(opts: RunOptions): Promise<RunReport> {
    const { checkpoint, source } = this.deps;
    const head = await checkpoint.head();
    let last: CommitEntry | null = null;
    if (head.latestCommitBatch >= 0) {
      last = await checkpoint.readCommit(head.latestCommitBatch);
      if (!last) throw new CheckpointMismatchError(`checkpoint ${checkpoint.description} lists commits/${head.latestCommitBatch} but it cannot be read: restore it from a backup or start a new checkpoint location`);
    }
    const queryId = await this.checkShape(last, head.metadata);
    const p: Progress = {
      nextBatchId: head.latestCommitBatch + 1,
      offsets: last ? last.offsets[0] : null,
      watermarkMs: last?.nextBatchWatermarkMs ?? 0,
      lastBatchWatermarkMs: last?.batchWatermarkMs ?? 0,
      operatorWatermarksMs: { ...(last?.operatorWatermarksMs ?? {}) },
      stateRows: last?.stateRows ?? 0,
      hasCommit: last !== null,
    };
    const reports: BatchReport[] = [];
    let maxBatchMs = 0;
    const runBatch = async (entry: OffsetEntry, replay: boolean, noData: boolean) => {
      const t0 = this.clock.now();
      const r = await this.runBatch(queryId, entry, p, replay, noData);
      maxBatchMs = Math.max(maxBatchMs, this.clock.now() - t0);
      reports.push(r);
      const held = this.currentLease;
      if (held && this.deps.lease && held.expiresAtMs - this.clock.now() < this.leaseMs / 2) {
        this.currentLease = await this.deps.lease.renew(held, this.leaseMs);
      }
    };

    // Recovery: offsets/N without commits/N means batch N may have had some effects. Re-run it
    // with exactly the logged offsets and watermarks.
    if (head.latestOffsetBatch >= p.nextBatchId) {
      const entry = await checkpoint.readOffsets(p.nextBatchId);
      if (!entry) {
        throw new CheckpointMismatchError(
          `checkpoint ${checkpoint.description} has offsets up to batch ${head.latestOffsetBatch} but no offsets/${p.nextBatchId} after commits/${p.nextBatchId - 1}: the log has a gap; restore the missing entry or start a new checkpoint location`,
        );
      }
      this.log({ event: 'replay', batchId: entry.batchId });
      await runBatch(entry, true, JSON.stringify(entry.startOffsets[0]) === JSON.stringify(entry.offsets[0]));
    }

    // availableNow: note the target once; data arriving during the run waits for the next one.
    const target = await source.latestOffset(p.offsets);
    let stoppedBy: StopReason = 'done';
    for (;;) {
      if (opts.deadlineMs !== undefined) {
        const needed = Math.max(3000, maxBatchMs * 1.5);
        if (this.clock.now() + needed > opts.deadlineMs) {
          stoppedBy = 'deadline';
          break;
        }
      }
      let end = target === null ? null : await source.planBatch(p.nextBatchId, p.offsets, target, this.plan.limits);
      let noData = false;
      if (end === null) {
        const due = this.operator !== null && this.operator.runsNoDataBatches && p.hasCommit && p.watermarkMs > p.lastBatchWatermarkMs;
        if (!due) break;
        end = p.offsets;
        noData = true;
      }
      const entry: OffsetEntry = {
        batchId: p.nextBatchId,
        startOffsets: [p.offsets],
        offsets: [end],
        batchWatermarkMs: p.watermarkMs,
        lateWatermarkMs: p.lastBatchWatermarkMs,
        batchTimestampMs: this.clock.now(),
      };
      await checkpoint.writeOffsets(entry);
      await runBatch(entry, false, noData);
      if (this.plan.trigger === 'once' && !noData) {
        // Trigger.Once: one data batch (plus the no-data batch it makes due), then stop.
        const due = this.operator !== null && this.operator.runsNoDataBatches && p.watermarkMs > p.lastBatchWatermarkMs;
        if (!due) break;
      }
    }
    const backlogLeft = stoppedBy === 'deadline' && source.backlog ? await source.backlog(p.offsets, target) : 0;
    const sum = (f: (b: BatchReport) => number) => reports.reduce((a, b) => a + f(b), 0);
    const report: RunReport = {
      queryId,
      queryName: this.plan.name,
      stoppedBy,
      batches: reports,
      watermarkMs: p.watermarkMs,
      watermark: new Date(p.watermarkMs).toISOString(),
      rowsIn: sum((b) => b.numInputRows),
      rowsOut: sum((b) => b.numOutputRows),
      droppedByWatermark: sum((b) => b.droppedByWatermark),
      deadLetters: sum((b) => b.deadLetters),
      stateRows: p.stateRows,
      backlogLeft,
    };
    this.log({ event: 'run-finished', query: this.plan.name, stoppedBy, batches: reports.length, watermark: report.watermark, rowsIn: report.rowsIn, rowsOut: report.rowsOut, backlogLeft });
    return report;
  }

  /** Refuses a checkpoint written by a query of another stateful shape; returns the query id. */
  private async checkShape(last: CommitEntry | null, meta: { id: string; shapeFingerprint: string; shape: Json } | null): Promise<string> {
    const stored = last ? { id: last.queryId, fp: last.shapeFingerprint } : meta ? { id: meta.id, fp: meta.shapeFingerprint } : null;
    if (stored) {
      if (stored.fp !== this.fingerprint) {
        const was = meta ? ` (checkpoint: ${JSON.stringify(meta.shape)})` : '';
        throw new CheckpointMismatchError(
          `query ${this.plan.name} does not match its checkpoint ${this.deps.checkpoint.description}: the stateful shape (grouping keys, aggregations, window, dedup keys, output mode) changed to ${JSON.stringify(this.shape)}${was}. State written for the old shape cannot be reused: revert the change, or give the new query a new checkpoint location and backfill`,
        );
      }
      return stored.id;
    }
    const id = randomUUID();
    await this.deps.checkpoint.writeMetadata({ id, name: this.plan.name, createdAtMs: this.clock.now(), shape: this.shape, shapeFingerprint: this.fingerprint });
    return id;
  }

  private async runBatch(queryId: string, entry: OffsetEntry, p: Progress, replay: boolean, noData: boolean): Promise<BatchReport> {
    const t0 = this.clock.now();
    const { source, sink, state, checkpoint } = this.deps;
    const id = entry.batchId;
    this.crash.at('after-offsets', id);

    // Read chunk by chunk, running the stateless stages and accumulating the operator's
    // in-memory aggregate as we go: memory follows the batch's distinct keys, not its rows.
    const op = this.operator;
    const acc = op ? op.begin({ batchId: id, evictWm: entry.batchWatermarkMs, lateWm: entry.lateWatermarkMs }) : null;
    const passthrough: Row[] = [];
    const deadLetters: DeadLetter[] = [];
    const maxEventTime = new Map<string, number>();
    let numInputRows = 0;
    let bytes = 0;
    let chunks = 0;
    if (!noData) {
      for await (const chunk of readChunks(source, id, entry.startOffsets[0], entry.offsets[0], this.readOptions)) {
        if (chunks++ > 0) this.crash.at('mid-read', id);
        numInputRows += chunk.rows.length;
        bytes += chunk.bytes;
        for (const d of chunk.deadLetters) deadLetters.push(d);
        const staged = applyStages(this.plan.stages, chunk.rows);
        for (const [k, v] of staged.maxEventTime) if (!(maxEventTime.get(k)! >= v)) maxEventTime.set(k, v);
        if (acc) acc.add(staged.rows);
        else for (const r of staged.rows) passthrough.push(r);
      }
    }
    this.crash.at('mid-read', id);
    const result = acc ? await acc.finish(state) : { rows: passthrough, changes: [], late: [] as Row[], stateRowsDelta: 0 };
    const post = applyStages(this.plan.post, result.rows).rows;
    const output = post.map((r) => toOutputRow(r, this.outColumns));

    if (this.deps.deadLetters && deadLetters.length) {
      await this.deps.deadLetters.write(id, 'malformed', deadLetters.map((d) => ({ source: { ...d.source }, raw: d.raw, reason: d.reason, batchId: id })));
    }
    if (this.deps.lateRows && result.late.length) {
      const inCols = columnsAfter(this.plan.source.schema.columns, this.plan.stages);
      await this.deps.lateRows.write(
        id,
        'late',
        result.late.map((r) => ({
          row: toOutputRow(r, inCols),
          reason: 'older than the watermark: its window or event time is at or before the watermark of the previous batch',
          watermark: new Date(entry.lateWatermarkMs).toISOString(),
          batchId: id,
        })),
      );
    }
    await sink.addBatch(id, output, { ...this.sinkContext, queryId, lease: this.currentLease ?? undefined });
    this.crash.at('after-sink', id);

    if (op && result.changes.length) {
      if (this.crash.armed('mid-state', id)) {
        await state.commit(op.spec, id, result.changes.slice(0, Math.ceil(result.changes.length / 2)));
        this.crash.at('mid-state', id);
      }
      await state.commit(op.spec, id, result.changes);
    }
    this.crash.at('before-commit', id);

    // The next watermark: each watermark operator's max event time minus its delay; the global
    // one is their minimum (Spark's default policy), and it never moves back.
    const opWms = { ...p.operatorWatermarksMs };
    for (const [wmId, max] of maxEventTime) {
      const candidate = max - (this.watermarkDelays.get(wmId) ?? 0);
      if (opWms[wmId] === undefined || candidate > opWms[wmId]) opWms[wmId] = candidate;
    }
    const known = Object.values(opWms);
    const nextWm = known.length ? Math.max(entry.batchWatermarkMs, Math.min(...known)) : entry.batchWatermarkMs;
    const stateRows = p.stateRows + result.stateRowsDelta;
    const commit: CommitEntry = {
      batchId: id,
      queryId,
      shapeFingerprint: this.fingerprint,
      offsets: entry.offsets,
      batchWatermarkMs: entry.batchWatermarkMs,
      nextBatchWatermarkMs: nextWm,
      operatorWatermarksMs: opWms,
      stateRows,
      committedAtMs: this.clock.now(),
    };
    const durationMs = this.clock.now() - t0;
    const report: BatchReport = {
      batchId: id,
      replay,
      noData,
      numInputRows,
      numOutputRows: output.length,
      rows: this.collectRows ? output : [],
      batchWatermarkMs: entry.batchWatermarkMs,
      nextWatermarkMs: nextWm,
      droppedByWatermark: result.late.length,
      deadLetters: deadLetters.length,
      stateRows,
      durationMs,
    };
    // Progress before the commit, so that a batch that committed always has its report (a replay
    // rewrites it with the same figures).
    await this.writeProgress(queryId, entry, report, bytes, maxEventTime);
    await checkpoint.writeCommit(commit);
    this.crash.at('after-commit', id);

    p.nextBatchId = id + 1;
    p.offsets = entry.offsets[0];
    p.watermarkMs = nextWm;
    p.lastBatchWatermarkMs = entry.batchWatermarkMs;
    p.operatorWatermarksMs = opWms;
    p.stateRows = stateRows;
    p.hasCommit = true;

    if (id > 0 && id % 10 === 0 && id - this.retain > 0) await checkpoint.purge(id - this.retain);
    this.log({ event: 'batch', batchId: id, replay, noData, rowsIn: report.numInputRows, rowsOut: report.numOutputRows, watermark: new Date(entry.batchWatermarkMs).toISOString(), droppedByWatermark: report.droppedByWatermark, deadLetters: report.deadLetters, durationMs });
    return report;
  }

  /** Spark's StreamingQueryProgress fields, plus sluice's dead-letter count. */
  private async writeProgress(queryId: string, entry: OffsetEntry, r: BatchReport, bytes: number, maxEventTime: Map<string, number>): Promise<void> {
    const max = maxEventTime.size ? Math.max(...maxEventTime.values()) : null;
    const progress: Json = {
      id: queryId,
      name: this.plan.name,
      timestamp: new Date(entry.batchTimestampMs).toISOString(),
      batchId: r.batchId,
      batchDuration: r.durationMs,
      numInputRows: r.numInputRows,
      processedRowsPerSecond: r.durationMs > 0 ? (r.numInputRows * 1000) / r.durationMs : 0,
      durationMs: { triggerExecution: r.durationMs },
      eventTime: {
        watermark: new Date(entry.batchWatermarkMs).toISOString(),
        ...(max !== null ? { max: new Date(max).toISOString() } : {}),
      },
      stateOperators: this.operator
        ? [{ operatorName: this.plan.stateful!.kind, numRowsTotal: r.stateRows, numRowsDroppedByWatermark: r.droppedByWatermark }]
        : [],
      sources: [{ description: this.deps.source.description, startOffset: entry.startOffsets[0], endOffset: entry.offsets[0], numInputRows: r.numInputRows, inputBytes: bytes }],
      sink: { description: this.deps.sink.description, numOutputRows: r.numOutputRows },
      numDeadLetters: r.deadLetters,
      replay: r.replay,
    };
    try {
      await this.deps.checkpoint.writeProgress(r.batchId, progress);
    } catch (e) {
      // Progress is informational; the batch is committed. Report and go on.
      this.log({ event: 'progress-write-failed', batchId: r.batchId, error: (e as Error).message });
      if (e instanceof SluiceError && !e.retriable) throw e;
    }
  }
}
