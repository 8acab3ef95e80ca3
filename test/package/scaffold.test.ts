/**
 * SLOW (about 3 to 6 minutes; most of it npm installing aws-cdk-lib and the tools from the npm
 * cache or the registry): the package as a user gets it. Packs sluice (`npm pack`, which builds
 * dist/ first), scaffolds a project from the tarball with the packed CLI (`sluice init --sluice
 * file:<tarball>`) in a temporary folder, installs it, and runs its `npm test` (tsc over src and
 * test, then the query over the sample on the embedded stack) and `npx cdk synth` (offline).
 * The synth is given an alarm address (`-c alarmEmail=...`): every alarm in the template must
 * notify the topic it subscribes, and the CDK must find every feature flag configured. Then the
 * README's local walk-through: `npm start`, `sluice status`, a second run, `status`, `report`,
 * `lateness` on the data `npm start` left under .sluice/local.
 * Then it scaffolds the other sinks (dynamodb; csv, its query in TypeScript and in SQL), the CSV and
 * Parquet landing formats (`--format csv`, `--format parquet`) and the query in SQL (`--lang sql`),
 * into folders that share the first one's node_modules and runs their `npm test`, while the first
 * project is synthesized again without an address (a warning, no alarm actions). Last, the csv
 * sink's `npm start`, and the CSV objects it left under .sluice/local read back with DuckDB.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClients } from '../../lib/aws/clients';
import { startLocalStack } from '../../lib/local/stack';
import { csvRowsByDuckDb, downloadCsvObjects } from '../helpers/csv-objects';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function sh(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    // A clean environment for the child npm: no endpoint of this suite's stack, no jest worker vars.
    const env = { ...process.env, AWS_ENDPOINT_URL: '', NODE_OPTIONS: '', npm_config_update_notifier: 'false', ALARM_EMAIL: '' };
    execFile(cmd, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` });
    });
  });
}

const MIN = 60_000;

interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

const resourcesOf = (t: CfnTemplate, type: string) => Object.entries(t.Resources).filter(([, r]) => r.Type === type);
/** The logical ids an alarm's action list names ({Ref: id}). */
const refs = (list: unknown): string[] => ((list as Array<{ Ref: string }> | undefined) ?? []).map((a) => a.Ref);

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
      expect(files.filter((f) => !/^(dist\/|templates\/init(-sql|-processor)?\/|README\.md$|package\.json$|LICENSE)/.test(f))).toEqual([]);
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

      const [test, synth] = await Promise.all([
        sh(NPM, ['test'], project, 6 * MIN),
        sh('npx', ['cdk', 'synth', '--quiet', '-c', 'alarmEmail=oncall@example.com'], project, 6 * MIN),
      ]);
      expect(test.out).toMatch(/# pass 2\n# fail 0/);
      expect(test.code).toBe(0);
      expect(test.out).not.toContain('NodeVersionSupportWarning');
      expect(synth.code).toBe(0);
      // cdk.json carries the recommended feature flags of the aws-cdk-lib installed.
      expect(synth.out).not.toMatch(/feature flags are not configured/);
      expect(synth.out).not.toMatch(/alarms notify nobody/);
      const template = JSON.parse(readFileSync(join(project, 'cdk.out', 'MyPipeline.template.json'), 'utf8')) as CfnTemplate;
      const types = Object.values(template.Resources).map((r) => r.Type);
      expect(types).toEqual(expect.arrayContaining(['AWS::Lambda::Function', 'AWS::Events::Rule', 'AWS::DynamoDB::Table']));
      // Alarms that reach someone: one topic, the address subscribed, every alarm notifying it on ALARM and OK.
      const topics = resourcesOf(template, 'AWS::SNS::Topic').map(([id]) => id);
      expect(topics).toHaveLength(1);
      expect(resourcesOf(template, 'AWS::SNS::Subscription').map(([, r]) => r.Properties)).toEqual([
        expect.objectContaining({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: topics[0] } }),
      ]);
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties!);
      expect(alarms.length).toBeGreaterThanOrEqual(9);
      for (const alarm of alarms)
        expect({ alarm: alarm.AlarmDescription, actions: refs(alarm.AlarmActions), ok: refs(alarm.OKActions) }).toEqual({
          alarm: alarm.AlarmDescription,
          actions: topics,
          ok: topics,
        });
      // The Lambda bundle holds no CDK.
      const asset = readdirSync(join(project, 'cdk.out')).find((d) => d.startsWith('asset.') && existsSync(join(project, 'cdk.out', d, 'index.js')))!;
      const bundle = readFileSync(join(project, 'cdk.out', asset, 'index.js'), 'utf8');
      expect(bundle).toContain('availableNow');
      expect(bundle).not.toMatch(/aws-cdk-lib|constructs\/lib/);

      // The README's walk-through: runs that persist under .sluice/local, then status, a second run, report, lateness.
      const sluice = (...args: string[]) => sh('npx', ['sluice', ...args], project, 3 * MIN);
      const start = await sh(NPM, ['start'], project, 3 * MIN);
      expect(start).toMatchObject({ code: 0 });
      expect(start.out).toMatch(/rows +6 in, 2 out/);
      expect(existsSync(join(project, '.sluice', 'local'))).toBe(true);
      const status1 = await sluice('status', 'src/query.ts');
      expect(status1).toMatchObject({ code: 0 });
      expect(status1.out).toMatch(/run [0-9a-f-]+: batches 0-1 .* 6 rows in, 2 out/);
      const run2 = await sluice('run', 'src/query.ts', '--input', 'sample-2', '--sink', 's3://sluice-local/output');
      expect(run2).toMatchObject({ code: 0 });
      expect(run2.out).toMatch(/rows +3 in, 1 out/);
      expect(run2.out).toMatch(/late +1 dropped by the watermark/);
      expect(run2.out).toContain('{"window":{"start":"2026-10-01T12:20:00.000Z","end":"2026-10-01T12:30:00.000Z"},"total":3,"events":1}');
      const status2 = await sluice('status', 'src/query.ts');
      expect(status2).toMatchObject({ code: 0 });
      expect(status2.out).toMatch(/batches 0-1 [\s\S]*run [0-9a-f-]+: batches 2-3 .* 3 rows in, 1 out/);
      const report = await sluice('report', 'src/query.ts');
      expect(report).toMatchObject({ code: 0 });
      expect(readFileSync(join(project, 'report.html'), 'utf8')).toContain('<html');
      const lateness = await sluice('lateness', 'src/query.ts');
      expect(lateness).toMatchObject({ code: 0 });
      expect(lateness.out).toMatch(/recommended: \.withWatermark\('event_time'/);

      // The DynamoDB sink variant, reusing the installed node_modules.
      const dynamo = join(work, 'my-dynamo-pipeline');
      expect(await sh(process.execPath, [cli, 'init', dynamo, '--sink', 'dynamodb', '--sluice', `file:${tarball}`], work, MIN)).toMatchObject({ code: 0 });
      symlinkSync(join(project, 'node_modules'), join(dynamo, 'node_modules'));
      // The other landing formats: the query reads CSV (with a header row) or Parquet, over sample files in it.
      const formats = ['csv', 'parquet'] as const;
      for (const f of formats) {
        const dir = join(work, `my-${f}-pipeline`);
        expect(await sh(process.execPath, [cli, 'init', dir, '--format', f, '--sluice', `file:${tarball}`], work, MIN)).toMatchObject({ code: 0 });
        expect(readdirSync(join(dir, 'sample'))).toEqual([`001.${f}`]);
        symlinkSync(join(project, 'node_modules'), join(dir, 'node_modules'));
      }
      // The query in SQL (--lang sql): src/query.sql, compiled and run by its test. (Its synth bundles the
      // package's lambdas/sql-query.js, which must lie under the project: a node_modules linked from the
      // first project does not; test/infra/sql-pipeline.test.ts synthesizes a .sql entry with bundling.)
      const sqlProject = join(work, 'my-sql-pipeline');
      expect(await sh(process.execPath, [cli, 'init', sqlProject, '--lang', 'sql', '--sluice', `file:${tarball}`], work, MIN)).toMatchObject({ code: 0 });
      expect(existsSync(join(sqlProject, 'src', 'query.sql'))).toBe(true);
      symlinkSync(join(project, 'node_modules'), join(sqlProject, 'node_modules'));
      // The CSV sink (--sink csv), its query in TypeScript and in SQL: the window written as window_start and window_end.
      const csvSinks = { ts: join(work, 'my-csv-sink-pipeline'), sql: join(work, 'my-sql-csv-sink-pipeline') };
      for (const [lang, dir] of Object.entries(csvSinks)) {
        expect(await sh(process.execPath, [cli, 'init', dir, '--sink', 'csv', '--lang', lang, '--sluice', `file:${tarball}`], work, MIN)).toMatchObject({
          code: 0,
        });
        symlinkSync(join(project, 'node_modules'), join(dir, 'node_modules'));
      }
      // Beside them, the first project synthesized again without an address (into another folder): a warning, no actions.
      const [dynamoTest, bareSynth, sqlTest, csvSinkTest, sqlCsvSinkTest, ...formatTests] = await Promise.all([
        sh(NPM, ['test'], dynamo, 6 * MIN),
        sh('npx', ['cdk', 'synth', '--quiet', '--output', 'cdk.out.bare'], project, 6 * MIN),
        sh(NPM, ['test'], sqlProject, 6 * MIN),
        sh(NPM, ['test'], csvSinks.ts, 6 * MIN),
        sh(NPM, ['test'], csvSinks.sql, 6 * MIN),
        ...formats.map((f) => sh(NPM, ['test'], join(work, `my-${f}-pipeline`), 6 * MIN)),
      ]);
      for (const t of [dynamoTest, sqlTest, csvSinkTest, sqlCsvSinkTest, ...formatTests]) {
        expect(t.out).toMatch(/# pass 2\n# fail 0/);
        expect(t.code).toBe(0);
      }
      expect(bareSynth).toMatchObject({ code: 0 });
      expect(bareSynth.out).toMatch(/The alarms notify nobody: give an address with -c alarmEmail=/);
      const bare = JSON.parse(readFileSync(join(project, 'cdk.out.bare', 'MyPipeline.template.json'), 'utf8')) as CfnTemplate;
      expect(resourcesOf(bare, 'AWS::SNS::Topic')).toEqual([]);
      const bareAlarms = resourcesOf(bare, 'AWS::CloudWatch::Alarm').map(([, r]) => r.Properties!);
      expect(bareAlarms.length).toBeGreaterThanOrEqual(9);
      for (const alarm of bareAlarms) expect(alarm.AlarmActions).toBeUndefined();

      // The csv sink's npm start, then what it wrote, read through S3 from the data it left under .sluice/local.
      const csvStart = await sh(NPM, ['start'], csvSinks.ts, 3 * MIN);
      expect(csvStart).toMatchObject({ code: 0 });
      expect(csvStart.out).toMatch(/rows +6 in, 2 out/);
      const stack = await startLocalStack({ services: ['s3'], dataDir: join(csvSinks.ts, '.sluice', 'local') });
      const clients = createClients(stack.connection);
      try {
        const objects = await downloadCsvObjects(clients.s3, 'sluice-local', 'output', work);
        expect(objects.length).toBeGreaterThan(0);
        for (const { text } of objects) expect(text.split('\n')[0]).toBe('window_start,window_end,total,events');
        const rows = await csvRowsByDuckDb(
          objects.map((o) => o.file),
          { window_start: 'TIMESTAMP', window_end: 'TIMESTAMP', total: 'DOUBLE', events: 'BIGINT' },
          'window_start',
        );
        // sample/: 12:01 (10), 12:04 (5), 12:08 (4) | 12:12 (7) | 12:25, 12:31 still open at the watermark 12:21
        expect(rows).toEqual([
          { window_start: '2026-10-01T12:00:00.000Z', window_end: '2026-10-01T12:10:00.000Z', total: 19, events: 3 },
          { window_start: '2026-10-01T12:10:00.000Z', window_end: '2026-10-01T12:20:00.000Z', total: 7, events: 1 },
        ]);
      } finally {
        clients.destroy();
        await stack.stop();
      }
    },
    20 * MIN,
  );
});
