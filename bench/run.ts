/**
 * sluice benchmark: `npm run bench` (bench/build-and-run.js bundles this file with esbuild).
 *
 * One run prints, side by side, for 1,000,000 generated JSON-lines events of ~200 bytes over
 * 10,000 users and 10-minute windows:
 *   1. raw: split + JSON.parse of the same bytes (the floor any engine pays), events/s;
 *   2. engine: MicroBatchExecutor on the in-memory ports, events/s;
 *   3. end to end on the embedded local stack (DynamoDB Local + s3rver), events/s;
 *   4. DynamoDB and S3 requests per batch, state item writes against the distinct (window, user)
 *      pairs each batch touches (computed from the input independently, bench/pairs.ts);
 *   5. the AWS requests of an empty scheduled run;
 *   6. peak RSS of the engine over 1x and 10x the backlog at the same maxFilesPerTrigger, and the
 *      peak live heap of one stateless batch far larger than a chunk, held (addBatch) vs streamed.
 * Targets are printed next to the figures; nothing fails on a miss. Figures go to
 * bench/results.json too.
 *
 *   7. `--only cost` (bench/cost.ts, not in the default set: ~15 minutes at full size): four
 *      scheduled runs of the reference workload on the local stack, metered by consumed capacity,
 *      priced with bench/prices.json; written to bench/results.json under `cost`.
 *   8. join (bench/join.ts, in the default set: about a minute; `--only join` alone): a stream-stream join
 *      (impressions leftOuter clicks) next to the single aggregation over as many events and
 *      batches, the engine alone and end to end, events/s and DynamoDB write units per batch;
 *      written to bench/results.json under `join`.
 *   9. scale (bench/scale.ts, in the default set: under a minute; `--only scale` alone): one backlog on the
 *      local stack run by the single executor and partitioned on 1 and 2 worker threads (events/s
 *      side by side, each output checked), the partitioned runs' per-task costs, and from them a
 *      scaling table for N Lambdas with its model; written to bench/results.json under `scale`.
 *  10. `--only discovery` (bench/discovery.ts, not in the default set: about 5 minutes): the LISTs,
 *      checkpoint requests and seconds the landing source spends finding new files on prefixes of
 *      5,000, 10^4, 10^5 and 10^6 objects (an in-process S3 twin; s3rver for 10^4 as a cross-check), and
 *      their monthly price at a run every 15 minutes; written to bench/results.json under `discovery`.
 *  11. types (bench/types.ts, in the default set: under a minute): the engine on the same events as
 *      flat JSON (DOUBLE amount) and as nested JSON (DECIMAL(10,2) amount, a STRUCT, an ARRAY of
 *      STRUCTs), rounds interleaved, events/s and the ratio; written to bench/results.json under `types`.
 *  12. expr (bench/expr.ts, in the default set: under a minute; `--only expr` alone): the engine's
 *      aggregation plain, preceded by a selectExpr and a filter, and preceded by a withColumn and a
 *      filter (Spark SQL expressions), same events, rounds interleaved, events/s and events/CPU s
 *      with the ratios (target ≥ 0.7× for selectExpr + filter); written under `expr`.
 *
 *  13. peer (bench/peer.ts, in the default set: about a minute; `--only peer` alone): the engine beside
 *      DuckDB (`read_json`, `time_bucket`, GROUP BY; 1 and 2 threads) on the engine section's input
 *      written to files, rounds interleaved, each side's work checked equal; events/s, the ratio and
 *      the load average; written to bench/results.json under `peer`.
 *
 * Options: --only engine,e2e,memory,join,scale,cost,discovery,types,expr,peer (default: engine,e2e,memory,join,scale,types,expr,peer; bench/results.json is
 *          written whole only when engine, e2e and memory all run, and by scale, cost and join under their own keys)
 *          --events-per-run N (cost; default 900000)  --cost-runs N (default 4)
 *          --discovery-sizes 5000,10000,100000,1000000 (discovery; the default)
 *          --types-events N (types; default 300000)  --types-rounds N (default 3)
 *          --expr-events N (expr; default 300000)  --expr-rounds N (default 5)
 *          --peer-rounds N (peer; default 5; its input: --events)  --peer-warmup N (default 1)
 *          --peer-cpu-prof FILE (peer: 3 more engine passes under V8's profiler, the profile to FILE)
 *          --join-impressions N (join; default 160000, clicks a quarter of them)  --join-rounds N (default 5)
 *          --scale-events N (scale; default 400000)  --scale-files N (default 40)  --scale-max-files N (default 8)
 *          --scale-partitions P (default 4)  --scale-splits S (maxSplits, default 4)  --scale-rounds R (default 1)  --scale-warmup W (default 1: rounds run first, not counted)
 *          --scale-overhead-ms O (a what-if column: O ms more per task on AWS; default 0, none)
 *          --events N  --e2e-events N  --e2e-budget-s S (default 240)  --memory-events N
 *          --rounds N (default 7)  --scale N (default 10)  --no-json
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { compileLineParser } from '../lib/engine/json-scan';
import { MicroBatchExecutor } from '../lib/engine/schedule/single';
import type { RunReport } from '../lib/engine/run/types';
import { InMemoryFileSource } from '../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../lib/engine/testing/memory-state';
import type { Sink } from '../lib/engine/ports';
import { readStream } from '../lib/engine/query/reader';
import { PlainCheckpoint, PlainStateStore } from './plain-ports';
import { parseSchema } from '../lib/engine/schema';
import { parseJsonLine } from '../lib/engine/json-record';
import { CountingSink, MB, MemorySampler, peakRssBytes, sumService, describeCounts } from './counting';
import type { CommitRecord } from '../lib/engine/testing/counting-state-store';
import { runCostSection, REFERENCE_EVENTS_PER_RUN } from './cost';
import { runDiscoverySection } from './discovery';
import { runE2e, type E2eResult } from './e2e';
import { runJoinSection } from './join';
import { runScaleSection } from './scale';
import { runEngine, type EngineRun } from './engine-run';
import { runTypesSection } from './types';
import { runExprSection } from './expr';
import { runPeerSection } from './peer';
import { BENCH_SCHEMA, generateEvents } from './generate';
import { lazyFiles } from './lazy-files';
import { arg, ENGINE_INPUT, num } from './args';
import { expectedBatches, type ExpectedBatch } from './pairs';
import { benchPlan, QUERY_TEXT, WATERMARK_DELAY_MS, WINDOW_MS } from './query';

// ------------------------------------------------------------------------------------ options

const { events: EVENTS, keys: KEYS, files: FILES, maxFiles: MAX_FILES, spanMinutes: SPAN_MINUTES, rounds: ROUNDS } = ENGINE_INPUT;
const SCALE = num('scale', 10);
const E2E_EVENTS = num('e2e-events', EVENTS);
const E2E_BUDGET_MS = num('e2e-budget-s', 240) * 1000;
/** 1x backlog of the memory check (files of MEMORY_EVENTS / 100 events); 10x of 1M would take ~10x the engine run. */
const MEMORY_EVENTS = num('memory-events', 200_000);
const only = new Set((arg('only') ?? 'engine,e2e,memory,join,scale,types,expr,peer').replace('raw', 'engine').split(','));
const ALL_SECTIONS = ['engine', 'e2e', 'memory'].every((x) => only.has(x));
const TARGET_ENGINE_RATIO = 0.9;
const TARGET_EMPTY_REQUESTS = 6;
/** "Bounded": 10x the backlog keeps at most this factor of the 1x run's live heap, and the 10x high-water mark grows by at most PLATEAU_FACTOR over its second half. */
const BOUNDED_FACTOR = 1.25;
const PLATEAU_FACTOR = 1.1;

