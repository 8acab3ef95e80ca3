/**
 * The stream-stream join of docs/writing-queries.md ("Stream-stream joins"): the exact query it shows,
 * run twice on the in-memory ports (one landing source per input), and the rows the sink receives
 * per batch, the watermark, the buffered rows and the late rows, all derived by hand below; then
 * the same with option('multipleWatermarkPolicy', 'max'), which the page describes. The last
 * test checks that the page prints this query and these rows and no others.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { RunReport } from '../../lib/engine/run/types';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { readStream } from '../../lib/engine/query/reader';
import type { OutputRow } from '../../lib/engine/ports';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';

// ---- the query of docs/writing-queries.md, as printed there
const impressions = readStream
  .format('json')
  .schema('adId STRING, impressionTime TIMESTAMP')
  .load('s3://my-bucket/impressions/')
  .withWatermark('impressionTime', '10 seconds');
const clicks = readStream
  .format('json')
  .schema('clickAdId STRING, clickTime TIMESTAMP')
  .load('s3://my-bucket/clicks/')
  .withWatermark('clickTime', '20 seconds');
const adClicks = impressions.join(clicks, { left: 'adId', right: 'clickAdId' }, 'leftOuter', {
  // a click at most a minute after its impression: clickTime - 1 minute <= impressionTime <= clickTime
  timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-1 minute', upper: '0 seconds' },
  name: 'clicks',
});
const plan = adClicks.writeStream.outputMode('append').queryName('ad-clicks').plan();
// ---- and with the page's one change: the watermark follows the faster input
const maxPlan = adClicks.writeStream.option('multipleWatermarkPolicy', 'max').outputMode('append').queryName('ad-clicks').plan();

const at = (mmss: string) => `2026-10-01 12:${mmss}`;
const iso = (mmss: string) => `2026-10-01T12:${mmss}.000Z`;
const impression = (adId: string, mmss: string) => ({ adId, impressionTime: at(mmss) });
const click = (clickAdId: string, mmss: string) => ({ clickAdId, clickTime: at(mmss) });
const joined = (adId: string, shown: string, clicked: string) => ({ adId, impressionTime: iso(shown), clickAdId: adId, clickTime: iso(clicked) });
const unclicked = (adId: string, shown: string) => ({ adId, impressionTime: iso(shown), clickAdId: null, clickTime: null });

/** The two inputs' landing files of each run. */
const RUNS = [
  { impressions: [impression('a1', '00:00'), impression('a2', '00:10'), impression('a3', '00:20')], clicks: [click('a1', '00:45'), click('a3', '00:15')] },
  { impressions: [impression('a4', '01:30'), impression('a5', '00:05')], clicks: [click('a2', '01:20'), click('a4', '01:50')] },
];

/*
 * Derived by hand. The left state watermark removes an impression once impressionTime <= E − 1 min
 * − 1 ms, the right one a click once clickTime <= E − 0 s − 1 ms, E the batch's watermark.
 *
 * Run 1, batch 0 (E = 0, nothing late): the impressions a1, a2, a3 are buffered; the click a1@00:45
 * matches a1@00:00 (11:59:45 <= 12:00:00 <= 12:00:45); a3@00:15 came before its impression
 * (12:00:20 > 12:00:15), no match. Both clicks are buffered. The inputs' watermarks: impressions
 * 00:20 − 10 s = 00:10, clicks 00:45 − 20 s = 00:25; the global one is their minimum, 12:00:10.
 * Batch 1 (no data, E = 00:10) removes nothing (no impression at or before 11:59:09.999, no click
 * at or before 12:00:09.999): 5 rows buffered.
 *
 * Run 2, batch 2 (E = 00:10, late at or before 00:10): a5@00:05 is late and dropped; a4@01:30 is
 * buffered; the click a2@01:20 is more than a minute after a2@00:10 (12:00:20 > 12:00:10), no match;
 * a4@01:50 matches a4@01:30. Watermarks: impressions 01:30 − 10 s = 01:20, clicks 01:50 − 20 s =
 * 01:30; global 12:01:20. Batch 3 (no data, E = 01:20): impressions at or before 12:00:19.999 leave:
 * a1 (matched, silently) and a2 (never matched: its row with nulls); a3@00:20 stays, 1 ms short.
 * Clicks at or before 12:01:19.999 leave: a3@00:15, a1@00:45; a2@01:20 stays. Left buffered: a3,
 * a4 (impressions), a2, a4 (clicks).
 */
const EXPECTED = [
  { batches: [[joined('a1', '00:00', '00:45')], []], watermark: iso('00:10'), stateRows: 5, dropped: 0 },
  { batches: [[joined('a4', '01:30', '01:50')], [unclicked('a2', '00:10')]], watermark: iso('01:20'), stateRows: 4, dropped: 1 },
];

