/**
 * `sluice run` of a query with .option('discovery', 'notifications') against an endpoint (here
 * the test stack, as it would be LocalStack or AWS): it reads the queue SLUICE_NOTIFICATION_QUEUE_URL
 * names, and refuses to run without one rather than list the prefix.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv, runCli } from '../helpers/cli';
import { connectionFromEnv, createClients } from '../../lib/aws/clients';
import { ensureBucket, ensureNotificationQueue, ensureStateTable } from '../../lib/local/resources';
import { queueCounts } from '../helpers/s3-notifications';
import { testConnection, uniqueName } from '../helpers/stack';

const READER = `require(${JSON.stringify(join(__dirname, '..', '..', 'lib', 'engine', 'query', 'reader.ts'))}).readStream`;
const env = () => ({ ...cliEnv(testConnection(), 's3'), AWS_ENDPOINT_URL_SQS: testConnection().endpoints?.sqs });
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-notify-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function folder(name: string, files: Record<string, string[]>): string {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  for (const [file, ids] of Object.entries(files)) writeFileSync(join(path, file), ids.map((id) => JSON.stringify({ id })).join('\n'));
  return path;
}

describe("sluice run with .option('discovery', 'notifications')", () => {
  it('reads the files S3 announced to SLUICE_NOTIFICATION_QUEUE_URL, each once, and refuses without a queue', async () => {
    const bucket = uniqueName('notify-cli');
    const table = uniqueName('notify-cli-state');
    const clients = createClients(connectionFromEnv(env())!);
    await Promise.all([ensureBucket(clients.s3, bucket), ensureStateTable(clients.dynamodb, table)]);
    const { queueUrl } = await ensureNotificationQueue(clients, { bucket, prefix: 'landing', name: uniqueName('nq') });
    const query = join(dir, 'copy.js');
    writeFileSync(
      query,
      `exports.default = ${READER}.format('json').schema('id STRING').option('discovery', 'notifications').load().writeStream.queryName('copy').plan();`,
    );
    const args = (input: string) => ['run', query, '--source', `s3://${bucket}/landing`, '--input', input, '--state-table', table, '--json'];

    const refused = await runCli(args(folder('none', { 'x.json': ['x'] })), { ...env(), SLUICE_NOTIFICATION_QUEUE_URL: undefined });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toMatch(/set SLUICE_NOTIFICATION_QUEUE_URL/);

    const waitForQueue = async (n: number) => {
      for (let i = 0; i < 100 && (await queueCounts(clients.sqs, queueUrl)).visible < n; i++) await sleep(50);
    };
    // x.json of the refused run was not uploaded (refused before): S3's test event only
    await waitForQueue(1);
    const first = await runCli(args(folder('one', { '001.json': ['a', 'b'], '002.json': ['c'] })), { ...env(), SLUICE_NOTIFICATION_QUEUE_URL: queueUrl });
    expect(first.code).toBe(0);
    const show = async () =>
      JSON.parse((await runCli(['show', 'outputs', query, '--source', `s3://${bucket}/landing`, '--json'], env())).stdout).rows.map(
        (r: { row: { id: string } }) => r.row.id,
      );
    // the uploads' notifications arrive a moment after the uploads: a run may leave some to the next
    await waitForQueue(0);
    const second = await runCli(args(folder('two', { '003.json': ['d'] })), { ...env(), SLUICE_NOTIFICATION_QUEUE_URL: queueUrl });
    expect(second.code).toBe(0);
    await sleep(300);
    const third = await runCli(args(folder('three', {})), { ...env(), SLUICE_NOTIFICATION_QUEUE_URL: queueUrl });
    expect(third.code).toBe(0);
    expect((await show()).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(await queueCounts(clients.sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    clients.destroy();
  });
});
