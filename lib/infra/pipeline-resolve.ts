/**
 * The AvailableNowPipeline construct's props checked and resolved, once, at synth
 * (available-now-pipeline.ts): defaults applied, every refusal an error that says what to pass.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Annotations, Duration, Stack, Token, type aws_s3 as s3 } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { QueryPlan } from '../engine/plan/types';
import { DEFAULT_METRICS_NAMESPACE } from '../aws/lambda/emf';
import type { ResolvedAlarms } from './alarm-props';
import { resolvePipelineAlarms } from './alarm-resolve';
import { cleanPrefix, invalid, wholeNumber, type S3Place } from './binding';
import { DEFAULT_ENTRY } from './lambda-bundling';
import type { AvailableNowPipelineProps } from './pipeline-props';
import { resolveParallelism, type ResolvedParallelism } from './scale-out';
import { isSqlEntry, SQL_ENTRY, SQL_TASK_ENTRY, sqlQueryPlan } from './sql-entry';

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
  'SLUICE_QUERY_NAME',
  'SLUICE_LOG_VALUES',
] as const;

/** Resolved values, after defaults and validation. */
export interface Resolved {
  readonly entry: string;
  /** The query's .sql file, when `entry` named one (then `entry` is lambdas/sql-query.ts). */
  readonly sqlFile?: string;
  readonly handler: string;
  readonly pipelineName: string;
  /** The query's name: with the checkpoint, its namespace in the state table. */
  readonly queryName: string;
  /** The query's plan, when known at synth (`query`, or a .sql entry compiled): the sink checks its output columns. */
  readonly plan?: QueryPlan;
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
  /** `alarmEmail`, checked; undefined when not given. */
  readonly alarmEmail?: string;
}

