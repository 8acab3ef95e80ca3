/**
 * The Kinesis source's limits on kinesis-mock, without wall-clock timing: the source gets a clock
 * that only its injected sleep moves, so every pause it takes is exactly what its pacing asks.
 * - maxBytesPerTrigger: no batch holds more record bytes than the limit (one record at least),
 *   and every record is read once;
 * - GetRecords per shard: at least 200 ms apart (5 calls/s), and after a page of B bytes at least
 *   B / 2 MiB seconds apart (2 MB/s);
 * - GetRecords asks for at most 10,000 records per call, the service's limit.
 */
import { GetRecordsCommand, PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { KinesisSource, type KinesisSender, type KinesisSourceOptions } from '../../lib/aws/kinesis/source';
import type { BatchLimits, Json, Row } from '../../lib/engine/ports';
import { parseSchema } from '../../lib/engine/schema';
import { ensureStream } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const SCHEMA = parseSchema('id INT, key STRING, pad STRING');

async function newStream(shards: number): Promise<string> {
  const name = uniqueName('kinlim');
  await ensureStream(testClients().kinesis, name, shards);
  return name;
}

/** `n` records from id `from`, each exactly `bytes` long (padded JSON), spread over partition keys. */
function records(from: number, n: number, bytes: number) {
  return Array.from({ length: n }, (_, i) => {
    const base = JSON.stringify({ id: from + i, key: `k${(from + i) % 4}`, pad: '' });
    const data = JSON.stringify({ id: from + i, key: `k${(from + i) % 4}`, pad: 'x'.repeat(bytes - base.length) });
    expect(Buffer.byteLength(data)).toBe(bytes);
    return { Data: Buffer.from(data), PartitionKey: `k${(from + i) % 4}` };
  });
}

async function put(stream: string, recs: ReturnType<typeof records>) {
  // PutRecords takes up to 5 MB and 500 records a call.
  for (let i = 0; i < recs.length; ) {
    let size = 0;
    let j = i;
    while (j < recs.length && j - i < 500 && size + recs[j].Data.byteLength < 4_500_000) size += recs[j++].Data.byteLength;
    const out = await testClients().kinesis.send(new PutRecordsCommand({ StreamName: stream, Records: recs.slice(i, j) }));
    expect(out.FailedRecordCount ?? 0).toBe(0);
    i = j;
  }
}

/** A clock that stands still but for the source's sleeps, and the GetRecords it sent (time, Limit, bytes; the pacing tests use one shard). */
function fakeTime() {
  const time = { now: Date.now() + 1000 };
  const calls: Array<{ atMs: number; limit: number; bytes: number }> = [];
  const inner = testClients().kinesis;
  const client: KinesisSender = {
    send: (async (cmd: { input: Record<string, unknown> }) => {
      const out = await inner.send(cmd as never);
      if (cmd instanceof GetRecordsCommand) {
        const bytes = ((out as { Records?: Array<{ Data?: Uint8Array }> }).Records ?? []).reduce((a, r) => a + (r.Data?.byteLength ?? 0), 0);
        calls.push({ atMs: time.now, limit: cmd.input.Limit as number, bytes });
      }
      return out;
    }) as unknown as KinesisSender['send'],
  };
  const sleep = async (ms: number) => void (time.now += ms);
  return { clock: { now: () => time.now }, sleep, client, calls, time };
}

function source(stream: string, extra: Partial<KinesisSourceOptions>): KinesisSource {
  return new KinesisSource({ client: testClients().kinesis, streamName: stream, schema: SCHEMA, ...extra });
}

/** One availableNow run as the executor drives a source: target once, then plan and read until done. */
async function runOnce(src: KinesisSource, limits: BatchLimits = {}) {
  const target = await src.latestOffset(null);
  const batches: Array<{ rows: Row[]; bytes: number }> = [];
  let start: Json | null = null;
  for (let id = 0; ; id++) {
    const end = await src.planBatch(id, start, target!, limits);
    if (end === null) break;
    const r = await src.read(id, start, end);
    batches.push({ rows: r.rows, bytes: r.bytes });
    start = end;
  }
  return batches;
}

const sortedIds = (rows: Row[]) => rows.map((r) => r.id as number).sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('when a batch is limited by maxBytesPerTrigger', () => {
  it('no batch holds more record bytes than the limit, and every record is read once', async () => {
    const stream = await newStream(2);
    await put(stream, records(0, 40, 250));
    const t = fakeTime();
    const batches = await runOnce(source(stream, { clock: t.clock, sleep: t.sleep }), { maxBytesPerTrigger: 1100 });
    // 250-byte records: 4 fit in 1,100 bytes, a fifth would not.
    for (const b of batches) expect(b.rows.length * 250).toBeLessThanOrEqual(1100);
    expect(batches.length).toBe(10);
    expect(sortedIds(batches.flatMap((b) => b.rows))).toEqual(range(40));
  });

  it('a record larger than the limit is a batch of its own, never skipped', async () => {
    const stream = await newStream(1);
    await put(stream, records(0, 3, 2000));
    const t = fakeTime();
    const batches = await runOnce(source(stream, { clock: t.clock, sleep: t.sleep }), { maxBytesPerTrigger: 1000 });
    expect(batches.map((b) => b.rows.length)).toEqual([1, 1, 1]);
    expect(sortedIds(batches.flatMap((b) => b.rows))).toEqual(range(3));
  });
});

describe('when GetRecords is paced per shard', () => {
  it("calls on one shard are at least 200 ms apart (5 per second) by the source's clock", async () => {
    const stream = await newStream(1);
    await put(stream, records(0, 6, 100));
    const t = fakeTime();
    const batches = await runOnce(source(stream, { clock: t.clock, sleep: t.sleep, client: t.client, maxRecordsPerCall: 1 }), {});
    expect(sortedIds(batches.flatMap((b) => b.rows))).toEqual(range(6));
    expect(t.calls.length).toBeGreaterThanOrEqual(6);
    // 100-byte pages: the 200 ms floor is the binding one (100 B at 2 MiB/s is 0.05 ms).
    const gaps = t.calls.slice(1).map((c, i) => c.atMs - t.calls[i].atMs);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(200);
    expect(Math.min(...gaps)).toBe(200); // and no slower than it needs to be
  });

  it('after a page of B bytes the next call waits B / 2 MiB seconds (2 MB/s), when that exceeds 200 ms', async () => {
    const stream = await newStream(1);
    const SIZE = 700_000; // 700 KB at 2 MiB/s: 333.8 ms
    await put(stream, records(0, 4, SIZE));
    const t = fakeTime();
    const batches = await runOnce(source(stream, { clock: t.clock, sleep: t.sleep, client: t.client, maxRecordsPerCall: 1 }), {});
    expect(sortedIds(batches.flatMap((b) => b.rows))).toEqual(range(4));
    const withData = t.calls
      .map((c, i) => ({ ...c, gapAfter: t.calls[i + 1] ? t.calls[i + 1].atMs - c.atMs : undefined }))
      .filter((c) => c.bytes > 0 && c.gapAfter !== undefined);
    expect(withData.length).toBeGreaterThanOrEqual(3);
    for (const c of withData) {
      expect(c.bytes).toBe(SIZE);
      expect(c.gapAfter).toBeCloseTo((SIZE * 1000) / (2 * 1024 * 1024), 3); // the clock is epoch ms in a double: 0.1 µs of rounding
    }
  });
});

describe('when GetRecords is sent', () => {
  it('asks for at most 10,000 records a call, however large the batch may be', async () => {
    const stream = await newStream(1);
    await put(stream, records(0, 5, 100));
    const t = fakeTime();
    await runOnce(source(stream, { clock: t.clock, sleep: t.sleep, client: t.client }), { maxRecordsPerTrigger: 50_000 });
    expect(t.calls.length).toBeGreaterThan(0);
    expect(t.calls.map((c) => c.limit)).toEqual(t.calls.map(() => 10_000));
  });

  it('with maxRecordsPerCall lower, asks for that many, and a batch of more records takes several calls', async () => {
    const stream = await newStream(1);
    await put(stream, records(0, 7, 100));
    const t = fakeTime();
    const batches = await runOnce(source(stream, { clock: t.clock, sleep: t.sleep, client: t.client, maxRecordsPerCall: 3 }), {});
    expect(batches.map((b) => b.rows.length)).toEqual([7]);
    expect(t.calls.map((c) => c.limit)).toEqual(t.calls.map(() => 3));
    expect(t.calls.filter((c) => c.bytes > 0).map((c) => c.bytes / 100)).toEqual([3, 3, 1]);
  });
});
