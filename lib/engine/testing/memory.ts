/**
 * In-memory twins of the ports, for unit tests of the engine and the engine-only benchmark.
 * They keep the same contracts as the AWS adapters (versioned state, write-once logs, replayable
 * source), so a unit test can crash a run and start a new executor over the same objects.
 */
import { CheckpointMismatchError } from '../errors';
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
import { LineParsers } from '../json-scan';
import { parseLineChunks, type LineCursor } from '../lines';
import { LeaseLostError } from '../errors';

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
    const prev = this.commits.get(e.batchId);
    if (prev && JSON.stringify({ ...prev, committedAtMs: 0 }) !== JSON.stringify({ ...e, committedAtMs: 0 })) {
      throw new CheckpointMismatchError(`commits/${e.batchId} already exists with different content`);
    }
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
}

function writeOnce<T>(m: Map<number, T>, id: number, v: T, what: string) {
  const prev = m.get(id);
  if (prev && JSON.stringify(prev) !== JSON.stringify(v)) {
    throw new CheckpointMismatchError(`${what}/${id} already exists with different content: another run wrote it; check that only one run per query is active`);
  }
  m.set(id, v);
}

interface Versioned {
  v: number;
  val: Json | null;
  /** The key its last value was written with (its eviction time holds for the previous value too). */
  key: StateKey;
  pv?: number;
  pval?: Json | null;
  /**
   * What `get` and `expired` return for (v, val): the change that wrote it, which has that very
   * form ({key, value}), so a read makes no object per entry.
   */
  entry?: StateEntry;
}

/**
 * Versioned state with the same visibility rules as the DynamoDB store. It holds what DynamoDB
 * would: live keys with their previous value, and a deletion only until no read can see it, so
 * it also stands for the state of a long run (the benchmark's memory check).
 */
export class InMemoryStateStore implements StateStore {
  readonly description = 'memory://state';
  private readonly items = new Map<string, Map<string, Versioned>>();
  readonly stats = { gets: 0, writes: 0 };
  /** Per operator, the ids deleted and the version that deleted each. */
  private readonly tombstones = new Map<string, { ids: string[]; versions: number[] }>();

  private table(op: OperatorStateSpec) {
    let t = this.items.get(op.operatorId);
    if (!t) this.items.set(op.operatorId, (t = new Map()));
    return t;
  }
  private visible(it: Versioned | undefined, version: number): { val: Json; evictAt: number | null } | null {
    if (!it) return null;
    if (it.v <= version) return it.val === null ? null : { val: it.val, evictAt: it.key.evictAt };
    if (it.pv !== undefined && it.pv <= version && it.pval !== null && it.pval !== undefined) return { val: it.pval, evictAt: it.key.evictAt };
    return null;
  }
  async get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of keys) {
      this.stats.gets++;
      const it = t.get(k.id);
      if (it === undefined) continue;
      if (it.v <= version && it.val !== null) {
        // the common case, the latest version
        out.set(k.id, (it.entry ??= { key: it.key, value: it.val }));
        continue;
      }
      const vis = this.visible(it, version);
      if (vis) out.set(k.id, { key: { id: k.id, evictAt: vis.evictAt }, value: vis.val });
    }
    return out;
  }
  async expired(op: OperatorStateSpec, wm: number, version: number) {
    const out: StateEntry[] = [];
    for (const it of this.table(op).values()) {
      const evictAt = it.key.evictAt;
      if (evictAt === null || evictAt > wm) continue;
      if (it.v <= version && it.val !== null) {
        out.push((it.entry ??= { key: it.key, value: it.val }));
        continue;
      }
      const vis = this.visible(it, version);
      if (vis) out.push({ key: { id: it.key.id, evictAt: vis.evictAt }, value: vis.val });
    }
    return out;
  }
  async all(op: OperatorStateSpec, version: number) {
    const out: StateEntry[] = [];
    for (const [id, it] of this.table(op)) {
      const vis = this.visible(it, version);
      if (vis) out.push({ key: { id, evictAt: vis.evictAt }, value: vis.val });
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
  async commit(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    const t = this.table(op);
    // Deletions of earlier versions are invisible to every read still possible (at version - 1 or
    // later: a replay of this batch at most): drop them, so that the table follows the live state.
    const dead = this.tombstones.get(op.operatorId) ?? { ids: [], versions: [] };
    const keep: { ids: string[]; versions: number[] } = { ids: [], versions: [] };
    for (let i = 0; i < dead.ids.length; i++) {
      const id = dead.ids[i];
      const v = dead.versions[i];
      const it = t.get(id);
      if (it === undefined || it.val !== null || it.v !== v) continue; // written again since
      if (v < version) t.delete(id);
      else {
        keep.ids.push(id);
        keep.versions.push(v);
      }
    }
    this.tombstones.set(op.operatorId, keep);
    for (const c of changes) {
      if (c.value === null) {
        keep.ids.push(c.key.id);
        keep.versions.push(version);
      }
      this.stats.writes++;
      const cur = t.get(c.key.id);
      const entry = c.value === null ? undefined : (c as StateEntry);
      if (cur === undefined) {
        // every field from the start: added later, pv and pval would need a property array per item
        t.set(c.key.id, { v: version, val: c.value, key: c.key, entry, pv: undefined, pval: undefined });
        continue;
      }
      // updated in place: a rewrite of the same version keeps the previous value, a new version
      // makes the current one the previous
      if (cur.v !== version) {
        cur.pv = cur.v;
        cur.pval = cur.val;
      }
      cur.v = version;
      cur.val = c.value;
      cur.entry = entry;
      // The eviction time of the previous value must survive for a read at the previous version.
      if (c.value !== null) cur.key = c.key;
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
  commit(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    let deletes = 0;
    for (const c of changes) if (c.value === null) deletes++;
    this.commits.push({ version, changes: changes.length, puts: changes.length - deletes, deletes });
    return this.inner.commit(op, version, changes);
  }
}
