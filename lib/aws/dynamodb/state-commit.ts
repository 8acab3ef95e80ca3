/**
 * How DynamoDbStateStore (state-store.ts, whose comment has the rules) writes a version: the plan
 * of each slice's commit (the pages its changes fall in, refilled, and a manifest listing them)
 * and the conditional head write that makes it visible; keepAlive rewrites old pages the same way.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { LeaseLostError, SluiceError } from '../../engine/errors';
import type { LeaseHandle, OperatorStateSpec, StateChange } from '../../engine/ports';
import { mapLimit } from '../request/concurrency';
import { BATCH_WRITE_MAX, conditional, type Item, itemSize } from './requests';
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
  type Manifest,
  type ManifestRef,
  type PageEntry,
  type PageRef,
  pageRef,
  parseHead,
  type SliceKeys,
  type StoredLayout,
} from './state-layout';
import { chunk, DynamoDbStateSlices, locate, refId, sliceId } from './state-slices';

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

/** The commit of a DynamoDbStateStore: check, commit and keepAlive, on its slices. */
export abstract class DynamoDbStateCommits extends DynamoDbStateSlices {
  /** The plan `check` made, which the `commit` of the same changes writes. */
  private planned: { operatorId: string; version: number; changes: StateChange[]; plans: SlicePlan[] } | null = null;

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

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new SluiceError(`state commit version (${version}) must be a non-negative integer batch id.`);
  }
}
