/**
 * The ports: the only way the engine talks to the world. Everything here is plain data and
 * promises; `lib/aws` implements them on S3/DynamoDB/Kinesis, `lib/engine/testing/memory.ts` in memory.
 */

import type { SourceBacklog } from './progress';
import type { ColumnType } from './schema';
import type { StaticTableSpec } from './plan/types';

/** A JSON value as stored in checkpoints and state. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A row as it flows through the engine: column name to value. Timestamps are epoch ms numbers. */
export type Row = Record<string, unknown>;

/** Where a source row came from, for the dead-letter output and error messages. */
export interface SourceLocation {
  /** S3 object key (landing prefix) or `shardId` (Kinesis). */
  readonly file?: string;
  /** 1-based line within the file. */
  readonly line?: number;
  readonly shardId?: string;
  readonly sequenceNumber?: string;
  /** The user record's index inside a KPL-aggregated Kinesis record. */
  readonly subSequenceNumber?: number;
}

/** A record the source could not turn into a row: kept, never skipped. */
export interface DeadLetter {
  readonly source: SourceLocation;
  readonly raw: string;
  readonly reason: string;
}

export interface ReadResult {
  readonly rows: Row[];
  readonly deadLetters: DeadLetter[];
  /** Bytes read, for progress reports. */
  readonly bytes: number;
}

export interface BatchLimits {
  readonly maxFilesPerTrigger?: number;
  readonly maxBytesPerTrigger?: number;
  readonly maxRecordsPerTrigger?: number;
}

/** What the executor asks of a read. */
export interface ReadOptions {
  /**
   * The columns the query uses (absent: all). A source may leave the schema's other columns off
   * its rows; it still reads and checks them, so whether a record is a dead letter never depends
   * on the query.
   */
  readonly columns?: readonly string[];
  /**
   * Read only split `index` of `count` of the batch (a partitioned run's read task): for a source
   * with planSplits, contiguous groups of the batch's files in key order. Absent: the whole batch.
   */
  readonly split?: { readonly index: number; readonly count: number };
}

/**
 * A replayable source. Offsets are JSON-serialisable; reading the same (start, end] twice yields
 * the same rows.
 *
 * availableNow: the executor calls `latestOffset()` once at the start of a run and never plans
 * past it.
 */
