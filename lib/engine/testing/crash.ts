/**
 * Test-only failure injection: crash a run at a named point of a batch, as a killed Lambda would
 * (everything in memory is lost; what was written stays written). The crashes are decorators
 * around the ports the executor is given, so the run loop itself knows nothing of them:
 *
 *   checkpoint.writeOffsets(N) ─▶ after-offsets        (a replay: once readOffsets(N) returned)
 *   source.read / readChunks   ─▶ mid-read             (once the first chunk was taken, or after
 *                                                       a read of one chunk or none; a no-data
 *                                                       batch reads nothing: right after its offsets;
 *                                                       a streamed batch: the sink has the chunk)
 *   sink.addBatch(N), or       ─▶ mid-sink             (the SinkContext.onPieceWritten the sink is
 *   sink.addBatchChunks(N)                              given throws after piece 0, the first durable
 *   (a streamed batch)                                  piece: only sinks that call it can crash there;
 *                                                       streamed, the source has not been read to
 *                                                       its end yet)
 *                              ─▶ after-sink
 *   state.commit(N)            ─▶ mid-state            (half of the batch's changes committed first)
 *   checkpoint.writeProgress   ─▶ before-commit        (before progress/N and commits/N are written)
 *   checkpoint.writeCommit(N)  ─▶ after-commit
 *
 * `mid-state` needs a batch that changes state; `mid-sink` a batch with rows and a sink that
 * writes in pieces and says so (the DynamoDB sink, the S3 file sink, foreachBatch's guarded
 * effects, the in-memory sink twin). Enabled at the edges only: `SLUICE_CRASH_AT=<point>[@<batchId>]` for the CLI,
 * `--crash <point>` for the conformance runner, the `crash` extra of `buildExecutor`, and
 * `crashingAt(plan, ports)` in tests.
 */
import { InjectedCrash, InvalidOptionError } from '../errors';
import type { CheckpointStore, Json, Lease, OffsetEntry, ReadOptions, ReadResult, Sink, SinkContext, Source, StateStore } from '../ports';

