/**
 * [12] peer (issue 31): the engine beside DuckDB on the same input in one process, rounds
 * interleaved. The bench's input (bench/generate.ts) is written to files on local disk; the engine
 * runs its windowed aggregation (bench/query.ts: 10-minute windows by user, sum of the amount,
 * count) on the in-memory file source and the bench's plain ports (bench/engine-run.ts), as the
 * engine section does, and DuckDB (`@duckdb/node-api`) reads the same files with `read_json` and
 * aggregates them with `time_bucket` and `GROUP BY`, on one thread and then on two. Each round runs
 * the engine, DuckDB on 1 thread and DuckDB on 2 threads in that order, after warm-up rounds that
 * are not counted (the engine's first passes run before V8 has compiled its hot paths and sized its
 * heap); the median of the rounds is each side's figure. Each engine pass is followed by a full
 * collection and a pause for V8's threads to finish sweeping, counted in its CPU seconds (as
 * bench/ab-engine.ts counts the collection), so that they do not collect its garbage during the
 * next pass, in that pass's CPU seconds (DuckDB's).
 *
 * With `--peer-cpu-prof FILE`, three more passes of the engine alone run under V8's sampling
 * profiler (after the timed rounds, so the figures are not profiled): the profile goes to FILE (open
 * it in Chrome DevTools) and the functions with the most self time are printed.
 *
 * Both sides must do the same work: the groups each finds, the events they count and the sum of
 * the amounts are compared after every pass, and a difference fails the section. The engine's
 * groups are the rows it emitted (append mode: a window closed by the watermark) and those still
 * open in its state when the run ends; DuckDB's are the rows of its GROUP BY.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg, tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { OperatorStateSpec, OutputRow, Sink, StateChange } from '../lib/engine/ports';
import { runEngine } from './engine-run';
import { generateEvents } from './generate';
import { PlainStateStore } from './plain-ports';
import { benchPlan } from './query';
import { DEFAULT_MAX_BYTES_PER_TRIGGER } from '../lib/aws/s3/landing-source';

/** What one side found: the number of (window, user) groups, the events they count and the sum of their amounts. */
export interface PeerTotals {
  readonly groups: number;
  readonly events: number;
  readonly total: number;
}

export interface PeerFigures {
  readonly date: string;
  readonly events: number;
  readonly files: number;
  readonly rounds: number;
  /** Rounds run first and not counted. */
  readonly warmup: number;
  readonly engineEventsPerSecond: number;
  /**
   * The engine under the S3 landing source's default limits (maxBytesPerTrigger 128 MiB: the
   * 192 MiB input in two data batches) rather than the bench's 10 files a batch (ten batches): what
   * a run over the same backlog does unless a limit is set, and closer to DuckDB's one pass.
   */
  readonly engineDefaultLimitsEventsPerSecond: number;
  readonly ratioDefaultLimits: number;
  readonly duckdbEventsPerSecond: number;
  readonly duckdbTwoThreadsEventsPerSecond: number;
  /** The engine over DuckDB on one thread. */
  readonly ratio: number;
  readonly ratioTwoThreads: number;
  /** Seconds of each pass, by round. */
  readonly seconds: { engine: number[]; engineDefaultLimits: number[]; duckdb: number[]; duckdbTwoThreads: number[] };
  /**
   * CPU seconds of the process during each pass (the engine's include V8's GC threads; DuckDB's its
   * worker threads), by round: less moved by other load on the machine than wall time.
   */
  readonly cpuSeconds: { engine: number[]; engineDefaultLimits: number[]; duckdb: number[] };
  /** Events per CPU second, engine over DuckDB on one thread (medians of the rounds). */
  readonly cpuRatio: number;
  /** The same for the engine at the S3 source's default limits. */
  readonly cpuRatioDefaultLimits: number;
  /**
   * Seconds each engine pass (10 files a batch) spent in the bench's plain state store's commits,
   * by round: the store is the bench's, not the engine's, and DuckDB keeps no state.
   */
  readonly storeSeconds: number[];
  /** The engine over DuckDB on one thread by wall time with the store's commits taken out of the engine's seconds. */
  readonly ratioWithoutStore: number;
  readonly totals: PeerTotals;
  /** os.loadavg() (1, 5 and 15 minutes) at the start and at the end of the section. */
  readonly loadAverage: { start: number[]; end: number[] };
}

