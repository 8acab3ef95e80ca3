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
