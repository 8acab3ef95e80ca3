/**
 * The S3 landing source's discovery as Spark's file source lists (issue 28), on the local stack's
 * S3: the seen files (any key order, exactly once, compaction), migration of a key-ordered
 * checkpoint, the listing rules (partition folders, hidden names, sub-folders, pathGlobFilter),
 * latestFirst and maxFileAge (with a discovery that reports chosen LastModified times: S3 sets
 * them at write time), cleanSource after the commit, and the listing's cost rule.
 */
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { S3CheckpointStore } from '../../lib/aws/s3/checkpoint';
import type { DiscoveredFile, FileDiscovery } from '../../lib/aws/s3/discovery';
import { S3LandingSource, type S3LandingSourceOptions } from '../../lib/aws/s3/landing-source';
import { S3Requests } from '../../lib/aws/s3/requests';
import { CheckpointMismatchError } from '../../lib/engine/errors';
import type { Json } from '../../lib/engine/ports';
import { parseSchema } from '../../lib/engine/schema';
import { ensureBucket } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
const schema = parseSchema('user STRING, amount INT');
let bucket: string;

beforeAll(async () => {
  bucket = uniqueName('sluice-discovery').toLowerCase();
  await ensureBucket(s3, bucket);
});

function fixture() {
  const landing = `landing/${uniqueName('src')}`;
  const checkpoint = new S3CheckpointStore({ client: s3, bucket, prefix: `checkpoints/${uniqueName('q')}` });
  const put = async (name: string, users: string[]) => {
    const key = `${landing}/${name}`;
    const body = users.map((u) => JSON.stringify({ user: u, amount: 1 })).join('\n');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(body) }));
    return key;
  };
  const source = (opts: Partial<S3LandingSourceOptions> = {}) => new S3LandingSource({ client: s3, bucket, prefix: landing, schema, checkpoint, ...opts });
  return { landing, checkpoint, put, source };
}

type Fixture = ReturnType<typeof fixture>;

/** One availableNow run of one source as the executor drives it: every batch planned and read, then committed. */
async function run(f: Fixture, start: Json | null, firstBatch: number, opts: Partial<S3LandingSourceOptions> = {}, maxFilesPerTrigger?: number) {
  const src = f.source(opts);
  const target = await src.latestOffset(start);
  const users: string[][] = [];
  let cur = start;
  let id = firstBatch;
  if (target !== null) {
    for (;;) {
      const end = await src.planBatch(id, cur, target, maxFilesPerTrigger ? { maxFilesPerTrigger } : {});
      if (end === null) break;
      const read = await src.read(id, cur, end);
      users.push(read.rows.map((r) => String(r.user)));
      await src.committed(id, end);
      cur = end;
      id++;
    }
  }
  return { src, users, end: cur, next: id };
}

describe('when keys arrive in any order', () => {
  it('a key sorting before every processed key, written after many runs, is read once', async () => {
    const f = fixture();
    let at: Json | null = null;
    let next = 0;
    for (let i = 0; i < 12; i++) {
      await f.put(`m-${String(i).padStart(4, '0')}.json`, [`m${i}`]);
      const r = await run(f, at, next);
      expect(r.users).toEqual([[`m${i}`]]);
      at = r.end;
      next = r.next;
    }
    // seen-10 is a snapshot (every 10 batches) and the deltas below it are gone once it committed
    expect(JSON.parse((await f.checkpoint.readSourceLog(0, 'seen-10'))!)).toMatchObject({ base: null, depth: 0 });
    expect(await f.checkpoint.readSourceLog(0, 'seen-3')).toBeNull();
    expect(JSON.parse((await f.checkpoint.readSourceLog(0, 'seen-11'))!)).toMatchObject({ base: 10, depth: 1 });
    await f.put('a-first.json', ['first']);
    const r = await run(f, at, next);
    expect(r.users).toEqual([['first']]);
    const before = f.checkpoint.stats();
    const again = await run(f, r.end, r.next);
    expect(again.users).toEqual([]);
    // an empty run: one LIST; the listing's hint and two seen logs (seen-12 adds to the snapshot seen-10); nothing written
    expect(again.src.stats().lists).toBe(1);
    expect(f.checkpoint.stats().gets - before.gets).toBe(3);
    expect(f.checkpoint.stats().puts - before.puts).toBe(0);
    expect(JSON.parse((await f.checkpoint.readSourceLog(0, 'seen-12'))!)).toMatchObject({
      base: 10,
      depth: 2,
      files: [
        [`${f.landing}/m-0011.json`, expect.any(Number)],
        [`${f.landing}/a-first.json`, expect.any(Number)],
      ],
    });
  });
});

