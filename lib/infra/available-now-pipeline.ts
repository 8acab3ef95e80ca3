/**
 * AvailableNowPipeline: one sluice query, deployed as a scheduled availableNow run.
 *
 *     EventBridge rule  rate(15 minutes)
 *        │ async invoke (the scheduled event)                      on failure (after retryAttempts,
 *        ▼                                                          or older than maxEventAge)
 *     Lambda (NodejsFunction, Node.js 22, arm64,  ──────────────────────────▶ SQS failure queue
 *             reserved concurrency 1)
 *        │ reads                    │ state + lease             │ checkpoint           │ writes
 *        ▼                          ▼                           ▼                      ▼
 *     Kinesis stream          DynamoDB table (pk/sk,      S3 <checkpointPrefix>/   S3 <sinkPrefix>/
 *     or S3 <landingPrefix>/  TTL `ttl`, PITR)            (offsets, commits, ...)  or a DynamoDB table
 *
 *     CloudWatch alarms (lib/infra/alarms.ts): run failed, batch or run too long for the interval,
 *     no input, state rows growing (a daily trend), late rows dropped, dead letters written,
 *     falling behind, failure queue not empty; and a dashboard with the plots of `sluice report`.
 *     The custom metrics come from the handler's summary log line (Embedded Metric Format), so the
 *     function needs no cloudwatch:PutMetricData.
 *
 * The function's role holds exactly the actions the adapters in lib/aws send, on the prefixes and
 * tables this pipeline uses; nothing on Resource "*". The source and the sink are objects that
 * bind themselves (lib/infra/sources.ts, lib/infra/sinks.ts): each grants what its adapter sends
 * and returns the URI the handler reads.
 *
 * With `parallelism`, the rule starts a Step Functions state machine instead (lib/infra/scale-out.ts):
 * a starter Lambda starts one execution per tick unless one is running, and the execution runs the
 * batch as plan, read (one task per split), partition (one task per state partition) and commit
 * tasks on a task Lambda. The single Lambda stays deployed, unscheduled, for runs started by hand
 * against the same checkpoint.
 *
 * Bring your own table, bucket(s), stream or failure queue by passing them; everything not passed
 * is created. One created bucket (`pipelineBucket`) holds every S3 location not given a bucket, each
 * under its own prefix. It is versioned, so a checkpoint entry, landing file or sink object that
 * was overwritten or deleted can be restored (the error messages say to); old versions expire
 * after `noncurrentVersionRetentionDays`, dead letters after `deadLetterRetentionDays`, progress
 * reports after `progressRetentionDays`. A bucket you bring keeps your own configuration.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  Annotations,
  Duration,
  RemovalPolicy,
  Stack,
  Stage,
  Token,
  aws_cloudwatch as cloudwatch,
  aws_dynamodb as dynamodb,
  aws_events as events,
  aws_events_targets as targets,
  type aws_glue as glue,
  aws_iam as iam,
  type aws_kinesis as kinesis,
  aws_lambda as lambda,
  aws_lambda_destinations as destinations,
  aws_lambda_nodejs as nodejs,
  aws_logs as logs,
  aws_s3 as s3,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DEFAULT_METRICS_NAMESPACE, METRIC_DIMENSION } from '../aws/lambda/emf';
import { createPipelineAlarms, createPipelineDashboard, resolvePipelineAlarms, type AlarmName, type AlarmSources, type LegacyAlarmProps, type PipelineAlarmsProps, type ResolvedAlarms } from './alarms';
import { GRANTED_ACTIONS, cleanPrefix, grantS3, invalid, wholeNumber, type PipelineDefaults, type S3Place } from './binding';
import { ScaleOut, resolveParallelism, type PipelineParallelism, type ResolvedParallelism } from './scale-out';
import { PipelineSink } from './sinks';
import type { PipelineStaticTable } from './static-tables';
import { PipelineSource } from './sources';

export { STATE_GROWTH_EXPRESSION, type AlarmName, type LegacyAlarmProps, type PipelineAlarmsProps } from './alarms';
export { GRANTED_ACTIONS, type PipelineDefaults, type S3Place } from './binding';
export { NO_RETRY, ScaleOut, TASK_RETRY, type PipelineParallelism, type ResolvedParallelism } from './scale-out';
export { PipelineSink, outputColumnTypes, type BoundSink, type FileSinkOptions, type GlueTableOptions, type ParquetSinkOptions } from './sinks';
export { PipelineSource, type BoundSource, type NewKinesisStreamOptions } from './sources';
export { PipelineStaticTable } from './static-tables';

// ---------------------------------------------------------------- shared with bin/build-lambda.ts

/**
 * How the Lambda is bundled. bin/build-lambda.ts bundles with the same settings to print the
 * bundle size. The Node.js 22 runtime ships AWS SDK v3, so `@aws-sdk/*` stays out of the bundle;
 * everything else (the engine, the adapters, the query) goes in.
 */
export const LAMBDA_BUNDLING = {
  minify: true,
  sourceMap: true,
  target: 'node22',
  format: 'cjs',
  // @smithy/node-http-handler is only required for emulator endpoints (lib/aws/clients.ts); the
  // Node.js runtime's SDK provides it there too.
  externalModules: ['@aws-sdk/*', '@smithy/node-http-handler'] as string[],
} as const;