export interface Source {
  /** A short description for logs and progress ("s3://bucket/prefix"). */
  readonly description: string;
  /** The end of everything available now, or null when the source has never had data. */
  latestOffset(start: Json | null): Promise<Json | null>;
  /**
   * The end offset of the next batch starting after `start` (null: from the beginning), never
   * beyond `target`, honouring the limits. Returns null when there is nothing between start and
   * target. `batchId` lets a source log what the batch covers (e.g. its file list) before it runs.
   */
  planBatch(batchId: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null>;
  /** Read the rows of (start, end] for batch `batchId` (a replay passes the logged offsets). */
  read(batchId: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult>;
  /**
   * The same rows as `read`, in the same order, a chunk (e.g. a file) at a time, so that a batch
   * is aggregated as it is read and never held whole in memory. Optional.
   */
  readChunks?(batchId: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult>;
  /**
   * What is left between `from` and `target`, for the progress record and the run report: files
   * and bytes (S3), records and the age of the oldest unread one (Kinesis). Cheap: the executor
   * asks after every batch, so it answers from what the run already listed or fetched.
   */
  backlog?(from: Json | null, target: Json | null): Promise<SourceBacklog>;
  /**
   * How many splits (at most `maxSplits`, at least 1) the batch's range reads in, for a
   * partitioned run (ReadOptions.split): a source without it is read by one task. Optional.
   */
  planSplits?(batchId: number, start: Json | null, end: Json, maxSplits: number): Promise<number>;
}

/** The offset-log entry written before a batch runs (Spark's OffsetSeq). */
export interface OffsetEntry {
  readonly batchId: number;
  /** Per-source end offsets of the batch (index = source index). */
  readonly offsets: Json[];
  /** Per-source start offsets of the batch. */
  readonly startOffsets: Json[];
  readonly batchWatermarkMs: number;
  readonly batchTimestampMs: number;
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
}

/**
 * A key in a stateful operator's state.
 * `id` identifies it; `evictAt` is the event time (ms) at or below which the watermark evicts it
 * (null: never evicted by time).
 *
 * When the operator's `fixedEviction` is true, evictAt is a function of the key (a window end, an
 * event-time column of the key) and must be passed on lookups; the store may use it to place the
 * key. Otherwise evictAt can change with the value (sessions) or is only known from the value.
 */
export interface StateKey {
  readonly id: string;
  readonly evictAt: number | null;
  /**
   * The state partition of the key, 0 <= partition < the query's statePartitions (absent: 0): a
   * hash of its grouping values with the window left out (statePartition), so that every window
   * of a key lives in one partition. Entries the store returns carry the partition they came from.
   */
  readonly partition?: number;
}

export interface StateEntry {
  readonly key: StateKey;
  readonly value: Json;
}

/** A change made by batch `version`: value null deletes. */
export interface StateChange {
  readonly key: StateKey;
  readonly value: Json | null;
}

export interface OperatorStateSpec {
  /** Stable id of the operator in the query ("agg0", "dedup0"). */
  readonly operatorId: string;
  /** See StateKey. */
  readonly fixedEviction: boolean;
  /** Granularity (ms) at which eviction times are grouped; a hint for the store's layout. */
  readonly evictionGranularityMs: number;
}

/**
 * Versioned key/value state, per operator. Version N is the state after batch N committed.
 * A batch N reads at version N-1 and writes version N; a replay of batch N after a crash reads
 * at N-1 again, whatever part of N's writes happened before the crash.
 */
export interface StateStore {
  readonly description: string;
  /** Values visible at `version` for `keys` (absent keys are missing from the map, by id). */
  get(op: OperatorStateSpec, keys: StateKey[], version: number): Promise<Map<string, StateEntry>>;
  /**
   * Entries visible at `version` with evictAt <= watermarkMs; only those of `partitions` when
   * given (a partitioned run's partition task).
   */
  expired(op: OperatorStateSpec, watermarkMs: number, version: number, partitions?: readonly number[]): Promise<StateEntry[]>;
  /** Every entry visible at `version` (complete mode); only those of `partitions` when given. */
  all(op: OperatorStateSpec, version: number, partitions?: readonly number[]): Promise<StateEntry[]>;
  /** Number of keys visible at `version`. */
  count(op: OperatorStateSpec, version: number): Promise<number>;
  /**
   * Write batch `version`'s changes. Must be safe to call again for the same version after a
   * crash (the same or a subset of changes), and must never be visible to reads at version-1.
   * `fence`: the run's lease; a store that fences refuses (LeaseLostError, nothing of the batch
   * committed) when a run with a newer token has written the state since.
   * `partitions`: version N of only those partitions is written (the changes lie in them): the
   * partition tasks of a partitioned run commit each its own, and one must not rewrite another's
   * version N. Absent: every partition.
   */
  commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]): Promise<void>;
  /**
   * Throws a clear SluiceError when `commit(op, version, changes)` could not store a change (a
   * value too large for the store's items). The executor calls it before any effect of the batch
   * (dead letters, sink), so such a batch fails before it writes anything. Optional.
   */
  check?(op: OperatorStateSpec, version: number, changes: StateChange[]): Promise<void>;
  /**
   * How long (ms) a version superseded by a commit stays readable, when not forever: a replay
   * of a batch planned longer ago may need versions that are gone, and the executor refuses it.
   */
  readonly retentionMs?: number;
  /**
   * For a store whose versions expire (retentionMs): rewrites what would expire of the state at
   * `version` (the last committed batch). The executor calls it at the start of a run when the
   * last commit is older than `keepAliveAfterMs`, so an idle pipeline's state outlives the idle time.
   */
  keepAlive?(op: OperatorStateSpec, version: number, fence?: LeaseHandle): Promise<void>;
  readonly keepAliveAfterMs?: number;
  /**
   * The store's own counters since it was created (numbers by name; other members are ignored):
   * the executor reports what changed over each batch as the progress record's customMetrics. Optional.
   */
  stats?(): object;
}

/**
 * Blobs of a partitioned run under its checkpoint (`<checkpoint>/shuffle/...`): what a read task
 * hands the partition tasks, what they hand the commit. Keys are deterministic, so a retried task
 * overwrites what an earlier attempt wrote with the same content.
 */
export interface ShuffleStore {
  readonly description: string;
  put(key: string, body: string): Promise<void>;
  /** The body under `key`, null when absent. */
  get(key: string): Promise<string | null>;
  /** Removes the blob under `key` (nothing when absent). */
  delete(key: string): Promise<void>;
  /** Removes every blob of batches below `batchId` (the checkpoint's retention). */
  purgeBelow(batchId: number): Promise<void>;
}

export interface SinkContext {
  readonly queryId: string;
  readonly queryName: string;
  readonly outputMode: 'append' | 'update' | 'complete';
  /** Output column order, for sinks that care. */
  readonly columns: string[];
  /**
   * The type of each output column, by name, for sinks that write typed files (Parquet): a
   * schema type, or WINDOW for the `{start, end}` timestamps of a window()/session_window() key.
   * Filled by the executor; optional for sinks that only need `columns`.
   */
  readonly columnTypes?: Readonly<Record<string, OutputColumnType>>;
  /** Grouping columns of the output (the upsert key), empty for stateless/dedup queries. */
  readonly keyColumns: string[];
  /** The run's lease, when it holds one: sinks may fence their writes on its token. */
  readonly lease?: LeaseHandle;
  /**
   * Told after each durable piece of a batch's write (a DynamoDB transaction, an S3 object, a
   * guarded foreachBatch effect), in order, from 0. Sinks that write in several pieces call it;
   * the `mid-sink` crash decorator throws from it after piece 0 (lib/engine/testing/crash.ts).
   */
  readonly onPieceWritten?: (index: number) => void;
}

/** An output column's type: a schema type, or WINDOW (a struct of two TIMESTAMPs, start and end). */
export type OutputColumnType = ColumnType | 'WINDOW';

/** Output rows are JSON-ready: timestamps as ISO strings, windows as {start, end}. */
export type OutputRow = Record<string, Json>;

export interface Sink {
  readonly description: string;
  /** Idempotent per batch ID: a replay of batchId changes nothing it already wrote. */
  addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void>;
  /**
   * The batch's rows a chunk at a time, for a sink that writes as they come: the executor streams
   * a batch this way when its query has no stateful operator (and the sink has this method), so
   * that its memory follows one chunk, not the batch; otherwise it collects the rows and calls
   * addBatch. Optional.
   *
   * The iterable is pulled: the executor reads and stages the next source chunk only when the sink
   * asks for it, so a sink that finishes with a chunk before it asks for the next holds one. The
   * sink must take every chunk (the executor fails the batch if it returns before the end), and an
   * error of the read (the source failed) comes out of the iterable: what the sink wrote of the
   * batch stays, and the replay writes the rest.
   *
   * Replays: idempotent per batch ID, as addBatch. A replay of the batch yields the same chunks,
   * with the same rows in the same order (the source reads the same offsets in the same order, and
   * the stages are row by row; empty chunks are left out), so a sink may name what it writes by
   * position (the DynamoDB sink's chunk markers, the S3 file sinks' objects); a replay whose
   * content differs from what a previous attempt recorded must fail loudly, never be skipped.
   */
  addBatchChunks?(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx: SinkContext): Promise<void>;
  /**
   * How long (ms) the records that make a replay skip what it wrote (markers) live, when not
   * forever: the executor refuses a replay of a batch planned longer ago.
   */
  readonly retentionMs?: number;
}

/** Where dead letters and late rows go. Deterministic per batch so a replay overwrites. */
export interface DeadLetterSink {
  readonly description: string;
  write(batchId: number, kind: 'malformed' | 'late', records: Json[]): Promise<void>;
}

export interface LeaseHandle {
  readonly owner: string;
  /** Monotonic fencing token: larger for every new holder. */
  readonly token: number;
  readonly expiresAtMs: number;
}

export interface Lease {
  /**
   * Take the lease for `durationMs`, or return null when another live run holds it. The same
   * owner may take it again while it holds it (a retry of the run: a plan task that failed after
   * taking it), with a new token, so that what the failed attempt may still write is fenced out.
   */
  acquire(owner: string, durationMs: number): Promise<LeaseHandle | null>;
  /** Extend a held lease; throws LeaseLostError when it is no longer ours. */
  renew(handle: LeaseHandle, durationMs: number): Promise<LeaseHandle>;
  release(handle: LeaseHandle): Promise<void>;
}

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * A static table a stream-static join reads (plan/types.ts StaticTableSpec), opened once per run.
 * A table is read whole (`load`: every row, typed by its schema) or looked up by key (`lookup`:
 * the rows whose key columns, in the spec's `key` order, equal one of `keys`; any order, keys
 * without a row left out). Rows are typed as a source's (TIMESTAMP as epoch ms).
 */
export interface StaticTableReader {
  readonly description: string;
  load?(): Promise<Row[]>;
  lookup?(keys: ReadonlyArray<readonly unknown[]>): Promise<Row[]>;
}

/** Opens the static tables of a plan's join stages (lib/aws/pipeline.ts builds the AWS one). */
export interface StaticTables {
  open(spec: StaticTableSpec): StaticTableReader;
}
