/**
 * What `sluice init` writes (bin/init.ts, templates/init), read as files: the CDK feature flags of
 * the aws-cdk-lib in use, local runs that persist, a README without dead links that says where
 * alarms go and, for Kinesis, what the stream costs; for each --format, a query that type-checks
 * and reads that format, and sample files in it; for each --sink, the same sink in `npm start`,
 * the generated test and the synthesized CDK app, and for csv a query of flat columns.
 * test/package/scaffold.test.ts installs and runs a scaffold, and
 * test/integration/init-csv-sink.test.ts runs the csv one and reads its CSV back; this checks the
 * text (compiles the query modules and tests, with the controls that must not compile, in one tsc
 * run, and synthesizes bin/app.ts without bundling).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { initProject, INIT_FORMATS, INIT_SINKS } from '../../bin/init';
import { parseSinkUri } from '../../lib/aws/pipeline';
import { fileDecoder } from '../../lib/engine/formats';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { outputColumnTypes } from '../../lib/engine/run/runtime';
import { flat } from '../helpers/template';

const ROOT = join(__dirname, '..', '..');
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; repository: { url: string } };

let n = 0;
type Format = (typeof INIT_FORMATS)[number];
type Sink = (typeof INIT_SINKS)[number];
const scaffold = (source: 's3' | 'kinesis', sink: Sink = 's3', format?: Format) => {
  const dir = join(work, `${source}-${sink}-${format ?? 'default'}-${n++}`);
  initProject({ dir, source, sink, sluiceSpec: '0.1.0', ...(format ? { format } : {}) });
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { dir, read };
};

let work: string;
/** The --format tests' projects: one folder name (the package and query name) for all, in a folder per format. */
const projects = {} as Record<Format | 'default', { dir: string; read: (f: string) => string }>;
/**
 * What the two tsc tests compile, in one run (each tsc run checks lib/ again: seconds of CPU): the
 * files that must compile, and the controls, which must not, each failing with its own error.
 */
const typed = { good: [] as string[], brokenQuery: '', structRows: '' };
let typecheck: Promise<{ code: number; out: string }> | undefined;
/** The tsc run over `typed`, started by the first test that reads it. */
const typechecked = () => (typecheck ??= tsc([...typed.good, typed.brokenQuery, typed.structRows]));
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'sluice-init-'));
  for (const f of ['default', ...INIT_FORMATS] as const) {
    const dir = join(work, `format-${f}`, 'pipe');
    initProject({ dir, source: 's3', sink: 'dynamodb', sluiceSpec: '0.1.0', ...(f === 'default' ? {} : { format: f }) });
    projects[f] = { dir, read: (file: string) => readFileSync(join(dir, file), 'utf8') };
  }
  // --format: each generated src/query.ts; the control: a reader option on the frame, which the query API does not have
  typed.good.push(...INIT_FORMATS.map((f) => join(projects[f].dir, 'src', 'query.ts')));
  typed.brokenQuery = join(work, 'broken-query.ts');
  writeFileSync(
    typed.brokenQuery,
    projects.csv.read('src/query.ts').replace(".load('s3://sluice-local/landing')", ".load('s3://sluice-local/landing').option('header', true)"),
  );
  // --sink csv: its query and test, the other sinks' test and the csv SQL project's test; the
  // control: the other sinks' test (rows with a window struct) against the csv query's TotalsRow
  const csv = scaffold('s3', 'csv');
  const struct = scaffold('s3', 's3');
  const sqlDir = join(work, `sql-csv-${n++}`);
  initProject({ dir: sqlDir, source: 's3', sink: 'csv', lang: 'sql', sluiceSpec: '0.1.0' });
  typed.good.push(
    join(csv.dir, 'src', 'query.ts'),
    join(csv.dir, 'test', 'query.test.ts'),
    join(struct.dir, 'test', 'query.test.ts'),
    join(sqlDir, 'test', 'query.test.ts'),
  );
  typed.structRows = join(csv.dir, 'test', 'struct-rows.test.ts');
  writeFileSync(typed.structRows, struct.read('test/query.test.ts'));
});
afterAll(async () => {
  await typecheck;
  rmSync(work, { recursive: true, force: true });
});

