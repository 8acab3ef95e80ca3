/**
 * The partitioned scheduler: one availableNow run split into tasks that separate processes run
 * (worker threads locally, Lambdas under a Step Functions state machine on AWS). It composes the
 * single scheduler's parts (run/: the planner decides every batch, run/batch.ts computes, the
 * committer applies the effects, the reporter writes the record), so a rule holds for both:
 *
 *   plan ─▶ read × S ─▶ partition × P ─▶ commit ─▶ plan ─▶ ... ─▶ plan says done
 *
 *   plan       takes the lease (once per run), recovers and keeps idle state alive (the run's
 *              first plan), asks the planner for the next batch (it writes offsets/N, or says
 *              stop) with the planner's state kept in the run's record, and writes the batch's
 *              task plan (N/plan)
 *   read k     reads split k of the batch (a contiguous group of its files or shards), runs the
 *              stateless stages, pre-aggregates or routes each row to the state partition that
 *              owns its key and writes N/read/k/<p>, then N/read/k/meta (written last: done)
 *   partition  merges the splits' rows of its partition, runs the operator against its own
 *     p        partition of the state, commits that partition's version N, then writes N/out/p:
 *              a partition that wrote it does nothing on a retry; one that crashed before
 *              redoes the batch from version N−1, which a commit of N never hides
 *   commit     gathers the tasks' outputs and hands the batch to the committer: dead letters,
 *              late rows, the sink (one writer per batch), progress/N, commits/N; renews the lease
 *
 * Both outputs name their run: a later run that replays the batch computes every task again, as
 * the single scheduler does, since its code may differ (a processor fixed after it failed).
 *
 * A plan that cannot be split by key (several stateful operators, a stream-stream join) runs each
 * batch in one partition task that computes the whole batch (mode `whole`). A stateless query has
 * no partition tasks: the commit writes the read tasks' rows in split order. Each task builds its
 * state from the checkpoint and the shuffle: nothing is kept in memory between tasks but what
 * never changes once written (a container's RunMemo, run-memo.ts: a batch's offsets, task plan and
 * run record within a run; the state store's manifests and pages by ref), so any task may run on
 * any container.
 */
import { mapLimit } from '../concurrency';
import { SluiceError } from '../errors';
import type { CheckpointHead, Json, OffsetEntry, OperatorStateSpec, OutputRow, Row, ShuffleStore, StateStore } from '../ports';
import { toOutputRow } from '../rows';
import { beginOperators, computeBatch, emptyRead, operatorBatch, rowErrorsOf, runOperators, stagedChunks, type BatchRead } from '../run/batch';
import { BatchCommitter, backlogAfter, lateRecords, storeStats, type BatchOutcome } from '../run/committer';
import { type BatchStart, BatchPlanner, newRunState } from '../run/planner';
import { movesNoSource } from '../run/position';
import { keepStateAlive, recover } from '../run/recovery';
import { changeFigures, diffStats, sumStats } from '../run/reporter';
import { QueryRuntime } from '../run/runtime';
import type { ExecutorDeps, ExecutorOptions } from '../run/types';
import { EventTimeStats, MaxEventTimes } from '../watermark';
import { RunMemo } from './run-memo';
import { isOrderStage } from '../order';
import { type BatchTasks, type PartitionOut, type ReadMeta, type RunRecord, taskCodec } from './task-records';

/** Shuffle objects a task reads or writes at once. */
const SHUFFLE_CONCURRENCY = 8;

export interface PartitionedDeps extends ExecutorDeps {
  readonly shuffle: ShuffleStore;
}

export interface PartitionedOptions extends ExecutorOptions {
  /** At most this many read tasks per batch (one a file at most). Default 8. */
  readonly maxSplits?: number;
  /** What the tasks of one container (a Lambda's, a worker thread's) keep for each other: see RunMemo. */
  readonly memo?: RunMemo;
}

