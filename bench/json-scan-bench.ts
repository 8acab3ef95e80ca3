/**
 * Micro-benchmark of record parsing: JSON.parse alone, parseJsonLine (JSON.parse + coercion) and
 * the schema-driven scanner of lib/engine/json-scan.ts, on the lines of generateEvents.
 *
 *   npx esbuild bench/json-scan-bench.ts --bundle --platform=node --outfile=/tmp/json-scan-bench.js && node /tmp/json-scan-bench.js
 *   node bin/run-ts.js bench/json-scan-bench.ts            (slower start, same figures)
 *
 * Options: --lines N (default 1000000), --rounds N (default 5; the best round is reported).
 */
import { compileLineParser } from '../lib/engine/json-scan';
import { parseJsonLine, parseSchema } from '../lib/engine/schema';
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
const bytes = lines.reduce((n, l) => n + l.length, 0);

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
const candidates: Array<[string, (line: string) => unknown]> = [
  ['JSON.parse', (l) => JSON.parse(l)],
  ['parseJsonLine', (l) => parseJsonLine(schema, l)],
  ['compileLineParser', scan],
];

function time(fn: (line: string) => unknown): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < lines.length; i++) if (fn(lines[i]) !== undefined) sink++;
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

console.log(`${lines.length} lines, ${(bytes / lines.length).toFixed(0)} chars/line, node ${process.version}, best of ${rounds} rounds`);
console.log(`sample: ${lines[0]}`);
const best = new Map<string, number>();
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of candidates) {
    const s = time(fn);
    best.set(name, Math.min(best.get(name) ?? Infinity, s));
  }
}
const base = best.get('JSON.parse')!;
for (const [name] of candidates) {
  const s = best.get(name)!;
  console.log(
    `${name.padEnd(18)} ${(lines.length / s / 1e6).toFixed(2).padStart(6)} M lines/s  ${((s / lines.length) * 1e9).toFixed(0).padStart(5)} ns/line  ${(bytes / s / 1e6).toFixed(0).padStart(5)} MB/s  ${(base / s).toFixed(2)}x JSON.parse`,
  );
}
if (sink === 0) console.log('');
