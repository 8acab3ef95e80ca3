/**
 * The pipeline's CloudWatch dashboard: the plots of `sluice report`, the alarms' status
 * (alarms.ts).
 */
import { Duration, aws_cloudwatch as cloudwatch } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { AlarmName } from './alarm-props';
import { stateGrowthPercent, type AlarmSources } from './alarms';

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
    graph('Late rows dropped and dead letters', [m('DroppedByWatermark', SUM, 'late rows dropped'), m('DeadLetters', SUM, 'dead letters')], {
      leftYAxis: { min: 0 },
    }),
    graph('Backlog left when the run stopped', [m('BacklogLeft', MAXIMUM, 'backlog left')], {
      leftAnnotations: thresholdLine(alarms.fallingBehind, 'falling behind alarm'),
      leftYAxis: { min: 0 },
    }),
  ];
  const x = src.execution;
  if (x) {
    graphs.push(
      graph(
        'Scale-out runs (state machine executions)',
        [
          x.started(period).with({ label: 'started' }),
          x.succeeded(period).with({ label: 'succeeded' }),
          x.failed(period).with({ label: 'failed' }),
          x.timedOut(period).with({ label: 'timed out' }),
        ],
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
