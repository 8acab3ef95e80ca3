/** The StateStore twin (the twins' common rules: twins.ts). */
import { SluiceError } from '../errors';
import type { Clock, Json, LeaseHandle, OperatorStateSpec, StateChange, StateEntry, StateKey, StateStore } from '../ports';
import { decodeStateJson, encodeStateJson, STATE_ITEM_MAX_BYTES, stateItemTooLarge, storedStateBytes } from '../state-json';
import { prng, TWIN_SEED } from './twins';

/** One version of a key: the value batch `version` wrote (null: deleted), with its key. */
interface KeyVersion {
  readonly version: number;
  readonly key: StateKey;
  readonly value: Json | null;
}

/** A key's current version and the one before it, as the DynamoDB store keeps them. */
interface KeyHistory {
  current: KeyVersion;
  previous?: KeyVersion;
}

/** DynamoDB's limits (lib/aws/dynamodb/requests.ts), repeated here: the engine imports no AWS code. */
const DYNAMODB_PARTITION_KEY_MAX_BYTES = 2048;

let twinsMade = 0;

export interface InMemoryStateStoreOptions {
  /** Seeds the order entries come back in. @default TWIN_SEED mixed with the store's number in this process */
  readonly seed?: number;
  /** Accepted as the other twins take one; nothing here depends on the time (nothing expires). */
  readonly clock?: Clock;
}

/**
 * Versioned state with the same visibility rules as the DynamoDB store: every key keeps its
 * current version and the one before, so a read at version N−1 during a replay of N sees N−1
 * whatever part of N a crashed attempt wrote. A deleted key is dropped once no read can see it
 * (a read is at version − 1 or later: at the next commit), as the DynamoDB store deletes what its
 * head stops naming; until then it is a tombstone, which a replay of its batch reads through.
 * Nothing a read can still see expires, whatever the clock says: the DynamoDB store gives no live
 * item a TTL, and `expireBefore(ms)`, DynamoDB's TTL at a moment the test picks, finds none here.
 *
 * Entries come back in an order shuffled per call (DynamoDB's order is by key within a
 * partition, and partitions come back in no order): code that depends on it fails here.
 */
export class InMemoryStateStore implements StateStore {
  readonly description: string;
  readonly seed: number;
  /** Per operator id, per key id. */
  private readonly items = new Map<string, Map<string, KeyHistory>>();
  /** Per operator id, the keys whose current version is a deletion, and that version. */
  private readonly deletions = new Map<string, Map<string, number>>();
  private readonly random: () => number;

  constructor(opts: InMemoryStateStoreOptions = {}) {
    this.seed = opts.seed ?? (TWIN_SEED + Math.imul(++twinsMade, 0x9e3779b1)) >>> 0;
    this.description = `memory://state (order seed ${this.seed}, SLUICE_TWIN_SEED ${TWIN_SEED})`;
    this.random = prng(this.seed);
  }

  // No retentionMs, as the DynamoDB store: the versions a replay reads are kept until the next commit.

  private table(op: OperatorStateSpec): Map<string, KeyHistory> {
    let t = this.items.get(op.operatorId);
    if (!t) {
      checkPartitionKey(op);
      this.items.set(op.operatorId, (t = new Map()));
    }
    return t;
  }

