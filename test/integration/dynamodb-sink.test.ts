/**
 * DynamoDbSink on DynamoDB Local: the conditional-write batch-ID guard, chunked transactions with
 * per-chunk markers, lease fencing, retries, and what a batch costs.
 */
import { type DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { InvalidOptionError, LeaseLostError, SluiceError } from '../../lib/engine/errors';
import type { LeaseHandle, OutputRow, SinkContext } from '../../lib/engine/ports';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { count, sessionWindow } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { clockStart, testClients, testConnection, uniqueName } from '../helpers/stack';

const { dynamodb, s3 } = testClients();
const bucket = uniqueName('sink-bucket');
const table = uniqueName('sink-table');
const leaseTable = uniqueName('sink-lease');

beforeAll(async () => {
  await Promise.all([ensureStateTable(dynamodb, table), ensureStateTable(dynamodb, leaseTable), ensureBucket(s3, bucket)]);
});

// ---- factories -------------------------------------------------------------------------------

function windowRow(user: string, total: number, minute = 0, pad = 0): OutputRow {
  const start = new Date(Date.UTC(2026, 9, 1, 12, minute)).toISOString();
  const end = new Date(Date.UTC(2026, 9, 1, 12, minute + 1)).toISOString();
  return pad ? { window: { start, end }, user, total, note: 'x'.repeat(pad) } : { window: { start, end }, user, total };
}

const manyRows = (n: number, total = 1, pad = 0) => Array.from({ length: n }, (_, i) => windowRow(`u${i}`, total, i % 50, pad));

function ctx(over: Partial<SinkContext> = {}): SinkContext {
  return { queryId: 'qid-1', queryName: 'totals', outputMode: 'update', columns: ['window', 'user', 'total', 'note'], keyColumns: ['window', 'user'], ...over };
}

function newSink(over: Partial<ConstructorParameters<typeof DynamoDbSink>[0]> = {}) {
  const queryKey = uniqueName('q');
  return { queryKey, sink: new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, baseDelayMs: 1, maxDelayMs: 5, ...over }) };
}

/** A client that fails (or answers) chosen TransactWriteItems calls, and passes the rest on. */
function flakyClient(fail: (call: number) => Error | null): DynamoDBClient {
  let calls = 0;
  return {
    send: (cmd: unknown) => {
      if (cmd instanceof TransactWriteItemsCommand) {
        const err = fail(++calls);
        if (err) return Promise.reject(err);
      }
      return dynamodb.send(cmd as never);
    },
  } as unknown as DynamoDBClient;
}

function cancelled(...codes: string[]): Error {
  return Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => ({ Code })) });
}

// ---- scenarios --------------------------------------------------------------------------------

describe('when a batch is written', () => {
  it('stores one item per key, readable without bookkeeping', async () => {
    const { sink } = newSink();
    await sink.addBatch(0, [windowRow('alice', 10), windowRow('bob', 5)], ctx());
    expect(await sink.readAll()).toEqual(expect.arrayContaining([windowRow('alice', 10), windowRow('bob', 5)]));
    const items = await sink.readItems();
    expect(items).toHaveLength(2);
    expect(items.every((i) => i.batchId === 0 && i.queryId === 'qid-1')).toBe(true);
    expect(sink.stats()).toMatchObject({ transactions: 1, markerReads: 1, chunksWritten: 1, rowsWritten: 2 });
  });

  it('upserts by key in later batches (update mode)', async () => {
    const { sink } = newSink();
    await sink.addBatch(0, [windowRow('alice', 10), windowRow('bob', 5)], ctx());
    await sink.addBatch(1, [windowRow('alice', 12)], ctx());
    const items = await sink.readItems();
    expect(items.map((i) => [i.row.user, i.row.total, i.batchId])).toEqual(
      expect.arrayContaining([
        ['alice', 12, 1],
        ['bob', 5, 0],
      ]),
    );
    expect(items).toHaveLength(2);
  });

  it('keys rows without key columns by (batchId, row index), keeping equal rows apart', async () => {
    const { sink } = newSink();
    const dedupCtx = ctx({ keyColumns: [], outputMode: 'append', columns: ['id', 'v'] });
    await sink.addBatch(
      4,
      [
        { id: 'a', v: 1 },
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ],
      dedupCtx,
    );
    await sink.addBatch(
      4,
      [
        { id: 'a', v: 1 },
        { id: 'a', v: 1 },
        { id: 'b', v: 2 },
      ],
      dedupCtx,
    );
    const items = await sink.readItems();
    expect(items.map((i) => i.key)).toEqual(['b0000000004#00000000', 'b0000000004#00000001', 'b0000000004#00000002']);
  });

  it('refuses an output column named like its bookkeeping, saying how to fix it', async () => {
    const { sink } = newSink();
    await expect(sink.addBatch(0, [{ batchId: 1 }], ctx({ columns: ['batchId'], keyColumns: [] }))).rejects.toThrow(/batchId.*rename it/);
    await expect(sink.addBatch(0, [{ batchId: 1 }], ctx({ columns: ['batchId'], keyColumns: [] }))).rejects.toBeInstanceOf(InvalidOptionError);
  });
});

