/**
 * The StateStore port on one DynamoDB table (partition key `pk` S, sort key `sk` S, optional TTL
 * attribute `ttl`).
 *
 * Versioning. Every item keeps two versions: the current one (`v`, value, evictAt) and the one
 * before it (`pv`, ...). A delete writes a tombstone (`d`) instead of removing the item, so the
 * value before the delete stays readable until the next commit overwrites the item. What a read
 * at version V sees:
 *
 *     v  <= V            -> the current value (absent when it is a tombstone)
 *     pv <= V < v        -> the previous value (absent when it is a tombstone or there is none)
 *     V < pv             -> no longer retained: an error (the engine reads only at N-1 and N)
 *
 * Commit N over an item whose `v` is already N (a crashed attempt of N) keeps that item's `pv`,
 * so the replay reads N-1 exactly as the first attempt did, and ends where a crash-free run ends:
 *
 *     attempt 1 of N:  get@N-1 ... put k1(v=N,pv=3) put k2(v=N,pv=2)  X crash (k3, dir not written)
 *     attempt 2 of N:  get@N-1 sees k1@3, k2@2, k3@.. (the prev of k1,k2: what attempt 1 saw)
 *                      put k1(v=N,pv=3) put k2(v=N,pv=2) put k3(v=N,pv=..)  put dir(v=N)
 *
 * Where items live is state-layout.ts: with fixedEviction a partition per eviction bucket and
 * shard; otherwise a partition per shard plus an index partition per bucket; and per operator one
 * directory item counting the live keys per bucket. So `count` is one GetItem, and `expired` reads only the buckets whose range starts at or below
 * the watermark (then filters by the exact evictAt); nothing scans the table. Index items carry
 * no value: whether one is present at a version follows from the key's own item, so a commit
 * writes them without reading them, and `expired` checks every candidate against the key's item.
 *
 * The directory is written last, after every key of the batch. A crash before it leaves the
 * directory of N-1 current, which is exactly what the replay of N must read; a crash after it
 * leaves it at v=N with pv pointing at N-1's, which a read at N-1 also sees. The directory of N is
 * always computed as (directory visible at N-1) + (changes of N measured against what each key
 * was at N-1), so it does not depend on how far a crashed attempt got. Before an operator's first
 * commit, a directory at version -1 records the layout alone, so that the granularity stored with
 * the state (used by every later run, whatever its watermark delay) exists before any item.
 *
 * Fencing. A commit given the run's lease writes every item with its token (`f`) as a conditional
 * PutItem (fenceCondition), `writeConcurrency` at a time, and fences the directory the same way:
 * a newer run's token defeats it (LeaseLostError). Without a lease it uses BatchWriteItem.
 *
 * Retention. A tombstone (the only copy of the value before a delete, which a replay of its batch
 * reads) expires by TTL `ttlSeconds` (30 days) after its commit; `retentionMs` tells the executor,
 * which refuses a replay of a batch planned longer ago.
 *
 * `check` plans a commit (the same encoding, the same size check) before any effect of the batch;
 * the `commit` of the same changes writes that plan.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, LeaseLostError, SluiceError } from '../../engine/errors';
import { encodeStateJson } from '../../engine/state-json';
import { Clock, LeaseHandle, OperatorStateSpec, StateChange, StateEntry, StateKey, StateStore, systemClock } from '../../engine/ports';
import { compareStrings, mapLimit } from '../request/concurrency';
import { RetryableResult, RetryOptions, RetryPolicy, retryPolicy } from '../request/retry';
import { forEachPartitionItem } from './query';
import { BATCH_GET_MAX, BATCH_WRITE_MAX, checkClient, checkTableName, conditional, Item, sendDynamoDb } from './requests';
import {
  cacheKey,
  checkStoredId,
  decodeValue,
  Directory,
  EMPTY_DIRECTORY,
  encodeDirectory,
  fenceCondition,
  encodeItem,
  encodeValue,
  NULL_BUCKET,
  parseDirectory,
  parseItem,
  RawDirectory,
  RawItem,
  Slot,
  StateLayout,
  storageKey,
  storedFence,
  StoredLayout,
  tombstoneTtl,
} from './state-layout';

export interface DynamoDbStateStoreOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** One per query (e.g. the query id). Must not contain `#`. */
  readonly namespace: string;
  /**
   * Partitions per eviction bucket (fixedEviction) or for the whole key space (otherwise). Part of
   * the stored layout: it cannot change for an existing namespace.
   * @default 4
   */
  readonly shards?: number;
  /** Maximum DynamoDB requests in flight per store call. @default 8 */
  readonly maxConcurrency?: number;
  /** Conditional PutItem requests in flight during a fenced commit (one per item). @default 16 */
  readonly writeConcurrency?: number;
  /**
   * How long a tombstone lives before DynamoDB TTL removes it; also how old a batch may be when
   * it is replayed (the executor refuses older replays, see `retentionMs`). Far above any outage
   * a pipeline is left in, and equal to the DynamoDB sink's and the effect guard's marker TTL, so
   * that the refusal covers them too. @default 2592000 (30 days)
   */
  readonly ttlSeconds?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Values whose JSON exceeds this are stored gzipped in a binary attribute. @default 32768 */
  readonly compressAboveBytes?: number;
  /** Raw items remembered between reads and the next commit (per store instance). @default 100000 */
  readonly cacheMaxItems?: number;
}

