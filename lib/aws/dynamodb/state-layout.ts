/**
 * Where the DynamoDB state store keeps things, and how its items are encoded: partition and sort
 * keys, eviction buckets, and the codec of key items (two versions each) and directory items.
 * The versioned logic on top of it is state-store.ts.
 *
 * Layout (ns = namespace, op = operatorId, shard = fnv1a(id) % shards, g = evictionGranularityMs,
 * bucket = floor(evictAt / g), or `n` for evictAt null):
 *
 *     fixedEviction   ns#op#t#<bucket>#<shard> / id   the key's value, evictAt (`ea`)
 *     otherwise       ns#op#k#<shard> / id            the key's value, evictAt (`ea`)
 *                     ns#op#i#<bucket> / id           index: the key's evictAt lies in <bucket>
 *     both            ns#op#dir / -                   directory: {n: live keys, b: {bucket: keys}}
 *
 * A key item: `v` (its version), `d` (a tombstone), `val` (S: the value's JSON text, B: that text
 * gzipped; lib/engine/state-json.ts), `ea` (evictAt), `ttl` (tombstones), `f` (the fencing token
 * of the run that wrote it, when fenced), `id` (the key's id, when the sort key is its hash); the
 * version before it in `pv`, `pd`, `pval`, `pea`. A directory item: `v`/`dir` and `pv`/`pdir`,
 * `f`, and the layout it was written with (`sh` shards, `g` granularity, `fx` fixedEviction).
 *
 * The rules below are small named functions so that another layout can keep them: the sort key
 * of an id (`storageKey`: sha256 of ids a sort key cannot hold), the fence (`fenceCondition`), the
 * tombstone TTL (`tombstoneTtl`) and the item size check (`checkItemSize`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SluiceError } from '../../engine/errors';
import type { Json, OperatorStateSpec, StateKey } from '../../engine/ports';
import { decodeStateJson, stateItemTooLarge } from '../../engine/state-json';
import { fnv1a } from '../request/concurrency';
import { Item, ITEM_MAX_BYTES, itemSize, SORT_KEY_MAX_BYTES } from './requests';

/** The bucket of keys without an eviction time. */
export const NULL_BUCKET = 'n';
const DIR_SK = '-';

/** One version of an item. `value` is the stored attribute (S: the value's text, B: that text gzipped). */
export interface Slot {
  readonly version: number;
  readonly deleted: boolean;
  readonly value?: AttributeValue;
  readonly evictAt: number | null;
}

export interface RawItem {
  readonly pk: string;
  readonly sk: string;
  /** The key's id: `sk`, or the `id` attribute when `sk` is its hash. */
  readonly id: string;
  readonly cur: Slot;
  readonly prev: Slot | null;
}

export interface Directory {
  /** Live keys. */
  readonly n: number;
  /** Live keys (fixedEviction) or live index entries (otherwise) per bucket; only non-zero. */
  readonly b: Record<string, number>;
}

export interface RawDirectory {
  readonly cur: { version: number; dir: Directory };
  readonly prev: { version: number; dir: Directory } | null;
  readonly layout: StoredLayout;
}

/** The settings state was written with; they cannot change for a namespace. */
export interface StoredLayout {
  readonly shards: number;
  readonly granularityMs: number;
  readonly fixedEviction: boolean;
}

export interface Location {
  readonly pk: string;
  readonly sk: string;
  /** The eviction bucket of a fixedEviction key. */
  readonly bucket?: string;
}

export const EMPTY_DIRECTORY: Directory = { n: 0, b: {} };

/** The keys of one namespace of the state table. */
export class StateLayout {
  constructor(
    readonly namespace: string,
    readonly shards: number,
  ) {}

  bucketOf(op: OperatorStateSpec, evictAt: number | null): string {
    return evictAt === null ? NULL_BUCKET : String(Math.floor(evictAt / op.evictionGranularityMs));
  }

  /** The directory bucket a live key counts in (null: counted only in `n`). */
  countBucket(op: OperatorStateSpec, loc: Location, evictAt: number | null): string | null {
    if (op.fixedEviction) return loc.bucket!;
    return evictAt === null ? null : this.bucketOf(op, evictAt);
  }

  /** The partitions of a fixedEviction bucket, one per shard. */
  fixedPks(op: OperatorStateSpec, bucket: string): string[] {
    return range(this.shards).map((s) => this.fixedPk(op, bucket, s));
  }

  /** The partitions of a non-fixed operator's keys, one per shard. */
  lookupPks(op: OperatorStateSpec): string[] {
    return range(this.shards).map((s) => `${this.prefix(op)}#k#${s}`);
  }

  /** The partition of a non-fixed key, by its sort key (`storageKey(id)`). */
  lookupPk(op: OperatorStateSpec, sk: string): string {
    return `${this.prefix(op)}#k#${this.shardOf(sk)}`;
  }

