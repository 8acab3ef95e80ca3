/**
 * CDK assertions on the pipeline's alarms and dashboard (lib/infra/alarms.ts, alarm-props.ts,
 * alarm-resolve.ts, pipeline-dashboard.ts). The stacks skip bundling (no esbuild), so each synth
 * takes milliseconds. Expected thresholds are computed here from the schedule, the timeout and
 * the documented defaults, not read off the template.
 */
import { App, Duration, Stack, aws_cloudwatch_actions as actions, aws_sns as sns } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AvailableNowPipeline, STATE_GROWTH_EXPRESSION, type AvailableNowPipelineProps } from '../../lib/infra/available-now-pipeline';
import { SUMMARY_METRIC_NAMES } from '../../lib/aws/lambda/emf';
import { rejectionOf } from '../helpers/template';

// ---- factories -------------------------------------------------------------------------------

const PIPELINE = 'Test-Pipeline';
const DIMS = [{ Name: 'Pipeline', Value: PIPELINE }];

interface Synth {
  readonly stack: Stack;
  readonly pipeline: AvailableNowPipeline;
  readonly template: Template;
}

/** A stack `Test` with one pipeline `Pipeline`, not bundled. */
function synth(props: AvailableNowPipelineProps = {}, extra?: (stack: Stack) => Partial<AvailableNowPipelineProps>): Synth {
  // Without CDK's built-in CloudFormation validation: it only prints its findings (no test here
  // reads them), and its WebAssembly engine costs seconds of CPU per file.
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
  const pipeline = new AvailableNowPipeline(stack, 'Pipeline', { ...props, ...(extra ? extra(stack) : {}) });
  return { stack, pipeline, template: Template.fromStack(stack) };
}

const rejection = (props: AvailableNowPipelineProps): string => rejectionOf(() => synth(props));

type Props = Record<string, unknown>;

/** The properties of every alarm in the template. */
const alarmsOf = (t: Template): Props[] => Object.values(t.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as Props);

/** The one alarm on `metricName` (a plain metric alarm), failing when there is none or several. */
function alarmOn(t: Template, metricName: string): Props {
  const found = alarmsOf(t).filter((a) => a.MetricName === metricName);
  expect(found).toHaveLength(1);
  return found[0];
}

/** The metric names an alarm reads, plain or inside its metric-math query. */
function metricNamesOf(alarm: Props): string[] {
  if (alarm.MetricName) return [alarm.MetricName as string];
  return ((alarm.Metrics as Array<{ MetricStat?: { Metric: { MetricName: string } } }>) ?? []).flatMap((q) =>
    q.MetricStat ? [q.MetricStat.Metric.MetricName] : [],
  );
}

/** The trend alarm: the one whose query holds an expression. */
function trendAlarm(t: Template): Props | undefined {
  return alarmsOf(t).find((a) => Array.isArray(a.Metrics));
}

interface DashboardWidget {
  readonly type: string;
  readonly properties: {
    readonly title: string;
    readonly metrics?: unknown[][];
    readonly alarms?: string[];
    readonly annotations?: { readonly horizontal?: Array<{ value: number; label?: string }>; readonly alarms?: string[] };
  };
}

/**
 * The dashboard body as JSON: CloudFormation joins it from strings and tokens (the alarms' ARNs);
 * each token becomes the text `<token ...>` inside its JSON string.
 */
