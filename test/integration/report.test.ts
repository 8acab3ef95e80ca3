/**
 * `sluice report` end to end: progress records with known figures in a real S3 checkpoint on the
 * test stack (written with S3CheckpointStore, as the executor writes them), the command run as a
 * user runs it, and the HTML it wrote opened in headless Chromium (Debian's, through
 * playwright-core) from a file with every request other than the file itself refused. Each chart
 * must hold the figures of the records (a gap where an older record lacks one) and have painted
 * its series' colour on its canvas; the page is saved as .sluice/test-artifacts/report.png
 * (docs/report.png, shown in the README, with SLUICE_UPDATE_SCREENSHOT=1).
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { chromium, type BrowserContext } from 'playwright-core';
import { S3CheckpointStore } from '../../lib/aws/s3/checkpoint';
import type { Json } from '../../lib/engine/ports';
import type { StreamingProgress } from '../../lib/engine/progress';
import { ensureBucket } from '../../lib/local/resources';
import { GAP_INTERVALS, buildReport, type StoredProgress } from '../../lib/observe/report';
import { cliEnv, runCli } from '../helpers/cli';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
// The README's picture is refreshed on request (SLUICE_UPDATE_SCREENSHOT=1), so a test run does not
// rewrite a committed file; every run saves its screenshot under .sluice/ to look at.
const SCREENSHOT =
  process.env.SLUICE_UPDATE_SCREENSHOT === '1'
    ? join(__dirname, '..', '..', 'docs', 'report.png')
    : join(__dirname, '..', '..', '.sluice', 'test-artifacts', 'report.png');

const MIN = 60_000;
const INTERVAL_MS = 15 * MIN;
const BATCHES = 24;
/** The one record in the old, thin shape (before the progress record had Spark's fields). */
const THIN = 10;
const T0 = Date.UTC(2026, 10, 30, 6, 0, 0);
const MIB = 1024 * 1024;

/** The figures of batch i, by simple formulas the test checks the page against. */
const figures = (i: number) => ({
  at: T0 + i * INTERVAL_MS,
  inputRate: 40 + 3 * i,
  processedRate: 300 - 5 * i,
  durationMs: 60_000 + i * 25_000,
  lagMs: (10 + (i % 6)) * MIN,
  stateTotal: 5000 + 400 * i,
  stateUpdated: 300 + 20 * (i % 5),
  stateRemoved: 100 + 10 * (i % 3),
  dropped: i % 4,
  lateKept: i % 4 === 1 ? 2 : 0,
  deadLetters: i % 7 === 3 ? 3 : 0,
  files: Math.max(0, 20 - i),
  mib: 10 * ((i % 5) + 1),
});

function progressRecord(i: number): Json {
  const f = figures(i);
  const timestamp = new Date(f.at).toISOString();
  const watermark = new Date(f.at - f.lagMs).toISOString();
  if (i === THIN) {
    // What sluice wrote before the record took Spark's shape: no rates, two state figures, the dead letters at the top.
    return {
      id: 'q-1',
      name: 'windowed-totals',
      timestamp,
      batchId: i,
      batchDuration: f.durationMs,
      numInputRows: 100,
      processedRowsPerSecond: f.processedRate,
      durationMs: { triggerExecution: f.durationMs },
      eventTime: { watermark },
      stateOperators: [{ operatorName: 'aggregate', numRowsTotal: f.stateTotal, numRowsDroppedByWatermark: f.dropped }],
      sources: [{ description: 's3://x/landing', startOffset: null, endOffset: null, numInputRows: 100, inputBytes: 1000 }],
      sink: { description: 's3://x/out', numOutputRows: 5 },
      numDeadLetters: f.deadLetters,
      replay: false,
    };
  }
  const p: StreamingProgress = {
    id: 'q-1',
    runId: `run-${Math.floor(i / 2)}`,
    name: 'windowed-totals',
    timestamp,
    batchId: i,
    batchDuration: f.durationMs,
    numInputRows: Math.round(f.inputRate * 900),
    inputRowsPerSecond: f.inputRate,
    processedRowsPerSecond: f.processedRate,
    durationMs: { triggerExecution: f.durationMs, addBatch: f.durationMs / 2 },
    eventTime: { watermark },
    stateOperators: [
      {
        operatorName: 'stateStoreSave',
        numRowsTotal: f.stateTotal,
        numRowsUpdated: f.stateUpdated,
        numRowsRemoved: f.stateRemoved,
        numRowsDroppedByWatermark: f.dropped,
        commitTimeMs: 20,
        memoryUsedBytes: 1000,
      },
    ],
    sources: [
      {
        description: 's3://x/landing',
        startOffset: null,
        endOffset: null,
        latestOffset: null,
        numInputRows: 100,
        inputRowsPerSecond: f.inputRate,
        processedRowsPerSecond: f.processedRate,
        metrics: { files: f.files, bytes: f.mib * MIB },
      },
    ],
    sink: { description: 's3://x/out', numOutputRows: 5 },
    sluice: { replay: false, noData: false, numDeadLetters: f.deadLetters, numLateRowsKept: f.lateKept },
  };
  return p as unknown as Json;
}