/** The repository root (two levels above lib/infra). */
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The windowed-totals example's entry, the default `entry` (its compiled .js in the published package). */
export const DEFAULT_ENTRY = [path.join(REPO_ROOT, 'lambdas', 'windowed-totals.ts'), path.join(REPO_ROOT, 'lambdas', 'windowed-totals.js')].find((f) => fs.existsSync(f)) ?? path.join(REPO_ROOT, 'lambdas', 'windowed-totals.ts');

/** Environment variables the construct owns; `environment` may not set them. */
const OWNED_ENV = [
  'SLUICE_CHECKPOINT_URI',
  'SLUICE_STATE_TABLE',
  'SLUICE_SOURCE_URI',
  'SLUICE_SINK_URI',
  'SLUICE_DEAD_LETTER_URI',
  'SLUICE_KEEP_LATE_ROWS',
  'SLUICE_LEASE_SECONDS',
  'SLUICE_METRICS_NAMESPACE',
  'SLUICE_PIPELINE_NAME',
  'SLUICE_LOG_VALUES',
] as const;

// ---------------------------------------------------------------- props

export interface AvailableNowPipelineProps extends LegacyAlarmProps {
  // ---- the query

  /**
   * The Lambda entry file: a module exporting a handler built with `createScheduledHandler`
   * (lib/aws/lambda/handler.ts).
   * @default lambdas/windowed-totals.ts
   */
  readonly entry?: string;
  /** The exported handler's name. @default 'handler' */
  readonly handler?: string;
  /**
   * Names the pipeline: the `Pipeline` dimension of its metrics and the default S3 prefixes
   * (`checkpoints/<name>`, `landing/<name>`, `output/<name>`). 1 to 64 of `A-Za-z0-9._-`.
   * @default `<stack name>-<construct id>`
   */
  readonly pipelineName?: string;
  /**
   * Extra environment for the query module, e.g. `{ SLUICE_OUTPUT_MODE: 'update' }`. It may not
   * set the SLUICE_* variables the construct owns (use the props instead).
   * @default {}
   */
  readonly environment?: Record<string, string>;

  // ---- schedule and Lambda

  /** How often a run starts; whole minutes. @default Duration.minutes(15) */
  readonly scheduleInterval?: Duration;
  /** Set false to deploy with the rule disabled (runs only when invoked by hand). @default true */
  readonly scheduleEnabled?: boolean;
  /** The Lambda's memory. 128 to 10240. @default 1024 */
  readonly lambdaMemoryMiB?: number;
  /**
   * The Lambda's timeout: at most 900 and at most the schedule interval. A run stops starting
   * batches shortly before it (the handler's safety margin); the next tick continues.
   * @default 600, or the schedule interval - 60 when that is shorter (at least 30)
   */
  readonly lambdaTimeoutSeconds?: number;
  /** @default lambda.Architecture.ARM_64 */
  readonly architecture?: lambda.Architecture;
  /**
   * How long a run's lease lasts (renewed between batches). At least the Lambda timeout, so that a
   * live run never loses its lease to the next one; a run killed at its timeout holds it at most
   * this long. Passed to the function as SLUICE_LEASE_SECONDS.
   * @default lambdaTimeoutSeconds + 60
   */
  readonly leaseDurationSeconds?: number;
  /**
   * Lambda's own retries of a failed asynchronous invocation: 0 or 1. Default 0: a run that failed
   * is retried by the next scheduled tick anyway (from the checkpoint, exactly once), and an
   * immediate retry of a permanent failure (bad configuration, checkpoint mismatch) only doubles
   * the noise. Use 1 if transient failures are common and the interval is long.
   * @default 0
   */
  readonly retryAttempts?: number;
  /**
   * How long a scheduled event may wait in Lambda's queue (throttled behind a run still going,
   * with reserved concurrency 1) before it is dropped to the failure queue: a tick that cannot
   * start before the next tick is superseded by it. 60 to 21600.
   * @default the schedule interval
   */
  readonly maxEventAgeSeconds?: number;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Log data values in the details of a failed run's "run-failed" line. By default the handler
   * replaces the detail fields that hold keys, rows, records or values (grouping values of the
   * query, e.g. a user id in a state key) with "<redacted>", in the details and in the message,
   * so the function's logs hold no data. Set true while debugging a failure that needs the value.
   * Passed to the function as SLUICE_LOG_VALUES.
   * @default false
   */
  readonly logDataValues?: boolean;

  // ---- state and checkpoint

  /**
   * The state/lease table: partition key `pk` (S), sort key `sk` (S), TTL on `ttl`.
   * @default a new on-demand table with TTL on `ttl` and point-in-time recovery
   */
  readonly stateTable?: dynamodb.ITable;
  /** @default the pipeline bucket (created) */
  readonly checkpointBucket?: s3.IBucket;
  /** The query's checkpoint prefix, never shared with another query. @default `checkpoints/<pipelineName>` */
  readonly checkpointPrefix?: string;
  /**
   * Days before the created pipeline bucket's lifecycle rule expires `<checkpointPrefix>/progress/`
   * entries (progress reports; the run loop itself never reads them back). Only applies to the
   * created bucket.
   * @default 30
   */
  readonly progressRetentionDays?: number;
  /**
   * Days an overwritten or deleted object's old version stays restorable in the created pipeline
   * bucket (which is versioned) before its lifecycle rule expires it, with the delete markers left
   * behind; bounds what versioning costs. An object a lifecycle rule expires (dead letters,
   * progress reports) stays this much longer as an old version. Only applies to the created bucket.
   * @default 30
   */
  readonly noncurrentVersionRetentionDays?: number;

