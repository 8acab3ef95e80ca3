/**
 * In-memory twins of the ports, for unit tests of the engine and the engine-only benchmark.
 * They keep the same contracts as the AWS adapters (versioned state, write-once logs, replayable
 * source), so a unit test can crash a run and start a new executor over the same objects.
 *
 * They are as strict as the services where it matters, never kinder:
 * - the state store returns entries in an order shuffled per call (seeded: TWIN_SEED, set by
 *   SLUICE_TWIN_SEED to reproduce), refuses keys and items beyond DynamoDB's limits with the
 *   DynamoDB store's errors, and keeps tombstones with a `ttl` that `expireBefore(ms)` expires;
 * - the sink writes a batch in pieces (sorted rows, `pieceRows` a piece), tells
 *   `SinkContext.onPieceWritten` after each, and records every write, so a duplicate shows; a
 *   streamed batch (addBatchChunks) is written in pieces as its chunks come, each chunk recorded
 *   as received, and a replayed piece with other rows than the stored one fails loudly;
 * - the checkpoint keeps offsets and commits write-once as S3 with If-None-Match does (the first
 *   write stays), stores copies (JSON), and can make an entry unreadable.
 */
import { CheckpointMismatchError, LeaseLostError, SluiceError } from '../errors';
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
  SinkContext,
  Source,
  StateChange,
  StateEntry,
  StateKey,
  StateStore,
  ShuffleStore,
} from '../ports';
import type { Clock, StaticTableReader, StaticTables } from '../ports';
import type { StaticTableSpec } from '../plan/types';
import type { SourceBacklog } from '../progress';
import { systemClock } from '../ports';
import { coerceRecord, type Schema } from '../schema';
import { encodeStateJson, STATE_ITEM_MAX_BYTES, stateItemTooLarge, storedStateBytes } from '../state-json';
import { LineParsers } from '../json-scan';
import { splitOf } from '../splits';
import { parseLineChunks, type LineCursor } from '../lines';

export class InMemoryCheckpoint implements CheckpointStore {
  readonly description = 'memory://checkpoint';
  metadata: QueryMetadata | null = null;
  readonly offsets = new Map<number, OffsetEntry>();
  readonly commits = new Map<number, CommitEntry>();
  readonly progress = new Map<number, Json>();
  readonly sourceLogs = new Map<string, string>();
  /** Entries (`offsets/3`, `commits/3`, `progress/3`) that exist but do not parse, as a damaged object would. */
  readonly unreadable = new Set<string>();

