/**
 * The HTML report of `sluice report`: plots over a checkpoint's retained progress records. Pure:
 * records and the charting library's text in, one self-contained HTML document out (uPlot's
 * script and stylesheet inlined, the data embedded as JSON; no request leaves the page).
 *
 * Records written by older versions of sluice lack fields: every figure is read defensively and
 * a missing one is a gap (null) in its series; a series with no value at all is left out, and a
 * chart with no series left says so instead of drawing an empty frame.
 */
import type { StreamingProgress } from '../engine/progress';
import { formatLateness, type LatenessHistogram, type LatenessStats } from './lateness';

/** A stored progress record as read back: every field but batchId and timestamp may be missing. */
export type StoredProgress = Partial<StreamingProgress> & { readonly batchId: number; readonly timestamp: string };

interface ReportSeries {
  readonly label: string;
  readonly values: (number | null)[];
  readonly color: string;
  /** Drawn dashed without points (a reference line such as the schedule interval). */
  readonly reference?: boolean;
  /** On the right-hand axis (another unit). */
  readonly rightAxis?: boolean;
}

export interface ReportChart {
  readonly id: string;
  readonly title: string;
  /** The left axis' unit, and the right one's when a series uses it. */
  readonly unit: string;
  readonly rightUnit?: string;
  /** 'time': x is epoch seconds of each batch; 'bars': x is the middle of each bin (minutes). */
  readonly kind: 'time' | 'bars';
  readonly x: number[];
  readonly series: ReportSeries[];
  /** Shown under the title: what the chart shows, or why it has nothing to show. */
  readonly note?: string;
}

export interface LatenessSection {
  readonly source: string;
  readonly column: string;
  readonly stats: LatenessStats;
  readonly histogram: LatenessHistogram;
}

export interface ReportOptions {
  /** The schedule interval the batch durations are compared with, ms. */
  readonly intervalMs: number;
  /** Where the records came from, e.g. s3://bucket/prefix of the checkpoint. */
  readonly checkpoint: string;
  readonly generatedAtMs: number;
  readonly lateness?: LatenessSection;
  /** uPlot's dist files as text (uPlot.iife.min.js, uPlot.min.css). */
  readonly assets: { readonly uplotJs: string; readonly uplotCss: string };
}

const COLORS = { blue: '#1f77b4', orange: '#ff7f0e', green: '#2ca02c', red: '#d62728', purple: '#9467bd', brown: '#8c564b', teal: '#17becf' };

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The sum of `pick` over `items`, or null when there are none or no item has the figure. */
function sumOf<T>(items: readonly T[] | undefined, pick: (item: T) => unknown): number | null {
  if (!Array.isArray(items)) return null;
  let total: number | null = null;
  for (const item of items) {
    const v = num(item ? pick(item) : undefined);
    if (v !== null) total = (total ?? 0) + v;
  }
  return total;
}

const isoMs = (text: unknown): number | null => {
  if (typeof text !== 'string') return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
};

/**
 * Two records further apart than this many schedule intervals belong to runs with missed runs
 * between them (the schedule was off, runs failed): the lines break there instead of drawing a
 * slope across time with no data.
 */
export const GAP_INTERVALS = 2;

/**
 * The charts of the report, in page order. Time charts have one x per record with a readable
 * timestamp and, between two records more than GAP_INTERVALS schedule intervals apart, one more x
 * halfway with null in every series: uPlot (spanGaps false) breaks each line there.
 */