  // ---- source and sink

  /**
   * Where the query reads: `PipelineSource.s3(bucket?, prefix?)`, `PipelineSource.kinesis(stream)`
   * or `PipelineSource.newKinesisStream({ retentionHours })`.
   * @default PipelineSource.s3(): `landing/<pipelineName>` in the pipeline bucket
   */
  readonly source?: PipelineSource;
  /**
   * The other streams of the query's stream-stream joins, in the order the query joins them
   * (`a.join(b, ...).join(c, ...)`: [b, c]); each granted as `source` is. The handler reads them
   * from SLUICE_INPUT_URIS. An S3 input's default prefix is `landing/<pipelineName>-input<N>` (N = 2, 3, ...).
   * @default none
   */
  readonly inputs?: readonly PipelineSource[];
  /**
   * Where the query writes: `PipelineSink.s3(bucket?, prefix?)`, `PipelineSink.files(bucket?,
   * prefix?, { partitionBy, granularity })`, `PipelineSink.parquet(bucket?, prefix?, { partitionBy,
   * granularity, glue })` or `PipelineSink.dynamodb(table, queryKey?)`.
   * @default PipelineSink.s3(): `output/<pipelineName>/batch-<N>.jsonl` in the pipeline bucket
   */
  readonly sink?: PipelineSink;
  /**
   * The static tables the query joins (`staticTable.s3` / `staticTable.dynamodb` in the query):
   * `PipelineStaticTable.s3(bucket, keyOrPrefix)`, `PipelineStaticTable.dynamodb(table)`. Each
   * grants the role what its adapter sends (s3:GetObject and a prefix-bound s3:ListBucket;
   * dynamodb:BatchGetItem). A query joining a table not listed here fails with AccessDenied.
   * @default none
   */
  readonly staticTables?: readonly PipelineStaticTable[];

  // ---- dead letters

  /** Bucket for malformed (and, with keepLateRows, late) records. @default the checkpoint bucket */
  readonly deadLetterBucket?: s3.IBucket;
  /**
   * Malformed records go to `<deadLetterPrefix>/malformed/`, late ones to `.../late/`. Always
   * passed to the function (SLUICE_DEAD_LETTER_URI), so the grant matches where it writes.
   * @default `dead-letter/<pipelineName>`
   */
  readonly deadLetterPrefix?: string;
  /** Also write rows dropped by the watermark to the dead-letter location. @default false */
  readonly keepLateRows?: boolean;
  /**
   * Days before the created pipeline bucket's lifecycle rule expires `<deadLetterPrefix>/` objects
   * (read or replay them before then). Only applies when the dead letters go to the created bucket
   * (no `deadLetterBucket` and no `checkpointBucket`): a bucket you bring is yours to configure, so
   * add a lifecycle rule for the prefix there.
   * @default 90
   */
  readonly deadLetterRetentionDays?: number;

  // ---- failures and alarms

  /** Where failed invocations (and undeliverable scheduled events) go. @default a new SQS queue, SSE, TLS only, 14 days */
  readonly failureQueue?: sqs.IQueue;
  /** CloudWatch namespace of the handler's metrics. @default 'Sluice' */
  readonly metricsNamespace?: string;
  /** Set false to create no alarms (the dashboard stays, without its alarm widget). @default true */
  readonly createAlarms?: boolean;
  /** Actions (e.g. `new SnsAction(topic)`) for every alarm. @default none */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
  /**
   * Each alarm's threshold, or `false` to turn it off (lib/infra/alarms.ts documents every one):
   * `runFailed`, `batchDuration`, `runDuration`, `noInput`, `stateRowsGrowing`, `stateRowsAbove`
   * (off unless given), `lateRowsDropped`, `deadLetters`, `fallingBehind`, `failureQueueNotEmpty`.
   * @default every alarm but stateRowsAbove on, with its defaults
   */
  readonly alarms?: PipelineAlarmsProps;
  /** Set false to create no CloudWatch dashboard. @default true */
  readonly createDashboard?: boolean;
  /** The dashboard's name. @default `sluice-<pipelineName>` (characters other than A-Za-z0-9_- become _) */
  readonly dashboardName?: string;

  /** For the created table, bucket, stream and log group. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;

  // ---- scale-out

  /**
   * Run the query on many Lambdas: a Step Functions state machine per scheduled run, with a read
   * task per split and a partition task per state partition (lib/infra/scale-out.ts). Adds the
   * alarms executionFailed, executionTimedOut and executionDuration.
   * `{ statePartitions, readConcurrency?, partitionConcurrency?, taskTimeoutSeconds?, ... }`.
   * @default none: one Lambda runs each scheduled run
   */
  readonly parallelism?: PipelineParallelism;
}

