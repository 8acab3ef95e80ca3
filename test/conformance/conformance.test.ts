/**
 * The conformance cases through the runner on the local stack: the S3 landing source, the S3
 * checkpoint, the DynamoDB state store and the recording sink, exactly as `npx sluice conformance
 * check` runs them. Then every crash point: one crash per step, and the next run finishes; the
 * result must equal the result without a crash.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { joinsOnlyStatic, parseCase } from '../../lib/conformance/case';
import { compareCase } from '../../lib/conformance/results';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { prepareConformance, runCase } from '../../lib/conformance/runner';
import { testConnection, uniqueName } from '../helpers/stack';

const dirs = [join(__dirname, '../../../shared/conformance/cases'), join(__dirname, 'cases')];
const files = dirs
  .filter((d) => existsSync(d)) // ../shared holds the public cases on the team's machines, not in a user's clone
  .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.json')).map((f) => join(d, f)));
const cases2 = join(__dirname, '../../../shared/conformance/cases-2');
/** The cases-2 cases whose joins are all with static tables (stream-static joins run; stream-stream ones do not yet). */
const staticJoinCases = () =>
  (existsSync(cases2) ? readdirSync(cases2).filter((f) => f.endsWith('.json')).map((f) => join(cases2, f)) : []).filter((f) => joinsOnlyStatic(parseCase(readFileSync(f, 'utf8'), f)));
const cases = [...files, ...staticJoinCases()].map((f) => [basename(f), parseCase(readFileSync(f, 'utf8'), f)] as const);

const bucket = uniqueName('conf');
const table = uniqueName('conf-state');

beforeAll(async () => {
  await prepareConformance(testConnection(), bucket, table);
});

describe('when the conformance cases run on the local stack', () => {
  it.each(cases)('%s matches its expectations', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table });
    expect(compareCase(c, result)).toEqual([]);
  });
});

describe('when the state has four partitions (writeStream option statePartitions 4)', () => {
  // Every case, and every case crashed mid-state (a commit that lands in some partitions and not
  // others); `scripts/crash-matrix` runs every point with --state-partitions 4.
  it.each(cases)('%s matches its expectations', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, statePartitions: 4 });
    expect(compareCase(c, result)).toEqual([]);
  });
  it.each(cases)('%s matches its expectations after a crash mid-state', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, statePartitions: 4, crash: 'mid-state' });
    expect(compareCase(c, result)).toEqual([]);
  });
});

describe.each(CRASH_POINTS)('when every run crashes once at %s', (point) => {
  it.each(cases)('%s still matches its expectations after the next run', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, crash: point });
    expect(compareCase(c, result)).toEqual([]);
  });
});