describe('when batch N is replayed', () => {
  it('recognises it by its markers and writes nothing', async () => {
    const { sink } = newSink();
    const rows = [windowRow('alice', 10), windowRow('bob', 5)];
    await sink.addBatch(3, rows, ctx());
    const before = sink.stats();
    await sink.addBatch(3, rows, ctx());
    const after = sink.stats();
    expect(after.transactions - before.transactions).toBe(0);
    expect(after.writeUnits - before.writeUnits).toBe(0);
    expect(after.chunksSkipped - before.chunksSkipped).toBe(1);
    expect(await sink.readItems()).toHaveLength(2);
  });

  it('treats a marker that appeared meanwhile (ConditionalCheckFailed on it) as already written', async () => {
    const { queryKey, sink } = newSink();
    await sink.addBatch(3, [windowRow('alice', 10)], ctx());
    // A second instance whose marker read raced the first attempt: its transaction meets the marker.
    const racing = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey });
    (racing as unknown as { existingMarkers: () => Promise<Map<number, string>> }).existingMarkers = async () => new Map();
    await racing.addBatch(3, [windowRow('alice', 10)], ctx());
    expect(racing.stats()).toMatchObject({ transactions: 1, chunksWritten: 0, chunksSkipped: 1 });
  });
});

describe('when an older batch writes a row a newer batch already wrote', () => {
  it("leaves the newer row as it is and writes the older batch's other rows", async () => {
    const { sink } = newSink();
    await sink.addBatch(5, [windowRow('alice', 50)], ctx());
    await sink.addBatch(4, [windowRow('alice', 40), windowRow('carol', 4)], ctx());
    const items = await sink.readItems();
    expect(items.map((i) => [i.row.user, i.row.total, i.batchId])).toEqual(
      expect.arrayContaining([
        ['alice', 50, 5],
        ['carol', 4, 4],
      ]),
    );
    expect(sink.stats()).toMatchObject({ rowsSkippedNewer: 1, chunksWritten: 2 });
  });

  it('lets a new checkpoint of the query (another queryId) overwrite rows from the old one', async () => {
    const { sink } = newSink();
    await sink.addBatch(57, [windowRow('alice', 1)], ctx({ queryId: 'old-checkpoint' }));
    await sink.addBatch(0, [windowRow('alice', 2)], ctx({ queryId: 'new-checkpoint' }));
    expect((await sink.readItems()).map((i) => [i.row.total, i.batchId, i.queryId])).toEqual([[2, 0, 'new-checkpoint']]);
  });
});