/** Resolved values, after defaults and validation. */
interface Resolved {
  readonly entry: string;
  readonly handler: string;
  readonly pipelineName: string;
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
  readonly leaseSeconds: number;
  readonly retryAttempts: number;
  readonly maxEventAgeSeconds: number;
  readonly checkpointPrefix: string;
  readonly deadLetterPrefix: string;
  readonly progressRetentionDays: number;
  readonly deadLetterRetentionDays: number;
  readonly noncurrentVersionRetentionDays: number;
  readonly namespace: string;
  /** Undefined with createAlarms: false. */
  readonly alarms?: ResolvedAlarms;
  /** Undefined without `parallelism`. */
  readonly parallelism?: ResolvedParallelism;
}

// ---------------------------------------------------------------- the construct

export class AvailableNowPipeline extends Construct {
  readonly function: nodejs.NodejsFunction;
  readonly role: iam.Role;
  readonly rule: events.Rule;
  readonly stateTable: dynamodb.ITable;
  readonly checkpointBucket: s3.IBucket;
  readonly checkpointPrefix: string;
  readonly failureQueue: sqs.IQueue;
  readonly logGroup: logs.LogGroup;
  /** Where the query reads, as the handler receives it (SLUICE_SOURCE_URI). */
  readonly sourceUri: string;
  /** Where the query writes, as the handler receives it (SLUICE_SINK_URI). */
  readonly sinkUri: string;
  /** The stream of a Kinesis source (yours or the created one). */
  readonly sourceStream?: kinesis.IStream;
  /** The bucket and prefix of an S3 source. */
  readonly landingBucket?: s3.IBucket;
  readonly landingPrefix?: string;
  /** The bucket and prefix of an S3 sink. */
  readonly sinkBucket?: s3.IBucket;
  readonly sinkPrefix?: string;
  /** The table of a DynamoDB sink. */
  readonly sinkTable?: dynamodb.ITable;
  /** The Glue table (and the database, when created) over a Parquet sink with `glue`. */
  readonly sinkGlueTable?: glue.CfnTable;
  readonly sinkGlueDatabase?: glue.CfnDatabase;
  readonly deadLetterBucket: s3.IBucket;
  readonly deadLetterPrefix: string;
  readonly pipelineName: string;
  readonly metricsNamespace: string;
  readonly leaseDurationSeconds: number;
  readonly scheduleInterval: Duration;
  /** The alarms that are on, by name (empty with createAlarms: false). */
  readonly alarms: Partial<Record<AlarmName, cloudwatch.Alarm>>;
  /** The CloudWatch dashboard (undefined with createDashboard: false). */
  readonly dashboard?: cloudwatch.Dashboard;
  /** Size of the bundled index.js in bytes, when bundling ran during this synth. */
  readonly bundleSizeBytes?: number;
  /** With `parallelism`: the state machine, its task Lambda and its starter (the rule's target). */
  readonly scaleOut?: ScaleOut;
  private createdBucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: AvailableNowPipelineProps = {}) {
    super(scope, id);
    const r = resolveProps(this, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.pipelineName = r.pipelineName;
    this.metricsNamespace = r.namespace;
    this.leaseDurationSeconds = r.leaseSeconds;
    this.scheduleInterval = Duration.seconds(r.intervalSeconds);
    this.checkpointPrefix = r.checkpointPrefix;

    // ---- storage: one bucket, created on first use, for every S3 location without a bucket of its own
    const defaults: PipelineDefaults = {
      pipelineName: r.pipelineName,
      removalPolicy,
      pipelineBucket: () =>
        (this.createdBucket ??= new s3.Bucket(this, 'Bucket', {
          encryption: s3.BucketEncryption.S3_MANAGED,
          blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
          enforceSSL: true,
          // Error messages about a damaged or deleted checkpoint entry, landing file or sink object
          // say to restore it from S3 versioning; the noncurrent-version rule bounds its cost.
          versioned: true,
          removalPolicy,
          lifecycleRules: [
            ...(!props.checkpointBucket
              ? [{ id: 'expire-old-progress', prefix: `${r.checkpointPrefix}/progress/`, expiration: Duration.days(r.progressRetentionDays) }]
              : []),
            ...(!props.checkpointBucket && !props.deadLetterBucket
              ? [{ id: 'expire-old-dead-letters', prefix: `${r.deadLetterPrefix}/`, expiration: Duration.days(r.deadLetterRetentionDays) }]
              : []),
            { id: 'expire-noncurrent-versions', noncurrentVersionExpiration: Duration.days(r.noncurrentVersionRetentionDays), expiredObjectDeleteMarker: true },
            { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
          ],
        })),
    };
    this.checkpointBucket = props.checkpointBucket ?? defaults.pipelineBucket();
    this.deadLetterBucket = props.deadLetterBucket ?? this.checkpointBucket;
    this.deadLetterPrefix = r.deadLetterPrefix;

    this.stateTable =
      props.stateTable ??
      new dynamodb.Table(this, 'StateTable', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        timeToLiveAttribute: 'ttl',
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        removalPolicy,
      });

    this.failureQueue =
      props.failureQueue ??
      new sqs.Queue(this, 'FailureQueue', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });

    // ---- the role, and least-privilege grants: what each adapter sends, where it sends it
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy });
    // Our own role, without AWSLambdaBasicExecutionRole (whose logs:* actions are on Resource "*"):
    // the function writes only to its own log group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sluice pipeline ${r.pipelineName}: least-privilege role of its scheduled run`,
    });
    this.logGroup.grantWrite(this.role);

    const checkpoint: S3Place = { bucket: this.checkpointBucket, prefix: r.checkpointPrefix };
    grantS3(this.role, { ...checkpoint, objectActions: GRANTED_ACTIONS.checkpointObjects, list: true, kms: ['kms:Decrypt', 'kms:GenerateDataKey'] });

    const source = (props.source ?? PipelineSource.s3()).bind(this, this.role, defaults);
    this.sourceUri = source.uri;
    this.sourceStream = source.stream;
    this.landingBucket = source.landing?.bucket;
    this.landingPrefix = source.landing?.prefix;
    const inputs = (props.inputs ?? []).map((input, k) => input.bind(this, this.role, defaults, k + 2));

    for (const table of props.staticTables ?? []) table.grant(this.role);

    const sink = (props.sink ?? PipelineSink.s3()).bind(this, this.role, defaults);
    this.sinkUri = sink.uri;
    this.sinkTable = sink.table;
    this.sinkBucket = sink.output?.bucket;
    this.sinkPrefix = sink.output?.prefix;
    this.sinkGlueTable = sink.glueTable;
    this.sinkGlueDatabase = sink.glueDatabase;

    const deadLetters: S3Place = { bucket: this.deadLetterBucket, prefix: r.deadLetterPrefix };
    grantS3(this.role, { ...deadLetters, objectActions: GRANTED_ACTIONS.deadLetterObjects, list: false, kms: ['kms:Decrypt', 'kms:GenerateDataKey'] });

    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'StateAndLease', actions: [...GRANTED_ACTIONS.stateTable], resources: [this.stateTable.tableArn] }));
    this.stateTable.encryptionKey?.grantEncryptDecrypt(this.role);

    if (props.noncurrentVersionRetentionDays !== undefined && !this.createdBucket) {
      invalid(
        this,
        `noncurrentVersionRetentionDays (${props.noncurrentVersionRetentionDays}) applies only to the bucket the construct creates, and it creates none (every location has your bucket): configure versioning on your buckets instead, or leave it out`,
        { noncurrentVersionRetentionDays: props.noncurrentVersionRetentionDays },
      );
    }

    checkNoOverlap(this, [
      { name: 'checkpointPrefix', place: checkpoint },
      { name: 'the source prefix', place: source.landing },
      ...inputs.map((input, k) => ({ name: `the prefix of input ${k + 2}`, place: input.landing })),
      { name: 'the sink prefix', place: sink.output },
      { name: 'deadLetterPrefix', place: deadLetters },
      ...(r.parallelism ? [{ name: 'the shuffle prefix (checkpointPrefix + "-shuffle")', place: { bucket: this.checkpointBucket, prefix: `${r.checkpointPrefix}-shuffle` } }] : []),
    ]);

    // ---- the function
    const environment: Record<string, string> = {
      ...(props.environment ?? {}),
      SLUICE_CHECKPOINT_URI: `s3://${this.checkpointBucket.bucketName}/${r.checkpointPrefix}`,
      SLUICE_STATE_TABLE: this.stateTable.tableName,
      SLUICE_SOURCE_URI: source.uri,
      ...(inputs.length ? { SLUICE_INPUT_URIS: inputs.map((i) => i.uri).join(',') } : {}),
      SLUICE_SINK_URI: sink.uri,
      SLUICE_DEAD_LETTER_URI: `s3://${this.deadLetterBucket.bucketName}/${r.deadLetterPrefix}`,
      ...(props.keepLateRows ? { SLUICE_KEEP_LATE_ROWS: 'true' } : {}),
      SLUICE_LEASE_SECONDS: String(r.leaseSeconds),
      SLUICE_METRICS_NAMESPACE: r.namespace,
      SLUICE_PIPELINE_NAME: r.pipelineName,
      SLUICE_LOG_VALUES: props.logDataValues ? 'true' : 'false',
      NODE_OPTIONS: '--enable-source-maps',
    };
    const bundling: nodejs.BundlingOptions = {
      minify: LAMBDA_BUNDLING.minify,
      sourceMap: LAMBDA_BUNDLING.sourceMap,
      target: LAMBDA_BUNDLING.target,
      format: nodejs.OutputFormat.CJS,
      externalModules: [...LAMBDA_BUNDLING.externalModules],
    };
    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: r.entry,
      handler: r.handler,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: props.architecture ?? lambda.Architecture.ARM_64,
      memorySize: r.memoryMiB,
      timeout: Duration.seconds(r.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      description: r.parallelism
        ? `sluice availableNow run of ${r.pipelineName} in one Lambda, by hand only (the schedule starts the scale-out state machine)`
        : `sluice availableNow run of ${r.pipelineName}, every ${r.intervalSeconds / 60} min`,
      // Reserved concurrency 1 and the lease agree on "one run at a time":
      //
      //   tick t0 ──▶ run A  acquire lease (until t0 + lease), renewed between batches ── stops by
      //                      its deadline (timeout - safety margin), releases the lease
      //   tick t1 ──▶ while A still runs, Lambda throttles this event (concurrency 1) and keeps it
      //               in its async queue, retrying until A ends or maxEventAge passes
      //   A killed at its timeout ──▶ its lease expires at most `lease` after its last renewal;
      //               lease >= timeout, so a live run never loses it to the next tick
      //
      // The concurrency limit keeps this function from overlapping itself without a failed
      // invocation; the lease (with its fencing token) also keeps out runs from elsewhere: the
      // CLI, a second deployment, an old version still running across a deploy.
      reservedConcurrentExecutions: 1,
      retryAttempts: r.retryAttempts,
      maxEventAge: Duration.seconds(r.maxEventAgeSeconds),
      onFailure: new destinations.SqsDestination(this.failureQueue),
      environment,
      bundling,
    });
    this.bundleSizeBytes = recordBundleSize(this, this.function);

    // ---- scale-out: the state machine, its task Lambda and the starter the rule invokes instead
    if (r.parallelism) {
      this.scaleOut = new ScaleOut(this, 'ScaleOut', {
        pipelineName: r.pipelineName,
        intervalSeconds: r.intervalSeconds,
        scheduleMaxEventAgeSeconds: r.maxEventAgeSeconds,
        parallelism: r.parallelism,
        role: this.role,
        shuffle: { bucket: this.checkpointBucket, prefix: `${r.checkpointPrefix}-shuffle` },
        environment,
        architecture: props.architecture ?? lambda.Architecture.ARM_64,
        bundling,
        logRetention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        removalPolicy,
        failureQueue: this.failureQueue,
      });
    }

    // ---- the schedule
    this.rule = new events.Rule(this, 'Schedule', {
      description: `starts an availableNow run of sluice pipeline ${r.pipelineName}`,
      schedule: events.Schedule.rate(Duration.minutes(r.intervalSeconds / 60)),
      enabled: props.scheduleEnabled ?? true,
    });
    this.rule.addTarget(
      new targets.LambdaFunction(this.scaleOut?.starter ?? this.function, {
        // EventBridge's own delivery (the async Invoke call) rarely fails: Lambda queues the
        // event even while the function is busy. When it does, the event goes to the same queue.
        deadLetterQueue: this.failureQueue,
        retryAttempts: 2,
        maxEventAge: Duration.seconds(r.maxEventAgeSeconds),
      }),
    );

    // ---- alarms and dashboard
    const sources: AlarmSources = {
      pipelineName: r.pipelineName,
      intervalSeconds: r.intervalSeconds,
      deadLetterPrefix: r.deadLetterPrefix,
      metric: (name, statistic, period) => this.metric(name, { statistic, period }),
      lambdaErrors: (period) => this.function.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
      queueDepth: (period) => this.failureQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM }),
      ...(this.scaleOut ? { execution: executionMetrics(this.scaleOut.stateMachine) } : {}),
    };
    this.alarms = r.alarms ? createPipelineAlarms(this, r.alarms, sources, props.alarmActions ?? []) : {};
    if (props.createDashboard !== false) this.dashboard = createPipelineDashboard(this, sources, this.alarms, props.dashboardName);
  }

  /** The created bucket holding every S3 location not given a bucket (undefined when none needed). */
  get pipelineBucket(): s3.Bucket | undefined {
    return this.createdBucket;
  }

  /**
   * A metric from the handler's summary line (EMF) for this pipeline, e.g. for a dashboard:
   * RowsIn, RowsOut, Batches, BacklogLeft, StateRows, DroppedByWatermark, DeadLetters, LeaseHeld,
   * Runs, RunDurationMs, MaxBatchDurationMs, WatermarkLagMs (SUMMARY_METRIC_NAMES in
   * lib/aws/lambda/emf.ts). Default statistic Sum, default period the schedule interval.
   */
  metric(metricName: string, options: { statistic?: string; period?: Duration } = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName,
      dimensionsMap: { [METRIC_DIMENSION]: this.pipelineName },
      statistic: options.statistic ?? cloudwatch.Stats.SUM,
      period: options.period ?? this.scheduleInterval,
    });
  }
}

