/**
 * A pipeline whose query is a .sql file (docs/sql.md): the construct synthesizes with the query's
 * text bundled into lambdas/sql-query.ts (esbuild's text loader), names the query after its
 * SET queryName, and refuses a .sql query with an error at synth, with its line and column. And
 * the SQL compiler, which goes into the bundle, imports nothing of the AWS adapters.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type AvailableNowPipelineProps } from '../../lib/infra/available-now-pipeline';
import { SQL_ENTRY } from '../../lib/infra/sql-entry';
import { bundledFiles } from '../helpers/sdk-commands';
import { flat, rejectionOf } from '../helpers/template';

jest.setTimeout(120_000);

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'windowed-totals.sql');

function synth(props: AvailableNowPipelineProps, bundle = true): { stack: Stack; pipeline: AvailableNowPipeline; template: Template; outdir: string } {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sql-cdk-'));
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, outdir, ...(bundle ? {} : { context: { 'aws:cdk:bundling-stacks': [] } }) });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', props);
  return { stack, pipeline, template: Template.fromStack(stack), outdir };
}

/** The bundled index.js of a Lambda function's code asset (its folder under the app's outdir). */
function bundleOf(outdir: string, code: unknown): string {
  const assetPath = (code as { assetPath: string }).assetPath;
  return fs.readFileSync(path.join(outdir, assetPath, 'index.js'), 'utf8');
}

describe('AvailableNowPipeline with a .sql entry', () => {
  let s: ReturnType<typeof synth>;
  beforeAll(() => {
    s = synth({ entry: EXAMPLE });
  });
  afterAll(() => fs.rmSync(s.outdir, { recursive: true, force: true }));

  it('synthesizes one scheduled function that runs the SQL query, named by its SET queryName', () => {
    const fns = Object.values(s.template.findResources('AWS::Lambda::Function'));
    expect(fns).toHaveLength(1);
    const vars = fns[0].Properties.Environment.Variables as Record<string, unknown>;
    expect(flat(vars.SLUICE_QUERY_NAME)).toBe('windowed-totals-append');
    expect(fns[0].Properties.Handler).toBe('index.handler');
  });

  it("bundles the .sql file's text into lambdas/sql-query.ts, and the bundle stays small", () => {
    const bundle = bundleOf(s.outdir, s.pipeline.function.node.findChild('Code'));
    // the query's text, as the file has it (esbuild's text loader), and the SQL compiler
    expect(bundle).toContain('SET outputMode = append;');
    expect(bundle).toContain('WATERMARK event_time DELAY OF INTERVAL 10 MINUTES');
    expect(bundle).toContain('a query module holds one streaming SELECT');
    expect(s.pipeline.bundleSizeBytes).toBeGreaterThan(1024);
    expect(s.pipeline.bundleSizeBytes).toBeLessThan(1024 * 1024);
  });

  it('with parallelism, the task function runs the same .sql query (lambdas/sql-query-tasks.ts), from a file anywhere', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sql-tasks-'));
    const file = path.join(dir, 'partitioned.sql');
    // the state partitions of the query and of the construct agree, as for a TypeScript query
    fs.writeFileSync(
      file,
      fs.readFileSync(EXAMPLE, 'utf8').replace('SET queryName = windowed-totals-append;', 'SET queryName = partitioned;\nSET statePartitions = 4;'),
    );
    const withTasks = synth({ entry: file, parallelism: { statePartitions: 4 } });
    try {
      const tasks = bundleOf(withTasks.outdir, withTasks.pipeline.scaleOut!.taskFunction.node.findChild('Code'));
      expect(tasks).toContain('SET statePartitions = 4;');
      expect(bundleOf(withTasks.outdir, withTasks.pipeline.function.node.findChild('Code'))).toContain('SET queryName = partitioned;');
    } finally {
      fs.rmSync(withTasks.outdir, { recursive: true, force: true });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a .sql entry with an error', () => {
  it('fails the synth with the file, the error class, the line and the column', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-sql-bad-'));
    const bad = path.join(dir, 'bad.sql');
    fs.writeFileSync(bad, "SET queryName = bad;\nSELECT user\nFROM STREAM read_files(schema => 'user STRING')\nWHERE usr > 0\n");
    try {
      const message = rejectionOf(() => synth({ entry: bad }, false));
      expect(message).toContain(`entry ${JSON.stringify(bad)}: [UNRESOLVED_COLUMN.WITH_SUGGESTION]`);
      expect(message).toContain('(line 4, column 7)');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the SQL compiler in the bundle', () => {
  it('imports only the engine: no AWS adapter, no CDK', () => {
    const files = bundledFiles(path.join(ROOT, 'lib', 'engine', 'sql', 'index.ts')).map((f) => path.relative(ROOT, f));
    expect(files).toContain(path.join('lib', 'engine', 'sql', 'statement.ts'));
    expect(files.filter((f) => !f.startsWith(path.join('lib', 'engine')))).toEqual([]);
  });

  it('lambdas/sql-query.ts is the entry the construct uses for a .sql query', () => {
    expect(path.relative(ROOT, SQL_ENTRY)).toBe(path.join('lambdas', 'sql-query.ts'));
  });
});
