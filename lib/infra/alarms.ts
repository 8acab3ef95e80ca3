/**
 * The pipeline's alarms and its CloudWatch dashboard. Every custom metric comes from the handler's
 * run-summary line (lib/aws/lambda/emf.ts: one data point per run, dimension `Pipeline`); "run
 * failed" reads Lambda's own Errors and "failure queue" the queue's depth.
 *
 *     one run ──▶ summary line (EMF) ──▶ RowsIn, MaxBatchDurationMs, StateRows, ... one point each
 *                                            │ period = the schedule interval (about one run each)
 *                                            ▼
 *     alarms: Maximum per period = the worst run of it; Sum for counts over several periods
 *     trend:  StateRows, Maximum per day ──▶ 100 * DIFF(rows) / (rows - DIFF(rows))
 *             = how much the daily peak grew over the previous day's, in %
 *
 * With `parallelism` (lib/infra/scale-out.ts) three alarms read the state machine's own metrics
 * (AWS/States, dimension StateMachineArn): an execution failed, timed out, or ran longer than the
 * schedule interval (ExecutionTime, written when an execution ends).
 *
 * `alarms` (PipelineAlarmsProps) sets each alarm's threshold or turns it off with `false`;
 * resolvePipelineAlarms checks the values once, at synth, and createPipelineAlarms builds them
 * from one table through one helper.
 */
import { Duration, aws_cloudwatch as cloudwatch } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { invalid, wholeNumber } from './binding';

// ---------------------------------------------------------------- props

/** The alarms, by the key of `AvailableNowPipeline.alarms` and of `PipelineAlarmsProps`. */
export type AlarmName =
  | 'runFailed'
  | 'batchDuration'
  | 'runDuration'
  | 'noInput'
  | 'stateRowsGrowing'
  | 'stateRowsAbove'
  | 'lateRowsDropped'
  | 'deadLetters'
  | 'fallingBehind'
  | 'failureQueueNotEmpty'
  | 'executionFailed'
  | 'executionTimedOut'
  | 'executionDuration';

/**
 * The alarms' thresholds. Each alarm is on unless set to `false`; `true` or `{}` keeps its
 * defaults. A period of "the interval" is the schedule interval, so that a period holds about
 * one run; "per run" alarms use the period's Maximum, which is the worst run in it.
 */
