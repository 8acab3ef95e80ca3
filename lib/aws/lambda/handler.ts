/**
 * The scheduled Lambda's logic, kept apart from its entry file (lambdas/*.ts) so that tests invoke
 * it in-process with their own connection, and so that the entry stays a few lines that read
 * process.env once (lib/aws/lambda/env.ts).
 *
 *     container start: createScheduledHandler(plan, cfg, conn) ── the SDK clients, built once;
 *       │                                                         every invocation reuses them
 *       ▼
 *     EventBridge tick (rate(15 minutes))
 *       │
 *       ▼  handler(event, context)                        t = now
 *     deadlineMs = t + context.getRemainingTimeInMillis() - safetyMarginMs
 *     runPipeline(conn, plan, cfg, { clients, deadlineMs, log }) ── one JSON line per batch ("batch")
 *       │                                                 (the executor stops before a batch that
 *       │                                                  would not fit before deadlineMs; the next
 *       │                                                  tick continues from the checkpoint)
 *       ▼
 *     one "run-summary" JSON line, in CloudWatch Embedded Metric Format (emf.ts) ──▶ return RunSummary
 *
 *     on error: one "run-failed" JSON line with `retriable` ──▶ rethrow: the invocation fails and
 *     Lambda hands the event to the on-failure destination. Data values in the error (keys, rows,
 *     records) are redacted from both unless logDataValues is set (redact.ts).
 */
import { Console } from 'node:console';
import type { RunReport } from '../../engine/run/types';
import type { QueryPlan } from '../../engine/plan/types';
import type { StreamingProgress } from '../../engine/progress';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { createClients, type AwsClients } from '../clients';
import type { AwsConnection } from '../config';
import { describeSink, runPipeline, type PipelineConfig, type PipelineExtras } from '../pipeline';
import { isTransientError } from '../request/errors';
import { DEFAULT_METRICS_NAMESPACE, emfBlock, type RunSummary } from './emf';
import { redactInPlace } from './redact';

export { ENV, lambdaEnvironmentFrom, pipelineConfigFromEnv, type LambdaEnvironment } from './env';
export { DEFAULT_METRICS_NAMESPACE, type RunSummary } from './emf';

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
  /**
   * Keep data values (the detail fields `key`, `keys`, `row(s)`, `record(s)`, `raw`, `value(s)`:
   * state and sink keys hold grouping values) in a failed run's log line and rethrown error.
   * SLUICE_LOG_VALUES in the entry's environment.
   * @default false: they are replaced by "<redacted>" (object keys under the pipeline's S3 prefixes are kept)
   */
  readonly logDataValues?: boolean;
  /**
   * Builds the SDK clients, once, when the handler is built (once per container); every
   * invocation uses them, and they live as long as the container.
   * @default createClients (lib/aws/clients.ts)
   */
  readonly createClients?: (conn: AwsConnection) => AwsClients;
  /** Passed to runPipeline (e.g. a Kinesis source built by the entry, or a test's clock). */
  readonly extras?: Omit<PipelineExtras, 'log' | 'clients'>;
}

/** The progress records a summary carries: the run's last few batches (the checkpoint keeps them all). */
export const SUMMARY_PROGRESS_RECORDS = 5;

/**
 * What an invocation returns and logs: the summary, and the progress records of its last
 * SUMMARY_PROGRESS_RECORDS batches (lib/engine/progress.ts, the record progress/N holds).
 */
export type ScheduledRunSummary = RunSummary & { readonly progress: StreamingProgress[] };

export type ScheduledHandler = (event: ScheduledEventLike, context: LambdaContextLike) => Promise<ScheduledRunSummary>;

let stdoutConsole: Console | undefined;
function defaultWriteLine(line: string): void {
  stdoutConsole ??= new Console({ stdout: process.stdout, stderr: process.stderr });
  stdoutConsole.log(line);
}

/**
 * A Lambda handler that runs `plan` availableNow against `cfg` on each invocation. Build it once
 * per container (module scope): it builds the SDK clients then; each invocation builds the
 * executor on them and runs to the deadline.
 */
