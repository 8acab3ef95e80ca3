/**
 * The discovery bench's S3 stand-in (bench/s3-list-twin.ts) lists as S3 does: keys in UTF-8 byte
 * order, at most 1,000 a page, Prefix and StartAfter as S3 applies them; and refuses what it does
 * not do (continuation tokens, Delimiter) rather than answer otherwise. The expected orders are
 * worked out here from the keys' UTF-8 bytes, not from the twin's comparator.
 */
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandInput, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3ListTwin, twinClient } from '../../bench/s3-list-twin';

const NOW = Date.UTC(2026, 11, 1);

interface Page {
  readonly Contents: Array<{ Key: string; Size: number; LastModified: Date }>;
  readonly IsTruncated: boolean;
  readonly KeyCount: number;
}

/** S3's order: by the keys' UTF-8 bytes. */
const s3Order = (keys: readonly string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

function twinWith(keys: readonly string[]): S3ListTwin {
  const twin = new S3ListTwin(() => NOW);
  for (const key of keys) twin.put(key, Buffer.from(key), new Date(NOW), false);
  return twin;
}

const list = (twin: S3ListTwin, input: Omit<ListObjectsV2CommandInput, 'Bucket'> = {}) =>
  twin.send(new ListObjectsV2Command({ Bucket: 'b', ...input })) as Promise<Page>;

/** Every key under `prefix`, paged as the adapters page: StartAfter = the last key of the page before. */
async function listAll(twin: S3ListTwin, prefix: string, maxKeys?: number): Promise<{ keys: string[]; pages: number[] }> {
  const keys: string[] = [];
  const pages: number[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await list(twin, { Prefix: prefix, StartAfter: after, MaxKeys: maxKeys });
    pages.push(page.KeyCount);
    keys.push(...page.Contents.map((c) => c.Key));
    if (!page.IsTruncated) return { keys, pages };
    after = keys[keys.length - 1];
  }
}

describe('the S3 list twin of the discovery bench', () => {
  describe('when keys are written in any order', () => {
    // ASCII, a two-byte letter, a three-byte character above the surrogates (U+FF5E) and a
    // four-byte one (U+1F600): UTF-16 code-unit order puts the surrogate pair before U+FF5E, S3 after.
    const keys = ['a/z.json', 'a/b.json', 'a/é.json', 'a/～.json', 'a/😀.json', 'a/B.json', 'a/b.json.gz', 'a/b', 'a-/x', 'a0'];

    it('lists them in UTF-8 byte order, as S3 does, not in JavaScript string order', async () => {
      const twin = twinWith([...keys].reverse());
      const page = await list(twin);
      expect(page.Contents.map((c) => c.Key)).toEqual(s3Order(keys));
      expect(page.Contents.map((c) => c.Key)).not.toEqual([...keys].sort());
      expect(page).toMatchObject({ IsTruncated: false, KeyCount: keys.length });
    });

    it('lists a Prefix as a string prefix, not a folder (a/ does not hold a-/x or a0)', async () => {
      const twin = twinWith(keys);
      expect((await list(twin, { Prefix: 'a/' })).Contents.map((c) => c.Key)).toEqual(s3Order(keys.filter((k) => k.startsWith('a/'))));
      expect((await list(twin, { Prefix: 'a/b' })).Contents.map((c) => c.Key)).toEqual(['a/b', 'a/b.json', 'a/b.json.gz']);
      expect((await list(twin, { Prefix: 'nothing/' })).Contents).toEqual([]);
    });

    it('starts after StartAfter, exclusive, whether or not it is a key, and within the prefix', async () => {
      const twin = twinWith(keys);
      const under = s3Order(keys.filter((k) => k.startsWith('a/')));
      expect((await list(twin, { Prefix: 'a/', StartAfter: 'a/b.json' })).Contents.map((c) => c.Key)).toEqual(under.slice(under.indexOf('a/b.json') + 1));
      expect((await list(twin, { Prefix: 'a/', StartAfter: 'a/c' })).Contents.map((c) => c.Key)).toEqual(under.filter((k) => s3Order([k, 'a/c'])[0] === 'a/c'));
      // StartAfter before the prefix: the whole prefix; after it: nothing
      expect((await list(twin, { Prefix: 'a/', StartAfter: '0' })).Contents.map((c) => c.Key)).toEqual(under);
      expect((await list(twin, { Prefix: 'a/', StartAfter: 'a0' })).Contents).toEqual([]);
      // after a key that sorts last by UTF-16 but not by UTF-8
      expect((await list(twin, { Prefix: 'a/', StartAfter: 'a/😀.json' })).Contents).toEqual([]);
    });
  });

  describe('when a prefix holds more keys than a page', () => {
    const keys = Array.from({ length: 2_500 }, (_, i) => `p/${String(i).padStart(5, '0')}.json`);
    const twin = twinWith([...keys, 'q/after.json', 'o/before.json']);

    it('answers at most 1,000 keys a page whatever MaxKeys asks, and IsTruncated until the last', async () => {
      const first = await list(twin, { Prefix: 'p/', MaxKeys: 5_000 });
      expect(first.KeyCount).toBe(1_000);
      expect(first.Contents).toHaveLength(1_000);
      expect(first.IsTruncated).toBe(true);
      expect((await list(twin, { Prefix: 'p/' })).KeyCount).toBe(1_000);
      expect((await list(twin, { Prefix: 'p/', MaxKeys: 7 })).Contents.map((c) => c.Key)).toEqual(keys.slice(0, 7));
    });

    it('pages through every key once, in order, by StartAfter', async () => {
      expect(await listAll(twin, 'p/')).toEqual({ keys, pages: [1_000, 1_000, 500] });
      expect(await listAll(twin, 'p/', 999)).toEqual({ keys, pages: [999, 999, 502] });
    });

    it('is not truncated when the page ends at the last key of the prefix, though keys follow outside it', async () => {
      const last = await list(twin, { Prefix: 'p/', StartAfter: keys[1_499] });
      expect(last).toMatchObject({ KeyCount: 1_000, IsTruncated: false });
      expect(last.Contents[999].Key).toBe(keys[2_499]);
    });
  });

  it('refuses a continuation token and a Delimiter rather than list otherwise than S3', async () => {
    const twin = twinWith(['a/1', 'a/2']);
    await expect(list(twin, { ContinuationToken: 'token' })).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
    await expect(list(twin, { Delimiter: '/' })).rejects.toMatchObject({ name: 'NotImplemented', $metadata: { httpStatusCode: 501 } });
  });

  it('keeps a PUT key in order, refuses If-None-Match: * over an existing key (412), and forgets deleted keys', async () => {
    const twin = new S3ListTwin(() => NOW + 60_000);
    const s3 = twinClient(twin);
    for (const Key of ['k/3', 'k/1', 'k/2']) await s3.send(new PutObjectCommand({ Bucket: 'b', Key, Body: Key, IfNoneMatch: '*' }));
    await expect(s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'k/2', Body: 'again', IfNoneMatch: '*' }))).rejects.toMatchObject({
      name: 'PreconditionFailed',
      $metadata: { httpStatusCode: 412 },
    });
    const page = await list(twin, { Prefix: 'k/' });
    expect(page.Contents.map((c) => [c.Key, c.Size, c.LastModified.getTime()])).toEqual([
      ['k/1', 3, NOW + 60_000],
      ['k/2', 3, NOW + 60_000],
      ['k/3', 3, NOW + 60_000],
    ]);
    const got = (await s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k/2' }))) as unknown as { Body: { transformToByteArray(): Promise<Uint8Array> } };
    expect(Buffer.from(await got.Body.transformToByteArray()).toString()).toBe('k/2');
    await s3.send(new DeleteObjectsCommand({ Bucket: 'b', Delete: { Objects: [{ Key: 'k/1' }, { Key: 'k/9' }] } }));
    expect((await list(twin, { Prefix: 'k/' })).Contents.map((c) => c.Key)).toEqual(['k/2', 'k/3']);
    await expect(s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k/1' }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(twin.requests).toEqual({ list: 2, get: 2, put: 4, delete: 1 });
  });

  it('refuses keys loaded out of order', () => {
    const twin = new S3ListTwin(() => NOW);
    const o = { body: new Uint8Array(), etag: '"e"', lastModified: new Date(NOW) };
    expect(() =>
      twin.load([
        ['a/😀', o],
        ['a/～', o],
      ]),
    ).toThrow(/out of order/);
  });
});
