/**
 * PipelineSource.s3(bucket, prefix, { discovery: 'notifications' }): the queue and its dead-letter
 * queue, the bucket's notification, the grants on the queue only, the handler's environment and
 * the alarm; what it refuses.
 */
import * as path from 'node:path';
import { App, type CfnElement, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, type AvailableNowPipelineProps, GRANTED_ACTIONS, PipelineSource } from '../../lib/infra/available-now-pipeline';
import { pipelineConfigFromEnv } from '../../lib/aws/lambda/env';
import { buildExecutor } from '../../lib/aws/pipeline';
import type { S3LandingSource } from '../../lib/aws/s3/landing-source';
import { windowedTotals } from '../../examples/windowed-totals';
import { commandsSent } from '../helpers/sdk-commands';
import { flat, rejectionOf, roleStatements } from '../helpers/template';

jest.setTimeout(60_000);

function synth(props: (stack: Stack) => AvailableNowPipelineProps) {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', props(stack));
  const template = Template.fromStack(stack);
  const id = (element: unknown) => stack.getLogicalId((element as { node: { defaultChild: CfnElement } }).node.defaultChild);
  return { stack, pipeline, template, id };
}

const notified = (extra: Partial<AvailableNowPipelineProps> = {}, options: { maxReceiveCount?: number } = {}) =>
  synth((stack) => ({
    source: PipelineSource.s3(s3.Bucket.fromBucketName(stack, 'Landing', 'landing-bucket'), 'landing/orders', { discovery: 'notifications', ...options }),
    lambdaTimeoutSeconds: 600,
    ...extra,
  }));

/** The pipeline function's environment (the bucket-notifications handler is another function). */
function pipelineEnv(s: ReturnType<typeof synth>): Record<string, string> {
  const fn = s.template.findResources('AWS::Lambda::Function')[s.id(s.pipeline.function)];
  return Object.fromEntries(Object.entries(fn.Properties.Environment.Variables as Record<string, unknown>).map(([k, v]) => [k, flat(v)]));
}

describe("an S3 source with discovery: 'notifications'", () => {
  let s: ReturnType<typeof synth>;
  let queue: string;
  let dlq: string;
  beforeAll(() => {
    s = notified();
    queue = s.id(s.pipeline.notificationQueue);
    dlq = s.id(s.pipeline.notificationDeadLetterQueue);
  });

  it('creates an encrypted, TLS-only queue whose visibility timeout outlasts the Lambda, with a dead-letter queue after 10 receives', () => {
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 660,
      MessageRetentionPeriod: 14 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 10 },
    });
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy'));
    const denyInsecure = policies.filter((p) =>
      (p.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>).some(
        (st) => st.Effect === 'Deny' && JSON.stringify(st.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
      ),
    );
    // the queue, its dead-letter queue and the failure queue
    expect(denyInsecure).toHaveLength(3);
    const fn = s.template.findResources('AWS::Lambda::Function')[s.id(s.pipeline.function)];
    expect(fn.Properties.Timeout).toBe(600);
  });

  it("notifies the queue of ObjectCreated under the prefix (with a slash: landing/orders-old is not the prefix's)", () => {
    s.template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: 'landing-bucket',
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            QueueArn: { 'Fn::GetAtt': [queue, 'Arn'] },
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'landing/orders/' }] } },
          },
        ],
      },
    });
    // S3 may send to the queue, from this bucket only.
    const policies = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')).filter((p) =>
      (p.Properties.Queues as unknown[]).map(flat).includes(queue),
    );
    const fromS3 = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>).filter((st) => st.Effect === 'Allow');
    expect(fromS3).toEqual([
      expect.objectContaining({
        Principal: { Service: 's3.amazonaws.com' },
        Action: expect.arrayContaining(['sqs:SendMessage']),
        Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
        Condition: { ArnLike: { 'aws:SourceArn': expect.anything() } },
      }),
    ]);
    expect(flat((fromS3[0].Condition as { ArnLike: Record<string, unknown> }).ArnLike['aws:SourceArn'])).toMatch(/:s3:::landing-bucket$/);
  });

  it('grants the role the four queue actions the discovery sends, on that queue only', () => {
    const roleStmts = roleStatements(s.template, s.id(s.pipeline.role));
    const onQueues = roleStmts.filter((st) => st.resources.some((r) => r.startsWith(queue) || r.startsWith(dlq)));
    expect(onQueues).toEqual([
      { actions: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'], resources: [`${queue}.Arn`] },
    ]);
    // (the other SQS grant is the failure queue's, the Lambda's on-failure destination)
    expect(roleStmts.filter((st) => st.actions.some((a) => a.startsWith('sqs:')) && !onQueues.includes(st)).map((st) => st.resources)).toEqual([
      [`${s.id(s.pipeline.failureQueue)}.Arn`],
    ]);
    // Every SQS command of lib/aws/sqs is among them (DeleteMessageBatch is authorized as DeleteMessage, ...).
    const sent = new Set(commandsSent(path.resolve(__dirname, '../../lib/aws/sqs/notification-discovery.ts')));
    expect([...sent].sort()).toEqual([...GRANTED_ACTIONS.notificationQueue].sort());
  });

  it('passes the queue URL to the handler, which reads it as the notification mode of its S3 source', () => {
    const env = pipelineEnv(s);
    expect(env.SLUICE_NOTIFICATION_QUEUE_URL).toBe(queue);
    expect(env.SLUICE_SOURCE_URI).toBe('s3://landing-bucket/landing/orders');
    const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/Test-PipelineLandingNotifications';
    const cfg = pipelineConfigFromEnv({
      SLUICE_CHECKPOINT_URI: 's3://my-bucket/checkpoints/q',
      SLUICE_STATE_TABLE: 'state',
      SLUICE_SOURCE_URI: env.SLUICE_SOURCE_URI,
      SLUICE_SINK_URI: 's3://my-bucket/out',
      SLUICE_NOTIFICATION_QUEUE_URL: url,
    });
    expect(cfg.notificationQueueUrl).toBe(url);
  });

  it('alarms when a notification reaches the dead-letter queue', () => {
    expect(s.pipeline.alarms.notificationDeadLetters).toBeDefined();
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('takes maxReceiveCount, and turns the alarm off with alarms.notificationDeadLetters: false', () => {
    const t = notified({ alarms: { notificationDeadLetters: false } }, { maxReceiveCount: 25 });
    t.template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: { maxReceiveCount: 25 } });
    expect(t.pipeline.alarms.notificationDeadLetters).toBeUndefined();
  });
});