/** Counters of DynamoDB traffic since the store was created (for benchmarks, never for logic). */
export interface DynamoDbStateStoreStats {
  /** Items read (returned by GetItem, BatchGetItem and Query). */
  readonly reads: number;
  /** Items written (puts in BatchWriteItem and PutItem). */
  readonly writes: number;
  /** DynamoDB requests (HTTP attempts), retries included. */
  readonly requests: number;
  /** GetItem, BatchGetItem and Query calls. */
  readonly readRequests: number;
  /** BatchWriteItem and PutItem calls. */
  readonly writeRequests: number;
  /** Requests repeated after throttling, a 5xx or with unprocessed items. */
  readonly retries: number;
}

/** The condition clauses of a directory write, by name. */
const DIRECTORY = {
  /** No commit of this operator yet. */
  absent: 'attribute_not_exists(pk)',
  /** Still the directory this commit read (`:read`: its version). */
  asRead: '#v = :read',
  /** Already written by an earlier attempt of this commit (`:mine`: its version). */
  ours: '#v = :mine',
} as const;

/** Marks a cached lookup that found no item. */
const ABSENT = null;
type Cached = RawItem | typeof ABSENT;

export class DynamoDbStateStore implements StateStore {
  readonly description: string;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  readonly namespace: string;
  private readonly layout: StateLayout;
  private readonly maxConcurrency: number;
  private readonly ttlSeconds: number;
  private readonly clock: Clock;
  private readonly retry: RetryPolicy;
  private readonly compressAboveBytes: number;
  private readonly cacheMaxItems: number;

  /**
   * Raw items read since the operator's last commit, by `pk \0 sk`, per operator, tagged with the
   * version they were read at. A commit of N uses only items read at N-1; any other read version
   * starts a new cache, and every commit (or failed commit) drops it.
   */
  private readonly cache = new Map<string, { version: number; items: Map<string, Cached> }>();
  /** Operators whose stored layout was compared with this store's. */
  private readonly layoutChecked = new Set<string>();
  /** Per operator, the evictionGranularityMs its state was first written with, which it keeps. */
  private readonly storedGranularity = new Map<string, number>();
  /** The plan `check` made, which the `commit` of the same changes writes. */
  private planned: { operatorId: string; version: number; changes: StateChange[]; plan: CommitPlan } | null = null;
  private readonly writeConcurrency: number;
  private counters = { reads: 0, writes: 0, requests: 0, readRequests: 0, writeRequests: 0, retries: 0 };

