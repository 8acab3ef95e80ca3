/**
 * A/B of the bench's engine section: the engine of an OLD tree (a worktree at an older commit)
 * and of this tree, in one process, interleaved round by round on the same generated input.
 *
 *   git worktree add --detach /work/wt-bench-old e7d5da6 && ln -s "$PWD/node_modules" /work/wt-bench-old/node_modules
 *   npx tsx bench/ab-engine.ts --old /work/wt-bench-old [--new DIR] [--rounds 7] [--warmup 1] [--events 1000000] [--out /tmp/sluice-ab]
 *
 * --new defaults to this tree, uncommitted edits included; point it at a clean worktree of a
 * commit (git worktree add --detach /work/wt-bench-new HEAD) to time exactly that commit.
 *   npx tsx bench/ab-engine.ts --old /work/wt-bench-old --cpu-prof new   (one profile of each side instead, see below)
 *
 * The parent (this file, under tsx) bundles with esbuild, as bench/build-and-run.js does:
 *   <out>/old-engine.js  the old tree's bench/engine-run.ts (runEngine with that tree's executor)
 *   <out>/new-engine.js  the --new tree's bench/engine-run.ts (default: this tree's)
 *   <out>/driver.js      this file, whose child mode requires both
 * and runs `node --expose-gc <out>/driver.js --child ...`, so nothing timed goes through tsx.
 *
 * The child generates the bench's input once with this tree's bench/generate.ts (1,000,000 events,
 * 10,000 users, 100 files, 60 minutes: bench/run.ts's engine section), then runs the warm-up
 * rounds and the timed rounds, each round one run of each side, the order swapped every round
 * (old,new / new,old / ...) so that drift of the machine's load falls on both alike. Each run is
 * timed as bench/run.ts times it: a full GC before, runEngine(files, { maxFilesPerTrigger: 10 })
 * with that tree's CountingSink, and the full GC right after counted as part of the run.
 * Printed per round and side: events / (run + GC after) s, and events / CPU s of the process
 * (less hurt by other load on the machine than wall time); then the medians, new / old, and the
 * bench's own figure per side (events / sum of each batch's best time over the rounds + the
 * best time outside the batches). Both sides' outputs are checked equal (batches, rowsIn,
 * rowsOut, late rows, per-batch rows in / out / late, state upserts and deletes per commit) and
 * against bench/pairs.ts's independent count.
 *
 * --cpu-prof old|new|both: after the A/B, one child per side more, run under node --cpu-prof
 * (--cpu-prof-dir <out>/prof/<side>) doing warm-up + rounds runs of that side alone; --no-ab skips
 * the A/B itself.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { arg, ENGINE_INPUT, num } from './args';
import { generateEvents } from './generate';
import { expectedBatches } from './pairs';
import { WATERMARK_DELAY_MS, WINDOW_MS } from './query';

// bench/run.ts's engine section
const { events: EVENTS, keys: KEYS, files: FILES, maxFiles: MAX_FILES, spanMinutes: SPAN_MINUTES, rounds: ROUNDS } = ENGINE_INPUT;
const WARMUP = num('warmup', 1);
const OUT = resolve(arg('out') ?? '/tmp/sluice-ab');

const out = (s = '') => process.stdout.write(`${s}\n`);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const fmt = (r: number) => `${(r / 1e3).toFixed(0)} k ev/s`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// --------------------------------------------------------------------------------------- child

/** What the child needs of an EngineRun (the old and new RunReport types differ outside these fields). */
interface Run {
  seconds: number;
  cpuSeconds: number;
  report: {
    rowsIn: number;
    rowsOut: number;
    droppedByWatermark: number;
    stoppedBy: string;
    batches: Array<{ batchId: number; numInputRows: number; numOutputRows: number; droppedByWatermark: number; noData?: boolean; durationMs: number }>;
  };
  state: { commits: Array<{ version: number; puts: number; deletes: number }> };
}
type RunEngine = (files: ReadonlyArray<{ key: string; body: string }>, opts: { maxFilesPerTrigger: number }) => Promise<Run>;

/** What both sides must agree on. */
const digest = (r: Run) =>
  JSON.stringify({
    batches: r.report.batches.length,
    rowsIn: r.report.rowsIn,
    rowsOut: r.report.rowsOut,
    late: r.report.droppedByWatermark,
    stoppedBy: r.report.stoppedBy,
    perBatch: r.report.batches.map((b) => [b.batchId, b.numInputRows, b.numOutputRows, b.droppedByWatermark, !!b.noData]),
    commits: r.state.commits.map((c) => [c.version, c.puts, c.deletes]),
  });

