/**
 * What a run is given and what it answers: the ports and options both schedulers (the single
 * Lambda's loop in schedule/single.ts, the partitioned tasks in schedule/partitioned.ts) take,
 * and the batch and run reports they return.
 */
import type { CheckpointStore, Clock, DeadLetterSink, Lease, Sink, Source, StateStore, StaticTables } from '../ports';
import type { StreamingProgress, ProgressListener } from '../progress';
import type { OutputRow } from '../ports';
import type { QueryPlan } from '../plan/types';

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
  /**
   * The processing time a new batch is stamped with (offsets/N's processingTimeMs), when it is not
   * `clock`'s: the conformance runner's step `clock`. Absent: batchTimestampMs is the processing time.
   */
  readonly processingClock?: Clock;
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
