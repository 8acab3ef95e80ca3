/**
 * approx_count_distinct's HyperLogLog++ (lib/engine/hll.ts): Spark's registers (XXH64 seed 42, top
 * 9 bits the register, leading zeros of the rest plus one), its estimate (linear counting, raw
 * estimate less the bias interpolated from the HLL++ paper's figures), and registers an earlier
 * sluice wrote.
 */
import { BIAS_P9, RAW_ESTIMATES_P9 } from '../../lib/engine/hll-bias';
import { hllAdd, hllCount, hllMerge, hllNew } from '../../lib/engine/hll';
import { sparkXxHash64 } from '../../lib/engine/expr/spark-hashes';
import { LONG, STRING } from '../../lib/engine/expr/types';
import { approxCountDistinct } from '../../lib/engine/query/functions';
import { compileSql } from '../../lib/engine/sql';

const M = 512;
/** Registers from ranks by index (the rest 0), in the marked form. */
const regsOf = (rank: (i: number) => number, marked = true) =>
  (marked ? 'H' : '') + Array.from({ length: M }, (_, i) => String.fromCharCode(48 + rank(i))).join('');

describe('the bias tables', () => {
  it('hold, for each raw estimate, its bias: the estimate less a cardinality of a grid from 1 to 5m in steps of 12 or 13', () => {
    expect(RAW_ESTIMATES_P9).toHaveLength(201);
    expect(BIAS_P9).toHaveLength(201);
    const truth = RAW_ESTIMATES_P9.map((r, i) => r - BIAS_P9[i]);
    for (const t of truth) expect(Math.abs(t - Math.round(t))).toBeLessThan(1e-6);
    expect(Math.round(truth[0])).toBe(1);
    expect(Math.round(truth[200])).toBe(5 * M);
    for (let i = 2; i < truth.length; i++) expect([12, 13]).toContain(Math.round(truth[i]) - Math.round(truth[i - 1]));
    for (let i = 1; i < RAW_ESTIMATES_P9.length; i++) expect(RAW_ESTIMATES_P9[i]).toBeGreaterThan(RAW_ESTIMATES_P9[i - 1]);
  });
});

describe('registers', () => {
  it('take the top 9 bits of the hash as the register and the leading zeros of the other 55, plus one, as its rank', () => {
    // 0b000000011 then 0b001 then ones: register 3, rank 3
    const hash = (3n << 55n) | (1n << 52n) | ((1n << 52n) - 1n);
    const regs = hllAdd(hllNew(), hash);
    expect(regs.length).toBe(M + 1);
    expect(regs.charCodeAt(1 + 3) - 48).toBe(3);
    // a smaller rank leaves it; all-zero low bits reach the padding bit: rank 64 - 9 + 1 = 56
    expect(hllAdd(regs, (3n << 55n) | (1n << 54n))).toBe(regs);
    expect(hllAdd(regs, 3n << 55n).charCodeAt(1 + 3) - 48).toBe(56);
  });

  it("hash a value by Spark's XXH64 of its type: a BIGINT and its text land in different registers as a rule", () => {
    const asLong = hllAdd(hllNew(), sparkXxHash64(LONG)(7));
    const asText = hllAdd(hllNew(), sparkXxHash64(STRING)('7'));
    expect(asLong).not.toBe(hllNew());
    expect(asLong).not.toBe(asText);
  });

  it('merge register by register; registers of an earlier sluice (no marker) make the merge one of those', () => {
    const a = regsOf((i) => (i === 0 ? 5 : i === 1 ? 1 : 0));
    const b = regsOf((i) => (i === 0 ? 2 : i === 1 ? 4 : 0));
    expect(hllMerge(a, b)).toBe(regsOf((i) => (i === 0 ? 5 : i === 1 ? 4 : 0)));
    const old = regsOf((i) => (i === 2 ? 7 : 0), false);
    expect(hllMerge(a, old)).toBe(regsOf((i) => (i === 0 ? 5 : i === 1 ? 1 : i === 2 ? 7 : 0), false));
    expect(hllMerge(old, a)).toBe(hllMerge(a, old));
  });
});

