/**
 * What `sluice init` writes (bin/init.ts, templates/init), read as files: the CDK feature flags of
 * the aws-cdk-lib in use, local runs that persist, a README without dead links that says where
 * alarms go and, for Kinesis, what the stream costs; for each --format, a query that type-checks
 * and reads that format, and sample files in it. test/package/scaffold.test.ts installs and runs
 * a scaffold; this checks the text (and compiles the query modules once with tsc).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { initProject, INIT_FORMATS } from '../../bin/init';
import { fileDecoder } from '../../lib/engine/formats';
import type { QueryPlan } from '../../lib/engine/plan/types';

const ROOT = join(__dirname, '..', '..');
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; repository: { url: string } };

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sluice-init-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
type Format = (typeof INIT_FORMATS)[number];
const scaffold = (source: 's3' | 'kinesis', sink: 's3' | 'dynamodb' | 'parquet' = 's3', format?: Format) => {
  const dir = join(work, `${source}-${sink}-${format ?? 'default'}-${n++}`);
  initProject({ dir, source, sink, sluiceSpec: '0.1.0', ...(format ? { format } : {}) });
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

  describe('--format: the S3 query reads the format asked for, and the sample files are in it', () => {
    const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    /** The rows and dead letters of a scaffold's sample files, read as its query's source reads them. */
    const sampleRead = async (dir: string, plan: QueryPlan) => {
      const decoder = fileDecoder(plan.source.schema, plan.source.format, plan.source.options);
      const rows: unknown[] = [];
      const dead: unknown[] = [];
      for (const folder of ['sample', 'sample-2']) {
        for (const name of readdirSync(join(dir, folder)).sort()) {
          const buf = readFileSync(join(dir, folder, name));
          for await (const r of decoder.decode(name, buf, buf.length)) {
            rows.push(...r.rows);
            dead.push(...r.deadLetters);
          }
        }
      }
      return { rows, dead };
    };
    /** The generated src/query.ts, its `from 'sluice'` resolved to this repository's query API. */
    const planOf = (dir: string): QueryPlan => {
      let plan: QueryPlan | undefined;
      jest.isolateModules(() => {
        jest.doMock('sluice', () => jest.requireActual('../../lib/api/query'), { virtual: true });
        plan = (require(join(dir, 'src', 'query.ts')) as { windowedTotals: (mode: string) => QueryPlan }).windowedTotals('append');
      });
      return plan!;
    };

    // One folder name (the package and query name) for all, in a folder per format.
    const projects = {} as Record<Format | 'default', { dir: string; read: (f: string) => string }>;
    beforeAll(() => {
      for (const f of ['default', ...INIT_FORMATS] as const) {
        const dir = join(work, `format-${f}`, 'pipe');
        initProject({ dir, source: 's3', sink: 'dynamodb', sluiceSpec: '0.1.0', ...(f === 'default' ? {} : { format: f }) });
        projects[f] = { dir, read: (file: string) => readFileSync(join(dir, file), 'utf8') };
      }
    });

    it('without --format the project is the JSON one', () => {
      for (const f of ['src/query.ts', 'README.md', 'test/query.test.ts', 'sample/001.json', 'sample-2/002.json']) {
        expect(projects.default.read(f)).toBe(projects.json.read(f));
      }
    });

    it.each([
      ['json', 'JSON-lines files', '.json'],
      ['csv', 'CSV files (a header row, then one event per line)', '.csv'],
      ['parquet', 'Parquet files', '.parquet'],
    ] as const)('%s: the plan reads it, the sample files are the JSON sample rows in it, the README says so', async (format, says, ext) => {
      const { dir, read } = projects[format];
      const plan = planOf(dir);
      expect(plan.source).toMatchObject({ kind: 'files', format, path: 's3://sluice-local/landing' });
      expect(plan.source.schema.ddl).toBe(planOf(projects.json.dir).source.schema.ddl);
      expect(plan.source.options.header).toBe(format === 'csv' ? true : undefined);
      expect(read('src/query.ts')).toContain(`.format('${format}')`);

      expect(readdirSync(join(dir, 'sample'))).toEqual([`001${ext}`]);
      expect(readdirSync(join(dir, 'sample-2'))).toEqual([`002${ext}`]);
      const own = await sampleRead(dir, plan);
      const json = await sampleRead(projects.json.dir, planOf(projects.json.dir));
      expect(own.dead).toEqual([]);
      expect(json.rows).toHaveLength(9);
      expect(own.rows).toEqual(json.rows);

      // The README, the query's comment and the test's name the format and the sample file.
      const readme = read('README.md');
      expect(readme).toContain(`reads ${says} dropped under an S3 landing prefix`);
      expect(readme).toContain(`Then drop ${says} under the landing URI`);
      expect(read('src/query.ts')).toContain(`What it reads: ${says} dropped under an S3 landing prefix`);
      expect(read('test/query.test.ts')).toContain(`sample/001${ext}:`);
      for (const f of ['README.md', 'src/query.ts', 'test/query.test.ts']) expect(read(f)).not.toMatch(/\{\{|\}\}/);
    });

    it('each generated src/query.ts type-checks against the query API (tsc), and a wrong one does not', async () => {
      const sluiceTypes = join(ROOT, 'lib', 'api', 'query.ts');
      const broken = join(work, 'broken-query.ts');
      // the control: a reader option on the frame, which the query API does not have
      writeFileSync(
        broken,
        projects.csv.read('src/query.ts').replace(".load('s3://sluice-local/landing')", ".load('s3://sluice-local/landing').option('header', true)"),
      );
      const tsconfig = (files: string[]) => {
        const path = join(work, `tsconfig.${n++}.json`);
        writeFileSync(
          path,
          JSON.stringify({
            compilerOptions: {
              target: 'ES2022',
              module: 'commonjs',
              moduleResolution: 'node',
              strict: true,
              esModuleInterop: true,
              skipLibCheck: true,
              noEmit: true,
              types: ['node'],
              typeRoots: [join(ROOT, 'node_modules', '@types')],
              baseUrl: ROOT,
              paths: { sluice: [sluiceTypes] },
            },
            files,
          }),
        );
        return path;
      };
      const tsc = (project: string) =>
        promisify(execFile)(process.execPath, [TSC, '-p', project], { cwd: ROOT }).then(
          (r) => ({ code: 0, out: r.stdout + r.stderr }),
          (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
        );
      const [good, bad] = await Promise.all([tsc(tsconfig(INIT_FORMATS.map((f) => join(projects[f].dir, 'src', 'query.ts')))), tsc(tsconfig([broken]))]);
      expect(good).toEqual({ code: 0, out: '' });
      expect(bad.code).not.toBe(0);
      expect(bad.out).toContain("Property 'option' does not exist");
    }, 120_000);

    it('refuses csv or parquet with a Kinesis source (its records are JSON), and a format it does not write, before writing anything', () => {
      for (const format of ['csv', 'parquet'] as const) {
        const dir = join(work, `kinesis-${format}`);
        expect(() => initProject({ dir, source: 'kinesis', sink: 's3', format })).toThrow(
          `sluice init --source kinesis --format ${format}: a Kinesis stream's records are read as JSON`,
        );
        expect(existsSync(dir)).toBe(false);
      }
      expect(existsSync(join(scaffold('kinesis', 's3', 'json').dir, 'sample', '001.json'))).toBe(true);
      const dir = join(work, 'xml');
      expect(() => initProject({ dir, source: 's3', sink: 's3', format: 'xml' as Format })).toThrow(
        'sluice init --format xml is not a format the scaffold writes: give one of json, csv, parquet',
      );
      expect(existsSync(dir)).toBe(false);
    });
  });
});

