/**
 * How the pipeline's Lambda is bundled, shared by the AvailableNowPipeline construct
 * (available-now-pipeline.ts) and bin/build-lambda.ts; and the default entry. No CDK imports.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * How the Lambda is bundled. bin/build-lambda.ts bundles with the same settings to print the
 * bundle size. The Node.js 22 runtime ships AWS SDK v3, so `@aws-sdk/*` stays out of the bundle;
 * everything else (the engine, the adapters, the query) goes in.
 */
export const LAMBDA_BUNDLING = {
  minify: true,
  sourceMap: true,
  target: 'node22',
  format: 'cjs',
  // @smithy/node-http-handler is only required for emulator endpoints (lib/aws/clients.ts); the
  // Node.js runtime's SDK provides it there too.
  externalModules: ['@aws-sdk/*', '@smithy/node-http-handler'] as string[],
} as const;

/** The repository root (two levels above lib/infra). */
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The windowed-totals example's entry, the default `entry` (its compiled .js in the published package). */
export const DEFAULT_ENTRY =
  [path.join(REPO_ROOT, 'lambdas', 'windowed-totals.ts'), path.join(REPO_ROOT, 'lambdas', 'windowed-totals.js')].find((f) => fs.existsSync(f)) ??
  path.join(REPO_ROOT, 'lambdas', 'windowed-totals.ts');