describe('when the checkpoint was written by the key-ordered source ({lastKey} offsets)', () => {
  it('files up to lastKey count as read, later ones are read once', async () => {
    const f = fixture();
    await f.put('a.json', ['a']);
    const b = await f.put('b.json', ['b']);
    await f.put('c.json', ['c']);
    const r = await run(f, { lastKey: b }, 5);
    expect(r.users).toEqual([['c']]);
    expect(r.end).toEqual({ batch: 5 });
    expect(JSON.parse((await f.checkpoint.readSourceLog(0, 'seen-5'))!)).toMatchObject({ base: null, legacyLastKey: b });
    expect((await run(f, r.end, 6)).users).toEqual([]);
  });

  it('one that read files in sub-folders refuses to run without recursiveFileLookup, naming the remedy', async () => {
    const f = fixture();
    const k = await f.put('2026/03/01/a.json', ['a']);
    await f.put('2026/03/02/b.json', ['b']);
    await expect(f.source().latestOffset({ lastKey: k })).rejects.toThrow(CheckpointMismatchError);
    await expect(f.source().latestOffset({ lastKey: k })).rejects.toThrow(/read every sub-folder.*add \.option\('recursiveFileLookup', true\)/);
    expect((await run(f, { lastKey: k }, 1, { recursiveFileLookup: true })).users).toEqual([['b']]);
  });
});

describe("when the prefix holds what Spark's listing leaves out", () => {
  it('never reads _ or . names, ._COPYING_ files or _temporary folders', async () => {
    const f = fixture();
    await f.put('_SUCCESS', ['no']);
    await f.put('.part.crc', ['no']);
    await f.put('part-1.json._COPYING_', ['no']);
    await f.put('_temporary/0/part-2.json', ['no']);
    await f.put('part-3.json', ['yes']);
    expect((await run(f, null, 0)).users).toEqual([['yes']]);
  });

  it('reads a sub-folder that is not a col=value folder only with recursiveFileLookup', async () => {
    const f = fixture();
    await f.put('2026/10/01/a.json', ['deep']);
    expect((await run(f, null, 0)).users).toEqual([]);
    const g = fixture();
    await g.put('2026/10/01/a.json', ['deep']);
    expect((await run(g, null, 0, { recursiveFileLookup: true })).users).toEqual([['deep']]);
  });

  it('pathGlobFilter matches the name: other files are not read', async () => {
    const f = fixture();
    await f.put('a.json', ['json']);
    await f.put('b.txt', ['text']);
    await f.put('part-7.json', ['part']);
    expect((await run(f, null, 0, { pathGlobFilter: 'part-[0-9]*' })).users).toEqual([['part']]);
    expect(() => f.source({ pathGlobFilter: 'part-[0-9' })).toThrow(/pathGlobFilter "part-\[0-9" is not a valid glob/);
  });
});