describe('sluice init --lang sql', () => {
  const sqlScaffold = (source: 's3' | 'kinesis', format: Format = 'json') => {
    const dir = join(work, `sql-${source}-${format}-${n++}`);
    initProject({ dir, source, sink: 's3', format, lang: 'sql', sluiceSpec: '0.1.0' });
    return { dir, read: (f: string) => readFileSync(join(dir, f), 'utf8') };
  };

  it.each([
    ['s3', 'json'],
    ['s3', 'csv'],
    ['s3', 'parquet'],
    ['kinesis', 'json'],
  ] as const)("%s %s: src/query.sql compiles to the TypeScript scaffold's plan, and is the Lambda entry", (source, format) => {
    const { dir, read } = sqlScaffold(source, format);
    const { compileSql } = require('../../lib/api/query') as typeof import('../../lib/api/query');
    // the TypeScript scaffold of the same options, its query module loaded as `sluice run` loads it
    const ts = scaffold(source, 's3', format);
    const tsPlan = (require(join(ts.dir, 'src', 'query.ts').replace(/\.ts$/, '')) as { default: (m?: string) => QueryPlan }).default('append');
    const plan = compileSql(read('src/query.sql'));
    const basename = (p: string) => p.split(/[/\\]/).pop();
    expect(plan.source).toEqual(tsPlan.source);
    expect({ mode: plan.outputMode, stateful: plan.stateful, limits: plan.limits }).toEqual({
      mode: tsPlan.outputMode,
      stateful: tsPlan.stateful,
      limits: tsPlan.limits,
    });
    expect(plan.name).toBe(basename(dir));
    expect(existsSync(join(dir, 'src', 'query.ts'))).toBe(false);
    expect(existsSync(join(dir, 'src', 'handler.ts'))).toBe(false);
    expect(read('bin/app.ts')).toContain("entry: path.join(__dirname, '..', 'src', 'query.sql'),");
    expect(read('bin/app.ts')).not.toContain('SLUICE_OUTPUT_MODE');
    expect(JSON.parse(read('package.json')).scripts.start).toMatch(/^sluice run src\/query\.sql /);
    for (const f of ['README.md', 'src/query.sql', 'bin/app.ts', 'test/query.test.ts']) expect(read(f)).not.toMatch(/\{\{|\}\}/);
    expect(read('README.md')).toContain('`src/query.sql`');
    expect(read('test/query.test.ts')).toContain("import { compileSql, type OutputRow } from 'sluice';");
  });

  it('refuses another language, naming the two', () => {
    expect(() => initProject({ dir: join(work, 'bad-lang'), source: 's3', sink: 's3', lang: 'python' as 'sql' })).toThrow(/--lang python .*ts .*sql/);
  });
});

