/**
 * The command lines of `sluice report`, `sluice lateness` and `sluice status`: help with an example, and the
 * mistakes caught before anything starts (exit 2, with what to write). Nothing here reaches an
 * endpoint; test/integration/report.test.ts and lateness.test.ts run the commands on the stack.
 */
import { runCli } from '../helpers/cli';

const NO_ENDPOINT = { AWS_ENDPOINT_URL: undefined, AWS_ENDPOINT_URL_S3: undefined, AWS_ENDPOINT_URL_KINESIS: undefined, AWS_ENDPOINT_URL_DYNAMODB: undefined };

describe('sluice report and sluice lateness on the command line', () => {
  it.each([
    ['report', /--interval <duration>[\s\S]*--lateness-column <column>[\s\S]*Example:\n {2}npx sluice report /],
    ['lateness', /--column <name>[\s\S]*--sample <n>[\s\S]*--since <duration>[\s\S]*Example:\n {2}npx sluice lateness /],
  ])('%s --help explains it with an example', async (cmd, pattern) => {
    const r = await runCli([cmd, '--help'], NO_ENDPOINT);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(pattern);
  });

  it('both are listed in sluice --help', async () => {
    const r = await runCli(['--help'], NO_ENDPOINT);
    expect(r.stdout).toMatch(/^ {2}report /m);
    expect(r.stdout).toMatch(/^ {2}lateness /m);
  });

  it('show lists its four views, each with an example', async () => {
    const r = await runCli(['show', '--help'], NO_ENDPOINT);
    expect(r.code).toBe(0);
    for (const v of ['outputs', 'dead-letters', 'checkpoint', 'state']) expect(r.stdout).toMatch(new RegExp(`^ {2}${v} \\[options\\] \\[query-module\\]`, 'm'));
    const state = await runCli(['show', 'state', '--help'], NO_ENDPOINT);
    expect(state.stdout).toMatch(/--key <value>[\s\S]*--json[\s\S]*Example:\n {2}npx sluice show state src\/query.ts --key alice/);
    const bare = await runCli(['show'], NO_ENDPOINT);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Commands:');
  });

  it.each([
    [['show', 'outputs'], 'sluice show outputs needs the query module (as for sluice run) or --sink s3://bucket/prefix'],
    [['show', 'dead-letters'], 'sluice show dead-letters needs the query module (as for sluice run) or --checkpoint s3://bucket/prefix'],
    [
      ['show', 'checkpoint', '--source', 's3://my-bucket/landing'],
      'sluice show checkpoint needs the query module (as for sluice run) or --checkpoint s3://bucket/prefix',
    ],
    [['show', 'state', '--checkpoint', 's3://my-bucket/ckpt', '--key', 'alice'], 'sluice show state needs the query module (its operators name the state)'],
    [['show', 'state', '--checkpoint', 's3://my-bucket/ckpt'], "required option '--key <value>' not specified"],
    [['show', 'outputs', '--sink', 's3://my-bucket/out', '--limit', '0'], 'The number must be a positive integer: write e.g. --limit 50.'],
    [['show', 'outputs', '--sink', 'ftp://my-bucket/out'], 'has an unknown scheme: write s3://<bucket>/<prefix>'],
    [['show', 'outputs', '--sink', 's3://my-bucket/out', '--entry', 'offsets/0'], "unknown option '--entry'"],
    [
      ['show', 'everything'],
      "sluice: unknown command 'show everything': sluice show has outputs, dead-letters, checkpoint, state: write e.g. sluice show outputs",
    ],
  ])('%j is a usage error that says what to write', async (args, message) => {
    const r = await runCli(args, NO_ENDPOINT);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it.each([
    [['report', '--out', 'r.html'], 'sluice report needs --checkpoint s3://bucket/prefix, or the query module'],
    [['report', '--checkpoint', 's3://my-bucket/ckpt', '--interval', 'soon'], '--interval "soon" is not a duration: write e.g. 15m'],
    [['report', '--checkpoint', 's3://my-bucket/ckpt', '--lateness-column', 'event_time'], '--lateness-column needs --source'],
    [['lateness', '--column', 'event_time'], 'sluice lateness needs --source s3://bucket/prefix or kinesis://stream'],
    [['lateness', '--source', 's3://my-bucket/landing'], 'sluice lateness needs --column <event-time field>'],
    [['lateness', '--source', 's3://my-bucket/landing', '--column', 'event_time', '--delay', '10 parsecs'], '--delay "10 parsecs" is not a duration'],
    [
      ['lateness', '--source', 's3://my-bucket/landing', '--column', 'event_time', '--sample', '0'],
      'The sample must be a positive number of rows: write e.g. --sample 100000.',
    ],
    [
      ['status', '--checkpoint', 's3://my-bucket/ckpt', '--behind-at', '1.5'],
      '--behind-at 1.5 must be a number above 0 and at most 1: write e.g. --behind-at 0.5.',
    ],
    [['status', '--checkpoint', 's3://my-bucket/ckpt', '--idle-runs', '0'], 'The number must be a positive integer: write e.g. --idle-runs 4.'],
    [['status', '--checkpoint', 's3://my-bucket/ckpt', '--state-growth', '-5'], '--state-growth -5 must be a number above 0: write e.g. --state-growth 5.'],
  ])('%j is a usage error that says what to write', async (args, message) => {
    const r = await runCli(args, NO_ENDPOINT);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });
});
