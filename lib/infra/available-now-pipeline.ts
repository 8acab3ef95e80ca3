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
  aws_sns as sns,
  aws_sns_subscriptions as subscriptions,
  aws_sqs as sqs,
  aws_cloudwatch_actions as cwActions,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { METRIC_DIMENSION } from '../aws/lambda/emf';
import { stateKeyPatterns, stateNamespace } from '../aws/namespace';
import type { AlarmName } from './alarm-props';
import { createPipelineAlarms, type AlarmSources } from './alarms';
import { GRANTED_ACTIONS, grantS3, invalid, type PipelineDefaults, type S3Place } from './binding';
import { LAMBDA_BUNDLING } from './lambda-bundling';
import { sqlBundling } from './sql-entry';
import { acknowledge, acknowledgePrefixScopedObjects, acknowledgeRuntime } from './nag';
import type { AvailableNowPipelineProps } from './pipeline-props';
import { checkNoOverlap, resolveProps } from './pipeline-resolve';
import { ScaleOut } from './scale-out';
import { createPipelineDashboard } from './pipeline-dashboard';
import { PipelineSink } from './sinks';
import { PipelineSource } from './sources';

export type { AlarmName, LegacyAlarmProps, PipelineAlarmsProps } from './alarm-props';
export { STATE_GROWTH_EXPRESSION } from './alarms';
export { GRANTED_ACTIONS, type PipelineDefaults, type S3Place } from './binding';
export { NO_RETRY, ScaleOut, TASK_RETRY, type PipelineParallelism, type ResolvedParallelism } from './scale-out';
export {
  PipelineSink,
  outputColumnTypes,
  type BoundSink,
  type CsvSinkOptions,
  type FileSinkOptions,
  type GlueTableOptions,
  type ParquetSinkOptions,
} from './sinks';
export { PipelineSource, type BoundSource, type NewKinesisStreamOptions, type S3SourceOptions } from './sources';
export { PipelineStaticTable } from './static-tables';
export { DEFAULT_ENTRY, LAMBDA_BUNDLING } from './lambda-bundling';
export type { AvailableNowPipelineProps } from './pipeline-props';

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
  /** An S3 source in notification mode: the queue S3 notifies of new files, and its dead-letter queue. */
  readonly notificationQueue?: sqs.IQueue;
  readonly notificationDeadLetterQueue?: sqs.IQueue;
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
  /** The query's namespace in the state table (`<queryName>@<bucket>/<checkpointPrefix>`): the role reaches only its items. */
  readonly stateNamespace: string;
  readonly metricsNamespace: string;
  readonly leaseDurationSeconds: number;
  readonly scheduleInterval: Duration;
  /** The alarms that are on, by name (empty with createAlarms: false). */
  readonly alarms: Partial<Record<AlarmName, cloudwatch.Alarm>>;
  /** The topic every alarm notifies: `alarmTopic`, or the one created for `alarmEmail` (undefined with neither). */
  readonly alarmTopic?: sns.ITopic;
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
      lambdaTimeoutSeconds: r.timeoutSeconds,
      partitioned: r.parallelism !== undefined,
      ...(r.plan !== undefined ? { plan: r.plan } : {}),
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

    this.failureQueue = props.failureQueue ?? this.createFailureQueue();

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
    this.notificationQueue = source.notifications?.queue;
    this.notificationDeadLetterQueue = source.notifications?.deadLetterQueue;
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

    // Only this query's items: every key the Lambda (and the scale-out task Lambda, on this role)
    // reads or writes in the state table is the lease's or starts with the namespace (lib/aws/namespace.ts).
    // Each granted action names its keys (Scan is neither granted nor sent), so LeadingKeys is always set.
    this.stateNamespace = stateNamespace(r.queryName, { bucket: this.checkpointBucket.bucketName, prefix: r.checkpointPrefix });
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'StateAndLease',
        actions: [...GRANTED_ACTIONS.stateTable],
        resources: [this.stateTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': stateKeyPatterns(this.stateNamespace) } },
      }),
    );
    this.stateTable.encryptionKey?.grantEncryptDecrypt(this.role);
    if (sink.table && sameTable(sink.table, this.stateTable)) {
      Annotations.of(this).addWarningV2(
        'sluice:sink-table-is-state-table',
        `the DynamoDB sink writes to the state table ${this.stateTable.node.path}: its grant (SinkTable) is not scoped to this query's keys, so this role can reach every pipeline's state in it. Give the sink a table of its own`,
      );
    }

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
      ...(r.parallelism
        ? [{ name: 'the shuffle prefix (checkpointPrefix + "-shuffle")', place: { bucket: this.checkpointBucket, prefix: `${r.checkpointPrefix}-shuffle` } }]
        : []),
    ]);

    // ---- the function
    const environment: Record<string, string> = {
      ...(props.environment ?? {}),
      SLUICE_CHECKPOINT_URI: `s3://${this.checkpointBucket.bucketName}/${r.checkpointPrefix}`,
      SLUICE_STATE_TABLE: this.stateTable.tableName,
      SLUICE_SOURCE_URI: source.uri,
      ...(source.notifications ? { SLUICE_NOTIFICATION_QUEUE_URL: source.notifications.queue.queueUrl } : {}),
      ...(inputs.length ? { SLUICE_INPUT_URIS: inputs.map((i) => i.uri).join(',') } : {}),
      SLUICE_SINK_URI: sink.uri,
      SLUICE_DEAD_LETTER_URI: `s3://${this.deadLetterBucket.bucketName}/${r.deadLetterPrefix}`,
      ...(props.keepLateRows ? { SLUICE_KEEP_LATE_ROWS: 'true' } : {}),
      SLUICE_LEASE_SECONDS: String(r.leaseSeconds),
      SLUICE_METRICS_NAMESPACE: r.namespace,
      SLUICE_PIPELINE_NAME: r.pipelineName,
      SLUICE_QUERY_NAME: r.queryName,
      SLUICE_LOG_VALUES: props.logDataValues ? 'true' : 'false',
      NODE_OPTIONS: '--enable-source-maps',
    };
    const bundling: nodejs.BundlingOptions = {
      minify: LAMBDA_BUNDLING.minify,
      sourceMap: LAMBDA_BUNDLING.sourceMap,
      target: LAMBDA_BUNDLING.target,
      format: nodejs.OutputFormat.CJS,
      externalModules: [...LAMBDA_BUNDLING.externalModules],
      // a .sql query: its text bundled as the module lambdas/sql-query.ts imports (sql-entry.ts)
      ...(r.sqlFile ? sqlBundling(r.sqlFile) : {}),
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
    acknowledgeRuntime(this.function);

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

    acknowledgePrefixScopedObjects(this.role);
    // Created on first use, by any of the locations above.
    if (this.createdBucket) {
      acknowledge(
        this.createdBucket,
        ['AwsSolutions-S1'],
        'server access logs would need a second bucket per pipeline; the role is the only writer, S3 versioning keeps every overwritten object, and CloudTrail data events are the audit trail to turn on where one is required',
      );
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
      ...(source.notifications
        ? {
            notificationDeadLetters: (period: Duration) =>
              source.notifications!.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: cloudwatch.Stats.MAXIMUM }),
          }
        : {}),
      ...(this.scaleOut ? { execution: executionMetrics(this.scaleOut.stateMachine) } : {}),
    };
    // alarmTopic, or a topic created for alarmEmail: each alarm notifies it on ALARM and on OK.
    this.alarmTopic = props.alarmTopic ?? (r.alarmEmail !== undefined ? new sns.Topic(this, 'AlarmTopic', { enforceSSL: true }) : undefined);
    if (r.alarmEmail !== undefined) this.alarmTopic!.addSubscription(new subscriptions.EmailSubscription(r.alarmEmail));
    const topicAction = this.alarmTopic ? [new cwActions.SnsAction(this.alarmTopic)] : [];
    this.alarms = r.alarms ? createPipelineAlarms(this, r.alarms, sources, [...(props.alarmActions ?? []), ...topicAction], topicAction) : {};
    if (props.createDashboard !== false) this.dashboard = createPipelineDashboard(this, sources, this.alarms, props.dashboardName);
  }

  private createFailureQueue(): sqs.Queue {
    const queue = new sqs.Queue(this, 'FailureQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      queue,
      ['AwsSolutions-SQS3'],
      "it is itself the dead-letter queue: the functions' on-failure destination and the schedule target's DLQ, which cdk-nag does not see through a destination; a queue behind it would only move the alarm",
    );
    return queue;
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

/** The same table object, or two references to one concrete table name. */
function sameTable(a: dynamodb.ITable, b: dynamodb.ITable): boolean {
  return a === b || (!Token.isUnresolved(a.tableName) && a.tableName === b.tableName);
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