/** What the plan task answers (the state machine's $.plan). */
export interface PlanResult {
  readonly runId: string;
  readonly batchId: number;
  readonly done: boolean;
  readonly splits: Array<{ readonly split: number }>;
  readonly partitions: Array<{ readonly partition: number }>;
  /** When done: why, and the batches the run committed (firstBatch up to batchId, excluded), for its summary. */
  readonly stoppedBy?: 'done' | 'lease-held';
  readonly firstBatch?: number;
  readonly startedAtMs?: number;
}

/** What the commit task answers (the state machine's $.commit): always back to plan, which decides. */
export interface CommitResult {
  readonly runId: string;
  readonly batchId: number;
  readonly more: boolean;
}

export class PartitionedRun {
  private readonly rt: QueryRuntime;
  private readonly planner: BatchPlanner;
  private readonly committer: BatchCommitter;
  private readonly shuffle: ShuffleStore;
  private readonly maxSplits: number;
  private readonly leaseMs: number;
  private readonly memo: RunMemo;

  constructor(
    private readonly deps: PartitionedDeps,
    options: PartitionedOptions = {},
  ) {
    this.rt = new QueryRuntime(deps);
    this.shuffle = deps.shuffle;
    this.planner = new BatchPlanner(this.rt);
    this.committer = new BatchCommitter(this.rt, { retainBatches: options.retainBatches, purgeAlso: (keepFrom) => this.shuffle.purgeBelow(keepFrom) });
    this.leaseMs = options.leaseDurationMs ?? 15 * 60_000;
    this.maxSplits = options.maxSplits ?? 8;
    this.memo = options.memo ?? new RunMemo();
    if (!Number.isInteger(this.maxSplits) || this.maxSplits < 1)
      throw new SluiceError(`maxSplits ${options.maxSplits} must be a positive integer`, { retriable: false });
  }

  /** Whether batches split into read and partition tasks: one stateful operator that routes rows by key, or none. */
  private get mode(): BatchTasks['mode'] {
    const { operators, plan } = this.rt;
    if (operators.length === 0) return (plan.inputs ?? []).length ? 'whole' : 'stateless';
    // (a sort or limit takes the whole result table: one task computes it)
    if (operators.length === 1 && !(plan.inputs ?? []).length && operators[0].op.partitionOf && !plan.post.some(isOrderStage)) return 'partitioned';
    return 'whole';
  }

  // ------------------------------------------------------------------------------------ plan

  async planTask(runId: string): Promise<PlanResult> {
    const { rt } = this;
    rt.openStaticTables();
    // The run's record and the checkpoint's head at once: a run under way holds the lease, so the
    // head it reads is the one it plans from. A new run takes the lease first and reads it again.
    const [record, headRead] = await Promise.allSettled([this.runRecord(runId), rt.deps.checkpoint.head()]);
    if (record.status === 'rejected') throw record.reason;
    let run = record.value;
    let known: CheckpointHead | undefined;
    if (!run) {
      const lease = this.deps.lease ? await this.deps.lease.acquire(runId, this.leaseMs) : null;
      if (this.deps.lease && !lease) {
        rt.log({ event: 'lease-held', query: rt.plan.name, runId });
        return { ...this.finished(runId, -1), stoppedBy: 'lease-held' };
      }
      run = { runId, lease, startedAtMs: rt.clock.now(), planner: newRunState() };
    } else {
      if (headRead.status === 'rejected') throw headRead.reason;
      known = headRead.value;
      // between batches, once half of it has gone by (as the single scheduler renews it)
      if (run.lease && this.deps.lease && run.lease.expiresAtMs - rt.clock.now() < this.leaseMs / 2)
        run = { ...run, lease: await this.deps.lease.renew(run.lease, this.leaseMs) };
    }
    const { head, last, progress, queryId } = await recover(rt, known);
    if (run.firstBatch === undefined) {
      // the run's first plan: what every run does before its first batch
      const stateKeptForGood = await keepStateAlive(rt, last, run.lease ?? undefined);
      run = { ...run, firstBatch: progress.nextBatchId, queryId, ...(stateKeptForGood ? { stateKeptForGood } : {}) };
    }
    const planner = { ...run.planner };
    const next = await this.planner.next(progress, planner, { latestOffsetBatch: head.latestOffsetBatch, deadlineNear: () => false });
    if (next.kind === 'stop') {
      // The run's record is not needed once the run is over: its batches are committed, and no
      // task of it runs again (a retry of this plan task, should its answer be lost, finds no
      // record and runs as a new run of the same id: it continues from the checkpoint).
      if (run.lease && this.deps.lease) await this.deps.lease.release(run.lease);
      await this.shuffle.delete(`runs/${runId}`);
      return this.finished(runId, progress.nextBatchId, run);
    }
    // What is left of the sources after the batch, measured now: this task's sources hold the
    // run's listing and reads, which the commit task's would have to make again.
    const backlog = next.start.targets ? await backlogAfter(rt, next.entry.offsets, next.start.targets) : undefined;
    const start: BatchStart = backlog ? { ...next.start, backlog } : next.start;
    const planned: RunRecord = { ...run, planner, batch: { batchId: next.entry.batchId, replay: next.replay, start } };
    const [, tasks] = await Promise.all([this.writeRun(planned), this.tasksOf(next.entry, next.replay)]);
    this.memo.set(runId, tasks.batchId, 'run', planned);
    this.memo.set(runId, tasks.batchId, 'offsets', next.entry);
    this.memo.set(runId, tasks.batchId, 'plan', tasks);
    return {
      runId,
      batchId: tasks.batchId,
      done: false,
      splits: Array.from({ length: tasks.splits }, (_, split) => ({ split })),
      partitions: tasks.partitions.map((partition) => ({ partition })),
    };
  }

