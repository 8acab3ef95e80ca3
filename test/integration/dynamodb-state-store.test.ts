/**
 * DynamoDbStateStore on DynamoDB Local: versioned reads, crash and replay, tombstones, eviction
 * lookups for both layouts, batching, and request costs.
 */
import {
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { DynamoDbStateStore, DynamoDbStateStoreOptions } from '../../lib/aws/dynamodb/state-store';
import { InvalidOptionError, LeaseLostError, SluiceError } from '../../lib/engine/errors';
import { Json, OperatorStateSpec, StateChange, StateEntry } from '../../lib/engine/ports';
import { ensureStateTable } from '../../lib/local/resources';
import { clockStart, expireTtlItems, testClients, uniqueName } from '../helpers/stack';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

// ---------------------------------------------------------------------------------------------
// Factories

/** A windowed aggregation's operator: evictAt is the window end, fixed per key. */
const windowOp = (operatorId = 'agg0'): OperatorStateSpec => ({ operatorId, fixedEviction: true, evictionGranularityMs: MINUTE });
/** A session operator: evictAt moves with the value. */
const sessionOp = (operatorId = 'session0'): OperatorStateSpec => ({ operatorId, fixedEviction: false, evictionGranularityMs: MINUTE });

const put = (id: string, evictAt: number | null, value: Json): StateChange => ({ key: { id, evictAt }, value });
const del = (id: string, evictAt: number | null): StateChange => ({ key: { id, evictAt }, value: null });
const key = (id: string, evictAt: number | null = null) => ({ id, evictAt });

interface Spread {
  /** evictAt spreads over this many minutes. @default 5 */
  readonly buckets?: number;
  /** Every 7th key has no eviction time. @default false */
  readonly someNull?: boolean;
}

/** The evictAt of key `k<i>`: a function of i (and of the spread, which moves it for sessions). */
const evictAtOf = (i: number, spread: Spread = {}): number | null =>
  spread.someNull && i % 7 === 0 ? null : ((i % (spread.buckets ?? 5)) + 1) * MINUTE + (i % 13) * 1000;
const idOf = (i: number) => `k${String(i).padStart(3, '0')}`;

/** `n` keys `k000..` with values of batch `batch`. */
function manyChanges(n: number, batch: number, spread: Spread = {}): StateChange[] {
  return Array.from({ length: n }, (_, i) => put(idOf(i), evictAtOf(i, spread), { sum: i * 10 + batch, batch }));
}
const delK = (i: number, spread: Spread = {}) => del(idOf(i), evictAtOf(i, spread));

/** A comparable snapshot of everything a reader can see at `version`. */
async function snapshot(store: DynamoDbStateStore, op: OperatorStateSpec, version: number) {
  const entries = (xs: StateEntry[]) => xs.map((e) => [e.key.id, e.key.evictAt, e.value]);
  return {
    all: entries(await store.all(op, version)),
    count: await store.count(op, version),
    expired: await Promise.all([0, 2, 3.5, 10].map(async (m) => entries(await store.expired(op, m * MINUTE, version)))),
  };
}

/**
 * A client that crashes every BatchWriteItem call after letting through the items for which
 * `lands(pk, callIndex)` holds (a crash at any point of a commit, in any order of landing).
 */
function crashingClient(real: DynamoDBClient, lands: (pk: string, call: number) => boolean) {
  let calls = 0;
  let landed = 0;
  const client = {
    send: async (command: unknown) => {
      if (command instanceof BatchWriteItemCommand) {
        const call = calls++;
        const [[table, requests]] = Object.entries(command.input.RequestItems!);
        const through = requests.filter((r) => lands(r.PutRequest!.Item!.pk.S!, call));
        if (through.length) await real.send(new BatchWriteItemCommand({ RequestItems: { [table]: through } }));
        landed += through.length;
        throw Object.assign(new Error('injected crash mid-commit'), { name: 'InjectedCrash' });
      }
      return real.send(command as never);
    },
  };
  return Object.assign(client as unknown as DynamoDBClient, { landed: () => landed });
}

/** A client without network that answers like an empty table and counts calls by command. */
function fakeClient(table: string, behaviour: { unprocessedOnce?: boolean; unprocessedAlways?: boolean; unprocessedKeysOnce?: boolean; throttleOnce?: boolean } = {}) {
  const calls: Record<string, number> = {};
  let unprocessed = behaviour.unprocessedOnce ?? false;
  let unprocessedKeys = behaviour.unprocessedKeysOnce ?? false;
  let throttle = behaviour.throttleOnce ?? false;
  const client = {
    send: async (command: { constructor: { name: string }; input: Record<string, any> }) => {
      const name = command.constructor.name.replace(/Command$/, '');
      calls[name] = (calls[name] ?? 0) + 1;
      if (throttle) {
        throttle = false;
        throw Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } });
      }
      switch (name) {
        case 'GetItem':
        case 'PutItem':
          return {};
        case 'BatchGetItem': {
          const keys = command.input.RequestItems[table].Keys;
          if (unprocessedKeys && keys.length > 1) {
            unprocessedKeys = false;
            return { Responses: { [table]: [] }, UnprocessedKeys: { [table]: { Keys: keys.slice(1), ConsistentRead: true } } };
          }
          return { Responses: { [table]: [] }, UnprocessedKeys: {} };
        }
        case 'BatchWriteItem': {
          const reqs = command.input.RequestItems[table];
          if (behaviour.unprocessedAlways) return { UnprocessedItems: { [table]: reqs } };
          if (unprocessed && reqs.length > 1) {
            unprocessed = false;
            return { UnprocessedItems: { [table]: reqs.slice(1) } };
          }
          return { UnprocessedItems: {} };
        }
        default:
          throw new Error(`fake client does not serve ${name}`);
      }
    },
  } as unknown as DynamoDBClient;
  return { client, calls };
}

