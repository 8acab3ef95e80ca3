/**
 * S3LandingSource on the local stack's S3: discovery in key order, rate limits, the per-batch file
 * log and what a replay reads, gzip, dead letters, request costs.
 */
import { gzipSync } from 'node:zlib';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3CheckpointStore } from '../../lib/aws/s3/checkpoint';
import { landingOptionsFromSpec } from '../../lib/aws/s3/landing-options';
import { DEFAULT_MAX_BYTES_PER_TRIGGER, S3LandingSource, type S3LandingSourceOptions } from '../../lib/aws/s3/landing-source';
import { CheckpointMismatchError, DataLossError } from '../../lib/engine/errors';
import type { BatchLimits, Json } from '../../lib/engine/ports';
import { parseSchema } from '../../lib/engine/schema';
import { INVALID_UTF8_REASON } from '../../lib/engine/lines';
import { ensureBucket } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
const schema = parseSchema('user STRING, event_time TIMESTAMP, amount DOUBLE');
let bucket: string;

beforeAll(async () => {
  bucket = uniqueName('sluice-landing').toLowerCase();
  await ensureBucket(s3, bucket);
});

// ---- factories -------------------------------------------------------------------------------

interface Fixture {
  readonly landing: string;
  readonly checkpoint: S3CheckpointStore;
  source(opts?: Partial<S3LandingSourceOptions>): S3LandingSource;
  put(name: string, body: string | Buffer, opts?: { contentEncoding?: string }): Promise<string>;
}

/** A fresh landing prefix and checkpoint; `source()` builds a new instance (a new run) each call. */
function fixture(): Fixture {
  const landing = `landing/${uniqueName('src')}`;
  const checkpoint = new S3CheckpointStore({ client: s3, bucket, prefix: `checkpoints/${uniqueName('q')}` });
  return {
    landing,
    checkpoint,
    source: (opts = {}) => new S3LandingSource({ client: s3, bucket, prefix: landing, schema, checkpoint, ...opts }),
    put: async (name, body, opts = {}) => {
      const key = `${landing}/${name}`;
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: typeof body === 'string' ? Buffer.from(body) : body, ContentEncoding: opts.contentEncoding }),
      );
      return key;
    },
  };
}

function event(user: string, second: number, amount = 1): string {
  return JSON.stringify({ user, event_time: `2026-03-01 10:00:${String(second).padStart(2, '0')}`, amount });
}

function lines(...ls: string[]): string {
  return `${ls.join('\n')}\n`;
}

/** Files named `00.json`, `01.json`, ... with one event each (user u<i>). */
async function putNumbered(f: Fixture, count: number, from = 0): Promise<string[]> {
  const keys: string[] = [];
  for (let i = from; i < from + count; i++) keys.push(await f.put(`${String(i).padStart(2, '0')}.json`, lines(event(`u${i}`, i))));
  return keys;
}

function users(rows: { user?: unknown }[]): unknown[] {
  return rows.map((r) => r.user);
}

/** Plans batches from `start` to `target` as the executor does, returning each batch's end. */
async function planAll(src: S3LandingSource, target: Json, limits: BatchLimits, start: Json | null = null): Promise<Json[]> {
  const ends: Json[] = [];
  for (let id = 0, cur = start; ; id++) {
    const end = await src.planBatch(id, cur, target, limits);
    if (end === null) return ends;
    ends.push(end);
    cur = end;
  }
}

/** The keys batch `end` logged (sources/0/<end.batch>), in the order it reads them. */
async function loggedKeys(checkpoint: S3CheckpointStore, end: Json): Promise<string[]> {
  const log = JSON.parse((await checkpoint.readSourceLog(0, String((end as { batch: number }).batch)))!) as { files: Array<{ key: string }> };
  return log.files.map((x) => x.key);
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when the landing prefix is empty', () => {
  it('has no latest offset, nothing to plan and no backlog', async () => {
    const f = fixture();
    const src = f.source();
    await expect(src.latestOffset(null)).resolves.toBeNull();
    await expect(src.backlog(null, null)).resolves.toEqual({ files: 0, bytes: 0 });
  });
});