function dashboardBody(t: Template): { start?: string; widgets: DashboardWidget[] } {
  const boards = Object.values(t.findResources('AWS::CloudWatch::Dashboard'));
  expect(boards).toHaveLength(1);
  const body = boards[0].Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text =
    typeof body === 'string' ? body : body['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : `<token ${JSON.stringify(p).replace(/"/g, "'")}>`)).join('');
  return JSON.parse(text) as { start?: string; widgets: DashboardWidget[] };
}

const dashboardOf = (t: Template): DashboardWidget[] => dashboardBody(t).widgets;

/** The summary-line metrics a graph draws: [name, statistic] of each `[namespace, name, 'Pipeline', pipeline, {stat}]` row. */
function graphedMetrics(w: DashboardWidget): Array<[string, string]> {
  return (w.properties.metrics ?? [])
    .filter((row) => row[0] === 'Sluice')
    .map((row) => {
      expect(row.slice(2, 4)).toEqual(['Pipeline', PIPELINE]);
      return [row[1] as string, (row[row.length - 1] as { stat: string }).stat];
    });
}

const widget = (widgets: DashboardWidget[], title: RegExp) => {
  const found = widgets.filter((w) => title.test(w.properties.title));
  expect(found).toHaveLength(1);
  return found[0];
};

// ---- scenarios -------------------------------------------------------------------------------

describe('with the default thresholds (a 15-minute schedule, a 600-second timeout)', () => {
  const intervalS = 15 * 60;
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  it('creates nine alarms: every one but the absolute state-rows ceiling', () => {
    expect(Object.keys(s.pipeline.alarms).sort()).toEqual(
      [
        'batchDuration',
        'deadLetters',
        'failureQueueNotEmpty',
        'fallingBehind',
        'lateRowsDropped',
        'noInput',
        'runDuration',
        'runFailed',
        'stateRowsGrowing',
      ].sort(),
    );
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 9);
  });

  // [metric, statistic, period s, threshold, comparison, evaluation periods (= datapoints), missing data]
  it.each<[string, string, number, number, string, number, string]>([
    // half the interval: 0.5 * 900 s (80% of the 600 s timeout, 480 s, is longer)
    ['RunDurationMs', 'Maximum', intervalS, 0.5 * intervalS * 1000, 'GreaterThanThreshold', 1, 'notBreaching'],
    // half the run's threshold
    ['MaxBatchDurationMs', 'Maximum', intervalS, 0.25 * intervalS * 1000, 'GreaterThanThreshold', 1, 'notBreaching'],
    // four intervals in a row with fewer than one input row, no summary line counting as none
    ['RowsIn', 'Sum', intervalS, 1, 'LessThanThreshold', 4, 'breaching'],
    ['DroppedByWatermark', 'Maximum', intervalS, 0, 'GreaterThanThreshold', 1, 'notBreaching'],
    ['DeadLetters', 'Maximum', intervalS, 0, 'GreaterThanThreshold', 1, 'notBreaching'],
    // two runs in a row with any backlog left
    ['BacklogLeft', 'Maximum', intervalS, 0, 'GreaterThanThreshold', 2, 'notBreaching'],
  ])('alarms on %s (%s over %i s) against %d, %s, over %i period(s), missing data %s', (metric, statistic, period, threshold, comparison, periods, missing) => {
    expect(alarmOn(s.template, metric)).toMatchObject({
      Namespace: 'Sluice',
      Dimensions: DIMS,
      Statistic: statistic,
      Period: period,
      Threshold: threshold,
      ComparisonOperator: comparison,
      EvaluationPeriods: periods,
      DatapointsToAlarm: periods,
      TreatMissingData: missing,
    });
  });

  it('alarms on one failed invocation per interval from Lambda Errors', () => {
    expect(alarmOn(s.template, 'Errors')).toMatchObject({
      Namespace: 'AWS/Lambda',
      Statistic: 'Sum',
      Period: intervalS,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on any event in the failure queue', () => {
    expect(alarmOn(s.template, 'ApproximateNumberOfMessagesVisible')).toMatchObject({
      Namespace: 'AWS/SQS',
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on the trend of the state, the daily peak against the previous day, not on its size', () => {
    expect(alarmsOf(s.template).filter((a) => a.MetricName === 'StateRows')).toEqual([]);
    const trend = trendAlarm(s.template)!;
    expect(trend).toMatchObject({
      Threshold: 10,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      TreatMissingData: 'notBreaching',
    });
    expect(trend.Metrics).toEqual([
      { Id: expect.any(String), Expression: '100 * DIFF(rows) / (rows - DIFF(rows))', Label: expect.any(String), ReturnData: true },
      {
        Id: 'rows',
        MetricStat: { Metric: { Namespace: 'Sluice', MetricName: 'StateRows', Dimensions: DIMS }, Period: 86_400, Stat: 'Maximum' },
        ReturnData: false,
      },
    ]);
  });

  it('alarms only on metrics the handler emits in its summary line, or on AWS metrics', () => {
    for (const alarm of alarmsOf(s.template)) {
      const namespace =
        alarm.Namespace ?? (alarm.Metrics as Array<{ MetricStat?: { Metric: { Namespace: string } } }>).find((q) => q.MetricStat)!.MetricStat!.Metric.Namespace;
      if (namespace === 'Sluice') for (const name of metricNamesOf(alarm)) expect(SUMMARY_METRIC_NAMES).toContain(name);
      else expect(namespace).toMatch(/^AWS\//);
    }
  });

  it('sends the alarms nowhere unless alarmActions, alarmEmail or alarmTopic says where', () => {
    for (const alarm of alarmsOf(s.template)) {
      expect(alarm.AlarmActions).toBeUndefined();
      expect(alarm.OKActions).toBeUndefined();
    }
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    s.template.resourceCountIs('AWS::SNS::Subscription', 0);
    expect(s.pipeline.alarmTopic).toBeUndefined();
  });

  it('warns about nothing', () => {
    expect(Annotations.fromStack(s.stack).findWarning('*', Match.anyValue())).toEqual([]);
  });
});

describe('what the trend expression computes', () => {
  // DIFF(rows) is the value minus the preceding one; evaluate the expression on one pair of days.
  const growth = (previous: number, today: number) => Function('rows', 'DIFF', `return ${STATE_GROWTH_EXPRESSION}`)(today, () => today - previous) as number;

  it('is the growth of the daily peak in percent of the previous day', () => {
    expect(growth(1000, 1150)).toBeCloseTo(15); // 150 more rows on 1000
    expect(growth(2000, 1000)).toBeCloseTo(-50);
    expect(growth(800, 800)).toBe(0);
  });
});

describe('with thresholds set in alarms (a 10-minute schedule, a 300-second timeout)', () => {
  const intervalS = 600;
  let s: Synth;
  beforeAll(() => {
    s = synth(
      {
        scheduleInterval: Duration.minutes(10),
        lambdaTimeoutSeconds: 300,
        alarms: {
          runFailed: { threshold: 2 },
          batchDuration: { fractionOfInterval: 0.1 },
          runDuration: { fractionOfInterval: 0.4 },
          noInput: { intervals: 9 },
          stateRowsGrowing: { percentPerDay: 25, days: 3 },
          stateRowsAbove: { threshold: 5000 },
          lateRowsDropped: { threshold: 10 },
          deadLetters: { threshold: 3 },
          fallingBehind: { threshold: 100, runs: 4 },
        },
      },
      (stack) => ({ alarmActions: [new actions.SnsAction(new sns.Topic(stack, 'Alerts'))] }),
    );
  });

  it.each<[string, number, number]>([
    ['Errors', 2, 1],
    ['MaxBatchDurationMs', 0.1 * intervalS * 1000, 1],
    ['RunDurationMs', 0.4 * intervalS * 1000, 1],
    ['RowsIn', 1, 9],
    ['StateRows', 5000, 1],
    ['DroppedByWatermark', 10, 1],
    ['DeadLetters', 3, 1],
    ['BacklogLeft', 100, 4],
  ])('alarms on %s against %d over %i interval(s) of 600 s', (metric, threshold, periods) => {
    expect(alarmOn(s.template, metric)).toMatchObject({ Period: intervalS, Threshold: threshold, EvaluationPeriods: periods, DatapointsToAlarm: periods });
  });

  it('alarms on state growing more than 25% a day three days in a row', () => {
    expect(trendAlarm(s.template)).toMatchObject({ Threshold: 25, EvaluationPeriods: 3, DatapointsToAlarm: 3 });
  });

  it('sends every alarm to the topic', () => {
    const all = alarmsOf(s.template);
    expect(all).toHaveLength(10);
    for (const alarm of all) expect(alarm.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^Alerts/) }]);
  });
});

describe('with alarmEmail or alarmTopic', () => {
  /** The logical ids of the topics a list of actions names ({Ref: topic}). */
  const refs = (actions: unknown): string[] => ((actions as Array<{ Ref: string }> | undefined) ?? []).map((a) => a.Ref);
  const topicIds = (t: Template) => Object.keys(t.findResources('AWS::SNS::Topic'));

  it('creates one TLS-only topic with the address subscribed, and every alarm notifies it on ALARM and on OK', () => {
    const s = synth({ alarmEmail: 'oncall@example.com' });
    const [topic] = topicIds(s.template);
    expect(topicIds(s.template)).toHaveLength(1);
    s.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: topic } });
    s.template.resourceCountIs('AWS::SNS::Subscription', 1);
    // enforceSSL: the topic policy denies publishing without TLS (cdk-nag AwsSolutions-SNS3).
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    const all = alarmsOf(s.template);
    expect(all).toHaveLength(Object.keys(s.pipeline.alarms).length);
    expect(all.length).toBeGreaterThanOrEqual(9);
    for (const alarm of all) {
      expect(refs(alarm.AlarmActions)).toEqual([topic]);
      expect(refs(alarm.OKActions)).toEqual([topic]);
    }
    expect(s.pipeline.alarmTopic).toBeDefined();
  });

  it("puts the action on the scale-out state machine's alarms too", () => {
    const s = synth({ alarmEmail: 'oncall@example.com', parallelism: { statePartitions: 2 } });
    const [topic] = topicIds(s.template);
    const all = alarmsOf(s.template);
    expect(all.map((a) => a.MetricName)).toEqual(expect.arrayContaining(['ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionTime']));
    for (const alarm of all) expect(refs(alarm.AlarmActions)).toEqual([topic]);
  });

  it('sends every alarm to a topic you bring, and creates none', () => {
    const s = synth({}, (stack) => ({ alarmTopic: new sns.Topic(stack, 'Pager') }));
    expect(topicIds(s.template)).toEqual([expect.stringMatching(/^Pager/)]);
    s.template.resourceCountIs('AWS::SNS::Subscription', 0);
    for (const alarm of alarmsOf(s.template)) {
      expect(refs(alarm.AlarmActions)).toEqual([topicIds(s.template)[0]]);
      expect(refs(alarm.OKActions)).toEqual([topicIds(s.template)[0]]);
    }
  });

  it('subscribes alarmEmail to the topic you bring, and keeps alarmActions beside it', () => {
    const s = synth({ alarmEmail: 'oncall@example.com' }, (stack) => ({
      alarmTopic: new sns.Topic(stack, 'Pager'),
      alarmActions: [new actions.SnsAction(new sns.Topic(stack, 'Alerts'))],
    }));
    const pager = topicIds(s.template).find((id) => id.startsWith('Pager'))!;
    const alerts = topicIds(s.template).find((id) => id.startsWith('Alerts'))!;
    expect(topicIds(s.template)).toHaveLength(2);
    s.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', TopicArn: { Ref: pager } });
    for (const alarm of alarmsOf(s.template)) {
      expect(refs(alarm.AlarmActions).sort()).toEqual([alerts, pager].sort());
      expect(refs(alarm.OKActions)).toEqual([pager]);
    }
  });

  it.each([
    ['no @', 'oncall.example.com'],
    ['no domain dot', 'oncall@localhost'],
    ['a list', 'a@example.com, b@example.com'],
    ['a space', 'on call@example.com'],
    ['empty', ''],
  ])('refuses an address with %s, naming it, the rule and the fix', (_what, address) => {
    const message = rejection({ alarmEmail: address });
    expect(message).toContain(`alarmEmail ${JSON.stringify(address)} is not one e-mail address`);
    expect(message).toMatch(
      /local-part@domain\.tld.*give one address, e\.g\. "oncall@example\.com", or subscribe several to an SNS topic and pass it as alarmTopic/,
    );
  });

  it('refuses alarmEmail with createAlarms: false (there would be nothing to send)', () => {
    expect(rejection({ createAlarms: false, alarmEmail: 'oncall@example.com' })).toMatch(/createAlarms is false, yet alarmEmail says where alarms go/);
  });
});

