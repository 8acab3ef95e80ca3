/**
 * Rules of Spark's stateful streaming operators, checked against what Spark's own source does
 * (each test names the class or suite it follows). Expectations are worked by hand.
 */
import { compileAgg } from '../../lib/engine/aggregates';
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

describe('the global watermark over several withWatermark inputs (FORMAT-2 "Global watermark")', () => {
  // FORMAT-2 takes the minimum over the watermark stages that have seen at least one row. Spark's
  // WatermarkTracker counts an input that has seen no row (in this run) as 0 instead, so its
  // watermark waits for every input; the format's rule is the one cases are worked from.
  it("'min': over the inputs that have seen a row, so one input's rows move it before the other has any", () => {
    const p = new WatermarkPolicy(twoInputs());
    const afterLeft = p.advance({}, seen([['w0', 30_000]]));
    expect(afterLeft).toEqual({ w0: 20_000 });
    expect(p.global(NO_WATERMARKS, afterLeft)).toBe(20_000);
    const afterBoth = p.advance(afterLeft, seen([['w1', 12_000]]));
    expect(p.global({ batchWatermarkMs: 20_000, lateWatermarkMs: 0 }, afterBoth)).toBe(20_000);
    expect(p.global(NO_WATERMARKS, afterBoth)).toBe(2_000);
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

describe('min and max of strings (Spark compares UTF8String by bytes, i.e. by code points)', () => {
  const row = (s: string) => ({ s });
  const fold = (fn: 'min' | 'max', values: string[]) => {
    const agg = compileAgg({ fn, column: 's', as: 'x' }, { type: 'STRING' });
    let acc = agg.init();
    for (const v of values) acc = agg.update(acc, row(v));
    return agg.finish(acc);
  };

  it('a character past U+FFFF sorts above U+FF01, though its UTF-16 units (D83D ...) sort below', () => {
    // U+1F600 is F0 9F 98 80 in UTF-8, U+FF01 is EF BC 81: the emoji is the larger
    expect(fold('max', ['\uFF01', '\u{1F600}'])).toBe('\u{1F600}');
    expect(fold('min', ['\u{1F600}', '\uFF01'])).toBe('\uFF01');
  });

  it('plain text orders as before: by code point, a prefix first', () => {
    expect(fold('min', ['b', 'ab', 'a', 'B'])).toBe('B');
    expect(fold('max', ['b', 'ab', 'a', 'ba'])).toBe('ba');
  });
});
