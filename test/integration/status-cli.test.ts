/**
 * `sluice status` on a real S3 checkpoint (the embedded stack's s3rver, or LocalStack): progress
 * records with known figures are written with S3CheckpointStore, the CLI runs in this process as
 * test/unit/cli.test.ts runs it (main(argv), output captured), and its table rows and verdict are
 * checked against figures worked out from those records.
 */
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { cliEnv, runCli } from '../helpers/cli';
import { connectionFromEnv, createClients } from '../../lib/aws/clients';
import { SEED_FILES } from '../../examples/windowed-totals';
import { S3CheckpointStore } from '../../lib/aws/s3/checkpoint';
import type { StreamingProgress } from '../../lib/engine/progress';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { MINUTE, progressRecord, type RecordFigures } from '../helpers/progress-records';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const bucket = uniqueName('sluice-status');

/** main(argv) in this process against the test stack (one key pair for every service: the one s3rver accepts). */
const sluice = (...args: string[]) => runCli(args, cliEnv(testConnection(), 's3'));

/** Writes offsets/N, commits/N (unless `uncommitted`) and progress/N for each record, as a run leaves them. */
async function writeCheckpoint(prefix: string, records: StreamingProgress[], uncommitted?: { batchId: number; startMs: number }): Promise<void> {
  const store = new S3CheckpointStore({ client: testClients().s3, bucket, prefix, conditionalWrites: false });
  for (const r of records) {
    const startMs = Date.parse(r.timestamp);
    await store.writeOffsets({ batchId: r.batchId, offsets: [null], startOffsets: [null], batchWatermarkMs: 0, lateWatermarkMs: 0, batchTimestampMs: startMs });
    await store.writeProgress(r.batchId, r as never);
    await store.writeCommit({
      batchId: r.batchId,
      queryId: 'query-1',
      shapeFingerprint: 'f',
      offsets: [null],
      batchWatermarkMs: 0,
      nextBatchWatermarkMs: 0,
      committedAtMs: startMs + r.batchDuration,
    });
  }
  if (uncommitted) {
    await store.writeOffsets({
      batchId: uncommitted.batchId,
      offsets: [null],
      startOffsets: [null],
      batchWatermarkMs: 0,
      lateWatermarkMs: 0,
      batchTimestampMs: uncommitted.startMs,
    });
  }
}

/**
 * The printed table's rows, as trimmed cells: the header, each run's heading (one cell) and each
 * batch's cells (the table has no vertical borders: cells are apart by two spaces or more).
 */
function tableRows(stdout: string): string[][] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('batch '));
  const end = lines.findIndex((l) => l.startsWith('took: '));
  return lines.slice(start, end).map((l) => (l.startsWith('run ') ? [l] : l.trim().split(/ {2,}/)));
}

/** The verdict, whose line may wrap (every line of the status is at most 100 columns). */
function verdictOf(stdout: string): string {
  const lines = stdout.trim().split('\n');
  return lines
    .slice(lines.findIndex((l) => l.startsWith('verdict: ')))
    .map((l) => l.trim())
    .join(' ');
}

const text = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
/** A time in the table: a batch's start without its date (its run's heading has it), a watermark without its year. */
const clock = (ms: number) => text(ms).slice(11);
const monthDay = (ms: number) => text(ms).slice(5);

beforeAll(async () => {
  await ensureBucket(testClients().s3, bucket);
});

