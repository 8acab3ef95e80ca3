/**
 * The CLI closing the loop on the embedded stack: a two-input query fed by name
 * (`--input input1=... --input clicks=...`), and what a run wrote, read back with `sluice show`.
 * The CLI runs in this process (main(argv), output captured), as test/integration/status-cli.test.ts
 * runs it; every expectation is worked out from the input written here.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { cliEnv, runCli } from '../helpers/cli';
import { connectionFromEnv, createClients } from '../../lib/aws/clients';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { testConnection, uniqueName } from '../helpers/stack';

const sluice = (...args: string[]) => runCli(args, cliEnv(testConnection(), 's3'));
/** The clients the CLI sees (DynamoDB Local keeps one namespace per access key). */
const cliClients = () => createClients(connectionFromEnv(cliEnv(testConnection(), 's3'))!);
const READER = `require(${JSON.stringify(join(__dirname, '..', '..', 'lib', 'engine', 'query', 'reader.ts'))}).readStream`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-loop-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files` (name → rows) into a new folder and returns its path. */
function folder(name: string, files: Record<string, object[]>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, rows] of Object.entries(files)) writeFileSync(join(path, file), rows.map((r) => JSON.stringify(r)).join('\n'));
  return path;
}

async function keys(bucket: string, prefix: string): Promise<string[]> {
  const clients = cliClients();
  try {
    const page = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (page.Contents ?? []).map((o) => o.Key!).sort();
  } finally {
    clients.destroy();
  }
}

describe('sluice run feeds a stream-stream join by input name', () => {
  it('puts each folder into its named input and the join emits the matches', async () => {
    const bucket = uniqueName('sluice-loop');
    const table = uniqueName('sluice-loop-state');
    const clients = cliClients();
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    clients.destroy();
    const query = join(dir, 'ad-clicks.js');
    writeFileSync(
      query,
      `const rs = ${READER};
const impressions = rs.format('json').schema('adId STRING, impressionTime TIMESTAMP').load().withWatermark('impressionTime', '10 seconds');
const clicks = rs.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load().withWatermark('clickTime', '20 seconds');
exports.default = impressions.join(clicks, { left: 'adId', right: 'clickAdId' }, 'inner', { name: 'clicks' }).writeStream.outputMode('append').queryName('ad-clicks').plan();`,
    );
    const imps = folder('imps', {
      '001.json': [
        { adId: 'a1', impressionTime: '2026-10-01 12:00:00' },
        { adId: 'a2', impressionTime: '2026-10-01 12:00:10' },
      ],
    });
    const clicks = folder('clicks', {
      '001.json': [
        { clickAdId: 'a2', clickTime: '2026-10-01 12:00:30' },
        { clickAdId: 'zz', clickTime: '2026-10-01 12:00:31' },
      ],
    });
    const r = await sluice(
      'run',
      query,
      '--source',
      `input1=s3://${bucket}/impressions`,
      '--source',
      `clicks=s3://${bucket}/clicks`,
      '--input',
      `clicks=${clicks}`,
      '--input',
      `input1=${imps}`,
      '--checkpoint',
      `s3://${bucket}/ckpt`,
      '--sink',
      `s3://${bucket}/out`,
      '--state-table',
      table,
      '--json',
    );
    expect(r.stderr).not.toMatch(/"level":"error"/);
    expect(r.code).toBe(0);
    // each folder went to its own input's prefix, not the first input's
    expect(await keys(bucket, 'impressions/')).toEqual(['impressions/001.json']);
    expect(await keys(bucket, 'clicks/')).toEqual(['clicks/001.json']);
    const report = JSON.parse(r.stdout);
    expect(report.rowsIn).toBe(4);
    expect(report.deadLetters).toBe(0);
    // a2 was clicked; a1 was not and zz had no impression: one joined row
    expect(report.batches.flatMap((b: { rows: unknown[] }) => b.rows)).toEqual([
      { adId: 'a2', impressionTime: '2026-10-01T12:00:10.000Z', clickAdId: 'a2', clickTime: '2026-10-01T12:00:30.000Z' },
    ]);
  });
});