/*
 * With multipleWatermarkPolicy max the global watermark is the larger of the two: 12:00:25 after
 * run 1 (so batch 1 removes the click a3@00:15, at or before 12:00:24.999, no impression: none at
 * or before 11:59:24.999), 12:01:30 after run 2. Batch 2 (late at or before 00:25) drops a5@00:05
 * and emits a4 as before; batch 3 (E = 01:30) removes the impressions at or before 12:00:29.999:
 * a1 (matched), a2 and a3 (never matched: both with nulls), and the clicks at or before
 * 12:01:29.999: a1, a2. Left: impression a4, click a4.
 */
const EXPECTED_MAX = [
  { batches: [[joined('a1', '00:00', '00:45')], []], watermark: iso('00:25'), stateRows: 4, dropped: 0 },
  { batches: [[joined('a4', '01:30', '01:50')], [unclicked('a2', '00:10'), unclicked('a3', '00:20')]], watermark: iso('01:30'), stateRows: 2, dropped: 1 },
];

async function runTwice(q: QueryPlan): Promise<RunReport[]> {
  const sources = [new InMemoryFileSource(q.source.schema), new InMemoryFileSource(q.inputs![0].source.schema)];
  const checkpoint = new InMemoryCheckpoint();
  const state = new InMemoryStateStore();
  const sink = new InMemorySink();
  const reports: RunReport[] = [];
  for (const [i, run] of RUNS.entries()) {
    sources[0].add(`impressions-${i}.json`, run.impressions);
    sources[1].add(`clicks-${i}.json`, run.clicks);
    const [source, ...inputSources] = sources;
    reports.push(await new MicroBatchExecutor({ plan: q, source, inputSources, checkpoint, state, sink }).run({ collectRows: true }));
  }
  return reports;
}

/** A batch's rows by adId: within a batch, rows come in no defined order. */
const byAd = (rows: readonly OutputRow[]) => [...rows].sort((a, b) => String(a.adId).localeCompare(String(b.adId)));

describe.each([
  ['min (the default)', plan, EXPECTED],
  ['max', maxPlan, EXPECTED_MAX],
] as const)('the documented stream-stream join (impressions leftOuter clicks within a minute), watermark policy %s', (_policy, query, expected) => {
  let reports: RunReport[];
  beforeAll(async () => {
    reports = await runTwice(query);
  });

  it.each([1, 2])('run %d: the sink receives the matches at once and an unmatched impression when the watermark passes it', (run) => {
    const i = run - 1;
    const report = reports[i];
    expect(report.batches.map((b) => byAd(b.rows))).toEqual(expected[i].batches);
    expect(report.batches.map((b) => b.noData)).toEqual([false, true]);
    expect(report.watermark).toBe(expected[i].watermark);
    expect(report.stateRows).toBe(expected[i].stateRows);
    expect(report.droppedByWatermark).toBe(expected[i].dropped);
  });

  it('numbers the batches across runs: 0 and 1, then 2 and 3', () => {
    expect(reports.map((r) => r.batches.map((b) => b.batchId))).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});

describe("docs/writing-queries.md's Stream-stream joins section", () => {
  it('prints this query and exactly these rows in docs/writing-queries.md', () => {
    const page = readFileSync(join(__dirname, '../../docs/writing-queries.md'), 'utf8');
    const start = page.indexOf('## Stream-stream joins');
    expect(start).toBeGreaterThanOrEqual(0);
    const next = page.indexOf('\n## ', start + 1);
    const section = page.slice(start, next < 0 ? undefined : next);
    const query = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    for (const line of [
      "readStream.format('json').schema('adId STRING, impressionTime TIMESTAMP').load('s3://my-bucket/impressions/')",
      ".withWatermark('impressionTime', '10 seconds');",
      "readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load('s3://my-bucket/clicks/')",
      ".withWatermark('clickTime', '20 seconds');",
      ".join(clicks, { left: 'adId', right: 'clickAdId' }, 'leftOuter', {",
      "timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-1 minute', upper: '0 seconds' },",
      ".writeStream.outputMode('append').queryName('ad-clicks').plan();",
    ])
      expect(query).toContain(line);
    const block = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const expectedRows = EXPECTED.flatMap((run) => run.batches.flat());
    for (const row of expectedRows) expect(block).toContain(JSON.stringify(row));
    expect(block.match(/\{"adId"/g)?.length).toBe(expectedRows.length);
    // the max policy's paragraph: the option as written, and the rows it adds in run 2
    expect(section).toContain(".writeStream.option('multipleWatermarkPolicy', 'max')");
    const extra = EXPECTED_MAX[1].batches[1].filter((r) => !EXPECTED[1].batches[1].some((x) => x.adId === r.adId));
    expect(extra.map((r) => r.adId)).toEqual(['a3']);
  });
});
