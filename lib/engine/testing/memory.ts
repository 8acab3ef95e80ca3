/**
 * In-memory twins of the ports, for unit tests of the engine and the engine-only benchmark.
 * They keep the same contracts as the AWS adapters (versioned state, write-once logs, replayable
 * source), so a unit test can crash a run and start a new executor over the same objects.
 */
import { CheckpointMismatchError, LeaseLostError } from '../errors';
import type {
  BatchLimits,
  CheckpointHead,
  CheckpointStore,
  CommitEntry,
  DeadLetterSink,
  Json,
  Lease,
  LeaseHandle,
  OffsetEntry,
  OperatorStateSpec,
  OutputRow,
  QueryMetadata,
  ReadOptions,
  ReadResult,
  Sink,
  Source,
  StateChange,
  StateEntry,
  StateKey,
  StateStore,
} from '../ports';
import { Schema } from '../schema';
import { encodeStateJson, STATE_ITEM_MAX_BYTES, stateItemTooLarge, storedStateBytes } from '../state-json';
import { LineParsers } from '../json-scan';
import { parseLineChunks, type LineCursor } from '../lines';

export class InMemoryCheckpoint implements CheckpointStore {
  readonly description = 'memory://checkpoint';
  metadata: QueryMetadata | null = null;
  readonly offsets = new Map<number, OffsetEntry>();
  readonly commits = new Map<number, CommitEntry>();
  readonly progress = new Map<number, Json>();
  readonly sourceLogs = new Map<string, string>();

  async head(): Promise<CheckpointHead> {
    return {
      metadata: this.metadata,
      latestOffsetBatch: Math.max(-1, ...this.offsets.keys()),
      latestCommitBatch: Math.max(-1, ...this.commits.keys()),
    };
  }
  async writeMetadata(meta: QueryMetadata) {
    this.metadata = meta;
  }
  async readOffsets(id: number) {
    return this.offsets.get(id) ?? null;
  }
  async writeOffsets(e: OffsetEntry) {
    writeOnce(this.offsets, e.batchId, e, 'offsets');
  }
  async readCommit(id: number) {
    return this.commits.get(id) ?? null;
  }
  async writeCommit(e: CommitEntry) {
    // A replay may commit again; only the time of the commit may differ.
    const prev = this.commits.get(e.batchId);
    if (prev && JSON.stringify({ ...prev, committedAtMs: 0 }) !== JSON.stringify({ ...e, committedAtMs: 0 })) throw logConflict('commits', e.batchId);
    this.commits.set(e.batchId, e);
  }
  async writeProgress(id: number, p: Json) {
    this.progress.set(id, p);
  }
  async readProgress(id: number) {
    return this.progress.get(id) ?? null;
  }
  async purge(keepFrom: number) {
    for (const m of [this.offsets, this.commits, this.progress] as Map<number, unknown>[]) for (const k of [...m.keys()]) if (k < keepFrom) m.delete(k);
  }
  async readSourceLog(i: number, name: string) {
    return this.sourceLogs.get(`${i}/${name}`) ?? null;
  }
  async writeSourceLog(i: number, name: string, body: string) {
    this.sourceLogs.set(`${i}/${name}`, body);
  }
  async writeSourceLogOnce(i: number, name: string, body: string) {
    const stored = this.sourceLogs.get(`${i}/${name}`);
    if (stored !== undefined) return stored;
    this.sourceLogs.set(`${i}/${name}`, body);
    return null;
  }
}

function writeOnce<T>(m: Map<number, T>, id: number, v: T, what: string) {
  const prev = m.get(id);
  if (prev && JSON.stringify(prev) !== JSON.stringify(v)) throw logConflict(what, id);
  m.set(id, v);
}

function logConflict(what: string, id: number): CheckpointMismatchError {
  return new CheckpointMismatchError(`${what}/${id} already exists with different content: another run wrote it; check that only one run per query is active`);
}

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

/**
 * Versioned state with the same visibility rules as the DynamoDB store: every key keeps its
 * current version and the one before, so a read at version N−1 during a replay of N sees N−1
 * whatever part of N a crashed attempt wrote. A deleted key is dropped once no read can see it
 * (a read is at version − 1 or later), so the store follows the live state of a long run.
 */
export class InMemoryStateStore implements StateStore {
  readonly description = 'memory://state';
  /** Per operator id, per key id. */
  private readonly items = new Map<string, Map<string, KeyHistory>>();
  /** Per operator id, the keys whose current version is a deletion, and that version. */
  private readonly deletions = new Map<string, Map<string, number>>();