  /**
   * The batch's tasks: planned once (N/plan), the same on a replay. A batch planned just now has
   * none yet (no task of it ran: its plan task had not answered), so only a replay looks.
   */
  private async tasksOf(entry: OffsetEntry, replay: boolean): Promise<BatchTasks> {
    const key = `${entry.batchId}/plan`;
    const text = replay ? await this.shuffle.get(key) : null;
    if (text !== null) return taskCodec.tasks.decode(key, text);
    const { rt } = this;
    const noData = movesNoSource(entry, rt.sources.length);
    const mode = this.mode;
    const src = rt.sources[0];
    const start = entry.startOffsets[0] ?? null;
    const end = entry.offsets[0] ?? null;
    const splits = noData || mode === 'whole' || end === null ? 0 : src.planSplits ? await src.planSplits(entry.batchId, start, end, this.maxSplits) : 1;
    const partitions = mode === 'stateless' ? [] : mode === 'whole' ? [0] : Array.from({ length: rt.plan.statePartitions }, (_, p) => p);
    // (read tasks pre-aggregate, unless a row can be refused only against its group's stored total)
    const first = rt.operators[0]?.op;
    const partials = mode === 'partitioned' && first?.beginPartials !== undefined && first.checksRowsAgainstState !== true;
    const tasks: BatchTasks = { batchId: entry.batchId, mode, splits, partitions, ...(partials ? { partials } : {}) };
    await this.shuffle.put(key, taskCodec.tasks.encode(tasks));
    return tasks;
  }

  private finished(runId: string, batchId: number, run?: RunRecord): PlanResult {
    return {
      runId,
      batchId,
      done: true,
      splits: [],
      partitions: [],
      ...(run ? { stoppedBy: 'done' as const, ...(run.firstBatch !== undefined ? { firstBatch: run.firstBatch } : {}), startedAtMs: run.startedAtMs } : {}),
    };
  }

  // ------------------------------------------------------------------------------------ read