describe('sluice status on a checkpoint in S3', () => {
  // A whole second (the table prints seconds); every batch below has ended by then.
  const now = Math.floor(Date.now() / 1000) * 1000;
  const at = (minutesAgo: number) => now - minutesAgo * MINUTE;
  const figures: RecordFigures[] = [
    // run a: two batches 40 minutes ago
    { batchId: 0, runId: 'run-a', startMs: at(40), durationMs: 30_000, rowsIn: 1200, rowsOut: 0, watermarkMs: 0, stateRows: 300, backlogFiles: 0 },
    {
      batchId: 1,
      runId: 'run-a',
      startMs: at(40) + 30_000,
      durationMs: 1500,
      rowsIn: 0,
      rowsOut: 40,
      watermarkMs: at(52),
      stateRows: 260,
      noData: true,
      backlogFiles: 0,
    },
    // run b: one batch 25 minutes ago, 2 late rows and 3 dead letters, 4 files left
    {
      batchId: 2,
      runId: 'run-b',
      startMs: at(25),
      durationMs: 3 * MINUTE,
      rowsIn: 900,
      rowsOut: 12,
      watermarkMs: at(37),
      stateRows: 280,
      late: 2,
      deadLetters: 3,
      backlogFiles: 4,
    },
    // run c: 6 + 7 minutes from 14 minutes ago: 13 of the 15 minutes, and the backlog grew to 9 files
    { batchId: 3, runId: 'run-c', startMs: at(14), durationMs: 6 * MINUTE, rowsIn: 2000, rowsOut: 30, watermarkMs: at(26), stateRows: 320, backlogFiles: 9 },
    { batchId: 4, runId: 'run-c', startMs: at(8), durationMs: 7 * MINUTE, rowsIn: 1500, rowsOut: 25, watermarkMs: at(20), stateRows: 330, backlogFiles: 9 },
  ];

  it('prints a row per batch under its run, and says the pipeline is falling behind', async () => {
    const prefix = `checkpoints/${uniqueName('behind')}`;
    await writeCheckpoint(prefix, figures.map(progressRecord));
    const r = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`, '--interval', '15m');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [first, retained, second] = r.stdout.split('\n');
    expect(first).toBe(`checkpoint s3://${bucket}/${prefix}`);
    expect(retained).toBe('5 batches retained, the last 3 runs below (times UTC)');
    // the newest batch ran with the watermark of 20 minutes ago; 32 minutes of batches are too few for a trend
    expect(second).toMatch(new RegExp(`^watermark ${text(at(20))}, 20m( \\d+s)? behind now; state trend: needs 3 batches over 6 hours or more$`));
    expect(Math.max(...r.stdout.split('\n').map((l) => [...l].length))).toBeLessThanOrEqual(100);
    const rows = tableRows(r.stdout);
    expect(rows[0]).toEqual(['batch', 'start', 'took', 'rows in/out', 'watermark', 'lag', 'state', 'late/dead', 'backlog']);
    // run headings: run c lasted from 14 minutes ago to 1 minute ago (13m, 87% of 15m), 3,500 rows in, 55 out
    expect(rows[1]).toEqual([`run run-a: batches 0-1 from ${text(at(40))}, 32s of 15m (4%), 1,200 rows in, 40 out`]);
    expect(rows[4]).toEqual([`run run-b: batch 2 from ${text(at(25))}, 3m of 15m (20%), 900 rows in, 12 out`]);
    expect(rows[6]).toEqual([`run run-c: batches 3-4 from ${text(at(14))}, 13m of 15m (87%), 3,500 rows in, 55 out`]);
    // batch rows: a duration's share of 15 minutes, the lag = start - watermark (12 minutes each, by the figures above)
    expect(rows[2]).toEqual(['0', clock(at(40)), '30s 3%', '1,200/0', '–', '–', '300', '0/0', '0 files']);
    expect(rows[3]).toEqual(['1 nd', clock(at(40) + 30_000), '1.5s <1%', '0/40', monthDay(at(52)), '12m 30s', '260', '0/0', '0 files']);
    expect(rows[5]).toEqual(['2', clock(at(25)), '3m 20%', '900/12', monthDay(at(37)), '12m', '280', '2/3', '4 files']);
    expect(rows[7]).toEqual(['3', clock(at(14)), '6m 40%', '2,000/30', monthDay(at(26)), '12m', '320', '0/0', '9 files']);
    expect(rows[8]).toEqual(['4', clock(at(8)), '7m 47%', '1,500/25', monthDay(at(20)), '12m', '330', '0/0', '9 files']);
    expect(rows).toHaveLength(9);
    // the worst finding first, then the backlog that grew from run b's 4 files to run c's 9
    expect(verdictOf(r.stdout)).toBe(
      'verdict: falling behind: the last run took 13m of the 15m interval (87%); also falling behind: the backlog left grew from 4 to 9 over the last 2 runs',
    );
  });

  it('--behind-at moves the falling-behind threshold: at 0.9 the 87% run is not behind, the grown backlog still is', async () => {
    const prefix = `checkpoints/${uniqueName('behind-at')}`;
    await writeCheckpoint(prefix, figures.map(progressRecord));
    const r = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`, '--behind-at', '0.9');
    expect(r.code).toBe(0);
    expect(verdictOf(r.stdout)).toBe('verdict: falling behind: the backlog left grew from 4 to 9 over the last 2 runs');
    const bad = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`, '--behind-at', '80%');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--behind-at 80% must be a number above 0 and at most 1: write e.g. --behind-at 0.5.');
  });

  it('--runs and --json: the analysis as JSON, the last runs asked for', async () => {
    const prefix = `checkpoints/${uniqueName('json')}`;
    await writeCheckpoint(prefix, figures.map(progressRecord));
    const r = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`, '--runs', '2', '--json');
    expect(r.code).toBe(0);
    const a = JSON.parse(r.stdout);
    expect(a.verdict.kind).toBe('falling-behind');
    expect(a.retainedBatches).toBe(5);
    expect(a.runs.map((run: { runId: string }) => run.runId)).toEqual(['run-b', 'run-c']);
    expect(a.runs[1].batches.map((b: { rowsIn: number }) => b.rowsIn)).toEqual([2000, 1500]);
    expect(a.watermark).toBe(new Date(at(20)).toISOString());
  });

  it('says failing when the newest batch has offsets but no commit, planned longer ago than the interval', async () => {
    const prefix = `checkpoints/${uniqueName('failing')}`;
    await writeCheckpoint(prefix, [progressRecord({ batchId: 0, runId: 'run-a', startMs: at(45), durationMs: 2000, rowsIn: 10, stateRows: 5 })], {
      batchId: 1,
      startMs: at(40),
    });
    const r = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`);
    expect(r.code).toBe(0);
    expect(tableRows(r.stdout).map((row) => row[0])).toEqual(['batch', `run run-a: batch 0 from ${text(at(45))}, 2.0s of 15m (<1%), 10 rows in, 0 out`, '0']);
    expect(r.stdout).toMatch(/^verdict: failing: batch 1 has offsets but no commit \(planned 40m( \d+s)? ago\)/m);
  });

  it('refuses a checkpoint created for another source than --source names, in status and report alike', async () => {
    const prefix = `checkpoints/${uniqueName('other-source')}`;
    await writeCheckpoint(prefix, figures.slice(0, 2).map(progressRecord));
    const store = new S3CheckpointStore({ client: testClients().s3, bucket, prefix, conditionalWrites: false });
    await store.writeMetadata({ id: 'query-1', name: 'q', createdAtMs: at(60), shape: null, shapeFingerprint: 'f', sources: [`s3://${bucket}/landing-b/`] });
    for (const command of ['status', 'report']) {
      const other = await sluice(command, '--checkpoint', `s3://${bucket}/${prefix}`, '--source', `s3://${bucket}/landing-a`);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(`belongs to the source s3://${bucket}/landing-b/, not s3://${bucket}/landing-a/`);
    }
    // its own source: reported as usual
    const same = await sluice('status', '--checkpoint', `s3://${bucket}/${prefix}`, '--source', `s3://${bucket}/landing-b`);
    expect(same.code).toBe(0);
  });

  it('a checkpoint with nothing in it', async () => {
    const r = await sluice('status', '--checkpoint', `s3://${bucket}/checkpoints/${uniqueName('empty')}`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('verdict: no batches yet');
  });

  it('without a query module or --checkpoint is a usage error that says what to write', async () => {
    const r = await sluice('status');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sluice status needs the query module (as for sluice run) or --checkpoint s3://bucket/prefix');
  });
});

