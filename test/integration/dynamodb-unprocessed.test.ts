/**
 * BatchGetItem's unprocessed keys, on DynamoDB Local: DynamoDB Local never throttles, so a
 * middleware on a real SDK client alters the one answer AWS would give under throttling (the
 * request goes over HTTP to the emulator; the response comes back with some keys moved to
 * `UnprocessedKeys`). The state store's read and the DynamoDB sink's replay check ask again for
 * the keys left over and get the same answer as without throttling; when the keys stay
 * unprocessed they give up after maxAttempts with a retriable error that says so and what to do.
 */
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { DynamoDbStateStore } from '../../lib/aws/dynamodb/state-store';
import { createClients } from '../../lib/aws/clients';
import { SluiceError } from '../../lib/engine/errors';
import type { OperatorStateSpec, OutputRow, SinkContext, StateChange } from '../../lib/engine/ports';
import { ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from '../helpers/stack';
import { leavingKeysUnprocessed } from '../helpers/unprocessed-reads';

const table = uniqueName('unprocessed');
const MINUTE = 60_000;

const throttlingReads = leavingKeysUnprocessed;

beforeAll(async () => {
  await ensureStateTable(createClients(testConnection()).dynamodb, table);
});

const op: OperatorStateSpec = { operatorId: 'agg0', fixedEviction: true, evictionGranularityMs: MINUTE };
// Values of ~120 bytes in text pages: 100 keys take a dozen pages, so one BatchGetItem asks for several.
const changes = (n: number): StateChange[] =>
  Array.from({ length: n }, (_, i) => ({ key: { id: `k${i}`, evictAt: MINUTE }, value: { sum: i, pad: 'x'.repeat(100) } }));
const TEXT_PAGES = { compressAboveBytes: 32 * 1024 };
const fast = { baseDelayMs: 1, maxDelayMs: 5 };

describe('when BatchGetItem leaves state keys unprocessed', () => {
  it('the state store asks again for them and reads every value', async () => {
    const ns = uniqueName('st');
    const writer = new DynamoDbStateStore({ client: createClients(testConnection()).dynamodb, tableName: table, namespace: ns, ...TEXT_PAGES });
    await writer.commit(op, 0, changes(100));
    expect(writer.stats().pagesWritten).toBeGreaterThan(5);
    const { client, state } = throttlingReads(2);
    const store = new DynamoDbStateStore({ client, tableName: table, namespace: ns, ...fast });
    const got = await store.get(
      op,
      changes(100).map((c) => c.key),
      0,
    );
    expect(state.altered).toBe(2);
    expect([...got.values()].map((e) => [e.key.id, e.value]).sort()).toEqual(
      changes(100)
        .map((c) => [c.key.id, c.value])
        .sort(),
    );
    expect(store.stats().retries).toBeGreaterThanOrEqual(2);
  });

  it('gives up after maxAttempts with a retriable error naming the request and the remedy', async () => {
    const ns = uniqueName('st');
    const writer = new DynamoDbStateStore({ client: createClients(testConnection()).dynamodb, tableName: table, namespace: ns, ...TEXT_PAGES });
    await writer.commit(op, 0, changes(100));
    const pages = writer.stats().pagesWritten;
    const { client, state } = throttlingReads(Infinity);
    const store = new DynamoDbStateStore({ client, tableName: table, namespace: ns, maxAttempts: 3, ...fast });
    const err = await store
      .get(
        op,
        changes(100).map((c) => c.key),
        0,
      )
      .catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.retriable).toBe(true);
    // each answer served one page: pages - 3 left
    expect(err.message).toMatch(new RegExp(`BatchGetItem on table ${table} left ${pages - 3} keys unprocessed after 3 attempts: raise the table's capacity`));
    expect(state.altered).toBe(3);
  });
});

describe("when BatchGetItem leaves the DynamoDB sink's chunk markers unprocessed on a replay", () => {
  // 300 rows: 4 chunks of up to 98, so the replay check asks for 4 markers at once.
  const rows: OutputRow[] = Array.from({ length: 300 }, (_, i) => ({ user: `u${String(i).padStart(3, '0')}`, total: i }));
  const ctx = (queryId: string): SinkContext => ({ queryId, queryName: 'unprocessed', outputMode: 'update', columns: ['user', 'total'], keyColumns: ['user'] });

  it('asks again for them and skips every chunk already written', async () => {
    const qk = uniqueName('sk');
    const first = new DynamoDbSink({ client: createClients(testConnection()).dynamodb, tableName: table, queryKey: qk });
    await first.addBatch(0, rows, ctx('q'));
    const { client, state } = throttlingReads(1);
    const replay = new DynamoDbSink({ client, tableName: table, queryKey: qk, ...fast });
    await replay.addBatch(0, rows, ctx('q'));
    expect(state.altered).toBe(1);
    expect(replay.stats()).toMatchObject({ chunksSkipped: 4, chunksWritten: 0, transactions: 0 });
    expect(await replay.readAll()).toHaveLength(300);
  });

  it('gives up after maxAttempts with a retriable error and writes nothing', async () => {
    const qk = uniqueName('sk');
    await new DynamoDbSink({ client: createClients(testConnection()).dynamodb, tableName: table, queryKey: qk }).addBatch(0, rows, ctx('q'));
    const { client, state } = throttlingReads(Infinity);
    const replay = new DynamoDbSink({ client, tableName: table, queryKey: qk, maxAttempts: 3, ...fast });
    const err = await replay.addBatch(0, rows, ctx('q')).catch((e) => e);
    expect(err).toBeInstanceOf(SluiceError);
    expect(err.retriable).toBe(true);
    expect(err.message).toMatch(new RegExp(`BatchGetItem of sink markers on ${table} left 1 keys unprocessed after 3 attempts: raise the table's capacity`));
    expect(state.altered).toBe(3);
    expect(replay.stats()).toMatchObject({ transactions: 0, chunksWritten: 0 });
  });
});
