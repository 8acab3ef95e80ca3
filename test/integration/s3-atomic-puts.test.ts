/**
 * The embedded stack's S3 stores a PUT atomically, as S3 does (s3rver alone writes into the
 * object's file while readers read it, and answers a PUT before the file is flushed): a GET sees
 * the old object or the new one, whole, and a GET after the PUT's answer sees the new one. A
 * partitioned run on worker threads reads what another thread has just written; on the plain
 * s3rver one failed with "Unexpected end of JSON input".
 */
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { testClients, uniqueName } from '../helpers/stack';

const s3 = () => testClients().s3;

describe('when an object is overwritten while it is being read', () => {
  const bucket = uniqueName('atomic');
  beforeAll(async () => {
    await s3().send(new CreateBucketCommand({ Bucket: bucket }));
  });
  /** A JSON document of about 4 MB whose every value is `v`. */
  const doc = (v: number) => JSON.stringify({ v, rows: Array.from({ length: 100_000 }, (_, i) => ({ i, v, pad: 'x'.repeat(20) })) });
  const read = async (Key: string) => (await s3().send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToString();

  it('every read gets one whole version, and a read after a write gets that write', async () => {
    const key = 'shuffle/0/out/1';
    await s3().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: doc(0) }));
    const seen: number[] = [];
    for (let round = 1; round <= 8; round++) {
      const body = doc(round);
      const reads = Array.from({ length: 4 }, () => read(key));
      await s3().send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      // read-after-write: the version just written, whole
      const after = await read(key);
      expect(after.length).toBe(body.length);
      expect((JSON.parse(after) as { v: number }).v).toBe(round);
      // reads in flight during the write: an old or the new version, each whole
      for (const text of await Promise.all(reads)) {
        const parsed = JSON.parse(text) as { v: number; rows: Array<{ v: number }> };
        expect(parsed.rows.every((r) => r.v === parsed.v)).toBe(true);
        seen.push(parsed.v);
      }
    }
    expect(seen.length).toBe(32);
    // the temporary files of the writes are never listed
    const listed = await s3().send(new ListObjectsV2Command({ Bucket: bucket }));
    expect((listed.Contents ?? []).map((o) => o.Key)).toEqual([key]);
  });
});