describe('when files arrive in key order', () => {
  it('one run lists once, plans from the listing and reads rows in file then line order', async () => {
    const f = fixture();
    const bodies = [lines(event('a1', 1), event('a2', 2)), lines(event('b1', 3)), lines(event('c1', 4), event('c2', 5))];
    await f.put('2026/03/01/10/a.json', bodies[0]);
    await f.put('2026/03/01/10/b.json', bodies[1]);
    await f.put('2026/03/01/11/a.json', bodies[2]);
    const src = f.source({ recursiveFileLookup: true });

    const target = await src.latestOffset(null);
    expect(target).toMatchObject({ files: 3 });
    // The backlog: the three files and their stored bytes, from the listing.
    await expect(src.backlog(null, target)).resolves.toEqual({ files: 3, bytes: bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) });
    const end = await src.planBatch(0, null, target!, {});
    expect(end).toEqual({ batch: 0 });
    const result = await src.read(0, null, end!);

    expect(users(result.rows)).toEqual(['a1', 'a2', 'b1', 'c1', 'c2']);
    expect(result.rows[0]).toEqual({ user: 'a1', event_time: Date.UTC(2026, 2, 1, 10, 0, 1) * 1000, amount: 1 });
    expect(result.deadLetters).toEqual([]);
    expect(result.bytes).toBeGreaterThan(0);
    // 1 LIST (latestOffset) + 3 GETs; planBatch and read add no LIST, read no GET of the log it just wrote.
    expect(src.stats()).toMatchObject({ lists: 1, gets: 3, requests: 4 });
    // the checkpoint: GET the listing's hint; PUT it, the file list and seen-0
    expect(f.checkpoint.stats()).toMatchObject({ puts: 3, gets: 1 });
  });

  it('the next run starts after the last key and lists only what is new', async () => {
    const f = fixture();
    await putNumbered(f, 3);
    const first = f.source();
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    await putNumbered(f, 2, 3);

    const second = f.source();
    const target = await second.latestOffset(end);
    await expect(second.backlog(end, target)).resolves.toMatchObject({ files: 2 });
    const end1 = await second.planBatch(1, end, target!, {});
    expect(users((await second.read(1, end, end1!)).rows)).toEqual(['u3', 'u4']);
    await expect(second.planBatch(2, end1, target!, {})).resolves.toBeNull();
    expect(second.stats().lists).toBe(1);
  });

  it('with nothing new, latestOffset returns the start and planBatch returns null', async () => {
    const f = fixture();
    await putNumbered(f, 1);
    const first = f.source();
    const end = (await first.planBatch(0, null, (await first.latestOffset(null))!, {}))!;
    const src = f.source();
    await expect(src.latestOffset(end)).resolves.toEqual(end);
    await expect(src.planBatch(1, end, end, {})).resolves.toBeNull();
  });
});

