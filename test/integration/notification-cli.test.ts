/**
 * `sluice run` of a query with .option('discovery', 'notifications') against an endpoint (here
 * the test stack, as it would be LocalStack or AWS): it reads the queue SLUICE_NOTIFICATION_QUEUE_URL
 * names, and refuses to run without one rather than list the prefix.
 */
import { cliClients, cliEnv, cliResources, runArgs, runCli, tempFolder, writeQuery } from '../helpers/cli';
import { ensureNotificationQueue } from '../../lib/local/resources';
import { queueCounts } from '../helpers/s3-notifications';
import { testConnection, uniqueName } from '../helpers/stack';

const env = () => cliEnv(testConnection(), 's3');
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
const temp = tempFolder('sluice-notify-cli-');

/** A folder of files (name → the ids of its rows, one `{"id": ...}` line each). */
function folder(name: string, files: Record<string, string[]>): string {
  return temp.folder(name, Object.fromEntries(Object.entries(files).map(([file, ids]) => [file, ids.map((id) => ({ id }))])));
}

describe("sluice run with .option('discovery', 'notifications')", () => {
  it('reads the files S3 announced to SLUICE_NOTIFICATION_QUEUE_URL, each once, and refuses without a queue', async () => {
    const { bucket, table } = await cliResources('notify-cli');
    const clients = cliClients();
    const { queueUrl } = await ensureNotificationQueue(clients, { bucket, prefix: 'landing', name: uniqueName('nq') });
    const query = writeQuery(
      temp.path('copy.js'),
      `exports.default = readStream.format('json').schema('id STRING').option('discovery', 'notifications').load().writeStream.queryName('copy').plan();`,
    );
    const args = (input: string) => runArgs(query, { source: `s3://${bucket}/landing`, input, stateTable: table, json: true });

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
