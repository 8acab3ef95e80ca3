/**
 * The progress record on the real adapters: an S3 landing prefix, the S3 checkpoint and DynamoDB
 * state on the emulators. Two scheduled runs of a windowed count whose figures are known from its
 * input; every field of each stored progress/N is checked (durations, on a real clock, by how
 * they add up).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import type { StateChange } from '../../lib/engine/ports';
import type { StreamingProgress } from '../../lib/engine/progress';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const bucket = uniqueName('progress');
const table = uniqueName('progress-state');
const MIN = 60_000;
const DELAY = 10 * MIN;

const plan = readStream
  .format('json')
  .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
  .option('maxFilesPerTrigger', 1)
  .load()
  .withWatermark('event_time', '10 minutes')
  .groupBy(window('event_time', '10 minutes'))
  .agg(sum('amount').as('total'), count().as('events'))
  .writeStream.outputMode('append')
  .lateRows('dead-letter')
  .queryName('progress-it')
  .plan();

const line = (user: string, hhmm: string, amount: number) => JSON.stringify({ user, event_time: `2026-10-01 ${hhmm}:00`, amount });
const ts = (hhmm: string) => Date.UTC(2026, 9, 1, Number(hhmm.slice(0, 2)), Number(hhmm.slice(3, 5)));
const iso = (ms: number) => new Date(ms).toISOString();

const FILES = [
  { name: 'part-1.json', body: [line('a', '12:01', 1), line('b', '12:03', 2), line('c', '12:05', 3), '{"user": "broken'].join('\n') },
  { name: 'part-2.json', body: [line('d', '12:12', 4), line('e', '12:26', 5)].join('\n') },
  // run 2: the 12:08 row's window ends 12:10, at or before the watermark 12:16: late
  { name: 'part-3.json', body: [line('f', '12:08', 6), line('g', '12:31', 7)].join('\n') },
];

/**
 * What each batch must say, from the files: run 1 is batch 0 (part-1), batch 1 (part-2; the limit
 * of one file a batch left part-2 waiting after batch 0) and batch 2 (no data: the watermark moved
 * to 12:26 − 10 min, closing 12:00–12:10); run 2 is batch 3 (part-3) and batch 4 (closes 12:10–12:20).
 */
const BATCHES = [
  { rows: 3, dead: 1, late: 0, out: 0, updated: 1, removed: 0, total: 1, wm: 0, times: ['12:01', '12:03', '12:05'], file: 0, waiting: [1], run: 0 },
  { rows: 2, dead: 0, late: 0, out: 0, updated: 2, removed: 0, total: 3, wm: ts('12:05') - DELAY, times: ['12:12', '12:26'], file: 1, waiting: [], run: 0 },
  { rows: 0, dead: 0, late: 0, out: 1, updated: 0, removed: 1, total: 2, wm: ts('12:26') - DELAY, times: [], file: null, waiting: [], run: 0 },
  { rows: 2, dead: 0, late: 1, out: 0, updated: 1, removed: 0, total: 3, wm: ts('12:26') - DELAY, times: ['12:08', '12:31'], file: 2, waiting: [], run: 1 },
  { rows: 0, dead: 0, late: 0, out: 1, updated: 0, removed: 1, total: 2, wm: ts('12:31') - DELAY, times: [], file: null, waiting: [], run: 1 },
];

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, bucket), ensureStateTable(c.dynamodb, table)]);
});