describe('when a run is rate-limited', () => {
  it('maxFilesPerTrigger caps the files of each batch and each batch logs its file list', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 5);
    const src = f.source();
    const target = await src.latestOffset(null);

    const ends = await planAll(src, target!, { maxFilesPerTrigger: 2 });
    expect(ends).toEqual([{ batch: 0 }, { batch: 1 }, { batch: 2 }]);
    const log = JSON.parse((await f.checkpoint.readSourceLog(0, '1'))!);
    expect(log.files.map((x: { key: string }) => x.key)).toEqual([keys[2], keys[3]]);
    expect(log.files[0]).toEqual({ key: keys[2], size: expect.any(Number), etag: expect.stringMatching(/^"[0-9a-f]+"$/), lastModifiedMs: expect.any(Number) });
    expect(log).toMatchObject({ batchId: 1, start: { batch: 0 }, end: { batch: 1 } });
    expect(await loggedKeys(f.checkpoint, ends[2])).toEqual([keys[4]]);
    expect(src.stats().lists).toBe(1);
  });

  it('maxBytesPerTrigger caps the cumulative size, taking at least one file even when it is bigger', async () => {
    const f = fixture();
    const small = lines(event('s', 1)); // ~60 bytes
    const big = lines(...Array.from({ length: 20 }, (_, i) => event(`big${i}`, i)));
    const k0 = await f.put('0.json', small);
    const k1 = await f.put('1.json', small);
    const k2 = await f.put('2.json', big);
    const k3 = await f.put('3.json', small);
    const src = f.source();
    const target = await src.latestOffset(null);

    const ends = await planAll(src, target!, { maxBytesPerTrigger: Buffer.byteLength(small) * 2 + 10 });
    expect(await Promise.all(ends.map((e) => loggedKeys(f.checkpoint, e)))).toEqual([[k0, k1], [k2], [k3]]);
  });

  it('both limits apply together', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 4);
    const src = f.source();
    const ends = await planAll(src, (await src.latestOffset(null))!, { maxFilesPerTrigger: 3, maxBytesPerTrigger: 1 });
    expect(await Promise.all(ends.map((e) => loggedKeys(f.checkpoint, e)))).toEqual(keys.map((k) => [k]));
  });
});

describe('when the query sets no maxBytesPerTrigger', () => {
  /** The local S3 with every listed object reported as `size` bytes (files of 100 MiB without storing them). */
  function reportingSize(size: number): S3Client {
    return {
      send: async (cmd: unknown) => {
        const out = await s3.send(cmd as never);
        if (cmd instanceof ListObjectsV2Command) for (const c of (out as { Contents?: Array<{ Size?: number }> }).Contents ?? []) c.Size = size;
        return out;
      },
    } as unknown as S3Client;
  }

  it(`a batch takes at most DEFAULT_MAX_BYTES_PER_TRIGGER (${DEFAULT_MAX_BYTES_PER_TRIGGER}) stored bytes, and an explicit limit still wins`, async () => {
    const f = fixture();
    const keys = await putNumbered(f, 3);
    const src = f.source({ client: reportingSize(100 * 1024 * 1024) });
    const target = (await src.latestOffset(null))!;
    const ends = await planAll(src, target, {});
    expect(await Promise.all(ends.map((e) => loggedKeys(f.checkpoint, e)))).toEqual(keys.map((k) => [k]));

    const g = fixture();
    const gKeys = await putNumbered(g, 3);
    const explicit = g.source({ client: reportingSize(100 * 1024 * 1024) });
    const gEnds = await planAll(explicit, (await explicit.latestOffset(null))!, { maxBytesPerTrigger: 1024 * 1024 * 1024 });
    expect(await Promise.all(gEnds.map((e) => loggedKeys(g.checkpoint, e)))).toEqual([gKeys]);
  });
});

describe('when a gzipped file decompresses beyond maxDecompressedBytes (a gzip bomb)', () => {
  it('the file is one dead letter naming it, the cap and the option to raise; the other files are rows', async () => {
    const f = fixture();
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20)); // 4 MiB of spaces in ~4 KB
    const bombKey = await f.put('0.json.gz', bomb);
    await f.put('1.json.gz', gzipSync(lines(event('ok', 1))));
    const src = f.source({ maxDecompressedBytes: 1024 * 1024 });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);
    expect(users(result.rows)).toEqual(['ok']);
    expect(result.deadLetters).toEqual([
      {
        source: { file: bombKey },
        raw: '',
        reason: expect.stringMatching(
          /^gzip data decompresses to more than maxDecompressedBytes 1048576: if the file is genuine, raise \.option\('maxDecompressedBytes', \.\.\.\)/,
        ),
      },
    ]);
  });

  it('the query option maxDecompressedBytes reaches the source, and a bad value is refused with the fix', () => {
    expect(landingOptionsFromSpec({ maxDecompressedBytes: '2048' })).toEqual({ maxDecompressedBytes: 2048 });
    expect(landingOptionsFromSpec({})).toEqual({});
    expect(() => landingOptionsFromSpec({ maxDecompressedBytes: 'lots' })).toThrow(/option maxDecompressedBytes="lots" must be a positive integer of bytes/);
  });
});