describe('when a batch is larger than one transaction', () => {
  it('splits it into chunks of 99 rows (98 when fenced), each with its own marker', async () => {
    const { sink } = newSink();
    await sink.addBatch(0, manyRows(250), ctx());
    expect(sink.stats()).toMatchObject({ transactions: 3, chunksWritten: 3, rowsWritten: 250 });
    expect(await sink.readMarkers(0, 'qid-1', 4)).toEqual(new Set([0, 1, 2]));
    expect(await sink.readItems()).toHaveLength(250);
  });

  it('keeps each transaction under 4 MB', async () => {
    const { sink } = newSink();
    // 30 rows of ~300 KB: at most 13 fit in 4 MB.
    await sink.addBatch(0, manyRows(30, 1, 300_000), ctx());
    expect(sink.stats().transactions).toBe(3);
    expect(await sink.readItems()).toHaveLength(30);
  });

  it('on a replay after a crash between chunks, skips the committed chunks and writes the rest', async () => {
    const queryKey = uniqueName('q');
    const crashing = new DynamoDbSink({
      client: flakyClient((n) => (n === 2 ? Object.assign(new Error('killed'), { name: 'InjectedKill' }) : null)),
      tableName: table,
      queryKey,
      maxConcurrency: 1,
    });
    const rows = manyRows(250);
    await expect(crashing.addBatch(7, rows, ctx())).rejects.toThrow(/killed/);
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey });
    expect(await replay.readMarkers(7, 'qid-1', 3)).toEqual(new Set([0]));
    await replay.addBatch(7, rows, ctx());
    expect(replay.stats()).toMatchObject({ chunksSkipped: 1, chunksWritten: 2, transactions: 2 });
    expect(await replay.readAll()).toHaveLength(250);
  });
});

describe('when DynamoDB throttles or transactions conflict', () => {
  it('retries the chunk with backoff and jitter', async () => {
    const { queryKey } = newSink();
    const sink = new DynamoDbSink({
      client: flakyClient((n) =>
        n === 1 ? cancelled('TransactionConflict', 'None') : n === 2 ? Object.assign(new Error('slow down'), { name: 'ThrottlingException' }) : null,
      ),
      tableName: table,
      queryKey,
      baseDelayMs: 1,
      maxDelayMs: 5,
    });
    await sink.addBatch(0, [windowRow('alice', 1)], ctx());
    expect(sink.stats()).toMatchObject({ retries: 2, transactions: 3, chunksWritten: 1 });
    expect(await sink.readAll()).toEqual([windowRow('alice', 1)]);
  });

  it('gives up after maxAttempts with a retriable error naming the reasons', async () => {
    const { queryKey } = newSink();
    const sink = new DynamoDbSink({
      client: flakyClient(() => cancelled('TransactionConflict', 'None')),
      tableName: table,
      queryKey,
      maxAttempts: 3,
      baseDelayMs: 1,
      maxDelayMs: 2,
    });
    await expect(sink.addBatch(0, [windowRow('alice', 1)], ctx())).rejects.toMatchObject({
      retriable: true,
      message: expect.stringMatching(/TransactionConflict.*after 3 attempts/),
    });
  });
});

describe("when the run's lease was taken over (fencing)", () => {
  let now = clockStart();
  const clock = { now: () => now };

  async function takeOver(leaseKey: string): Promise<{ stale: LeaseHandle; current: LeaseHandle }> {
    const a = new DynamoDbLease({ client: dynamodb, tableName: leaseTable, leaseKey, clock });
    const b = new DynamoDbLease({ client: dynamodb, tableName: leaseTable, leaseKey, clock });
    const stale = (await a.acquire('run-a', 60_000))!;
    now += 61_000; // run-a stalls past its lease
    const current = (await b.acquire('run-b', 60_000))!;
    return { stale, current };
  }

  it('rejects a sink write with the stale token: LeaseLostError, nothing written', async () => {
    const leaseKey = uniqueName('lease');
    const { stale, current } = await takeOver(leaseKey);
    expect(current.token).toBe(stale.token + 1);
    const { sink } = newSink({ leaseTable, leaseKey });
    await expect(sink.addBatch(0, [windowRow('alice', 1)], ctx({ lease: stale }))).rejects.toBeInstanceOf(LeaseLostError);
    await expect(sink.addBatch(0, [windowRow('alice', 1)], ctx({ lease: stale }))).rejects.toThrow(/fencing token 1.*no longer holds/);
    // The lease item as stored (ALL_OLD on the fence) names the run that holds it now.
    await expect(sink.addBatch(0, [windowRow('alice', 1)], ctx({ lease: stale }))).rejects.toMatchObject({
      message: expect.stringMatching(/run-b holds it with token 2/),
      details: { holder: 'run-b' },
    });
    expect(await sink.readAll()).toEqual([]);
    expect(await sink.readMarkers(0, 'qid-1', 1)).toEqual(new Set());
  });

  it("accepts the same write with the current holder's token", async () => {
    const leaseKey = uniqueName('lease');
    const { current } = await takeOver(leaseKey);
    const { sink } = newSink({ leaseTable, leaseKey });
    await sink.addBatch(0, manyRows(120), ctx({ lease: current }));
    // Fenced chunks hold 98 rows: 120 rows are 2 transactions.
    expect(sink.stats()).toMatchObject({ transactions: 2, chunksWritten: 2 });
    const lease = await dynamodb.send(new GetItemCommand({ TableName: leaseTable, Key: { pk: { S: `lease#${leaseKey}` }, sk: { S: 'lease' } } }));
    expect(lease.Item?.owner?.S).toBe('run-b');
  });
});

