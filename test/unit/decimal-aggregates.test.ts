/**
 * Aggregates over DECIMAL and DATE columns (issue 29, FORMAT-3 "Types"): exact sums and averages
 * with Spark's result types, numeric order for min/max, buffers that stay JSON through the state
 * store's encoding and merge across batches. Expected values worked out by hand from Spark's rules
 * (Sum.scala, Average.scala: sum DECIMAL(min(38, p + 10), s), avg DECIMAL(min(38, p + 4), min(38, s + 4)) rounded HALF_UP).
 */
import { caseToPlan, parseCase } from '../../lib/conformance/case';
import { type CompiledAgg, compileAgg } from '../../lib/engine/aggregates';
import { aggOutputType } from '../../lib/engine/plan/columns';
import type { AggSpec } from '../../lib/engine/plan/types';
import type { Json } from '../../lib/engine/ports';
import type { DataType } from '../../lib/engine/schema';
import { decodeStateJson, encodeStateJson } from '../../lib/engine/state-json';

const dec = (precision: number, scale: number): DataType => ({ type: 'DECIMAL', precision, scale });

/** Folds values (already in their row form) through an aggregate, the buffer passed through the state encoding after each row. */
function fold(agg: CompiledAgg, values: unknown[]): unknown {
  let s = agg.init();
  for (const v of values) s = decodeStateJson(encodeStateJson(agg.update(s, { v })));
  return agg.finish(s);
}

/** The same values split in two buffers merged (two batches, or two read tasks' partials). */
function foldMerged(agg: CompiledAgg, first: unknown[], second: unknown[]): unknown {
  const part = (values: unknown[]) => values.reduce<Json>((s, v) => agg.update(s, { v }), agg.init());
  return agg.finish(agg.merge(part(first), part(second)));
}

const spec = (fn: AggSpec['fn']): AggSpec => ({ fn, column: 'v', as: fn });

describe('sum of a DECIMAL column', () => {
  const sum = compileAgg(spec('sum'), dec(10, 2));

  it('adds exactly at the column scale: 0.10 + 0.20 is 0.30, not 0.30000000000000004', () => {
    expect(fold(sum, ['0.10', '0.20'])).toBe('0.30');
    expect(fold(sum, ['-0.05', '0.01', null])).toBe('-0.04');
  });

  it('is null when every value is null, and merges partial sums', () => {
    expect(fold(sum, [null, null])).toBeNull();
    expect(foldMerged(sum, ['1.25', null], ['-3.50'])).toBe('-2.25');
    expect(foldMerged(sum, [null], [null])).toBeNull();
  });

  it('keeps 38 digits: DECIMAL(38,2) sums to DECIMAL(38,2)', () => {
    const wide = compileAgg(spec('sum'), dec(38, 2));
    const nines = '9'.repeat(36);
    expect(fold(wide, [`${nines}.98`, '0.01'])).toBe(`${nines}.99`);
  });

  it('fails with ARITHMETIC_OVERFLOW past 38 digits', () => {
    const wide = compileAgg(spec('sum'), dec(38, 2));
    const nines = '9'.repeat(36);
    expect(() => fold(wide, [`${nines}.99`, '0.01'])).toThrow(
      /^\[ARITHMETIC_OVERFLOW\] Overflow in sum of decimals: sum\(v\) reached 1000000000000000000000000000000000000\.00/,
    );
  });
});

describe('avg of a DECIMAL column', () => {
  it('divides the exact sum by the count and rounds HALF_UP to s + 4 digits', () => {
    const avg = compileAgg(spec('avg'), dec(10, 2));
    expect(fold(avg, ['1.00', '2.00', '2.00'])).toBe('1.666667'); // 5/3
    expect(fold(avg, ['-1.00', '-2.00', '-2.00'])).toBe('-1.666667'); // halves and above away from zero
    expect(fold(avg, ['-0.01', '0.00', '0.00'])).toBe('-0.003333');
    expect(fold(avg, ['0.10', null])).toBe('0.100000'); // the null counts nowhere
    expect(fold(avg, [null])).toBeNull();
  });

  it('rounds an exact half away from zero: -1/32 at 4 digits is -0.0313', () => {
    const avg = compileAgg(spec('avg'), dec(5, 0));
    expect(fold(avg, ['-1', ...new Array(31).fill('0')])).toBe('-0.0313');
    expect(fold(avg, ['1', ...new Array(31).fill('0')])).toBe('0.0313');
  });

  it('merges [sum, count] partials', () => {
    const avg = compileAgg(spec('avg'), dec(10, 2));
    expect(foldMerged(avg, ['1.00', '2.00'], ['2.00', null])).toBe('1.666667');
  });
});

