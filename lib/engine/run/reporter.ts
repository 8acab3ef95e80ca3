/**
 * The batch's progress record (Spark's StreamingQueryProgress, progress.ts) and what is derived
 * from it: the BatchReport of the run report, and the run report of a run's batches. Both
 * schedulers report through here, so a partitioned run's records read as the single Lambda's.
 */
import type { Json, OffsetEntry, StateChange } from '../ports';
import type { ProgressDurations, SourceBacklog, StateOperatorProgress, StreamingProgress } from '../progress';
import type { StatefulSpec } from '../plan/types';
import type { BatchRead } from './batch';
import type { BatchStart } from './planner';
import type { Progress } from './position';
import type { QueryRuntime } from './runtime';
import type { BatchReport, RunReport, StopReason } from './types';
import type { OutputRow } from '../ports';
import { encodeStateJson } from '../state-json';

/** One operator's figures of a batch: state rows after it, rows it dropped as late, its changes. */
export interface OperatorFigures {
  readonly stateRows: number;
  readonly dropped: number;
  readonly updated: number;
  readonly removed: number;
  /** The changed state's size (estimateStateBytes). */
  readonly bytes: number;
  readonly commitTimeMs: number;
}

/** Everything a batch's progress record says, as the committer gathered it. */
export interface BatchFigures {
  readonly ids: { readonly queryId: string; readonly runId: string };
  readonly entry: OffsetEntry;
  /** Where the query stood before the batch. */
  readonly progress: Progress;
  readonly replay: boolean;
  readonly noData: boolean;
  readonly read: BatchRead;
  readonly numOutputRows: number;
  readonly operators: readonly OperatorFigures[];
  /** Whether the late rows go to a side output (their count is then the record's numLateRowsKept). */
  readonly keepsLateRows: boolean;
  readonly storeStats: Record<string, number> | null;
  readonly backlog: ReadonlyArray<SourceBacklog | undefined>;
  /** Files each source read in the batch (S3: its backlog between the batch's start and end offsets); undefined where unknown. */
  readonly filesRead: ReadonlyArray<number | undefined>;
  readonly start: BatchStart;
  readonly durations: Required<Pick<ProgressDurations, 'getBatch' | 'addBatch' | 'stateCommit'>>;
}

