/**
 * A stream-stream join's other streams on AWS (issue 18): the construct's `inputs` grant each one
 * as the source is granted and name them to the handler (SLUICE_INPUT_URIS), which the Lambda's
 * environment reads back into the pipeline config's inputs.
 */
import { App, Stack, aws_kinesis as kinesis } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, PipelineSource } from '../../lib/infra/available-now-pipeline';
import { pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import { InvalidOptionError } from '../../lib/engine/errors';

function synth(extra: (stack: Stack) => ConstructorParameters<typeof AvailableNowPipeline>[2]) {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', extra(stack));
  return { stack, pipeline, template: Template.fromStack(stack) };
}

describe('when a pipeline joins other streams (inputs)', () => {
  it('grants each input what its adapter sends and names it in SLUICE_INPUT_URIS, in join order', () => {
    const { template } = synth((stack) => ({
      inputs: [
        PipelineSource.kinesis(kinesis.Stream.fromStreamArn(stack, 'Clicks', 'arn:aws:kinesis:eu-west-1:111111111111:stream/clicks')),
        PipelineSource.s3(),
      ],
    }));
    const fn = template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SLUICE_INPUT_URIS: Match.anyValue() } } } });
    expect(Object.keys(fn)).toHaveLength(1);
    const uris = JSON.stringify(Object.values(fn)[0].Properties.Environment.Variables.SLUICE_INPUT_URIS);
    // the Kinesis input by name, then the S3 input on its own default prefix (not the source's)
    expect(uris).toMatch(/kinesis:\/\/clicks,s3:\/\//);
    expect(uris).toContain('/landing/Test-Pipeline-input3');
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('"Sid":"InputStream2"');
    expect(policies).toContain('arn:aws:kinesis:eu-west-1:111111111111:stream/clicks');
    expect(policies).toContain('landing/Test-Pipeline-input3/*');
    // the first source keeps its own prefix and grants
    expect(policies).toContain('landing/Test-Pipeline/*');
  });

  it('sets no SLUICE_INPUT_URIS without inputs', () => {
    const { template } = synth(() => ({}));
    expect(
      Object.keys(template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SLUICE_INPUT_URIS: Match.anyValue() } } } })),
    ).toHaveLength(0);
  });

  it('refuses an input prefix that overlaps the source', () => {
    expect(() =>
      synth(() => ({ source: PipelineSource.s3(undefined, 'landing/orders'), inputs: [PipelineSource.s3(undefined, 'landing/orders/clicks')] })),
    ).toThrow(InvalidOptionError);
  });
});

describe('when the Lambda reads its inputs from the environment', () => {
  const env = {
    SLUICE_CHECKPOINT_URI: 's3://ckpt-bucket/checkpoints/ads',
    SLUICE_STATE_TABLE: 'sluice-state',
    SLUICE_SOURCE_URI: 's3://land/impressions',
    SLUICE_SINK_URI: 's3://out/ads',
  };
  it('turns SLUICE_INPUT_URIS into the config inputs, in order', () => {
    expect(pipelineConfigFromEnv({ ...env, SLUICE_INPUT_URIS: 'kinesis://clicks, s3://land/views' }).inputs).toEqual([
      { kind: 'kinesis', streamName: 'clicks' },
      { kind: 's3', bucket: 'land', prefix: 'views' },
    ]);
    expect(pipelineConfigFromEnv(env).inputs).toBeUndefined();
  });
  it('names a bad input URI, the rule and the fix', () => {
    expect(() => pipelineConfigFromEnv({ ...env, SLUICE_INPUT_URIS: 'ftp://x' })).toThrow(
      /SLUICE_INPUT_URIS="ftp:\/\/x" has an unknown scheme: write s3:\/\/<bucket>\/<prefix>/,
    );
  });
});
