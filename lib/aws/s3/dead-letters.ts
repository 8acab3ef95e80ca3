/**
 * The S3 dead-letter sink: the records of a batch that could not be parsed, or came too late for
 * the watermark, under deterministic keys (a replay of batch N overwrites them with the same
 * records).
 *
 *     <prefix>/<malformed|late>/batch-0000000042.jsonl   one record per line; only when non-empty
 */
import { InvalidOptionError } from '../../engine/errors';
import type { DeadLetterSink, Json } from '../../engine/ports';
import { batchFileName, fromJsonLines, toJsonLines } from './batch-files';
import { S3Prefix, type S3PrefixOptions } from './prefix';

type DeadLetterKind = 'malformed' | 'late';

export class S3DeadLetterSink extends S3Prefix implements DeadLetterSink {
  constructor(opts: S3PrefixOptions) {
    super(opts, 'S3DeadLetterSink');
  }

  /** One PUT when there are records, none otherwise. */
  async write(batchId: number, kind: DeadLetterKind, records: Json[]): Promise<void> {
    if (records.length === 0) return;
    await this.s3.putText(this.bucket, this.key(batchId, kind), toJsonLines(records), 'application/x-ndjson');
  }

  /** The records batch `batchId` sent to `kind`; empty when it sent none. */
  async read(batchId: number, kind: DeadLetterKind): Promise<Json[]> {
    const key = this.key(batchId, kind);
    const text = await this.s3.getText(this.bucket, key);
    return text === null ? [] : fromJsonLines(text, `s3://${this.bucket}/${key}`);
  }

  private key(batchId: number, kind: DeadLetterKind): string {
    if (kind !== 'malformed' && kind !== 'late') {
      throw new InvalidOptionError(`dead-letter kind ${JSON.stringify(kind)} is not one of "malformed", "late": pass one of them`);
    }
    return `${this.root}${kind}/${batchFileName(batchId)}`;
  }
}