export interface PipelineAlarmsProps {
  /**
   * Lambda Errors per interval at or above `threshold`: every failed invocation (an error the
   * handler rethrows, a timeout, an out-of-memory kill; the summary line emits no failure metric,
   * as a killed run writes no line). The event is also in the failure queue.
   * @default { threshold: 1 }
   */
  readonly runFailed?: boolean | { readonly threshold?: number };
  /**
   * The run's longest batch (MaxBatchDurationMs) above `fractionOfInterval` of the schedule
   * interval: a batch that long leaves a run room for few batches before its deadline.
   * At most the Lambda timeout (a longer threshold could never be reached).
   * @default { fractionOfInterval: half of runDuration's default }
   */
  readonly batchDuration?: boolean | { readonly fractionOfInterval?: number };
  /**
   * The run's duration (RunDurationMs) above `fractionOfInterval` of the schedule interval: the
   * run uses most of its interval and will soon stop at its deadline with backlog left.
   * @default { fractionOfInterval: 0.5, or less when 80% of the Lambda timeout is shorter than half the interval }
   */
  readonly runDuration?: boolean | { readonly fractionOfInterval?: number };
  /**
   * No input row (RowsIn summed per interval below 1) in `intervals` consecutive intervals. A
   * period with no summary line at all counts as breaching: no run reported (the schedule is off,
   * every run failed before its summary), so no input reached the sink either.
   * `intervals` × the interval is at most a day (7 days for an interval of an hour or more).
   * @default { intervals: 4 }, or off when scheduleEnabled is false (runs only start by hand)
   */
  readonly noInput?: boolean | { readonly intervals?: number };
  /**
   * State rows growing: the day's peak StateRows more than `percentPerDay` % above the previous
   * day's, on `days` consecutive days (a metric-math trend, not a size: state that is large but
   * steady is fine, state that keeps growing is not evicted). 1 to 7 days.
   * @default { percentPerDay: 10, days: 2 }
   */
  readonly stateRowsGrowing?: boolean | { readonly percentPerDay?: number; readonly days?: number };
  /**
   * An absolute ceiling: StateRows above `threshold` in any run. Off unless given.
   * @default false
   */
  readonly stateRowsAbove?: false | { readonly threshold: number };
  /**
   * Rows dropped by the watermark (DroppedByWatermark) above `threshold` in a run: they arrived
   * later than the withWatermark delay allows (`sluice lateness` measures a better delay).
   * @default { threshold: 0 }
   */
  readonly lateRowsDropped?: boolean | { readonly threshold?: number };
  /**
   * Malformed records sent to the dead-letter location (DeadLetters) above `threshold` in a run.
   * @default { threshold: 0 }
   */
  readonly deadLetters?: boolean | { readonly threshold?: number };
  /**
   * Backlog left (BacklogLeft: files or records still waiting when the run stopped at its
   * deadline) above `threshold` in `runs` consecutive intervals: the runs no longer keep up.
   * `runs` × the interval is at most a day (7 days for an interval of an hour or more).
   * @default { threshold: 0, runs: 2 }
   */
  readonly fallingBehind?: boolean | { readonly threshold?: number; readonly runs?: number };
  /** Messages visible in the failure queue (failed or undeliverable scheduled events). @default true */
  readonly failureQueueNotEmpty?: boolean;
  /**
   * With `parallelism`: executions (runs) of the state machine that failed (ExecutionsFailed)
   * per interval at or above `threshold`: a task failed after its retries. The next tick resumes
   * from the checkpoint. Only with `parallelism`.
   * @default { threshold: 1 }
   */
  readonly executionFailed?: boolean | { readonly threshold?: number };
  /** With `parallelism`: an execution stopped at its timeout (ExecutionsTimedOut; parallelism.executionTimeoutSeconds). @default true */
  readonly executionTimedOut?: boolean;
  /**
   * With `parallelism`: an execution ran longer than `thresholdSeconds` (ExecutionTime, Maximum per
   * interval): ticks are being skipped while it runs. Below the execution timeout.
   * @default { thresholdSeconds: the schedule interval }
   */
  readonly executionDuration?: boolean | { readonly thresholdSeconds?: number };
}

/** The flat alarm props the construct had before `alarms`; still honoured, each mapped to its `alarms` key. */
export interface LegacyAlarmProps {
  /** @deprecated use `alarms.runFailed.threshold`. */
  readonly runFailedAlarmThreshold?: number;
  /** @deprecated use `alarms.fallingBehind.runs`. */
  readonly fallingBehindAlarmRuns?: number;
  /** @deprecated use `alarms.noInput.intervals`: the minutes, rounded up to whole schedule intervals. */
  readonly noInputAlarmMinutes?: number;
  /** @deprecated use `alarms.stateRowsAbove.threshold` (an absolute ceiling; `alarms.stateRowsGrowing` alarms on the trend). */
  readonly stateRowsAlarmThreshold?: number;
  /** @deprecated use `alarms.lateRowsDropped.threshold`. */
  readonly lateRowsAlarmThreshold?: number;
  /** @deprecated use `alarms.deadLetters.threshold`. */
  readonly deadLetterAlarmThreshold?: number;
}

/** The alarms after defaults and checks; an alarm that is off is absent. */
export interface ResolvedAlarms {
  readonly runFailed?: { readonly threshold: number };
  readonly batchDuration?: { readonly fractionOfInterval: number; readonly thresholdMs: number };
  readonly runDuration?: { readonly fractionOfInterval: number; readonly thresholdMs: number };
  readonly noInput?: { readonly intervals: number };
  readonly stateRowsGrowing?: { readonly percentPerDay: number; readonly days: number };
  readonly stateRowsAbove?: { readonly threshold: number };
  readonly lateRowsDropped?: { readonly threshold: number };
  readonly deadLetters?: { readonly threshold: number };
  readonly fallingBehind?: { readonly threshold: number; readonly runs: number };
  readonly failureQueueNotEmpty?: Record<string, never>;
  readonly executionFailed?: { readonly threshold: number };
  readonly executionTimedOut?: Record<string, never>;
  readonly executionDuration?: { readonly thresholdSeconds: number };
}

