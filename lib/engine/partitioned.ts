/**
 * A partitioned run (issue 19): one availableNow run of a query split into tasks that separate
 * processes can run (worker threads here, Lambdas under a Step Functions state machine on AWS),
 * with the semantics, the checkpoint and the exactly-once rules of MicroBatchExecutor's run:
 *
 *   plan ─▶ read × S ─▶ partition × P ─▶ commit ─▶ plan ─▶ ... ─▶ plan says done
 *
 *   plan       takes the lease (once per run), notes every source's latest offsets (once per run,
 *              in the run's record), writes offsets/N as the executor does and the batch's task
 *              plan (shuffle N/plan: how many splits, which partitions); a batch whose offsets
 *              are logged without a commit is planned again as it was (the replay)
 *   read k     reads split k of the batch (a contiguous group of its files), runs the stateless
 *              stages, routes each row to the state partition that owns its key (the operator's
 *              partitionOf) and writes shuffle N/read/k/<partition>, then N/read/k/meta (its
 *              counts, max event times, dead letters): the meta says the task is done
 *   partition  merges the splits' rows of its partition, runs the operator against its own
 *     p        partition of the state (reads and eviction scoped to it), commits its state
 *              version N, then writes shuffle N/out/p (its output rows and figures): a partition
 *              that wrote it does nothing on a retry; one that crashed before redoes the batch
 *              from version N−1, which a commit of N never hides
 *   commit     writes the batch's dead letters, late rows and output rows through the guarded
 *              sink (one writer per batch, as the executor), progress/N and commits/N with the
 *              next watermark from the read tasks' maxima; renews the lease
 *
 * A plan that cannot be split this way (several stateful operators, a stream-stream join: the
 * rows of one operator would have to be routed again for the next) runs each batch in one
 * partition task that reads and computes the whole batch, so every query runs partitioned.
 * A stateless query has no partition tasks: the commit writes the read tasks' rows in split order.
 * Each task builds its own state from the checkpoint: nothing is kept in memory between tasks.
 */
import { SluiceError } from './errors';
import {
  advance,
  emptyRead,
  estimateStateBytes,
  type Accumulator,
  type BatchRead,
  type ExecutorDeps,
  type ExecutorOptions,
  MicroBatchExecutor,
  movesNoSource,
  type OperatorOutput,
  readChunks,
  progressAfter,
  type Progress,
  watermarksOf,
} from './executor';
import type { CheckpointStore, CommitEntry, DeadLetter, Json, LeaseHandle, OffsetEntry, OutputRow, Row, ShuffleStore, StateChange, StateStore } from './ports';
import type { BatchReport, RunReport } from './executor';
import type { StreamingProgress } from './progress';
import type { QueryPlan } from './query';
import { decodeStateJson, encodeStateJson } from './state-json';
import { toOutputRow } from './rows';
import { planStages, JoinTables } from './join';
import { hasJoin } from './rows';
import { EventTimeStats, MaxEventTimes, operatorInputWatermarks } from './watermark';

export interface PartitionedDeps extends ExecutorDeps {
  readonly shuffle: ShuffleStore;
}