const out = (s = '') => process.stdout.write(`${s}\n`);
const rate = (events: number, seconds: number) => events / seconds;
const fmtRate = (r: number | null | undefined) => (r == null ? 'n/a' : r >= 1e6 ? `${(r / 1e6).toFixed(2)} M ev/s` : `${(r / 1e3).toFixed(0)} k ev/s`);

function table(head: string[], rows: Array<Array<string | number>>, align?: string): string {
  const cells = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'l' ? c.padEnd(w[i]) : c.padStart(w[i])))
      .join('  ')
      .trimEnd();
  return [line(head), line(w.map((n) => '-'.repeat(n))), ...cells.slice(1).map(line)].map((l) => `  ${l}`).join('\n');
}

// ------------------------------------------------------------------------- child: memory check

interface MemoryResult {
  scale: number;
  files: number;
  events: number;
  backlogBytes: number;
  batches: number;
  seconds: number;
  medianBatchMs: number;
  rowsIn: number;
  rowsOut: number;
  stateItems: number;
  baselineRss: number | null;
  peakRss: number | null;
  /** VmHWM after batches 10, 20, ... (the high-water mark as the run goes on). */
  peakAfterBatch: Array<[number, number | null]>;
  /** With liveEvery: heap in use after a full GC every liveEvery batches (what the run keeps as it goes on). */
  liveAfterBatch: Array<[number, number]>;
  /** Heap still in use after the run, after a full GC (what the run keeps). */
  liveHeapAfterRun: number | null;
  /** Output rows the run report still holds (RunReport.batches[].rows). */
  rowsHeldByReport: number;
}

/**
 * One run over a backlog `scale` times the 1x one. With `liveEvery` > 0, a full GC every that many
 * batches measures the heap the run keeps (liveAfterBatch); those GCs also lower the peaks, so
 * peak RSS is taken from a run without them.
 */
async function memoryChild(scale: number, events: number, liveEvery: number): Promise<void> {
  const files = lazyFiles({ files: FILES * scale, eventsPerFile: events / FILES, keys: KEYS, minutesPerFile: SPAN_MINUTES / FILES });
  const backlogBytes = files[0].body.length * files.length; // the files differ by a few bytes at most
  const baselineRss = peakRssBytes();
  const sink = new CountingSink();
  const state = new InMemoryStateStore();
  const peakAfterBatch: Array<[number, number | null]> = [];
  const liveAfterBatch: Array<[number, number]> = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  let n = 0;
  const run = await runEngine(files, {
    maxFilesPerTrigger: MAX_FILES,
    sink,
    state,
    onBatch: () => {
      n++;
      if (n % 10 === 0) peakAfterBatch.push([n, peakRssBytes()]);
      if (gc && liveEvery > 0 && n % liveEvery === 0) {
        gc();
        liveAfterBatch.push([n, process.memoryUsage().heapUsed]);
      }
    },
  });
  const ms = run.report.batches
    .filter((b) => !b.noData)
    .map((b) => b.durationMs)
    .sort((a, b) => a - b);
  let liveHeapAfterRun: number | null = null;
  if (gc) {
    gc();
    liveHeapAfterRun = process.memoryUsage().heapUsed;
  }
  const res: MemoryResult = {
    scale,
    files: files.length,
    events: files.length * (events / FILES),
    backlogBytes,
    batches: run.report.batches.length,
    seconds: run.seconds,
    medianBatchMs: ms[Math.floor(ms.length / 2)] ?? 0,
    rowsIn: run.report.rowsIn,
    rowsOut: run.report.rowsOut,
    stateItems: state.size(),
    baselineRss,
    peakRss: peakRssBytes(),
    peakAfterBatch,
    liveAfterBatch,
    liveHeapAfterRun,
    rowsHeldByReport: run.report.batches.reduce((a, b) => a + b.rows.length, 0),
  };
  process.stdout.write(`RESULT ${JSON.stringify(res)}\n`);
}

function spawnMemoryChild(scale: number, events: number, liveEvery = 0): MemoryResult {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', process.argv[1], '--child', 'memory', '--scale', String(scale), '--memory-events', String(events), '--live-every', String(liveEvery)],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`memory check (scale ${scale}) failed: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as MemoryResult;
}

// ------------------------------------------------------------- child: memory of a stateless batch

interface StatelessMemoryResult {
  /** held: the sink takes addBatch only, so the executor collects the batch (every stateless batch before streaming); streamed: addBatchChunks. */
  mode: 'held' | 'streamed';
  events: number;
  inputBytes: number;
  batches: number;
  rowsOut: number;
  /** Calls the sink got: 1 addBatch (held), or the chunks of the stream. */
  deliveries: number;
  /** The most rows the sink was handed at once. */
  largestDelivery: number;
  /** The most heap in use (after a full GC) while the sink held rows: what the run kept alive at its peak. */
  peakLiveHeap: number;
  baselineHeap: number;
  peakRss: number | null;
  seconds: number;
}

/**
 * One stateless batch of `events` events (a select; every file in one batch), into a sink that
 * counts: `held` offers addBatch only, `streamed` addBatchChunks too. The sink runs a full GC at
 * its first delivery and every 10th after, and notes the heap in use: what the run keeps alive
 * while the sink holds rows (for held, the whole batch, twice: the staged rows and the output).
 */
