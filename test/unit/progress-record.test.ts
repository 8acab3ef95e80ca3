/**
 * The progress record (lib/engine/progress.ts) of every batch, field by field, from a run whose
 * figures are known from its input: the ports are in-memory twins, and a clock that only moves
 * when a port works (each step takes a known number of milliseconds) makes every duration exact.
 */
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { ConsumptionMeter, RunConsumption } from '../../lib/engine/run/types';
import type { StreamingProgress } from '../../lib/engine/progress';
import type { Json, StateChange } from '../../lib/engine/ports';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { createTestRunner } from './engine-factories';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

/** What each step takes on the stepped clock, ms. */
const STEP = {
  latestOffset: 3,
  plan: 5,
  writeOffsets: 7,
  read: 11,
  deadLetters: 2,
  lateRows: 4,
  sink: 13,
  stateCommit: 17,
  backlog: 1,
  writeProgress: 19,
  writeCommit: 23,
};
const T0 = Date.UTC(2026, 9, 1, 13, 0, 0);
const ts = (hhmm: string) => Date.UTC(2026, 9, 1, Number(hhmm.slice(0, 2)), Number(hhmm.slice(3, 5)));
const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;

const plan = readStream
  .format('json')
  .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
  .option('maxFilesPerTrigger', 1)
  .load()
  .withWatermark('event_time', '10 minutes')
  .groupBy(window('event_time', '10 minutes'))
  .agg(sum('amount').as('total'), count().as('events'))
  .writeStream.outputMode('append')
  .queryName('progress-test')
  .plan();

const line = (user: string, hhmm: string, amount: number) => JSON.stringify({ user, event_time: `2026-10-01 ${hhmm}:00`, amount });

/** In-memory ports whose every step advances the clock by its STEP; a meter that counts the checkpoint's writes. */
function steppedPorts() {
  let nowMs = T0;
  const clock = { now: () => nowMs };
  const pass = (ms: number) => void (nowMs += ms);
  const source = new InMemoryFileSource(plan.source.schema);
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore({ clock });
  const sink = new InMemorySink();
  const deadLetters = new InMemoryDeadLetters();
  const lateRows = new InMemoryDeadLetters();
  const lease = new InMemoryLease(() => nowMs);
  const committed = new Map<number, StateChange[]>();
  let puts = 0;

  const after =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>, ms: number, also?: (...a: NoInfer<A>) => void) =>
    async (...a: A): Promise<R> => {
      const r = await f(...a);
      pass(ms);
      also?.(...a);
      return r;
    };
  source.latestOffset = after(source.latestOffset.bind(source), STEP.latestOffset);
  source.planBatch = after(source.planBatch.bind(source), STEP.plan);
  source.backlog = after(source.backlog.bind(source), STEP.backlog);
  const readChunks = source.readChunks.bind(source);
  source.readChunks = async function* (...a) {
    pass(STEP.read);
    yield* readChunks(...a);
  };
  checkpoint.writeOffsets = after(checkpoint.writeOffsets.bind(checkpoint), STEP.writeOffsets, () => puts++);
  checkpoint.writeProgress = after(checkpoint.writeProgress.bind(checkpoint), STEP.writeProgress, () => puts++);
  checkpoint.writeCommit = after(checkpoint.writeCommit.bind(checkpoint), STEP.writeCommit, () => puts++);
  deadLetters.write = after(deadLetters.write.bind(deadLetters), STEP.deadLetters, () => puts++);
  lateRows.write = after(lateRows.write.bind(lateRows), STEP.lateRows, () => puts++);
  sink.addBatch = after(sink.addBatch.bind(sink), STEP.sink);
  state.commit = after(state.commit.bind(state), STEP.stateCommit, (...a) => void committed.set(a[1], a[2]));

  const snapshot = (): RunConsumption => ({
    writeUnits: 0,
    readUnits: 0,
    dynamodbRequests: 0,
    dynamodbRefusedWrites: 0,
    s3Requests: { put: puts, get: 0, free: 0 },
  });
  const meter: ConsumptionMeter = {
    snapshot,
    since: (before) => ({ ...snapshot(), s3Requests: { put: puts - before.s3Requests.put, get: 0, free: 0 } }),
  };
  const executor = () => new MicroBatchExecutor({ plan, source, checkpoint, state, sink, deadLetters, lateRows, lease, clock, meter });
  return { clock, pass, source, checkpoint, committed, executor };
}

