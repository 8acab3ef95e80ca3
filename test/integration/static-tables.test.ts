/**
 * Static tables of stream-static joins on the local stack: an S3 table (JSON lines and CSV, read
 * whole; a malformed line fails with its object and line), a DynamoDB table looked up with
 * BatchGetItem (paging over 100 keys, unprocessed keys asked for again, the run's cache), and a
 * pipeline that enriches a stream from a DynamoDB table end to end. Requests are counted by a
 * middleware of this test on a real SDK client.
 */
import { BatchWriteItemCommand, CreateTableCommand, type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createClients, type AwsClients } from '../../lib/aws/clients';
import { DynamoDbStaticTable } from '../../lib/aws/dynamodb/static-table';
import { S3StaticTable } from '../../lib/aws/s3/static-table';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { S3JsonSink } from '../../lib/aws/s3/json-sink';
import { SluiceError } from '../../lib/engine/errors';
import { parseSchema } from '../../lib/engine/schema';
import { staticTable } from '../../lib/engine/query/static-table';
import { readStream } from '../../lib/engine/query/reader';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from '../helpers/stack';
import { leavingKeysUnprocessed } from '../helpers/unprocessed-reads';

jest.setTimeout(60_000);

let clients: AwsClients;
const bucket = uniqueName('static');
const usersTable = uniqueName('static-users');
const stateTable = uniqueName('static-state');
const N_USERS = 250;
const tierOf = (i: number) => (i % 3 === 0 ? 'gold' : 'basic');

beforeAll(async () => {
  clients = createClients(testConnection());
  await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, stateTable)]);
  await clients.dynamodb.send(
    new CreateTableCommand({
      TableName: usersTable,
      KeySchema: [{ AttributeName: 'userId', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'userId', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  for (let i = 0; i < N_USERS; i += 25) {
    const items = Array.from({ length: Math.min(25, N_USERS - i) }, (_, j) => ({
      PutRequest: { Item: { userId: { S: `u${i + j}` }, tier: { S: tierOf(i + j) }, limit: { N: String((i + j) * 10) } } },
    }));
    await clients.dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [usersTable]: items } }));
  }
});
const extraClients: DynamoDBClient[] = [];
afterAll(() => {
  clients.destroy();
  for (const c of extraClients) c.destroy();
});

const put = (key: string, body: string) => clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));

/** A real client that counts its BatchGetItem requests and keys, and can leave all but the first key unprocessed `times` times. */
function countingClient(times = 0) {
  const counted = leavingKeysUnprocessed(times);
  extraClients.push(counted.client);
  return counted;
}

describe('an S3 static table', () => {
  const schema = parseSchema('sku STRING, price DOUBLE, since TIMESTAMP, active BOOLEAN');

  it('reads every JSON-lines object under its prefix, typed by the schema', async () => {
    await put(
      'json/ref/part-1.json',
      '{"sku":"a","price":1.5,"since":"2026-01-01 00:00:00","active":true}\n\n{"sku":"b","price":2,"since":null,"active":false}\n',
    );
    await put('json/ref/part-2.json', '{"sku":"c","price":null,"since":"2026-02-01T12:00:00Z","active":true}');
    await put('json/other.json', '{"sku":"outside","price":0,"since":null,"active":true}');
    const rows = await new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/json/ref/`, format: 'json', schema }).load();
    expect(rows).toEqual([
      { sku: 'a', price: 1.5, since: Date.UTC(2026, 0, 1) * 1000, active: true },
      { sku: 'b', price: 2, since: null, active: false },
      { sku: 'c', price: null, since: Date.UTC(2026, 1, 1, 12) * 1000, active: true },
    ]);
  });

  it('keeps a BIGINT beyond 2^53 and a DECIMAL exact, reading the numbers from their text as a source does', async () => {
    await put('exact/ref.json', '{"id":9007199254740993,"rate":0.12345678901234567890,"extra":1}\n{"id":9007199254740992,"rate":1}\n');
    const exact = parseSchema('id BIGINT, rate DECIMAL(38,20)');
    const rows = await new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/exact/ref.json`, format: 'json', schema: exact }).load();
    // (JSON.parse would read both ids as 9007199254740992 and the rate as 0.12345678901234568; an undeclared field is not kept)
    expect(rows).toEqual([
      { id: 9007199254740993n, rate: '0.12345678901234567890' },
      { id: 9007199254740992n, rate: '1.00000000000000000000' },
    ]);
  });

  it('reads CSV with a header line: columns by name, quoted fields, an empty field as null', async () => {
    await put('csv/ref.csv', 'active,extra,sku,price,since\ntrue,x,"a, the first",1.5,2026-01-01 00:00:00\nFALSE,,b,,\n');
    const rows = await new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/csv/ref.csv`, format: 'csv', schema }).load();
    expect(rows).toEqual([
      { sku: 'a, the first', price: 1.5, since: Date.UTC(2026, 0, 1) * 1000, active: true },
      { sku: 'b', price: null, since: null, active: false },
    ]);
  });

  it('fails on a malformed line with the object, the line and the rule', async () => {
    await put(
      'bad/ref.json',
      '{"sku":"a","price":1,"since":null,"active":true}\n{"sku":"b","price":1,"since":null,"active":true}\n{"sku":"c","price":"cheap","since":null,"active":true}\n',
    );
    const load = new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/bad/ref.json`, format: 'json', schema }).load();
    await expect(load).rejects.toThrow(SluiceError);
    await expect(new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/bad/ref.json`, format: 'json', schema }).load()).rejects.toThrow(
      new RegExp(`s3://${bucket}/bad/ref.json line 3: column price \\(DOUBLE\\) has string "cheap"`),
    );
    await put('bad/ref.csv', 'sku,price,since,active\na,1,,true\nb,2,,maybe\n');
    await expect(new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/bad/ref.csv`, format: 'csv', schema }).load()).rejects.toThrow(
      /ref.csv line 3: column active \(BOOLEAN\)/,
    );
  });

  it('reads a CSV BIGINT beyond 2^53 exactly', async () => {
    await put('exact/ref.csv', 'id,name\n9007199254740993,big\n42,small\n');
    const rows = await new S3StaticTable({
      client: clients.s3,
      uri: `s3://${bucket}/exact/ref.csv`,
      format: 'csv',
      schema: parseSchema('id BIGINT, name STRING'),
    }).load();
    expect(rows).toEqual([
      { id: 9007199254740993n, name: 'big' },
      { id: 42, name: 'small' },
    ]);
  });

  it('fails when no object is under the URI, naming it', async () => {
    await expect(new S3StaticTable({ client: clients.s3, uri: `s3://${bucket}/missing/`, format: 'json', schema }).load()).rejects.toThrow(/has no objects/);
  });
});

