/**
 * The StateStore port on one DynamoDB table (partition key `pk` S, sort key `sk` S, TTL attribute
 * `ttl`), in the packed layout of state-layout.ts: per (operator, partition) a head, immutable
 * manifests and immutable pages of about 1 KB.
 *
 * Versioning. The head names the manifest of the last commit (`cur`, at version v) and the one
 * visible before it (`prev`). What a read at version V sees:
 *
 *     v <= V               -> cur
 *     prev.v <= V < v      -> prev (none: the slice was empty then)
 *     V < prev.v           -> no longer retained: an error (the engine reads only at N-1 and N)
 *
 * A commit of N starts from what was visible at N-1, applies the batch's changes to the pages
 * they fall in, writes those pages anew (and a manifest listing them, under keys no earlier
 * attempt used), and then moves the head to it with one conditional PutItem. Nothing a reader can
 * see changes before that write, so a crash anywhere leaves N-1 readable as it was, and the
 * replay of N (head at N-1, or already at N with prev at N-1) writes what a crash-free run writes.
 *
 * Cost. A batch that changes K groups writes the pages they fall in, refilled to 1 KB of item
 * (itemSize over-estimates, so a page never bills 2): in a dense batch of small groups about
 * 1.1 × ⌈changed bytes / 1 KB⌉ write units, in a sparse one one page (1 WCU) per
 * group at most; plus the manifest (gzipped, ~10 bytes per page of the slice) and the head. An
 * eviction that empties a page drops it from the manifest and writes nothing: the page dies by TTL.
 * Reads are BatchGetItem of the pages the batch's keys fall in, eventually consistent (a page
 * is never changed after it is written; one found missing is asked for again, strongly).
 *
 * Retention. Manifests and pages carry a TTL of `ttlSeconds` (50 days) from when they were
 * written; a commit rewrites every live page older than a third of that, so what the current
 * version reads lives for at least 33 days more; `retentionMs` (60%: 30 days, as long as the
 * sink's markers) tells the executor how old a batch may be when it is replayed, and `keepAlive`
 * (called by the executor when a pipeline has not committed for a day) rewrites old pages of an
 * idle pipeline. A page found missing
 * (removed by TTL, or by hand) is an error that says so, never an empty state.
 *
 * Fencing. The head write is the only write a reader can see; given the run's lease it is
 * conditional on no newer token having written it (fenceCondition): a run that lost its lease
 * is refused with LeaseLostError and its pages stay unreferenced (TTL removes them).
 *
 * Partitions. `partitions` slices per operator, chosen by StateKey.partition; each has its own
 * head, versions and manifest, so partitions could be committed by different workers. The count
 * is recorded in every head: another count is refused.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { InvalidOptionError, LeaseLostError, SluiceError } from '../../engine/errors';
import { type Clock, type LeaseHandle, type OperatorStateSpec, type StateChange, type StateEntry, type StateKey, type StateStore, systemClock } from '../../engine/ports';
import { compareStrings, mapLimit } from '../request/concurrency';
import { RetryableResult, type RetryOptions, type RetryPolicy, retryPolicy } from '../request/retry';
import { BATCH_GET_MAX, BATCH_WRITE_MAX, checkClient, checkTableName, conditional, type Item, itemSize, sendDynamoDb } from './requests';
import {
  bucketOf,
  encodeHead,
  encodeManifest,
  encodePage,
  entryOrder,
  entryOfText,
  entryText,
  type Head,
  idHash,
  LAYOUT_FORMAT,
  legacyDirectoryKey,
  type Manifest,
  type ManifestRef,
  PAGE_TARGET_BYTES,
  type PageEntry,
  type PageRef,
  pageRef,
  parseHead,
  parseManifest,
  parsePage,
  SliceKeys,
  type StoredLayout,
} from './state-layout';

export interface DynamoDbStateStoreOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** One per query (e.g. the query id). Must not contain `#`. */
  readonly namespace: string;
  /**
   * State partitions per operator (the query's statePartitions): StateKey.partition is below it.
   * Recorded with the state: another count is refused. @default 1
   */
  readonly partitions?: number;
  /** Maximum DynamoDB requests in flight per store call. @default 8 */
  readonly maxConcurrency?: number;
  /**
   * How long a manifest or page lives after it is written (DynamoDB TTL). A commit rewrites live
   * pages older than a third of it; replays are allowed for 60% of it (`retentionMs`).
   * @default 4320000 (50 days, so replays are allowed for 30)
   */
  readonly ttlSeconds?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Pages whose JSON exceeds this are stored deflated in a binary attribute. @default 0 (every page) */
  readonly compressAboveBytes?: number;
  /** Page entries kept in memory between reads and commits (per store instance). @default 250000 */
  readonly cacheMaxEntries?: number;
  /** The size pages are refilled to, in bytes of item (at most 1,024: one write unit). @default 1024 */
  readonly pageFillBytes?: number;
}