  async head(): Promise<CheckpointHead> {
    return {
      metadata: this.metadata === null ? null : copy(this.metadata),
      latestOffsetBatch: Math.max(-1, ...this.offsets.keys()),
      latestCommitBatch: Math.max(-1, ...this.commits.keys()),
    };
  }
  async writeMetadata(meta: QueryMetadata) {
    this.metadata = copy(meta);
  }
  async readOffsets(id: number) {
    return this.read(this.offsets, 'offsets', id);
  }
  async writeOffsets(e: OffsetEntry) {
    writeOnce(this.offsets, e.batchId, e, 'offsets');
  }
  async readCommit(id: number) {
    return this.read(this.commits, 'commits', id);
  }
  async writeCommit(e: CommitEntry) {
    // A replay may commit again; only the time of the commit may differ, and the first stays.
    writeOnce(this.commits, e.batchId, e, 'commits', (v) => ({ ...v, committedAtMs: 0 }));
  }
  async writeProgress(id: number, p: Json) {
    this.progress.set(id, copy(p));
  }
  async readProgress(id: number) {
    return this.read(this.progress, 'progress', id);
  }
  async purge(keepFrom: number) {
    for (const m of [this.offsets, this.commits, this.progress] as Map<number, unknown>[]) for (const k of [...m.keys()]) if (k < keepFrom) m.delete(k);
    for (const k of [...this.sourceLogs.keys()]) {
      const name = k.slice(k.indexOf('/') + 1);
      if (/^\d+$/.test(name) && Number(name) < keepFrom) this.sourceLogs.delete(k);
    }
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

  private read<T extends Json | OffsetEntry | CommitEntry>(m: Map<number, T>, log: string, id: number): T | null {
    if (this.unreadable.has(`${log}/${id}`) && m.has(id)) {
      throw new CheckpointMismatchError(
        `checkpoint entry ${this.description}/${log}/${id} is not valid JSON (damaged in the twin): restore the object from a backup or S3 versioning, or start the query on a new checkpoint prefix`,
      );
    }
    const v = m.get(id);
    return v === undefined ? null : copy(v);
  }
}

/** What S3 would hand back: a copy through JSON, never the caller's object. */
function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * Write-once as S3's `If-None-Match: *` makes it: the first write stays; a second one is refused
 * (412), and the checkpoint then accepts it only when it says the same (`same` drops what may differ).
 */
function writeOnce<T>(m: Map<number, T>, id: number, v: T, what: string, same: (v: T) => unknown = (x) => x) {
  const prev = m.get(id);
  if (prev !== undefined) {
    if (JSON.stringify(same(prev)) !== JSON.stringify(same(copy(v)))) throw logConflict(what, id);
    return;
  }
  m.set(id, copy(v));
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
  /** Epoch seconds after which DynamoDB's TTL may delete the item (set on tombstones, as the store does). */
  ttl?: number;
}

/** DynamoDB's partition key limit (lib/aws/dynamodb/requests.ts), repeated here: the engine imports no AWS code. */
const DYNAMODB_PARTITION_KEY_MAX_BYTES = 2048;

/**
 * The seed of the twins' shuffled orders in this process: SLUICE_TWIN_SEED when set (to reproduce
 * a failure; the test setup sets it for the whole run and prints it when a test fails), else random.
 */
export const TWIN_SEED: number = (() => {
  const text = process.env.SLUICE_TWIN_SEED;
  if (text !== undefined && text !== '') {
    if (!/^\d+$/.test(text)) throw new SluiceError(`SLUICE_TWIN_SEED ${JSON.stringify(text)} is not a non-negative integer: set it to the seed a failing run printed, or unset it`);
    return Number(text) >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
})();

let twinsMade = 0;

/** mulberry32: a small seeded PRNG (the twins' orders must reproduce from TWIN_SEED). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface InMemoryStateStoreOptions {
  /** Seeds the order entries come back in. @default TWIN_SEED mixed with the store's number in this process */
  readonly seed?: number;
  /** Gives tombstones their `ttl`. @default systemClock */
  readonly clock?: Clock;
  /** How long a tombstone lives before TTL may delete it, as DynamoDbStateStore's option. @default 2592000 (30 days) */
  readonly ttlSeconds?: number;
}

/**
 * Versioned state with the same visibility rules as the DynamoDB store: every key keeps its
 * current version and the one before, so a read at version N−1 during a replay of N sees N−1
 * whatever part of N a crashed attempt wrote. A deleted key is dropped once no read can see it
 * (a read is at version − 1 or later), so the store follows the live state of a long run; until
 * then it is a tombstone with a `ttl`, and `expireBefore(ms)` deletes it as DynamoDB's TTL would.
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
  private readonly clock: Clock;
  private readonly ttlSeconds: number;

  constructor(opts: InMemoryStateStoreOptions = {}) {
    this.seed = opts.seed ?? (TWIN_SEED + Math.imul(++twinsMade, 0x9e3779b1)) >>> 0;
    this.description = `memory://state (order seed ${this.seed}, SLUICE_TWIN_SEED ${TWIN_SEED})`;
    this.random = prng(this.seed);
    this.clock = opts.clock ?? systemClock;
    this.ttlSeconds = opts.ttlSeconds ?? 30 * 86_400;
  }

  /** As the DynamoDB store: a replay older than the tombstones' lifetime may read versions TTL removed. */
  get retentionMs(): number {
    return this.ttlSeconds * 1000;
  }

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
    const seen = history.current.version <= version ? history.current : history.previous !== undefined && history.previous.version <= version ? history.previous : null;
    if (seen === null || seen.value === null) return null;
    return { key: keyOf(seen.key), value: copy(seen.value) };
  }

  async get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    const t = this.table(op);
    const out = new Map<string, StateEntry>();
    for (const k of this.shuffled([...keys])) {
      const entry = this.visible(t.get(k.id), version);
      if (entry && (entry.key.partition ?? 0) !== (k.partition ?? 0)) {
        throw new SluiceError(`state key \`${k.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is read from partition ${k.partition ?? 0}, but it lives in partition ${entry.key.partition ?? 0}: a key's partition must follow from its grouping values alone`);
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
   * DynamoDB's TTL, at a moment the test picks: every item whose `ttl` (epoch seconds) is before
   * `ms` is gone, as if the service had deleted it. Returns how many went.
   */
  expireBefore(ms: number): number {
    let n = 0;
    for (const [operatorId, t] of this.items) {
      for (const [id, history] of t) {
        if (history.ttl !== undefined && history.ttl * 1000 < ms) {
          t.delete(id);
          this.deletions.get(operatorId)?.delete(id);
          n++;
        }
      }
    }
    return n;
  }

  async commit(op: OperatorStateSpec, version: number, changes: StateChange[], _fence?: LeaseHandle, partitions?: readonly number[]) {
    const t = this.table(op);
    // As the DynamoDB store: a commit scoped to some partitions carries only their changes.
    for (const c of changes) {
      if (!inPartitions(c, partitions)) throw new SluiceError(`state change \`${c.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is in partition ${c.key.partition ?? 0}, outside the partitions [${partitions!.join(', ')}] this commit writes`);
    }
    // As the DynamoDB store: every key and item is checked before anything is written.
    const written = new Map<string, KeyVersion>();
    for (const c of changes) {
      written.set(c.key.id, { version, key: keyOf(c.key), value: c.value === null ? c.value : copy(c.value) });
    }
    for (const w of written.values()) {
      const stored = t.get(w.key.id)?.current.key.partition ?? 0;
      if ((w.key.partition ?? 0) !== stored && t.has(w.key.id)) {
        throw new SluiceError(`state key \`${w.key.id.slice(0, 80)}\` of operator \`${op.operatorId}\` is written to partition ${w.key.partition ?? 0}, but it lives in partition ${stored}: a key's partition must follow from its grouping values alone`);
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
    const ttl = Math.floor(this.clock.now() / 1000) + this.ttlSeconds;
    for (const w of written.values()) {
      const history = t.get(w.key.id);
      let next: KeyHistory;
      if (history === undefined) next = { current: w };
      else if (history.current.version === version) next = { current: w, previous: history.previous }; // a replay of this version keeps the one before
      else next = { current: w, previous: history.current };
      if (w.value === null) {
        next.ttl = ttl;
        deleted.set(w.key.id, version);
      } else deleted.delete(w.key.id);
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
    throw new SluiceError(`state operatorId (${JSON.stringify(op.operatorId.slice(0, 80))}) must be non-empty, free of '#' and short (DynamoDB partition keys hold up to ${DYNAMODB_PARTITION_KEY_MAX_BYTES} bytes): use ids like "agg0"`);
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
  if (size > STATE_ITEM_MAX_BYTES) throw stateItemTooLarge(op.operatorId, cur.key.id, size, STATE_ITEM_MAX_BYTES, 'a state item (its value as JSON, gzipped above 32 KB)');
}

/** The keys, names and ttl of a DynamoDB state page around its entries (about; state-layout.ts). */
const PAGE_ITEM_OVERHEAD_BYTES = 100;

/** A copy of a state key (its partition kept when it has one). */
function keyOf(k: StateKey): StateKey {
  return k.partition === undefined || k.partition === 0 ? { id: k.id, evictAt: k.evictAt } : { id: k.id, evictAt: k.evictAt, partition: k.partition };
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
    const files = this.after(start, end);
    for (const f of options?.split ? splitOf(files, options.split) : files) {
      const cursor: LineCursor = { lineNo: 0, bytes: f.body.length };
      yield* parseLineChunks(parse, f.key, f.body, cursor);
      if (cursor.bytes > 0 || f.body.length === 0) yield { rows: [], deadLetters: [], bytes: cursor.bytes };
    }
  }
  /** As the S3 landing source: contiguous groups of the batch's files, at most one a file. */
  async planSplits(_id: number, start: Json | null, end: Json, maxSplits: number): Promise<number> {
    return Math.max(1, Math.min(maxSplits, this.after(start, end).length));
  }
  async backlog(from: Json | null, target: Json | null): Promise<SourceBacklog> {
    const files = target ? this.after(from, target) : [];
    return { files: files.length, bytes: files.reduce((a, f) => a + f.body.length, 0) };
  }
}

/** One durable write of the sink twin: piece `piece` of batch `batchId`. */
export interface SinkWrite {
  readonly batchId: number;
  readonly piece: number;
  readonly rows: OutputRow[];
}

/** A chunk of a streamed batch as the sink twin received it (addBatchChunks): chunk `index` of `batchId`. */
export interface SinkChunk {
  readonly batchId: number;
  readonly index: number;
  readonly rows: OutputRow[];
}

export interface InMemorySinkOptions {
  /** Rows per durable piece of a batch's write (the DynamoDB sink's chunk is 98). @default 98 */
  readonly pieceRows?: number;
}

/**
 * A sink that writes each batch as the DynamoDB and S3 file sinks do: its rows sorted (so which
 * rows fall in piece i depends only on the set of rows), in pieces of `pieceRows`, each piece
 * durable on its own, `onPieceWritten(i)` told after each. A replay rewrites its batch's pieces
 * (deterministic keys), so `batches` holds what a reader sees; `writes` keeps every write ever
 * made, so a batch written twice, or written twice with different content, is visible.
 *
 * A streamed batch (addBatchChunks, a stateless query) is written as the DynamoDB sink writes it:
 * rows in the order they come (a replay yields the same chunks), a piece written as soon as
 * `pieceRows` rows are there (a piece may span chunks), the rest at the end. Each chunk is
 * recorded in `received` when it arrives, so a test sees what the sink had before the source
 * yielded its next chunk. Strict as the DynamoDB sink's markers: an empty chunk (the executor
 * leaves them out), a replayed piece whose rows differ from the piece stored, or a replay with
 * fewer pieces than stored is a non-retriable SluiceError.
 */
export class InMemorySink implements Sink {
  readonly description = 'memory://sink';
  /** What the sink holds per batch: its pieces as last written, in order. */
  readonly batches = new Map<number, OutputRow[]>();
  /** Every durable write, in order. */
  readonly writes: SinkWrite[] = [];
  /** Every chunk a streamed batch brought (addBatchChunks), in the order received. */
  readonly received: SinkChunk[] = [];
  calls = 0;
  readonly pieceRows: number;
  private readonly pieces = new Map<number, OutputRow[][]>();

  constructor(opts: InMemorySinkOptions = {}) {
    const n = opts.pieceRows ?? 98;
    if (!Number.isInteger(n) || n < 1) throw new SluiceError(`InMemorySink pieceRows (${n}) must be a positive integer: the rows per durable piece, e.g. 98 as the DynamoDB sink`);
    this.pieceRows = n;
  }

  async addBatch(batchId: number, rows: OutputRow[], ctx?: SinkContext) {
    this.calls++;
    const sorted = sortedRows(rows);
    let held = this.pieces.get(batchId);
    if (!held) this.pieces.set(batchId, (held = []));
    if (sorted.length === 0) this.batches.set(batchId, held.flat());
    for (let i = 0, piece = 0; i < sorted.length; i += this.pieceRows, piece++) {
      const rowsOfPiece = copy(sorted.slice(i, i + this.pieceRows));
      held[piece] = rowsOfPiece;
      this.writes.push({ batchId, piece, rows: rowsOfPiece });
      this.batches.set(batchId, held.flat());
      ctx?.onPieceWritten?.(piece);
    }
  }

  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx?: SinkContext) {
    this.calls++;
    let held = this.pieces.get(batchId);
    if (!held) this.pieces.set(batchId, (held = []));
    const stored = held;
    const differs = (what: string) =>
      new SluiceError(`InMemorySink: ${what} of batch ${batchId}: a replay of a streamed batch must yield the same chunks (same offsets, same order)`, { retriable: false, details: { batchId } });
    let piece = 0;
    let pending: OutputRow[] = [];
    const write = () => {
      const before = stored[piece];
      if (before !== undefined && JSON.stringify(before) !== JSON.stringify(pending)) throw differs(`piece ${piece} holds other rows than this replay's`);
      stored[piece] = pending;
      this.writes.push({ batchId, piece, rows: pending });
      this.batches.set(batchId, stored.flat());
      ctx?.onPieceWritten?.(piece);
      piece++;
      pending = [];
    };
    let index = 0;
    for await (const chunk of chunks) {
      if (!Array.isArray(chunk) || chunk.length === 0) throw new SluiceError(`InMemorySink: chunk ${index} of batch ${batchId} is ${Array.isArray(chunk) ? 'empty' : 'not an array'}: the executor leaves empty chunks out`, { retriable: false });
      const rows = copy(chunk);
      this.received.push({ batchId, index: index++, rows });
      for (const r of rows) {
        pending.push(r);
        if (pending.length === this.pieceRows) write();
      }
    }
    if (pending.length > 0) write();
    if (stored.length > piece) throw differs(`${stored.length} pieces are stored, this replay wrote ${piece}`);
    if (piece === 0) this.batches.set(batchId, []);
  }

  /** Pieces written more than once with different rows: a replay that did not repeat itself. */
  conflicts(): Array<{ batchId: number; piece: number }> {
    const first = new Map<string, string>();
    const out: Array<{ batchId: number; piece: number }> = [];
    for (const w of this.writes) {
      const k = `${w.batchId}/${w.piece}`;
      const text = JSON.stringify(w.rows);
      const seen = first.get(k);
      if (seen === undefined) first.set(k, text);
      else if (seen !== text && !out.some((o) => o.batchId === w.batchId && o.piece === w.piece)) out.push({ batchId: w.batchId, piece: w.piece });
    }
    return out;
  }

  /** How many times each batch's piece 0 was written (a batch with no rows writes none). */
  timesWritten(batchId: number): number {
    return this.writes.filter((w) => w.batchId === batchId && w.piece === 0).length;
  }
}

/** Rows in a canonical order: by their JSON with sorted keys. */
function sortedRows(rows: readonly OutputRow[]): OutputRow[] {
  const keyed = rows.map((r) => [stableJson(r), r] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, r]) => r);
}

function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
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
    if (this.holder && this.holder.expiresAtMs >= this.now() && this.holder.owner !== owner) return null;
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
  expired(op: OperatorStateSpec, wm: number, version: number, partitions?: readonly number[]) {
    return this.inner.expired(op, wm, version, partitions);
  }
  all(op: OperatorStateSpec, version: number, partitions?: readonly number[]) {
    return this.inner.all(op, version, partitions);
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
  commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]) {
    let deletes = 0;
    for (const c of changes) if (c.value === null) deletes++;
    this.commits.push({ version, changes: changes.length, puts: changes.length - deletes, deletes });
    return this.inner.commit(op, version, changes, fence, partitions);
  }
}