describe("when a batch's gzip files decompress to much more than they store (five of ~10 KB, 3 MiB each)", () => {
  it("at most two files' decompressed bytes are held at once, whatever the read-ahead; every row is read", async () => {
    const f = fixture();
    const MIB = 1024 * 1024;
    const wide = (i: number, j: number) => JSON.stringify({ user: `u${i}-${j}-${'x'.repeat(3000)}`, event_time: '2026-03-01 10:00:00', amount: j });
    for (let i = 0; i < 5; i++) await f.put(`${i}.json.gz`, gzipSync(lines(...Array.from({ length: 1050 }, (_, j) => wide(i, j)))));
    const src = f.source({ maxDecompressedBytes: 4 * MIB, readParallelism: 8 });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    let rows = 0;
    for await (const chunk of src.readChunks(0, null, end!)) {
      rows += chunk.rows.length;
      await new Promise((resolve) => setTimeout(resolve, 20)); // a slow consumer: every fetch ahead has landed
    }
    expect(rows).toBe(5 * 1050);
    expect(src.peakHeldBytes()).toBeGreaterThan(3 * MIB);
    expect(src.peakHeldBytes()).toBeLessThanOrEqual(2 * 3.1 * MIB);
  });
});

describe('when a replay holds more bytes than maxBytesPerTrigger now allows', () => {
  it('it is read whole (its file list is write-once) and logged with the remedy before reading', async () => {
    const f = fixture();
    await putNumbered(f, 3);
    const first = f.source();
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    // crash; the operator lowers the limit, and the next run replays batch 0
    const events: Array<Record<string, unknown>> = [];
    const replay = f.source({ limits: { maxBytesPerTrigger: 10 }, log: (e) => events.push(e) });
    const result = await replay.read(0, null, end!);
    expect(users(result.rows)).toEqual(['u0', 'u1', 'u2']);
    expect(events).toEqual([
      {
        event: 'oversized-replay',
        batchId: 0,
        files: 3,
        bytes: expect.any(Number),
        maxBytesPerTrigger: 10,
        message: expect.stringMatching(
          /^batch 0 is replayed with \d+ stored bytes in 3 files, more than maxBytesPerTrigger 10, because its file list is write-once: .*raise them \(lambdaTimeoutSeconds, lambdaMemoryMiB\)/,
        ),
      },
    ]);
    expect(events[0].bytes).toBeGreaterThan(10);
    // A replay within the limit, and the planning instance's own read, log nothing.
    await f.source({ log: (e) => events.push(e) }).read(0, null, end!);
    await first.read(0, null, end!);
    expect(events).toHaveLength(1);
  });
});