describe('when a windowed count runs twice over three files on S3 and DynamoDB', () => {
  const base = uniqueName('run');
  const cfg: PipelineConfig = {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: { kind: 's3', bucket, prefix: `${base}/sink` },
    deadLetter: { bucket, prefix: `${base}/dead-letter` },
  };
  const key = (i: number) => `${base}/landing/${FILES[i].name}`;
  const bytes = (i: number) => Buffer.byteLength(FILES[i].body);
  const committed = new Map<number, StateChange[]>();
  const runs: Array<{ startedMs: number; endedMs: number; progress: StreamingProgress[]; runId?: string }> = [];
  const stored: StreamingProgress[] = [];
  let queryId = '';

  beforeAll(async () => {
    const s3 = testClients().s3;
    const put = (i: number) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key(i), Body: FILES[i].body }));
    await put(0);
    await put(1);
    for (const files of [[], [2]]) {
      for (const i of files) await put(i);
      const built = buildExecutor(testConnection(), plan, cfg);
      const commit = built.state.commit.bind(built.state);
      built.state.commit = async (op, version, changes, fence) => {
        committed.set(version, changes);
        return commit(op, version, changes, fence);
      };
      const startedMs = Date.now();
      const report = await built.executor.run();
      runs.push({ startedMs, endedMs: Date.now(), progress: report.progress });
      queryId = report.queryId;
      built.clients.destroy();
    }
    const checkpoint = buildExecutor(testConnection(), plan, cfg);
    for (let n = 0; n < BATCHES.length; n++) stored.push((await checkpoint.checkpoint.readProgress(n)) as unknown as StreamingProgress);
    checkpoint.clients.destroy();
  });

  it('stores one record per batch, with the query id and one run id per run', () => {
    expect(stored.map((p) => p.batchId)).toEqual([0, 1, 2, 3, 4]);
    for (const p of stored) expect(p).toMatchObject({ id: queryId, name: 'progress-it' });
    const runIds = BATCHES.map((b, n) => [b.run, stored[n].runId] as const);
    expect(new Set(runIds.filter(([r]) => r === 0).map(([, id]) => id)).size).toBe(1);
    expect(new Set(runIds.filter(([r]) => r === 1).map(([, id]) => id)).size).toBe(1);
    expect(stored[0].runId).not.toBe(stored[3].runId);
  });

  it.each(BATCHES.map((b, n) => [n, b] as const))(
    'batch %i: rows, event times, watermark, state, late rows, dead letters and backlog as the input gives them',
    (n, b) => {
      const p = stored[n];
      const t = b.times.map(ts);
      expect(p.numInputRows).toBe(b.rows);
      expect(p.eventTime).toEqual({
        ...(t.length ? { min: iso(Math.min(...t)), max: iso(Math.max(...t)), avg: iso(t.reduce((a, x) => a + x, 0) / t.length) } : {}),
        watermark: iso(b.wm),
      });
      expect(p.stateOperators).toHaveLength(1);
      const op = p.stateOperators[0];
      expect(op).toEqual({
        operatorName: 'stateStoreSave',
        numRowsTotal: b.total,
        numRowsUpdated: b.updated,
        numRowsRemoved: b.removed,
        numRowsDroppedByWatermark: b.late,
        commitTimeMs: expect.any(Number),
        memoryUsedBytes: (committed.get(n) ?? []).reduce((a, c) => a + c.key.id.length + (c.value === null ? 0 : JSON.stringify(c.value).length), 0),
        numShufflePartitions: 1,
        numStateStoreInstances: 1,
        customMetrics: expect.any(Object),
      });
      // The operator's commit is timed inside the batch's stateCommit step, each on its own readings of
      // the real clock: with one operator the two are nearly the same, but which millisecond each
      // reading falls in is the machine's, so only their nesting is the code's.
      expect(Number.isInteger(op.commitTimeMs) && op.commitTimeMs >= 0).toBe(true);
      expect(op.commitTimeMs).toBeLessThanOrEqual(p.durationMs.stateCommit!);
      // The DynamoDB store's own counters over the batch: a commit writes pages, a batch without changes none.
      if (b.updated + b.removed > 0) expect(op.customMetrics!.writes).toBeGreaterThan(0);
      else expect(op.customMetrics!.writes).toBe(0);

      // offsets name the batch whose file list was read last ({batch: N}); a run's target is what it found new
      const lastDataBatch = (upTo: number) => {
        for (let k = upTo; k >= 0; k--) if (BATCHES[k].file !== null) return k;
        return -1;
      };
      const end = lastDataBatch(n);
      const start = b.file === null ? end : lastDataBatch(n - 1);
      expect(p.sources).toEqual([
        {
          description: `s3://${bucket}/${base}/landing/`,
          startOffset: start < 0 ? null : { batch: start },
          endOffset: { batch: end },
          latestOffset: { files: b.run === 0 ? 2 : 1, listedUntilMs: expect.any(Number) },
          numInputRows: b.rows,
          inputRowsPerSecond: p.inputRowsPerSecond,
          processedRowsPerSecond: p.processedRowsPerSecond,
          // what is still waiting (files, bytes), and what the batch read: its file, its bytes, its lines (rows and dead letters)
          metrics: {
            files: b.waiting.length,
            bytes: b.waiting.reduce((a, i) => a + bytes(i), 0),
            inputBytes: b.file === null ? 0 : bytes(b.file),
            filesRead: b.file === null ? 0 : 1,
            bytesRead: b.file === null ? 0 : bytes(b.file),
            recordsRead: b.rows + b.dead,
          },
        },
      ]);
      expect(p.sink).toEqual({ description: `s3://${bucket}/${base}/sink/`, numOutputRows: b.out });
      expect(p.sluice).toEqual({ replay: false, noData: b.rows === 0, numDeadLetters: b.dead, numLateRowsKept: b.late, consumed: expect.any(Object) });
      // Metered: offsets/N, and each dead-letter or late-rows object, are PUTs before progress/N.
      const consumed = p.sluice.consumed as { s3Requests: { put: number }; writeUnits: number };
      expect(consumed.s3Requests.put).toBeGreaterThanOrEqual(1 + (b.dead ? 1 : 0) + (b.late ? 1 : 0));
      if (b.updated + b.removed > 0) expect(consumed.writeUnits).toBeGreaterThan(0);
    },
  );

  it('times each step, and the rates follow from the rows and the times', () => {
    for (const [n, p] of stored.entries()) {
      const d = p.durationMs;
      const firstOfRun = n === 0 || n === 3;
      expect(d.latestOffset !== undefined).toBe(firstOfRun);
      const steps = [d.latestOffset ?? 0, d.walCommit!, d.getBatch!, d.addBatch!, d.stateCommit!];
      for (const s of steps) expect(Number.isInteger(s) && s >= 0).toBe(true);
      expect(d.triggerExecution).toBeGreaterThanOrEqual(steps.reduce((a, s) => a + s, 0));
      expect(d).not.toHaveProperty('commitOffsets'); // written after progress/N: only in the reported record
      expect(p.batchDuration).toBe(d.triggerExecution);
      const run = runs[BATCHES[n].run];
      const at = Date.parse(p.timestamp);
      expect(at).toBeGreaterThanOrEqual(run.startedMs);
      // The timestamp is the batch's (taken after latestOffset, before walCommit ends: planner.ts), so
      // the trigger began no earlier than timestamp - latestOffset - walCommit, and ended inside the run.
      expect(at - (d.latestOffset ?? 0) - d.walCommit! + d.triggerExecution).toBeLessThanOrEqual(run.endedMs);
      expect(at).toBeLessThanOrEqual(run.endedMs);
      expect(p.processedRowsPerSecond).toBeCloseTo((p.numInputRows * 1000) / Math.max(1, d.triggerExecution), 9);
      const previous = n === 0 ? null : Date.parse(stored[n - 1].timestamp);
      expect(p.inputRowsPerSecond).toBeCloseTo(previous === null || at === previous ? 0 : (p.numInputRows * 1000) / (at - previous), 9);
    }
  });

  it('reports the stored records in the run report, with the commit write added', () => {
    const reported = runs.flatMap((r) => r.progress);
    expect(reported.map((p) => p.batchId)).toEqual([0, 1, 2, 3, 4]);
    for (const r of reported) {
      const { commitOffsets, ...rest } = r.durationMs;
      expect(commitOffsets).toBeGreaterThanOrEqual(0);
      expect(JSON.parse(JSON.stringify({ ...r, durationMs: rest }))).toEqual(stored[r.batchId]);
    }
  });
});