// ---------------------------------------------------------------- resolution

interface Timing {
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  /** The schedule rule is enabled (false: runs start only by hand, so "no input" has no cadence). */
  readonly scheduled: boolean;
  /** With `parallelism`: the execution timeout; absent without it (no execution alarms). */
  readonly executionTimeoutSeconds?: number;
}

const LEGACY: ReadonlyArray<readonly [keyof LegacyAlarmProps, AlarmName]> = [
  ['runFailedAlarmThreshold', 'runFailed'],
  ['fallingBehindAlarmRuns', 'fallingBehind'],
  ['noInputAlarmMinutes', 'noInput'],
  ['stateRowsAlarmThreshold', 'stateRowsAbove'],
  ['lateRowsAlarmThreshold', 'lateRowsDropped'],
  ['deadLetterAlarmThreshold', 'deadLetters'],
];

/** `setting` as an options object, or undefined when the alarm is off. */
function optionsOf<T extends object>(setting: boolean | T | undefined): T | undefined {
  if (setting === false) return undefined;
  return setting === undefined || setting === true ? ({} as T) : setting;
}

/** A fraction in (0, 1]. */
function fraction(scope: Construct, name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1) {
    invalid(scope, `${name} (${value}) must be a fraction of the schedule interval above 0 and at most 1, e.g. 0.5`, { [name]: value });
  }
  return value;
}

/** The longest evaluation range CloudWatch accepts: a day for periods under an hour, else 7 days. */
function maxPeriods(periodSeconds: number): number {
  return Math.floor((periodSeconds < 3600 ? 86_400 : 604_800) / periodSeconds);
}

/**
 * Applies the defaults and checks every value once, at synth. The legacy flat props map onto their
 * `alarms` key; giving both for one alarm is refused, as one of them would be ignored.
 */
