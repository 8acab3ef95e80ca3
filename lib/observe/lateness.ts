/**
 * Lateness statistics for `sluice lateness` and the report's histogram: pure functions over a
 * sample of lateness values (arrival time − event time, in milliseconds), no I/O.
 *
 * Percentiles are exact on the sample, by the nearest-rank method: sort the n values ascending;
 * the p-th percentile (0 < p ≤ 1) is the value of rank ⌈p·n⌉ (1-based). It is always one of the
 * sampled values, never an interpolation, so "p99 = 4m" means 99% of the sampled rows were at
 * most 4 minutes late.
 *
 * What a delay would drop: a watermark trails the largest event time seen by the delay, and on a
 * live stream the largest event time seen follows the arrival clock, so a row whose lateness
 * exceeds the delay arrives after the watermark has passed it. The fraction is the sample's
 * share of rows with lateness > delay (an estimate: a quiet stream's watermark lags further).
 */
import { InvalidOptionError } from '../engine/errors';
import { parseSchema } from '../engine/schema';
import { parseJsonLine } from '../engine/json-record';
import { floorMillis } from '../engine/timestamps';

const PERCENTILE_METHOD = 'nearest-rank';

/** The candidate delays every report lists (besides the query's own and the recommended one). */
const CANDIDATE_DELAYS_MS: readonly number[] = [60_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000];

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The readable steps a recommended delay is rounded up to; beyond the last, whole days. */
const READABLE_STEPS_MS: readonly number[] = [1, 5, 10, 15, 30]
  .map((s) => s * SECOND)
  .concat(
    [1, 2, 5, 10, 15, 20, 30, 45].map((m) => m * MINUTE),
    [1, 2, 3, 4, 6, 8, 12].map((h) => h * HOUR),
    [1, 2, 3, 7].map((d) => d * DAY),
  );

/** The value of rank ⌈p·n⌉ in `sorted` (ascending, non-empty): the nearest-rank percentile. */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new InvalidOptionError('nearestRank of an empty sample: measure at least one row first');
  if (!(p > 0 && p <= 1)) throw new InvalidOptionError(`percentile ${p} is outside (0, 1]: give e.g. 0.99 for p99`);
  const rank = Math.max(1, Math.ceil(p * sorted.length - 1e-9));
  return sorted[Math.min(sorted.length, rank) - 1];
}

/** How many of `sorted` (ascending) are strictly greater than `x` (binary search). */
export function countAbove(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return sorted.length - lo;
}

/**
 * Reads the event time of one JSON record (a line of a file, a Kinesis record) with the engine's
 * own rules for a TIMESTAMP column (lib/engine/json-record.ts): epoch ms (the engine's µs truncated to
 * the millisecond, as a watermark takes an event time), or the reason it cannot.
 */
export function eventTimeReader(column: string): (text: string) => { ms: number } | { reason: string } {
  const schema = parseSchema(`${column} TIMESTAMP`);
  return (text) => {
    const r = parseJsonLine(schema, text);
    if (!r.ok) return { reason: r.reason };
    const us = r.row[column];
    return typeof us === 'number' || typeof us === 'bigint'
      ? { ms: floorMillis(us) }
      : { reason: `column ${column} is null: the row has no event time, so its lateness is unknown` };
  };
}

/** Collects the lateness of rows as they are read, and the rows that could not be read (a few of them as examples). */
export class LatenessSampler {
  readonly latenessMs: number[] = [];
  private unreadableCount = 0;
  private readonly examples: { where: string; reason: string }[] = [];
  private readonly read: (text: string) => { ms: number } | { reason: string };

  constructor(
    column: string,
    private readonly cap: number,
    private readonly maxExamples = 3,
  ) {
    this.read = eventTimeReader(column);
  }

  /** True once `cap` rows were taken (readable or not). */
  get full(): boolean {
    return this.latenessMs.length + this.unreadableCount >= this.cap;
  }

  /** One record that arrived at `arrivalMs`; `where` names it in the examples (a key and line, a shard and sequence number). */
  add(text: string, arrivalMs: number, where: string): void {
    if (this.full) return;
    const r = this.read(text);
    if ('ms' in r) this.latenessMs.push(arrivalMs - r.ms);
    else this.unreadable(where, r.reason);
  }

  /** A record or object that could not be read at all (a damaged gzip file, a broken KPL aggregate). */
  unreadable(where: string, reason: string): void {
    this.unreadableCount++;
    if (this.examples.length < this.maxExamples) this.examples.push({ where, reason });
  }

  summary(): UnreadableSummary {
    return { count: this.unreadableCount, examples: [...this.examples] };
  }
}

