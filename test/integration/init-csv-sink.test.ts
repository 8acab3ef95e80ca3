/**
 * `sluice init --sink csv`, run: the scaffold's query (src/query.ts, and src/query.sql with
 * `--lang sql`) runs over its sample/ and then sample-2/ (the README's two runs) on the local stack
 * into the CSV sink its `npm start` names, and every object is read back with DuckDB's CSV reader
 * (a reader nobody here wrote). The query of the other sinks, whose window is a struct column, is
 * refused by that sink; `--processor`'s sessions query writes its flat rows there too.
 * test/unit/init-scaffold.test.ts checks the scaffold's text; test/package/scaffold.test.ts
 * installs a `--sink csv` project and runs its own `npm test` and `npm start`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { initProject } from '../../bin/init';
import { buildExecutor, parseSinkUri, type PipelineConfig, type SinkLocation } from '../../lib/aws/pipeline';
import { compileSql } from '../../lib/api/query';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { csvRowsByDuckDb, downloadCsvObjects } from '../helpers/csv-objects';
import { testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();
const bucket = uniqueName('init-csv');
const table = uniqueName('init-csv-state');
let work: string;

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(dynamodb, table)]);
  work = mkdtempSync(join(tmpdir(), 'sluice-init-csv-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A scaffold in a folder of its own; `read` reads one of its files. */
function scaffold(name: string, opts: { sink: 'csv' | 's3'; lang?: 'ts' | 'sql'; processor?: boolean }) {
  const dir = join(work, name);
  initProject({ dir, source: 's3', sluiceSpec: '0.1.0', ...opts });
  return { dir, read: (f: string) => readFileSync(join(dir, f), 'utf8') };
}

/** The sink `npm start` writes (package.json's start script), moved to `prefix` in the test bucket. */
function startSink(project: { read: (f: string) => string }, prefix: string): SinkLocation {
  const start = JSON.parse(project.read('package.json')).scripts.start as string;
  const uri = /--sink '([^']+)'$/.exec(start)?.[1];
  if (uri === undefined) throw new Error(`no quoted --sink at the end of the start script: ${start}`);
  const sink = parseSinkUri(uri);
  if (sink.kind !== 's3-files') throw new Error(`the start script's sink ${uri} is not an S3 file sink`);
  return { ...sink, bucket, prefix };
}

/** The generated src/query.ts (its `from 'sluice'` is this repository's query API, jest.config.js) in append mode. */
const tsPlan = (dir: string, file = 'query.ts'): QueryPlan => (require(join(dir, 'src', file)) as { default: (mode?: string) => QueryPlan }).default('append');

