/**
 * Test-only failure injection: crash a run at a named point of a batch, as a killed Lambda would
 * (everything in memory is lost; what was written stays written).
 *
 *   offsets/N written ──▶ after-offsets ──▶ read ──▶ mid-read ──▶ operators ──▶ sink write
 *     ──▶ after-sink ──▶ state writes (mid-state: half of them) ──▶ before-commit
 *     ──▶ commits/N written ──▶ after-commit
 *
 * Enabled at the edges only: `SLUICE_CRASH_AT=<point>[@<batchId>]` for the CLI, or
 * `--crash <point>` for the conformance runner.
 */
import { InjectedCrash } from '../errors';
import { InvalidOptionError } from '../errors';

export const CRASH_POINTS = ['after-offsets', 'mid-read', 'mid-state', 'after-sink', 'before-commit', 'after-commit'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export interface CrashPlan {
  readonly point: CrashPoint;
  /** Crash only in this batch; any batch when absent. */
  readonly batchId?: number;
  /** How many crashes to inject before behaving (default 1). */
  readonly times?: number;
}

export class CrashInjector {
  private remaining: number;

  constructor(private readonly plan: CrashPlan | null) {
    this.remaining = plan?.times ?? 1;
  }

  /** True when a crash is planned at `point` for this batch (used for mid-state's partial write). */
  armed(point: CrashPoint, batchId: number): boolean {
    const p = this.plan;
    return !!p && this.remaining > 0 && p.point === point && (p.batchId === undefined || p.batchId === batchId);
  }

  at(point: CrashPoint, batchId: number): void {
    if (this.armed(point, batchId)) {
      this.remaining--;
      throw new InjectedCrash(point, batchId);
    }
  }

  get fired(): boolean {
    return !!this.plan && this.remaining < (this.plan.times ?? 1);
  }
}

export function parseCrashPlan(text: string | undefined): CrashPlan | null {
  if (!text) return null;
  const [point, batch] = text.split('@');
  if (!(CRASH_POINTS as readonly string[]).includes(point)) {
    throw new InvalidOptionError(`crash point ${JSON.stringify(point)} is not one of ${CRASH_POINTS.join(', ')}: use e.g. SLUICE_CRASH_AT=after-sink or after-sink@3`);
  }
  if (batch !== undefined && !/^\d+$/.test(batch)) {
    throw new InvalidOptionError(`crash batch ${JSON.stringify(batch)} in ${JSON.stringify(text)} must be a batch ID (a non-negative integer), e.g. after-sink@3`);
  }
  return { point: point as CrashPoint, batchId: batch === undefined ? undefined : Number(batch) };
}
