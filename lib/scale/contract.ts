/**
 * The contract between the scale-out state machine (lib/infra/scale-out.ts deploys it,
 * lib/local/state-machine.ts runs it locally) and the task code that runs in its one task Lambda
 * (lib/aws/lambda/scale-out-handler.ts dispatches to it). Types only: no AWS imports, so that the
 * engine side, the construct and the local interpreter all depend on this file and on nothing of
 * each other.
 *
 *     Plan ──▶ done? ──yes──▶ Succeed
 *       ▲        │ no
 *       │        ▼
 *       │      Read (Distributed Map over plan.splits: one 'read' per split)
 *       │        ▼
 *       │      Partition (Distributed Map over plan.partitions: one 'partition' per state partition)
 *       │        ▼
 *       │      Commit ──▶ more? ──no──▶ Succeed
 *       └───────────────────┘ yes
 *
 * One run is one execution; `runId` is the execution's name ($$.Execution.Name), the same in every
 * event of that execution. The events and results are small descriptors (the data itself is in S3
 * and DynamoDB), so that every state's input and output stays far below Step Functions' 256 KiB.
 */

/** What the state machine sends the task Lambda; `action` names the task. */
export type TaskEvent =
  /** At the start of a run and after each commit: plan the next batch (or say the run is done). */
  | { readonly action: 'plan'; readonly runId: string }
  /** Read one split of batch `batchId` (a file group, a shard range) into its shuffle objects. */
  | { readonly action: 'read'; readonly runId: string; readonly batchId: number; readonly split: number }
  /** Merge the shuffle objects of one state partition of batch `batchId` into its state and output. */
  | { readonly action: 'partition'; readonly runId: string; readonly batchId: number; readonly partition: number }
  /** Every partition of batch `batchId` committed: write the batch's commit. */
  | { readonly action: 'commit'; readonly runId: string; readonly batchId: number };

/** The task names, in the order a batch runs them. */
export type TaskAction = TaskEvent['action'];

/** What 'plan' returns. Read and Partition map over `splits` and `partitions`. */
export interface PlanResult {
  readonly runId: string;
  readonly batchId: number;
  /** True: nothing (left) to run in this execution; the state machine succeeds without reading. */
  readonly done: boolean;
  /** One read task each; Step Functions' Map needs its items to be objects. */
  readonly splits: ReadonlyArray<{ readonly split: number }>;
  /** One partition task each: the state partitions of the batch (all P of them, or the ones with work). */
  readonly partitions: ReadonlyArray<{ readonly partition: number }>;
}

/** What 'commit' returns. */
export interface CommitResult {
  readonly runId: string;
  readonly batchId: number;
  /** True: plan the next batch in this execution (the run has work and time left). */
  readonly more: boolean;
}

/** What 'read' and 'partition' return: their results are in S3 and DynamoDB, not in the state machine. */
export interface TaskDone {
  readonly ok: true;
}

/** The task code: one function for the four actions. */
export type TaskHandler = (event: TaskEvent) => Promise<PlanResult | CommitResult | TaskDone>;

/** The result each action returns. */
export interface TaskResults {
  readonly plan: PlanResult;
  readonly read: TaskDone;
  readonly partition: TaskDone;
  readonly commit: CommitResult;
}