export const CRASH_POINTS = ['after-offsets', 'mid-read', 'mid-sink', 'after-sink', 'mid-state', 'before-commit', 'after-commit'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export interface CrashPlan {
  readonly point: CrashPoint;
  /** Crash only in this batch; any batch when absent. */
  readonly batchId?: number;
  /** How many crashes to inject before behaving (default 1). */
  readonly times?: number;
}

/** Counts down a plan's crashes; the decorators of one set of ports share one. */
export class CrashInjector {
  private remaining: number;

  constructor(private readonly plan: CrashPlan | null) {
    this.remaining = plan?.times ?? 1;
  }

  /** True when a crash is planned at `point` for this batch. */
  armed(point: CrashPoint, batchId: number): boolean {
    const p = this.plan;
    return !!p && this.remaining > 0 && p.point === point && (p.batchId === undefined || p.batchId === batchId);
  }

  /** Throws InjectedCrash when a crash is planned at `point` for this batch. */
  at(point: CrashPoint, batchId: number): void {
    if (this.armed(point, batchId)) {
      this.remaining--;
      this.firedCount++;
      throw new InjectedCrash(point, batchId);
    }
  }

  /** Crashes injected so far. */
  firedCount = 0;
}

/** The ports a crash can sit in front of. */
export interface CrashablePorts {
  readonly source: Source;
  readonly checkpoint: CheckpointStore;
  readonly state: StateStore;
  readonly sink: Sink;
  /** When present, a crash keeps it held, as a killed Lambda does (it never reaches its release). */
  readonly lease?: Lease;
}

/**
 * The same ports (and whatever else `ports` holds, e.g. a whole ExecutorDeps) with the plan's
 * crash in front of them, all sharing one injector: pass a CrashInjector to keep counting
 * `times` across several sets of ports.
 */
export function crashingAt<P extends CrashablePorts>(plan: CrashPlan | CrashInjector, ports: P): P {
  const crash = plan instanceof CrashInjector ? plan : new CrashInjector(plan);
  return {
    ...ports,
    source: crashingSource(crash, ports.source),
    checkpoint: crashingCheckpoint(crash, ports.checkpoint),
    state: crashingState(crash, ports.state),
    sink: crashingSink(crash, ports.sink),
    ...(ports.lease ? { lease: crashingLease(crash, ports.lease) } : {}),
  };
}

/**
 * A killed run keeps its lease until it expires: a release after a crash injected since the
 * lease was taken does nothing, so the next scheduled run finds the lease held.
 */
function crashingLease(crash: CrashInjector, inner: Lease): Lease {
  let firedAtAcquire = crash.firedCount;
  return {
    async acquire(owner, durationMs) {
      firedAtAcquire = crash.firedCount;
      return inner.acquire(owner, durationMs);
    },
    renew: (handle, durationMs) => inner.renew(handle, durationMs),
    async release(handle) {
      if (crash.firedCount > firedAtAcquire) return;
      return inner.release(handle);
    },
  };
}

/** `mid-read`: once the first chunk of a read was taken (or the read ended with fewer). */
function crashingSource(crash: CrashInjector, inner: Source): Source {
  const source: Source = {
    description: inner.description,
    latestOffset: (start) => inner.latestOffset(start),
    planBatch: (batchId, start, target, limits) => inner.planBatch(batchId, start, target, limits),
    async read(batchId, start, end, options) {
      const result = await inner.read(batchId, start, end, options);
      crash.at('mid-read', batchId);
      return result;
    },
  };
  const { readChunks, backlog } = inner;
  if (readChunks) {
    source.readChunks = async function* (batchId: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
      for await (const chunk of readChunks.call(inner, batchId, start, end, options)) {
        yield chunk;
        // The consumer asks for the next chunk: the first one has been taken.
        crash.at('mid-read', batchId);
      }
      crash.at('mid-read', batchId);
    };
  }
  if (backlog) source.backlog = (from, target) => backlog.call(inner, from, target);
  const { planSplits } = inner;
  if (planSplits) source.planSplits = (batchId, start, end, maxSplits) => planSplits.call(inner, batchId, start, end, maxSplits);
  const { committed } = inner;
  if (committed) source.committed = (batchId, end) => committed.call(inner, batchId, end);
  return source;
}

/**
 * `after-offsets` once offsets/N is written (or, for a replay, read back), `before-commit` before
 * progress/N is written, `after-commit` once commits/N is.
 */
function crashingCheckpoint(crash: CrashInjector, inner: CheckpointStore): CheckpointStore {
  return {
    description: inner.description,
    head: () => inner.head(),
    writeMetadata: (meta) => inner.writeMetadata(meta),
    async readOffsets(batchId) {
      const entry = await inner.readOffsets(batchId);
      if (entry) offsetsKnown(crash, entry);
      return entry;
    },
    async writeOffsets(entry) {
      await inner.writeOffsets(entry);
      offsetsKnown(crash, entry);
    },
    readCommit: (batchId) => inner.readCommit(batchId),
    async writeCommit(entry) {
      await inner.writeCommit(entry);
      crash.at('after-commit', entry.batchId);
    },
    async writeProgress(batchId, progress) {
      crash.at('before-commit', batchId);
      await inner.writeProgress(batchId, progress);
    },
    readProgress: (batchId) => inner.readProgress(batchId),
    purge: (keepFrom) => inner.purge(keepFrom),
    readSourceLog: (sourceIndex, name) => inner.readSourceLog(sourceIndex, name),
    writeSourceLog: (sourceIndex, name, body) => inner.writeSourceLog(sourceIndex, name, body),
    writeSourceLogOnce: (sourceIndex, name, body) => inner.writeSourceLogOnce(sourceIndex, name, body),
    ...(inner.deleteSourceLog ? { deleteSourceLog: (sourceIndex: number, name: string) => inner.deleteSourceLog!(sourceIndex, name) } : {}),
  };
}

/**
 * The run knows batch N's offsets: `after-offsets`; and when N is a no-data batch (it ends where
 * it starts, so the source is never asked to read), its read is over too: `mid-read`.
 */
function offsetsKnown(crash: CrashInjector, entry: OffsetEntry): void {
  crash.at('after-offsets', entry.batchId);
  if (JSON.stringify(entry.startOffsets[0]) === JSON.stringify(entry.offsets[0])) crash.at('mid-read', entry.batchId);
}

/** `mid-state`: the first half of a batch's changes is committed, then the run crashes. */
function crashingState(crash: CrashInjector, inner: StateStore): StateStore {
  return {
    description: inner.description,
    get: (op, keys, version) => inner.get(op, keys, version),
    expired: (op, watermarkMs, version, partitions) => inner.expired(op, watermarkMs, version, partitions),
    all: (op, version, partitions) => inner.all(op, version, partitions),
    count: (op, version) => inner.count(op, version),
    retentionMs: inner.retentionMs,
    keepAliveAfterMs: inner.keepAliveAfterMs,
    keepAliveOnce: inner.keepAliveOnce,
    keepAlive: inner.keepAlive ? (op, version, fence) => inner.keepAlive!(op, version, fence) : undefined,
    check: inner.check ? (op, version, changes, partitions) => inner.check!(op, version, changes, partitions) : undefined,
    firstAttempt: inner.firstAttempt ? (version) => inner.firstAttempt!(version) : undefined,
    readAhead: inner.readAhead ? (op, partitions) => inner.readAhead!(op, partitions) : undefined,
    async commit(op, version, changes, fence, partitions) {
      if (crash.armed('mid-state', version)) {
        await inner.commit(op, version, changes.slice(0, Math.ceil(changes.length / 2)), fence, partitions);
        crash.at('mid-state', version);
      }
      await inner.commit(op, version, changes, fence, partitions);
    },
  };
}

/**
 * `mid-sink`: the sink is told after each durable piece of its write; after piece 0 the hook it
 * was given throws, and the sink's write stops there as a killed Lambda's would (its other pieces
 * may be in flight). `after-sink`: once the sink holds the batch.
 */
function crashingSink(crash: CrashInjector, inner: Sink): Sink {
  const armedContext = (batchId: number, ctx: SinkContext): SinkContext => {
    if (!crash.armed('mid-sink', batchId)) return ctx;
    const told = ctx.onPieceWritten;
    const onPieceWritten = (index: number) => {
      told?.(index);
      if (index === 0) crash.at('mid-sink', batchId);
    };
    return { ...ctx, onPieceWritten };
  };
  const sink: Sink = {
    description: inner.description,
    retentionMs: inner.retentionMs,
    async addBatch(batchId, rows, ctx) {
      await inner.addBatch(batchId, rows, armedContext(batchId, ctx));
      crash.at('after-sink', batchId);
    },
  };
  const { check } = inner;
  if (check) sink.check = (batchId, rows, ctx) => check.call(inner, batchId, rows, ctx);
  // A streamed batch crashes the same way: after its first durable piece, once it has all of it.
  const { addBatchChunks } = inner;
  if (addBatchChunks) {
    sink.addBatchChunks = async (batchId, chunks, ctx) => {
      await addBatchChunks.call(inner, batchId, chunks, armedContext(batchId, ctx));
      crash.at('after-sink', batchId);
    };
  }
  return sink;
}

export function parseCrashPlan(text: string | undefined): CrashPlan | null {
  if (!text) return null;
  const [point, batch] = text.split('@');
  if (!(CRASH_POINTS as readonly string[]).includes(point)) {
    throw new InvalidOptionError(
      `crash point ${JSON.stringify(point)} is not one of ${CRASH_POINTS.join(', ')}: use e.g. SLUICE_CRASH_AT=after-sink or after-sink@3`,
    );
  }
  if (batch !== undefined && !/^\d+$/.test(batch)) {
    throw new InvalidOptionError(
      `crash batch ${JSON.stringify(batch)} in ${JSON.stringify(text)} must be a batch ID (a non-negative integer), e.g. after-sink@3`,
    );
  }
  return { point: point as CrashPoint, batchId: batch === undefined ? undefined : Number(batch) };
}
