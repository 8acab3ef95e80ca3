/**
 * `sluice status`: what the retained progress records of a checkpoint say about a pipeline. The
 * analysis is pure (records, the checkpoint's tip, the clock and the schedule interval in; rows,
 * a state trend and a verdict out), so tests build records by hand; `loadStatus` reads them.
 *
 * Records written by older versions of sluice lack fields (no runId, no backlog, dead letters at
 * the top level): every figure a record lacks is null here and printed as '–'.
 */
import type { CheckpointStore } from '../engine/ports';
import type { StreamingProgress } from '../engine/progress';
import { formatBytes, formatCount, formatDuration, formatPercent, formatTime } from './format';
import { loadProgressHistory } from './history';

/** Where the checkpoint's log ends: the newest offsets/N and commits/N. */
export interface CheckpointTip {
  readonly latestOffsetBatch: number;
  readonly latestCommitBatch: number;
  /** When the newest batch without a commit was planned (its offsets' batchTimestampMs). */
  readonly uncommittedStartMs?: number;
}

export interface StatusOptions {
  /** Wall-clock time of the look (epoch ms). */
  readonly nowMs: number;
  /** The schedule interval the durations are measured against. */
  readonly intervalMs: number;
  readonly tip?: CheckpointTip;
  /** Runs shown, the newest ones. @default 5 */
  readonly runs?: number;
  /** A run or batch taking this fraction of the interval or more is falling behind. @default 0.8 */
  readonly nearIntervalFraction?: number;
  /** Scheduled runs without input before the verdict says so. @default 2 */
  readonly noInputRuns?: number;
  /** State growth (percent a day, fitted) the verdict reports. @default 10 */
  readonly stateGrowthPctPerDay?: number;
  /** The shortest stretch of batches a state trend is fitted over. @default 6 hours */
  readonly minTrendSpanMs?: number;
}

const STATUS_DEFAULTS = { runs: 5, nearIntervalFraction: 0.8, noInputRuns: 2, stateGrowthPctPerDay: 10, minTrendSpanMs: 6 * 3_600_000 } as const;

/** What is left in the source after a batch (sums over its sources; absent figures are left out). */
export interface Backlog {
  readonly files?: number;
  readonly bytes?: number;
  readonly records?: number;
  readonly millisBehindLatest?: number;
}

export interface BatchStatus {
  readonly batchId: number;
  readonly start: string | null;
  readonly durationMs: number | null;
  /** durationMs / the schedule interval. */
  readonly intervalFraction: number | null;
  readonly rowsIn: number | null;
  readonly rowsOut: number | null;
  /** The watermark the batch ran with; null before there is one. */
  readonly watermark: string | null;
  /** How far the watermark was behind the wall clock when the batch started. */
  readonly watermarkLagMs: number | null;
  readonly stateRows: number | null;
  /** Rows dropped by the watermark. */
  readonly late: number | null;
  readonly deadLetters: number | null;
  readonly backlog: Backlog | null;
  readonly noData: boolean | null;
  readonly replay: boolean | null;
}

interface RunStatus {
  /** The run's id; null for records of older versions (a run is then a stretch of batches less than a minute apart). */
  readonly runId: string | null;
  readonly start: string | null;
  /** From the first batch's start to the last batch's end. */
  readonly durationMs: number | null;
  readonly intervalFraction: number | null;
  readonly rowsIn: number;
  readonly rowsOut: number;
  /** The backlog after the run's last batch. */
  readonly backlogLeft: Backlog | null;
  readonly batches: BatchStatus[];
}

/** A least-squares line through the state rows of the retained batches against their start time. */
export interface StateTrend {
  readonly points: number;
  readonly spanMs: number;
  readonly rowsPerDay: number;
  /** The line's value at the newest batch. */
  readonly fittedRows: number;
  /** rowsPerDay as a percentage of fittedRows; null when the line ends at or below zero. */
  readonly pctPerDay: number | null;
}

type VerdictKind = 'healthy' | 'falling-behind' | 'no-input' | 'state-growing' | 'failing' | 'running' | 'empty';

export interface Finding {
  readonly kind: VerdictKind;
  /** One line for people, e.g. "state growing 12% a day (…)". */
  readonly text: string;
  /** no-input: scheduled runs without input. */
  readonly runs?: number;
  /** state-growing: percent a day. */
  readonly pctPerDay?: number;
}