describe('min and max of DECIMAL and DATE columns', () => {
  it('order DECIMAL values as numbers, not as text', () => {
    const min = compileAgg(spec('min'), dec(10, 2));
    const max = compileAgg(spec('max'), dec(10, 2));
    expect(fold(min, ['9.00', '10.00', '9.50'])).toBe('9.00');
    expect(fold(max, ['9.00', '10.00', '100.00'])).toBe('100.00');
    expect(fold(min, ['-1.00', '-2.00', '-10.00', null])).toBe('-10.00');
    expect(fold(max, ['-1.00', '-2.00', '-10.00'])).toBe('-1.00');
    expect(max.merge('9.00', '10.00')).toBe('10.00');
  });

  it('order DATE values as days', () => {
    const min = compileAgg(spec('min'), { type: 'DATE' });
    const max = compileAgg(spec('max'), { type: 'DATE' });
    expect(fold(min, ['2026-10-01', '2025-12-31', null, '0001-01-01'])).toBe('0001-01-01');
    expect(fold(max, ['2026-10-01', '9999-12-31', '2025-12-31'])).toBe('9999-12-31');
  });
});

describe("an aggregate's output type (Spark's rules)", () => {
  const cols = [
    { name: 'd', ...dec(10, 2) },
    { name: 'w', ...dec(36, 36) },
    { name: 'i', type: 'INT' as const, bits: 8 as const },
    { name: 'f', type: 'DOUBLE' as const, binary32: true as const },
    { name: 'day', type: 'DATE' as const },
  ];
  const of = (fn: AggSpec['fn'], column?: string) => aggOutputType({ fn, column, as: 'x' }, cols);

  it('widens DECIMAL sums by 10 digits and averages by 4, bounded at 38', () => {
    expect(of('sum', 'd')).toEqual(dec(20, 2));
    expect(of('avg', 'd')).toEqual(dec(14, 6));
    expect(of('sum', 'w')).toEqual(dec(38, 36));
    expect(of('avg', 'w')).toEqual(dec(38, 38));
  });

  it('keeps the column type for min and max, BIGINT for counts and integer sums, DOUBLE otherwise', () => {
    expect(of('min', 'd')).toEqual(dec(10, 2));
    expect(of('max', 'day')).toEqual({ type: 'DATE' });
    expect(of('max', 'f')).toEqual({ type: 'DOUBLE', binary32: true });
    expect(of('count')).toEqual({ type: 'LONG' });
    expect(of('sum', 'i')).toEqual({ type: 'LONG' });
    expect(of('sum', 'f')).toEqual({ type: 'DOUBLE' });
    expect(of('avg', 'i')).toEqual({ type: 'DOUBLE' });
  });
});

describe('sum and avg of a column that is not numeric', () => {
  const planOf = (schema: string, fn: string, column: string) =>
    caseToPlan(
      parseCase(
        JSON.stringify({
          name: 'refused',
          query: { schema, groupBy: ['k'], aggregations: [{ fn, column, as: 'x' }], outputMode: 'update' },
          steps: [],
        }),
        'refused.json',
      ),
    );

  it.each([
    ['k STRING, day DATE', 'sum', 'day', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\] sum\(day\): day is DATE, which cannot be summed/],
    ['k STRING, t TIMESTAMP', 'avg', 't', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\] avg\(t\): t is TIMESTAMP, which cannot be averaged/],
    ['k STRING, b BOOLEAN', 'sum', 'b', /b is BOOLEAN, which cannot be summed: sum needs a numeric column/],
  ])('%s: %s(%s) is refused as Spark refuses it', (schema, fn, column, message) => {
    expect(() => planOf(schema, fn, column)).toThrow(message);
  });

  it('min and max of a DATE, and sum of a DECIMAL, are accepted', () => {
    expect(() => planOf('k STRING, day DATE', 'max', 'day')).not.toThrow();
    expect(() => planOf('k STRING, d DECIMAL(10,2)', 'sum', 'd')).not.toThrow();
  });
});