describe('sluice run, then sluice status, on the windowed-totals example', () => {
  it('prints a summary (not a terminal: no live line), --json the report, and status sees its batches', async () => {
    const base = uniqueName('run');
    const table = uniqueName('sluice-status-state');
    // DynamoDB Local keeps one namespace per access key: create the table as the CLI will see it.
    const clients = createClients(connectionFromEnv(cliEnv(testConnection(), 's3'))!);
    await ensureStateTable(clients.dynamodb, table);
    clients.destroy();
    const put = (f: (typeof SEED_FILES)[number]) =>
      testClients().s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${f.name}`, Body: f.rows.map((row) => JSON.stringify(row)).join('\n') }),
      );
    const args = [
      'run',
      join(__dirname, '../../examples/windowed-totals.ts'),
      '--source',
      `s3://${bucket}/${base}/landing`,
      '--checkpoint',
      `s3://${bucket}/${base}/checkpoint`,
      '--sink',
      `s3://${bucket}/${base}/out`,
      '--state-table',
      table,
    ];

    await put(SEED_FILES[0]);
    const first = await sluice(...args);
    expect(first.code).toBe(0);
    const rowsIn = SEED_FILES[0].rows.length;
    // append mode, first file: nothing emitted yet, a data batch and the no-data batch the watermark makes due
    expect(first.stdout).toContain(`sluice: windowed-totals-append ran 2 batches (1 without data) in `);
    expect(first.stdout).toContain(`  rows          ${rowsIn} in, 0 out\n`);
    expect(first.stdout).toContain(`  output        s3://${bucket}/${base}/out\n`);
    expect(first.stdout).not.toContain('\x1b');
    expect(
      first.stderr
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).event),
    ).toContain('batch');

    await put(SEED_FILES[1]);
    const second = await sluice(...args, '--json');
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout);
    expect(report).toMatchObject({ queryName: 'windowed-totals-append', stoppedBy: 'done', rowsIn: SEED_FILES[1].rows.length });
    expect(report.batches.map((b: { batchId: number }) => b.batchId)).toEqual([2, 3]);
    // one progress record per batch, the run's own id on each, the input rows where they were read
    expect(report.progress.map((p: StreamingProgress) => p.batchId)).toEqual([2, 3]);
    expect(new Set(report.progress.map((p: StreamingProgress) => p.runId)).size).toBe(1);
    expect(report.progress.map((p: StreamingProgress) => p.numInputRows)).toEqual([SEED_FILES[1].rows.length, 0]);
    expect(report.progress.map((p: StreamingProgress) => p.sluice.noData)).toEqual([false, true]);

    const status = await sluice('status', '--checkpoint', `s3://${bucket}/${base}/checkpoint`);
    expect(status.code).toBe(0);
    const batchRows = tableRows(status.stdout).filter((row) => /^\d/.test(row[0]));
    expect(batchRows.map((row) => row[0])).toEqual(['0', '1 nd', '2', '3 nd']);
    expect(batchRows.map((row) => row[3].split('/')[0])).toEqual([String(rowsIn), '0', String(SEED_FILES[1].rows.length), '0']);
    expect(status.stdout).toMatch(/^verdict: healthy/m);
  });
});
