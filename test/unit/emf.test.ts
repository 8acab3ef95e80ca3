/**
 * The run-summary line's EMF block (lib/aws/lambda/emf.ts): the consumption of a metered run
 * becomes metrics; a run without it emits none of those (rather than zeros).
 */
import { emfBlock, SUMMARY_METRIC_NAMES, type RunSummary } from '../../lib/aws/lambda/emf';

const base: RunSummary = {
  event: 'run-summary', pipeline: 'p', query: 'q', queryId: 'id', stoppedBy: 'done', batches: 2, rowsIn: 10, rowsOut: 3,
  watermark: '2026-10-01T12:00:00.000Z', backlogLeft: 0, droppedByWatermark: 1, deadLetters: 0, stateRows: 4, durationMs: 1234,
};
const CONSUMED = ['DynamoDbWriteUnits', 'DynamoDbReadUnits', 'DynamoDbRequests', 'S3PutRequests', 'S3GetRequests'];
const names = (b: Record<string, unknown>) => (b._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string; Unit: string }> }> }).CloudWatchMetrics[0].Metrics;

describe('emfBlock', () => {
  it("declares the run's consumed units and requests as Count metrics with their values", () => {
    const b = emfBlock({ ...base, consumed: { writeUnits: 41.5, readUnits: 7, dynamodbRequests: 12, dynamodbRefusedWrites: 0, s3Requests: { put: 5, get: 9, free: 1 } } }, 'Sluice', 'p', 0);
    expect(names(b).filter((m) => CONSUMED.includes(m.Name))).toEqual(CONSUMED.map((Name) => ({ Name, Unit: 'Count' })));
    expect(b).toMatchObject({ DynamoDbWriteUnits: 41.5, DynamoDbReadUnits: 7, DynamoDbRequests: 12, S3PutRequests: 5, S3GetRequests: 9, RowsIn: 10, Pipeline: 'p' });
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