describe('when batch N is planned again after its file list was written', () => {
  for (const conditionalWrites of [true, false]) {
    const how = conditionalWrites ? 'If-None-Match (412)' : 'GET before PUT';
    const withCheckpoint = () => {
      const f = fixture();
      const checkpoint = new S3CheckpointStore({ client: s3, bucket, prefix: `checkpoints/${uniqueName('q')}`, conditionalWrites });
      return { f, checkpoint, source: (opts: Partial<S3LandingSourceOptions> = {}) => f.source({ checkpoint, ...opts }) };
    };

    it(`a plan from the same start takes the logged list, so the offsets agree with it [${how}]`, async () => {
      const { f, checkpoint, source } = withCheckpoint();
      const keys = await putNumbered(f, 3);
      const first = source();
      await expect(first.planBatch(0, null, (await first.latestOffset(null))!, { maxFilesPerTrigger: 1 })).resolves.toEqual({ batch: 0 });
      // crash before offsets/0 landed; the next run plans batch 0 again, with other limits
      const events: Array<Record<string, unknown>> = [];
      const second = source({ log: (e) => events.push(e) });
      await expect(second.planBatch(0, null, (await second.latestOffset(null))!, { maxFilesPerTrigger: 3 })).resolves.toEqual({ batch: 0 });
      expect(JSON.parse((await checkpoint.readSourceLog(0, '0'))!).files.map((x: { key: string }) => x.key)).toEqual([keys[0]]);
      expect(events).toEqual([{ event: 'source-log-adopted', batchId: 0, files: 1 }]);
      expect(users((await second.read(0, null, { batch: 0 })).rows)).toEqual(['u0']);
      // the next batch starts after the adopted list: the two files it did not take
      const third = source();
      const end1 = await third.planBatch(1, { batch: 0 }, (await third.latestOffset({ batch: 0 }))!, {});
      expect(users((await third.read(1, { batch: 0 }, end1!)).rows)).toEqual(['u1', 'u2']);
    });

    it(`a plan from another start fails loudly and leaves the logged list [${how}]`, async () => {
      const { f, checkpoint, source } = withCheckpoint();
      const keys = await putNumbered(f, 3);
      const first = source();
      const target = (await first.latestOffset(null))!;
      expect(keys).toHaveLength(3);
      await first.planBatch(0, null, target, { maxFilesPerTrigger: 1 });
      await first.planBatch(1, { batch: 0 }, target, { maxFilesPerTrigger: 1 });
      const before = await checkpoint.readSourceLog(0, '1');
      await expect(source().planBatch(1, null, target, {})).rejects.toThrow(
        /^the file list of batch 1 \(\S+\/sources\/0\/1\) starts at \{"batch":0\}, but the batch starts at null, and file lists are write-once/,
      );
      await expect(source().planBatch(1, null, target, {})).rejects.toThrow(CheckpointMismatchError);
      expect(await checkpoint.readSourceLog(0, '1')).toBe(before);
    });
  }
});

describe('when a batch is replayed after a crash', () => {
  it('a new run reads exactly the logged files, even after new files arrived, ones sorting inside the range included', async () => {
    const f = fixture();
    await f.put('b.json', lines(event('b', 1)));
    await f.put('d.json', lines(event('d', 2)));
    const first = f.source();
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    // crash here: offsets/0 written, batch 0 never committed. Meanwhile:
    await f.put('c.json', lines(event('c-late', 3))); // sorts inside (null, d.json]
    await f.put('e.json', lines(event('e', 4)));

    const replay = f.source();
    const result = await replay.read(0, null, end!);
    expect(users(result.rows)).toEqual(['b', 'd']);
    // 1 GET of the file log (checkpoint) + 2 file GETs, no LIST.
    expect(replay.stats()).toMatchObject({ lists: 0, gets: 2 });
  });

  it('without a file log (an older checkpoint) it lists (start, end] again', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 3);
    const src = f.source();
    const result = await src.read(7, { lastKey: keys[0] }, { lastKey: keys[2] });
    expect(users(result.rows)).toEqual(['u1', 'u2']);
    expect(src.stats()).toMatchObject({ lists: 1, gets: 2 });
  });

  it('a logged file that is gone from S3 fails with DataLossError naming the key', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 2);
    const first = f.source();
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[1] }));

    const attempt = f.source().read(0, null, end!);
    await expect(attempt).rejects.toThrow(DataLossError);
    await expect(attempt).rejects.toThrow(new RegExp(`${keys[1]} of batch 0 is gone from S3 .*restore the object`));
  });

  it('a logged file that was replaced fails with DataLossError: landing files must be immutable', async () => {
    const f = fixture();
    const [k] = await putNumbered(f, 1);
    const first = f.source();
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    await f.put('00.json', lines(event('changed', 9)));

    await expect(f.source().read(0, null, end!)).rejects.toThrow(new RegExp(`${k} of batch 0 changed since the batch was planned`));
  });
});

