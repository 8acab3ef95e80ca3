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
import { assignSlots, keptFreeSlots, type Retired, retiredBy, StrayPages, slotsNamedBy } from './free-slots';
import { BATCH_WRITE_MAX, conditional, type Item, itemSize } from './requests';
import {
  bucketOf,
  encodeHead,
  encodeManifest,
  encodePage,
  entryOrder,
  detachedEntry,
  entryText,
  type FreeSlot,
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
  slotOf,
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
  /** The manifest's ref but its chunk count (known once the manifest is encoded, after the page writes). */
  readonly draft: ManifestRef;
  /** The new manifest, before its pages are placed (a page written into a free slot gets `slot`). */
  readonly manifest: Manifest;
  /** The new pages, each encoded under its own key (without `r`). */
  readonly pages: { ref: string; item: Item; entries: PageEntry[] }[];
  /** The free slots of the manifest built upon that no head names: the new pages go into them first. */
  readonly slots: readonly FreeSlot[];
  readonly layout: StoredLayout;
  /** The items the manifest built upon names (never a free slot of the new one). */
  readonly baseSlots: ReadonlySet<string>;
  /** Bytes of the entries of the keys the batch changed. */
  readonly changedBytes: number;
  /** Pages written for runs whose changes were all deletions. */
  readonly evictionPages: number;
  /**
   * What the head names now (cur and prev) and the new head no longer names: no read can reach
   * them once the head is written (reads are at N-1 and N only). The manifests are deleted then;
   * the pages' items become free slots of the new manifest.
   */
  readonly retired: Retired;
  /** Page items of an earlier attempt of this batch that no head names (free slots of the new manifest, not written into). */
  readonly strays: readonly FreeSlot[];
  /** Items of an earlier sluice the new head names, whose TTL is removed before the head write. */
  readonly legacy: Item[];
}

/** The commit of a DynamoDbStateStore: check and commit, on its slices. */
export abstract class DynamoDbStateCommits extends DynamoDbStateSlices {
  /** The stray pages this store looked up, by slice (see planSlice). */
  private readonly strayPages = new StrayPages();
  /** A batch no earlier attempt wrote (firstAttempt): its commits need not look for stray pages. */
  private firstAttemptOf: number | null = null;
  /** The plan `check` made, which the `commit` of the same changes (and partitions) writes. */
  private planned: { operatorId: string; version: number; changes: StateChange[]; partitions: string; plans: SlicePlan[] } | null = null;

  // ---------------------------------------------------------------------------------------------
  // Commit

  /** The caller knows no earlier attempt of batch `version` wrote to this store: no stray pages of it to look for (see planSlice). */
  firstAttempt(version: number): void {
    this.firstAttemptOf = version;
  }

