/**
 * `sluice example seed` (what `npm start` runs) in both of the S3 source's discovery modes, on
 * the test stack: `--discovery notifications` (S3's event notifications through SQS, which the
 * test stack delivers at least once and out of order) prints the same runs, batches and rows as
 * the listing, and those are the rows Spark gives for the reference example.
 */
import { cliEnv, runCli } from '../helpers/cli';
import { testConnection } from '../helpers/stack';

/** The lines of each run (`run N: dropped … emitted […]; watermark …`), by output mode. */
function runLines(stdout: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let mode = '';
  for (const line of stdout.split('\n')) {
    const header = /^(append|update) mode {2}\(/.exec(line);
    if (header) mode = header[1];
    else if (/^ {2}run \d: /.test(line)) (out[mode] ??= []).push(line.trim());
  }
  return out;
}

describe('sluice example seed', () => {
  it('runs the same batches and rows with --discovery notifications as with the listing', async () => {
    const env = cliEnv(testConnection(), 's3');
    const listed = await runCli(['example', 'seed', '--ephemeral'], env);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: expect.not.stringMatching(/"level":"error"/) });
    const notified = await runCli(['example', 'seed', '--discovery', 'notifications', '--ephemeral'], env);
    expect({ code: notified.code, stderr: notified.stderr }).toEqual({ code: 0, stderr: expect.not.stringMatching(/"level":"error"/) });
    expect(notified.stdout).toMatch(/^append mode {2}\(.*, notifications http\S+sluice-example-\S+-append\)$/m);

    const byListing = runLines(listed.stdout);
    // Spark's rows for the reference example (the article's), so the comparison is not of two empty runs
    expect(byListing.append.map((l) => /emitted (\[.*\]);/.exec(l)?.[1])).toEqual([
      '[]',
      '[(12:00, 12:10, 19.0)]',
      '[(12:10, 12:20, 7.0), (12:20, 12:30, 3.0)]',
    ]);
    expect(byListing.update.map((l) => /emitted (\[.*\]);/.exec(l)?.[1])).toEqual([
      '[(12:00, 12:10, 15.0), (12:10, 12:20, 7.0)]',
      '[(12:00, 12:10, 19.0), (12:20, 12:30, 3.0)]',
      '[(12:40, 12:50, 1.0)]',
    ]);
    expect(runLines(notified.stdout)).toEqual(byListing);
  });

  it('refuses --discovery notifications with a Kinesis source', async () => {
    const r = await runCli(['example', 'seed', '--source', 'kinesis', '--discovery', 'notifications', '--ephemeral'], cliEnv(testConnection(), 's3'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--discovery notifications is how an S3 source finds files, not a Kinesis stream/);
  });
});
