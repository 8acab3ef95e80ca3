/**
 * A batch's effects, applied in the one order that makes each of them safe to repeat on a replay,
 * whichever scheduler computed the batch:
 *
 *   state.check(N), sink.check(N) ─▶ dead letters ─▶ late rows ─▶ sink.addBatch(N) ─▶ state.commit(N, lease)
 *     ─▶ progress/N ─▶ commits/N ─▶ sources told (Source.committed) ─▶ purge below N − retain
 *   └──────────── addBatch ─────────────────────────┘└ stateCommit ┘          └ commitOffsets
 *
 * Two paths differ only in where a step's work happens, never in the order:
 * - a stateless batch to a sink with addBatchChunks streams: the sink takes each chunk as it is
 *   read (less the rows sink.check refuses), so the batch's dead letters are known (and written)
 *   only after the sink has them all;
 * - a partitioned batch's state was committed by its partition tasks, each its own partition's
 *   version N (a replay of N reads N−1, so that early commit is never seen by one); the state
 *   step then only takes their figures.
 *
 * Offsets are only "processed" in memory until commits/N lands; a crash anywhere before that
 * makes the next run replay batch N from offsets/N, and every effect of N is idempotent by N.
 */
import { SluiceError } from '../errors';
import type { CommitEntry, DeadLetter, Json, LeaseHandle, OutputRow, StateChange } from '../ports';
import type { SourceBacklog, StreamingProgress } from '../progress';
import type { BatchRead } from './batch';
import type { BatchStart } from './planner';
import { advance, type Progress, watermarksOf } from './position';
import { batchReportOf, changeFigures, diffStats, type OperatorFigures, progressRecord } from './reporter';
import type { QueryRuntime } from './runtime';
import type { BatchReport } from './types';
import type { OffsetEntry, Row } from '../ports';
import { lateRowColumns } from '../operators/stream-join';
import { toOutputRow } from '../rows';
import { writableChunks, writableRows } from '../sink-check';

/**
 * What is left of each source after the batch's end, up to the run's targets (undefined for a
 * source that cannot tell). Measured where the run's listing and reads are: by the committer of
 * the batch's process, or by a partitioned run's plan task for its commit task (BatchStart.backlog).
 */
export async function backlogAfter(
  rt: QueryRuntime,
  offsets: ReadonlyArray<Json | null>,
  targets: ReadonlyArray<Json | null>,
): Promise<Array<SourceBacklog | undefined>> {
  const backlog: Array<SourceBacklog | undefined> = [];
  for (let i = 0; i < rt.sources.length; i++) {
    const src = rt.sources[i];
    backlog.push(src.backlog ? await src.backlog(offsets[i] ?? null, targets[i] ?? null) : undefined);
  }
  return backlog;
}

/** One operator's part of a computed batch. */
interface OperatorOutcome {
  readonly stateRowsDelta: number;
  /** Rows it dropped as late. */
  readonly dropped: number;
}

/** The batch's output: its rows, or (a stateless batch to a sink that takes chunks) the chunks as they are read. */
type BatchOutput =
  | { readonly rows: OutputRow[] }
  | { readonly chunks: AsyncIterable<OutputRow[]>; readonly counted: () => number; readonly ended: () => boolean };

/** What the batch's state step does: commit these changes, or take the figures of partition tasks that committed theirs. */
type StateStep =
  | { readonly kind: 'changes'; readonly changes: readonly StateChange[][]; readonly statsBefore: Record<string, number> | null }
  | {
      readonly kind: 'committed';
      readonly figures: ReadonlyArray<Pick<OperatorFigures, 'updated' | 'removed' | 'bytes' | 'commitTimeMs'>>;
      readonly storeStats: Record<string, number> | null;
    };

/** A batch computed by some scheduler, ready for its effects. */
export interface BatchOutcome {
  readonly read: BatchRead;
  readonly output: BatchOutput;
  readonly operators: readonly OperatorOutcome[];
  /** The late-rows side output's records (empty when the run keeps no late rows). */
  readonly lateRecords: readonly Json[];
  readonly state: StateStep;
}

