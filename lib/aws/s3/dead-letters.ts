/**
 * The S3 dead-letter sink: the records of a batch that could not be parsed, came too late for
 * the watermark, or were refused by the sink (unwritable: `{ row, reason, batchId, sink }`), under
 * deterministic keys written once (a replay of batch N finds the same records there; other
 * records are a loud error, never an overwrite).
 *
 *     <prefix>/<malformed|late|unwritable>/batch-0000000042.jsonl   one record per line; only when non-empty
 */
import { InvalidOptionError } from '../../engine/errors';
import type { DeadLetterKind, DeadLetterSink, Json } from '../../engine/ports';
import { batchFileName, fromJsonLines, once } from './batch-files';
import { S3Prefix, type S3PrefixOptions } from './prefix';

const KINDS: readonly DeadLetterKind[] = ['malformed', 'late', 'unwritable'];

export class S3DeadLetterSink extends S3Prefix implements DeadLetterSink {
  constructor(opts: S3PrefixOptions) {
    super(opts, 'S3DeadLetterSink');
  }

  /** One write-once PUT when there are records (a multipart upload past 8 MiB: putLinesOnce), none otherwise. */
  async write(batchId: number, kind: DeadLetterKind, records: Json[]): Promise<void> {
    if (records.length === 0) return;
    await this.putLinesOnce(this.key(batchId, kind).slice(this.root.length), once(records), `the ${kind} dead letters of batch ${batchId},`);
  }

  /** The records batch `batchId` sent to `kind`; empty when it sent none. */
  async read(batchId: number, kind: DeadLetterKind): Promise<Json[]> {
    const key = this.key(batchId, kind);
    const text = await this.s3.getText(this.bucket, key);
    return text === null ? [] : fromJsonLines(text, `s3://${this.bucket}/${key}`);
  }

  private key(batchId: number, kind: DeadLetterKind): string {
    if (!KINDS.includes(kind)) {
      throw new InvalidOptionError(`dead-letter kind ${JSON.stringify(kind)} is not one of ${KINDS.map((k) => `"${k}"`).join(', ')}: pass one of them`);
    }
    return `${this.root}${kind}/${batchFileName(batchId)}`;
  }
}