/** The batch's progress record (lib/engine/progress.ts): Spark's StreamingQueryProgress fields, plus sluice's. */
export function progressRecord(rt: QueryRuntime, f: BatchFigures): StreamingProgress {
  const { entry, read } = f;
  const triggerMs = rt.clock.now() - f.start.startedAtMs;
  const perSecond = (rows: number, ms: number) => (ms > 0 ? (rows * 1000) / ms : 0);
  const inputIntervalMs = f.progress.lastBatchTimestampMs === null ? 0 : entry.batchTimestampMs - f.progress.lastBatchTimestampMs;
  const stats = read.maxEventTimes.stats;
  const iso = (ms: number) => new Date(ms).toISOString();
  const avg = stats.avg();
  const consumed = f.start.consumedBefore && rt.deps.meter ? rt.deps.meter.since(f.start.consumedBefore) : undefined;
  const dropped = f.operators.reduce((a, o) => a + o.dropped, 0);
  return {
    id: f.ids.queryId,
    runId: f.ids.runId,
    name: rt.plan.name,
    timestamp: iso(entry.batchTimestampMs),
    batchId: entry.batchId,
    batchDuration: triggerMs,
    numInputRows: read.numInputRows,
    inputRowsPerSecond: perSecond(read.numInputRows, inputIntervalMs),
    processedRowsPerSecond: perSecond(read.numInputRows, Math.max(1, triggerMs)),
    durationMs: {
      ...(f.start.latestOffsetMs !== undefined ? { latestOffset: f.start.latestOffsetMs } : {}),
      ...(f.start.walCommitMs !== undefined ? { walCommit: f.start.walCommitMs } : {}),
      ...f.durations,
      triggerExecution: triggerMs,
    },
    eventTime: {
      ...(stats.count > 0 ? { min: iso(stats.min), max: iso(stats.max), avg: iso(Math.round(avg!)) } : {}),
      watermark: iso(entry.batchWatermarkMs),
    },
    // one entry per operator in plan order (Spark lists them downstream first); the store's
    // counters (customMetrics) are the whole store's, so only the first operator carries them
    stateOperators: rt.operators.map((o, i) => stateOperatorProgress(rt, o.chained.spec, f.operators[i], i === 0 ? f.storeStats : null)),
    // one entry per source (Spark's SourceProgress): what it read, and what is left (its backlog)
    sources: rt.sources.map((src, i) => {
      const rows = rt.sources.length === 1 ? read.numInputRows : (read.perSource[i] ?? 0);
      return {
        description: src.description,
        startOffset: entry.startOffsets[i] ?? null,
        endOffset: entry.offsets[i] ?? null,
        latestOffset: f.start.targets?.[i] ?? null,
        numInputRows: rows,
        inputRowsPerSecond: perSecond(rows, inputIntervalMs),
        processedRowsPerSecond: perSecond(rows, Math.max(1, triggerMs)),
        metrics: {
          ...(f.backlog[i] ?? {}),
          ...(i === 0 ? { inputBytes: read.bytes } : {}),
          ...(f.filesRead[i] !== undefined ? { filesRead: f.filesRead[i] } : {}),
          bytesRead: read.perSourceBytes[i] ?? 0,
          recordsRead: rows + (read.perSourceDeadLetters[i] ?? 0),
        },
      };
    }),
    sink: { description: rt.deps.sink.description, numOutputRows: f.numOutputRows },
    sluice: {
      replay: f.replay,
      noData: f.noData,
      numDeadLetters: read.deadLetters.length,
      numLateRowsKept: f.keepsLateRows ? dropped : 0,
      ...(entry.watermarkAdvancedByIdleness ? { watermarkAdvancedByIdleness: true } : {}),
      ...(consumed ? { consumed: consumed as unknown as Json } : {}),
    },
  };
}

/** Spark's StateOperatorProgress of the batch, from its state changes (never from inside the operator). */
function stateOperatorProgress(rt: QueryRuntime, spec: StatefulSpec, o: OperatorFigures, storeStats: Record<string, number> | null): StateOperatorProgress {
  return {
    operatorName: sparkOperatorName(spec),
    numRowsTotal: o.stateRows,
    numRowsUpdated: o.updated,
    numRowsRemoved: o.removed,
    numRowsDroppedByWatermark: o.dropped,
    commitTimeMs: o.commitTimeMs,
    memoryUsedBytes: o.bytes,
    numShufflePartitions: rt.plan.statePartitions,
    numStateStoreInstances: rt.plan.statePartitions,
    ...(storeStats ? { customMetrics: storeStats } : {}),
  };
}

/** Spark's operator names: StateStoreSaveExec, SessionWindowStateStoreSaveExec, StreamingDeduplicateExec (and its WithinWatermark twin), StreamingSymmetricHashJoinExec, StreamingGlobalLimitExec. */
function sparkOperatorName(st: StatefulSpec): string {
  if (st.kind === 'streamJoin') return 'symmetricHashJoin';
  if (st.kind === 'transformWithState') return 'transformWithStateExec';
  if (st.kind === 'dedup') return st.withinWatermark ? 'dedupeWithinWatermark' : 'dedupe';
  if (st.kind === 'limit') return 'globalLimit';
  return st.keys.some((k) => k.kind === 'session') ? 'sessionWindowStateStoreSaveExec' : 'stateStoreSave';
}