  constructor(opts: DynamoDbStateStoreOptions) {
    checkClient(opts.client, 'DynamoDbStateStore');
    checkTableName(opts.tableName, 'DynamoDbStateStore tableName');
    if (typeof opts.namespace !== 'string' || opts.namespace === '' || opts.namespace.includes('#')) {
      throw new InvalidOptionError(`DynamoDbStateStore namespace (${JSON.stringify(opts.namespace)}) must be non-empty and free of '#', which separates the parts of the partition key: use the query id`);
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.namespace = opts.namespace;
    this.layout = new StateLayout(opts.namespace, intOption('shards', opts.shards, 4, 1));
    this.maxConcurrency = intOption('maxConcurrency', opts.maxConcurrency, 8, 1);
    this.writeConcurrency = intOption('writeConcurrency', opts.writeConcurrency, 16, 1);
    this.ttlSeconds = intOption('ttlSeconds', opts.ttlSeconds, DEFAULT_TTL_SECONDS, 1);
    this.compressAboveBytes = intOption('compressAboveBytes', opts.compressAboveBytes, 32 * 1024, 0);
    this.cacheMaxItems = intOption('cacheMaxItems', opts.cacheMaxItems, 100_000, 0);
    this.clock = opts.clock ?? systemClock;
    this.retry = retryPolicy(opts, 'DynamoDbStateStore');
    this.description = `dynamodb://${this.tableName}/${this.namespace}`;
  }

  /** A version superseded by a commit stays readable this long (its tombstone's TTL). */
  get retentionMs(): number {
    return this.ttlSeconds * 1000;
  }

  stats(): DynamoDbStateStoreStats {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  async get(given: OperatorStateSpec, keys: StateKey[], version: number): Promise<Map<string, StateEntry>> {
    const op = await this.resolve(given);
    const locations = new Map<string, { pk: string; sk: string; id: string }>();
    for (const key of keys) {
      const loc = this.layout.keyLocation(op, key);
      locations.set(cacheKey(loc.pk, loc.sk), { ...loc, id: key.id });
    }
    const raw = await this.loadRaw(op, [...locations.values()], version);
    const out = new Map<string, StateEntry>();
    for (const [ck, item] of raw) {
      const id = locations.get(ck)!.id;
      if (item !== ABSENT) checkStoredId(op, item, id);
      const entry = this.visibleEntry(op, item, version);
      if (entry) out.set(entry.key.id, entry);
    }
    return out;
  }

  async expired(given: OperatorStateSpec, watermarkMs: number, version: number): Promise<StateEntry[]> {
    this.validateOp(given);
    const dir = await this.directoryAt(given, version);
    const op = this.withStored(given);
    const lastBucket = Math.floor(watermarkMs / op.evictionGranularityMs);
    const buckets = Object.keys(dir.b).filter((b) => b !== NULL_BUCKET && Number(b) <= lastBucket);
    let items: RawItem[];
    if (op.fixedEviction) {
      const pks = buckets.flatMap((b) => this.layout.fixedPks(op, b));
      items = await this.queryAll(op, pks, version);
    } else {
      const index = await this.queryAll(op, buckets.map((b) => this.layout.indexPk(op, b)), null);
      const sks = new Set<string>();
      for (const entry of index) {
        // A candidate when present at `version`, or when the index item no longer knows (the key's
        // own item decides below): the index may over-approximate, never under-approximate.
        const vis = visibility(entry, version);
        if (vis === 'unknown' || (vis !== null && !vis.deleted)) sks.add(entry.sk);
      }
      const locs = [...sks].map((sk) => ({ pk: this.layout.lookupPk(op, sk), sk }));
      items = [...(await this.loadRaw(op, locs, version)).values()].filter((i): i is RawItem => i !== ABSENT);
    }
    const out: StateEntry[] = [];
    for (const item of items) {
      const entry = this.visibleEntry(op, item, version);
      if (entry && entry.key.evictAt !== null && entry.key.evictAt <= watermarkMs) out.push(entry);
    }
    return out.sort(byId);
  }

  async all(given: OperatorStateSpec, version: number): Promise<StateEntry[]> {
    this.validateOp(given);
    let op = given;
    let pks: string[];
    if (given.fixedEviction) {
      const dir = await this.directoryAt(given, version);
      op = this.withStored(given);
      pks = Object.keys(dir.b).flatMap((b) => this.layout.fixedPks(op, b));
    } else {
      op = await this.resolve(given);
      pks = this.layout.lookupPks(op);
    }
    const items = await this.queryAll(op, pks, version);
    const out: StateEntry[] = [];
    for (const item of items) {
      const entry = this.visibleEntry(op, item, version);
      if (entry) out.push(entry);
    }
    return out.sort(byId);
  }

  async count(op: OperatorStateSpec, version: number): Promise<number> {
    this.validateOp(op);
    return (await this.directoryAt(op, version)).n;
  }

  // ---------------------------------------------------------------------------------------------
  // Commit

  /**
   * Plans the commit of `changes` as `commit` would (the same encoding), and throws the error the
   * commit would throw for an item above DynamoDB's 400 KB, before anything is written. The
   * `commit` of the same changes array writes this plan without planning again.
   */
  async check(op: OperatorStateSpec, version: number, changes: StateChange[]): Promise<void> {
    this.validateOp(op);
    checkVersion(version);
    this.planned = null;
    const plan = await this.plan(op, version, changes);
    this.planned = { operatorId: op.operatorId, version, changes, plan };
  }

  async commit(given: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle): Promise<void> {
    this.validateOp(given);
    checkVersion(version);
    let after: Map<string, Cached> | null = null;
    const planned = this.planned;
    this.planned = null;
    try {
      const plan =
        planned !== null && planned.operatorId === given.operatorId && planned.version === version && planned.changes === changes
          ? planned.plan
          : await this.plan(given, version, changes);
      await this.write(plan.op, version, plan, fence ?? null);
      after = plan.after;
    } finally {
      // Whatever happened, raw items read before this commit no longer describe the table. After
      // a commit that went through, the items read for it and the items it wrote do: they serve
      // the next batch's reads (at this version), so the keys it touches again are not read back.
      this.cache.delete(given.operatorId);
      if (after !== null && after.size <= this.cacheMaxItems) this.cache.set(given.operatorId, { version, items: after });
    }
  }

  /** Writes a plan: the items (fenced: one conditional PutItem each), then the directory. */
  private async write(op: OperatorStateSpec, version: number, plan: CommitPlan, fence: LeaseHandle | null): Promise<void> {
    if (plan.rawDir === null) {
      // The first commit of this operator records its layout before any item, so a replay after a
      // crash here places its items as the crashed attempt did, whatever options it runs with.
      await this.writeDirectory(op, LAYOUT_ONLY, null, encodeDirectory(this.layout, op, LAYOUT_ONLY, EMPTY_DIRECTORY, null, null), fence);
      plan = { ...plan, rawDir: { cur: { version: LAYOUT_ONLY, dir: EMPTY_DIRECTORY }, prev: null, layout: this.layout.layoutOf(op) } };
    }
    if (fence === null) await mapLimit(chunk(plan.puts, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchWrite(batch));
    else await mapLimit(plan.puts, this.writeConcurrency, (item) => this.fencedPut(op, version, item, fence));
    // Last: the directory makes version N whole.
    const prev = plan.rawDir!.cur.version === version ? plan.rawDir!.prev : plan.rawDir!.cur;
    const item = encodeDirectory(this.layout, op, version, plan.dir, prev && prev.version !== LAYOUT_ONLY ? prev : null, null);
    await this.writeDirectory(op, version, plan.rawDir, item, fence);
  }

  /** One item, written only when no newer lease token wrote it (fenceCondition). */
  private async fencedPut(op: OperatorStateSpec, version: number, item: Item, fence: LeaseHandle): Promise<void> {
    const cond = fenceCondition(fence.token);
    const put = await conditional(
      this.send('write', 'PutItem', () =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: { ...item, f: { N: String(fence.token) } },
            ConditionExpression: cond.expression,
            ExpressionAttributeNames: cond.names,
            ExpressionAttributeValues: cond.values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      ),
    );
    if (!put.written) throw this.fenced(op, version, fence, storedFence(put.stored));
    this.counters.writes += 1;
  }

  private fenced(op: OperatorStateSpec, version: number, fence: LeaseHandle, stored: number | null): LeaseLostError {
    return new LeaseLostError(
      `state write of batch ${version} (operator \`${op.operatorId}\`) in ${this.description} was refused: this run's fencing token ${fence.token} is older than token ${stored} that wrote the item since: ` +
        'another run holds the lease; this run stops and batch ' + `${version} stays uncommitted (the lease holder replays it)`,
      { details: { operatorId: op.operatorId, batchId: version, token: fence.token, storedToken: stored } },
    );
  }

  /** The items and directory batch `version` writes, computed from what the state was at N-1. */
  private async plan(given: OperatorStateSpec, version: number, changes: StateChange[]): Promise<CommitPlan> {
    const rawDir = await this.readDirectory(given);
    const op = this.withStored(given);
    if (rawDir && rawDir.cur.version > version) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} is already at version ${rawDir.cur.version}, ahead of batch ${version} being committed: ` +
          'the checkpoint is older than the state (deleted or restored): use a new namespace (query id) with a fresh checkpoint, or delete this namespace\'s state',
        { details: { operatorId: op.operatorId, stateVersion: rawDir.cur.version, batchId: version } },
      );
    }
    const dirBefore = rawDir ? this.directoryVisible(op, rawDir, version - 1) : EMPTY_DIRECTORY;

    // Last change per id wins.
    const lastById = new Map<string, StateChange>();
    for (const change of changes) lastById.set(change.key.id, change);
    const locs = [...lastById.values()].map((c) => this.layout.keyLocation(op, c.key));
    const raw = await this.loadRaw(op, locs, version - 1);
    const after = new Map<string, Cached>(this.opCache(op, version - 1));

    const counts = new Map<string, number>(Object.entries(dirBefore.b));
    let live = dirBefore.n;
    const bump = (bucket: string, delta: number) => counts.set(bucket, (counts.get(bucket) ?? 0) + delta);
    const puts: Item[] = [];
    const ttl = tombstoneTtl(this.clock.now(), this.ttlSeconds);

    for (const change of lastById.values()) {
      const loc = this.layout.keyLocation(op, change.key);
      const item = raw.get(cacheKey(loc.pk, loc.sk)) ?? ABSENT;
      if (item !== ABSENT) checkStoredId(op, item, change.key.id);
      if (item && item.cur.version > version) {
        throw new SluiceError(
          `state key \`${change.key.id}\` of operator \`${op.operatorId}\` is already at version ${item.cur.version}, ahead of batch ${version}: ` +
            'the checkpoint is older than the state: use a new namespace with a fresh checkpoint, or delete this namespace\'s state',
          { details: { operatorId: op.operatorId, key: change.key.id, stateVersion: item.cur.version, batchId: version } },
        );
      }
      const before = this.visibleSlot(op, item, version - 1, change.key.id);
      const prev: Slot | null = item === ABSENT ? null : item.cur.version === version ? item.prev : item.cur;
      const deleted = change.value === null;
      const json = deleted ? undefined : encodeStateJson(change.value);
      const cur: Slot = {
        version,
        deleted,
        value: json === undefined ? undefined : encodeValue(json, this.compressAboveBytes),
        evictAt: deleted ? null : change.key.evictAt,
      };

      // The directory: what the key was at N-1 against what it is at N.
      const wasLive = before !== null;
      const isLive = !deleted;
      live += (isLive ? 1 : 0) - (wasLive ? 1 : 0);
      const bucketBefore = before === null ? null : this.layout.countBucket(op, loc, before.evictAt);
      const bucketAfter = isLive ? this.layout.countBucket(op, loc, cur.evictAt) : null;
      if (bucketBefore !== null) bump(bucketBefore, -1);
      if (bucketAfter !== null) bump(bucketAfter, +1);

      if (!op.fixedEviction) {
        puts.push(...this.indexWrites(op, change.key.id, item, before, version, bucketAfter, ttl));
      }
      // Nothing to write when the item already reads as the target at N.
      const ck = cacheKey(loc.pk, loc.sk);
      if (item === ABSENT ? deleted : sameSlot(item.cur, cur, json)) {
        after.set(ck, item);
        continue;
      }
      const written = encodeItem(op, loc, cur, prev, ttl, change.key.id, FENCE_PLACEHOLDER);
      delete written.f;
      puts.push(written);
      after.set(ck, parseItem(written));
    }

