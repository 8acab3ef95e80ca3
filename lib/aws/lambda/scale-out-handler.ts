/**
 * The scale-out task Lambda: one function for the four tasks of the state machine
 * (lib/infra/scale-out.ts), dispatched on `action` (lib/scale/contract.ts) to the engine's tasks
 * (lib/engine/schedule/partitioned.ts), each on a PartitionedRun of its own over the AWS adapters
 * (buildExecutor(...).partitioned()). An entry builds it once per container, from the variables
 * the construct sets, as lambdas/windowed-totals-tasks.ts does:
 *
 *     export const handler = createTaskLambdaFromEnv(process.env, (env) => myQuery(env.outputMode));
 *
 *     Step Functions ──▶ { action, runId, batchId?, split? | partition? }
 *                          │ parseTaskEvent: the shape, or a non-retriable error that names the field
 *                          ▼
 *                        handle(event) ──▶ PlanResult | CommitResult | { ok: true }
 *                          │ one "task" JSON line (action, run, batch, item, duration)
 *                          ▼
 *                        the result, which the state machine reads ($.Payload)
 *
 *     on error: one "task-failed" JSON line, then rethrow: the task fails, Step Functions retries it
 *     (its Retry), then fails the execution; the next scheduled run resumes from the checkpoint.
 */
import { Console } from 'node:console';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { partitionedRunReport, partitionedTasks } from '../../engine/schedule/driver';
import { DynamoDbStateCache } from '../dynamodb/state-cache';
import type { PlanResult } from '../../engine/schedule/partitioned';
import { RunMemo } from '../../engine/schedule/run-memo';
import { DEFAULT_METRICS_NAMESPACE, emfBlock } from './emf';
import { runSummaryOf, s3Prefixes } from './handler';
import type { QueryPlan } from '../../engine/plan/types';
import type { TaskEvent, TaskHandler } from '../../scale/contract';
import { createClients, type AwsClients } from '../clients';
import type { AwsConnection } from '../config';
import { buildExecutor, type PipelineConfig } from '../pipeline';
import { lambdaEnvironmentFrom, type LambdaEnvironment } from './env';
import { redactInPlace } from './redact';

/** A task event the state machine did not send (a hand-made invocation, a definition out of step). */
export class InvalidTaskEventError extends SluiceError {}

const ACTIONS = ['plan', 'read', 'partition', 'commit'] as const;
/** The numeric fields each action needs besides `runId`. */
const FIELDS: Record<TaskEvent['action'], readonly string[]> = {
  plan: [],
  read: ['batchId', 'split'],
  partition: ['batchId', 'partition'],
  commit: ['batchId'],
};

function refuse(message: string, event: unknown): never {
  throw new InvalidTaskEventError(
    `scale-out task event ${message}: the state machine sends { action: 'plan' | 'read' | 'partition' | 'commit', runId, ... } (lib/scale/contract.ts)`,
    {
      details: { event },
    },
  );
}

/** `event` as a TaskEvent, or an InvalidTaskEventError that names the field and the value. */
export function parseTaskEvent(event: unknown): TaskEvent {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) refuse(`${JSON.stringify(event)} is not an object`, event);
  const e = event as Record<string, unknown>;
  if (!(ACTIONS as readonly unknown[]).includes(e.action)) refuse(`has action ${JSON.stringify(e.action)}, not one of ${ACTIONS.join(', ')}`, event);
  const action = e.action as TaskEvent['action'];
  if (typeof e.runId !== 'string' || e.runId === '') refuse(`"${action}" has runId ${JSON.stringify(e.runId)}, not the execution's name`, event);
  const out: Record<string, unknown> = { action, runId: e.runId };
  for (const field of FIELDS[action]) {
    const v = e[field];
    if (!Number.isInteger(v) || (v as number) < 0) refuse(`"${action}" has ${field} ${JSON.stringify(v)}, not a whole number >= 0`, event);
    out[field] = v;
  }
  return out as TaskEvent;
}

