/**
 * The Kinesis source on kinesis-mock (the embedded local stack): shards, resharding, replay,
 * rate limits, throttling, expired iterators and data-loss detection.
 *
 * kinesis-mock never throttles, never expires iterators and never trims records, so those
 * scenarios wrap the SDK client and make the mock answer as AWS does (the same error classes
 * the SDK raises on AWS).
 */
import { createHash } from 'node:crypto';
import {
  DescribeStreamSummaryCommand,
  ExpiredIteratorException,
  GetShardIteratorCommand,
  InvalidArgumentException,
  LimitExceededException,
  ListShardsCommand,
  MergeShardsCommand,
  ProvisionedThroughputExceededException,
  GetRecordsCommand,
  PutRecordCommand,
  PutRecordsCommand,
  SplitShardCommand,
  type GetShardIteratorCommandInput,
} from '@aws-sdk/client-kinesis';
import { KinesisSource, kinesisOptionsFromSpec, type KinesisSender, type KinesisSourceOptions, type KinesisOffset } from '../../lib/aws/kinesis/source';
import { crashingAt } from '../../lib/engine/testing/crash';
import { DataLossError, InjectedCrash, SluiceError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import type { BatchLimits, DeadLetter, Json, Row } from '../../lib/engine/ports';
import { readStream } from '../../lib/engine/query/reader';
import { parseSchema } from '../../lib/engine/schema';
import { putJsonRecords } from '../../lib/conformance/kinesis';
import { INVALID_UTF8_REASON } from '../../lib/engine/lines';
import { ensureStream } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const SCHEMA_DDL = 'id INT, key STRING';
const SCHEMA = parseSchema(SCHEMA_DDL);

// ------------------------------------------------------------------------------- factories

interface Ev {
  id: number;
  key: string;
}

/** Events `from` .. `from + n - 1`, spread over six keys. */
function events(from: number, n: number): Ev[] {
  return Array.from({ length: n }, (_, i) => ({ id: from + i, key: `k${(from + i) % 6}` }));
}

async function newStream(shards: number): Promise<string> {
  const name = uniqueName('kin');
  await ensureStream(testClients().kinesis, name, shards);
  return name;
}

/** Puts events with partition key = key, so that each key's events share a shard, in order. */
async function put(stream: string, evs: Ev[]): Promise<void> {
  await putJsonRecords(
    testClients().kinesis,
    stream,
    evs.map((e) => ({ data: e, partitionKey: e.key })),
  );
}

/** Puts events onto the open shards given by index (ExplicitHashKey = the shard's first hash key). */
async function putToShards(stream: string, perShard: Ev[][]): Promise<void> {
  const open = await openShards(stream);
  const Records = perShard.flatMap((evs, i) =>
    evs.map((e) => ({ Data: Buffer.from(JSON.stringify(e)), PartitionKey: e.key, ExplicitHashKey: open[i].StartingHashKey })),
  );
  await testClients().kinesis.send(new PutRecordsCommand({ StreamName: stream, Records }));
}

async function openShards(stream: string) {
  const out = await testClients().kinesis.send(new ListShardsCommand({ StreamName: stream }));
  return (out.Shards ?? [])
    .filter((s) => s.SequenceNumberRange?.EndingSequenceNumber === undefined)
    .map((s) => ({ ShardId: s.ShardId!, StartingHashKey: s.HashKeyRange!.StartingHashKey!, EndingHashKey: s.HashKeyRange!.EndingHashKey! }));
}

async function waitActive(stream: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const d = await testClients().kinesis.send(new DescribeStreamSummaryCommand({ StreamName: stream }));
    if (d.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`stream ${stream} did not become ACTIVE`);
}

const noSleep = async () => undefined;

/** A one-shard stream whose records only read kinesis-mock's clock (made on first use). */
let probeStream: Promise<string> | undefined;

/**
 * kinesis-mock's clock: the ApproximateArrivalTimestamp (epoch ms) it stamps on a record put now,
 * to a probe stream of its own. The tests that put records before and after a run's target read
 * the target from this clock, not from this process's: under a loaded CI run the mock stamped
 * records 12 s behind Date.now() (AWS's clock and a Lambda's agree closely; the source allows
 * for skew only in its data-loss check).
 */
async function mockNow(): Promise<number> {
  const kinesis = testClients().kinesis;
  probeStream ??= newStream(1);
  const stream = await probeStream;
  const put = await kinesis.send(new PutRecordCommand({ StreamName: stream, Data: Buffer.from('{}'), PartitionKey: 'p' }));
  const it = await kinesis.send(
    new GetShardIteratorCommand({
      StreamName: stream,
      ShardId: put.ShardId,
      ShardIteratorType: 'AT_SEQUENCE_NUMBER',
      StartingSequenceNumber: put.SequenceNumber,
    }),
  );
  const out = await kinesis.send(new GetRecordsCommand({ ShardIterator: it.ShardIterator, Limit: 1 }));
  const at = out.Records?.[0]?.ApproximateArrivalTimestamp;
  if (at === undefined) throw new Error(`the probe record ${put.SequenceNumber} on ${stream} was not read back`);
  return at.getTime();
}

/**
 * Waits until kinesis-mock's clock has passed `t`: a record put after this returns arrives after
 * `t`. Returns the probe's arrival time (> t).
 */
async function mockClockPast(t: number): Promise<number> {
  for (let i = 0; i < 600; i++) {
    const now = await mockNow();
    if (now > t) return now;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`kinesis-mock's clock did not pass ${t} in 600 probes`);
}

/** A source clock fixed at `t` (a run's target is what arrived by clock.now()). */
const fixedClock = (t: number) => ({ now: () => t });

function source(stream: string, extra: Partial<KinesisSourceOptions> = {}): KinesisSource {
  return new KinesisSource({ client: testClients().kinesis, streamName: stream, schema: SCHEMA, minGetRecordsIntervalMs: 0, sleep: noSleep, ...extra });
}

/** A client that lets `hook` see (and replace) every command before kinesis-mock does. */
function wrap(hook: (name: string, input: Record<string, unknown>, send: () => Promise<unknown>) => Promise<unknown>): KinesisSender {
  const inner = testClients().kinesis;
  return {
    send: ((cmd: { constructor: { name: string }; input: Record<string, unknown> }) =>
      hook(cmd.constructor.name.replace(/Command$/, ''), cmd.input, () => inner.send(cmd as never))) as unknown as KinesisSender['send'],
  };
}

interface RunResult {
  batches: Array<{ batchId: number; start: Json | null; end: Json; rows: Row[]; deadLetters: DeadLetter[] }>;
  end: Json | null;
  rows: Row[];
  nextBatchId: number;
}

/** One availableNow run as the executor drives a source: target once, then plan and read until done. */
async function runOnce(src: KinesisSource, start: Json | null, limits: BatchLimits = {}, firstBatchId = 0): Promise<RunResult> {
  const target = await src.latestOffset(start);
  const batches: RunResult['batches'] = [];
  let s = start;
  let id = firstBatchId;
  for (;;) {
    const end = await src.planBatch(id, s, target!, limits);
    if (end === null) break;
    const r = await src.read(id, s, end);
    batches.push({ batchId: id, start: s, end, rows: r.rows, deadLetters: r.deadLetters });
    s = end;
    id++;
  }
  return { batches, end: s, rows: batches.flatMap((b) => b.rows), nextBatchId: id };
}

/** A run that stops after its first batch (as one cut short by the Lambda deadline). */
async function oneBatch(src: KinesisSource, start: Json | null, limits: BatchLimits, batchId = 0): Promise<RunResult> {
  const target = await src.latestOffset(start);
  const end = await src.planBatch(batchId, start, target!, limits);
  if (end === null) throw new Error('expected a batch');
  const r = await src.read(batchId, start, end);
  return { batches: [{ batchId, start, end, rows: r.rows, deadLetters: r.deadLetters }], end, rows: r.rows, nextBatchId: batchId + 1 };
}

const ids = (rows: Row[]) => rows.map((r) => r.id as number);
const sortedIds = (rows: Row[]) => ids(rows).sort((a, b) => a - b);
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

/** Within each key, events come in the order they were put. */
function expectPerKeyOrder(rows: Row[]): void {
  const last = new Map<string, number>();
  for (const r of rows) {
    const prev = last.get(r.key as string);
    if (prev !== undefined) expect(r.id as number).toBeGreaterThan(prev);
    last.set(r.key as string, r.id as number);
  }
}

function statelessPlan(limits: { maxRecordsPerTrigger?: number } = {}) {
  let reader = readStream.format('json').schema(SCHEMA_DDL);
  if (limits.maxRecordsPerTrigger) reader = reader.option('maxRecordsPerTrigger', limits.maxRecordsPerTrigger);
  return reader.kinesis().writeStream.outputMode('append').trigger({ availableNow: true }).queryName('kinesis-it').plan();
}

// ---------------------------------------------------------------------------------- tests

describe('when a stream has several shards', () => {
  it('a run reads every record once, each key in put order, and the next run reads only what arrived since', async () => {
    const stream = await newStream(3);
    await put(stream, events(0, 60));
    const src = source(stream);
    const run1 = await runOnce(src, null);
    expect(sortedIds(run1.rows)).toEqual(range(0, 60));
    expectPerKeyOrder(run1.rows);
    const end = run1.end as unknown as KinesisOffset;
    expect(end.stream).toBe(stream);
    expect(Object.keys(end.shards).length).toBeGreaterThan(1);

    await put(stream, events(60, 10));
    const run2 = await runOnce(source(stream), run1.end, {}, run1.nextBatchId);
    expect(sortedIds(run2.rows)).toEqual(range(60, 10));
    const run3 = await runOnce(source(stream), run2.end, {}, run2.nextBatchId);
    expect(run3.batches).toEqual([]);
  });

  it('malformed records become dead letters with their shard and sequence number, and the arrival time fills its column', async () => {
    const stream = await newStream(2);
    const before = await mockNow();
    await testClients().kinesis.send(
      new PutRecordsCommand({
        StreamName: stream,
        Records: [
          { Data: Buffer.from('{"id": 1, "key": "a"}'), PartitionKey: 'a' },
          { Data: Buffer.from('not json'), PartitionKey: 'a' },
          { Data: Buffer.from('{"id": "two", "key": "a"}'), PartitionKey: 'a' },
        ],
      }),
    );
    const after = await mockNow();
    const src = new KinesisSource({
      client: testClients().kinesis,
      streamName: stream,
      schema: parseSchema('id INT, key STRING, arrived TIMESTAMP'),
      arrivalTimeColumn: 'arrived',
      minGetRecordsIntervalMs: 0,
      clock: fixedClock(after),
    });
    const run = await runOnce(src, null);
    expect(run.rows).toHaveLength(1);
    expect(run.rows[0]).toMatchObject({ id: 1, key: 'a' });
    // a TIMESTAMP column: epoch µs (the arrival time's ms × 1000)
    expect(run.rows[0].arrived).toBeGreaterThanOrEqual(before * 1000);
    expect(run.rows[0].arrived).toBeLessThanOrEqual(after * 1000);
    expect((run.rows[0].arrived as number) % 1000).toBe(0);
    const dead = run.batches.flatMap((b) => b.deadLetters);
    expect(dead.map((d) => d.raw)).toEqual(['not json', '{"id": "two", "key": "a"}']);
    for (const d of dead) {
      expect(d.source.shardId).toMatch(/^shardId-/);
      expect(d.source.sequenceNumber).toMatch(/^\d+$/);
    }
    expect(dead[0].reason).toMatch(/malformed JSON/);
    expect(dead[1].reason).toMatch(/column id \(INT\)/);
  });
});

describe('when records are not plain UTF-8 JSON', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const agg = require('aws-kinesis-agg') as {
    aggregate(
      records: Array<{ partitionKey: string; data: Buffer }>,
      onEncoded: (r: { partitionKey: string; data: Buffer }, done: (err?: Error) => void) => void,
      afterAll: () => void,
      onError: (e: Error) => void,
    ): void;
  };

  /** The KPL's encoding of `users` (awslabs' aws-kinesis-agg), as one aggregated record. */
  function aggregated(users: Array<string | Buffer>): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const out: Buffer[] = [];
      agg.aggregate(
        users.map((u, i) => ({ partitionKey: `pk${i}`, data: typeof u === 'string' ? Buffer.from(u) : u })),
        (encoded, done) => {
          out.push(Buffer.from(encoded.data));
          done();
        },
        () => (out.length === 1 ? resolve(out[0]) : reject(new Error(`expected one aggregated record, got ${out.length}`))),
        reject,
      );
    });
  }

  /** The KPL's magic prefix and a matching digest around a protobuf that does not read (a field longer than the record). */
  function damagedAggregate(): Buffer {
    const body = Buffer.from([0x1a, 0x05, 0x01]);
    return Buffer.concat([Buffer.from([0xf3, 0x89, 0x9a, 0xc2]), body, createHash('md5').update(body).digest()]);
  }

  const json = (id: number) => JSON.stringify({ id, key: 'a' });
  const notUtf8 = Buffer.concat([Buffer.from('{"id": 9, "key": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]);

  async function putInOrder(stream: string, data: Buffer[]): Promise<string[]> {
    const out = await testClients().kinesis.send(new PutRecordsCommand({ StreamName: stream, Records: data.map((Data) => ({ Data, PartitionKey: 'a' })) }));
    return out.Records!.map((r) => r.SequenceNumber!);
  }

  it('a record that is not UTF-8 is a dead letter with its shard and sequence number; the others are rows', async () => {
    const stream = await newStream(1);
    const seqs = await putInOrder(stream, [Buffer.from(json(1)), notUtf8, Buffer.from(json(3))]);
    const run = await runOnce(source(stream), null);
    expect(ids(run.rows)).toEqual([1, 3]);
    const dead = run.batches.flatMap((b) => b.deadLetters);
    expect(dead).toEqual([
      { source: { shardId: expect.stringMatching(/^shardId-/), sequenceNumber: seqs[1] }, raw: notUtf8.toString('utf8'), reason: INVALID_UTF8_REASON },
    ]);
  });

  it('a KPL-aggregated record becomes its user records, each parsed as a JSON line; a bad one is a dead letter with its sub-sequence number', async () => {
    const stream = await newStream(1);
    const first = await aggregated([json(1), json(2), '{"id": "three", "key": "a"}', json(4)]);
    const second = await aggregated([json(5), notUtf8]);
    const seqs = await putInOrder(stream, [first, Buffer.from(json(10)), second, damagedAggregate(), Buffer.from(json(11))]);

    const run = await runOnce(source(stream), null);
    expect(ids(run.rows)).toEqual([1, 2, 4, 10, 5, 11]);
    const dead = run.batches.flatMap((b) => b.deadLetters);
    const shardId = expect.stringMatching(/^shardId-/);
    expect(dead.map((d) => d.source)).toEqual([
      { shardId, sequenceNumber: seqs[0], subSequenceNumber: 2 },
      { shardId, sequenceNumber: seqs[2], subSequenceNumber: 1 },
      { shardId, sequenceNumber: seqs[3] },
    ]);
    expect(dead[0].reason).toMatch(/column id \(INT\)/);
    expect(dead[1].reason).toBe(INVALID_UTF8_REASON);
    expect(dead[2].reason).toMatch(/^KPL-aggregated record cannot be read \(a field of 5 bytes runs past the end of the record\)/);
  });

  it('maxRecordsPerTrigger counts Kinesis records, an aggregated record is read whole in one batch, and a replay gives the same user records', async () => {
    const stream = await newStream(1);
    await putInOrder(stream, [await aggregated([json(1), json(2), json(3)]), await aggregated([json(4), json(5)]), Buffer.from(json(6))]);
    const run = await runOnce(source(stream), null, { maxRecordsPerTrigger: 1 });
    expect(run.batches.map((b) => ids(b.rows))).toEqual([[1, 2, 3], [4, 5], [6]]);
    // A new instance (after a crash) reads batch 1 again from Kinesis, from its logged offsets.
    const replay = await source(stream).read(1, run.batches[1].start, run.batches[1].end);
    expect(ids(replay.rows)).toEqual([4, 5]);
  });
});

describe('when maxRecordsPerTrigger limits the batches', () => {
  it('each batch takes its share from every shard and the run stops at the target', async () => {
    const stream = await newStream(3);
    await putToShards(stream, [events(0, 10), events(100, 10), events(200, 10)]);
    const t = await mockNow();
    const src = source(stream, { maxRecordsPerCall: 4, clock: fixedClock(t) });
    const target = await src.latestOffset(null);
    // Arrives during the run: after the target, so left for the next run.
    await mockClockPast(t);
    await putToShards(stream, [events(300, 5), [], []]);

    const perBatch: number[][] = [];
    let start: Json | null = null;
    for (let id = 0; ; id++) {
      const end = await src.planBatch(id, start, target!, { maxRecordsPerTrigger: 6 });
      if (end === null) break;
      const rows = (await src.read(id, start, end)).rows;
      expect(rows.length).toBeLessThanOrEqual(6);
      perBatch.push(ids(rows));
      start = end;
    }
    expect(perBatch).toHaveLength(5);
    for (const b of perBatch) {
      // Two from each shard: ids 0-9, 100-109 and 200-209 live on shards 0, 1 and 2.
      expect([b.filter((i) => i < 100).length, b.filter((i) => i >= 100 && i < 200).length, b.filter((i) => i >= 200).length]).toEqual([2, 2, 2]);
    }
    expect(perBatch.flat().sort((a, b) => a - b)).toEqual([...range(0, 10), ...range(100, 10), ...range(200, 10)]);

    const next = await runOnce(source(stream, { clock: fixedClock(await mockNow()) }), start, {}, 5);
    expect(sortedIds(next.rows)).toEqual(range(300, 5));
  });

  it('the backlog after each batch is the records fetched and not yet taken, and how far behind the tip the reads are', async () => {
    const stream = await newStream(1);
    await put(stream, events(0, 10));
    const src = source(stream, { maxRecordsPerCall: 10 });
    const target = await src.latestOffset(null);
    const left: number[] = [];
    let start: Json | null = null;
    for (let id = 0; ; id++) {
      const end = await src.planBatch(id, start, target!, { maxRecordsPerTrigger: 4 });
      if (end === null) break;
      const backlog = await src.backlog(end, target);
      left.push(backlog.records!);
      expect(Number.isFinite(backlog.millisBehindLatest) && backlog.millisBehindLatest! >= 0).toBe(true);
      start = end;
    }
    // One page of ten, taken four at a time: 6, 2, then none.
    expect(left).toEqual([6, 2, 0]);
  });

  it('GetRecords on one shard is paced to 5 calls per second', async () => {
    const stream = await newStream(1);
    await put(stream, events(0, 8));
    const waits: number[] = [];
    // A clock only the fake sleep moves: the waits are the pacing's, not the machine's speed.
    const time = { now: Date.now() + 1000 };
    const sleep = async (ms: number) => {
      waits.push(ms);
      time.now += ms;
    };
    const src = source(stream, { minGetRecordsIntervalMs: undefined, maxRecordsPerCall: 2, clock: { now: () => time.now }, sleep });
    const run = await runOnce(src, null, { maxRecordsPerTrigger: 2 });
    expect(sortedIds(run.rows)).toEqual(range(0, 8));
    expect(src.stats().getRecords).toBeGreaterThanOrEqual(4);
    // Every GetRecords after the first waited out its whole 200 ms slot (nothing else moves the clock).
    expect(waits).toEqual(Array.from({ length: src.stats().getRecords - 1 }, () => 200));
  });
});

describe('when records arrive while a run is reading', () => {
  it('the run stops at what had arrived when it started, and the next run reads the rest', async () => {
    const stream = await newStream(2);
    await put(stream, events(0, 20));
    const t = await mockNow();
    let injected = false;
    const client = wrap(async (name, _input, send) => {
      if (name === 'GetRecords' && !injected) {
        injected = true;
        await mockClockPast(t);
        await put(stream, events(20, 10));
      }
      return send();
    });
    const ports = { checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
    const plan = statelessPlan();
    const run = (src: KinesisSource) => new MicroBatchExecutor({ plan, source: src, ...ports }).run();
    const first = await run(source(stream, { client, clock: fixedClock(t) }));
    expect(injected).toBe(true);
    expect(first.rowsIn).toBe(20);
    const second = await run(source(stream, { clock: fixedClock(await mockNow()) }));
    expect(second.rowsIn).toBe(10);
    const all = [...ports.sink.batches.values()].flat();
    expect(all.map((r) => r.id as number).sort((a, b) => a - b)).toEqual(range(0, 30));
  });
});

describe('when the stream is split and merged between runs', () => {
  it('children are read after their parents, closed shards are finished, and no record is lost or read twice', async () => {
    const stream = await newStream(2);
    const kinesis = testClients().kinesis;
    const limits = { maxRecordsPerTrigger: 8 };
    await put(stream, events(0, 30));
    const run1 = await runOnce(source(stream), null, limits);

    // Split shard 0 while it is fully read; new records go to its children.
    const [s0] = await openShards(stream);
    const mid = (BigInt(s0.StartingHashKey) + BigInt(s0.EndingHashKey)) / 2n;
    await kinesis.send(new SplitShardCommand({ StreamName: stream, ShardToSplit: s0.ShardId, NewStartingHashKey: mid.toString() }));
    await waitActive(stream);
    await put(stream, events(30, 30));
    const run2 = await runOnce(source(stream), run1.end, limits, run1.nextBatchId);
    const end2 = run2.end as unknown as KinesisOffset;
    expect(end2.shards[s0.ShardId]).toMatchObject({ done: true });

    // Merge the two children back.
    const children = (await openShards(stream)).filter((s) => s.ShardId !== 'shardId-000000000001');
    expect(children).toHaveLength(2);
    await kinesis.send(new MergeShardsCommand({ StreamName: stream, ShardToMerge: children[0].ShardId, AdjacentShardToMerge: children[1].ShardId }));
    await waitActive(stream);
    await put(stream, events(60, 30));
    const run3 = await runOnce(source(stream), run2.end, limits, run2.nextBatchId);

    // Split shard 1 while it still holds unread records: they are read before its children's.
    await put(stream, events(90, 12));
    await kinesis.send(
      new SplitShardCommand({ StreamName: stream, ShardToSplit: 'shardId-000000000001', NewStartingHashKey: ((2n ** 128n / 4n) * 3n).toString() }),
    );
    await waitActive(stream);
    await put(stream, events(102, 18));
    const run4 = await runOnce(source(stream), run3.end, { maxRecordsPerTrigger: 5 }, run3.nextBatchId);
    const end4 = run4.end as unknown as KinesisOffset;
    for (const closed of ['shardId-000000000000', 'shardId-000000000001', 'shardId-000000000002', 'shardId-000000000003']) {
      expect(end4.shards[closed]).toMatchObject({ done: true });
    }

    const all = [...run1.rows, ...run2.rows, ...run3.rows, ...run4.rows];
    expect(sortedIds(all)).toEqual(range(0, 120));
    expectPerKeyOrder(all);
    // A replay of every batch by a new instance gives the same rows.
    const replayer = source(stream);
    for (const b of [...run1.batches, ...run2.batches, ...run3.batches, ...run4.batches]) {
      expect(ids((await replayer.read(b.batchId, b.start, b.end)).rows)).toEqual(ids(b.rows));
    }
  });
});

describe('when a run crashes after a batch was planned', () => {
  it('a new source instance reads the logged (start, end] again: the same rows, never past the end', async () => {
    const stream = await newStream(3);
    await put(stream, events(0, 40));
    const first = source(stream);
    const target = await first.latestOffset(null);
    const end0 = await first.planBatch(0, null, target!, { maxRecordsPerTrigger: 7 });
    const rows0 = (await first.read(0, null, end0!)).rows;
    const end1 = await first.planBatch(1, end0, target!, { maxRecordsPerTrigger: 7 });
    const rows1 = (await first.read(1, end0, end1!)).rows;
    expect(rows0).toHaveLength(7);
    expect(rows1).toHaveLength(7);
    await put(stream, events(40, 10));

    const replayer = source(stream, { maxRecordsPerCall: 3 });
    expect((await replayer.read(0, null, end0!)).rows).toEqual(rows0);
    expect((await replayer.read(1, end0, end1!)).rows).toEqual(rows1);
    const chunks = [];
    for await (const c of replayer.readChunks(1, end0, end1!)) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flatMap((c) => c.rows)).toEqual(rows1);
  });

  it.each(['after-offsets', 'mid-read', 'before-commit'] as const)(
    'through the executor, a crash at %s neither loses nor duplicates a record',
    async (point) => {
      const stream = await newStream(3);
      await put(stream, events(0, 30));
      const plan = statelessPlan({ maxRecordsPerTrigger: 7 });
      const ports = { checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink(), deadLetters: new InMemoryDeadLetters() };
      const crashed = new MicroBatchExecutor(crashingAt({ point, batchId: 2 }, { plan, source: source(stream), ...ports }));
      await expect(crashed.run()).rejects.toBeInstanceOf(InjectedCrash);
      await put(stream, events(30, 5));
      const report = await new MicroBatchExecutor({ plan, source: source(stream), ...ports }).run();
      expect(report.batches[0]).toMatchObject({ batchId: 2, replay: true });
      const all = [...ports.sink.batches.entries()].sort((a, b) => a[0] - b[0]).flatMap(([, rows]) => rows);
      expect(all.map((r) => r.id as number).sort((a, b) => a - b)).toEqual(range(0, 35));
    },
  );
});

describe('when Kinesis throttles', () => {
  it('throttled calls are retried with backoff: nothing is lost and the retries are counted', async () => {
    const stream = await newStream(2);
    await put(stream, events(0, 30));
    let n = 0;
    const client = wrap(async (name, _input, send) => {
      n++;
      if (name === 'ListShards' && n === 1) throw new LimitExceededException({ message: 'Rate exceeded for stream', $metadata: {} });
      if ((name === 'GetRecords' || name === 'GetShardIterator') && n % 2 === 0) {
        throw new ProvisionedThroughputExceededException({ message: 'Rate exceeded for shard', $metadata: {} });
      }
      return send();
    });
    const waits: number[] = [];
    const src = source(stream, { client, maxRecordsPerCall: 4, sleep: async (ms) => void waits.push(ms), baseDelayMs: 100, maxDelayMs: 400 });
    const run = await runOnce(src, null, { maxRecordsPerTrigger: 10 });
    expect(sortedIds(run.rows)).toEqual(range(0, 30));
    const stats = src.stats();
    expect(stats.throttleRetries).toBeGreaterThanOrEqual(5);
    expect(stats.requests).toBe(stats.listShards + stats.getShardIterator + stats.getRecords + stats.describeStreamSummary);
    for (const w of waits) expect(w).toBeLessThanOrEqual(400);
  });

  it('a shard that stays throttled fails the run with a retriable error, not as the end of the data', async () => {
    const stream = await newStream(1);
    await put(stream, events(0, 3));
    const client = wrap(async (name, _input, send) => {
      if (name === 'GetRecords') throw new ProvisionedThroughputExceededException({ message: 'Rate exceeded for shard', $metadata: {} });
      return send();
    });
    const src = source(stream, { client, maxAttempts: 3 });
    const err = await runOnce(src, null).catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.retriable).toBe(true);
    expect(err.message).toMatch(/GetRecords on .*shardId-000000000000 still failed after 3 tries \(ProvisionedThroughputExceededException/);
    expect(src.stats().throttleRetries).toBe(2);
  });
});

describe('when an iterator expires', () => {
  it('it is renewed after the last sequence number read: no record is skipped or read twice', async () => {
    const stream = await newStream(1);
    await put(stream, events(0, 12));
    let getRecords = 0;
    const iteratorTypes: string[] = [];
    const client = wrap(async (name, input, send) => {
      if (name === 'GetShardIterator') iteratorTypes.push(input.ShardIteratorType as string);
      if (name === 'GetRecords' && ++getRecords % 2 === 0) throw new ExpiredIteratorException({ message: 'Iterator expired', $metadata: {} });
      return send();
    });
    const src = source(stream, { client, maxRecordsPerCall: 3 });
    const run = await runOnce(src, null, { maxRecordsPerTrigger: 4 });
    expect(ids(run.rows)).toEqual(range(0, 12));
    expect(src.stats().iteratorRenewals).toBeGreaterThanOrEqual(3);
    expect(iteratorTypes[0]).toBe('TRIM_HORIZON');
    expect(iteratorTypes.slice(1).every((t) => t === 'AFTER_SEQUENCE_NUMBER')).toBe(true);
  });
});

/**
 * kinesis-mock as AWS answers once records older than the retention are trimmed: records below
 * a shard's horizon are gone, TRIM_HORIZON starts at the horizon, and an iterator at a trimmed
 * sequence number is refused with InvalidArgumentException.
 */
function trimmingClient(horizon: { seq: string | null }, hidden: Set<string> = new Set()): KinesisSender {
  const below = (seq: string) => horizon.seq !== null && BigInt(seq) < BigInt(horizon.seq);
  return wrap(async (name, input, send) => {
    if (name === 'ListShards') {
      const out = (await send()) as { Shards?: Array<{ ShardId?: string }> };
      return { ...out, Shards: (out.Shards ?? []).filter((s) => !hidden.has(s.ShardId!)) };
    }
    if (name === 'GetShardIterator' && horizon.seq !== null) {
      const seq = input.StartingSequenceNumber as string | undefined;
      if (seq !== undefined && below(seq)) {
        throw new InvalidArgumentException({
          message: `StartingSequenceNumber ${seq} used in GetShardIterator on shard ${input.ShardId} is no longer available (expired)`,
          $metadata: {},
        });
      }
      if (input.ShardIteratorType === 'TRIM_HORIZON') {
        return testClients().kinesis.send(
          new GetShardIteratorCommand({
            ...(input as unknown as GetShardIteratorCommandInput),
            ShardIteratorType: 'AT_SEQUENCE_NUMBER',
            StartingSequenceNumber: horizon.seq,
          }),
        );
      }
    }
    if (name === 'GetRecords') {
      const out = (await send()) as { Records?: Array<{ SequenceNumber?: string }> };
      return { ...out, Records: (out.Records ?? []).filter((r) => !below(r.SequenceNumber!)) };
    }
    return send();
  });
}

describe('when records expired before the query read them', () => {
  async function streamWithTen() {
    const stream = await newStream(1);
    await put(stream, events(0, 10));
    return { stream, seqs: await sequenceNumbers(stream) };
  }
  /** The shard's sequence numbers, in order, as a plain read sees them. */
  async function sequenceNumbers(stream: string): Promise<string[]> {
    const seen: string[] = [];
    const client = wrap(async (name, _input, send) => {
      const out = await send();
      if (name === 'GetRecords') for (const r of (out as { Records?: Array<{ SequenceNumber?: string }> }).Records ?? []) seen.push(r.SequenceNumber!);
      return out;
    });
    await runOnce(source(stream, { client }), null);
    return seen;
  }

  it('fails with DataLossError naming the shard, the position and the remedy', async () => {
    const { stream, seqs } = await streamWithTen();
    const run1 = await oneBatch(source(stream), null, { maxRecordsPerTrigger: 4 });
    expect(ids(run1.rows)).toEqual(range(0, 4));
    const horizon = { seq: seqs[6] }; // records 4 and 5 expired unread
    const events: Array<Record<string, unknown>> = [];
    const src = source(stream, { client: trimmingClient(horizon), log: (e) => events.push(e) });
    const err = await runOnce(src, run1.end, {}, run1.nextBatchId).catch((e) => e);
    expect(err).toBeInstanceOf(DataLossError);
    expect(err.message).toContain('shardId-000000000000');
    expect(err.message).toContain(`after sequence number ${seqs[3]}`);
    expect(err.message).toContain(`the oldest record left is ${seqs[6]}`);
    expect(err.message).toContain('failOnDataLoss: false');
    expect(src.stats().dataLossEvents).toBe(1);
    expect(events.find((e) => e.event === 'kinesis-data-loss')).toMatchObject({
      shardId: 'shardId-000000000000',
      after: seqs[3],
      resumedAt: seqs[6],
      knownNext: seqs[4],
    });
  });

  it('with failOnDataLoss false, continues from the trim horizon and counts the loss', async () => {
    const { stream, seqs } = await streamWithTen();
    const run1 = await oneBatch(source(stream), null, { maxRecordsPerTrigger: 4 });
    const events: Array<Record<string, unknown>> = [];
    const src = source(stream, { client: trimmingClient({ seq: seqs[6] }), failOnDataLoss: false, log: (e) => events.push(e) });
    const run2 = await runOnce(src, run1.end, {}, run1.nextBatchId);
    expect(ids(run2.rows)).toEqual(range(6, 4));
    expect(src.stats().dataLossEvents).toBe(1);
    expect(events.filter((e) => e.event === 'kinesis-data-loss')).toHaveLength(1);
  });

  it('does not report a loss when only records already read expired', async () => {
    const { stream, seqs } = await streamWithTen();
    const run1 = await oneBatch(source(stream), null, { maxRecordsPerTrigger: 4 });
    const src = source(stream, { client: trimmingClient({ seq: seqs[4] }) });
    const run2 = await runOnce(src, run1.end, {}, run1.nextBatchId);
    expect(ids(run2.rows)).toEqual(range(4, 6));
    expect(src.stats().dataLossEvents).toBe(0);
  });

  it("does not report a loss when a quiet shard's last record expired and nothing newer did", async () => {
    const { stream, seqs } = await streamWithTen();
    const run1 = await runOnce(source(stream), null);
    expect((run1.end as unknown as KinesisOffset).shards['shardId-000000000000'].tipMs).toBeGreaterThan(0);
    await put(stream, events(10, 3));
    const newer = await sequenceNumbers(stream);
    expect(newer.slice(0, 10)).toEqual(seqs);
    const src = source(stream, { client: trimmingClient({ seq: newer[10] }) });
    const run2 = await runOnce(src, run1.end, {}, run1.nextBatchId);
    expect(ids(run2.rows)).toEqual(range(10, 3));
    expect(src.stats().dataLossEvents).toBe(0);
  });

  it('a shard that expired before it was read to its end is a loss; one that was finished is forgotten', async () => {
    const stream = await newStream(1);
    await put(stream, events(0, 6));
    const run1 = await oneBatch(source(stream), null, { maxRecordsPerTrigger: 3 });
    const [s0] = await openShards(stream);
    await testClients().kinesis.send(
      new SplitShardCommand({
        StreamName: stream,
        ShardToSplit: s0.ShardId,
        NewStartingHashKey: ((BigInt(s0.StartingHashKey) + BigInt(s0.EndingHashKey)) / 2n).toString(),
      }),
    );
    await waitActive(stream);
    await put(stream, events(6, 4));

    // The parent expires (ListShards drops it) with 3 of its records unread.
    const gone = new Set([s0.ShardId]);
    const err = await runOnce(source(stream, { client: trimmingClient({ seq: null }, gone) }), run1.end, {}, run1.nextBatchId).catch((e) => e);
    expect(err).toBeInstanceOf(DataLossError);
    expect(err.message).toContain(`shard ${s0.ShardId} is in the checkpoint`);
    const tolerant = source(stream, { client: trimmingClient({ seq: null }, gone), failOnDataLoss: false });
    const skipped = await runOnce(tolerant, run1.end, {}, run1.nextBatchId);
    expect(sortedIds(skipped.rows)).toEqual(range(6, 4));
    expect((skipped.end as unknown as KinesisOffset).shards[s0.ShardId]).toBeUndefined();
    expect(tolerant.stats().dataLossEvents).toBe(1);

    // Read normally, the parent is finished and kept while listed; once it expires it is dropped silently.
    const run2 = await runOnce(source(stream), run1.end, {}, run1.nextBatchId);
    expect(sortedIds(run2.rows)).toEqual(range(3, 7));
    expect((run2.end as unknown as KinesisOffset).shards[s0.ShardId]).toMatchObject({ done: true });
    await put(stream, events(10, 2));
    const later = source(stream, { client: trimmingClient({ seq: null }, gone) });
    const run3 = await runOnce(later, run2.end, {}, run2.nextBatchId);
    expect(sortedIds(run3.rows)).toEqual(range(10, 2));
    expect((run3.end as unknown as KinesisOffset).shards[s0.ShardId]).toBeUndefined();
    expect(later.stats().dataLossEvents).toBe(0);
  });
});

describe('when the query starts without a checkpointed position', () => {
  it('LATEST skips what was there, and the position it fixed holds for the next run even without a batch', async () => {
    const stream = await newStream(2);
    await put(stream, events(0, 10));
    // LATEST starts AT_TIMESTAMP its clock's now: one the records above arrived before
    const t = await mockClockPast(await mockNow());
    const checkpoint = new InMemoryCheckpoint();
    const first = await runOnce(source(stream, { startingPosition: 'LATEST', checkpoint, clock: fixedClock(t) }), null);
    expect(first.batches).toEqual([]);
    await put(stream, events(10, 5));
    const second = await runOnce(source(stream, { startingPosition: 'LATEST', checkpoint, clock: fixedClock(await mockNow()) }), null);
    expect(sortedIds(second.rows)).toEqual(range(10, 5));
    expect((second.end as unknown as KinesisOffset).fromMs).toBeGreaterThan(0);
    // The batch replays with the same rows from its offsets alone.
    const b = second.batches[0];
    expect(ids((await source(stream).read(b.batchId, b.start, b.end)).rows)).toEqual(ids(b.rows));
  });

  it('AT_TIMESTAMP starts at the first record that arrived at or after the timestamp', async () => {
    const stream = await newStream(2);
    await put(stream, events(0, 10));
    const atTimestamp = await mockClockPast(await mockNow());
    await put(stream, events(10, 5));
    const run = await runOnce(source(stream, { startingPosition: { atTimestamp }, clock: fixedClock(await mockNow()) }), null);
    expect(sortedIds(run.rows)).toEqual(range(10, 5));
  });

  it('LATEST without a checkpoint is refused before any request', () => {
    expect(() => source('s', { startingPosition: 'LATEST' })).toThrow(/LATEST needs `checkpoint`/);
  });
});

describe('when the options are wrong', () => {
  const make = (extra: Partial<KinesisSourceOptions>) => () => source('orders', extra);
  it('each mistake is refused at construction with the value, the rule and the remedy', () => {
    expect(make({ streamName: 'arn:aws:kinesis:us-east-1:123456789012:stream/orders' })).toThrow(
      /is not a Kinesis stream name: 1 to 128 characters .* \(pass the name, not the ARN\)/,
    );
    expect(
      () => new KinesisSource({ client: testClients().kinesis, streamName: 's', schema: parseSchema('id INT, arrived STRING'), arrivalTimeColumn: 'arrived' }),
    ).toThrow(/arrivalTimeColumn arrived is declared STRING in the schema: .* declare it TIMESTAMP/);
    expect(make({ maxRecordsPerCall: 20_000 })).toThrow(/maxRecordsPerCall 20000 must be an integer from 1 to 10000/);
    expect(make({ startingPosition: { atTimestamp: Number.NaN } })).toThrow(/startingPosition .* is not 'TRIM_HORIZON', 'LATEST' or \{ atTimestamp/);
  });

  it("a query's readStream options map to source options", () => {
    expect(kinesisOptionsFromSpec({ initialPosition: 'earliest', failOnDataLoss: 'false', maxRecordsPerFetch: 500 })).toEqual({
      startingPosition: 'TRIM_HORIZON',
      failOnDataLoss: false,
      maxRecordsPerCall: 500,
    });
    expect(kinesisOptionsFromSpec({ startingPosition: '2026-10-01T12:00:00Z' })).toEqual({
      startingPosition: { atTimestamp: Date.parse('2026-10-01T12:00:00Z') },
    });
    expect(() => kinesisOptionsFromSpec({ startingPosition: 'yesterday' })).toThrow(/not trim_horizon, latest or a timestamp/);
  });

  it('an offset of another stream is refused', async () => {
    const src = source('orders');
    await expect(src.read(0, null, { v: 1, stream: 'payments', shards: {} })).rejects.toThrow(
      /written for Kinesis stream "payments", but this source reads orders/,
    );
  });
});

describe('when a partitioned run splits a Kinesis batch into read tasks', () => {
  it('gives each split a contiguous group of the shards the batch moves, every record in exactly one split', async () => {
    const stream = await newStream(3);
    await putToShards(stream, [events(0, 4), events(10, 3), events(20, 5)]);
    const planner = source(stream);
    const target = await planner.latestOffset(null);
    const end = await planner.planBatch(0, null, target!, {});
    expect(await planner.planSplits(0, null, end!, 8)).toBe(3);
    expect(await planner.planSplits(0, null, end!, 2)).toBe(2);
    // each read task on a source of its own (another process): the splits read again from Kinesis
    const ids = async (split?: { index: number; count: number }) =>
      (await source(stream).read(0, null, end!, split ? { split } : {})).rows.map((r) => r.id as number);
    const whole = await ids();
    const parts = [await ids({ index: 0, count: 2 }), await ids({ index: 1, count: 2 })];
    expect(whole.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 10, 11, 12, 20, 21, 22, 23, 24]);
    expect([...parts[0], ...parts[1]].sort((a, b) => a - b)).toEqual(whole);
    // two shards in the first split, one in the second: whole shards, never a shard's records apart
    const shardOf = (id: number) => Math.floor(id / 10);
    expect(new Set(parts[0].map(shardOf)).size).toBe(2);
    expect(new Set(parts[1].map(shardOf)).size).toBe(1);
  });
});