  async readTask(runId: string, batchId: number, split: number): Promise<{ ok: true }> {
    const { rt } = this;
    rt.openStaticTables();
    const metaKey = `${batchId}/read/${split}/meta`;
    const [done, entry, tasks] = await Promise.all([this.shuffle.get(metaKey), this.offsets(runId, batchId), this.tasks(runId, batchId)]);
    if (done !== null && taskCodec.readMeta.decode(metaKey, done).runId === runId) return { ok: true };
    if (split < 0 || split >= tasks.splits)
      throw new SluiceError(`batch ${batchId} has ${tasks.splits} read tasks, not a split ${split}`, { retriable: false });
    const read = emptyRead();
    const byPartition = new Map<number, Row[]>();
    const out: OutputRow[] = [];
    const op = rt.operators[0]?.op;
    // pre-aggregation: the batch's groups of this split, with the first operator's watermarks
    const pre = tasks.partials ? op!.beginPartials!(operatorBatch(rt, entry, 0), rowErrorsOf(read, 0)) : null;
    for await (const rows of stagedChunks(rt, entry, read, 0, { index: split, count: tasks.splits })) {
      if (tasks.mode === 'stateless') {
        for (const r of (await rt.runStages(rt.plan.post, rows, rowErrorsOf(read))).rows) out.push(toOutputRow(r, rt.outColumns));
      } else if (pre) pre.add(rows);
      else {
        for (const r of rows) {
          const p = op!.partitionOf!(r);
          let list = byPartition.get(p);
          if (!list) byPartition.set(p, (list = []));
          list.push(r);
        }
      }
    }
    let late: { late: number; lateRecords: Json[] } | null = null;
    const partials = new Map<number, Json[]>();
    if (pre) {
      const taken = pre.take();
      for (const [p, entries] of taken.partials) partials.set(p, entries);
      late = { late: taken.late.length, lateRecords: this.deps.lateRows ? lateRecords(rt, entry, 0, taken.late) : [] };
    }
    // every partition's section in one object (a partition task reads its own by range), then the meta
    const written = [...byPartition.keys(), ...partials.keys()].sort((a, b) => a - b);
    const sections: Array<[number, number, number]> = [];
    const texts: string[] = [];
    let at = 0;
    for (const p of written) {
      const rows = byPartition.get(p);
      const text = rows !== undefined ? taskCodec.rows.encode(rows) : taskCodec.partials.encode(partials.get(p)!);
      const bytes = Buffer.byteLength(text, 'utf8');
      sections.push([p, at, at + bytes]);
      texts.push(text);
      at += bytes;
    }
    if (texts.length > 0) await this.shuffle.put(`${batchId}/read/${split}/data`, texts.join(''));
    if (tasks.mode === 'stateless') await this.shuffle.put(`${batchId}/read/${split}/out`, taskCodec.rows.encode(out));
    // the index after the data (a partition task that finds it finds the data whole); kept apart
    // from the meta, which the partition tasks need not read (its dead letters can be large)
    else await this.shuffle.put(`${batchId}/read/${split}/index`, taskCodec.sections.encode(sections));
    // last: the meta says the task is done
    await this.shuffle.put(metaKey, taskCodec.readMeta.encode({ ...readMeta(read, written), ...(late ?? {}), runId }));
    return { ok: true };
  }

  // ------------------------------------------------------------------------------- partition