describe("an S3 source with the default discovery ('list')", () => {
  it('creates no queue, no notification and no queue grant, and sets no queue URL', () => {
    const s = synth((stack) => ({ source: PipelineSource.s3(s3.Bucket.fromBucketName(stack, 'Landing', 'landing-bucket'), 'landing/orders') }));
    expect(s.pipeline.notificationQueue).toBeUndefined();
    expect(Object.keys(s.template.findResources('AWS::SQS::Queue'))).toEqual([s.id(s.pipeline.failureQueue)]);
    expect(s.template.findResources('Custom::S3BucketNotifications')).toEqual({});
    expect(pipelineEnv(s).SLUICE_NOTIFICATION_QUEUE_URL).toBeUndefined();
    expect(s.pipeline.alarms.notificationDeadLetters).toBeUndefined();
  });
});

describe('what notification mode refuses', () => {
  it('with parallelism (Step Functions): the receipt handles would have to pass from the plan task to the commit task', () => {
    expect(rejectionOf(() => notified({ parallelism: { statePartitions: 4 } }))).toMatch(
      /discovery: 'notifications' does not run with `parallelism`.*Use discovery: 'list', or leave out parallelism/,
    );
  });

  it("as a stream-stream join's other input", () => {
    expect(
      rejectionOf(() =>
        synth((stack) => ({
          source: PipelineSource.s3(s3.Bucket.fromBucketName(stack, 'A', 'a-bucket'), 'in/a'),
          inputs: [PipelineSource.s3(s3.Bucket.fromBucketName(stack, 'B', 'b-bucket'), 'in/b', { discovery: 'notifications' })],
        })),
      ),
    ).toMatch(/input 2 is an S3 source with discovery: 'notifications', which only the main source/);
  });

  it('an unknown discovery, maxReceiveCount without notifications, or out of SQS range', () => {
    expect(rejectionOf(() => PipelineSource.s3(undefined, 'in', { discovery: 'listing' as 'list' }))).toMatch(/discovery "listing" is not a discovery mode/);
    expect(rejectionOf(() => PipelineSource.s3(undefined, 'in', { maxReceiveCount: 5 }))).toMatch(/maxReceiveCount applies to discovery: 'notifications' only/);
    expect(rejectionOf(() => PipelineSource.s3(undefined, 'in', { discovery: 'notifications', maxReceiveCount: 1001 }))).toMatch(
      /maxReceiveCount \(1001\) must be a whole number from 2 to 1000/,
    );
  });

  it('a queue URL in the environment of a Kinesis source, or one that is not a URL', () => {
    const base = { SLUICE_CHECKPOINT_URI: 's3://my-bucket/checkpoints/q', SLUICE_STATE_TABLE: 'state', SLUICE_SINK_URI: 's3://my-bucket/out' };
    expect(() =>
      pipelineConfigFromEnv({
        ...base,
        SLUICE_SOURCE_URI: 'kinesis://orders',
        SLUICE_NOTIFICATION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q',
      }),
    ).toThrow(/SLUICE_NOTIFICATION_QUEUE_URL is set, but SLUICE_SOURCE_URI is not an S3 prefix/);
    expect(() =>
      pipelineConfigFromEnv({ ...base, SLUICE_SOURCE_URI: 's3://my-bucket/in', SLUICE_NOTIFICATION_QUEUE_URL: 'arn:aws:sqs:eu-west-1:123456789012:q' }),
    ).toThrow(/is not an SQS queue URL/);
  });
});

describe('a handler given a notification queue', () => {
  const env = {
    SLUICE_CHECKPOINT_URI: 's3://my-bucket/checkpoints/q',
    SLUICE_STATE_TABLE: 'state',
    SLUICE_SOURCE_URI: 's3://my-bucket/landing/orders',
    SLUICE_SINK_URI: 's3://my-bucket/out',
  };
  it('builds the landing source on the queue (SQS requests in its discovery stats), not a listing of the prefix', () => {
    const cfg = pipelineConfigFromEnv({ ...env, SLUICE_NOTIFICATION_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q' });
    const built = buildExecutor({ region: 'eu-west-1' }, windowedTotals(), cfg);
    try {
      expect((built.source as S3LandingSource).discoveryStats()).toEqual({
        lists: 0,
        fullListings: 0,
        incrementalListings: 0,
        sqs: { getQueueAttributes: 0, receiveMessage: 0, deleteMessageBatch: 0, changeMessageVisibilityBatch: 0 },
      });
    } finally {
      built.clients.destroy();
    }
    const listing = buildExecutor({ region: 'eu-west-1' }, windowedTotals(), pipelineConfigFromEnv(env));
    try {
      expect((listing.source as S3LandingSource).discoveryStats().sqs).toBeUndefined();
    } finally {
      listing.clients.destroy();
    }
  });
});
