import type { SourceBacklog } from '../progress';
import type { Json, Row } from './values';

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

/**
 * The file a chunk's rows were read from, as a file source knows it: what Spark's
 * input_file_name() and the `_metadata` column of a file source give (lib/engine/expr/input-file.ts).
 */
export interface InputFile {
  /** Its URI, as Spark's file scan gives it: `s3://bucket/key`, the key's unsafe characters %-quoted. */
  readonly path: string;
  /** Its bytes as stored. */
  readonly size: number;
  /** When it was last modified (epoch ms), or null when the source does not know. */
  readonly modifiedMs: number | null;
}

export interface ReadResult {
  readonly rows: Row[];
  /** The file every row of the chunk comes from (a file source reads a file's rows in chunks of their own); absent for a stream. */
  readonly file?: InputFile;
  readonly deadLetters: DeadLetter[];
  /** Bytes read, for progress reports. */
  readonly bytes: number;
  /** Files this chunk began (a file source sets 1 on each file's first chunk), for progress reports. */
  readonly files?: number;
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
  /**
   * Batch `batchId`, which read up to `end`, committed (commits/N is written): what may only
   * happen after it (cleanSource's archive or delete, deleting notifications). Called by the run
   * core after the commit, whichever scheduler runs it, and again for a replayed batch; it must be
   * safe to repeat, and must not throw: a failure is logged and retried on a later call. Optional.
   */
  committed?(batchId: number, end: Json): Promise<void>;
}