/** Puts the files of the project's `folder` under the landing prefix. */
async function drop(dir: string, folder: string, base: string): Promise<void> {
  for (const name of readdirSync(join(dir, folder)).sort()) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${name}`, Body: readFileSync(join(dir, folder, name)) }));
  }
}

function pipeline(base: string, sink: SinkLocation): PipelineConfig {
  return { checkpoint: { bucket, prefix: `${base}/checkpoint` }, stateTable: table, source: { kind: 's3', bucket, prefix: `${base}/landing` }, sink };
}

/** Every CSV object the sink wrote under `prefix/`, downloaded: the local paths and texts. */
const csvObjects = (prefix: string) => downloadCsvObjects(s3, bucket, prefix, work);

const at = (hhmm: string) => `2026-10-01T${hhmm}:00.000Z`;
const TOTALS = { window_start: 'TIMESTAMP', window_end: 'TIMESTAMP', total: 'DOUBLE', events: 'BIGINT' };

describe.each(['ts', 'sql'] as const)('sluice init --sink csv --lang %s', (lang) => {
  it("writes the windows of the README's two runs as CSV with a header, window_start and window_end for the window", async () => {
    const project = scaffold(`csv-${lang}`, { sink: 'csv', lang });
    const plan = lang === 'ts' ? tsPlan(project.dir) : compileSql(project.read('src/query.sql'));
    const base = uniqueName(`init-${lang}`);
    const cfg = pipeline(base, startSink(project, `${base}/output`));

    // run 1 (npm start): sample/'s latest event is 12:31, so the watermark is 12:21 and two windows close
    await drop(project.dir, 'sample', base);
    await buildExecutor(testConnection(), plan, cfg).executor.run();
    const first = await csvObjects(`${base}/output`);
    expect(first.length).toBeGreaterThan(0);
    for (const { text } of first) expect(text.split('\n')[0]).toBe('window_start,window_end,total,events');
    // Spark's CSV writer's text of the rows: a TIMESTAMP with milliseconds and Z, a DOUBLE as Java prints it
    expect(first.flatMap((o) => o.text.split('\n').slice(1, -1)).sort()).toEqual([
      `${at('12:00')},${at('12:10')},19.0,3`, // 10 + 5 + 4: 12:01, 12:04, 12:08
      `${at('12:10')},${at('12:20')},7.0,1`, // 12:12
    ]);

    // run 2 (sample-2/): its 12:44 moves the watermark to 12:34, closing 12:20-12:30; its 12:05 is late and dropped
    await drop(project.dir, 'sample-2', base);
    const report = await buildExecutor(testConnection(), plan, cfg).executor.run();
    expect(report.droppedByWatermark).toBe(1);
    const all = await csvObjects(`${base}/output`);
    expect(
      await csvRowsByDuckDb(
        all.map((o) => o.file),
        TOTALS,
        'window_start',
      ),
    ).toEqual([
      { window_start: at('12:00'), window_end: at('12:10'), total: 19, events: 3 },
      { window_start: at('12:10'), window_end: at('12:20'), total: 7, events: 1 },
      { window_start: at('12:20'), window_end: at('12:30'), total: 3, events: 1 }, // 12:25
    ]);
  });
});

it('the query of the other sinks (its window a struct column) is refused by the CSV sink, naming the column and the fix', async () => {
  const csv = scaffold('csv-for-sink', { sink: 'csv' });
  const other = scaffold('s3-struct', { sink: 's3' });
  const base = uniqueName('init-struct');
  await drop(other.dir, 'sample', base);
  await expect(buildExecutor(testConnection(), tsPlan(other.dir), pipeline(base, startSink(csv, `${base}/output`))).executor.run()).rejects.toThrow(
    /UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE.*column `window`.*select its fields as columns \(window\.start AS window_start\)/,
  );
  expect(await csvObjects(`${base}/output`)).toEqual([]);
});

it('--processor: the sessions query writes its rows (user, start, events, total) to the CSV sink', async () => {
  const project = scaffold('csv-processor', { sink: 'csv', processor: true });
  const plan = tsPlan(project.dir, 'sessions.ts');
  const base = uniqueName('init-sessions');
  const cfg = pipeline(base, startSink(project, `${base}/sessions`));
  await drop(project.dir, 'sample', base);
  const runAt = (iso: string) => buildExecutor(testConnection(), plan, cfg, { processingClock: { now: () => Date.parse(iso) } }).executor.run();
  // each user's session closes 30 minutes of processing time after the run that saw its events
  await runAt('2026-10-02T09:00:00.000Z');
  expect(await csvObjects(`${base}/sessions`)).toEqual([]);
  await runAt('2026-10-02T09:45:00.000Z');
  const objects = await csvObjects(`${base}/sessions`);
  for (const { text } of objects) expect(text.split('\n')[0]).toBe('user,start,events,total');
  // by hand from sample/001: a at 12:01 (10) and 12:12 (7); b at 12:04 (5) and 12:08 (4); c at 12:25 (3); d at 12:31 (2)
  expect(
    await csvRowsByDuckDb(
      objects.map((o) => o.file),
      { user: 'VARCHAR', start: 'TIMESTAMP', events: 'INTEGER', total: 'DOUBLE' },
      'user',
    ),
  ).toEqual([
    { user: 'a', start: at('12:01'), events: 2, total: 17 },
    { user: 'b', start: at('12:04'), events: 2, total: 9 },
    { user: 'c', start: at('12:25'), events: 1, total: 3 },
    { user: 'd', start: at('12:31'), events: 1, total: 2 },
  ]);
});
