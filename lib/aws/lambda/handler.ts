/**
 * The scheduled Lambda's logic, kept apart from its entry file (lambdas/*.ts) so that tests invoke
 * it in-process with their own connection, and so that the entry stays a few lines that read
 * process.env once.
 *
 *     EventBridge tick (rate(15 minutes))
 *       │
 *       ▼  handler(event, context)                        t = now
 *     deadlineMs = t + context.getRemainingTimeInMillis() - safetyMarginMs
 *     runPipeline(conn, plan, cfg, { deadlineMs, log }) ── one JSON line per batch ("batch")
 *       │                                                 (the executor stops before a batch that
 *       │                                                  would not fit before deadlineMs; the next
 *       │                                                  tick continues from the checkpoint)
 *       ▼
 *     one "run-summary" JSON line, in CloudWatch Embedded Metric Format ──▶ return RunSummary
 *
 *     on error: one "run-failed" JSON line with `retriable` ──▶ rethrow: the invocation fails and
 *     Lambda hands the event to the on-failure destination
 *
 * The summary line carries the metrics the AvailableNowPipeline construct alarms on (RowsIn,
 * BacklogLeft, StateRows, DroppedByWatermark, ...): CloudWatch extracts them from the log line, so
 * the function needs no cloudwatch:PutMetricData (which only accepts Resource "*").
 */
import { Console } from 'node:console';
import type { QueryPlan } from '../../engine/query';
import type { RunReport, StopReason } from '../../engine/executor';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { AwsConnection } from '../config';
import { describeSink, parseS3Uri, parseSinkUri, runPipeline, type PipelineConfig, type PipelineExtras, type S3Location, type SinkLocation, type SourceLocation } from '../pipeline';

// ---------------------------------------------------------------- configuration from the environment

/** The environment variables a sluice Lambda reads (the AvailableNowPipeline construct sets them). */
export const ENV = {
  checkpoint: 'SLUICE_CHECKPOINT_URI',
  stateTable: 'SLUICE_STATE_TABLE',
  source: 'SLUICE_SOURCE_URI',
  sink: 'SLUICE_SINK_URI',
  deadLetter: 'SLUICE_DEAD_LETTER_URI',
  keepLateRows: 'SLUICE_KEEP_LATE_ROWS',
  leaseSeconds: 'SLUICE_LEASE_SECONDS',
  metricsNamespace: 'SLUICE_METRICS_NAMESPACE',
  pipelineName: 'SLUICE_PIPELINE_NAME',
  outputMode: 'SLUICE_OUTPUT_MODE',
} as const;

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const STREAM_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const SET_BY_CONSTRUCT = 'the AvailableNowPipeline construct sets it; for a run outside Lambda, export it';

/**
 * Reads a PipelineConfig from environment variables. Pure: it reads only `env`, touches no AWS,
 * and reports every problem at once, each naming the variable, the value and the fix.
 *
 *     SLUICE_CHECKPOINT_URI   s3://<bucket>/<prefix>                       required
 *     SLUICE_STATE_TABLE      <table name>                                  required
 *     SLUICE_SOURCE_URI       s3://<bucket>/<prefix> | kinesis://<stream>   required
 *     SLUICE_SINK_URI         s3://<bucket>/<prefix> | dynamodb://<table>   required
 *     SLUICE_DEAD_LETTER_URI  s3://<bucket>/<prefix>                       optional
 *     SLUICE_KEEP_LATE_ROWS   true | false                                  optional, default false
 *     SLUICE_LEASE_SECONDS    positive integer (>= the Lambda timeout)     optional, default 900
 */
