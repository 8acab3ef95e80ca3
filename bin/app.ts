/**
 * The CDK app (cdk.json: `npx tsx bin/app.ts`): the windowed-totals example of
 * examples/windowed-totals.ts, deployed as an availableNow pipeline on a 15-minute schedule:
 *
 *   SluiceWindowedTotalsKinesis   reads a (created) on-demand Kinesis stream
 *   SluiceWindowedTotalsS3        reads JSON-lines files dropped under s3://<bucket>/landing/...
 *   SluiceWindowedTotalsScaleOut  the S3 one with `parallelism`: each run is a Step Functions
 *                                 execution over 4 state partitions (lib/infra/scale-out.ts)
 *
 * All write the totals as JSON lines under s3://<bucket>/output/<pipeline>/. The stacks are
 * environment-agnostic unless CDK_DEFAULT_ACCOUNT/REGION are set (the CLI sets them from the
 * profile), and nothing is looked up, so `npx cdk synth` works offline.
 */
import { App, CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AvailableNowPipeline, type AvailableNowPipelineProps, PipelineSource } from '../lib/infra/available-now-pipeline';

export class WindowedTotalsStack extends Stack {
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
    if (p.scaleOut) new CfnOutput(this, 'StateMachineArn', { value: p.scaleOut.stateMachine.stateMachineArn });
  }
}

/** The example's scale-out settings: 4 state partitions, up to 8 read tasks at once. */
export const EXAMPLE_PARALLELISM = { statePartitions: 4, readConcurrency: 8, partitionConcurrency: 4 } as const;

/** The example stacks, on `app` (tests build them without synthesizing to disk). */
export function buildApp(app: App = new App()): { app: App; kinesis: WindowedTotalsStack; s3: WindowedTotalsStack; scaleOut: WindowedTotalsStack } {
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  const region = process.env.CDK_DEFAULT_REGION;
  const env = account && region ? { account, region } : undefined;

  const kinesis = new WindowedTotalsStack(
    app,
    'SluiceWindowedTotalsKinesis',
    { source: PipelineSource.newKinesisStream() },
    { env, description: 'sluice: windowed totals from a Kinesis stream, every 15 minutes' },
  );
  const s3 = new WindowedTotalsStack(
    app,
    'SluiceWindowedTotalsS3',
    { source: PipelineSource.s3() },
    { env, description: 'sluice: windowed totals from an S3 landing prefix, every 15 minutes' },
  );
  const scaleOut = new WindowedTotalsStack(
    app,
    'SluiceWindowedTotalsScaleOut',
    { source: PipelineSource.s3(), parallelism: EXAMPLE_PARALLELISM },
    { env, description: 'sluice: windowed totals from an S3 landing prefix, every 15 minutes, on a Step Functions state machine over 4 state partitions' },
  );

  Tags.of(app).add('project', 'sluice');
  return { app, kinesis, s3, scaleOut };
}

if (require.main === module) buildApp().app.synth();
