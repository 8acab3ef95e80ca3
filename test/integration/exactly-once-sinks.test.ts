/**
 * Exactly-once, end to end, on the local stack: the DynamoDB table sink and the S3 file sink under
 * crashes at every named point, the Spark-practice matrix (naive append vs guarded sink), two
 * overlapping runs of one query, and a run whose lease is taken over mid-run.
 *
 * Every run writes both guarded sinks through a tee (DynamoDB first, then S3), so one crash
 * matrix covers both: a crash point sits between executor steps, and the tee is one step.
 */
import { basename } from 'node:path';
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { buildExecutor } from '../../lib/aws/pipeline';
import { compareCase } from '../../lib/conformance/results';
import { CRASH_POINTS, CrashInjector, type CrashPoint } from '../../lib/engine/testing/crash';
import { InjectedCrash, LeaseLostError } from '../../lib/engine/errors';
import type { OutputRow, Sink, SinkContext } from '../../lib/engine/ports';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { SEED_FILES, windowedTotals } from '../../examples/windowed-totals';
import { sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { canonical, dropFile, type GuardedCaseRun, guardedSinks, leaseKeyFor, pool, runCaseGuarded, stableJson } from '../helpers/guarded-sinks';
import { NaiveAppendSink } from '../helpers/naive-sink';
import { supportedCases } from '../helpers/supported-cases';
import { leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';
import { S3FileSink } from '../../lib/aws/s3/file-sink';

// every case the S3 runner runs (FORMAT-1 to 4, public and the project's own), less refused queries
// and cases whose every run fails (a processor that fails on its first batch): neither has a run
// to crash (conformance.test.ts checks the refusal and the failure)
const cases = supportedCases('s3')
  .map(([f, c]) => [basename(f), c] as const)
  .filter(([, c]) => c.expectError === undefined && c.steps.some((s) => !('error' in s.expect)));

const res = { bucket: uniqueName('eo-sinks'), stateTable: uniqueName('eo-state'), sinkTable: uniqueName('eo-sink') };
/** Case runs in flight at once (each is sequential inside: steps, then runs). */
const CONCURRENCY = Number(process.env.SLUICE_TEST_CONCURRENCY ?? 8);
/**
 * The matrix's time limit grows with it: a second per case run (about half a second each on 2
 * busy cores, 2026-12-04), at least ten minutes. A fixed limit failed the suite as cases were added.
 */
const MATRIX_TIMEOUT_MS = Math.max(600_000, cases.length * (CRASH_POINTS.length + 1) * 1_000);

beforeAll(async () => {
  const c = testClients();
  await Promise.all([ensureBucket(c.s3, res.bucket), ensureStateTable(c.dynamodb, res.stateTable), ensureStateTable(c.dynamodb, res.sinkTable)]);
});

function duplicates(rows: readonly OutputRow[]): OutputRow[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const k = stableJson(r);
    if (seen.has(k)) return true;
    seen.add(k);
    return false;
  });
}

// ---------------------------------------------------------------------------------------------

