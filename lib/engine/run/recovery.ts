/**
 * The guards a run passes before its first batch, the same for every scheduler (Spark's
 * populateStartOffsets, with sluice's checks of what a replay relies on):
 *
 *   head ─▶ last commit ─▶ stateful shape and partition count match the checkpoint's (or write
 *   its metadata) ─▶ where the query stands (Progress) ─▶ keep idle state alive
 *
 * and, before a replay, that what the replay reads is still kept (checkReplayAge).
 */
import { randomUUID } from 'node:crypto';
import { CheckpointMismatchError } from '../errors';
import type { CheckpointHead, CommitEntry, LeaseHandle, OffsetEntry } from '../ports';
import { type Progress, progressAfter } from './position';
import type { QueryRuntime } from './runtime';

export interface Recovered {
  readonly head: CheckpointHead;
  readonly last: CommitEntry | null;
  readonly queryId: string;
  readonly progress: Progress;
}

/**
 * Where the checkpoint says the query is, after checking it belongs to this query's shape.
 * `known`: the head, read by a caller that holds the lease since before it read it.
 */
export async function recover(rt: QueryRuntime, known?: CheckpointHead): Promise<Recovered> {
  const { checkpoint } = rt.deps;
  const head = known ?? (await checkpoint.head());
  let last: CommitEntry | null = null;
  if (head.latestCommitBatch >= 0) {
    last = await checkpoint.readCommit(head.latestCommitBatch);
    if (!last)
      throw new CheckpointMismatchError(
        `checkpoint ${checkpoint.description} lists commits/${head.latestCommitBatch} but it cannot be read: restore it from a backup or start a new checkpoint location`,
      );
  }
  const queryId = await checkShape(rt, last, head.metadata);
  checkSources(rt, head.metadata);
  return { head, last, queryId, progress: progressAfter(last, head.latestCommitBatch, rt.operators.length, rt.sources.length) };
}

/** Refuses a checkpoint written by a query of another stateful shape; returns the query id. */
async function checkShape(rt: QueryRuntime, last: CommitEntry | null, meta: CheckpointHead['metadata']): Promise<string> {
  const { plan } = rt;
  const stored = last
    ? { id: last.queryId, fp: last.shapeFingerprint, partitions: last.statePartitions ?? 1 }
    : meta
      ? { id: meta.id, fp: meta.shapeFingerprint, partitions: meta.statePartitions ?? 1 }
      : null;
  if (stored) {
    if (plan.stateful && stored.partitions !== plan.statePartitions) {
      throw new CheckpointMismatchError(
        `query ${plan.name} asks for statePartitions ${plan.statePartitions}, but its checkpoint ${rt.deps.checkpoint.description} was created with ${stored.partitions}: the partition count is fixed with the state, so set option('statePartitions', ${stored.partitions}), or give the query a new checkpoint location and backfill`,
        { details: { stored: stored.partitions, given: plan.statePartitions } },
      );
    }
    if (stored.fp !== rt.fingerprint) {
      if (stored.fp === rt.legacyFingerprint) {
        throw new CheckpointMismatchError(
          `query ${plan.name}: its checkpoint ${rt.deps.checkpoint.description} holds state written when TIMESTAMP values were epoch milliseconds; this version keeps them as epoch microseconds, and that state (window bounds, event times) would be misread: give the query a new checkpoint location and backfill`,
        );
      }
      if (stored.fp === rt.perKeyJoinFingerprint) {
        throw new CheckpointMismatchError(
          `query ${plan.name}: its checkpoint ${rt.deps.checkpoint.description} holds stream-stream join state in the per-key layout of an earlier sluice, which this version does not read (this version keeps a join's buffered rows in blocks): finish the query with the earlier version, or give the query a new checkpoint location and backfill`,
        );
      }
      const was = meta ? ` (checkpoint: ${JSON.stringify(meta.shape)})` : '';
      throw new CheckpointMismatchError(
        `query ${plan.name} does not match its checkpoint ${rt.deps.checkpoint.description}: its stateful shape (grouping keys, aggregations, window, dedup keys, output mode) is now ${JSON.stringify(rt.shape)}${was}, and state of another shape cannot be reused; revert the change, or give the query a new checkpoint location and backfill`,
      );
    }
    return stored.id;
  }
  const id = randomUUID();
  await rt.deps.checkpoint.writeMetadata({
    id,
    name: plan.name,
    createdAtMs: rt.clock.now(),
    shape: rt.shape,
    shapeFingerprint: rt.fingerprint,
    ...(plan.statePartitions > 1 ? { statePartitions: plan.statePartitions } : {}),
    sources: rt.sources.map((s) => s.description),
  });
  return id;
}

