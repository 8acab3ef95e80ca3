import type { Json } from './values';

/** The offset-log entry written before a batch runs (Spark's OffsetSeq). */
export interface OffsetEntry {
  readonly batchId: number;
  /** Per-source end offsets of the batch (index = source index). */
  readonly offsets: Json[];
  /** Per-source start offsets of the batch. */
  readonly startOffsets: Json[];
  readonly batchWatermarkMs: number;
  readonly batchTimestampMs: number;
  /**
   * The batch's processing time when the run was given a clock of its own for it (a conformance
   * step's `clock`); absent: batchTimestampMs is. transformWithState's timers and TTL compare with
   * it, and a replay uses the logged one.
   */
  readonly processingTimeMs?: number;
  /** The watermark used to filter late rows in this batch (the previous batch's batchWatermarkMs). */
  readonly lateWatermarkMs: number;
  /** A no-data batch whose batchWatermarkMs the wall clock advanced (option idleTimeout). */
  readonly watermarkAdvancedByIdleness?: boolean;
}

/**
 * The commit-log entry written after batch N's sink write and state commit. It repeats what the
 * next run needs to start (end offsets, watermarks, shape fingerprint) so that a run over an
 * unchanged source reads one entry, not the offset log and the metadata as well.
 */
export interface CommitEntry {
  readonly batchId: number;
  readonly queryId: string;
  readonly shapeFingerprint: string;
  /** The batch's end offsets (equal to offsets/N). */
  readonly offsets: Json[];
  readonly batchWatermarkMs: number;
  /** The watermark the next batch evicts with (Spark's CommitMetadata.nextBatchWatermarkMs). */
  readonly nextBatchWatermarkMs: number;
  /** Per watermark operator, its own watermark so far (the global one is their minimum). */
  readonly operatorWatermarksMs?: Record<string, number>;
  /** Rows in the stateful operators' state after the batch (their total). */
  readonly stateRows?: number;
  /** With several stateful operators: each one's state rows, in plan order (op0, op1, ...). */
  readonly stateRowsByOperator?: number[];
  /** The state partitions the checkpoint was created with (absent: 1). */
  readonly statePartitions?: number;
  /** The batch's planned timestamp (offsets/N's batchTimestampMs): the next run's inputRowsPerSecond starts from it. */
  readonly batchTimestampMs?: number;
  /**
   * With option idleTimeout: the planned timestamp of the last batch that read rows (wall clock,
   * carried over by batches without input), from which the source counts as idle.
   */
  readonly lastInputAtMs?: number;
  /**
   * Every state slice is as this sluice writes it (StateStore.keepAliveOnce: keepAlive ran in this
   * run or an earlier one, or the checkpoint's state was all written since): runs after this
   * commit skip keepAlive. Absent: not known (a commit of an earlier sluice).
   */
  readonly stateKeptForGood?: true;
  readonly committedAtMs: number;
}

export interface QueryMetadata {
  readonly id: string;
  readonly name: string;
  readonly createdAtMs: number;
  /** Fingerprint of the stateful shape; a restart with a different one is refused. */
  readonly shape: Json;
  readonly shapeFingerprint: string;
  /** The state partitions fixed when the checkpoint was created (absent: 1). */
  readonly statePartitions?: number;
  /**
   * Each input's identity when the checkpoint was created (Source.description: s3://bucket/prefix,
   * kinesis://stream), in plan order: a run on other inputs is refused, as the offsets are theirs.
   * Absent in checkpoints created before sluice recorded it.
   */
  readonly sources?: string[];
}

/** The head of a checkpoint: what a run needs to know to start. */
export interface CheckpointHead {
  readonly metadata: QueryMetadata | null;
  /** Highest batch with an offsets entry, or -1. */
  readonly latestOffsetBatch: number;
  /** Highest batch with a commit entry, or -1. */
  readonly latestCommitBatch: number;
}

export interface CheckpointStore {
  readonly description: string;
  head(): Promise<CheckpointHead>;
  writeMetadata(meta: QueryMetadata): Promise<void>;
  readOffsets(batchId: number): Promise<OffsetEntry | null>;
  /** Write-once: writing a different entry for an existing batch ID is an error. */
  writeOffsets(entry: OffsetEntry): Promise<void>;
  readCommit(batchId: number): Promise<CommitEntry | null>;
  writeCommit(entry: CommitEntry): Promise<void>;
  writeProgress(batchId: number, progress: Json): Promise<void>;
  /** The progress report of a batch (null when absent or purged). */
  readProgress(batchId: number): Promise<Json | null>;
  /** Remove entries of batches below `keepFrom` (offsets, commits, progress, source logs). */
  purge(keepFrom: number): Promise<void>;
  /** A source-private log, e.g. the file list of each batch: `sources/<i>/<name>`. */
  readSourceLog(sourceIndex: number, name: string): Promise<string | null>;
  writeSourceLog(sourceIndex: number, name: string, body: string): Promise<void>;
  /** Writes `sources/<i>/<name>` unless it exists: null when written, else the body it holds. */
  writeSourceLogOnce(sourceIndex: number, name: string, body: string): Promise<string | null>;
  /** Deletes `sources/<i>/<name>` (absent: nothing happens), for a source that compacts its own logs. Optional. */
  deleteSourceLog?(sourceIndex: number, name: string): Promise<void>;
}
