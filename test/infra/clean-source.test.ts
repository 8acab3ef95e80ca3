/**
 * PipelineSource.s3(bucket, prefix, { cleanSource }): the grants the query's cleanSource option
 * needs (DELETE on the landing prefix; PUT under the archive), and nothing without the prop.
 */
import { App, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type AvailableNowPipelineProps, PipelineSource } from '../../lib/infra/available-now-pipeline';
import { roleStatements } from '../helpers/template';

jest.setTimeout(60_000);

function statements(props: (stack: Stack) => AvailableNowPipelineProps) {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', props(stack));
  const template = Template.fromStack(stack);
  const roleId = stack.getLogicalId(pipeline.role.node.defaultChild as never);
  return roleStatements(template, roleId);
}

/** The resources an action is granted on, as flat strings. */
const on = (stmts: ReturnType<typeof statements>, action: string) => stmts.filter((st) => st.actions.includes(action)).flatMap((st) => st.resources);

const landing = (stack: Stack) => s3.Bucket.fromBucketName(stack, 'Landing', 'landing-bucket');

describe("an S3 source's cleanSource grants", () => {
  it('grants no DELETE on the landing prefix without cleanSource', () => {
    const stmts = statements((stack) => ({ source: PipelineSource.s3(landing(stack), 'landing/orders') }));
    expect(on(stmts, 's3:DeleteObject').filter((r) => r.includes('landing/orders'))).toEqual([]);
  });

  it("grants DELETE on the landing prefix's objects with cleanSource: 'delete', and no PUT there", () => {
    const stmts = statements((stack) => ({ source: PipelineSource.s3(landing(stack), 'landing/orders', { cleanSource: 'delete' }) }));
    expect(on(stmts, 's3:DeleteObject').filter((r) => r.includes('landing/orders'))).toEqual([expect.stringContaining('landing-bucket/landing/orders/*')]);
    expect(on(stmts, 's3:PutObject').filter((r) => r.includes('landing/orders'))).toEqual([]);
  });

  it("grants DELETE on the landing prefix and PUT under the archive with cleanSource: 'archive'", () => {
    const stmts = statements((stack) => ({
      source: PipelineSource.s3(landing(stack), 'landing/orders', {
        cleanSource: 'archive',
        sourceArchiveDir: { bucket: s3.Bucket.fromBucketName(stack, 'Archive', 'archive-bucket'), prefix: 'archive/orders' },
      }),
    }));
    expect(on(stmts, 's3:DeleteObject').filter((r) => r.includes('landing/orders'))).toEqual([expect.stringContaining('landing-bucket/landing/orders/*')]);
    expect(on(stmts, 's3:PutObject').filter((r) => r.includes('archive-bucket'))).toEqual([expect.stringContaining('archive-bucket/archive/orders/*')]);
  });

  it("refuses 'archive' without sourceArchiveDir, sourceArchiveDir without 'archive', and a mode Spark does not have", () => {
    const build = (options: Parameters<typeof PipelineSource.s3>[2]) => () =>
      statements((stack) => ({ source: PipelineSource.s3(landing(stack), 'landing/orders', options) }));
    expect(build({ cleanSource: 'archive' })).toThrow(/needs sourceArchiveDir/);
    expect(build({ sourceArchiveDir: { bucket: undefined as never, prefix: 'a' } })).toThrow(/applies to cleanSource: 'archive' only/);
    expect(build({ cleanSource: 'move' as never })).toThrow(/"move" is not Spark's/);
  });
});
