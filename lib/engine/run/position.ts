/**
 * Where a query stands between batches (Spark's committed offsets and watermarks, in effect):
 * what the last commit says, carried in memory by the single scheduler from one batch to the next
 * and rebuilt from the checkpoint by every task of a partitioned run.
 */
import type { CommitEntry, Json, OffsetEntry } from '../ports';
import { type BatchWatermarks, NO_WATERMARKS, type OperatorWatermarks, watermarksAfter } from '../watermark';

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

/** The progress a run starts from: after its checkpoint's last commit, or from nothing. */
export function progressAfter(last: CommitEntry | null, latestCommitBatch: number, operators: number, sources: number): Progress {
  return {
    stateRowsByOperator: stateRowsOf(last, operators),
    nextBatchId: latestCommitBatch + 1,
    offsets: Array.from({ length: sources }, (_, i) => last?.offsets[i] ?? null),
    watermarks: last ? watermarksAfter(last) : NO_WATERMARKS,
    operatorWatermarksMs: { ...(last?.operatorWatermarksMs ?? {}) },
    stateRows: last?.stateRows ?? 0,
    hasCommit: last !== null,
    lastBatchTimestampMs: last ? (last.batchTimestampMs ?? last.committedAtMs) : null,
    // A checkpoint written before idleTimeout was set: count the idle time from its last commit.
    lastInputAtMs: last ? (last.lastInputAtMs ?? last.committedAtMs) : null,
  };
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