describe('when files are in col=value partition folders', () => {
  const partSchema = parseSchema('user STRING, amount INT, dt STRING, hour INT');

  it('the folders are the declared columns, typed as declared; a folder value not of its type makes the file a dead letter', async () => {
    const f = fixture();
    await f.put('dt=2026-10-01/hour=05/part-1.json', ['a']);
    await f.put('dt=2026-10-01/hour=xx/part-2.json', ['bad']);
    await f.put('dt=2026-10-02/hour=23/part-3.json', ['b']);
    const src = f.source({ schema: partSchema });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const read = await src.read(0, null, end!);
    expect(read.rows).toEqual([
      { user: 'a', amount: 1, dt: '2026-10-01', hour: 5 },
      { user: 'b', amount: 1, dt: '2026-10-02', hour: 23 },
    ]);
    expect(read.deadLetters).toEqual([
      { source: { file: `${f.landing}/dt=2026-10-01/hour=xx/part-2.json` }, raw: '', reason: expect.stringMatching(/hour=xx is not a INT/) },
    ]);
  });

  it('a partition column the schema does not declare is not read, and the run names it with the type Spark infers and the fix', async () => {
    const f = fixture();
    await f.put('dt=2026-10-01/hour=05/part-1.json', ['a']);
    await f.put('dt=2026-10-02/hour=23/part-2.json', ['b']);
    await f.put('dt=2026-10-02/hour=__HIVE_DEFAULT_PARTITION__/part-3.json', ['c']);
    const events: Array<Record<string, unknown>> = [];
    const src = f.source({ schema: parseSchema('user STRING, amount INT'), log: (e) => events.push(e) });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const read = await src.read(0, null, end!);
    expect(read.rows).toEqual([
      { user: 'a', amount: 1 },
      { user: 'b', amount: 1 },
      { user: 'c', amount: 1 },
    ]);
    const warned = events.filter((e) => e.event === 'undeclared-partition-columns');
    expect(warned).toHaveLength(1);
    expect(warned[0].columns).toEqual([
      { column: 'dt', inferred: 'dt DATE', examples: ['2026-10-01', '2026-10-02'] },
      { column: 'hour', inferred: 'hour INT', examples: ['05', '23', '__HIVE_DEFAULT_PARTITION__'] },
    ]);
    expect(warned[0].message).toMatch(/add "dt DATE", "hour INT" to \.schema/);
    // declared, the same folders are columns of the declared types, and nothing is reported
    const g = fixture();
    await g.put('dt=2026-10-01/hour=05/part-1.json', ['a']);
    const declared: Array<Record<string, unknown>> = [];
    const src2 = g.source({ schema: parseSchema('user STRING, amount INT, dt DATE, hour INT'), log: (e) => declared.push(e) });
    const end2 = await src2.planBatch(0, null, (await src2.latestOffset(null))!, {});
    expect((await src2.read(0, null, end2!)).rows).toEqual([{ user: 'a', amount: 1, dt: '2026-10-01', hour: 5 }]);
    expect(declared.filter((e) => e.event === 'undeclared-partition-columns')).toEqual([]);
  });

  it('files both at the root and in partition folders are an error, as in Spark', async () => {
    const f = fixture();
    await f.put('root.json', ['r']);
    await f.put('dt=2026-10-01/part-1.json', ['p']);
    await expect(f.source({ schema: partSchema }).latestOffset(null)).rejects.toThrow(/Conflicting directory structures detected/);
  });
});

/**
 * The local S3 with pages of 2 keys: s3rver's own truncated pages carry a continuation token it
 * cannot make without OpenSSL's legacy DES, so the page is cut here from its 1,000-key answer (the
 * source pages with StartAfter, which s3rver applies).
 */
function pagesOf2(): typeof s3 {
  return {
    send: async (command: unknown) => {
      if (!(command instanceof ListObjectsV2Command)) return s3.send(command as never);
      const res = await s3.send(new ListObjectsV2Command({ ...command.input, MaxKeys: 1000 }));
      const contents = res.Contents ?? [];
      return contents.length > 2 ? { ...res, Contents: contents.slice(0, 2), IsTruncated: true, KeyCount: 2 } : res;
    },
  } as unknown as typeof s3;
}

/** A discovery over the real listing that reports chosen LastModified times (S3 sets them itself). */
function timedDiscovery(f: Fixture, times: Record<string, number>): FileDiscovery {
  const req = new S3Requests(s3);
  return {
    async discover() {
      const listed = await req.listAll(bucket, `${f.landing}/`);
      const files: DiscoveredFile[] = listed.map((o) => ({
        key: o.key,
        size: o.size,
        etag: o.etag,
        lastModifiedMs: times[o.key.slice(f.landing.length + 1)] ?? 0,
      }));
      return { files, complete: true };
    },
    stats: () => ({ lists: 0, fullListings: 0, incrementalListings: 0 }),
  };
}

