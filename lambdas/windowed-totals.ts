/**
 * Lambda entry for the windowed-totals example (examples/windowed-totals.ts), run availableNow on
 * each EventBridge tick. This file is the edge: it reads process.env once, when the container
 * starts, and passes plain values down. Everything it builds here (the config, the plan, the
 * handler) lives as long as the container; see lib/aws/lambda/handler.ts for what an invocation does.
 *
 * Environment (set by the AvailableNowPipeline construct): SLUICE_CHECKPOINT_URI,
 * SLUICE_STATE_TABLE, SLUICE_SOURCE_URI, SLUICE_SINK_URI, optional SLUICE_DEAD_LETTER_URI,
 * SLUICE_KEEP_LATE_ROWS, SLUICE_LEASE_SECONDS, SLUICE_METRICS_NAMESPACE, SLUICE_PIPELINE_NAME, and
 * SLUICE_OUTPUT_MODE (append | update | complete, default append). AWS_ENDPOINT_URL switches every
 * client to LocalStack (or another emulator).
 */
import { windowedTotals } from '../examples/windowed-totals';
import { connectionFromEnv } from '../lib/aws/clients';
import { createScheduledHandler, ENV, failingHandler, pipelineConfigFromEnv, type ScheduledHandler } from '../lib/aws/lambda/handler';
import { InvalidOptionError } from '../lib/engine/errors';
import type { OutputMode } from '../lib/engine/query';

const OUTPUT_MODES: readonly OutputMode[] = ['append', 'update', 'complete'];

function outputModeFrom(value: string | undefined): OutputMode {
  const mode = (value ?? '').trim().toLowerCase() || 'append';
  if (!(OUTPUT_MODES as readonly string[]).includes(mode)) {
    throw new InvalidOptionError(`${ENV.outputMode}=${JSON.stringify(value)} is not an output mode: set it to append, update or complete (or leave it unset for append)`);
  }
  return mode as OutputMode;
}

function build(env: NodeJS.ProcessEnv): ScheduledHandler {
  const cfg = pipelineConfigFromEnv(env);
  const plan = windowedTotals({ outputMode: outputModeFrom(env[ENV.outputMode]), source: cfg.source.kind === 'kinesis' ? 'kinesis' : 'files' });
  const conn = connectionFromEnv(env) ?? { region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1' };
  return createScheduledHandler(plan, cfg, conn, {
    metricsNamespace: env[ENV.metricsNamespace],
    pipelineName: env[ENV.pipelineName],
  });
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
