import type { LeaseHandle } from './lease';
import type { Json } from './values';

/**
 * A key in a stateful operator's state.
 * `id` identifies it; `evictAt` is the event time (ms) at or below which the watermark evicts it
 * (null: never evicted by time).
 *
 * When the operator's `fixedEviction` is true, evictAt is a function of the key (a window end, an
 * event-time column of the key) and must be passed on lookups; the store may use it to place the
 * key. Otherwise evictAt can change with the value (sessions) or is only known from the value.
 */
export interface StateKey {
  readonly id: string;
  readonly evictAt: number | null;
  /**
   * The state partition of the key, 0 <= partition < the query's statePartitions (absent: 0): a
   * hash of its grouping values with the window left out (statePartition), so that every window
   * of a key lives in one partition. Entries the store returns carry the partition they came from.
   */
  readonly partition?: number;
}

export interface StateEntry {
  readonly key: StateKey;
  readonly value: Json;
}

/** A change made by batch `version`: value null deletes. */
export interface StateChange {
  readonly key: StateKey;
  readonly value: Json | null;
}

export interface OperatorStateSpec {
  /** Stable id of the operator in the query ("agg0", "dedup0"). */
  readonly operatorId: string;
  /** See StateKey. */
  readonly fixedEviction: boolean;
  /** Granularity (ms) at which eviction times are grouped; a hint for the store's layout. */
  readonly evictionGranularityMs: number;
}

/**
 * Versioned key/value state, per operator. Version N is the state after batch N committed.
 * A batch N reads at version N-1 and writes version N; a replay of batch N after a crash reads
 * at N-1 again, whatever part of N's writes happened before the crash.
 */
export interface StateStore {
  readonly description: string;
  /** Values visible at `version` for `keys` (absent keys are missing from the map, by id). */
  get(op: OperatorStateSpec, keys: StateKey[], version: number): Promise<Map<string, StateEntry>>;
  /**
   * Entries visible at `version` with evictAt <= watermarkMs; only those of `partitions` when
   * given (a partitioned run's partition task).
   */
  expired(op: OperatorStateSpec, watermarkMs: number, version: number, partitions?: readonly number[]): Promise<StateEntry[]>;
  /** Every entry visible at `version` (complete mode); only those of `partitions` when given. */
  all(op: OperatorStateSpec, version: number, partitions?: readonly number[]): Promise<StateEntry[]>;
  /** Number of keys visible at `version`. */
  count(op: OperatorStateSpec, version: number): Promise<number>;
  /**
   * Write batch `version`'s changes. Must be safe to call again for the same version after a
   * crash (the same or a subset of changes), and must never be visible to reads at version-1.
   * `fence`: the run's lease; a store that fences refuses (LeaseLostError, nothing of the batch
   * committed) when a run with a newer token has written the state since.
   * `partitions`: version N of only those partitions is written (the changes lie in them): the
   * partition tasks of a partitioned run commit each its own, and one must not rewrite another's
   * version N. Absent: every partition.
   */
  commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]): Promise<void>;
  /**
   * Throws a clear SluiceError when `commit(op, version, changes)` could not store a change (a
   * value too large for the store's items). The executor calls it before any effect of the batch
   * (dead letters, sink), so such a batch fails before it writes anything. `partitions`: as
   * commit's (a partition task checks what its own commit writes). Optional.
   */
  check?(op: OperatorStateSpec, version: number, changes: StateChange[], partitions?: readonly number[]): Promise<void>;
  /**
   * The caller knows that no earlier attempt of batch `version` wrote anything to this store (a
   * partitioned run's partition task on its first attempt, of a batch its run planned first): the
   * store may skip looking for what such an attempt left behind. Optional; a hint only.
   */
  firstAttempt?(version: number): void;
  /**
   * The caller will read or commit these partitions of `op`'s state soon (a partition task, as it
   * starts): the store may start the reads they begin with now, so that they arrive while the
   * caller does other work. Optional; a hint only: it changes when reads happen, never what they
   * return (a read ahead that fails is made again when needed).
   */
  readAhead?(op: OperatorStateSpec, partitions?: readonly number[]): void;
  /**
   * How long (ms) a version superseded by a commit stays readable, when not forever: a replay
   * of a batch planned longer ago may need versions that are gone, and the executor refuses it.
   */
  readonly retentionMs?: number;
  /**
   * For a store whose versions expire (retentionMs): rewrites what would expire of the state at
   * `version` (the last committed batch). The executor calls it at the start of a run when the
   * last commit is older than `keepAliveAfterMs`, so an idle pipeline's state outlives the idle time.
   */
  keepAlive?(op: OperatorStateSpec, version: number, fence?: LeaseHandle): Promise<void>;
  readonly keepAliveAfterMs?: number;
  /**
   * keepAlive is an upgrade that, once it ran over a checkpoint's whole state, never needs to run
   * again (what the store writes since never expires): the executor notes it in commits/N
   * (CommitEntry.stateKeptForGood) and skips keepAlive while the last commit says so. A commit of
   * an earlier sluice lacks the note, so the run after it checks again.
   */
  readonly keepAliveOnce?: boolean;
  /**
   * The store's own counters since it was created (numbers by name; other members are ignored):
   * the executor reports what changed over each batch as the progress record's customMetrics. Optional.
   */
  stats?(): object;
}