  private table(op: OperatorStateSpec): Map<string, KeyHistory> {
    let t = this.items.get(op.operatorId);
    if (!t) this.items.set(op.operatorId, (t = new Map()));
    return t;
  }

  /**
   * The entry a read at `version` sees, or null when the key is absent or deleted then: the
   * version itself, which has the entry's form ({key, value}, both read-only), so that a read
   * makes no objects (the benchmark's engine runs on this twin).
   */
  private visible(history: KeyHistory | undefined, version: number): StateEntry | null {
    if (!history) return null;
    const seen = history.current.version <= version ? history.current : history.previous !== undefined && history.previous.version <= version ? history.previous : null;
    if (seen === null || seen.value === null) return null;
    return seen as StateEntry;
  }

  async get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of keys) {
      const entry = this.visible(t.get(k.id), version);
      if (entry) out.set(k.id, entry);
    }
    return out;
  }

  async expired(op: OperatorStateSpec, watermarkMs: number, version: number) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const entry = this.visible(history, version);
      if (entry && entry.key.evictAt !== null && entry.key.evictAt <= watermarkMs) out.push(entry);
    }
    return out;
  }

  async all(op: OperatorStateSpec, version: number) {
    const out: StateEntry[] = [];
    for (const history of this.table(op).values()) {
      const entry = this.visible(history, version);
      if (entry) out.push(entry);
    }
    return out.sort((a, b) => (a.key.id < b.key.id ? -1 : 1));
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
    const t = this.table(op);
    const last = new Map<string, StateChange>();
    for (const c of changes) last.set(c.key.id, c);
    for (const c of last.values()) {
      if (c.value === null) continue;
      const history = t.get(c.key.id);
      const before = history === undefined ? undefined : history.current.version === version ? history.previous : history.current;
      const texts = [c.value, before?.value ?? null].map((v) => (v === null ? '' : encodeStateJson(v)));
      // (gzip only when the text alone does not fit)
      if (texts.reduce((n, x) => n + x.length * 3, c.key.id.length * 3) <= STATE_ITEM_MAX_BYTES) continue;
      const size = Buffer.byteLength(c.key.id, 'utf8') + texts.reduce((n, x) => n + storedStateBytes(x), 0);
      if (size > STATE_ITEM_MAX_BYTES) throw stateItemTooLarge(op.operatorId, c.key.id, size, STATE_ITEM_MAX_BYTES, 'an item of two versions (this value and the one before, gzipped)');
    }
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    const t = this.table(op);
    let deleted = this.deletions.get(op.operatorId);
    if (!deleted) this.deletions.set(op.operatorId, (deleted = new Map()));
    // A deletion by an earlier version is invisible to every read still possible: drop the key.
    for (const [id, deletedAt] of deleted) {
      if (deletedAt < version) {
        t.delete(id);
        deleted.delete(id);
      }
    }
    for (const c of changes) {
      const written: KeyVersion = { version, key: c.key, value: c.value };
      const history = t.get(c.key.id);
      if (history === undefined) t.set(c.key.id, { current: written });
      else if (history.current.version === version) history.current = written; // a replay of this version keeps the one before
      else {
        history.previous = history.current;
        history.current = written;
      }
      if (c.value === null) deleted.set(c.key.id, version);
      else deleted.delete(c.key.id);
    }
  }
}

/** A landing prefix in memory: files of JSON lines, offsets {lastKey} like the S3 source. */
export class InMemoryFileSource implements Source {
  readonly description = 'memory://landing';
  readonly files: Array<{ key: string; body: string }> = [];
  reads = 0;

  private readonly parsers: LineParsers;

  constructor(schema: Schema) {
    this.parsers = new LineParsers(schema);
  }