describe('the estimate', () => {
  it('is linear counting, m ln(m / V), while registers are empty and it is at most 400', () => {
    // 100 registers of rank 1: V = 412 empty
    const regs = regsOf((i) => (i < 100 ? 1 : 0));
    expect(hllCount(regs)).toBe(Math.round(M * Math.log(M / 412)));
    expect(hllCount(hllNew())).toBe(0);
  });

  it('is the raw estimate less the mean bias of the 6 nearest raw estimates of the table when no register is empty and it is below 5m', () => {
    // every register rank 2: E = alpha m^2 / (m / 4) = 4 alpha m = 1,474.2…, between the table's
    // 1,462.617 (index 113) and 1,476.05 (index 114); the six nearest are indexes 111 to 116
    const alpha = 0.7213 / (1 + 1.079 / M);
    const e = 4 * alpha * M;
    expect(e).toBeGreaterThan(RAW_ESTIMATES_P9[113]);
    expect(e).toBeLessThan(RAW_ESTIMATES_P9[114]);
    const bias = (BIAS_P9[111] + BIAS_P9[112] + BIAS_P9[113] + BIAS_P9[114] + BIAS_P9[115] + BIAS_P9[116]) / 6;
    expect(hllCount(regsOf(() => 2))).toBe(Math.round(e - bias));
  });

  it('is the raw estimate itself from 5m up', () => {
    // every register rank 4: E = 16 alpha m = 5,896.9…
    expect(hllCount(regsOf(() => 4))).toBe(Math.round((16 * 0.7213 * M) / (1 + 1.079 / M)));
  });

  it('is within three standard errors (1.04 / sqrt(m)) of the truth over consecutive BIGINTs', () => {
    const hash = sparkXxHash64(LONG);
    for (const n of [50, 300, 1000, 2000, 5000, 20000]) {
      let regs = hllNew();
      for (let v = 0; v < n; v++) regs = hllAdd(regs, hash(v));
      expect(Math.abs(hllCount(regs) - n) / n).toBeLessThan((3 * 1.04) / Math.sqrt(M));
    }
  });

  it("keeps an earlier sluice's estimate for its registers: linear counting up to 2.5m, the raw estimate beyond", () => {
    expect(hllCount(regsOf((i) => (i < 100 ? 1 : 0), false))).toBe(Math.round(M * Math.log(M / 412)));
    expect(hllCount(regsOf(() => 2, false))).toBe(Math.round((4 * 0.7213 * M) / (1 + 1.079 / M)));
  });
});

describe('the relative standard deviation', () => {
  it("is taken where it gives Spark's default 512 registers, and named as Spark names it, by the column alone", () => {
    const plan = compileSql(`SET outputMode = update;
SELECT k, approx_count_distinct(v, 0.05), approx_count_distinct(v, 0.06) AS b FROM STREAM read_files(schema => 'k STRING, v INT') GROUP BY k`);
    const aggs = (plan as unknown as { operators: Array<{ spec: { aggs: Array<{ fn: string; as: string }> } }> }).operators[0].spec.aggs;
    expect(aggs.map((a) => [a.fn, a.as])).toEqual([
      ['approxCountDistinct', 'approx_count_distinct(v)'],
      ['approxCountDistinct', 'b'],
    ]);
    expect(approxCountDistinct('v', 0.0489).name).toBe('approx_count_distinct(v)');
  });

  it('is refused where it needs other registers (0.01: 2^14), with the range it takes', () => {
    expect(() => compileSql(`SELECT approx_count_distinct(v, 0.01) FROM STREAM read_files(schema => 'v INT')`)).toThrow(
      /relative standard deviation 0.01 needs 2\^14 registers; .* give an rsd from 0.0489 to below 0.0692/,
    );
    expect(() => approxCountDistinct('v', 0.07)).toThrow(/needs 2\^8 registers/);
    expect(() => approxCountDistinct('v', 0.5)).toThrow(/impossible register count/);
  });
});
