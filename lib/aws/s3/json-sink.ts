/**
 * The S3 JSON sink, with deterministic keys: batch N always goes to the same object, written once
 * (If-None-Match: *). A replay of N finds it there with the same rows (in any order) and changes
 * nothing; an object with other rows (a stale run, an earlier checkpoint on this prefix) is a
 * loud error, never overwritten.
 *
 *     <prefix>/batch-0000000042.jsonl     one JSON object per line; an empty batch writes an
 *                                         empty object: "42 produced nothing"
 *
 * No string (or buffer) of the whole batch, whatever its size: V8 strings end near 512 MiB
 * ("RangeError: Invalid string length", which failed every replay of a large batch), and a
 * Lambda's memory ends earlier. The rows are serialized a row at a time into parts of `partBytes`
 * (8 MiB):
 *
 *     batch under one part ─▶ PutObject If-None-Match: *          ─412─▶ compare (below)
 *     batch of more parts  ─▶ CreateMultipartUpload ─▶ UploadPart 1, 2, … as each part fills
 *                             ─▶ CompleteMultipartUpload If-None-Match: *
 *                                                  ─412─▶ AbortMultipartUpload, compare
 *     any failure of an upload ─▶ AbortMultipartUpload (best effort), the error stands
 *
 * The comparison holds neither text either: each side is an order-independent digest (line count,
 * bytes, sum mod 2^64 of each line's hash: LinesDigest in batch-files.ts), this write's built as
 * it serializes, the stored object's while its GetObject body streams. The memory of a write is
 * one part plus the chunk the executor hands over (addBatchChunks), or the rows given (addBatch).
 *
 * Readers (tests, the conformance runner) use readBatch/listBatches; readBatch reads an object
 * whole, so it is for objects well under 512 MiB.
 */
import { InvalidOptionError } from '../../engine/errors';
import { jsonLineOf } from '../../engine/output-json';
import type { OutputColumnType, OutputRow, Sink, SinkContext } from '../../engine/ports';
import { batchFileName, fromJsonLines, once } from './batch-files';
import { DEFAULT_PART_BYTES, MIN_PART_BYTES, S3Prefix, type S3PrefixOptions } from './prefix';

export interface S3SinkOptions extends S3PrefixOptions {
  /**
   * Bytes of JSON lines per part: a batch's text under one part is one PutObject, a larger one a
   * multipart upload of parts this large (the last smaller; a part ends on a row, so it may pass
   * this by one row). S3 needs at least 5 MiB per part but the last. @default 8 MiB
   */
  readonly partBytes?: number;
}

export class S3JsonSink extends S3Prefix implements Sink {
  private readonly partBytes: number;

  constructor(opts: S3SinkOptions) {
    super(opts, 'S3JsonSink');
    this.partBytes = opts.partBytes ?? DEFAULT_PART_BYTES;
    if (!Number.isSafeInteger(this.partBytes) || this.partBytes < MIN_PART_BYTES) {
      throw new InvalidOptionError(
        `S3JsonSink partBytes ${opts.partBytes} must be an integer of at least ${MIN_PART_BYTES} (5 MiB, S3's smallest part): leave it out for 8 MiB`,
      );
    }
  }

  /** The batch's one object: a PUT, or a multipart upload when its text passes a part (see the header). */
  async addBatch(batchId: number, rows: OutputRow[], ctx?: SinkContext): Promise<void> {
    await this.putLinesOnce(batchFileName(batchId), once(rows), `the output of batch ${batchId},`, this.partBytes, lineWriter(ctx));
  }

  /** A stateless batch as the executor streams it: rows become parts as they come, one part held at a time. */
  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx?: SinkContext): Promise<void> {
    await this.putLinesOnce(batchFileName(batchId), chunks, `the output of batch ${batchId},`, this.partBytes, lineWriter(ctx));
  }

  /**
   * The rows batch `batchId` wrote (possibly none), or null when it wrote nothing yet. With the
   * query's output column types (`outputColumnTypes(plan)`), each row is the output row that was
   * written (a DECIMAL back to its text with its scale, a BIGINT beyond 2^53 to its digits);
   * without, the lines as JSON.parse reads them.
   */
  async readBatch(batchId: number, types?: Readonly<Record<string, OutputColumnType>>): Promise<OutputRow[] | null> {
    const key = this.root + batchFileName(batchId);
    const text = await this.s3.getText(this.bucket, key);
    return text === null ? null : (fromJsonLines(text, `s3://${this.bucket}/${key}`, types) as OutputRow[]);
  }

  /** Batch IDs written so far, ascending. */
  listBatches(): Promise<number[]> {
    return this.listBatchIds('batch-', /^(\d{10})\.jsonl$/);
  }
}

/** How a row becomes its line: typed by the context's column types (a DECIMAL as a JSON number with its scale: output-json.ts). */
function lineWriter(ctx: SinkContext | undefined): (row: OutputRow) => string {
  return (row) => jsonLineOf(row, ctx?.columnTypes);
}