export interface TaskLambdaOptions {
  /** Where the JSON lines go. @default a Console on process.stdout */
  readonly writeLine?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
  /** Keep data values (keys, rows, records) in a failed task's log line and rethrown error (SLUICE_LOG_VALUES). @default false */
  readonly logDataValues?: boolean;
  /** The pipeline's own S3 key prefixes: a `key` detail under one names an object and is kept. */
  readonly objectPrefixes?: readonly string[];
}

export type TaskLambda = (event: unknown) => ReturnType<TaskHandler>;

let stdoutConsole: Console | undefined;
function defaultWriteLine(line: string): void {
  stdoutConsole ??= new Console({ stdout: process.stdout, stderr: process.stderr });
  stdoutConsole.log(line);
}

/** The Lambda handler around `handle`: checks the event, logs one line per task, rethrows failures. */
export function createTaskLambda(handle: TaskHandler, opts: TaskLambdaOptions = {}): TaskLambda {
  const writeLine = opts.writeLine ?? defaultWriteLine;
  const now = opts.now ?? Date.now;
  return async (raw) => {
    const event = parseTaskEvent(raw);
    const startedMs = now();
    const base = { ...event, event: 'task' };
    try {
      const result = await handle(event);
      writeLine(JSON.stringify({ level: 'info', ...base, durationMs: now() - startedMs }));
      return result;
    } catch (error) {
      const e = error as Error & { retriable?: boolean; details?: Record<string, unknown> };
      // redacted where it leaves the function: the line below, and the error rethrown, which the
      // runtime logs and Step Functions keeps as the task's cause in the execution history
      const redacted = !opts.logDataValues && e instanceof Error ? redactInPlace(e, opts.objectPrefixes ?? []) : [];
      writeLine(
        JSON.stringify({
          level: 'error',
          ...base,
          event: 'task-failed',
          durationMs: now() - startedMs,
          error: e?.name,
          message: String(e?.message ?? error),
          details: e?.details ?? {},
          retriable: e?.retriable ?? false,
          ...(redacted.length > 0 ? { redacted: { fields: redacted, toLogThem: 'set SLUICE_LOG_VALUES=true (the construct prop logDataValues)' } } : {}),
        }),
      );
      throw error;
    }
  };
}

export interface PartitionedTaskLambdaOptions extends TaskLambdaOptions {
  /** P, the state partitions (the construct's SLUICE_STATE_PARTITIONS): the query's statePartitions. */
  readonly statePartitions?: number;
  /** At most this many read tasks per batch. @default the engine's (8) */
  readonly maxSplits?: number;
  /** @default createClients (lib/aws/clients.ts) */
  readonly createClients?: (conn: AwsConnection) => AwsClients;
  /** The run summary's CloudWatch namespace and Pipeline dimension (SLUICE_METRICS_NAMESPACE, SLUICE_PIPELINE_NAME). */
  readonly metricsNamespace?: string;
  readonly pipelineName?: string;
}

/**
 * The task Lambda of `plan` on AWS: the SDK clients are built once (per container), and each task
 * runs on a PartitionedRun of its own, so nothing passes between tasks but the checkpoint, the
 * state and the shuffle beside the checkpoint (and the state's immutable manifests and pages,
 * cached by ref for the container's next task: DynamoDbStateCache).
 */
