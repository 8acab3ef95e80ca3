/**
 * The report builder (lib/observe/report.ts) without a browser: which series each chart gets
 * from records of both shapes (the current one, and the thin one older runs wrote), the gaps,
 * the charts that have nothing to show, and a page that embeds everything it needs.
 * test/integration/report.test.ts renders the page in Chromium.
 */
import { GAP_INTERVALS, buildReport, reportCharts, type StoredProgress } from '../../lib/observe/report';
import { latenessHistogram, latenessStats } from '../../lib/observe/lateness';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 1, 12);
const ASSETS = { uplotJs: 'window.uPlot = function () {}; /* </script> inside the library text */', uplotCss: '.uplot { display: block }' };

/** A record of the current shape for batch i at T0 + i·15 min. */
function full(i: number, over: Partial<StoredProgress> = {}): StoredProgress {
  return {
    batchId: i,
    timestamp: new Date(T0 + i * 15 * MIN).toISOString(),
    name: 'totals',
    runId: `r${i}`,
    inputRowsPerSecond: 10 * i,
    processedRowsPerSecond: 100 + i,
    batchDuration: 2000 + i,
    eventTime: { watermark: new Date(T0 + i * 15 * MIN - 10 * MIN).toISOString() },
    stateOperators: [
      {
        operatorName: 'stateStoreSave',
        numRowsTotal: 5,
        numRowsUpdated: 2,
        numRowsRemoved: 1,
        numRowsDroppedByWatermark: i,
        commitTimeMs: 1,
        memoryUsedBytes: 1,
      },
      { operatorName: 'dedupe', numRowsTotal: 7, numRowsUpdated: 3, numRowsRemoved: 0, numRowsDroppedByWatermark: 1, commitTimeMs: 1, memoryUsedBytes: 1 },
    ],
    sources: [
      {
        description: 'kinesis://s',
        startOffset: null,
        endOffset: null,
        latestOffset: null,
        numInputRows: 1,
        inputRowsPerSecond: 1,
        processedRowsPerSecond: 1,
        metrics: { records: 100 - i, millisBehindLatest: i * MIN },
      },
    ],
    sluice: { replay: false, noData: false, numDeadLetters: 1, numLateRowsKept: 0 },
    ...over,
  } as StoredProgress;
}

/** What sluice wrote before the record took Spark's shape. */
function thin(i: number): StoredProgress {
  return {
    batchId: i,
    timestamp: new Date(T0 + i * 15 * MIN).toISOString(),
    batchDuration: 3000,
    durationMs: { triggerExecution: 3000 },
    eventTime: { watermark: '1970-01-01T00:00:00.000Z' },
    stateOperators: [{ numRowsTotal: 4, numRowsDroppedByWatermark: 0 }],
    numDeadLetters: 2,
  } as unknown as StoredProgress;
}

const byId = (charts: ReturnType<typeof reportCharts>) => Object.fromEntries(charts.map((c) => [c.id, c]));
const values = (chart: { series: { label: string; values: (number | null)[] }[] }, label: string) => chart.series.find((s) => s.label === label)?.values;