describe('what a batch of N rows costs', () => {
  it.each([
    [1000, 0, false],
    [1000, 700, true],
  ])(
    'N = %d rows (+%d bytes of padding, under 1 KB), fenced %s: ceil(N/C) transactions, 2 WCU per row-KB + 2 per marker + 2 per lease check',
    async (n, pad, fenced) => {
      const leaseKey = uniqueName('lease');
      const lease = fenced ? await new DynamoDbLease({ client: dynamodb, tableName: leaseTable, leaseKey }).acquire('run', 60_000) : null;
      const { sink } = newSink(fenced ? { leaseTable, leaseKey } : {});
      await sink.addBatch(0, manyRows(n, 1, pad), ctx({ lease: lease ?? undefined }));
      const s = sink.stats();
      const perChunk = fenced ? 98 : 99;
      const chunks = Math.ceil(n / perChunk);
      expect(s.transactions).toBe(chunks);
      expect(s.markerReads).toBe(1);
      const wcu = 2 * n + 2 * chunks + (fenced ? 2 * chunks : 0);
      const bigger = await (async () => {
        // The same rows at ~2.5 KB each cost 3 KB x 2 per row.
        const { sink: s2 } = newSink();
        await s2.addBatch(0, manyRows(10, 1, 2500), ctx());
        return s2.stats().writeUnits;
      })();
      expect(bigger).toBe(10 * 6 + 2);
      expect(s.writeUnits).toBe(wcu);
      // DynamoDB Local reports 2 units per table per transaction here: it adds up the units of the
      // DISTINCT item sizes of a transaction (99 rows of < 1 KB and their marker are "2"), so for
      // rows of equal size it under-reports; the test below compares where its report is exact.
      expect(s.consumedWriteUnits).toBe(2 * chunks + (fenced ? 2 * chunks : 0));
      // eslint-disable-next-line no-console
      console.log(
        `DynamoDbSink cost: N=${n} rows (< 1 KB each), fenced=${fenced}, retries=${s.retries}: ${1 + s.transactions} requests (1 BatchGetItem + ${s.transactions} TransactWriteItems), ${s.writeUnits} WCU, consumed ${s.consumedWriteUnits}`,
      );
    },
  );
});

// ---- issue 14 ---------------------------------------------------------------------------------

/** A client whose `n`th TransactWriteItems fails (the run dies there); every other call goes through. */
const killedAt = (n: number) => flakyClient((call) => (call === n ? Object.assign(new Error('killed'), { name: 'InjectedKill' }) : null));