  indexPk(op: OperatorStateSpec, bucket: string): string {
    return `${this.prefix(op)}#i#${bucket}`;
  }

  dirKey(op: OperatorStateSpec): Item {
    return { pk: { S: `${this.prefix(op)}#dir` }, sk: { S: DIR_SK } };
  }

  keyLocation(op: OperatorStateSpec, key: StateKey): Location {
    const sk = storageKey(key.id);
    if (!op.fixedEviction) return { pk: this.lookupPk(op, sk), sk };
    const bucket = this.bucketOf(op, key.evictAt);
    return { pk: this.fixedPk(op, bucket, this.shardOf(sk)), sk, bucket };
  }

  /** The layout this store writes for `op`. */
  layoutOf(op: OperatorStateSpec): StoredLayout {
    return { shards: this.shards, granularityMs: op.evictionGranularityMs, fixedEviction: op.fixedEviction };
  }

  private shardOf(sk: string): number {
    return fnv1a(sk) % this.shards;
  }

  private prefix(op: OperatorStateSpec): string {
    return `${this.namespace}#${op.operatorId}`;
  }

  private fixedPk(op: OperatorStateSpec, bucket: string, shard: number): string {
    return `${this.prefix(op)}#t#${bucket}#${shard}`;
  }
}

// -----------------------------------------------------------------------------------------------
// Key items

export function parseItem(raw: Item): RawItem {
  const slot = (v: string, d: string, val: string, ea: string): Slot => ({
    version: Number(raw[v].N),
    deleted: raw[d]?.BOOL === true,
    value: raw[val],
    evictAt: raw[ea]?.N === undefined ? null : Number(raw[ea].N),
  });
  return {
    pk: raw.pk.S!,
    sk: raw.sk.S!,
    id: raw.id?.S ?? raw.sk.S!,
    cur: slot('v', 'd', 'val', 'ea'),
    prev: raw.pv ? slot('pv', 'pd', 'pval', 'pea') : null,
  };
}

/**
 * The item of key `id` at `loc` holding `cur` and `prev` (`ttl`: epoch seconds, on a tombstone;
 * `fence`: the writer's token); SluiceError above DynamoDB's item limit. The id is kept in the
 * item when the sort key is its hash (`withId`: key items; index items need only the sort key).
 */
export function encodeItem(
  op: OperatorStateSpec,
  loc: { pk: string; sk: string },
  cur: Slot,
  prev: Slot | null,
  ttl: number,
  id: string,
  fence: number | null,
  withId = true,
): Item {
  const item: Item = { pk: { S: loc.pk }, sk: { S: loc.sk }, v: { N: String(cur.version) } };
  if (withId && loc.sk !== id) item.id = { S: id };
  if (fence !== null) item.f = { N: String(fence) };
  if (cur.deleted) {
    item.d = { BOOL: true };
    item.ttl = { N: String(ttl) };
  }
  if (cur.value) item.val = cur.value;
  if (cur.evictAt !== null) item.ea = { N: String(cur.evictAt) };
  if (prev) {
    item.pv = { N: String(prev.version) };
    if (prev.deleted) item.pd = { BOOL: true };
    if (prev.value) item.pval = prev.value;
    if (prev.evictAt !== null) item.pea = { N: String(prev.evictAt) };
  }
  checkItemSize(op, id, item);
  return item;
}

/** SluiceError (stateItemTooLarge) when `item`, as it would be written, exceeds DynamoDB's 400 KB. */
export function checkItemSize(op: OperatorStateSpec, id: string, item: Item): void {
  const size = itemSize(item);
  if (size > ITEM_MAX_BYTES) throw stateItemTooLarge(op.operatorId, id, size, ITEM_MAX_BYTES, 'an item of two versions (this value and the one before, gzipped)');
}

/** A value's JSON text as stored: as is, or gzipped above `compressAboveBytes`. */
export function encodeValue(json: string, compressAboveBytes: number): AttributeValue {
  if (Buffer.byteLength(json, 'utf8') <= compressAboveBytes) return { S: json };
  return { B: gzipSync(json) };
}

export function decodeValue(attr: AttributeValue, id: string): Json {
  if (attr.S !== undefined) return decodeStateJson(attr.S);
  if (attr.B !== undefined) return decodeStateJson(gunzipSync(attr.B).toString('utf8'));
  throw new SluiceError(`state value of key \`${id}\` has DynamoDB type ${Object.keys(attr).join(',')}, not S (JSON) or B (gzipped JSON): the item was not written by sluice; remove it or use another namespace`);
}

// -----------------------------------------------------------------------------------------------
// Directory items

