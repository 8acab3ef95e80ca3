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
 *     CloudWatch alarms: run failed, falling behind, no input, state rows growing, late rows dropped,
 *     failure queue not empty. The custom metrics come from the handler's summary log line
 *     (Embedded Metric Format), so the function needs no cloudwatch:PutMetricData.
 *
 * The function's role holds exactly the actions the adapters in lib/aws send, on the prefixes and
 * tables this pipeline uses (see the grant* methods); nothing on Resource "*".
 *
 * Bring your own table, bucket(s), stream or failure queue by passing them; everything not passed
 * is created. One created bucket (`pipelineBucket`) holds every S3 location not given a bucket, each
 * under its own prefix.
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
  aws_iam as iam,
  aws_kinesis as kinesis,
  aws_lambda as lambda,
  aws_lambda_destinations as destinations,
  aws_lambda_nodejs as nodejs,
  aws_logs as logs,
  aws_s3 as s3,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';

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

/** The windowed-totals example's entry, the default `entry`. */
export const DEFAULT_ENTRY = path.join(REPO_ROOT, 'lambdas', 'windowed-totals.ts');

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
] as const;

/**
 * What the adapters in lib/aws send, as IAM actions, per resource. test/infra checks that every
 * SDK command in lib/aws maps to an action granted here, so a new call cannot ship ungranted.
 */