export interface PartitionedOptions extends ExecutorOptions {
  /** At most this many read tasks per batch (one a file at most). Default 8. */
  readonly maxSplits?: number;
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

/** What the commit task answers (the state machine's $.commit). */
export interface CommitResult {
  readonly runId: string;
  readonly batchId: number;
  readonly more: boolean;
}

/** How a batch is split into tasks (shuffle N/plan), the same on every attempt of the batch. */
interface BatchTasks {
  readonly batchId: number;
  /** stateless: read tasks only; partitioned: read and partition tasks; whole: one partition task does everything. */
  readonly mode: 'stateless' | 'partitioned' | 'whole';
  readonly splits: number;
  readonly partitions: number[];
  /** Whether read tasks hand on pre-aggregated groups (the operator's beginPartials) rather than rows. */
  readonly partials?: boolean;
}

/** The run's record (shuffle runs/<runId>): what its plan tasks share. */
interface RunRecord {
  readonly runId: string;
  readonly lease: LeaseHandle | null;
  /** The first batch the run planned, and when it started: the run's summary covers from there. */
  readonly firstBatch?: number;
  readonly startedAtMs?: number;
  /** Every source's latest offset when the run started (availableNow's target). */
  readonly targets: Array<Json | null>;
  readonly done?: boolean;
  /** When done: the next batch then (the run committed firstBatch up to it, excluded). */
  readonly endBatch?: number;
}

/** What a read task hands on (N/read/k/meta). */
interface ReadMeta {
  readonly numInputRows: number;
  readonly perSource: number[];
  readonly bytes: number;
  readonly deadLetters: DeadLetter[];
  readonly maxEventTimes: Array<[string, number]>;
  readonly stats: { readonly min: number; readonly max: number; readonly count: number; readonly base: number; readonly sum: number };
  /** The partitions it wrote rows (or partial groups) for. */
  readonly partitions: number[];
  /** Rows the first operator dropped as late here (a pre-aggregating read task), and their records for the late-rows output. */
  readonly late?: number;
  readonly lateRecords?: Json[];
}

/** What a partition task hands on (N/out/p), per operator where it says so. */
interface PartitionOut {
  readonly rows: OutputRow[];
  readonly stateRowsDelta: number[];
  readonly late: number[];
  readonly lateRecords: Json[];
  readonly updated: number[];
  readonly removed: number[];
  readonly bytes: number[];
  /** A whole-batch task's read (the batch had no read tasks). */
  readonly read?: ReadMeta;
}

export class PartitionedRun extends MicroBatchExecutor {
  private readonly shuffle: ShuffleStore;
  private readonly maxSplits: number;

  constructor(private readonly pdeps: PartitionedDeps, options: PartitionedOptions = {}) {
    super(pdeps, options);
    this.shuffle = pdeps.shuffle;
    this.maxSplits = options.maxSplits ?? 8;
    if (!Number.isInteger(this.maxSplits) || this.maxSplits < 1) throw new SluiceError(`maxSplits ${options.maxSplits} must be a positive integer`, { retriable: false });
  }

  /** Whether batches split into read and partition tasks: one stateful operator that routes rows by key, or none. */
  private get mode(): BatchTasks['mode'] {
    if (this.operators.length === 0) return (this.plan.inputs ?? []).length ? 'whole' : 'stateless';
    if (this.operators.length === 1 && !(this.plan.inputs ?? []).length && this.operators[0].op.partitionOf) return 'partitioned';
    return 'whole';
  }

  // ------------------------------------------------------------------------------------ plan

  async planTask(runId: string): Promise<PlanResult> {
    this.openTables();
    let run = await this.readJson<RunRecord>(`runs/${runId}`);
    if (run?.done) return this.finished(runId, run.endBatch ?? -1, run);
    if (!run) {
      const lease = this.pdeps.lease ? await this.pdeps.lease.acquire(runId, this.leaseMs) : null;
      if (this.pdeps.lease && !lease) {
        this.log({ event: 'lease-held', query: this.plan.name, runId });
        return { ...this.finished(runId, -1), stoppedBy: 'lease-held' };
      }
      run = { runId, lease, targets: [], startedAtMs: this.clock.now() };
    } else if (run.lease && this.pdeps.lease) {
      run = { ...run, lease: await this.pdeps.lease.renew(run.lease, this.leaseMs) };
    }
    this.currentLease = run.lease;
    const { progress, head } = await this.progressNow();
    if (run.firstBatch === undefined) run = { ...run, firstBatch: progress.nextBatchId };
    if (head.latestOffsetBatch >= progress.nextBatchId) {
      // a batch planned and not committed (a crash, or a killed execution): the same batch again
      const entry = await this.offsets(progress.nextBatchId);
      this.checkReplayAge(entry);
      await this.writeJson(`runs/${runId}`, run);
      return this.result(runId, await this.tasksOf(entry));
    }
    if (!run.targets.length) {
      const targets: Array<Json | null> = [];
      for (let i = 0; i < this.sources.length; i++) targets.push(await this.sources[i].latestOffset(progress.offsets[i]));
      run = { ...run, targets };
    }
    await this.writeJson(`runs/${runId}`, run);
    const ends: Array<Json | null> = [];
    for (let i = 0; i < this.sources.length; i++) {
      const target = run.targets[i] ?? null;
      ends.push(target === null ? null : await this.sources[i].planBatch(progress.nextBatchId, progress.offsets[i], target, this.limits[i]));
    }
    const noData = ends.every((e) => e === null);
    if (noData && !this.noDataBatchDue(progress)) {
      await this.writeJson(`runs/${runId}`, { ...run, done: true, endBatch: progress.nextBatchId });
      if (run.lease && this.pdeps.lease) await this.pdeps.lease.release(run.lease);
      this.currentLease = null;
      return this.finished(runId, progress.nextBatchId, run);
    }
    const entry: OffsetEntry = {
      batchId: progress.nextBatchId,
      startOffsets: [...progress.offsets],
      offsets: ends.map((e, i) => e ?? progress.offsets[i]),
      batchWatermarkMs: progress.watermarks.batchWatermarkMs,
      lateWatermarkMs: progress.watermarks.lateWatermarkMs,
      batchTimestampMs: this.clock.now(),
    };
    await this.pdeps.checkpoint.writeOffsets(entry);
    return this.result(runId, await this.tasksOf(entry));
  }