  /** `xs` in an order of the store's PRNG (Fisher-Yates). */
  private shuffled<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  }

  /** The entry a read at `version` sees, or null when the key is absent or deleted then. */
  private visible(history: KeyHistory | undefined, version: number): StateEntry | null {
    if (!history) return null;
    const seen =
      history.current.version <= version ? history.current : history.previous !== undefined && history.previous.version <= version ? history.previous : null;
    if (seen === null || seen.value === null) return null;
    return { key: keyOf(seen.key), value: stateCopy(seen.value) };
  }

  async get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of this.shuffled([...keys])) {
      const entry = this.visible(t.get(k.id), version);
      if (entry && (entry.key.partition ?? 0) !== (k.partition ?? 0)) {
        throw new SluiceError(
          `state key \`${k.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is read from partition ${k.partition ?? 0}, but it lives in partition ${entry.key.partition ?? 0}: a key's partition must follow from its grouping values alone`,
        );
      }
      if (entry) out.set(k.id, entry);
    }
    return out;
  }

  async expired(op: OperatorStateSpec, watermarkMs: number, version: number, partitions?: readonly number[]) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const entry = this.visible(history, version);
      if (entry && entry.key.evictAt !== null && entry.key.evictAt <= watermarkMs && inPartitions(entry, partitions)) out.push(entry);
    }
    return this.shuffled(out);
  }

  async all(op: OperatorStateSpec, version: number, partitions?: readonly number[]) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const entry = this.visible(history, version);
      if (entry && inPartitions(entry, partitions)) out.push(entry);
    }
    return this.shuffled(out);
  }

  /** Items held, over all operators (live keys, and deletions not dropped yet). */
  size(): number {
    let n = 0;
    for (const t of this.items.values()) n += t.size;
    return n;
  }

  async count(op: OperatorStateSpec, version: number) {
    return (await this.all(op, version)).length;
  }

  /**
   * DynamoDB's item limit, as the DynamoDB store measures it (the value and the one before it,
   * gzipped above 32 KB; lib/engine/state-json.ts): what it would refuse, this refuses too.
   */
  async check(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    this.table(op); // checks the operator's partition key, as every access does
    const last = new Map<string, StateChange>();
    for (const c of changes) last.set(c.key.id, c);
    for (const c of last.values()) {
      if (c.value === null) continue;
      checkItemSize(op, { version, key: c.key, value: c.value });
    }
  }

  /**
   * DynamoDB's TTL, at a moment the test picks: every item whose TTL is before `ms` is gone, as if
   * the service had deleted it. Returns how many went: none, ever, as on DynamoDB, where the
   * store writes no TTL (what a read can see is kept; what none can is deleted by the commit that
   * makes it unreadable, as `commit` drops it here).
   */
  expireBefore(_ms: number): number {
    return 0;
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[], _fence?: LeaseHandle, partitions?: readonly number[]) {
    const t = this.table(op);
    // As the DynamoDB store: a commit scoped to some partitions carries only their changes.
    for (const c of changes) {
      if (!inPartitions(c, partitions))
        throw new SluiceError(
          `state change \`${c.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is in partition ${c.key.partition ?? 0}, outside the partitions [${partitions!.join(', ')}] this commit writes`,
        );
    }
    // As the DynamoDB store: every key and item is checked before anything is written.
    const written = new Map<string, KeyVersion>();
    for (const c of changes) {
      written.set(c.key.id, { version, key: keyOf(c.key), value: c.value === null ? c.value : stateCopy(c.value) });
    }
    for (const w of written.values()) {
      const stored = t.get(w.key.id)?.current.key.partition ?? 0;
      if ((w.key.partition ?? 0) !== stored && t.has(w.key.id)) {
        throw new SluiceError(
          `state key \`${w.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is written to partition ${w.key.partition ?? 0}, but it lives in partition ${stored}: a key's partition must follow from its grouping values alone`,
        );
      }
      checkItemSize(op, w);
    }
    let deleted = this.deletions.get(op.operatorId);
    if (!deleted) this.deletions.set(op.operatorId, (deleted = new Map()));
    // A deletion by an earlier version is invisible to every read still possible: drop the key.
    for (const [id, deletedAt] of deleted) {
      if (deletedAt < version) {
        t.delete(id);
        deleted.delete(id);
      }
    }
    for (const w of written.values()) {
      const history = t.get(w.key.id);
      let next: KeyHistory;
      if (history === undefined) next = { current: w };
      else if (history.current.version === version)
        next = { current: w, previous: history.previous }; // a replay of this version keeps the one before
      else next = { current: w, previous: history.current };
      if (w.value === null) deleted.set(w.key.id, version);
      else deleted.delete(w.key.id);
      t.set(w.key.id, next);
    }
  }
}

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Whether an entry (or change) lies in `partitions` (absent: every partition). */
function inPartitions(e: { readonly key: StateKey }, partitions: readonly number[] | undefined): boolean {
  return partitions === undefined || partitions.includes(e.key.partition ?? 0);
}

/** The partition keys of an operator's items hold its id: DynamoDB's 2,048-byte limit. */
function checkPartitionKey(op: OperatorStateSpec): void {
  const bytes = utf8Bytes(op.operatorId);
  if (!op.operatorId || op.operatorId.includes('#') || bytes > DYNAMODB_PARTITION_KEY_MAX_BYTES - 64) {
    throw new SluiceError(
      `state operatorId (${JSON.stringify(op.operatorId.slice(0, 80))}) must be non-empty, free of '#' and short (DynamoDB partition keys hold up to ${DYNAMODB_PARTITION_KEY_MAX_BYTES} bytes): use ids like "agg0"`,
    );
  }
}

/** A state key id is a DynamoDB sort key: 1 to 1,024 bytes (the DynamoDB store's error). */

/**
 * The item of a key holds its id and two versions' values, measured as the DynamoDB store
 * measures it (JSON, gzipped above 32 KB; lib/engine/state-json.ts): above 400 KB it is refused
 * with the store's error, and nothing below it is.
 */
function checkItemSize(op: OperatorStateSpec, cur: KeyVersion): void {
  if (cur.value === null) return;
  // As a page of the DynamoDB store holding this key alone: [[id, evictAt, value]], gzipped above 32 KB.
  const size = storedStateBytes(encodeStateJson([[cur.key.id, cur.key.evictAt, cur.value]])) + PAGE_ITEM_OVERHEAD_BYTES;
  if (size > STATE_ITEM_MAX_BYTES)
    throw stateItemTooLarge(op.operatorId, cur.key.id, size, STATE_ITEM_MAX_BYTES, 'a state item (its value as JSON, gzipped above 32 KB)');
}

/** The keys, names and ttl of a DynamoDB state page around its entries (about; state-layout.ts). */
const PAGE_ITEM_OVERHEAD_BYTES = 100;

/** A copy of a state value through the text DynamoDB's store keeps (so a bigint or NaN reads back as it would there). */
function stateCopy(v: Json): Json {
  return decodeStateJson(encodeStateJson(v));
}

/** A copy of a state key (its partition kept when it has one). */
function keyOf(k: StateKey): StateKey {
  return k.partition === undefined || k.partition === 0 ? { id: k.id, evictAt: k.evictAt } : { id: k.id, evictAt: k.evictAt, partition: k.partition };
}