export const GRANTED_ACTIONS = {
  /** S3CheckpointStore (GET/PUT entries, DeleteObjects when purging) on `<checkpointPrefix>/*`. */
  checkpointObjects: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  /** S3LandingSource: GET each file under `<landingPrefix>/*`. */
  landingObjects: ['s3:GetObject'],
  /** S3JsonSink: one PUT per batch under `<sinkPrefix>/*`. */
  sinkObjects: ['s3:PutObject'],
  /** S3DeadLetterSink: PUT under `<deadLetterPrefix>/*`. */
  deadLetterObjects: ['s3:PutObject'],
  /** ListObjectsV2, with an s3:prefix condition; on the bucket ARN. */
  list: ['s3:ListBucket'],
  /**
   * DynamoDbStateStore (GetItem, PutItem, BatchGetItem, BatchWriteItem, Query) and DynamoDbLease
   * (UpdateItem; its ConditionCheck joins a DynamoDB sink's TransactWriteItems, which IAM evaluates
   * per entry: dynamodb:ConditionCheckItem). Deletes go through BatchWriteItem.
   */
  stateTable: [
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:BatchGetItem',
    'dynamodb:BatchWriteItem',
    'dynamodb:Query',
    'dynamodb:ConditionCheckItem',
  ],
  /**
   * DynamoDbSink: batch-ID-guarded puts in TransactWriteItems (IAM checks each entry's action:
   * PutItem), one BatchGetItem of the batch's chunk markers on a replay, Query for readers.
   */
  sinkTable: ['dynamodb:PutItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  /** The Kinesis source, on the stream ARN. */
  stream: ['kinesis:DescribeStreamSummary', 'kinesis:ListShards', 'kinesis:GetShardIterator', 'kinesis:GetRecords'],
} as const;

// ---------------------------------------------------------------- props

export type PipelineSourceType = 's3' | 'kinesis';
export type PipelineSinkType = 's3' | 'dynamodb';

export interface AvailableNowPipelineProps {
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

  // ---- source

  /**
   * Where the query reads. Inferred from `sourceStream` (kinesis) or `landingBucket`/`landingPrefix`
   * (s3) when not set.
   * @default 's3', or 'kinesis' when `sourceStream` is given
   */
  readonly sourceType?: PipelineSourceType;
  /** The Kinesis source stream. @default a new on-demand stream, when sourceType is 'kinesis' */
  readonly sourceStream?: kinesis.IStream;
  /** Retention of the created stream, 24 to 8760 hours; keep it well above the schedule interval. @default 24 */
  readonly sourceStreamRetentionHours?: number;
  /** The landing bucket of an S3 source. @default the pipeline bucket (created) */
  readonly landingBucket?: s3.IBucket;
  /** Producers drop JSON-lines files under this prefix. @default `landing/<pipelineName>` */
  readonly landingPrefix?: string;

  // ---- sink

  /** @default 'dynamodb' when `sinkTable` is given, else 's3' */
  readonly sinkType?: PipelineSinkType;
  /** The bucket of an S3 sink. @default the pipeline bucket (created) */
  readonly sinkBucket?: s3.IBucket;
  /** Batch objects go to `<sinkPrefix>/batch-<id>.jsonl`. @default `output/<pipelineName>` */
  readonly sinkPrefix?: string;
  /** The table of a DynamoDB sink; required when sinkType is 'dynamodb'. @default none */
  readonly sinkTable?: dynamodb.ITable;

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

  // ---- failures and alarms

  /** Where failed invocations (and undeliverable scheduled events) go. @default a new SQS queue, SSE, TLS only, 14 days */
  readonly failureQueue?: sqs.IQueue;
  /** CloudWatch namespace of the handler's metrics. @default 'Sluice' */
  readonly metricsNamespace?: string;
  /** Set false to create no alarms. @default true */
  readonly createAlarms?: boolean;
  /** Actions (e.g. an SNS topic) for every alarm. @default none */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
  /** Failed invocations per schedule interval that raise "run failed". @default 1 */
  readonly runFailedAlarmThreshold?: number;
  /** Consecutive runs that stop at their deadline with backlog left before "falling behind". 1 to 96. @default 2 */
  readonly fallingBehindAlarmRuns?: number;
  /** Minutes without a single input row before "no input"; at least the schedule interval, at most 1440. @default 60 */
  readonly noInputAlarmMinutes?: number;
  /** State rows above which "state rows growing" fires. @default 1_000_000 */
  readonly stateRowsAlarmThreshold?: number;
  /** Late rows dropped per schedule interval above which "late rows dropped" fires. @default 0 */
  readonly lateRowsAlarmThreshold?: number;

  /** For the created table, bucket, stream and log group. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
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
  readonly sourceType: PipelineSourceType;
  readonly sinkType: PipelineSinkType;
  readonly checkpointPrefix: string;
  readonly landingPrefix: string;
  readonly sinkPrefix: string;
  readonly deadLetterPrefix: string;
  readonly progressRetentionDays: number;
  readonly streamRetentionHours: number;
  readonly namespace: string;
  readonly runFailedThreshold: number;
  readonly fallingBehindRuns: number;
  readonly noInputMinutes: number;
  readonly stateRowsThreshold: number;
  readonly lateRowsThreshold: number;
}

/** An S3 location the function uses, with what it may do there. */
interface S3Grant {
  readonly what: string;
  readonly bucket: s3.IBucket;
  readonly prefix: string;
  readonly objectActions: readonly string[];
  readonly list: boolean;
  readonly kms: readonly string[];
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
  /** The created bucket holding every S3 location not given a bucket (undefined when none needed). */
  readonly pipelineBucket?: s3.Bucket;
  readonly sourceStream?: kinesis.IStream;
  readonly landingBucket?: s3.IBucket;
  readonly landingPrefix?: string;
  readonly sinkBucket?: s3.IBucket;
  readonly sinkPrefix?: string;
  readonly sinkTable?: dynamodb.ITable;
  readonly deadLetterBucket: s3.IBucket;
  readonly deadLetterPrefix: string;
  readonly pipelineName: string;
  readonly metricsNamespace: string;
  readonly leaseDurationSeconds: number;
  readonly scheduleInterval: Duration;
  readonly alarms: Partial<Record<'runFailed' | 'fallingBehind' | 'noInput' | 'stateRowsGrowing' | 'lateRowsDropped' | 'failureQueueNotEmpty', cloudwatch.Alarm>>;
  /** Size of the bundled index.js in bytes, when bundling ran during this synth. */
  readonly bundleSizeBytes?: number;

  constructor(scope: Construct, id: string, props: AvailableNowPipelineProps = {}) {
    super(scope, id);
    const r = resolveProps(this, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.pipelineName = r.pipelineName;
    this.metricsNamespace = r.namespace;
    this.leaseDurationSeconds = r.leaseSeconds;
    this.scheduleInterval = Duration.seconds(r.intervalSeconds);
    this.checkpointPrefix = r.checkpointPrefix;

    // ---- storage: one created bucket for every S3 location without a bucket of its own
    const needsPipelineBucket =
      !props.checkpointBucket || (r.sourceType === 's3' && !props.landingBucket) || (r.sinkType === 's3' && !props.sinkBucket);
    if (needsPipelineBucket) {
      this.pipelineBucket = new s3.Bucket(this, 'Bucket', {
        encryption: s3.BucketEncryption.S3_MANAGED,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        removalPolicy,
        lifecycleRules: [
          ...(!props.checkpointBucket
            ? [{ id: 'expire-old-progress', prefix: `${r.checkpointPrefix}/progress/`, expiration: Duration.days(r.progressRetentionDays) }]
            : []),
          { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
        ],
      });
    }
    const pipelineBucket = () => this.pipelineBucket!;
    this.checkpointBucket = props.checkpointBucket ?? pipelineBucket();

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

    let sourceUri: string;
    if (r.sourceType === 'kinesis') {
      this.sourceStream =
        props.sourceStream ??
        new kinesis.Stream(this, 'SourceStream', {
          streamMode: kinesis.StreamMode.ON_DEMAND,
          encryption: kinesis.StreamEncryption.MANAGED,
          retentionPeriod: Duration.hours(r.streamRetentionHours),
          removalPolicy,
        });
      sourceUri = `kinesis://${this.sourceStream.streamName}`;
    } else {
      this.landingBucket = props.landingBucket ?? pipelineBucket();
      this.landingPrefix = r.landingPrefix;
      sourceUri = `s3://${this.landingBucket.bucketName}/${r.landingPrefix}`;
    }

    let sinkUri: string;
    if (r.sinkType === 'dynamodb') {
      this.sinkTable = props.sinkTable!;
      sinkUri = `dynamodb://${this.sinkTable.tableName}`;
    } else {
      this.sinkBucket = props.sinkBucket ?? pipelineBucket();
      this.sinkPrefix = r.sinkPrefix;
      sinkUri = `s3://${this.sinkBucket.bucketName}/${r.sinkPrefix}`;
    }

    checkNoOverlap(this, r, {
      checkpoint: this.checkpointBucket,
      landing: this.landingBucket,
      sink: this.sinkBucket,
      deadLetter: props.deadLetterBucket ?? this.checkpointBucket,
    });

    this.failureQueue =
      props.failureQueue ??
      new sqs.Queue(this, 'FailureQueue', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });

    // ---- the function
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH, removalPolicy });
    // Our own role, without AWSLambdaBasicExecutionRole (whose logs:* actions are on Resource "*"):
    // the function writes only to its own log group.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sluice pipeline ${r.pipelineName}: least-privilege role of its scheduled run`,
    });
    this.logGroup.grantWrite(this.role);

    this.deadLetterBucket = props.deadLetterBucket ?? this.checkpointBucket;
    this.deadLetterPrefix = r.deadLetterPrefix;

    this.function = new nodejs.NodejsFunction(this, 'Function', {
      entry: r.entry,
      handler: r.handler,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: props.architecture ?? lambda.Architecture.ARM_64,
      memorySize: r.memoryMiB,
      timeout: Duration.seconds(r.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      description: `sluice availableNow run of ${r.pipelineName}, every ${r.intervalSeconds / 60} min`,
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
      environment: {
        ...(props.environment ?? {}),
        SLUICE_CHECKPOINT_URI: `s3://${this.checkpointBucket.bucketName}/${r.checkpointPrefix}`,
        SLUICE_STATE_TABLE: this.stateTable.tableName,
        SLUICE_SOURCE_URI: sourceUri,
        SLUICE_SINK_URI: sinkUri,
        SLUICE_DEAD_LETTER_URI: `s3://${this.deadLetterBucket.bucketName}/${r.deadLetterPrefix}`,
        ...(props.keepLateRows ? { SLUICE_KEEP_LATE_ROWS: 'true' } : {}),
        SLUICE_LEASE_SECONDS: String(r.leaseSeconds),
        SLUICE_METRICS_NAMESPACE: r.namespace,
        SLUICE_PIPELINE_NAME: r.pipelineName,
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        minify: LAMBDA_BUNDLING.minify,
        sourceMap: LAMBDA_BUNDLING.sourceMap,
        target: LAMBDA_BUNDLING.target,
        format: nodejs.OutputFormat.CJS,
        externalModules: [...LAMBDA_BUNDLING.externalModules],
      },
    });
    this.bundleSizeBytes = recordBundleSize(this, this.function);

    // ---- least-privilege grants
    const s3Grants: S3Grant[] = [
      {
        what: 'checkpoint',
        bucket: this.checkpointBucket,
        prefix: r.checkpointPrefix,
        objectActions: GRANTED_ACTIONS.checkpointObjects,
        list: true,
        kms: ['kms:Decrypt', 'kms:GenerateDataKey'],
      },
    ];
    if (this.landingBucket) {
      s3Grants.push({ what: 'landing', bucket: this.landingBucket, prefix: r.landingPrefix, objectActions: GRANTED_ACTIONS.landingObjects, list: true, kms: ['kms:Decrypt'] });
    }
    if (this.sinkBucket) {
      s3Grants.push({ what: 'sink', bucket: this.sinkBucket, prefix: r.sinkPrefix, objectActions: GRANTED_ACTIONS.sinkObjects, list: false, kms: ['kms:GenerateDataKey'] });
    }
    s3Grants.push({
      what: 'dead letters',
      bucket: this.deadLetterBucket,
      prefix: r.deadLetterPrefix,
      objectActions: GRANTED_ACTIONS.deadLetterObjects,
      list: false,
      kms: ['kms:GenerateDataKey'],
    });
    for (const g of s3Grants) grantS3(this.role, g);

    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'StateAndLease', actions: [...GRANTED_ACTIONS.stateTable], resources: [this.stateTable.tableArn] }),
    );
    this.stateTable.encryptionKey?.grantEncryptDecrypt(this.role);
    if (this.sinkTable) {
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SinkTable', actions: [...GRANTED_ACTIONS.sinkTable], resources: [this.sinkTable.tableArn] }));
      this.sinkTable.encryptionKey?.grantEncryptDecrypt(this.role);
    }
    if (this.sourceStream) {
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'SourceStream', actions: [...GRANTED_ACTIONS.stream], resources: [this.sourceStream.streamArn] }));
      this.sourceStream.encryptionKey?.grantDecrypt(this.role);
    }

    // ---- the schedule
    this.rule = new events.Rule(this, 'Schedule', {
      description: `starts an availableNow run of sluice pipeline ${r.pipelineName}`,
      schedule: events.Schedule.rate(Duration.minutes(r.intervalSeconds / 60)),
      enabled: props.scheduleEnabled ?? true,
    });
    this.rule.addTarget(
      new targets.LambdaFunction(this.function, {
        // EventBridge's own delivery (the async Invoke call) rarely fails: Lambda queues the
        // event even while the function is busy. When it does, the event goes to the same queue.
        deadLetterQueue: this.failureQueue,
        retryAttempts: 2,
        maxEventAge: Duration.seconds(r.maxEventAgeSeconds),
      }),
    );

    // ---- alarms
    this.alarms = props.createAlarms === false ? {} : this.createAlarms(r, props.alarmActions ?? []);
  }

  /**
   * A metric from the handler's summary line (EMF) for this pipeline, e.g. for a dashboard:
   * RowsIn, RowsOut, Batches, BacklogLeft, StateRows, DroppedByWatermark, DeadLetters, LeaseHeld,
   * Runs, RunDurationMs. Default statistic Sum, default period the schedule interval.
   */
  metric(metricName: string, options: { statistic?: string; period?: Duration } = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName,
      dimensionsMap: { Pipeline: this.pipelineName },
      statistic: options.statistic ?? cloudwatch.Stats.SUM,
      period: options.period ?? this.scheduleInterval,
    });
  }

  private createAlarms(r: Resolved, actions: cloudwatch.IAlarmAction[]): AvailableNowPipeline['alarms'] {
    const period = Duration.seconds(r.intervalSeconds);
    const name = r.pipelineName;
    const alarms: AvailableNowPipeline['alarms'] = {
      runFailed: new cloudwatch.Alarm(this, 'RunFailedAlarm', {
        alarmDescription: `sluice ${name}: a scheduled run failed (its event is in the failure queue; the log line "run-failed" says whether it is retriable)`,
        metric: this.function.metricErrors({ period, statistic: cloudwatch.Stats.SUM }),
        threshold: r.runFailedThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      fallingBehind: new cloudwatch.Alarm(this, 'FallingBehindAlarm', {
        alarmDescription: `sluice ${name}: ${r.fallingBehindRuns} runs in a row stopped at their deadline with backlog left; raise lambdaTimeoutSeconds or memory, or the rate limits`,
        metric: this.metric('BacklogLeft', { statistic: cloudwatch.Stats.MAXIMUM, period }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: r.fallingBehindRuns,
        datapointsToAlarm: r.fallingBehindRuns,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      noInput: new cloudwatch.Alarm(this, 'NoInputAlarm', {
        alarmDescription: `sluice ${name}: no input row for ${r.noInputMinutes} minutes (or no run reported at all)`,
        metric: this.metric('RowsIn', { statistic: cloudwatch.Stats.SUM, period: Duration.minutes(r.noInputMinutes) }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        // No summary line at all (the schedule stopped, every run failed) is no input too.
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      }),
      stateRowsGrowing: new cloudwatch.Alarm(this, 'StateRowsAlarm', {
        alarmDescription: `sluice ${name}: more than ${r.stateRowsThreshold} state rows; check the watermark advances (event times, withWatermark delay) so old state is evicted`,
        metric: this.metric('StateRows', { statistic: cloudwatch.Stats.MAXIMUM, period }),
        threshold: r.stateRowsThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      lateRowsDropped: new cloudwatch.Alarm(this, 'LateRowsAlarm', {
        alarmDescription: `sluice ${name}: more than ${r.lateRowsThreshold} rows per run arrived behind the watermark and were dropped`,
        metric: this.metric('DroppedByWatermark', { statistic: cloudwatch.Stats.SUM, period }),
        threshold: r.lateRowsThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      failureQueueNotEmpty: new cloudwatch.Alarm(this, 'FailureQueueAlarm', {
        alarmDescription: `sluice ${name}: failed or undelivered scheduled events wait in the failure queue`,
        metric: this.failureQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };
    for (const alarm of Object.values(alarms)) if (alarm) alarm.addAlarmAction(...actions);
    return alarms;
  }
}

// ---------------------------------------------------------------- grants

/**
 *  objects:  <actions> on arn:aws:s3:::<bucket>/<prefix>/*
 *  list:     s3:ListBucket on arn:aws:s3:::<bucket>, only for keys under <prefix>/
 */
function grantS3(role: iam.Role, g: S3Grant): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: [...g.objectActions], resources: [g.bucket.arnForObjects(g.prefix === '' ? '*' : `${g.prefix}/*`)] }),
  );
  if (g.list) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...GRANTED_ACTIONS.list],
        resources: [g.bucket.bucketArn],
        ...(g.prefix === '' ? {} : { conditions: { StringLike: { 's3:prefix': [`${g.prefix}/*`] } } }),
      }),
    );
  }
  if (g.bucket.encryptionKey && g.kms.length > 0) g.bucket.encryptionKey.grant(role, ...g.kms);
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

function fail(scope: Construct, message: string): never {
  throw new Error(`AvailableNowPipeline ${scope.node.path}: ${message}`);
}

function wholeNumber(scope: Construct, name: string, value: number, min: number, max: number, fix: string): number {
  if (!Number.isInteger(value) || value < min || value > max) fail(scope, `${name} (${value}) must be a whole number from ${min} to ${max}: ${fix}`);
  return value;
}

function cleanPrefix(scope: Construct, name: string, value: string): string {
  const p = value.replace(/^\/+|\/+$/g, '');
  if (p === '' || /[*?]/.test(p) || p.includes('//')) {
    fail(scope, `${name} ${JSON.stringify(value)} must be a non-empty key prefix without wildcards or empty segments, e.g. "checkpoints/orders"`);
  }
  return p;
}

function resolveProps(scope: Construct, id: string, props: AvailableNowPipelineProps): Resolved {
  const entry = path.resolve(props.entry ?? DEFAULT_ENTRY);
  if (!fs.existsSync(entry)) fail(scope, `entry ${JSON.stringify(props.entry ?? entry)} does not exist: pass the path of a Lambda entry file, e.g. lambdas/windowed-totals.ts`);

  const stackName = Stack.of(scope).stackName;
  const pipelineName = props.pipelineName ?? (Token.isUnresolved(stackName) ? id : `${stackName}-${id}`).slice(0, 64);
  if (!NAME.test(pipelineName)) fail(scope, `pipelineName ${JSON.stringify(pipelineName)} must be 1 to 64 of A-Za-z0-9._-: pass pipelineName explicitly`);

  const interval = props.scheduleInterval ?? Duration.minutes(15);
  if (interval.isUnresolved()) fail(scope, 'scheduleInterval must be a concrete duration, e.g. Duration.minutes(15)');
  const intervalSeconds = interval.toSeconds();
  if (intervalSeconds < 60 || intervalSeconds % 60 !== 0) {
    fail(scope, `scheduleInterval (${intervalSeconds} s) must be a whole number of minutes, at least 1: EventBridge rate() expressions count minutes; use e.g. Duration.minutes(15)`);
  }

  // Default: 10 minutes, or a minute less than a shorter interval, so that the lease (timeout + 60)
  // has expired by the next tick even after a run that was killed at its timeout.
  const timeoutSeconds = wholeNumber(scope, 'lambdaTimeoutSeconds', props.lambdaTimeoutSeconds ?? Math.max(30, Math.min(600, intervalSeconds - 60)), 1, 900, 'Lambda runs at most 15 minutes (900 s); a longer run continues on the next tick');
  if (timeoutSeconds > intervalSeconds) {
    fail(
      scope,
      `scheduleInterval (${intervalSeconds / 60} min) is more frequent than lambdaTimeoutSeconds (${timeoutSeconds} s): every tick would queue behind a run still going. Lower lambdaTimeoutSeconds to at most ${intervalSeconds}, or lengthen scheduleInterval to at least ${Math.ceil(timeoutSeconds / 60)} min`,
    );
  }
  const memoryMiB = wholeNumber(scope, 'lambdaMemoryMiB', props.lambdaMemoryMiB ?? 1024, 128, 10240, 'Lambda memory ranges from 128 to 10240 MiB');

  const leaseSeconds = wholeNumber(scope, 'leaseDurationSeconds', props.leaseDurationSeconds ?? timeoutSeconds + 60, 1, 86_400, 'give the lease in seconds, e.g. lambdaTimeoutSeconds + 60');
  if (leaseSeconds < timeoutSeconds) {
    fail(
      scope,
      `leaseDurationSeconds (${leaseSeconds}) is shorter than lambdaTimeoutSeconds (${timeoutSeconds}): a run could lose its lease to the next tick while it still writes. Set leaseDurationSeconds to at least ${timeoutSeconds} (the default is the timeout + 60)`,
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
    fail(scope, `retryAttempts (${retryAttempts}) must be 0 or 1: the next scheduled tick retries a failed run from its checkpoint; more immediate retries only repeat a permanent failure`);
  }
  const maxEventAgeSeconds = wholeNumber(scope, 'maxEventAgeSeconds', props.maxEventAgeSeconds ?? Math.max(60, intervalSeconds), 60, 21_600, 'Lambda keeps an async event 60 s to 6 h');

  const sourceType: PipelineSourceType = props.sourceType ?? (props.sourceStream ? 'kinesis' : 's3');
  if (sourceType !== 's3' && sourceType !== 'kinesis') fail(scope, `sourceType ${JSON.stringify(sourceType)} must be 's3' or 'kinesis'`);
  if (sourceType === 's3' && props.sourceStream) fail(scope, `sourceType is 's3' but sourceStream is set: set sourceType: 'kinesis' to read the stream, or drop sourceStream`);
  if (sourceType === 'kinesis' && (props.landingBucket || props.landingPrefix !== undefined)) {
    fail(scope, `sourceType is 'kinesis' but landingBucket/landingPrefix is set: drop them, or set sourceType: 's3' to read the landing prefix`);
  }
  if (sourceType === 's3' && props.sourceStreamRetentionHours !== undefined) fail(scope, `sourceStreamRetentionHours is set but sourceType is 's3': drop it, or set sourceType: 'kinesis'`);
  const streamRetentionHours = wholeNumber(scope, 'sourceStreamRetentionHours', props.sourceStreamRetentionHours ?? 24, 24, 8760, 'Kinesis keeps records 24 to 8760 hours');

  const sinkType: PipelineSinkType = props.sinkType ?? (props.sinkTable ? 'dynamodb' : 's3');
  if (sinkType !== 's3' && sinkType !== 'dynamodb') fail(scope, `sinkType ${JSON.stringify(sinkType)} must be 's3' or 'dynamodb'`);
  if (sinkType === 'dynamodb' && !props.sinkTable) fail(scope, `sinkType is 'dynamodb' but no sinkTable is given: pass the table the sink writes (its layout belongs to the query), e.g. dynamodb.Table.fromTableName(this, 'Sink', 'totals')`);
  if (sinkType === 's3' && props.sinkTable) fail(scope, `sinkType is 's3' but sinkTable is set: set sinkType: 'dynamodb', or drop sinkTable`);
  if (sinkType === 'dynamodb' && (props.sinkBucket || props.sinkPrefix !== undefined)) fail(scope, `sinkType is 'dynamodb' but sinkBucket/sinkPrefix is set: drop them, or set sinkType: 's3'`);

  const checkpointPrefix = cleanPrefix(scope, 'checkpointPrefix', props.checkpointPrefix ?? `checkpoints/${pipelineName}`);
  const landingPrefix = cleanPrefix(scope, 'landingPrefix', props.landingPrefix ?? `landing/${pipelineName}`);
  const sinkPrefix = cleanPrefix(scope, 'sinkPrefix', props.sinkPrefix ?? `output/${pipelineName}`);
  const deadLetterPrefix = cleanPrefix(scope, 'deadLetterPrefix', props.deadLetterPrefix ?? `dead-letter/${pipelineName}`);
  if (props.checkpointBucket && props.progressRetentionDays !== undefined) {
    fail(scope, `progressRetentionDays applies only to the created bucket, but checkpointBucket is your own: add a lifecycle rule for "${checkpointPrefix}/progress/" on that bucket, and drop progressRetentionDays`);
  }
  const progressRetentionDays = wholeNumber(scope, 'progressRetentionDays', props.progressRetentionDays ?? 30, 1, 3650, 'keep progress reports 1 day to 10 years');

  const namespace = props.metricsNamespace ?? 'Sluice';
  if (!/^[A-Za-z0-9._\-/#:]{1,255}$/.test(namespace) || namespace.startsWith('AWS/')) {
    fail(scope, `metricsNamespace ${JSON.stringify(namespace)} is not a custom CloudWatch namespace: use letters, digits and . _ - / # :, not starting with "AWS/"`);
  }

  if (props.environment) {
    const owned = Object.keys(props.environment).filter((k) => (OWNED_ENV as readonly string[]).includes(k));
    if (owned.length > 0) fail(scope, `environment sets ${owned.join(', ')}, which the construct sets from its props: use the props (stateTable, checkpointPrefix, sourceStream, ...) instead`);
  }

  const runFailedThreshold = wholeNumber(scope, 'runFailedAlarmThreshold', props.runFailedAlarmThreshold ?? 1, 1, 1_000_000, 'count failed invocations per schedule interval, e.g. 1');
  const fallingBehindRuns = wholeNumber(scope, 'fallingBehindAlarmRuns', props.fallingBehindAlarmRuns ?? 2, 1, Math.floor(86_400 / intervalSeconds), 'CloudWatch evaluates at most one day of periods');
  const noInputMinutes = wholeNumber(scope, 'noInputAlarmMinutes', props.noInputAlarmMinutes ?? Math.max(60, intervalSeconds / 60), 1, 1440, 'CloudWatch periods last at most a day');
  if (noInputMinutes * 60 < intervalSeconds) {
    fail(scope, `noInputAlarmMinutes (${noInputMinutes}) is shorter than scheduleInterval (${intervalSeconds / 60} min): the alarm would fire between runs. Set it to at least ${intervalSeconds / 60}`);
  }
  const stateRowsThreshold = wholeNumber(scope, 'stateRowsAlarmThreshold', props.stateRowsAlarmThreshold ?? 1_000_000, 1, Number.MAX_SAFE_INTEGER, 'give a row count');
  const lateRowsThreshold = wholeNumber(scope, 'lateRowsAlarmThreshold', props.lateRowsAlarmThreshold ?? 0, 0, Number.MAX_SAFE_INTEGER, 'give a row count; 0 alarms on any dropped row');

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
    sourceType,
    sinkType,
    checkpointPrefix,
    landingPrefix,
    sinkPrefix,
    deadLetterPrefix,
    progressRetentionDays,
    streamRetentionHours,
    namespace,
    runFailedThreshold,
    fallingBehindRuns,
    noInputMinutes,
    stateRowsThreshold,
    lateRowsThreshold,
  };
}

/** Prefixes in one bucket must not nest: the source would read the checkpoint, or its own output. */
function checkNoOverlap(
  scope: Construct,
  r: Resolved,
  buckets: { checkpoint: s3.IBucket; landing?: s3.IBucket; sink?: s3.IBucket; deadLetter: s3.IBucket },
): void {
  const locs: Array<{ name: string; bucket?: s3.IBucket; prefix: string | undefined }> = [
    { name: 'checkpointPrefix', bucket: buckets.checkpoint, prefix: r.checkpointPrefix },
    { name: 'landingPrefix', bucket: buckets.landing, prefix: r.sourceType === 's3' ? r.landingPrefix : undefined },
    { name: 'sinkPrefix', bucket: buckets.sink, prefix: r.sinkType === 's3' ? r.sinkPrefix : undefined },
    { name: 'deadLetterPrefix', bucket: buckets.deadLetter, prefix: r.deadLetterPrefix },
  ];
  const sameBucket = (a: s3.IBucket, b: s3.IBucket) =>
    a === b || (!Token.isUnresolved(a.bucketName) && !Token.isUnresolved(b.bucketName) && a.bucketName === b.bucketName);
  const nests = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  for (let i = 0; i < locs.length; i++) {
    for (let j = i + 1; j < locs.length; j++) {
      const a = locs[i];
      const b = locs[j];
      if (!a.bucket || !b.bucket || a.prefix === undefined || b.prefix === undefined) continue;
      if (sameBucket(a.bucket, b.bucket) && nests(a.prefix, b.prefix)) {
        fail(scope, `${a.name} "${a.prefix}" and ${b.name} "${b.prefix}" overlap in the same bucket: give each its own prefix, e.g. checkpoints/<name>, landing/<name>, output/<name>`);
      }
    }
  }
}
