/**
 * runQueryOnSample (sluice/local) over a folder of Parquet files, as the test of a project
 * scaffolded with `sluice init --format parquet` calls it: the files are put as their bytes (read
 * as UTF-8 text, a Parquet file would be a dead letter and the query would emit nothing). The file
 * is written by DuckDB (lib/conformance/parquet-file.ts), not by sluice's own writer.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetFileOf } from '../../lib/conformance/parquet-file';
import { count, readStream, sum, window } from '../../lib/api/query';
import { runQueryOnSample } from '../../lib/local/sample';
import type { RunReport } from '../../lib/engine/run/types';
import { parseSchema } from '../../lib/engine/schema';
import { testConnection } from '../helpers/stack';

const SCHEMA = 'user STRING, event_time TIMESTAMP, amount DOUBLE';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-sample-parquet-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runQueryOnSample puts a folder of Parquet files as bytes, and the query reads their rows', async () => {
  const rows = [
    { user: 'a', event_time: '2026-10-01 12:01:00', amount: 10 },
    { user: 'b', event_time: '2026-10-01 12:04:00', amount: 5 },
    { user: 'a', event_time: '2026-10-01 12:12:00', amount: 7 },
  ];
  writeFileSync(join(dir, '001.parquet'), await parquetFileOf(parseSchema(SCHEMA), rows));
  const plan = readStream
    .format('parquet')
    .schema(SCHEMA)
    .load()
    .groupBy(window('event_time', '10 minutes'))
    .agg(sum('amount').as('total'), count().as('events'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('sample-parquet')
    .plan();
  let report: RunReport | undefined;
  const out = await runQueryOnSample(plan, { files: dir, connection: testConnection(), onReport: (r) => (report = r) });
  expect(report!.batches.reduce((n, b) => n + b.deadLetters, 0)).toBe(0);
  expect(out.sort((x, y) => (x.window.start < y.window.start ? -1 : 1))).toEqual([
    { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, total: 15, events: 2 },
    { window: { start: '2026-10-01T12:10:00.000Z', end: '2026-10-01T12:20:00.000Z' }, total: 7, events: 1 },
  ]);
});