describe('a DynamoDB static table', () => {
  const schema = parseSchema('userId STRING, tier STRING, limit LONG, note STRING');
  const keys = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [`u${from + i}`]);

  it('looks up more than 100 keys in groups of 100, maps attributes to columns (a missing one is null), and leaves out keys without an item', async () => {
    const { client, state } = countingClient();
    const table = new DynamoDbStaticTable({ client, tableName: usersTable, key: ['userId'], schema, parallelism: 2 });
    const wanted = keys(20, N_USERS + 30); // 230 existing, 30 missing
    const rows = await table.lookup(wanted);
    expect(state.batchGets).toBe(Math.ceil(wanted.length / 100));
    expect(rows.length).toBe(N_USERS - 20);
    const byId = new Map(rows.map((r) => [r.userId, r]));
    expect(byId.get('u21')).toEqual({ userId: 'u21', tier: tierOf(21), limit: 210, note: null });
    expect(byId.has(`u${N_USERS + 1}`)).toBe(false);
  });

  it('sends at most `parallelism` (default 4) BatchGetItem requests at a time', async () => {
    const client = createClients(testConnection()).dynamodb as DynamoDBClient;
    extraClients.push(client);
    const flight = { now: 0, max: 0, requests: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchGetItemCommand') return next(args);
        flight.requests++;
        flight.max = Math.max(flight.max, ++flight.now);
        try {
          return await next(args);
        } finally {
          flight.now--;
        }
      },
      { step: 'initialize', name: 'inFlight' },
    );
    const rows = await new DynamoDbStaticTable({ client, tableName: usersTable, key: ['userId'], schema }).lookup(keys(0, 600));
    expect(rows.length).toBe(N_USERS);
    expect(flight).toMatchObject({ requests: 6, max: 4 });
  });

  it('asks for each key once per table: a key found or missing before comes from the cache', async () => {
    const { client, state } = countingClient();
    const table = new DynamoDbStaticTable({ client, tableName: usersTable, key: ['userId'], schema });
    await table.lookup(keys(0, 150));
    expect(state).toMatchObject({ batchGets: 2, keys: 150 });
    const again = await table.lookup([...keys(100, 150), ['u999'], ['u200']]);
    // u100..u149 cached; u999 (missing) and u200 asked for in one request
    expect(state).toMatchObject({ batchGets: 3, keys: 152 });
    expect(again.map((r) => r.userId).sort()).toEqual([...keys(100, 150).map((k) => k[0]), 'u200'].sort());
    expect(await table.lookup([['u999']])).toEqual([]);
    // an empty string is no DynamoDB key: never matched, never sent (DynamoDB would refuse the request)
    expect(await table.lookup([[''], ['u1']])).toEqual([expect.objectContaining({ userId: 'u1' })]);
    expect(state.batchGets).toBe(3);
    expect(table.stats()).toMatchObject({ keysRequested: 152, cacheHits: 52 });
  });

  it('asks again for unprocessed keys through the retry layer, and gives up after maxAttempts saying why', async () => {
    const { client, state } = countingClient(2);
    const table = new DynamoDbStaticTable({ client, tableName: usersTable, key: ['userId'], schema, baseDelayMs: 1, maxDelayMs: 2 });
    const rows = await table.lookup(keys(0, 5));
    expect(rows.map((r) => r.userId).sort()).toEqual(['u0', 'u1', 'u2', 'u3', 'u4']);
    // 5 keys ─▶ 1 answered, 4 left ─▶ 1 answered, 3 left ─▶ all 3 answered
    expect(state).toMatchObject({ batchGets: 3, keys: 5 + 4 + 3 });
    const stuck = countingClient(Infinity);
    const failing = new DynamoDbStaticTable({
      client: stuck.client,
      tableName: usersTable,
      key: ['userId'],
      schema,
      maxAttempts: 3,
      baseDelayMs: 1,
      maxDelayMs: 2,
    });
    await expect(failing.lookup(keys(0, 5))).rejects.toThrow(/left 2 keys unprocessed after 3 attempts: raise the table's read capacity/);
    expect(stuck.state.batchGets).toBe(3);
  });

  it('reads a number attribute a double cannot hold exactly: a BIGINT beyond 2^53, a DECIMAL of many digits', async () => {
    await clients.dynamodb.send(
      new PutItemCommand({
        TableName: usersTable,
        Item: { userId: { S: 'exact' }, tier: { S: 'gold' }, limit: { N: '9007199254740993' }, rate: { N: '0.12345678901234567890' } },
      }),
    );
    const exact = parseSchema('userId STRING, limit LONG, rate DECIMAL(38,20)');
    const rows = await new DynamoDbStaticTable({ client: clients.dynamodb, tableName: usersTable, key: ['userId'], schema: exact }).lookup([['exact']]);
    expect([...rows.values()]).toEqual([{ userId: 'exact', limit: 9007199254740993n, rate: '0.12345678901234567890' }]);
  });

  it("fails on an item that does not fit the schema, naming the table and the item's key", async () => {
    await clients.dynamodb.send(new PutItemCommand({ TableName: usersTable, Item: { userId: { S: 'odd' }, tier: { S: 'x' }, limit: { S: 'lots' } } }));
    const table = new DynamoDbStaticTable({ client: clients.dynamodb, tableName: usersTable, key: ['userId'], schema });
    await expect(table.lookup([['odd']])).rejects.toThrow(new RegExp(`static table ${usersTable} item userId="odd": column limit \\(BIGINT\\)`));
  });
});