/** The state machine's AWS/States metrics the alarms and the dashboard read. */
function executionMetrics(machine: ScaleOut['stateMachine']): NonNullable<AlarmSources['execution']> {
  const { SUM, MAXIMUM } = cloudwatch.Stats;
  return {
    failed: (period) => machine.metricFailed({ period, statistic: SUM }),
    timedOut: (period) => machine.metricTimedOut({ period, statistic: SUM }),
    time: (period) => machine.metricTime({ period, statistic: MAXIMUM }),
    started: (period) => machine.metricStarted({ period, statistic: SUM }),
    succeeded: (period) => machine.metricSucceeded({ period, statistic: SUM }),
  };
}

// ---------------------------------------------------------------- bundle size

function recordBundleSize(scope: Construct, fn: nodejs.NodejsFunction): number | undefined {
  const asset = fn.node.tryFindChild('Code');
  const assetPath = asset && (asset as { assetPath?: string }).assetPath;
  if (!assetPath) return undefined;
  const outdir = Stage.of(scope)?.outdir ?? '.';
  const file = path.resolve(outdir, assetPath, 'index.js');
  if (!fs.existsSync(file)) return undefined; // bundling skipped (e.g. `cdk deploy --exclusively` another stack)
  const bytes = fs.statSync(file).size;
  Annotations.of(scope).addInfo(`Lambda bundle of ${fn.node.path}: index.js ${(bytes / 1024).toFixed(1)} KiB (minified, @aws-sdk/* external)`);
  return bytes;
}