/**
 * Refuses a checkpoint created for other inputs: its offsets are positions in those (a landing
 * prefix's last key, a stream's sequence numbers), so another prefix or stream would be read from
 * the wrong place, skipping what sorts before it without a word.
 */
function checkSources(rt: QueryRuntime, meta: CheckpointHead['metadata']): void {
  const stored = meta?.sources;
  if (!stored) return;
  const now = rt.sources.map((s) => s.description);
  if (stored.length === now.length && stored.every((s, i) => s === now[i])) return;
  const list = (xs: readonly string[]) => xs.join(', ');
  throw new CheckpointMismatchError(
    `query ${rt.plan.name} reads ${list(now)}, but its checkpoint ${rt.deps.checkpoint.description} was created for ${list(stored)}, and its offsets are positions in those inputs: ` +
      `run it on ${list(stored)} again, or give it a new checkpoint location (--checkpoint) for the new input${now.length > 1 ? 's' : ''}`,
    { details: { stored, given: now } },
  );
}

/**
 * Refuses to replay a batch planned longer ago than what the replay relies on is kept: the state
 * store's superseded versions (StateStore.retentionMs, stateful queries) and the sink's replay
 * records (Sink.retentionMs: the DynamoDB sink's chunk markers, foreachBatch's effect markers).
 * Past the shortest of them the replay would emit wrong output or repeat effects instead of failing.
 */
export function checkReplayAge(rt: QueryRuntime, entry: OffsetEntry): void {
  const { state, sink } = rt.deps;
  const kept = [
    ...(rt.operators.length && state.retentionMs !== undefined
      ? [
          {
            ms: state.retentionMs,
            what: `${state.description} keeps the state versions a replay reads`,
            fix: 'restore the state table (point-in-time recovery) to before then and run again',
          },
        ]
      : []),
    ...(sink.retentionMs !== undefined
      ? [
          {
            ms: sink.retentionMs,
            what: `${sink.description} keeps the records that make its replay skip what it wrote`,
            fix: 'restore the sink table (point-in-time recovery) to before then and run again',
          },
        ]
      : []),
  ].sort((a, b) => a.ms - b.ms);
  if (!kept.length) return;
  const { ms: retentionMs, what, fix } = kept[0];
  const ageMs = rt.clock.now() - entry.batchTimestampMs;
  if (ageMs < retentionMs) return;
  const days = (ms: number) => `${(ms / 86_400_000).toFixed(1)} days`;
  throw new CheckpointMismatchError(
    `batch ${entry.batchId} of query ${rt.plan.name} waits for its replay since ${new Date(entry.batchTimestampMs).toISOString()} (${days(ageMs)}), longer than ${what} (${days(retentionMs)}): ` +
      `${fix}, or start a new checkpoint location and backfill`,
    { details: { batchId: entry.batchId, batchTimestampMs: entry.batchTimestampMs, ageMs, retentionMs } },
  );
}

/**
 * An idle pipeline's state outlives the idle time: when the last commit is older than the
 * store's keepAliveAfterMs, the store rewrites what of the committed state would expire.
 * Every scheduler calls it once at the start of a run, for every operator's whole state.
 * For a store whose keepAlive is needed once per checkpoint (keepAliveOnce), it is skipped when
 * the last commit notes it was done. Returns whether the run's commits may note it (the
 * CommitContext's stateKeptForGood).
 */
export async function keepStateAlive(rt: QueryRuntime, last: CommitEntry | null, fence: LeaseHandle | undefined): Promise<boolean> {
  const { state } = rt.deps;
  if (!rt.operators.length || !state.keepAlive || state.keepAliveAfterMs === undefined) return false;
  const once = state.keepAliveOnce === true;
  // No commit yet: the state there is (a replay of the first batch) is rewritten by its commit.
  if (!last) return once;
  if (once && last.stateKeptForGood) return true;
  if (rt.clock.now() - last.committedAtMs < state.keepAliveAfterMs) return false;
  rt.log({ event: 'state-keep-alive', batchId: last.batchId, idleMs: rt.clock.now() - last.committedAtMs });
  for (const o of rt.operators) await state.keepAlive(o.op.spec, last.batchId, fence);
  return once;
}
