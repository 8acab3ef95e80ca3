/**
 * The discovery bench's S3 (bench/discovery.ts): the requests the landing source and the checkpoint
 * store send, answered from sorted keys in memory, handed to the SDK's S3Client as its `send`
 * (`twinClient`). As strict as S3 where listing is concerned: keys in UTF-8 byte order (S3's,
 * `compareKeys`), at most 1,000 keys a page whatever MaxKeys asks, StartAfter and Prefix as S3
 * applies them, 412 on If-None-Match: * of an existing key. What it does not do it refuses
 * (NotImplemented) rather than answer otherwise: continuation tokens (the adapters page with
 * StartAfter), Delimiter, and other commands. One bucket: `Bucket` is not read.
 * Tested by test/unit/s3-list-twin.test.ts.
 */
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { compareKeys } from '../lib/aws/s3/requests';

export interface TwinObject {
  readonly body: Uint8Array;
  readonly etag: string;
  readonly lastModified: Date;
}

function awsError(name: string, status: number, message: string): Error {
  return Object.assign(new Error(message), { name, Code: name, $metadata: { httpStatusCode: status } });
}

/**
 * The S3 requests the landing source and the checkpoint store send, on sorted keys in memory.
 * `requests` counts what it answered, to check the adapters' own counts against; `now` is the
 * LastModified of objects PUT.
 */
export class S3ListTwin {
  private readonly keys: string[] = [];
  private readonly objects = new Map<string, TwinObject>();
  readonly requests = { list: 0, get: 0, put: 0, delete: 0 };

  constructor(private readonly now: () => number) {}

  /** Keys given in S3's order (checked), e.g. a generated prefix. */
  load(sorted: Iterable<[string, TwinObject]>): void {
    for (const [k, o] of sorted) {
      if (this.keys.length && compareKeys(this.keys[this.keys.length - 1], k) >= 0) throw new Error(`twin load: ${k} is out of order`);
      this.keys.push(k);
      this.objects.set(k, o);
    }
  }

  /** The index of the first key greater than `key` (or ≥ when `inclusive`). */
  private lowerBound(key: string, inclusive: boolean): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareKeys(this.keys[mid], key);
      if (c < 0 || (!inclusive && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  put(key: string, body: Uint8Array, lastModified: Date, onlyIfAbsent: boolean): void {
    if (this.objects.has(key)) {
      if (onlyIfAbsent) throw awsError('PreconditionFailed', 412, `At least one of the pre-conditions you specified did not hold (${key})`);
    } else this.keys.splice(this.lowerBound(key, true), 0, key);
    this.objects.set(key, { body, etag: `"${key.length}-${body.length}-${lastModified.getTime()}"`, lastModified });
  }

  async send(command: unknown): Promise<unknown> {
    if (command instanceof ListObjectsV2Command) {
      this.requests.list++;
      const { Prefix = '', StartAfter, MaxKeys, ContinuationToken, Delimiter } = command.input;
      if (ContinuationToken !== undefined) throw awsError('NotImplemented', 501, 'the twin pages by StartAfter only');
      if (Delimiter !== undefined) throw awsError('NotImplemented', 501, 'the twin lists without a Delimiter only (no CommonPrefixes)');
      const max = Math.min(MaxKeys ?? 1000, 1000);
      const from = StartAfter !== undefined && compareKeys(StartAfter, Prefix) >= 0 ? this.lowerBound(StartAfter, false) : this.lowerBound(Prefix, true);
      const Contents: Array<{ Key: string; Size: number; ETag: string; LastModified: Date }> = [];
      let i = from;
      for (; i < this.keys.length && Contents.length < max && this.keys[i].startsWith(Prefix); i++) {
        const o = this.objects.get(this.keys[i])!;
        Contents.push({ Key: this.keys[i], Size: o.body.length, ETag: o.etag, LastModified: o.lastModified });
      }
      const IsTruncated = i < this.keys.length && this.keys[i].startsWith(Prefix);
      return { Contents, IsTruncated, KeyCount: Contents.length, $metadata: { httpStatusCode: 200 } };
    }
    if (command instanceof GetObjectCommand) {
      this.requests.get++;
      const o = this.objects.get(command.input.Key!);
      if (!o) throw awsError('NoSuchKey', 404, 'The specified key does not exist.');
      const body = o.body;
      return { Body: { transformToByteArray: async () => body }, ETag: o.etag, $metadata: { httpStatusCode: 200 } };
    }
    if (command instanceof PutObjectCommand) {
      this.requests.put++;
      const b = command.input.Body;
      const body = typeof b === 'string' ? Buffer.from(b, 'utf8') : (b as Uint8Array);
      this.put(command.input.Key!, body, new Date(this.now()), command.input.IfNoneMatch === '*');
      return { ETag: this.objects.get(command.input.Key!)!.etag, $metadata: { httpStatusCode: 200 } };
    }
    if (command instanceof DeleteObjectsCommand) {
      this.requests.delete++;
      for (const { Key } of command.input.Delete?.Objects ?? []) {
        if (Key !== undefined && this.objects.delete(Key)) this.keys.splice(this.lowerBound(Key, true), 1);
      }
      return { Errors: [], $metadata: { httpStatusCode: 200 } };
    }
    throw awsError(
      'NotImplemented',
      501,
      `the twin answers ListObjectsV2, GetObject, PutObject and DeleteObjects, not ${(command as object).constructor.name}`,
    );
  }
}

/** An S3Client whose commands the twin answers instead of sending them over HTTP. */
export function twinClient(twin: S3ListTwin): S3Client {
  const client = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'twin', secretAccessKey: 'twin' } });
  client.send = ((command: unknown) => twin.send(command)) as S3Client['send'];
  return client;
}
