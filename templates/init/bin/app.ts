/**
 * The CDK app: one AvailableNowPipeline that runs {{ENTRY_PATH}} every 15 minutes. Nothing is
 * looked up, so `npx cdk synth` works offline; `npx cdk deploy` deploys it.
 *
 * Where its alarms go: the address in the context value `alarmEmail`
 * (`npx cdk deploy -c alarmEmail=oncall@example.com`), else in the environment variable
 * ALARM_EMAIL. The construct subscribes it to an SNS topic that every alarm notifies, when it
 * fires and when it is OK again. Without one, synth warns: the alarms would notify nobody.
 */
import * as path from 'node:path';
import { Annotations, App, CfnOutput, Stack{{CDK_IMPORTS}} } from 'aws-cdk-lib';
import { AvailableNowPipeline, PipelineSink, PipelineSource } from 'sluice/cdk';
{{QUERY_IMPORT}}
const app = new App();
const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const alarmEmail: string | undefined = app.node.tryGetContext('alarmEmail') ?? (process.env.ALARM_EMAIL || undefined);
const stack = new Stack(app, '{{STACK}}', { env: account && region ? { account, region } : undefined });
if (alarmEmail === undefined) {
  Annotations.of(stack).addWarningV2(
    'sluice:no-alarm-email',
    'The alarms notify nobody: give an address with -c alarmEmail=you@example.com or ALARM_EMAIL=you@example.com',
  );
}
{{SINK_SETUP}}
const pipeline = new AvailableNowPipeline(stack, 'Pipeline', {
  entry: path.join(__dirname, '..', 'src', '{{ENTRY_FILE}}'),
  pipelineName: '{{NAME}}',
  source: {{SOURCE_CDK}},
  sink: {{SINK_CDK}},
{{ENVIRONMENT}}{{QUERY_PROP}}  alarmEmail,
});

new CfnOutput(stack, 'FunctionName', { value: pipeline.function.functionName });
if (pipeline.alarmTopic) new CfnOutput(stack, 'AlarmTopicArn', { value: pipeline.alarmTopic.topicArn });
{{SOURCE_OUTPUT}}
app.synth();
