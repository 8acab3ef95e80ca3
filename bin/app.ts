/**
 * The CDK app (cdk.json: `npx tsx bin/app.ts`): the windowed-totals example of
 * examples/windowed-totals.ts, deployed twice as an availableNow pipeline on a 15-minute schedule:
 *
 *   SluiceWindowedTotalsKinesis   reads a (created) on-demand Kinesis stream
 *   SluiceWindowedTotalsS3        reads JSON-lines files dropped under s3://<bucket>/landing/...
 *
 * Both write the totals as JSON lines under s3://<bucket>/output/<pipeline>/. The stacks are
 * environment-agnostic unless CDK_DEFAULT_ACCOUNT/REGION are set (the CLI sets them from the
 * profile), and nothing is looked up, so `npx cdk synth` works offline.
 */
import { App, CfnOutput, Stack, StackProps, Tags } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { AvailableNowPipeline, AvailableNowPipelineProps, PipelineSource } from '../lib/infra/available-now-pipeline';

class WindowedTotalsStack extends Stack {
  readonly pipeline: AvailableNowPipeline;

  constructor(scope: Construct, id: string, pipeline: AvailableNowPipelineProps, props?: StackProps) {
    super(scope, id, props);
    this.pipeline = new AvailableNowPipeline(this, 'WindowedTotals', {
      environment: { SLUICE_OUTPUT_MODE: 'append' },
      ...pipeline,
    });
    // What the README's steps need: where to drop input, what to invoke, where to read results.
    const p = this.pipeline;
    new CfnOutput(this, 'FunctionName', { value: p.function.functionName });
    new CfnOutput(this, 'CheckpointUri', { value: `s3://${p.checkpointBucket.bucketName}/${p.checkpointPrefix}` });
    if (p.sourceStream) new CfnOutput(this, 'SourceStreamName', { value: p.sourceStream.streamName });
    if (p.landingBucket) new CfnOutput(this, 'LandingUri', { value: `s3://${p.landingBucket.bucketName}/${p.landingPrefix}` });
    if (p.sinkBucket) new CfnOutput(this, 'SinkUri', { value: `s3://${p.sinkBucket.bucketName}/${p.sinkPrefix}` });
    // Where the dead-letter alarm's records are: malformed/ (and late/ with keepLateRows) under it.
    new CfnOutput(this, 'DeadLetterUri', { value: `s3://${p.deadLetterBucket.bucketName}/${p.deadLetterPrefix}` });
    new CfnOutput(this, 'StateTableName', { value: p.stateTable.tableName });
    new CfnOutput(this, 'FailureQueueUrl', { value: p.failureQueue.queueUrl });
  }
}

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const env = account && region ? { account, region } : undefined;

new WindowedTotalsStack(app, 'SluiceWindowedTotalsKinesis', { source: PipelineSource.newKinesisStream() }, { env, description: 'sluice: windowed totals from a Kinesis stream, every 15 minutes' });
new WindowedTotalsStack(app, 'SluiceWindowedTotalsS3', { source: PipelineSource.s3() }, { env, description: 'sluice: windowed totals from an S3 landing prefix, every 15 minutes' });

Tags.of(app).add('project', 'sluice');
app.synth();