describe('when files are taken by modification time', () => {
  const T = Date.UTC(2026, 9, 1);

  it('oldest first with ties by key; latestFirst: newest first, ties still by key', async () => {
    const times = { 'c.json': T, 'a.json': T + 1000, 'b.json': T + 1000, 'd.json': T + 2000 };
    const f = fixture();
    for (const k of Object.keys(times)) await f.put(k, [k[0]]);
    expect((await run(f, null, 0, { discovery: timedDiscovery(f, times) }, 1)).users).toEqual([['c'], ['a'], ['b'], ['d']]);
    const g = fixture();
    for (const k of Object.keys(times)) await g.put(k, [k[0]]);
    expect((await run(g, null, 0, { discovery: timedDiscovery(g, times), latestFirst: true }, 1)).users).toEqual([['d'], ['a'], ['b'], ['c']]);
  });

  it('maxFileAge: a file older than that before the newest file seen is ignored', async () => {
    const day = 86_400_000;
    const times: Record<string, number> = { 'new.json': T };
    const f = fixture();
    await f.put('new.json', ['new']);
    const first = await run(f, null, 0, { discovery: timedDiscovery(f, times) });
    expect(first.users).toEqual([['new']]);
    times['old.json'] = T - 8 * day;
    times['recent.json'] = T - 6 * day;
    await f.put('old.json', ['old']);
    await f.put('recent.json', ['recent']);
    expect((await run(f, first.end, first.next, { discovery: timedDiscovery(f, times) })).users).toEqual([['recent']]);
    // maxFileAge 9 days would have taken it: the rule is the option's
    const g = fixture();
    await g.put('new.json', ['new']);
    const g1 = await run(g, null, 0, { discovery: timedDiscovery(g, times), maxFileAgeMs: 9 * day });
    await g.put('old.json', ['old']);
    expect((await run(g, g1.end, g1.next, { discovery: timedDiscovery(g, times), maxFileAgeMs: 9 * day })).users).toEqual([['old']]);
  });

  it('maxFileAge within one run: latestFirst one file a batch by maxBytesPerTrigger ignores maxFileAge, as with maxFilesPerTrigger (Spark 4)', async () => {
    const day = 86_400_000;
    const times: Record<string, number> = { 'new.json': T, 'mid.json': T - 5 * day, 'old.json': T - 8 * day };
    const f = fixture();
    for (const k of Object.keys(times)) await f.put(k, [k.slice(0, -5)]);
    const src = f.source({ discovery: timedDiscovery(f, times), latestFirst: true });
    const target = await src.latestOffset(null);
    expect(target).toMatchObject({ files: 3 }); // nothing seen yet: all new
    const users: string[] = [];
    let cur: Json | null = null;
    for (let id = 0; ; id++) {
      // maxBytesPerTrigger of 1 byte: one file a batch; with latestFirst, Spark's FileStreamSource then ignores maxFileAge
      const end = await src.planBatch(id, cur, target!, { maxBytesPerTrigger: 1 });
      if (end === null) break;
      users.push(...(await src.read(id, cur, end)).rows.map((r) => String(r.user)));
      cur = end;
    }
    // old.json (T - 8 days) is older than 7 days before new.json (T), read first, but maxFileAge does not apply
    expect(users).toEqual(['new', 'mid', 'old']);
  });
});

describe('when cleanSource is set', () => {
  it("'delete' removes a batch's files once it committed, never before", async () => {
    const f = fixture();
    const k = await f.put('a.json', ['a']);
    const src = f.source({ cleanSource: 'delete' });
    const end = (await src.planBatch(0, null, (await src.latestOffset(null))!, {}))!;
    await src.read(0, null, end);
    await expect(s3.send(new GetObjectCommand({ Bucket: bucket, Key: k }))).resolves.toBeDefined();
    await src.committed(0, end);
    await expect(s3.send(new GetObjectCommand({ Bucket: bucket, Key: k }))).rejects.toThrow();
  });

  it("'archive' moves them under sourceArchiveDir; a failure is logged, the run goes on, and the next commit archives them", async () => {
    const f = fixture();
    const k = await f.put('a.json', ['a']);
    const archiveBucket = uniqueName('sluice-archive').toLowerCase(); // not created yet: the archive fails
    const events: Array<Record<string, unknown>> = [];
    const opts = {
      cleanSource: 'archive' as const,
      sourceArchiveDir: { bucket: archiveBucket, prefix: 'old' },
      log: (e: Record<string, unknown>) => events.push(e),
    };
    const r = await run(f, null, 0, opts);
    expect(r.users).toEqual([['a']]);
    expect(events.some((e) => e.event === 'clean-source-failed' && e.key === k)).toBe(true);
    await s3.send(new CreateBucketCommand({ Bucket: archiveBucket }));
    await f.put('b.json', ['b']);
    const r2 = await run(f, r.end, r.next, opts);
    expect(r2.users).toEqual([['b']]);
    const archived = await s3.send(new GetObjectCommand({ Bucket: archiveBucket, Key: `old/${k}` }));
    expect(await archived.Body!.transformToString()).toContain('"a"');
    await expect(s3.send(new GetObjectCommand({ Bucket: bucket, Key: k }))).rejects.toThrow();
    expect(() => f.source({ cleanSource: 'archive', sourceArchiveDir: { bucket, prefix: `${f.landing}/archive` } })).toThrow(/overlaps the source/);
  });
});

