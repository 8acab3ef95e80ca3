/**
 * What DynamoDbStateStore (state-store.ts) stands on: its options, checked; the heads, manifests
 * and pages of its slices (per operator and partition, in the packed layout of state-layout.ts),
 * read through its caches; and every request it sends, counted and retried. The commit
 * (state-commit.ts) and the reads (state-store.ts) are built on it.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { type Clock, type OperatorStateSpec, type StateKey, systemClock } from '../../engine/ports';
import { mapLimit } from '../request/concurrency';
import { RetryableResult, type RetryPolicy, retryPolicy } from '../request/retry';
import { BATCH_GET_MAX, checkClient, checkTableName, conditional, type Item, sendDynamoDb } from './requests';
import {
  contentOf,
  type FreeSlot,
  type Head,
  LAYOUT_FORMAT,
  legacyDirectoryKey,
  type Manifest,
  type ManifestRecord,
  type ManifestRef,
  PAGE_SHARDS,
  PAGE_TARGET_BYTES,
  type PageEntry,
  type PageRef,
  parseHead,
  parseManifest,
  parsePage,
  SliceKeys,
  slotOf,
  type StoredLayout,
} from './state-layout';
import { DynamoDbStateCache } from './state-cache';
import type { DynamoDbStateStoreOptions } from './state-store-options';

/** The slices of a DynamoDbStateStore, their caches and its requests (its versioning: state-commit.ts, state-store.ts). */
export abstract class DynamoDbStateSlices {
  readonly description: string;
  readonly namespace: string;
  readonly partitions: number;
  protected readonly client: DynamoDBClient;
  protected readonly tableName: string;
  protected readonly maxConcurrency: number;
  protected readonly clock: Clock;
  private readonly retry: RetryPolicy;
  protected readonly compressAboveBytes: number;
  protected readonly pageFillBytes: number;

  /** Heads by slice, as read or as this store last wrote them (null: none). */
  protected readonly heads = new Map<string, Head | null>();
  /** Heads being read, by slice: a second caller waits for the same read. */
  private readonly headReads = new Map<string, Promise<Head | null>>();
  /** Manifests and page entries by slice and ref (immutable): this store's own, or one several stores share. */
  protected readonly cache: DynamoDbStateCache;
  /** Operators checked for state of the per-key layout. */
  private readonly legacyChecked = new Set<string>();
  protected counters = {
    reads: 0,
    writes: 0,
    deletes: 0,
    pagesWritten: 0,
    pagesIntoFreeSlots: 0,
    slotsTaken: 0,
    evictionPagesWritten: 0,
    pageBytesWritten: 0,
    changedBytes: 0,
    requests: 0,
    readRequests: 0,
    writeRequests: 0,
    retries: 0,
  };

