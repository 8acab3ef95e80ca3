/**
 * The contract between the scale-out state machine (lib/infra/scale-out.ts deploys it,
 * lib/local/state-machine.ts runs it locally) and the task code that runs in its one task Lambda
 * (lib/aws/lambda/scale-out-handler.ts dispatches to it). Types only, no AWS imports: the
 * construct, the Lambdas and the local interpreter depend on this file, not on each other.
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
 *
 * The shapes themselves are the engine's (lib/engine/schedule/partitioned.ts, where the tasks are
 * implemented), so that there is one declaration of them:
 *
 *     TaskEvent    { action: 'plan', runId } | { action: 'read', runId, batchId, split }
 *                  | { action: 'partition', runId, batchId, partition } | { action: 'commit', runId, batchId }
 *     PlanResult   { runId, batchId, done, splits: [{ split }], partitions: [{ partition }] }   -> $.plan
 *     CommitResult { runId, batchId, more }                                                    -> $.commit
 *     read and partition answer { ok: true } (their results are in S3 and DynamoDB)
 */
export type { CommitResult, PlanResult } from '../engine/schedule/partitioned';
export type { TaskEvent, TaskHandler, TaskResult } from '../engine/schedule/driver';