export function createScheduledHandler(plan: QueryPlan, cfg: PipelineConfig, conn: AwsConnection, opts: ScheduledHandlerOptions = {}): ScheduledHandler {
  const safetyMarginMs = opts.safetyMarginMs ?? 10_000;
  if (!Number.isFinite(safetyMarginMs) || safetyMarginMs < 0) {
    throw new InvalidOptionError(`createScheduledHandler safetyMarginMs ${safetyMarginMs} must be a non-negative number of milliseconds, e.g. 10000`);
  }
  const clients = (opts.createClients ?? createClients)(conn);
  const namespace = opts.metricsNamespace?.trim() || DEFAULT_METRICS_NAMESPACE;
  const pipeline = opts.pipelineName?.trim() || plan.name;
  const writeLine = opts.writeLine ?? defaultWriteLine;
  const now = opts.now ?? Date.now;
  const emit = (fields: Record<string, unknown>) => writeLine(JSON.stringify({ level: 'info', ...fields }));
  const logDataValues = opts.logDataValues ?? false;
  const objectPrefixes = s3Prefixes(cfg);

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
        clients,
        deadlineMs,
        log: (e) => emit({ ...base, ...e }),
      });
    } catch (error) {
      const retriable = error instanceof SluiceError ? error.retriable : isTransientError(error);
      const redacted = !logDataValues && error instanceof SluiceError ? redactInPlace(error, objectPrefixes) : [];
      writeLine(
        JSON.stringify({
          level: 'error',
          ...base,
          event: 'run-failed',
          retriable,
          errorName: error instanceof Error ? error.name : typeof error,
          errorMessage: error instanceof Error ? error.message : String(error),
          ...(error instanceof SluiceError && Object.keys(error.details).length > 0 ? { details: error.details } : {}),
          ...(redacted.length > 0 ? { redacted: { fields: redacted, toLogThem: 'set SLUICE_LOG_VALUES=true (the construct prop logDataValues)' } } : {}),
          durationMs: now() - startedMs,
          // A retriable failure heals on a later tick (the checkpoint makes the retry exact);
          // a permanent one fails every tick until someone fixes the configuration or the data.
          action: retriable ? 'none: the next scheduled run retries from the checkpoint' : 'fix the cause: every scheduled run will fail the same way',
        }),
      );
      throw error;
    }

    const summary = runSummaryOf(report, { pipeline, requestId: context.awsRequestId, scheduledAt: event?.time, startedMs, endedMs: now() });
    writeLine(JSON.stringify({ level: 'info', ...summary, ...emfBlock(summary, namespace, pipeline, now()) }));
    return summary;
  };
}

/** The run-summary line of a run (its EMF metrics come from it: emf.ts), for the scheduled Lambda and the scale-out tasks. */
export function runSummaryOf(
  report: RunReport,
  at: { pipeline: string; requestId?: string; scheduledAt?: string; startedMs: number; endedMs: number },
): ScheduledRunSummary {
  const { pipeline, startedMs, endedMs } = at;
  const summary: ScheduledRunSummary = {
    event: 'run-summary',
    pipeline,
    query: report.queryName,
    queryId: report.queryId,
    ...(at.requestId ? { requestId: at.requestId } : {}),
    ...(at.scheduledAt ? { scheduledAt: at.scheduledAt } : {}),
    stoppedBy: report.stoppedBy,
    batches: report.batches.length,
    rowsIn: report.rowsIn,
    rowsOut: report.rowsOut,
    watermark: report.watermark,
    backlogLeft: report.backlogLeft,
    droppedByWatermark: report.droppedByWatermark,
    deadLetters: report.deadLetters,
    stateRows: report.stateRows,
    durationMs: endedMs - startedMs,
    ...(report.batches.length > 0 ? { maxBatchDurationMs: Math.max(...report.batches.map((b) => b.durationMs)) } : {}),
    ...(report.watermarkMs > 0 ? { watermarkLagMs: endedMs - report.watermarkMs } : {}),
    ...(report.consumed ? { consumed: report.consumed } : {}),
    ...(report.message ? { message: report.message } : {}),
    progress: report.progress.slice(-SUMMARY_PROGRESS_RECORDS),
  };
  return summary;
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

/** The key prefixes of the pipeline's own S3 locations: a `key` detail under one names an object. */
export function s3Prefixes(cfg: PipelineConfig): string[] {
  return [
    cfg.checkpoint.prefix,
    cfg.deadLetter?.prefix ?? '',
    cfg.source.kind === 's3' ? cfg.source.prefix : '',
    cfg.sink.kind === 'dynamodb' ? '' : cfg.sink.prefix,
  ].filter((p) => p !== '');
}

function describeSource(cfg: PipelineConfig): string {
  return cfg.source.kind === 's3' ? `s3://${cfg.source.bucket}/${cfg.source.prefix}` : `kinesis://${cfg.source.streamName}`;
}
