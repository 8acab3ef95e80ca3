/**
 * Runs once per Jest run, in Jest's main process, before any test file: starts the embedded
 * local AWS stack (DynamoDB, S3, Kinesis and SQS), unless AWS_ENDPOINT_URL names an endpoint (LocalStack),
 * and publishes the connection to the test files as JSON in SLUICE_TEST_STACK (test files run in
 * other contexts, often other processes, which inherit the environment).
 *
 * SLUICE_STACK_LOG=1 prints the emulators' start times.
 */
import { connectionFromEnv } from '../../lib/aws/clients';
import { ALL_LOCAL_SERVICES, startLocalStack } from '../../lib/local/stack';
import { TEST_STACK_ENV } from '../helpers/stack';

/** Where the stack waits for global-teardown (Jest shares only globals between the two hooks). */
export const GLOBAL_STACK = Symbol.for('sluice.test.localStack');

export default async function globalSetup(): Promise<void> {
  // One seed for the in-memory twins' shuffled orders in every worker (lib/engine/testing/twins.ts);
  // test/setup/twin-seed-reporter.js prints it when a test fails, to reproduce the run.
  if (!process.env.SLUICE_TWIN_SEED) process.env.SLUICE_TWIN_SEED = String(Math.floor(Math.random() * 2 ** 32));
  // The AWS SDK warns once per process that its releases after early January 2027 need Node 22:
  // true of the SDK, not news in every worker's log of a run on Node 20 (the pinned versions run
  // there; the Lambda runs Node 22). `npm start` and the CLI still print it.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const fromEnv = connectionFromEnv(process.env);
  if (fromEnv) {
    process.env[TEST_STACK_ENV] = JSON.stringify(fromEnv);
    return;
  }
  const log = process.env.SLUICE_STACK_LOG ? (msg: string) => process.stderr.write(`[local stack] ${msg}\n`) : undefined;
  // SQS (in-process, a few ms) for notification mode's tests; the CLI starts it only when asked.
  // It delivers as a standard queue may (shuffled, a share twice), seeded as the twins are.
  const stack = await startLocalStack({
    log,
    services: [...ALL_LOCAL_SERVICES, 'sqs'],
    sqsDelivery: { seed: Number(process.env.SLUICE_TWIN_SEED) >>> 0 },
  });
  (globalThis as Record<symbol, unknown>)[GLOBAL_STACK] = stack;
  process.env[TEST_STACK_ENV] = JSON.stringify(stack.connection);
}
