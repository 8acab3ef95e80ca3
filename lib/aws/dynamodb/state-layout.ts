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
 * gzipped; lib/engine/state-json.ts), `ea` (evictAt), `ttl` (tombstones); the version before it
 * in `pv`, `pd`, `pval`, `pea`. A directory item: `v`/`dir` and `pv`/`pdir`, and the layout it
 * was written with (`sh` shards, `g` granularity, `fx` fixedEviction).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SluiceError } from '../../engine/errors';
import type { Json, OperatorStateSpec, StateKey } from '../../engine/ports';
import { decodeStateJson } from '../../engine/state-json';
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

  lookupPk(op: OperatorStateSpec, id: string): string {
    return `${this.prefix(op)}#k#${this.shardOf(id)}`;
  }

  indexPk(op: OperatorStateSpec, bucket: string): string {
    return `${this.prefix(op)}#i#${bucket}`;
  }

  dirKey(op: OperatorStateSpec): Item {
    return { pk: { S: `${this.prefix(op)}#dir` }, sk: { S: DIR_SK } };
  }

  keyLocation(op: OperatorStateSpec, key: StateKey): Location {
    checkSortKey(op, key.id);
    if (!op.fixedEviction) return { pk: this.lookupPk(op, key.id), sk: key.id };
    const bucket = this.bucketOf(op, key.evictAt);
    return { pk: this.fixedPk(op, bucket, this.shardOf(key.id)), sk: key.id, bucket };
  }

  /** The layout this store writes for `op`. */
  layoutOf(op: OperatorStateSpec): StoredLayout {
    return { shards: this.shards, granularityMs: op.evictionGranularityMs, fixedEviction: op.fixedEviction };
  }

  private shardOf(id: string): number {
    return fnv1a(id) % this.shards;
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
    cur: slot('v', 'd', 'val', 'ea'),
    prev: raw.pv ? slot('pv', 'pd', 'pval', 'pea') : null,
  };
}

/** The item of key `id` at `loc` holding `cur` and `prev`; SluiceError above DynamoDB's item limit. */
export function encodeItem(op: OperatorStateSpec, loc: { pk: string; sk: string }, cur: Slot, prev: Slot | null, ttl: number, id: string): Item {
  const item: Item = { pk: { S: loc.pk }, sk: { S: loc.sk }, v: { N: String(cur.version) } };
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
  const size = itemSize(item);
  if (size > ITEM_MAX_BYTES) {
    throw new SluiceError(
      `state value for key \`${id}\` of operator \`${op.operatorId}\` needs a DynamoDB item of ${size} bytes (two versions, gzipped), above DynamoDB's item limit of ${ITEM_MAX_BYTES} bytes: keep per-key state smaller, e.g. aggregate instead of collecting rows`,
      { details: { operatorId: op.operatorId, key: id, sizeBytes: size, limitBytes: ITEM_MAX_BYTES } },
    );
  }
  return item;
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
): Item {
  const item: Item = {
    ...layout.dirKey(op),
    v: { N: String(version) },
    dir: { S: JSON.stringify(dir) },
    sh: { N: String(layout.shards) },
    g: { N: String(op.evictionGranularityMs) },
    fx: { BOOL: op.fixedEviction },
  };
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

export function checkSortKey(op: OperatorStateSpec, id: string): void {
  const bytes = Buffer.byteLength(id, 'utf8');
  if (bytes === 0 || bytes > SORT_KEY_MAX_BYTES) {
    throw new SluiceError(
      `state key id of operator \`${op.operatorId}\` is ${bytes} bytes (${JSON.stringify(id.slice(0, 80))}${id.length > 80 ? '...' : ''}); DynamoDB sort keys hold 1 to ${SORT_KEY_MAX_BYTES} bytes: group by shorter keys (or hash long ones)`,
      { details: { operatorId: op.operatorId, key: id.slice(0, 200), sizeBytes: bytes, limitBytes: SORT_KEY_MAX_BYTES } },
    );
  }
}

/** The key of a raw item in the store's read cache. */
export function cacheKey(pk: string, sk: string): string {
  return `${pk}\u0000${sk}`;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
