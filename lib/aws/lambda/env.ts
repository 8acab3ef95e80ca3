/**
 * The sluice Lambda's environment, read once at the edge (the entry, when the container starts)
 * into plain values that are passed down. Nothing below the entry reads process.env.
 *
 *     SLUICE_CHECKPOINT_URI     s3://<bucket>/<prefix>                       required
 *     SLUICE_STATE_TABLE        <table name>                                  required
 *     SLUICE_SOURCE_URI         s3://<bucket>/<prefix> | kinesis://<stream>   required
 *     SLUICE_NOTIFICATION_QUEUE_URL  https://sqs.<region>.amazonaws.com/<account>/<queue>: an S3 source's notification mode   optional
 *     SLUICE_INPUT_URIS         URIs as SLUICE_SOURCE_URI, comma-separated: the other inputs (streams joined or unioned), in the query's order   optional
 *     SLUICE_SINK_URI           s3://<bucket>/<prefix>[?...] | dynamodb://<table>[/<queryKey>]   required
 *     SLUICE_DEAD_LETTER_URI    s3://<bucket>/<prefix>                       optional
 *     SLUICE_KEEP_LATE_ROWS     true | false                                  optional, default false
 *     SLUICE_LEASE_SECONDS      positive integer (>= the Lambda timeout)     optional, default 900
 *     SLUICE_METRICS_NAMESPACE  CloudWatch namespace of the summary metrics   optional, default Sluice
 *     SLUICE_PIPELINE_NAME      the metrics' Pipeline dimension               optional, default the query name
 *     SLUICE_QUERY_NAME         the query name the role's state-table scope is for (the construct's
 *                               queryName): another query name fails before any request   optional
 *     SLUICE_OUTPUT_MODE        append | update | complete                    optional, default append
 *     SLUICE_LOG_VALUES         true | false: keep data values in failure logs  optional, default false (redact.ts)
 *     AWS_ENDPOINT_URL[_S3|_DYNAMODB|_KINESIS], AWS_REGION, ...: the connection (lib/aws/clients.ts)
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { OutputMode } from '../../engine/plan/types';
import { connectionFromEnv } from '../clients';
import type { AwsConnection } from '../config';
import { parseS3Uri, parseSinkUri, type PipelineConfig, type S3Location, type SinkLocation, type SourceLocation } from '../pipeline';

/** The environment variables a sluice Lambda reads (the AvailableNowPipeline construct sets them). */
export const ENV = {
  checkpoint: 'SLUICE_CHECKPOINT_URI',
  stateTable: 'SLUICE_STATE_TABLE',
  source: 'SLUICE_SOURCE_URI',
  notificationQueue: 'SLUICE_NOTIFICATION_QUEUE_URL',
  inputs: 'SLUICE_INPUT_URIS',
  sink: 'SLUICE_SINK_URI',
  deadLetter: 'SLUICE_DEAD_LETTER_URI',
  keepLateRows: 'SLUICE_KEEP_LATE_ROWS',
  leaseSeconds: 'SLUICE_LEASE_SECONDS',
  metricsNamespace: 'SLUICE_METRICS_NAMESPACE',
  pipelineName: 'SLUICE_PIPELINE_NAME',
  queryName: 'SLUICE_QUERY_NAME',
  outputMode: 'SLUICE_OUTPUT_MODE',
  logValues: 'SLUICE_LOG_VALUES',
} as const;

export type Env = Record<string, string | undefined>;

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const STREAM_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const OUTPUT_MODES: readonly OutputMode[] = ['append', 'update', 'complete'];

/** A source URI: s3://<bucket>/<prefix> or kinesis://<stream-name>. */
function sourceLocation(value: string, name: string): SourceLocation {
  if (value.startsWith('kinesis://')) {
    const streamName = value.slice('kinesis://'.length).replace(/\/+$/, '');
    if (!STREAM_NAME.test(streamName)) {
      throw new InvalidOptionError(
        `${name}=${JSON.stringify(value)} does not name a Kinesis stream: write kinesis://<stream-name>, 1 to 128 of A-Za-z0-9_.- (the name, not the ARN)`,
      );
    }
    return { kind: 'kinesis', streamName };
  }
  if (value.startsWith('s3://')) return { kind: 's3', ...parseS3Uri(value, name) };
  throw new InvalidOptionError(
    `${name}=${JSON.stringify(value)} has an unknown scheme: write s3://<bucket>/<prefix> for a landing prefix or kinesis://<stream-name> for a stream`,
  );
}

/** Everything a Lambda entry needs from its environment. */
export interface LambdaEnvironment {
  readonly config: PipelineConfig;
  readonly connection: AwsConnection;
  readonly outputMode: OutputMode;
  readonly metricsNamespace?: string;
  readonly pipelineName?: string;
  /** Keep data values (keys, rows, records) in a failed run's log line; pass to createScheduledHandler. */
  readonly logDataValues: boolean;
}

/**
 * Reads the whole environment of a sluice Lambda: the pipeline config, the connection (an
 * emulator's when AWS_ENDPOINT_URL* is set, else real AWS in AWS_REGION), the output mode and
 * the metric names. Throws one InvalidOptionError listing every problem.
 */
