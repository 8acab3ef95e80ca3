/**
 * PLACEHOLDER, replaced by the engine half of issue 19: the plan/read/partition/commit task code.
 * Until then every task fails with a clear error, so that a deployed state machine stops at its
 * first Plan (ExecutionsFailed alarms) rather than pretending to run.
 */
import { SluiceError } from '../engine/errors';
import type { TaskEvent, TaskResult } from './contract';

export async function handleTask(event: TaskEvent): Promise<TaskResult> {
  throw new SluiceError(
    `scale-out task "${event.action}" of run ${event.runId} cannot run: the plan/read/partition/commit task code is not built yet (issue 19); deploy without \`parallelism\` until it is`,
    { retriable: false, details: { action: event.action, runId: event.runId } },
  );
}