  /** The batch's tasks: planned once (shuffle N/plan), the same on a replay. */
  private async tasksOf(entry: OffsetEntry): Promise<BatchTasks> {
    const key = `${entry.batchId}/plan`;
    const stored = await this.readJson<BatchTasks>(key);
    if (stored) return stored;
    const noData = movesNoSource(entry, this.sources.length);
    const mode = this.mode;
    const src = this.sources[0];
    const start = entry.startOffsets[0] ?? null;
    const end = entry.offsets[0] ?? null;
    const splits = noData || mode === 'whole' || end === null ? 0 : src.planSplits ? await src.planSplits(entry.batchId, start, end, this.maxSplits) : 1;
    const partitions = mode === 'stateless' ? [] : mode === 'whole' ? [0] : Array.from({ length: this.plan.statePartitions }, (_, p) => p);
    const partials = mode === 'partitioned' && this.operators[0].op.beginPartials !== undefined;
    const tasks: BatchTasks = { batchId: entry.batchId, mode, splits, partitions, ...(partials ? { partials } : {}) };
    await this.writeJson(key, tasks);
    return tasks;
  }

  private result(runId: string, t: BatchTasks): PlanResult {
    return { runId, batchId: t.batchId, done: false, splits: Array.from({ length: t.splits }, (_, split) => ({ split })), partitions: t.partitions.map((partition) => ({ partition })) };
  }

  private finished(runId: string, batchId: number, run?: RunRecord): PlanResult {
    return {
      runId, batchId, done: true, splits: [], partitions: [],
      ...(run ? { stoppedBy: 'done' as const, ...(run.firstBatch !== undefined ? { firstBatch: run.firstBatch } : {}), ...(run.startedAtMs !== undefined ? { startedAtMs: run.startedAtMs } : {}) } : {}),
    };
  }

  // ------------------------------------------------------------------------------------ read

