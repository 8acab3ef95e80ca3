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
 * schedule interval (ExecutionTime, written when an execution ends). With an S3 source in
 * notification mode, one alarm reads the depth of its notifications' dead-letter queue.
 *
 * `alarms` (PipelineAlarmsProps, alarm-props.ts) sets each alarm's threshold or turns it off with
 * `false`; resolvePipelineAlarms (alarm-resolve.ts) checks the values once, at synth, and
 * createPipelineAlarms builds them from one table through one helper. The dashboard is
 * pipeline-dashboard.ts.
 */
import { Duration, aws_cloudwatch as cloudwatch } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { AlarmName, ResolvedAlarms } from './alarm-props';

/** What the alarms read: the pipeline's metrics, and the two AWS metrics that are not in its summary line. */
export interface AlarmSources {
  readonly pipelineName: string;
  readonly intervalSeconds: number;
  readonly deadLetterPrefix: string;
  /** A summary-line metric of this pipeline with the given statistic and period. */
  metric(name: string, statistic: string, period: Duration): cloudwatch.Metric;
  readonly lambdaErrors: (period: Duration) => cloudwatch.IMetric;
  readonly queueDepth: (period: Duration) => cloudwatch.IMetric;
  /** An S3 source in notification mode: messages visible in its notifications' dead-letter queue (Maximum). */
  readonly notificationDeadLetters?: (period: Duration) => cloudwatch.IMetric;
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

export function stateGrowthPercent(src: Pick<AlarmSources, 'metric'>): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: STATE_GROWTH_EXPRESSION,
    usingMetrics: { rows: src.metric('StateRows', cloudwatch.Stats.MAXIMUM, Duration.days(1)) },
    period: Duration.days(1),
    label: 'state rows: growth of the daily peak over the previous day (%)',
  });
}

/**
 * Builds the alarms `r` turns on, one row each, with `actions` on every one when it fires and
 * `okActions` when it is OK again (the alarm topic's: whoever was told of the alarm hears it ended).
 */
export function createPipelineAlarms(
  scope: Construct,
  r: ResolvedAlarms,
  src: AlarmSources,
  actions: readonly cloudwatch.IAlarmAction[],
  okActions: readonly cloudwatch.IAlarmAction[] = [],
): Partial<Record<AlarmName, cloudwatch.Alarm>> {
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
  if (r.notificationDeadLetters && src.notificationDeadLetters) {
    rows.push({
      name: 'notificationDeadLetters',
      id: 'NotificationDeadLettersAlarm',
      description:
        'S3 notifications of new files went to the dead-letter queue of the landing notifications: malformed messages, or files no run committed within maxReceiveCount receives. Read them there; redrive the ones naming files (StartMessageMoveTask) once the runs succeed again',
      metric: src.notificationDeadLetters(period),
      threshold: 0,
      comparison: op.GREATER_THAN_THRESHOLD,
    });
  }
  if (src.execution) {
    if (r.executionFailed) {
      rows.push({
        name: 'executionFailed',
        id: 'ExecutionFailedAlarm',
        description:
          "a scale-out run (state machine execution) failed after its tasks' retries; its execution history names the task, and the next tick resumes from the checkpoint",
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
  for (const row of rows) alarms[row.name] = addAlarm(scope, src.pipelineName, row, actions, okActions);
  return alarms;
}

/** The one place an alarm is made: over several periods, every one of them must breach. */
function addAlarm(
  scope: Construct,
  pipelineName: string,
  row: AlarmRow,
  actions: readonly cloudwatch.IAlarmAction[],
  okActions: readonly cloudwatch.IAlarmAction[],
): cloudwatch.Alarm {
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
  if (okActions.length > 0) alarm.addOkAction(...okActions);
  return alarm;
}
