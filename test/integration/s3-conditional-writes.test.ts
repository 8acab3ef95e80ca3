/**
 * The embedded stack's S3 honours conditional writes as S3 does (s3rver alone ignores them), so
 * the write-once checkpoint entries are really write-once in every end-to-end test.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { httpStatus, errorName } from '../../lib/aws/request/errors';
import { testClients, uniqueName } from '../helpers/stack';

const s3 = () => testClients().s3;

async function failure(p: Promise<unknown>): Promise<{ status: number | undefined; name: string }> {
  try {
    await p;
  } catch (e) {
    return { status: httpStatus(e), name: errorName(e) };
  }
  throw new Error('the write succeeded where S3 refuses it');
}

describe('conditional PUTs on the local S3', () => {
  const bucket = uniqueName('cond');
  beforeAll(async () => {
    await s3().send(new CreateBucketCommand({ Bucket: bucket }));
  });

  const put = (Key: string, Body: string, extra: { IfNoneMatch?: string; IfMatch?: string } = {}) =>
    s3().send(new PutObjectCommand({ Bucket: bucket, Key, Body, ...extra }));
  const read = async (Key: string) => (await s3().send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToString();

  it('If-None-Match: * creates a new key, then refuses to overwrite it with 412 and keeps the first body', async () => {
    await put('log/offsets/0', 'first', { IfNoneMatch: '*' });
    expect(await failure(put('log/offsets/0', 'second', { IfNoneMatch: '*' }))).toEqual({ status: 412, name: 'PreconditionFailed' });
    expect(await read('log/offsets/0')).toBe('first');
  });

  it('two concurrent creates of one key: exactly one is written', async () => {
    const results = await Promise.allSettled(['a', 'b', 'c'].map((body) => put('race/key with spaces', body, { IfNoneMatch: '*' })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const winner = ['a', 'b', 'c'][results.findIndex((r) => r.status === 'fulfilled')];
    expect(await read('race/key with spaces')).toBe(winner);
  });

  it('If-Match writes only over the ETag it names', async () => {
    const first = await put('etag/k', 'v1');
    expect(await failure(put('etag/k', 'v2', { IfMatch: '"0123456789abcdef0123456789abcdef"' }))).toEqual({ status: 412, name: 'PreconditionFailed' });
    await put('etag/k', 'v2', { IfMatch: first.ETag! });
    expect(await read('etag/k')).toBe('v2');
    expect((await failure(put('etag/absent', 'v', { IfMatch: first.ETag! }))).status).toBe(404);
  });

  it('an unconditional PUT still overwrites', async () => {
    await put('plain/k', 'one');
    await put('plain/k', 'two');
    expect(await read('plain/k')).toBe('two');
  });

  it('a key over 1,024 bytes of UTF-8 is refused with 400 KeyTooLongError, as S3 does (s3rver alone answers 500)', async () => {
    const long = `k/${'é'.repeat(512)}`; // 1,026 bytes, 514 characters
    expect(await failure(put(long, 'x'))).toEqual({ status: 400, name: 'KeyTooLongError' });
    expect(await failure(put(long, 'x', { IfNoneMatch: '*' }))).toEqual({ status: 400, name: 'KeyTooLongError' });
    expect(await failure(s3().send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: long })))).toEqual({ status: 400, name: 'KeyTooLongError' });
    // 1,024 bytes, in folders (s3rver keeps a key as files, and a file name holds at most 255 bytes)
    const fits = `k/${`${'é'.repeat(50)}/`.repeat(10)}${'a'.repeat(12)}`;
    expect(Buffer.byteLength(fits)).toBe(1024);
    await put(fits, 'y');
    expect(await read(fits)).toBe('y');
  });

  it('CompleteMultipartUpload with If-None-Match: * creates the key once, then refuses with 412; AbortMultipartUpload answers', async () => {
    const upload = async (Key: string, body: string) => {
      const { UploadId } = await s3().send(new CreateMultipartUploadCommand({ Bucket: bucket, Key }));
      const part = await s3().send(new UploadPartCommand({ Bucket: bucket, Key, UploadId, PartNumber: 1, Body: body }));
      const complete = () =>
        s3().send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key,
            UploadId,
            IfNoneMatch: '*',
            MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
          }),
        );
      return { UploadId: UploadId!, complete };
    };
    const first = await upload('mpu/once', 'first');
    await first.complete();
    const second = await upload('mpu/once', 'second');
    expect(await failure(second.complete())).toEqual({ status: 412, name: 'PreconditionFailed' });
    await s3().send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: 'mpu/once', UploadId: second.UploadId }));
    expect(await read('mpu/once')).toBe('first');
  });
});