export interface StatusAnalysis {
  readonly nowMs: number;
  readonly intervalMs: number;
  /** The worst finding (failing, falling behind, no input, state growing), else healthy. */
  readonly verdict: Finding;
  readonly findings: Finding[];
  readonly trend: StateTrend | null;
  readonly retainedBatches: number;
  readonly watermark: string | null;
  readonly watermarkLagMs: number | null;
  /** The newest runs, oldest first. */
  readonly runs: RunStatus[];
}

/** A record as older versions may have written it: anything but batchId can be missing. */
type LooseProgress = { readonly [K in keyof StreamingProgress]?: unknown } & {
  readonly batchId: number;
  readonly numDeadLetters?: unknown;
  readonly replay?: unknown;
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const arr = (v: unknown): Record<string, unknown>[] | null => (Array.isArray(v) ? v.map((x) => obj(x) ?? {}) : null);
const timeMs = (v: unknown): number | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : null);

/** The sum of `field` over `items`, null when no item has it. */
function sumOf(items: Record<string, unknown>[] | null, field: string): number | null {
  if (!items) return null;
  let total: number | null = null;
  for (const it of items) {
    const v = num(it[field]);
    if (v !== null) total = (total ?? 0) + v;
  }
  return total;
}

function backlogOf(sources: Record<string, unknown>[] | null): Backlog | null {
  const metrics = sources?.map((s) => obj(s.metrics)).filter((m): m is Record<string, unknown> => m !== null) ?? [];
  const out: Record<string, number> = {};
  for (const field of ['files', 'bytes', 'records'] as const) {
    const v = sumOf(metrics, field);
    if (v !== null) out[field] = v;
  }
  const behind = metrics.map((m) => num(m.millisBehindLatest)).filter((v): v is number => v !== null);
  if (behind.length) out.millisBehindLatest = Math.max(...behind);
  return Object.keys(out).length ? out : null;
}

/** The size of a backlog to compare runs by: files (S3) or records (Kinesis). */
function backlogSize(b: Backlog | null): number | null {
  if (!b) return null;
  if (b.files !== undefined || b.records !== undefined) return (b.files ?? 0) + (b.records ?? 0);
  return null;
}

/** One record as a table row. */
export function batchStatus(record: StreamingProgress, intervalMs: number): BatchStatus {
  const p = record as unknown as LooseProgress;
  const durations = obj(p.durationMs);
  const durationMs = num(p.batchDuration) ?? num(durations?.triggerExecution);
  const start = typeof p.timestamp === 'string' ? p.timestamp : null;
  const watermark = typeof obj(p.eventTime)?.watermark === 'string' ? (obj(p.eventTime)!.watermark as string) : null;
  const watermarkMs = timeMs(watermark);
  const hasWatermark = watermarkMs !== null && watermarkMs > 0;
  const startMs = timeMs(start);
  const operators = arr(p.stateOperators);
  const sluice = obj(p.sluice);
  const sources = arr(p.sources);
  return {
    batchId: p.batchId,
    start,
    durationMs,
    intervalFraction: durationMs === null ? null : durationMs / intervalMs,
    rowsIn: num(p.numInputRows),
    rowsOut: num(obj(p.sink)?.numOutputRows),
    watermark: hasWatermark ? watermark : null,
    watermarkLagMs: hasWatermark && startMs !== null ? startMs - watermarkMs : null,
    stateRows: operators?.length ? sumOf(operators, 'numRowsTotal') : null,
    late: operators?.length ? sumOf(operators, 'numRowsDroppedByWatermark') : null,
    deadLetters: num(sluice?.numDeadLetters) ?? num(p.numDeadLetters),
    backlog: backlogOf(sources),
    noData: typeof sluice?.noData === 'boolean' ? sluice.noData : null,
    replay: typeof sluice?.replay === 'boolean' ? sluice.replay : typeof p.replay === 'boolean' ? p.replay : null,
  };
}

/** Without run ids, a batch starting more than this after the previous one ended starts a new run. */
const RUN_GAP_MS = 60_000;

/** Consecutive records of one run (same runId; for older records, batches less than a minute apart). */
export function groupRuns(records: readonly StreamingProgress[]): StreamingProgress[][] {
  const runs: StreamingProgress[][] = [];
  let endMs: number | null = null;
  for (const r of records) {
    const p = r as unknown as LooseProgress;
    const id = typeof p.runId === 'string' ? p.runId : null;
    const last = runs[runs.length - 1];
    const lastId = last ? ((last[last.length - 1] as unknown as LooseProgress).runId ?? null) : undefined;
    const startMs = timeMs(p.timestamp);
    const sameRun = last !== undefined && id === lastId && (id !== null || (startMs !== null && endMs !== null && startMs - endMs <= RUN_GAP_MS));
    if (sameRun) last.push(r);
    else runs.push([r]);
    const duration = num(p.batchDuration) ?? num(obj(p.durationMs)?.triggerExecution) ?? 0;
    endMs = startMs === null ? null : startMs + duration;
  }
  return runs;
}