/** tsc over `files` as the project's `npm test` runs it (strict), `sluice` and `sluice/local` being this repository's entry points: its exit code and output. */
async function tsc(files: string[]): Promise<{ code: number; out: string }> {
  const project = join(work, `tsconfig.${n++}.json`);
  writeFileSync(
    project,
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
        paths: { sluice: [join(ROOT, 'lib', 'api', 'query.ts')], 'sluice/local': [join(ROOT, 'lib', 'api', 'local.ts')] },
      },
      files,
    }),
  );
  const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return promisify(execFile)(process.execPath, [TSC, '-p', project], { cwd: ROOT }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

/**
 * tsc's output split by file: each `file(line,col): error ...` line, with the indented lines that
 * continue it, under the file's absolute path (tsc names it from its cwd, ROOT); any other line under ''.
 */
function messagesByFile(out: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  let file = '';
  for (const line of out.split('\n')) {
    if (line === '') continue;
    if (!/^\s/.test(line)) file = /^(.+?)\(\d+,\d+\): /.exec(line)?.[1] ?? '';
    const key = file && resolve(ROOT, file);
    byFile.set(key, [...(byFile.get(key) ?? []), line]);
  }
  return byFile;
}

/** The tsc run's messages, apart: the two controls' and all others' (which must be none: the other files compile, and lib/ with them). */
async function typecheckMessages(): Promise<{ code: number; brokenQuery: string; structRows: string; others: string[] }> {
  const { code, out } = await typechecked();
  const byFile = messagesByFile(out);
  const controls = [typed.brokenQuery, typed.structRows];
  const others = [...byFile].filter(([file]) => !controls.includes(file)).flatMap(([, lines]) => lines);
  return { code, brokenQuery: (byFile.get(typed.brokenQuery) ?? []).join('\n'), structRows: (byFile.get(typed.structRows) ?? []).join('\n'), others };
}

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
      // typed.good holds each format's src/query.ts, typed.brokenQuery the control (made at the top)
      const { code, brokenQuery, others } = await typecheckMessages();
      expect(others).toEqual([]);
      expect(code).not.toBe(0);
      expect(brokenQuery).toContain("Property 'option' does not exist");
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

describe('sluice init --sink', () => {
  type SinkSays = { kind: string; format?: string; header?: boolean };
  /** What each --sink writes, from docs/sinks.md and bin/init.ts's help: the URI's kind, a file sink's format and header, and the construct's sink. */
  const WRITES: Record<Sink, { uri: SinkSays; cdk: string }> = {
    s3: { uri: { kind: 's3' }, cdk: 'PipelineSink.s3()' },
    dynamodb: { uri: { kind: 'dynamodb' }, cdk: "PipelineSink.dynamodb(totals, 'totals')" },
    parquet: { uri: { kind: 's3-files', format: 'parquet' }, cdk: 'PipelineSink.parquet()' },
    csv: { uri: { kind: 's3-files', format: 'csv', header: true }, cdk: 'PipelineSink.csv(undefined, undefined, { header: true })' },
  };
  /** A sink URI's kind, format and header, as the runtime parses it. */
  const says = (uri: string): SinkSays => {
    const { kind, format, header } = parseSinkUri(uri) as SinkSays;
    return { kind, format, header };
  };
  type CfnTemplate = { Resources: Record<string, { Type: string; Properties?: { Environment?: { Variables?: Record<string, unknown> } } }> };
  /**
   * The project's bin/app.ts run as `npx cdk synth` runs it, in the project's folder (with the lock
   * file `npm install` writes, where NodejsFunction finds the project's root), without bundling,
   * without CDK's CloudFormation validation and with an alarm address: its stack's template.
   */
  const synthApp = (dir: string): CfnTemplate => {
    const outdir = mkdtempSync(join(work, 'cdk-out-'));
    writeFileSync(join(dir, 'package-lock.json'), '{}\n');
    const saved = { CDK_OUTDIR: process.env.CDK_OUTDIR, CDK_CONTEXT_JSON: process.env.CDK_CONTEXT_JSON, CDK_VALIDATION: process.env.CDK_VALIDATION };
    const cwd = process.cwd();
    process.env.CDK_OUTDIR = outdir;
    process.env.CDK_CONTEXT_JSON = JSON.stringify({ 'aws:cdk:bundling-stacks': [], alarmEmail: 'oncall@example.com' });
    // CDK's built-in CloudFormation validation off: without cdk.json's context (the CLI passes it,
    // this does not) its findings are warnings it only prints, and its WebAssembly engine costs
    // seconds of CPU per synth.
    process.env.CDK_VALIDATION = 'false';
    try {
      process.chdir(dir);
      jest.isolateModules(() => {
        // the project's aws-cdk-lib is this repository's (and its sluice/cdk is lib/api/cdk.ts: jest.config.js)
        jest.doMock('aws-cdk-lib', () => jest.requireActual('aws-cdk-lib'), { virtual: true });
        require(join(dir, 'bin', 'app.ts'));
      });
    } finally {
      process.chdir(cwd);
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const templates = readdirSync(outdir).filter((f) => f.endsWith('.template.json'));
    expect(templates).toHaveLength(1);
    return JSON.parse(readFileSync(join(outdir, templates[0]), 'utf8')) as CfnTemplate;
  };

  // (a .sql project's synth bundles the installed package's lambdas/sql-query.js, which must lie under
  // the project: test/infra/sql-pipeline.test.ts synthesizes one; --lang sql below checks its bin/app.ts)
  it.each(INIT_SINKS)(
    '%s: npm start, the generated test and the synthesized bin/app.ts write the same kind of sink',
    (sink) => {
      const { dir, read } = scaffold('s3', sink);
      const start = JSON.parse(read('package.json')).scripts.start as string;
      const local = /--sink '?([^' ]+)'?$/.exec(start)?.[1];
      expect(local).toBeDefined();
      expect(says(local!)).toEqual(WRITES[sink].uri);
      const tested = [...read('test/query.test.ts').matchAll(/sink: '([^']+)'/g)].map((m) => m[1]);
      expect(tested).toHaveLength(2);
      for (const uri of tested) expect(says(uri)).toEqual(WRITES[sink].uri);
      expect(read('bin/app.ts')).toContain(`  sink: ${WRITES[sink].cdk},\n`);
      const functions = Object.values(synthApp(dir).Resources).filter(
        (r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Environment?.Variables?.SLUICE_SINK_URI !== undefined,
      );
      expect(functions).toHaveLength(1);
      // the deployed URI names the bucket or table by its logical id: only its kind, format and header are compared
      const deployed = flat(functions[0].Properties!.Environment!.Variables!.SLUICE_SINK_URI).replace(/^(s3|dynamodb):\/\/[^/?]+/, '$1://deployed');
      expect(says(deployed)).toEqual(WRITES[sink].uri);
    },
    120_000,
  );

  it.each([
    ['s3', 'ts'],
    ['kinesis', 'ts'],
    ['s3', 'sql'],
    ['kinesis', 'sql'],
  ] as const)(
    "csv, source %s, --lang %s: the query's columns are flat, window_start and window_end for the window; the other sinks' keep the struct",
    (source, lang) => {
      const planOf = (sink: Sink, mode: 'append' | 'update') => {
        const dir = join(work, `columns-${source}-${lang}-${sink}-${n++}`);
        initProject({ dir, source, sink, lang, sluiceSpec: '0.1.0' });
        if (lang === 'ts') return (require(join(dir, 'src', 'query.ts')) as { default: (m: string) => QueryPlan }).default(mode);
        const { compileSql } = require('../../lib/api/query') as typeof import('../../lib/api/query');
        return compileSql(readFileSync(join(dir, 'src', 'query.sql'), 'utf8').replace('SET outputMode = append;', `SET outputMode = ${mode};`));
      };
      for (const mode of ['append', 'update'] as const) {
        const csv = outputColumnTypes(planOf('csv', mode));
        // in this order: the CSV sink writes the columns in the query's order
        expect(Object.keys(csv)).toEqual(['window_start', 'window_end', 'total', 'events']);
        expect(csv).toEqual({ window_start: { type: 'TIMESTAMP' }, window_end: { type: 'TIMESTAMP' }, total: { type: 'DOUBLE' }, events: { type: 'LONG' } });
        for (const sink of ['s3', 'dynamodb', 'parquet'] as const) {
          expect(outputColumnTypes(planOf(sink, mode))).toEqual({ window: 'WINDOW', total: { type: 'DOUBLE' }, events: { type: 'LONG' } });
        }
      }
    },
  );

  it("csv: the query and the tests type-check (tsc), the rows typed with window_start and window_end; the other sinks' test does not fit them", async () => {
    // typed.good holds the csv query and test, the s3 sink's test and the csv SQL project's test,
    // typed.structRows the control (made at the top)
    const { code, structRows, others } = await typecheckMessages();
    expect(others).toEqual([]);
    expect(code).not.toBe(0);
    expect(structRows).toMatch(/struct-rows\.test\.ts.*Property 'window' does not exist on type/);
  }, 120_000);

  it('csv: the README says where the totals go and how the window is written', () => {
    const readme = scaffold('s3', 'csv').read('README.md');
    expect(readme).toContain(
      'writes the totals to S3 as CSV files with a header row, the window as two columns, `window_start` and `window_end` (CSV holds no nested column)',
    );
    expect(readme).toContain("`npm start` is `sluice run src/query.ts --input sample --sink 's3://sluice-local/output?format=csv&header=true'`");
    expect(readme).not.toMatch(/\{\{|\}\}/);
  });

  it('refuses a sink it does not write, naming the value and the ones it writes, before writing anything', () => {
    const dir = join(work, 'kafka');
    expect(() => initProject({ dir, source: 's3', sink: 'kafka' as Sink })).toThrow(
      'sluice init --sink kafka is not a sink the scaffold writes: give one of s3, dynamodb, parquet, csv (default s3)',
    );
    expect(existsSync(dir)).toBe(false);
  });
});

describe('sluice init --lang sql', () => {
  const sqlScaffold = (source: 's3' | 'kinesis', format: Format = 'json', sink: Sink = 's3') => {
    const dir = join(work, `sql-${source}-${format}-${sink}-${n++}`);
    initProject({ dir, source, sink, format, lang: 'sql', sluiceSpec: '0.1.0' });
    return { dir, read: (f: string) => readFileSync(join(dir, f), 'utf8') };
  };

  it.each([
    ['s3', 'json', 's3'],
    ['s3', 'csv', 's3'],
    ['s3', 'parquet', 's3'],
    ['kinesis', 'json', 's3'],
    ['s3', 'json', 'csv'],
    ['kinesis', 'json', 'csv'],
    ['s3', 'csv', 'csv'],
    ['s3', 'parquet', 'csv'],
  ] as const)("%s %s, --sink %s: src/query.sql compiles to the TypeScript scaffold's plan, and is the Lambda entry", (source, format, sink) => {
    const { dir, read } = sqlScaffold(source, format, sink);
    const { compileSql } = require('../../lib/api/query') as typeof import('../../lib/api/query');
    // the TypeScript scaffold of the same options, its query module loaded as `sluice run` loads it
    const ts = scaffold(source, sink, format);
    const tsPlan = (require(join(ts.dir, 'src', 'query.ts').replace(/\.ts$/, '')) as { default: (m?: string) => QueryPlan }).default('append');
    const plan = compileSql(read('src/query.sql'));
    const basename = (p: string) => p.split(/[/\\]/).pop();
    expect(plan.source).toEqual(tsPlan.source);
    expect({ mode: plan.outputMode, stateful: plan.stateful, limits: plan.limits }).toEqual({
      mode: tsPlan.outputMode,
      stateful: tsPlan.stateful,
      limits: tsPlan.limits,
    });
    // the same output columns, of the same types, in the same order (the order a CSV sink writes them in)
    expect(Object.entries(outputColumnTypes(plan))).toEqual(Object.entries(outputColumnTypes(tsPlan)));
    expect(plan.name).toBe(basename(dir));
    expect(existsSync(join(dir, 'src', 'query.ts'))).toBe(false);
    expect(existsSync(join(dir, 'src', 'handler.ts'))).toBe(false);
    expect(read('bin/app.ts')).toContain("entry: path.join(__dirname, '..', 'src', 'query.sql'),");
    expect(read('bin/app.ts')).not.toContain('SLUICE_OUTPUT_MODE');
    expect(JSON.parse(read('package.json')).scripts.start).toMatch(/^sluice run src\/query\.sql /);
    // the sink of the TypeScript scaffold, locally and deployed
    expect(JSON.parse(read('package.json')).scripts.start.replace('src/query.sql', 'src/query.ts')).toBe(JSON.parse(ts.read('package.json')).scripts.start);
    expect(read('bin/app.ts')).toContain(ts.read('bin/app.ts').match(/\n {2}sink: .*\n/)![0]);
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