  /**
   * `attempt`: how many times this task ran before in this run, when the driver knows (0: never;
   * the local driver never runs a task twice in a run). On a first attempt of a batch its run
   * planned first (no replay), no earlier attempt can have written its partition's state, so the
   * state store is told it need not look for what one left.
   */
  async partitionTask(runId: string, batchId: number, partition: number, attempt?: number): Promise<{ ok: true }> {
    const { rt } = this;
    rt.openStaticTables();
    const outKey = `${batchId}/out/${partition}`;
    const [run, done, entry, tasks] = await Promise.all([
      this.batchRun(runId, batchId),
      this.shuffle.get(outKey),
      this.offsets(runId, batchId),
      this.tasks(runId, batchId),
    ]);
    if (done !== null && taskCodec.partitionOut.decode(outKey, done).runId === runId) return { ok: true };
    const fence = run?.lease ?? undefined;
    // (the ids a processor's QueryInfo gives: the checkpoint's query and this run)
    rt.runIds = run?.queryId ? { queryId: run.queryId, runId } : null;
    if (attempt === 0 && run?.batch?.batchId === batchId && run.batch.replay === false) this.deps.state.firstAttempt?.(batchId);
    if (!tasks.partitions.includes(partition))
      throw new SluiceError(`batch ${batchId} has no partition task ${partition} (it has ${tasks.partitions.join(', ') || 'none'})`, { retriable: false });
    // the state this task reads first (the DynamoDB store: its slices' heads), asked for while it reads the shuffle
    for (const o of rt.operators) this.deps.state.readAhead?.(o.op.spec, tasks.mode === 'whole' ? undefined : [partition]);
    const statsBefore = storeStats(rt);
    let read: BatchRead | null = null;
    // (the dead letters of the stages after the operators, in a task that did not read the batch)
    const after = emptyRead();
    let computed: { rows: OutputRow[]; perOperator: Awaited<ReturnType<typeof runOperators>>['perOperator'] };
    if (tasks.mode === 'whole') {
      // the whole batch in this task: read (every input) and every operator, the state unscoped
      const whole = await computeBatch(rt, entry, movesNoSource(entry, rt.sources.length), this.deps.state);
      read = whole.read;
      computed = { rows: whole.output, perOperator: whole.perOperator };
    } else {
      // the partition's state, and where a row an operator refuses goes (an exact sum's overflow,
      // checked against the group's stored total as in one task)
      const partitionState = scopedState(this.deps.state, [partition]);
      const accs = beginOperators(rt, entry, { state: partitionState, read: after }, [partition]);
      // fetched a few at a time, merged in split order (first and last keep the batch's order)
      const splits = Array.from({ length: tasks.splits }, (_, k) => k);
      const texts = await mapLimit(splits, SHUFFLE_CONCURRENCY, (k) => this.splitObject(batchId, k, partition));
      for (const k of splits) {
        const text = texts[k];
        if (text === null) continue;
        const key = `${batchId}/read/${k}/${partition}`;
        if (tasks.partials) accs[0].addPartials!(taskCodec.partials.decode(key, text));
        else await accs[0].add(taskCodec.rows.decode(key, text));
      }
      const result = await runOperators(rt, accs, entry, after, partitionState);
      computed = { rows: result.rows.map((r) => toOutputRow(r, rt.outColumns)), perOperator: result.perOperator };
    }
    const scope = tasks.mode === 'whole' ? undefined : [partition];
    const { state } = this.deps;
    const { perOperator } = computed;
    if (state.check) {
      for (let i = 0; i < rt.operators.length; i++)
        if (perOperator[i].changes.length) await state.check(rt.operators[i].op.spec, batchId, perOperator[i].changes, scope);
    }
    const commitTimeMs: number[] = [];
    for (let i = 0; i < rt.operators.length; i++) {
      const t = rt.clock.now();
      if (perOperator[i].changes.length) await state.commit(rt.operators[i].op.spec, batchId, perOperator[i].changes, fence, scope);
      commitTimeMs.push(rt.clock.now() - t);
    }
    const figures = perOperator.map((o) => changeFigures(o.changes));
    const out: PartitionOut = {
      runId,
      rows: computed.rows,
      stateRowsDelta: perOperator.map((o) => o.stateRowsDelta),
      late: perOperator.map((o) => o.late.length),
      lateRecords: this.deps.lateRows ? perOperator.flatMap((o, i) => lateRecords(rt, entry, i, o.late, o.lateRightFrom)) : [],
      updated: figures.map((f) => f.updated),
      removed: figures.map((f) => f.removed),
      bytes: figures.map((f) => f.bytes),
      commitTimeMs,
      storeStats: diffStats(statsBefore, storeStats(rt)),
      ...(read ? { read: readMeta(read, []) } : {}),
      ...(after.deadLetters.length ? { deadLetters: after.deadLetters, perSourceDeadLetters: [...after.perSourceDeadLetters] } : {}),
    };
    // after the state commit: its presence says the partition is done for N
    await this.shuffle.put(outKey, taskCodec.partitionOut.encode(out));
    return { ok: true };
  }