function runStatus(records: StreamingProgress[], intervalMs: number): RunStatus {
  const batches = records.map((r) => batchStatus(r, intervalMs));
  const first = batches[0];
  const last = batches[batches.length - 1];
  const firstMs = timeMs(first.start);
  const lastMs = timeMs(last.start);
  const durationMs = firstMs !== null && lastMs !== null && last.durationMs !== null ? lastMs + last.durationMs - firstMs : null;
  return {
    runId: ((records[0] as unknown as LooseProgress).runId as string | undefined) ?? null,
    start: first.start,
    durationMs,
    intervalFraction: durationMs === null ? null : durationMs / intervalMs,
    rowsIn: batches.reduce((a, b) => a + (b.rowsIn ?? 0), 0),
    rowsOut: batches.reduce((a, b) => a + (b.rowsOut ?? 0), 0),
    backlogLeft: last.backlog,
    batches,
  };
}

const DAY_MS = 86_400_000;

/**
 * The state trend: a least-squares line through (batch start, state rows total) of every record
 * that has both; null with fewer than 3 such records or when they span less than `minSpanMs`.
 */
export function stateTrend(records: readonly StreamingProgress[], minSpanMs: number = STATUS_DEFAULTS.minTrendSpanMs): StateTrend | null {
  const points: { t: number; rows: number }[] = [];
  for (const r of records) {
    const b = batchStatus(r, 1);
    const t = timeMs(b.start);
    if (t !== null && b.stateRows !== null) points.push({ t, rows: b.stateRows });
  }
  if (points.length < 3) return null;
  const t0 = Math.min(...points.map((p) => p.t));
  const t1 = Math.max(...points.map((p) => p.t));
  if (t1 - t0 < minSpanMs || t1 === t0) return null;
  const n = points.length;
  const meanT = points.reduce((a, p) => a + (p.t - t0), 0) / n;
  const meanRows = points.reduce((a, p) => a + p.rows, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const p of points) {
    sxy += (p.t - t0 - meanT) * (p.rows - meanRows);
    sxx += (p.t - t0 - meanT) ** 2;
  }
  const slopePerMs = sxy / sxx;
  const fittedRows = meanRows + slopePerMs * (t1 - t0 - meanT);
  const rowsPerDay = slopePerMs * DAY_MS;
  return { points: n, spanMs: t1 - t0, rowsPerDay, fittedRows, pctPerDay: fittedRows > 0 ? (rowsPerDay / fittedRows) * 100 : null };
}

