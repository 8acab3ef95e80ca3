/**
 * One run core: the single scheduler (one process runs the whole run) and the partitioned one
 * (plan, read, partition and commit tasks, each on a scheduler of its own) compose the same
 * planner, committer and reporter, so they must leave the same durable trace. Every conformance
 * case available (the public ones when ../shared is there, the project's always), and queries
 * with idleTimeout, Trigger.Once, maxBytesPerTrigger and two inputs, run through both on the
 * in-memory ports, on a clock the test steps (so every duration is the same: 0): the sink's rows
 * of each batch (as a multiset: the partitions' outputs concatenate in partition order), offsets/N,
 * commits/N, progress/N, the dead letters and the late rows must be identical, apart from the ids
 * a run draws (the query id, the run id).
 */
import { basename } from 'node:path';
import { caseSourceInputs, caseToPlan, stepInputFiles, type ConformanceCase } from '../../lib/conformance/case';
import { stepClockMs } from '../../lib/conformance/format-4';
import type { Clock, Json, OutputRow } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { compileSql } from '../../lib/engine/sql';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { supportedCases } from '../helpers/supported-cases';

const MIN = 60_000;
const T0 = Date.UTC(2026, 9, 1, 13, 0);

/** A step of a scenario: files landed on inputs (by index), then how far the clock moved before the run. */
interface Step {
  readonly files: ReadonlyArray<{ readonly input: number; readonly rows: Json[] }>;
  readonly minutesLater?: number;
  /** FORMAT-4: the run's processing time (a case step's `clock`). */
  readonly processingTimeMs?: number;
}

/** What a scheduler left behind: everything durable, by batch. */
interface Trace {
  readonly offsets: Json[];
  readonly commits: Json[];
  readonly progress: Json[];
  readonly sink: Array<[number, string[]]>;
  readonly deadLetters: Json[];
  readonly lateRows: Json[];
  readonly runs: number;
  /** The error a run failed with (FORMAT-4: then the case stops there). */
  readonly error?: string;
}

type Scheduler = 'single' | 'partitioned';

async function trace(plan: QueryPlan, steps: readonly Step[], scheduler: Scheduler): Promise<Trace> {
  let nowMs = T0;
  const clock: Clock = { now: () => nowMs };
  const schemas = [plan.source.schema, ...(plan.inputs ?? []).map((i) => i.source.schema)];
  const sources = schemas.map((s) => new InMemoryFileSource(s));
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore({ clock });
  const sink = new InMemorySink();
  const deadLetters = new InMemoryDeadLetters();
  const lateRows = new InMemoryDeadLetters();
  const lease = new InMemoryLease(() => clock.now());
  const shuffle = new InMemoryShuffle();
  const [source, ...inputSources] = sources;
  const deps = { plan, source, inputSources, checkpoint, state, sink, deadLetters, lateRows, lease, clock };
  let fileNo = 0;
  let runs = 0;
  let error: string | undefined;
  for (const step of steps) {
    nowMs += (step.minutesLater ?? 1) * MIN;
    for (const f of step.files) sources[f.input].add(`file-${String(++fileNo).padStart(6, '0')}.json`, f.rows as Array<Record<string, unknown>>);
    runs++;
    const at = step.processingTimeMs;
    const stepDeps = at === undefined ? deps : { ...deps, processingClock: { now: () => at } };
    try {
      if (scheduler === 'single') await new MicroBatchExecutor(stepDeps).run();
      else
        await runPartitioned(
          partitionedTasks(() => new PartitionedRun({ ...stepDeps, shuffle }, { maxSplits: 3 })),
          { runId: `run-${runs}`, concurrency: 3 },
        );
    } catch (e) {
      // a FORMAT-4 step whose batch fails: both schedulers must fail it alike, and leave the same trace
      error = (e as Error).message;
      break;
    }
  }
  const queryId = checkpoint.metadata?.id ?? '';
  // the ids a run draws differ between the two; everything else must not
  const sameIds = (v: Json | undefined): Json =>
    JSON.parse(
      JSON.stringify(v ?? null)
        .split(queryId)
        .join('<query>'),
    ) as Json;
  const withoutRunId = (p: Json): Json => ({ ...(p as Record<string, Json>), runId: '<run>' });
  const ids = [...checkpoint.offsets.keys()].sort((a, b) => a - b);
  return {
    offsets: ids.map((id) => sameIds(checkpoint.offsets.get(id) as unknown as Json)),
    commits: ids.map((id) => sameIds(checkpoint.commits.get(id) as unknown as Json)),
    progress: ids.map((id) => withoutRunId(sameIds(checkpoint.progress.get(id)))),
    sink: [...sink.batches.entries()].sort(([a], [b]) => a - b).map(([id, rows]: [number, OutputRow[]]) => [id, rows.map((r) => JSON.stringify(r)).sort()]),
    deadLetters: deadLetters.all('malformed'),
    lateRows: lateRows.all('late'),
    runs,
    ...(error !== undefined ? { error } : {}),
  };
}

