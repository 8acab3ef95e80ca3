/**
 * The package's runtime entries stay free of CDK: bundles lib/api/lambda.ts, lib/api/query.ts and
 * the example Lambda entry as the construct does (esbuild, CommonJS, node22), with aws-cdk-lib and
 * constructs left external so that any import of them shows in the bundle's imports. The CDK
 * entry is the control: it must import them.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { LAMBDA_BUNDLING } from '../../lib/infra/lambda-bundling';

const ROOT = join(__dirname, '..', '..');

async function importsOf(entry: string): Promise<string[]> {
  const r = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    platform: 'node',
    target: LAMBDA_BUNDLING.target,
    format: 'cjs',
    metafile: true,
    logLevel: 'silent',
    outfile: 'out.js',
    external: [...LAMBDA_BUNDLING.externalModules, 'aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
  });
  const out = Object.values(r.metafile.outputs)[0];
  return [...out.imports.map((i) => i.path), ...Object.keys(out.inputs)];
}

const cdk = (paths: string[]) => paths.filter((p) => /(^|node_modules\/)(aws-cdk-lib|constructs)(\/|$)/.test(p));

describe('package entries', () => {
  it.each(['lib/api/lambda.ts', 'lib/api/query.ts', 'lambdas/windowed-totals.ts', 'lambdas/windowed-totals-tasks.ts', 'lib/aws/lambda/scale-out-starter.ts'])(
    '%s bundles without aws-cdk-lib or constructs',
    async (entry) => {
      const paths = await importsOf(entry);
      expect(paths.length).toBeGreaterThan(0);
      expect(cdk(paths)).toEqual([]);
    },
  );

  it('the CDK entry does import them (the check can see them)', async () => {
    expect(cdk(await importsOf('lib/api/cdk.ts'))).toEqual(expect.arrayContaining(['aws-cdk-lib', 'constructs']));
  });
});