/** The batch as the planner gave it. */
export interface PlannedBatch {
  readonly entry: OffsetEntry;
  readonly replay: boolean;
  readonly noData: boolean;
  readonly start: BatchStart;
}

export interface CommitContext {
  readonly queryId: string;
  readonly runId: string;
  /** The run's lease: fences the sink's and the state's writes. */
  readonly fence: LeaseHandle | undefined;
  /** When computing the batch started, and when it ended (the getBatch step). */
  readonly computeStartMs: number;
  readonly computedAtMs: number;
  /** Keep the output rows in the batch report (RunOptions.collectRows). */
  readonly collectRows: boolean;
  /** The run's keepStateAlive said so: commits/N notes it (CommitEntry.stateKeptForGood). */
  readonly stateKeptForGood?: boolean;
}

export interface Committed {
  readonly report: BatchReport;
  readonly record: StreamingProgress;
  readonly commit: CommitEntry;
}

const LATE_ROW_REASON = 'older than the watermark: its window or event time is at or before the watermark of the previous batch';

export class BatchCommitter {
  private readonly retain: number;

  constructor(
    private readonly rt: QueryRuntime,
    opts: { readonly retainBatches?: number; readonly purgeAlso?: (keepFrom: number) => Promise<void> } = {},
  ) {
    this.retain = opts.retainBatches ?? 100;
    this.purgeAlso = opts.purgeAlso;
  }

  private readonly purgeAlso?: (keepFrom: number) => Promise<void>;