/** A conformance case's steps, as this test's (each step one run a minute after the one before). */
function caseSteps(c: ConformanceCase, plan: QueryPlan): Step[] {
  const names = caseSourceInputs(c, plan);
  return c.steps.map((step) => ({
    files: stepInputFiles(step).map((f) => ({ input: names.indexOf(f.input), rows: f.rows as Json[] })),
    ...(step.clock !== undefined ? { processingTimeMs: stepClockMs(c, step) } : {}),
  }));
}

async function expectSameTrace(plan: QueryPlan, steps: readonly Step[]): Promise<Trace> {
  const single = await trace(plan, steps, 'single');
  const partitioned = await trace(plan, steps, 'partitioned');
  expect(partitioned).toEqual(single);
  return single;
}

const cases = supportedCases()
  .map(([f, c]) => [basename(f), c] as const)
  .filter(([, c]) => c.expectError === undefined);

describe('when every conformance case runs on both schedulers', () => {
  it.each(cases)('%s leaves the same sink rows, offsets, commits and progress records', async (_f, c) => {
    const plan: QueryPlan = { ...caseToPlan(c), statePartitions: 4 };
    const t = await expectSameTrace(plan, caseSteps(c, plan));
    expect(t.commits.length).toBeGreaterThan(0);
  });
});

const at = (hhmm: string) => `2026-10-01 ${hhmm}:00`;
const event = (user: string, hhmm: string, amount = 1): Json => ({ user, t: at(hhmm), amount });

