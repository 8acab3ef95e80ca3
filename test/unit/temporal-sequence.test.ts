/**
 * sequence over DATE and TIMESTAMP values (temporal-sequence.ts), with the expectations of
 * Spark's own "Sequence of timestamps" and "Sequence of dates" cases (session time zone UTC),
 * worked through by hand: each element is start plus i steps, a month step from January 31 clamps
 * to the month's last day without drifting, stop is included when reached.
 */
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { parseTimestamp } from '../../lib/engine/timestamps';
import { errorMessageOf } from '../helpers/expr-errors';

const value = (text: string) => compileExpression(text, []).evaluate({});
const typeOf = (text: string) => typeName(compileExpression(text, []).sqlType);
const ts = (...texts: string[]) => texts.map((t) => parseTimestamp(`${t.replace(' ', 'T')}Z`));

describe('sequence of dates', () => {
  it('steps by days, months and years, one day (or minus one) by default', () => {
    expect(value("sequence(DATE '2018-01-01', DATE '2018-01-05', INTERVAL 2 DAYS)")).toEqual(['2018-01-01', '2018-01-03', '2018-01-05']);
    expect(value("sequence(DATE '2018-01-01', DATE '2018-03-01', INTERVAL 1 MONTH)")).toEqual(['2018-01-01', '2018-02-01', '2018-03-01']);
    expect(value("sequence(DATE '2018-01-31', DATE '2018-04-30', INTERVAL 1 MONTH)")).toEqual(['2018-01-31', '2018-02-28', '2018-03-31', '2018-04-30']);
    // 1 year 5 months
    expect(value("sequence(DATE '2018-01-01', DATE '2023-01-01', INTERVAL 17 MONTHS)")).toEqual(['2018-01-01', '2019-06-01', '2020-11-01', '2022-04-01']);
    expect(value("sequence(DATE '2021-07-01', DATE '2021-07-10', INTERVAL 72 HOURS)")).toEqual(['2021-07-01', '2021-07-04', '2021-07-07', '2021-07-10']);
    expect(value("sequence(DATE '2018-01-03', DATE '2018-01-01')")).toEqual(['2018-01-03', '2018-01-02', '2018-01-01']);
    expect(value("sequence(DATE '2018-01-01', DATE '2018-01-01', INTERVAL 0 DAYS)")).toEqual(['2018-01-01']);
    expect(typeOf("sequence(DATE '2018-01-01', DATE '2018-01-05')")).toBe('ARRAY<DATE>');
  });

  it("raises Spark's errors: boundaries against the step, a step finer than a day", () => {
    expect(errorMessageOf("sequence(DATE '1970-01-02', DATE '1970-01-01', INTERVAL 1 DAY)")).toMatch(
      /SEQUENCE_BOUNDARIES\] Illegal sequence boundaries: 1 to 0 by 1:/,
    );
    expect(errorMessageOf("sequence(DATE '1970-01-01', DATE '1970-02-01', -INTERVAL 1 MONTH)")).toMatch(/boundaries: 0 to 2678400000000 by -1 months:/);
    expect(errorMessageOf("sequence(DATE '2011-03-01', DATE '2011-04-01', INTERVAL 1 HOUR)")).toMatch(
      /sequence step must be an interval of day granularity if start and end values are dates/,
    );
  });
});

describe('sequence of timestamps', () => {
  it('steps by hours and months from start, stop included when reached', () => {
    expect(value("sequence(TIMESTAMP '2018-01-01 00:00:00', TIMESTAMP '2018-01-02 00:00:00', INTERVAL 12 HOURS)")).toEqual(
      ts('2018-01-01 00:00:00', '2018-01-01 12:00:00', '2018-01-02 00:00:00'),
    );
    expect(value("sequence(TIMESTAMP '2018-01-01 00:00:00', TIMESTAMP '2018-01-02 00:00:01', INTERVAL 12 HOURS)")).toEqual(
      ts('2018-01-01 00:00:00', '2018-01-01 12:00:00', '2018-01-02 00:00:00'),
    );
    expect(value("sequence(TIMESTAMP '2018-01-02 00:00:00', TIMESTAMP '2017-12-31 23:59:59', -INTERVAL 12 HOURS)")).toEqual(
      ts('2018-01-02 00:00:00', '2018-01-01 12:00:00', '2018-01-01 00:00:00'),
    );
    expect(value("sequence(TIMESTAMP '2018-03-01 00:00:00', TIMESTAMP '2018-01-01 00:00:00', -INTERVAL 1 MONTH)")).toEqual(
      ts('2018-03-01 00:00:00', '2018-02-01 00:00:00', '2018-01-01 00:00:00'),
    );
    expect(value("sequence(TIMESTAMP '2018-01-31 10:00:00', TIMESTAMP '2018-04-30 10:00:00', INTERVAL 1 MONTH)")).toEqual(
      ts('2018-01-31 10:00:00', '2018-02-28 10:00:00', '2018-03-31 10:00:00', '2018-04-30 10:00:00'),
    );
    expect(value("sequence(TIMESTAMP '2022-04-01 00:00:00', TIMESTAMP '2017-01-01 00:00:00', -INTERVAL 17 MONTHS)")).toEqual(
      ts('2022-04-01 00:00:00', '2020-11-01 00:00:00', '2019-06-01 00:00:00', '2018-01-01 00:00:00'),
    );
    // one day by default; a DATE end is read as its midnight (the common type is TIMESTAMP)
    expect(value("sequence(DATE '2021-07-01', TIMESTAMP '2021-07-02 12:00:00')")).toEqual(ts('2021-07-01 00:00:00', '2021-07-02 00:00:00'));
    expect(typeOf("sequence(TIMESTAMP '2018-01-01 00:00:00', TIMESTAMP '2018-01-02 00:00:00', INTERVAL 1 HOUR)")).toBe('ARRAY<TIMESTAMP>');
  });

  it('refuses a step that is not an INTERVAL, and gives NULL for a NULL argument', () => {
    expect(errorMessageOf("sequence(DATE '2018-01-01', DATE '2018-01-05', 1)")).toMatch(/SEQUENCE_WRONG_INPUT_TYPES.*must be an INTERVAL/);
    expect(value("sequence(DATE '2018-01-01', CAST(NULL AS DATE))")).toBeNull();
    expect(value("sequence(TIMESTAMP '2018-01-01 00:00:00', TIMESTAMP '2018-01-02 00:00:00', NULL)")).toBeNull();
  });
});
