/**
 * FORMAT-4's additions to a case (../shared/conformance/FORMAT-4.md): whether a case has a
 * transformWithState stage, the processor module and output schema each step runs with, a step's
 * processing clock, and the processor module loaded as a user's module is.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidQueryError } from '../engine/errors';
import { parseTimestamp } from '../engine/timestamps';
import type { ProcessorClass } from '../engine/tws/api';
import { requireWithPackageName } from '../local/package-name';
import type { CaseStep, ConformanceCase } from './case';

/** FORMAT-4: whether the case has a transformWithState stage (its results carry `timers`). */
export function isTransformWithStateCase(c: ConformanceCase): boolean {
  return c.query.transformWithState !== undefined || (c.query.pipeline ?? []).some((s) => s.transformWithState !== undefined);
}

/** FORMAT-4: the processor module and output schema step `step` (0-based) runs with: the last a step up to it set, else none. */
export function processorAt(c: ConformanceCase, step: number): { processor?: string; outputSchema?: string } {
  const out: { processor?: string; outputSchema?: string } = {};
  (c.steps ?? []).slice(0, step + 1).forEach((s) => {
    if (s.processor !== undefined) out.processor = s.processor;
    if (s.outputSchema !== undefined) out.outputSchema = s.outputSchema;
  });
  return out;
}

/** FORMAT-4: whether step `step` (0-based) runs another processor module or output schema than the step before. */
export function processorChangesAt(c: ConformanceCase, step: number): boolean {
  return step > 0 && JSON.stringify(processorAt(c, step)) !== JSON.stringify(processorAt(c, step - 1));
}

/** FORMAT-4: a step's `clock` in epoch ms, or undefined (the runner's wall clock). */
export function stepClockMs(c: ConformanceCase, step: CaseStep): number | undefined {
  if (step.clock === undefined) return undefined;
  const us = parseTimestamp(step.clock);
  if (us === null)
    throw new InvalidQueryError(`case ${c.name}: step clock ${JSON.stringify(step.clock)} is not an ISO 8601 instant, e.g. "1970-01-01T00:00:01.000Z"`);
  return Number(us) / 1000;
}

/**
 * A processor module's class (FORMAT-4): its default export, loaded as a user's module is (a .ts
 * one through tsx), with the package name `sluice` resolving to this package's own entry, so the
 * module extends the engine's StatefulProcessor wherever it lives.
 */
export function loadProcessor(c: ConformanceCase, path: string): ProcessorClass {
  const file = resolve(c.dir ?? '.', path);
  if (!existsSync(file))
    throw new InvalidQueryError(`case ${c.name}: processor module ${path} does not exist (looked for ${file}): give its path relative to the case file`);
  const mod = requireWithPackageName(file) as { default?: unknown };
  const cls = mod.default;
  if (typeof cls !== 'function')
    throw new InvalidQueryError(`case ${c.name}: processor module ${path} has no default export class: export default a class extending StatefulProcessor`);
  return cls as ProcessorClass;
}
