/**
 * The request meter (lib/aws/request/meter.ts) on the embedded local stack: what DynamoDB Local
 * returns as ConsumedCapacity for each command (checked against DynamoDB's billing rules for items
 * of sizes chosen here), S3's price classes, and a run's `consumed` on the same pipeline a Lambda
 * runs, checked against requests counted by a middleware of this test and the units DynamoDB Local
 * returns for a PutItem the test makes itself.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { SEED_FILES, windowedTotals } from '../../examples/windowed-totals';
import { createClients, type AwsClients } from '../../lib/aws/clients';
import { createScheduledHandler, type RunSummary } from '../../lib/aws/lambda/handler';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from '../helpers/stack';

jest.setTimeout(60_000);

let clients: AwsClients;
let table: string;
let bucket: string;

beforeAll(async () => {
  clients = createClients(testConnection());
  table = uniqueName('sluice-meter');
  bucket = uniqueName('sluice-meter');
  await Promise.all([ensureStateTable(clients.dynamodb, table), ensureBucket(clients.s3, bucket)]);
});
afterAll(() => clients.destroy());

const key = (sk: string) => ({ pk: { S: 'p' }, sk: { S: sk } });
/** An item of about `bytes` bytes (DynamoDB's size: attribute names plus values). */
const item = (sk: string, bytes = 10): Record<string, AttributeValue> => ({ ...key(sk), v: { S: 'x'.repeat(Math.max(1, bytes - 10)) } });

/** Sends `command`, returns the units the response reported and the meter's delta for it. */
async function measured(command: object) {
  const before = clients.meter.snapshot();
  const out = (await clients.dynamodb.send(command as never)) as { ConsumedCapacity?: unknown };
  const d = clients.meter.since(before);
  const reported = ([] as Array<{ CapacityUnits?: number }>).concat((out.ConsumedCapacity as never) ?? []).reduce((n, c) => n + (c.CapacityUnits ?? 0), 0);
  return { reported, delta: d, hasCapacity: out.ConsumedCapacity !== undefined };
}

describe('DynamoDB: every command asks for its consumed capacity and the meter adds it up', () => {
  // Sizes: a small item (< 1 KB), 1.5 KB (2 write units, 1 read unit strongly consistent), 2.5 KB (3 write units).
  it.each([
    ['PutItem of a small item: 1 write unit', () => new PutItemCommand({ TableName: table, Item: item('a') }), 'write', 1],
    ['PutItem of 1.5 KB: 2 write units', () => new PutItemCommand({ TableName: table, Item: item('b', 1500) }), 'write', 2],
    [
      'UpdateItem of a small item: 1 write unit',
      () => new UpdateItemCommand({ TableName: table, Key: key('a'), UpdateExpression: 'SET w = :w', ExpressionAttributeValues: { ':w': { S: 'y' } } }),
      'write',
      1,
    ],
    ['GetItem, eventually consistent: half a read unit per 4 KB', () => new GetItemCommand({ TableName: table, Key: key('b') }), 'read', 0.5],
    ['GetItem, strongly consistent: 1 read unit per 4 KB', () => new GetItemCommand({ TableName: table, Key: key('b'), ConsistentRead: true }), 'read', 1],
    [
      'Query over 1.6 KB: half a read unit',
      () => new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'p' } } }),
      'read',
      0.5,
    ],
    ['Scan over 1.6 KB: half a read unit', () => new ScanCommand({ TableName: table }), 'read', 0.5],
    ['BatchGetItem of 2 items: half a unit per item', () => new BatchGetItemCommand({ RequestItems: { [table]: { Keys: [key('a'), key('b')] } } }), 'read', 1],
    [
      'BatchWriteItem of items of 10 B, 1.5 KB, 2.5 KB: 1 + 2 + 3 write units',
      () =>
        new BatchWriteItemCommand({
          RequestItems: {
            [table]: [{ PutRequest: { Item: item('c') } }, { PutRequest: { Item: item('d', 1500) } }, { PutRequest: { Item: item('e', 2500) } }],
          },
        }),
      'write',
      6,
    ],
    [
      'TransactWriteItems of items of different sizes: 2 units per KB per item (2 + 4)',
      () =>
        new TransactWriteItemsCommand({
          TransactItems: [{ Put: { TableName: table, Item: item('f') } }, { Put: { TableName: table, Item: item('g', 1500) } }],
        }),
      'write',
      6,
    ],
    [
      'TransactGetItems of 2 items: 2 units per 4 KB per item',
      () => new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: table, Key: key('a') } }, { Get: { TableName: table, Key: key('b') } }] }),
      'read',
      4,
    ],
    ['DeleteItem of a 1.5 KB item: billed by its size, 2 write units', () => new DeleteItemCommand({ TableName: table, Key: key('g') }), 'write', 2],
  ] as const)('%s', async (_name, make, kind, units) => {
    const m = await measured(make());
    expect(m.hasCapacity).toBe(true); // the meter asked for it: the caller did not
    expect(m.reported).toBe(units); // DynamoDB Local's figure, as DynamoDB bills it
    expect(kind === 'write' ? m.delta.writeUnits : m.delta.readUnits).toBe(units);
    expect(kind === 'write' ? m.delta.readUnits : m.delta.writeUnits).toBe(0);
    expect(m.delta.dynamodbRequests).toBe(1);
  });

  it('a transaction of items of one size: DynamoDB Local reports the units of one item, where DynamoDB bills each (a gap of the emulator)', async () => {
    const m = await measured(
      new TransactWriteItemsCommand({
        TransactItems: [{ Put: { TableName: table, Item: item('h', 1500) } }, { Put: { TableName: table, Item: item('i', 1500) } }],
      }),
    );
    // DynamoDB: 2 x 2 x 2 = 8. If DynamoDB Local starts reporting 8, the README's cost section and this test need updating.
    expect(m.reported).toBe(4);
    expect(m.delta.writeUnits).toBe(4);
  });

  it('a write refused by its condition is counted as refused; its error carries no units', async () => {
    const before = clients.meter.snapshot();
    await expect(
      clients.dynamodb.send(new PutItemCommand({ TableName: table, Item: item('a'), ConditionExpression: 'attribute_not_exists(pk)' })),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(clients.meter.since(before)).toMatchObject({ writeUnits: 0, dynamodbRequests: 1, dynamodbRefusedWrites: 1 });
  });

  it('a caller asking INDEXES keeps it', async () => {
    const out = await clients.dynamodb.send(new PutItemCommand({ TableName: table, Item: item('j'), ReturnConsumedCapacity: 'INDEXES' }));
    expect(out.ConsumedCapacity).toMatchObject({ TableName: table, CapacityUnits: 1 });
  });
});

