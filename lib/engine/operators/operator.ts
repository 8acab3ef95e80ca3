/**
 * The stateful operators' contract with the run core (registry.ts picks the operator of a plan's
 * stateful step: windowed or grouped aggregation in aggregate.ts, session windows in session.ts,
 * deduplication in dedup.ts, stream-stream joins in stream-join.ts). Each processes one
 * micro-batch against the state store with Spark's rules:
 *
 *   late rows    filtered with the previous batch's watermark (lateWm), `<=` is late
 *   eviction     with this batch's own watermark (evictWm), after the batch's rows are applied
 *   append       emits a group once, when evicted
 *   update       emits the groups this batch changed, then evicts
 *   complete     emits every group, never evicts nor drops
 *
 * Within a batch everything is aggregated in memory first, so state reads and writes scale with
 * the distinct keys the batch touches, not with its rows.
 */
import type { Json, OperatorStateSpec, Row, StateChange, StateStore } from '../ports';
import type { OutputMode } from '../plan/types';
import type { ColumnInfo } from '../plan/columns';
import type { JoinSides } from '../plan/chain';
import type { RowErrorHandler } from '../rows';
import type { BatchMeta } from './batch';

/**
 * One batch of one operator: rows are added chunk by chunk as the source reads them (so a batch
 * never holds all its rows at once), then `finish` applies the batch to the state.
 */
export interface Accumulator {
  /** A promise when the operator reads state before it folds the rows (an aggregate's overflow guard): await it before the next chunk. */
  add(rows: readonly Row[]): void | Promise<void>;
  /** A stream-stream join's right side rows (the left ones come through add). */
  addRight?(rows: readonly Row[]): void;
  /** Read tasks' pre-aggregated groups (StatefulOperator.beginPartials), instead of rows. */
  addPartials?(entries: readonly Json[]): void;
  finish(state: StateStore): Promise<OperatorOutput>;
}

export interface OperatorOutput {
  /** Internal rows: timestamps as ms, windows as {start, end} in ms. */
  readonly rows: Row[];
  readonly changes: StateChange[];
  /** Input rows dropped as late. */
  readonly late: Row[];
  /** A stream-stream join's: late[i] from this index on are right-side rows. */
  readonly lateRightFrom?: number;
  /** Change in the number of state rows. */
  readonly stateRowsDelta: number;
}

export interface StatefulOperator {
  readonly spec: OperatorStateSpec;
  /** Whether a batch with no data can emit or evict when the watermark advances. */
  readonly runsNoDataBatches: boolean;
  /**
   * `io`: the state the batch reads (version N−1, as `finish` is given) and where a row the
   * operator refuses goes (an aggregate's overflow: FORMAT-3 departure 2). Without it such a row
   * fails the batch.
   */
  begin(batch: BatchMeta, io?: OperatorIo): Accumulator;
  /**
   * The state partition a row's state lives in (its grouping values, window left out), for a
   * partitioned run's read tasks to route rows to the partition task that owns them. Optional:
   * an operator without it runs a batch in one task.
   */
  partitionOf?(row: Row): number;
  /**
   * Whether a run without new data has something due at processing time `nowMs` in the state at
   * `version` (transformWithState's timers and TTL in processingTime mode): the planner then runs
   * one no-data batch. Optional: without it only the watermark makes a no-data batch due.
   */
  dueWithoutData?(state: StateStore, nowMs: number, version: number): Promise<boolean>;
  /**
   * Whether the operator refuses a row only against its group's stored running total (an exact
   * sum's overflow: overflow-guard.ts). A partitioned run then gives the partition tasks the rows
   * themselves, not read tasks' partial aggregates, so that the row that overflows is found and
   * kept as a dead letter as in one task, rather than the merge of two partials failing the batch.
   */
  readonly checksRowsAgainstState?: boolean;
  /**
   * A partitioned run's read task pre-aggregates its rows with this: the groups they make with
   * their in-batch aggregates, by partition, for the partition tasks' addPartials. Optional: an
   * operator without it gets the rows themselves. `onRowError`: where a row it refuses goes.
   */
  beginPartials?(batch: BatchMeta, onRowError?: RowErrorHandler): { add(rows: readonly Row[]): void; take(): { partials: Map<number, Json[]>; late: Row[] } };
}

/** What a batch's accumulator may use besides its rows (StatefulOperator.begin). */
export interface OperatorIo {
  readonly state: StateStore;
  readonly onRowError: RowErrorHandler;
}

export interface OperatorConfig {
  readonly operatorId: string;
  readonly outputMode: OutputMode;
  readonly inputColumns: readonly ColumnInfo[];
  /** Watermarked columns and their delays. */
  readonly watermarks: ReadonlyMap<string, number>;
  /**
   * Whether a withWatermark is upstream in the plan, so that the operator has an input watermark
   * (FORMAT-2), whether or not its column reaches the operator; absent: as `watermarks` says.
   */
  readonly watermarked?: boolean;
  /** The query's state partitions (StateKey.partition); absent: 1. */
  readonly statePartitions?: number;
  /** A stream-stream join's right side and state watermarks (plan/chain.ts operatorChain). */
  readonly join?: JoinSides;
}
