/**
 * The CDK app: one AvailableNowPipeline that runs src/handler.ts every 15 minutes. Nothing is
 * looked up, so `npx cdk synth` works offline; `npx cdk deploy` deploys it.
 */
import * as path from 'node:path';
import { App, CfnOutput, Stack{{CDK_IMPORTS}} } from 'aws-cdk-lib';
import { AvailableNowPipeline, PipelineSink, PipelineSource } from 'sluice/cdk';

const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const stack = new Stack(app, '{{STACK}}', { env: account && region ? { account, region } : undefined });
{{SINK_SETUP}}
const pipeline = new AvailableNowPipeline(stack, 'Pipeline', {
  entry: path.join(__dirname, '..', 'src', 'handler.ts'),
  pipelineName: '{{NAME}}',
  source: {{SOURCE_CDK}},
  sink: {{SINK_CDK}},
  environment: { SLUICE_OUTPUT_MODE: 'append' },
});

new CfnOutput(stack, 'FunctionName', { value: pipeline.function.functionName });
{{SOURCE_OUTPUT}}
app.synth();
