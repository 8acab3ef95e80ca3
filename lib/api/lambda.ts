/**
 * `sluice/lambda`: the runtime side, what a Lambda entry imports. It pulls in the engine and the
 * AWS adapters (the AWS SDK v3 comes from the Node.js runtime), never aws-cdk-lib or constructs
 * (test/unit/package-entries.test.ts bundles it and checks).
 *
 *   // src/handler.ts: the edge, the one place that reads process.env
 *   import { createScheduledHandlerFromEnv } from 'sluice/lambda';
 *   import { windowedTotals } from './query';
 *   export const handler = createScheduledHandlerFromEnv(process.env, (env) => windowedTotals(env.outputMode));
 */
import type { QueryPlan } from '../engine/plan/types';
import {
  createScheduledHandler,
  failingHandler,
  lambdaEnvironmentFrom,
  type LambdaEnvironment,
  type ScheduledHandler,
  type ScheduledHandlerOptions,
} from '../aws/lambda/handler';

export {
  createScheduledHandler,
  failingHandler,
  lambdaEnvironmentFrom,
  pipelineConfigFromEnv,
  ENV,
  DEFAULT_METRICS_NAMESPACE,
  type LambdaContextLike,
  type LambdaEnvironment,
  type RunSummary,
  type ScheduledEventLike,
  type ScheduledHandler,
  type ScheduledHandlerOptions,
  type ScheduledRunSummary,
} from '../aws/lambda/handler';
export {
  createPartitionedTaskLambda,
  createTaskLambda,
  createTaskLambdaFromEnv,
  failingTaskLambda,
  statePartitionsFromEnv,
  type PartitionedTaskLambdaOptions,
  type TaskLambda,
  type TaskLambdaOptions,
} from '../aws/lambda/scale-out-handler';
export type { CommitResult, PlanResult, TaskEvent, TaskHandler, TaskResult } from '../scale/contract';
export type { StreamingProgress, StateOperatorProgress, SourceProgress, SinkProgress, SourceBacklog, SourceReadMetrics } from '../engine/progress';
export {
  buildExecutor,
  runPipeline,
  parseS3Uri,
  parseSinkUri,
  type PipelineConfig,
  type S3Location,
  type SinkLocation,
  type SourceLocation,
} from '../aws/pipeline';
export { createClients, connectionFromEnv, type AwsClients } from '../aws/clients';
export type { AwsConnection } from '../aws/config';
export type { RunReport, BatchReport, StopReason } from '../engine/run/types';
// Types the exports above name in their signatures, exported so the API reference (npm run docs) documents them.
export type { RunConsumption, RunOptions } from '../engine/run/types';
export type { AwsEndpoints } from '../aws/config';
export type { PipelineExtras, SinkFormat } from '../aws/pipeline';
export type { PartitionGranularity } from '../aws/s3/logged-sink';
export type { Env } from '../aws/lambda/env';

/**
 * The handler of a Lambda entry, from its environment (the variables the AvailableNowPipeline
 * construct sets, see ENV): reads it once, when the container starts, builds the plan with
 * `query` (given the output mode and the rest of the environment) and the SDK clients, and
 * returns the handler. A bad environment does not fail the container's init: every invocation
 * then fails with one JSON line that names the variable and the fix.
 */
export function createScheduledHandlerFromEnv(
  env: Record<string, string | undefined>,
  query: QueryPlan | ((env: LambdaEnvironment) => QueryPlan),
  options: Omit<ScheduledHandlerOptions, 'metricsNamespace' | 'pipelineName' | 'logDataValues'> = {},
): ScheduledHandler {
  try {
    const e = lambdaEnvironmentFrom(env);
    const plan = typeof query === 'function' ? query(e) : query;
    return createScheduledHandler(plan, e.config, e.connection, {
      ...options,
      metricsNamespace: e.metricsNamespace,
      pipelineName: e.pipelineName,
      logDataValues: e.logDataValues,
    });
  } catch (error) {
    return failingHandler(error);
  }
}