export function pipelineConfigFromEnv(env: Record<string, string | undefined>): PipelineConfig {
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

  const source = attempt((): SourceLocation => {
    const value = required(env, ENV.source, 'where the query reads: s3://<bucket>/<prefix> or kinesis://<stream-name>');
    if (value.startsWith('kinesis://')) {
      const streamName = value.slice('kinesis://'.length).replace(/\/+$/, '');
      if (!STREAM_NAME.test(streamName)) {
        throw new InvalidOptionError(
          `${ENV.source}=${JSON.stringify(value)} does not name a Kinesis stream: write kinesis://<stream-name>, with 1 to 128 letters, digits, '_', '-' or '.' (the name, not the ARN)`,
        );
      }
      return { kind: 'kinesis', streamName };
    }
    if (value.startsWith('s3://')) return { kind: 's3', ...parseS3Uri(value, ENV.source) };
    throw new InvalidOptionError(
      `${ENV.source}=${JSON.stringify(value)} has an unknown scheme: write s3://<bucket>/<prefix> for a landing prefix or kinesis://<stream-name> for a stream`,
    );
  });

  const sink = attempt((): SinkLocation =>
    parseSinkUri(required(env, ENV.sink, 'where the query writes: s3://<bucket>/<prefix> or dynamodb://<table>'), ENV.sink),
  );

  const deadLetter = attempt(() => (present(env[ENV.deadLetter]) ? s3Location(env, ENV.deadLetter, 's3://my-bucket/dead-letter/windowed-totals') : undefined));

  const keepLateRows = attempt(() => {
    const value = env[ENV.keepLateRows];
    if (!present(value)) return undefined;
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new InvalidOptionError(`${ENV.keepLateRows}=${JSON.stringify(value)} is not a boolean: set it to true or false (or leave it unset for false)`);
  });

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
    throw new InvalidOptionError(
      `the sluice Lambda's environment is not valid (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
      { details: { problems } },
    );
  }
  return {
    checkpoint: checkpoint!,
    stateTable: stateTable!,
    source: source!,
    sink: sink!,
    ...(deadLetter ? { deadLetter } : {}),
    ...(keepLateRows !== undefined ? { keepLateRows } : {}),
    ...(leaseDurationMs !== undefined ? { leaseDurationMs } : {}),
  };
}

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function required(env: Record<string, string | undefined>, name: string, what: string): string {
  const value = env[name];
  if (!present(value)) throw new InvalidOptionError(`${name} is not set: set it to ${what} (${SET_BY_CONSTRUCT})`);
  return value.trim();
}

function s3Location(env: Record<string, string | undefined>, name: string, example: string): S3Location {
  const value = required(env, name, `an S3 location, e.g. ${example}`);
  return parseS3Uri(value, name);
}

// ---------------------------------------------------------------- the handler

/** What EventBridge sends on a schedule (the fields sluice looks at; the rest is ignored). */
export interface ScheduledEventLike {
  readonly id?: string;
  readonly 'detail-type'?: string;
  readonly source?: string;
  readonly time?: string;
  readonly resources?: readonly string[];
}

/** The part of the Lambda context the handler uses. */
export interface LambdaContextLike {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId?: string;
}

/** What one invocation did; also its return value (visible in `lambda invoke` and destinations). */
export interface RunSummary {
  readonly event: 'run-summary';
  readonly pipeline: string;
  readonly query: string;
  readonly queryId: string;
  readonly requestId?: string;
  /** The scheduled tick that started the run (the event's `time`). */
  readonly scheduledAt?: string;
  readonly stoppedBy: StopReason;
  readonly batches: number;
  readonly rowsIn: number;
  readonly rowsOut: number;
  readonly watermark: string;
  readonly backlogLeft: number;
  readonly droppedByWatermark: number;
  readonly deadLetters: number;
  readonly stateRows: number;
  readonly durationMs: number;
  readonly message?: string;
}

export interface ScheduledHandlerOptions {
  /**
   * Time kept free before the invocation's own deadline: the run stops starting batches this long
   * before Lambda would kill it, so it ends cleanly (lease released, summary logged).
   * @default 10_000 (10 s), capped at a fifth of the remaining time for very short timeouts
   */
  readonly safetyMarginMs?: number;
  /** CloudWatch namespace of the metrics in the summary line. @default 'Sluice' */
  readonly metricsNamespace?: string;
  /** The `Pipeline` metric dimension; the construct's alarms select on it. @default plan.name */
  readonly pipelineName?: string;
  /**
   * Where JSON lines go. @default a Console on process.stdout: the raw line, without the prefix
   * the Lambda runtime adds to the global console, so CloudWatch reads the EMF block in it
   */
  readonly writeLine?: (line: string) => void;
  /** @default Date.now */
  readonly now?: () => number;
  /** Passed to runPipeline (e.g. a Kinesis source built by the entry, or a test's clock). */
  readonly extras?: Omit<PipelineExtras, 'log'>;
}

export type ScheduledHandler = (event: ScheduledEventLike, context: LambdaContextLike) => Promise<RunSummary>;

/** The metrics of the summary line: name, unit and how to read it off the summary. */
const METRICS: ReadonlyArray<{ name: string; unit: 'Count' | 'Milliseconds'; of: (s: RunSummary) => number }> = [
  { name: 'Runs', unit: 'Count', of: () => 1 },
  { name: 'Batches', unit: 'Count', of: (s) => s.batches },
  { name: 'RowsIn', unit: 'Count', of: (s) => s.rowsIn },
  { name: 'RowsOut', unit: 'Count', of: (s) => s.rowsOut },
  { name: 'BacklogLeft', unit: 'Count', of: (s) => s.backlogLeft },
  { name: 'StateRows', unit: 'Count', of: (s) => s.stateRows },
  { name: 'DroppedByWatermark', unit: 'Count', of: (s) => s.droppedByWatermark },
  { name: 'DeadLetters', unit: 'Count', of: (s) => s.deadLetters },
  { name: 'LeaseHeld', unit: 'Count', of: (s) => (s.stoppedBy === 'lease-held' ? 1 : 0) },
  { name: 'RunDurationMs', unit: 'Milliseconds', of: (s) => s.durationMs },
];

/** The metric names the summary line emits (the construct's alarms use them). */
export const SUMMARY_METRIC_NAMES = METRICS.map((m) => m.name);
/** The single dimension of every sluice metric. */
export const METRIC_DIMENSION = 'Pipeline';
export const DEFAULT_METRICS_NAMESPACE = 'Sluice';

let stdoutConsole: Console | undefined;
function defaultWriteLine(line: string): void {
  stdoutConsole ??= new Console({ stdout: process.stdout, stderr: process.stderr });
  stdoutConsole.log(line);
}

/**
 * A Lambda handler that runs `plan` availableNow against `cfg` on each invocation. Build it once
 * per container (module scope); each invocation builds the executor and runs to the deadline.
 */
export function createScheduledHandler(plan: QueryPlan, cfg: PipelineConfig, conn: AwsConnection, opts: ScheduledHandlerOptions = {}): ScheduledHandler {
  const safetyMarginMs = opts.safetyMarginMs ?? 10_000;
  if (!Number.isFinite(safetyMarginMs) || safetyMarginMs < 0) {
    throw new InvalidOptionError(`createScheduledHandler safetyMarginMs ${safetyMarginMs} must be a non-negative number of milliseconds, e.g. 10000`);
  }
  const namespace = opts.metricsNamespace?.trim() || DEFAULT_METRICS_NAMESPACE;
  const pipeline = opts.pipelineName?.trim() || plan.name;
  const writeLine = opts.writeLine ?? defaultWriteLine;
  const now = opts.now ?? Date.now;
  const emit = (fields: Record<string, unknown>) => writeLine(JSON.stringify({ level: 'info', ...fields }));

  return async (event, context) => {
    const startedMs = now();
    const remainingMs = context.getRemainingTimeInMillis();
    const margin = Math.min(safetyMarginMs, Math.floor(remainingMs / 5));
    const deadlineMs = startedMs + remainingMs - margin;
    const base = { pipeline, query: plan.name, requestId: context.awsRequestId, scheduledAt: event?.time };
    emit({ ...base, event: 'run-started', deadline: new Date(deadlineMs).toISOString(), source: describeSource(cfg), sink: describeSink(cfg.sink) });

    let report: RunReport;
    try {
      report = await runPipeline(conn, plan, cfg, {
        ...opts.extras,
        deadlineMs,
        log: (e) => emit({ ...base, ...e }),
      });
    } catch (error) {
      const retriable = error instanceof SluiceError ? error.retriable : isTransientSdkError(error);
      writeLine(
        JSON.stringify({
          level: 'error',
          ...base,
          event: 'run-failed',
          retriable,
          errorName: error instanceof Error ? error.name : typeof error,
          errorMessage: error instanceof Error ? error.message : String(error),
          ...(error instanceof SluiceError && Object.keys(error.details).length > 0 ? { details: error.details } : {}),
          durationMs: now() - startedMs,
          // A retriable failure heals on a later tick (the checkpoint makes the retry exact);
          // a permanent one fails every tick until someone fixes the configuration or the data.
          action: retriable ? 'none: the next scheduled run retries from the checkpoint' : 'fix the cause: every scheduled run will fail the same way',
        }),
      );
      throw error;
    }

    const summary: RunSummary = {
      event: 'run-summary',
      pipeline,
      query: report.queryName,
      queryId: report.queryId,
      ...(context.awsRequestId ? { requestId: context.awsRequestId } : {}),
      ...(event?.time ? { scheduledAt: event.time } : {}),
      stoppedBy: report.stoppedBy,
      batches: report.batches.length,
      rowsIn: report.rowsIn,
      rowsOut: report.rowsOut,
      watermark: report.watermark,
      backlogLeft: report.backlogLeft,
      droppedByWatermark: report.droppedByWatermark,
      deadLetters: report.deadLetters,
      stateRows: report.stateRows,
      durationMs: now() - startedMs,
      ...(report.message ? { message: report.message } : {}),
    };
    writeLine(JSON.stringify({ level: 'info', ...summary, ...emfBlock(summary, namespace, pipeline, now()) }));
    return summary;
  };
}

/**
 * CloudWatch Embedded Metric Format: the `_aws` block names the metrics, and each metric's value
 * and the dimension's value are top-level members of the same JSON line.
 */
export function emfBlock(summary: RunSummary, namespace: string, pipeline: string, timestampMs: number): Record<string, unknown> {
  const values: Record<string, number> = {};
  for (const m of METRICS) values[m.name] = m.of(summary);
  return {
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[METRIC_DIMENSION]],
          Metrics: METRICS.map((m) => ({ Name: m.name, Unit: m.unit })),
        },
      ],
    },
    [METRIC_DIMENSION]: pipeline,
    ...values,
  };
}

/**
 * A handler that fails every invocation with `error`: what an entry exports when its environment
 * does not parse, so each scheduled tick logs the reason as a JSON line (and lands in the
 * on-failure destination) instead of an opaque init failure.
 */
export function failingHandler(error: unknown, writeLine: (line: string) => void = defaultWriteLine): ScheduledHandler {
  return async (event, context) => {
    writeLine(
      JSON.stringify({
        level: 'error',
        event: 'run-failed',
        requestId: context?.awsRequestId,
        scheduledAt: event?.time,
        retriable: false,
        errorName: error instanceof Error ? error.name : typeof error,
        errorMessage: error instanceof Error ? error.message : String(error),
        action: 'fix the function configuration: every scheduled run will fail the same way',
      }),
    );
    throw error;
  };
}

/** SDK errors that are worth another try (throttling, 5xx, network), for errors that are not SluiceErrors. */
function isTransientSdkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { $retryable?: unknown; $metadata?: { httpStatusCode?: number }; name?: string; code?: string };
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  const name = e.name ?? e.code ?? '';
  return /Throttl|TimeoutError|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|ServiceUnavailable|RequestTimeout/.test(name);
}

function describeSource(cfg: PipelineConfig): string {
  return cfg.source.kind === 's3' ? `s3://${cfg.source.bucket}/${cfg.source.prefix}` : `kinesis://${cfg.source.streamName}`;
}

