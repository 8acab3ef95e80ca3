/**
 * The StateStore port on one DynamoDB table (partition key `pk` S, sort key `sk` S, TTL attribute
 * `ttl`), in the packed layout of state-layout.ts: per (operator, partition) a head, immutable
 * manifests and pages of about 1 KB (a page's item changes only once no head names it).
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
 * Free slots. A new page is written into the item of a page no head names any more (a free slot
 * the manifest built upon lists), when there is one, rather than under a key of its own: a PutItem
 * that replaces an item of at most 1 KB costs one write unit, as a new item does, and the delete
 * of the retired page (one more) is saved. The PutItem is conditional on the slot still holding
 * what the list says (`r`, or no `r` for a page in its own key): a slot another writer took (a
 * stalled run, or an attempt that died) is left to it, noted with what it holds, and the page goes
 * under its own key. A page keeps its ref wherever it is stored; the manifest names the slot
 * beside it, the caches are by ref, and a read checks the item holds that ref (an eventually
 * consistent read of a slot written since is asked again, strongly).
 *
 * Cost. A batch that changes K groups writes the pages they fall in, refilled to 1 KB of item
 * (itemSize over-estimates, so a page never bills 2): in a dense batch of small groups about
 * 1.1 × ⌈changed bytes / 1 KB⌉ write units, in a sparse one one page (1 WCU) per
 * group at most; plus the manifest (gzipped, ~10 bytes per page of the slice and per free slot)
 * and the head; and the delete of the manifest that commit made unreadable (below). Pages go into
 * free slots, so in a steady state a page costs its write and nothing more; only the free slots
 * beyond twice the slice's live page count are deleted (a slice that shrank; an emptied slice
 * keeps none). An eviction that empties a page drops it from the manifest and writes nothing. Reads are
 * BatchGetItem of the pages the batch's keys fall in, eventually consistent (one found missing, or
 * holding another page, is asked for again, strongly).
 *
 * Retention: as in Spark, a checkpoint's state lives until the user deletes it, however long the
 * pipeline was idle and whichever path its runs took. Nothing a head names (its cur and prev
 * manifests and their pages) carries a TTL, and nothing it names is deleted or overwritten: there
 * is no calendar and no refresh, and a replay of the last batch may come at any age (the store has
 * no `retentionMs`). What a head stops naming is freed by the commit that moves it, once its head
 * write succeeded: a commit of N+1 (head at N: cur N, prev N-1) leaves cur N+1 and prev N, so it
 * deletes the manifest of N-1 and lists the pages only it listed as free slots of N+1, which the
 * commit of N+2 writes into. Those are what no read can reach: the engine reads at N-1 and N only
 * while batch N runs or is replayed, and batch N+1 starts after commits/N. A commit refused at its
 * head write (fenced, or a concurrent writer) deletes what it wrote under its own keys (what it
 * wrote into free slots stays listed as free). What is left behind: the pages of an attempt that
 * died between its page writes and its head write (no head names them): the first commit of the
 * slice by the next run's store (the replay of that batch) finds them by their batch (a Query per
 * page shard, once per slice and store) and lists them as free slots; and the retired manifest and
 * the free slots beyond the bound of a commit that died after its head write, before its
 * deletes (one generation per crash). Items written by sluice before this rule carry a `ttl` (50
 * days from their write), and their heads lack `nt`:
 * the first commit of such a slice removes the TTL of what its new head names (an UpdateItem
 * each, once) before it writes the head with `nt`, and `keepAlive`, which the executor calls at
 * the start of every run (keepAliveAfterMs 0), does the same for every slice, committed or not
 * (for a marked head it only reads the head). A page the head names that is gone (such a TTL
 * run out before the upgrade, or deleted by hand) is an error that says so, never an empty state.
 *
 * Fencing. The head write is the only write a reader can see; given the run's lease it is
 * conditional on no newer token having written it (fenceCondition): a run that lost its lease
 * is refused with LeaseLostError and deletes the pages and manifest it wrote.
 *
 * Partitions. `partitions` slices per operator, chosen by StateKey.partition; each has its own
 * head, versions and manifest, so partitions could be committed by different workers. The count
 * is recorded in every head: another count is refused.
 *
 * Files. This one: the port and its reads. state-commit.ts: check and commit (and the deletes).
 * state-slices.ts: the heads, manifests and pages, their caches, and the requests.
 * state-store-options.ts: the options and the counters.
 */
import type { OperatorStateSpec, StateEntry, StateKey, StateStore } from '../../engine/ports';
import { compareStrings, mapLimit } from '../request/concurrency';
import { bucketOf, idHash, type PageEntry, type PageRef, SliceKeys } from './state-layout';
import { DynamoDbStateCommits } from './state-commit';
import type { DynamoDbStateStoreStats } from './state-store-options';
import { locate } from './state-slices';

export class DynamoDbStateStore extends DynamoDbStateCommits implements StateStore {
  // No retentionMs: the versions a replay reads are kept until a later commit (see above), so a
  // replay may come at any age. keepAlive (state-commit.ts) only upgrades an earlier sluice's state.

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
      const refs: PageRef[] = [];
      for (const key of list) {
        const pages = manifest.get(bucketOf(op, layout.granularityMs, key.evictAt));
        if (!pages || pages.length === 0) continue;
        const page = pages[locate(pages, idHash(key.id))];
        let ids = wanted.get(page.ref);
        if (!ids) {
          wanted.set(page.ref, (ids = []));
          refs.push(page);
        }
        ids.push(key.id);
      }
      const loaded = await this.loadPages(keysOf, refs);
      for (const [ref, ids] of wanted) {
        const entries = loaded.get(ref)!;
        const want = new Set(ids);
        for (const e of entries) if (want.has(e.id)) out.set(e.id, toEntry(e, partition));
      }
    });
    return out;
  }

  async expired(op: OperatorStateSpec, watermarkMs: number, version: number, partitions?: readonly number[]): Promise<StateEntry[]> {
    return this.scanPages(
      op,
      version,
      (p) => p.minEvictAt !== null && p.minEvictAt <= watermarkMs,
      (e) => e.evictAt !== null && e.evictAt <= watermarkMs,
      partitions,
    );
  }

  async all(op: OperatorStateSpec, version: number, partitions?: readonly number[]): Promise<StateEntry[]> {
    return this.scanPages(
      op,
      version,
      () => true,
      () => true,
      partitions,
    );
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
      const refs: PageRef[] = [];
      for (const pages of visible.manifest.values()) for (const p of pages) if (pageWanted(p)) refs.push(p);
      const loaded = await this.loadPages(keys, refs);
      for (const p of refs) for (const e of loaded.get(p.ref)!) if (entryWanted(e)) out.push(toEntry(e, keys.partition));
    });
    return out.sort((a, b) => compareStrings(a.key.id, b.key.id));
  }
}

function toEntry(e: PageEntry, partition: number): StateEntry {
  return { key: partition === 0 ? { id: e.id, evictAt: e.evictAt } : { id: e.id, evictAt: e.evictAt, partition }, value: e.value };
}
