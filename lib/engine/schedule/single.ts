/**
 * The single-Lambda scheduler: one process runs the whole availableNow run, as Spark's
 * MicroBatchExecution runs Trigger.AvailableNow:
 *
 *   take lease ─▶ recover (shape, progress, keepAlive) ─▶ loop:
 *     planner.next ─▶ stop | batch N (offsets/N written, or a replay as logged)
 *     compute N (run/batch.ts: read, stages, operators; no effects)
 *     committer.commit N (dead letters, late rows, sink, state, progress/N, commits/N)
 *     renew the lease once half of it is gone
 *   ─▶ release the lease ─▶ the run report
 *
 * Every rule about batches (limits, no-data batches, idleTimeout, Trigger.Once, the deadline's
 * stop) is the planner's; every effect's order is the committer's; the partitioned scheduler
 * (partitioned.ts) composes the same two, so the rules hold for both.
 */
import { randomUUID } from 'node:crypto';
import type { Json, LeaseHandle } from '../ports';
import { backlogCount, type StreamingProgress } from '../progress';
import { computeBatch, emptyRead, firstOperator, statelessOutput } from '../run/batch';
import { backlogAfter, type BatchOutcome, BatchCommitter, lateRecords, type PlannedBatch, storeStats } from '../run/committer';
import { BatchPlanner, newRunState } from '../run/planner';
import { keepStateAlive, recover } from '../run/recovery';
import { runReportOf } from '../run/reporter';
import { QueryRuntime } from '../run/runtime';
import type { BatchReport, ExecutorDeps, ExecutorOptions, RunOptions, RunReport, StopReason } from '../run/types';
import { type Progress, progressAfter } from '../run/position';

export class MicroBatchExecutor {
  private readonly rt: QueryRuntime;
  private readonly planner: BatchPlanner;
  private readonly committer: BatchCommitter;
  private readonly leaseMs: number;
  private readonly owner: string;
  /** The lease this run holds (renewed between batches). */
  private lease: LeaseHandle | null = null;

  constructor(
    private readonly deps: ExecutorDeps,
    options: ExecutorOptions = {},
  ) {
    this.rt = new QueryRuntime(deps);
    this.planner = new BatchPlanner(this.rt);
    this.committer = new BatchCommitter(this.rt, { retainBatches: options.retainBatches });
    this.leaseMs = options.leaseDurationMs ?? 15 * 60_000;
    this.owner = options.owner ?? randomUUID();
  }

  /** What the sink is told of the output (its columns and types, the grouping keys). */
  get sinkContext() {
    return this.rt.sinkContext;
  }

  /** Runs availableNow: everything present at the start, then stop. */
  async run(opts: RunOptions = {}): Promise<RunReport> {
    const { rt } = this;
    rt.openStaticTables();
    if (this.deps.lease) {
      this.lease = await this.deps.lease.acquire(this.owner, this.leaseMs);
      if (!this.lease) {
        const message = `another run of query ${rt.plan.name} holds its lease; this run exits without doing anything (the next scheduled run continues)`;
        rt.log({ event: 'lease-held', query: rt.plan.name });
        // nothing read: where the query stands is unknown, so the report says nothing of it
        const nothing = progressAfter(null, -1, rt.operators.length, rt.sources.length);
        return runReportOf(rt, { queryId: '', stoppedBy: 'lease-held', batches: [], progress: [], after: nothing, backlogLeft: 0, message });
      }
    }
    // A run that ends, or fails with an error it can report, gives the lease back so that the next
    // scheduled run need not wait. A killed Lambda never gets here: its lease stays held until it
    // expires (the crash decorators' lease does the same after an injected crash; testing/crash.ts).
    try {
      return await this.runHeld(opts);
    } finally {
      if (this.lease && this.deps.lease) await this.deps.lease.release(this.lease);
      this.lease = null;
    }
  }