/** Counters of DynamoDB traffic since the store was created (for benchmarks, never for logic). */
export interface DynamoDbStateStoreStats {
  /** Items read (heads, manifest chunks and pages returned). */
  readonly reads: number;
  /** Items written (pages, manifest chunks, heads). */
  readonly writes: number;
  /** Pages written. */
  readonly pagesWritten: number;
  /**
   * Of those, pages written only because keys were deleted (evictions): a run of pages whose
   * changes are all deletions. Each is at most 1 KB of item, one write unit; an eviction that
   * empties its pages writes none.
   */
  readonly evictionPagesWritten: number;
  /** Bytes of the pages' entries written (the changed state and what shares its pages). */
  readonly pageBytesWritten: number;
  /** Bytes of the state values the commits changed (the entries of changed keys, as JSON). */
  readonly changedBytes: number;
  /** DynamoDB requests (HTTP attempts), retries included. */
  readonly requests: number;
  /** GetItem and BatchGetItem calls. */
  readonly readRequests: number;
  /** BatchWriteItem and PutItem calls. */
  readonly writeRequests: number;
  /** Requests repeated after throttling, a 5xx or with unprocessed items. */
  readonly retries: number;
}

/** 50 days: a live page is rewritten after 16 2/3 days, so a version is readable for 33 days, and replays are allowed for 30 (as long as the sink's and guard's markers live). */
const DEFAULT_TTL_SECONDS = 50 * 24 * 3600;
/** How long the executor may wait before it calls keepAlive on an idle pipeline. */
const KEEP_ALIVE_AFTER_MS = 24 * 3600 * 1000;

/** The condition clauses of a head write. */
const HEAD = {
  absent: 'attribute_not_exists(pk)',
  asRead: '#v = :read',
  ours: '#v = :mine',
  fence: 'attribute_not_exists(#f) OR #f <= :fence',
} as const;

/** A change of one key, placed. */
interface Placed {
  readonly id: string;
  readonly hash: number;
  readonly evictAt: number | null;
  /** null: delete. */
  readonly value: StateChange['value'];
  readonly text: string | undefined;
}

/** What the commit of one slice writes. */
interface SlicePlan {
  readonly keys: SliceKeys;
  /** The head read (null: none yet). */
  readonly head: Head | null;
  /** The version the head moves to. */
  readonly version: number;
  /** The manifest built upon: visible at N-1 (null: none), or the current one for keepAlive. */
  readonly base: ManifestRef | null;
  /** What the head's `prev` becomes. */
  readonly prev: ManifestRef | null;
  readonly ref: ManifestRef;
  readonly manifest: Manifest;
  readonly pages: { ref: string; item: Item; entries: PageEntry[] }[];
  readonly manifestItems: Item[];
  readonly layout: StoredLayout;
  /** Bytes of the entries of the keys the batch changed. */
  readonly changedBytes: number;
  /** Pages written for runs whose changes were all deletions. */
  readonly evictionPages: number;
}

export class DynamoDbStateStore implements StateStore {
  readonly description: string;
  readonly namespace: string;
  readonly partitions: number;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly maxConcurrency: number;
  private readonly ttlSeconds: number;
  private readonly clock: Clock;
  private readonly retry: RetryPolicy;
  private readonly compressAboveBytes: number;
  private readonly cacheMaxEntries: number;
  private readonly pageFillBytes: number;

  /** Heads by slice, as read or as this store last wrote them (null: none). */
  private readonly heads = new Map<string, Head | null>();
  /** Manifests by slice and ref (immutable). */
  private readonly manifests = new Map<string, Manifest>();
  /** Page entries by slice and page ref (immutable), oldest first. */
  private readonly pages = new Map<string, PageEntry[]>();
  private cachedEntries = 0;
  /** Operators checked for state of the per-key layout. */
  private readonly legacyChecked = new Set<string>();
  /** The plan `check` made, which the `commit` of the same changes writes. */
  private planned: { operatorId: string; version: number; changes: StateChange[]; plans: SlicePlan[] } | null = null;
  private counters = { reads: 0, writes: 0, pagesWritten: 0, evictionPagesWritten: 0, pageBytesWritten: 0, changedBytes: 0, requests: 0, readRequests: 0, writeRequests: 0, retries: 0 };

