/**
 * The README's stream-stream join (Semantics, "Stream-stream joins"): the exact query it shows,
 * run twice on the in-memory ports (one landing source per input), and the rows the sink receives
 * per batch, the watermark, the buffered rows and the late rows, all derived by hand below. The
 * last test checks that the README prints these rows and no others.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MicroBatchExecutor, type RunReport } from '../../lib/engine/executor';
import { readStream, type QueryPlan } from '../../lib/engine/query';
import { InMemoryCheckpoint, InMemoryFileSource, InMemorySink, InMemoryStateStore } from '../../lib/engine/testing/memory';

// ---- the README's query, as printed there
const impressions = readStream.format('json').schema('adId STRING, impressionTime TIMESTAMP').load('s3://my-bucket/impressions/')
  .withWatermark('impressionTime', '10 seconds');
const clicks = readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load('s3://my-bucket/clicks/')
  .withWatermark('clickTime', '20 seconds');
const plan = impressions
  .join(clicks, { left: 'adId', right: 'clickAdId' }, 'leftOuter', {
    // a click at most a minute after its impression: clickTime - 1 minute <= impressionTime <= clickTime
    timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-1 minute', upper: '0 seconds' },
    name: 'clicks',
  })
  .writeStream.outputMode('append').queryName('ad-clicks').plan();
// ----

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

describe("the README's stream-stream join (impressions leftOuter clicks within a minute)", () => {
  let reports: RunReport[];
  beforeAll(async () => {
    reports = await runTwice(plan);
  });

  it.each([1, 2])('run %d: the sink receives the matches at once and an unmatched impression when the watermark passes it', (run) => {
    const i = run - 1;
    const report = reports[i];
    expect(report.batches.map((b) => b.rows)).toEqual(EXPECTED[i].batches);
    expect(report.batches.map((b) => b.noData)).toEqual([false, true]);
    expect(report.watermark).toBe(EXPECTED[i].watermark);
    expect(report.stateRows).toBe(EXPECTED[i].stateRows);
    expect(report.droppedByWatermark).toBe(EXPECTED[i].dropped);
  });

  it('numbers the batches across runs: 0 and 1, then 2 and 3', () => {
    expect(reports.map((r) => r.batches.map((b) => b.batchId))).toEqual([[0, 1], [2, 3]]);
  });

  it('prints this query and exactly these rows in the README', () => {
    const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Stream-stream joins'), readme.indexOf('\n## ', readme.indexOf('### Stream-stream joins')));
    const query = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    for (const line of [
      "readStream.format('json').schema('adId STRING, impressionTime TIMESTAMP').load('s3://my-bucket/impressions/')",
      ".withWatermark('impressionTime', '10 seconds');",
      "readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load('s3://my-bucket/clicks/')",
      ".withWatermark('clickTime', '20 seconds');",
      ".join(clicks, { left: 'adId', right: 'clickAdId' }, 'leftOuter', {",
      "timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-1 minute', upper: '0 seconds' },",
      ".writeStream.outputMode('append').queryName('ad-clicks').plan();",
    ]) expect(query).toContain(line);
    const block = /```text\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const expectedRows = EXPECTED.flatMap((run) => run.batches.flat());
    for (const row of expectedRows) expect(block).toContain(JSON.stringify(row));
    expect(block.match(/\{"adId"/g)?.length).toBe(expectedRows.length);
  });
});
