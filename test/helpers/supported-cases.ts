/**
 * The conformance case files the suites run: the public ones (../shared, on the team's machines,
 * not in a user's clone): FORMAT.md's in cases, FORMAT-2's to 4's in cases-2 to cases-4, and the project's own.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConformanceCase, parseCase, usesFileObjects } from '../../lib/conformance/case';

const PUBLIC_CASES = join(__dirname, '../../../shared/conformance/cases');
const PUBLIC_CASES_2 = join(__dirname, '../../../shared/conformance/cases-2');
const PUBLIC_CASES_3 = join(__dirname, '../../../shared/conformance/cases-3');
const PUBLIC_CASES_4 = join(__dirname, '../../../shared/conformance/cases-4');
export const PROJECT_CASES = join(__dirname, '../conformance/cases');

export const caseFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(dir, f))
    : [];

/**
 * Cases skipped by name: what they need is on its way on another branch. case.ts reads DATE and
 * DECIMAL columns now (file formats need them), but sum/avg of a DECIMAL is the decimal
 * aggregates' work: remove the entry when it lands.
 */
const WAITING: Record<string, string> = {};

/** Where the suite runs its cases: the S3 runner (runCase) or the in-memory twins (memory-case.ts). */
export type CaseTarget = 's3' | 'memory';

/**
 * The feature the case needs that the suite's target does not run, named (null: it runs): on the
 * in-memory twins, files with keys of their own (only the S3 landing source reads by seen files
 * rather than key order), other formats than JSON, or expected dead letters.
 */
function unsupportedFeature(c: ConformanceCase, target: CaseTarget): string | null {
  const waiting = WAITING[c.name];
  if (waiting !== undefined) return waiting;
  const formats = [c.query?.format, ...Object.values(c.query?.inputs ?? {}).map((i) => i?.format)].filter((f) => f !== undefined && f !== 'json');
  if (target === 'memory' && formats.length)
    return `format ${JSON.stringify(formats[0])} (FORMAT-3 "File formats"): the memory runner writes rows as JSON lines, the S3 runner writes each format's files`;
  if (target === 'memory' && usesFileObjects(c))
    return 'files with keys of their own or raw text (FORMAT-3 "Step files"): the S3 landing source reads them, the in-memory twin does not';
  if (target === 'memory' && expectsDeadLetters(c))
    return 'an expected dead-letter count (FORMAT-3 "Expect additions"): the S3 runner reads the dead letters back, the in-memory twin does not';
  return null;
}

/** Whether a step of the case expects `deadLetters` or `deadLetterErrors`. */
function expectsDeadLetters(c: ConformanceCase): boolean {
  return (c.steps ?? []).some((st) => {
    const e = (st as { expect?: Record<string, unknown> }).expect;
    return e !== undefined && e !== null && ('deadLetters' in e || 'deadLetterErrors' in e);
  });
}

/** Every case file of the suites that the target runs, parsed: [file, case]. */
export function supportedCases(
  target: CaseTarget = 'memory',
  dirs: readonly string[] = [PUBLIC_CASES, PUBLIC_CASES_2, PUBLIC_CASES_3, PUBLIC_CASES_4, PROJECT_CASES],
): Array<readonly [string, ConformanceCase]> {
  return dirs
    .flatMap((d) => caseFiles(d))
    .map((f) => [f, parseCase(readFileSync(f, 'utf8'), f)] as const)
    .filter(([, c]) => unsupportedFeature(c, target) === null);
}

/** The case files the target skips, with the feature each needs: [file, feature]. */
export function skippedCases(
  target: CaseTarget,
  dirs: readonly string[] = [PUBLIC_CASES, PUBLIC_CASES_2, PUBLIC_CASES_3, PUBLIC_CASES_4, PROJECT_CASES],
): Array<readonly [string, string]> {
  return dirs
    .flatMap((d) => caseFiles(d))
    .map((f) => [f, unsupportedFeature(parseCase(readFileSync(f, 'utf8'), f), target)] as const)
    .filter((x): x is readonly [string, string] => x[1] !== null);
}