export function reportCharts(records: readonly StoredProgress[], opts: Pick<ReportOptions, 'intervalMs' | 'lateness'>): ReportChart[] {
  const sorted = records
    .map((r) => ({ r, at: isoMs(r.timestamp) }))
    .filter((e): e is { r: StoredProgress; at: number } => e.at !== null)
    .sort((a, b) => a.at - b.at || a.r.batchId - b.r.batchId);
  const rows: Array<{ r: StoredProgress; at: number } | { gapAt: number }> = [];
  for (const [i, e] of sorted.entries()) {
    const prev = sorted[i - 1];
    if (prev && e.at - prev.at > GAP_INTERVALS * opts.intervalMs) rows.push({ gapAt: (prev.at + e.at) / 2 });
    rows.push(e);
  }
  const x = rows.map((e) => ('gapAt' in e ? e.gapAt : e.at) / 1000);
  const col = (f: (r: StoredProgress, at: number) => number | null) => rows.map((e) => ('gapAt' in e ? null : f(e.r, e.at)));
  const charts: ReportChart[] = [
    timeChart(
      'rates',
      'Input rate vs processing rate',
      'rows/s',
      x,
      [
        { label: 'input rows/s', color: COLORS.blue, values: col((r) => num(r.inputRowsPerSecond)) },
        { label: 'processed rows/s', color: COLORS.orange, values: col((r) => num(r.processedRowsPerSecond)) },
      ],
      'Processing slower than input, batch after batch, means the query falls behind.',
    ),
    timeChart(
      'duration',
      'Batch duration vs the schedule interval',
      's',
      x,
      [
        { label: 'batch duration (s)', color: COLORS.blue, values: col((r) => secs(num(r.batchDuration) ?? num(r.durationMs?.triggerExecution))) },
        { label: `schedule interval (${formatLateness(opts.intervalMs)})`, color: COLORS.red, reference: true, values: col(() => opts.intervalMs / 1000) },
      ],
      'A run whose batches take longer than the interval is still running when the next one is due.',
    ),
    timeChart(
      'lag',
      'Watermark lag behind wall clock',
      'min',
      x,
      [
        {
          label: 'batch time − watermark (min)',
          color: COLORS.purple,
          values: col((r, at) => {
            const wm = isoMs(r.eventTime?.watermark);
            // The epoch is Spark's "no watermark yet".
            return wm === null || wm <= 0 ? null : (at - wm) / 60_000;
          }),
        },
        { label: 'Kinesis: behind latest (min)', color: COLORS.brown, values: col((r) => minutes(maxOf(r.sources, (s) => s?.metrics?.millisBehindLatest))) },
      ],
      'The watermark delay plus how far the data itself lags; a growing lag means results come later and later.',
    ),
    timeChart(
      'state',
      'State rows',
      'rows',
      x,
      [
        { label: 'total', color: COLORS.blue, values: col((r) => sumOf(r.stateOperators, (o) => o.numRowsTotal)) },
        { label: 'updated', color: COLORS.green, values: col((r) => sumOf(r.stateOperators, (o) => o.numRowsUpdated)) },
        { label: 'removed', color: COLORS.red, values: col((r) => sumOf(r.stateOperators, (o) => o.numRowsRemoved)) },
      ],
      'Total rows that only ever grow point to a watermark too generous or state without a bound.',
    ),
    timeChart(
      'late',
      'Late rows and dead letters',
      'rows',
      x,
      [
        { label: 'dropped by watermark', color: COLORS.orange, values: col((r) => sumOf(r.stateOperators, (o) => o.numRowsDroppedByWatermark)) },
        { label: 'late rows kept', color: COLORS.purple, values: col((r) => num(r.sluice?.numLateRowsKept)) },
        // Records before the progress record of Spark's shape kept the count at the top level.
        {
          label: 'dead letters',
          color: COLORS.red,
          values: col((r) => num(r.sluice?.numDeadLetters) ?? num((r as { numDeadLetters?: unknown }).numDeadLetters)),
        },
      ],
      'Rows the watermark rejected, and input that could not be read (kept as dead letters).',
    ),
    timeChart(
      'backlog',
      'Backlog left after each batch',
      'files / records',
      x,
      [
        { label: 'files waiting', color: COLORS.blue, values: col((r) => sumOf(r.sources, (s) => s?.metrics?.files)) },
        { label: 'records waiting', color: COLORS.green, values: col((r) => sumOf(r.sources, (s) => s?.metrics?.records)) },
        { label: 'MiB waiting', color: COLORS.teal, rightAxis: true, values: col((r) => mib(sumOf(r.sources, (s) => s?.metrics?.bytes))) },
      ],
      'What the source still held when the batch ended; it should fall to zero by the end of each run.',
      'MiB',
    ),
  ];
  if (opts.lateness) charts.push(latenessChart(opts.lateness));
  return charts;
}

const secs = (ms: number | null) => (ms === null ? null : ms / 1000);
const minutes = (ms: number | null) => (ms === null ? null : ms / 60_000);
const mib = (bytes: number | null) => (bytes === null ? null : bytes / (1024 * 1024));

function maxOf<T>(items: readonly T[] | undefined, pick: (item: T) => unknown): number | null {
  if (!Array.isArray(items)) return null;
  let best: number | null = null;
  for (const item of items) {
    const v = num(pick(item));
    if (v !== null && (best === null || v > best)) best = v;
  }
  return best;
}

function timeChart(id: string, title: string, unit: string, x: number[], all: ReportSeries[], about: string, rightUnit?: string): ReportChart {
  // A reference line alone is not data: the chart needs at least one measured series.
  const series = all.filter((s) => s.values.some((v) => v !== null));
  const measured = series.some((s) => !s.reference);
  if (!measured) {
    return {
      id,
      title,
      unit,
      kind: 'time',
      x: [],
      series: [],
      note: x.length === 0 ? 'No progress records.' : 'None of the retained records has these figures (records written by an older sluice).',
    };
  }
  return { id, title, unit, kind: 'time', x, series, note: about, ...(series.some((s) => s.rightAxis) && rightUnit ? { rightUnit } : {}) };
}