describe('S3: requests counted by price class', () => {
  it('PUT and LIST are one class, GET and HEAD the other, DELETE is free', async () => {
    const before = clients.meter.snapshot();
    const k = `meter/${randomUUID()}`;
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: 'x' }));
    await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'meter/' }));
    await (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: k }))).Body!.transformToString();
    await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: k }));
    await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: k }));
    await clients.s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: k }));
    expect(clients.meter.since(before).s3Requests).toEqual({ put: 2, get: 3, free: 1 });
  });
});

// ---- runs --------------------------------------------------------------------------------------

/** Counts requests by command in a middleware of the test's own (finalizeRequest: each attempt on the wire). */
function countRequests(c: AwsClients): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (client: { middlewareStack: { add(mw: unknown, o: Record<string, unknown>): void } }, svc: string) =>
    client.middlewareStack.add(
      (next: (a: unknown) => Promise<unknown>, ctx: { commandName?: string }) => async (a: unknown) => {
        const k = `${svc}:${ctx.commandName}`;
        counts.set(k, (counts.get(k) ?? 0) + 1);
        return next(a);
      },
      { step: 'finalizeRequest', name: `testCounter-${svc}` },
    );
  add(c.s3, 's3');
  add(c.dynamodb, 'dynamodb');
  return counts;
}
const total = (counts: Map<string, number>, f: (k: string) => boolean) => [...counts].filter(([k]) => f(k)).reduce((n, [, v]) => n + v, 0);

function config(name: string): PipelineConfig {
  return {
    checkpoint: { bucket, prefix: `checkpoints/${name}` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `landing/${name}` },
    sink: { kind: 's3', bucket, prefix: `out/${name}` },
  };
}

async function drop(name: string, file: (typeof SEED_FILES)[number]) {
  await clients.s3.send(
    new PutObjectCommand({ Bucket: bucket, Key: `landing/${name}/${file.name}`, Body: file.rows.map((r) => JSON.stringify(r)).join('\n') }),
  );
}

