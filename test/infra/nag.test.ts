/**
 * Every stack variant the infra tests build passes cdk-nag's AwsSolutions pack (cdk-nag 3: a CDK
 * policy-validation plugin; synth throws on an unacknowledged finding), with each deliberate
 * finding acknowledged, with its reason, in lib/infra (nag.ts and its callers). And the scale-out
 * state machine's definition, as synthesized, is valid Amazon States Language (asl-validator).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, Duration, Stack, Validations, aws_dynamodb as dynamodb, aws_iam as iam, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import {
  AvailableNowPipeline,
  type AvailableNowPipelineProps,
  PipelineSink,
  PipelineSource,
  PipelineStaticTable,
} from '../../lib/infra/available-now-pipeline';
import { definitionFromTemplate } from '../../lib/local/state-machine';
import { isPrefixScopedObjects } from '../../lib/infra/nag';
import { buildApp } from '../../bin/app';

/** asl-validator 4 ships no types: its default export, as used here. */
const aslValidator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText(separator?: string): string };

jest.setTimeout(120_000);

const ENV = { account: '123456789012', region: 'eu-west-1' };

/** The variants the infra tests build, each in a stack of its own. */
const VARIANTS: Record<string, (stack: Stack) => AvailableNowPipelineProps> = {
  Single: () => ({}),
  Parallelism: () => ({ parallelism: { statePartitions: 4, readConcurrency: 8 } }),
  Kinesis: () => ({ source: PipelineSource.newKinesisStream() }),
  Notifications: (stack) => ({
    source: PipelineSource.s3(s3.Bucket.fromBucketName(stack, 'Landing', 'landing-bucket'), 'landing/orders', { discovery: 'notifications' }),
  }),
  NotificationsOwnBucket: () => ({ source: PipelineSource.s3(undefined, undefined, { discovery: 'notifications' }) }),
  AlarmEmail: () => ({ alarmEmail: 'oncall@example.com' }),
  DynamoDbSink: (stack) => ({
    sink: PipelineSink.dynamodb(
      new dynamodb.Table(stack, 'Totals', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      }),
    ),
  }),
  StaticTables: (stack) => ({
    staticTables: [
      PipelineStaticTable.s3(s3.Bucket.fromBucketName(stack, 'Ref', 'reference-data'), 'reference/products.csv'),
      PipelineStaticTable.dynamodb(dynamodb.Table.fromTableName(stack, 'Customers', 'customers')),
    ],
  }),
  YourOwnResources: (stack) => ({
    checkpointPrefix: 'ckpt/orders',
    stateTable: dynamodb.Table.fromTableName(stack, 'State', 'sluice-state'),
    checkpointBucket: s3.Bucket.fromBucketName(stack, 'Ckpt', 'my-checkpoints'),
    scheduleInterval: Duration.minutes(10),
  }),
};

interface Violation {
  readonly ruleName: string;
  readonly severity: string;
  readonly violatingConstructs: Array<{ constructPath: string }>;
}

/** Synthesizes `app` with the AwsSolutions pack; returns the violations ("rule at path" lines), none when it passes. */
function nagViolations(app: App, outdir: string): string[] {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  try {
    app.synth();
    return [];
  } catch (e) {
    const report = path.join(outdir, 'validation-report.json');
    if (!fs.existsSync(report)) throw e;
    const parsed = JSON.parse(fs.readFileSync(report, 'utf8')) as { pluginReports: Array<{ violations: Violation[] }> };
    return parsed.pluginReports.flatMap((r) =>
      r.violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.severity} ${v.ruleName} at ${c.constructPath}`)),
    );
  }
}

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-nag-'));

describe('cdk-nag AwsSolutions', () => {
  // CDK's built-in CloudFormation validation is off where it cannot change the outcome: its findings
  // are warnings that fail no synth (only cdk-nag's do), read only when the synth failed. On in
  // the third test, which expects exactly one finding. (Its WebAssembly engine costs seconds.)
  it('finds nothing unacknowledged in any pipeline variant', () => {
    const outdir = tmp();
    const app = new App({ builtinCloudFormationValidation: false, outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    for (const [name, props] of Object.entries(VARIANTS)) {
      const stack = new Stack(app, name, { env: ENV });
      new AvailableNowPipeline(stack, 'Pipeline', props(stack));
    }
    expect(nagViolations(app, outdir)).toEqual([]);
  });

  it("finds nothing unacknowledged in the example app's stacks (bin/app.ts)", () => {
    const outdir = tmp();
    const { app } = buildApp(new App({ builtinCloudFormationValidation: false, outdir, context: { 'aws:cdk:bundling-stacks': [] } }));
    expect(nagViolations(app, outdir)).toEqual([]);
  });

  it('still reports what is not acknowledged: a wildcard on Resource "*" added to the role', () => {
    const outdir = tmp();
    const app = new App({ outdir, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Widened', { env: ENV });
    const pipeline = new AvailableNowPipeline(stack, 'Pipeline', {});
    pipeline.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: ['*'] }));
    expect(nagViolations(app, outdir)).toEqual(['error AwsSolutions-IAM5[Resource::*] at Widened/Pipeline/Role/DefaultPolicy/Resource']);
  });

  it('acknowledges a wildcard only at the end of an S3 key prefix', () => {
    expect(isPrefixScopedObjects('<PipelineBucket1234.Arn>/checkpoints/orders/*')).toBe(true);
    expect(isPrefixScopedObjects('arn:<AWS::Partition>:s3:::reference-data/reference/products.csv*')).toBe(true);
    for (const r of ['*', 'arn:<AWS::Partition>:s3:::bucket/*', '<PipelineBucket1234.Arn>/*', 'arn:aws:s3:::bucket/a/*/b', '<Bucket.Arn>/a*/b*'])
      expect({ r, scoped: isPrefixScopedObjects(r) }).toEqual({ r, scoped: false });
  });
});

describe('the scale-out state machine', () => {
  it('is valid Amazon States Language, as synthesized (intrinsics resolved as lib/local/state-machine.ts does)', () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Asl', { env: ENV });
    new AvailableNowPipeline(stack, 'Pipeline', VARIANTS.Parallelism(stack));
    const definition = definitionFromTemplate(Template.fromStack(stack).toJSON() as never, { accountId: ENV.account, region: ENV.region });
    const result = aslValidator(definition);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
    // Both Distributed Maps are in it, with their item processors.
    const maps = Object.values(definition.States).filter((st) => st.Type === 'Map');
    expect(maps).toHaveLength(2);
  });

  it('the validator rejects a broken definition (so the check above means something)', () => {
    expect(aslValidator({ StartAt: 'Missing', States: { A: { Type: 'Succeed' } } }).isValid).toBe(false);
  });
});
