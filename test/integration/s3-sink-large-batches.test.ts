/**
 * No S3 sink builds one string of a whole batch: a batch whose JSON lines pass V8's longest string
 * (about 512 MiB; the S3 JSON sink joined them and failed every replay with "RangeError: Invalid
 * string length") is written as a multipart upload of parts as they fill, and compared on a replay
 * by a digest of the stored object's lines read as its body streams. On a fake S3 client that keeps
 * only what it needs (no emulator: the local S3 would store 600 MiB).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { LinesDigest } from '../../lib/aws/s3/batch-files';
import { S3DeadLetterSink } from '../../lib/aws/s3/dead-letters';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import type { OutputRow, SinkContext } from '../../lib/engine/ports';

const ctx: SinkContext = { queryId: 'q', queryName: 'big', outputMode: 'append', columns: ['id', 'text'], keyColumns: [] };

/** An S3 that stores objects as their parts (never joined), answers 412 as S3 does, and counts. */
function fakeS3() {
  const objects = new Map<string, Buffer[]>();
  const uploads = new Map<string, { key: string; parts: Buffer[] }>();
  const calls: string[] = [];
  let maxPart = 0;
  const fail = (status: number, name: string) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
  const client = {
    async send(cmd: { input: Record<string, unknown> }) {
      const input = cmd.input as { Key: string; Body?: Uint8Array; UploadId?: string; IfNoneMatch?: string; PartNumber?: number };
      calls.push(cmd.constructor.name);
      if (cmd instanceof PutObjectCommand) {
        if (input.IfNoneMatch === '*' && objects.has(input.Key)) throw fail(412, 'PreconditionFailed');
        objects.set(input.Key, [Buffer.from(input.Body!)]);
        return {};
      }
      if (cmd instanceof CreateMultipartUploadCommand) {
        const id = `u${uploads.size}`;
        uploads.set(id, { key: input.Key, parts: [] });
        return { UploadId: id };
      }
      if (cmd instanceof UploadPartCommand) {
        const body = Buffer.from(input.Body!);
        maxPart = Math.max(maxPart, body.byteLength);
        uploads.get(input.UploadId!)!.parts[input.PartNumber! - 1] = body;
        return { ETag: `"${input.PartNumber}"` };
      }
      if (cmd instanceof CompleteMultipartUploadCommand) {
        if (input.IfNoneMatch === '*' && objects.has(input.Key)) throw fail(412, 'PreconditionFailed');
        objects.set(input.Key, uploads.get(input.UploadId!)!.parts);
        uploads.delete(input.UploadId!);
        return {};
      }
      if (cmd instanceof AbortMultipartUploadCommand) {
        uploads.delete(input.UploadId!);
        return {};
      }
      if (cmd instanceof GetObjectCommand) {
        const parts = objects.get(input.Key);
        if (!parts) throw fail(404, 'NoSuchKey');
        return {
          Body: (async function* () {
            // in pieces that cut lines anywhere, as a socket does
            for (const p of parts) for (let i = 0; i < p.byteLength; i += 1_000_003) yield p.subarray(i, i + 1_000_003);
          })(),
        };
      }
      throw new Error(`unexpected ${cmd.constructor.name}`);
    },
  };
  return { client: client as unknown as S3Client, objects, uploads, calls, maxPart: () => maxPart };
}

/** 540 rows of 1 MiB of text each (one string shared): 540 MiB of JSON lines, past V8's longest string (2^29 − 24 UTF-16 units). */
const MIB = 1024 * 1024;
const text = 'x'.repeat(MIB);
const rows: OutputRow[] = Array.from({ length: 540 }, (_, id) => ({ id, text }));
async function* chunks(size: number): AsyncIterable<OutputRow[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

describe('a batch of 540 MiB of JSON lines to the S3 JSON sink', () => {
  it('streamed (addBatchChunks): a multipart upload of 8 MiB parts, no string of the batch; the replay in another order passes by digest', async () => {
    const s3 = fakeS3();
    const sink = new S3JsonSink({ client: s3.client, bucket: 'b', prefix: 'out' });
    await sink.addBatchChunks(0, chunks(50), ctx);
    const parts = s3.objects.get('out/batch-0000000000.jsonl')!;
    expect(parts.length).toBeGreaterThanOrEqual(65);
    expect(s3.maxPart()).toBeLessThan(10 * MIB);
    const stored = new LinesDigest();
    for (const p of parts) stored.addText(p);
    expect(stored.end().lines).toBe(540);

    s3.calls.length = 0;
    await new S3JsonSink({ client: s3.client, bucket: 'b', prefix: 'out' }).addBatch(0, [...rows].reverse(), ctx);
    expect(s3.calls.filter((c) => c !== 'UploadPartCommand')).toEqual([
      'CreateMultipartUploadCommand',
      'CompleteMultipartUploadCommand',
      'AbortMultipartUploadCommand',
      'GetObjectCommand',
    ]);
    expect(s3.uploads.size).toBe(0);
    await expect(new S3JsonSink({ client: s3.client, bucket: 'b', prefix: 'out' }).addBatch(0, rows.slice(1), ctx)).rejects.toThrow(
      /already holds other content \(540 lines, \d+ bytes, this write 539 lines/,
    );
  }, 60_000);

  it('handed over whole (addBatch): the same parts, and the upload is aborted when the batch fails midway', async () => {
    const s3 = fakeS3();
    await new S3JsonSink({ client: s3.client, bucket: 'b', prefix: 'out' }).addBatch(7, rows, ctx);
    expect(s3.objects.get('out/batch-0000000007.jsonl')!.length).toBeGreaterThanOrEqual(65);
    async function* failing(): AsyncIterable<OutputRow[]> {
      yield rows.slice(0, 100);
      throw new Error('the source failed');
    }
    await expect(new S3JsonSink({ client: s3.client, bucket: 'b', prefix: 'out' }).addBatchChunks(8, failing(), ctx)).rejects.toThrow('the source failed');
    expect(s3.calls.at(-1)).toBe('AbortMultipartUploadCommand');
    expect(s3.uploads.size).toBe(0);
    expect(s3.objects.has('out/batch-0000000008.jsonl')).toBe(false);
  }, 60_000);

  it('the dead letters of such a batch too', async () => {
    const s3 = fakeS3();
    await new S3DeadLetterSink({ client: s3.client, bucket: 'b', prefix: 'dl' }).write(3, 'malformed', rows);
    expect(s3.objects.get('dl/malformed/batch-0000000003.jsonl')!.length).toBeGreaterThanOrEqual(65);
  }, 60_000);
});