export function resolvePipelineAlarms(scope: Construct, alarms: PipelineAlarmsProps, legacy: LegacyAlarmProps, t: Timing): ResolvedAlarms {
  for (const [flat, key] of LEGACY) {
    if (legacy[flat] !== undefined && alarms[key] !== undefined) {
      invalid(scope, `${flat} (${legacy[flat]}) and alarms.${key} both configure the ${key} alarm: keep alarms.${key} and drop ${flat}`, { [flat]: legacy[flat] });
    }
  }
  const interval = t.intervalSeconds;
  const periodsCap = maxPeriods(interval);

  // A value comes from alarms.<key>.<field>, else from the legacy flat prop, else the default; its
  // error message names the prop it came from.
  const from = <T>(field: string, value: T | undefined, legacyName: keyof LegacyAlarmProps | undefined, fallback: T): [string, T] => {
    if (value !== undefined) return [field, value];
    const old = legacyName ? (legacy[legacyName] as T | undefined) : undefined;
    return old !== undefined ? [legacyName!, old] : [field, fallback];
  };

  const runFailedOpts = optionsOf(alarms.runFailed);
  const runFailed = runFailedOpts && {
    threshold: wholeNumber(scope, ...from('alarms.runFailed.threshold', runFailedOpts.threshold, 'runFailedAlarmThreshold', 1), 1, 1_000_000, 'count failed invocations per schedule interval, e.g. 1'),
  };

  // A run cannot last longer than the Lambda timeout (at most the interval), so the default keeps
  // the threshold below it: half the interval, or 80% of a timeout shorter than that.
  const runDefault = Math.min(0.5, (0.8 * t.timeoutSeconds) / interval);
  const durationAlarm = (name: 'batchDuration' | 'runDuration', defaultFraction: number) => {
    const opts = optionsOf(alarms[name]);
    if (!opts) return undefined;
    const f = fraction(scope, `alarms.${name}.fractionOfInterval`, opts.fractionOfInterval ?? defaultFraction);
    const thresholdMs = Math.round(f * interval * 1000);
    if (thresholdMs >= t.timeoutSeconds * 1000) {
      invalid(
        scope,
        `alarms.${name}.fractionOfInterval (${f}) puts the threshold at ${thresholdMs / 1000} s, at or above lambdaTimeoutSeconds (${t.timeoutSeconds}), so the alarm could never fire: give less than ${Math.floor((t.timeoutSeconds / interval) * 100) / 100}, or false to turn it off`,
        { fractionOfInterval: f, timeoutSeconds: t.timeoutSeconds },
      );
    }
    return { fractionOfInterval: f, thresholdMs };
  };
  const runDuration = durationAlarm('runDuration', runDefault);
  const batchDuration = durationAlarm('batchDuration', runDefault / 2);

  const noInputOpts = alarms.noInput === undefined && legacy.noInputAlarmMinutes === undefined && !t.scheduled ? undefined : optionsOf(alarms.noInput);
  let noInput: ResolvedAlarms['noInput'];
  if (noInputOpts) {
    let intervals = noInputOpts.intervals;
    if (intervals === undefined && legacy.noInputAlarmMinutes !== undefined) {
      const minutes = wholeNumber(scope, 'noInputAlarmMinutes', legacy.noInputAlarmMinutes, 1, 1440, 'CloudWatch periods last at most a day');
      if (minutes * 60 < interval) {
        invalid(scope, `noInputAlarmMinutes (${minutes}) is shorter than scheduleInterval (${interval / 60} min), so it would fire between runs: set it to at least ${interval / 60}`, { noInputMinutes: minutes });
      }
      intervals = Math.ceil((minutes * 60) / interval);
    }
    noInput = { intervals: wholeNumber(scope, 'alarms.noInput.intervals', intervals ?? 4, 1, periodsCap, `CloudWatch evaluates at most ${periodsCap} periods of ${interval / 60} min`) };
  }

  const growingOpts = optionsOf(alarms.stateRowsGrowing);
  let stateRowsGrowing: ResolvedAlarms['stateRowsGrowing'];
  if (growingOpts) {
    const percentPerDay = growingOpts.percentPerDay ?? 10;
    if (typeof percentPerDay !== 'number' || !Number.isFinite(percentPerDay) || percentPerDay <= 0) {
      invalid(scope, `alarms.stateRowsGrowing.percentPerDay (${percentPerDay}) must be a percentage above 0, e.g. 10 for 10% a day`, { percentPerDay });
    }
    stateRowsGrowing = { percentPerDay, days: wholeNumber(scope, 'alarms.stateRowsGrowing.days', growingOpts.days ?? 2, 1, 7, 'CloudWatch evaluates at most 7 periods of a day') };
  }

  const aboveOpts = alarms.stateRowsAbove === undefined && legacy.stateRowsAlarmThreshold !== undefined ? { threshold: legacy.stateRowsAlarmThreshold } : alarms.stateRowsAbove || undefined;
  const stateRowsAbove = aboveOpts && {
    threshold: wholeNumber(scope, alarms.stateRowsAbove ? 'alarms.stateRowsAbove.threshold' : 'stateRowsAlarmThreshold', aboveOpts.threshold, 1, Number.MAX_SAFE_INTEGER, 'give a row count'),
  };

  const countAlarm = (name: 'lateRowsDropped' | 'deadLetters', legacyName: keyof LegacyAlarmProps, what: string) => {
    const opts = optionsOf(alarms[name]);
    return opts && { threshold: wholeNumber(scope, ...from(`alarms.${name}.threshold`, opts.threshold, legacyName, 0), 0, Number.MAX_SAFE_INTEGER, `give a ${what} count; 0 alarms on any ${what}`) };
  };
  const lateRowsDropped = countAlarm('lateRowsDropped', 'lateRowsAlarmThreshold', 'late row');
  const deadLetters = countAlarm('deadLetters', 'deadLetterAlarmThreshold', 'dead letter');

  const behindOpts = optionsOf(alarms.fallingBehind);
  const fallingBehind = behindOpts && {
    threshold: wholeNumber(scope, 'alarms.fallingBehind.threshold', behindOpts.threshold ?? 0, 0, Number.MAX_SAFE_INTEGER, 'give a count of files or records; 0 alarms on any backlog'),
    runs: wholeNumber(scope, ...from('alarms.fallingBehind.runs', behindOpts.runs, 'fallingBehindAlarmRuns', 2), 1, periodsCap, `CloudWatch evaluates at most ${periodsCap} periods of ${interval / 60} min`),
  };

  const failureQueueNotEmpty = alarms.failureQueueNotEmpty === false ? undefined : {};

  // The state machine's alarms exist only with `parallelism`; setting one without it is refused.
  const executionAlarms = ['executionFailed', 'executionTimedOut', 'executionDuration'] as const;
  let executionFailed: ResolvedAlarms['executionFailed'];
  let executionTimedOut: ResolvedAlarms['executionTimedOut'];
  let executionDuration: ResolvedAlarms['executionDuration'];
  if (t.executionTimeoutSeconds === undefined) {
    const given = executionAlarms.filter((k) => alarms[k] !== undefined);
    if (given.length > 0) invalid(scope, `alarms.${given[0]} alarms on the scale-out state machine, which exists only with \`parallelism\`: add parallelism, or drop alarms.${given[0]}`, { [given[0]]: alarms[given[0]] });
  } else {
    const failedOpts = optionsOf(alarms.executionFailed);
    executionFailed = failedOpts && { threshold: wholeNumber(scope, 'alarms.executionFailed.threshold', failedOpts.threshold ?? 1, 1, 1_000_000, 'count failed executions per schedule interval, e.g. 1') };
    executionTimedOut = alarms.executionTimedOut === false ? undefined : {};
    const durationOpts = optionsOf(alarms.executionDuration);
    executionDuration = durationOpts && {
      thresholdSeconds: wholeNumber(
        scope,
        'alarms.executionDuration.thresholdSeconds',
        durationOpts.thresholdSeconds ?? interval,
        1,
        t.executionTimeoutSeconds - 1,
        `an execution lasts at most parallelism.executionTimeoutSeconds (${t.executionTimeoutSeconds}), so a higher threshold could never be reached`,
      ),
    };
  }

  const resolved: ResolvedAlarms = {
    runFailed,
    batchDuration,
    runDuration,
    noInput,
    stateRowsGrowing,
    stateRowsAbove,
    lateRowsDropped,
    deadLetters,
    fallingBehind,
    failureQueueNotEmpty,
    executionFailed,
    executionTimedOut,
    executionDuration,
  };
  return Object.fromEntries(Object.entries(resolved).filter(([, v]) => v !== undefined)) as ResolvedAlarms;
}