async function child(): Promise<void> {
  const sides = (arg('sides') ?? 'old,new').split(',') as Array<'old' | 'new'>;
  const engines: Record<string, RunEngine> = {};
  for (const s of sides) engines[s] = require(join(OUT, `${s}-engine.js`)).runEngine as RunEngine;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with node --expose-gc');

  const input = generateEvents({ events: EVENTS, keys: KEYS, files: FILES, spanMinutes: SPAN_MINUTES });
  const expected = expectedBatches(input.files, MAX_FILES, WINDOW_MS, WATERMARK_DELAY_MS);
  out(
    `input: ${input.events} events, ${(input.bytes / 2 ** 20).toFixed(0)} MiB, ${input.files.length} files, maxFilesPerTrigger ${MAX_FILES}; ${WARMUP} warm-up + ${ROUNDS} timed rounds; sides ${sides.join(', ')}; load ${load()}`,
  );

  const rates: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s, []]));
  const cpuRates: Record<string, number[]> = Object.fromEntries(sides.map((s) => [s, []]));
  const best: Record<string, { perBatch: number[]; overhead: number }> = Object.fromEntries(sides.map((s) => [s, { perBatch: [], overhead: Infinity }]));
  const digests: Record<string, string> = {};
  const problems: string[] = [];

  const once = async (side: string, timed: boolean) => {
    gc();
    const run = await engines[side](input.files, { maxFilesPerTrigger: MAX_FILES });
    const g0 = performance.now();
    const c0 = process.cpuUsage();
    gc();
    const after = (performance.now() - g0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = run.cpuSeconds + (c.user + c.system) / 1e6;
    const d = digest(run);
    digests[side] ??= d;
    if (d !== digests[side]) problems.push(`${side}: a run's output differs from its first run's`);
    if (!timed) return null;
    let inBatches = 0;
    const b = best[side];
    run.report.batches.forEach((x, i) => {
      const s = x.durationMs / 1000;
      inBatches += s;
      if (!(b.perBatch[i] <= s)) b.perBatch[i] = s;
    });
    b.overhead = Math.min(b.overhead, Math.max(0, run.seconds - inBatches) + after);
    const rate = input.events / (run.seconds + after);
    rates[side].push(rate);
    cpuRates[side].push(input.events / cpu);
    return { rate, seconds: run.seconds, gc: after, cpu };
  };

  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const timed = r >= WARMUP;
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    const cells: string[] = [];
    for (const side of order) {
      const x = await once(side, timed);
      cells.push(x ? `${side} ${fmt(x.rate)} (${x.seconds.toFixed(2)} s + gc ${(x.gc * 1000).toFixed(0)} ms; cpu ${x.cpu.toFixed(2)} s)` : `${side} warm-up`);
    }
    out(`  ${timed ? `round ${r - WARMUP + 1}` : `warm-up ${r + 1}`}: ${cells.join('  |  ')}  [load ${load()}]`);
  }

  // Agreement: both sides, and each against bench/pairs.ts's count.
  if (sides.length === 2 && digests[sides[0]] !== digests[sides[1]]) problems.push('old and new outputs DIFFER');
  for (const s of sides) {
    const d = JSON.parse(digests[s]) as { perBatch: Array<[number, number, number, number, boolean]> };
    if (d.perBatch.length !== expected.length) problems.push(`${s}: ${d.perBatch.length} batches, expected ${expected.length}`);
    for (const [id, rin, rout, late] of d.perBatch) {
      const e = expected[id];
      if (e && (e.rows !== rin || e.evicted !== rout || e.late !== late))
        problems.push(`${s} batch ${id}: rows/out/late ${rin}/${rout}/${late}, expected ${e.rows}/${e.evicted}/${e.late}`);
    }
  }
  const d0 = JSON.parse(digests[sides[0]]) as { batches: number; rowsIn: number; rowsOut: number; late: number };
  out();
  out(
    `outputs: ${problems.length ? `PROBLEMS: ${problems.slice(0, 6).join('; ')}` : `${sides.length === 2 ? 'old and new agree' : `${sides[0]}'s runs agree`} (${d0.batches} batches, rowsIn ${d0.rowsIn}, rowsOut ${d0.rowsOut}, late ${d0.late}, same per-batch rows and state writes) and match bench/pairs.ts`}`,
  );
  for (const s of sides) {
    const b = best[s];
    const benchFigure = input.events / (b.perBatch.reduce((a, x) => a + x, 0) + b.overhead);
    out(
      `  ${s}: per round ${rates[s].map((x) => (x / 1e3).toFixed(0)).join(', ')} k ev/s; median ${fmt(median(rates[s]))}; bench figure (sum of best per batch) ${fmt(benchFigure)}`,
    );
    out(
      `  ${s} by CPU time (events / process CPU s, GC threads included): per round ${cpuRates[s].map((x) => (x / 1e3).toFixed(0)).join(', ')} k ev/s; median ${fmt(median(cpuRates[s]))}`,
    );
    (best[s] as { figure?: number }).figure = benchFigure;
  }
  if (sides.length === 2) {
    const [o, n] = sides;
    const paired = rates[n].map((x, i) => x / rates[o][i]);
    out(
      `  new / old: median ${(median(rates[n]) / median(rates[o])).toFixed(3)}; median of the per-round ratios ${median(paired).toFixed(3)} ` +
        `(${paired.map((x) => x.toFixed(2)).join(', ')}); bench figure ${((best[n] as { figure?: number }).figure! / (best[o] as { figure?: number }).figure!).toFixed(3)}`,
    );
    const pairedCpu = cpuRates[n].map((x, i) => x / cpuRates[o][i]);
    out(
      `  new / old by CPU time: median ${(median(cpuRates[n]) / median(cpuRates[o])).toFixed(3)}; median of the per-round ratios ${median(pairedCpu).toFixed(3)} (${pairedCpu.map((x) => x.toFixed(2)).join(', ')})`,
    );
    const perBatch = best[o].perBatch.map((x, i) => `${i}:${(x * 1000).toFixed(0)}/${(best[n].perBatch[i] * 1000).toFixed(0)}`);
    out(`  best ms per batch old/new: ${perBatch.join(' ')}; outside batches ${(best[o].overhead * 1000).toFixed(0)}/${(best[n].overhead * 1000).toFixed(0)}`);
  }
  out(`load at the end ${load()}`);
  if (problems.length) process.exitCode = 1;
}

