/**
 * SLOW (about a minute: tsc over the samples and the package's types, aws-cdk-lib's among them).
 * Every ```ts sample of README.md and docs/*.md, read from its page: each is type-checked against
 * the package's entry points, and run (its query plans built, which runs the query's analysis; its
 * CDK code synthesized, without bundling). A sample that is not a whole module says so on the line
 * above its fence, `<!-- sample: fragment (<kind>) -->`, and runs inside that kind's prelude:
 *
 *   query           statements or an expression of the query API: `sluice`'s exports in scope
 *   stack           statements in a CDK Stack's constructor (`this`), with a Kinesis stream
 *                   `stream`, DynamoDB tables `table` and `stateTable`, a bucket `checkpointBucket`
 *                   and an SNS topic `topic` of that stack in scope
 *   pipeline props  properties of AvailableNowPipelineProps, with a bucket `bucket` and a query
 *                   function `windowedTotals` in scope
 *
 * A whole module imports from 'sluice', 'sluice/cdk', ... as a user does; here those imports point
 * at lib/api/. The samples are written under .sluice/doc-samples/ (git-ignored) so that they
 * resolve this repository's node_modules.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, '.sluice', 'doc-samples');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const KINDS = ['query', 'stack', 'pipeline props'] as const;
type Kind = (typeof KINDS)[number] | 'module';

interface Sample {
  readonly page: string;
  readonly line: number;
  readonly kind: Kind;
  readonly code: string;
  readonly file: string;
}

/** The ```ts blocks of a page, with the fragment marker of the line above each. */
function samplesOf(page: string): Sample[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const out: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```ts') continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    const marker = /^<!-- sample: fragment \(([a-z ]+)\) -->$/.exec(lines[i - 1]?.trim() ?? '');
    if (lines[i - 1]?.includes('sample:') && !marker) throw new Error(`${page}:${i}: a sample marker that is not <!-- sample: fragment (<kind>) -->`);
    if (marker && !(KINDS as readonly string[]).includes(marker[1]))
      throw new Error(`${page}:${i}: unknown sample kind "${marker[1]}": one of ${KINDS.join(', ')}`);
    const name = `${page.replace(/[^A-Za-z0-9]+/g, '-')}-${i + 1}.ts`;
    out.push({ page, line: i + 1, kind: (marker?.[1] as Kind) ?? 'module', code: lines.slice(i + 1, end).join('\n'), file: join(OUT, name) });
    i = end;
  }
  return out;
}

/** 'sluice', 'sluice/cdk', ... as the package exports them, resolved to lib/api/ from OUT. */
const api = (entry: string) => relative(OUT, join(ROOT, 'lib', 'api', entry)).replace(/\\/g, '/');
const withLocalImports = (code: string) =>
  code.replace(/from 'sluice(?:\/(query|cdk|lambda|local))?'/g, (_m, entry: string | undefined) => `from '${api(entry ?? 'query')}'`);

const QUERY_NAMES = Object.keys(require('../../lib/api/query') as object).filter((n) => n !== '__esModule');

/** The sample as a module: a whole one as printed, a fragment inside its kind's prelude. */
function moduleOf(s: Sample): string {
  const code = withLocalImports(s.code);
  switch (s.kind) {
    case 'module':
      return `${code}\n`;
    case 'query':
      return `import { ${QUERY_NAMES.join(', ')}, type RowOf } from '${api('query')}';\n${code}\n`;
    case 'stack':
      return `import { App, Duration, Stack, aws_cloudwatch_actions as cwActions, aws_dynamodb as dynamodb, aws_kinesis as kinesis, aws_s3 as s3, aws_sns as sns } from 'aws-cdk-lib';
import { AvailableNowPipeline, PipelineSink, PipelineSource } from '${api('cdk')}';
const { SnsAction } = cwActions;
class SampleStack extends Stack {
  constructor(app: App) {
    super(app, 'Sample', { env: { account: '123456789012', region: 'eu-west-1' } });
    const stream = new kinesis.Stream(this, 'Stream');
    const table = new dynamodb.Table(this, 'Table', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING }, sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING } });
    const stateTable = new dynamodb.Table(this, 'StateTable', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING }, sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING } });
    const checkpointBucket = new s3.Bucket(this, 'Checkpoints');
    const topic = new sns.Topic(this, 'Topic');
    void [stream, table, stateTable, checkpointBucket, topic, Duration, PipelineSink, PipelineSource, SnsAction];
${code}
  }
}
export const synth = () => new SampleStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }));
`;
    case 'pipeline props':
      return `import { App, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { AvailableNowPipeline, PipelineSink, PipelineSource, outputColumnTypes, type AvailableNowPipelineProps } from '${api('cdk')}';
import { readStream, window, sum, count } from '${api('query')}';
const windowedTotals = () => readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE').load()
  .withWatermark('event_time', '10 minutes').groupBy(window('event_time', '10 minutes')).agg(sum('amount').as('total'), count().as('events'))
  .writeStream.outputMode('append').queryName('windowed-totals').plan();
export const synth = () => {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Sample', { env: { account: '123456789012', region: 'eu-west-1' } });
  const bucket = new s3.Bucket(stack, 'Bucket');
  const props: AvailableNowPipelineProps = {
${code}
  };
  return new AvailableNowPipeline(stack, 'Pipeline', props);
};
void [PipelineSink, PipelineSource];
`;
  }
}

const SAMPLES = PAGES.flatMap(samplesOf);

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  for (const s of SAMPLES) writeFileSync(s.file, moduleOf(s));
});

describe('the ts samples of README.md and docs/', () => {
  it('are found on the pages, each a whole module or a marked fragment', () => {
    expect(SAMPLES.length).toBeGreaterThanOrEqual(10);
    expect(SAMPLES.filter((s) => s.page === 'README.md').length).toBeGreaterThanOrEqual(1);
  });

  it('type-check against the package (tsc, strict)', () => {
    const program = ts.createProgram(
      SAMPLES.map((s) => s.file),
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        moduleResolution: ts.ModuleResolutionKind.Node10,
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
        noUnusedLocals: false,
      },
    );
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName.startsWith(OUT))
      .map((d) => {
        const sample = SAMPLES.find((s) => s.file === d.file!.fileName)!;
        return `${sample.page}:${sample.line} (${sample.kind}): ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  }, 120_000);

  it.each(SAMPLES.map((s) => [`${s.page}:${s.line} (${s.kind})`, s] as const))('%s runs: its plans build, its CDK code synthesizes', (_name, s) => {
    const mod = require(s.file) as { default?: unknown; sample?: unknown; synth?: () => unknown };
    if (mod.synth) expect(mod.synth()).toBeDefined();
    const plans = Object.values(mod).filter((v): v is { name: string; stages: unknown[] } => typeof v === 'object' && v !== null && 'stages' in v);
    if (s.kind === 'module') expect(plans.length + (mod.synth ? 1 : 0)).toBeGreaterThan(0);
  });
});