// ---------------------------------------------------------------- validation

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** A query name, as `.queryName()` accepts it (lib/engine/query/frame.ts); never an IAM wildcard. */
const QUERY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function resolveProps(scope: Construct, id: string, props: AvailableNowPipelineProps): Resolved {
  const entry = path.resolve(props.entry ?? DEFAULT_ENTRY);
  if (!fs.existsSync(entry))
    invalid(scope, `entry ${JSON.stringify(props.entry ?? entry)} does not exist: pass the path of a Lambda entry file, e.g. lambdas/windowed-totals.ts`, {
      entry: props.entry,
    });

  const stackName = Stack.of(scope).stackName;
  const pipelineName = props.pipelineName ?? (Token.isUnresolved(stackName) ? id : `${stackName}-${id}`).slice(0, 64);
  if (!NAME.test(pipelineName))
    invalid(scope, `pipelineName ${JSON.stringify(pipelineName)} must be 1 to 64 of A-Za-z0-9._-: pass pipelineName explicitly`, { pipelineName });
  // The default entry runs the windowed-totals example, which names itself by its output mode;
  // a .sql query is compiled now (an error fails the synth) and names itself with SET queryName.
  let sqlPlan: QueryPlan | undefined;
  if (isSqlEntry(entry)) {
    try {
      sqlPlan = sqlQueryPlan(entry);
    } catch (e) {
      invalid(scope, `entry ${JSON.stringify(props.entry)}: ${(e as Error).message}`, { entry: props.entry });
    }
  }
  const sqlName = sqlPlan?.name;
  const exampleQuery =
    entry === path.resolve(DEFAULT_ENTRY) ? `windowed-totals-${props.environment?.SLUICE_OUTPUT_MODE?.trim().toLowerCase() || 'append'}` : sqlName;
  const planName = props.query?.name;
  if (props.query !== undefined && (typeof planName !== 'string' || !('stages' in props.query)))
    invalid(scope, 'query is not a query plan: pass the plan the entry runs, readStream...writeStream...plan()', {});
  if (props.queryName !== undefined && planName !== undefined && props.queryName !== planName)
    invalid(
      scope,
      `queryName ${JSON.stringify(props.queryName)} is not the name of the query given (${JSON.stringify(planName)}): the Lambda refuses a query of another name; leave queryName out or make them the same`,
      { queryName: props.queryName, planName },
    );
  const queryName = props.queryName ?? planName ?? exampleQuery ?? pipelineName;
  if (!QUERY_NAME.test(queryName)) {
    invalid(
      scope,
      `queryName ${JSON.stringify(queryName)}${props.queryName === undefined ? ' (from pipelineName)' : ''} is not a query name: pass the name the query gives itself with .queryName(...), 1 to 128 of A-Za-z0-9._- starting with a letter or digit`,
      { queryName },
    );
  }

  const interval = props.scheduleInterval ?? Duration.minutes(15);
  if (interval.isUnresolved()) invalid(scope, 'scheduleInterval is a token, but it must be a concrete duration: pass e.g. Duration.minutes(15)');
  const intervalSeconds = interval.toSeconds();
  if (intervalSeconds < 60 || intervalSeconds % 60 !== 0) {
    invalid(
      scope,
      `scheduleInterval (${intervalSeconds} s) must be a whole number of minutes, at least 1, as EventBridge rate() counts minutes: use e.g. Duration.minutes(15)`,
      { intervalSeconds },
    );
  }

  // Default: 10 minutes, or a minute less than a shorter interval, so that the lease (timeout + 60)
  // has expired by the next tick even after a run that was killed at its timeout.
  const timeoutSeconds = wholeNumber(
    scope,
    'lambdaTimeoutSeconds',
    props.lambdaTimeoutSeconds ?? Math.max(30, Math.min(600, intervalSeconds - 60)),
    1,
    900,
    'Lambda runs at most 15 minutes (900 s); a longer run continues on the next tick',
  );
  if (timeoutSeconds > intervalSeconds) {
    invalid(
      scope,
      `scheduleInterval (${intervalSeconds / 60} min) is more frequent than lambdaTimeoutSeconds (${timeoutSeconds} s), so ticks would queue behind a running run: lower lambdaTimeoutSeconds to at most ${intervalSeconds}, or lengthen scheduleInterval to at least ${Math.ceil(timeoutSeconds / 60)} min`,
      { intervalSeconds, timeoutSeconds },
    );
  }
  const memoryMiB = wholeNumber(scope, 'lambdaMemoryMiB', props.lambdaMemoryMiB ?? 1024, 128, 10240, 'Lambda memory ranges from 128 to 10240 MiB');

  const leaseSeconds = wholeNumber(
    scope,
    'leaseDurationSeconds',
    props.leaseDurationSeconds ?? timeoutSeconds + 60,
    1,
    86_400,
    'give the lease in seconds, e.g. lambdaTimeoutSeconds + 60',
  );
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
    invalid(
      scope,
      `retryAttempts (${retryAttempts}) must be 0 or 1, as the next tick retries a failed run from its checkpoint: use 0, or 1 for transient failures on a long interval`,
      { retryAttempts },
    );
  }
  const maxEventAgeSeconds = wholeNumber(
    scope,
    'maxEventAgeSeconds',
    props.maxEventAgeSeconds ?? Math.max(60, intervalSeconds),
    60,
    21_600,
    'Lambda keeps an async event 60 s to 6 h',
  );

  const checkpointPrefix = cleanPrefix(scope, 'checkpointPrefix', props.checkpointPrefix ?? `checkpoints/${pipelineName}`);
  const deadLetterPrefix = cleanPrefix(scope, 'deadLetterPrefix', props.deadLetterPrefix ?? `dead-letter/${pipelineName}`);
  if (props.checkpointBucket && props.progressRetentionDays !== undefined) {
    invalid(
      scope,
      `progressRetentionDays (${props.progressRetentionDays}) applies only to the created bucket, not your checkpointBucket: add a lifecycle rule for "${checkpointPrefix}/progress/" on it instead`,
      { progressRetentionDays: props.progressRetentionDays },
    );
  }
  const progressRetentionDays = wholeNumber(
    scope,
    'progressRetentionDays',
    props.progressRetentionDays ?? 30,
    1,
    3650,
    'keep progress reports 1 day to 10 years',
  );
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
  const deadLetterRetentionDays = wholeNumber(
    scope,
    'deadLetterRetentionDays',
    props.deadLetterRetentionDays ?? 90,
    1,
    3650,
    'keep dead letters 1 day to 10 years',
  );
  const noncurrentVersionRetentionDays = wholeNumber(
    scope,
    'noncurrentVersionRetentionDays',
    props.noncurrentVersionRetentionDays ?? 30,
    1,
    3650,
    'keep old versions 1 day to 10 years',
  );

  const namespace = props.metricsNamespace ?? DEFAULT_METRICS_NAMESPACE;
  if (!/^[A-Za-z0-9._\-/#:]{1,255}$/.test(namespace) || namespace.startsWith('AWS/')) {
    invalid(
      scope,
      `metricsNamespace ${JSON.stringify(namespace)} is not a custom CloudWatch namespace: use letters, digits and . _ - / # :, not starting with "AWS/"`,
      { metricsNamespace: namespace },
    );
  }

  if (props.environment) {
    const owned = Object.keys(props.environment).filter((k) => (OWNED_ENV as readonly string[]).includes(k));
    if (owned.length > 0)
      invalid(
        scope,
        `environment sets ${owned.join(', ')}, which the construct sets from its props: use the props (stateTable, checkpointPrefix, source, sink, ...) instead`,
        { owned },
      );
  }

  const alarmEmail = props.alarmEmail === undefined ? undefined : checkAlarmEmail(scope, props.alarmEmail);
  if (props.createAlarms === false && (props.alarmEmail !== undefined || props.alarmTopic !== undefined)) {
    const given = props.alarmEmail !== undefined ? 'alarmEmail' : 'alarmTopic';
    invalid(scope, `createAlarms is false, yet ${given} says where alarms go: there would be none to send; drop ${given} or createAlarms: false`, {
      [given]: props.alarmEmail ?? props.alarmTopic?.node.path,
    });
  }
  if (props.createAlarms === false && props.alarms !== undefined) {
    invalid(scope, 'createAlarms is false, yet alarms sets thresholds: drop one of them (alarms: { <name>: false } turns a single alarm off)');
  }
  const tasksOf = (p: NonNullable<AvailableNowPipelineProps['parallelism']>) =>
    sqlName !== undefined ? { ...p, taskEntry: p.taskEntry ?? SQL_TASK_ENTRY } : p;
  const parallelism = props.parallelism ? resolveParallelism(scope, tasksOf(props.parallelism), { intervalSeconds, memoryMiB }) : undefined;
  if (parallelism && props.environment?.SLUICE_STATE_PARTITIONS !== undefined) {
    invalid(scope, 'environment sets SLUICE_STATE_PARTITIONS, which the construct sets from parallelism.statePartitions: drop it from environment', {
      SLUICE_STATE_PARTITIONS: props.environment.SLUICE_STATE_PARTITIONS,
    });
  }
  const alarms =
    props.createAlarms === false
      ? undefined
      : resolvePipelineAlarms(scope, props.alarms ?? {}, props, {
          intervalSeconds,
          timeoutSeconds,
          scheduled: props.scheduleEnabled ?? true,
          executionTimeoutSeconds: parallelism?.executionTimeoutSeconds,
        });
  if (props.dashboardName !== undefined && !/^[A-Za-z0-9_-]{1,255}$/.test(props.dashboardName)) {
    invalid(scope, `dashboardName ${JSON.stringify(props.dashboardName)} must be 1 to 255 of A-Za-z0-9_-, as CloudWatch requires: e.g. "sluice-orders"`, {
      dashboardName: props.dashboardName,
    });
  }

  return {
    entry: sqlName !== undefined ? SQL_ENTRY : entry,
    ...(sqlName !== undefined ? { sqlFile: entry } : {}),
    handler: props.handler ?? 'handler',
    pipelineName,
    queryName,
    ...(sqlPlan !== undefined || props.query !== undefined ? { plan: sqlPlan ?? props.query } : {}),
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
    alarmEmail,
  };
}

