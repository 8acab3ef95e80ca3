/**
 * `sluice status`'s analysis (lib/observe/status.ts) on records built by hand: the verdicts, the
 * state trend and the table's cells. Every expected figure is worked out in the comments.
 */
import type { StreamingProgress } from '../../lib/engine/progress';
import { analyseStatus, batchCells, findings, groupRuns, renderStatus, stateTrend, STATUS_COLUMNS, STATUS_WIDTH } from '../../lib/observe/status';
import { DAY, HOUR, MINUTE, progressRecord } from '../helpers/progress-records';

const T0 = Date.parse('2026-11-20T00:00:00.000Z');
const INTERVAL = 15 * MINUTE;

/** One run per interval, each one batch of `rowsIn` rows taking a minute. */
function scheduledRuns(n: number, figures: (i: number) => Partial<Parameters<typeof progressRecord>[0]> = () => ({})): StreamingProgress[] {
  return Array.from({ length: n }, (_, i) =>
    progressRecord({ batchId: i, runId: `run-${i}`, startMs: T0 + i * INTERVAL, durationMs: MINUTE, rowsIn: 10, stateRows: 50, ...figures(i) }),
  );
}

describe('the verdict', () => {
  it('is healthy when runs are short, input arrives and state is flat', () => {
    const records = scheduledRuns(4);
    const a = analyseStatus(records, { nowMs: T0 + 3 * INTERVAL + 5 * MINUTE, intervalMs: INTERVAL });
    expect(a.verdict.kind).toBe('healthy');
    expect(a.findings).toEqual([]);
    // the last run took 1 minute of 15
    expect(a.verdict.text).toContain('1m of the 15m interval');
  });

  it('says falling behind when the last run took 80% of the interval or more', () => {
    // the last run: batch 3 from +45m for 6 minutes, batch 4 from +51m for 7 minutes: 13 minutes, 13/15 = 87%
    const records = [
      ...scheduledRuns(3),
      progressRecord({ batchId: 3, runId: 'slow', startMs: T0 + 45 * MINUTE, durationMs: 6 * MINUTE, rowsIn: 5, stateRows: 50 }),
      progressRecord({ batchId: 4, runId: 'slow', startMs: T0 + 51 * MINUTE, durationMs: 7 * MINUTE, rowsIn: 5, stateRows: 50 }),
    ];
    const a = analyseStatus(records, { nowMs: T0 + 59 * MINUTE, intervalMs: INTERVAL });
    expect(a.verdict.kind).toBe('falling-behind');
    expect(a.verdict.text).toBe('falling behind: the last run took 13m of the 15m interval (87%)');
    expect(a.runs[a.runs.length - 1].durationMs).toBe(13 * MINUTE);
  });

  it('is not falling behind at 70% of the interval (the threshold is 80%)', () => {
    // 10.5 minutes of 15 = 70%
    const records = scheduledRuns(3, (i) => (i === 2 ? { durationMs: 10.5 * MINUTE } : {}));
    expect(analyseStatus(records, { nowMs: T0 + 2 * INTERVAL + 11 * MINUTE, intervalMs: INTERVAL }).verdict.kind).toBe('healthy');
  });

  it('says falling behind when the backlog left grew from one run to the next', () => {
    const growing = scheduledRuns(3, (i) => ({ backlogFiles: [0, 2, 5][i] }));
    const a = analyseStatus(growing, { nowMs: T0 + 2 * INTERVAL + 2 * MINUTE, intervalMs: INTERVAL });
    expect(a.verdict).toMatchObject({ kind: 'falling-behind', text: 'falling behind: the backlog left grew from 2 to 5 over the last 2 runs' });
    const shrinking = scheduledRuns(3, (i) => ({ backlogFiles: [0, 5, 2][i] }));
    expect(analyseStatus(shrinking, { nowMs: T0 + 2 * INTERVAL + 2 * MINUTE, intervalMs: INTERVAL }).verdict.kind).toBe('healthy');
  });

  it('counts the scheduled runs since the last input by the clock', () => {
    // input in batch 1 at +15m; batches 2 and 3 read nothing; now is +62m: floor((62 - 15) / 15) = 3 runs
    const records = scheduledRuns(4, (i) => ({ rowsIn: i <= 1 ? 10 : 0 }));
    const a = analyseStatus(records, { nowMs: T0 + 62 * MINUTE, intervalMs: INTERVAL });
    expect(a.verdict).toMatchObject({ kind: 'no-input', runs: 3 });
    expect(a.verdict.text).toBe('no input for 3 runs of 15m (the last rows came in batch 1, 47m ago)');
  });

  it('counts runs seen without input when they came faster than the schedule', () => {
    // four runs a few seconds apart (by hand), the last two without input: 2 runs, though no interval passed
    const records = [0, 1, 2, 3].map((i) => progressRecord({ batchId: i, runId: `r${i}`, startMs: T0 + i * 5000, durationMs: 500, rowsIn: i < 2 ? 4 : 0 }));
    const a = analyseStatus(records, { nowMs: T0 + 30_000, intervalMs: INTERVAL });
    expect(a.verdict).toMatchObject({ kind: 'no-input', runs: 2 });
  });

  it('does not complain of one quiet run (two are needed)', () => {
    const records = scheduledRuns(3, (i) => ({ rowsIn: i === 2 ? 0 : 10 }));
    // the last input at +15m, now +31m: floor(16 / 15) = 1 run by the clock, 1 seen
    expect(analyseStatus(records, { nowMs: T0 + 31 * MINUTE, intervalMs: INTERVAL }).verdict.kind).toBe('healthy');
  });

  it('says failing when the newest batch has offsets, no commit, and is older than an interval', () => {
    const records = scheduledRuns(3);
    const now = T0 + 3 * INTERVAL + 40 * MINUTE;
    const tip = { latestOffsetBatch: 3, latestCommitBatch: 2, uncommittedStartMs: now - 40 * MINUTE };
    const a = analyseStatus(records, { nowMs: now, intervalMs: INTERVAL, tip });
    expect(a.verdict.kind).toBe('failing');
    expect(a.verdict.text).toMatch(/^failing: batch 3 has offsets but no commit \(planned 40m ago\)/);
    // the quiet time since is reported as well: the last input at +30m, now +85m: floor(55 / 15) = 3 runs
    expect(a.findings.map((f) => f.kind)).toEqual(['failing', 'no-input']);
  });

  it('says running, not failing, while the uncommitted batch is younger than the interval', () => {
    const records = scheduledRuns(3);
    const now = T0 + 2 * INTERVAL + 3 * MINUTE;
    const a = analyseStatus(records, {
      nowMs: now,
      intervalMs: INTERVAL,
      tip: { latestOffsetBatch: 3, latestCommitBatch: 2, uncommittedStartMs: now - 2 * MINUTE },
    });
    expect(a.verdict.kind).toBe('running');
    expect(a.verdict.text).toContain('batch 3 started 2m ago');
  });

  it('says so when there are no records', () => {
    expect(analyseStatus([], { nowMs: T0, intervalMs: INTERVAL }).verdict.kind).toBe('empty');
  });
});