  // ---------------------------------------------------------------------------------- commit

  async commitTask(runId: string, batchId: number): Promise<CommitResult> {
    const { rt } = this;
    rt.openStaticTables();
    const computeStartMs = rt.clock.now();
    // The batch's offsets, and the partition tasks' outputs and the read tasks' figures, read with
    // the run's record and the checkpoint (dropped when the checkpoint says the batch committed).
    const entryRead = this.offsets(runId, batchId);
    const tasksRead = this.tasks(runId, batchId);
    const gathered = tasksRead.then((tasks) => this.gather(batchId, tasks));
    for (const p of [entryRead, gathered]) p.catch(() => undefined);
    const [run, { progress, head, queryId }] = await Promise.all([this.batchRun(runId, batchId), recover(rt)]);
    const fence = run?.lease ?? undefined;
    if (head.latestCommitBatch >= batchId) return { runId, batchId, more: true };
    if (progress.nextBatchId !== batchId)
      throw new SluiceError(`batch ${batchId} cannot commit: the checkpoint's next batch is ${progress.nextBatchId}`, { retriable: false });
    const [entry, tasks] = await Promise.all([entryRead, tasksRead]);
    const [outsGot, metasGot] = await gathered;
    if (outsGot.status === 'rejected') throw outsGot.reason;
    if (metasGot.status === 'rejected') throw metasGot.reason;
    const outs = outsGot.value;
    const metas: ReadMeta[] = [];
    if (tasks.mode === 'whole') metas.push(outs[0].read!);
    metas.push(...metasGot.value);
    let rows: OutputRow[] = [];
    if (tasks.mode === 'stateless') {
      for (let k = 0; k < tasks.splits; k++) {
        const key = `${batchId}/read/${k}/out`;
        rows = rows.concat(taskCodec.rows.decode(key, (await this.shuffle.get(key)) ?? '[]') as OutputRow[]);
      }
    } else for (const o of outs) rows = rows.concat(o.rows);
    const sum = (f: (o: PartitionOut) => number[], i: number) => outs.reduce((a, o) => a + (f(o)[i] ?? 0), 0);
    const read = mergeReads(metas);
    for (const o of outs) {
      for (const d of o.deadLetters ?? []) read.deadLetters.push(d);
      addEach(read.perSourceDeadLetters, o.perSourceDeadLetters);
    }
    const outcome: BatchOutcome = {
      read,
      output: { rows },
      // (a pre-aggregating read task drops the first operator's late rows itself)
      operators: rt.operators.map((_, i) => ({
        stateRowsDelta: sum((o) => o.stateRowsDelta, i),
        dropped: sum((o) => o.late, i) + (i === 0 ? metas.reduce((a, m) => a + (m.late ?? 0), 0) : 0),
      })),
      lateRecords: [...metas.flatMap((m) => m.lateRecords ?? []), ...outs.flatMap((o) => o.lateRecords)],
      state: {
        kind: 'committed',
        figures: rt.operators.map((_, i) => ({
          updated: sum((o) => o.updated, i),
          removed: sum((o) => o.removed, i),
          bytes: sum((o) => o.bytes, i),
          commitTimeMs: sum((o) => o.commitTimeMs, i),
        })),
        storeStats: sumStats(outs.map((o) => o.storeStats)),
      },
    };
    const planned = run?.batch?.batchId === batchId ? run.batch : null;
    const batch = {
      entry,
      replay: planned?.replay ?? false,
      noData: movesNoSource(entry, rt.sources.length),
      start: planned?.start ?? { startedAtMs: computeStartMs },
    };
    await this.committer.commit(batch, progress, outcome, {
      queryId,
      runId,
      fence,
      computeStartMs,
      computedAtMs: rt.clock.now(),
      collectRows: false,
      stateKeptForGood: run?.stateKeptForGood === true,
    });
    if (run?.lease && this.deps.lease && run.lease.expiresAtMs - rt.clock.now() < this.leaseMs / 2) {
      const renewed: RunRecord = { ...run, lease: await this.deps.lease.renew(run.lease, this.leaseMs) };
      await this.writeRun(renewed);
      this.memo.set(runId, batchId, 'run', renewed);
    }
    return { runId, batchId, more: true };
  }

