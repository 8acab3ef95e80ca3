/**
 * Partitioned runs on worker threads against the local stack (issue 19): the conformance runner's
 * --workers path (lib/local/workers.ts), S3 landing source, S3 shuffle beside the checkpoint,
 * DynamoDB state in four partitions committed by separate partition tasks, and crash points that
 * fire inside the tasks of each kind (plan: after-offsets, read: mid-read, partition: mid-state,
 * commit: before-commit and after-sink).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCase } from '../../lib/conformance/case';
import { compareCase } from '../../lib/conformance/results';
import { prepareConformance, runCase } from '../../lib/conformance/runner';
import type { CrashPoint } from '../../lib/engine/testing/crash';
import { testConnection, uniqueName } from '../helpers/stack';
import { kinesisCaseSource } from '../../lib/conformance/kinesis';

jest.setTimeout(180_000);

const bucket = uniqueName('part');
const table = uniqueName('part-state');
const PROJECT = join(__dirname, '../conformance/cases');
// an aggregation split over files (maxFilesPerTrigger), a dedup, a chain (one whole-batch task), a stream-stream join
const CASES = [
  'sluice-sliding-window-update.json',
  'sluice-dedup-within-watermark-update.json',
  'sluice-chain-dedup-window-agg-append.json',
  'sluice-join-left-outer-window.json',
  // DECIMAL buffers (digit strings) merged across read tasks and state partitions
  'sluice-types-decimal-avg-half-up.json',
  // expression stages (compiled in each worker from the query) and a row error as a dead letter
  'sluice-expr-filter-window-upper-country.json',
  // exact sums: rows (not partials) to the partition tasks, which refuse the overflowing row as one task does
  'sluice-types-bigint-sum-overflow-update.json',
  'sluice-types-decimal-sum-overflow-append.json',
].map((f) => parseCase(readFileSync(join(PROJECT, f), 'utf8'), f));

beforeAll(async () => {
  await prepareConformance(testConnection(), bucket, table);
});

describe('when conformance cases run partitioned on 2 worker threads with 4 state partitions', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s matches its expectations', async (_n, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, statePartitions: 4, workers: 2 });
    expect(compareCase(c, result)).toEqual([]);
  });

  it.each(CASES.slice(0, 3).map((c) => [c.name, c] as const))('%s matches its expectations on Kinesis streams too (one split a batch)', async (_n, c) => {
    const result = await runCase(c, {
      connection: testConnection(),
      bucket,
      stateTable: table,
      statePartitions: 4,
      workers: 2,
      sourceFactory: kinesisCaseSource(testConnection()),
    });
    expect(compareCase(c, result)).toEqual([]);
  });

  const points: CrashPoint[] = ['after-offsets', 'mid-read', 'mid-state', 'after-sink', 'before-commit'];
  it.each(points)('a crash at %s in its task is recovered by the next run', async (point) => {
    let fired = 0;
    for (const c of CASES.slice(0, 2)) {
      const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, statePartitions: 4, workers: 2, crash: point });
      fired += result.crashesFired ?? 0;
      expect(compareCase(c, result)).toEqual([]);
    }
    expect(fired).toBeGreaterThan(0);
  });
});