// ---------------------------------------------------------------- the alarms

/** What the alarms read: the pipeline's metrics, and the two AWS metrics that are not in its summary line. */
export interface AlarmSources {
  readonly pipelineName: string;
  readonly intervalSeconds: number;
  readonly deadLetterPrefix: string;
  /** A summary-line metric of this pipeline with the given statistic and period. */
  metric(name: string, statistic: string, period: Duration): cloudwatch.Metric;
  readonly lambdaErrors: (period: Duration) => cloudwatch.IMetric;
  readonly queueDepth: (period: Duration) => cloudwatch.IMetric;
  /** With `parallelism`: the state machine's metrics (AWS/States). */
  readonly execution?: ExecutionMetrics;
}

/** The scale-out state machine's metrics, each with the given statistic and period. */
interface ExecutionMetrics {
  failed(period: Duration): cloudwatch.Metric;
  timedOut(period: Duration): cloudwatch.Metric;
  /** ExecutionTime in milliseconds, Maximum. */
  time(period: Duration): cloudwatch.Metric;
  started(period: Duration): cloudwatch.Metric;
  succeeded(period: Duration): cloudwatch.Metric;
}

/** One alarm: it fires when `metric` compares to `threshold` as `comparison` in `periods` consecutive periods (default 1). */
interface AlarmRow {
  readonly name: AlarmName;
  readonly id: string;
  readonly description: string;
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  readonly comparison: cloudwatch.ComparisonOperator;
  readonly periods?: number;
  /** No data counts as breaching (default: not breaching: no run, nothing went wrong in it). */
  readonly missingIsBreaching?: boolean;
}