/**
 * One e-mail address, as SNS's email protocol takes it: local@domain with a dot in the domain, no
 * spaces, no list. A CDK token (e.g. a CfnParameter's value) is taken as it is: it has no value
 * at synth.
 */
const EMAIL = /^[^\s@,;<>"]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

function checkAlarmEmail(scope: Construct, value: string): string {
  if (Token.isUnresolved(value)) return value;
  if (typeof value !== 'string' || !EMAIL.test(value.trim())) {
    invalid(
      scope,
      `alarmEmail ${JSON.stringify(value)} is not one e-mail address (local-part@domain.tld, no spaces, no list): give one address, e.g. "oncall@example.com", or subscribe several to an SNS topic and pass it as alarmTopic`,
      { alarmEmail: value },
    );
  }
  return value.trim();
}

/** Prefixes in one bucket must not nest: the source would read the checkpoint, or its own output. */
export function checkNoOverlap(scope: Construct, locations: ReadonlyArray<{ readonly name: string; readonly place?: S3Place }>): void {
  const sameBucket = (a: s3.IBucket, b: s3.IBucket) =>
    a === b || (!Token.isUnresolved(a.bucketName) && !Token.isUnresolved(b.bucketName) && a.bucketName === b.bucketName);
  const nests = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  for (let i = 0; i < locations.length; i++) {
    for (let j = i + 1; j < locations.length; j++) {
      const a = locations[i];
      const b = locations[j];
      if (!a.place || !b.place) continue;
      if (sameBucket(a.place.bucket, b.place.bucket) && nests(a.place.prefix, b.place.prefix)) {
        invalid(
          scope,
          `${a.name} "${a.place.prefix}" and ${b.name} "${b.place.prefix}" overlap in the same bucket: give each its own prefix, e.g. checkpoints/<name>, landing/<name>, output/<name>`,
          {
            [a.name]: a.place.prefix,
            [b.name]: b.place.prefix,
          },
        );
      }
    }
  }
}
