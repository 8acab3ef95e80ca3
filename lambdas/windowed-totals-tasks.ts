/**
 * Lambda entry of the windowed-totals example's scale-out tasks (AvailableNowPipeline with
 * `parallelism`): the plan, read, partition and commit tasks of its state machine. As
 * lambdas/windowed-totals.ts, this file is the edge: it reads process.env once, when the container
 * starts (lib/aws/lambda/env.ts, and SLUICE_STATE_PARTITIONS), and builds the task handler and its
 * SDK clients then (lib/aws/lambda/scale-out-handler.ts).
 */
import { windowedTotals } from '../examples/windowed-totals';
import { createTaskLambdaFromEnv, type TaskLambda } from '../lib/aws/lambda/scale-out-handler';

export const handler: TaskLambda = createTaskLambdaFromEnv(process.env, (env) =>
  windowedTotals({ outputMode: env.outputMode, source: env.config.source.kind === 'kinesis' ? 'kinesis' : 'files' }),
);