describe('when a replay hands the same rows in another order (hole 1)', () => {
  it('keyed rows: chunk i holds the same rows whatever the order, so a replay after chunk 0 loses none', async () => {
    const queryKey = uniqueName('q');
    const rows = manyRows(320);
    const first = new DynamoDbSink({ client: killedAt(2), tableName: table, queryKey, maxConcurrency: 1 });
    await expect(first.addBatch(7, rows, ctx())).rejects.toThrow(/killed/);
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, maxConcurrency: 1 });
    await replay.addBatch(7, [...rows].reverse(), ctx());
    expect(replay.stats()).toMatchObject({ chunksSkipped: 1, chunksWritten: 3 });
    expect((await replay.readAll()).map((r) => r.user).sort()).toEqual(rows.map((r) => r.user).sort());
  });

  it('keyless rows: indexes are given after a sort by content, so a replay in another order writes the same items', async () => {
    const queryKey = uniqueName('q');
    const keyless = ctx({ keyColumns: [], outputMode: 'append', columns: ['id', 'v'] });
    const rows = Array.from({ length: 310 }, (_, i) => ({ id: `e${i}`, v: i % 7 }));
    const first = new DynamoDbSink({ client: killedAt(2), tableName: table, queryKey, maxConcurrency: 1 });
    await expect(first.addBatch(3, rows, keyless)).rejects.toThrow(/killed/);
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, maxConcurrency: 1 });
    await replay.addBatch(3, [...rows].reverse(), keyless);
    const held = await replay.readAll();
    expect(held).toHaveLength(310);
    expect(held.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
  });

  it('a replay whose chunk differs from what its marker recorded fails loudly, naming query, batch and chunk, and writes nothing', async () => {
    const queryKey = uniqueName('q');
    const rows = manyRows(150);
    const first = new DynamoDbSink({ client: killedAt(2), tableName: table, queryKey, maxConcurrency: 1 });
    await expect(first.addBatch(9, rows, ctx())).rejects.toThrow(/killed/);
    // The "replay" emits another total for the first row of chunk 0 (sorted by key: u0 at minute 0).
    const changed = rows.map((r) => (r.user === 'u0' ? { ...r, total: 99 } : r));
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, maxConcurrency: 1 });
    const err = await replay.addBatch(9, changed, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ retriable: false, details: { queryKey, batchId: 9, chunk: 0 } });
    expect((err as Error).message).toMatch(new RegExp(`chunk 0 of batch 9 of query ${queryKey}.*differ.*deterministic`));
    expect(replay.stats()).toMatchObject({ transactions: 0 });
    expect(await replay.readAll()).toHaveLength(99); // chunk 0 only (99 rows unfenced), as the first attempt left it
  });
});

describe('when a batch is written in several transactions (mid-sink hook)', () => {
  it('tells ctx.onPieceWritten after each committed chunk, 0, 1, 2, and nothing for chunks skipped on a replay', async () => {
    const { sink } = newSink({ maxConcurrency: 1 });
    const pieces: number[] = [];
    await sink.addBatch(0, manyRows(250), ctx({ onPieceWritten: (i) => pieces.push(i) }));
    expect(pieces).toEqual([0, 1, 2]);
    const again: number[] = [];
    await sink.addBatch(0, manyRows(250), ctx({ onPieceWritten: (i) => again.push(i) }));
    expect(again).toEqual([]);
  });

  it('a throw from the hook after piece 0 leaves exactly chunk 0 committed, and the replay completes the batch', async () => {
    const { queryKey, sink } = newSink({ maxConcurrency: 1 });
    const crash = (i: number) => {
      if (i === 0) throw Object.assign(new Error('mid-sink'), { name: 'InjectedCrash' });
    };
    await expect(sink.addBatch(2, manyRows(250), ctx({ onPieceWritten: crash }))).rejects.toThrow(/mid-sink/);
    expect(await sink.readMarkers(2, 'qid-1', 3, queryKey)).toEqual(new Set([0]));
    await sink.addBatch(2, [...manyRows(250)].reverse(), ctx());
    expect(await sink.readAll()).toHaveLength(250);
  });
});