  /** Applies batch N's effects in order and commits it; `progress` then stands after N. */
  async commit(batch: PlannedBatch, progress: Progress, outcome: BatchOutcome, ctx: CommitContext): Promise<Committed> {
    const { rt } = this;
    const { deps, clock } = rt;
    const { entry } = batch;
    const id = entry.batchId;
    const sinkCtx = { ...rt.sinkContext, queryId: ctx.queryId, lease: ctx.fence };
    const { output, state } = outcome;
    let tRead = ctx.computedAtMs;
    let numOutputRows: number;
    const unwritable: Json[] = [];
    if ('chunks' in output) {
      await deps.sink.addBatchChunks!(id, writableChunks(deps.sink, id, output.chunks, sinkCtx, unwritable), sinkCtx);
      if (!output.ended())
        throw new SluiceError(
          `sink ${deps.sink.description} returned from addBatchChunks of batch ${id} before it took every chunk: a sink must consume the whole iterable (or leave addBatchChunks out and take addBatch)`,
          { retriable: false },
        );
      numOutputRows = output.counted();
      tRead = clock.now();
    } else numOutputRows = output.rows.length;
    // Before any effect: a change a store cannot hold fails the batch here, not after the sink.
    if (state.kind === 'changes' && deps.state.check) {
      for (let i = 0; i < rt.operators.length; i++) if (state.changes[i].length) await deps.state.check(rt.operators[i].op.spec, id, [...state.changes[i]]);
    }
    // Rows the sink could never write (Sink.check): dead letters, the rest to the sink.
    const writable = 'chunks' in output ? [] : await writableRows(deps.sink, id, output.rows, sinkCtx, unwritable);
    await this.writeDeadLetters(id, outcome.read.deadLetters);
    if (unwritable.length) await this.writeUnwritable(id, unwritable);
    if (deps.lateRows && outcome.lateRecords.length) await deps.lateRows.write(id, 'late', [...outcome.lateRecords]);
    if (!('chunks' in output)) await deps.sink.addBatch(id, writable, sinkCtx);
    const tAdd = clock.now();
    const commitTimes: number[] = [];
    if (state.kind === 'changes') {
      for (let i = 0; i < rt.operators.length; i++) {
        const t = clock.now();
        if (state.changes[i].length) await deps.state.commit(rt.operators[i].op.spec, id, [...state.changes[i]], ctx.fence);
        commitTimes.push(clock.now() - t);
      }
    }
    const tState = clock.now();

    const stateRowsByOperator = rt.operators.map((_, i) => progress.stateRowsByOperator[i] + outcome.operators[i].stateRowsDelta);
    const commit = this.commitEntry(ctx.queryId, entry, progress, outcome.read, stateRowsByOperator, ctx.stateKeptForGood === true);
    const { targets } = batch.start;
    const backlog = batch.start.backlog ?? (targets ? await backlogAfter(rt, entry.offsets, targets) : []);
    // the files a batch read, as its chunks counted them (ReadResult.files): only for a source
    // whose backlog is files (S3; a Kinesis source's is records)
    const filesRead = rt.sources.map((_, i) => (backlog[i]?.files === undefined ? undefined : (outcome.read.perSourceFiles[i] ?? 0)));
    const operators: OperatorFigures[] = rt.operators.map((_, i) => ({
      stateRows: stateRowsByOperator[i],
      dropped: outcome.operators[i].dropped,
      ...(state.kind === 'changes' ? { ...changeFigures(state.changes[i]), commitTimeMs: commitTimes[i] } : state.figures[i]),
    }));
    const record = progressRecord(rt, {
      ids: { queryId: ctx.queryId, runId: ctx.runId },
      entry,
      progress,
      replay: batch.replay,
      noData: batch.noData,
      read: outcome.read,
      numOutputRows,
      operators,
      keepsLateRows: deps.lateRows !== undefined,
      storeStats: state.kind === 'changes' ? diffStats(state.statsBefore, storeStats(rt)) : state.storeStats,
      backlog,
      filesRead,
      start: batch.start,
      durations: { getBatch: tRead - ctx.computeStartMs, addBatch: tAdd - tRead, stateCommit: tState - tAdd },
    });
    // Progress before the commit, so that a batch that committed always has its report (a replay
    // rewrites it with the same figures); the commit's own time joins the reported record only.
    await this.writeProgress(record);
    const tCommit = clock.now();
    await deps.checkpoint.writeCommit(commit);
    const commitOffsets = clock.now() - tCommit;
    advance(progress, commit);
    await this.notifySources(id, commit.offsets);
    if (id > 0 && id % 10 === 0 && id - this.retain > 0) await this.purge(id, id - this.retain);
    rt.log({
      event: 'batch',
      batchId: id,
      replay: batch.replay,
      noData: batch.noData,
      rowsIn: record.numInputRows,
      rowsOut: numOutputRows,
      watermark: new Date(entry.batchWatermarkMs).toISOString(),
      droppedByWatermark: operators.reduce((a, o) => a + o.dropped, 0),
      deadLetters: record.sluice.numDeadLetters,
      durationMs: record.batchDuration,
    });
    const rows = ctx.collectRows ? ('chunks' in output ? (outcome.read.rows as OutputRow[]) : output.rows) : [];
    return {
      report: batchReportOf(record, commit.nextBatchWatermarkMs, rows),
      record: { ...record, durationMs: { ...record.durationMs, commitOffsets } },
      commit,
    };
  }

  /** commits/N: the end offsets and the watermarks the next batch runs with. */
  private commitEntry(
    queryId: string,
    entry: OffsetEntry,
    progress: Progress,
    read: BatchRead,
    stateRowsByOperator: number[],
    stateKeptForGood: boolean,
  ): CommitEntry {
    const { rt } = this;
    const stateRows = stateRowsByOperator.reduce((a, b) => a + b, 0);
    const operatorWatermarksMs = rt.watermarks.advance(progress.operatorWatermarksMs, read.maxEventTimes);
    const lastInputAtMs = read.numInputRows > 0 ? entry.batchTimestampMs : progress.lastInputAtMs;
    return {
      batchId: entry.batchId,
      queryId,
      shapeFingerprint: rt.fingerprint,
      offsets: entry.offsets,
      batchWatermarkMs: entry.batchWatermarkMs,
      nextBatchWatermarkMs: rt.watermarks.global(watermarksOf(entry), operatorWatermarksMs),
      operatorWatermarksMs,
      stateRows,
      // (a one-operator query's entry stays as it was: its total is its operator's)
      ...(stateRowsByOperator.length > 1 ? { stateRowsByOperator } : {}),
      ...(rt.plan.statePartitions > 1 ? { statePartitions: rt.plan.statePartitions } : {}),
      batchTimestampMs: entry.batchTimestampMs,
      ...(rt.plan.idleTimeoutMs !== undefined && lastInputAtMs !== null ? { lastInputAtMs } : {}),
      ...(stateKeptForGood ? { stateKeptForGood: true as const } : {}),
      committedAtMs: rt.clock.now(),
    };
  }