/**
 * The trend of the state: the day's peak StateRows against the previous day's, in percent.
 * `rows - DIFF(rows)` is the previous day's value; a previous day of 0 rows divides by zero, and
 * metric math drops that point (no growth rate from nothing).
 */
export const STATE_GROWTH_EXPRESSION = '100 * DIFF(rows) / (rows - DIFF(rows))';

function stateGrowthPercent(src: Pick<AlarmSources, 'metric'>): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: STATE_GROWTH_EXPRESSION,
    usingMetrics: { rows: src.metric('StateRows', cloudwatch.Stats.MAXIMUM, Duration.days(1)) },
    period: Duration.days(1),
    label: 'state rows: growth of the daily peak over the previous day (%)',
  });
}

/** Builds the alarms `r` turns on, one row each, with `actions` on every one. */
export function createPipelineAlarms(scope: Construct, r: ResolvedAlarms, src: AlarmSources, actions: readonly cloudwatch.IAlarmAction[]): Partial<Record<AlarmName, cloudwatch.Alarm>> {
  const period = Duration.seconds(src.intervalSeconds);
  const { SUM, MAXIMUM } = cloudwatch.Stats;
  const op = cloudwatch.ComparisonOperator;
  const intervalMin = src.intervalSeconds / 60;
  const rows: AlarmRow[] = [];
  if (r.runFailed) {
    rows.push({
      name: 'runFailed',
      id: 'RunFailedAlarm',
      description: 'a scheduled run failed (its event is in the failure queue; the log line "run-failed" says whether it is retriable)',
      metric: src.lambdaErrors(period),
      threshold: r.runFailed.threshold,
      comparison: op.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
  }
  if (r.batchDuration) {
    rows.push({
      name: 'batchDuration',
      id: 'BatchDurationAlarm',
      description: `a batch took more than ${r.batchDuration.thresholdMs / 1000} s (${r.batchDuration.fractionOfInterval} of the ${intervalMin}-min interval); give the function more memory, or lower the source's max files/records per trigger`,
      metric: src.metric('MaxBatchDurationMs', MAXIMUM, period),
      threshold: r.batchDuration.thresholdMs,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (r.runDuration) {
    rows.push({
      name: 'runDuration',
      id: 'RunDurationAlarm',
      description: `a run took more than ${r.runDuration.thresholdMs / 1000} s (${r.runDuration.fractionOfInterval} of the ${intervalMin}-min interval); it will soon stop at its deadline with backlog left`,
      metric: src.metric('RunDurationMs', MAXIMUM, period),
      threshold: r.runDuration.thresholdMs,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (r.noInput) {
    rows.push({
      name: 'noInput',
      id: 'NoInputAlarm',
      description: `no input row in ${r.noInput.intervals} intervals of ${intervalMin} min (or no run reported at all); check the producer and the schedule`,
      metric: src.metric('RowsIn', SUM, period),
      threshold: 1,
      comparison: op.LESS_THAN_THRESHOLD,
      periods: r.noInput.intervals,
      // No summary line is no input too: the schedule stopped, or every run failed before it.
      missingIsBreaching: true,
    });
  }
  if (r.stateRowsGrowing) {
    rows.push({
      name: 'stateRowsGrowing',
      id: 'StateRowsGrowingAlarm',
      description: `the daily peak of state rows grew more than ${r.stateRowsGrowing.percentPerDay}% a day, ${r.stateRowsGrowing.days} day(s) in a row; check the watermark advances (event times, withWatermark delay) so old state is evicted`,
      metric: stateGrowthPercent(src),
      threshold: r.stateRowsGrowing.percentPerDay,
      comparison: op.GREATER_THAN_THRESHOLD,
      periods: r.stateRowsGrowing.days,
    });
  }
  if (r.stateRowsAbove) {
    rows.push({
      name: 'stateRowsAbove',
      id: 'StateRowsAlarm',
      description: `more than ${r.stateRowsAbove.threshold} state rows; check the watermark advances (event times, withWatermark delay) so old state is evicted`,
      metric: src.metric('StateRows', MAXIMUM, period),
      threshold: r.stateRowsAbove.threshold,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (r.lateRowsDropped) {
    rows.push({
      name: 'lateRowsDropped',
      id: 'LateRowsAlarm',
      description: `more than ${r.lateRowsDropped.threshold} rows in a run arrived behind the watermark and were dropped; measure the lateness (sluice lateness) and raise the withWatermark delay`,
      metric: src.metric('DroppedByWatermark', MAXIMUM, period),
      threshold: r.lateRowsDropped.threshold,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (r.deadLetters) {
    rows.push({
      name: 'deadLetters',
      id: 'DeadLetterAlarm',
      description: `more than ${r.deadLetters.threshold} malformed records in a run went to ${src.deadLetterPrefix}/malformed/: read them there, then fix the producer or the query's schema`,
      metric: src.metric('DeadLetters', MAXIMUM, period),
      threshold: r.deadLetters.threshold,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (r.fallingBehind) {
    rows.push({
      name: 'fallingBehind',
      id: 'FallingBehindAlarm',
      description: `${r.fallingBehind.runs} runs in a row stopped at their deadline with more than ${r.fallingBehind.threshold} files or records left; raise lambdaTimeoutSeconds or memory, or the rate limits`,
      metric: src.metric('BacklogLeft', MAXIMUM, period),
      threshold: r.fallingBehind.threshold,
      comparison: op.GREATER_THAN_THRESHOLD,
      periods: r.fallingBehind.runs,
    });
  }
  if (r.failureQueueNotEmpty) {
    rows.push({
      name: 'failureQueueNotEmpty',
      id: 'FailureQueueAlarm',
      description: 'failed or undelivered scheduled events wait in the failure queue',
      metric: src.queueDepth(period),
      threshold: 0,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (src.execution) {
    if (r.executionFailed) {
      rows.push({
        name: 'executionFailed',
        id: 'ExecutionFailedAlarm',
        description: 'a scale-out run (state machine execution) failed after its tasks\' retries; its execution history names the task, and the next tick resumes from the checkpoint',
        metric: src.execution.failed(period),
        threshold: r.executionFailed.threshold,
        comparison: op.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (r.executionTimedOut) {
      rows.push({
        name: 'executionTimedOut',
        id: 'ExecutionTimedOutAlarm',
        description: 'a scale-out run reached its execution timeout and was stopped; raise parallelism.executionTimeoutSeconds, or the concurrencies',
        metric: src.execution.timedOut(period),
        threshold: 1,
        comparison: op.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (r.executionDuration) {
      rows.push({
        name: 'executionDuration',
        id: 'ExecutionDurationAlarm',
        description: `a scale-out run took more than ${r.executionDuration.thresholdSeconds} s (the interval is ${intervalMin} min), so ticks were skipped while it ran; raise the concurrencies or the task memory`,
        metric: src.execution.time(period),
        threshold: r.executionDuration.thresholdSeconds * 1000,
        comparison: op.GREATER_THAN_THRESHOLD,
      });
    }
  }
  const alarms: Partial<Record<AlarmName, cloudwatch.Alarm>> = {};
  for (const row of rows) alarms[row.name] = addAlarm(scope, src.pipelineName, row, actions);
  return alarms;
}

/** The one place an alarm is made: over several periods, every one of them must breach. */
function addAlarm(scope: Construct, pipelineName: string, row: AlarmRow, actions: readonly cloudwatch.IAlarmAction[]): cloudwatch.Alarm {
  const periods = row.periods ?? 1;
  const alarm = new cloudwatch.Alarm(scope, row.id, {
    alarmDescription: `sluice ${pipelineName}: ${row.description}`,
    metric: row.metric,
    threshold: row.threshold,
    comparisonOperator: row.comparison,
    evaluationPeriods: periods,
    datapointsToAlarm: periods,
    treatMissingData: row.missingIsBreaching ? cloudwatch.TreatMissingData.BREACHING : cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  if (actions.length > 0) alarm.addAlarmAction(...actions);
  return alarm;
}

// ---------------------------------------------------------------- the dashboard

/**
 * The dashboard: the plots of `sluice report`, per run, over the last week, and the alarms'
 * status. Durations are drawn against the schedule interval (a horizontal line), with the duration
 * alarms' thresholds where they are on.
 */
export function createPipelineDashboard(
  scope: Construct,
  src: Pick<AlarmSources, 'metric' | 'intervalSeconds' | 'pipelineName' | 'execution'>,
  alarms: Partial<Record<AlarmName, cloudwatch.Alarm>>,
  dashboardName?: string,
): cloudwatch.Dashboard {
  const period = Duration.seconds(src.intervalSeconds);
  const { SUM, MAXIMUM } = cloudwatch.Stats;
  const m = (name: string, statistic: string, label: string) => src.metric(name, statistic, period).with({ label });
  const graph = (title: string, left: cloudwatch.IMetric[], extra: Partial<cloudwatch.GraphWidgetProps> = {}) =>
    new cloudwatch.GraphWidget({ title, left, width: 12, height: 6, ...extra });
  const thresholdLine = (alarm: cloudwatch.Alarm | undefined, label: string): cloudwatch.HorizontalAnnotation[] =>
    alarm ? [{ ...alarm.toAnnotation(), label }] : [];

  const graphs: cloudwatch.IWidget[] = [
    graph('Input rows vs output rows per run', [m('RowsIn', SUM, 'rows in'), m('RowsOut', SUM, 'rows out')]),
    graph('Batch and run duration vs the schedule interval (ms)', [m('MaxBatchDurationMs', MAXIMUM, 'longest batch'), m('RunDurationMs', MAXIMUM, 'run')], {
      leftAnnotations: [
        { value: src.intervalSeconds * 1000, label: `schedule interval (${src.intervalSeconds / 60} min)`, color: '#d62728' },
        ...thresholdLine(alarms.batchDuration, 'batch duration alarm'),
        ...thresholdLine(alarms.runDuration, 'run duration alarm'),
      ],
      leftYAxis: { min: 0 },
    }),
    graph('Watermark lag behind the wall clock at run end (ms)', [m('WatermarkLagMs', MAXIMUM, 'watermark lag')], { leftYAxis: { min: 0 } }),
    graph('State rows', [m('StateRows', MAXIMUM, 'state rows')], { right: [stateGrowthPercent(src)], leftYAxis: { min: 0 } }),
    graph('Late rows dropped and dead letters', [m('DroppedByWatermark', SUM, 'late rows dropped'), m('DeadLetters', SUM, 'dead letters')], { leftYAxis: { min: 0 } }),
    graph('Backlog left when the run stopped', [m('BacklogLeft', MAXIMUM, 'backlog left')], { leftAnnotations: thresholdLine(alarms.fallingBehind, 'falling behind alarm'), leftYAxis: { min: 0 } }),
  ];
  const x = src.execution;
  if (x) {
    graphs.push(
      graph(
        'Scale-out runs (state machine executions)',
        [x.started(period).with({ label: 'started' }), x.succeeded(period).with({ label: 'succeeded' }), x.failed(period).with({ label: 'failed' }), x.timedOut(period).with({ label: 'timed out' })],
        { leftYAxis: { min: 0 } },
      ),
      graph('Scale-out run duration vs the schedule interval (ms)', [x.time(period).with({ label: 'execution time' })], {
        leftAnnotations: [
          { value: src.intervalSeconds * 1000, label: `schedule interval (${src.intervalSeconds / 60} min)`, color: '#d62728' },
          ...thresholdLine(alarms.executionDuration, 'execution duration alarm'),
        ],
        leftYAxis: { min: 0 },
      }),
    );
  }
  const rows: cloudwatch.IWidget[][] = [];
  const all = Object.values(alarms).filter((a): a is cloudwatch.Alarm => a !== undefined);
  if (all.length > 0) rows.push([new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: all, width: 24, height: Math.ceil(all.length / 4) + 1 })]);
  for (let i = 0; i < graphs.length; i += 2) rows.push(graphs.slice(i, i + 2));
  return new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: dashboardName ?? `sluice-${src.pipelineName.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    defaultInterval: Duration.days(7),
    widgets: rows,
  });
}
