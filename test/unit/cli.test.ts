/**
 * The CLI: help per command, usage errors with the fix and exit code 2, and `sluice init` writing
 * a project. A few cases run it as a user does (node bin/sluice.js, a child process); the rest
 * call its main() in this process, with stdout and stderr captured (a child costs seconds under
 * load). Nothing here starts the emulators (test/package/scaffold.test.ts runs a scaffolded
 * project end to end).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli';

const CLI = join(__dirname, '..', '..', 'bin', 'sluice.js');

function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, AWS_ENDPOINT_URL: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** main(argv) with what it writes to stdout and stderr (the environment as it is). */
const inProcess = (...args: string[]) => runCli(args, {});

describe('sluice CLI', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists the commands and the exit codes; no command is a usage error', async () => {
    const help = await sluice('--help');
    expect(help.code).toBe(0);
    for (const c of ['init', 'example', 'run', 'explain', 'status', 'conformance']) expect(help.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(help.stdout).toMatch(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 /);
    const none = await sluice();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Commands:');
  });

  it.each([
    ['run', /--state-partitions <n>[\s\S]*--json[\s\S]*Example:\n {2}npx sluice run /],
    ['status', /--interval <duration>[\s\S]*--json[\s\S]*Example:\n {2}npx sluice status /],
    [
      'init',
      /--format <format>[\s\S]*--sink <kind>[\s\S]*csv: S3 CSV files\s+with\s+a\s+header\s+row[\s\S]*\(choices:\s+"s3",\s+"dynamodb",\s+"parquet",\s+"csv",[\s\S]*--sluice <spec>[\s\S]*Example:\n {2}npx sluice init [\s\S]*npx sluice init my-pipeline --format csv\n {2}npx sluice init my-pipeline --sink csv\n/,
    ],
    ['example', /--source <kind>[\s\S]*Example:\n {2}npx sluice example /],
    ['explain', /<query-module>[\s\S]*Example:\n {2}npx sluice explain /],
  ])('%s --help explains it with an example', async (cmd, pattern) => {
    const r = await inProcess(cmd, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(pattern);
  });

  it('conformance run and check take --state-partitions', async () => {
    for (const sub of ['run', 'check']) {
      const r = await inProcess('conformance', sub, '--help');
      expect(r.stdout).toMatch(/--state-partitions <n>/);
    }
  });

  it('an unknown flag is exit 2 with the likely fix', async () => {
    const r = await sluice('run', 'q.ts', '--sorce', 's3://b/p');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("sluice: unknown option '--sorce'");
    expect(r.stderr).toContain('(Did you mean --source?)');
  });

  it('a query module that does not exist is exit 2 with one line naming it, not a stack trace', async () => {
    const r = await inProcess('run', join(dir, 'q', 'missing.ts'), '--ephemeral');
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^sluice: query module .*missing\.ts does not exist .*e\.g\. src\/query\.ts$/)]);
  });

  it('a flag given twice is exit 2, except the flags run takes once per input', async () => {
    const r = await inProcess('run', 'q.ts', '--sink', 's3://b/one', '--sink', 's3://b/two');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sluice: --sink is given more than once, and only one value is taken: give it once');
    const s = await inProcess('status', '--checkpoint', 's3://b/c', '--source', 's3://b/one', '--source', 's3://b/two');
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('sluice: --source is given more than once');
  });

  describe('--input and --source by input name', () => {
    const reader = `require(${JSON.stringify(join(__dirname, '..', '..', 'lib', 'engine', 'query', 'reader.ts'))}).readStream`;
    let joinQuery: string;
    let oneInput: string;
    let folder: string;
    beforeAll(() => {
      joinQuery = join(dir, 'ad-clicks.js');
      writeFileSync(
        joinQuery,
        `const rs = ${reader};
const impressions = rs.format('json').schema('adId STRING, impressionTime TIMESTAMP').load('s3://my-bucket/impressions/').withWatermark('impressionTime', '10 seconds');
const clicks = rs.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load('s3://my-bucket/clicks/').withWatermark('clickTime', '20 seconds');
exports.default = impressions.join(clicks, { left: 'adId', right: 'clickAdId' }, 'inner', { name: 'clicks' }).writeStream.outputMode('append').queryName('ad-clicks').plan();`,
      );
      oneInput = join(dir, 'one-input.js');
      writeFileSync(oneInput, `exports.default = ${reader}.format('json').schema('id STRING').load('s3://my-bucket/in').writeStream.queryName('one').plan();`);
      folder = join(dir, 'feed');
      mkdirSync(folder, { recursive: true });
    });
    const line = (stderr: string) => {
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      return lines[0];
    };

    it('a bare --input on a query with two inputs is exit 2 naming the inputs and the fix', async () => {
      const r = await inProcess('run', joinQuery, '--input', folder, '--ephemeral');
      expect(r.code).toBe(2);
      expect(line(r.stderr)).toBe(
        `sluice: --input ${folder} names no input, but query ad-clicks reads 2 inputs (input1 (its first stream), clicks): name the one it feeds, e.g. --input clicks=./folder`,
      );
    });
    it('an unknown input name is exit 2 listing the names', async () => {
      const r = await inProcess('run', joinQuery, '--input', `impressions=${folder}`, '--ephemeral');
      expect(r.code).toBe(2);
      expect(line(r.stderr)).toBe(
        `sluice: --input impressions=${folder}: query ad-clicks has no input named impressions; its inputs are input1 (its first stream), clicks: write --input <input>=./folder with one of them`,
      );
    });
    it('the same input named twice is exit 2', async () => {
      const r = await inProcess('run', joinQuery, '--input', `clicks=${folder}`, '--input', `clicks=${folder}`, '--ephemeral');
      expect(r.code).toBe(2);
      expect(line(r.stderr)).toBe(
        `sluice: --input clicks=${folder}: input clicks is given more than once: give each input once (input1 (its first stream), clicks)`,
      );
    });
    it('two bare --input on a one-input query is exit 2 (the second used to replace the first)', async () => {
      const r = await inProcess('run', oneInput, '--input', folder, '--input', folder, '--ephemeral');
      expect(r.code).toBe(2);
      expect(line(r.stderr)).toContain('input input1 is given more than once: give each input once');
    });
    it('a named folder that is not a folder is exit 2 naming it', async () => {
      const r = await inProcess('run', joinQuery, '--input', `clicks=${join(dir, 'no-such-folder')}`, '--ephemeral');
      expect(r.code).toBe(2);
      expect(line(r.stderr)).toBe(
        `sluice: --input clicks=${join(dir, 'no-such-folder')}: ${join(dir, 'no-such-folder')} is not a folder: give a folder whose files are the input, e.g. --input ./sample`,
      );
    });
    it('--source takes names too: unknown names, bare values and a wrong kind for a named input are exit 2', async () => {
      const unknown = await inProcess('run', joinQuery, '--source', 'views=s3://my-bucket/views', '--ephemeral');
      expect(unknown.code).toBe(2);
      expect(line(unknown.stderr)).toContain('--source views=s3://my-bucket/views: query ad-clicks has no input named views');
      const bare = await inProcess('run', joinQuery, '--source', 's3://my-bucket/views', '--ephemeral');
      expect(bare.code).toBe(2);
      expect(line(bare.stderr)).toContain('--source s3://my-bucket/views names no input, but query ad-clicks reads 2 inputs');
      const kind = await inProcess('run', joinQuery, '--source', 'clicks=kinesis://clicks', '--ephemeral');
      expect(kind.code).toBe(2);
      expect(line(kind.stderr)).toBe(
        "sluice: input clicks of query ad-clicks reads files from S3, but --source kinesis://clicks is a Kinesis stream: give --source clicks=s3://bucket/prefix, or read .format('kinesis') in the query",
      );
    });
    it('run --help says how each input is named and located', async () => {
      const r = await inProcess('run', '--help');
      expect(r.stdout).toMatch(/first stream is the input named input1/);
      expect(r.stdout).toContain('--input <input>=<folder> feeds it');
    });
  });

  describe('when --source does not fit the query', () => {
    const write = (name: string, body: string) => {
      const file = join(dir, name);
      writeFileSync(file, body);
      return file;
    };
    const reader = `require(${JSON.stringify(join(__dirname, '..', '..', 'lib', 'engine', 'query', 'reader.ts'))}).readStream`;
    it('a kinesis URI that is not kinesis://<stream> is a Kinesis error, not "not an S3 URI"', async () => {
      const files = write('files-q.js', `exports.default = ${reader}.format('json').schema('id STRING').load().writeStream.queryName('fq').plan();`);
      for (const uri of ['kinesis://', 'kinesis:/events']) {
        const r = await inProcess('run', files, '--source', uri, '--ephemeral');
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`--source ${uri} is not a Kinesis stream URI: write kinesis://<stream name>`);
      }
    });
    it('an S3 prefix for a Kinesis query, or a stream for a files query, is refused with the right advice', async () => {
      const kin = write('kinesis-q.js', `exports.default = ${reader}.format('json').schema('id STRING').kinesis().writeStream.queryName('kq').plan();`);
      const files = write('files-q2.js', `exports.default = ${reader}.format('json').schema('id STRING').load().writeStream.queryName('fq2').plan();`);
      const a = await inProcess('run', kin, '--source', 's3://my-bucket/landing', '--ephemeral');
      expect(a.code).toBe(2);
      expect(a.stderr).toContain('query kq reads a Kinesis stream');
      expect(a.stderr).toContain('give --source kinesis://<stream>');
      const b = await inProcess('run', files, '--source', 'kinesis://events', '--ephemeral');
      expect(b.code).toBe(2);
      expect(b.stderr).toContain('query fq2 reads files from S3, but --source kinesis://events is a Kinesis stream');
    });
  });

  it('an unknown command is exit 2 with the likely fix', async () => {
    const r = await inProcess('conformace');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'conformace'[\s\S]*Did you mean conformance\?/);
  });

  it.each([['0'], ['-1'], ['2.5'], ['four']])('--state-partitions %s is exit 2 saying what to write', async (value) => {
    const r = await inProcess('conformance', 'check', '--state-partitions', value, 'case.json');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`argument '${value}' is invalid. The number of state partitions must be a positive integer: write e.g. --state-partitions 4.`);
  });

  it.each([
    [
      ['status', '--checkpoint', 's3://b/p', '--interval', 'often'],
      '--interval "often" is not a duration: write a number and a unit (ms, s, m, h, d), e.g. 15m or 1h30m',
    ],
    [['status', '--checkpoint', 's3://b/p', '--runs', '0'], "argument '0' is invalid. The number must be a positive integer: write e.g. --runs 10."],
    [['status'], 'sluice status needs the query module (as for sluice run) or --checkpoint s3://bucket/prefix'],
  ])('status %j is exit 2 saying what to write, before anything starts', async (args, message) => {
    const r = await inProcess(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('a missing value or argument is exit 2', async () => {
    const noValue = await inProcess('conformance', 'check', 'case.json', '--sink');
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain("option '--sink <kind>' argument missing");
    const noCase = await inProcess('conformance', 'check');
    expect(noCase.code).toBe(2);
    expect(noCase.stderr).toContain("missing required argument 'case'");
    const badChoice = await inProcess('init', join(dir, 'x'), '--sink', 'kafka');
    expect(badChoice.code).toBe(2);
    expect(badChoice.stderr).toContain('Allowed choices are s3, dynamodb, parquet, csv.');
    const badFormat = await inProcess('init', join(dir, 'x'), '--format', 'xml');
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toBe(
      `sluice: option '--format <format>' argument 'xml' is invalid. Allowed choices are json, csv, parquet. (run "sluice init --help" for usage)\n`,
    );
    expect(existsSync(join(dir, 'x'))).toBe(false);
    const badCrash = await inProcess('conformance', 'run', '--crash', 'mid-lunch', 'case.json');
    expect(badCrash.code).toBe(2);
    expect(badCrash.stderr).toMatch(/^sluice: .*mid-lunch/m);
  });

  describe('every wrong command line is exit 2 with one line saying what is wrong and what to write', () => {
    const example = join(__dirname, '..', '..', 'examples', 'windowed-totals.ts');
    // made now, not in beforeAll: the table below names its files when the tests are defined
    const modDir = mkdtempSync(join(tmpdir(), 'sluice-cli-modules-'));
    afterAll(() => rmSync(modDir, { recursive: true, force: true }));
    const modules: Record<string, string> = {
      'syntax.ts': 'export default {\n',
      'throws.js': 'throw new Error("no config for this environment\\nsecond line");\n',
      'dependency.js': 'require("./no-such-dependency");\n',
      'not-a-query.js': 'module.exports = 42;\n',
    };
    beforeAll(() => {
      for (const [name, body] of Object.entries(modules)) writeFileSync(join(modDir, name), body);
    });
    it.each([
      ['an unknown command', ['statu'], "unknown command 'statu' (Did you mean status?)"],
      ['an unknown subcommand of conformance', ['conformance', 'chek'], "unknown command 'conformance chek': sluice conformance has run, check"],
      ['an unknown subcommand of show', ['show', 'output'], "unknown command 'show output': sluice show has outputs, dead-letters, checkpoint, state"],
      ['an unknown flag', ['status', '--checkpoint', 's3://my-bucket/c', '--interva', '1h'], "unknown option '--interva' (Did you mean --interval?)"],
      ['a missing argument', ['run'], "missing required argument 'query-module'"],
      ['a missing value', ['run', example, '--sink'], "option '--sink <uri>' argument missing"],
      [
        'a bad source URI',
        ['run', example, '--source', 'http://my-bucket/landing', '--ephemeral'],
        '--source "http://my-bucket/landing" is not an S3 URI: write s3://<bucket>/<prefix>',
      ],
      ['a bad checkpoint URI', ['status', '--checkpoint', 's3://My_Bucket/c'], '--checkpoint "s3://My_Bucket/c" is not an S3 URI'],
      [
        'a bad sink URI',
        ['run', example, '--source', 's3://my-bucket/in', '--sink', 'dynamodb://x', '--ephemeral'],
        'is not a DynamoDB sink URI: write dynamodb://<table>',
      ],
      [
        'a bad number',
        ['run', example, '--state-partitions', 'many'],
        'The number of state partitions must be a positive integer: write e.g. --state-partitions 4.',
      ],
      ['a bad count', ['show', 'outputs', '--sink', 's3://my-bucket/out', '--limit', '-1'], 'The number must be a positive integer: write e.g. --limit 50.'],
      ['a bad duration', ['run', example, '--source', 's3://my-bucket/in', '--max-duration', 'soon', '--ephemeral'], '--max-duration "soon" is not a duration'],
      ['a module with a syntax error', ['run', join(modDir, 'syntax.ts'), '--ephemeral'], `query module ${join(modDir, 'syntax.ts')} failed to load (`],
      [
        'a module that throws',
        ['run', join(modDir, 'throws.js'), '--ephemeral'],
        `query module ${join(modDir, 'throws.js')} failed to load (Error: no config for this environment): fix the module`,
      ],
      ['a module whose import fails', ['status', join(modDir, 'dependency.js')], "failed to load (Error: Cannot find module './no-such-dependency'"],
      [
        'a module that exports no query',
        ['show', 'outputs', join(modDir, 'not-a-query.js')],
        'not-a-query.js does not export a query: export default a QueryPlan',
      ],
    ])('%s', async (_what, args, message) => {
      const r = await inProcess(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^sluice: /);
      expect(lines[0]).toContain(message);
    });
  });

  it('init writes the project for the source and sink asked for, and refuses a folder in use', async () => {
    const target = join(dir, 'My Pipeline');
    const r = await sluice('init', target, '--source', 'kinesis', '--sink', 'dynamodb', '--sluice', '0.1.0');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const f of [
      'package.json',
      'src/query.ts',
      'src/handler.ts',
      'bin/app.ts',
      'cdk.json',
      'sample/001.json',
      'test/query.test.ts',
      'README.md',
      '.gitignore',
      'tsconfig.json',
    ]) {
      expect(existsSync(join(target, f))).toBe(true);
    }
    const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('my-pipeline');
    expect(pkg.dependencies).toEqual({ sluice: '0.1.0' });
    expect(pkg.devDependencies['kinesis-local']).toBeDefined();
    expect(pkg.scripts.start).toBe('sluice run src/query.ts --source kinesis://events --input sample --sink dynamodb://my-pipeline-totals');
    expect(readFileSync(join(target, 'src/query.ts'), 'utf8')).toContain('.kinesis()');
    expect(readFileSync(join(target, 'bin/app.ts'), 'utf8')).toContain("PipelineSink.dynamodb(totals, 'totals')");
    for (const f of ['src/query.ts', 'bin/app.ts', 'test/query.test.ts', 'README.md']) expect(readFileSync(join(target, f), 'utf8')).not.toMatch(/\{\{/);

    expect(r.stdout).toContain('the query (src/query.ts) reads JSON records from a Kinesis data stream');

    const again = await sluice('init', target);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('is not empty: pass a new folder name');
    writeFileSync(join(dir, 'not-a-tarball'), '');
    const missing = await sluice('init', join(dir, 'y'), '--sluice', 'file:./no-such.tgz');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist: pack one with npm pack, or give a version');
  });

  it('init --format csv writes CSV sample files and says what the query reads; with a Kinesis source it is exit 2', async () => {
    const target = join(dir, 'csv-pipeline');
    const r = await inProcess('init', target, '--format', 'csv', '--sluice', '0.1.0');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('the query (src/query.ts) reads CSV files (a header row, then one event per line) dropped under an S3 landing prefix');
    expect(readFileSync(join(target, 'sample', '001.csv'), 'utf8').split('\n')[0]).toBe('user,event_time,amount');
    expect(existsSync(join(target, 'sample', '001.json'))).toBe(false);
    expect(readFileSync(join(target, 'src', 'query.ts'), 'utf8')).toMatch(/\.format\('csv'\)\n\s+\.schema\(SCHEMA\)\n\s+\.option\('header', true\)/);

    const kinesis = await inProcess('init', join(dir, 'kinesis-csv'), '--source', 'kinesis', '--format', 'csv');
    expect(kinesis.code).toBe(2);
    expect(kinesis.stderr).toContain(
      "sluice init --source kinesis --format csv: a Kinesis stream's records are read as JSON, so --format is for an S3 source: leave out --format (or give --format json), or use --source s3",
    );
    expect(existsSync(join(dir, 'kinesis-csv'))).toBe(false);
  });

  it('init --sink csv writes the CSV sink into npm start and bin/app.ts, and a query that selects the window as two columns', async () => {
    const target = join(dir, 'csv-sink-pipeline');
    const r = await inProcess('init', target, '--sink', 'csv', '--sluice', '0.1.0');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')).scripts.start).toBe(
      "sluice run src/query.ts --input sample --sink 's3://sluice-local/output?format=csv&header=true'",
    );
    expect(readFileSync(join(target, 'bin', 'app.ts'), 'utf8')).toContain('  sink: PipelineSink.csv(undefined, undefined, { header: true }),\n');
    expect(readFileSync(join(target, 'src', 'query.ts'), 'utf8')).toMatch(
      /\.select\('window\.start', 'window\.end', 'total', 'events'\)\n\s+\.withColumnRenamed\('start', 'window_start'\)\n\s+\.withColumnRenamed\('end', 'window_end'\)/,
    );
  });

  it('init --lang sql writes src/query.sql and says so; another language is exit 2 with the allowed ones', async () => {
    const target = join(dir, 'sql-pipeline');
    const r = await inProcess('init', target, '--lang', 'sql', '--sluice', '0.1.0');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('the query (src/query.sql) reads JSON-lines files dropped under an S3 landing prefix');
    expect(readFileSync(join(target, 'src', 'query.sql'), 'utf8')).toContain("FROM STREAM read_files('s3://sluice-local/landing', format => 'json'");
    const bad = await inProcess('init', join(dir, 'py'), '--lang', 'python');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("argument 'python' is invalid. Allowed choices are ts, sql.");
    expect(existsSync(join(dir, 'py'))).toBe(false);
  });
});
