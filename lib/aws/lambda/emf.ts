/**
 * The run-summary line in CloudWatch Embedded Metric Format: the `_aws` block names the metrics,
 * and each metric's value and the dimension's value are top-level members of the same JSON line.
 * CloudWatch extracts the metrics from the log line, so the function needs no
 * cloudwatch:PutMetricData (which only accepts Resource "*"). The AvailableNowPipeline construct
 * alarms on these names.
 */
import type { RunConsumption, StopReason } from '../../engine/run/types';

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
  /** The run's longest batch, ms (absent when it ran no batch). */
  readonly maxBatchDurationMs?: number;
  /** How far the watermark trails the wall clock at the run's end, ms (absent while there is no watermark). */
  readonly watermarkLagMs?: number;
  /** What the run's requests consumed (DynamoDB units and requests, S3 requests by price class). */
  readonly consumed?: RunConsumption;
  readonly message?: string;
}

/**
 * The metrics of the summary line: name, unit and how to read it off the summary. A metric whose
 * value is undefined (consumption of a run whose clients were not metered, the batch duration of a
 * run without a batch, the lag of a watermark not set yet) is left out of the line, so that it
 * counts as no data rather than as 0.
 */
const METRICS: ReadonlyArray<{ name: string; unit: 'Count' | 'Milliseconds'; of: (s: RunSummary) => number | undefined }> = [
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
  { name: 'MaxBatchDurationMs', unit: 'Milliseconds', of: (s) => s.maxBatchDurationMs },
  { name: 'WatermarkLagMs', unit: 'Milliseconds', of: (s) => s.watermarkLagMs },
  // What the run cost: DynamoDB on-demand request units and requests, S3 requests by price class.
  { name: 'DynamoDbWriteUnits', unit: 'Count', of: (s) => s.consumed?.writeUnits },
  { name: 'DynamoDbReadUnits', unit: 'Count', of: (s) => s.consumed?.readUnits },
  { name: 'DynamoDbRequests', unit: 'Count', of: (s) => s.consumed?.dynamodbRequests },
  { name: 'S3PutRequests', unit: 'Count', of: (s) => s.consumed?.s3Requests.put },
  { name: 'S3GetRequests', unit: 'Count', of: (s) => s.consumed?.s3Requests.get },
];

/** The metric names the summary line emits (the construct's alarms use them). */
export const SUMMARY_METRIC_NAMES = METRICS.map((m) => m.name);
/** The single dimension of every sluice metric. */
export const METRIC_DIMENSION = 'Pipeline';
export const DEFAULT_METRICS_NAMESPACE = 'Sluice';

/** The EMF members to merge into the summary line: the `_aws` block, the dimension and one member per metric. */
export function emfBlock(summary: RunSummary, namespace: string, pipeline: string, timestampMs: number): Record<string, unknown> {
  const values: Record<string, number> = {};
  const emitted: Array<{ Name: string; Unit: string }> = [];
  for (const m of METRICS) {
    const v = m.of(summary);
    if (v === undefined) continue;
    values[m.name] = v;
    emitted.push({ Name: m.name, Unit: m.unit });
  }
  return {
    _aws: {
      Timestamp: timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: namespace,
          Dimensions: [[METRIC_DIMENSION]],
          Metrics: emitted,
        },
      ],
    },
    [METRIC_DIMENSION]: pipeline,
    ...values,
  };
}