describe('when alarms are turned off', () => {
  it('leaves out each alarm set to false, and keeps the others', () => {
    const s = synth({ alarms: { noInput: false, stateRowsGrowing: false, failureQueueNotEmpty: false, batchDuration: false } });
    expect(Object.keys(s.pipeline.alarms).sort()).toEqual(['deadLetters', 'fallingBehind', 'lateRowsDropped', 'runDuration', 'runFailed']);
    const metrics = alarmsOf(s.template).flatMap(metricNamesOf);
    expect(metrics.sort()).toEqual(['BacklogLeft', 'DeadLetters', 'DroppedByWatermark', 'Errors', 'RunDurationMs']);
    expect(trendAlarm(s.template)).toBeUndefined();
  });

  it('creates none with createAlarms: false, and a dashboard without an alarm widget', () => {
    const s = synth({ createAlarms: false });
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    expect(s.pipeline.alarms).toEqual({});
    expect(dashboardOf(s.template).map((w) => w.type)).not.toContain('alarm');
  });

  it('leaves out "no input" by default when the schedule is disabled, as runs then start only by hand', () => {
    expect(alarmsOf(synth({ scheduleEnabled: false }).template).filter((a) => a.MetricName === 'RowsIn')).toEqual([]);
    expect(alarmOn(synth({ scheduleEnabled: false, alarms: { noInput: { intervals: 2 } } }).template, 'RowsIn')).toMatchObject({ EvaluationPeriods: 2 });
  });

  it('creates no dashboard with createDashboard: false', () => {
    const s = synth({ createDashboard: false });
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(s.pipeline.dashboard).toBeUndefined();
  });
});