describe('when a batch is read a file at a time (readChunks)', () => {
  it('yields one chunk per file in key order, the same rows as read()', async () => {
    const f = fixture();
    await f.put('a.json', lines(event('a1', 1), event('a2', 2)));
    await f.put('b.json', lines('{bad'));
    await f.put('c.json', lines(event('c1', 3)));
    const src = f.source({ readParallelism: 2 });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});

    const chunks = [];
    for await (const c of src.readChunks(0, null, end!)) chunks.push(c);
    expect(chunks.map((c) => users(c.rows))).toEqual([['a1', 'a2'], [], ['c1']]);
    expect(chunks.map((c) => c.deadLetters.length)).toEqual([0, 1, 0]);
    const whole = await src.read(0, null, end!);
    expect(whole.rows).toEqual(chunks.flatMap((c) => c.rows));
    expect(whole.bytes).toBe(chunks.reduce((a, c) => a + c.bytes, 0));
  });

  it('a caller that stops early is left with nothing pending that fails the process', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 4);
    const src = f.source({ readParallelism: 4 });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys[3] })); // fetched ahead, fails

    for await (const c of src.readChunks(0, null, end!)) {
      expect(users(c.rows)).toEqual(['u0']);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // an unhandled rejection would fail the test run here
    await expect(src.read(0, null, end!)).rejects.toThrow(DataLossError);
  });
});

describe('when files are gzipped', () => {
  it('reads keys ending in .gz and objects stored with Content-Encoding gzip', async () => {
    const f = fixture();
    await f.put('1.json.gz', gzipSync(lines(event('gz1', 1), event('gz2', 2))));
    await f.put('2.json', gzipSync(lines(event('enc', 3))), { contentEncoding: 'gzip' });
    const src = f.source();
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);
    expect(users(result.rows)).toEqual(['gz1', 'gz2', 'enc']);
    expect(result.deadLetters).toEqual([]);
  });

  it('a key ending in .gz that is not gzip data is one dead letter naming the file, never read as text', async () => {
    const f = fixture();
    const plain = await f.put('3.json.gz', lines(event('plain-despite-name', 4), event('second-line', 5)));
    await f.put('4.json', lines(event('after', 6)));
    const src = f.source();
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);
    expect(users(result.rows)).toEqual(['after']);
    expect(result.deadLetters).toEqual([{ source: { file: plain }, raw: '', reason: expect.stringMatching(/ends in \.gz but the object is not gzip data/) }]);
  });

  it('damaged gzip data becomes a dead letter for the file and the run goes on', async () => {
    const f = fixture();
    const bad = gzipSync(lines(event('x', 1))).subarray(0, 12);
    const badKey = await f.put('1.json.gz', bad);
    await f.put('2.json', lines(event('ok', 2)));
    const src = f.source();
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);
    expect(users(result.rows)).toEqual(['ok']);
    expect(result.deadLetters).toEqual([{ source: { file: badKey }, raw: '', reason: expect.stringMatching(/gzip data is damaged/) }]);
  });
});

describe('when lines are bad', () => {
  it('a malformed line, a missing field and a bad timestamp become dead letters with file and line, the rest are rows', async () => {
    const f = fixture();
    const body =
      `${event('ok1', 1)}\r\n` + // CRLF tolerated
      '\n' + // empty line 2: skipped, still counted
      '{"user":"broken",\n' + // line 3
      '{"user":"nofield","amount":1}\n' + // line 4: event_time absent, so null (as Spark)
      '   \n' + // blank line 5
      '{"user":"badts","event_time":"yesterday","amount":1}\n' + // line 6
      `${event('ok2', 7)}`; // line 7, no final newline
    const key = await f.put('mixed.json', body);
    const src = f.source();
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);

    expect(users(result.rows)).toEqual(['ok1', 'nofield', 'ok2']);
    expect(result.deadLetters).toEqual([
      { source: { file: key, line: 3 }, raw: '{"user":"broken",', reason: expect.stringMatching(/^malformed JSON/) },
      {
        source: { file: key, line: 6 },
        raw: '{"user":"badts","event_time":"yesterday","amount":1}',
        reason: expect.stringMatching(/column event_time \(TIMESTAMP\) has string "yesterday"/),
      },
    ]);
  });
});

