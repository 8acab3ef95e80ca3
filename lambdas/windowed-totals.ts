/**
 * Lambda entry for the windowed-totals example (examples/windowed-totals.ts), run availableNow on
 * each EventBridge tick. This file is the edge: it reads process.env once, when the container
 * starts (lib/aws/lambda/env.ts lists the variables), and passes plain values down. Everything it
 * builds here (the config, the plan, the handler and its SDK clients) lives as long as the
 * container; see lib/aws/lambda/handler.ts for what an invocation does.
 */
import { windowedTotals } from '../examples/windowed-totals';
import { createScheduledHandler, failingHandler, type ScheduledHandler } from '../lib/aws/lambda/handler';
import { lambdaEnvironmentFrom } from '../lib/aws/lambda/env';

function build(env: NodeJS.ProcessEnv): ScheduledHandler {
  const { config, connection, outputMode, metricsNamespace, pipelineName, logDataValues } = lambdaEnvironmentFrom(env);
  const plan = windowedTotals({ outputMode, source: config.source.kind === 'kinesis' ? 'kinesis' : 'files' });
  return createScheduledHandler(plan, config, connection, { metricsNamespace, pipelineName, logDataValues });
}

function buildOrFail(env: NodeJS.ProcessEnv): ScheduledHandler {
  try {
    return build(env);
  } catch (error) {
    // A bad environment fails every invocation with a JSON line that says what to fix, rather
    // than an init error whose message is harder to find.
    return failingHandler(error);
  }
}

export const handler: ScheduledHandler = buildOrFail(process.env);
