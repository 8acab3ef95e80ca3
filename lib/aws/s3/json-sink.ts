/**
 * The S3 JSON sink, with deterministic keys: batch N always goes to the same object, so a replay
 * of N overwrites it with the same content and changes nothing (the "effects whose replay is
 * harmless" of DESIGN.md; no batch-ID guard needed).
 *
 *     <prefix>/batch-0000000042.jsonl     one JSON object per line; an empty batch writes an
 *                                         empty object: "42 produced nothing"
 *
 * Readers (tests, the conformance runner) use readBatch/listBatches.
 */
import type { OutputRow, Sink, SinkContext } from '../../engine/ports';
import { batchFileName, fromJsonLines, toJsonLines } from './batch-files';
import { S3Prefix, type S3PrefixOptions } from './prefix';

export type S3SinkOptions = S3PrefixOptions;

export class S3JsonSink extends S3Prefix implements Sink {
  constructor(opts: S3SinkOptions) {
    super(opts, 'S3JsonSink');
  }

  /** One PUT, whatever the batch holds. */
  async addBatch(batchId: number, rows: OutputRow[], _ctx?: SinkContext): Promise<void> {
    await this.s3.putText(this.bucket, this.root + batchFileName(batchId), toJsonLines(rows), 'application/x-ndjson');
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
