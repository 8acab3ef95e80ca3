/**
 * The progress record of one batch: what `progress/N` holds, what `sluice run --json` prints per
 * batch, what the Lambda's summary carries and what `sluice status` and `sluice report` read.
 *
 * Field names are Spark's `StreamingQueryProgress` (and its `StateOperatorProgress`,
 * `SourceProgress`, `SinkProgress`) wherever the concept exists, so that a Spark user's
 * dashboards and habits carry over; what is sluice's own sits under `sluice`. Times are ISO-8601
 * UTC text as Spark writes them; durations are milliseconds.
 */
import type { Json } from './ports';

/** Spark's `durationMs` map: the wall-clock time of each step of the batch. */
export interface ProgressDurations {
  /** Asking the source for its latest offset (once per run: on the run's first batch only). */
  readonly latestOffset?: number;
  /** Planning the batch's end offsets and writing `offsets/N` (Spark's write-ahead log). */
  readonly walCommit?: number;
  /** Reading the batch from the source and running the stateless stages. */
  readonly getBatch?: number;
  /** The stateful operator's work and the sink write (Spark's addBatch). */
  readonly addBatch?: number;
  /** Writing the state store's version N. */
  readonly stateCommit?: number;
  /**
   * Writing `commits/N`. That write follows `progress/N` (so that a committed batch always has
   * its record), so the stored `progress/N` lacks it: only the record a run reports
   * (RunOptions.onProgress, RunReport.progress) has it, and it is not part of triggerExecution.
   */
  readonly commitOffsets?: number;
  /** The whole batch up to writing `progress/N`: latestOffset, walCommit, getBatch, addBatch, stateCommit and the bookkeeping between them. */
  readonly triggerExecution: number;
}

/** Spark's `eventTime` map (ISO text); min/max/avg only when the batch had rows with an event time. */
export interface ProgressEventTime {
  readonly min?: string;
  readonly max?: string;
  readonly avg?: string;
  /** The watermark the batch ran with (evicted with). */
  readonly watermark: string;
}

/** Spark's `StateOperatorProgress`. */
export interface StateOperatorProgress {
  /** Spark's names where they exist: "stateStoreSave" (aggregation), "dedupe", "sessionWindowStateStoreSaveExec", "symmetricHashJoin". */
  readonly operatorName: string;
  /** State rows (groups, dedup keys, sessions) after the batch. */
  readonly numRowsTotal: number;
  /** Rows the batch wrote (new or changed), from its state changes. */
  readonly numRowsUpdated: number;
  /** Rows the batch deleted (evicted by the watermark, merged sessions), from its state changes. */
  readonly numRowsRemoved: number;
  /** Input rows the watermark dropped (sluice counts rows; Spark's own metric counts groups). */
  readonly numRowsDroppedByWatermark: number;
  /** Writing the state store's version N: timed within durationMs.stateCommit (with one operator, nearly all of it). */
  readonly commitTimeMs: number;
  /**
   * Bytes of the operator's state held in memory during the batch, an estimate: the batch's
   * changed rows as the JSON text the store writes (ids and values, a byte a character, as V8
   * keeps ASCII text), taken from a sample of at most 256 changes and scaled to all of them. The
   * run's cache of state read earlier is not counted.
   */
  readonly memoryUsedBytes: number;
  readonly numShufflePartitions?: number;
  readonly numStateStoreInstances?: number;
  /** The state store's own counters over the batch (StateStore.stats: items and pages read and written). */
  readonly customMetrics?: Readonly<Record<string, number>>;
}

/** What is still waiting in the source after the batch's end offset (as of the run's latest offset). */
export interface SourceBacklog {
  /** S3 landing prefix: files and bytes not yet read. */
  readonly files?: number;
  readonly bytes?: number;
  /**
   * Kinesis: records fetched by this run and not yet in a batch (a lower bound while a shard is
   * not read up to the run's target), and how far the reads are behind the stream's tip:
   * GetRecords' MillisBehindLatest of each shard's last page, plus the arrival span of the
   * records still buffered before it, the largest over the shards.
   */
  readonly records?: number;
  readonly millisBehindLatest?: number;
}