  add(key: string, rows: Array<Record<string, unknown>> | string) {
    this.files.push({ key, body: typeof rows === 'string' ? rows : rows.map((r) => JSON.stringify(r)).join('\n') });
    this.files.sort((a, b) => (a.key < b.key ? -1 : 1));
  }
  private after(start: Json | null, target: Json | null) {
    const s = start ? (start as { lastKey: string }).lastKey : '';
    const t = target ? (target as { lastKey: string }).lastKey : '\uffff';
    return this.files.filter((f) => f.key > s && f.key <= t);
  }
  async latestOffset(start: Json | null): Promise<Json | null> {
    const all = this.after(start, null);
    return all.length ? { lastKey: all[all.length - 1].key } : start;
  }
  async planBatch(_id: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    let files = this.after(start, target);
    if (!files.length) return null;
    if (limits.maxFilesPerTrigger) files = files.slice(0, limits.maxFilesPerTrigger);
    if (limits.maxBytesPerTrigger) {
      let bytes = 0;
      let n = 0;
      for (const f of files) {
        if (n > 0 && bytes + f.body.length > limits.maxBytesPerTrigger) break;
        bytes += f.body.length;
        n++;
      }
      files = files.slice(0, n);
    }
    return { lastKey: files[files.length - 1].key };
  }
  async read(id: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const out: ReadResult = { rows: [], deadLetters: [], bytes: 0 };
    let bytes = 0;
    for await (const chunk of this.readChunks(id, start, end, options)) {
      for (const r of chunk.rows) out.rows.push(r);
      for (const d of chunk.deadLetters) out.deadLetters.push(d);
      bytes += chunk.bytes;
    }
    return { ...out, bytes };
  }
  async *readChunks(_id: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    this.reads++;
    const parse = this.parsers.for(options?.columns);
    for (const f of this.after(start, end)) {
      const cursor: LineCursor = { lineNo: 0, bytes: f.body.length };
      yield* parseLineChunks(parse, f.key, f.body, cursor);
      if (cursor.bytes > 0 || f.body.length === 0) yield { rows: [], deadLetters: [], bytes: cursor.bytes };
    }
  }
  async backlog(from: Json | null, target: Json | null) {
    return target ? this.after(from, target).length : 0;
  }
}

/** Records each batch's rows by batch ID; a replay overwrites its own batch. */
export class InMemorySink implements Sink {
  readonly description = 'memory://sink';
  readonly batches = new Map<number, OutputRow[]>();
  calls = 0;
  async addBatch(batchId: number, rows: OutputRow[]) {
    this.calls++;
    this.batches.set(batchId, rows);
  }
}

export class InMemoryDeadLetters implements DeadLetterSink {
  readonly description = 'memory://dead-letters';
  readonly records = new Map<string, Json[]>();
  async write(batchId: number, kind: string, records: Json[]) {
    this.records.set(`${kind}/${batchId}`, records);
  }
  all(kind: string): Json[] {
    return [...this.records.entries()].filter(([k]) => k.startsWith(`${kind}/`)).flatMap(([, v]) => v);
  }
}

export class InMemoryLease implements Lease {
  private holder: LeaseHandle | null = null;
  private token = 0;
  constructor(private readonly now: () => number = Date.now) {}
  async acquire(owner: string, durationMs: number) {
    if (this.holder && this.holder.expiresAtMs >= this.now()) return null;
    this.holder = { owner, token: ++this.token, expiresAtMs: this.now() + durationMs };
    return this.holder;
  }
  async renew(h: LeaseHandle, durationMs: number) {
    if (!this.holder || this.holder.owner !== h.owner || this.holder.token !== h.token) {
      throw new LeaseLostError(`lease of ${h.owner} (token ${h.token}) was lost: another run took over; stop without further effects`);
    }
    this.holder = { ...h, expiresAtMs: this.now() + durationMs };
    return this.holder;
  }
  async release(h: LeaseHandle) {
    if (this.holder && this.holder.owner === h.owner && this.holder.token === h.token) this.holder = null;
  }
}

export interface CommitRecord {
  readonly version: number;
  readonly changes: number;
  readonly puts: number;
  readonly deletes: number;
}

/** Delegates to `inner`, recording the keys read and the changes committed per version. */
export class CountingStateStore implements StateStore {
  readonly description: string;
  readonly commits: CommitRecord[] = [];
  keysRead = 0;
  constructor(private readonly inner: StateStore) {
    this.description = inner.description;
  }
  get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    this.keysRead += keys.length;
    return this.inner.get(op, keys, version);
  }
  expired(op: OperatorStateSpec, wm: number, version: number) {
    return this.inner.expired(op, wm, version);
  }
  all(op: OperatorStateSpec, version: number) {
    return this.inner.all(op, version);
  }
  count(op: OperatorStateSpec, version: number) {
    return this.inner.count(op, version);
  }
  get retentionMs() {
    return this.inner.retentionMs;
  }
  check(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    return this.inner.check ? this.inner.check(op, version, changes) : Promise.resolve();
  }
  commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle) {
    let deletes = 0;
    for (const c of changes) if (c.value === null) deletes++;
    this.commits.push({ version, changes: changes.length, puts: changes.length - deletes, deletes });
    return this.inner.commit(op, version, changes, fence);
  }
}