describe('the report charts', () => {
  it('sum the state operators and sources, and leave a gap where an older record lacks a figure', () => {
    const charts = byId(reportCharts([full(0), thin(1), full(2)], { intervalMs: 15 * MIN }));
    expect(charts.rates.x).toEqual([0, 1, 2].map((i) => (T0 + i * 15 * MIN) / 1000));
    expect(values(charts.rates, 'input rows/s')).toEqual([0, null, 20]);
    expect(values(charts.duration, 'batch duration (s)')).toEqual([2, 3, 2.002]);
    expect(values(charts.duration, 'schedule interval (15m)')).toEqual([900, 900, 900]);
    expect(values(charts.state, 'total')).toEqual([12, 4, 12]);
    expect(values(charts.state, 'updated')).toEqual([5, null, 5]);
    expect(values(charts.late, 'dropped by watermark')).toEqual([1, 0, 3]);
    expect(values(charts.late, 'dead letters')).toEqual([1, 2, 1]);
    // the epoch is "no watermark yet", not a lag of 56 years
    expect(values(charts.lag, 'batch time − watermark (min)')).toEqual([10, null, 10]);
    expect(values(charts.lag, 'Kinesis: behind latest (min)')).toEqual([0, null, 2]);
    expect(values(charts.backlog, 'records waiting')).toEqual([100, null, 98]);
  });

  it(`break every line between two records more than ${GAP_INTERVALS} schedule intervals apart, and only there`, () => {
    // Batches 0 and 1 of one run, 15 minutes to batch 2 (connected), then 31 minutes: runs were missed.
    const at = [0, 0.1, 15, 15 + GAP_INTERVALS * 15 + 1];
    const records = at.map((m, i) => ({ ...full(i), timestamp: new Date(T0 + m * MIN).toISOString() }));
    const charts = byId(reportCharts(records, { intervalMs: 15 * MIN }));
    const gapAt = (T0 + ((15 + at[3]) / 2) * MIN) / 1000;
    expect(charts.rates.x).toEqual([...at.slice(0, 3).map((m) => (T0 + m * MIN) / 1000), gapAt, (T0 + at[3] * MIN) / 1000]);
    for (const c of Object.values(charts).filter((c) => c.kind === 'time'))
      for (const s of c.series) expect({ chart: c.id, series: s.label, atGap: s.values[3] }).toEqual({ chart: c.id, series: s.label, atGap: null });
    expect(values(charts.rates, 'input rows/s')).toEqual([0, 10, 20, null, 30]);
    // exactly GAP_INTERVALS intervals apart is still one line
    const even = byId(reportCharts([full(0), { ...full(1), timestamp: new Date(T0 + GAP_INTERVALS * 15 * MIN).toISOString() }], { intervalMs: 15 * MIN }));
    expect(even.rates.x).toHaveLength(2);
  });

  it('leave out series no record has, and say so for a chart left with nothing', () => {
    const charts = byId(reportCharts([thin(0), thin(1)], { intervalMs: 15 * MIN }));
    expect(charts.rates.series).toEqual([]);
    expect(charts.rates.note).toMatch(/older sluice/);
    expect(charts.backlog.series).toEqual([]);
    // the interval line alone is no chart: a measured duration is there, so the chart is kept
    expect(charts.duration.series.map((s) => s.label)).toEqual(['batch duration (s)', 'schedule interval (15m)']);
    expect(charts.state.series.map((s) => s.label)).toEqual(['total']);
    expect(charts.lateness).toBeUndefined();
  });

  it('add the lateness histogram when given one', () => {
    const sample = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((m) => m * MIN);
    const charts = byId(
      reportCharts([full(0)], {
        intervalMs: 15 * MIN,
        lateness: { source: 's3://b/l', column: 'event_time', stats: latenessStats(sample), histogram: latenessHistogram(sample, 5) },
      }),
    );
    expect(charts.lateness.kind).toBe('bars');
    // bins of 2 minutes from 0 to p99.9 (10 minutes): their middles, and the rows in each
    expect(charts.lateness.x).toEqual([1, 3, 5, 7, 9]);
    expect(charts.lateness.series[0].values).toEqual([1, 2, 2, 2, 3]);
    expect(charts.lateness.note).toContain("withWatermark('event_time', '10 minutes')");
  });
});

describe('the page', () => {
  it('embeds the library, its stylesheet and the data, and nothing can close a script early', () => {
    const html = buildReport([full(0), full(1, { name: 'x</script><b>' })], {
      intervalMs: 15 * MIN,
      checkpoint: 's3://b/c',
      generatedAtMs: T0,
      assets: ASSETS,
    });
    expect(html).toContain('.uplot { display: block }');
    expect(html).toContain('/* <\\/script> inside the library text */');
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).toContain('sluice report: x&lt;/script&gt;&lt;b&gt;');
    const data = JSON.parse(/<script id="sluice-report-data" type="application\/json">([^<]*)<\/script>/.exec(html)![1]) as { charts: { id: string }[] };
    expect(data.charts.map((c) => c.id)).toEqual(['rates', 'duration', 'lag', 'state', 'late', 'backlog']);
    expect(html).not.toMatch(/<script[^>]+src=|<link /);
  });
});