const pct = formatPercent;
const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** Every finding, worst first: failing or running, falling behind, no input, state growing. */
export function findings(records: readonly StreamingProgress[], opts: StatusOptions): Finding[] {
  const near = opts.nearIntervalFraction ?? STATUS_DEFAULTS.nearIntervalFraction;
  const interval = formatDuration(opts.intervalMs);
  const out: Finding[] = [];
  const tip = opts.tip;
  if (tip && tip.latestOffsetBatch > tip.latestCommitBatch) {
    const batch = tip.latestOffsetBatch;
    const ageMs = tip.uncommittedStartMs === undefined ? null : opts.nowMs - tip.uncommittedStartMs;
    if (ageMs === null || ageMs > opts.intervalMs) {
      const when = ageMs === null ? '' : ` (planned ${formatDuration(ageMs)} ago)`;
      out.push({
        kind: 'failing',
        text: `failing: batch ${batch} has offsets but no commit${when} and no run has finished it since: read the last run's log; the next run replays it`,
      });
    } else {
      out.push({
        kind: 'running',
        text: `running: batch ${batch} started ${formatDuration(ageMs)} ago and has not committed yet (or its run crashed: the next run replays it)`,
      });
    }
  }
  if (records.length === 0) return out.length ? out : [{ kind: 'empty', text: 'no batches yet: the checkpoint holds no progress records' }];

  const runs = groupRuns(records).map((r) => runStatus(r, opts.intervalMs));
  const newest = runs[runs.length - 1];
  const slowBatch = newest.batches.find((b) => b.intervalFraction !== null && b.intervalFraction >= near);
  if (newest.intervalFraction !== null && newest.intervalFraction >= near) {
    out.push({
      kind: 'falling-behind',
      text: `falling behind: the last run took ${formatDuration(newest.durationMs!)} of the ${interval} interval (${pct(newest.intervalFraction)})`,
    });
  } else if (slowBatch) {
    out.push({
      kind: 'falling-behind',
      text: `falling behind: batch ${slowBatch.batchId} took ${formatDuration(slowBatch.durationMs!)} of the ${interval} interval (${pct(slowBatch.intervalFraction!)})`,
    });
  }
  const [before, last] = runs.slice(-2).map((r) => backlogSize(r.backlogLeft));
  if (runs.length >= 2 && before !== null && last !== null && last > 0 && last > before) {
    out.push({
      kind: 'falling-behind',
      text: `falling behind: the backlog left grew from ${formatCount(before)} to ${formatCount(last)} over the last 2 runs`,
    });
  }

  const noInputRuns = opts.noInputRuns ?? STATUS_DEFAULTS.noInputRuns;
  const batches = runs.flatMap((r) => r.batches);
  const lastInput = [...batches].reverse().find((b) => (b.rowsIn ?? 0) > 0);
  let quietRunsSeen = 0;
  for (let i = runs.length - 1; i >= 0 && runs[i].rowsIn === 0; i--) quietRunsSeen++;
  const lastInputMs = lastInput ? timeMs(lastInput.start) : null;
  const quietRuns = Math.max(quietRunsSeen, lastInputMs === null ? 0 : Math.floor((opts.nowMs - lastInputMs) / opts.intervalMs));
  if (quietRuns >= noInputRuns) {
    const since = lastInput
      ? `the last rows came in batch ${lastInput.batchId}${lastInputMs !== null ? `, ${formatDuration(opts.nowMs - lastInputMs)} ago` : ''}`
      : `none in the ${plural(batches.length, 'retained batch', 'retained batches')}`;
    out.push({ kind: 'no-input', runs: quietRuns, text: `no input for ${plural(quietRuns, 'run')} of ${interval} (${since})` });
  }

  const trend = stateTrend(records, opts.minTrendSpanMs);
  const threshold = opts.stateGrowthPctPerDay ?? STATUS_DEFAULTS.stateGrowthPctPerDay;
  if (trend && trend.pctPerDay !== null && trend.pctPerDay >= threshold) {
    out.push({
      kind: 'state-growing',
      pctPerDay: trend.pctPerDay,
      text: `state growing ${trend.pctPerDay.toFixed(1)}% a day (${formatCount(trend.rowsPerDay)} rows a day on ${formatCount(trend.fittedRows)}, fitted over ${plural(trend.points, 'batch', 'batches')} in ${formatDuration(trend.spanMs)})`,
    });
  }
  return out;
}

/** The analysis `sluice status` prints (as a table and a verdict, or with --json as it is). */
export function analyseStatus(records: readonly StreamingProgress[], opts: StatusOptions): StatusAnalysis {
  const all = findings(records, opts);
  const runs = groupRuns(records).map((r) => runStatus(r, opts.intervalMs));
  const newestBatch = runs.length ? runs[runs.length - 1].batches.slice(-1)[0] : undefined;
  const watermark = newestBatch?.watermark ?? null;
  const watermarkMs = timeMs(watermark);
  return {
    nowMs: opts.nowMs,
    intervalMs: opts.intervalMs,
    verdict: all[0] ?? {
      kind: 'healthy',
      text: `healthy: the last run took ${runs.length && runs[runs.length - 1].durationMs !== null ? `${formatDuration(runs[runs.length - 1].durationMs!)} of the ${formatDuration(opts.intervalMs)} interval` : 'no time on record'}, input is arriving, state is steady`,
    },
    findings: all,
    trend: stateTrend(records, opts.minTrendSpanMs),
    retainedBatches: records.length,
    watermark,
    watermarkLagMs: watermarkMs === null ? null : opts.nowMs - watermarkMs,
    runs: runs.slice(-(opts.runs ?? STATUS_DEFAULTS.runs)),
  };
}

/** The one line under the table: the verdict, and what else was found. */
function verdictLine(a: StatusAnalysis): string {
  const others = a.findings.slice(1).map((f) => f.text);
  return `verdict: ${a.verdict.text}${others.length ? `; also ${others.join('; ')}` : ''}`;
}

