/**
 * The public conformance cases on the in-memory ports: each step is a fresh executor over the
 * same checkpoint, state and landing objects, as a scheduled run would be.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseCase } from '../../lib/conformance/case';
import { compareCase } from '../../lib/conformance/results';
import { runCaseInMemory } from '../helpers/memory-case';
import { caseFiles, PROJECT_CASES as projectCases, supportedCases } from '../helpers/supported-cases';

// public cases (cases/ and FORMAT-2's cases-2/, join cases left out until joins land) and ours
const cases = supportedCases().map(([f, c]) => [basename(f), c] as const);

describe("the conformance cases (public and the project's own), run on the in-memory ports", () => {
  it.each(cases)('%s gives the expected result', async (_name, c) => {
    const result = await runCaseInMemory(c);
    expect(compareCase(c, result)).toEqual([]);
  });
});

describe('the conformance cases with four state partitions, on the in-memory ports', () => {
  // The twin refuses a key read or written in another partition than its own, so an operator that
  // routes a key by anything but its grouping values (window left out) fails here.
  it.each(cases)('%s gives the expected result', async (_name, c) => {
    expect(compareCase(c, await runCaseInMemory(c, 4))).toEqual([]);
  });
});

describe("the project's own conformance cases", () => {
  it.each(caseFiles(projectCases).map((f) => [basename(f), f]))('%s says in "about" where its expectations come from', (_name, file) => {
    const c = parseCase(readFileSync(file, 'utf8'), file);
    // FORMAT.md: "about" is where the case comes from. Ours are worked by hand from Spark's rules.
    expect(c.about).toMatch(/Expectations worked by hand( from [^.]*(Spark|Guide|rules above)|, not taken from sluice's output|:)/);
  });
});
