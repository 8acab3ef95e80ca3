/**
 * Driving a partitioned run (schedule/partitioned.ts) without Step Functions: the task handler a
 * Lambda or a worker thread runs, a local driver that runs the tasks as the state machine does,
 * and the run report read back from the checkpoint.
 */
import type { CheckpointStore } from '../ports';
import type { StreamingProgress } from '../progress';
import { operatorChain } from '../plan/chain';
import type { QueryPlan } from '../plan/types';
import { SluiceError } from '../errors';
import { progressAfter } from '../run/position';
import { batchReportOf, runReportOf } from '../run/reporter';
import { stateWarnings } from '../run/runtime';
import type { BatchReport, RunReport } from '../run/types';
import type { CommitResult, PartitionedRun, PlanResult } from './partitioned';

/** A task of a partitioned run, as the state machine (or a local driver) sends it. */
export type TaskEvent =
  | { readonly action: 'plan'; readonly runId: string }
  | { readonly action: 'read'; readonly runId: string; readonly batchId: number; readonly split: number }
  | {
      readonly action: 'partition';
      readonly runId: string;
      readonly batchId: number;
      readonly partition: number;
      /** Runs of this task before this one in this run, when the driver knows (runPartitioned: 0, it never runs a task twice). */
      readonly attempt?: number;
    }
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
        return run.partitionTask(e.runId, e.batchId, e.partition, e.attempt);
      case 'commit':
        return run.commitTask(e.runId, e.batchId);
      default:
        throw new SluiceError(`unknown task ${JSON.stringify(e)}: a task is plan, read, partition or commit`, { retriable: false });
    }
  };
}

/**
 * Drives one partitioned run as the state machine does (plan, the read tasks, the partition
 * tasks, commit, again until the plan says done), `concurrency` tasks of a kind at a time.
 * Returns the batches it committed.
 */
export async function runPartitioned(
  handler: TaskHandler,
  opts: { readonly runId: string; readonly concurrency?: number },
): Promise<{ runId: string; batches: number[] }> {
  const { runId } = opts;
  const n = opts.concurrency ?? 1;
  const batches: number[] = [];
  for (;;) {
    const plan = (await handler({ action: 'plan', runId })) as PlanResult;
    if (plan.done) break;
    const { batchId } = plan;
    await eachLimit(plan.splits, n, (s) => handler({ action: 'read', runId, batchId, split: s.split }));
    await eachLimit(plan.partitions, n, (p) => handler({ action: 'partition', runId, batchId, partition: p.partition, attempt: 0 }));
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
 * The run report of a partitioned run, read back from the checkpoint (the progress records and
 * commits of `batches`) through the reporter that builds the single scheduler's, for the CLI's
 * summary and the conformance runner; rows are the sink's, not repeated here.
 */
export async function partitionedRunReport(plan: QueryPlan, checkpoint: CheckpointStore, batches: readonly number[]): Promise<RunReport> {
  const head = await checkpoint.head();
  const last = head.latestCommitBatch >= 0 ? await checkpoint.readCommit(head.latestCommitBatch) : null;
  const reports: BatchReport[] = [];
  const progress: StreamingProgress[] = [];
  for (const id of batches) {
    const record = (await checkpoint.readProgress(id)) as unknown as StreamingProgress | null;
    const commit = await checkpoint.readCommit(id);
    if (!record || !commit) continue;
    progress.push(record);
    reports.push(batchReportOf(record, commit.nextBatchWatermarkMs));
  }
  const chain = operatorChain(plan).operators;
  const after = progressAfter(last, head.latestCommitBatch, chain.length, 1 + (plan.inputs?.length ?? 0));
  return runReportOf(
    { plan, warnings: stateWarnings(plan, chain) },
    { queryId: last?.queryId ?? '', stoppedBy: 'done', batches: reports, progress, after, backlogLeft: 0 },
  );
}