  async readTask(runId: string, batchId: number, split: number): Promise<{ ok: true }> {
    this.openTables();
    await this.useRunLease(runId);
    if (await this.shuffle.get(`${batchId}/read/${split}/meta`)) return { ok: true };
    const entry = await this.offsets(batchId);
    const tasks = await this.tasks(batchId);
    if (split < 0 || split >= tasks.splits) throw new SluiceError(`batch ${batchId} has ${tasks.splits} read tasks, not a split ${split}`, { retriable: false });
    const read = emptyRead();
    const byPartition = new Map<number, Row[]>();
    const out: OutputRow[] = [];
    const op = this.operators[0]?.op;
    const src = this.sources[0];
    // pre-aggregation: the batch's groups of this split, with the first operator's watermarks
    const pre = tasks.partials ? op!.beginPartials!(this.batchMeta(entry, 0)) : null;
    for await (const chunk of readChunks(src, batchId, entry.startOffsets[0] ?? null, entry.offsets[0]!, { ...this.readOptions, split: { index: split, count: tasks.splits } })) {
      read.numInputRows += chunk.rows.length;
      read.bytes += chunk.bytes;
      for (const d of chunk.deadLetters) read.deadLetters.push(d);
      const staged = await this.runStages(this.plan.stages, chunk.rows);
      read.maxEventTimes.observe(staged.maxEventTime, staged.eventTimes);
      if (tasks.mode === 'stateless') {
        for (const r of (await this.runStages(this.plan.post, staged.rows)).rows) out.push(toOutputRow(r, this.outColumns));
        continue;
      }
      if (pre) {
        pre.add(staged.rows);
        continue;
      }
      for (const r of staged.rows) {
        const p = op!.partitionOf!(r);
        let list = byPartition.get(p);
        if (!list) byPartition.set(p, (list = []));
        list.push(r);
      }
    }
    let late: { late: number; lateRecords: Json[] } | null = null;
    if (pre) {
      const taken = pre.take();
      for (const [p, entries] of taken.partials) byPartition.set(p, entries as unknown as Row[]);
      late = { late: taken.late.length, lateRecords: this.pdeps.lateRows ? this.lateRecords(entry, 0, taken.late) : [] };
    }
    for (const [p, rows] of byPartition) await this.shuffle.put(`${batchId}/read/${split}/${p}`, encodeStateJson(rows as unknown as Json));
    if (tasks.mode === 'stateless') await this.shuffle.put(`${batchId}/read/${split}/out`, encodeStateJson(out as unknown as Json));
    // last: the meta says the task is done
    await this.writeJson(`${batchId}/read/${split}/meta`, { ...readMeta(read, [...byPartition.keys()].sort((a, b) => a - b)), ...(late ?? {}) });
    return { ok: true };
  }

  // ------------------------------------------------------------------------------- partition

  async partitionTask(runId: string, batchId: number, partition: number): Promise<{ ok: true }> {
    this.openTables();
    await this.useRunLease(runId);
    if (await this.shuffle.get(`${batchId}/out/${partition}`)) return { ok: true };
    const entry = await this.offsets(batchId);
    const tasks = await this.tasks(batchId);
    if (!tasks.partitions.includes(partition)) throw new SluiceError(`batch ${batchId} has no partition task ${partition} (it has ${tasks.partitions.join(', ') || 'none'})`, { retriable: false });
    const accs: Accumulator[] = this.beginOperators(entry);
    let read: BatchRead | null = null;
    let perOperator: OperatorOutput[];
    let rows: Row[];
    if (tasks.mode === 'whole') {
      // the whole batch in this task: read (every input) and every operator, the state unscoped
      const first = this.operators.findIndex((o) => o.chained.input === null);
      read = movesNoSource(entry, this.sources.length) ? emptyRead() : await this.read(entry, first >= 0 ? accs[first] : null);
      const result = first >= 0 ? await this.runOperators(accs, entry, read) : { rows: read.rows, perOperator: [] };
      perOperator = result.perOperator;
      rows = result.rows;
    } else {
      for (let k = 0; k < tasks.splits; k++) {
        const meta = await this.readJson<ReadMeta>(`${batchId}/read/${k}/meta`);
        if (!meta) throw new SluiceError(`read task ${k} of batch ${batchId} has not finished, so partition ${partition} cannot merge it: run the read tasks first (the state machine does)`, { retriable: true });
        if (!meta.partitions.includes(partition)) continue;
        const text = await this.shuffle.get(`${batchId}/read/${k}/${partition}`);
        if (text === null) throw new SluiceError(`shuffle ${batchId}/read/${k}/${partition} is missing though its read task's meta lists it: the shuffle was deleted under a running batch`, { retriable: false });
        if (tasks.partials) accs[0].addPartials!(decodeStateJson(text) as unknown as Json[]);
        else accs[0].add(decodeStateJson(text) as unknown as Row[]);
      }
      const result = await this.runOperators(accs, entry, emptyRead(), scopedState(this.pdeps.state, [partition]));
      perOperator = result.perOperator;
      rows = result.rows;
    }
    const scope = tasks.mode === 'whole' ? undefined : [partition];
    if (this.pdeps.state.check) {
      for (let i = 0; i < this.operators.length; i++) if (perOperator[i].changes.length) await this.pdeps.state.check(this.operators[i].op.spec, batchId, perOperator[i].changes);
    }
    for (let i = 0; i < this.operators.length; i++) {
      const changes = perOperator[i].changes;
      if (changes.length) await this.pdeps.state.commit(this.operators[i].op.spec, batchId, changes, this.currentLease ?? undefined, scope);
    }
    const out: PartitionOut = {
      rows: rows.map((r) => toOutputRow(r, this.outColumns)),
      stateRowsDelta: perOperator.map((o) => o.stateRowsDelta),
      late: perOperator.map((o) => o.late.length),
      lateRecords: this.pdeps.lateRows ? perOperator.flatMap((o, i) => this.lateRecords(entry, i, o.late, o.lateRightFrom)) : [],
      updated: perOperator.map((o) => count(o.changes, false)),
      removed: perOperator.map((o) => count(o.changes, true)),
      bytes: perOperator.map((o) => estimateStateBytes(o.changes)),
      ...(read ? { read: readMeta(read, []) } : {}),
    };
    // after the state commit: its presence says the partition is done for N
    await this.shuffle.put(`${batchId}/out/${partition}`, encodeStateJson(out as unknown as Json));
    return { ok: true };
  }