// ---------------------------------------------------------------------------------------------

describe('DynamoDbStateStore', () => {
  let dynamodb: DynamoDBClient;
  let tableName: string;
  let now = clockStart();
  const clock = { now: () => now };

  const newStore = (overrides: Partial<DynamoDbStateStoreOptions> = {}) =>
    new DynamoDbStateStore({ client: dynamodb, tableName, namespace: uniqueName('q').replace(/#/g, '-'), clock, ...overrides });
  /** Another instance on the same namespace (a fresh Lambda after a crash): no shared cache. */
  const reopen = (store: DynamoDbStateStore, overrides: Partial<DynamoDbStateStoreOptions> = {}) =>
    newStore({ namespace: store.namespace, ...overrides });

  beforeAll(async () => {
    dynamodb = testClients().dynamodb;
    tableName = uniqueName('state');
    await ensureStateTable(dynamodb, tableName);
  });

  beforeEach(() => {
    now = clockStart();
  });

  /** Every item of a namespace (Scan: tests only). */
  async function scanNamespace(namespace: string) {
    const out: Record<string, any>[] = [];
    let start: Record<string, any> | undefined;
    do {
      const res = await dynamodb.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }));
      for (const item of res.Items ?? []) if (item.pk.S!.startsWith(`${namespace}#`)) out.push(item);
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** DynamoDB TTL at a moment the test picks (test/helpers/stack.ts). */
  const expireTtl = (atMs: number) => expireTtlItems(tableName, atMs);

  describe('when batches commit one after another', () => {
    it('reads each version as it was committed', async () => {
      const store = newStore();
      const op = windowOp();
      const at = async (v: number) => Object.fromEntries([...(await store.get(op, [key('a', MINUTE), key('b', 2 * MINUTE)], v))].map(([id, e]) => [id, e.value]));
      await store.commit(op, 0, [put('a', MINUTE, { n: 1 })]);
      expect(await at(-1)).toEqual({});
      expect(await at(0)).toEqual({ a: { n: 1 } });

      await store.commit(op, 1, [put('a', MINUTE, { n: 2 }), put('b', 2 * MINUTE, { n: 1 })]);
      expect(await at(0)).toEqual({ a: { n: 1 } });
      expect(await at(1)).toEqual({ a: { n: 2 }, b: { n: 1 } });
      expect(await store.count(op, 0)).toBe(1);
      expect(await store.count(op, 1)).toBe(2);
    });

    it('refuses reads older than the version before the last commit', async () => {
      const store = newStore();
      const op = windowOp();
      await store.commit(op, 0, [put('a', MINUTE, 1)]);
      await store.commit(op, 1, [put('a', MINUTE, 2)]);
      await store.commit(op, 2, [put('a', MINUTE, 3)]);
      await expect(store.get(op, [key('a', MINUTE)], 0)).rejects.toThrow(/`a`.*no longer retained at version 0 \(the store keeps versions 1 and 2\)/);
      await expect(store.count(op, 0)).rejects.toThrow(/no longer retained at version 0/);
    });

    it('reads the same through a fresh instance as through the writer', async () => {
      const store = newStore();
      const op = sessionOp();
      await store.commit(op, 0, manyChanges(30, 0));
      await store.commit(op, 1, manyChanges(20, 1));
      expect(await snapshot(reopen(store), op, 1)).toEqual(await snapshot(store, op, 1));
      expect(await snapshot(reopen(store), op, 0)).toEqual(await snapshot(store, op, 0));
    });

    it('keeps NaN and the infinities in values, where JSON would turn them into null, small and gzipped alike', async () => {
      const value = { k: [[0, 600_000], NaN, Infinity, 'null'], b: [NaN, [-Infinity, 2], null, 1.5] };
      const big = { ...value, pad: 'x'.repeat(5000) };
      for (const store of [newStore(), newStore({ compressAboveBytes: 100 })]) {
        const op = windowOp();
        await store.commit(op, 0, [put('a', MINUTE, value), put('b', MINUTE, big), put('c', MINUTE, { plain: [1, null, 'null'] })]);
        for (const reader of [store, reopen(store)]) {
          const got = await reader.get(op, [key('a', MINUTE), key('b', MINUTE), key('c', MINUTE)], 0);
          expect(got.get('a')?.value).toEqual(value);
          expect(got.get('b')?.value).toEqual(big);
          expect(got.get('c')?.value).toEqual({ plain: [1, null, 'null'] });
          expect(Number.isNaN(((got.get('a')?.value as { b: Json[] }).b[0]) as number)).toBe(true);
        }
      }
    });

    it('keeps operators of one namespace apart', async () => {
      const store = newStore();
      await store.commit(windowOp('agg0'), 0, [put('a', MINUTE, 1)]);
      await store.commit(windowOp('agg1'), 0, [put('a', MINUTE, 2)]);
      expect((await store.get(windowOp('agg0'), [key('a', MINUTE)], 0)).get('a')?.value).toBe(1);
      expect((await store.get(windowOp('agg1'), [key('a', MINUTE)], 0)).get('a')?.value).toBe(2);
    });
  });

  describe.each([
    ['fixed eviction (windows)', windowOp(), { someNull: true }],
    // Sessions: batch 2 moves eviction times across buckets (and gives the null ones one).
    ['moving eviction (sessions)', sessionOp(), { buckets: 9 }],
  ])('when batch N crashes half-way through its state writes, %s', (_layout, op, moved: Spread) => {
    // Batch 0 and 1 build state; batch 2 rewrites half of it, deletes some and adds keys, over
    // several BatchWriteItem requests, of which the crash lets some items land.
    const base: Spread = { someNull: true };
    const batch0 = manyChanges(60, 0, base);
    const batch1 = [...manyChanges(40, 1, base), delK(50, base), delK(51, base)];
    const batch2 = [
      ...manyChanges(30, 2, moved),
      ...Array.from({ length: 25 }, (_, i) => put(`new${i}`, (i % 4) * MINUTE + 500, { fresh: i })),
      delK(45, base),
      delK(46, base),
    ];
    const batch3 = [put('k001', evictAtOf(1, moved), { after: 3 }), del('new3', 3 * MINUTE + 500)];
    /** What a crash-free run reads at each version, after the commit of the next one. */
    const crashFree: Record<string, unknown> = {};

    beforeAll(async () => {
      const store = newStore();
      await store.commit(op, 0, batch0);
      await store.commit(op, 1, batch1);
      await store.commit(op, 2, batch2);
      crashFree.at1 = await snapshot(store, op, 1);
      await store.commit(op, 3, batch3);
      crashFree.at2 = await snapshot(store, op, 2);
      crashFree.at3 = await snapshot(store, op, 3);
    });

    it.each([
      ['the first write request landed', (_pk: string, call: number) => call === 0],
      ['only the keys\' own items landed', (pk: string) => !pk.includes('#i#')],
      ['only the index items landed', (pk: string) => pk.includes('#i#')],
      ['every item landed but the directory', () => true],
    ])('a replay reads N-1, not the partial writes, and ends equal to a crash-free run (%s)', async (_crash, lands) => {
      const crashed = newStore();
      await crashed.commit(op, 0, batch0);
      await crashed.commit(op, 1, batch1);
      const before = await snapshot(crashed, op, 1);
      expect(before).toEqual(crashFree.at1);

      const client = crashingClient(dynamodb, lands);
      const dying = reopen(crashed, { client, maxConcurrency: 16 });
      await dying.get(op, batch2.map((c) => c.key), 1);
      await expect(dying.commit(op, 2, batch2)).rejects.toThrow(/injected crash/);

      // The next run: a fresh instance reads N-1 exactly as before the crash.
      const replay = reopen(crashed);
      expect(await snapshot(replay, op, 1)).toEqual(before);
      const seen = await replay.get(op, batch2.map((c) => c.key), 1);
      expect([...seen.keys()].sort()).toEqual(batch2.map((c) => c.key.id).filter((id) => !id.startsWith('new')).sort());

      await replay.commit(op, 2, batch2);
      await replay.commit(op, 3, batch3);
      expect(await snapshot(replay, op, 2)).toEqual(crashFree.at2);
      expect(await snapshot(replay, op, 3)).toEqual(crashFree.at3);
      if (!(op.fixedEviction && _crash === 'only the index items landed')) expect(client.landed()).toBeGreaterThan(0);
    });
  });

  describe('when a batch commits part of its changes and is replayed with all of them', () => {
    it.each([
      ['fixed eviction', windowOp(), {}],
      ['moving eviction', sessionOp(), { buckets: 3 }],
    ])('ends equal to a crash-free run (%s)', async (_layout, op, moved: Spread) => {
      // The executor's mid-state crash point: commit(N, first half) completes, then the run dies.
      const changes0 = manyChanges(40, 0);
      const changes1 = [...manyChanges(40, 1, moved).filter((c) => c.key.id !== idOf(7)), delK(7), put('x', 4 * MINUTE, 'x')];
      const crashFree = newStore();
      const crashed = newStore();
      for (const s of [crashFree, crashed]) await s.commit(op, 0, changes0);
      await crashFree.commit(op, 1, changes1);

      await crashed.commit(op, 1, changes1.slice(0, Math.ceil(changes1.length / 2)));
      const replay = reopen(crashed);
      expect(await snapshot(replay, op, 0)).toEqual(await snapshot(crashFree, op, 0));
      await replay.commit(op, 1, changes1);
      expect(await snapshot(replay, op, 1)).toEqual(await snapshot(crashFree, op, 1));
    });
  });

  describe('when a key is deleted', () => {
    it('writes a tombstone with a TTL, keeps the old value readable at N-1, and can bring the key back', async () => {
      const store = newStore({ ttlSeconds: 3600 });
      const op = windowOp();
      await store.commit(op, 0, [put('a', MINUTE, { n: 1 }), put('b', MINUTE, { n: 1 })]);
      await store.commit(op, 1, [del('a', MINUTE)]);

      expect((await store.get(op, [key('a', MINUTE)], 0)).get('a')?.value).toEqual({ n: 1 });
      expect((await store.get(op, [key('a', MINUTE)], 1)).has('a')).toBe(false);
      expect(await store.count(op, 0)).toBe(2);
      expect(await store.count(op, 1)).toBe(1);
      expect((await store.all(op, 1)).map((e) => e.key.id)).toEqual(['b']);

      const raw = await rawItems(store, op, 'a');
      expect(raw).toHaveLength(1);
      expect(raw[0].d?.BOOL).toBe(true);
      expect(Number(raw[0].ttl?.N)).toBe(now / 1000 + 3600);

      await store.commit(op, 2, [put('a', MINUTE, { n: 3 })]);
      expect((await store.get(op, [key('a', MINUTE)], 2)).get('a')?.value).toEqual({ n: 3 });
      expect((await store.get(op, [key('a', MINUTE)], 1)).has('a')).toBe(false);
      const back = await rawItems(store, op, 'a');
      expect(back[0].ttl).toBeUndefined();
      expect(back[0].d).toBeUndefined();
      expect(await store.count(op, 2)).toBe(2);
    });

    it('ignores deleting a key that does not exist', async () => {
      const store = newStore();
      const op = sessionOp();
      await store.commit(op, 0, [del('ghost', null)]);
      expect(await store.count(op, 0)).toBe(0);
      expect(await store.all(op, 0)).toEqual([]);
    });

    /** Raw items of `id` in every partition of the operator (the test knows the layout). */
    async function rawItems(store: DynamoDbStateStore, op: OperatorStateSpec, id: string) {
      const ns = store.namespace;
      const out = [];
      for (let shard = 0; shard < 4; shard++) {
        const res = await dynamodb.send(
          new GetItemCommand({ TableName: tableName, Key: { pk: { S: `${ns}#${op.operatorId}#t#1#${shard}` }, sk: { S: id } }, ConsistentRead: true }),
        );
        if (res.Item) out.push(res.Item);
      }
      return out;
    }
  });

  describe('when the watermark passes keys with fixed eviction times', () => {
    const op = windowOp();
    const ends = [MINUTE, MINUTE + 1, 2 * MINUTE - 1, 2 * MINUTE, 2 * MINUTE + 30_000, 3 * MINUTE, 10 * MINUTE];
    const changes = [...ends.map((e) => put(`w${e}`, e, { end: e })), put('forever', null, 'no watermark')];

    it('expired() returns exactly the keys with evictAt <= watermark', async () => {
      const store = newStore();
      await store.commit(op, 0, changes);
      for (const wm of [0, MINUTE, 2 * MINUTE - 1, 2 * MINUTE, 2 * MINUTE + 29_999, 3 * MINUTE, 100 * MINUTE]) {
        const got = (await store.expired(op, wm, 0)).map((e) => e.key.id);
        expect(got).toEqual(ends.filter((e) => e <= wm).map((e) => `w${e}`).sort());
      }
    });

    it('does not return keys evicted by the batch being read', async () => {
      const store = newStore();
      await store.commit(op, 0, changes);
      const evicted = await store.expired(op, 2 * MINUTE, 0);
      await store.commit(op, 1, evicted.map((e) => ({ key: e.key, value: null })));
      expect(await store.expired(op, 2 * MINUTE, 1)).toEqual([]);
      expect((await store.expired(op, 2 * MINUTE, 0)).map((e) => e.key.id)).toEqual(evicted.map((e) => e.key.id));
      expect(await store.count(op, 1)).toBe(changes.length - evicted.length);
    });

    it('queries only the buckets at or below the watermark', async () => {
      const store = newStore({ shards: 2 });
      await store.commit(op, 0, changes);
      const before = store.stats().readRequests;
      await store.expired(op, MINUTE, 0);
      // 1 directory read + 2 shards of bucket 1 (bucket 0 holds nothing: not in the directory).
      expect(store.stats().readRequests - before).toBe(1 + 2);
    });
  });

  describe('when the watermark passes keys whose eviction time moves (sessions)', () => {
    const op = sessionOp();

    it('expired() follows a key whose evictAt moved, at the new version and at the old one', async () => {
      const store = newStore();
      await store.commit(op, 0, [
        put('stays-early', MINUTE, 1),
        put('moves-later', MINUTE + 10, 2),
        put('moves-earlier', 20 * MINUTE, 3),
        put('within-bucket', 2 * MINUTE + 10, 4),
        put('no-time', null, 5),
      ]);
      await store.commit(op, 1, [
        put('moves-later', 20 * MINUTE, 22),
        put('moves-earlier', 30_000, 33),
        put('within-bucket', 2 * MINUTE + 50_000, 44),
        put('gets-time', MINUTE, 6),
      ]);
      const ids = async (wm: number, v: number) => (await store.expired(op, wm, v)).map((e) => [e.key.id, e.key.evictAt]);

      expect(await ids(2 * MINUTE, 0)).toEqual([['moves-later', MINUTE + 10], ['stays-early', MINUTE]]);
      expect(await ids(2 * MINUTE, 1)).toEqual([['gets-time', MINUTE], ['moves-earlier', 30_000], ['stays-early', MINUTE]]);
      expect(await ids(2 * MINUTE + 10, 0)).toEqual([['moves-later', MINUTE + 10], ['stays-early', MINUTE], ['within-bucket', 2 * MINUTE + 10]]);
      expect(await ids(2 * MINUTE + 10, 1)).toEqual([['gets-time', MINUTE], ['moves-earlier', 30_000], ['stays-early', MINUTE]]);
      expect(await ids(Number.MAX_SAFE_INTEGER, 1)).toHaveLength(5);
      expect(await store.count(op, 1)).toBe(6);
      expect((await store.get(op, [key('moves-earlier')], 1)).get('moves-earlier')).toEqual({ key: key('moves-earlier', 30_000), value: 33 });
      expect((await store.get(op, [key('moves-earlier')], 0)).get('moves-earlier')).toEqual({ key: key('moves-earlier', 20 * MINUTE), value: 3 });
    });

    it('stops finding a key once it is deleted or loses its eviction time', async () => {
      const store = newStore();
      await store.commit(op, 0, [put('a', MINUTE, 1), put('b', MINUTE, 2)]);
      await store.commit(op, 1, [del('a', null), put('b', null, 2)]);
      expect(await store.expired(op, 5 * MINUTE, 1)).toEqual([]);
      expect((await store.expired(op, 5 * MINUTE, 0)).map((e) => e.key.id)).toEqual(['a', 'b']);
      expect(await store.count(op, 1)).toBe(1);
    });
  });

  describe('when a batch touches more keys than one request carries', () => {
    it.each([
      ['fixed eviction', windowOp()],
      ['moving eviction', sessionOp()],
    ])('reads and writes them all over several requests (%s)', async (_layout, op) => {
      const writer = newStore();
      const changes = manyChanges(250, 0, { buckets: 20, someNull: true });
      await writer.commit(op, 0, changes);
      expect(writer.stats().writeRequests).toBeGreaterThanOrEqual(Math.ceil(250 / 25) + 1);

      const reader = reopen(writer);
      const got = await reader.get(op, changes.map((c) => c.key), 0);
      expect(got.size).toBe(250);
      for (const c of changes) expect(got.get(c.key.id)).toEqual({ key: c.key, value: c.value });
      expect(reader.stats().readRequests).toBeGreaterThanOrEqual(1 + Math.ceil(250 / 100));
      expect(await reader.count(op, 0)).toBe(250);
      expect(await reader.all(op, 0)).toHaveLength(250);
    });

    it('costs ceil(K/25) + 1 write requests for K new keys (+1 on the first commit, which records the layout first)', async () => {
      for (const k of [1, 25, 26, 130]) {
        const store = newStore();
        await store.commit(windowOp(), 0, manyChanges(k, 0));
        expect(store.stats().writeRequests).toBe(Math.ceil(k / 25) + 2);
        expect(store.stats().writes).toBe(k + 2);
        await store.commit(windowOp(), 1, manyChanges(k, 1));
        expect(store.stats().writeRequests).toBe(2 * Math.ceil(k / 25) + 3);
      }
    });

    it('reads nothing again at commit for keys it read in the same batch', async () => {
      const store = newStore();
      const op = windowOp();
      const changes = manyChanges(50, 0);
      await store.commit(op, 0, changes);
      const other = manyChanges(60, 0).slice(50); // keys this instance never wrote
      const readsBefore = store.stats().readRequests;
      await store.get(op, other.map((c) => c.key), 0);
      const afterGet = store.stats().readRequests;
      await store.commit(op, 1, other.map((c) => put(c.key.id, c.key.evictAt, 'next')));
      // The commit reads only the directory.
      expect(store.stats().readRequests - afterGet).toBe(1);
      expect(afterGet - readsBefore).toBe(1);
    });

    it('reads nothing for keys its last commit wrote: the next batch of the run finds them as written', async () => {
      const store = newStore();
      const op = windowOp();
      const changes = manyChanges(50, 0);
      await store.commit(op, 0, changes);
      await store.commit(op, 1, changes.slice(0, 20).map((c) => put(c.key.id, c.key.evictAt, 'next')));
      const before = store.stats().readRequests;
      const got = await store.get(op, changes.map((c) => c.key), 1);
      expect(store.stats().readRequests - before).toBe(0);
      // the same as a fresh instance (a new Lambda), which reads the table
      const fresh = reopen(store);
      const read = await fresh.get(op, changes.map((c) => c.key), 1);
      expect(fresh.stats().readRequests).toBeGreaterThan(0);
      expect([...got.entries()]).toEqual([...read.entries()]);
      expect(got.get(changes[0].key.id)?.value).toBe('next');
      expect(got.get(changes[30].key.id)?.value).toEqual(changes[30].value);
      // a replay of batch 1 reads at version 0: from the table again, as it was then
      const replay = await store.get(op, changes.map((c) => c.key), 0);
      expect(store.stats().readRequests - before).toBeGreaterThan(0);
      expect(replay.get(changes[0].key.id)?.value).toEqual(changes[0].value);
    });
  });

  describe('when a value is large', () => {
    it('stores values above the compression threshold gzipped and reads them back', async () => {
      const store = newStore({ compressAboveBytes: 1024 });
      const op = windowOp();
      const big = { rows: Array.from({ length: 5000 }, (_, i) => `row-${i}`) };
      await store.commit(op, 0, [put('big', MINUTE, big)]);
      expect((await reopen(store).get(op, [key('big', MINUTE)], 0)).get('big')?.value).toEqual(big);
    });

    it('refuses a value above the DynamoDB item limit, naming the key and the limit', async () => {
      const store = newStore({ compressAboveBytes: 10_000_000 });
      const op = windowOp();
      const huge = 'x'.repeat(410 * 1024);
      const err = await store.commit(op, 0, [put('huge', MINUTE, huge)]).catch((e) => e);
      expect(err).toBeInstanceOf(SluiceError);
      expect(err.message).toMatch(/`huge`/);
      expect(err.message).toMatch(/409600 bytes/);
      expect(err.details).toMatchObject({ key: 'huge', limitBytes: 409600 });
    });
  });

  describe('when the stored state does not match the store', () => {
    it('refuses another shard count for an existing namespace', async () => {
      const store = newStore();
      await store.commit(windowOp(), 0, [put('a', MINUTE, 1)]);
      await expect(reopen(store, { shards: 8 }).get(windowOp(), [key('a', MINUTE)], 0)).rejects.toThrow(/shards=4.*shards=8/);
    });

    it('refuses to commit a batch older than the stored state', async () => {
      const store = newStore();
      await store.commit(windowOp(), 5, [put('a', MINUTE, 1)]);
      await expect(store.commit(windowOp(), 3, [put('a', MINUTE, 2)])).rejects.toThrow(/already at version 5, ahead of batch 3/);
    });

    it('refuses a directory changed by another writer during the commit', async () => {
      const store = newStore();
      const op = windowOp();
      await store.commit(op, 0, [put('a', MINUTE, 1)]);
      const other = reopen(store);
      // Interleave: `other` commits batch 1 between this store's directory read and its write.
      const interleaving = {
        send: async (command: unknown) => {
          if (command instanceof BatchWriteItemCommand) await other.commit(op, 1, [put('b', MINUTE, 2)]);
          return dynamodb.send(command as never);
        },
      } as unknown as DynamoDBClient;
      await expect(reopen(store, { client: interleaving }).commit(op, 2, [put('c', MINUTE, 3)])).rejects.toThrow(/read at version 0, now at 1\): another run writes the same namespace/);
    });
  });

  describe('request handling (fake client, no network)', () => {
    const table = 'fake-table';
    const fakeStore = (client: DynamoDBClient) =>
      new DynamoDbStateStore({ client, tableName: table, namespace: 'q1', baseDelayMs: 1, maxDelayMs: 2 });

    // (The fake table never holds a directory, so every commit is a first one: + 1 PutItem for the layout.)
    it.each([0, 1, 24, 25, 26, 99, 251])('a batch touching %i keys costs ceil(K/25) + 1 write requests', async (k) => {
      const { client, calls } = fakeClient(table);
      const store = fakeStore(client);
      await store.commit(windowOp(), 0, manyChanges(k, 0));
      expect(calls.BatchWriteItem ?? 0).toBe(Math.ceil(k / 25));
      expect(calls.PutItem).toBe(2);
      expect(store.stats().writeRequests).toBe(Math.ceil(k / 25) + 2);
      // Reads: the directory plus ceil(K/100) BatchGetItem for the keys' current items.
      expect(store.stats().readRequests).toBe(1 + Math.ceil(k / 100));
    });

    it('retries unprocessed items with backoff', async () => {
      const { client, calls } = fakeClient(table, { unprocessedOnce: true });
      const store = fakeStore(client);
      await store.commit(windowOp(), 0, manyChanges(10, 0));
      expect(calls.BatchWriteItem).toBe(2);
      expect(store.stats()).toMatchObject({ writes: 12, retries: 1 });
    });

    it('asks again for the keys BatchGetItem left unprocessed', async () => {
      const { client, calls } = fakeClient(table, { unprocessedKeysOnce: true });
      const store = fakeStore(client);
      await store.commit(windowOp(), 0, manyChanges(10, 0));
      expect(calls.BatchGetItem).toBe(2);
      expect(store.stats()).toMatchObject({ readRequests: 1 + 2, retries: 1 });
    });

    it('gives up on items still unprocessed after maxAttempts, with a retriable error and every attempt counted', async () => {
      const { client, calls } = fakeClient(table, { unprocessedAlways: true });
      const store = new DynamoDbStateStore({ client, tableName: table, namespace: 'q1', maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 });
      const err = await store.commit(windowOp(), 0, manyChanges(10, 0)).catch((e) => e);
      expect(err).toBeInstanceOf(SluiceError);
      expect(err.retriable).toBe(true);
      expect(err.message).toMatch(/BatchWriteItem on table fake-table left 10 items unprocessed after 3 attempts: raise the table's capacity/);
      expect(calls.BatchWriteItem).toBe(3);
      expect(store.stats()).toMatchObject({ writeRequests: 1 + 3, retries: 2, writes: 1 });
    });

    it('refuses bad options before any request', () => {
      const { client } = fakeClient(table);
      const bad: Partial<DynamoDbStateStoreOptions>[] = [{ tableName: 'x' }, { namespace: 'a#b' }, { shards: 0 }, { maxConcurrency: 1.5 }, { compressAboveBytes: -1 }, { maxAttempts: 0 }, { baseDelayMs: 10, maxDelayMs: 5 }];
      for (const over of bad) {
        expect(() => new DynamoDbStateStore({ client, tableName: table, namespace: 'q1', ...over })).toThrow(InvalidOptionError);
      }
      expect(() => new DynamoDbStateStore({ client, tableName: table, namespace: 'q1', shards: 0 })).toThrow(/shards \(0\) must be an integer of at least 1: leave it out for 4/);
    });

    it('retries throttling and wraps other errors with their cause', async () => {
      const { client, calls } = fakeClient(table, { throttleOnce: true });
      const store = fakeStore(client);
      await store.commit(windowOp(), 0, [put('a', MINUTE, 1)]);
      expect(calls.GetItem).toBe(2);

      const failing = { send: async () => Promise.reject(Object.assign(new Error('no such table'), { name: 'ResourceNotFoundException' })) } as unknown as DynamoDBClient;
      const err = await fakeStore(failing).count(windowOp(), 0).catch((e) => e);
      expect(err).toBeInstanceOf(SluiceError);
      expect(err.retriable).toBe(false);
      expect(err.message).toMatch(/ResourceNotFoundException.*ensureStateTable/);
      expect(err.cause?.name).toBe('ResourceNotFoundException');
    });
  });

  // -------------------------------------------------------------------------------------------
  // Issue 14 holes (each reproduced on DynamoDB Local before its fix)

  describe('when DynamoDB TTL removes expired items before a late replay (hole 2)', () => {
    it('keeps a tombstone of batch N, the only copy of the value at N-1, for the retention (30 days): a replay 2 days later reads N-1 as it was', async () => {
      const store = newStore();
      const op = windowOp();
      await store.commit(op, 0, [put('a', MINUTE, { n: 1 }), put('b', MINUTE, { n: 2 })]);
      // Batch 1 evicts `a` and crashes after its state commit, before commits/1.
      await store.commit(op, 1, [del('a', MINUTE)]);
      now += 2 * DAY;
      await expireTtl(now);
      const replay = reopen(store);
      expect((await replay.get(op, [key('a', MINUTE)], 0)).get('a')?.value).toEqual({ n: 1 });
      expect((await replay.expired(op, 10 * MINUTE, 0)).map((e) => e.key.id)).toEqual(['a', 'b']);
      expect(await replay.count(op, 0)).toBe(2);
    });

    it('sets ttl = commit time + retention, and says the retention to the executor (retentionMs)', async () => {
      const store = newStore({ ttlSeconds: 3600 });
      expect(store.retentionMs).toBe(3600_000);
      expect(newStore().retentionMs).toBe(30 * DAY);
      const op = sessionOp();
      await store.commit(op, 0, [put('a', MINUTE, 1)]);
      await store.commit(op, 1, [del('a', MINUTE)]);
      now += 3600_000 - 1000;
      await expireTtl(now);
      expect((await reopen(store).expired(op, 10 * MINUTE, 0)).map((e) => e.key.id)).toEqual(['a']);
    });
  });

  describe('when a grouping value is longer than a sort key holds (hole 3c)', () => {
    const longId = (c: string) => `["${c.repeat(2048)}"]`;

    it.each([
      ['fixed eviction', windowOp()],
      ['moving eviction', sessionOp()],
    ])('stores a 2 KB id under its sha256 and reads it back by get, all and expired (%s)', async (_, op) => {
      const store = newStore();
      const [x, y] = [longId('x'), longId('y')];
      await store.commit(op, 0, [put(x, MINUTE, 1), put(y, 2 * MINUTE, 2), put('short', MINUTE, 3)]);
      const fresh = reopen(store);
      const got = await fresh.get(op, [key(x, MINUTE), key(y, 2 * MINUTE)], 0);
      expect([got.get(x)?.value, got.get(y)?.value]).toEqual([1, 2]);
      expect((await fresh.all(op, 0)).map((e) => [e.key.id.slice(0, 4), e.value])).toEqual([['["xx', 1], ['["yy', 2], ['shor', 3]]);
      expect((await fresh.expired(op, MINUTE, 0)).map((e) => e.key.id)).toEqual([x, 'short']);
      await fresh.commit(op, 1, [del(x, MINUTE)]);
      expect((await reopen(store).all(op, 1)).map((e) => e.key.id)).toEqual([y, 'short']);
      expect((await reopen(store).get(op, [key(x, MINUTE)], 0)).get(x)?.value).toEqual(1);
    });

    it('refuses to read an item whose stored id is not the id asked for (a hash collision), never returns it', async () => {
      const store = newStore();
      const op = windowOp();
      const x = longId('x');
      await store.commit(op, 0, [put(x, MINUTE, 1)]);
      const [item] = (await scanNamespace(store.namespace)).filter((i) => i.id !== undefined);
      item.id = { S: longId('z') };
      await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: item }));
      await expect(reopen(store).get(op, [key(x, MINUTE)], 0)).rejects.toThrow(/stored under the same sha256/);
    });
  });

  describe('when a state value cannot fit in an item (hole 3d)', () => {
    it('check() refuses it before any write, naming the operator, the key, the size, the limit and the fix', async () => {
      const store = newStore();
      const op = windowOp();
      // Random text: gzip cannot shrink it under the limit.
      const huge = require('node:crypto').randomBytes(420 * 1024).toString('base64');
      const before = store.stats();
      const err = await store.check!(op, 0, [put('["k1"]', MINUTE, { max: huge }), put('["k2"]', MINUTE, 1)]).catch((e: any) => e);
      expect(err).toBeInstanceOf(SluiceError);
      expect(err.message).toMatch(/operator `agg0`.*\["k1"\].*\d{6} bytes.*409600 bytes.*per-key state/);
      expect(store.stats().writes).toBe(before.writes);
      expect(await store.count(op, 0)).toBe(0);
      await expect(store.check!(op, 0, [put('["k2"]', MINUTE, 'x'.repeat(300 * 1024))])).resolves.toBeUndefined();
    });

    it('counts both versions: a value that fits alone but not next to the version before it is refused', async () => {
      const store = newStore({ compressAboveBytes: 10_000_000 });
      const op = windowOp();
      await store.commit(op, 0, [put('a', MINUTE, 'x'.repeat(250 * 1024))]);
      await expect(store.check!(op, 1, [put('a', MINUTE, 'y'.repeat(250 * 1024))])).rejects.toThrow(/two versions/);
      await expect(reopen(store, { compressAboveBytes: 10_000_000 }).check!(op, 0, [put('a', MINUTE, 'y'.repeat(250 * 1024))])).resolves.toBeUndefined();
    });
  });

  describe('when a stalled run writes after another run took its lease (hole 4)', () => {
    it("refuses the stale run's commit with LeaseLostError and keeps the newer run's value", async () => {
      const leaseKey = uniqueName('lease');
      const lease = () => new DynamoDbLease({ client: dynamodb, tableName, leaseKey, clock });
      const a = newStore();
      const b = reopen(a);
      const op = windowOp();
      const tokenA = (await lease().acquire('A', MINUTE))!;
      await a.commit(op, 0, [put('k', MINUTE, 10), put('j', MINUTE, 1)], tokenA);
      await a.get(op, [key('k', MINUTE)], 0);
      // A stalls past its lease; B takes over with a higher token and commits batch 1.
      now += 2 * MINUTE;
      const tokenB = (await lease().acquire('B', MINUTE))!;
      expect(tokenB.token).toBeGreaterThan(tokenA.token);
      await b.get(op, [key('k', MINUTE)], 0);
      await b.commit(op, 1, [put('k', MINUTE, 12)], tokenB);
      // A's delayed commit of batch 1 lands now.
      const err = await a.commit(op, 1, [put('k', MINUTE, 11)], tokenA).catch((e: any) => e);
      expect(err).toBeInstanceOf(LeaseLostError);
      expect(err.retriable).toBe(false);
      expect(err.message).toMatch(new RegExp(`token ${tokenA.token}.*token ${tokenB.token}`));
      expect((await reopen(a).get(op, [key('k', MINUTE)], 1)).get('k')?.value).toBe(12);
      expect((await reopen(a).get(op, [key('k', MINUTE)], 0)).get('k')?.value).toBe(10);
    });

    it("refuses the stale run's directory even when none of its items was touched by the newer run", async () => {
      const a = newStore();
      const op = windowOp();
      await a.commit(op, 0, [put('k', MINUTE, 1)], { owner: 'A', token: 3, expiresAtMs: now + MINUTE });
      await reopen(a).commit(op, 1, [put('j', MINUTE, 2)], { owner: 'B', token: 4, expiresAtMs: now + MINUTE });
      await expect(a.commit(op, 2, [put('i', MINUTE, 3)], { owner: 'A', token: 3, expiresAtMs: now + MINUTE })).rejects.toBeInstanceOf(LeaseLostError);
      // The directory stays B's: version 2 was never committed, and a read at 1 sees B's batch.
      const fresh = reopen(a);
      expect(await fresh.count(op, 1)).toBe(2);
      expect((await fresh.all(op, 1)).map((e) => e.key.id)).toEqual(['j', 'k']);
      await expect(fresh.commit(op, 2, [put('h', MINUTE, 4)], { owner: 'B', token: 4, expiresAtMs: now + MINUTE })).resolves.toBeUndefined();
    });

    it('writes every item conditionally, writeConcurrency at a time: requests per batch of 1,000 keys', async () => {
      const store = newStore({ writeConcurrency: 16 });
      const op = windowOp();
      const changes = Array.from({ length: 1000 }, (_, i) => put(`k${i}`, MINUTE, i));
      const fence = { owner: 'A', token: 1, expiresAtMs: now + MINUTE };
      await store.commit(op, 0, changes, fence);
      const s0 = store.stats();
      await store.commit(op, 1, changes.map((c) => put(c.key.id, MINUTE, 'next')), fence);
      const s1 = store.stats();
      // 1,000 conditional PutItem + the directory; reads: the directory and the cached items.
      expect(s1.writeRequests - s0.writeRequests).toBe(1001);
      expect(s1.readRequests - s0.readRequests).toBe(1);
      expect(() => newStore({ writeConcurrency: 0 })).toThrow(InvalidOptionError);
    });
  });

  describe('when the watermark delay, and so the granularity, changes between runs (hole 8)', () => {
    it.each([true, false])('reads and writes with the granularity stored with the state (fixedEviction %s)', async (fixedEviction) => {
      const first = { operatorId: 'dedup0', fixedEviction, evictionGranularityMs: 10_000 };
      const store = newStore();
      await store.commit(first, 0, [put('a', 15_000, 1), put('b', 95_000, 2)]);
      const later = { ...first, evictionGranularityMs: 60_000 };
      const next = reopen(store);
      expect((await next.get(later, [key('a', 15_000), key('b', 95_000)], 0)).size).toBe(2);
      expect((await next.expired(later, 20_000, 0)).map((e) => e.key.id)).toEqual(['a']);
      await next.commit(later, 1, [del('a', 15_000), put('c', 25_000, 3)]);
      const again = reopen(store);
      expect((await again.all(later, 1)).map((e) => e.key.id)).toEqual(['b', 'c']);
      expect((await again.expired(first, 30_000, 1)).map((e) => e.key.id)).toEqual(['c']);
      expect(await again.count(later, 1)).toBe(2);
    });
  });

  it('leaves no item of a namespace outside its partitions', async () => {
    // Sanity check on the layout: every partition key starts with namespace#operator#.
    const store = newStore();
    const op = sessionOp();
    await store.commit(op, 0, [put('a', MINUTE, 1), put('b', null, 2)]);
    const ns = store.namespace;
    const dir = await dynamodb.send(
      new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `${ns}#${op.operatorId}#dir` } } }),
    );
    expect(dir.Items).toHaveLength(1);
    const index = await dynamodb.send(
      new QueryCommand({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: `${ns}#${op.operatorId}#i#1` } } }),
    );
    expect(index.Items?.map((i) => i.sk.S)).toEqual(['a']);
  });
});
