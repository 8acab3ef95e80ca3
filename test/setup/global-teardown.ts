/**
 * Runs once after all test files, whether they passed or not: stops the stack the global setup
 * started, so no emulator outlives the run and nothing keeps Jest from exiting.
 */
import type { LocalStack } from '../../lib/local/stack';
import { TEST_STACK_ENV } from '../helpers/stack';
import { GLOBAL_STACK } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const globals = globalThis as Record<symbol, unknown>;
  const stack = globals[GLOBAL_STACK] as LocalStack | undefined;
  delete globals[GLOBAL_STACK];
  delete process.env[TEST_STACK_ENV];
  await stack?.stop();
}