  // ---------------------------------------------------------------------------------- commit

  async commitTask(runId: string, batchId: number): Promise<CommitResult> {
    this.openTables();
    await this.useRunLease(runId);
    const { progress, head, queryId } = await this.progressNow();
    if (head.latestCommitBatch >= batchId) return { runId, batchId, more: true };
    if (progress.nextBatchId !== batchId) throw new SluiceError(`batch ${batchId} cannot commit: the checkpoint's next batch is ${progress.nextBatchId}`, { retriable: false });
    const t0 = this.clock.now();
    const entry = await this.offsets(batchId);
    const tasks = await this.tasks(batchId);
    const outs: PartitionOut[] = [];
    for (const p of tasks.partitions) {
      const text = await this.shuffle.get(`${batchId}/out/${p}`);
      if (text === null) throw new SluiceError(`partition task ${p} of batch ${batchId} has not finished, so the batch cannot commit: run the partition tasks first (the state machine does)`, { retriable: true });
      outs.push(decodeStateJson(text) as unknown as PartitionOut);
    }
    const metas: ReadMeta[] = [];
    if (tasks.mode === 'whole') metas.push(outs[0].read!);
    for (let k = 0; k < tasks.splits; k++) {
      const meta = await this.readJson<ReadMeta>(`${batchId}/read/${k}/meta`);
      if (!meta) throw new SluiceError(`read task ${k} of batch ${batchId} has not finished, so the batch cannot commit`, { retriable: true });
      metas.push(meta);
    }
    const read = mergeReads(metas);
    let rows: OutputRow[] = [];
    if (tasks.mode === 'stateless') {
      for (let k = 0; k < tasks.splits; k++) rows = rows.concat(decodeStateJson((await this.shuffle.get(`${batchId}/read/${k}/out`)) ?? '[]') as unknown as OutputRow[]);
    } else for (const o of outs) rows = rows.concat(o.rows);
    const tRead = this.clock.now();
    await this.writeDeadLetters(batchId, read.deadLetters);
    const lateRecords = [...metas.flatMap((m) => m.lateRecords ?? []), ...outs.flatMap((o) => o.lateRecords)];
    if (this.pdeps.lateRows && lateRecords.length) await this.pdeps.lateRows.write(batchId, 'late', lateRecords);
    await this.pdeps.sink.addBatch(batchId, rows, { ...this.sinkContext, queryId, lease: this.currentLease ?? undefined });
    const tAdd = this.clock.now();
    const n = this.operators.length;
    const sum = (f: (o: PartitionOut) => number[], i: number) => outs.reduce((a, o) => a + (f(o)[i] ?? 0), 0);
    const stateRowsByOperator = this.operators.map((_, i) => progress.stateRowsByOperator[i] + sum((o) => o.stateRowsDelta, i));
    // (a pre-aggregating read task drops the first operator's late rows itself)
    const droppedByOperator = this.operators.map((_, i) => sum((o) => o.late, i) + (i === 0 ? metas.reduce((a, m) => a + (m.late ?? 0), 0) : 0));
    const commit: CommitEntry = this.commitEntry(queryId, entry, progress, read, stateRowsByOperator);
    const noData = movesNoSource(entry, this.sources.length);
    const report = {
      batchId, replay: false, noData, numInputRows: read.numInputRows, numOutputRows: rows.length, rows: [], batchWatermarkMs: entry.batchWatermarkMs,
      nextWatermarkMs: commit.nextBatchWatermarkMs, droppedByWatermark: droppedByOperator.reduce((a, b) => a + b, 0), deadLetters: read.deadLetters.length,
      stateRows: commit.stateRows!, stateRowsByOperator, droppedByOperator, durationMs: this.clock.now() - t0,
    };
    const record = this.progressRecord({ queryId, runId }, entry, progress, report, read, {
      start: { startedAtMs: t0 },
      durations: { getBatch: tRead - t0, addBatch: tAdd - tRead, stateCommit: 0 },
      perOperator: this.operators.map((_, i): OperatorOutput => ({ rows: [], changes: [], late: [], stateRowsDelta: sum((o) => o.stateRowsDelta, i) })),
      commitTimes: new Array<number>(n).fill(0),
      numLateRowsKept: this.pdeps.lateRows ? report.droppedByWatermark : 0,
      storeStats: null,
      backlog: [],
    });
    // the partitions' own figures of their state changes
    const stateOperators = record.stateOperators.map((s, i) => ({ ...s, numRowsUpdated: sum((o) => o.updated, i), numRowsRemoved: sum((o) => o.removed, i), memoryUsedBytes: sum((o) => o.bytes, i) }));
    await this.writeProgress({ ...record, stateOperators, sluice: { ...record.sluice, partitionedRun: { splits: tasks.splits, partitions: tasks.partitions.length, mode: tasks.mode } } as typeof record.sluice });
    await this.pdeps.checkpoint.writeCommit(commit);
    advance(progress, commit);
    if (batchId > 0 && batchId % 10 === 0 && batchId - this.retain > 0) {
      await this.purge(batchId, batchId - this.retain);
      await this.shuffle.purgeBelow(batchId - this.retain).catch((e: Error) => this.log({ event: 'purge-failed', batchId, what: 'shuffle', error: e.message }));
    }
    const run = await this.readJson<RunRecord>(`runs/${runId}`);
    if (run?.lease && this.pdeps.lease && run.lease.expiresAtMs - this.clock.now() < this.leaseMs / 2) {
      await this.writeJson(`runs/${runId}`, { ...run, lease: await this.pdeps.lease.renew(run.lease, this.leaseMs) });
    }
    this.log({ event: 'batch', batchId, partitioned: tasks.mode, rowsIn: read.numInputRows, rowsOut: rows.length, watermark: new Date(entry.batchWatermarkMs).toISOString() });
    return { runId, batchId, more: this.plan.trigger !== 'once' || noData };
  }