/** What a source's sampler read: the lateness of each row, and what could not be read. */
export interface ArrivalSample {
  readonly latenessMs: number[];
  readonly unreadable: UnreadableSummary;
  /** e.g. "from the 12 newest objects since 2026-11-24T10:00:00Z" */
  readonly sampled: string;
  /** True when the sample cap stopped the reading before the data ran out. */
  readonly capped: boolean;
}

interface LatenessPercentiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly min: number;
}

interface DelayCandidate {
  readonly delayMs: number;
  /** Share of the sampled rows with lateness > delayMs (0..1). */
  readonly dropFraction: number;
  readonly droppedRows: number;
  /** The query's own delay (withWatermark, or --delay). */
  readonly current?: boolean;
  readonly recommended?: boolean;
}

export interface UnreadableSummary {
  /** Rows (or objects, records) whose event time could not be read. */
  readonly count: number;
  /** A few of them: where, and the reason the engine's parser gave. */
  readonly examples: readonly { readonly where: string; readonly reason: string }[];
}

export interface LatenessStats {
  readonly method: typeof PERCENTILE_METHOD;
  /** Rows measured. */
  readonly count: number;
  readonly unreadable: UnreadableSummary;
  /** Rows whose event time is after their arrival (producer clock ahead): lateness < 0. */
  readonly early: number;
  readonly percentiles: LatenessPercentiles;
  readonly candidates: readonly DelayCandidate[];
  readonly recommendedDelayMs: number;
  /** The recommended delay as withWatermark's text, e.g. "10 minutes". */
  readonly recommendedDelay: string;
}

/**
 * The statistics of a sample of lateness values (ms, any order): nearest-rank percentiles, the
 * share each candidate delay drops, and the recommended delay (p99 rounded up to a readable step).
 */
export function latenessStats(latenessMs: readonly number[], opts: { currentDelayMs?: number; unreadable?: UnreadableSummary } = {}): LatenessStats {
  const values = latenessMs.filter((v) => Number.isFinite(v));
  if (values.length === 0 && latenessMs.length === 0 && (opts.unreadable?.count ?? 0) === 0) {
    throw new InvalidOptionError(
      'the source holds no rows in the time sampled, so lateness cannot be measured: check --source names the prefix or stream the data lands in, and that --since reaches back to when data arrived',
    );
  }
  if (values.length === 0) {
    throw new InvalidOptionError(
      'no row with a readable event time was found, so lateness cannot be measured: check --column names the event-time field and --since reaches back to data',
    );
  }
  const sorted = Float64Array.from(values).sort();
  const arr = Array.from(sorted);
  const percentiles: LatenessPercentiles = {
    p50: nearestRank(arr, 0.5),
    p90: nearestRank(arr, 0.9),
    p99: nearestRank(arr, 0.99),
    p999: nearestRank(arr, 0.999),
    max: arr[arr.length - 1],
    min: arr[0],
  };
  const recommendedDelayMs = roundUpToStep(percentiles.p99);
  const delays = new Map<number, { current?: boolean; recommended?: boolean }>();
  for (const d of CANDIDATE_DELAYS_MS) delays.set(d, {});
  delays.set(recommendedDelayMs, { ...delays.get(recommendedDelayMs), recommended: true });
  if (opts.currentDelayMs !== undefined) delays.set(opts.currentDelayMs, { ...delays.get(opts.currentDelayMs), current: true });
  const candidates = [...delays.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([delayMs, flags]) => {
      const droppedRows = countAbove(arr, delayMs);
      return { delayMs, droppedRows, dropFraction: droppedRows / arr.length, ...flags };
    });
  return {
    method: PERCENTILE_METHOD,
    count: arr.length,
    unreadable: opts.unreadable ?? { count: 0, examples: [] },
    early: arr.filter((v) => v < 0).length,
    percentiles,
    candidates,
    recommendedDelayMs,
    recommendedDelay: sparkInterval(recommendedDelayMs),
  };
}

/** The smallest readable step (1s, 5s, ... 30m, 1h, 2h, ... 7d, then whole days) at or above `ms`. */
export function roundUpToStep(ms: number): number {
  for (const step of READABLE_STEPS_MS) if (ms <= step) return step;
  return Math.ceil(ms / DAY) * DAY;
}