describe('when two pipelines of one query name (different checkpoints) share the sink table (hole 11)', () => {
  it("keeps their rows apart by default: the query key is the checkpoint's query id", async () => {
    const a = new DynamoDbSink({ client: dynamodb, tableName: table });
    const b = new DynamoDbSink({ client: dynamodb, tableName: table });
    const qa = uniqueName('checkpoint-a');
    const qb = uniqueName('checkpoint-b');
    await a.addBatch(0, [windowRow('alice', 1)], ctx({ queryId: qa, queryName: 'totals' }));
    await b.addBatch(0, [windowRow('alice', 2)], ctx({ queryId: qb, queryName: 'totals' }));
    expect((await a.readAll(qa)).map((r) => r.total)).toEqual([1]);
    expect((await b.readAll(qb)).map((r) => r.total)).toEqual([2]);
  });

  it('uses the queryKey given in the URI instead, when there is one', async () => {
    const { queryKey, sink } = newSink();
    await sink.addBatch(0, [windowRow('alice', 1)], ctx({ queryId: uniqueName('cp') }));
    expect((await sink.readAll(queryKey)).map((r) => r.total)).toEqual([1]);
  });
});

describe('when a concurrent attempt committed a chunk with other rows (the marker appears between the read and the write)', () => {
  it('fails loudly instead of counting the chunk as written', async () => {
    const { queryKey, sink } = newSink();
    await sink.addBatch(4, [windowRow('alice', 10)], ctx());
    const racing = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey });
    (racing as unknown as { existingMarkers: () => Promise<Map<number, string>> }).existingMarkers = async () => new Map();
    await expect(racing.addBatch(4, [windowRow('alice', 11)], ctx())).rejects.toMatchObject({
      retriable: false,
      message: expect.stringMatching(/chunk 0 of batch 4 .* differ from this replay's/),
    });
    expect((await sink.readAll()).map((r) => r.total)).toEqual([10]);
  });
});

describe('what a batch costs, as DynamoDB Local reports it (ReturnConsumedCapacity TOTAL)', () => {
  it.each([false, true])(
    'rows of 2, 3, 4 and 5 KB and the marker, fenced %s: the reported units equal the formula (2 per item-KB, rounded up per item, 2 per lease check)',
    async (fenced) => {
      const leaseKey = uniqueName('lease');
      const lease = fenced ? await new DynamoDbLease({ client: dynamodb, tableName: leaseTable, leaseKey }).acquire('run', 60_000) : null;
      const { sink } = newSink(fenced ? { leaseTable, leaseKey } : {});
      // Item sizes that round up to pairwise different KB counts (Local's report is exact for those).
      const rows = [1500, 2500, 3500, 4500].map((pad, i) => windowRow(`u${i}`, 1, i, pad));
      await sink.addBatch(0, rows, ctx({ lease: lease ?? undefined }));
      const s = sink.stats();
      expect(s.transactions).toBe(1);
      const formula = 2 * (2 + 3 + 4 + 5) + 2 + (fenced ? 2 : 0);
      expect(s.writeUnits).toBe(formula);
      expect(s.consumedWriteUnits).toBe(formula);
    },
  );
});

describe('when session windows merge across batches (hole 6)', () => {
  /** Sessions per user, gap 10 s, in `mode`, through buildExecutor into dynamodb://<table>/<queryKey>. */
  function sessions(mode: 'complete') {
    const base = uniqueName(`sessions-${mode}`);
    const plan = readStream
      .format('json')
      .schema('user STRING, t TIMESTAMP')
      .load(`s3://${bucket}/${base}/landing`)
      .withWatermark('t', '1 hour')
      .groupBy(sessionWindow('t', '10 seconds'), 'user')
      .agg(count().as('events'))
      .writeStream.outputMode(mode)
      .trigger({ availableNow: true })
      .queryName(`sessions-${mode}`)
      .plan();
    const cfg: PipelineConfig = {
      checkpoint: { bucket, prefix: `${base}/checkpoint` },
      stateTable: leaseTable,
      source: { kind: 's3', bucket, prefix: `${base}/landing` },
      sink: { kind: 'dynamodb', table, queryKey: base },
    };
    let file = 0;
    const run = async (events: Array<{ user: string; t: string }>) => {
      const key = `${base}/landing/part-${String(++file).padStart(4, '0')}.json`;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: events.map((e) => JSON.stringify(e)).join('\n') }));
      return buildExecutor(testConnection(), plan, cfg).executor.run();
    };
    const held = () => new DynamoDbSink({ client: dynamodb, tableName: table, queryKey: base }).readAll();
    return { run, held };
  }

  // (complete mode only: session windows refuse update mode, as in Spark)
  it.each(['complete'] as const)("%s mode: the table holds the merged session only, as the query's answer does", async (mode) => {
    const q = sessions(mode);
    // Batch 0: two sessions of a, [10 s, 20 s) and [30 s, 40 s), and one of b.
    await q.run([
      { user: 'a', t: '2026-10-01 12:00:10' },
      { user: 'a', t: '2026-10-01 12:00:30' },
      { user: 'b', t: '2026-10-01 12:00:10' },
    ]);
    expect(await q.held()).toHaveLength(3);
    // The next run: an event at 20 s touches both sessions of a, which merge into [10 s, 40 s).
    await q.run([{ user: 'a', t: '2026-10-01 12:00:20' }]);
    const rows = await q.held();
    expect(rows.filter((r) => r.user === 'a')).toEqual([
      { session_window: { start: '2026-10-01T12:00:10.000Z', end: '2026-10-01T12:00:40.000Z' }, user: 'a', events: 3 },
    ]);
    expect(rows.filter((r) => r.user === 'b')).toEqual([
      { session_window: { start: '2026-10-01T12:00:10.000Z', end: '2026-10-01T12:00:20.000Z' }, user: 'b', events: 1 },
    ]);
  });
});