/** The table's columns (times UTC; `took`: the duration and its share of the interval; `state`: state rows; `backlog`: left after the batch). */
export const STATUS_COLUMNS = ['batch', 'start', 'took', 'rows in/out', 'watermark', 'lag', 'state', 'late/dead', 'backlog'] as const;

/** The width `sluice status` keeps every line within. */
export const STATUS_WIDTH = 100;

const DASH = '–';
const orDash = <T>(v: T | null, f: (v: T) => string): string => (v === null ? DASH : f(v));

export function formatBacklog(b: Backlog | null): string {
  if (!b) return DASH;
  const parts: string[] = [];
  if (b.files !== undefined) parts.push(`${plural(b.files, 'file')}${b.bytes ? ` (${formatBytes(b.bytes)})` : ''}`);
  else if (b.bytes !== undefined) parts.push(formatBytes(b.bytes));
  if (b.records !== undefined) parts.push(plural(b.records, 'record'));
  if (b.millisBehindLatest) parts.push(`${formatDuration(b.millisBehindLatest)} behind`);
  return parts.length ? parts.join(', ') : DASH;
}

/** A time without its date (the run's heading has it): HH:MM:SS. */
const clock = (iso: string) => formatTime(iso).slice(11);
/** A watermark in the table: MM-DD HH:MM:SS (the year is in the lines above). */
const monthDay = (iso: string) => formatTime(iso).slice(5);
const pair = (a: number | null, b: number | null) => (a === null && b === null ? DASH : `${orDash(a, formatCount)}/${orDash(b, formatCount)}`);

/** A batch's cells, in STATUS_COLUMNS order. `nd`: a no-data batch, `re`: a replay (the legend under the table says so). */
export function batchCells(b: BatchStatus): string[] {
  const tags = [b.noData ? 'nd' : '', b.replay ? 're' : ''].filter(Boolean).join(',');
  return [
    `${b.batchId}${tags ? ` ${tags}` : ''}`,
    orDash(b.start, clock),
    orDash(b.durationMs, (d) => `${formatDuration(d)} ${pct(b.intervalFraction!)}`),
    pair(b.rowsIn, b.rowsOut),
    orDash(b.watermark, monthDay),
    orDash(b.watermarkLagMs, formatDuration),
    orDash(b.stateRows, formatCount),
    pair(b.late, b.deadLetters),
    formatBacklog(b.backlog),
  ];
}

/** The line that heads a run's batches in the table (the run id's first 8 characters; --json has it whole). */
function runHeading(r: RunStatus, intervalMs: number): string {
  const ids = r.batches.map((b) => b.batchId);
  const span = ids.length > 1 ? `batches ${ids[0]}-${ids[ids.length - 1]}` : `batch ${ids[0]}`;
  const took = r.durationMs === null ? '' : `, ${formatDuration(r.durationMs)} of ${formatDuration(intervalMs)} (${pct(r.intervalFraction!)})`;
  return `run ${r.runId?.slice(0, 8) ?? DASH}: ${span}${r.start ? ` from ${formatTime(r.start)}` : ''}${took}, ${formatCount(r.rowsIn)} rows in, ${formatCount(r.rowsOut)} out`;
}

/** The lines above the table. */
function statusHeader(a: StatusAnalysis, where: string): string[] {
  const lag = a.watermarkLagMs === null ? '' : `, ${formatDuration(a.watermarkLagMs)} behind now`;
  const trend =
    a.trend === null
      ? 'state trend: needs 3 batches over 6 hours or more'
      : `state trend: ${a.trend.pctPerDay === null ? DASH : `${a.trend.pctPerDay >= 0 ? '+' : ''}${a.trend.pctPerDay.toFixed(1)}% a day`} over ${plural(a.trend.points, 'batch', 'batches')}`;
  return [
    `checkpoint ${where}`,
    `${plural(a.retainedBatches, 'batch', 'batches')} retained${a.runs.length ? `, ${a.runs.length === 1 ? 'the last run' : `the last ${a.runs.length} runs`} below (times UTC)` : ''}`,
    `watermark ${a.watermark ? formatTime(a.watermark) : DASH}${lag}; ${trend}`,
  ];
}

/** Breaks a line of words into lines of at most `width` columns, the later ones indented by `indent`. */
function wrapLine(text: string, width: number, indent = '  '): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (next.length <= width || line === '' || line === indent) line = next;
    else {
      out.push(line);
      line = `${indent}${word}`;
    }
  }
  out.push(line);
  return out;
}