    const b: Record<string, number> = {};
    for (const [bucket, n] of [...counts.entries(), ['(all)', live] as const].sort(([x], [y]) => compareStrings(x, y))) {
      if (n < 0) {
        throw new SluiceError(
          `state directory of operator \`${op.operatorId}\` in ${this.description} would count ${n} keys in bucket ${bucket} after batch ${version}: ` +
            'the state was changed outside this store or by a concurrent run: restore the namespace from a consistent copy or start a new one',
          { details: { operatorId: op.operatorId, bucket, count: n, live, batchId: version } },
        );
      }
      if (n > 0 && bucket !== '(all)') b[bucket] = n;
    }

    const dir: Directory = { n: live, b };
    // Encoded once here for its size check; written (with its fence) by `write`.
    encodeDirectory(this.layout, op, version, dir, null, null);
    return { op, rawDir, puts, dir, after };
  }

  /**
   * Index items of a non-fixed key. Present at a version iff the key is live then with its evictAt
   * in the item's bucket, so their state at N-1 follows from the key's item and need not be read.
   * At N it follows too, unless an attempt of N crashed: its index items and the key's item went
   * in different requests, any subset of which may have landed. Then every bucket the key was,
   * may have been or will be in at N is written again.
   */
  private indexWrites(
    op: OperatorStateSpec,
    id: string,
    item: Cached,
    before: Slot | null,
    version: number,
    bucketAfter: string | null,
    ttl: number,
  ): Item[] {
    const bucketOf = (slot: Slot | null) =>
      slot === null || slot.deleted || slot.evictAt === null ? null : this.layout.bucketOf(op, slot.evictAt);
    const bucketBefore = bucketOf(before);
    const replay = item !== ABSENT && item.cur.version === version;
    // A crashed attempt of N may have written the key's index items for its own bucket.
    const bucketCrashed = replay ? bucketOf(item.cur) : null;
    const out: Item[] = [];
    for (const bucket of new Set([bucketBefore, bucketCrashed, bucketAfter])) {
      if (bucket === null) continue;
      const present = bucket === bucketAfter;
      // Without a crashed attempt, the index at N still reads as at N-1.
      if (!replay && present === (bucket === bucketBefore)) continue;
      const cur: Slot = { version, deleted: !present, evictAt: null };
      const prev: Slot | null = bucket === bucketBefore && before !== null ? { version: before.version, deleted: false, evictAt: null } : null;
      const index = encodeItem(op, { pk: this.layout.indexPk(op, bucket), sk: storageKey(id) }, cur, prev, ttl, id, FENCE_PLACEHOLDER, false);
      delete index.f;
      out.push(index);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Layout

  private validateOp(op: OperatorStateSpec): void {
    if (!op.operatorId || op.operatorId.includes('#')) {
      throw new SluiceError(`state operatorId (${JSON.stringify(op.operatorId)}) must be non-empty and free of '#': use ids like "agg0"`);
    }
    if (!Number.isSafeInteger(op.evictionGranularityMs) || op.evictionGranularityMs <= 0) {
      throw new SluiceError(
        `evictionGranularityMs (${op.evictionGranularityMs}) of operator \`${op.operatorId}\` must be a positive integer number of milliseconds, e.g. the window slide`,
      );
    }
  }

  /**
   * `op` as its state was written: the evictionGranularityMs stored with it replaces the given one
   * (it follows the watermark delay, which may change between runs, as Spark allows).
   */
  private async resolve(op: OperatorStateSpec): Promise<OperatorStateSpec> {
    this.validateOp(op);
    if (!this.layoutChecked.has(op.operatorId)) await this.readDirectory(op);
    return this.withStored(op);
  }

  private withStored(op: OperatorStateSpec): OperatorStateSpec {
    const g = this.storedGranularity.get(op.operatorId);
    return g === undefined || g === op.evictionGranularityMs ? op : { ...op, evictionGranularityMs: g };
  }

  /** Shards and fixedEviction must match; the granularity is taken from the stored layout. */
  private checkLayout(op: OperatorStateSpec, stored: StoredLayout): void {
    const mine = { ...this.layout.layoutOf(op), granularityMs: stored.granularityMs };
    if (stored.shards !== mine.shards || stored.fixedEviction !== mine.fixedEviction) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} was written with ${describeLayout(stored)}, not ${describeLayout(mine)}: ` +
          'a layout is fixed, so pass the original settings or use a new namespace (query id) with a fresh checkpoint',
        { details: { operatorId: op.operatorId, stored, given: mine } },
      );
    }
    if (Number.isSafeInteger(stored.granularityMs) && stored.granularityMs > 0) this.storedGranularity.set(op.operatorId, stored.granularityMs);
    this.layoutChecked.add(op.operatorId);
  }

  // ---------------------------------------------------------------------------------------------
  // Directory

  private async readDirectory(op: OperatorStateSpec): Promise<RawDirectory | null> {
    const out = await this.send('read', 'GetItem', () =>
      this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.layout.dirKey(op), ConsistentRead: true })),
    );
    if (!out.Item) {
      this.layoutChecked.add(op.operatorId);
      return null;
    }
    this.counters.reads += 1;
    const dir = parseDirectory(out.Item);
    this.checkLayout(op, dir.layout);
    return dir;
  }

  private async directoryAt(op: OperatorStateSpec, version: number): Promise<Directory> {
    const raw = await this.readDirectory(op);
    return raw ? this.directoryVisible(op, raw, version) : EMPTY_DIRECTORY;
  }

  private directoryVisible(op: OperatorStateSpec, raw: RawDirectory, version: number): Directory {
    if (raw.cur.version <= version) return raw.cur.dir;
    // No previous directory: the first commit is after `version`, when there was no state.
    if (raw.prev === null) return EMPTY_DIRECTORY;
    if (raw.prev.version <= version) return raw.prev.dir;
    throw new SluiceError(
      `state of operator \`${op.operatorId}\` in ${this.description} is no longer retained at version ${version} (the store keeps versions ${raw.prev.version} and ${raw.cur.version}): ` +
        'only the last committed version and the one before it are readable, so this is a bug in the caller: report it',
      { details: { operatorId: op.operatorId, version, current: raw.cur.version, previous: raw.prev.version } },
    );
  }

  /**
   * Puts directory `item` of `version`, fenced against another writer of this namespace: the
   * directory must still be the one read at the start of this commit (or already ours, when an
   * earlier attempt of this call landed), and, with a lease, not written by a newer token.
   */
  private async writeDirectory(op: OperatorStateSpec, version: number, raw: RawDirectory | null, item: Item, fence: LeaseHandle | null): Promise<void> {
    let condition = raw === null ? `${DIRECTORY.absent} OR ${DIRECTORY.ours}` : `${DIRECTORY.asRead} OR ${DIRECTORY.ours}`;
    const names: Record<string, string> = { '#v': 'v' };
    const values: Item = { ':mine': { N: String(version) } };
    if (raw !== null) values[':read'] = { N: String(raw.cur.version) };
    if (fence !== null) {
      const f = fenceCondition(fence.token);
      condition = `(${condition}) AND (${f.expression})`;
      Object.assign(names, f.names);
      Object.assign(values, f.values);
      item = { ...item, f: { N: String(fence.token) } };
    }
    const put = await conditional(
      this.send('write', 'PutItem', () =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: item,
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      ),
    );
    if (!put.written) {
      const storedToken = storedFence(put.stored);
      if (fence !== null && storedToken !== null && storedToken > fence.token) throw this.fenced(op, version, fence, storedToken);
      const stored = put.stored?.v?.N;
      throw new SluiceError(
        `state directory of operator \`${op.operatorId}\` in ${this.description} changed while batch ${version} was committing (read at version ${raw?.cur.version ?? 'none'}, now at ${stored ?? 'none'}): ` +
          'another run writes the same namespace; only one run per query may hold the lease, so check the lease table and the query id',
        { details: { operatorId: op.operatorId, batchId: version, readVersion: raw?.cur.version ?? null, storedVersion: stored === undefined ? null : Number(stored) } },
      );
    }
    this.counters.writes += 1;
    this.storedGranularity.set(op.operatorId, op.evictionGranularityMs);
  }

  // ---------------------------------------------------------------------------------------------
  // Items

  private visibleSlot(op: OperatorStateSpec, item: Cached, version: number, id: string): Slot | null {
    if (item === ABSENT) return null;
    const vis = visibility(item, version);
    if (vis === 'unknown') {
      throw new SluiceError(
        `state key \`${id}\` of operator \`${op.operatorId}\` is no longer retained at version ${version} (the store keeps versions ${item.prev!.version} and ${item.cur.version}): ` +
          'only the last committed version and the one before it are readable, so this is a bug in the caller: report it',
        { details: { operatorId: op.operatorId, key: id, version, current: item.cur.version, previous: item.prev!.version } },
      );
    }
    return vis === null || vis.deleted ? null : vis;
  }

  private visibleEntry(op: OperatorStateSpec, item: Cached, version: number): StateEntry | null {
    if (item === ABSENT) return null;
    const slot = this.visibleSlot(op, item, version, item.id);
    if (slot === null) return null;
    return { key: { id: item.id, evictAt: slot.evictAt }, value: decodeValue(slot.value!, item.id) };
  }

  // ---------------------------------------------------------------------------------------------
  // I/O

  /** The operator's cache of raw items read at `version` (a new one when it held another version). */
  private opCache(op: OperatorStateSpec, version: number): Map<string, Cached> {
    let c = this.cache.get(op.operatorId);
    if (!c || c.version !== version) this.cache.set(op.operatorId, (c = { version, items: new Map() }));
    return c.items;
  }

  private remember(cache: Map<string, Cached>, ck: string, item: Cached): void {
    if (cache.size < this.cacheMaxItems || cache.has(ck)) cache.set(ck, item);
  }

  /**
   * Raw items at these locations (ABSENT when missing), from the cache of reads at `version` or
   * BatchGetItem. Raw items do not depend on the version; the tag only bounds the cache's life.
   */
  private async loadRaw(op: OperatorStateSpec, locs: { pk: string; sk: string }[], version: number): Promise<Map<string, Cached>> {
    const out = new Map<string, Cached>();
    const cache = this.opCache(op, version);
    const missing: { pk: string; sk: string }[] = [];
    for (const loc of locs) {
      const ck = cacheKey(loc.pk, loc.sk);
      if (out.has(ck)) continue;
      if (cache.has(ck)) out.set(ck, cache.get(ck)!);
      else {
        out.set(ck, ABSENT);
        missing.push(loc);
      }
    }
    const seen = new Set<string>();
    const unique = missing.filter((l) => {
      const ck = cacheKey(l.pk, l.sk);
      return seen.has(ck) ? false : (seen.add(ck), true);
    });
    await mapLimit(chunk(unique, BATCH_GET_MAX), this.maxConcurrency, async (batch) => {
      const found = await this.batchGet(batch);
      for (const loc of batch) {
        const ck = cacheKey(loc.pk, loc.sk);
        const item = found.get(ck) ?? ABSENT;
        out.set(ck, item);
        this.remember(cache, ck, item);
      }
    });
    return out;
  }

  private async batchGet(locs: { pk: string; sk: string }[]): Promise<Map<string, RawItem>> {
    const found = new Map<string, RawItem>();
    let keys: Item[] = locs.map((l) => ({ pk: { S: l.pk }, sk: { S: l.sk } }));
    // Unprocessed keys (throttling) are asked for again, with backoff.
    await this.send('read', 'BatchGetItem', async () => {
      const res = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
      for (const raw of res.Responses?.[this.tableName] ?? []) {
        const item = parseItem(raw);
        found.set(cacheKey(item.pk, item.sk), item);
        this.counters.reads += 1;
      }
      keys = res.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      if (keys.length > 0) throw new RetryableResult(`left ${keys.length} keys unprocessed`, { table: this.tableName });
    });
    return found;
  }

  private async batchWrite(items: Item[]): Promise<void> {
    let requests: WriteRequest[] = items.map((Item) => ({ PutRequest: { Item } }));
    // Unprocessed items (throttling) are sent again, with backoff.
    await this.send('write', 'BatchWriteItem', async () => {
      const res = await this.client.send(new BatchWriteItemCommand({ RequestItems: { [this.tableName]: requests } }));
      const left = res.UnprocessedItems?.[this.tableName] ?? [];
      this.counters.writes += requests.length - left.length;
      requests = left;
      if (left.length > 0) throw new RetryableResult(`left ${left.length} items unprocessed`, { table: this.tableName });
    });
  }

  /**
   * Every raw item of these partitions (Query, paginated, strongly consistent), remembered in the
   * cache of reads at `cacheVersion` unless null (index items).
   */
  private async queryAll(op: OperatorStateSpec, pks: string[], cacheVersion: number | null): Promise<RawItem[]> {
    const cache = cacheVersion === null ? null : this.opCache(op, cacheVersion);
    const pages = await mapLimit(pks, this.maxConcurrency, async (pk) => {
      const items: RawItem[] = [];
      await forEachPartitionItem(this.client, this.tableName, pk, (request) => this.send('read', 'Query', request), (raw) => {
        const item = parseItem(raw);
        items.push(item);
        this.counters.reads += 1;
        if (cache) this.remember(cache, cacheKey(item.pk, item.sk), item);
      });
      return items;
    });
    return pages.flat();
  }

  /** One DynamoDB request, counted at every HTTP attempt and retried through withRetry. */
  private send<T>(kind: 'read' | 'write', operation: string, call: () => Promise<T>): Promise<T> {
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

/** What a commit writes: items (without their fence), then the directory; and the items after it. */
interface CommitPlan {
  /** The operator as its state is laid out (its stored granularity). */
  readonly op: OperatorStateSpec;
  readonly rawDir: RawDirectory | null;
  readonly puts: Item[];
  readonly dir: Directory;
  readonly after: Map<string, Cached>;
}

/** 30 days: above any outage a pipeline is credibly left in; the sink's and guard's markers live as long. */
const DEFAULT_TTL_SECONDS = 30 * 24 * 3600;

/** The version of a directory that records only the layout, before the operator's first commit. */
const LAYOUT_ONLY = -1;

/** The largest fence an item may get, for its size check before the token is known. */
const FENCE_PLACEHOLDER = Number.MAX_SAFE_INTEGER;

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new SluiceError(`state commit version (${version}) must be a non-negative integer batch id.`);
  }
}

function visibility(item: RawItem, version: number): Slot | null | 'unknown' {
  if (item.cur.version <= version) return item.cur;
  if (item.prev === null) return null;
  if (item.prev.version <= version) return item.prev;
  return 'unknown';
}

function sameSlot(a: Slot, b: Slot, json: string | undefined): boolean {
  if (a.deleted || b.deleted) return a.deleted && b.deleted;
  if (a.evictAt !== b.evictAt || !a.value) return false;
  return a.value.S !== undefined ? a.value.S === json : false;
}

function describeLayout(l: StoredLayout): string {
  return `shards=${l.shards}, evictionGranularityMs=${l.granularityMs}, fixedEviction=${l.fixedEviction}`;
}

/** Entries in id order, as the in-memory twin returns them. */
function byId(a: StateEntry, b: StateEntry): number {
  return compareStrings(a.key.id, b.key.id);
}

function chunk<T>(xs: T[], size: number): T[][] {
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