describe('a pipeline enriching a stream from a DynamoDB table', () => {
  it('joins each batch with the items of its keys, once per key in the run, and writes the enriched rows', async () => {
    const plan = readStream
      .format('json')
      .schema('orderId INT, userId STRING, amount DOUBLE')
      .option('maxFilesPerTrigger', 1)
      .load()
      .join(staticTable.dynamodb(usersTable, { key: 'userId', schema: 'userId STRING, tier STRING' }), 'userId', 'leftOuter')
      .writeStream.queryName('enrich')
      .plan();
    const base = uniqueName('enrich');
    const cfg: PipelineConfig = {
      checkpoint: { bucket, prefix: `${base}/checkpoint` },
      stateTable,
      source: { kind: 's3', bucket, prefix: `${base}/landing` },
      sink: { kind: 's3', bucket, prefix: `${base}/sink` },
    };
    const files = [
      [
        { orderId: 1, userId: 'u3', amount: 10 },
        { orderId: 2, userId: 'u4', amount: 5 },
        { orderId: 3, userId: 'nobody', amount: 1 },
      ],
      [
        { orderId: 4, userId: 'u3', amount: 7 },
        { orderId: 5, userId: null, amount: 2 },
      ],
    ];
    for (const [i, rows] of files.entries()) await put(`${base}/landing/part-${i}.json`, rows.map((r) => JSON.stringify(r)).join('\n'));
    const { client, state } = countingClient();
    const { executor } = buildExecutor(testConnection(), plan, cfg, { clients: { ...clients, dynamodb: client } as AwsClients });
    const report = await executor.run();
    expect(report.batches.map((b) => b.numInputRows)).toEqual(files.map((f) => f.length));
    const sink = new S3JsonSink({ client: clients.s3, bucket, prefix: `${base}/sink` });
    const written = [...((await sink.readBatch(0)) ?? []), ...((await sink.readBatch(1)) ?? [])];
    const expected = files.flat().map((r) => {
      const n = r.userId && /^u\d+$/.test(r.userId) ? Number(r.userId.slice(1)) : -1;
      return { userId: r.userId, orderId: r.orderId, amount: r.amount, tier: n >= 0 && n < N_USERS ? tierOf(n) : null };
    });
    expect(written).toEqual(expected);
    // batch 0 asks for u3, u4, nobody; batch 1 finds u3 in the run's cache, and a null key is never asked for
    expect(state).toMatchObject({ batchGets: 1, keys: 3 });
  });
});