describe('when the prefix is large (the listing rule)', () => {
  it('lists whole while small, then incrementally (after the newest key, and its folder) until a backfill is due', async () => {
    const f = fixture();
    let now = Date.UTC(2026, 9, 1);
    // one LIST for recent folders: only the newest key's folder is listed whole
    const opts = { fullListingMaxObjects: 2, backfillIntervalMs: 3600_000, recentFoldersMaxLists: 1, now: () => now, recursiveFileLookup: true };
    await f.put('a/1.json', ['a1']);
    await f.put('b/1.json', ['b1']);
    await f.put('c/1.json', ['c1']);
    const r1 = await run(f, null, 0, opts);
    expect(r1.users).toEqual([['a1', 'b1', 'c1']]);
    expect(r1.src.discoveryStats()).toMatchObject({ fullListings: 1, incrementalListings: 0 });
    // 3 objects > 2: incremental. c/0.json sorts before c/1.json but is in its folder: found.
    // a/2.json is in an older folder: not found until the backfill.
    await f.put('c/0.json', ['c0']);
    await f.put('a/2.json', ['a2']);
    await f.put('d/1.json', ['d1']);
    now += 60_000;
    const r2 = await run(f, r1.end, r1.next, opts);
    expect(r2.users).toEqual([['c0', 'd1']]);
    expect(r2.src.discoveryStats()).toMatchObject({ fullListings: 0, incrementalListings: 1, lists: 2 });
    now += 3600_000;
    const r3 = await run(f, r2.end, r2.next, opts);
    expect(r3.users).toEqual([['a2']]);
    expect(r3.src.discoveryStats()).toMatchObject({ fullListings: 1 });
  });

  it('an incremental listing also lists the folders before the newest, newest first, as many as recentFoldersMaxLists LISTs cover', async () => {
    const f = fixture();
    const now = Date.UTC(2026, 9, 1);
    // pages of 2 keys: a folder of 3 objects costs 2 LISTs
    const opts = { fullListingMaxObjects: 2, backfillIntervalMs: 3600_000, recentFoldersMaxLists: 3, listPageSize: 2, client: pagesOf2(), now: () => now };
    for (const h of ['01', '02', '03']) for (const n of [1, 2, 3]) await f.put(`dt=2026-10-01/hour=${h}/${n}.json`, [`${h}-${n}`]);
    const r1 = await run(f, null, 0, opts);
    expect(r1.users.flat()).toHaveLength(9);
    // keys sorting before the newest, into the newest folder, the one before it, and the oldest
    await f.put('dt=2026-10-01/hour=03/0.json', ['03-0']);
    await f.put('dt=2026-10-01/hour=02/0.json', ['02-0']);
    await f.put('dt=2026-10-01/hour=01/0.json', ['01-0']);
    const r2 = await run(f, r1.end, r1.next, opts);
    // hour=03 (3 objects: 2 LISTs) always; hour=02 (2 more) is past the 3 LISTs: only the newest folder
    expect(r2.users.flat()).toEqual(['03-0']);
    const r3 = await run(f, r2.end, r2.next, { ...opts, recentFoldersMaxLists: 4 });
    // hour=03 (now 4 objects, counted by its listing: 2 LISTs) and hour=02 (3 objects: 2 LISTs); not hour=01
    expect(r3.users.flat()).toEqual(['02-0']);
    expect(r3.src.discoveryStats()).toMatchObject({ incrementalListings: 1, lists: 1 + 2 + 2 });
    // hour=01 waits for the backfill
    const r4 = await run(f, r3.end, r3.next, { ...opts, now: () => now + 3600_000 });
    expect(r4.users.flat()).toEqual(['01-0']);
    expect(r4.src.discoveryStats()).toMatchObject({ fullListings: 1 });
  });
});
