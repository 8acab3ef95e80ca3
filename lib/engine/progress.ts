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
  /** Writing `commits/N`. */
  readonly commitOffsets?: number;
  /** The whole batch. */
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
  readonly numRowsTotal: number;
  readonly numRowsUpdated: number;
  readonly numRowsRemoved: number;
  readonly numRowsDroppedByWatermark: number;
  readonly commitTimeMs: number;
  /** Bytes of the operator's state held in memory during the batch (an estimate). */
  readonly memoryUsedBytes: number;
  readonly numShufflePartitions?: number;
  readonly numStateStoreInstances?: number;
  /** Store-specific figures (e.g. pages written, write units). */
  readonly customMetrics?: Readonly<Record<string, number>>;
}

/** What is still waiting in the source after the batch's end offset (as of the run's latest offset). */
export interface SourceBacklog {
  /** S3 landing prefix: files and bytes not yet read. */
  readonly files?: number;
  readonly bytes?: number;
  /** Kinesis: records not yet read, and the age of the oldest unread record. */
  readonly records?: number;
  readonly millisBehindLatest?: number;
}

/** Spark's `SourceProgress`. */
export interface SourceProgress {
  readonly description: string;
  readonly startOffset: Json | null;
  readonly endOffset: Json | null;
  /** The latest offset noted at the start of the run (availableNow never reads past it). */
  readonly latestOffset: Json | null;
  readonly numInputRows: number;
  readonly inputRowsPerSecond: number;
  readonly processedRowsPerSecond: number;
  /** Source-specific figures, Spark's `metrics` map: here the backlog and the bytes read. */
  readonly metrics: SourceBacklog & { readonly inputBytes?: number };
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
  /** Requests made and capacity consumed during the batch, when the ports are metered. */
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
  readonly batchDuration: number;
  readonly numInputRows: number;
  readonly inputRowsPerSecond: number;
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
