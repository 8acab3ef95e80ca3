/**
 * The Lambda of a pipeline whose query is a .sql file, as the construct bundles it: lambdas/sql-query.ts
 * bundled by esbuild with examples/windowed-totals.sql as the module `sluice-sql-query` (the
 * construct's alias and text loader, lib/infra/sql-entry.ts), loaded with the environment the
 * construct sets and invoked by three scheduled events on the embedded local stack, one seed file
 * landed before each: its sink receives Spark's rows for the reference example.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { buildSync } from 'esbuild';
import { SEED_FILES, showTotals } from '../../examples/windowed-totals';
import { SQL_ENTRY, sqlBundling } from '../../lib/infra/sql-entry';
import { cliClients, cliEnv, cliResources } from '../helpers/cli';
import { testConnection } from '../helpers/stack';

const ROOT = join(__dirname, '..', '..');
// under the repository (git-ignored), so that the bundle's external packages resolve from its node_modules
const OUT = join(ROOT, '.sluice', `sql-lambda-${process.pid}`);

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

type Handler = (event: Record<string, unknown>, context: Record<string, unknown>) => Promise<unknown>;

/** The bundled entry's handler, loaded with `env` as its process.env (read once, at load). */
function loadBundle(env: Record<string, string | undefined>): Handler {
  const sqlFile = join(ROOT, 'examples', 'windowed-totals.sql');
  const { loader, esbuildArgs } = sqlBundling(sqlFile);
  const [alias, target] = esbuildArgs['--alias'].split('=');
  mkdirSync(OUT, { recursive: true });
  const outfile = join(OUT, 'index.js');
  buildSync({
    entryPoints: [SQL_ENTRY],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    packages: 'external',
    loader: loader as Record<string, 'text'>,
    alias: { [alias]: target },
    logLevel: 'silent',
  });
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return require(outfile).handler as Handler;
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('the bundled Lambda of a .sql query', () => {
  it('runs examples/windowed-totals.sql on each scheduled event and its sink gets Spark rows', async () => {
    const { bucket, table } = await cliResources('sluice-sql-lambda');
    const handler = loadBundle({
      ...cliEnv(testConnection(), 's3'),
      SLUICE_CHECKPOINT_URI: `s3://${bucket}/checkpoints/sql`,
      SLUICE_STATE_TABLE: table,
      SLUICE_SOURCE_URI: `s3://${bucket}/landing/sql`,
      SLUICE_SINK_URI: `s3://${bucket}/output/sql`,
      SLUICE_LEASE_SECONDS: '120',
      SLUICE_QUERY_NAME: 'windowed-totals-append',
      SLUICE_PIPELINE_NAME: 'sql',
    });
    const clients = cliClients();
    const emitted: string[] = [];
    const seen = new Set<string>();
    const logs = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      for (const [i, file] of SEED_FILES.entries()) {
        const body = `${file.rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
        await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `landing/sql/${file.name}`, Body: Buffer.from(body) }));
        const deadline = Date.now() + 60_000;
        await handler(
          { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', time: `2026-10-01T13:0${i}:00Z`, detail: {} },
          { awsRequestId: randomUUID(), functionName: 'sql', getRemainingTimeInMillis: () => deadline - Date.now() },
        );
        // the rows of the sink objects this run wrote
        const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'output/sql/' }));
        const rows: Array<Record<string, unknown>> = [];
        for (const key of (listed.Contents ?? []).map((c) => c.Key!).filter((k) => !seen.has(k))) {
          seen.add(key);
          const text = await (await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
          for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
        }
        emitted.push(`[${showTotals(rows)}]`);
      }
    } finally {
      logs.mockRestore();
      clients.destroy();
    }
    expect(emitted).toEqual(['[]', '[(12:00, 12:10, 19.0)]', '[(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)]']);
  });
});
