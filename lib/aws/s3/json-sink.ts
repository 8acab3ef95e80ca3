/**
 * S3 sinks with deterministic keys: batch N always goes to the same object, so a replay of N
 * overwrites it with the same content and changes nothing (the "effects whose replay is harmless"
 * of DESIGN.md; no batch-ID guard needed).
 *
 *     S3JsonSink          <prefix>/batch-0000000042.jsonl           one JSON object per line;
 *                                                                   an empty batch writes an empty
 *                                                                   object: "42 produced nothing"
 *     S3DeadLetterSink    <prefix>/<malformed|late>/batch-0000000042.jsonl   only when non-empty
 *
 * Readers (tests, the conformance runner) use readBatch/listBatches and read.
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { DeadLetterSink, Json, OutputRow, Sink, SinkContext } from '../../engine/ports';
import { bytesToString } from './checkpoint';
import { S3Prefix, type S3PrefixOptions } from './prefix';

export type S3SinkOptions = S3PrefixOptions;

type DeadLetterKind = 'malformed' | 'late';

export class S3JsonSink extends S3Prefix implements Sink {
  constructor(opts: S3SinkOptions) {
    super(opts, 'S3JsonSink');
  }

  /** One PUT, whatever the batch holds. */
  async addBatch(batchId: number, rows: OutputRow[], _ctx?: SinkContext): Promise<void> {
    await this.s3.putObject({
      Bucket: this.bucket,
      Key: this.root + batchFileName(batchId),
      Body: Buffer.from(toJsonLines(rows), 'utf8'),
      ContentType: 'application/x-ndjson',
    });
  }

  /** The rows batch `batchId` wrote (possibly none), or null when it wrote nothing yet. */
  async readBatch(batchId: number): Promise<OutputRow[] | null> {
    const key = this.root + batchFileName(batchId);
    const got = await this.s3.getObject(this.bucket, key);
    return got === null ? null : (fromJsonLines(bytesToString(got.body), `s3://${this.bucket}/${key}`) as OutputRow[]);
  }

  /** Batch IDs written so far, ascending. */
  async listBatches(): Promise<number[]> {
    const listed = await this.s3.listAll(this.bucket, `${this.root}batch-`);
    const ids: number[] = [];
    for (const o of listed) {
      const id = parseBatchFileName(o.key.slice(this.root.length));
      if (id !== null) ids.push(id);
    }
    return ids.sort((a, b) => a - b);
  }
}

export class S3DeadLetterSink extends S3Prefix implements DeadLetterSink {
  constructor(opts: S3SinkOptions) {
    super(opts, 'S3DeadLetterSink');
  }

  /** One PUT when there are records, none otherwise. */
  async write(batchId: number, kind: DeadLetterKind, records: Json[]): Promise<void> {
    if (records.length === 0) return;
    await this.s3.putObject({
      Bucket: this.bucket,
      Key: this.key(batchId, kind),
      Body: Buffer.from(toJsonLines(records), 'utf8'),
      ContentType: 'application/x-ndjson',
    });
  }

  /** The records batch `batchId` sent to `kind`; empty when it sent none. */
  async read(batchId: number, kind: DeadLetterKind): Promise<Json[]> {
    const key = this.key(batchId, kind);
    const got = await this.s3.getObject(this.bucket, key);
    return got === null ? [] : fromJsonLines(bytesToString(got.body), `s3://${this.bucket}/${key}`);
  }

  private key(batchId: number, kind: DeadLetterKind): string {
    if (kind !== 'malformed' && kind !== 'late') {
      throw new InvalidOptionError(`dead-letter kind ${JSON.stringify(kind)} is not one of "malformed", "late"`);
    }
    return `${this.root}${kind}/${batchFileName(batchId)}`;
  }
}

/** `batch-0000000042.jsonl`: zero-padded to 10 digits so keys list in batch order. */
export function batchFileName(batchId: number): string {
  if (!Number.isInteger(batchId) || batchId < 0 || batchId > 9_999_999_999) {
    throw new InvalidOptionError(`batch ID ${batchId} is not an integer from 0 to 9999999999: batch IDs count up from 0`);
  }
  return `batch-${String(batchId).padStart(10, '0')}.jsonl`;
}

function parseBatchFileName(name: string): number | null {
  const m = /^batch-(\d{10})\.jsonl$/.exec(name);
  return m ? Number(m[1]) : null;
}

function toJsonLines(values: readonly unknown[]): string {
  if (values.length === 0) return '';
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = JSON.stringify(values[i]);
  return `${parts.join('\n')}\n`;
}

function fromJsonLines(text: string, where: string): Json[] {
  const out: Json[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let nl = text.indexOf('\n', start);
    if (nl === -1) nl = text.length;
    lineNo++;
    if (nl > start) {
      const line = text.slice(start, nl);
      try {
        out.push(JSON.parse(line) as Json);
      } catch (e) {
        throw new SluiceError(`${where} line ${lineNo} is not JSON (${(e as Error).message}): the object was not written by sluice, or is damaged`, { cause: e });
      }
    }
    start = nl + 1;
  }
  return out;
}