export function parseDirectory(item: Item): RawDirectory {
  const parse = (attr: AttributeValue | undefined): Directory => (attr?.S ? (JSON.parse(attr.S) as Directory) : EMPTY_DIRECTORY);
  return {
    cur: { version: Number(item.v.N), dir: parse(item.dir) },
    prev: item.pv ? { version: Number(item.pv.N), dir: parse(item.pdir) } : null,
    layout: { shards: Number(item.sh?.N), granularityMs: Number(item.g?.N), fixedEviction: item.fx?.BOOL === true },
  };
}

/** The directory item of `op` at `version` (and the one before it); SluiceError above DynamoDB's item limit. */
export function encodeDirectory(
  layout: StateLayout,
  op: OperatorStateSpec,
  version: number,
  dir: Directory,
  prev: { version: number; dir: Directory } | null,
  fence: number | null,
): Item {
  const item: Item = {
    ...layout.dirKey(op),
    v: { N: String(version) },
    dir: { S: JSON.stringify(dir) },
    sh: { N: String(layout.shards) },
    g: { N: String(op.evictionGranularityMs) },
    fx: { BOOL: op.fixedEviction },
  };
  if (fence !== null) item.f = { N: String(fence) };
  if (prev) {
    item.pv = { N: String(prev.version) };
    item.pdir = { S: JSON.stringify(prev.dir) };
  }
  const size = itemSize(item);
  if (size > ITEM_MAX_BYTES) {
    throw new SluiceError(
      `state directory of operator \`${op.operatorId}\` (${Object.keys(dir.b).length} live eviction buckets) needs ${size} bytes, above DynamoDB's item limit of ${ITEM_MAX_BYTES} bytes: raise evictionGranularityMs, or set a watermark that evicts old state`,
      { details: { operatorId: op.operatorId, sizeBytes: size, limitBytes: ITEM_MAX_BYTES } },
    );
  }
  return item;
}

// -----------------------------------------------------------------------------------------------
// Checks

/** The prefix of a hashed sort key; an id that starts with it is hashed too, so no two ids share a sort key. */
export const HASHED_ID_PREFIX = '#sha256#';

/**
 * The sort key of state id `id`: the id itself, or `#sha256#<hex>` when a sort key cannot hold
 * it (empty, or over 1,024 bytes) or it starts with that prefix. The full id is kept in the item
 * and checked on every read; two ids meeting under one sha256 would need a collision, which no
 * one has ever found (2^128 work by the birthday bound).
 */
export function storageKey(id: string): string {
  if (!needsHash(id)) return id;
  return HASHED_ID_PREFIX + createHash('sha256').update(id, 'utf8').digest('hex');
}

function needsHash(id: string): boolean {
  // Ids are mostly ASCII: the UTF-16 length bounds the UTF-8 length from below, and by 3 from above.
  if (id.length === 0 || id.length > SORT_KEY_MAX_BYTES || id.startsWith(HASHED_ID_PREFIX)) return true;
  return id.length * 3 > SORT_KEY_MAX_BYTES && Buffer.byteLength(id, 'utf8') > SORT_KEY_MAX_BYTES;
}

/** SluiceError when the item read for `id` holds another id (only a sha256 collision could). */
export function checkStoredId(op: OperatorStateSpec, item: { sk: string; id: string }, id: string): void {
  if (item.id === id) return;
  throw new SluiceError(
    `state key of operator \`${op.operatorId}\` ${JSON.stringify(id.slice(0, 80))}... and the stored ${JSON.stringify(item.id.slice(0, 80))}... are stored under the same sha256 sort key ${item.sk}: ` +
      'this is a sha256 collision or an item written outside sluice; report it, and remove the item or use a new namespace',
    { details: { operatorId: op.operatorId, sk: item.sk } },
  );
}

/**
 * The fence of every state write: the item was last written by this run's lease token or an
 * older one. A run that lost its lease (its token is below the new holder's) is refused.
 */
export function fenceCondition(token: number): { expression: string; names: Record<string, string>; values: Item } {
  return { expression: 'attribute_not_exists(#f) OR #f <= :fence', names: { '#f': 'f' }, values: { ':fence': { N: String(token) } } };
}

/** The token a refused fenced write found (null: none). */
export function storedFence(stored: Item | undefined): number | null {
  return stored?.f?.N === undefined ? null : Number(stored.f.N);
}

/**
 * The `ttl` (epoch seconds) of a tombstone written at `nowMs`. Until then it keeps the only copy
 * of the value before it, which a replay of its batch reads; so the executor refuses a replay of
 * a batch planned more than `retentionSeconds` ago (StateStore.retentionMs), and nothing a replay
 * can need is ever removed.
 */
export function tombstoneTtl(nowMs: number, retentionSeconds: number): number {
  return Math.floor(nowMs / 1000) + retentionSeconds;
}

/** The key of a raw item in the store's read cache. */
export function cacheKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