/** What a batch read from one source. */
export interface SourceReadMetrics {
  /** S3 landing prefix: the files of the batch (absent on the replay of a batch planned by an earlier run). */
  readonly filesRead?: number;
  /** The bytes read: the stored bytes of the files (S3), the records' data (Kinesis). */
  readonly bytesRead?: number;
  /** Records read: rows plus dead letters (a line of a file, or a Kinesis user record). */
  readonly recordsRead?: number;
}

/** A backlog as one count (RunReport.backlogLeft, the BacklogLeft metric): its files, else its records. */
export function backlogCount(b: SourceBacklog | null | undefined): number {
  return b?.files ?? b?.records ?? 0;
}

/** Spark's `SourceProgress`. */
export interface SourceProgress {
  readonly description: string;
  readonly startOffset: Json | null;
  readonly endOffset: Json | null;
  /**
   * The latest offset noted at the start of the run (availableNow never reads past it); null on
   * a replay of a crashed run's batch, which runs before the run notes it.
   */
  readonly latestOffset: Json | null;
  readonly numInputRows: number;
  readonly inputRowsPerSecond: number;
  readonly processedRowsPerSecond: number;
  /**
   * Source-specific figures, Spark's `metrics` map: what the batch read from this source
   * (SourceReadMetrics), and the backlog after the batch (SourceBacklog: `files`, `bytes`,
   * `records` are what is still waiting, not what was read). `inputBytes`: the bytes of the
   * whole batch, on the first source (kept for readers of earlier records).
   */
  readonly metrics: SourceBacklog & SourceReadMetrics & { readonly inputBytes?: number };
}

/** Spark's `SinkProgress`. */
export interface SinkProgress {
  readonly description: string;
  readonly numOutputRows: number;
}

/** What sluice adds to Spark's record. */
export interface SluiceProgress {
  readonly replay: boolean;
  readonly noData: boolean;
  readonly numDeadLetters: number;
  /** Rows the watermark dropped that were written to the late-rows output. */
  readonly numLateRowsKept: number;
  /** True when the watermark advanced by the wall clock because the source was idle (option idleTimeout). */
  readonly watermarkAdvancedByIdleness?: boolean;
  /**
   * Requests made and capacity consumed during the batch, when the ports are metered (the AWS
   * pipeline): from the batch's start to writing progress/N. That write, commits/N and the
   * lease's renewals between batches count only in the run's RunReport.consumed.
   */
  readonly consumed?: Json;
}

/** Spark's `StreamingQueryProgress`, one per batch. */
export interface StreamingProgress {
  /** The query id (stable across runs, from the checkpoint). */
  readonly id: string;
  /** The run id (new for every run: a Lambda invocation or a CLI run). */
  readonly runId: string;
  readonly name: string;
  /** When the batch started (its planned timestamp, `offsets/N`). */
  readonly timestamp: string;
  readonly batchId: number;
  /** durationMs.triggerExecution. */
  readonly batchDuration: number;
  readonly numInputRows: number;
  /**
   * Rows per second of the time since the previous batch's timestamp, as Spark divides by the
   * time since the previous trigger started; for a run's first batch the previous batch is the
   * last one in the checkpoint (so the idle time between runs counts); 0 for a query's first batch.
   */
  readonly inputRowsPerSecond: number;
  /** Rows per second of triggerExecution (at least 1 ms, as Spark). */
  readonly processedRowsPerSecond: number;
  readonly durationMs: ProgressDurations;
  readonly eventTime: ProgressEventTime;
  readonly stateOperators: StateOperatorProgress[];
  readonly sources: SourceProgress[];
  readonly sink: SinkProgress;
  readonly sluice: SluiceProgress;
}

/** Called by the executor after each batch committed (the CLI's live progress line, tests). */
export type ProgressListener = (progress: StreamingProgress) => void;