/** The median (the mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of nothing');
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Why two sides' totals are not the same work ([] when they are): groups and events must be equal,
 * the sums of the amounts (doubles added in different orders) equal to 1e-9 of their size.
 */
export function sameWork(engine: PeerTotals, duckdb: PeerTotals, label = 'duckdb'): string[] {
  const problems: string[] = [];
  if (engine.groups !== duckdb.groups) problems.push(`groups: engine ${engine.groups}, ${label} ${duckdb.groups}`);
  if (engine.events !== duckdb.events) problems.push(`events: engine ${engine.events}, ${label} ${duckdb.events}`);
  if (!(Math.abs(engine.total - duckdb.total) <= 1e-9 * Math.max(1, Math.abs(duckdb.total))))
    problems.push(`sum of amounts: engine ${engine.total}, ${label} ${duckdb.total}`);
  return problems;
}

/** A sink that keeps the count and sums of the rows it is handed (the engine's emitted groups). */
class SummingSink implements Sink {
  readonly description = 'sum://peer';
  groups = 0;
  events = 0;
  total = 0;
  async addBatch(_batchId: number, rows: OutputRow[]) {
    for (const r of rows) {
      this.groups++;
      this.events += r.events as number;
      this.total += (r.total as number | null) ?? 0;
    }
  }
}

/**
 * The plain state store, noting the operator and version of the last commit so the groups left
 * open can be read back, and the seconds its commits took (the store is the bench's, not the engine's).
 */
class PeerStateStore extends PlainStateStore {
  last: { op: OperatorStateSpec; version: number } | null = null;
  commitSeconds = 0;
  override async commit(op: OperatorStateSpec, version: number, changes: StateChange[]) {
    this.last = { op, version };
    const t0 = performance.now();
    try {
      return await super.commit(op, version, changes);
    } finally {
      this.commitSeconds += (performance.now() - t0) / 1000;
    }
  }
}

/**
 * The engine's query over `files`, in batches of `maxFilesPerTrigger` files, or (a string) under
 * the S3 landing source's default limit of bytes per batch; its totals: the groups it emitted and
 * those open in its state at the end.
 */
export async function enginePass(
  files: ReadonlyArray<{ readonly key: string; readonly body: string }>,
  limit: number | 'default',
): Promise<{ seconds: number; storeSeconds: number; batches: number; totals: PeerTotals }> {
  const sink = new SummingSink();
  const state = new PeerStateStore();
  const plan = limit === 'default' ? benchPlan(undefined, undefined, undefined, DEFAULT_MAX_BYTES_PER_TRIGGER) : benchPlan(limit);
  const run = await runEngine(files, { maxFilesPerTrigger: limit === 'default' ? 0 : limit, sink, state, plan });
  let { groups, events, total } = sink;
  if (state.last !== null) {
    for (const e of await state.all(state.last.op, state.last.version)) {
      // The aggregation's stored value: {k: grouping values, b: [sum buffer, count buffer]} (lib/engine/operators/aggregate.ts)
      const b = (e.value as { b?: unknown[] }).b;
      if (!Array.isArray(b) || (b[0] !== null && typeof b[0] !== 'number') || typeof b[1] !== 'number')
        throw new Error(`peer: an open group's state is not [sum, count]: ${JSON.stringify(e.value)}`);
      groups++;
      total += (b[0] as number | null) ?? 0;
      events += b[1] as number;
    }
  }
  return { seconds: run.seconds, storeSeconds: state.commitSeconds, batches: run.report.batches.length, totals: { groups, events, total } };
}

