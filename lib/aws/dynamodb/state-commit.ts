/**
 * How DynamoDbStateStore (state-store.ts, whose comment has the rules) writes a version: the plan
 * of each slice's commit (the pages its changes fall in, refilled, and a manifest listing them),
 * the conditional head write that makes it visible, and then the deletion of what that head write
 * made unreadable (the manifests and pages no head names any more).
 */
import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
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
  /** The manifest built upon: visible at N-1 (null: none). */
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
  /**
   * What the head names now (cur and prev) and the new head no longer names, deleted once the
   * head is written: no read can reach them (reads are at N-1 and N only).
   */
  readonly retired: { readonly manifests: Item[]; readonly pages: Item[] };
  /** Items of an earlier sluice the new head names, whose TTL is removed before the head write. */
  readonly legacy: Item[];
}

/** The commit of a DynamoDbStateStore: check and commit, on its slices. */
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
    const plans = await this.plan(op, version, changes);
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
        : await this.plan(op, version, changes, partitions);
    await this.write(op, plans, fence ?? null);
  }

  /**
   * For a slice whose head an earlier sluice wrote (its manifests and pages carry a 50-day TTL):
   * removes the TTL of everything the head names and marks the head (`nt`), at the version it is
   * at. The executor calls it at the start of a run (keepAliveAfterMs 0); for a head already
   * marked it reads the head only (which the run's commits read anyway).
   */
  async keepAlive(op: OperatorStateSpec, _version: number, fence?: LeaseHandle): Promise<void> {
    this.validateOp(op);
    await mapLimit(this.sliceKeys(op), this.maxConcurrency, async (keys) => {
      const head = await this.headOf(op, keys);
      if (head === null || head.noTtl) return;
      const named: Item[] = [];
      for (const ref of [head.cur, head.prev]) {
        if (ref === null) continue;
        for (let i = 0; i < ref.c; i++) named.push(keys.manifestChunk(ref, i));
        const manifest = await this.loadManifest(keys, ref);
        for (const list of manifest.values()) for (const p of list) named.push(keys.page(p.ref));
      }
      await this.removeTtl(named);
      const plan = { keys, head, version: head.version } as Pick<SlicePlan, 'keys' | 'head' | 'version'>;
      await this.writeHead(op, { ...plan, ref: head.cur, prev: head.prev, layout: head.layout }, fence ?? null);
    });
  }

  /** Only the keepAlive path reads it. */
  get keepAliveAfterMs(): number {
    return 0;
  }

  /** REMOVE ttl on these items (each an UpdateItem); an item already gone is left alone. */
  private async removeTtl(keys: Item[]): Promise<void> {
    const unique = new Map(keys.map((k) => [`${k.pk.S}\u0000${k.sk.S}`, k]));
    await mapLimit([...unique.values()], this.maxConcurrency, (Key) =>
      conditional(
        this.send('write', 'UpdateItem', () =>
          this.client.send(
            new UpdateItemCommand({
              TableName: this.tableName,
              Key,
              UpdateExpression: 'REMOVE #t',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#t': 'ttl' },
            }),
          ),
        ),
      ),
    );
  }

  private async write(op: OperatorStateSpec, plans: SlicePlan[], fence: LeaseHandle | null): Promise<void> {
    // Pages and manifests first: nobody sees them until a head names them.
    const items = plans.flatMap((p) => [...p.pages.map((page) => page.item), ...p.manifestItems]);
    await mapLimit(chunk(items, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchWrite(batch));
    // What an earlier sluice wrote with a TTL and the new heads name: kept for good before they do.
    await this.removeTtl(plans.flatMap((p) => p.legacy));
    for (const plan of plans) {
      this.counters.pagesWritten += plan.pages.length;
      this.counters.changedBytes += plan.changedBytes;
      this.counters.evictionPagesWritten += plan.evictionPages;
      for (const page of plan.pages) this.counters.pageBytesWritten += itemSize(page.item);
    }
    const refused: unknown[] = [];
    await mapLimit(plans, this.maxConcurrency, async (plan) => {
      try {
        await this.writeHead(op, plan, fence);
      } catch (err) {
        // No head names what this plan wrote, nor ever will (its keys are this attempt's own).
        refused.push(err);
        await this.deleteQuietly([...plan.pages.map((page) => page.item), ...plan.manifestItems].map((item) => ({ pk: item.pk, sk: item.sk })));
      }
    });
    if (refused.length > 0) throw refused[0];
    for (const plan of plans) {
      const id = sliceId(plan.keys);
      this.manifests.set(`${id}@${refId(plan.ref)}`, plan.manifest);
      // Cached as read back from its text: the engine's objects may change after the commit.
      for (const page of plan.pages) this.remember(`${id}@${page.ref}`, page.entries.map(detached));
    }
    // What the new heads no longer name. (A crash before this leaves them behind: see state-store.ts.)
    const retired = plans.flatMap((p) => [...p.retired.manifests, ...p.retired.pages]);
    await mapLimit(chunk(retired, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchDelete(batch));
  }

  /** Deletes, and ignores a failure: what stays is unreferenced, only storage. */
  private async deleteQuietly(keys: Item[]): Promise<void> {
    await mapLimit(chunk(keys, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchDelete(batch).catch(() => undefined));
  }

  /** The head of `plan` at `version`, fenced: still the head this commit read (or ours), and no newer token. */
  private async writeHead(
    op: OperatorStateSpec,
    plan: Pick<SlicePlan, 'keys' | 'head' | 'version' | 'ref' | 'prev' | 'layout'>,
    fence: LeaseHandle | null,
  ): Promise<void> {
    const version = plan.version;
    const head: Head = { version, cur: plan.ref, prev: plan.prev, layout: plan.layout, fence: fence?.token ?? null, noTtl: true };
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

  /** The slices batch `version` writes: every slice with a change (and one an earlier attempt of it wrote). */
  private async plan(op: OperatorStateSpec, version: number, changes: StateChange[], partitions?: readonly number[]): Promise<SlicePlan[]> {
    // Last change per id wins.
    const bySlice = new Map<number, Map<string, StateChange>>();
    for (const change of changes) {
      const p = this.partitionOf(op, change.key);
      if (partitions !== undefined && !partitions.includes(p)) {
        throw new SluiceError(
          `state change \`${change.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is in partition ${p}, outside the partitions [${partitions.join(', ')}] this commit writes`,
        );
      }
      let m = bySlice.get(p);
      if (!m) bySlice.set(p, (m = new Map()));
      m.set(change.key.id, change);
    }
    const nowSec = Math.floor(this.clock.now() / 1000);
    const writer = randomBytes(4).toString('hex');
    // (scoped to some partitions, the others' heads are left alone: their tasks commit them)
    const plans = await mapLimit(this.sliceKeys(op, partitions), this.maxConcurrency, (keys) =>
      this.planSlice(op, keys, version, [...(bySlice.get(keys.partition)?.values() ?? [])], writer, nowSec),
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
  ): Promise<SlicePlan | null> {
    const head = await this.headOf(op, keys);
    if (head && head.version > version) {
      throw new SluiceError(
        `state of operator \`${op.operatorId}\` in ${this.description} is already at version ${head.version}, ahead of batch ${version} being committed: the checkpoint is older than the state (deleted or restored): use a new namespace (query id) with a fresh checkpoint, or delete this namespace's state`,
        { details: { operatorId: op.operatorId, stateVersion: head.version, batchId: version } },
      );
    }
    const base = this.refAt(op, keys, head, version - 1);
    const prev = base;
    const layout: StoredLayout = head?.layout ?? {
      format: LAYOUT_FORMAT,
      partitions: this.partitions,
      granularityMs: op.evictionGranularityMs,
      fixedEviction: op.fixedEviction,
    };
    const manifest = base === null ? new Map<string, readonly PageRef[]>() : await this.loadManifest(keys, base);

    // Changes by bucket, then by the page they fall in.
    const byBucket = new Map<string, Placed[]>();
    for (const c of changes) {
      const placed: Placed = { id: c.key.id, hash: idHash(c.key.id), evictAt: c.value === null ? null : c.key.evictAt, value: c.value, text: undefined };
      const bucket = bucketOf(op, layout.granularityMs, c.key.evictAt);
      let list = byBucket.get(bucket);
      if (!list) byBucket.set(bucket, (list = []));
      list.push(placed);
    }
    // A head already at N (a crashed attempt's) is rewritten from N-1 even without changes, so
    // that N holds what this attempt computed.
    const overAnAttempt = head !== null && head.version === version;
    if (byBucket.size === 0 && !overAnAttempt) return null;

    const next = new Map<string, readonly PageRef[]>(manifest);
    const written: SlicePlan['pages'] = [];
    let live = base?.n ?? 0;
    let changedBytes = 0;
    let evictionPages = 0;
    // Pages are encoded once, under the longest ref a page of this commit can have (so the size
    // checked is an upper bound), then given their own keys.
    const newPages = (entries: PageEntry[], lo: number): PageRef[] =>
      this.pack(entries, (group) => encodePage(op, keys, pageRef(version, writer, 99_999), group, this.compressAboveBytes)).map(({ group, item }, k) => {
        const ref = pageRef(version, writer, written.length);
        written.push({ ref, item: { ...item, ...keys.page(ref) }, entries: group });
        return { lo: k === 0 ? lo : group[0].hash, ref, minEvictAt: minEvictAt(group), count: group.length, bornSec: nowSec };
      });

    for (const [bucket, placed] of byBucket) {
      const pages = manifest.get(bucket) ?? [];
      // The changes by the page they fall in (a bucket without pages: all in one new run).
      const touched = new Map<number, Placed[]>();
      for (const c of placed) {
        const i = pages.length === 0 ? 0 : locate(pages, c.hash);
        let list = touched.get(i);
        if (!list) touched.set(i, (list = []));
        list.push(c);
      }
      const loaded = await this.loadPages(
        keys,
        [...touched.keys()].filter((i) => i < pages.length).map((i) => pages[i].ref),
      );
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
    const manifestItems = encodeManifest(keys, draft, next);
    const ref: ManifestRef = { ...draft, c: manifestItems.length };
    const retired = await this.retiredBy(keys, head, prev, manifest, next);
    const legacy: Item[] = [];
    if (head !== null && !head.noTtl) {
      const mine = new Set(written.map((p) => p.ref));
      if (prev !== null) for (let i = 0; i < prev.c; i++) legacy.push(keys.manifestChunk(prev, i));
      for (const m of [manifest, next]) for (const list of m.values()) for (const p of list) if (!mine.has(p.ref)) legacy.push(keys.page(p.ref));
    }
    return { keys, head, version, base, prev, ref, manifest: next, pages: written, manifestItems, layout, changedBytes, evictionPages, retired, legacy };
  }

  /**
   * What the head names (cur, prev and their pages) that a head naming `prev` (whose manifest is
   * `prevManifest`) and a new manifest `next` does not. A manifest of it found missing (removed by
   * hand, or by the TTL of items an earlier sluice wrote) retires nothing of its own: its pages,
   * if any are left, stay (only storage).
   */
  private async retiredBy(keys: SliceKeys, head: Head | null, prev: ManifestRef | null, prevManifest: Manifest, next: Manifest): Promise<SlicePlan['retired']> {
    const manifests: Item[] = [];
    const pages: Item[] = [];
    if (head === null) return { manifests, pages };
    const kept = new Set<string>();
    for (const m of [prevManifest, next]) for (const list of m.values()) for (const p of list) kept.add(p.ref);
    const gone = new Set<string>();
    for (const old of [head.cur, head.prev]) {
      if (old === null || (prev !== null && refId(old) === refId(prev))) continue;
      for (let i = 0; i < old.c; i++) manifests.push(keys.manifestChunk(old, i));
      const manifest = await this.loadManifest(keys, old).catch(() => null);
      if (manifest === null) continue;
      for (const list of manifest.values()) for (const p of list) if (!kept.has(p.ref)) gone.add(p.ref);
    }
    for (const ref of gone) pages.push(keys.page(ref));
    return { manifests, pages };
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