  // --------------------------------------------------------------------------------- helpers

  /** Operator i's batch (its id and input watermarks), as beginOperators gives it. */
  private batchMeta(entry: OffsetEntry, i: number) {
    const wms = operatorInputWatermarks(watermarksOf(entry), this.operators.map((o) => o.chained.watermarkOffsetMs))[i];
    return { batchId: entry.batchId, evictWm: wms.batchWatermarkMs, lateWm: wms.lateWatermarkMs };
  }


  private openTables(): void {
    if (!this.joins && hasJoin(planStages(this.plan))) this.joins = new JoinTables(this.pdeps.staticTables);
  }

  /** The run's lease, for the fencing of this task's writes. */
  private async useRunLease(runId: string): Promise<void> {
    const run = await this.readJson<RunRecord>(`runs/${runId}`);
    this.currentLease = run?.lease ?? null;
  }

  /** Where the checkpoint says the query is: the progress after its last commit, its head, its id. */
  private async progressNow(): Promise<{ progress: Progress; head: Awaited<ReturnType<PartitionedDeps['checkpoint']['head']>>; queryId: string }> {
    const head = await this.pdeps.checkpoint.head();
    let last: CommitEntry | null = null;
    if (head.latestCommitBatch >= 0) {
      last = await this.pdeps.checkpoint.readCommit(head.latestCommitBatch);
      if (!last) throw new SluiceError(`checkpoint ${this.pdeps.checkpoint.description} lists commits/${head.latestCommitBatch} but it cannot be read`, { retriable: true });
    }
    const queryId = await this.checkShape(last, head.metadata);
    return { progress: progressAfter(last, head.latestCommitBatch, this.operators.length, this.sources.length), head, queryId };
  }

