/**
 * The S3 shuffle store's range reads (a partition task reads its section of a read task's one
 * object, lib/engine/schedule/partitioned.ts) on the embedded stack's S3, beside the in-memory twin:
 * byte ranges of a UTF-8 body, so a section after a multi-byte character starts where its bytes
 * do; an end past the object stops at its end; an absent key is null; a start past the object is
 * refused, as S3 answers 416.
 */
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { S3ShuffleStore } from '../../lib/aws/s3/shuffle';
import type { ShuffleStore } from '../../lib/engine/ports';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { testClients, uniqueName } from '../helpers/stack';

const bucket = uniqueName('shuffle-ranges');

beforeAll(async () => {
  await testClients().s3.send(new CreateBucketCommand({ Bucket: bucket }));
});

describe.each([
  ['S3 (the embedded stack)', () => new S3ShuffleStore({ client: testClients().s3, bucket, prefix: 'cp-shuffle' }) as ShuffleStore],
  ['the in-memory twin', () => new InMemoryShuffle() as ShuffleStore],
])('%s', (_name, make) => {
  it('reads a section by its byte range', async () => {
    const store = make();
    const sections = ['[{"user":"zoë"}]', '[{"user":"日本"}]', '[]'];
    await store.put('0/read/0/data', sections.join(''));
    let at = 0;
    for (const text of sections) {
      const bytes = Buffer.byteLength(text, 'utf8');
      expect(await store.getRange('0/read/0/data', at, at + bytes)).toBe(text);
      at += bytes;
    }
    expect(await store.getRange('0/read/0/data', at - 2, at + 100)).toBe('[]');
    expect(await store.getRange('0/read/9/data', 0, 10)).toBeNull();
    await expect(store.getRange('0/read/0/data', at + 5, at + 10)).rejects.toThrow(/InvalidRange|Range/i);
  });
});