function latenessChart(l: LatenessSection): ReportChart {
  const h = l.histogram;
  const p = l.stats.percentiles;
  const note =
    `${l.stats.count} rows of ${l.source}: p50 ${formatLateness(p.p50)}, p90 ${formatLateness(p.p90)}, p99 ${formatLateness(p.p99)}, ` +
    `p99.9 ${formatLateness(p.p999)}, max ${formatLateness(p.max)} (nearest rank)${h.above ? `; ${h.above} rows above p99.9 not drawn` : ''}. ` +
    `Recommended: withWatermark('${l.column}', '${l.stats.recommendedDelay}').`;
  return {
    id: 'lateness',
    title: `Lateness of ${l.column} (arrival − event time)`,
    unit: 'rows',
    kind: 'bars',
    x: h.counts.map((_, i) => (h.edgesMs[i] + h.edgesMs[i + 1]) / 2 / 60_000),
    series: [{ label: 'rows', color: COLORS.blue, values: [...h.counts] }],
    note,
  };
}

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The whole report as one HTML document. */
export function buildReport(records: readonly StoredProgress[], opts: ReportOptions): string {
  const charts = reportCharts(records, opts);
  const last = records[records.length - 1];
  const name = last?.name ?? '';
  const first = records[0];
  const span = first && last ? `batches ${first.batchId}–${last.batchId}, ${first.timestamp} to ${last.timestamp}` : 'no batches';
  const runs = new Set(records.map((r) => r.runId).filter(Boolean)).size;
  const title = `sluice report${name ? `: ${name}` : ''}`;
  const summary = `${records.length} retained progress records (${span}${runs ? `, ${runs} runs` : ''}) of ${opts.checkpoint}; schedule interval ${formatLateness(opts.intervalMs)}; made ${new Date(opts.generatedAtMs).toISOString()}.`;
  const sections = charts
    .map(
      (c) =>
        `<section class="chart" id="chart-${c.id}"><h2>${escapeHtml(c.title)}</h2>${c.note ? `<p class="note">${escapeHtml(c.note)}</p>` : ''}${c.series.length ? `<div class="plot" data-chart="${c.id}"></div>` : '<p class="empty">nothing to plot</p>'}</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${opts.assets.uplotCss}</style>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 0 0 2px; }
.summary { color: #555; margin: 0 0 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
.chart { border: 1px solid #ddd; border-radius: 6px; padding: 10px 12px; }
.note { color: #666; font-size: 12px; margin: 0 0 6px; }
.empty { color: #999; font-style: italic; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="summary">${escapeHtml(summary)}</p>
<div class="grid">
${sections}
</div>
<script id="sluice-report-data" type="application/json">${scriptJson({ charts })}</script>
<script>${opts.assets.uplotJs.replace(/<\/script/gi, '<\\/script')}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** Draws each chart with uPlot; `window.sluiceCharts` lists them (id and the uPlot instance) for tests and the console. */
const PAGE_SCRIPT = `
(function () {
  var spec = JSON.parse(document.getElementById('sluice-report-data').textContent);
  var drawn = [];
  // The time axis in UTC: ticks at least 90 px apart (uPlot picks the step), each label at most
  // "2026-12-01" wide (about 70 px), so labels cannot overlap. A step of a day or more shows the
  // date; a shorter one the time, with the date under the first tick of each day.
  var pad = function (n) { return (n < 10 ? '0' : '') + n; };
  var TIME_AXIS = {
    space: 90,
    size: 56,
    values: function (u, splits, axisIdx, space, incr) {
      var lastDay = null;
      return splits.map(function (ts) {
        var d = new Date(ts * 1e3);
        var day = d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());
        if (incr >= 86400) return day;
        var time = pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + (incr < 60 ? ':' + pad(d.getUTCSeconds()) : '');
        var label = day === lastDay ? time : time + '\\n' + day;
        lastDay = day;
        return label;
      });
    }
  };
  spec.charts.forEach(function (c) {
    var el = document.querySelector('[data-chart="' + c.id + '"]');
    if (!el || !c.series.length) return;
    var bars = c.kind === 'bars';
    var series = [{ label: bars ? 'minutes late' : 'time' }].concat(c.series.map(function (s) {
      var o = { label: s.label, stroke: s.color, width: 2, spanGaps: false, scale: s.rightAxis ? 'right' : 'y' };
      if (s.reference) { o.dash = [6, 4]; o.points = { show: false }; }
      else if (!bars) { o.points = { show: true, size: 5 }; }
      if (bars) { o.fill = s.color + '99'; o.paths = uPlot.paths.bars({ size: [0.9, 60] }); o.points = { show: false }; }
      return o;
    }));
    var axes = [
      bars ? { label: 'minutes late', values: function (u, v) { return v.map(function (x) { return +x.toFixed(2); }); } } : TIME_AXIS,
      { label: c.unit, scale: 'y', size: 60 }
    ];
    if (c.rightUnit) axes.push({ label: c.rightUnit, scale: 'right', side: 1, grid: { show: false }, size: 60 });
    var scales = { x: { time: !bars }, y: { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.1 : 1]; } } };
    if (c.rightUnit) scales.right = { range: function (u, min, max) { return [Math.min(0, min), max > 0 ? max * 1.1 : 1]; } };
    var width = Math.max(320, el.clientWidth || 520);
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    // Times in UTC, as the records and the summary write them.
    var utc = function (ts) { return uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'); };
    var plot = new uPlot({ width: width, height: 240, tzDate: utc, series: series, axes: axes, scales: scales, legend: { live: true } }, data, el);
    drawn.push({ id: c.id, plot: plot });
  });
  window.sluiceCharts = drawn;
})();
`;
