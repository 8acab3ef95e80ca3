/**
 * The construct's `query` prop: the query the entry runs, built in the CDK app, so that `cdk synth`
 * builds it (what the query API refuses fails the synth, as it would fail the Lambda's first run)
 * and its `.queryName(...)` names the pipeline's query. Synthesized without bundling.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type AvailableNowPipelineProps } from '../../lib/infra/available-now-pipeline';
import { windowedTotals } from '../../examples/windowed-totals';
import { readStream } from '../../lib/api/query';
import { flat } from '../helpers/template';

function synth(props: AvailableNowPipelineProps): Template {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-query-prop-'));
  try {
    // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
    // reads them), and its WebAssembly engine costs seconds of CPU per file.
    const app = new App({ builtinCloudFormationValidation: false, outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
    new AvailableNowPipeline(stack, 'Pipeline', props);
    return Template.fromStack(stack);
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

const queryNameOf = (t: Template) => {
  const fns = Object.values(t.findResources('AWS::Lambda::Function'));
  return flat((fns[0].Properties.Environment.Variables as Record<string, unknown>).SLUICE_QUERY_NAME);
};

describe('AvailableNowPipeline { query }', () => {
  it("names the pipeline's query after the plan's .queryName(...)", () => {
    expect(queryNameOf(synth({ query: windowedTotals({ name: 'my-totals' }) }))).toBe('my-totals');
  });

  it("refuses a queryName that is not the plan's name, naming both", () => {
    expect(() => synth({ query: windowedTotals({ name: 'my-totals' }), queryName: 'other' })).toThrow(
      /queryName "other" is not the name of the query given \("my-totals"\)/,
    );
  });

  it('fails the synth where the query API refuses the query: a Spark SQL expression naming an unknown column', () => {
    const build = () =>
      synth({
        query: readStream.format('json').schema('user STRING, amount DOUBLE').load().filter('amout > 0').writeStream.queryName('bad').plan(),
      });
    expect(build).toThrow(/\[UNRESOLVED_COLUMN.WITH_SUGGESTION\].*amout/);
  });

  it('refuses something that is not a plan', () => {
    expect(() => synth({ query: { name: 'x' } as unknown as AvailableNowPipelineProps['query'] })).toThrow(/query is not a query plan/);
  });
});