describe('when a line is not UTF-8', () => {
  /** A valid JSON line whose user string holds a Latin-1 byte (0xE9), as a non-UTF-8 producer writes it. */
  const latin1 = (user: string, second: number) =>
    Buffer.concat([Buffer.from(`{"user":"${user}`), Buffer.from([0xe9]), Buffer.from(`","event_time":"2026-03-01 10:00:0${second}","amount":1}`)]);
  const nl = Buffer.from('\n');

  it('each such line is a dead letter with its file and line number, across decoded pieces and in gzipped files; the other lines are rows', async () => {
    const f = fixture();
    const body = Buffer.concat([
      Buffer.from(lines(event('ok1', 1), event('ok2', 2))), // lines 1, 2
      latin1('caf', 3),
      nl, // line 3
      Buffer.from(lines(event('ok4', 4), event('ok5', 5), event('ok6', 6))), // lines 4 to 6
      latin1('ren', 7),
      nl, // line 7
      Buffer.from(lines(event('ok8', 8))), // line 8
    ]);
    const key = await f.put('a.json', body);
    const gzKey = await f.put('b.json.gz', gzipSync(Buffer.concat([Buffer.from(lines(event('gz1', 1))), latin1('gz', 2), nl])));
    // Pieces of ~100 bytes: every line after the first piece is numbered through the cursor.
    const src = f.source({ decodePieceBytes: 100 });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const result = await src.read(0, null, end!);
    expect(users(result.rows)).toEqual(['ok1', 'ok2', 'ok4', 'ok5', 'ok6', 'ok8', 'gz1']);
    expect(result.deadLetters.map((d) => [d.source, d.reason])).toEqual([
      [{ file: key, line: 3 }, INVALID_UTF8_REASON],
      [{ file: key, line: 7 }, INVALID_UTF8_REASON],
      [{ file: gzKey, line: 2 }, INVALID_UTF8_REASON],
    ]);
    // The same file read in one piece numbers the lines the same way.
    const whole = await f.source().read(0, null, end!);
    expect(whole.deadLetters.map((d) => d.source)).toEqual(result.deadLetters.map((d) => d.source));
  });
});