  private async runHeld(opts: RunOptions): Promise<RunReport> {
    const { rt } = this;
    const { head, last, queryId, progress } = await recover(rt);
    const stateKeptForGood = await keepStateAlive(rt, last, this.lease ?? undefined);
    const runId = randomUUID();
    rt.runIds = { queryId, runId };
    const run = newRunState();
    const reports: BatchReport[] = [];
    const records: StreamingProgress[] = [];
    let maxBatchMs = 0;
    /** Too little time left for another batch: less than 1.5 times the longest so far, at least 3 s. */
    const deadlineNear = () => opts.deadlineMs !== undefined && rt.clock.now() + Math.max(3000, maxBatchMs * 1.5) > opts.deadlineMs;
    let stoppedBy: StopReason;
    for (;;) {
      const t0 = rt.clock.now();
      const next = await this.planner.next(progress, run, { latestOffsetBatch: head.latestOffsetBatch, deadlineNear });
      if (next.kind === 'stop') {
        stoppedBy = next.stoppedBy;
        break;
      }
      // the run has a batch: the stores' heads are read while its input is (a hint; a run
      // without a batch reads no state)
      if (reports.length === 0) for (const o of rt.operators) this.deps.state.readAhead?.(o.op.spec);
      const done = await this.runBatch(next, progress, { queryId, runId, collectRows: opts.collectRows ?? false, stateKeptForGood });
      reports.push(done.report);
      records.push(done.record);
      maxBatchMs = Math.max(maxBatchMs, rt.clock.now() - t0);
      opts.onProgress?.(done.record);
      await this.renewLeaseIfHalfGone();
    }
    const backlogLeft = stoppedBy === 'deadline' ? await this.backlogLeft(progress, run.targets) : 0;
    const report = runReportOf(rt, { queryId, stoppedBy, batches: reports, progress: records, after: progress, backlogLeft });
    for (const warning of rt.warnings) rt.log({ event: 'state-grows-forever', query: rt.plan.name, warning });
    rt.log({
      event: 'run-finished',
      query: rt.plan.name,
      stoppedBy,
      batches: reports.length,
      watermark: report.watermark,
      rowsIn: report.rowsIn,
      rowsOut: report.rowsOut,
      backlogLeft,
    });
    return report;
  }

  /** One batch in this process: computed (no effects), then committed by the committer. */
  private async runBatch(batch: PlannedBatch, progress: Progress, ids: { queryId: string; runId: string; collectRows: boolean; stateKeptForGood: boolean }) {
    const { rt } = this;
    const { entry, noData } = batch;
    const computeStartMs = rt.clock.now();
    const statsBefore = storeStats(rt);
    const fence = this.lease ?? undefined;
    const ctx = { ...ids, fence, computeStartMs };
    // A stateless batch to a sink that takes chunks streams to it as it is read.
    if (firstOperator(rt) < 0 && !noData && rt.deps.sink.addBatchChunks) {
      const read = { ...emptyRead(), numOutputRows: 0 };
      let ended = false;
      const chunks = (async function* () {
        yield* statelessOutput(rt, entry, read, ids.collectRows);
        ended = true;
      })();
      const outcome: BatchOutcome = {
        read,
        output: { chunks, counted: () => read.numOutputRows, ended: () => ended },
        operators: [],
        lateRecords: [],
        state: { kind: 'changes', changes: [], statsBefore },
      };
      return this.committer.commit(batch, progress, outcome, { ...ctx, computedAtMs: computeStartMs });
    }
    const computed = await computeBatch(rt, entry, noData, rt.deps.state);
    const outcome: BatchOutcome = {
      read: computed.read,
      output: { rows: computed.output },
      operators: computed.perOperator.map((o) => ({ stateRowsDelta: o.stateRowsDelta, dropped: o.late.length })),
      lateRecords: rt.deps.lateRows ? computed.perOperator.flatMap((o, i) => lateRecords(rt, entry, i, o.late, o.lateRightFrom)) : [],
      state: { kind: 'changes', changes: computed.perOperator.map((o) => o.changes), statsBefore },
    };
    return this.committer.commit(batch, progress, outcome, { ...ctx, computedAtMs: rt.clock.now() });
  }

  /** Files or records still waiting up to the run's targets (or the sources' latest, when it noted none). */
  private async backlogLeft(progress: Progress, targets: ReadonlyArray<Json | null> | null): Promise<number> {
    let to = targets;
    if (to === null) {
      const latest: Array<Json | null> = [];
      for (const [i, src] of this.rt.sources.entries()) latest.push(src.backlog ? await src.latestOffset(progress.offsets[i]) : null);
      to = latest;
    }
    let n = 0;
    for (const b of await backlogAfter(this.rt, progress.offsets, to)) if (b !== undefined) n += backlogCount(b);
    return n;
  }

  /** Renews the lease between batches once half of it has gone by. */
  private async renewLeaseIfHalfGone(): Promise<void> {
    const held = this.lease;
    if (held && this.deps.lease && held.expiresAtMs - this.rt.clock.now() < this.leaseMs / 2) {
      this.lease = await this.deps.lease.renew(held, this.leaseMs);
    }
  }
}