describe('with the flat alarm props of earlier versions', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth({
      noInputAlarmMinutes: 120,
      stateRowsAlarmThreshold: 5000,
      fallingBehindAlarmRuns: 3,
      deadLetterAlarmThreshold: 3,
      lateRowsAlarmThreshold: 7,
      runFailedAlarmThreshold: 2,
    });
  });

  it('maps each onto its alarm: the minutes of no input to whole 15-minute intervals', () => {
    expect(alarmOn(s.template, 'RowsIn')).toMatchObject({ Period: 900, EvaluationPeriods: 120 / 15 });
    expect(alarmOn(s.template, 'BacklogLeft')).toMatchObject({ EvaluationPeriods: 3 });
    expect(alarmOn(s.template, 'DeadLetters')).toMatchObject({ Threshold: 3 });
    expect(alarmOn(s.template, 'DroppedByWatermark')).toMatchObject({ Threshold: 7 });
    expect(alarmOn(s.template, 'Errors')).toMatchObject({ Threshold: 2 });
  });

  it('keeps the absolute state-rows alarm that stateRowsAlarmThreshold set, beside the trend', () => {
    expect(alarmOn(s.template, 'StateRows')).toMatchObject({ Statistic: 'Maximum', Period: 900, Threshold: 5000, ComparisonOperator: 'GreaterThanThreshold' });
    expect(trendAlarm(s.template)).toBeDefined();
  });

  it('rounds minutes that are not whole intervals up', () => {
    expect(alarmOn(synth({ noInputAlarmMinutes: 50 }).template, 'RowsIn')).toMatchObject({ EvaluationPeriods: Math.ceil(50 / 15) });
  });
});

