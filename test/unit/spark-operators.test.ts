/**
 * Rules of Spark's stateful streaming operators, checked against what Spark's own source does
 * (each test names the class or suite it follows). Expectations are worked by hand.
 */
import type { QueryPlan } from '../../lib/engine/plan/types';
import { MaxEventTimes, NO_WATERMARKS, WatermarkPolicy } from '../../lib/engine/watermark';

/** A plan with one withWatermark stage per input, as the policy reads it. */
function twoInputs(policy?: 'min' | 'max'): Pick<QueryPlan, 'stages' | 'inputs' | 'watermarkPolicy'> {
  const wm = (id: string, delayMs: number) => ({ kind: 'watermark', id, column: 't', delayMs });
  return {
    stages: [wm('w0', 10_000)],
    inputs: [{ stages: [wm('w1', 10_000)] }],
    ...(policy ? { watermarkPolicy: policy } : {}),
  } as unknown as Pick<QueryPlan, 'stages' | 'inputs' | 'watermarkPolicy'>;
}

function seen(entries: Array<[string, number]>): MaxEventTimes {
  const m = new MaxEventTimes();
  m.observe(new Map(entries));
  return m;
}

describe('the global watermark over several withWatermark inputs (Spark WatermarkTracker)', () => {
  it("'min': an input that has seen no row counts as 0, so the watermark waits for every input", () => {
    const p = new WatermarkPolicy(twoInputs());
    const afterLeft = p.advance({}, seen([['w0', 30_000]]));
    expect(afterLeft).toEqual({ w0: 20_000 });
    expect(p.global(NO_WATERMARKS, afterLeft)).toBe(0);
    const afterBoth = p.advance(afterLeft, seen([['w1', 32_000]]));
    expect(p.global(NO_WATERMARKS, afterBoth)).toBe(20_000);
  });

  it("'max': the unseen input's 0 never wins", () => {
    const p = new WatermarkPolicy(twoInputs('max'));
    expect(p.global(NO_WATERMARKS, p.advance({}, seen([['w0', 30_000]])))).toBe(20_000);
  });

  it('never moves back', () => {
    const p = new WatermarkPolicy(twoInputs());
    expect(p.global({ batchWatermarkMs: 50_000, lateWatermarkMs: 40_000 }, { w0: 20_000, w1: 30_000 })).toBe(50_000);
  });
});