// -------------------------------------------------------------------------------------- parent

function parent(): void {
  const oldRoot = resolve(arg('old') ?? '/work/wt-bench-old');
  const newRoot = resolve(arg('new') ?? join(__dirname, '..'));
  for (const r of [oldRoot, newRoot]) if (!existsSync(join(r, 'bench', 'engine-run.ts'))) throw new Error(`${r}/bench/engine-run.ts not found`);
  mkdirSync(OUT, { recursive: true });
  const { buildSync } = require('esbuild') as typeof import('esbuild');
  const bundle = (entry: string, outfile: string) =>
    buildSync({ entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', outfile, logLevel: 'warning' });
  bundle(join(oldRoot, 'bench', 'engine-run.ts'), join(OUT, 'old-engine.js'));
  bundle(join(newRoot, 'bench', 'engine-run.ts'), join(OUT, 'new-engine.js'));
  bundle(__filename, join(OUT, 'driver.js'));
  const git = (root: string) => spawnSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 90);
  const dirty = spawnSync('git', ['-C', newRoot, 'status', '--porcelain', '--', 'lib', 'bench'], { encoding: 'utf8' }).stdout.trim();
  out(`old: ${oldRoot} @ ${git(oldRoot)}`);
  out(`new: ${newRoot} @ ${git(newRoot)}${dirty ? ` (uncommitted changes in lib/ or bench/: ${dirty.split('\n').length} files)` : ''}`);
  out(`bundles in ${OUT}; node ${process.version}; load before ${load()}`);
  const pass = ['--events', String(EVENTS), '--rounds', String(ROUNDS), '--warmup', String(WARMUP), '--out', OUT];
  const env = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...process.env };
  const run = (nodeArgs: string[], extra: string[]) => {
    const r = spawnSync(process.execPath, ['--expose-gc', ...nodeArgs, join(OUT, 'driver.js'), '--child', ...pass, ...extra], { stdio: 'inherit', env });
    if (r.error) throw r.error;
    return r.status ?? 1;
  };
  let status = process.argv.includes('--no-ab') ? 0 : run([], ['--sides', 'old,new']);
  const prof = arg('cpu-prof');
  if (prof) {
    for (const side of prof === 'both' ? ['old', 'new'] : [prof]) {
      const dir = join(OUT, 'prof', side);
      mkdirSync(dir, { recursive: true });
      out(`\ncpu profile of ${side} alone -> ${dir}`);
      const st = run(['--cpu-prof', '--cpu-prof-dir', dir], ['--sides', side]);
      status ||= st;
    }
  }
  process.exit(status);
}

if (process.argv.includes('--child')) {
  child().catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
} else {
  parent();
}
