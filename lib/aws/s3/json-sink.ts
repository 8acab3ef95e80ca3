/**
 * The S3 JSON sink, with deterministic keys: batch N always goes to the same object, written once
 * (If-None-Match: *). A replay of N finds it there with the same rows (in any order) and changes
 * nothing; an object with other rows (a stale run, an earlier checkpoint on this prefix) is a
 * loud error, never overwritten.
 *
 *     <prefix>/batch-0000000042.jsonl     one JSON object per line; an empty batch writes an
 *                                         empty object: "42 produced nothing"
 *
 * Readers (tests, the conformance runner) use readBatch/listBatches.
 */
import type { OutputRow, Sink, SinkContext } from '../../engine/ports';
import { batchFileName, fromJsonLines, sameLines, toJsonLines } from './batch-files';
import { S3Prefix, type S3PrefixOptions } from './prefix';

export type S3SinkOptions = S3PrefixOptions;

export class S3JsonSink extends S3Prefix implements Sink {
  constructor(opts: S3SinkOptions) {
    super(opts, 'S3JsonSink');
  }

  /** One write-once PUT, whatever the batch holds (a replay: one PUT answered 412, one GET). */
  async addBatch(batchId: number, rows: OutputRow[], _ctx?: SinkContext): Promise<void> {
    await this.putOnce(batchFileName(batchId), toJsonLines(rows), 'application/x-ndjson', `the output of batch ${batchId},`, sameLines);
  }

  /**
   * A stateless batch as the executor streams it: each chunk becomes its lines at once, so the
   * rows of a chunk are dropped as the next comes, but the batch's one object is one write-once
   * PUT, so its text is held until the end (the S3 file sink writes objects as they fill).
   */
  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, _ctx?: SinkContext): Promise<void> {
    const text: string[] = [];
    for await (const rows of chunks) text.push(toJsonLines(rows));
    await this.putOnce(batchFileName(batchId), text.join(''), 'application/x-ndjson', `the output of batch ${batchId},`, sameLines);
  }

  /** The rows batch `batchId` wrote (possibly none), or null when it wrote nothing yet. */
  async readBatch(batchId: number): Promise<OutputRow[] | null> {
    const key = this.root + batchFileName(batchId);
    const text = await this.s3.getText(this.bucket, key);
    return text === null ? null : (fromJsonLines(text, `s3://${this.bucket}/${key}`) as OutputRow[]);
  }

  /** Batch IDs written so far, ascending. */
  listBatches(): Promise<number[]> {
    return this.listBatchIds('batch-', /^(\d{10})\.jsonl$/);
  }
}
