/**
 * `sluice conformance run --crash <point>` says whether the crash fired: a point the case never
 * reaches on the chosen sink (mid-sink on the S3 sink, which writes a batch in one object) gives
 * the no-crash result, and the user must not take that for a crash survived.
 */
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { cliEnv, runCli } from '../helpers/cli';
import { testConnection } from '../helpers/stack';

const CASE = join(__dirname, '../conformance/cases/sluice-sliding-window-append.json');
const steps = (JSON.parse(readFileSync(CASE, 'utf8')) as { steps: unknown[] }).steps.length;
const conformance = (...args: string[]) => runCli(['conformance', 'check', ...args, CASE], cliEnv(testConnection(), 's3'));

describe('when conformance runs with a crash point', () => {
  it('says the crash fired in every step when the case reaches the point', async () => {
    const r = await conformance('--crash', 'before-commit', '--sink', 's3');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`crash before-commit fired in ${steps} of ${steps} steps of sluice-sliding-window-append\n`);
  });

  it('says so when the point is never reached on the sink (mid-sink on the one-object S3 sink)', async () => {
    const r = await conformance('--crash', 'mid-sink', '--sink', 's3');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`crash mid-sink fired in 0 of ${steps} steps of sluice-sliding-window-append: the case never reaches that point on this sink`);
    // the printed result stays the format's (no runner-private keys)
    expect(Object.keys(JSON.parse(r.stdout.trim().split('\n')[0]))).toEqual(['name', 'steps']);
  });
});
