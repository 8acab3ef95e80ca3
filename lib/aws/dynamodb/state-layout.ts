/**
 * The packed state layout: where the DynamoDB state store keeps things and how its items are
 * encoded. The versioned logic on top of it is state-store.ts.
 *
 * State is split into slices, one per (namespace, operator, partition). A slice is a set of
 * immutable pages, listed by an immutable manifest, which a small mutable head points at:
 *
 *     head       ns#op#p<P>              / head               v, cur and prev manifest refs, layout, f (fence)
 *     manifest   ns#op#p<P>#m            / <v>#<w>#<chunk>    m: the page list (gzipped JSON)
 *     page       ns#op#p<P>#g<k mod 16>  / <v>#<w>#<k>        e: entries (JSON, gzipped when large)
 *
 * (`v` the batch that wrote it, `w` a random id of the commit attempt, `k` the page's number in it.)
 * A page holds the entries [id, evictAt, value] of one eviction bucket (the window end divided by
 * the granularity, `n` for none; one bucket `*` for operators whose eviction time moves with the
 * value), sorted by a 32-bit hash of the id and filled to about 1 KB: one write unit. A manifest
 * lists per bucket its pages in hash order, each with the lowest hash it covers, the earliest
 * evictAt in it, its entry count and when it was written; and the free slots: the page items its
 * head write left unnamed. A page's content never changes while a head names it, and nothing a
 * head names carries a TTL or is deleted. What a head stops naming becomes a free slot: the next
 * commit writes its new pages into those keys (a page so stored carries `r`, its own ref, and the
 * manifest names the slot beside the ref), conditionally on the slot still holding what the
 * manifest says, and deletes only the free slots beyond twice the slice's live page count (see
 * state-store.ts for the rules).
 * (Items written by sluice before live state stopped carrying a TTL carry a `ttl` attribute; the table's TTL setting stays
 * on for them.)
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { SluiceError } from '../../engine/errors';
import { fnv1a } from '../../engine/hash';
import type { Json, OperatorStateSpec } from '../../engine/ports';
import { decodeStateJson, encodeStateJson, stateItemTooLarge } from '../../engine/state-json';
import { type Item, ITEM_MAX_BYTES, itemSize } from './requests';

/** The bucket of keys without an eviction time. */
const NULL_BUCKET = 'n';
/** The one bucket of an operator whose eviction time is not fixed by the key. */
const MOVING_BUCKET = '*';
/** The size a page is filled to: DynamoDB bills a write per started KB of item. */
export const PAGE_TARGET_BYTES = 1024;
/** Partition keys a slice's pages are spread over, so one commit's writes do not meet on one partition. */
export const PAGE_SHARDS = 16;
/** The manifest is written in chunks of at most this many bytes (gzipped). */
const MANIFEST_CHUNK_BYTES = 300 * 1024;
/** The layout's name, stored in every head. */
export const LAYOUT_FORMAT = 'packed-1';

/** The settings a slice was written with. */
export interface StoredLayout {
  readonly format: string;
  readonly partitions: number;
  readonly granularityMs: number;
  readonly fixedEviction: boolean;
}

/** A manifest, as the head refers to it. */
export interface ManifestRef {
  /** The batch that wrote it. */
  readonly v: number;
  /** The commit attempt that wrote it. */
  readonly w: string;
  /** Its chunks. */
  readonly c: number;
  /** Live keys in the slice at this version. */
  readonly n: number;
}

export interface Head {
  readonly version: number;
  readonly cur: ManifestRef;
  readonly prev: ManifestRef | null;
  readonly layout: StoredLayout;
  readonly fence: number | null;
  /**
   * Nothing this head names carries a TTL (`nt`). A head of an earlier sluice, whose manifests
   * and pages were written with a 50-day TTL, lacks it: the next commit or keepAlive removes
   * those TTLs before it writes the head with it.
   */
  readonly noTtl: boolean;
}

/** A page, as the manifest lists it. */
export interface PageRef {
  /** The lowest id hash the page covers (up to the next page's `lo`). */
  readonly lo: number;
  /** `<v>.<w>.<k>`: where the page is stored (pageKey). */
  readonly ref: string;
  /** The earliest evictAt of its entries (null: none has one). */
  readonly minEvictAt: number | null;
  readonly count: number;
  /** When it was written, epoch seconds (informative: nothing expires by age). */
  readonly bornSec: number;
  /**
   * The ref of the item it is stored in, when that is not `ref`: a page written into the key of
   * a retired page (a free slot, see FreeSlot). The item then carries `r` = `ref`.
   */
  readonly slot?: string;
}

/** Where a page is stored: its own key, or the free slot it was written into. */
export function slotOf(p: Pick<PageRef, 'ref' | 'slot'>): string {
  return p.slot ?? p.ref;
}

/**
 * An item no head names any more (a retired page), listed by the manifest that retired it so the
 * next commit writes a page into its key instead of deleting it and putting a new one: a PutItem
 * that replaces an item of at most 1 KB costs one write unit, as a new item does, and the delete
 * (one more) is saved. `content` is the page the item holds (its `r`, or for an item that never
 * held another page, its own ref): the overwrite is conditional on it, so two writers never
 * both take one slot.
 */