/**
 * Static tables in memory, for stream-static joins in tests: rows put under an S3 URI (read whole)
 * or a DynamoDB table name (looked up by key, as the DynamoDB adapter is), typed by the spec's
 * schema when opened. Counts the loads and lookups, so a test can see a run read a table once.
 */
export class InMemoryStaticTables implements StaticTables {
  private readonly objects = new Map<string, Array<Record<string, unknown>>>();
  private readonly tables = new Map<string, Array<Record<string, unknown>>>();
  readonly counts = { loads: 0, lookups: 0, keysLookedUp: 0 };

  /** The rows of the table at `uri` (staticTable.s3) or named `dynamodb://name` (staticTable.dynamodb). */
  put(where: string, rows: Array<Record<string, unknown>>): this {
    if (where.startsWith('dynamodb://')) this.tables.set(where.slice('dynamodb://'.length), rows);
    else this.objects.set(where, rows);
    return this;
  }

  open(spec: StaticTableSpec): StaticTableReader {
    const typed = (rows: Array<Record<string, unknown>>, what: string) =>
      rows.map((r, i) => {
        const res = coerceRecord(spec.schema, { ...r });
        if (!res.ok) throw new SluiceError(`static table ${what} row ${i + 1}: ${res.reason}`);
        return res.row;
      });
    if (spec.kind === 'dynamodb') {
      return {
        description: `dynamodb://${spec.tableName}`,
        lookup: async (keys) => {
          this.counts.lookups++;
          this.counts.keysLookedUp += keys.length;
          const rows = typed(this.tables.get(spec.tableName) ?? [], spec.tableName);
          const wanted = new Set(keys.map((k) => JSON.stringify(k)));
          return rows.filter((r) => wanted.has(JSON.stringify(spec.key.map((k) => r[k]))));
        },
      };
    }
    if (spec.kind === 's3') {
      return {
        description: spec.uri,
        load: async () => {
          this.counts.loads++;
          const rows = this.objects.get(spec.uri);
          if (!rows) throw new SluiceError(`static table ${spec.uri} has no objects: put its rows first`);
          return typed(rows, spec.uri);
        },
      };
    }
    return { description: 'staticTable.rows', load: async () => [...spec.rows] };
  }
}

/** The ShuffleStore port in memory: blobs by key, as the S3 one keeps them (overwritten by a retry). */
export class InMemoryShuffle implements ShuffleStore {
  readonly description = 'memory://shuffle';
  readonly blobs = new Map<string, string>();
  async put(key: string, body: string): Promise<void> {
    this.blobs.set(key, body);
  }
  async get(key: string): Promise<string | null> {
    return this.blobs.get(key) ?? null;
  }
  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }
  async purgeBelow(batchId: number): Promise<void> {
    for (const k of [...this.blobs.keys()]) {
      const id = Number(k.split('/')[0]);
      if (Number.isInteger(id) && id < batchId) this.blobs.delete(k);
    }
  }
}
