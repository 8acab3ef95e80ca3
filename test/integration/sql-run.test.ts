/**
 * `sluice run examples/windowed-totals.sql` on the embedded local stack: the reference example's
 * three files, one per run, through the SQL form of the query, emit the rows Spark emits for it
 * (the reference article's, as test/integration/example-seed.test.ts checks for the TypeScript
 * form), in append and in update mode, in one process and on worker threads; and a .sql file with an error is refused with its line and
 * column before anything runs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEED_FILES, showTotals } from '../../examples/windowed-totals';
import { cliEnv, cliResources, runArgs, runCli, tempFolder } from '../helpers/cli';
import { testConnection } from '../helpers/stack';

const sluice = (...args: string[]) => runCli(args, cliEnv(testConnection(), 's3'));
const { path, folder } = tempFolder('sluice-sql-run-');
const EXAMPLES = join(__dirname, '..', '..', 'examples');

/**
 * Three runs of `query`, each after one seed file: what each run emitted, as the article prints
 * it, read back from the sink with `sluice show outputs` (a partitioned run's report does not
 * carry the rows: its workers write them) and grouped by the batches each run reported.
 */
async function threeRuns(query: string, prefix: string, more: string[] = []): Promise<string[]> {
  const { bucket, table } = await cliResources(prefix);
  const source = `s3://${bucket}/landing`;
  const runBatches: number[][] = [];
  for (const file of SEED_FILES) {
    const input = folder(`${prefix}-${file.name}`, { [file.name]: file.rows });
    const r = await sluice(...runArgs(query, { source, input, stateTable: table, json: true, more }));
    expect(r.stderr).not.toMatch(/"level":"error"/);
    expect(r.code).toBe(0);
    runBatches.push(JSON.parse(r.stdout).batches.map((b: { batchId: number }) => b.batchId));
  }
  const shown = await sluice('show', 'outputs', query, '--source', source, '--json');
  expect(shown.code).toBe(0);
  const rows: Array<{ batchId: number; row: Record<string, unknown> }> = JSON.parse(shown.stdout).rows;
  return runBatches.map((ids) => `[${showTotals(rows.filter((r) => ids.includes(r.batchId)).map((r) => r.row))}]`);
}

describe('sluice run <query>.sql', () => {
  it('runs examples/windowed-totals.sql over the three seed files and emits Spark rows (append)', async () => {
    expect(await threeRuns(join(EXAMPLES, 'windowed-totals.sql'), 'sluice-sql-append')).toEqual([
      '[]',
      '[(12:00, 12:10, 19.0)]',
      '[(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)]',
    ]);
  });

  it('runs examples/windowed-totals-update.sql and emits Spark rows (update)', async () => {
    expect(await threeRuns(join(EXAMPLES, 'windowed-totals-update.sql'), 'sluice-sql-update')).toEqual([
      '[(12:00, 12:10, 15.0), (12:10, 12:20, 7.0)]',
      '[(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)]',
      '[(12:40, 12:50, 1.0)]',
    ]);
  });

  it('runs it on worker threads too (--workers 2: each thread loads the .sql module), with the same rows', async () => {
    expect(await threeRuns(join(EXAMPLES, 'windowed-totals.sql'), 'sluice-sql-workers', ['--workers', '2'])).toEqual([
      '[]',
      '[(12:00, 12:10, 19.0)]',
      '[(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)]',
    ]);
  });

  it('runs the same query written with a WITH query, alias-qualified columns and GROUP BY ALL, with the same rows', async () => {
    const q = path('windowed-totals-with.sql');
    writeFileSync(
      q,
      `SET outputMode = append;
WITH events AS (
  SELECT e.event_time, e.amount FROM STREAM read_files(format => 'json', schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE') AS e
    WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
)
SELECT window(events.event_time, '10 minutes') AS window, sum(events.amount) AS total, count(*) AS events
FROM events
GROUP BY ALL
`,
    );
    expect(await threeRuns(q, 'sluice-sql-with')).toEqual(['[]', '[(12:00, 12:10, 19.0)]', '[(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)]']);
  });

  it('refuses a .sql query with an error, naming the file, the error class, the line and the column (exit 2)', async () => {
    const bad = path('bad.sql');
    writeFileSync(bad, "SELECT user, amount\nFROM STREAM read_files(schema => 'user STRING, amount DOUBLE')\nWHERE amout > 0\n");
    const r = await sluice('run', bad, '--source', 's3://nowhere/landing');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}: [UNRESOLVED_COLUMN.WITH_SUGGESTION]`);
    expect(r.stderr).toContain('(line 3, column 7)');
    // docs/sql.md ("Errors") shows this query as q.sql and what sluice run prints for it
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'sql.md'), 'utf8');
    expect(doc).toContain(`\`\`\`sql\n${readFileSync(bad, 'utf8')}\`\`\``);
    const printed = /^sluice: q\.sql: .*$/m.exec(doc)![0];
    expect(r.stderr.trim()).toBe(printed.replace('q.sql', bad));
  });
});