  // --------------------------------------------------------------------------------- helpers

  /**
   * The partition tasks' outputs and the read tasks' figures of a batch, in one wave, each settled:
   * the caller reports a missing output before a missing figure, as when they were read one after
   * the other.
   */
  private gather(batchId: number, tasks: BatchTasks): Promise<[PromiseSettledResult<PartitionOut[]>, PromiseSettledResult<ReadMeta[]>]> {
    const outsRead = mapLimit(tasks.partitions, SHUFFLE_CONCURRENCY, async (p): Promise<PartitionOut> => {
      const key = `${batchId}/out/${p}`;
      const text = await this.shuffle.get(key);
      if (text === null)
        throw new SluiceError(
          `partition task ${p} of batch ${batchId} has not finished, so the batch cannot commit: run the partition tasks first (the state machine does)`,
          { retriable: true },
        );
      return taskCodec.partitionOut.decode(key, text);
    });
    const metasRead = mapLimit(
      Array.from({ length: tasks.splits }, (_, k) => k),
      SHUFFLE_CONCURRENCY,
      async (k) => {
        const meta = await this.readMeta(batchId, k);
        if (!meta) throw new SluiceError(`read task ${k} of batch ${batchId} has not finished, so the batch cannot commit`, { retriable: true });
        return meta;
      },
    );
    return Promise.allSettled([outsRead, metasRead]);
  }

  /**
   * Split k's rows (or partial groups) for a partition: its section of the one object its read
   * task wrote, read by range where the task's index (written after the object) says; null when
   * the split reached no group of the partition. No index: the read task has not finished (an
   * error the driver retries), or it is an earlier sluice's, which wrote one object per partition
   * and then its meta.
   */
  private async splitObject(batchId: number, split: number, partition: number): Promise<string | null> {
    const indexKey = `${batchId}/read/${split}/index`;
    const index = await this.shuffle.get(indexKey);
    if (index === null) {
      const meta = await this.readMeta(batchId, split);
      if (!meta)
        throw new SluiceError(
          `read task ${split} of batch ${batchId} has not finished, so partition ${partition} cannot merge it: run the read tasks first (the state machine does)`,
          { retriable: true },
        );
      if (!meta.partitions.includes(partition)) return null;
      const legacyKey = `${batchId}/read/${split}/${partition}`;
      const legacy = await this.shuffle.get(legacyKey);
      // (written before the meta: gone now, it was deleted)
      if (legacy === null)
        throw new SluiceError(`shuffle ${legacyKey} is missing though its read task's meta lists it: the shuffle was deleted under a running batch`, {
          retriable: false,
        });
      return legacy;
    }
    const section = taskCodec.sections.decode(indexKey, index).find(([p]) => p === partition);
    if (section === undefined) return null;
    const key = `${batchId}/read/${split}/data`;
    const text = await this.shuffle.getRange(key, section[1], section[2]);
    if (text === null)
      throw new SluiceError(`shuffle ${key} is missing though ${indexKey} says where its sections are: the shuffle was deleted under a running batch`, {
        retriable: false,
      });
    return text;
  }

  private async runRecord(runId: string): Promise<RunRecord | null> {
    const key = `runs/${runId}`;
    const text = await this.shuffle.get(key);
    return text === null ? null : taskCodec.run.decode(key, text);
  }

  /** The run's record as batch `batchId`'s tasks see it: noted by its plan task on this container, else read. */
  private batchRun(runId: string, batchId: number): Promise<RunRecord | null> {
    return this.memo.get(runId, batchId, 'run', () => this.runRecord(runId));
  }

  private async writeRun(run: RunRecord): Promise<void> {
    await this.shuffle.put(`runs/${run.runId}`, taskCodec.run.encode(run));
  }