describe("when the run dies between a merged session's put and the deletes of the sessions it superseded", () => {
  it("the replay deletes them, and a later batch's row is never deleted by an older batch", async () => {
    const queryKey = uniqueName('q');
    const session = (user: string, from: number, to: number, events: number): OutputRow => ({
      session_window: { start: new Date(Date.UTC(2026, 9, 1, 12, 0, from)).toISOString(), end: new Date(Date.UTC(2026, 9, 1, 12, 0, to)).toISOString() },
      user,
      events,
    });
    const sessionCtx = ctx({ columns: ['session_window', 'user', 'events'], keyColumns: ['session_window', 'user'] });
    const sink = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey });
    await sink.addBatch(0, [session('a', 10, 20, 1), session('a', 30, 40, 1), session('b', 10, 20, 1)], sessionCtx);
    // Batch 1's first attempt commits the merged session, then dies on the deletes' transaction.
    const dying = new DynamoDbSink({ client: killedAt(2), tableName: table, queryKey });
    await expect(dying.addBatch(1, [session('a', 10, 40, 3)], sessionCtx)).rejects.toThrow(/killed/);
    expect(await sink.readAll()).toHaveLength(4);
    await sink.addBatch(1, [session('a', 10, 40, 3)], sessionCtx);
    expect(await sink.readAll()).toEqual(expect.arrayContaining([session('a', 10, 40, 3), session('b', 10, 20, 1)]));
    expect(await sink.readAll()).toHaveLength(2);
    expect(sink.stats()).toMatchObject({ rowsDeleted: 2 });
    // Batch 2 grows the session again; a late replay of batch 1 then deletes nothing batch 2 wrote.
    await sink.addBatch(2, [session('a', 10, 50, 4)], sessionCtx);
    await sink.addBatch(1, [session('a', 10, 40, 3)], sessionCtx);
    expect((await sink.readAll()).filter((r) => r.user === 'a')).toEqual([session('a', 10, 50, 4)]);
  });
});

// ---- streamed stateless batches (hole 9) ------------------------------------------------------