/** A whole duration as Spark interval text: "10 minutes", "1 hour", "90 seconds" (ms when not whole seconds). */
export function sparkInterval(ms: number): string {
  const units: [number, string][] = [
    [DAY, 'day'],
    [HOUR, 'hour'],
    [MINUTE, 'minute'],
    [SECOND, 'second'],
    [1, 'millisecond'],
  ];
  if (ms === 0) return '0 seconds';
  for (const [size, name] of units) {
    if (ms % size === 0) {
      const n = ms / size;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} milliseconds`;
}

/**
 * A lateness for people, rounded to its unit and zero-padded in columns: "350ms", "42s", "7m 12s",
 * "10m", "2h 05m", "3d 4h"; negative with a minus sign. (format.ts formatDuration is the run's
 * elapsed times: truncated, not padded.)
 */
export function formatLateness(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatLateness(-ms)}`;
  if (ms < SECOND) return `${Math.round(ms)}ms`;
  if (ms < MINUTE) return `${+(ms / SECOND).toFixed(ms < 10 * SECOND ? 1 : 0)}s`;
  const s = Math.round(ms / SECOND);
  const two = (n: number, unit: string) => (n === 0 ? '' : ` ${String(n).padStart(2, '0')}${unit}`);
  if (ms < HOUR) return `${Math.floor(s / 60)}m${two(s % 60, 's')}`;
  const m = Math.round(ms / MINUTE);
  if (ms < DAY) return `${Math.floor(m / 60)}h${two(m % 60, 'm')}`;
  const h = Math.round(ms / HOUR);
  return `${Math.floor(h / 24)}d${h % 24 ? ` ${h % 24}h` : ''}`;
}

export { parseDurationFlag } from './format';

export interface LatenessHistogram {
  /** Bin i counts lateness in [edgesMs[i], edgesMs[i+1]); the last bin also takes its upper edge. */
  readonly edgesMs: readonly number[];
  readonly counts: readonly number[];
  /** Rows above the last edge (the top 0.1%, past p99.9), left out so the bins stay readable. */
  readonly above: number;
}

/** Equal-width bins from min(0, smallest) to p99.9 of the sample; what lies above p99.9 is counted apart. */
export function latenessHistogram(latenessMs: readonly number[], bins = 40): LatenessHistogram {
  const sorted = Array.from(Float64Array.from(latenessMs.filter((v) => Number.isFinite(v))).sort());
  if (sorted.length === 0) return { edgesMs: [], counts: [], above: 0 };
  const lo = Math.min(0, sorted[0]);
  let hi = nearestRank(sorted, 0.999);
  if (hi <= lo) hi = lo + 1;
  const width = (hi - lo) / bins;
  const edgesMs = Array.from({ length: bins + 1 }, (_, i) => lo + i * width);
  const counts = new Array<number>(bins).fill(0);
  let above = 0;
  for (const v of sorted) {
    if (v > hi) above++;
    else counts[Math.min(bins - 1, Math.floor((v - lo) / width))]++;
  }
  return { edgesMs, counts, above };
}

const pct = (f: number) => (f === 0 ? '0%' : `${(f * 100).toFixed(f < 0.001 ? 3 : f < 0.1 ? 2 : 1)}%`);

/** The text `sluice lateness` prints. */
export function formatLatenessText(stats: LatenessStats, what: { source: string; column: string; sinceMs?: number; sampled?: string }): string {
  const p = stats.percentiles;
  const lines: string[] = [];
  lines.push(
    `lateness of ${what.source} (arrival − ${what.column}), ${stats.count} rows${what.sampled ? ` ${what.sampled}` : ''}; percentiles by ${stats.method} on the sample`,
  );
  lines.push(
    `  p50 ${formatLateness(p.p50)}   p90 ${formatLateness(p.p90)}   p99 ${formatLateness(p.p99)}   p99.9 ${formatLateness(p.p999)}   max ${formatLateness(p.max)}`,
  );
  if (stats.count < 100)
    lines.push(`  only ${stats.count} rows: their p99 is their maximum, so the figures are rough; sample more (a longer --since) before choosing`);
  if (stats.early > 0) lines.push(`  ${stats.early} rows have an event time after their arrival (lateness < 0: the producer's clock runs ahead)`);
  if (stats.unreadable.count > 0) {
    lines.push(`  ${stats.unreadable.count} rows had no readable ${what.column} and are not in the figures; e.g.:`);
    for (const e of stats.unreadable.examples) lines.push(`    ${e.where}: ${e.reason}`);
  }
  lines.push('');
  lines.push('delay       drops');
  for (const c of stats.candidates) {
    const tags = [c.current ? "the query's delay" : '', c.recommended ? 'recommended' : ''].filter(Boolean).join(', ');
    lines.push(`  ${formatLateness(c.delayMs).padEnd(9)} ${pct(c.dropFraction).padStart(7)}  (${c.droppedRows} rows)${tags ? `  <- ${tags}` : ''}`);
  }
  lines.push('');
  const beyond = stats.candidates.find((c) => c.recommended)!;
  lines.push(
    `recommended: .withWatermark('${what.column}', '${stats.recommendedDelay}')   (p99 ${formatLateness(p.p99)}, rounded up; drops ${pct(beyond.dropFraction)} of these rows)`,
  );
  lines.push(
    '  A longer delay keeps later rows but holds every result and its state that much longer (state grows with the delay); past p99 the few stragglers cost more to wait for than to reconcile in a batch job.',
  );
  return lines.join('\n');
}