  private async readMeta(batchId: number, split: number): Promise<ReadMeta | null> {
    const key = `${batchId}/read/${split}/meta`;
    const text = await this.shuffle.get(key);
    return text === null ? null : taskCodec.readMeta.decode(key, text);
  }

  private async offsets(runId: string, batchId: number): Promise<OffsetEntry> {
    const entry = await this.memo.get(runId, batchId, 'offsets', () => this.deps.checkpoint.readOffsets(batchId));
    if (!entry)
      throw new SluiceError(`batch ${batchId} has no offsets/${batchId} in ${this.deps.checkpoint.description}: its plan task has not run`, {
        retriable: false,
      });
    return entry;
  }

  private async tasks(runId: string, batchId: number): Promise<BatchTasks> {
    const key = `${batchId}/plan`;
    return this.memo.get(runId, batchId, 'plan', async () => {
      const text = await this.shuffle.get(key);
      if (text === null) throw new SluiceError(`batch ${batchId} has no task plan (shuffle ${key}): its plan task has not run`, { retriable: false });
      return taskCodec.tasks.decode(key, text);
    });
  }
}

/** A state store seen by one partition task: eviction, complete mode and commits scoped to its partitions. */
function scopedState(state: StateStore, partitions: readonly number[]): StateStore {
  return {
    description: state.description,
    get: (op, keys, version) => state.get(op, keys, version),
    expired: (op, wm, version) => state.expired(op, wm, version, partitions),
    all: (op, version) => state.all(op, version, partitions),
    count: (op, version) => state.count(op, version),
    commit: (op, version, changes, fence) => state.commit(op, version, changes, fence, partitions),
    ...(state.check ? { check: (op, version, changes) => state.check!(op, version, changes, partitions) } : {}),
    retentionMs: state.retentionMs,
    ...(state.firstAttempt ? { firstAttempt: (version: number) => state.firstAttempt!(version) } : {}),
    ...(state.readAhead ? { readAhead: (op: OperatorStateSpec) => state.readAhead!(op, partitions) } : {}),
  };
}

function readMeta(read: BatchRead, partitions: number[]): ReadMeta {
  const s = read.maxEventTimes.stats;
  return {
    numInputRows: read.numInputRows,
    perSource: [...read.perSource],
    bytes: read.bytes,
    perSourceBytes: [...read.perSourceBytes],
    perSourceFiles: [...read.perSourceFiles],
    perSourceDeadLetters: [...read.perSourceDeadLetters],
    deadLetters: read.deadLetters,
    maxEventTimes: [...read.maxEventTimes.entries()],
    stats: { min: s.count ? s.min : 0, max: s.count ? s.max : 0, count: s.count, base: s.base, sum: s.sum },
    partitions,
  };
}

/** Adds `from`'s counts into `into`, index by index (a hole or null in either is 0). */
function addEach(into: number[], from: ReadonlyArray<number | null> | undefined): void {
  from?.forEach((n, i) => (into[i] = (into[i] ?? 0) + (n ?? 0)));
}

/** The read tasks' figures as one read: counts summed, dead letters in split order, each watermark stage's maximum. */
function mergeReads(metas: readonly ReadMeta[]): BatchRead {
  const read = emptyRead();
  const max = new MaxEventTimes();
  for (const m of metas) {
    read.numInputRows += m.numInputRows;
    read.bytes += m.bytes;
    addEach(read.perSource, m.perSource);
    addEach(read.perSourceBytes, m.perSourceBytes);
    addEach(read.perSourceFiles, m.perSourceFiles);
    addEach(read.perSourceDeadLetters, m.perSourceDeadLetters);
    for (const d of m.deadLetters) read.deadLetters.push(d);
    max.observe(
      new Map(m.maxEventTimes),
      Object.assign(new EventTimeStats(), m.stats.count ? m.stats : { min: Infinity, max: -Infinity, count: 0, base: 0, sum: 0 }),
    );
  }
  return { ...read, maxEventTimes: max };
}