/** The run report's view of a batch, read off its progress record. */
export function batchReportOf(record: StreamingProgress, nextWatermarkMs: number, rows: OutputRow[] = []): BatchReport {
  const dropped = record.stateOperators.map((o) => o.numRowsDroppedByWatermark);
  const stateRowsByOperator = record.stateOperators.map((o) => o.numRowsTotal);
  return {
    batchId: record.batchId,
    replay: record.sluice.replay,
    noData: record.sluice.noData,
    numInputRows: record.numInputRows,
    numOutputRows: record.sink.numOutputRows,
    rows,
    batchWatermarkMs: Date.parse(record.eventTime.watermark),
    nextWatermarkMs,
    droppedByWatermark: dropped.reduce((a, b) => a + b, 0),
    deadLetters: record.sluice.numDeadLetters,
    stateRows: stateRowsByOperator.reduce((a, b) => a + b, 0),
    stateRowsByOperator,
    droppedByOperator: dropped,
    durationMs: record.batchDuration,
  };
}

/** A run's report from its batches' reports and records, and where the query stands after it. */
export function runReportOf(
  query: { readonly plan: { readonly name: string }; readonly warnings: readonly string[] },
  r: {
    readonly queryId: string;
    readonly stoppedBy: StopReason;
    readonly batches: BatchReport[];
    readonly progress: StreamingProgress[];
    readonly after: Progress;
    readonly backlogLeft: number;
    readonly message?: string;
  },
): RunReport {
  const sum = (f: (b: BatchReport) => number) => r.batches.reduce((a, b) => a + f(b), 0);
  const watermarkMs = r.after.watermarks.batchWatermarkMs;
  return {
    queryId: r.queryId,
    queryName: query.plan.name,
    stoppedBy: r.stoppedBy,
    batches: r.batches,
    watermarkMs,
    watermark: new Date(watermarkMs).toISOString(),
    rowsIn: sum((b) => b.numInputRows),
    rowsOut: sum((b) => b.numOutputRows),
    droppedByWatermark: sum((b) => b.droppedByWatermark),
    deadLetters: sum((b) => b.deadLetters),
    stateRows: r.after.stateRows,
    stateRowsByOperator: [...r.after.stateRowsByOperator],
    backlogLeft: r.backlogLeft,
    progress: r.progress,
    ...(r.message !== undefined ? { message: r.message } : {}),
    ...(query.warnings.length && r.stoppedBy !== 'lease-held' ? { warnings: [...query.warnings] } : {}),
  };
}

/** Changes sampled for memoryUsedBytes: JSON text of up to this many, scaled to all of them. */
const MEMORY_SAMPLE = 256;

/** The batch's changed state as the JSON text the store writes (ids and values), from an even sample. */
function estimateStateBytes(changes: readonly StateChange[]): number {
  const n = changes.length;
  if (n === 0) return 0;
  const k = Math.min(n, MEMORY_SAMPLE);
  let bytes = 0;
  for (let i = 0; i < k; i++) {
    const c = changes[Math.floor((i * n) / k)];
    bytes += c.key.id.length + (c.value === null ? 0 : encodeStateJson(c.value).length);
  }
  return Math.round((bytes * n) / k);
}

/** An operator's figures from its state changes (before the commit's time is known). */
export function changeFigures(changes: readonly StateChange[]): Pick<OperatorFigures, 'updated' | 'removed' | 'bytes'> {
  let removed = 0;
  for (const c of changes) if (c.value === null) removed++;
  return { updated: changes.length - removed, removed, bytes: estimateStateBytes(changes) };
}

/** What a store's counters moved by over the batch. */
export function diffStats(before: Record<string, number> | null, after: Record<string, number> | null): Record<string, number> | null {
  if (!before || !after) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}

/** Counters summed (a partitioned batch's partition tasks each measure their own), null when none kept any. */
export function sumStats(all: ReadonlyArray<Record<string, number> | null | undefined>): Record<string, number> | null {
  let out: Record<string, number> | null = null;
  for (const s of all) {
    if (!s) continue;
    out ??= {};
    for (const [k, v] of Object.entries(s)) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}
