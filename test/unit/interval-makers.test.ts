/** make_dt_interval and make_ym_interval (lib/engine/expr/interval-makers.ts): Spark's parts, defaults, nulls and overflows. */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { rowErrorOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('d INT, h INT, m INT, s DECIMAL(10,6), x DOUBLE, y INT, mo INT');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);

describe('make_dt_interval', () => {
  it.each([
    ['make_dt_interval(1, 12, 30, 01.001001)', "INTERVAL '1 12:30:01.001001' DAY TO SECOND"],
    ['make_dt_interval(2)', "INTERVAL '2 00:00:00' DAY TO SECOND"],
    ['make_dt_interval()', "INTERVAL '0 00:00:00' DAY TO SECOND"],
    ['make_dt_interval(0, 25)', "INTERVAL '1 01:00:00' DAY TO SECOND"],
    ['make_dt_interval(-1, 2, 3, 4.5)', "INTERVAL '-0 21:56:55.5' DAY TO SECOND"],
    ['make_dt_interval(0, 0, 0, 0.000001)', "INTERVAL '0 00:00:00.000001' DAY TO SECOND"],
    ['make_dt_interval(1, NULL)', null],
  ])('%s is %s', (text, out) => {
    expect(value(text)).toBe(out);
  });

  it('reads its parts from columns, the seconds exactly (a DOUBLE cast to DECIMAL(18,6))', () => {
    expect(value('make_dt_interval(d, h, m, s)', { d: 3, h: 4, m: 5, s: '6.789012' })).toBe("INTERVAL '3 04:05:06.789012' DAY TO SECOND");
    expect(value('make_dt_interval(0, 0, 0, x)', { x: 1.5 })).toBe("INTERVAL '0 00:00:01.5' DAY TO SECOND");
  });

  it('is named with the parts Spark fills in, and moves a timestamp', () => {
    expect(compileExpression('make_dt_interval(2)', COLS).type.name).toBe('make_dt_interval(2, 0, 0, 0.000000)');
    // 2026-01-01 00:00:00 UTC plus one day and an hour, in µs
    expect(value("TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(1, 1)")).toBe((1767225600 + 90000) * 1_000_000);
  });

  it("past a long is Spark's ARITHMETIC_OVERFLOW; past what a double holds exactly, a row error too", () => {
    expect(rowErrorOf('make_dt_interval(d)', COLS, { d: 2147483647 }).message).toMatch(/^\[ARITHMETIC_OVERFLOW\] long overflow in make_dt_interval/);
    // 200,000 days is about 548 years: within a long, past 2^53 µs; whole days a double still holds exactly, one µs more it does not
    expect(value('make_dt_interval(d)', { d: 200000 })).toBe("INTERVAL '200000 00:00:00' DAY TO SECOND");
    expect(rowErrorOf('make_dt_interval(d, 0, 0, 0.000001)', COLS, { d: 200000 }).message).toMatch(
      /^\[ARITHMETIC_OVERFLOW\] 17280000000000001 microseconds in .* cannot be held exactly by sluice's day-time interval/,
    );
  });
});

describe('make_ym_interval', () => {
  it.each([
    ['make_ym_interval(1, 2)', "INTERVAL '1-2' YEAR TO MONTH"],
    ['make_ym_interval(-1, 14)', "INTERVAL '0-2' YEAR TO MONTH"],
    ['make_ym_interval(2)', "INTERVAL '2-0' YEAR TO MONTH"],
    ['make_ym_interval()', "INTERVAL '0-0' YEAR TO MONTH"],
    ['make_ym_interval(NULL, 1)', null],
  ])('%s is %s', (text, out) => {
    expect(value(text)).toBe(out);
  });

  it('moves a date by its months (the month end kept in range), and past an int is ARITHMETIC_OVERFLOW', () => {
    expect(value("DATE '2026-01-31' + make_ym_interval(y, mo)", { y: 0, mo: 1 })).toBe('2026-02-28');
    expect(rowErrorOf('make_ym_interval(y, mo)', COLS, { y: 2147483647, mo: 1 }).message).toMatch(/^\[ARITHMETIC_OVERFLOW\] integer overflow/);
  });
});

describe('a day-time interval stays exact', () => {
  it('TIMESTAMP - TIMESTAMP past 2^53 µs is a row error unless a double holds it exactly (it was rounded)', () => {
    expect(value("TIMESTAMP '2026-12-31 23:59:59.999999' - TIMESTAMP '1900-01-01 00:00:00'")).toBe("INTERVAL '46385 23:59:59.999999' DAY TO SECOND");
    expect(value("TIMESTAMP '9999-12-31 00:00:00' - TIMESTAMP '0001-01-01 00:00:00'")).toBe("INTERVAL '3652058 00:00:00' DAY TO SECOND");
    expect(rowErrorOf("TIMESTAMP '9999-12-31 23:59:59.999999' - TIMESTAMP '0001-01-01 00:00:00'", COLS, {}).message).toMatch(
      /^\[ARITHMETIC_OVERFLOW\] 315537897599999999 microseconds/,
    );
  });

  it('interval + interval likewise; months past an int are an integer overflow', () => {
    expect(value("INTERVAL '100000' DAY + INTERVAL '10000' DAY")).toBe("INTERVAL '110000' DAY");
    expect(rowErrorOf("INTERVAL '100000' DAY + INTERVAL '10000 00:00:00.000001' DAY TO SECOND", COLS, {}).message).toMatch(/cannot be held exactly/);
    expect(rowErrorOf("INTERVAL '2147483647' MONTH + INTERVAL '1' MONTH", COLS, {}).message).toMatch(/^\[ARITHMETIC_OVERFLOW\] integer overflow/);
  });
});
