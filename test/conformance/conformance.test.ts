/**
 * The conformance cases through the runner on the local stack: the S3 landing source, the S3
 * checkpoint, the DynamoDB state store and the recording sink, exactly as `npx sluice conformance
 * check` runs them. Then every crash point: one crash per step, and the next run finishes; the
 * result must equal the result without a crash.
 */
import { basename } from 'node:path';
import { compareCase } from '../../lib/conformance/results';
import { CRASH_POINTS } from '../../lib/engine/testing/crash';
import { prepareConformance, runCase } from '../../lib/conformance/runner';
import { testConnection, uniqueName } from '../helpers/stack';

import { skippedCases, supportedCases } from '../helpers/supported-cases';
import { kinesisCaseSource } from '../../lib/conformance/kinesis';
import { isPipelineCase, usesFileObjects } from '../../lib/conformance/case';
import { isTransformWithStateCase } from '../../lib/conformance/format-4';

// public cases (cases/ and FORMAT-2's cases-2/, join cases left out until joins land) and ours
const cases = supportedCases('s3').map(([f, c]) => [basename(f), c] as const);
// FORMAT-3's cases (types, expressions, formats) and ours of the same kinds
const FORMAT_3 = new Set(
  supportedCases('s3')
    .filter(([f, c]) => f.includes('cases-3') || /^sluice-(types|expr)-/.test(c.name))
    .map(([f]) => basename(f)),
);

// FORMAT-3 cases needing what sluice does not support yet, each named with what it needs
const skipped = skippedCases('s3').map(([f, why]) => [basename(f), why] as const);

const bucket = uniqueName('conf');
const table = uniqueName('conf-state');

beforeAll(async () => {
  await prepareConformance(testConnection(), bucket, table);
});

describe('the cases left out until sluice supports what they need', () => {
  if (skipped.length === 0) it('(none)', () => undefined);
  for (const [file, why] of skipped) it.skip(`${file} needs ${why}`, () => undefined);
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

describe('when the chained-operator cases (FORMAT-2 pipelines), the typed JSON cases (FORMAT-3) and the transformWithState cases (FORMAT-4) read a Kinesis stream', () => {
  // Each case its own stream of three shards, rows spread by the first operator's keys (kinesis.ts).
  // (a case of raw text or keyed files, or of another format than JSON, needs the S3 landing source: Kinesis records are JSON;
  // one that splits a step into batches by maxFilesPerTrigger expects file boundaries, which a stream has not: kinesis.ts)
  const pipelines = cases.filter(
    ([file, c]) =>
      (isPipelineCase(c) || FORMAT_3.has(file) || isTransformWithStateCase(c)) &&
      c.expectError === undefined &&
      !usesFileObjects(c) &&
      c.query.options?.maxFilesPerTrigger === undefined &&
      [c.query.format, ...Object.values(c.query.inputs ?? {}).map((i) => i.format)].every((f) => f === undefined || f === 'json'),
  );
  it.each(pipelines)('%s matches its expectations', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, sourceFactory: kinesisCaseSource(testConnection()) });
    expect(compareCase(c, result)).toEqual([]);
  });
});

describe.each(CRASH_POINTS)('when every run crashes once at %s', (point) => {
  it.each(cases)('%s still matches its expectations after the next run', async (_file, c) => {
    const result = await runCase(c, { connection: testConnection(), bucket, stateTable: table, crash: point });
    expect(compareCase(c, result)).toEqual([]);
  });
});
