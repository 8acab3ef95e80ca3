/**
 * Lambda entry of the windowed-totals example's scale-out tasks (AvailableNowPipeline with
 * `parallelism`): the plan, read, partition and commit tasks of its state machine. As
 * lambdas/windowed-totals.ts, this file is the edge: it reads process.env once, when the container
 * starts (lib/aws/lambda/env.ts, and SLUICE_STATE_PARTITIONS), and builds the task handler and its
 * SDK clients then (lib/aws/lambda/scale-out-handler.ts).
 */
import { windowedTotals } from '../examples/windowed-totals';
import { lambdaEnvironmentFrom } from '../lib/aws/lambda/env';
import { createPartitionedTaskLambda, failingTaskLambda, statePartitionsFromEnv, type TaskLambda } from '../lib/aws/lambda/scale-out-handler';

function build(env: NodeJS.ProcessEnv): TaskLambda {
  const { config, connection, outputMode, logDataValues } = lambdaEnvironmentFrom(env);
  const plan = windowedTotals({ outputMode, source: config.source.kind === 'kinesis' ? 'kinesis' : 'files' });
  return createPartitionedTaskLambda(plan, config, connection, { statePartitions: statePartitionsFromEnv(env), logDataValues });
}

function buildOrFail(env: NodeJS.ProcessEnv): TaskLambda {
  try {
    return build(env);
  } catch (error) {
    return failingTaskLambda(error);
  }
}

export const handler: TaskLambda = buildOrFail(process.env);
