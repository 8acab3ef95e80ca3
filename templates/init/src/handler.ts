/**
 * The Lambda entry. It is the edge: the one place that reads process.env (the variables the
 * AvailableNowPipeline construct sets), once, when the container starts.
 */
import { createScheduledHandlerFromEnv } from 'sluice/lambda';
import { windowedTotals } from './query';

export const handler = createScheduledHandlerFromEnv(process.env, (env) => windowedTotals(env.outputMode));