describe("a run's report and the handler's summary carry what the run consumed", () => {
  it('a data run: nonzero units, and every request the test counted itself, by class', async () => {
    const name = uniqueName('data');
    await drop(name, SEED_FILES[0]);
    const run = createClients(testConnection());
    try {
      const counts = countRequests(run);
      const { executor } = buildExecutor(testConnection(), windowedTotals({ outputMode: 'append', source: 'files', name: `meter-${name}` }), config(name), {
        clients: run,
      });
      const report = await executor.run();
      expect(report.rowsIn).toBe(SEED_FILES[0].rows.length);
      const c = report.consumed!;
      expect(c.writeUnits).toBeGreaterThan(0);
      expect(c.readUnits).toBeGreaterThan(0); // the state of the run's windows is read first
      expect(c.dynamodbRequests).toBe(total(counts, (k) => k.startsWith('dynamodb:')));
      expect(c.s3Requests.put).toBe(total(counts, (k) => /^s3:(Put|List)/.test(k)));
      expect(c.s3Requests.get).toBe(total(counts, (k) => /^s3:(Get|Head)/.test(k)));
      expect(c.s3Requests.free).toBe(total(counts, (k) => /^s3:Delete/.test(k)));
      // Every write costs at least one unit (no write of the run was refused).
      const writes = total(counts, (k) => /^dynamodb:(Put|Update|Delete)Item/.test(k));
      expect(c.dynamodbRefusedWrites).toBe(0);
      expect(c.writeUnits).toBeGreaterThanOrEqual(writes);
    } finally {
      run.destroy();
    }
  });

  it("an empty scheduled run through the handler: the lease's two writes at the units of a PutItem of the lease item, and S3's list and get", async () => {
    const name = uniqueName('empty');
    await drop(name, SEED_FILES[0]);
    const cfg = config(name);
    const plan = windowedTotals({ outputMode: 'append', source: 'files', name: `meter-${name}` });
    const lines: Array<Record<string, unknown>> = [];
    let counts = new Map<string, number>();
    const handler = createScheduledHandler(plan, cfg, testConnection(), {
      writeLine: (l) => lines.push(JSON.parse(l)),
      createClients: (conn) => {
        const c = createClients(conn);
        counts = countRequests(c);
        return c;
      },
    });
    const ctx = { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 60_000 };
    await handler({ time: '2026-10-01T12:15:00Z' }, ctx);
    counts.clear();
    const summary: RunSummary = await handler({ time: '2026-10-01T12:30:00Z' }, ctx);
    expect(summary.rowsIn).toBe(0);

    // The units of one write of the lease item, as DynamoDB Local reports them for a copy of it the test puts itself.
    const lease = await clients.dynamodb.send(
      new GetItemCommand({
        TableName: table,
        Key: { pk: { S: `lease#meter-${name}@${bucket}/checkpoints/${name}` }, sk: { S: 'lease' } },
        ConsistentRead: true,
      }),
    );
    expect(lease.Item).toBeDefined();
    const copy = await clients.dynamodb.send(
      new PutItemCommand({ TableName: table, Item: { ...lease.Item!, sk: { S: `copy-${randomUUID()}` } }, ReturnConsumedCapacity: 'TOTAL' }),
    );
    const perWrite = copy.ConsumedCapacity!.CapacityUnits!;
    const leaseWrites = total(counts, (k) => /^dynamodb:(Put|Update)Item/.test(k));
    expect(leaseWrites).toBe(2); // acquire and release
    // and nothing of the state: the first run's commits noted that its state is all as this sluice
    // writes it (commits/N stateKeptForGood), so keepAlive (which removes the TTL of a head an
    // earlier sluice wrote) does not read the slice's head again at every run start
    const headReads = total(counts, (k) => /^dynamodb:(GetItem|BatchGetItem|Query)/.test(k));
    expect(headReads).toBe(0);
    expect(lines.filter((l) => l.event === 'state-keep-alive')).toEqual([]);
    expect(total(counts, (k) => k.startsWith('dynamodb:'))).toBe(2 + headReads);

    expect(summary.consumed).toEqual({
      writeUnits: leaseWrites * perWrite,
      readUnits: expect.any(Number),
      dynamodbRequests: 2 + headReads,
      dynamodbRefusedWrites: 0,
      s3Requests: { put: total(counts, (k) => /^s3:(Put|List)/.test(k)), get: total(counts, (k) => /^s3:(Get|Head)/.test(k)), free: 0 },
    });
    // The summary line carries them as EMF metrics.
    const line = lines.filter((l) => l.event === 'run-summary').at(-1)!;
    const names = (line._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics[0].Metrics.map((m) => m.Name);
    // (the lease's writes read nothing; the state head read that cost up to a unit is gone)
    expect(summary.consumed!.readUnits).toBe(0);
    expect(names).toEqual(expect.arrayContaining(['DynamoDbWriteUnits', 'DynamoDbReadUnits', 'DynamoDbRequests', 'S3PutRequests', 'S3GetRequests']));
    expect(line).toMatchObject({
      DynamoDbWriteUnits: leaseWrites * perWrite,
      DynamoDbReadUnits: summary.consumed!.readUnits,
      DynamoDbRequests: 2 + headReads,
      S3PutRequests: summary.consumed!.s3Requests.put,
      S3GetRequests: summary.consumed!.s3Requests.get,
    });
  });
});