/** What each chart must hold: its series' labels and values, from the formulas (null: the thin record lacks it). */
function expectedCharts(): Record<string, Record<string, (number | null)[]>> {
  const all = Array.from({ length: BATCHES }, (_, i) => i);
  const v = (pick: (f: ReturnType<typeof figures>) => number, thinToo = false) => all.map((i) => (i === THIN && !thinToo ? null : pick(figures(i))));
  return {
    rates: { 'input rows/s': v((f) => f.inputRate), 'processed rows/s': v((f) => f.processedRate, true) },
    duration: { 'batch duration (s)': v((f) => f.durationMs / 1000, true), 'schedule interval (15m)': all.map(() => 900) },
    lag: { 'batch time − watermark (min)': v((f) => f.lagMs / MIN, true) },
    state: { total: v((f) => f.stateTotal, true), updated: v((f) => f.stateUpdated), removed: v((f) => f.stateRemoved) },
    late: { 'dropped by watermark': v((f) => f.dropped, true), 'late rows kept': v((f) => f.lateKept), 'dead letters': v((f) => f.deadLetters, true) },
    backlog: { 'files waiting': v((f) => f.files), 'MiB waiting': v((f) => f.mib) },
  };
}

/** Lateness rows for the histogram: 3 objects of 100 rows, row j of object o at the exponential quantile (100·o + j + 0.5)/300, mean 8 minutes. */
const LATE_ROWS = 300;