async function statelessMemoryChild(mode: 'held' | 'streamed', events: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the stateless memory check needs node --expose-gc');
  const files = lazyFiles({ files: FILES, eventsPerFile: events / FILES, keys: KEYS, minutesPerFile: SPAN_MINUTES / FILES });
  const plan = readStream
    .format('json')
    .schema(BENCH_SCHEMA)
    .load()
    .select('user', 'event_time', 'amount', 'country')
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName('bench-stateless-memory')
    .plan();
  const source = new InMemoryFileSource(plan.source.schema);
  for (const f of files) source.files.push(f as { key: string; body: string });
  const counts = { rows: 0, deliveries: 0, largest: 0, peakLiveHeap: 0 };
  const take = (rows: number) => {
    counts.rows += rows;
    counts.deliveries++;
    counts.largest = Math.max(counts.largest, rows);
    if (counts.deliveries % 10 !== 1) return;
    gc();
    counts.peakLiveHeap = Math.max(counts.peakLiveHeap, process.memoryUsage().heapUsed);
  };
  const sink: Sink = { description: `count://${mode}`, addBatch: async (_id, rows) => take(rows.length) };
  if (mode === 'streamed') {
    sink.addBatchChunks = async (_id, chunks) => {
      for await (const rows of chunks) take(rows.length);
    };
  }
  gc();
  const baselineHeap = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const report = await new MicroBatchExecutor({ plan, source, checkpoint: new PlainCheckpoint(), state: new PlainStateStore(), sink }).run();
  const res: StatelessMemoryResult = {
    mode,
    events,
    inputBytes: files[0].body.length * files.length,
    batches: report.batches.length,
    rowsOut: report.rowsOut,
    deliveries: counts.deliveries,
    largestDelivery: counts.largest,
    peakLiveHeap: counts.peakLiveHeap,
    baselineHeap,
    peakRss: peakRssBytes(),
    seconds: (performance.now() - t0) / 1000,
  };
  process.stdout.write(`RESULT ${JSON.stringify(res)}\n`);
}