export function lambdaEnvironmentFrom(env: Env): LambdaEnvironment {
  const config = pipelineConfigFromEnv(env);
  return {
    config,
    connection: connectionFromEnv(env) ?? { region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1' },
    outputMode: outputModeFrom(env[ENV.outputMode]),
    logDataValues: booleanFrom(env, ENV.logValues) ?? false,
    ...(present(env[ENV.metricsNamespace]) ? { metricsNamespace: env[ENV.metricsNamespace]!.trim() } : {}),
    ...(present(env[ENV.pipelineName]) ? { pipelineName: env[ENV.pipelineName]!.trim() } : {}),
  };
}

function outputModeFrom(value: string | undefined): OutputMode {
  const mode = (value ?? '').trim().toLowerCase() || 'append';
  if (!(OUTPUT_MODES as readonly string[]).includes(mode)) {
    throw new InvalidOptionError(
      `${ENV.outputMode}=${JSON.stringify(value)} is not an output mode: set it to append, update or complete (or leave it unset for append)`,
    );
  }
  return mode as OutputMode;
}

/**
 * Reads a PipelineConfig from environment variables. Pure: it reads only `env`, touches no AWS,
 * and reports every problem at once, each naming the variable, the value and the fix.
 */
export function pipelineConfigFromEnv(env: Env): PipelineConfig {
  const problems: string[] = [];
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof SluiceError)) throw e;
      problems.push(e.message);
      return undefined;
    }
  };

  const checkpoint = attempt(() => {
    const loc = s3Location(env, ENV.checkpoint, 's3://my-bucket/checkpoints/windowed-totals');
    if (loc.prefix === '') {
      throw new InvalidOptionError(
        `${ENV.checkpoint}=${JSON.stringify(env[ENV.checkpoint])} has no prefix: give each query its own checkpoint prefix, e.g. s3://${loc.bucket}/checkpoints/<query-name>`,
      );
    }
    return loc;
  });

  const stateTable = attempt(() => {
    const value = required(env, ENV.stateTable, 'the DynamoDB state/lease table name (pk/sk, TTL on `ttl`)');
    if (!TABLE_NAME.test(value)) {
      throw new InvalidOptionError(`${ENV.stateTable}=${JSON.stringify(value)} is not a DynamoDB table name: use 3 to 255 letters, digits, '_', '-' or '.'`);
    }
    return value;
  });

  const source = attempt(
    (): SourceLocation => sourceLocation(required(env, ENV.source, 'where the query reads: s3://<bucket>/<prefix> or kinesis://<stream-name>'), ENV.source),
  );
  const notificationQueueUrl = attempt((): string | undefined => {
    const value = env[ENV.notificationQueue];
    if (!present(value)) return undefined;
    const url = value.trim();
    if (!/^https?:\/\/[^/\s]+\/\d+\/[A-Za-z0-9_-]{1,80}$/.test(url)) {
      throw new InvalidOptionError(
        `${ENV.notificationQueue}=${JSON.stringify(value)} is not an SQS queue URL: set it to the queue's URL, e.g. https://sqs.eu-west-1.amazonaws.com/123456789012/landing-notifications (not its name or ARN), or unset it to list the prefix`,
      );
    }
    if (source && source.kind !== 's3') {
      throw new InvalidOptionError(`${ENV.notificationQueue} is set, but ${ENV.source} is not an S3 prefix: notification mode is for S3 sources; unset it`);
    }
    return url;
  });
  const inputs = attempt((): SourceLocation[] | undefined => {
    const value = env[ENV.inputs];
    if (!present(value)) return undefined;
    return value.split(',').map((uri) => sourceLocation(uri.trim(), ENV.inputs));
  });

  const sink = attempt(
    (): SinkLocation => parseSinkUri(required(env, ENV.sink, 'where the query writes: s3://<bucket>/<prefix> or dynamodb://<table>'), ENV.sink),
  );

  const deadLetter = attempt(() => (present(env[ENV.deadLetter]) ? s3Location(env, ENV.deadLetter, 's3://my-bucket/dead-letter/windowed-totals') : undefined));

  const keepLateRows = attempt(() => booleanFrom(env, ENV.keepLateRows));

  const leaseDurationMs = attempt(() => {
    const value = env[ENV.leaseSeconds];
    if (!present(value)) return undefined;
    const seconds = Number(value.trim());
    if (!Number.isInteger(seconds) || seconds < 1) {
      throw new InvalidOptionError(
        `${ENV.leaseSeconds}=${JSON.stringify(value)} must be a positive whole number of seconds, at least the Lambda timeout (e.g. 660 for a 600-second timeout), or unset for 900`,
      );
    }
    return seconds * 1000;
  });

  if (problems.length > 0) {
    // One line per problem, each a sentence of its own; the count says how many to fix.
    throw new InvalidOptionError(
      `the sluice Lambda's environment is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
      { details: { problems } },
    );
  }
  return {
    checkpoint: checkpoint!,
    stateTable: stateTable!,
    source: source!,
    ...(notificationQueueUrl ? { notificationQueueUrl } : {}),
    ...(inputs ? { inputs } : {}),
    sink: sink!,
    ...(deadLetter ? { deadLetter } : {}),
    ...(keepLateRows !== undefined ? { keepLateRows } : {}),
    ...(leaseDurationMs !== undefined ? { leaseDurationMs } : {}),
    ...(present(env[ENV.queryName]) ? { queryName: env[ENV.queryName]!.trim() } : {}),
  };
}

/** true/1 or false/0, undefined when unset. */
function booleanFrom(env: Env, name: string): boolean | undefined {
  const value = env[name];
  if (!present(value)) return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidOptionError(`${name}=${JSON.stringify(value)} is not a boolean: set it to true or false (or leave it unset for false)`);
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function required(env: Env, name: string, what: string): string {
  const value = env[name];
  if (!present(value))
    throw new InvalidOptionError(`${name} is not set: set it to ${what} (the AvailableNowPipeline construct sets it; outside Lambda, export it)`);
  return value.trim();
}

function s3Location(env: Env, name: string, example: string): S3Location {
  return parseS3Uri(required(env, name, `an S3 location, e.g. ${example}`), name);
}