export interface FreeSlot {
  readonly slot: string;
  readonly content: string;
}

/** A manifest as stored: the pages and the free slots the next commit may write into. */
export interface ManifestRecord {
  readonly pages: Manifest;
  readonly free: readonly FreeSlot[];
}

/** The pages of a slice at one version, per bucket, in hash order. */
export type Manifest = ReadonlyMap<string, readonly PageRef[]>;

/** One key's state in a page. */
export interface PageEntry {
  readonly id: string;
  readonly hash: number;
  readonly evictAt: number | null;
  readonly value: Json;
  /** Its JSON text in the page (made when first needed). */
  text?: string;
}

/** The head, manifest and page keys of one slice. */
export class SliceKeys {
  readonly prefix: string;

  constructor(
    namespace: string,
    operatorId: string,
    readonly partition: number,
  ) {
    this.prefix = `${namespace}#${operatorId}#p${partition}`;
  }

  head(): Item {
    return { pk: { S: this.prefix }, sk: { S: 'head' } };
  }

  manifestChunk(ref: ManifestRef, chunk: number): Item {
    return { pk: { S: `${this.prefix}#m` }, sk: { S: `${ref.v}#${ref.w}#${chunk}` } };
  }

  page(ref: string): Item {
    const [v, w, k] = ref.split('.');
    return { pk: { S: this.pageShard(Number(k) % PAGE_SHARDS) }, sk: { S: `${v}#${w}#${k}` } };
  }

  /** The partition key of the pages whose number is `g` modulo PAGE_SHARDS. */
  pageShard(g: number): string {
    return `${this.prefix}#g${g}`;
  }
}

/** The key of the per-key layout's directory item (sluice before the packed layout), to detect it. */
export function legacyDirectoryKey(namespace: string, operatorId: string): Item {
  return { pk: { S: `${namespace}#${operatorId}#dir` }, sk: { S: '-' } };
}

/** The hash that orders a page's entries and places an id in a page. */
export function idHash(id: string): number {
  return fnv1a(id);
}

export function bucketOf(op: OperatorStateSpec, granularityMs: number, evictAt: number | null): string {
  if (!op.fixedEviction) return MOVING_BUCKET;
  return evictAt === null ? NULL_BUCKET : String(Math.floor(evictAt / granularityMs));
}

