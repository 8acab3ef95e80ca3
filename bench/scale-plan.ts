/**
 * The scale section's query for the worker threads of its partitioned runs (bench/scale.ts): a
 * worker builds the plan again from a module (lib/local/workers.ts's recipe), so this module
 * exports it. The batch size comes from the environment the parent sets before it starts the
 * pool (worker threads inherit it), so the workers' plan is the parent's.
 */
import { benchPlan } from './query';

export const SCALE_MAX_FILES_ENV = 'SLUICE_BENCH_SCALE_MAX_FILES';
export const SCALE_PLAN_NAME = 'bench-scale-user-totals';

export function scalePlan(maxFilesPerTrigger: number) {
  return benchPlan(maxFilesPerTrigger, SCALE_PLAN_NAME);
}

export default function plan() {
  const n = Number(process.env[SCALE_MAX_FILES_ENV]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${SCALE_MAX_FILES_ENV} must be set to the scale section's maxFilesPerTrigger (got ${JSON.stringify(process.env[SCALE_MAX_FILES_ENV])})`);
  return scalePlan(n);
}
