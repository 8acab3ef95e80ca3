/**
 * The only place that decides a run's next batch (Spark's constructNextBatch, with the trigger's
 * rule), for every scheduler:
 *
 *   offsets/N logged, commits/N not ─▶ replay N as logged (or stop: the deadline is near)
 *   Trigger.Once and a batch ran     ─▶ stop (Spark's single-batch executor runs one batch)
 *   the deadline is near              ─▶ stop (the next run goes on)
 *   each source planned up to the run's targets (noted once: availableNow), with its limits
 *     data                            ─▶ batch N
 *     none, a no-data batch due       ─▶ no-data batch N (the watermark moved: evict, emit)
 *     none, idleTimeout reached       ─▶ no-data batch N with the idle watermark (once a run)
 *     none                            ─▶ stop
 *
 * What the planner keeps of a run (RunState) is plain data: the single scheduler holds it in
 * memory, the partitioned one stores it in the run's record between its plan tasks.
 */
import { CheckpointMismatchError } from '../errors';
import type { Json, OffsetEntry } from '../ports';
import type { SourceBacklog } from '../progress';
import { NO_WATERMARKS, watermarkMoved } from '../watermark';
import { checkReplayAge } from './recovery';
import { movesNoSource, type Progress } from './position';
import type { QueryRuntime } from './runtime';

/** What the planner remembers of the run so far. */
export interface RunState {
  /** Every source's latest offset when the run noted it (availableNow's target), null before. */
  targets: Array<Json | null> | null;
  /** Batches the run has planned, replays included. */
  batches: number;
  /** Of them, batches that read data. */
  dataBatches: number;
  /** Whether the run has asked for an idle watermark (once a run, before any data batch). */
  idleTried: boolean;
}

export function newRunState(): RunState {
  return { targets: null, batches: 0, dataBatches: 0, idleTried: false };
}

/** What the run loop measured of a batch before it ran: its start and the steps before reading. */
export interface BatchStart {
  /** When the trigger started (before latestOffset on the run's first batch, else before planning). */
  readonly startedAtMs: number;
  readonly latestOffsetMs?: number;
  readonly walCommitMs?: number;
  /** The run's targets (latestOffset), per source: the backlog is measured up to them; undefined on a replay. */
  readonly targets?: ReadonlyArray<Json | null>;
  /** What the sources have left after the batch, when measured as it was planned (committer.ts backlogAfter); else the committer measures it. */
  readonly backlog?: ReadonlyArray<SourceBacklog | undefined>;
  readonly consumedBefore?: import('./types').RunConsumption;
}

export type Planned =
  | { readonly kind: 'batch'; readonly entry: OffsetEntry; readonly replay: boolean; readonly noData: boolean; readonly start: BatchStart }
  | { readonly kind: 'stop'; readonly stoppedBy: 'done' | 'deadline' };

export interface PlanContext {
  /** The checkpoint's latest offsets/N (head): a batch logged and not committed is replayed. */
  readonly latestOffsetBatch: number;
  /** Whether too little time is left for another batch (a scheduler without a deadline: never). */
  readonly deadlineNear: () => boolean;
}

export class BatchPlanner {
  constructor(private readonly rt: QueryRuntime) {}