describe('when a stateless batch is streamed (addBatchChunks)', () => {
  const keyless = ctx({ keyColumns: [], outputMode: 'append', columns: ['id', 'v'] });
  /** 3 source chunks of 200, 200 and 120 rows: 520 rows, 6 unfenced transactions of at most 99. */
  const sourceChunks = (): OutputRow[][] => [200, 200, 120].map((n, c) => Array.from({ length: n }, (_, i) => ({ id: `c${c}-${i}`, v: i % 7 })));
  /** The chunks as an iterable, noting the sink's committed transactions as each is yielded. */
  async function* stream(chunks: OutputRow[][], sink: DynamoDbSink, seen: number[] = []): AsyncIterable<OutputRow[]> {
    for (const c of chunks) {
      seen.push(sink.stats().chunksWritten);
      yield c;
    }
  }

  it('writes each transaction as it fills, before the source yields its next chunk, and numbers the rows in the order they came', async () => {
    const { sink } = newSink({ maxConcurrency: 1 });
    const seen: number[] = [];
    await sink.addBatchChunks(4, stream(sourceChunks(), sink, seen), keyless);
    // 200 rows close transaction 0 at row 99 and 1 at row 198: both committed before chunk 1 comes.
    expect(seen).toEqual([0, 2, 4]);
    expect(sink.stats()).toMatchObject({ transactions: Math.ceil(520 / 99), chunksWritten: Math.ceil(520 / 99), rowsWritten: 520, markerReads: 1 });
    const items = await sink.readItems();
    const inOrder = sourceChunks().flat();
    expect(items.map((it) => it.key)).toEqual(inOrder.map((_, i) => `b${String(4).padStart(10, '0')}#${String(i).padStart(8, '0')}`));
    expect(items.map((it) => it.row)).toEqual(inOrder);
  });

  it('on a replay after the first transaction (mid-sink), skips what its markers record and ends with every row once', async () => {
    const { queryKey, sink } = newSink({ maxConcurrency: 1 });
    const crash = (i: number) => {
      if (i === 0) throw Object.assign(new Error('mid-sink'), { name: 'InjectedCrash' });
    };
    const seen: number[] = [];
    await expect(sink.addBatchChunks(5, stream(sourceChunks(), sink, seen), { ...keyless, onPieceWritten: crash })).rejects.toThrow(/mid-sink/);
    expect(seen).toEqual([0]); // the source had yielded one chunk of three
    expect(await sink.readMarkers(5, 'qid-1', 6, queryKey)).toEqual(new Set([0]));
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, maxConcurrency: 1 });
    const pieces: number[] = [];
    await replay.addBatchChunks(5, stream(sourceChunks(), replay), { ...keyless, onPieceWritten: (i) => pieces.push(i) });
    expect(replay.stats()).toMatchObject({ chunksSkipped: 1, chunksWritten: 5 });
    expect(pieces).toEqual([0, 1, 2, 3, 4]);
    expect(await replay.readAll()).toEqual(sourceChunks().flat());
    // A replay of the whole batch writes nothing more.
    await replay.addBatchChunks(5, stream(sourceChunks(), replay), keyless);
    expect(replay.stats()).toMatchObject({ chunksSkipped: 1 + 6, chunksWritten: 5 });
  });

  it('a replay whose rows come in another order fails loudly on the chunk its marker recorded, and writes nothing', async () => {
    const { queryKey, sink } = newSink({ maxConcurrency: 1 });
    const crash = (i: number) => {
      if (i === 0) throw Object.assign(new Error('mid-sink'), { name: 'InjectedCrash' });
    };
    await expect(sink.addBatchChunks(6, stream(sourceChunks(), sink), { ...keyless, onPieceWritten: crash })).rejects.toThrow(/mid-sink/);
    const replay = new DynamoDbSink({ client: dynamodb, tableName: table, queryKey, maxConcurrency: 1 });
    const reordered = sourceChunks().map((c) => [...c].reverse());
    const err = await replay.addBatchChunks(6, stream(reordered, replay), keyless).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err).toMatchObject({ retriable: false, details: { queryKey, batchId: 6, chunk: 0 } });
    expect(replay.stats()).toMatchObject({ transactions: 0 });
    expect(await replay.readAll()).toHaveLength(99);
  });

  it('collects output with key columns and writes it as addBatch does (sorted, one row per key)', async () => {
    const { sink } = newSink();
    const rows = manyRows(150);
    await sink.addBatchChunks(0, stream([rows.slice(0, 100), rows.slice(100)], sink), ctx());
    const { sink: whole } = newSink();
    await whole.addBatch(0, rows, ctx());
    expect(await sink.readAll()).toEqual(await whole.readAll());
    expect(sink.stats()).toMatchObject({ transactions: 2, markerReads: 1 });
  });
});