describe('the state trend', () => {
  it('fits a line through the state rows against time, not the endpoints', () => {
    // days 0, 1, 2 with 100, 130, 120 rows: mean day 1, mean rows 116.667;
    // slope = ((-1)(-16.667) + 0 + (1)(3.333)) / 2 = 10 rows a day; at day 2 the line is 126.667: 7.895% a day
    const records = [100, 130, 120].map((rows, i) => progressRecord({ batchId: i, startMs: T0 + i * DAY, stateRows: rows, rowsIn: 1 }));
    const trend = stateTrend(records)!;
    expect(trend.points).toBe(3);
    expect(trend.spanMs).toBe(2 * DAY);
    expect(trend.rowsPerDay).toBeCloseTo(10, 9);
    expect(trend.fittedRows).toBeCloseTo(126.6667, 3);
    expect(trend.pctPerDay).toBeCloseTo((10 / 126.6667) * 100, 3);
  });

  it('reports state growing at or above the threshold (10% a day by default)', () => {
    // 6 batches 6 hours apart, 1000 rows + 50 a batch: 200 rows a day; the line ends at 1250: 16% a day
    const records = Array.from({ length: 6 }, (_, i) => progressRecord({ batchId: i, startMs: T0 + i * 6 * HOUR, stateRows: 1000 + 50 * i, rowsIn: 1 }));
    const now = T0 + 5 * 6 * HOUR + MINUTE;
    const found = findings(records, { nowMs: now, intervalMs: 6 * HOUR });
    expect(found).toHaveLength(1);
    expect(found[0].kind).toBe('state-growing');
    expect(found[0].pctPerDay).toBeCloseTo(16, 9);
    expect(found[0].text).toMatch(/^state growing 16\.0% a day \(200 rows a day on 1,250/);
    // at 20% a day it is quiet
    expect(findings(records, { nowMs: now, intervalMs: 6 * HOUR, stateGrowthPctPerDay: 20 })).toEqual([]);
  });

  it('is not fitted over less than 6 hours, nor over fewer than 3 batches', () => {
    const short = [1, 2, 3].map((rows, i) => progressRecord({ batchId: i, startMs: T0 + i * HOUR, stateRows: rows * 100 }));
    expect(stateTrend(short)).toBeNull();
    const two = [1, 2].map((rows, i) => progressRecord({ batchId: i, startMs: T0 + i * DAY, stateRows: rows * 100 }));
    expect(stateTrend(two)).toBeNull();
  });

  it('leaves out records without state figures (a stateless query has no trend)', () => {
    const stateless = [0, 1, 2].map((i) => progressRecord({ batchId: i, startMs: T0 + i * DAY }));
    expect(stateTrend(stateless)).toBeNull();
  });
});

describe('the table', () => {
  it('shows each figure of a batch, the lag as the batch start minus the watermark', () => {
    const r = progressRecord({
      batchId: 7,
      startMs: Date.parse('2026-11-20T10:15:00Z'),
      durationMs: 90_000,
      rowsIn: 1234,
      rowsOut: 56,
      watermarkMs: Date.parse('2026-11-20T10:00:00Z'),
      stateRows: 4321,
      late: 2,
      deadLetters: 1,
      backlogFiles: 3,
      backlogBytes: 3 * 1024 * 1024,
    });
    const cells = batchCells(analyseStatus([r], { nowMs: Date.parse('2026-11-20T10:20:00Z'), intervalMs: INTERVAL }).runs[0].batches[0]);
    expect(cells).toHaveLength(STATUS_COLUMNS.length);
    // 90 s of 15 minutes = 10%; lag 10:15 - 10:00 = 15 minutes
    // the start's date is in the run's heading, the watermark's year in the lines above the table
    expect(cells).toEqual(['7', '10:15:00', '1m 30s 10%', '1,234/56', '11-20 10:00:00', '15m', '4,321', '2/1', '3 files (3.0 MB)']);
  });

  it('shows – for what a record of an older version lacks, and reads its top-level dead letters', () => {
    // what sluice wrote before the full record: no runId, no sluice block, no backlog, dead letters at the top
    const legacy = (batchId: number, startMs: number) =>
      ({
        batchId,
        timestamp: new Date(startMs).toISOString(),
        batchDuration: 200,
        numInputRows: 3,
        eventTime: { watermark: new Date(0).toISOString() },
        numDeadLetters: 4,
        replay: false,
      }) as unknown as StreamingProgress;
    const records = [legacy(0, T0), legacy(1, T0 + 1000), legacy(2, T0 + 10 * MINUTE)];
    const a = analyseStatus(records, { nowMs: T0 + 11 * MINUTE, intervalMs: INTERVAL });
    // batches 0 and 1 are a second apart (one run), batch 2 ten minutes later (another)
    expect(a.runs.map((r) => r.batches.map((b) => b.batchId))).toEqual([[0, 1], [2]]);
    expect(a.runs[0].runId).toBeNull();
    expect(batchCells(a.runs[1].batches[0])).toEqual(['2', '00:10:00', '200ms <1%', '3/–', '–', '–', '–', '–/4', '–']);
  });

  it('groups records by run id, and shows only the last runs asked for', () => {
    const records = [
      progressRecord({ batchId: 0, runId: 'a', startMs: T0 }),
      progressRecord({ batchId: 1, runId: 'a', startMs: T0 + 1000 }),
      progressRecord({ batchId: 2, runId: 'b', startMs: T0 + 2000 }),
      progressRecord({ batchId: 3, runId: 'c', startMs: T0 + 3000 }),
    ];
    expect(groupRuns(records).map((run) => run.map((r) => r.batchId))).toEqual([[0, 1], [2], [3]]);
    const a = analyseStatus(records, { nowMs: T0 + 4000, intervalMs: INTERVAL, runs: 2 });
    expect(a.runs.map((r) => r.runId)).toEqual(['b', 'c']);
    expect(a.retainedBatches).toBe(4);
  });
});

describe('the printed status', () => {
  /**
   * A realistic look at a large pipeline: 5 runs of 3 batches over a day, millions of rows in a
   * batch and tens of millions in state, a year-old watermark, backlogs of files with bytes and of
   * Kinesis records behind latest, replays and no-data batches, full run ids, batch ids past
   * 10,000, a long checkpoint URI and a verdict with findings.
   */
  function realistic(): { text: string; records: StreamingProgress[] } {
    const records: StreamingProgress[] = [];
    for (let run = 0; run < 5; run++) {
      for (let k = 0; k < 3; k++) {
        const batchId = 9_990 + run * 3 + k;
        const r = progressRecord({
          batchId,
          runId: `4b7cedea-e7ac-4106-80c6-19a5d2b6a${run}e6`,
          startMs: T0 + run * 5 * HOUR + k * 4 * MINUTE,
          durationMs: 3 * MINUTE + 59_000,
          rowsIn: k === 2 ? 0 : 2_345_678,
          rowsOut: 45_678,
          watermarkMs: T0 - 400 * DAY,
          stateRows: 12_345_678 + run * 4_000_000,
          late: 1_234,
          deadLetters: 56,
          backlogFiles: 123_456,
          backlogBytes: 987 * 1024 * 1024 * 1024,
          noData: k === 2,
        });
        const kinesis = { ...r.sources[0], description: 'kinesis://events', metrics: { records: 98_765_432, millisBehindLatest: 3 * DAY + 5 * HOUR } };
        records.push({ ...r, replay: k === 1, sluice: { ...r.sluice, replay: k === 1 }, sources: [...r.sources, kinesis] } as StreamingProgress);
      }
    }
    const a = analyseStatus(records, { nowMs: T0 + 25 * HOUR, intervalMs: INTERVAL, runs: 5 });
    return { text: renderStatus(a, 's3://my-company-pipelines-eu-west-1/checkpoints/orders-per-minute-by-region/checkpoint', INTERVAL), records };
  }

  it(`keeps every line within ${STATUS_WIDTH} columns`, () => {
    const { text } = realistic();
    const lines = text.split('\n');
    const widest = Math.max(...lines.map((l) => [...l].length));
    expect(widest).toBeLessThanOrEqual(STATUS_WIDTH);
    // and it is the table it should be: a heading per run, a line per batch, the verdict last
    expect(lines.filter((l) => /^run 4b7cedea: batches \d+-\d+ from /.test(l))).toHaveLength(5);
    expect(lines.filter((l) => /^\d{4,5}( nd| re)? /.test(l))).toHaveLength(15);
    expect(lines.some((l) => l.startsWith('verdict: '))).toBe(true);
  });

  it('wraps a cell wider than its share within its column, not past the edge', () => {
    const { text } = realistic();
    const lines = text.split('\n');
    const backlogAt = lines.find((l) => l.startsWith('batch '))!.indexOf('backlog');
    // batch 9990's lines: its own and those below it up to the next batch or run
    const from = lines.findIndex((l) => l.startsWith('9990 '));
    const own = [lines[from], ...lines.slice(from + 1).filter((_, k, rest) => !rest.slice(0, k + 1).some((l) => /^(\d|run )/.test(l)))];
    expect(own.length).toBeGreaterThan(1);
    // the S3 and Kinesis backlogs (formatBacklog), read down the column, every piece at or after its start
    expect(own.every((l) => l.slice(0, backlogAt).length === backlogAt || l.length <= backlogAt)).toBe(true);
    expect(
      own
        .map((l) => l.slice(backlogAt).trim())
        .filter(Boolean)
        .join(' '),
    ).toBe('123,456 files (987 GB), 98,765,432 records, 3d 5h behind');
  });

  it('the batch line shows the figures of its record', () => {
    const { text } = realistic();
    const line = text.split('\n').find((l) => l.startsWith('9991 '))!;
    // batch 9991: the second of run 0, a replay, started 00:04:00, 3m 59s of 15m (its 27% wraps below)
    expect(line).toMatch(/^9991 re +00:04:00 +3m 59s +2,345,678\/45,678 +10-16 +400d +12,345,678 +1,234\/56 +123,456 files$/);
  });
});