/** memoryUsedBytes' formula, from the changes the store was handed: ids and values as JSON text. */
const jsonBytes = (changes: readonly StateChange[] = []) =>
  changes.reduce((a, c) => a + c.key.id.length + (c.value === null ? 0 : JSON.stringify(c.value).length), 0);

describe('when a windowed count runs two scheduled runs over three files, one file a batch', () => {
  const files = [
    ['part-1.json', [line('a', '12:01', 1), line('b', '12:03', 2), line('c', '12:05', 3), 'not json'].join('\n')],
    ['part-2.json', [line('d', '12:12', 4), line('e', '12:26', 5)].join('\n')],
    // run 2: 12:08 is late (its window ends 12:10, at or before the watermark 12:16)
    ['part-3.json', [line('f', '12:08', 6), line('g', '12:31', 7)].join('\n')],
  ] as const;
  const BETWEEN_RUNS = 15 * MIN;
  let p: ReturnType<typeof steppedPorts>;
  let runs: Array<{ progress: StreamingProgress[]; run: { start: number } }>;
  const heard: StreamingProgress[] = [];

  beforeAll(async () => {
    p = steppedPorts();
    p.source.add(files[0][0], files[0][1]);
    p.source.add(files[1][0], files[1][1]);
    const start1 = p.clock.now();
    const r1 = await p.executor().run({ onProgress: (r) => heard.push(r) });
    p.pass(BETWEEN_RUNS);
    p.source.add(files[2][0], files[2][1]);
    const start2 = p.clock.now();
    const r2 = await p.executor().run({ onProgress: (r) => heard.push(r) });
    runs = [
      { progress: r1.progress, run: { start: start1 } },
      { progress: r2.progress, run: { start: start2 } },
    ];
  });

  /**
   * Every batch's figures, worked out from the files and the steps: run 1 is batches 0 (part-1),
   * 1 (part-2) and 2 (no data: the watermark moved to 12:26 − 10 min); run 2 is 3 (part-3) and 4.
   */
  function expected(): StreamingProgress[] {
    const bytes = (i: number) => files[i][1].length;
    const queryId = p.checkpoint.metadata!.id;
    // The steps of a batch after planning, up to progress/N: a batch with data asks the backlog twice,
    // after its end (what is left) and between its start and end (the files it read).
    const body = (dead: boolean, late: boolean, stateCommit: boolean, data: boolean) =>
      (data ? STEP.read : 0) + (dead ? STEP.deadLetters : 0) + (late ? STEP.lateRows : 0) + STEP.sink + (stateCommit ? STEP.stateCommit : 0) + STEP.backlog; // once a batch: what is left (the files read are counted as they are read)
    const shape = [
      // batch, rows, dead, late, rowsOut, changes (updated/removed), total, wm, event times, input file, backlog after
      { batchId: 0, rows: 3, dead: 1, late: 0, out: 0, updated: 1, removed: 0, total: 1, wm: 0, times: ['12:01', '12:03', '12:05'], file: 0, left: [1] },
      {
        batchId: 1,
        rows: 2,
        dead: 0,
        late: 0,
        out: 0,
        updated: 2,
        removed: 0,
        total: 3,
        wm: ts('12:05') - 10 * MIN,
        times: ['12:12', '12:26'],
        file: 1,
        left: [],
      },
      { batchId: 2, rows: 0, dead: 0, late: 0, out: 1, updated: 0, removed: 1, total: 2, wm: ts('12:26') - 10 * MIN, times: [], file: -1, left: [] },
      {
        batchId: 3,
        rows: 2,
        dead: 0,
        late: 1,
        out: 0,
        updated: 1,
        removed: 0,
        total: 3,
        wm: ts('12:26') - 10 * MIN,
        times: ['12:08', '12:31'],
        file: 2,
        left: [],
      },
      { batchId: 4, rows: 0, dead: 0, late: 0, out: 1, updated: 0, removed: 1, total: 2, wm: ts('12:31') - 10 * MIN, times: [], file: -1, left: [] },
    ];
    const out: StreamingProgress[] = [];
    let clock = 0;
    let prevTimestamp: number | null = null;
    for (const b of shape) {
      const firstOfRun = b.batchId === 0 || b.batchId === 3;
      if (b.batchId === 0) clock = runs[0].run.start;
      if (b.batchId === 3) clock = runs[1].run.start;
      const startedAt = clock;
      const latest = firstOfRun ? STEP.latestOffset : 0;
      const timestamp = startedAt + latest + STEP.plan;
      const walCommit = STEP.plan + STEP.writeOffsets;
      const data = b.rows > 0;
      const changed = b.updated + b.removed > 0;
      const trigger = latest + walCommit + body(b.dead > 0, b.late > 0, changed, data);
      clock = startedAt + trigger + STEP.writeProgress + STEP.writeCommit;
      const interval = prevTimestamp === null ? 0 : timestamp - prevTimestamp;
      prevTimestamp = timestamp;
      const inputRate = interval > 0 ? (b.rows * 1000) / interval : 0;
      const processedRate = (b.rows * 1000) / trigger;
      const lastKey = (i: number) => ({ lastKey: files[i][0] });
      const endFile = b.file >= 0 ? b.file : b.batchId === 2 ? 1 : 2;
      const startFile = b.file >= 0 ? b.file - 1 : endFile;
      const t = b.times.map(ts);
      out.push({
        id: queryId,
        runId: '(per run)',
        name: 'progress-test',
        timestamp: iso(timestamp),
        batchId: b.batchId,
        batchDuration: trigger,
        numInputRows: b.rows,
        inputRowsPerSecond: inputRate,
        processedRowsPerSecond: processedRate,
        durationMs: {
          ...(firstOfRun ? { latestOffset: STEP.latestOffset } : {}),
          walCommit,
          getBatch: data ? STEP.read : 0,
          addBatch: (b.dead ? STEP.deadLetters : 0) + (b.late ? STEP.lateRows : 0) + STEP.sink,
          stateCommit: changed ? STEP.stateCommit : 0,
          triggerExecution: trigger,
        },
        eventTime: {
          ...(t.length ? { min: iso(Math.min(...t)), max: iso(Math.max(...t)), avg: iso(t.reduce((a, x) => a + x, 0) / t.length) } : {}),
          watermark: iso(b.wm),
        },
        stateOperators: [
          {
            operatorName: 'stateStoreSave',
            numRowsTotal: b.total,
            numRowsUpdated: b.updated,
            numRowsRemoved: b.removed,
            numRowsDroppedByWatermark: b.late,
            commitTimeMs: changed ? STEP.stateCommit : 0,
            memoryUsedBytes: jsonBytes(p.committed.get(b.batchId)),
            numShufflePartitions: 1,
            numStateStoreInstances: 1,
          },
        ],
        sources: [
          {
            description: 'memory://landing',
            startOffset: startFile >= 0 ? lastKey(startFile) : null,
            endOffset: lastKey(endFile),
            latestOffset: lastKey(b.batchId < 3 ? 1 : 2),
            numInputRows: b.rows,
            inputRowsPerSecond: inputRate,
            processedRowsPerSecond: processedRate,
            // what was left, and what the batch read: its file, the file's bytes, its lines (rows and dead letters)
            metrics: {
              files: b.left.length,
              bytes: b.left.reduce((a, i) => a + bytes(i), 0),
              inputBytes: data ? bytes(b.file) : 0,
              filesRead: data ? 1 : 0,
              bytesRead: data ? bytes(b.file) : 0,
              recordsRead: b.rows + b.dead,
            },
          },
        ],
        sink: { description: 'memory://sink', numOutputRows: b.out },
        sluice: {
          replay: false,
          noData: !data,
          numDeadLetters: b.dead,
          numLateRowsKept: b.late,
          // offsets/N, plus the dead letters and late rows written before progress/N
          consumed: {
            writeUnits: 0,
            readUnits: 0,
            dynamodbRequests: 0,
            dynamodbRefusedWrites: 0,
            s3Requests: { put: 1 + (b.dead ? 1 : 0) + (b.late ? 1 : 0), get: 0, free: 0 },
          } as Json,
        },
      });
    }
    return out;
  }

  it('stores in progress/N every field of the batch, as worked out from the input and the steps', async () => {
    const want = expected();
    for (const w of want) {
      const stored = (await p.checkpoint.readProgress(w.batchId)) as unknown as StreamingProgress;
      expect({ ...stored, runId: '(per run)' }).toEqual(w);
    }
  });

  it('reports the same records, with the commit write, in the run report and to onProgress', () => {
    const reported = [...runs[0].progress, ...runs[1].progress];
    expect(reported.map((r) => r.batchId)).toEqual([0, 1, 2, 3, 4]);
    expect(heard).toEqual(reported);
    for (const r of reported) {
      const { commitOffsets, ...rest } = r.durationMs;
      expect(commitOffsets).toBe(STEP.writeCommit);
      expect({ ...r, durationMs: rest }).toEqual(p.checkpoint.progress.get(r.batchId));
    }
  });

  it('gives each run its own run id, and every batch the query id', () => {
    const [one, two] = runs.map((r) => new Set(r.progress.map((x) => x.runId)));
    expect(one.size).toBe(1);
    expect(two.size).toBe(1);
    expect([...one][0]).not.toBe([...two][0]);
    expect([...one][0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('when the state store keeps counters', () => {
  it('reports what they moved by over the batch as customMetrics', async () => {
    const p = steppedPorts();
    const state = new InMemoryStateStore({ clock: p.clock });
    let commits = 0;
    const commit = state.commit.bind(state);
    state.commit = async (...a) => {
      commits += a[2].length;
      return commit(...a);
    };
    const counted = Object.assign(state, { stats: () => ({ changesCommitted: commits, label: 'not a number' }) });
    p.source.add('part-1.json', [line('a', '12:01', 1), line('b', '12:25', 2)].join('\n'));
    const r = await new MicroBatchExecutor({
      plan,
      source: p.source,
      checkpoint: p.checkpoint,
      state: counted,
      sink: new InMemorySink(),
      clock: p.clock,
    }).run();
    // batch 0: two windows written; batch 1 (no data, watermark 12:15): the 12:00 window evicted
    expect(r.progress.map((x) => x.stateOperators[0].customMetrics)).toEqual([{ changesCommitted: 2 }, { changesCommitted: 1 }]);
  });
});

describe('when a run replays the batch a crashed run left uncommitted', () => {
  it('says replay, with the logged offsets, and no latest offset or backlog yet (the replay runs before the run notes them)', async () => {
    const t = createTestRunner(plan);
    t.drop([{ user: 'a', event_time: '2026-10-01 12:01:00', amount: 1 }]);
    t.drop([{ user: 'b', event_time: '2026-10-01 12:02:00', amount: 2 }]);
    expect(await t.crashRun({ point: 'after-sink' })).toBe(true);
    const r = await t.run();
    const replayed = r.progress[0];
    expect(replayed).toMatchObject({ batchId: 0, numInputRows: 1, sluice: { replay: true, noData: false } });
    expect(replayed.sources[0]).toMatchObject({ startOffset: null, endOffset: { lastKey: 'part-00001.json' }, latestOffset: null });
    expect(replayed.sources[0].metrics).not.toHaveProperty('files');
    // what the replay read is counted all the same; only its files are not (no listing of the run to count them on)
    expect(replayed.sources[0].metrics).toMatchObject({ recordsRead: 1, bytesRead: expect.any(Number) });
    expect(replayed.sources[0].metrics).not.toHaveProperty('filesRead');
    expect(replayed.durationMs).not.toHaveProperty('walCommit');
    // The next batch is the run's first planned one: it has the latest offset and the backlog.
    expect(r.progress[1]).toMatchObject({
      batchId: 1,
      sluice: { replay: false },
      sources: [{ latestOffset: { lastKey: 'part-00002.json' }, metrics: { files: 0, bytes: 0 } }],
    });
    expect(r.progress[1].durationMs.latestOffset).toBeGreaterThanOrEqual(0);
    expect(await t.checkpoint.readProgress(0)).toEqual(
      JSON.parse(JSON.stringify({ ...replayed, durationMs: { ...replayed.durationMs, commitOffsets: undefined } })),
    );
  });
});

describe('when a batch changes more state rows than memoryUsedBytes samples', () => {
  it('estimates from an even sample of 256 changes, close to the JSON text of all of them', async () => {
    const p = steppedPorts();
    const windows = 1000;
    // One row per 10-minute window, amounts of growing length so that the rows differ in size.
    const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
    const rows = Array.from({ length: windows }, (_, i) =>
      JSON.stringify({ user: `u${i}`, event_time: stamp(Date.UTC(2026, 9, 1) + i * 10 * MIN), amount: i * 1.5 }),
    );
    p.source.add('part-1.json', rows.join('\n'));
    const r = await p.executor().run();
    const changes = p.committed.get(0)!;
    expect(changes).toHaveLength(windows);
    const exact = jsonBytes(changes);
    const estimate = r.progress[0].stateOperators[0].memoryUsedBytes;
    expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.05);
  });
});
