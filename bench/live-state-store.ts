/**
 * A versioned in-memory state store that holds only what DynamoDB would still hold for the run:
 * live keys, and a deleted key only until the next commit (a read at the previous version may
 * still need its old value). InMemoryStateStore (lib/engine/memory.ts) keeps every key ever
 * written, with its previous value, and scans all of them for `expired`: right for unit tests,
 * but over a 10x backlog that history, which lives in DynamoDB for a deployed pipeline, is what
 * would fill the process and slow every batch. The memory check uses this store instead, so what
 * it measures is the engine's own memory.
 *
 * Same visibility rules as InMemoryStateStore: a batch N reads at N-1 and writes N; a replay of N
 * reads at N-1 again.
 */
import type { Json, OperatorStateSpec, StateChange, StateEntry, StateKey, StateStore } from '../lib/engine/ports';

interface Versioned {
  v: number;
  val: Json | null;
  evictAt: number | null;
  pv?: number;
  pval?: Json | null;
}

export class LiveStateStore implements StateStore {
  readonly description = 'memory://live-state';
  private readonly tables = new Map<string, Map<string, Versioned>>();

  private table(op: OperatorStateSpec): Map<string, Versioned> {
    let t = this.tables.get(op.operatorId);
    if (!t) this.tables.set(op.operatorId, (t = new Map()));
    return t;
  }

  private visible(it: Versioned | undefined, version: number): { val: Json; evictAt: number | null } | null {
    if (!it) return null;
    if (it.v <= version) return it.val === null ? null : { val: it.val, evictAt: it.evictAt };
    if (it.pv !== undefined && it.pv <= version && it.pval !== null && it.pval !== undefined) return { val: it.pval, evictAt: it.evictAt };
    return null;
  }

  async get(op: OperatorStateSpec, keys: StateKey[], version: number): Promise<Map<string, StateEntry>> {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of keys) {
      const vis = this.visible(t.get(k.id), version);
      if (vis) out.set(k.id, { key: { id: k.id, evictAt: vis.evictAt }, value: vis.val });
    }
    return out;
  }

  async expired(op: OperatorStateSpec, wm: number, version: number): Promise<StateEntry[]> {
    const out: StateEntry[] = [];
    for (const [id, it] of this.table(op)) {
      if (it.evictAt === null || it.evictAt > wm) continue;
      const vis = this.visible(it, version);
      if (vis) out.push({ key: { id, evictAt: vis.evictAt }, value: vis.val });
    }
    return out.sort(byId);
  }

  async all(op: OperatorStateSpec, version: number): Promise<StateEntry[]> {
    const out: StateEntry[] = [];
    for (const [id, it] of this.table(op)) {
      const vis = this.visible(it, version);
      if (vis) out.push({ key: { id, evictAt: vis.evictAt }, value: vis.val });
    }
    return out.sort(byId);
  }

  async count(op: OperatorStateSpec, version: number): Promise<number> {
    return (await this.all(op, version)).length;
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[]): Promise<void> {
    const t = this.table(op);
    // Deleted before this version: absent at version-1 and later, as if never written.
    for (const [id, it] of t) if (it.val === null && it.v < version) t.delete(id);
    for (const c of changes) {
      const cur = t.get(c.key.id);
      const next: Versioned = { v: version, val: c.value, evictAt: c.key.evictAt };
      if (cur && cur.v === version) {
        next.pv = cur.pv;
        next.pval = cur.pval;
      } else if (cur) {
        next.pv = cur.v;
        next.pval = cur.val;
      }
      if (c.value === null && cur) next.evictAt = cur.evictAt;
      t.set(c.key.id, next);
    }
  }

  /** Items held (live keys and the tombstones of the last commit). */
  size(): number {
    let n = 0;
    for (const t of this.tables.values()) n += t.size;
    return n;
  }
}

function byId(a: StateEntry, b: StateEntry): number {
  return a.key.id < b.key.id ? -1 : a.key.id > b.key.id ? 1 : 0;
}