/** The bench's query in DuckDB's SQL over the JSON-lines files under `dir`: the groups, their events and the sum of their amounts. */
export function duckdbSql(dir: string): string {
  const glob = join(dir, '*.json').replaceAll("'", "''");
  return `SELECT count(*) AS groups, sum(events)::BIGINT AS events, sum(total) AS total FROM (
  SELECT time_bucket(INTERVAL '10 minutes', event_time) AS w, "user", sum(amount) AS total, count(*) AS events
  FROM read_json('${glob}', format = 'newline_delimited',
    columns = {user: 'VARCHAR', event_time: 'TIMESTAMP', amount: 'DOUBLE', country: 'VARCHAR', device: 'VARCHAR', session_id: 'VARCHAR', page: 'VARCHAR'})
  GROUP BY w, "user")`;
}

/** Opens DuckDB in memory; `pass(threads)` runs the query on that many threads. */
export async function openDuckdb(dir: string) {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const sql = duckdbSql(dir);
  return {
    async pass(threads: number): Promise<{ seconds: number; totals: PeerTotals }> {
      await conn.run(`SET threads = ${threads}`);
      const t0 = performance.now();
      const reader = await conn.runAndReadAll(sql);
      const seconds = (performance.now() - t0) / 1000;
      const [groups, events, total] = reader.getRowsJS()[0] as [bigint, bigint, number];
      return { seconds, totals: { groups: Number(groups), events: Number(events), total } };
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * V8's full collection: global gc() under node --expose-gc, else exposed now through V8's flags (a
 * no-op where that is refused).
 */
function fullGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed !== undefined) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return () => {};
  }
}

/** Writes the input's files under a new directory in the system's temporary directory. */
export function writeInput(files: ReadonlyArray<{ readonly key: string; readonly body: string }>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-peer-'));
  for (const f of files) writeFileSync(join(dir, f.key.replaceAll('/', '_')), `${f.body}\n`);
  return dir;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The functions with the most self time in a V8 CPU profile: [name, share of the samples]. */
export function selfTimes(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }, top: number): Array<[string, number]> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const f = byId.get(profile.samples[i])?.callFrame;
    const name = f === undefined ? '?' : f.functionName !== '' ? f.functionName : f.url === '' ? '(native)' : '(anonymous)';
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(name, (self.get(name) ?? 0) + dt);
    total += dt;
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, t]) => [name, total > 0 ? t / total : 0]);
}

/** Three passes of the engine alone under V8's sampling profiler: the profile to `file`, the top functions printed. */
async function profileEngine(
  files: ReadonlyArray<{ readonly key: string; readonly body: string }>,
  maxFilesPerTrigger: number,
  file: string,
  out: (line?: string) => void,
) {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res as T))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  for (let i = 0; i < 3; i++) await enginePass(files, maxFilesPerTrigger);
  const { profile } = await post<{ profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } }>('Profiler.stop');
  session.disconnect();
  writeFileSync(file, JSON.stringify(profile));
  out(`  CPU profile of 3 engine passes written to ${file}; self time by function:`);
  for (const [name, share] of selfTimes(profile, 15))
    out(`    ${(share * 100).toFixed(1).padStart(5)}%  ${name.length > 100 ? `${name.slice(0, 100)}...` : name}`);
}