  constructor(opts: DynamoDbStateStoreOptions) {
    checkClient(opts.client, 'DynamoDbStateStore');
    checkTableName(opts.tableName, 'DynamoDbStateStore tableName');
    if (typeof opts.namespace !== 'string' || opts.namespace === '' || opts.namespace.includes('#')) {
      throw new InvalidOptionError(`DynamoDbStateStore namespace (${JSON.stringify(opts.namespace)}) must be non-empty and free of '#', which separates the parts of the partition key: use the query id`);
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.namespace = opts.namespace;
    this.partitions = intOption('partitions', opts.partitions, 1, 1);
    this.maxConcurrency = intOption('maxConcurrency', opts.maxConcurrency, 8, 1);
    this.ttlSeconds = intOption('ttlSeconds', opts.ttlSeconds, DEFAULT_TTL_SECONDS, 3);
    this.compressAboveBytes = intOption('compressAboveBytes', opts.compressAboveBytes, 0, 0);
    this.cacheMaxEntries = intOption('cacheMaxEntries', opts.cacheMaxEntries, 250_000, 0);
    this.pageFillBytes = intOption('pageFillBytes', opts.pageFillBytes, PAGE_TARGET_BYTES, 200);
    if (this.pageFillBytes > PAGE_TARGET_BYTES) {
      throw new InvalidOptionError(`DynamoDbStateStore pageFillBytes (${this.pageFillBytes}) must be at most ${PAGE_TARGET_BYTES}: a write unit covers 1 KB of item`);
    }
    this.clock = opts.clock ?? systemClock;
    this.retry = retryPolicy(opts, 'DynamoDbStateStore');
    this.description = `dynamodb://${this.tableName}/${this.namespace}`;
  }

  /** How old a batch may be when it is replayed: its versions live at least this long. */
  get retentionMs(): number {
    return Math.floor(this.ttlSeconds * 0.6) * 1000;
  }

  /** After this long without a commit, the executor calls keepAlive. */
  get keepAliveAfterMs(): number {
    return Math.min(KEEP_ALIVE_AFTER_MS, Math.floor(this.ttlSeconds / 30) * 1000);
  }

  stats(): DynamoDbStateStoreStats {
    return { ...this.counters };
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  async get(op: OperatorStateSpec, keys: StateKey[], version: number): Promise<Map<string, StateEntry>> {
    this.validateOp(op);
    const bySlice = new Map<number, StateKey[]>();
    for (const key of keys) {
      const p = this.partitionOf(op, key);
      let list = bySlice.get(p);
      if (!list) bySlice.set(p, (list = []));
      list.push(key);
    }
    const out = new Map<string, StateEntry>();
    await mapLimit([...bySlice], this.maxConcurrency, async ([partition, list]) => {
      const keysOf = new SliceKeys(this.namespace, op.operatorId, partition);
      const visible = await this.manifestAt(op, keysOf, version);
      if (visible === null) return;
      const { manifest, layout } = visible;
      const wanted = new Map<string, string[]>();
      for (const key of list) {
        const pages = manifest.get(bucketOf(op, layout.granularityMs, key.evictAt));
        if (!pages || pages.length === 0) continue;
        const page = pages[locate(pages, idHash(key.id))];
        let ids = wanted.get(page.ref);
        if (!ids) wanted.set(page.ref, (ids = []));
        ids.push(key.id);
      }
      const loaded = await this.loadPages(keysOf, [...wanted.keys()]);
      for (const [ref, ids] of wanted) {
        const entries = loaded.get(ref)!;
        const want = new Set(ids);
        for (const e of entries) if (want.has(e.id)) out.set(e.id, toEntry(e, partition));
      }
    });
    return out;
  }

  async expired(op: OperatorStateSpec, watermarkMs: number, version: number, partitions?: readonly number[]): Promise<StateEntry[]> {
    return this.scanPages(op, version, (p) => p.minEvictAt !== null && p.minEvictAt <= watermarkMs, (e) => e.evictAt !== null && e.evictAt <= watermarkMs, partitions);
  }

  async all(op: OperatorStateSpec, version: number, partitions?: readonly number[]): Promise<StateEntry[]> {
    return this.scanPages(op, version, () => true, () => true, partitions);
  }

  async count(op: OperatorStateSpec, version: number): Promise<number> {
    this.validateOp(op);
    let n = 0;
    await mapLimit(this.sliceKeys(op), this.maxConcurrency, async (keys) => {
      const ref = this.refAt(op, keys, await this.headOf(op, keys), version);
      n += ref?.n ?? 0;
    });
    return n;
  }

  /** Entries of the pages `pageWanted` picks, in every slice, filtered by `entryWanted`, by id. */
  private async scanPages(
    op: OperatorStateSpec,
    version: number,
    pageWanted: (p: PageRef) => boolean,
    entryWanted: (e: PageEntry) => boolean,
    partitions?: readonly number[],
  ): Promise<StateEntry[]> {
    this.validateOp(op);
    const out: StateEntry[] = [];
    await mapLimit(this.sliceKeys(op, partitions), this.maxConcurrency, async (keys) => {
      const visible = await this.manifestAt(op, keys, version);
      if (visible === null) return;
      const refs: string[] = [];
      for (const pages of visible.manifest.values()) for (const p of pages) if (pageWanted(p)) refs.push(p.ref);
      const loaded = await this.loadPages(keys, refs);
      for (const ref of refs) for (const e of loaded.get(ref)!) if (entryWanted(e)) out.push(toEntry(e, keys.partition));
    });
    return out.sort((a, b) => compareStrings(a.key.id, b.key.id));
  }

  // ---------------------------------------------------------------------------------------------
  // Commit

  /**
   * Plans the commit of `changes` as `commit` would, and throws the error the commit would throw
   * for a page above DynamoDB's 400 KB, before anything is written. The `commit` of the same
   * changes array writes this plan without planning again.
   */
  async check(op: OperatorStateSpec, version: number, changes: StateChange[]): Promise<void> {
    this.validateOp(op);
    checkVersion(version);
    this.planned = null;
    const plans = await this.plan(op, version, changes, false);
    this.planned = { operatorId: op.operatorId, version, changes, plans };
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]): Promise<void> {
    this.validateOp(op);
    checkVersion(version);
    const planned = this.planned;
    this.planned = null;
    const plans =
      planned !== null && planned.operatorId === op.operatorId && planned.version === version && planned.changes === changes && partitions === undefined
        ? planned.plans
        : await this.plan(op, version, changes, false, partitions);
    await this.write(op, plans, fence ?? null);
  }

  /**
   * Rewrites the live pages that have aged past a third of their TTL, at the version the state is
   * at, for a pipeline that has not committed for a while (the executor calls it). Reads and
   * writes nothing else; a no-op when nothing is old.
   */
  async keepAlive(op: OperatorStateSpec, version: number, fence?: LeaseHandle): Promise<void> {
    this.validateOp(op);
    const plans = await this.plan(op, version, [], true);
    await this.write(op, plans, fence ?? null);
  }

  private async write(op: OperatorStateSpec, plans: SlicePlan[], fence: LeaseHandle | null): Promise<void> {
    // Pages and manifests first: nobody sees them until a head names them.
    const items = plans.flatMap((p) => [...p.pages.map((page) => page.item), ...p.manifestItems]);
    await mapLimit(chunk(items, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchWrite(batch));
    for (const plan of plans) {
      this.counters.pagesWritten += plan.pages.length;
      this.counters.changedBytes += plan.changedBytes;
      this.counters.evictionPagesWritten += plan.evictionPages;
      for (const page of plan.pages) this.counters.pageBytesWritten += itemSize(page.item);
    }
    await mapLimit(plans, this.maxConcurrency, (plan) => this.writeHead(op, plan, fence));
    for (const plan of plans) {
      const id = sliceId(plan.keys);
      this.manifests.set(`${id}@${refId(plan.ref)}`, plan.manifest);
      // Cached as read back from its text: the engine's objects may change after the commit.
      for (const page of plan.pages) this.remember(`${id}@${page.ref}`, page.entries.map(detached));
    }
  }

  /** The head of `plan` at `version`, fenced: still the head this commit read (or ours), and no newer token. */
  private async writeHead(op: OperatorStateSpec, plan: SlicePlan, fence: LeaseHandle | null): Promise<void> {
    const version = plan.version;
    const head: Head = { version, cur: plan.ref, prev: plan.prev, layout: plan.layout, fence: fence?.token ?? null };
    let condition = plan.head === null ? `${HEAD.absent} OR ${HEAD.ours}` : `${HEAD.asRead} OR ${HEAD.ours}`;
    const names: Record<string, string> = { '#v': 'v' };
    const values: Item = { ':mine': { N: String(version) } };
    if (plan.head !== null) values[':read'] = { N: String(plan.head.version) };
    if (fence !== null) {
      condition = `(${condition}) AND (${HEAD.fence})`;
      names['#f'] = 'f';
      values[':fence'] = { N: String(fence.token) };
    }
    const put = await conditional(
      this.send('write', 'PutItem', () =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: encodeHead(plan.keys, head),
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      ),
    );
    const id = sliceId(plan.keys);
    if (!put.written) {
      this.heads.delete(id);
      const stored = put.stored ? parseHead(put.stored) : null;
      if (fence !== null && stored?.fence != null && stored.fence > fence.token) {
        throw new LeaseLostError(
          `state write of batch ${version} (operator \`${op.operatorId}\`) in ${this.description} was refused: this run's fencing token ${fence.token} is older than token ${stored.fence} that wrote the state since: another run holds the lease; this run stops and batch ${version} stays uncommitted (the lease holder replays it)`,
          { details: { operatorId: op.operatorId, batchId: version, token: fence.token, storedToken: stored.fence } },
        );
      }
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` partition ${plan.keys.partition} in ${this.description} changed while batch ${version} was committing (read at version ${plan.head?.version ?? 'none'}, now at ${stored?.version ?? 'none'}): another run writes the same namespace; only one run per query may hold the lease, so check the lease table and the query id`,
        { details: { operatorId: op.operatorId, batchId: version, readVersion: plan.head?.version ?? null, storedVersion: stored?.version ?? null } },
      );
    }
    this.counters.writes += 1;
    this.heads.set(id, head);
  }

  /** The slices batch `version` writes: every slice with a change, and every slice with old pages. */
  private async plan(op: OperatorStateSpec, version: number, changes: StateChange[], refreshOnly: boolean, partitions?: readonly number[]): Promise<SlicePlan[]> {
    // Last change per id wins.
    const bySlice = new Map<number, Map<string, StateChange>>();
    for (const change of changes) {
      const p = this.partitionOf(op, change.key);
      if (partitions !== undefined && !partitions.includes(p)) {
        throw new SluiceError(`state change \`${change.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is in partition ${p}, outside the partitions [${partitions.join(', ')}] this commit writes`);
      }
      let m = bySlice.get(p);
      if (!m) bySlice.set(p, (m = new Map()));
      m.set(change.key.id, change);
    }
    const nowSec = Math.floor(this.clock.now() / 1000);
    const writer = randomBytes(4).toString('hex');
    // (scoped to some partitions, the others' heads are left alone: their tasks commit them)
    const plans = await mapLimit(this.sliceKeys(op, partitions), this.maxConcurrency, (keys) =>
      this.planSlice(op, keys, version, [...(bySlice.get(keys.partition)?.values() ?? [])], writer, nowSec, refreshOnly),
    );
    return plans.filter((p): p is SlicePlan => p !== null);
  }

  private async planSlice(
    op: OperatorStateSpec,
    keys: SliceKeys,
    version: number,
    changes: StateChange[],
    writer: string,
    nowSec: number,
    refreshOnly: boolean,
  ): Promise<SlicePlan | null> {
    const head = await this.headOf(op, keys);
    // keepAlive rewrites the state where it is (a batch committed to the state but not to the
    // checkpoint keeps its head, and its prev for the replay); a commit builds on what N-1 saw.
    if (refreshOnly) {
      if (head === null) return null;
      version = head.version;
    }
    if (head && head.version > version) {
      // keepAlive at the last committed batch while the next one's state awaits its replay: the
      // replay, in the same run, rewrites what is old; refusing here would stop the recovery.
      if (refreshOnly) return null;
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} is already at version ${head.version}, ahead of batch ${version} being committed: the checkpoint is older than the state (deleted or restored): use a new namespace (query id) with a fresh checkpoint, or delete this namespace's state`,
        { details: { operatorId: op.operatorId, stateVersion: head.version, batchId: version } },
      );
    }
    const base = refreshOnly ? head!.cur : this.refAt(op, keys, head, version - 1);
    const prev = refreshOnly ? head!.prev : base;
    const layout: StoredLayout = head?.layout ?? { format: LAYOUT_FORMAT, partitions: this.partitions, granularityMs: op.evictionGranularityMs, fixedEviction: op.fixedEviction };
    const manifest = base === null ? new Map<string, readonly PageRef[]>() : await this.loadManifest(keys, base);
    const oldBefore = nowSec - Math.floor(this.ttlSeconds / 3);