/**
 * What `sluice status` prints: the lines above, the runs' batches as a table without vertical
 * borders (cli-table3), a legend, and the verdict, every line at most `width` columns: a cell too
 * wide for its share wraps within its column.
 */
export function renderStatus(a: StatusAnalysis, where: string, intervalMs: number, width = STATUS_WIDTH): string {
  const lines = statusHeader(a, where).flatMap((l) => wrapLine(l, width));
  if (a.runs.length) {
    const rows = a.runs.flatMap((r) => r.batches.map(batchCells));
    const gap = 2;
    // each column as wide as its widest cell; while the table is too wide, narrow first the
    // backlog (to its widest part), then the watermark (date over time), then the column with the
    // most room above its longest word: a cell wraps between words, never through a number
    const len = (t: string) => [...t].length;
    const widths = STATUS_COLUMNS.map((h, i) => Math.max(h.length, ...rows.map((c) => len(c[i]))));
    const longest = (i: number, split: string) => Math.max(len(STATUS_COLUMNS[i]), ...rows.flatMap((c) => c[i].split(split).map(len)));
    const words = STATUS_COLUMNS.map((_, i) => longest(i, ' '));
    const backlog = STATUS_COLUMNS.indexOf('backlog');
    const watermark = STATUS_COLUMNS.indexOf('watermark');
    const floors = widths.map((_, i) => (i === backlog ? longest(i, ', ') : i === watermark ? words[i] : widths[i]));
    const room = width - gap * (widths.length - 1);
    const total = () => widths.reduce((x, y) => x + y, 0);
    for (const i of [backlog, watermark]) while (total() > room && widths[i] > floors[i]) widths[i]--;
    while (total() > room) {
      const slack = widths.map((w, i) => w - words[i]);
      const most = Math.max(...slack);
      // no room left above the words: narrow the widest column (a word then is cut)
      widths[most > 0 ? slack.indexOf(most) : widths.indexOf(Math.max(...widths))]--;
    }
    const wrapCell = (cell: string, w: number) =>
      len(cell) <= w
        ? cell
        : cell
            .split(', ')
            .map((part, k, all) => (k < all.length - 1 ? `${part},` : part))
            .flatMap((part) => wrapLine(part, w, ''))
            .map((l) => (len(l) > w ? `${[...l].slice(0, w - 1).join('')}…` : l))
            .join('\n');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Table = require('cli-table3') as typeof import('cli-table3');
    const none = { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '' };
    // one table for the header and one per run, all of the same column widths: the run's heading goes between them
    const table = () =>
      new Table({
        chars: { ...none, left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: ' '.repeat(gap) },
        style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
        colWidths: widths,
      });
    const render = (t: ReturnType<typeof table>) =>
      t
        .toString()
        .split('\n')
        .map((l) => l.trimEnd());
    const header = table();
    header.push([...STATUS_COLUMNS]);
    lines.push(...render(header));
    for (const run of a.runs) {
      lines.push(...wrapLine(runHeading(run, intervalMs), width));
      const t = table();
      for (const b of run.batches) t.push(batchCells(b).map((c, i) => wrapCell(c, widths[i])));
      lines.push(...render(t));
    }
    const tagged = a.runs.flatMap((r) => r.batches);
    const legend = [
      'took: duration, share of the interval',
      'late/dead: rows dropped by the watermark/dead letters',
      ...(tagged.some((b) => b.noData) ? ['nd: no-data batch'] : []),
      ...(tagged.some((b) => b.replay) ? ['re: replay'] : []),
    ];
    lines.push(...wrapLine(legend.join('; '), width));
  }
  lines.push(...wrapLine(verdictLine(a), width));
  return lines.join('\n');
}

/**
 * Reads what the analysis needs from a checkpoint: its retained progress records and its tip (the
 * newest offsets and commit, and when an uncommitted newest batch was planned).
 */
export async function loadStatus(checkpoint: CheckpointStore): Promise<{ records: StreamingProgress[]; tip: CheckpointTip }> {
  const head = await checkpoint.head();
  const records = await loadProgressHistory(checkpoint, { head });
  let uncommittedStartMs: number | undefined;
  if (head.latestOffsetBatch > head.latestCommitBatch) uncommittedStartMs = (await checkpoint.readOffsets(head.latestOffsetBatch))?.batchTimestampMs;
  return {
    records,
    tip: {
      latestOffsetBatch: head.latestOffsetBatch,
      latestCommitBatch: head.latestCommitBatch,
      ...(uncommittedStartMs !== undefined ? { uncommittedStartMs } : {}),
    },
  };
}