/** The order of entries in a page: by id hash, then id. */
export function entryOrder(a: PageEntry, b: PageEntry): number {
  return a.hash - b.hash || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

// -----------------------------------------------------------------------------------------------
// Heads

export function encodeHead(keys: SliceKeys, head: Head): Item {
  const item: Item = {
    ...keys.head(),
    v: { N: String(head.version) },
    cur: { S: JSON.stringify(head.cur) },
    lay: { S: JSON.stringify(head.layout) },
  };
  if (head.prev) item.prev = { S: JSON.stringify(head.prev) };
  if (head.fence !== null) item.f = { N: String(head.fence) };
  if (head.noTtl) item.nt = { BOOL: true };
  return item;
}

export function parseHead(item: Item): Head {
  return {
    version: Number(item.v.N),
    cur: JSON.parse(item.cur.S!) as ManifestRef,
    prev: item.prev?.S ? (JSON.parse(item.prev.S) as ManifestRef) : null,
    layout: JSON.parse(item.lay.S!) as StoredLayout,
    fence: item.f?.N === undefined ? null : Number(item.f.N),
    noTtl: item.nt?.BOOL === true,
  };
}

// -----------------------------------------------------------------------------------------------
// Manifests: {bucket: [[lo, ref, minEvictAt, count, bornSec(, slot)], ...], "~": [[slot(, content)], ...]},
// gzipped, in chunks ("~", the free slots, is no bucket name: buckets are numbers, `n` and `*`)

const FREE_KEY = '~';

export function encodeManifest(keys: SliceKeys, ref: ManifestRef, manifest: Manifest, free: readonly FreeSlot[] = []): Item[] {
  const json: Record<string, Json[]> = {};
  for (const [bucket, pages] of [...manifest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    json[bucket] = pages.map((p) =>
      p.slot === undefined ? [p.lo, p.ref, p.minEvictAt, p.count, p.bornSec] : [p.lo, p.ref, p.minEvictAt, p.count, p.bornSec, p.slot],
    );
  }
  if (free.length > 0) json[FREE_KEY] = free.map((f) => (f.content === f.slot ? [f.slot] : [f.slot, f.content]));
  const bytes = gzipSync(JSON.stringify(json));
  const items: Item[] = [];
  for (let i = 0; i * MANIFEST_CHUNK_BYTES < bytes.length || i === 0; i++) {
    items.push({ ...keys.manifestChunk(ref, i), m: { B: bytes.subarray(i * MANIFEST_CHUNK_BYTES, (i + 1) * MANIFEST_CHUNK_BYTES) } });
  }
  return items;
}

export function parseManifest(chunks: readonly Item[]): ManifestRecord {
  const bytes = Buffer.concat(chunks.map((c) => Buffer.from(c.m.B!)));
  const json = JSON.parse(gunzipSync(bytes).toString('utf8')) as Record<string, [number, string, number | null, number, number, string?][]>;
  const out = new Map<string, PageRef[]>();
  let free: FreeSlot[] = [];
  for (const [bucket, pages] of Object.entries(json)) {
    if (bucket === FREE_KEY) {
      free = (pages as unknown as [string, string?][]).map(([slot, content]) => ({ slot, content: content ?? slot }));
      continue;
    }
    out.set(
      bucket,
      pages.map(([lo, ref, minEvictAt, count, bornSec, slot]) =>
        slot === undefined ? { lo, ref, minEvictAt, count, bornSec } : { lo, ref, minEvictAt, count, bornSec, slot },
      ),
    );
  }
  return { pages: out, free };
}

/** The page a page item holds: its `r` when written into a free slot, else the ref its key is made of. */
export function contentOf(item: Item): string {
  return item.r?.S ?? item.sk.S!.split('#').join('.');
}

// -----------------------------------------------------------------------------------------------
// Pages: e = [[id, evictAt, value], ...] as JSON; an entry whose value holds NaN or an infinity
// is the JSON string of its state JSON text (lib/engine/state-json.ts), so the page stays JSON

/** The JSON text of an entry in a page. */
export function entryText(e: PageEntry): string {
  if (e.text === undefined) {
    const text = encodeStateJson([e.id, e.evictAt, e.value]);
    e.text = text.startsWith('[') ? text : JSON.stringify(text);
  }
  return e.text;
}

/**
 * A page's deflate: a 4 KB window instead of zlib's 32 KB, which zlib sets up anew for every
 * page. A page's text is a few KB (its item aims at 1 KB deflated): on aggregation pages of 3 to
 * 25 KB of text the deflated bytes came out the same size or smaller, in a third less time a
 * page. Inflating needs no option (a 32 KB window reads any smaller one's output).
 */
const PAGE_DEFLATE = { windowBits: 12 } as const;

/**
 * The page item holding `entries`: their JSON as text up to `compressAboveBytes`, else deflated
 * (raw DEFLATE: entries of one window repeat its bounds and their keys' shape, so a 1 KB item
 * holds two to four times as much); SluiceError (stateItemTooLarge) above DynamoDB's item limit.
 */
export function encodePage(
  op: OperatorStateSpec,
  keys: SliceKeys,
  ref: string,
  entries: readonly PageEntry[],
  compressAboveBytes: number,
  content?: string,
): Item {
  const text = `[${entries.map(entryText).join(',')}]`;
  const e: AttributeValue = Buffer.byteLength(text, 'utf8') <= compressAboveBytes ? { S: text } : { B: deflateRawSync(text, PAGE_DEFLATE) };
  const item: Item = { ...keys.page(ref), e };
  if (content !== undefined) item.r = { S: content };
  const size = itemSize(item);
  if (size > ITEM_MAX_BYTES) {
    const biggest = entries.reduce((a, b) => (entryText(b).length > entryText(a).length ? b : a));
    throw stateItemTooLarge(op.operatorId, biggest.id, size, ITEM_MAX_BYTES, 'a state page (its entries as JSON, deflated)');
  }
  return item;
}

export function parsePage(item: Item, where: string): PageEntry[] {
  const e = item.e;
  const text = e?.S ?? (e?.B !== undefined ? inflateRawSync(e.B).toString('utf8') : undefined);
  if (text === undefined) {
    throw new SluiceError(
      `state page ${where} has no entries attribute \`e\` of type S or B: the item was not written by sluice; restore the table or use a new checkpoint`,
    );
  }
  return (JSON.parse(text) as EntryRow[]).map(entryOfRow);
}

/** An entry as entryText wrote it: [id, evictAt, value], or the JSON string of its state JSON. */
type EntryRow = [string, number | null, Json] | string;

function entryOfRow(row: EntryRow): PageEntry {
  const [id, evictAt, value] = typeof row === 'string' ? (decodeStateJson(row) as [string, number | null, Json]) : row;
  return { id, hash: idHash(id), evictAt, value };
}

/**
 * A new entry of `e`'s id, hash, eviction time and text, whose value is read from the text when
 * first asked for: a copy the caller's objects cannot change, and no parse for an entry that is
 * only written again (a commit rewrites a page from its entries' text).
 */
export function detachedEntry(e: PageEntry): PageEntry {
  const text = entryText(e);
  let parsed = false;
  let value: Json = null;
  return {
    id: e.id,
    hash: e.hash,
    evictAt: e.evictAt,
    text,
    get value(): Json {
      if (!parsed) {
        value = entryOfRow(JSON.parse(text) as EntryRow).value;
        parsed = true;
      }
      return value;
    },
  };
}

/** The id of page `k` written by attempt `w` of batch `v`. */
export function pageRef(version: number, writer: string, k: number): string {
  return `${version}.${writer}.${k}`;
}