describe('when the schedule interval is long against the timeout (60 minutes, 600 s)', () => {
  it('keeps the default duration thresholds below the timeout: 80% of it for a run, half that for a batch', () => {
    const s = synth({ scheduleInterval: Duration.minutes(60) });
    expect(alarmOn(s.template, 'RunDurationMs')).toMatchObject({ Period: 3600, Threshold: 0.8 * 600 * 1000 });
    expect(alarmOn(s.template, 'MaxBatchDurationMs')).toMatchObject({ Threshold: 0.4 * 600 * 1000 });
    expect(Annotations.fromStack(s.stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('accepts up to a week of hourly no-input periods', () => {
    expect(alarmOn(synth({ scheduleInterval: Duration.minutes(60), alarms: { noInput: { intervals: 168 } } }).template, 'RowsIn')).toMatchObject({
      EvaluationPeriods: 168,
    });
  });
});

describe('when the alarm props cannot work, synth fails with a message that names the fix', () => {
  it.each<[string, AvailableNowPipelineProps, RegExp]>([
    [
      'a fraction of 0',
      { alarms: { batchDuration: { fractionOfInterval: 0 } } },
      /alarms.batchDuration.fractionOfInterval \(0\) must be a fraction of the schedule interval above 0 and at most 1/,
    ],
    ['a fraction above 1', { alarms: { runDuration: { fractionOfInterval: 1.5 } } }, /alarms.runDuration.fractionOfInterval \(1.5\) must be a fraction/],
    [
      'a run threshold the timeout never lets a run reach',
      { alarms: { runDuration: { fractionOfInterval: 0.9 } } },
      /alarms.runDuration.fractionOfInterval \(0.9\) puts the threshold at 810 s, at or above lambdaTimeoutSeconds \(600\).*less than 0.66/,
    ],
    [
      'more than a day of 15-minute no-input periods',
      { alarms: { noInput: { intervals: 97 } } },
      /alarms.noInput.intervals \(97\) must be a whole number from 1 to 96/,
    ],
    ['a trend over more than a week', { alarms: { stateRowsGrowing: { days: 8 } } }, /alarms.stateRowsGrowing.days \(8\) must be a whole number from 1 to 7/],
    ['a growth of 0%', { alarms: { stateRowsGrowing: { percentPerDay: 0 } } }, /alarms.stateRowsGrowing.percentPerDay \(0\) must be a percentage above 0/],
    [
      'a negative late-row threshold',
      { alarms: { lateRowsDropped: { threshold: -1 } } },
      /alarms.lateRowsDropped.threshold \(-1\) must be a whole number from 0/,
    ],
    [
      'a flat prop and its alarms key together',
      { deadLetterAlarmThreshold: 3, alarms: { deadLetters: { threshold: 5 } } },
      /deadLetterAlarmThreshold \(3\) and alarms.deadLetters both configure the deadLetters alarm: keep alarms.deadLetters/,
    ],
    [
      'a flat prop for an alarm turned off',
      { noInputAlarmMinutes: 60, alarms: { noInput: false } },
      /noInputAlarmMinutes \(60\) and alarms.noInput both configure/,
    ],
    [
      'thresholds while createAlarms is false',
      { createAlarms: false, alarms: { runFailed: { threshold: 2 } } },
      /createAlarms is false, yet alarms sets thresholds/,
    ],
    ['a dashboard name CloudWatch refuses', { dashboardName: 'my dashboard' }, /dashboardName "my dashboard" must be 1 to 255 of A-Za-z0-9_-/],
  ])('rejects %s', (_name, props, message) => {
    expect(rejection(props)).toMatch(message);
  });
});

describe('the dashboard', () => {
  let s: Synth;
  let widgets: DashboardWidget[];
  beforeAll(() => {
    s = synth();
    widgets = dashboardOf(s.template);
  });

  it('is named after the pipeline and opens on the last week', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: `sluice-${PIPELINE}` });
    expect(dashboardBody(s.template).start).toBe('-P7D');
  });

  it('draws the plots of the HTML report from the summary line, per interval', () => {
    expect(graphedMetrics(widget(widgets, /^Input rows vs output rows/))).toEqual([
      ['RowsIn', 'Sum'],
      ['RowsOut', 'Sum'],
    ]);
    expect(graphedMetrics(widget(widgets, /^Batch and run duration/))).toEqual([
      ['MaxBatchDurationMs', 'Maximum'],
      ['RunDurationMs', 'Maximum'],
    ]);
    expect(graphedMetrics(widget(widgets, /^Watermark lag/))).toEqual([['WatermarkLagMs', 'Maximum']]);
    expect(graphedMetrics(widget(widgets, /^State rows/))).toEqual([
      ['StateRows', 'Maximum'],
      ['StateRows', 'Maximum'],
    ]);
    expect(graphedMetrics(widget(widgets, /^Late rows dropped and dead letters/))).toEqual([
      ['DroppedByWatermark', 'Sum'],
      ['DeadLetters', 'Sum'],
    ]);
    expect(graphedMetrics(widget(widgets, /^Backlog left/))).toEqual([['BacklogLeft', 'Maximum']]);
    for (const w of widgets) for (const [name] of graphedMetrics(w)) expect(SUMMARY_METRIC_NAMES).toContain(name);
  });

  it('draws the durations against the schedule interval and the duration alarms', () => {
    const lines = widget(widgets, /^Batch and run duration/).properties.annotations!.horizontal!;
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ value: 15 * 60 * 1000, label: expect.stringMatching(/schedule interval/) }),
        expect.objectContaining({ value: 0.25 * 15 * 60 * 1000, label: 'batch duration alarm' }),
        expect.objectContaining({ value: 0.5 * 15 * 60 * 1000, label: 'run duration alarm' }),
      ]),
    );
  });

  it('draws the state growth trend of the alarm beside the state rows', () => {
    const state = widget(widgets, /^State rows/).properties.metrics!;
    expect(state).toContainEqual([expect.objectContaining({ expression: STATE_GROWTH_EXPRESSION, period: 86_400, yAxis: 'right' })]);
  });

  it("shows every alarm's status", () => {
    const status = widgets.filter((w) => w.type === 'alarm');
    expect(status).toHaveLength(1);
    const listed = status[0].properties.alarms!;
    expect(listed).toHaveLength(Object.keys(s.pipeline.alarms).length);
    for (const id of Object.keys(s.template.findResources('AWS::CloudWatch::Alarm'))) expect(listed.some((a) => a.includes(id))).toBe(true);
  });
});
