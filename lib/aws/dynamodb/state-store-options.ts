/** The options and counters of DynamoDbStateStore (state-store.ts). */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../engine/ports';
import type { RetryOptions } from '../request/retry';
import type { DynamoDbStateCache } from './state-cache';

export interface DynamoDbStateStoreOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** One per query (e.g. the query id). Must not contain `#`. */
  readonly namespace: string;
  /**
   * State partitions per operator (the query's statePartitions): StateKey.partition is below it.
   * Recorded with the state: another count is refused. @default 1
   */
  readonly partitions?: number;
  /** Maximum DynamoDB requests in flight per store call. @default 8 */
  readonly maxConcurrency?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Pages whose JSON exceeds this are stored deflated in a binary attribute. @default 0 (every page) */
  readonly compressAboveBytes?: number;
  /** Page entries kept in memory between reads and commits (per store instance). @default 250000 */
  readonly cacheMaxEntries?: number;
  /**
   * The manifests and pages this store reads and writes, kept for other stores too (a partitioned
   * run's task container, one store per task; cacheMaxEntries is then the cache's). @default a cache of its own
   */
  readonly cache?: DynamoDbStateCache;
  /** The size pages are refilled to, in bytes of item (at most 1,024: one write unit). @default 1024 */
  readonly pageFillBytes?: number;
}

/** Counters of DynamoDB traffic since the store was created (for benchmarks, never for logic). */
export interface DynamoDbStateStoreStats {
  /** Items read (heads, manifest chunks and pages returned). */
  readonly reads: number;
  /** Items written (pages, manifest chunks, heads). */
  readonly writes: number;
  /**
   * Items deleted: the manifests a commit made unreadable (no head names them, no replay can read
   * them), the free slots beyond twice the slice's live page count, each about one write unit, and what
   * a commit refused at its head write wrote under its own keys.
   */
  readonly deletes: number;
  /** Pages written. */
  readonly pagesWritten: number;
  /**
   * Of those, pages written into a free slot (the item of a page no head names any more): a
   * PutItem that replaces it costs one write unit, as a new item does, and saves its delete.
   */
  readonly pagesIntoFreeSlots: number;
  /** Free slots found holding another page than the manifest said (a crashed or stalled writer's): the page went under its own key. */
  readonly slotsTaken: number;
  /**
   * Of those, pages written only because keys were deleted (evictions): a run of pages whose
   * changes are all deletions. Each is at most 1 KB of item, one write unit; an eviction that
   * empties its pages writes none.
   */
  readonly evictionPagesWritten: number;
  /** Bytes of the pages' entries written (the changed state and what shares its pages). */
  readonly pageBytesWritten: number;
  /** Bytes of the state values the commits changed (the entries of changed keys, as JSON). */
  readonly changedBytes: number;
  /** DynamoDB requests (HTTP attempts), retries included. */
  readonly requests: number;
  /** GetItem and BatchGetItem calls. */
  readonly readRequests: number;
  /** BatchWriteItem and PutItem calls. */
  readonly writeRequests: number;
  /** Requests repeated after throttling, a 5xx or with unprocessed items. */
  readonly retries: number;
}