describe('sluice init --processor', () => {
  it('writes src/sessions.ts, a transformWithState query whose sessions close 30 minutes after their last event', async () => {
    const dir = join(work, `processor-${n++}`);
    initProject({ dir, source: 's3', sink: 's3', sluiceSpec: '0.1.0', processor: true });
    const text = readFileSync(join(dir, 'src', 'sessions.ts'), 'utf8');
    expect(text).not.toMatch(/\{\{|\}\}/);
    const plan = (require(join(dir, 'src', 'sessions.ts').replace(/\.ts$/, '')) as { default: () => QueryPlan }).default();
    expect(plan.stateful?.kind).toBe('transformWithState');
    const { MicroBatchExecutor } = require('../../lib/engine/schedule/single') as typeof import('../../lib/engine/schedule/single');
    const { InMemoryFileSource } = require('../../lib/engine/testing/memory-source') as typeof import('../../lib/engine/testing/memory-source');
    const { InMemoryCheckpoint } = require('../../lib/engine/testing/memory-checkpoint') as typeof import('../../lib/engine/testing/memory-checkpoint');
    const { InMemoryStateStore } = require('../../lib/engine/testing/memory-state') as typeof import('../../lib/engine/testing/memory-state');
    const { InMemorySink } = require('../../lib/engine/testing/memory-sink') as typeof import('../../lib/engine/testing/memory-sink');
    const source = new InMemoryFileSource(plan.source.schema);
    const ports = { plan, source, checkpoint: new InMemoryCheckpoint(), state: new InMemoryStateStore(), sink: new InMemorySink() };
    const runAt = (hhmm: string) => {
      const now = Date.parse(`2026-10-01T${hhmm}:00.000Z`);
      return new MicroBatchExecutor({ ...ports, processingClock: { now: () => now } }).run();
    };
    source.add(
      'a.json',
      [
        { user: 'u1', event_time: '2026-10-01 12:00:00', amount: 2 },
        { user: 'u2', event_time: '2026-10-01 12:05:00', amount: 5 },
        { user: 'u1', event_time: '2026-10-01 12:01:00', amount: 3 },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    // by hand: the run at 12:10 opens both sessions (timers at 12:40); at 12:30 nothing is due (no
    // batch); at 12:45 both timers are: one no-data batch writes both sessions
    expect((await runAt('12:10')).batches.map((b) => b.batchId)).toEqual([0]);
    expect((await runAt('12:30')).batches).toEqual([]);
    expect((await runAt('12:45')).batches.map((b) => b.batchId)).toEqual([1]);
    expect(ports.sink.batches.get(1)).toEqual(
      expect.arrayContaining([
        { user: 'u1', start: '2026-10-01T12:00:00.000Z', events: 2, total: 5 },
        { user: 'u2', start: '2026-10-01T12:05:00.000Z', events: 1, total: 5 },
      ]),
    );
    expect(ports.sink.batches.get(1)).toHaveLength(2);
  });

  it('is not written without --processor, and refused with --lang sql', () => {
    const dir = join(work, `no-processor-${n++}`);
    initProject({ dir, source: 's3', sink: 's3', sluiceSpec: '0.1.0' });
    expect(existsSync(join(dir, 'src', 'sessions.ts'))).toBe(false);
    expect(() => initProject({ dir: join(work, 'sql-processor'), source: 's3', sink: 's3', lang: 'sql', processor: true })).toThrow(/--processor --lang sql/);
  });
});