  /**
   * After commits/N, never before: each source that moved hears that its batch committed
   * (Source.committed: cleanSource, notifications). A failure there is logged, never the run's.
   */
  private async notifySources(batchId: number, offsets: ReadonlyArray<Json | null>): Promise<void> {
    for (let i = 0; i < this.rt.sources.length; i++) {
      const src = this.rt.sources[i];
      const end = offsets[i] ?? null;
      if (!src.committed || end === null) continue;
      try {
        await src.committed(batchId, end);
      } catch (e) {
        this.rt.log({ event: 'source-committed-failed', batchId, source: src.description, error: (e as Error).message });
      }
    }
  }

  /** Malformed records, with where they came from (a replay overwrites the batch's own). */
  private async writeDeadLetters(batchId: number, deadLetters: readonly DeadLetter[]): Promise<void> {
    const sink = this.rt.deps.deadLetters;
    if (!sink || deadLetters.length === 0) return;
    await sink.write(
      batchId,
      'malformed',
      deadLetters.map((d) => ({ source: { ...d.source }, raw: d.raw, reason: d.reason, batchId })),
    );
  }

  /** Output rows the sink refused (Sink.check); without a dead-letter sink they are logged and dropped, as malformed records are. */
  private async writeUnwritable(batchId: number, records: Json[]): Promise<void> {
    const sink = this.rt.deps.deadLetters;
    if (sink) await sink.write(batchId, 'unwritable', records);
    else this.rt.log({ event: 'unwritable-rows-dropped', batchId, rows: records.length, reason: (records[0] as { reason: string }).reason });
  }

  /** progress/N. Informational: a failed write is logged and the batch goes on, unless it can never succeed. */
  private async writeProgress(record: StreamingProgress): Promise<void> {
    try {
      await this.rt.deps.checkpoint.writeProgress(record.batchId, record as unknown as Json);
    } catch (e) {
      this.rt.log({ event: 'progress-write-failed', batchId: record.batchId, error: (e as Error).message });
      if (e instanceof SluiceError && !e.retriable) throw e;
    }
  }

  /**
   * Purges the checkpoint below `keepFrom` once batch N committed. The batch is done whatever
   * happens here: a failed purge is logged and the run goes on (the next purge, ten batches on,
   * removes everything below its own bound, so nothing is left behind for good).
   */
  private async purge(batchId: number, keepFrom: number): Promise<void> {
    try {
      await this.rt.deps.checkpoint.purge(keepFrom);
      if (this.purgeAlso) await this.purgeAlso(keepFrom);
    } catch (e) {
      this.rt.log({ event: 'purge-failed', batchId, keepFrom, error: (e as Error).message });
    }
  }
}

/** The late-rows records of operator i's late rows (a join's from `rightFrom` on are its right side's), as the side output holds them. */
export function lateRecords(rt: QueryRuntime, entry: OffsetEntry, i: number, rows: readonly Row[], rightFrom?: number): Json[] {
  const watermark = new Date(entry.lateWatermarkMs).toISOString();
  const many = rt.operators.length > 1;
  const o = rt.operators[i].chained;
  return rows.map((r, j) => ({
    row: toOutputRow(r, lateRowColumns(o.inputColumns, o.join, j, rightFrom)),
    reason: LATE_ROW_REASON,
    watermark,
    batchId: entry.batchId,
    ...(many ? { operatorId: o.operatorId } : {}),
  }));
}

/** The state store's counters now (StateStore.stats), numbers only; null when it keeps none. */
export function storeStats(rt: QueryRuntime): Record<string, number> | null {
  if (!rt.operators.length || !rt.deps.state.stats) return null;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(rt.deps.state.stats())) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return out;
}