function spawnStatelessMemoryChild(mode: 'held' | 'streamed', events: number): StatelessMemoryResult {
  const r = spawnSync(process.execPath, ['--expose-gc', process.argv[1], '--child', 'memory-stateless', '--mode', mode, '--memory-events', String(events)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`stateless memory check (${mode}) failed: exit ${r.status}\n${r.stderr}`);
  return JSON.parse(line.slice('RESULT '.length)) as StatelessMemoryResult;
}

// ------------------------------------------------------------------------- parse floor vs engine

interface Timing {
  /** Best time of each batch (a group of maxFilesPerTrigger files), over the rounds, s. */
  readonly perBatch: number[];
  /** Best time of a whole pass (wall, and CPU of the process), s. */
  wall: number;
  cpu: number;
  /** Engine: best time outside the batches (planning, checkpoint), s. */
  overhead: number;
}

const newTiming = (): Timing => ({ perBatch: [], wall: Infinity, cpu: Infinity, overhead: Infinity });
const keepBest = (t: Timing, i: number, v: number) => {
  if (!(t.perBatch[i] <= v)) t.perBatch[i] = v;
};
/** Sum of the best time of each batch: robust against other load on the machine. */
const bestTotal = (t: Timing) => t.perBatch.reduce((a, b) => a + b, 0) + (Number.isFinite(t.overhead) ? t.overhead : 0);

// biome-ignore lint/correctness/noUnusedVariables: written, never read, so that the JIT cannot drop the parses being timed
let blackhole = 0;
function timeParse(files: ReadonlyArray<{ body: string }>, parse: (line: string) => unknown, t: Timing): void {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  for (let g = 0; g * MAX_FILES < files.length; g++) {
    const t0 = performance.now();
    for (let f = g * MAX_FILES; f < Math.min(files.length, (g + 1) * MAX_FILES); f++) {
      const lines = files[f].body.split('\n');
      for (let i = 0; i < lines.length; i++) if (parse(lines[i]) !== undefined) blackhole++;
    }
    keepBest(t, g, (performance.now() - t0) / 1000);
  }
  t.wall = Math.min(t.wall, (performance.now() - w0) / 1000);
  const c = process.cpuUsage(c0);
  t.cpu = Math.min(t.cpu, (c.user + c.system) / 1e6);
}

/** `after`: time spent for the run after it ended (collecting the garbage it left), s. */
function timeEngine(run: EngineRun, t: Timing, after: number): void {
  let inBatches = 0;
  run.report.batches.forEach((b, i) => {
    keepBest(t, i, b.durationMs / 1000);
    inBatches += b.durationMs / 1000;
  });
  t.overhead = Math.min(t.overhead, Math.max(0, run.seconds - inBatches) + after);
  t.wall = Math.min(t.wall, run.seconds + after);
  t.cpu = Math.min(t.cpu, run.cpuSeconds);
}

function checkAgainst(expected: ExpectedBatch[], report: RunReport): string[] {
  const problems: string[] = [];
  if (expected.length !== report.batches.length) problems.push(`${report.batches.length} batches, expected ${expected.length}`);
  for (const b of report.batches) {
    const e = expected[b.batchId];
    if (!e) continue;
    if (b.numInputRows !== e.rows) problems.push(`batch ${b.batchId}: ${b.numInputRows} rows, expected ${e.rows}`);
    if (b.droppedByWatermark !== e.late) problems.push(`batch ${b.batchId}: ${b.droppedByWatermark} late, expected ${e.late}`);
    if (b.numOutputRows !== e.evicted) problems.push(`batch ${b.batchId}: ${b.numOutputRows} emitted, expected ${e.evicted}`);
  }
  return problems;
}

const stripRows = (r: RunReport): RunReport => ({ ...r, batches: r.batches.map((b) => ({ ...b, rows: [] })) });

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

// ------------------------------------------------------------------------- child: the engine section

interface EngineSection {
  readonly raw: Record<string, unknown>;
  readonly engine: Record<string, unknown>;
  readonly summary: Array<[string, string, string, string]>;
}

/**
 * [1-2]: the parse floor and the engine, interleaved round by round. Run in a process of its own
 * (`--child engine`), as the engine runs in a Lambda: the harness's heap (s3rver, the other
 * sections' doubles) would otherwise weigh on the engine's garbage collection, not on JSON.parse's.
 */
async function engineSection(input: ReturnType<typeof generateEvents>, expected: ExpectedBatch[]): Promise<EngineSection> {
  const summary: EngineSection['summary'] = [];
  const results: Record<string, Record<string, unknown>> = {};
  const schema = parseSchema(BENCH_SCHEMA);
  let scan: ((line: string) => unknown) | null = null;
  try {
    scan = compileLineParser(schema);
  } catch (e) {
    out(`  compileLineParser failed: ${(e as Error).message}`);
  }
  const t = { json: newTiming(), ref: newTiming(), scan: newTiming(), engine: newTiming() };
  // Only the first run's report and commits are kept: whole runs (their state stores) would weigh on the next ones.
  let first: { report: RunReport; commits: CommitRecord[] } | null = null;
  const engineRuns: number[] = [];
  // The old generation the engine's pass leaves (its whole state store) must not be collected in
  // another pass, where it fell at the same batch every round and the best time per batch could
  // not filter it out. So the engine pays for it: a full GC right after its run is timed as part
  // of the run (more than it would cost as V8 does it, incrementally and on the other core). Each
  // round also starts from a collected heap. (A full GC before every pass instead gave the engine
  // a major GC of its own around batch 5 in every round, most likely because a full GC also shrinks
  // the young generation, so that more of the engine's first batches were promoted.)
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  for (let r = 0; r < ROUNDS; r++) {
    gc();
    timeParse(input.files, (l) => JSON.parse(l), t.json);
    timeParse(input.files, (l) => parseJsonLine(schema, l), t.ref);
    if (scan) timeParse(input.files, scan, t.scan);
    // The sink counts the rows it is handed, as a real sink writes them out and keeps nothing
    // (InMemorySink holds every row of the run, for tests to read back).
    const run = await runEngine(input.files, { maxFilesPerTrigger: MAX_FILES, sink: new CountingSink() });
    const g0 = performance.now();
    gc();
    const gcSeconds = (performance.now() - g0) / 1000;
    first ??= { report: stripRows(run.report), commits: run.state.commits };
    engineRuns.push(run.seconds);
    timeEngine(run, t.engine, gcSeconds);
  }
  const ev = input.events;
  const rawRate = ev / bestTotal(t.json);
  const line = (name: string, x: Timing) => [
    name,
    fmtRate(ev / bestTotal(x)),
    fmtRate(ev / x.wall),
    fmtRate(ev / x.cpu),
    (ev / bestTotal(x) / rawRate).toFixed(2),
  ];
  out(
    table(
      ['', 'rate', 'best pass', 'CPU time', 'x JSON.parse'],
      [
        line('split + JSON.parse (the floor)', t.json),
        line('split + parseJsonLine (the reference parser)', t.ref),
        ...(scan ? [line('split + compileLineParser (lib/engine/json-scan.ts)', t.scan)] : []),
        line('engine: MicroBatchExecutor, InMemoryFileSource (parses with compileLineParser)', t.engine),
      ],
    ),
  );
  out("  rate: events / sum of each batch's best time; best pass: best whole pass; CPU time: process CPU (GC threads included) of the best pass");
  out();
  const run = first!;
  const engineRate = ev / bestTotal(t.engine);
  const problems = checkAgainst(expected!, run.report);
  const commitOf = (id: number) => run.commits.find((x) => x.version === id);
  const rows = run.report.batches.map((b) => {
    const e = expected![b.batchId];
    const c = commitOf(b.batchId);
    const writes = c?.changes ?? 0;
    return [
      b.batchId + (b.noData ? ' (no data)' : ''),
      b.numInputRows,
      b.droppedByWatermark,
      e?.pairs ?? '?',
      e?.evicted ?? '?',
      e?.touched ?? '?',
      `${c?.puts ?? 0} + ${c?.deletes ?? 0}`,
      e && writes <= e.touched ? 'ok' : 'MISS',
      Math.round(t.engine.perBatch[b.batchId] * 1000),
    ];
  });
  out('  engine, per batch');
  out(table(['batch', 'rows', 'late', 'pairs', 'evicted', 'touched', 'state writes', '<= touched', 'best ms'], rows));
  out("  pairs: distinct (window, user) of the batch's rows; evicted: pairs its watermark closes (append: emitted); touched: pairs ∪ evicted;");
  out('  state writes: upserts + deletes the engine commits. Counted from the input alone (bench/pairs.ts), not by the engine.');
  out(
    `  engine runs: ${engineRuns.map((x) => `${x.toFixed(2)} s`).join(', ')}; rows, late rows and emitted windows per batch vs that count: ${problems.length ? `MISMATCH: ${problems.slice(0, 5).join('; ')}` : 'match'}`,
  );
  out();
  const writesOk = run.report.batches.every((b) => (commitOf(b.batchId)?.changes ?? 0) <= (expected![b.batchId]?.touched ?? -1));
  const upsertsOk = run.report.batches.every((b) => (commitOf(b.batchId)?.puts ?? 0) <= (expected![b.batchId]?.pairs ?? -1));
  results.raw = {
    jsonParse: Math.round(rawRate),
    parseJsonLine: Math.round(ev / bestTotal(t.ref)),
    compileLineParser: scan ? Math.round(ev / bestTotal(t.scan)) : null,
  };
  results.engine = {
    eventsPerSecond: Math.round(engineRate),
    xRaw: Number((engineRate / rawRate).toFixed(3)),
    runSeconds: engineRuns.map((x) => Number(x.toFixed(2))),
    batches: run.report.batches.map((b) => ({
      id: b.batchId,
      rows: b.numInputRows,
      pairs: expected![b.batchId]?.pairs,
      evicted: expected![b.batchId]?.evicted,
      upserts: commitOf(b.batchId)?.puts ?? 0,
      deletes: commitOf(b.batchId)?.deletes ?? 0,
    })),
    matchesIndependentCount: problems.length === 0,
  };
  summary.push(['raw split + JSON.parse', fmtRate(rawRate), '(the floor)', '']);
  summary.push([
    'engine, in-memory ports',
    `${fmtRate(engineRate)} (${(engineRate / rawRate).toFixed(2)}x raw)`,
    `>= ${TARGET_ENGINE_RATIO}x raw`,
    engineRate >= TARGET_ENGINE_RATIO * rawRate ? 'ok' : 'MISS',
  ]);
  summary.push([
    'engine state writes per batch',
    `upserts ${upsertsOk ? '<=' : '>'} pairs, all ${writesOk ? '<=' : '>'} touched`,
    '<= distinct pairs touched',
    writesOk ? 'ok' : 'MISS',
  ]);
  return { raw: results.raw, engine: results.engine, summary };
}

async function engineChild(): Promise<void> {
  const input = generateEvents({ events: EVENTS, keys: KEYS, files: FILES, spanMinutes: SPAN_MINUTES });
  const expected = expectedBatches(input.files, MAX_FILES, WINDOW_MS, WATERMARK_DELAY_MS);
  const res = await engineSection(input, expected);
  process.stdout.write(`RESULT ${JSON.stringify({ ...res, peakRss: peakRssBytes() })}\n`);
}

function spawnEngineChild(): (EngineSection & { peakRss: number | null }) | null {
  const r = spawnSync(process.execPath, ['--expose-gc', process.argv[1], '--child', 'engine', '--events', String(EVENTS), '--rounds', String(ROUNDS)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = (r.stdout ?? '').split('\n');
  const result = lines.find((l) => l.startsWith('RESULT '));
  for (const l of lines) if (!l.startsWith('RESULT ') && l !== '') out(l);
  if (!result) {
    out(`  the engine section failed: exit ${r.status}`);
    return null;
  }
  out();
  return JSON.parse(result.slice('RESULT '.length));
}

/** Merges one section's figures into bench/results.json under `key`, keeping the others (one line per key). */
function mergeResults(key: string, json: unknown): void {
  const file = join(process.cwd(), 'bench', 'results.json');
  const results: Record<string, unknown> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  results[key] = json;
  writeFileSync(
    file,
    `{\n${Object.entries(results)
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n')}\n}\n`,
  );
}

/**
 * [8] the stream-stream join beside the single aggregation (bench/join.ts); merges its figures
 * into bench/results.json under `join`. The last whole run's aggregation figures are printed beside.
 */
async function joinSection(): Promise<void> {
  out(
    '[8] stream-stream join (README "Stream-stream joins": impressions leftOuter clicks within a minute) beside the single aggregation, same events and batches',
  );
  const file = join(process.cwd(), 'bench', 'results.json');
  interface Recorded {
    date?: string;
    input?: { events: number; files: number; maxFilesPerTrigger: number };
    engine?: { eventsPerSecond: number };
    e2e?: { eventsPerSecond: number; batches?: Array<{ batch: string; stateItemWrites: number }> };
  }
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Recorded) : {};
  const e2eBatches = (before.e2e?.batches ?? []).filter((b) => /^\d+$/.test(b.batch) && b.stateItemWrites > 0);
  const recorded = before.engine
    ? {
        date: before.date,
        engine: before.engine.eventsPerSecond,
        e2e: before.e2e?.eventsPerSecond,
        stateItemWritesPerBatch: e2eBatches.length ? Math.round(e2eBatches.reduce((n, b) => n + b.stateItemWrites, 0) / e2eBatches.length) : undefined,
        eventsPerBatch: before.input ? Math.round(before.input.events / (before.input.files / before.input.maxFilesPerTrigger)) : undefined,
      }
    : undefined;
  const loadAtStart = loadavg()[0];
  const json = await runJoinSection({
    impressions: num('join-impressions', 160_000),
    clickRate: 0.25,
    files: 20,
    maxFilesPerTrigger: 2,
    spanMinutes: SPAN_MINUTES,
    rounds: num('join-rounds', 5),
    budgetMs: E2E_BUDGET_MS,
    out,
    table,
    fmtRate,
    recorded,
  });
  if (process.argv.includes('--no-json')) return;
  mergeResults('join', { date: new Date().toISOString(), node: process.version, cores: cpus().length, loadAverage: [loadAtStart, loadavg()[0]], ...json });
  out('  join figures written to bench/results.json (key "join")');
}

/**
 * [9] scale-out (bench/scale.ts): the single executor beside partitioned runs on 1 and 2 worker
 * threads, the per-task costs and the scaling model; merges its figures under `scale`.
 */
async function scaleSection(): Promise<void> {
  out('[9] scale-out: one backlog, the single executor vs partitioned runs on worker threads (issue 19), per-task costs, and a scaling model for N Lambdas');
  const json = await runScaleSection({
    events: num('scale-events', 400_000),
    files: num('scale-files', 40),
    maxFilesPerTrigger: num('scale-max-files', 8),
    statePartitions: num('scale-partitions', 4),
    maxSplits: num('scale-splits', 4),
    workers: [1, 2],
    lambdas: [1, 2, 4, 8, 16, 32, 64],
    overheadMs: num('scale-overhead-ms', 0),
    rounds: num('scale-rounds', 1),
    warmup: num('scale-warmup', 1),
    wide: 64,
    out,
    table,
    fmtRate,
  });
  if (process.argv.includes('--no-json')) return;
  mergeResults('scale', json);
  out('  scale figures written to bench/results.json (key "scale")');
}

/** [7] the cost bench; merges its figures into bench/results.json under `cost`, keeping the other sections. */
async function costSection(): Promise<void> {
  const eventsPerRun = num('events-per-run', REFERENCE_EVENTS_PER_RUN);
  const runs = num('cost-runs', 4);
  out(`[7] cost: consecutive scheduled runs on the local stack, every request metered (ReturnConsumedCapacity TOTAL, S3 requests by class)`);
  const { json } = await runCostSection({ eventsPerRun, runs, out, table });
  if (process.argv.includes('--no-json')) return;
  mergeResults('cost', json);
  out(`  cost figures written to bench/results.json (key "cost")`);
}

/** [11] flat vs nested/DECIMAL input through the engine (bench/types.ts); merges its figures under `types`. */
async function typesSection(): Promise<void> {
  out('[11] types: the engine on flat JSON vs nested JSON with DECIMAL amounts, same events, rounds interleaved (issue 29)');
  const json = await runTypesSection({ events: num('types-events', 300_000), files: 40, keys: 10_000, rounds: num('types-rounds', 3), out });
  if (process.argv.includes('--no-json')) return;
  mergeResults('types', json);
  out('  types figures written to bench/results.json (key "types")');
}

/** [12] the aggregation plain vs behind selectExpr + filter and withColumn + filter (bench/expr.ts); merges its figures under `expr`. */
async function exprSection(): Promise<void> {
  out(
    '[12] expr: the aggregation plain vs preceded by selectExpr + filter and by withColumn + filter (Spark SQL expressions), same events, rounds interleaved (issue 30)',
  );
  const json = await runExprSection({ events: num('expr-events', 300_000), files: 40, keys: 10_000, rounds: num('expr-rounds', 5), out });
  if (process.argv.includes('--no-json')) return;
  mergeResults('expr', json);
  out('  expr figures written to bench/results.json (key "expr")');
}

/** [13] the engine beside DuckDB on the same files (bench/peer.ts); merges its figures under `peer`. */
async function peerSection(): Promise<void> {
  out('[13] peer: the engine beside DuckDB (1 and 2 threads) on the same files, rounds interleaved (issue 31)');
  const json = await runPeerSection({
    ...ENGINE_INPUT,
    rounds: num('peer-rounds', 5),
    warmup: num('peer-warmup', 1),
    cpuProfile: arg('peer-cpu-prof'),
    maxFilesPerTrigger: MAX_FILES,
    out,
    fmtRate,
  });
  if (process.argv.includes('--no-json')) return;
  mergeResults('peer', json);
  out('  peer figures written to bench/results.json (key "peer")');
}

/** [10] the discovery bench; merges its figures into bench/results.json under `discovery`. */
async function discoverySection(): Promise<void> {
  const sizes = (arg('discovery-sizes') ?? '5000,10000,100000,1000000').split(',').map(Number);
  out('[10] discovery: LISTs, checkpoint requests and seconds spent finding new files, by prefix size (issue 28)');
  const json = await runDiscoverySection(sizes, out);
  for (const [n, usd] of Object.entries(json.steadyUsdPerMonth))
    out(`  ${Number(n).toLocaleString('en-US')} objects: $${usd.toFixed(4)} a month of finding files (3 empty runs and the backfill an hour)`);
  if (process.argv.includes('--no-json')) return;
  mergeResults('discovery', json);
  out('  discovery figures written to bench/results.json (key "discovery")');
}

async function main(): Promise<void> {
  const started = Date.now();
  // cost, join and scale alone: no input of the default sections generated
  if ([...only].every((s) => s === 'cost' || s === 'join' || s === 'scale' || s === 'discovery' || s === 'types' || s === 'expr' || s === 'peer')) {
    out(`sluice bench: node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load()}`);
    if (only.has('join')) await joinSection();
    if (only.has('scale')) await scaleSection();
    if (only.has('cost')) await costSection();
    if (only.has('discovery')) await discoverySection();
    if (only.has('types')) await typesSection();
    if (only.has('expr')) await exprSection();
    if (only.has('peer')) await peerSection();
    out(`  total ${Math.round((Date.now() - started) / 1000)} s; load average now ${load()}`);
    return;
  }
  const sampler = new MemorySampler().start(50);
  out(`sluice bench: node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load()}`);
  // 1-2. the parse floor and the engine, interleaved round by round, in a child that generates
  // the input itself: first, while this process is still idle (its own input and the expected
  // counts would otherwise be built, and their garbage collected, as the child measures).
  let engine: ReturnType<typeof spawnEngineChild> = null;
  if (only.has('engine')) {
    out(
      `[1-2] the parse floor and the engine alone, in a process of their own (the input below, generated there too); ${ROUNDS} interleaved rounds, best time per batch`,
    );
    engine = spawnEngineChild();
  }
  const tg = performance.now();
  const input = generateEvents({ events: EVENTS, keys: KEYS, files: FILES, spanMinutes: SPAN_MINUTES });
  out(
    `input: ${input.events} events, ${(input.bytes / input.events).toFixed(0)} bytes/event (${MB(input.bytes)}), ${KEYS} users, ${SPAN_MINUTES} min of event time, ` +
      `${FILES} files, maxFilesPerTrigger ${MAX_FILES} (generated in ${((performance.now() - tg) / 1000).toFixed(1)} s)`,
  );
  out(`query: schema "${BENCH_SCHEMA}"; ${QUERY_TEXT}`);
  out();

  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    cores: cpus().length,
    loadAverageAtStart: loadavg()[0],
    input: {
      events: input.events,
      bytesPerEvent: Math.round(input.bytes / input.events),
      users: KEYS,
      files: FILES,
      maxFilesPerTrigger: MAX_FILES,
      spanMinutes: SPAN_MINUTES,
    },
  };
  const summary: Array<[string, string, string, string]> = [];
  const rssMarks: string[] = [`after generating the input ${MB(peakRssBytes())}`];

  let expected: ExpectedBatch[] | null = null;
  if (only.has('e2e')) expected = expectedBatches(input.files, MAX_FILES, WINDOW_MS, WATERMARK_DELAY_MS);
  if (engine) {
    results.raw = engine.raw;
    results.engine = { ...engine.engine, processPeakRss: engine.peakRss };
    summary.push(...engine.summary);
  }

  // 3-5. end to end ---------------------------------------------------------------------------
  if (only.has('e2e')) {
    const files = E2E_EVENTS >= input.events ? input.files : input.files.slice(0, Math.max(1, Math.round((E2E_EVENTS / input.events) * FILES)));
    out(`[3] end to end on the local stack (DynamoDB Local + s3rver), ${files.length} files, time budget ${E2E_BUDGET_MS / 1000} s`);
    let e2e: E2eResult | null = null;
    try {
      e2e = await runE2e(benchPlan(MAX_FILES), files, { budgetMs: E2E_BUDGET_MS, log: out });
    } catch (e) {
      out(`  end to end failed: ${(e as Error).stack ?? e}`);
    }
    if (e2e) {
      const rowsDone = e2e.report.rowsIn;
      const e2eRate = rate(rowsDone, e2e.seconds);
      const partial = e2e.report.stoppedBy !== 'done' || e2e.events < input.events;
      const slice = `${rowsDone} of ${input.events} events${e2e.report.stoppedBy !== 'done' ? `, stopped by the ${E2E_BUDGET_MS / 1000} s budget with ${e2e.report.backlogLeft} files left` : ''}`;
      out(`  ${fmtRate(e2eRate)} over ${slice} (${e2e.seconds.toFixed(1)} s, ${e2e.report.batches.length} batches)`);
      out(
        `  DynamoDB had requests in flight ${e2e.busySeconds.dynamodb.toFixed(0)} s of the ${e2e.seconds.toFixed(0)} s, S3 ${e2e.busySeconds.s3.toFixed(0)} s`,
      );
      out();
      out('[4] requests per batch (every SDK request, lease included) and state item writes');
      const rows = e2e.intervals.map((iv) => {
        const b = e2e!.report.batches.find((x) => String(x.batchId) === iv.label);
        const e = b ? expected![b.batchId] : undefined;
        const ddb = sumService(iv.requests, 'dynamodb');
        const s3 = sumService(iv.requests, 's3');
        // The state store moves one head item per commit besides the pages and manifest it writes.
        const keyWrites = b && iv.stateItemWrites > 0 ? iv.stateItemWrites - 1 : iv.stateItemWrites;
        return [
          b ? `${iv.label}${b.noData ? ' (no data)' : ''}` : iv.label,
          b?.numInputRows ?? '',
          e?.touched ?? '',
          b ? `${keyWrites}+1` : iv.stateItemWrites || '',
          b ? (e && keyWrites <= e.touched ? 'ok' : 'MISS') : '',
          ddb,
          s3,
          b?.durationMs ?? '',
          describeCounts(iv.requests, 'dynamodb'),
          describeCounts(iv.requests, 's3'),
        ];
      });
      out(table(['batch', 'rows', 'touched', 'item writes', '<= touched', 'DDB', 'S3', 'ms', 'DynamoDB requests', 'S3 requests'], rows, 'lrrrrrrrll'));
      out(
        '  item writes = the packed pages and manifests (a page holds many groups) + the head item each commit moves; touched = distinct (window, user) pairs of the rows ∪ those evicted',
      );
      const dataBatches = e2e.report.batches.filter((b) => !b.noData);
      const perBatch = (svc: string) =>
        dataBatches.length
          ? e2e!.intervals.filter((iv) => dataBatches.some((b) => String(b.batchId) === iv.label)).reduce((n, iv) => n + sumService(iv.requests, svc), 0) /
            dataBatches.length
          : 0;
      out(
        `  per data batch: ${perBatch('dynamodb').toFixed(0)} DynamoDB and ${perBatch('s3').toFixed(0)} S3 requests for ~${Math.round(dataBatches.reduce((n, b) => n + b.numInputRows, 0) / Math.max(1, dataBatches.length))} rows`,
      );
      out();
      out(
        `[5] empty scheduled run (nothing new${e2e.emptyRun.onSamePipeline ? ' since the run above' : ', on a small pipeline of its own: the big run did not finish'})`,
      );
      out(
        `  ${e2e.emptyRun.total} AWS requests, ${e2e.emptyRun.batches} batches: DynamoDB [${describeCounts(e2e.emptyRun.requests, 'dynamodb')}], S3 [${describeCounts(e2e.emptyRun.requests, 's3')}]`,
      );
      out();
      const writesOk = e2e.report.batches.every((b) => {
        const iv = e2e!.intervals.find((x) => x.label === String(b.batchId));
        const w = iv ? Math.max(0, iv.stateItemWrites - 1) : 0;
        return w <= (expected![b.batchId]?.touched ?? -1);
      });
      results.e2e = {
        eventsPerSecond: Math.round(e2eRate),
        events: rowsDone,
        ofEvents: input.events,
        stoppedBy: e2e.report.stoppedBy,
        seconds: Number(e2e.seconds.toFixed(1)),
        uploadSeconds: Number(e2e.uploadSeconds.toFixed(1)),
        busySeconds: { dynamodb: Number(e2e.busySeconds.dynamodb.toFixed(1)), s3: Number(e2e.busySeconds.s3.toFixed(1)) },
        batches: e2e.intervals.map((iv) => ({
          batch: iv.label,
          dynamodb: sumService(iv.requests, 'dynamodb'),
          s3: sumService(iv.requests, 's3'),
          stateItemWrites: iv.stateItemWrites,
          touched: expected![Number(iv.label)]?.touched,
        })),
        emptyRun: { requests: e2e.emptyRun.total, byCommand: e2e.emptyRun.requests },
      };
      summary.push([partial ? `end to end, local stack (${rowsDone} events)` : 'end to end, local stack', fmtRate(e2eRate), '(DynamoDB Local + s3rver)', '']);
      summary.push(['requests per data batch', `DDB ${perBatch('dynamodb').toFixed(0)}, S3 ${perBatch('s3').toFixed(0)}`, '', '']);
      summary.push([
        'DynamoDB state writes per batch',
        writesOk ? 'all <= pairs touched' : 'some > pairs touched',
        '<= distinct pairs touched',
        writesOk ? 'ok' : 'MISS',
      ]);
      summary.push([
        'empty scheduled run',
        `${e2e.emptyRun.total} AWS requests`,
        `<= ${TARGET_EMPTY_REQUESTS}`,
        e2e.emptyRun.total <= TARGET_EMPTY_REQUESTS ? 'ok' : 'MISS',
      ]);
    }
  }

  if (only.has('e2e')) rssMarks.push(`after [3-5] ${MB(peakRssBytes())}`);

  // 6. memory ---------------------------------------------------------------------------------
  if (only.has('memory')) {
    out(
      `[6] peak RSS of the engine alone, a fresh process each: the benchmark's backlog, then 1x and ${SCALE}x a backlog of ${MEMORY_EVENTS} events, ` +
        `maxFilesPerTrigger ${MAX_FILES} throughout. Files are generated as they are read (as S3 would serve them), state is in ` +
        "lib/engine/testing/memory-state.ts's InMemoryStateStore (live keys, and deletions until no read can see them, as DynamoDB would hold them), the sink keeps counts.",
    );
    const mb = spawnMemoryChild(1, EVENTS);
    const m1 = spawnMemoryChild(1, MEMORY_EVENTS);
    const mN = spawnMemoryChild(SCALE, MEMORY_EVENTS);
    const mLive = spawnMemoryChild(SCALE, MEMORY_EVENTS, 10);
    out(
      table(
        [
          'backlog',
          'events',
          'input',
          'batches',
          'state items',
          'baseline RSS',
          'peak RSS',
          'live heap after run',
          'rows held by report',
          'median batch',
          'time',
        ],
        [mb, m1, mN].map((m, i) => [
          i === 0 ? 'benchmark' : `${m.scale}x`,
          m.events,
          MB(m.backlogBytes),
          m.batches,
          m.stateItems,
          MB(m.baselineRss),
          MB(m.peakRss),
          MB(m.liveHeapAfterRun),
          m.rowsHeldByReport,
          `${m.medianBatchMs} ms`,
          `${m.seconds.toFixed(0)} s`,
        ]),
      ),
    );
    const ratio = m1.peakRss && mN.peakRss ? mN.peakRss / m1.peakRss : null;
    const live = m1.liveHeapAfterRun && mN.liveHeapAfterRun ? mN.liveHeapAfterRun / m1.liveHeapAfterRun : null;
    const hw = mN.peakAfterBatch;
    const lv = mLive.liveAfterBatch;
    const mid = lv[Math.floor((lv.length - 1) / 2)];
    const end = lv[lv.length - 1];
    const plateau = mid && end ? end[1] / mid[1] : null;
    const every = <T>(xs: Array<[number, T]>) =>
      xs.filter(([b], i) => i === 0 || i === xs.length - 1 || b % Math.max(10, Math.round(xs.length / 5) * 10) === 0);
    out(
      `  ${SCALE}x live heap as the run goes (a second run, with a full GC every 10 batches): ${every(lv)
        .map(([b, v]) => `batch ${b} ${MB(v)}`)
        .join(', ')}`,
    );
    out(
      `  ${SCALE}x RSS high-water mark as the run goes: ${every(hw)
        .map(([b, v]) => `batch ${b} ${MB(v)}`)
        .join(', ')}`,
    );
    out(
      `  ${SCALE}x / 1x: peak RSS ${ratio?.toFixed(2) ?? 'n/a'}, live heap after run ${live?.toFixed(2) ?? 'n/a'}; ${SCALE}x live heap end / half-way ${plateau?.toFixed(2) ?? 'n/a'}`,
    );
    out('  live heap: heapUsed after a full GC (at the end of each run, the RunReport still referenced); rows held by report: RunReport.batches[].rows');
    out(
      `  bounded means: live heap after run within ${BOUNDED_FACTOR}x of the 1x run's, and the ${SCALE}x live heap flat over the second half (<= ${PLATEAU_FACTOR}x)`,
    );
    out(
      "  (RSS follows V8's sizing of its heap: it climbs while garbage waits for a full collection and falls after one, and its high-water mark is the highest of those",
    );
    out('  peaks so far, so it is printed, not judged; the 1x/10x peak ratio also overstates growth, the 1x run being too short for V8 to settle)');
    out();
    const bounded = live !== null && live <= BOUNDED_FACTOR && plateau !== null && plateau <= PLATEAU_FACTOR;
    results.memory = {
      benchmarkPeakRss: mb.peakRss,
      events1x: m1.events,
      peakRss: [m1.peakRss, mN.peakRss],
      liveHeapAfterRun: [m1.liveHeapAfterRun, mN.liveHeapAfterRun],
      rowsHeldByReport: [m1.rowsHeldByReport, mN.rowsHeldByReport],
      highWaterMarkByBatch: hw.map(([b, v]) => [b, v && Math.round(v / 2 ** 20)]),
      liveHeapByBatch: lv.map(([b, v]) => [b, Math.round(v / 2 ** 20)]),
      medianBatchMs: [m1.medianBatchMs, mN.medianBatchMs],
      bounded,
    };
    // A stateless batch far larger than one chunk: held by the executor (a sink with addBatch only, as
    // every stateless batch was before streaming) vs streamed to a sink with addBatchChunks.
    out(
      `  stateless: one batch of ${MEMORY_EVENTS} events (select of 4 columns, every file in one batch), a fresh process each; the sink runs a full GC at its 1st, 11th, 21st... delivery and notes the heap in use`,
    );
    const stateless = (['held', 'streamed'] as const).map((m) => spawnStatelessMemoryChild(m, MEMORY_EVENTS));
    out(
      table(
        ['stateless batch', 'events', 'input', 'rows out', 'sink deliveries', 'largest delivery', 'peak live heap (over baseline)', 'peak RSS', 'time'],
        stateless.map((m) => [
          m.mode === 'held' ? 'held (addBatch: before)' : 'streamed (addBatchChunks: after)',
          m.events,
          MB(m.inputBytes),
          m.rowsOut,
          m.deliveries,
          m.largestDelivery,
          `${MB(m.peakLiveHeap)} (+${MB(m.peakLiveHeap - m.baselineHeap)})`,
          MB(m.peakRss),
          `${m.seconds.toFixed(1)} s`,
        ]),
      ),
    );
    out();
    const [held, streamed] = stateless;
    results.memoryStateless = {
      events: MEMORY_EVENTS,
      peakLiveHeapOverBaseline: { held: held.peakLiveHeap - held.baselineHeap, streamed: streamed.peakLiveHeap - streamed.baselineHeap },
      peakRss: { held: held.peakRss, streamed: streamed.peakRss },
      largestDelivery: { held: held.largestDelivery, streamed: streamed.largestDelivery },
    };
    summary.push([
      `stateless batch of ${MEMORY_EVENTS} events, peak live heap`,
      `held +${MB(held.peakLiveHeap - held.baselineHeap)}, streamed +${MB(streamed.peakLiveHeap - streamed.baselineHeap)}`,
      'follows a chunk, not the batch',
      streamed.largestDelivery < held.largestDelivery && streamed.peakLiveHeap < held.peakLiveHeap ? 'ok' : 'MISS',
    ]);
    summary.push([`peak RSS, engine alone, ${EVENTS} events`, MB(mb.peakRss), '', '']);
    summary.push([
      `memory, 1x / ${SCALE}x a ${MEMORY_EVENTS}-event backlog`,
      `peak ${MB(m1.peakRss)} / ${MB(mN.peakRss)}, live ${MB(m1.liveHeapAfterRun)} / ${MB(mN.liveHeapAfterRun)}`,
      'bounded by the batch, not the backlog',
      bounded ? 'ok' : 'MISS',
    ]);
  }

  sampler.stop();
  const mainPeak = peakRssBytes() ?? sampler.maxRss;
  results.mainProcessPeakRss = mainPeak;
  results.totalSeconds = Math.round((Date.now() - started) / 1000);
  out('summary');
  out(table(['figure', 'value', 'target', ''], summary, 'llll'));
  out(`  this process (the harness: the generated input, s3rver): peak RSS ${MB(mainPeak)}; high-water mark ${rssMarks.join(', ')}`);
  out(`  total ${results.totalSeconds} s; load average now ${load()}`);
  if (arg('no-json') === undefined && !process.argv.includes('--no-json') && ALL_SECTIONS) {
    const file = join(process.cwd(), 'bench', 'results.json'); // build-and-run.js runs from the repo root
    // The cost and join sections' figures (runs of their own, `--only cost`, `--only join`) stay.
    if (existsSync(file)) {
      const before = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      for (const key of ['cost', 'join', 'scale', 'discovery', 'types', 'expr', 'peer'])
        if (before[key] !== undefined && results[key] === undefined) results[key] = before[key];
    }
    // One line per figure: small, and diffs stay readable.
    writeFileSync(
      file,
      `{\n${Object.entries(results)
        .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
        .join(',\n')}\n}\n`,
    );
    out(`  figures written to bench/results.json`);
  }
  if (only.has('join')) await joinSection();
  if (only.has('scale')) await scaleSection();
  if (only.has('types')) await typesSection();
  if (only.has('expr')) await exprSection();
  if (only.has('peer')) await peerSection();
  if (only.has('cost')) await costSection();
}

if (arg('child') === 'engine') {
  engineChild().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
} else if (arg('child') === 'memory-stateless') {
  statelessMemoryChild(arg('mode') === 'held' ? 'held' : 'streamed', num('memory-events', MEMORY_EVENTS)).catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
} else if (arg('child') === 'memory') {
  memoryChild(num('scale', 1), num('memory-events', EVENTS), num('live-every', 0)).catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