describe('every crash point × every public case × {DynamoDbSink, S3FileSink}', () => {
  const runs = new Map<string, GuardedCaseRun | Error>();
  const keyOf = (point: CrashPoint | 'none', file: string) => `${point}|${file}`;

  beforeAll(async () => {
    const jobs = (['none', ...CRASH_POINTS] as const).flatMap((point) => cases.map(([file, c]) => ({ point, file, c })));
    const t0 = Date.now();
    await pool(jobs, CONCURRENCY, async (j) => {
      try {
        runs.set(keyOf(j.point, j.file), await runCaseGuarded(j.c, res, j.point === 'none' ? undefined : j.point));
      } catch (e) {
        runs.set(keyOf(j.point, j.file), e as Error);
      }
    });
    const ok = [...runs.values()].filter((r): r is GuardedCaseRun => !(r instanceof Error));
    // eslint-disable-next-line no-console
    console.log(
      `crash matrix: ${jobs.length} case runs (${cases.length} cases × ${CRASH_POINTS.length + 1} crash settings, both sinks each), ` +
        `${ok.reduce((s, r) => s + r.crashes, 0)} injected crashes, ${Date.now() - t0} ms wall, concurrency ${CONCURRENCY}, ` +
        `slowest case run ${Math.max(...ok.map((r) => r.ms))} ms`,
    );
  }, MATRIX_TIMEOUT_MS);

  const get = (point: CrashPoint | 'none', file: string): GuardedCaseRun => {
    const r = runs.get(keyOf(point, file));
    if (!r) throw new Error(`no run for ${point} ${file}`);
    if (r instanceof Error) throw r;
    return r;
  };

  describe('without a crash', () => {
    it.each(cases)('%s: the step results read back from the S3 sink log match the case', (file, c) => {
      expect(compareCase(c, get('none', file).result)).toEqual([]);
    });
  });

  describe.each(CRASH_POINTS)('when every run crashes once at %s and the next run finishes', (point) => {
    it.each(cases)('%s: both sinks hold exactly what the no-crash run left', (file, c) => {
      const crashed = get(point, file);
      const clean = get('none', file);
      // DynamoDB: the table's rows (markers and batch IDs aside), as a multiset.
      expect(crashed.dynamoRows).toEqual(clean.dynamoRows);
      // S3: the committed rows, batch by batch, and not one object more than the clean run wrote.
      expect(crashed.fileRows).toEqual(clean.fileRows);
      expect(crashed.fileKeys).toEqual(clean.fileKeys);
      // And the case's own expectations, step by step.
      expect(compareCase(c, crashed.result)).toEqual([]);
    });

    it('crashed at least once per case where the point exists in that case', () => {
      // mid-state needs state changes; every other point is reached by every run with a batch.
      const crashes = cases.map(([file]) => get(point, file).crashes);
      if (point === 'mid-state') expect(crashes.some((n) => n > 0)).toBe(true);
      else expect(crashes.every((n) => n > 0)).toBe(true);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('the Spark-practice matrix: a naive append sink vs the guarded sinks, crashing before and after the sink write commits', () => {
  const plan = (name: string) => windowedTotals({ outputMode: 'update', name });
  // Two 10-minute windows, both updated by the one batch.
  const events = Array.from({ length: 20 }, (_, i) => ({ user: `u${i % 4}`, event_time: `2026-10-01 12:${String(i * 1).padStart(2, '0')}:00`, amount: i + 1 }));

  async function runNaive(point: CrashPoint | null): Promise<OutputRow[]> {
    const p = plan('matrix-naive');
    const g = guardedSinks(p, res);
    const naive = new NaiveAppendSink({ client: testClients().dynamodb, tableName: res.sinkTable, queryKey: g.base });
    await dropFile(res.bucket, g.base, 1, events);
    const time = leaseClock();
    if (point)
      await expect(
        buildExecutor(testConnection(), p, g.cfg, { crash: new CrashInjector({ point }), sink: naive, clock: time.clock }).executor.run(),
      ).rejects.toBeInstanceOf(InjectedCrash);
    if (point) time.waitOutLease(); // the crashed run kept its lease
    await buildExecutor(testConnection(), p, g.cfg, { sink: naive, clock: time.clock }).executor.run();
    return naive.readAll();
  }

  async function runGuarded(point: CrashPoint | null): Promise<{ dynamo: OutputRow[]; files: OutputRow[] }> {
    const p = plan('matrix-guarded');
    const g = guardedSinks(p, res);
    await dropFile(res.bucket, g.base, 1, events);
    const time = leaseClock();
    if (point)
      await expect(
        buildExecutor(testConnection(), p, g.cfg, { crash: new CrashInjector({ point }), sink: g.tee, clock: time.clock }).executor.run(),
      ).rejects.toBeInstanceOf(InjectedCrash);
    if (point) time.waitOutLease(); // the crashed run kept its lease
    await buildExecutor(testConnection(), p, g.cfg, { sink: g.tee, clock: time.clock }).executor.run();
    return { dynamo: await g.dynamo.readAll(), files: await g.files.readCommitted() };
  }

  let naiveClean: OutputRow[];
  let guardedClean: { dynamo: OutputRow[]; files: OutputRow[] };
  beforeAll(async () => {
    [naiveClean, guardedClean] = await Promise.all([runNaive(null), runGuarded(null)]);
    expect(naiveClean).toHaveLength(2);
    expect(duplicates(naiveClean)).toEqual([]);
  });

  describe.each<CrashPoint>(['after-offsets', 'mid-read'])('when the run crashes at %s, before the sink write commits', (point) => {
    it('the naive sink shows no duplicates: nothing was written before the crash', async () => {
      const rows = await runNaive(point);
      expect(canonical(rows)).toEqual(canonical(naiveClean));
    });
    it('the guarded sinks show no duplicates', async () => {
      const got = await runGuarded(point);
      expect(got.dynamo).toEqual(guardedClean.dynamo);
      expect(got.files).toEqual(guardedClean.files);
    });
  });

  describe.each<CrashPoint>(['after-sink', 'before-commit'])('when the run crashes at %s, after the sink write committed', (point) => {
    it("the naive sink shows DUPLICATES: the replay appended the batch's rows a second time", async () => {
      const rows = await runNaive(point);
      expect(rows).toHaveLength(2 * naiveClean.length);
      expect(canonical(duplicates(rows))).toEqual(canonical(naiveClean));
    });
    it('the guarded sinks show none: the replay was recognised by its batch ID', async () => {
      const got = await runGuarded(point);
      expect(got.dynamo).toEqual(guardedClean.dynamo);
      expect(duplicates(got.dynamo)).toEqual([]);
      expect(got.files).toEqual(guardedClean.files);
      expect(duplicates(got.files)).toEqual([]);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('when two runs of one query overlap (EventBridge started it twice)', () => {
  it('one exits with stoppedBy lease-held and no effect; together they produce exactly the result of one run', async () => {
    const p = windowedTotals({ outputMode: 'update', maxFilesPerTrigger: 1, name: 'overlap' });
    const one = guardedSinks(p, res);
    const twice = guardedSinks(p, res);
    for (const g of [one, twice]) for (const [i, f] of SEED_FILES.entries()) await dropFile(res.bucket, g.base, i + 1, f.rows);

    await buildExecutor(testConnection(), p, one.cfg, { sink: one.tee }).executor.run();

    // Separate executors and sink instances over the same checkpoint, table and prefix.
    const second = guardedSinks(p, res, twice.base);
    const reports = await Promise.all([
      buildExecutor(testConnection(), p, twice.cfg, { sink: twice.tee }).executor.run(),
      buildExecutor(testConnection(), p, second.cfg, { sink: second.tee }).executor.run(),
    ]);
    expect(reports.map((r) => r.stoppedBy).sort()).toEqual(['done', 'lease-held']);
    const held = reports.find((r) => r.stoppedBy === 'lease-held')!;
    expect(held.batches).toEqual([]);
    expect(held.message).toMatch(/another run of query overlap holds its lease/);

    expect(await twice.dynamo.readAll()).toEqual(await one.dynamo.readAll());
    expect(await twice.files.readCommitted()).toEqual(await one.files.readCommitted());
    expect((await twice.dynamo.readAll()).length).toBeGreaterThan(0);
  });
});

describe('when another run takes the lease over in the middle of a run (fencing)', () => {
  it("the stale run's sink write is rejected with LeaseLostError, and nothing of it lands", async () => {
    const p = windowedTotals({ outputMode: 'update', name: 'fenced' });
    const g = guardedSinks(p, res);
    await dropFile(res.bucket, g.base, 1, SEED_FILES[0].rows);
    // Just before the sink write, the run stalls past its lease and another run takes it.
    const thief = new DynamoDbLease({
      client: testClients().dynamodb,
      tableName: res.stateTable,
      leaseKey: leaseKeyFor(p, g.cfg),
      clock: { now: () => Date.now() + 60 * 60_000 },
    });
    const stalling: Sink = {
      description: 'stalls, then writes',
      async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext) {
        expect(await thief.acquire('the-other-run', 60_000)).not.toBeNull();
        await g.dynamo.addBatch(batchId, rows, ctx);
      },
    };
    const built = buildExecutor(testConnection(), p, g.cfg, { sink: stalling });
    await expect(built.executor.run()).rejects.toBeInstanceOf(LeaseLostError);
    expect(await g.dynamo.readAll()).toEqual([]);
    expect((await built.checkpoint.head()).latestCommitBatch).toBe(-1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('when a batch emits several sink chunks and the run dies after the first (mid-sink, issue 14)', () => {
  it('the DynamoDB sink ends equal to a run that never failed: no row lost, none duplicated', async () => {
    const users = 330; // 4 fenced chunks of at most 98 rows
    const p = readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
      .load()
      .withWatermark('event_time', '10 minutes')
      .groupBy(window('event_time', '10 minutes'), 'user')
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('mid-sink-chunks')
      .plan();
    const step = (minute: number, amount: number) =>
      Array.from({ length: users }, (_, i) => ({ user: `u${String(i).padStart(3, '0')}`, event_time: `2026-10-01 12:0${minute}:00`, amount }));
    /** Dies (as a killed Lambda would) right after the first committed chunk of every batch it writes. */
    const dyingAfterPiece0 = (inner: Sink): Sink => ({
      description: `dies after piece 0 of ${inner.description}`,
      addBatch: (batchId, rows, ctx) =>
        inner.addBatch(batchId, rows, {
          ...ctx,
          onPieceWritten: (i) => {
            if (i === 0) throw new InjectedCrash('mid-sink', batchId);
          },
        }),
    });
    async function run(crash: boolean): Promise<{ rows: OutputRow[]; skipped: number }> {
      const g = guardedSinks(p, res);
      let skipped = 0;
      for (const [n, rows] of [step(1, 1), step(2, 2)].entries()) {
        await dropFile(res.bucket, g.base, n + 1, rows);
        if (crash)
          await expect(buildExecutor(testConnection(), p, g.cfg, { sink: dyingAfterPiece0(g.dynamo) }).executor.run()).rejects.toBeInstanceOf(InjectedCrash);
        const before = g.dynamo.stats().chunksSkipped;
        await buildExecutor(testConnection(), p, g.cfg, { sink: g.dynamo }).executor.run();
        skipped += g.dynamo.stats().chunksSkipped - before;
      }
      return { rows: canonical(await g.dynamo.readAll()), skipped };
    }
    const [clean, crashed] = await Promise.all([run(false), run(true)]);
    expect(clean.rows).toHaveLength(users);
    expect(clean.rows.every((r) => r.total === 3)).toBe(true);
    expect(crashed.rows).toEqual(clean.rows);
    // Each replay found the first attempt's chunk 0 and skipped it.
    expect(crashed.skipped).toBe(2);
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------

describe('when a stateless batch streams to the sink and the run dies after its first piece (mid-sink, hole 9)', () => {
  const events = 1300; // 3 source chunks of at most 512 lines in one file
  const p = readStream
    .format('json')
    .schema('id LONG, amount DOUBLE')
    .load()
    .filter((r) => Number(r.amount) > 0)
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName('streamed-mid-sink')
    .plan();
  /** amount = id % 5: a fifth of the rows (amount 0) is filtered out. */
  const input = Array.from({ length: events }, (_, id) => ({ id, amount: id % 5 }));
  const expected = canonical(input.filter((e) => e.amount > 0));

  it.each(['dynamodb', 'files'] as const)(
    'the %s sink ends equal to a run that never failed: every row once, none lost',
    async (kind) => {
      async function run(crash: boolean): Promise<{ rows: OutputRow[]; report: { replay: boolean } }> {
        const g = guardedSinks(p, res);
        const c = testClients();
        // Objects of 300 rows, so the file sink too writes its first piece before the read has ended.
        const sink = kind === 'dynamodb' ? g.dynamo : new S3FileSink({ client: c.s3, bucket: res.bucket, prefix: `${g.base}/files`, maxRowsPerObject: 300 });
        await dropFile(res.bucket, g.base, 1, input);
        const time = leaseClock();
        if (crash) {
          await expect(
            buildExecutor(testConnection(), p, g.cfg, { crash: { point: 'mid-sink' }, sink, clock: time.clock }).executor.run(),
          ).rejects.toBeInstanceOf(InjectedCrash);
          time.waitOutLease();
        }
        const report = await buildExecutor(testConnection(), p, g.cfg, { sink, clock: time.clock }).executor.run();
        const rows = sink instanceof S3FileSink ? await sink.readCommitted() : await (sink as typeof g.dynamo).readAll();
        return { rows: canonical(rows), report: report.batches[0] };
      }
      const [clean, crashed] = await Promise.all([run(false), run(true)]);
      expect(clean.rows).toEqual(expected);
      expect(crashed.rows).toEqual(expected);
      expect(duplicates(crashed.rows)).toEqual([]);
      expect(crashed.report.replay).toBe(true);
    },
    120_000,
  );
});
