/**
 * S3JsonSink and S3DeadLetterSink on the local stack's S3: deterministic keys per batch, written
 * once (the local S3 enforces If-None-Match), so a replay finds its own content and a stale
 * writer with other content fails instead of overwriting.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3DeadLetterSink } from '../../lib/aws/s3/dead-letters';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import type { Json, OutputRow, SinkContext } from '../../lib/engine/ports';
import { ensureBucket } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const { s3 } = testClients();
let bucket: string;

beforeAll(async () => {
  bucket = uniqueName('sluice-sink').toLowerCase();
  await ensureBucket(s3, bucket);
});

// ---- factories -------------------------------------------------------------------------------

const ctx: SinkContext = {
  queryId: 'query-1',
  queryName: 'totals',
  outputMode: 'append',
  columns: ['window', 'user', 'total'],
  keyColumns: ['window', 'user'],
};

function totalRow(user: string, total: number, minute = 0): OutputRow {
  const start = `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
  const end = `2026-03-01T10:${String(minute + 1).padStart(2, '0')}:00.000Z`;
  return { window: { start, end }, user, total };
}

function deadLetter(line: number): Json {
  return { source: { file: 'landing/a.json', line }, raw: '{bad', reason: 'malformed JSON' };
}

function newSink(): { prefix: string; sink: S3JsonSink } {
  const prefix = `output/${uniqueName('sink')}`;
  return { prefix, sink: new S3JsonSink({ client: s3, bucket, prefix }) };
}

function newDeadLetters(): { prefix: string; sink: S3DeadLetterSink } {
  const prefix = `dead-letters/${uniqueName('dl')}`;
  return { prefix, sink: new S3DeadLetterSink({ client: s3, bucket, prefix }) };
}

async function objectText(key: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return res.Body!.transformToString();
}

async function keysUnder(prefix: string): Promise<string[]> {
  const res = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  return (res.Contents ?? []).map((c) => c.Key!.slice(prefix.length + 1));
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when a batch is written', () => {
  it('goes to batch-<N padded to 10>.jsonl as JSON lines, with one PUT', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(3, [totalRow('alice', 10), totalRow('bob', 5)], ctx);
    expect(await keysUnder(prefix)).toEqual(['batch-0000000003.jsonl']);
    expect(await objectText(`${prefix}/batch-0000000003.jsonl`)).toBe(`${JSON.stringify(totalRow('alice', 10))}\n${JSON.stringify(totalRow('bob', 5))}\n`);
    await expect(sink.readBatch(3)).resolves.toEqual([totalRow('alice', 10), totalRow('bob', 5)]);
    expect(sink.stats()).toMatchObject({ puts: 1, gets: 1, requests: 2 });
  });
});

describe('when a batch is replayed after a crash', () => {
  it('finds its object with identical content (412, compared) and adds no batch', async () => {
    const { prefix, sink } = newSink();
    const rows = [totalRow('alice', 10), totalRow('bob', 5, 1)];
    await sink.addBatch(0, rows, ctx);
    const first = await objectText(`${prefix}/batch-0000000000.jsonl`);

    const replay = new S3JsonSink({ client: s3, bucket, prefix });
    await replay.addBatch(
      0,
      rows.map((r) => ({ ...r })),
      ctx,
    );

    expect(await objectText(`${prefix}/batch-0000000000.jsonl`)).toBe(first);
    await expect(replay.listBatches()).resolves.toEqual([0]);
  });

  it('passes when the replay emits the same rows in another order, and the object keeps its first bytes', async () => {
    const { prefix, sink } = newSink();
    const rows = [totalRow('alice', 10), totalRow('bob', 5, 1), totalRow('carol', 1, 2)];
    await sink.addBatch(0, rows, ctx);
    const first = await objectText(`${prefix}/batch-0000000000.jsonl`);
    await new S3JsonSink({ client: s3, bucket, prefix }).addBatch(0, [rows[2], rows[0], rows[1]], ctx);
    expect(await objectText(`${prefix}/batch-0000000000.jsonl`)).toBe(first);
  });
});

describe('when a stale run writes other rows for a committed batch', () => {
  it("fails loudly naming the object, and the object keeps the first run's rows", async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(2, [totalRow('alice', 10)], ctx);
    const stale = new S3JsonSink({ client: s3, bucket, prefix });
    await expect(stale.addBatch(2, [totalRow('alice', 11)], ctx)).rejects.toThrow(
      /^the output of batch 2, s3:\/\/\S+\/batch-0000000002\.jsonl already holds other content .*write-once: another run wrote it/,
    );
    await expect(stale.addBatch(2, [], ctx)).rejects.toThrow(/already holds other content/);
    await expect(sink.readBatch(2)).resolves.toEqual([totalRow('alice', 10)]);
  });
});

describe('when a batch produces nothing', () => {
  it('records an empty object, told apart from a batch never written', async () => {
    const { sink } = newSink();
    await sink.addBatch(1, [], ctx);
    await expect(sink.readBatch(1)).resolves.toEqual([]);
    await expect(sink.readBatch(2)).resolves.toBeNull();
    await expect(sink.listBatches()).resolves.toEqual([1]);
  });
});

describe('when many batches have been written', () => {
  it('listBatches returns them in numeric order', async () => {
    const { sink } = newSink();
    for (const id of [10, 2, 9, 0]) await sink.addBatch(id, [totalRow(`u${id}`, id)], ctx);
    await expect(sink.listBatches()).resolves.toEqual([0, 2, 9, 10]);
  });

  it('ignores other objects under the prefix', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatch(0, [], ctx);
    const dl = new S3DeadLetterSink({ client: s3, bucket, prefix });
    await dl.write(0, 'malformed', [deadLetter(1)]);
    await expect(sink.listBatches()).resolves.toEqual([0]);
  });
});

describe('when dead letters are written', () => {
  it('each kind goes to <kind>/batch-<N>.jsonl and reads back', async () => {
    const { prefix, sink } = newDeadLetters();
    await sink.write(4, 'malformed', [deadLetter(1), deadLetter(7)]);
    await sink.write(4, 'late', [{ user: 'late', event_time: '2026-03-01T09:00:00.000Z' }]);
    expect((await keysUnder(prefix)).sort()).toEqual(['late/batch-0000000004.jsonl', 'malformed/batch-0000000004.jsonl']);
    await expect(sink.read(4, 'malformed')).resolves.toEqual([deadLetter(1), deadLetter(7)]);
    await expect(sink.read(4, 'late')).resolves.toEqual([{ user: 'late', event_time: '2026-03-01T09:00:00.000Z' }]);
  });

  it('an empty batch writes nothing', async () => {
    const { prefix, sink } = newDeadLetters();
    await sink.write(0, 'late', []);
    expect(await keysUnder(prefix)).toEqual([]);
    expect(sink.stats().requests).toBe(0);
    await expect(sink.read(0, 'late')).resolves.toEqual([]);
  });

  it('a replay with the same records passes', async () => {
    const { sink } = newDeadLetters();
    await sink.write(2, 'malformed', [deadLetter(3)]);
    await sink.write(2, 'malformed', [deadLetter(3)]);
    await expect(sink.read(2, 'malformed')).resolves.toEqual([deadLetter(3)]);
  });

  it('other records for the same batch fail loudly and the first ones stay', async () => {
    const { sink } = newDeadLetters();
    await sink.write(2, 'malformed', [deadLetter(3)]);
    await expect(sink.write(2, 'malformed', [deadLetter(4)])).rejects.toThrow(
      /^the malformed dead letters of batch 2, s3:\/\/\S+\/malformed\/batch-0000000002\.jsonl already holds other content/,
    );
    await expect(sink.read(2, 'malformed')).resolves.toEqual([deadLetter(3)]);
  });
});

describe('when a stateless batch is streamed (addBatchChunks)', () => {
  async function* chunks(...parts: OutputRow[][]): AsyncIterable<OutputRow[]> {
    for (const p of parts) yield p;
  }
  const rows = [totalRow('alice', 1), totalRow('bob', 2, 1), totalRow('carol', 3, 2)];

  it('writes the one object of the batch, its lines in the order the chunks came, with one PUT', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatchChunks(3, chunks(rows.slice(0, 2), rows.slice(2)), ctx);
    expect(await keysUnder(prefix)).toEqual(['batch-0000000003.jsonl']);
    expect(await objectText(`${prefix}/batch-0000000003.jsonl`)).toBe(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  });

  it('a replay with the same chunks passes and keeps the object; one with other rows fails loudly', async () => {
    const { prefix, sink } = newSink();
    await sink.addBatchChunks(4, chunks(rows), ctx);
    await sink.addBatchChunks(4, chunks(rows.slice(0, 1), rows.slice(1)), ctx);
    await expect(sink.addBatchChunks(4, chunks([totalRow('mallory', 9)]), ctx)).rejects.toThrow(/batch-0000000004\.jsonl.*already holds other content/);
    expect(await sink.readBatch(4)).toEqual(rows);
    expect(await keysUnder(prefix)).toEqual(['batch-0000000004.jsonl']);
  });
});

describe("when a batch's text passes one part (a multipart upload, never one string of the batch)", () => {
  const PART = 5 * 1024 * 1024;
  /** 3,000 rows of about 4 KiB: about 12 MiB, three parts of 5 MiB. */
  const bigRows = Array.from({ length: 3000 }, (_, i) => ({ ...totalRow(`u${i}`, i, i % 50), note: `${i}:${'n'.repeat(4096)}` }));
  const bigSink = (prefix: string) => new S3JsonSink({ client: s3, bucket, prefix, partBytes: PART });
  async function* chunked(rows: OutputRow[], size: number): AsyncIterable<OutputRow[]> {
    for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
  }

  it('streams it as parts (create, 3 parts, complete), and the object reads back whole', async () => {
    const { prefix } = newSink();
    const sink = bigSink(prefix);
    await sink.addBatchChunks(0, chunked(bigRows, 500), ctx);
    expect(sink.stats()).toMatchObject({ gets: 0, puts: 5, deletes: 0 });
    expect(await keysUnder(prefix)).toEqual(['batch-0000000000.jsonl']);
    expect(await sink.readBatch(0)).toEqual(bigRows);
  });

  it('a replay in another order (addBatch) is refused at completion (412), aborted, and passes by digest; one with a row changed fails loudly, the object as it was', async () => {
    const { prefix } = newSink();
    await bigSink(prefix).addBatch(1, bigRows, ctx);
    const replay = bigSink(prefix);
    await replay.addBatch(1, [...bigRows].reverse(), ctx);
    expect(replay.stats()).toMatchObject({ puts: 5, deletes: 1, gets: 1 });
    const changed = bigRows.map((r, i) => (i === 2999 ? { ...r, total: -1 } : r));
    await expect(bigSink(prefix).addBatchChunks(1, chunked(changed, 700), ctx)).rejects.toThrow(
      /batch-0000000001\.jsonl already holds other content \(3000 lines, \d+ bytes, this write 3000 lines/,
    );
    expect(await bigSink(prefix).readBatch(1)).toEqual(bigRows);
  });

  it('the object appearing during the upload (another attempt): the completion answers 412, the upload is aborted, and the same rows pass', async () => {
    for (const [other, passes] of [
      [bigRows, true],
      [bigRows.slice(1), false],
    ] as const) {
      const { prefix } = newSink();
      const sink = bigSink(prefix);
      async function* racing(): AsyncIterable<OutputRow[]> {
        yield bigRows.slice(0, 2000); // a part is uploaded as this chunk is taken
        await bigSink(prefix).addBatch(2, [...other], ctx);
        yield bigRows.slice(2000);
      }
      const write = sink.addBatchChunks(2, racing(), ctx);
      if (passes) await write;
      else await expect(write).rejects.toThrow(/already holds other content \(2999 lines/);
      expect(sink.stats().deletes).toBe(1); // AbortMultipartUpload
      expect(await bigSink(prefix).readBatch(2)).toEqual(other);
    }
  });
});