  /**
   * Plans the commit of `changes` as `commit` would, and throws the error the commit would throw
   * for a page above DynamoDB's 400 KB, before anything is written. The `commit` of the same
   * changes array (and the same partitions) writes this plan without planning again.
   */
  async check(op: OperatorStateSpec, version: number, changes: StateChange[], partitions?: readonly number[]): Promise<void> {
    this.validateOp(op);
    checkVersion(version);
    this.planned = null;
    const plans = await this.plan(op, version, changes, partitions);
    this.planned = { operatorId: op.operatorId, version, changes, partitions: scopeOf(partitions), plans };
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]): Promise<void> {
    this.validateOp(op);
    checkVersion(version);
    const planned = this.planned;
    this.planned = null;
    const plans =
      planned !== null &&
      planned.operatorId === op.operatorId &&
      planned.version === version &&
      planned.changes === changes &&
      planned.partitions === scopeOf(partitions)
        ? planned.plans
        : await this.plan(op, version, changes, partitions);
    try {
      await this.write(op, plans, fence ?? null);
    } catch (err) {
      // What this attempt wrote may be left behind: the next commit of these slices looks for it.
      for (const plan of plans) this.strayPages.forget(sliceId(plan.keys));
      throw err;
    }
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
        for (const list of manifest.values()) for (const p of list) named.push(keys.page(slotOf(p)));
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

  /** keepAlive only upgrades an earlier sluice's state: once done for a checkpoint, never again. */
  get keepAliveOnce(): boolean {
    return true;
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
    // Pages and manifests first: nobody sees them until a head names them. A page goes into a free
    // slot while the slice has one (a PutItem on the condition that the slot holds what the
    // manifest says), else under its own key (BatchWriteItem).
    const placed = plans.map((plan) => ({ plan, into: new Map<string, string>(), fresh: [] as Item[], untaken: [] as FreeSlot[], seen: [] as FreeSlot[] }));
    const slotWrites: Array<{ p: (typeof placed)[number]; page: SlicePlan['pages'][number]; slot: FreeSlot }> = [];
    for (const p of placed) {
      const { into, fresh, untaken } = assignSlots(p.plan.pages, p.plan.slots);
      for (const { page, slot } of into) slotWrites.push({ p, page, slot });
      p.fresh.push(...fresh.map((page) => page.item));
      p.untaken.push(...untaken);
    }
    await mapLimit(slotWrites, this.maxConcurrency, async ({ p, page, slot }) => {
      const done = await this.putIntoSlot({ ...page.item, ...p.plan.keys.page(slot.slot), r: { S: page.ref } }, slot);
      if (done === true) {
        p.into.set(page.ref, slot.slot);
        return;
      }
      // Another writer's (a stalled run's, or a crashed attempt's): left to it, and noted as holding that.
      this.counters.slotsTaken += 1;
      if (done.holds !== null) p.seen.push({ slot: slot.slot, content: done.holds });
      p.fresh.push(page.item);
    });
    // The manifests name where each page went, and the free slots the next commit writes into; they
    // go with the pages under their own keys.
    const finals = placed.map((p) => ({ ...p, ...this.finish(p.plan, p.into, [...p.plan.retired.slots, ...p.plan.strays, ...p.untaken, ...p.seen]) }));
    const items = finals.flatMap((f) => [...f.fresh, ...f.manifestItems]);
    await mapLimit(chunk(items, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchWrite(batch));
    // What an earlier sluice wrote with a TTL and the new heads name: kept for good before they do.
    await this.removeTtl(plans.flatMap((p) => p.legacy));
    for (const { plan, into } of finals) {
      this.counters.pagesWritten += plan.pages.length;
      this.counters.pagesIntoFreeSlots += into.size;
      this.counters.changedBytes += plan.changedBytes;
      this.counters.evictionPagesWritten += plan.evictionPages;
      for (const page of plan.pages) this.counters.pageBytesWritten += itemSize(page.item);
    }
    const refused: unknown[] = [];
    await mapLimit(finals, this.maxConcurrency, async (f) => {
      try {
        await this.writeHead(op, { ...f.plan, ref: f.ref }, fence);
      } catch (err) {
        refused.push(err);
        // Refused (not an error after which the head may have landed): no head names what this
        // plan wrote under its own keys, nor ever will (the keys are this attempt's own). What it
        // wrote into free slots stays: the manifest built upon still lists them as free, and the
        // next commit's conditional write finds out what they hold.
        if (headRefusals.has(err as object)) await this.deleteQuietly([...f.fresh, ...f.manifestItems].map((item) => ({ pk: item.pk, sk: item.sk })));
      }
    });
    if (refused.length > 0) throw refused[0];
    for (const f of finals) {
      const id = sliceId(f.plan.keys);
      this.cache.rememberManifest(id, refId(f.ref), { pages: f.manifest, free: f.free });
      // Cached with its text, its value read back from that when asked for: the engine's objects may change after the commit.
      for (const page of f.plan.pages) this.cache.rememberPage(id, page.ref, page.entries.map(detachedEntry));
    }
    // What the new heads no longer name and no free list keeps. (A crash before this leaves them behind: see state-store.ts.)
    const gone = finals.flatMap((f) => [...f.plan.retired.manifests, ...f.excess.map((x) => f.plan.keys.page(x.slot))]);
    await mapLimit(chunk(gone, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchDelete(batch));
  }

  /**
   * The manifest of a plan whose pages were written (`into`: the free slot each page went into,
   * by ref) and its free slots: those of `free` it keeps (see keptFreeSlots), the rest to delete.
   */
  private finish(
    plan: SlicePlan,
    into: ReadonlyMap<string, string>,
    free: readonly FreeSlot[],
  ): { ref: ManifestRef; manifest: Manifest; manifestItems: Item[]; free: FreeSlot[]; excess: FreeSlot[] } {
    const manifest = new Map<string, readonly PageRef[]>();
    let live = 0;
    for (const [bucket, pages] of plan.manifest) {
      manifest.set(
        bucket,
        pages.map((p) => (into.has(p.ref) ? { ...p, slot: into.get(p.ref)! } : p)),
      );
      live += pages.length;
    }
    const named = slotsNamedBy([manifest], new Set([...plan.baseSlots, ...into.values()]));
    const { kept, excess } = keptFreeSlots(free, named, live);
    const manifestItems = encodeManifest(plan.keys, plan.draft, manifest, kept);
    return { ref: { ...plan.draft, c: manifestItems.length }, manifest, manifestItems, free: kept, excess };
  }

  /** Deletes, and ignores a failure: what stays is unreferenced, only storage. */
  private async deleteQuietly(keys: Item[]): Promise<void> {
    await mapLimit(chunk(keys, BATCH_WRITE_MAX), this.maxConcurrency, (batch) => this.batchDelete(batch).catch(() => undefined));
  }

  /** The head of `plan` at `version`, fenced: still the head this commit read (or ours), and no newer token. */
  private async writeHead(
    op: OperatorStateSpec,
    plan: Pick<SlicePlan, 'keys' | 'head' | 'version' | 'prev' | 'layout'> & { readonly ref: ManifestRef },
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
        throw refusal(
          new LeaseLostError(
            `state write of batch ${version} (operator \`${op.operatorId}\`) in ${this.description} was refused: this run's fencing token ${fence.token} is older than token ${stored.fence} that wrote the state since: another run holds the lease; this run stops and batch ${version} stays uncommitted (the lease holder replays it)`,
            { details: { operatorId: op.operatorId, batchId: version, token: fence.token, storedToken: stored.fence } },
          ),
        );
      }
      throw refusal(
        new SluiceError(
          `state of operator \`${op.operatorId}\` partition ${plan.keys.partition} in ${this.description} changed while batch ${version} was committing (read at version ${plan.head?.version ?? 'none'}, now at ${stored?.version ?? 'none'}): another run writes the same namespace; only one run per query may hold the lease, so check the lease table and the query id`,
          { details: { operatorId: op.operatorId, batchId: version, readVersion: plan.head?.version ?? null, storedVersion: stored?.version ?? null } },
        ),
      );
    }
    this.counters.writes += 1;
    this.heads.set(id, head);
    // Its next commit need not look for stray pages: it knows what it left (see planSlice).
    this.strayPages.headWritten(id);
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
    const baseRecord = base === null ? null : await this.loadManifestRecord(keys, base);
    const manifest: Manifest = baseRecord?.pages ?? new Map<string, readonly PageRef[]>();

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
    // Pages are encoded once, under the longest ref a page of this commit can have and with the
    // `r` of a page in a free slot (so the size checked is an upper bound), then given their own keys.
    const longest = pageRef(version, writer, 99_999);
    const newPages = (entries: PageEntry[], lo: number): PageRef[] =>
      this.pack(entries, (group) => encodePage(op, keys, longest, group, this.compressAboveBytes, longest)).map(({ group, item }, k) => {
        const ref = pageRef(version, writer, written.length);
        const { r: _inSlotOnly, ...own } = item;
        written.push({ ref, item: { ...own, ...keys.page(ref) }, entries: group });
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
        [...touched.keys()].filter((i) => i < pages.length).map((i) => pages[i]),
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
    const retired = await retiredBy(keys, head, prev, manifest, next, (ref) => this.loadManifestRecord(keys, ref).catch(() => null));
    // The free slots of the manifest built upon, but any a head names (a replay over an attempt that wrote its head: that attempt's pages).
    const named = new Set<string>();
    for (const old of [head?.cur ?? null, head?.prev ?? null]) {
      if (old === null) continue;
      const m = await this.loadManifest(keys, old).catch(() => null);
      if (m !== null) slotsNamedBy([m], named);
    }
    const slots = (baseRecord?.free ?? []).filter((f) => !named.has(f.slot));
    // Pages an earlier attempt of this batch wrote under its own keys and no head names: it died
    // before its head write (or was refused and died before its deletes). Looked for at the first
    // commit of the slice by this store (a run's: the one that replays a batch after a crash),
    // they become free slots of the new manifest (written into by the next commit, or deleted),
    // never written into by this one: another writer of this batch may still be at work on them
    // (a stalled run, or this store's view of the head is stale), and only a head write that
    // supersedes that writer's makes them unreachable.
    // (What the look-up found is kept until a head write of the slice: a plan made again, as
    // commit() makes one when check() was given another array, lists the same.)
    // (A caller that knows no earlier attempt of this batch ran says so: firstAttempt; nothing to look for.)
    if (head !== null && this.firstAttemptOf !== version) await this.strayPages.lookUpOnce(sliceId(keys), () => this.pagesOfVersion(keys, version));
    const listed = new Set(slots.map((f) => f.slot));
    const strays = this.strayPages.of(sliceId(keys)).filter((f) => !named.has(f.slot) && !listed.has(f.slot));
    const legacy: Item[] = [];
    if (head !== null && !head.noTtl) {
      const mine = new Set(written.map((p) => p.ref));
      if (prev !== null) for (let i = 0; i < prev.c; i++) legacy.push(keys.manifestChunk(prev, i));
      for (const m of [manifest, next]) for (const list of m.values()) for (const p of list) if (!mine.has(p.ref)) legacy.push(keys.page(slotOf(p)));
    }
    const baseSlots = slotsNamedBy([manifest]);
    return {
      keys,
      head,
      version,
      base,
      prev,
      draft,
      manifest: next,
      pages: written,
      slots,
      baseSlots,
      layout,
      changedBytes,
      evictionPages,
      retired,
      strays,
      legacy,
    };
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

/** The errors of head writes DynamoDB refused (its condition failed): nothing of them landed. */
const headRefusals = new WeakSet<object>();

function refusal<E extends Error>(err: E): E {
  headRefusals.add(err);
  return err;
}

/** Where to halve a group of entries without parting two of one hash (-1: it cannot be). */
function splitPoint(group: readonly PageEntry[]): number {
  const mid = group.length >> 1;
  for (let d = 0; d < group.length; d++) {
    for (const at of [mid + d, mid - d]) if (at > 0 && at < group.length && group[at].hash !== group[at - 1].hash) return at;
  }
  return -1;
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

/** A commit's partitions as a comparable text ('' for every partition). */
function scopeOf(partitions: readonly number[] | undefined): string {
  return partitions === undefined ? '' : [...partitions].sort((a, b) => a - b).join(',');
}
