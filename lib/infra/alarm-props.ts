/**
 * What the AvailableNowPipeline's `alarms` prop sets (PipelineAlarmsProps), the flat props it
 * replaced (LegacyAlarmProps), and the alarms after defaults and checks (alarm-resolve.ts);
 * alarms.ts builds them.
 */

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
  | 'notificationDeadLetters'
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
  /** An S3 source with discovery 'notifications': messages visible in its notifications' dead-letter queue. @default true */
  readonly notificationDeadLetters?: boolean;
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
  readonly notificationDeadLetters?: Record<string, never>;
  readonly executionFailed?: { readonly threshold: number };
  readonly executionTimedOut?: Record<string, never>;
  readonly executionDuration?: { readonly thresholdSeconds: number };
}
