/** The alarms' props checked once, at synth, defaults applied (alarms.ts builds what comes out). */
import type { Construct } from 'constructs';
import type { AlarmName, LegacyAlarmProps, PipelineAlarmsProps, ResolvedAlarms } from './alarm-props';
import { invalid, wholeNumber } from './binding';

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
      invalid(scope, `${flat} (${legacy[flat]}) and alarms.${key} both configure the ${key} alarm: keep alarms.${key} and drop ${flat}`, {
        [flat]: legacy[flat],
      });
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
    threshold: wholeNumber(
      scope,
      ...from('alarms.runFailed.threshold', runFailedOpts.threshold, 'runFailedAlarmThreshold', 1),
      1,
      1_000_000,
      'count failed invocations per schedule interval, e.g. 1',
    ),
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
        invalid(
          scope,
          `noInputAlarmMinutes (${minutes}) is shorter than scheduleInterval (${interval / 60} min), so it would fire between runs: set it to at least ${interval / 60}`,
          { noInputMinutes: minutes },
        );
      }
      intervals = Math.ceil((minutes * 60) / interval);
    }
    noInput = {
      intervals: wholeNumber(
        scope,
        'alarms.noInput.intervals',
        intervals ?? 4,
        1,
        periodsCap,
        `CloudWatch evaluates at most ${periodsCap} periods of ${interval / 60} min`,
      ),
    };
  }

  const growingOpts = optionsOf(alarms.stateRowsGrowing);
  let stateRowsGrowing: ResolvedAlarms['stateRowsGrowing'];
  if (growingOpts) {
    const percentPerDay = growingOpts.percentPerDay ?? 10;
    if (typeof percentPerDay !== 'number' || !Number.isFinite(percentPerDay) || percentPerDay <= 0) {
      invalid(scope, `alarms.stateRowsGrowing.percentPerDay (${percentPerDay}) must be a percentage above 0, e.g. 10 for 10% a day`, { percentPerDay });
    }
    stateRowsGrowing = {
      percentPerDay,
      days: wholeNumber(scope, 'alarms.stateRowsGrowing.days', growingOpts.days ?? 2, 1, 7, 'CloudWatch evaluates at most 7 periods of a day'),
    };
  }

  const aboveOpts =
    alarms.stateRowsAbove === undefined && legacy.stateRowsAlarmThreshold !== undefined
      ? { threshold: legacy.stateRowsAlarmThreshold }
      : alarms.stateRowsAbove || undefined;
  const stateRowsAbove = aboveOpts && {
    threshold: wholeNumber(
      scope,
      alarms.stateRowsAbove ? 'alarms.stateRowsAbove.threshold' : 'stateRowsAlarmThreshold',
      aboveOpts.threshold,
      1,
      Number.MAX_SAFE_INTEGER,
      'give a row count',
    ),
  };

  const countAlarm = (name: 'lateRowsDropped' | 'deadLetters', legacyName: keyof LegacyAlarmProps, what: string) => {
    const opts = optionsOf(alarms[name]);
    return (
      opts && {
        threshold: wholeNumber(
          scope,
          ...from(`alarms.${name}.threshold`, opts.threshold, legacyName, 0),
          0,
          Number.MAX_SAFE_INTEGER,
          `give a ${what} count; 0 alarms on any ${what}`,
        ),
      }
    );
  };
  const lateRowsDropped = countAlarm('lateRowsDropped', 'lateRowsAlarmThreshold', 'late row');
  const deadLetters = countAlarm('deadLetters', 'deadLetterAlarmThreshold', 'dead letter');

  const behindOpts = optionsOf(alarms.fallingBehind);
  const fallingBehind = behindOpts && {
    threshold: wholeNumber(
      scope,
      'alarms.fallingBehind.threshold',
      behindOpts.threshold ?? 0,
      0,
      Number.MAX_SAFE_INTEGER,
      'give a count of files or records; 0 alarms on any backlog',
    ),
    runs: wholeNumber(
      scope,
      ...from('alarms.fallingBehind.runs', behindOpts.runs, 'fallingBehindAlarmRuns', 2),
      1,
      periodsCap,
      `CloudWatch evaluates at most ${periodsCap} periods of ${interval / 60} min`,
    ),
  };

  const failureQueueNotEmpty = alarms.failureQueueNotEmpty === false ? undefined : {};
  const notificationDeadLetters = alarms.notificationDeadLetters === false ? undefined : {};

  // The state machine's alarms exist only with `parallelism`; setting one without it is refused.
  const executionAlarms = ['executionFailed', 'executionTimedOut', 'executionDuration'] as const;
  let executionFailed: ResolvedAlarms['executionFailed'];
  let executionTimedOut: ResolvedAlarms['executionTimedOut'];
  let executionDuration: ResolvedAlarms['executionDuration'];
  if (t.executionTimeoutSeconds === undefined) {
    const given = executionAlarms.filter((k) => alarms[k] !== undefined);
    if (given.length > 0)
      invalid(
        scope,
        `alarms.${given[0]} alarms on the scale-out state machine, which exists only with \`parallelism\`: add parallelism, or drop alarms.${given[0]}`,
        { [given[0]]: alarms[given[0]] },
      );
  } else {
    const failedOpts = optionsOf(alarms.executionFailed);
    executionFailed = failedOpts && {
      threshold: wholeNumber(
        scope,
        'alarms.executionFailed.threshold',
        failedOpts.threshold ?? 1,
        1,
        1_000_000,
        'count failed executions per schedule interval, e.g. 1',
      ),
    };
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
    notificationDeadLetters,
    executionFailed,
    executionTimedOut,
    executionDuration,
  };
  return Object.fromEntries(Object.entries(resolved).filter(([, v]) => v !== undefined)) as ResolvedAlarms;
}