export async function runPeerSection(opts: {
  events: number;
  keys: number;
  files: number;
  maxFilesPerTrigger: number;
  spanMinutes: number;
  rounds: number;
  warmup: number;
  cpuProfile?: string;
  out: (line?: string) => void;
  fmtRate: (r: number) => string;
}): Promise<PeerFigures> {
  const { out, fmtRate } = opts;
  const loadStart = loadavg();
  const input = generateEvents({ events: opts.events, keys: opts.keys, files: opts.files, spanMinutes: opts.spanMinutes });
  const dir = writeInput(input.files);
  const duck = await openDuckdb(dir);
  const gc = fullGc();
  /** Idle while V8's threads finish sweeping after a full collection (no CPU of the main thread). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  const collect = async () => {
    gc();
    await settle();
  };
  const seconds = { engine: [] as number[], engineDefaultLimits: [] as number[], duckdb: [] as number[], duckdbTwoThreads: [] as number[] };
  const cpuSeconds = { engine: [] as number[], engineDefaultLimits: [] as number[], duckdb: [] as number[] };
  const storeSeconds: number[] = [];
  const cpu = <T>(f: () => Promise<T>) => {
    const c0 = process.cpuUsage();
    return f().then((v) => {
      const c = process.cpuUsage(c0);
      return { v, cpu: (c.user + c.system) / 1e6 };
    });
  };
  let totals: PeerTotals | null = null;
  try {
    out(
      `  ${input.events} events (${(input.bytes / input.events).toFixed(0)} bytes each) in ${input.files.length} files under ${dir}; the engine reads them from memory, DuckDB from the files`,
    );
    out(`  DuckDB: ${duckdbSql('<dir>').replace(/\s+/g, ' ')}`);
    for (let r = -opts.warmup; r < opts.rounds; r++) {
      // An engine pass's CPU time includes a full collection right after it (as bench/ab-engine.ts
      // counts it) and the sweeping V8's threads do after that (settle): its garbage is its own,
      // not collected during the next pass, in that pass's CPU seconds (DuckDB's).
      gc();
      await settle();
      const { v: e, cpu: engineCpu } = await cpu(() => enginePass(input.files, opts.maxFilesPerTrigger).finally(collect));
      const { v: ed, cpu: engineDefaultCpu } = await cpu(() => enginePass(input.files, 'default').finally(collect));
      const { v: d1, cpu: duckCpu } = await cpu(() => duck.pass(1));
      const d2 = await duck.pass(2);
      const problems = [
        ...sameWork(e.totals, d1.totals, 'duckdb (1 thread)'),
        ...sameWork(e.totals, d2.totals, 'duckdb (2 threads)'),
        ...sameWork(ed.totals, d1.totals, 'duckdb (1 thread), against the engine at default limits'),
      ];
      if (problems.length > 0) throw new Error(`peer: the engine and DuckDB did not do the same work (round ${r + 1}): ${problems.join('; ')}`);
      totals = e.totals;
      const times = `engine ${e.seconds.toFixed(2)} s (cpu ${engineCpu.toFixed(2)} s; ${e.batches} batches; store commits ${e.storeSeconds.toFixed(2)} s), at default limits ${ed.seconds.toFixed(2)} s (cpu ${engineDefaultCpu.toFixed(2)} s; ${ed.batches} batches), DuckDB 1 thread ${d1.seconds.toFixed(2)} s (cpu ${duckCpu.toFixed(2)} s), 2 threads ${d2.seconds.toFixed(2)} s; load average ${loadavg()[0].toFixed(1)}`;
      if (r < 0) {
        out(`  warm-up ${r + opts.warmup + 1} (not counted): ${times}`);
        continue;
      }
      seconds.engine.push(e.seconds);
      storeSeconds.push(e.storeSeconds);
      seconds.engineDefaultLimits.push(ed.seconds);
      seconds.duckdb.push(d1.seconds);
      seconds.duckdbTwoThreads.push(d2.seconds);
      cpuSeconds.engine.push(engineCpu);
      cpuSeconds.engineDefaultLimits.push(engineDefaultCpu);
      cpuSeconds.duckdb.push(duckCpu);
      out(`  round ${r + 1}: ${times}`);
    }
    if (opts.cpuProfile !== undefined) await profileEngine(input.files, opts.maxFilesPerTrigger, opts.cpuProfile, out);
  } finally {
    duck.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const rate = (xs: number[]) => input.events / median(xs);
  const engine = rate(seconds.engine);
  const engineWithoutStore = rate(seconds.engine.map((x, i) => x - storeSeconds[i]));
  const engineDefault = rate(seconds.engineDefaultLimits);
  const d1 = rate(seconds.duckdb);
  const d2 = rate(seconds.duckdbTwoThreads);
  const loadEnd = loadavg();
  const figures: PeerFigures = {
    date: new Date().toISOString(),
    events: input.events,
    files: input.files.length,
    rounds: opts.rounds,
    warmup: opts.warmup,
    engineEventsPerSecond: Math.round(engine),
    engineDefaultLimitsEventsPerSecond: Math.round(engineDefault),
    ratioDefaultLimits: Number((engineDefault / d1).toFixed(3)),
    duckdbEventsPerSecond: Math.round(d1),
    duckdbTwoThreadsEventsPerSecond: Math.round(d2),
    ratio: Number((engine / d1).toFixed(3)),
    ratioTwoThreads: Number((engine / d2).toFixed(3)),
    seconds: {
      engine: seconds.engine.map((x) => Number(x.toFixed(3))),
      engineDefaultLimits: seconds.engineDefaultLimits.map((x) => Number(x.toFixed(3))),
      duckdb: seconds.duckdb.map((x) => Number(x.toFixed(3))),
      duckdbTwoThreads: seconds.duckdbTwoThreads.map((x) => Number(x.toFixed(3))),
    },
    cpuSeconds: {
      engine: cpuSeconds.engine.map((x) => Number(x.toFixed(3))),
      engineDefaultLimits: cpuSeconds.engineDefaultLimits.map((x) => Number(x.toFixed(3))),
      duckdb: cpuSeconds.duckdb.map((x) => Number(x.toFixed(3))),
    },
    cpuRatio: Number((median(cpuSeconds.duckdb) / median(cpuSeconds.engine)).toFixed(3)),
    cpuRatioDefaultLimits: Number((median(cpuSeconds.duckdb) / median(cpuSeconds.engineDefaultLimits)).toFixed(3)),
    storeSeconds: storeSeconds.map((x) => Number(x.toFixed(3))),
    ratioWithoutStore: Number((engineWithoutStore / d1).toFixed(3)),
    totals: totals!,
    loadAverage: { start: loadStart.map((x) => Number(x.toFixed(2))), end: loadEnd.map((x) => Number(x.toFixed(2))) },
  };
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  out(`  same work on both sides: ${totals!.groups} groups, ${totals!.events} events, amounts summing to ${totals!.total.toFixed(2)}`);
  out(`  engine (in-memory ports), ${opts.maxFilesPerTrigger} files a batch:  ${fmtRate(engine)}`);
  out(
    `  engine at the S3 source's default limits (maxBytesPerTrigger 128 MiB):  ${fmtRate(engineDefault)}   engine / DuckDB = ${figures.ratioDefaultLimits.toFixed(2)}×`,
  );
  out(`  DuckDB, 1 thread:          ${fmtRate(d1)}   engine / DuckDB = ${figures.ratio.toFixed(2)}×`);
  out(`  DuckDB, 2 threads:         ${fmtRate(d2)}   engine / DuckDB = ${figures.ratioTwoThreads.toFixed(2)}×`);
  out(
    `  the engine without the bench's plain store's commits (median ${median(storeSeconds).toFixed(2)} s a pass): ${fmtRate(engineWithoutStore)}   engine / DuckDB = ${figures.ratioWithoutStore.toFixed(2)}×`,
  );
  out(
    `  by CPU time (events per CPU second, medians): engine / DuckDB on 1 thread = ${figures.cpuRatio.toFixed(2)}× (${median(cpuSeconds.engine).toFixed(2)} s against ${median(cpuSeconds.duckdb).toFixed(2)} s); at the default limits ${figures.cpuRatioDefaultLimits.toFixed(2)}× (${median(cpuSeconds.engineDefaultLimits).toFixed(2)} s)`,
  );
  out(
    `  median of ${opts.rounds} interleaved rounds after ${opts.warmup} warm-up; load average ${load(loadStart)} at the start, ${load(loadEnd)} at the end (a shared machine: the figures move with it)`,
  );
  return figures;
}