export function createPartitionedTaskLambda(plan: QueryPlan, cfg: PipelineConfig, conn: AwsConnection, opts: PartitionedTaskLambdaOptions = {}): TaskLambda {
  const clients = (opts.createClients ?? createClients)(conn);
  const config = opts.statePartitions === undefined ? cfg : { ...cfg, statePartitions: opts.statePartitions };
  // the state's manifests and pages (immutable by ref) outlive a task: the container's next task may read them
  const stateCache = new DynamoDbStateCache();
  const memo = new RunMemo();
  const tasks = partitionedTasks(() => buildExecutor(conn, plan, config, { clients, stateCache }).partitioned({ maxSplits: opts.maxSplits, memo }));
  const writeLine = opts.writeLine ?? defaultWriteLine;
  const now = opts.now ?? Date.now;
  const namespace = opts.metricsNamespace?.trim() || DEFAULT_METRICS_NAMESPACE;
  const pipeline = opts.pipelineName?.trim() || plan.name;
  // The plan that ends a run writes the run's summary line, as the single Lambda does after its
  // run (its EMF metrics feed the same alarms): the batches committed since the run's first plan.
  const handle: TaskHandler = async (event) => {
    const result = await tasks(event);
    const done = result as PlanResult;
    if (event.action === 'plan' && done.done && done.stoppedBy) {
      const first = done.firstBatch ?? done.batchId;
      const batches = done.stoppedBy === 'done' ? Array.from({ length: Math.max(0, done.batchId - first) }, (_, i) => first + i) : [];
      const report = await partitionedRunReport(plan, buildExecutor(conn, plan, config, { clients }).checkpoint, batches);
      const summary = runSummaryOf(
        { ...report, stoppedBy: done.stoppedBy },
        { pipeline, requestId: event.runId, startedMs: done.startedAtMs ?? now(), endedMs: now() },
      );
      writeLine(JSON.stringify({ level: 'info', ...summary, ...emfBlock(summary, namespace, pipeline, now()) }));
    }
    return result;
  };
  return createTaskLambda(handle, { ...opts, objectPrefixes: opts.objectPrefixes ?? s3Prefixes(config) });
}

/** SLUICE_STATE_PARTITIONS, which the construct sets from parallelism.statePartitions. */
export function statePartitionsFromEnv(env: Record<string, string | undefined>): number {
  const value = env.SLUICE_STATE_PARTITIONS;
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < 1 || n > 256) {
    throw new InvalidOptionError(
      `SLUICE_STATE_PARTITIONS=${JSON.stringify(value)} must be a whole number from 1 to 256: the construct sets it from parallelism.statePartitions, the query's statePartitions`,
    );
  }
  return n;
}

/** SLUICE_MAX_SPLITS, which the construct sets from parallelism.maxSplits; unset: the engine's default (8). */
export function maxSplitsFromEnv(env: Record<string, string | undefined>): number | undefined {
  const value = env.SLUICE_MAX_SPLITS;
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw new InvalidOptionError(
      `SLUICE_MAX_SPLITS=${JSON.stringify(value)} must be a whole number from 1 to 10000: the construct sets it from parallelism.maxSplits, the most read tasks a batch splits into`,
    );
  }
  return n;
}

/** A task Lambda that fails every task with `error` (an entry whose configuration cannot work), logging why. */
export function failingTaskLambda(error: unknown, writeLine: (line: string) => void = defaultWriteLine): TaskLambda {
  return async (raw) => {
    writeLine(
      JSON.stringify({
        level: 'error',
        event: 'task-failed',
        action: (raw as { action?: unknown })?.action,
        retriable: false,
        error: error instanceof Error ? error.name : typeof error,
        message: error instanceof Error ? error.message : String(error),
        fix: 'fix the function configuration: every task will fail the same way',
      }),
    );
    throw error;
  };
}

/**
 * The task Lambda of a query, from its environment (the variables the construct sets for the task
 * Lambda: the pipeline's, and SLUICE_STATE_PARTITIONS): read once, when the container starts. A
 * bad environment does not fail the container's init: every task then fails with one JSON line
 * that says what to fix.
 */
export function createTaskLambdaFromEnv(
  env: Record<string, string | undefined>,
  query: QueryPlan | ((env: LambdaEnvironment) => QueryPlan),
  opts: Omit<PartitionedTaskLambdaOptions, 'statePartitions' | 'logDataValues'> = {},
): TaskLambda {
  try {
    const e = lambdaEnvironmentFrom(env);
    const plan = typeof query === 'function' ? query(e) : query;
    return createPartitionedTaskLambda(plan, e.config, e.connection, {
      ...opts,
      statePartitions: statePartitionsFromEnv(env),
      maxSplits: opts.maxSplits ?? maxSplitsFromEnv(env),
      logDataValues: e.logDataValues,
      metricsNamespace: e.metricsNamespace,
      pipelineName: e.pipelineName,
    });
  } catch (error) {
    return failingTaskLambda(error, opts.writeLine);
  }
}
