/**
 * What `sluice init` writes (bin/init.ts, templates/init), read as files: the CDK feature flags of
 * the aws-cdk-lib in use, local runs that persist, a README without dead links that says where
 * alarms go and, for Kinesis, what the stream costs. test/package/scaffold.test.ts installs and
 * runs a scaffold; this checks the text, in milliseconds.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initProject } from '../../bin/init';

const ROOT = join(__dirname, '..', '..');
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; repository: { url: string } };

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sluice-init-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
const scaffold = (source: 's3' | 'kinesis', sink: 's3' | 'dynamodb' | 'parquet' = 's3') => {
  const dir = join(work, `${source}-${sink}-${n++}`);
  initProject({ dir, source, sink, sluiceSpec: '0.1.0' });
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { dir, read };
};

describe('sluice init', () => {
  it('writes into cdk.json every feature flag the installed aws-cdk-lib recommends, at the version the scaffold pins', () => {
    const installed = require('aws-cdk-lib/package.json').version as string;
    expect(own.devDependencies['aws-cdk-lib']).toBe(installed);
    const recommended = require('aws-cdk-lib/recommended-feature-flags.json') as Record<string, unknown>;
    expect(Object.keys(recommended).length).toBeGreaterThan(50);
    const { read } = scaffold('s3');
    const context = JSON.parse(read('cdk.json')).context as Record<string, unknown>;
    expect(context).toMatchObject(recommended);
    expect(JSON.parse(read('package.json')).devDependencies['aws-cdk-lib']).toBe(installed);
  });

  it.each(['s3', 'kinesis'] as const)('%s: npm start keeps its data under .sluice/local (git-ignored), and sample-2/ holds a second run', (source) => {
    const { dir, read } = scaffold(source, 'parquet');
    const start = JSON.parse(read('package.json')).scripts.start as string;
    expect(start).not.toContain('--ephemeral');
    expect(start).not.toContain('--data-dir');
    expect(read('.gitignore').split('\n')).toContain('.sluice/');
    expect(existsSync(join(dir, 'sample-2', '002.json'))).toBe(true);
    // The README's second run uses the same source and sink as npm start.
    const readme = read('README.md');
    const tail = start.replace(/^sluice run src\/query\.ts/, '').replace('--input sample', '--input sample-2');
    expect(readme).toContain(`npx sluice run src/query.ts${tail}`);
    for (const f of ['README.md', 'src/query.ts', 'bin/app.ts', 'package.json']) expect(read(f)).not.toMatch(/\{\{|\}\}/);
  });

  it('an S3 query names its local landing prefix, so status, report and lateness need no --source', () => {
    const { read } = scaffold('s3', 'dynamodb');
    expect(read('src/query.ts')).toContain(".load('s3://sluice-local/landing')");
    expect(read('README.md')).toMatch(/^npx sluice status src\/query\.ts +#/m);
  });

  it('the README links to no page that answers 404: the repository of package.json, AWS pricing, its own headings', () => {
    const repo = own.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
    for (const source of ['s3', 'kinesis'] as const) {
      const readme = scaffold(source, 'dynamodb').read('README.md');
      expect(readme).not.toContain('npmjs.com');
      const links = [...readme.matchAll(/\]\(([^)]+)\)|(https?:\/\/[^\s)]+)/g)].map((m) => m[1] ?? m[2]);
      const anchors = [...readme.matchAll(/^#+ (.+)$/gm)].map(
        (m) =>
          `#${m[1]
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, '')
            .replace(/ /g, '-')}`,
      );
      for (const link of links) {
        if (link.startsWith('#')) expect(anchors).toContain(link);
        else expect([repo, 'https://aws.amazon.com/kinesis/data-streams/pricing/']).toContain(link);
      }
      expect(links).toContain(repo);
    }
  });

  it('says where alarms go, and what the Kinesis variant costs by the hour', () => {
    const s3 = scaffold('s3', 'parquet');
    const kinesis = scaffold('kinesis', 'parquet');
    for (const { read } of [s3, kinesis]) {
      expect(read('README.md')).toContain('-c alarmEmail=oncall@example.com');
      expect(read('bin/app.ts')).toMatch(/tryGetContext\('alarmEmail'\) \?\? \(process\.env\.ALARM_EMAIL/);
    }
    expect(kinesis.read('README.md')).toMatch(/on-demand Kinesis data stream[\s\S]*\$0\.04 per stream-hour \(about \$29 a month\)/);
    expect(s3.read('README.md')).not.toMatch(/stream-hour/);
  });
});
