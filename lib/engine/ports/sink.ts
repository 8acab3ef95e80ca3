import type { DataType } from '../schema';
import type { LeaseHandle } from './lease';
import type { OutputRow } from './values';

export interface SinkContext {
  readonly queryId: string;
  readonly queryName: string;
  readonly outputMode: 'append' | 'update' | 'complete';
  /** Output column order, for sinks that care. */
  readonly columns: string[];
  /**
   * The type of each output column, by name, for sinks that write typed values (Parquet's
   * schema, DynamoDB's numbers, the JSON sink's decimals): the full type (a DECIMAL's precision
   * and scale, an ARRAY's element, a MAP's value, a STRUCT's fields, at any depth), or WINDOW for
   * the `{start, end}` timestamps of a window()/session_window() key. Filled by the executor;
   * optional for sinks that only need `columns`.
   */
  readonly columnTypes?: Readonly<Record<string, OutputColumnType>>;
  /** Grouping columns of the output (the upsert key), empty for stateless/dedup queries. */
  readonly keyColumns: string[];
  /**
   * The query sorts its output (orderBy after a complete-mode aggregation): a batch's rows come in
   * that order, the same on a replay, and a file sink keeps it instead of ordering them its own way.
   */
  readonly ordered?: boolean;
  /** The run's lease, when it holds one: sinks may fence their writes on its token. */
  readonly lease?: LeaseHandle;
  /**
   * Told after each durable piece of a batch's write (a DynamoDB transaction, an S3 object, a
   * guarded foreachBatch effect), in order, from 0. Sinks that write in several pieces call it;
   * the `mid-sink` crash decorator throws from it after piece 0 (lib/engine/testing/crash.ts).
   */
  readonly onPieceWritten?: (index: number) => void;
}

/** An output column's type: a full schema type, or WINDOW (a struct of two TIMESTAMPs, start and end). */
export type OutputColumnType = DataType | 'WINDOW';

/** A row a sink cannot write (Sink.check): its index in the rows checked, and why, for the dead letter. */
export interface RefusedRow {
  readonly index: number;
  readonly reason: string;
}

export interface Sink {
  readonly description: string;
  /**
   * The rows of `rows` this sink could never write, whatever the attempt (an S3 key over 1,024
   * bytes, a DynamoDB item over 400 KB, a value the format cannot hold), each with the reason:
   * the executor moves them to the dead letters (kind 'unwritable', with the reason) before any
   * effect of the batch and hands the sink the rest, so one such record never fails every replay
   * of its batch. A streamed batch (addBatchChunks) is checked a chunk at a time, as it is read,
   * and its refused rows are written to the dead letters after the sink, as its malformed records.
   *
   * Deterministic: a row's verdict depends on the row, the batch ID and the context only (never
   * on other rows or the attempt), so a replay refuses the same rows. Sinks whose writes cannot
   * fail on a row's content leave it out. Optional.
   */
  check?(batchId: number, rows: readonly OutputRow[], ctx: SinkContext): RefusedRow[] | Promise<RefusedRow[]>;
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