    // Changes by bucket, then by the page they fall in.
    const byBucket = new Map<string, Placed[]>();
    for (const c of changes) {
      const placed: Placed = { id: c.key.id, hash: idHash(c.key.id), evictAt: c.value === null ? null : c.key.evictAt, value: c.value, text: undefined };
      const bucket = bucketOf(op, layout.granularityMs, c.key.evictAt);
      let list = byBucket.get(bucket);
      if (!list) byBucket.set(bucket, (list = []));
      list.push(placed);
    }
    const aged = new Set<string>();
    for (const [bucket, pages] of manifest) if (pages.some((p) => p.bornSec < oldBefore)) aged.add(bucket);
    // A head already at N (a crashed attempt's) is rewritten from N-1 even without changes, so
    // that N holds what this attempt computed.
    const overAnAttempt = !refreshOnly && head !== null && head.version === version;
    if (byBucket.size === 0 && aged.size === 0 && !overAnAttempt) return null;

    const next = new Map<string, readonly PageRef[]>(manifest);
    const written: SlicePlan['pages'] = [];
    let live = base?.n ?? 0;
    let changedBytes = 0;
    let evictionPages = 0;
    const ttl = nowSec + this.ttlSeconds;
    // Pages are encoded once, under the longest ref a page of this commit can have (so the size
    // checked is an upper bound), then given their own keys.
    const newPages = (entries: PageEntry[], lo: number): PageRef[] =>
      this.pack(entries, (group) => encodePage(op, keys, pageRef(version, writer, 99_999), group, ttl, this.compressAboveBytes)).map(({ group, item }, k) => {
        const ref = pageRef(version, writer, written.length);
        written.push({ ref, item: { ...item, ...keys.page(ref) }, entries: group });
        return { lo: k === 0 ? lo : group[0].hash, ref, minEvictAt: minEvictAt(group), count: group.length, bornSec: nowSec };
      });

