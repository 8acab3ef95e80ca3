/**
 * Micro-benchmark of record parsing: JSON.parse alone, parseJsonLine (JSON.parse + coercion) and
 * the schema-driven scanner of lib/engine/json-scan.ts, on the lines of generateEvents.
 *
 *   npx esbuild bench/json-scan-bench.ts --bundle --platform=node --outfile=/tmp/json-scan-bench.js && node /tmp/json-scan-bench.js
 *   node bin/run-ts.js bench/json-scan-bench.ts     (through tsx: works, figures less steady)
 *
 * Options: --lines N (default 1000000), --rounds N (default 5). Each block of 50,000 lines is timed
 * once per round for each candidate in turn (CPU time); the best time of each block is kept. Two
 * smaller tables follow: the same records with a nested field outside the schema.
 */
import { compileLineParser } from '../lib/engine/json-scan';
import { parseSchema } from '../lib/engine/schema';
import { parseJsonLine } from '../lib/engine/json-record';
import { BENCH_SCHEMA, generateEvents } from './generate';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const count = arg('lines', 1_000_000);
const rounds = arg('rounds', 5);
const schema = parseSchema(BENCH_SCHEMA);
const input = generateEvents({ events: count, keys: 10_000, files: 100, spanMinutes: 60 });
// Lines as the sources see them: slices of a file body.
const lines: string[] = [];
for (const f of input.files) for (const l of f.body.split('\n')) lines.push(l);

const scan = compileLineParser(schema);

// The scanner must agree with the reference on these lines before it is timed.
for (let i = 0; i < lines.length; i += 997) {
  const a = parseJsonLine(schema, lines[i]);
  const b = scan(lines[i]);
  if (!a.ok || !b.ok) throw new Error(`line ${i} did not parse: ${lines[i]}`);
  for (const c of schema.columns) {
    if (!Object.is(a.row[c.name], b.row[c.name])) throw new Error(`line ${i} column ${c.name}: ${String(a.row[c.name])} vs ${String(b.row[c.name])}`);
  }
}

let sink = 0;
const BLOCK = 50_000;

/** CPU seconds (user + system) of one block of lines: steadier than wall time on a shared machine. */
function time(fn: (line: string) => unknown, of: string[], from: number, to: number): number {
  const u0 = process.cpuUsage();
  for (let i = from; i < to; i++) if (fn(of[i]) !== undefined) sink++;
  const u = process.cpuUsage(u0);
  return (u.user + u.system) / 1e6;
}

/**
 * Times the candidates on the lines: each block of BLOCK lines once per round for each candidate
 * in turn, keeping the least CPU time of each block (a burst of load from other processes on a
 * shared machine spoils one measurement, not the figure), and prints the sums.
 */
function table(title: string, of: string[], candidates: Array<[string, (line: string) => unknown]>): void {
  const chars = of.reduce((n, l) => n + l.length, 0);
  console.log(`\n${title}: ${of.length} lines, ${(chars / of.length).toFixed(0)} chars/line`);
  console.log(`  e.g. ${of[0]}`);
  const blocks = Math.ceil(of.length / BLOCK);
  const best = candidates.map(() => new Array<number>(blocks).fill(Infinity));
  for (let r = 0; r < rounds; r++) {
    for (let b = 0; b < blocks; b++) {
      for (let c = 0; c < candidates.length; c++) {
        const s = time(candidates[c][1], of, b * BLOCK, Math.min(of.length, (b + 1) * BLOCK));
        if (s < best[c][b]) best[c][b] = s;
      }
    }
  }
  const total = best.map((bs) => bs.reduce((a, x) => a + x, 0));
  for (let c = 0; c < candidates.length; c++) {
    const s = total[c];
    console.log(
      `  ${candidates[c][0].padEnd(26)} ${(of.length / s / 1e6).toFixed(2).padStart(6)} M lines/s  ${((s / of.length) * 1e9).toFixed(0).padStart(5)} ns/line  ${(chars / s / 1e6).toFixed(0).padStart(5)} MB/s  ${(total[0] / s).toFixed(2)}x JSON.parse`,
    );
  }
}

function candidates(): Array<[string, (line: string) => unknown]> {
  const tiered = compileLineParser(schema);
  const scanOnly = compileLineParser(schema, { shapes: false });
  return [
    ['JSON.parse', (l) => JSON.parse(l)],
    ['parseJsonLine', (l) => parseJsonLine(schema, l)],
    ['compileLineParser', tiered],
    ['  (its tier 2 alone)', scanOnly],
  ];
}

console.log(`node ${process.version}; CPU time (user + system), best of ${rounds} rounds per block of ${BLOCK} lines`);
table('generateEvents (BENCH_SCHEMA; "referrer" is outside it)', lines, candidates());
// The same records with a field outside the schema nested one level (tier 1 takes it) and two
// levels (tier 1 does not: tier 2 reads them).
const some = lines.slice(0, Math.min(lines.length, 200_000));
const nested1 = some.map((l, i) => l.replace(',"referrer"', `,"ctx":{"ip":"10.0.${i % 256}.1","ua":"Mozilla/5.0","n":${i}},"referrer"`));
const nested2 = some.map((l, i) => l.replace(',"referrer"', `,"ctx":{"geo":{"lat":52.5,"lon":13.4},"ip":"10.0.${i % 256}.1","n":${i}},"referrer"`));
table('with an object outside the schema', nested1, candidates());
table('with an object in an object outside the schema', nested2, candidates());
if (sink === 0) console.log('');