describe('sluice report', () => {
  const { s3 } = testClients();
  let bucket: string;
  let dir: string;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    bucket = uniqueName('sluice-report');
    await ensureBucket(s3, bucket);
    dir = mkdtempSync(join(tmpdir(), 'sluice-report-'));
    const store = new S3CheckpointStore({ client: s3, bucket, prefix: 'ckpt/windowed-totals' });
    for (let i = 0; i < BATCHES; i++) {
      const at = figures(i).at;
      await store.writeOffsets({
        batchId: i,
        offsets: [{ lastKey: `f${i}` }],
        startOffsets: [i ? { lastKey: `f${i - 1}` } : null],
        batchWatermarkMs: at - figures(i).lagMs,
        batchTimestampMs: at,
        lateWatermarkMs: 0,
      });
      await store.writeProgress(i, progressRecord(i));
      await store.writeCommit({
        batchId: i,
        queryId: 'q-1',
        shapeFingerprint: 's',
        offsets: [{ lastKey: `f${i}` }],
        batchWatermarkMs: at - figures(i).lagMs,
        nextBatchWatermarkMs: at - figures(i).lagMs,
        committedAtMs: at + figures(i).durationMs,
      });
    }
    const now = Date.now();
    for (let o = 0; o < 3; o++) {
      const lines = Array.from({ length: 100 }, (_, j) =>
        JSON.stringify({ user: 'u', event_time: new Date(now - 30_000 - 8 * MIN * -Math.log(1 - (100 * o + j + 0.5) / LATE_ROWS)).toISOString(), amount: 1 }),
      );
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `landing/${o}.json`, Body: lines.join('\n') }));
    }
  });

  afterAll(async () => {
    await context?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes one offline HTML file whose every chart draws the records' figures", async () => {
    const out = join(dir, 'report.html');
    const r = await runCli(
      [
        'report',
        '--checkpoint',
        `s3://${bucket}/ckpt/windowed-totals`,
        '--source',
        `s3://${bucket}/landing`,
        '--lateness-column',
        'event_time',
        '--interval',
        '15m',
        '--out',
        out,
      ],
      cliEnv(testConnection(), 's3'),
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`(${BATCHES} batches`);
    const html = readFileSync(out, 'utf8');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!github\.com\/leeoniya)[a-z]/i);

    const profile = mkdtempSync(join(dir, 'profile-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 900 },
    });
    const requests: string[] = [];
    context.on('request', (req) => void requests.push(req.url()));
    await context.route('**/*', (route) => (route.request().url().startsWith('file://') ? route.continue() : route.abort()));
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(pathToFileURL(out).href);
    await page.waitForFunction(() => Array.isArray((globalThis as unknown as { sluiceCharts?: unknown[] }).sluiceCharts));

    const charts = await page.evaluate(() => {
      type Canvas2D = { canvas: { width: number; height: number }; getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
      type Plot = { data: (number | null)[][]; series: { label: string; stroke: unknown }[]; ctx: Canvas2D };
      const list = (globalThis as unknown as { sluiceCharts: { id: string; plot: Plot }[] }).sluiceCharts;
      return list.map(({ id, plot }) => {
        const canvas = plot.ctx.canvas;
        const img = plot.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        const painted = plot.series.slice(1).map((s, k) => {
          const stroke = typeof s.stroke === 'function' ? (s.stroke as (u: unknown, i: number) => string)(plot, k + 1) : String(s.stroke);
          const [r, g, b] = [1, 3, 5].map((at) => parseInt(stroke.slice(at, at + 2), 16));
          let n = 0;
          for (let p = 0; p < img.length; p += 4) {
            if (img[p + 3] > 250 && Math.abs(img[p] - r) < 8 && Math.abs(img[p + 1] - g) < 8 && Math.abs(img[p + 2] - b) < 8) n++;
          }
          return n;
        });
        return { id, labels: plot.series.slice(1).map((s) => s.label), data: plot.data, painted };
      });
    });
    expect(errors).toEqual([]);
    expect(charts.map((c) => c.id)).toEqual(['rates', 'duration', 'lag', 'state', 'late', 'backlog', 'lateness']);

    const expected = expectedCharts();
    for (const c of charts) {
      // every series painted its own colour: a chart that drew nothing fails here
      for (const [k, n] of c.painted.entries())
        expect({ chart: c.id, series: c.labels[k], painted: n > 30 }).toEqual({ chart: c.id, series: c.labels[k], painted: true });
      if (c.id === 'lateness') continue;
      expect(c.data[0]).toEqual(Array.from({ length: BATCHES }, (_, i) => figures(i).at / 1000));
      expect(c.labels).toEqual(Object.keys(expected[c.id]));
      c.labels.forEach((label, k) => expect({ chart: c.id, label, values: c.data[k + 1] }).toEqual({ chart: c.id, label, values: expected[c.id][label] }));
    }
    const hist = charts.find((c) => c.id === 'lateness')!;
    const counts = hist.data[1] as number[];
    expect(counts.length).toBeGreaterThan(10);
    // p99.9 of 300 rows is rank 300, the max: no row lies above the bins, which hold all 300
    expect(counts.reduce((a, b) => a + b, 0)).toBe(LATE_ROWS);

    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  }, 180_000);

  it("finds the checkpoint where `run` puts it by default: the query module's name under the source bucket", async () => {
    const store = new S3CheckpointStore({ client: s3, bucket, prefix: '_sluice/found-by-default/checkpoint' });
    for (let i = 0; i < 2; i++) {
      await store.writeOffsets({
        batchId: i,
        offsets: [{ lastKey: `f${i}` }],
        startOffsets: [null],
        batchWatermarkMs: 0,
        batchTimestampMs: figures(i).at,
        lateWatermarkMs: 0,
      });
      await store.writeProgress(i, progressRecord(i));
    }
    const module = join(dir, 'query.js');
    writeFileSync(
      module,
      `const { readStream, window, count } = require(${JSON.stringify(join(__dirname, '..', '..', 'lib', 'api', 'query'))});
module.exports.default = readStream.format('json').schema('user STRING, event_time TIMESTAMP').load('s3://${bucket}/landing')
  .withWatermark('event_time', '10 minutes').groupBy(window('event_time', '10 minutes')).agg(count().as('n'))
  .writeStream.outputMode('append').trigger({ availableNow: true }).queryName('found-by-default').plan();
`,
    );
    const out = join(dir, 'default.html');
    const r = await runCli(['report', module, '--out', out], cliEnv(testConnection(), 's3'));
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('(2 batches');
    expect(readFileSync(out, 'utf8')).toContain(`s3://${bucket}/_sluice/found-by-default/checkpoint`);
  });

  it('refuses a checkpoint without progress records, saying where it looked', async () => {
    const r = await runCli(['report', '--checkpoint', `s3://${bucket}/ckpt/nothing-here`, '--out', join(dir, 'x.html')], cliEnv(testConnection(), 's3'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`s3://${bucket}/ckpt/nothing-here holds no progress records`);
  });
});