describe('when the prefix holds more than data files', () => {
  it('skips directory markers, and takes a zero-byte object as a file without rows (as Spark lists it)', async () => {
    const f = fixture();
    await f.put('2026/', '');
    await f.put('2026/a.json', lines(event('a', 1)));
    await f.put('2026/b.json', '');
    await f.put('2026/c.json.gz', '');
    const src = f.source({ recursiveFileLookup: true });
    const target = await src.latestOffset(null);
    await expect(src.backlog(null, target)).resolves.toEqual({ files: 3, bytes: Buffer.byteLength(lines(event('a', 1))) });
    const end = (await src.planBatch(0, null, target!, {}))!;
    expect(await loggedKeys(f.checkpoint, end)).toEqual([`${f.landing}/2026/a.json`, `${f.landing}/2026/b.json`, `${f.landing}/2026/c.json.gz`]);
    const read = await src.read(0, null, end);
    expect(users(read.rows)).toEqual(['a']);
    expect(read.deadLetters).toEqual([]);
  });

  it('a run that finds only an empty object plans a batch for it', async () => {
    const f = fixture();
    await f.put('a.json', '');
    const target = await f.source().latestOffset(null);
    expect(target).not.toBeNull();
    const end = (await f.source().planBatch(0, null, target!, {}))!;
    expect(await loggedKeys(f.checkpoint, end)).toEqual([`${f.landing}/a.json`]);
    expect((await f.source().read(0, null, end)).rows).toEqual([]);
  });

  it('with suffixFilter, takes only matching keys', async () => {
    const f = fixture();
    await f.put('a.json', lines(event('a', 1)));
    await f.put('b.json.gz', gzipSync(lines(event('b', 2))));
    await f.put('c.csv', 'user,amount\n');
    await f.put('d._SUCCESS', 'x');
    const src = f.source({ suffixFilter: ['.json', '.json.gz'] });
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    expect(users((await src.read(0, null, end!)).rows)).toEqual(['a', 'b']);
  });

  it('does not read a sibling prefix that shares the name as a string prefix', async () => {
    const f = fixture();
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${f.landing}-other/x.json`, Body: Buffer.from(lines(event('other', 1))) }));
    await expect(f.source().latestOffset(null)).resolves.toBeNull();
  });
});

describe('when a key arrives that sorts before the last processed key', () => {
  it('is read once on the next run, and not again on the run after', async () => {
    const f = fixture();
    await f.put('2026/03/01/11/x.json', lines(event('later-hour', 1)));
    const first = f.source({ recursiveFileLookup: true });
    const end = await first.planBatch(0, null, (await first.latestOffset(null))!, {});
    await f.put('2026/03/01/10/y.json', lines(event('earlier-hour', 2)));

    const second = f.source({ recursiveFileLookup: true });
    const end1 = await second.planBatch(1, end, (await second.latestOffset(end))!, {});
    expect(users((await second.read(1, end, end1!)).rows)).toEqual(['earlier-hour']);
    const third = f.source({ recursiveFileLookup: true });
    await expect(third.latestOffset(end1)).resolves.toEqual(end1);
  });
});

describe('when a listing spans several pages', () => {
  it('pages with StartAfter and sees every file', async () => {
    const f = fixture();
    const keys = await putNumbered(f, 7);
    const src = f.source({ client: paging(), listPageSize: 3 });
    const target = await src.latestOffset(null);
    expect(target).toMatchObject({ files: 7 });
    expect(keys).toHaveLength(7);
    await expect(src.backlog(null, target)).resolves.toMatchObject({ files: 7 });
    expect(src.stats().lists).toBe(3);
  });
});

describe('when options are wrong', () => {
  it('an empty suffixFilter is refused at construction', () => {
    expect(() => fixture().source({ suffixFilter: [] })).toThrow(/suffixFilter \[\] must be a non-empty list/);
  });

  it('an offset of another source kind is refused with the remedy', async () => {
    await expect(
      fixture()
        .source()
        .latestOffset({ shardId: 'x' } as Json),
    ).rejects.toThrow(/is not an S3 landing offset .*new checkpoint prefix/);
  });
});

describe('when a file is large', () => {
  it('reads 20k lines in order', async () => {
    const f = fixture();
    const n = 20_000;
    const body = Array.from({ length: n }, (_, i) => JSON.stringify({ user: `u${i}`, event_time: 1_772_000_000 + i, amount: i })).join('\n');
    await f.put('big.json', body);
    const src = f.source();
    const end = await src.planBatch(0, null, (await src.latestOffset(null))!, {});
    const { rows, deadLetters } = await src.read(0, null, end!);
    expect(rows).toHaveLength(n);
    expect(deadLetters).toHaveLength(0);
    expect(rows[n - 1]).toEqual({ user: `u${n - 1}`, event_time: (1_772_000_000 + n - 1) * 1_000_000, amount: n - 1 });
  });
});

/** Serves listings `MaxKeys` at a time (s3rver cannot: its continuation tokens need OpenSSL's legacy DES). */
function paging(): S3Client {
  return {
    send: async (command: unknown) => {
      if (command instanceof ListObjectsV2Command && (command.input.MaxKeys ?? 1000) < 1000) {
        const max = command.input.MaxKeys!;
        const res = await s3.send(new ListObjectsV2Command({ ...command.input, MaxKeys: 1000 }));
        const contents = res.Contents ?? [];
        if (contents.length > max) return { ...res, Contents: contents.slice(0, max), IsTruncated: true, KeyCount: max };
        return res;
      }
      return s3.send(command as never);
    },
  } as unknown as S3Client;
}
