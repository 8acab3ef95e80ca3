/**
 * The run-summary line's EMF block (lib/aws/lambda/emf.ts): the consumption of a metered run
 * becomes metrics; a run without it emits none of those (rather than zeros).
 */
import { emfBlock, SUMMARY_METRIC_NAMES, type RunSummary } from '../../lib/aws/lambda/emf';

const base: RunSummary = {
  event: 'run-summary',
  pipeline: 'p',
  query: 'q',
  queryId: 'id',
  stoppedBy: 'done',
  batches: 2,
  rowsIn: 10,
  rowsOut: 3,
  watermark: '2026-10-01T12:00:00.000Z',
  backlogLeft: 0,
  droppedByWatermark: 1,
  deadLetters: 0,
  stateRows: 4,
  durationMs: 1234,
};
const CONSUMED = ['DynamoDbWriteUnits', 'DynamoDbReadUnits', 'DynamoDbRequests', 'S3PutRequests', 'S3GetRequests'];
const names = (b: Record<string, unknown>) =>
  (b._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string; Unit: string }> }> }).CloudWatchMetrics[0].Metrics;

describe('emfBlock', () => {
  it("declares the run's consumed units and requests as Count metrics with their values", () => {
    const b = emfBlock(
      { ...base, consumed: { writeUnits: 41.5, readUnits: 7, dynamodbRequests: 12, dynamodbRefusedWrites: 0, s3Requests: { put: 5, get: 9, free: 1 } } },
      'Sluice',
      'p',
      0,
    );
    expect(names(b).filter((m) => CONSUMED.includes(m.Name))).toEqual(CONSUMED.map((Name) => ({ Name, Unit: 'Count' })));
    expect(b).toMatchObject({
      DynamoDbWriteUnits: 41.5,
      DynamoDbReadUnits: 7,
      DynamoDbRequests: 12,
      S3PutRequests: 5,
      S3GetRequests: 9,
      RowsIn: 10,
      Pipeline: 'p',
    });
    for (const n of CONSUMED) expect(SUMMARY_METRIC_NAMES).toContain(n);
  });

  it('leaves the consumption metrics out when the run was not metered, and keeps the others', () => {
    const b = emfBlock(base, 'Sluice', 'p', 0);
    const declared = names(b).map((m) => m.Name);
    for (const n of CONSUMED) {
      expect(declared).not.toContain(n);
      expect(b).not.toHaveProperty(n);
    }
    expect(declared).toEqual(expect.arrayContaining(['Runs', 'RowsIn', 'RunDurationMs']));
    expect(b).toMatchObject({ Runs: 1, RunDurationMs: 1234 });
  });
});

describe('the duration and lag metrics of the summary', () => {
  // A run of three batches of 120, 480 and 95 ms, ending at 12:30:00 with the watermark at 12:02:00.
  const batchMs = [120, 480, 95];
  const endedMs = Date.parse('2026-10-01T12:30:00.000Z');
  const watermarkMs = Date.parse('2026-10-01T12:02:00.000Z');
  const summary: RunSummary = { ...base, batches: batchMs.length, maxBatchDurationMs: Math.max(...batchMs), watermarkLagMs: endedMs - watermarkMs };

  it('emits the longest batch and the watermark lag as Milliseconds metrics', () => {
    const b = emfBlock(summary, 'Sluice', 'p', endedMs);
    expect(names(b)).toEqual(
      expect.arrayContaining([
        { Name: 'MaxBatchDurationMs', Unit: 'Milliseconds' },
        { Name: 'WatermarkLagMs', Unit: 'Milliseconds' },
      ]),
    );
    expect(b.MaxBatchDurationMs).toBe(480);
    expect(b.WatermarkLagMs).toBe(28 * 60 * 1000); // 12:30 - 12:02
    expect(SUMMARY_METRIC_NAMES).toEqual(expect.arrayContaining(['MaxBatchDurationMs', 'WatermarkLagMs']));
  });

  it('leaves them out for a run without a batch or a watermark, rather than reporting 0', () => {
    const b = emfBlock({ ...base, batches: 0, stoppedBy: 'lease-held' }, 'Sluice', 'p', endedMs);
    for (const n of ['MaxBatchDurationMs', 'WatermarkLagMs']) {
      expect(names(b).map((m) => m.Name)).not.toContain(n);
      expect(b).not.toHaveProperty(n);
    }
    expect(b).toMatchObject({ LeaseHeld: 1, Batches: 0 });
  });
});