    for (const bucket of new Set([...byBucket.keys(), ...aged])) {
      const pages = manifest.get(bucket) ?? [];
      // The changes by the page they fall in (a bucket without pages: all in one new run).
      const touched = new Map<number, Placed[]>();
      for (const c of byBucket.get(bucket) ?? []) {
        const i = pages.length === 0 ? 0 : locate(pages, c.hash);
        let list = touched.get(i);
        if (!list) touched.set(i, (list = []));
        list.push(c);
      }
      pages.forEach((p, i) => {
        if (p.bornSec < oldBefore && !touched.has(i)) touched.set(i, []);
      });
      const loaded = await this.loadPages(keys, [...touched.keys()].filter((i) => i < pages.length).map((i) => pages[i].ref));
      const rebuilt: PageRef[] = [];
      const runs = Math.max(pages.length, 1);
      for (let i = 0; i < runs; ) {
        if (!touched.has(i)) {
          rebuilt.push(pages[i++]);
          continue;
        }
        // A run of touched pages, refilled together.
        const lo = i < pages.length ? pages[i].lo : 0;
        const entries = new Map<string, PageEntry>();
        const changed: Placed[] = [];
        for (; i < runs && touched.has(i); i++) {
          if (i < pages.length) for (const e of loaded.get(pages[i].ref)!) entries.set(e.id, e);
          changed.push(...touched.get(i)!);
        }
        for (const c of changed) {
          const had = entries.has(c.id);
          if (c.value === null) {
            entries.delete(c.id);
            if (had) live--;
            continue;
          }
          const e: PageEntry = { id: c.id, hash: c.hash, evictAt: c.evictAt, value: c.value };
          changedBytes += Buffer.byteLength(entryText(e), 'utf8');
          entries.set(c.id, e);
          if (!had) live++;
        }
        const pagesOfRun = newPages([...entries.values()].sort(entryOrder), lo);
        if (changed.length > 0 && changed.every((c) => c.value === null)) evictionPages += pagesOfRun.length;
        rebuilt.push(...pagesOfRun);
      }
      // The first page covers every hash from 0 (it may have been dropped).
      if (rebuilt.length > 0 && rebuilt[0].lo !== 0) rebuilt[0] = { ...rebuilt[0], lo: 0 };
      if (rebuilt.length === 0) next.delete(bucket);
      else next.set(bucket, rebuilt);
    }
    if (live < 0) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} would count ${live} keys after batch ${version}: the state was changed outside this store: restore the namespace from a consistent copy or start a new one`,
      );
    }
    const draft: ManifestRef = { v: version, w: writer, c: 0, n: live };
    const manifestItems = encodeManifest(keys, draft, next, ttl);
    const ref: ManifestRef = { ...draft, c: manifestItems.length };
    return { keys, head, version, base, prev, ref, manifest: next, pages: written, manifestItems, layout, changedBytes, evictionPages };
  }

  /**
   * Entries (in page order) cut into pages whose item, as `encode` makes it, is at most
   * pageFillBytes, never between two entries of one hash (a page covers a range of hashes). Pages
   * are filled by their text, at the compression ratio the pages so far achieved; a page that
   * comes out too big is halved. An entry too big for a page alone gets a page of its own.
   */
  private pack(entries: readonly PageEntry[], encode: (group: PageEntry[]) => Item): Array<{ group: PageEntry[]; item: Item }> {
    const out: Array<{ group: PageEntry[]; item: Item }> = [];
    const limit = this.pageFillBytes;
    let ratio = 1;
    /** A group and its item: kept when it fits (or cannot be halved), else halved. */
    const emit = (group: PageEntry[], item: Item): void => {
      const cut = group.length > 1 && itemSize(item) > limit ? splitPoint(group) : -1;
      if (cut <= 0) {
        out.push({ group, item });
        return;
      }
      for (const half of [group.slice(0, cut), group.slice(cut)]) emit(half, encode(half));
    };
    // The item around the entries (keys, names, ttl): what an empty page takes.
    const overhead = itemSize(encode([]));
    let i = 0;
    while (i < entries.length) {
      const budget = (limit - overhead) / ratio;
      const group: PageEntry[] = [];
      let bytes = 2;
      for (; i < entries.length; i++) {
        const e = entries[i];
        const size = Buffer.byteLength(entryText(e), 'utf8') + 1;
        if (group.length > 0 && bytes + size > budget && group[group.length - 1].hash !== e.hash) break;
        group.push(e);
        bytes += size;
      }
      const item = encode(group);
      // The next page is filled at the ratio this one achieved (aiming a little under the limit).
      ratio = Math.max(0.05, Math.min(1, (Math.max(itemSize(item) - overhead, 1) / bytes) * 1.04));
      emit(group, item);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Heads and manifests

  private sliceKeys(op: OperatorStateSpec, partitions?: readonly number[]): SliceKeys[] {
    const all = Array.from({ length: this.partitions }, (_, p) => p);
    return (partitions === undefined ? all : all.filter((p) => partitions.includes(p))).map((p) => new SliceKeys(this.namespace, op.operatorId, p));
  }

  private partitionOf(op: OperatorStateSpec, key: StateKey): number {
    const p = key.partition ?? 0;
    if (!Number.isInteger(p) || p < 0 || p >= this.partitions) {
      throw new SluiceError(
        `state key of operator \`${op.operatorId}\` has partition ${p}, but ${this.description} has ${this.partitions} partitions: the query's statePartitions and the store's partitions must be the same number`,
      );
    }
    return p;
  }

  /** The head of a slice (cached once read or written by this store), its layout checked. */
  private async headOf(op: OperatorStateSpec, keys: SliceKeys): Promise<Head | null> {
    const id = sliceId(keys);
    if (this.heads.has(id)) return this.heads.get(id)!;
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
  private refAt(op: OperatorStateSpec, keys: SliceKeys, head: Head | null, version: number): ManifestRef | null {
    if (head === null) return null;
    if (head.version <= version) return head.cur;
    if (head.prev === null || head.prev.v <= version) return head.prev;
    throw new SluiceError(
      `state of operator \`${op.operatorId}\` partition ${keys.partition} in ${this.description} is no longer retained at version ${version} (the store keeps versions ${head.prev.v} and ${head.version}): only the last committed version and the one before it are readable, so this is a bug in the caller: report it`,
      { details: { operatorId: op.operatorId, version, current: head.version, previous: head.prev.v } },
    );
  }

  private async manifestAt(op: OperatorStateSpec, keys: SliceKeys, version: number): Promise<{ manifest: Manifest; layout: StoredLayout } | null> {
    const head = await this.headOf(op, keys);
    const ref = this.refAt(op, keys, head, version);
    if (ref === null || head === null) return null;
    return { manifest: await this.loadManifest(keys, ref), layout: head.layout };
  }

  private async loadManifest(keys: SliceKeys, ref: ManifestRef): Promise<Manifest> {
    const cacheKey = `${sliceId(keys)}@${refId(ref)}`;
    const cached = this.manifests.get(cacheKey);
    if (cached) return cached;
    const wanted = Array.from({ length: ref.c }, (_, i) => keys.manifestChunk(ref, i));
    const found = await this.batchGet(wanted, `manifest ${refId(ref)} of ${keys.prefix}`);
    const manifest = parseManifest(wanted.map((k) => found.get(itemKey(k))!));
    // Keep the last two manifests per slice: those a commit and a replay read.
    for (const key of [...this.manifests.keys()]) if (key.startsWith(`${sliceId(keys)}@`) && this.manifests.size > 2 * this.partitions) this.manifests.delete(key);
    this.manifests.set(cacheKey, manifest);
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

  /** The entries of these pages of a slice, from the cache or BatchGetItem. */
  private async loadPages(keys: SliceKeys, refs: string[]): Promise<Map<string, PageEntry[]>> {
    const out = new Map<string, PageEntry[]>();
    const missing: string[] = [];
    for (const ref of new Set(refs)) {
      const cacheKey = `${sliceId(keys)}@${ref}`;
      const hit = this.pages.get(cacheKey);
      if (hit) {
        this.pages.delete(cacheKey);
        this.pages.set(cacheKey, hit);
        out.set(ref, hit);
      } else missing.push(ref);
    }
    if (missing.length === 0) return out;
    const found = await this.batchGet(missing.map((ref) => keys.page(ref)), `pages of ${keys.prefix}`);
    for (const ref of missing) {
      const item = found.get(itemKey(keys.page(ref)))!;
      const entries = parsePage(item, `${keys.prefix} ${ref}`);
      out.set(ref, entries);
      this.remember(`${sliceId(keys)}@${ref}`, entries);
    }
    return out;
  }

  private remember(cacheKey: string, entries: PageEntry[]): void {
    if (this.pages.has(cacheKey)) return;
    this.pages.set(cacheKey, entries);
    this.cachedEntries += entries.length;
    while (this.cachedEntries > this.cacheMaxEntries && this.pages.size > 0) {
      const [oldest, dropped] = this.pages.entries().next().value as [string, PageEntry[]];
      this.pages.delete(oldest);
      this.cachedEntries -= dropped.length;
    }
  }

  /**
   * These items, every one of which must exist (a head names them): BatchGetItem, eventually
   * consistent; keys it leaves unprocessed are asked for again; keys not found are asked for once
   * more with a strongly consistent read, then reported as removed.
   */
  private async batchGet(wanted: Item[], what: string): Promise<Map<string, Item>> {
    const found = new Map<string, Item>();
    const read = async (keys: Item[], consistent: boolean) => {
      await mapLimit(chunk(keys, BATCH_GET_MAX), this.maxConcurrency, async (batch) => {
        let left: Item[] = batch;
        await this.send('read', 'BatchGetItem', async () => {
          const res = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: left, ConsistentRead: consistent } } }));
          for (const item of res.Responses?.[this.tableName] ?? []) {
            found.set(itemKey(item), item);
            this.counters.reads += 1;
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
        `${gone.length} of the ${what} in ${this.description} that the state's head names are missing (first: ${gone[0].sk.S}): DynamoDB TTL removed them (the pipeline did not run for ${Math.round(this.ttlSeconds / 86400)} days) or they were deleted: restore the table (point-in-time recovery) or start a new checkpoint and backfill`,
        { details: { missing: gone.length, first: gone[0].sk.S } },
      );
    }
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

/** The index of the page covering `hash`: the last with lo <= hash (pages[0].lo is 0). */
function locate(pages: readonly PageRef[], hash: number): number {
  let lo = 0;
  let hi = pages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (pages[mid].lo <= hash) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where to halve a group of entries without parting two of one hash (-1: it cannot be). */
function splitPoint(group: readonly PageEntry[]): number {
  const mid = group.length >> 1;
  for (let d = 0; d < group.length; d++) {
    for (const at of [mid + d, mid - d]) if (at > 0 && at < group.length && group[at].hash !== group[at - 1].hash) return at;
  }
  return -1;
}

/** An entry whose value is its own copy, made from its text. */
function detached(e: PageEntry): PageEntry {
  return entryOfText(entryText(e));
}

function minEvictAt(entries: readonly PageEntry[]): number | null {
  let min: number | null = null;
  for (const e of entries) if (e.evictAt !== null && (min === null || e.evictAt < min)) min = e.evictAt;
  return min;
}

function toEntry(e: PageEntry, partition: number): StateEntry {
  return { key: partition === 0 ? { id: e.id, evictAt: e.evictAt } : { id: e.id, evictAt: e.evictAt, partition }, value: e.value };
}

function sliceId(keys: SliceKeys): string {
  return keys.prefix;
}

function refId(ref: ManifestRef): string {
  return `${ref.v}.${ref.w}`;
}

function itemKey(item: Item): string {
  return `${item.pk.S}\u0000${item.sk.S}`;
}

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new SluiceError(`state commit version (${version}) must be a non-negative integer batch id.`);
  }
}

function describeLayout(l: StoredLayout): string {
  return `format=${l.format}, partitions=${l.partitions}, fixedEviction=${l.fixedEviction}`;
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