// ---------------------------------------------------------------- validation

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

function resolveProps(scope: Construct, id: string, props: AvailableNowPipelineProps): Resolved {
  const entry = path.resolve(props.entry ?? DEFAULT_ENTRY);
  if (!fs.existsSync(entry)) invalid(scope, `entry ${JSON.stringify(props.entry ?? entry)} does not exist: pass the path of a Lambda entry file, e.g. lambdas/windowed-totals.ts`, { entry: props.entry });

  const stackName = Stack.of(scope).stackName;
  const pipelineName = props.pipelineName ?? (Token.isUnresolved(stackName) ? id : `${stackName}-${id}`).slice(0, 64);
  if (!NAME.test(pipelineName)) invalid(scope, `pipelineName ${JSON.stringify(pipelineName)} must be 1 to 64 of A-Za-z0-9._-: pass pipelineName explicitly`, { pipelineName });

  const interval = props.scheduleInterval ?? Duration.minutes(15);
  if (interval.isUnresolved()) invalid(scope, 'scheduleInterval is a token, but it must be a concrete duration: pass e.g. Duration.minutes(15)');
  const intervalSeconds = interval.toSeconds();
  if (intervalSeconds < 60 || intervalSeconds % 60 !== 0) {
    invalid(scope, `scheduleInterval (${intervalSeconds} s) must be a whole number of minutes, at least 1, as EventBridge rate() counts minutes: use e.g. Duration.minutes(15)`, { intervalSeconds });
  }

  // Default: 10 minutes, or a minute less than a shorter interval, so that the lease (timeout + 60)
  // has expired by the next tick even after a run that was killed at its timeout.
  const timeoutSeconds = wholeNumber(scope, 'lambdaTimeoutSeconds', props.lambdaTimeoutSeconds ?? Math.max(30, Math.min(600, intervalSeconds - 60)), 1, 900, 'Lambda runs at most 15 minutes (900 s); a longer run continues on the next tick');
  if (timeoutSeconds > intervalSeconds) {
    invalid(
      scope,
      `scheduleInterval (${intervalSeconds / 60} min) is more frequent than lambdaTimeoutSeconds (${timeoutSeconds} s), so ticks would queue behind a running run: lower lambdaTimeoutSeconds to at most ${intervalSeconds}, or lengthen scheduleInterval to at least ${Math.ceil(timeoutSeconds / 60)} min`,
      { intervalSeconds, timeoutSeconds },
    );
  }
  const memoryMiB = wholeNumber(scope, 'lambdaMemoryMiB', props.lambdaMemoryMiB ?? 1024, 128, 10240, 'Lambda memory ranges from 128 to 10240 MiB');

  const leaseSeconds = wholeNumber(scope, 'leaseDurationSeconds', props.leaseDurationSeconds ?? timeoutSeconds + 60, 1, 86_400, 'give the lease in seconds, e.g. lambdaTimeoutSeconds + 60');
  if (leaseSeconds < timeoutSeconds) {
    invalid(
      scope,
      `leaseDurationSeconds (${leaseSeconds}) is shorter than lambdaTimeoutSeconds (${timeoutSeconds}), so a run could lose its lease while it writes: set it to at least ${timeoutSeconds} (default: the timeout + 60)`,
      { leaseSeconds, timeoutSeconds },
    );
  }
  if (leaseSeconds > intervalSeconds) {
    Annotations.of(scope).addWarningV2(
      'sluice:AvailableNowPipeline.leaseLongerThanInterval',
      `leaseDurationSeconds (${leaseSeconds}) exceeds scheduleInterval (${intervalSeconds} s): after a run is killed at its timeout, the next tick finds the lease held and skips (it logs "lease-held"); lower lambdaTimeoutSeconds to leave room`,
    );
  }

  const retryAttempts = props.retryAttempts ?? 0;
  if (retryAttempts !== 0 && retryAttempts !== 1) {
    invalid(scope, `retryAttempts (${retryAttempts}) must be 0 or 1, as the next tick retries a failed run from its checkpoint: use 0, or 1 for transient failures on a long interval`, { retryAttempts });
  }
  const maxEventAgeSeconds = wholeNumber(scope, 'maxEventAgeSeconds', props.maxEventAgeSeconds ?? Math.max(60, intervalSeconds), 60, 21_600, 'Lambda keeps an async event 60 s to 6 h');

  const checkpointPrefix = cleanPrefix(scope, 'checkpointPrefix', props.checkpointPrefix ?? `checkpoints/${pipelineName}`);
  const deadLetterPrefix = cleanPrefix(scope, 'deadLetterPrefix', props.deadLetterPrefix ?? `dead-letter/${pipelineName}`);
  if (props.checkpointBucket && props.progressRetentionDays !== undefined) {
    invalid(
      scope,
      `progressRetentionDays (${props.progressRetentionDays}) applies only to the created bucket, not your checkpointBucket: add a lifecycle rule for "${checkpointPrefix}/progress/" on it instead`,
      { progressRetentionDays: props.progressRetentionDays },
    );
  }
  const progressRetentionDays = wholeNumber(scope, 'progressRetentionDays', props.progressRetentionDays ?? 30, 1, 3650, 'keep progress reports 1 day to 10 years');
  const broughtDeadLetterBucket = props.deadLetterBucket ? 'deadLetterBucket' : props.checkpointBucket ? 'checkpointBucket' : undefined;
  if (broughtDeadLetterBucket && props.deadLetterRetentionDays !== undefined) {
    const bucket = props.deadLetterBucket ?? props.checkpointBucket!;
    const named = Token.isUnresolved(bucket.bucketName) ? `your ${broughtDeadLetterBucket}` : `your bucket "${bucket.bucketName}" (${broughtDeadLetterBucket})`;
    invalid(
      scope,
      `deadLetterRetentionDays (${props.deadLetterRetentionDays}) applies only to the created bucket, not ${named}, where the dead letters go: add a lifecycle rule for "${deadLetterPrefix}/" on it instead`,
      { deadLetterRetentionDays: props.deadLetterRetentionDays },
    );
  }
  const deadLetterRetentionDays = wholeNumber(scope, 'deadLetterRetentionDays', props.deadLetterRetentionDays ?? 90, 1, 3650, 'keep dead letters 1 day to 10 years');
  const noncurrentVersionRetentionDays = wholeNumber(scope, 'noncurrentVersionRetentionDays', props.noncurrentVersionRetentionDays ?? 30, 1, 3650, 'keep old versions 1 day to 10 years');

  const namespace = props.metricsNamespace ?? DEFAULT_METRICS_NAMESPACE;
  if (!/^[A-Za-z0-9._\-/#:]{1,255}$/.test(namespace) || namespace.startsWith('AWS/')) {
    invalid(scope, `metricsNamespace ${JSON.stringify(namespace)} is not a custom CloudWatch namespace: use letters, digits and . _ - / # :, not starting with "AWS/"`, { metricsNamespace: namespace });
  }

  if (props.environment) {
    const owned = Object.keys(props.environment).filter((k) => (OWNED_ENV as readonly string[]).includes(k));
    if (owned.length > 0) invalid(scope, `environment sets ${owned.join(', ')}, which the construct sets from its props: use the props (stateTable, checkpointPrefix, source, sink, ...) instead`, { owned });
  }

  if (props.createAlarms === false && props.alarms !== undefined) {
    invalid(scope, 'createAlarms is false, yet alarms sets thresholds: drop one of them (alarms: { <name>: false } turns a single alarm off)');
  }
  const parallelism = props.parallelism ? resolveParallelism(scope, props.parallelism, { intervalSeconds, memoryMiB }) : undefined;
  if (parallelism && props.environment?.SLUICE_STATE_PARTITIONS !== undefined) {
    invalid(scope, 'environment sets SLUICE_STATE_PARTITIONS, which the construct sets from parallelism.statePartitions: drop it from environment', { SLUICE_STATE_PARTITIONS: props.environment.SLUICE_STATE_PARTITIONS });
  }
  const alarms =
    props.createAlarms === false
      ? undefined
      : resolvePipelineAlarms(scope, props.alarms ?? {}, props, { intervalSeconds, timeoutSeconds, scheduled: props.scheduleEnabled ?? true, executionTimeoutSeconds: parallelism?.executionTimeoutSeconds });
  if (props.dashboardName !== undefined && !/^[A-Za-z0-9_-]{1,255}$/.test(props.dashboardName)) {
    invalid(scope, `dashboardName ${JSON.stringify(props.dashboardName)} must be 1 to 255 of A-Za-z0-9_-, as CloudWatch requires: e.g. "sluice-orders"`, { dashboardName: props.dashboardName });
  }

  return {
    entry,
    handler: props.handler ?? 'handler',
    pipelineName,
    intervalSeconds,
    timeoutSeconds,
    memoryMiB,
    leaseSeconds,
    retryAttempts,
    maxEventAgeSeconds,
    checkpointPrefix,
    deadLetterPrefix,
    progressRetentionDays,
    deadLetterRetentionDays,
    noncurrentVersionRetentionDays,
    namespace,
    alarms,
    parallelism,
  };
}

/** Prefixes in one bucket must not nest: the source would read the checkpoint, or its own output. */
function checkNoOverlap(scope: Construct, locations: ReadonlyArray<{ readonly name: string; readonly place?: S3Place }>): void {
  const sameBucket = (a: s3.IBucket, b: s3.IBucket) =>
    a === b || (!Token.isUnresolved(a.bucketName) && !Token.isUnresolved(b.bucketName) && a.bucketName === b.bucketName);
  const nests = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  for (let i = 0; i < locations.length; i++) {
    for (let j = i + 1; j < locations.length; j++) {
      const a = locations[i];
      const b = locations[j];
      if (!a.place || !b.place) continue;
      if (sameBucket(a.place.bucket, b.place.bucket) && nests(a.place.prefix, b.place.prefix)) {
        invalid(scope, `${a.name} "${a.place.prefix}" and ${b.name} "${b.place.prefix}" overlap in the same bucket: give each its own prefix, e.g. checkpoints/<name>, landing/<name>, output/<name>`, {
          [a.name]: a.place.prefix,
          [b.name]: b.place.prefix,
        });
      }
    }
  }
}
