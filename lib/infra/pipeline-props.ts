/** The props of the AvailableNowPipeline construct (available-now-pipeline.ts). */
import type {
  Duration,
  RemovalPolicy,
  aws_cloudwatch as cloudwatch,
  aws_dynamodb as dynamodb,
  aws_lambda as lambda,
  aws_logs as logs,
  aws_s3 as s3,
  aws_sns as sns,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import type { QueryPlan } from '../engine/plan/types';
import type { LegacyAlarmProps, PipelineAlarmsProps } from './alarm-props';
import type { PipelineParallelism } from './scale-out';
import type { PipelineSink } from './sinks';
import type { PipelineStaticTable } from './static-tables';
import type { PipelineSource } from './sources';

export interface AvailableNowPipelineProps extends LegacyAlarmProps {
  // ---- the query

  /**
   * The Lambda entry file: a module exporting a handler built with `createScheduledHandler`
   * (lib/aws/lambda/handler.ts), or a query written in SQL (a `.sql` file, docs/sql.md), which the
   * construct compiles at synth and bundles with lambdas/sql-query.ts.
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
   * The name of the query the Lambda runs (its `.queryName(...)`). The query's state and lease live
   * in the state table under `<queryName>@<checkpoint bucket>/<checkpointPrefix>`
   * (lib/aws/namespace.ts), and the role may touch only those items (a `dynamodb:LeadingKeys`
   * condition), so pipelines sharing a `stateTable` cannot read or write each other's state. The
   * Lambda gets it as SLUICE_QUERY_NAME and refuses, before any request, a query of another name.
   * @default pipelineName; with the default `entry`, the example's `windowed-totals-<output mode>`;
   * with a .sql `entry`, its `SET queryName`
   */
  readonly queryName?: string;
  /**
   * The query the entry runs, built in the CDK app (`query: windowedTotals()`), so that `cdk synth`
   * builds it and fails on what the query API refuses (an unknown column, a Spark SQL expression
   * that does not parse or type, an append-mode aggregation without a watermark), as the Lambda
   * would at its first run; and its `.queryName(...)` is the default `queryName`. The Lambda still
   * builds its own from the entry: pass the plan the entry builds. A `.sql` entry is compiled at
   * synth without it.
   * @default none: the query is first built when the Lambda starts
   */
  readonly query?: QueryPlan;
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
   * An e-mail address that receives every alarm, when it fires and when it is OK again: the
   * construct creates an SNS topic (TLS only) with this address subscribed (AWS sends a
   * confirmation e-mail first; nothing arrives until it is confirmed). With `alarmTopic`, the
   * address is subscribed to that topic instead. A value that is not one address fails the synth.
   * @default none: without alarmEmail, alarmTopic or alarmActions the alarms notify nobody
   */
  readonly alarmEmail?: string;
  /**
   * An SNS topic you have that receives every alarm, when it fires and when it is OK again
   * (subscribe a pager, a chat hook or a mailbox to it yourself). The construct adds no topic.
   * @default none
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Each alarm's threshold, or `false` to turn it off (lib/infra/alarm-props.ts documents every one):
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