/** Totals per 10-minute window and user behind a 5-minute watermark. */
function totals(writer: { idleTimeout?: string; once?: boolean; maxBytesPerTrigger?: number } = {}) {
  const reader = readStream.format('json').schema('user STRING, t TIMESTAMP, amount DOUBLE');
  let w = (writer.maxBytesPerTrigger ? reader.option('maxBytesPerTrigger', writer.maxBytesPerTrigger) : reader)
    .load()
    .withWatermark('t', '5 minutes')
    .groupBy(window('t', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('n'))
    .writeStream.outputMode('append')
    .option('statePartitions', 4)
    .queryName('totals');
  if (writer.idleTimeout) w = w.option('idleTimeout', writer.idleTimeout);
  if (writer.once) w = w.trigger({ once: true });
  return w.plan();
}

describe('when a query sets what the schedulers once disagreed on', () => {
  it("idleTimeout: both emit the quiet stream's last window after the timeout, with the idle watermark", async () => {
    const t = await expectSameTrace(totals({ idleTimeout: '30 minutes' }), [
      { files: [{ input: 0, rows: [event('a', '12:01'), event('b', '12:04', 2)] }] },
      { files: [], minutesLater: 31 },
    ]);
    // the idle batch ran and emitted both users' window
    expect(t.offsets.some((o) => (o as { watermarkAdvancedByIdleness?: boolean }).watermarkAdvancedByIdleness === true)).toBe(true);
    expect(t.sink.flatMap(([, rows]) => rows)).toHaveLength(2);
  });

  it('Trigger.Once: both run one batch a run, the data batch first and the no-data batch it made due on the next run', async () => {
    const t = await expectSameTrace(totals({ once: true }), [
      { files: [{ input: 0, rows: [event('a', '12:01'), event('a', '12:30')] }] },
      { files: [] },
      { files: [] },
    ]);
    // run 1: the data batch only; run 2: the no-data batch that closes 12:00-12:10; run 3: nothing
    expect(t.commits).toHaveLength(2);
    expect((t.progress[1] as { sluice: { noData: boolean } }).sluice.noData).toBe(true);
    expect(t.sink.flatMap(([, rows]) => rows)).toHaveLength(1);
  });

  it('maxBytesPerTrigger: both split the backlog into the same batches', async () => {
    const t = await expectSameTrace(totals({ maxBytesPerTrigger: 150 }), [
      { files: [0, 1, 2, 3].map((i) => ({ input: 0, rows: [event(`u${i}`, `12:0${i}`), event(`v${i}`, `12:2${i}`)] })) },
    ]);
    expect(t.commits.length).toBeGreaterThan(2);
  });

  it('a union of two streams, stateless and aggregated, runs the same on both', async () => {
    const a = () => readStream.format('json').schema('k STRING, t TIMESTAMP').load().withWatermark('t', '0 seconds');
    const b = () => readStream.format('json').schema('key STRING, at TIMESTAMP').load().withWatermark('at', '0 seconds');
    const steps = [
      {
        files: [
          { input: 0, rows: [{ k: 'x', t: at('12:01') }] },
          { input: 1, rows: [{ key: 'y', at: at('12:02') }] },
        ],
      },
      {
        files: [
          { input: 0, rows: [{ k: 'x', t: at('12:31') }] },
          { input: 1, rows: [{ key: 'x', at: at('12:32') }] },
        ],
      },
    ];
    const plain = await expectSameTrace(a().union(b()).writeStream.queryName('merged').plan(), steps);
    expect(plain.sink.flatMap(([, rows]) => rows)).toHaveLength(4);
    const counted = a()
      .union(b())
      .groupBy(window('t', '10 minutes'), 'k')
      .agg(count().as('n'))
      .writeStream.option('statePartitions', 4)
      .queryName('mergedCounts')
      .plan();
    const t = await expectSameTrace(counted, steps);
    // 12:00-12:10 x and y closed by the second batch's watermark (min 12:31)
    expect(t.sink.flatMap(([, rows]) => rows)).toHaveLength(2);
  });

  it('a windowed ROLLUP (each row repeated per grouping set, the set id a key) runs the same on both', async () => {
    const plan = compileSql(`SET statePartitions = 4; SET outputMode = append; SET queryName = rollup;
SELECT window.start AS at, user, sum(amount) AS total, grouping(user) AS all_users
FROM STREAM read_files(schema => 'user STRING, t TIMESTAMP, amount INT') WATERMARK t DELAY OF INTERVAL 5 MINUTES
GROUP BY window(t, '10 minutes'), ROLLUP(user)`);
    const t = await expectSameTrace(plan, [
      { files: [{ input: 0, rows: [event('a', '12:01'), event('b', '12:04', 2), event('a', '12:05', 3)] }] },
      { files: [{ input: 0, rows: [event('c', '12:31')] }] },
    ]);
    // the 12:00 window closes in the second run: a's and b's rows and their total
    expect(t.sink.flatMap(([, rows]) => rows).sort()).toEqual(
      [
        { at: '2026-10-01T12:00:00.000Z', user: 'a', total: 4, all_users: 0 },
        { at: '2026-10-01T12:00:00.000Z', user: 'b', total: 2, all_users: 0 },
        { at: '2026-10-01T12:00:00.000Z', user: null, total: 6, all_users: 1 },
      ]
        .map((r) => JSON.stringify(r))
        .sort(),
    );
  });

  it('orderBy and limit over a complete-mode aggregation: both keep the same top rows (one task computes the whole table)', async () => {
    const plan = readStream
      .format('json')
      .schema('k STRING, a INT')
      .load()
      .groupBy('k')
      .agg(sum('a').as('total'))
      .orderBy({ key: 'total', desc: true })
      .limit(2)
      .writeStream.outputMode('complete')
      .option('statePartitions', 4)
      .queryName('top2')
      .plan();
    const t = await expectSameTrace(plan, [
      {
        files: [
          {
            input: 0,
            rows: [
              { k: 'p', a: 1 },
              { k: 'q', a: 7 },
              { k: 'r', a: 4 },
              { k: 's', a: 2 },
            ],
          },
        ],
      },
      { files: [{ input: 0, rows: [{ k: 'p', a: 9 }] }] },
    ]);
    // (the trace holds each batch's rows as sorted JSON texts)
    expect(t.sink.map(([, rows]) => rows)).toEqual([
      [JSON.stringify({ k: 'q', total: 7 }), JSON.stringify({ k: 'r', total: 4 })],
      [JSON.stringify({ k: 'p', total: 10 }), JSON.stringify({ k: 'q', total: 7 })],
    ]);
  });

  it('an append-mode limit (its count in state) passes the same rows on both', async () => {
    const plan = readStream.format('json').schema('k STRING, a INT').load().limit(3).writeStream.option('statePartitions', 4).queryName('first3').plan();
    const t = await expectSameTrace(plan, [
      {
        files: [
          {
            input: 0,
            rows: [
              { k: 'p', a: 1 },
              { k: 'q', a: 2 },
            ],
          },
        ],
      },
      {
        files: [
          {
            input: 0,
            rows: [
              { k: 'r', a: 3 },
              { k: 's', a: 4 },
            ],
          },
        ],
      },
    ]);
    expect(t.sink.flatMap(([, rows]) => rows)).toHaveLength(3);
    expect(JSON.stringify(t.progress)).toContain('"operatorName":"globalLimit"');
  });

  it('two inputs: a stream-stream join runs the same on both', async () => {
    const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '10 minutes');
    const plan = readStream
      .format('json')
      .schema('ad STRING, it TIMESTAMP')
      .load()
      .withWatermark('it', '10 minutes')
      .join(clicks, { left: 'ad', right: 'cad' }, 'leftOuter', { timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds' } })
      .writeStream.option('statePartitions', 4)
      .queryName('joined')
      .plan();
    const t = await expectSameTrace(plan, [
      {
        files: [
          {
            input: 0,
            rows: [
              { ad: 'x', it: at('12:00') },
              { ad: 'y', it: at('12:01') },
            ],
          },
          { input: 1, rows: [{ cad: 'x', ct: at('12:02') }] },
        ],
      },
      {
        files: [
          { input: 0, rows: [{ ad: 'z', it: at('12:40') }] },
          { input: 1, rows: [{ cad: 'w', ct: at('12:41') }] },
        ],
      },
    ]);
    // x joined; y alone (null clicks) once both watermarks passed its range
    expect(t.sink.flatMap(([, rows]) => rows).length).toBeGreaterThanOrEqual(2);
  });
});