  constructor(opts: DynamoDbStateStoreOptions) {
    checkClient(opts.client, 'DynamoDbStateStore');
    checkTableName(opts.tableName, 'DynamoDbStateStore tableName');
    if (typeof opts.namespace !== 'string' || opts.namespace === '' || opts.namespace.includes('#')) {
      throw new InvalidOptionError(
        `DynamoDbStateStore namespace (${JSON.stringify(opts.namespace)}) must be non-empty and free of '#', which separates the parts of the partition key: use the query id`,
      );
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.namespace = opts.namespace;
    this.partitions = intOption('partitions', opts.partitions, 1, 1);
    this.maxConcurrency = intOption('maxConcurrency', opts.maxConcurrency, 8, 1);
    this.compressAboveBytes = intOption('compressAboveBytes', opts.compressAboveBytes, 0, 0);
    this.cache = opts.cache ?? new DynamoDbStateCache(intOption('cacheMaxEntries', opts.cacheMaxEntries, 250_000, 0));
    this.pageFillBytes = intOption('pageFillBytes', opts.pageFillBytes, PAGE_TARGET_BYTES, 200);
    if (this.pageFillBytes > PAGE_TARGET_BYTES) {
      throw new InvalidOptionError(
        `DynamoDbStateStore pageFillBytes (${this.pageFillBytes}) must be at most ${PAGE_TARGET_BYTES}: a write unit covers 1 KB of item`,
      );
    }
    this.clock = opts.clock ?? systemClock;
    this.retry = retryPolicy(opts, 'DynamoDbStateStore');
    this.description = `dynamodb://${this.tableName}/${this.namespace}`;
  }

  // ---------------------------------------------------------------------------------------------
  // Heads and manifests

  protected sliceKeys(op: OperatorStateSpec, partitions?: readonly number[]): SliceKeys[] {
    const all = Array.from({ length: this.partitions }, (_, p) => p);
    return (partitions === undefined ? all : all.filter((p) => partitions.includes(p))).map((p) => new SliceKeys(this.namespace, op.operatorId, p));
  }

  protected partitionOf(op: OperatorStateSpec, key: StateKey): number {
    const p = key.partition ?? 0;
    if (!Number.isInteger(p) || p < 0 || p >= this.partitions) {
      throw new SluiceError(
        `state key of operator \`${op.operatorId}\` has partition ${p}, but ${this.description} has ${this.partitions} partitions: the query's statePartitions and the store's partitions must be the same number`,
      );
    }
    return p;
  }

  /** Starts reading the heads of `op`'s slices (in `partitions`) that this store has not read: see StateStore.readAhead. */
  readAhead(op: OperatorStateSpec, partitions?: readonly number[]): void {
    // (an operator or partition this store refuses is refused by the reads themselves, with the reason)
    let slices: SliceKeys[];
    try {
      slices = this.sliceKeys(op, partitions);
    } catch {
      return;
    }
    for (const keys of slices) this.headOf(op, keys).catch(() => undefined);
  }

  /** The head of a slice (cached once read or written by this store), its layout checked; one read at a time. */
  protected headOf(op: OperatorStateSpec, keys: SliceKeys): Promise<Head | null> {
    const id = sliceId(keys);
    if (this.heads.has(id)) return Promise.resolve(this.heads.get(id)!);
    let reading = this.headReads.get(id);
    if (!reading) {
      reading = this.readHead(op, keys);
      this.headReads.set(id, reading);
      // (settled: the head is in `heads`, or the next call reads again)
      const done = () => this.headReads.delete(id);
      reading.then(done, done);
    }
    return reading;
  }

  private async readHead(op: OperatorStateSpec, keys: SliceKeys): Promise<Head | null> {
    const id = sliceId(keys);
    const out = await this.send('read', 'GetItem', () =>
      this.client.send(new GetItemCommand({ TableName: this.tableName, Key: keys.head(), ConsistentRead: true })),
    );
    const head = out.Item ? parseHead(out.Item) : null;
    if (head) {
      this.counters.reads += 1;
      this.checkLayout(op, keys, head.layout);
    } else {
      await this.checkNoLegacyState(op);
    }
    this.heads.set(id, head);
    return head;
  }

  /** The manifest ref visible at `version` (null: the slice was empty then). */
  protected refAt(op: OperatorStateSpec, keys: SliceKeys, head: Head | null, version: number): ManifestRef | null {
    if (head === null) return null;
    if (head.version <= version) return head.cur;
    if (head.prev === null || head.prev.v <= version) return head.prev;
    throw new SluiceError(
      `state of operator \`${op.operatorId}\` partition ${keys.partition} in ${this.description} is no longer retained at version ${version} (the store keeps versions ${head.prev.v} and ${head.version}): only the last committed version and the one before it are readable, so this is a bug in the caller: report it`,
      { details: { operatorId: op.operatorId, version, current: head.version, previous: head.prev.v } },
    );
  }

  protected async manifestAt(op: OperatorStateSpec, keys: SliceKeys, version: number): Promise<{ manifest: Manifest; layout: StoredLayout } | null> {
    const head = await this.headOf(op, keys);
    const ref = this.refAt(op, keys, head, version);
    if (ref === null || head === null) return null;
    return { manifest: await this.loadManifest(keys, ref), layout: head.layout };
  }

  protected async loadManifest(keys: SliceKeys, ref: ManifestRef): Promise<Manifest> {
    return (await this.loadManifestRecord(keys, ref)).pages;
  }

  /** The manifest with its free slots. */
  protected async loadManifestRecord(keys: SliceKeys, ref: ManifestRef): Promise<ManifestRecord> {
    const cached = this.cache.manifest(sliceId(keys), refId(ref));
    if (cached) return cached;
    const wanted = Array.from({ length: ref.c }, (_, i) => keys.manifestChunk(ref, i));
    const found = await this.batchGet(wanted, `manifest ${refId(ref)} of ${keys.prefix}`, () => true);
    const manifest = parseManifest(wanted.map((k) => found.get(itemKey(k))!));
    this.cache.rememberManifest(sliceId(keys), refId(ref), manifest);
    return manifest;
  }

  /** Layout and partition count must match. */
  private checkLayout(op: OperatorStateSpec, keys: SliceKeys, stored: StoredLayout): void {
    if (stored.format !== LAYOUT_FORMAT || stored.partitions !== this.partitions || stored.fixedEviction !== op.fixedEviction) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` partition ${keys.partition} in ${this.description} was written with ${describeLayout(stored)}, not partitions=${this.partitions}, fixedEviction=${op.fixedEviction}: a layout is fixed with the checkpoint, so pass the original statePartitions or use a new checkpoint (and so a new namespace)`,
        { details: { operatorId: op.operatorId, stored } },
      );
    }
  }

  /** Refuses a namespace that holds state of the per-key layout (sluice before the packed layout). */
  private async checkNoLegacyState(op: OperatorStateSpec): Promise<void> {
    if (this.legacyChecked.has(op.operatorId)) return;
    const out = await this.send('read', 'GetItem', () =>
      this.client.send(new GetItemCommand({ TableName: this.tableName, Key: legacyDirectoryKey(this.namespace, op.operatorId), ProjectionExpression: 'pk' })),
    );
    if (out.Item) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} is in the per-key layout of an earlier sluice, which this version does not read: finish with the earlier version, or start a new checkpoint location (a new query id) and backfill`,
      );
    }
    this.legacyChecked.add(op.operatorId);
  }

  // ---------------------------------------------------------------------------------------------
  // Pages

  /**
   * The entries of these pages of a slice (by ref), from the cache or BatchGetItem. The cache is
   * keyed by the page's ref, which no other page ever has, never by the item it is stored in: a
   * free slot holds another page after the commit that wrote into it.
   */
  protected async loadPages(keys: SliceKeys, refs: readonly Pick<PageRef, 'ref' | 'slot'>[]): Promise<Map<string, PageEntry[]>> {
    const out = new Map<string, PageEntry[]>();
    const missing = new Map<string, Pick<PageRef, 'ref' | 'slot'>>();
    for (const p of refs) {
      if (out.has(p.ref) || missing.has(p.ref)) continue;
      const hit = this.cache.page(sliceId(keys), p.ref);
      if (hit) out.set(p.ref, hit);
      else missing.set(p.ref, p);
    }
    if (missing.size === 0) return out;
    // An eventually consistent read may still see what a free slot held before (asked again, strongly).
    const holds = new Map([...missing.values()].map((p) => [itemKey(keys.page(slotOf(p))), p.ref]));
    const found = await this.batchGet(
      [...missing.values()].map((p) => keys.page(slotOf(p))),
      `pages of ${keys.prefix}`,
      (item) => contentOf(item) === holds.get(itemKey(item)),
    );
    for (const p of missing.values()) {
      const item = found.get(itemKey(keys.page(slotOf(p))))!;
      const entries = parsePage(item, `${keys.prefix} ${p.ref}`);
      out.set(p.ref, entries);
      this.cache.rememberPage(sliceId(keys), p.ref, entries);
    }
    return out;
  }

  /**
   * These items, every one of which must exist (a head names them) and hold what `holds` checks:
   * BatchGetItem, eventually consistent; keys it leaves unprocessed are asked for again; keys not
   * found (or found holding something else: a stale replica of a free slot written since) are
   * asked for once more with a strongly consistent read, then reported as removed.
   */
  private async batchGet(wanted: Item[], what: string, holds: (item: Item) => boolean): Promise<Map<string, Item>> {
    const found = new Map<string, Item>();
    const read = async (keys: Item[], consistent: boolean) => {
      await mapLimit(chunk(keys, BATCH_GET_MAX), this.maxConcurrency, async (batch) => {
        let left: Item[] = batch;
        await this.send('read', 'BatchGetItem', async () => {
          const res = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: left, ConsistentRead: consistent } } }));
          for (const item of res.Responses?.[this.tableName] ?? []) {
            this.counters.reads += 1;
            if (holds(item)) found.set(itemKey(item), item);
          }
          left = res.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
          if (left.length > 0) throw new RetryableResult(`left ${left.length} keys unprocessed`, { table: this.tableName });
        });
      });
    };
    await read(wanted, false);
    const absent = wanted.filter((k) => !found.has(itemKey(k)));
    if (absent.length > 0) await read(absent, true);
    const gone = wanted.filter((k) => !found.has(itemKey(k)));
    if (gone.length > 0) {
      throw new SluiceError(
        `${gone.length} of the ${what} in ${this.description} that the state's head names are missing (first: ${gone[0].sk.S}): DynamoDB TTL removed them (state written before live state stopped carrying a TTL) or they were deleted outside sluice: restore the table (point-in-time recovery) or start a new checkpoint and backfill`,
        { details: { missing: gone.length, first: gone[0].sk.S } },
      );
    }
    return found;
  }

  protected async batchWrite(items: Item[]): Promise<void> {
    await this.batchRequests(items.map((Item) => ({ PutRequest: { Item } })));
  }

  /**
   * The page items of a slice stored under keys of batch `version` (one Query per page shard):
   * the pages an attempt of that batch wrote under its own keys, named by a head or not.
   */
  protected async pagesOfVersion(keys: SliceKeys, version: number): Promise<FreeSlot[]> {
    const out: FreeSlot[] = [];
    await mapLimit(
      Array.from({ length: PAGE_SHARDS }, (_, g) => g),
      this.maxConcurrency,
      async (g) => {
        let start: Item | undefined;
        do {
          const res = await this.send('read', 'Query', () =>
            this.client.send(
              new QueryCommand({
                TableName: this.tableName,
                KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
                ExpressionAttributeValues: { ':pk': { S: keys.pageShard(g) }, ':v': { S: `${version}#` } },
                ProjectionExpression: 'pk, sk, r',
                ConsistentRead: true,
                ExclusiveStartKey: start,
              }),
            ),
          );
          for (const item of res.Items ?? []) {
            this.counters.reads += 1;
            out.push({ slot: item.sk.S!.split('#').join('.'), content: contentOf(item) });
          }
          start = res.LastEvaluatedKey;
        } while (start);
      },
    );
    return out;
  }

  /**
   * Writes `item` (a page) into the key of a free slot, on the condition that the slot still holds
   * `slot.content`: true when written; else what it holds now (null: nothing), and nothing written.
   */
  protected async putIntoSlot(item: Item, slot: FreeSlot): Promise<true | { holds: string | null }> {
    const fresh = slot.content === slot.slot;
    const put = await conditional(
      this.send('write', 'PutItem', () =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: fresh ? 'attribute_exists(pk) AND attribute_not_exists(#r)' : '#r = :r',
            ExpressionAttributeNames: { '#r': 'r' },
            ...(fresh ? {} : { ExpressionAttributeValues: { ':r': { S: slot.content } } }),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      ),
    );
    if (put.written) {
      this.counters.writes += 1;
      return true;
    }
    return { holds: put.stored ? contentOf(put.stored) : null };
  }

  /** Deletes these items (by key; at most BATCH_WRITE_MAX): a delete of an absent item is a no-op. */
  protected async batchDelete(keys: Item[]): Promise<void> {
    await this.batchRequests(keys.map((Key) => ({ DeleteRequest: { Key } })));
  }

  private async batchRequests(first: WriteRequest[]): Promise<void> {
    let requests = first;
    // Unprocessed items (throttling) are sent again, with backoff.
    await this.send('write', 'BatchWriteItem', async () => {
      const res = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } }));
      const left = res.UnprocessedItems?.[this.tableName] ?? [];
      const puts = (rs: WriteRequest[]) => rs.filter((r) => r.PutRequest !== undefined).length;
      this.counters.writes += puts(requests) - puts(left);
      this.counters.deletes += requests.length - puts(requests) - (left.length - puts(left));
      requests = left;
      if (left.length > 0) throw new RetryableResult(`left ${left.length} items unprocessed`, { table: this.tableName });
    });
  }

  protected validateOp(op: OperatorStateSpec): void {
    if (!op.operatorId || op.operatorId.includes('#')) {
      throw new SluiceError(`state operatorId (${JSON.stringify(op.operatorId)}) must be non-empty and free of '#': use ids like "agg0"`);
    }
    if (!Number.isSafeInteger(op.evictionGranularityMs) || op.evictionGranularityMs <= 0) {
      throw new SluiceError(
        `evictionGranularityMs (${op.evictionGranularityMs}) of operator \`${op.operatorId}\` must be a positive integer number of milliseconds, e.g. the window slide`,
      );
    }
  }

  /** One DynamoDB request, counted at every HTTP attempt and retried through withRetry. */
  protected send<T>(kind: 'read' | 'write', operation: string, call: () => Promise<T>): Promise<T> {
    return sendDynamoDb(
      this.retry,
      `DynamoDB ${operation} on table ${this.tableName}`,
      () => {
        this.counters.requests += 1;
        if (kind === 'read') this.counters.readRequests += 1;
        else this.counters.writeRequests += 1;
        return call();
      },
      () => (this.counters.retries += 1),
    );
  }
}

// -----------------------------------------------------------------------------------------------
// Helpers

/** The index of the page covering `hash`: the last with lo <= hash (pages[0].lo is 0). */
export function locate(pages: readonly PageRef[], hash: number): number {
  let lo = 0;
  let hi = pages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pages[mid].lo <= hash) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function sliceId(keys: SliceKeys): string {
  return keys.prefix;
}

export function refId(ref: ManifestRef): string {
  return `${ref.v}.${ref.w}`;
}

function itemKey(item: Item): string {
  return `${item.pk.S}\u0000${item.sk.S}`;
}

function describeLayout(l: StoredLayout): string {
  return `format=${l.format}, partitions=${l.partitions}, fixedEviction=${l.fixedEviction}`;
}

export function chunk<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** The option's value, or its default; InvalidOptionError unless an integer of at least `min`. */
function intOption(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(`DynamoDbStateStore ${name} (${value}) must be an integer of at least ${min}: leave it out for ${fallback}`);
  }
  return value;
}
