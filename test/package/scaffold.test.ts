/**
 * SLOW (about 3 to 6 minutes; most of it npm installing aws-cdk-lib and the tools from the npm
 * cache or the registry): the package as a user gets it. Packs sluice (`npm pack`, which builds
 * dist/ first), scaffolds a project from the tarball with the packed CLI (`sluice init --sluice
 * file:<tarball>`) in a temporary folder, installs it, and runs its `npm test` (tsc over src and
 * test, then the query over the sample on the embedded stack) and `npx cdk synth` (offline).
 * Then it scaffolds the other sink (dynamodb) into a second folder that shares the first one's
 * node_modules, and runs its `npm test`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function sh(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // A clean environment for the child npm: no endpoint of this suite's stack, no jest worker vars.
    const env = { ...process.env, AWS_ENDPOINT_URL: '', NODE_OPTIONS: '', npm_config_update_notifier: 'false' };
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` });
    });
  });
}

const MIN = 60_000;

describe('the packed package, scaffolded and used (slow)', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(
    'npm pack, sluice init from the tarball, npm install, npm test, npx cdk synth',
    async () => {
      const pack = await sh(NPM, ['pack', '--pack-destination', work, '--json'], ROOT, 6 * MIN);
      expect(pack).toMatchObject({ code: 0 });
      const packed = JSON.parse(pack.out.slice(pack.out.indexOf('['), pack.out.lastIndexOf(']') + 1)) as Array<{
        filename: string;
        files: Array<{ path: string }>;
      }>;
      const files = packed[0].files.map((f) => f.path);
      // Only what a user needs: the compiled code and types, the templates, the README.
      expect(files.filter((f) => !/^(dist\/|templates\/init\/|README\.md$|package\.json$|LICENSE)/.test(f))).toEqual([]);
      expect(files.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f) && !f.startsWith('templates/'))).toEqual([]);
      expect(files).toEqual(
        expect.arrayContaining(['dist/bin/cli.js', 'dist/lib/api/query.d.ts', 'dist/lib/api/lambda.js', 'dist/lib/api/cdk.js', 'dist/lib/api/local.js']),
      );
      const tarball = join(work, packed[0].filename);

      // Unpack it and run its own CLI, as `npx sluice init` does once installed.
      expect(await sh('tar', ['-xzf', tarball, '-C', work], work, MIN)).toMatchObject({ code: 0 });
      const cli = join(work, 'package', 'dist', 'bin', 'cli.js');
      // The package's dependencies for the unpacked CLI: this repository's (it needs only commander here).
      symlinkSync(join(ROOT, 'node_modules'), join(work, 'package', 'node_modules'));
      const project = join(work, 'my-pipeline');
      const init = await sh(process.execPath, [cli, 'init', project, '--sink', 's3', '--sluice', `file:${tarball}`], work, MIN);
      expect(init).toMatchObject({ code: 0 });

      const install = await sh(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund'], project, 8 * MIN);
      expect(install).toMatchObject({ code: 0 });
      expect(install.out).not.toContain('install-scripts'); // no notice to decode
      expect(existsSync(join(project, 'node_modules', 'sluice', 'dist', 'lib', 'api', 'query.d.ts'))).toBe(true);

      const [test, synth] = await Promise.all([sh(NPM, ['test'], project, 6 * MIN), sh('npx', ['cdk', 'synth', '--quiet'], project, 6 * MIN)]);
      expect(test.out).toMatch(/# pass 2\n# fail 0/);
      expect(test.code).toBe(0);
      expect(test.out).not.toContain('NodeVersionSupportWarning');
      expect(synth.code).toBe(0);
      const template = JSON.parse(readFileSync(join(project, 'cdk.out', 'MyPipeline.template.json'), 'utf8')) as {
        Resources: Record<string, { Type: string }>;
      };
      const types = Object.values(template.Resources).map((r) => r.Type);
      expect(types).toEqual(expect.arrayContaining(['AWS::Lambda::Function', 'AWS::Events::Rule', 'AWS::DynamoDB::Table']));
      // The Lambda bundle holds no CDK.
      const asset = readdirSync(join(project, 'cdk.out')).find((d) => d.startsWith('asset.') && existsSync(join(project, 'cdk.out', d, 'index.js')))!;
      const bundle = readFileSync(join(project, 'cdk.out', asset, 'index.js'), 'utf8');
      expect(bundle).toContain('availableNow');
      expect(bundle).not.toMatch(/aws-cdk-lib|constructs\/lib/);

      // The DynamoDB sink variant, reusing the installed node_modules.
      const dynamo = join(work, 'my-dynamo-pipeline');
      expect(await sh(process.execPath, [cli, 'init', dynamo, '--sink', 'dynamodb', '--sluice', `file:${tarball}`], work, MIN)).toMatchObject({ code: 0 });
      symlinkSync(join(project, 'node_modules'), join(dynamo, 'node_modules'));
      const dynamoTest = await sh(NPM, ['test'], dynamo, 6 * MIN);
      expect(dynamoTest.out).toMatch(/# pass 2\n# fail 0/);
      expect(dynamoTest.code).toBe(0);
    },
    20 * MIN,
  );
});