  private async offsets(batchId: number): Promise<OffsetEntry> {
    const entry = await this.pdeps.checkpoint.readOffsets(batchId);
    if (!entry) throw new SluiceError(`batch ${batchId} has no offsets/${batchId} in ${this.pdeps.checkpoint.description}: its plan task has not run`, { retriable: false });
    return entry;
  }

  private async tasks(batchId: number): Promise<BatchTasks> {
    const t = await this.readJson<BatchTasks>(`${batchId}/plan`);
    if (!t) throw new SluiceError(`batch ${batchId} has no task plan (shuffle ${batchId}/plan): its plan task has not run`, { retriable: false });
    return t;
  }

  private async readJson<T>(key: string): Promise<T | null> {
    const text = await this.shuffle.get(key);
    return text === null ? null : (decodeStateJson(text) as unknown as T);
  }

  private async writeJson(key: string, value: unknown): Promise<void> {
    await this.shuffle.put(key, encodeStateJson(value as Json));
  }

}

/** A state store seen by one partition task: eviction, complete mode and commits scoped to its partitions. */
export function scopedState(state: StateStore, partitions: readonly number[]): StateStore {
  return {
    description: state.description,
    get: (op, keys, version) => state.get(op, keys, version),
    expired: (op, wm, version) => state.expired(op, wm, version, partitions),
    all: (op, version) => state.all(op, version, partitions),
    count: (op, version) => state.count(op, version),
    commit: (op, version, changes, fence) => state.commit(op, version, changes, fence, partitions),
    ...(state.check ? { check: (op, version, changes) => state.check!(op, version, changes) } : {}),
    retentionMs: state.retentionMs,
  };
}

function count(changes: readonly StateChange[], removed: boolean): number {
  let n = 0;
  for (const c of changes) if ((c.value === null) === removed) n++;
  return n;
}

function readMeta(read: BatchRead, partitions: number[]): ReadMeta {
  const s = read.maxEventTimes.stats;
  return {
    numInputRows: read.numInputRows,
    perSource: [...read.perSource],
    bytes: read.bytes,
    deadLetters: read.deadLetters,
    maxEventTimes: [...read.maxEventTimes.entries()],
    stats: { min: s.count ? s.min : 0, max: s.count ? s.max : 0, count: s.count, base: s.base, sum: s.sum },
    partitions,
  };
}

/** The read tasks' figures as one read: counts summed, dead letters in split order, each watermark stage's maximum. */
function mergeReads(metas: readonly ReadMeta[]): BatchRead {
  const read = emptyRead();
  const max = new MaxEventTimes();
  for (const m of metas) {
    read.numInputRows += m.numInputRows;
    read.bytes += m.bytes;
    m.perSource.forEach((n, i) => (read.perSource[i] = (read.perSource[i] ?? 0) + (n ?? 0)));
    for (const d of m.deadLetters) read.deadLetters.push(d);
    max.observe(new Map(m.maxEventTimes), Object.assign(new EventTimeStats(), m.stats.count ? m.stats : { min: Infinity, max: -Infinity, count: 0, base: 0, sum: 0 }));
  }
  return { ...read, maxEventTimes: max };
}


// ------------------------------------------------------------------------------------ driving

/** A task of a partitioned run, as the state machine (or a local driver) sends it. */
export type TaskEvent =
  | { readonly action: 'plan'; readonly runId: string }
  | { readonly action: 'read'; readonly runId: string; readonly batchId: number; readonly split: number }
  | { readonly action: 'partition'; readonly runId: string; readonly batchId: number; readonly partition: number }
  | { readonly action: 'commit'; readonly runId: string; readonly batchId: number };

export type TaskResult = PlanResult | CommitResult | { readonly ok: true };
export type TaskHandler = (event: TaskEvent) => Promise<TaskResult>;

/**
 * The handler of every task kind: each task on a PartitionedRun of its own (`make`), as a Lambda
 * or a worker thread would build it, so nothing passes between tasks but the checkpoint, the
 * state and the shuffle.
 */
export function partitionedTasks(make: () => PartitionedRun): TaskHandler {
  return async (e) => {
    const run = make();
    switch (e.action) {
      case 'plan':
        return run.planTask(e.runId);
      case 'read':
        return run.readTask(e.runId, e.batchId, e.split);
      case 'partition':
        return run.partitionTask(e.runId, e.batchId, e.partition);
      case 'commit':
        return run.commitTask(e.runId, e.batchId);
      default:
        throw new SluiceError(`unknown task ${JSON.stringify(e)}: a task is plan, read, partition or commit`, { retriable: false });
    }
  };
}

/**
 * Drives one partitioned run as the state machine does (plan, the read tasks, the partition
 * tasks, commit, again), `concurrency` tasks of a kind at a time. Returns the batches it committed.
 */
export async function runPartitioned(handler: TaskHandler, opts: { readonly runId: string; readonly concurrency?: number }): Promise<{ runId: string; batches: number[] }> {
  const { runId } = opts;
  const n = opts.concurrency ?? 1;
  const batches: number[] = [];
  for (;;) {
    const plan = (await handler({ action: 'plan', runId })) as PlanResult;
    if (plan.done) break;
    const { batchId } = plan;
    await eachLimit(plan.splits, n, (s) => handler({ action: 'read', runId, batchId, split: s.split }));
    await eachLimit(plan.partitions, n, (p) => handler({ action: 'partition', runId, batchId, partition: p.partition }));
    const commit = (await handler({ action: 'commit', runId, batchId })) as CommitResult;
    batches.push(batchId);
    if (!commit.more) break;
  }
  return { runId, batches };
}

/** `fn` over `items`, at most `limit` at a time; the first failure fails the whole (after the others settle). */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length && errors.length === 0) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (e) {
        errors.push(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length) throw errors[0];
}

