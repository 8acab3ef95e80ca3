/**
 * The conformance case files the suites run: the public ones (../shared, on the team's machines,
 * not in a user's clone), FORMAT-2's public ones in cases-2, and the project's own.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ConformanceCase, parseCase } from '../../lib/conformance/case';

const PUBLIC_CASES = join(__dirname, '../../../shared/conformance/cases');
const PUBLIC_CASES_2 = join(__dirname, '../../../shared/conformance/cases-2');
export const PROJECT_CASES = join(__dirname, '../conformance/cases');

export const caseFiles = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => join(dir, f))
    : [];

/**
 * Whether the engine runs the case's features. Every feature of FORMAT.md and FORMAT-2.md runs
 * now (chained operators, stream-static and stream-stream joins); kept so that a feature the
 * formats add later can be left out of the suites until it lands.
 */
function engineSupports(_c: ConformanceCase): boolean {
  return true;
}

/** Every case file of the suites that the engine supports, parsed: [file, case]. */
export function supportedCases(dirs: readonly string[] = [PUBLIC_CASES, PUBLIC_CASES_2, PROJECT_CASES]): Array<readonly [string, ConformanceCase]> {
  return dirs
    .flatMap((d) => caseFiles(d))
    .map((f) => [f, parseCase(readFileSync(f, 'utf8'), f)] as const)
    .filter(([, c]) => engineSupports(c));
}