/**
 * Runs with missed runs between them, over three days, drawn by the page in Chromium from
 * buildReport's HTML: each line breaks across a gap longer than GAP_INTERVALS schedule intervals
 * (no series paints the canvas halfway across it), and the time axis' labels, measured with the
 * canvas' own font, do not overlap.
 */
describe('the report over runs with gaps, across days', () => {
  const DAY = 24 * 60 * MIN;
  const D0 = Date.UTC(2026, 10, 28, 0, 0, 0);
  /** Three stretches of 15-minute runs: day 1 06:00-10:00, day 2 14:00-16:00, day 3 09:00-09:30. */
  const STRETCHES = [
    { from: D0 + 6 * 60 * MIN, runs: 17 },
    { from: D0 + DAY + 14 * 60 * MIN, runs: 9 },
    { from: D0 + 2 * DAY + 9 * 60 * MIN, runs: 3 },
  ];
  const times = STRETCHES.flatMap((s) => Array.from({ length: s.runs }, (_, k) => s.from + k * INTERVAL_MS));
  /** The two gaps' middles, in epoch seconds, where the page must leave each line open. */
  const gaps = STRETCHES.slice(1).map((s, k) => {
    const before = STRETCHES[k].from + (STRETCHES[k].runs - 1) * INTERVAL_MS;
    return (before + s.from) / 2 / 1000;
  });
  let context: BrowserContext | undefined;
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-report-gaps-'));
  });
  afterAll(async () => {
    await context?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('breaks every line across the gaps, and its time labels do not overlap', async () => {
    const records = times.map((at, i) => ({
      ...(progressRecord(i % BATCHES) as unknown as StoredProgress),
      batchId: i,
      timestamp: new Date(at).toISOString(),
    }));
    const html = buildReport(records, {
      intervalMs: INTERVAL_MS,
      checkpoint: 's3://b/ckpt',
      generatedAtMs: D0 + 3 * DAY,
      assets: {
        uplotJs: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
        uplotCss: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
      },
    });
    const file = join(dir, 'gaps.html');
    writeFileSync(file, html);
    expect(GAP_INTERVALS * INTERVAL_MS).toBeLessThan(Math.min(...gaps.map((g, k) => g * 1000 - (STRETCHES[k].from + (STRETCHES[k].runs - 1) * INTERVAL_MS))));

    context = await chromium.launchPersistentContext(mkdtempSync(join(dir, 'profile-')), {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1280, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => Array.isArray((globalThis as unknown as { sluiceCharts?: unknown[] }).sluiceCharts));

    const charts = await page.evaluate((gapXs) => {
      type Ctx = {
        canvas: { width: number; height: number };
        font: string;
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
        measureText(t: string): { width: number };
      };
      type Axis = { _splits?: number[]; _values?: string[]; font: string | [string, number] };
      type Plot = {
        data: (number | null)[][];
        series: { label: string; stroke: unknown; show: boolean }[];
        axes: Axis[];
        ctx: Ctx;
        bbox: { left: number; top: number; width: number; height: number };
        valToPos(v: number, scale: string, canvasPixels?: boolean): number;
      };
      const list = (globalThis as unknown as { sluiceCharts: { id: string; plot: Plot }[] }).sluiceCharts;
      return list
        .filter(({ id }) => id !== 'lateness')
        .map(({ id, plot }) => {
          // Pixels of a series' colour in a 5-px column of the plot area at x.
          const colourAt = (x: number, stroke: string) => {
            const [r, g, b] = [1, 3, 5].map((at) => parseInt(stroke.slice(at, at + 2), 16));
            const img = plot.ctx.getImageData(Math.round(x) - 2, plot.bbox.top, 5, plot.bbox.height).data;
            let n = 0;
            for (let p = 0; p < img.length; p += 4)
              if (img[p + 3] > 200 && Math.abs(img[p] - r) < 12 && Math.abs(img[p + 1] - g) < 12 && Math.abs(img[p + 2] - b) < 12) n++;
            return n;
          };
          const strokes = plot.series
            .slice(1)
            .map((s, k) => (typeof s.stroke === 'function' ? (s.stroke as (u: unknown, i: number) => string)(plot, k + 1) : String(s.stroke)));
          const x = plot.data[0] as number[];
          const gapIndex = gapXs.map((g) => x.indexOf(g));
          const nullAtGaps = plot.data.slice(1).map((values) => gapIndex.map((i) => (i < 0 ? 'no x' : values[i])));
          const paintedAtGaps = strokes.map((s) => gapXs.map((g) => colourAt(plot.valToPos(g, 'x', true), s)));
          // Beside a gap, inside a stretch (halfway between its first two runs), the line is drawn.
          const inside = x[0] + (x[1] - x[0]) / 2;
          const paintedInside = strokes.map((s, k) =>
            plot.data[k + 1][0] !== null && plot.data[k + 1][1] !== null ? colourAt(plot.valToPos(inside, 'x', true), s) : -1,
          );
          // The x axis' labels as drawn: centred on their ticks, each line measured in the axis font.
          const axis = plot.axes[0];
          plot.ctx.font = Array.isArray(axis.font) ? axis.font[0] : axis.font;
          const splits = axis._splits ?? [];
          const labels = axis._values ?? [];
          const boxes = splits.map((v, i) => {
            const w = Math.max(
              ...String(labels[i])
                .split('\n')
                .map((line) => plot.ctx.measureText(line).width),
            );
            const c = plot.valToPos(v, 'x', true);
            return { label: String(labels[i]), left: c - w / 2, right: c + w / 2 };
          });
          const overlaps = boxes
            .slice(1)
            .filter((b, i) => b.left < boxes[i].right + 4)
            .map((b, i) => `${boxes[i].label} | ${b.label}`);
          return { id, labels: plot.series.slice(1).map((s) => s.label), nullAtGaps, paintedAtGaps, paintedInside, ticks: labels, overlaps };
        });
    }, gaps);
    expect(errors).toEqual([]);
    expect(charts.map((c) => c.id)).toEqual(['rates', 'duration', 'lag', 'state', 'late', 'backlog']);
    for (const c of charts) {
      c.labels.forEach((label, k) => {
        expect({ chart: c.id, label, atGaps: c.nullAtGaps[k] }).toEqual({ chart: c.id, label, atGaps: [null, null] });
        expect({ chart: c.id, label, paintedAtGaps: c.paintedAtGaps[k] }).toEqual({ chart: c.id, label, paintedAtGaps: [0, 0] });
      });
      // the pixel probe finds a line where there is one (so the zeros above mean a gap)
      expect(c.paintedInside.filter((n) => n > 0).length).toBeGreaterThan(0);
      // the labels say which day: the dates of the three days appear
      expect({ chart: c.id, days: ['2026-11-28', '2026-11-29', '2026-11-30'].filter((d) => c.ticks.some((t) => t.includes(d))).length }).toEqual({
        chart: c.id,
        days: 3,
      });
      expect(c.ticks.length).toBeGreaterThanOrEqual(3);
      expect({ chart: c.id, overlaps: c.overlaps }).toEqual({ chart: c.id, overlaps: [] });
    }
    mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT, '..', 'report-gaps.png'), fullPage: true });
  }, 120_000);
});