/**
 * The run report of a partitioned run, read back from the checkpoint (what the commits and the
 * progress records say of `batches`), for the CLI's summary and the conformance runner; rows are
 * the sink's, not repeated here.
 */
export async function partitionedRunReport(plan: QueryPlan, checkpoint: CheckpointStore, batches: readonly number[]): Promise<RunReport> {
  const head = await checkpoint.head();
  const last = head.latestCommitBatch >= 0 ? await checkpoint.readCommit(head.latestCommitBatch) : null;
  const reports: BatchReport[] = [];
  const progress: StreamingProgress[] = [];
  for (const id of batches) {
    const p = (await checkpoint.readProgress(id)) as unknown as StreamingProgress | null;
    if (!p) continue;
    progress.push(p);
    const dropped = p.stateOperators.map((o) => o.numRowsDroppedByWatermark);
    reports.push({
      batchId: id, replay: p.sluice.replay, noData: p.sluice.noData, numInputRows: p.numInputRows, numOutputRows: p.sink.numOutputRows, rows: [],
      batchWatermarkMs: Date.parse(p.eventTime.watermark), nextWatermarkMs: 0, droppedByWatermark: dropped.reduce((a, b) => a + b, 0),
      deadLetters: p.sluice.numDeadLetters, stateRows: p.stateOperators.reduce((a, o) => a + o.numRowsTotal, 0), stateRowsByOperator: p.stateOperators.map((o) => o.numRowsTotal), droppedByOperator: dropped, durationMs: p.batchDuration,
    });
  }
  const watermarkMs = last ? last.nextBatchWatermarkMs : 0;
  // each batch's next watermark is the one the batch after it ran with (the run's for the last)
  reports.forEach((b, i) => (reports[i] = { ...b, nextWatermarkMs: reports[i + 1]?.batchWatermarkMs ?? watermarkMs }));
  const sum = (f: (b: BatchReport) => number) => reports.reduce((a, b) => a + f(b), 0);
  return {
    queryId: last?.queryId ?? '', queryName: plan.name, stoppedBy: 'done', batches: reports, watermarkMs, watermark: new Date(watermarkMs).toISOString(),
    rowsIn: sum((b) => b.numInputRows), rowsOut: sum((b) => b.numOutputRows), droppedByWatermark: sum((b) => b.droppedByWatermark), deadLetters: sum((b) => b.deadLetters),
    stateRows: last?.stateRows ?? 0, stateRowsByOperator: last?.stateRowsByOperator ?? (plan.operators.length ? [last?.stateRows ?? 0] : []), backlogLeft: 0, progress,
  };
}
