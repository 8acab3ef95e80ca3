/**
 * Ports for timing the engine alone (bench/engine-run.ts). The in-memory twins
 * (lib/engine/testing/memory-*.ts) are test oracles: the checkpoint copies every entry through JSON
 * as S3 would, the sink sorts and records every write, and the state store measures every item
 * it is handed against DynamoDB's 400 KB limit (JSON-encoding each value twice a batch: about 40%
 * of the engine section's CPU time when it ran on that store). Here nothing is copied or checked,
 * so the bench's engine section times the engine, not the twins. Never use these in tests.
 */
import type {
  CheckpointHead,
  CheckpointStore,
  CommitEntry,
  Json,
  OffsetEntry,
  OperatorStateSpec,
  QueryMetadata,
  StateChange,
  StateEntry,
  StateKey,
  StateStore,
} from '../lib/engine/ports';

export { CountingSink } from './counting';

/** A checkpoint that keeps its entries in Maps, as handed over (no copies, no write-once check). */
export class PlainCheckpoint implements CheckpointStore {
  readonly description = 'plain://checkpoint';
  private metadata: QueryMetadata | null = null;
  private readonly offsets = new Map<number, OffsetEntry>();
  private readonly commits = new Map<number, CommitEntry>();
  private readonly progress = new Map<number, Json>();
  private readonly sourceLogs = new Map<string, string>();
  private latestOffsetBatch = -1;
  private latestCommitBatch = -1;

  async head(): Promise<CheckpointHead> {
    return { metadata: this.metadata, latestOffsetBatch: this.latestOffsetBatch, latestCommitBatch: this.latestCommitBatch };
  }
  async writeMetadata(meta: QueryMetadata) {
    this.metadata = meta;
  }
  async readOffsets(batchId: number) {
    return this.offsets.get(batchId) ?? null;
  }
  async writeOffsets(entry: OffsetEntry) {
    this.offsets.set(entry.batchId, entry);
    this.latestOffsetBatch = Math.max(this.latestOffsetBatch, entry.batchId);
  }
  async readCommit(batchId: number) {
    return this.commits.get(batchId) ?? null;
  }
  async writeCommit(entry: CommitEntry) {
    this.commits.set(entry.batchId, entry);
    this.latestCommitBatch = Math.max(this.latestCommitBatch, entry.batchId);
  }
  async writeProgress(batchId: number, progress: Json) {
    this.progress.set(batchId, progress);
  }
  async readProgress(batchId: number) {
    return this.progress.get(batchId) ?? null;
  }
  async purge(keepFrom: number) {
    for (const m of [this.offsets, this.commits, this.progress] as Map<number, unknown>[]) for (const id of [...m.keys()]) if (id < keepFrom) m.delete(id);
  }
  async readSourceLog(sourceIndex: number, name: string) {
    return this.sourceLogs.get(`${sourceIndex}/${name}`) ?? null;
  }
  async writeSourceLog(sourceIndex: number, name: string, body: string) {
    this.sourceLogs.set(`${sourceIndex}/${name}`, body);
  }
  async writeSourceLogOnce(sourceIndex: number, name: string, body: string) {
    const stored = this.sourceLogs.get(`${sourceIndex}/${name}`);
    if (stored !== undefined) return stored;
    this.sourceLogs.set(`${sourceIndex}/${name}`, body);
    return null;
  }
}

/**
 * A key's current version and the one before (a read at version - 1 during a replay sees it), in
 * one record changed in place by each commit (prevVersion -1: none): no object per change.
 */
interface History {
  version: number;
  key: StateKey;
  value: Json | null;
  prevVersion: number;
  prevKey: StateKey | null;
  prevValue: Json | null;
}

/**
 * Versioned state with the twin's visibility rules (each key keeps its current version and the one
 * before; a deletion is dropped once no read can see it), in the order entries were written, with
 * values handed out as stored.
 */
export class PlainStateStore implements StateStore {
  readonly description = 'plain://state';
  private readonly tables = new Map<string, Map<string, History>>();
  /** Per operator, the keys whose current version is a deletion, and that version. */
  private readonly deletions = new Map<string, Map<string, number>>();

  private table(op: OperatorStateSpec): Map<string, History> {
    let t = this.tables.get(op.operatorId);
    if (t === undefined) this.tables.set(op.operatorId, (t = new Map()));
    return t;
  }

  private static visible(history: History | undefined, version: number): StateEntry | null {
    if (history === undefined) return null;
    if (history.version <= version) return history.value === null ? null : { key: history.key, value: history.value };
    if (history.prevVersion < 0 || history.prevVersion > version || history.prevValue === null) return null;
    return { key: history.prevKey!, value: history.prevValue };
  }

  async get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of keys) {
      const entry = PlainStateStore.visible(t.get(k.id), version);
      if (entry !== null) out.set(k.id, entry);
    }
    return out;
  }

  async expired(op: OperatorStateSpec, watermarkMs: number, version: number) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const key = history.version <= version ? history.key : history.prevKey;
      if (key === null || key.evictAt === null || key.evictAt > watermarkMs) continue;
      const entry = PlainStateStore.visible(history, version);
      if (entry !== null) out.push(entry);
    }
    return out;
  }

  async all(op: OperatorStateSpec, version: number) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const entry = PlainStateStore.visible(history, version);
      if (entry !== null) out.push(entry);
    }
    return out;
  }

  async count(op: OperatorStateSpec, version: number) {
    return (await this.all(op, version)).length;
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    const t = this.table(op);
    let deleted = this.deletions.get(op.operatorId);
    if (deleted === undefined) this.deletions.set(op.operatorId, (deleted = new Map()));
    for (const [id, deletedAt] of deleted) {
      if (deletedAt < version) {
        t.delete(id);
        deleted.delete(id);
      }
    }
    for (const c of changes) {
      const history = t.get(c.key.id);
      if (history === undefined) t.set(c.key.id, { version, key: c.key, value: c.value, prevVersion: -1, prevKey: null, prevValue: null });
      else {
        if (history.version !== version) {
          history.prevVersion = history.version;
          history.prevKey = history.key;
          history.prevValue = history.value;
        }
        history.version = version;
        history.key = c.key;
        history.value = c.value;
      }
      if (c.value === null) deleted.set(c.key.id, version);
      else deleted.delete(c.key.id);
    }
  }
}