  /** The next batch of the run (offsets/N written for a new one), or why the run stops. */
  async next(progress: Progress, run: RunState, ctx: PlanContext): Promise<Planned> {
    const { rt } = this;
    const startedAtMs = rt.clock.now();
    const consumedBefore = rt.deps.meter?.snapshot();
    if (ctx.latestOffsetBatch >= progress.nextBatchId) {
      // Recovery: offsets/N without commits/N means batch N may have had some effects. Re-run it
      // with exactly the logged offsets and watermarks, unless the deadline leaves no room for a
      // batch: then the run stops before it, and the next run replays it.
      if (ctx.deadlineNear()) {
        rt.log({ event: 'replay-deferred', batchId: progress.nextBatchId });
        return { kind: 'stop', stoppedBy: 'deadline' };
      }
      const entry = await rt.deps.checkpoint.readOffsets(progress.nextBatchId);
      if (!entry) {
        throw new CheckpointMismatchError(
          `checkpoint ${rt.deps.checkpoint.description} has offsets up to batch ${ctx.latestOffsetBatch} but no offsets/${progress.nextBatchId} after commits/${progress.nextBatchId - 1}: restore the missing entry or start a new checkpoint location`,
        );
      }
      checkReplayAge(rt, entry);
      rt.log({ event: 'replay', batchId: entry.batchId });
      const noData = movesNoSource(entry, rt.sources.length);
      this.count(run, noData);
      return { kind: 'batch', entry, replay: true, noData, start: { startedAtMs, consumedBefore } };
    }
    // Trigger.Once: Spark's single-batch executor runs one batch (a replay counts), then stops.
    if (rt.plan.trigger === 'once' && run.batches >= 1) return { kind: 'stop', stoppedBy: 'done' };
    if (ctx.deadlineNear()) return { kind: 'stop', stoppedBy: 'deadline' };
    // availableNow: note the target once; data arriving during the run waits for the next one.
    let latestOffsetMs: number | undefined;
    if (!run.targets) {
      const targets: Array<Json | null> = [];
      for (let i = 0; i < rt.sources.length; i++) targets.push(await rt.sources[i].latestOffset(progress.offsets[i]));
      run.targets = targets;
      latestOffsetMs = rt.clock.now() - startedAtMs;
    }
    const targets = run.targets;
    // each source planned on its own, with its own limits; one without new data stays where it was
    const ends: Array<Json | null> = [];
    for (let i = 0; i < rt.sources.length; i++) {
      const target = targets[i] ?? null;
      ends.push(target === null ? null : await rt.sources[i].planBatch(progress.nextBatchId, progress.offsets[i], target, rt.limits[i]));
    }
    const noData = ends.every((e) => e === null);
    let watermarks = progress.watermarks;
    let idle = false;
    if (noData && !this.noDataBatchDue(progress) && !(await this.processingTimeDue(progress, run))) {
      // A run without new data on a source idle for idleTimeout: one no-data batch whose
      // watermark follows the wall clock (idleWatermark), so that the last windows close.
      const idleWm = run.dataBatches === 0 && !run.idleTried ? this.idleWatermark(progress) : null;
      run.idleTried = true;
      if (idleWm === null) return { kind: 'stop', stoppedBy: 'done' };
      watermarks = { ...watermarks, batchWatermarkMs: idleWm };
      idle = true;
    }
    const entry: OffsetEntry = {
      batchId: progress.nextBatchId,
      startOffsets: [...progress.offsets],
      offsets: ends.map((e, i) => e ?? progress.offsets[i]),
      batchWatermarkMs: watermarks.batchWatermarkMs,
      lateWatermarkMs: watermarks.lateWatermarkMs,
      batchTimestampMs: rt.clock.now(),
      ...(rt.processingClock ? { processingTimeMs: rt.processingClock.now() } : {}),
      ...(idle ? { watermarkAdvancedByIdleness: true } : {}),
    };
    await rt.deps.checkpoint.writeOffsets(entry);
    this.count(run, noData);
    const walCommitMs = rt.clock.now() - startedAtMs - (latestOffsetMs ?? 0);
    return {
      kind: 'batch',
      entry,
      replay: false,
      noData,
      start: { startedAtMs, consumedBefore, targets, walCommitMs, ...(latestOffsetMs !== undefined ? { latestOffsetMs } : {}) },
    };
  }

  private count(run: RunState, noData: boolean): void {
    run.batches++;
    if (!noData) run.dataBatches++;
  }

  /**
   * A no-data batch is due when some operator that can evict or emit would evict with a later
   * input watermark than in the last batch (each derived from the global one: watermark.ts).
   */
  noDataBatchDue(progress: Progress): boolean {
    return progress.hasCommit && this.rt.operators.some((o) => o.op.runsNoDataBatches && watermarkMoved(progress.watermarks, o.chained.watermarkOffsetMs));
  }

  /**
   * FORMAT-4's processing-time rule (sluice's choice): a run that read no new data runs one no-data
   * batch, stamped with its clock, when an operator has a timer or a TTL value due at that clock
   * (transformWithState in processingTime mode) and a batch was committed before; a run that read
   * data runs none (its data batches fired what was due). Nothing due: no batch, so an idle run
   * costs one look at the due index.
   */
  private async processingTimeDue(progress: Progress, run: RunState): Promise<boolean> {
    const { rt } = this;
    if (!progress.hasCommit || run.batches > 0) return false;
    const nowMs = (rt.processingClock ?? rt.clock).now();
    for (const o of rt.operators) {
      if (o.op.dueWithoutData && (await o.op.dueWithoutData(rt.deps.state, nowMs, progress.nextBatchId - 1))) return true;
    }
    return false;
  }

  /**
   * option idleTimeout (sluice's, not Spark's): the watermark of a no-data batch on a source that
   * has had no rows for at least the timeout, or null when none is due. Event time is taken to
   * have kept pace with the wall clock since the last batch that read rows:
   *
   *     rows read ─── L ──────── idle ≥ timeout ──────── now (a run without new data)
   *     watermark     W (from the data: max event time − delay)     W + (now − L)
   *
   * never beyond that, never back (only when it exceeds the watermark the next batch would run
   * with), and only while state holds rows a later watermark could emit or drop.
   */
  private idleWatermark(progress: Progress): number | null {
    const { rt } = this;
    const timeoutMs = rt.plan.idleTimeoutMs;
    if (timeoutMs === undefined || !rt.runsNoDataBatches || !progress.hasCommit) return null;
    if (progress.stateRows === 0 || progress.lastInputAtMs === null) return null;
    const idleMs = rt.clock.now() - progress.lastInputAtMs;
    if (idleMs < timeoutMs || Object.keys(progress.operatorWatermarksMs).length === 0) return null;
    const candidate = rt.watermarks.global(NO_WATERMARKS, progress.operatorWatermarksMs) + idleMs;
    return candidate > progress.watermarks.batchWatermarkMs ? candidate : null;
  }
}
