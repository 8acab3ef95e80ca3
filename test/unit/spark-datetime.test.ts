/**
 * Spark 4's datetime semantics in expressions (ANSI on, session time zone UTC). Every expectation
 * is worked by hand from Spark's rules: SparkDateTimeUtils.stringToTimestamp / stringToDate (the
 * text forms a CAST takes), the typing of DateAdd / DateSub and of DATE ± INTERVAL in Spark's
 * analyzer and its date.sql golden results, MakeTimestamp's DECIMAL(8,6) seconds and its
 * INVALID_FRACTION_OF_SECOND, and SecondsToTimestamp's numeric input; never from sluice's output.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression, SparkRowError } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';
import { formatTimestamp } from '../../lib/engine/timestamps';

const COLS = parseDdlColumns('t TIMESTAMP, d DATE, s STRING, n BIGINT, i INT, x DOUBLE');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const iso = (text: string, row: Record<string, unknown> = {}) => {
  const v = value(text, row);
  return v === null ? null : formatTimestamp(v as number | bigint);
};

const refusal = (text: string) => refusalOf(text, COLS);
const rowError = (text: string, row: Record<string, unknown> = {}) => rowErrorOf(text, COLS, row);

describe('CAST(string AS TIMESTAMP) takes the forms of Spark stringToTimestamp', () => {
  it.each([
    ['2026', '2026-01-01T00:00:00.000Z'],
    ['2026-10', '2026-10-01T00:00:00.000Z'],
    ['2026-1-5', '2026-01-05T00:00:00.000Z'],
    ['2026-10-01', '2026-10-01T00:00:00.000Z'],
    ['2026-10-01 12', '2026-10-01T12:00:00.000Z'],
    ['2026-10-01T12:30', '2026-10-01T12:30:00.000Z'],
    ['2026-10-01 1:2:3', '2026-10-01T01:02:03.000Z'],
    ['  2026-10-01 12:30:45.5  ', '2026-10-01T12:30:45.500Z'],
    ['2026-10-01 12:30:45.', '2026-10-01T12:30:45.000Z'],
    ['2026-10-01 12:30:45.1234567891', '2026-10-01T12:30:45.123456Z'],
    ['2026-10-01T12:30:45.123456Z', '2026-10-01T12:30:45.123456Z'],
    ['2026-10-01 12:30:45 UTC', '2026-10-01T12:30:45.000Z'],
    ['2026-10-01 12:30:45+01:00', '2026-10-01T11:30:45.000Z'],
    ['2026-10-01 12:30:45 +01:00', '2026-10-01T11:30:45.000Z'],
    ['2026-10-01 12:30:45+1:00', '2026-10-01T11:30:45.000Z'],
    ['2026-10-01 12:30:45+01', '2026-10-01T11:30:45.000Z'],
    ['2026-10-01 12:30:45+0530', '2026-10-01T07:00:45.000Z'],
    ['2026-10-01 12:30:45-08:00', '2026-10-01T20:30:45.000Z'],
    ['2026-10-01 12:30:45GMT+01:00', '2026-10-01T11:30:45.000Z'],
    ['2026-10-01 12:30:45 UTC-2', '2026-10-01T14:30:45.000Z'],
    // regions with their daylight time: Paris is +02:00 in October, Los Angeles -07:00
    ['2026-10-01 12:30:45 Europe/Paris', '2026-10-01T10:30:45.000Z'],
    ['2026-10-01 12:30:45 PST', '2026-10-01T19:30:45.000Z'],
    ['2026-01-15 12:00:00 EST', '2026-01-15T17:00:00.000Z'],
    // a time in the spring gap moves forward (03:30 PDT); one in the autumn overlap takes the earlier offset (PDT)
    ['2026-03-08 02:30:00 America/Los_Angeles', '2026-03-08T10:30:00.000Z'],
    ['2026-11-01 01:30:00 America/Los_Angeles', '2026-11-01T08:30:00.000Z'],
    ['1969-07-20 20:17:40', '1969-07-20T20:17:40.000Z'],
  ])('%s', (text, expected) => {
    expect(iso(`CAST('${text}' AS TIMESTAMP)`)).toBe(expected);
    expect(iso(`to_timestamp('${text}')`)).toBe(expected);
  });

  it.each([
    '2026-10-01T', // a separator with no hour
    '2026-10-01 12:30Z', // a zone only after the seconds
    '2026-10-01 12:30:45 utc', // zone ids are case-sensitive in Java
    '2026-10-01 12:30:45 europe/paris',
    '2026-10-01 12:30:45 +19:00', // beyond ±18:00
    '2026-10-01 12:30:45.123.4',
    '2026-02-29',
    '2026-10-01 24:00:00',
    '26-10-01', // the year has at least 4 digits
    '2026-010-01',
    'bad',
    '',
  ])("'%s' is CAST_INVALID_INPUT, null under try_cast", (text) => {
    expect(rowError(`CAST('${text}' AS TIMESTAMP)`).errorClass).toBe('CAST_INVALID_INPUT');
    expect(value(`try_cast('${text}' AS TIMESTAMP)`)).toBeNull();
    expect(value(`try_to_timestamp('${text}')`)).toBeNull();
  });

  it('a STRING compared with a TIMESTAMP is read the same way', () => {
    const t = 1_790_857_800_000_000; // 2026-10-01T12:30:00Z
    expect(value("t = '2026-10-01 13:30:00+01:00'", { t })).toBe(true);
    expect(value("t > '2026-10-01 12'", { t })).toBe(true);
  });
});

describe('typed literals take the forms of CAST', () => {
  it('DATE literal: one-digit month and day, a year alone', () => {
    expect(value("DATE '2026-1-5'")).toBe('2026-01-05');
    expect(value("DATE '2026'")).toBe('2026-01-01');
    expect(refusal("DATE '2026-02-30'").errorClass).toBe('INVALID_TYPED_LITERAL');
  });

  it("a TIMESTAMP literal is named by its value, as Spark's Literal.sql prints it", () => {
    expect(compileExpression("TIMESTAMP '2026-10-01T12:00:00.500Z'", COLS).sql).toBe("TIMESTAMP '2026-10-01 12:00:00.5'");
    expect(iso("TIMESTAMP '2026-10-01 12:00:00 +02:00'")).toBe('2026-10-01T10:00:00.000Z');
  });
});

describe('date_add / date_sub and DATE ± n take days as INT, SMALLINT or TINYINT (Spark date.sql)', () => {
  const row = { d: '2026-10-01', n: 5, i: 5, x: 1.5, s: '1', t: 1_790_857_800_000_000 };

  it.each([
    ['date_add(d, i)', '2026-10-06'],
    ['date_add(d, CAST(1 AS SMALLINT))', '2026-10-02'],
    ['date_add(d, CAST(1 AS TINYINT))', '2026-10-02'],
    ["date_add(d, '1')", '2026-10-02'], // a STRING is cast to INT
    ['date_add(d, NULL)', null],
    ['date_add(t, 1)', '2026-10-02'],
    ["date_sub('2026-03-01', 1)", '2026-02-28'],
    ['d + 1', '2026-10-02'],
    ['7 + d', '2026-10-08'],
    ['d - i', '2026-09-26'],
    ['d + NULL', null],
  ])('%s = %s', (text, expected) => {
    expect(value(text, row)).toBe(expected);
  });

  it.each([
    'date_add(d, n)', // BIGINT
    'date_add(d, 1L)',
    'date_add(d, 1.0)', // DECIMAL(2,1)
    'date_add(d, 1E1)', // DOUBLE
    'date_sub(d, x)',
    'd + n',
    'd + x',
    "d + '1'", // (d - '2026-09-01' is a difference of dates: ansi/date.sql.out, expr-types.test.ts)
    'd + d',
  ])('%s is DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE', (text) => {
    expect(refusal(text).errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
  });

  it("a STRING, literal or column, is cast to INT: text that is not an INT is the row's CAST_INVALID_INPUT (ansi/date.sql.out)", () => {
    // under ANSI the string promotion casts the days to INT (SECOND_FUNCTION_ARGUMENT_NOT_INTEGER is the non-ANSI rule)
    expect(() => value("date_add(d, '1.2')", row)).toThrow(/^\[CAST_INVALID_INPUT\] The value '1.2' of the type "STRING" cannot be cast to "INT"/);
    expect(() => value("date_sub(d, 'x')", row)).toThrow(/^\[CAST_INVALID_INPUT\]/);
    // ansi/date.sql.out: date_add('2011-11-11', int_str) of a view's STRING column is 2011-11-12
    expect(value('date_add(d, s)', row)).toBe('2026-10-02');
    expect(value("date_sub(d, ' 2 ')", row)).toBe('2026-09-29');
  });
});

describe('DATE ± INTERVAL DAY is a DATE; other day-time intervals make a TIMESTAMP', () => {
  const row = { d: '2026-10-01', s: '2026-10-01 12:00:00' };

  it.each([
    ["d + INTERVAL '2' DAY", '2026-10-03'],
    ['d - INTERVAL 2 DAYS', '2026-09-29'],
    ['d + INTERVAL 1 WEEK', '2026-10-08'],
    ["INTERVAL '3' DAY + d", '2026-10-04'],
    ["d + INTERVAL '1' DAY + INTERVAL '1' DAY", '2026-10-03'],
    ["d + (INTERVAL '1' DAY + INTERVAL '1' DAY)", '2026-10-03'],
    ["d - -INTERVAL '1' DAY", '2026-10-02'],
    ["DATE '2024-03-01' - INTERVAL '1' DAY", '2024-02-29'],
    ["d + INTERVAL '1' MONTH", '2026-11-01'],
  ])('%s = %s', (text, expected) => {
    expect(value(text, row)).toBe(expected);
  });

  it.each([
    ["d + INTERVAL '2' HOUR", '2026-10-01T02:00:00.000Z'],
    ["d + (INTERVAL '1' DAY + INTERVAL '2' HOUR)", '2026-10-02T02:00:00.000Z'],
    ['d + INTERVAL 1 DAY 2 HOURS', '2026-10-02T02:00:00.000Z'],
  ])('%s = %s (a TIMESTAMP)', (text, expected) => {
    expect(compileExpression(text, COLS).sqlType.type).toBe('TIMESTAMP');
    expect(iso(text, row)).toBe(expected);
  });

  it('STRING ± a day-time interval is the sum cast back to STRING', () => {
    expect(value("s + INTERVAL '90' MINUTE", row)).toBe('2026-10-01 13:30:00');
    expect(value("s - INTERVAL '1' DAY", row)).toBe('2026-09-30 12:00:00');
  });
});

describe("make_timestamp takes its seconds as DECIMAL(8,6), and 60 only as a whole minute (Spark's MakeTimestamp)", () => {
  it.each([
    ['make_timestamp(2026, 10, 1, 12, 30, 45.1234567)', '2026-10-01T12:30:45.123457Z'], // rounded HALF_UP to 6 places
    ['make_timestamp(2026, 10, 1, 12, 30, 60)', '2026-10-01T12:31:00.000Z'],
    ['make_timestamp(2026, 12, 31, 23, 59, 60)', '2027-01-01T00:00:00.000Z'],
    ['make_timestamp(2024, 2, 29, 0, 0, 0)', '2024-02-29T00:00:00.000Z'],
  ])('%s = %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it.each([
    ['make_timestamp(2026, 10, 1, 12, 30, 60.5)', 'INVALID_FRACTION_OF_SECOND'],
    ['make_timestamp(2026, 10, 1, 12, 30, 100)', 'NUMERIC_VALUE_OUT_OF_RANGE'], // 100 does not fit DECIMAL(8,6)
    ['make_timestamp(2026, 10, 1, 12, 30, 61)', 'DATETIME_FIELD_OUT_OF_BOUNDS'],
    ['make_timestamp(2026, 10, 1, 12, 30, -1)', 'DATETIME_FIELD_OUT_OF_BOUNDS'],
    ['make_timestamp(2026, 2, 29, 0, 0, 0)', 'DATETIME_FIELD_OUT_OF_BOUNDS'],
    ['make_timestamp(2026, 10, 1, 24, 0, 0)', 'DATETIME_FIELD_OUT_OF_BOUNDS'],
    ['make_timestamp(9999, 12, 31, 23, 59, 60)', 'ARITHMETIC_OVERFLOW'], // the next year's first minute: past 9999
  ])('%s is %s', (text, errorClass) => {
    expect(rowError(text).errorClass).toBe(errorClass);
  });

  // Spark 4's try_make_timestamp is MakeTimestamp with failOnError false
  it('try_make_timestamp is NULL where make_timestamp is a row error of its own, and the same instant elsewhere', () => {
    for (const args of ['2026, 10, 1, 12, 30, 60.5', '2026, 10, 1, 12, 30, 61', '2026, 2, 29, 0, 0, 0', '2026, 10, 1, 24, 0, 0', '9999, 12, 31, 23, 59, 60'])
      expect(value(`try_make_timestamp(${args})`)).toBeNull();
    expect(iso('try_make_timestamp(2026, 10, 1, 12, 30, 45.1234567)')).toBe('2026-10-01T12:30:45.123457Z');
    expect(iso("try_make_timestamp(2026, 1, 15, 10, 0, 0, 'America/New_York')")).toBe('2026-01-15T15:00:00.000Z');
    // the seconds' cast to DECIMAL(8,6) is an argument's error: not the function's to swallow
    expect(rowError('try_make_timestamp(2026, 10, 1, 12, 30, 100)').errorClass).toBe('NUMERIC_VALUE_OUT_OF_RANGE');
  });
});

describe("make_timestamp's optional 7th argument is the zone its fields are read in (MakeTimestamp's timezone, ZonedDateTime.of)", () => {
  it.each([
    ["make_timestamp(2026, 1, 15, 10, 0, 0, 'America/New_York')", '2026-01-15T15:00:00.000Z'], // EST, -05:00
    ["make_timestamp(2026, 7, 15, 10, 0, 0, 'America/New_York')", '2026-07-15T14:00:00.000Z'], // EDT, -04:00
    ["make_timestamp(2026, 1, 15, 10, 0, 0, '+05:30')", '2026-01-15T04:30:00.000Z'],
    ["make_timestamp(2026, 1, 15, 10, 0, 0, 'UTC')", '2026-01-15T10:00:00.000Z'],
    // 02:30 on 2026-03-08 does not exist in New York (02:00 jumps to 03:00): moved forward by the gap, 03:30 EDT
    ["make_timestamp(2026, 3, 8, 2, 30, 0, 'America/New_York')", '2026-03-08T07:30:00.000Z'],
    // 01:30 on 2026-11-01 happens twice: the earlier offset (EDT)
    ["make_timestamp(2026, 11, 1, 1, 30, 0, 'America/New_York')", '2026-11-01T05:30:00.000Z'],
    ["make_timestamp(2026, 12, 31, 23, 59, 60, 'Asia/Tokyo')", '2026-12-31T15:00:00.000Z'], // 60 s is the next minute, then the zone
    ['make_timestamp(2026, 1, 15, 10, 0, 0, NULL)', null],
  ])('%s = %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it('an unknown zone is INVALID_TIMEZONE; eight arguments are too many', () => {
    expect(rowError("make_timestamp(2026, 1, 15, 10, 0, 0, 'Mars/Olympus')").errorClass).toBe('INVALID_TIMEZONE');
    expect(refusal("make_timestamp(2026, 1, 15, 10, 0, 0, 'UTC', 1)").errorClass).toBe('WRONG_NUM_ARGS.WITHOUT_SUGGESTION');
  });
});

describe('timestamp_seconds of a DECIMAL is exact (longValueExact of seconds * 10^6)', () => {
  it('a fraction of at most 6 digits is the microseconds; a finer one fails the row (no rounding)', () => {
    expect(iso('timestamp_seconds(1.5)')).toBe('1970-01-01T00:00:01.500Z');
    expect(iso('timestamp_seconds(CAST(1.25 AS DECIMAL(20, 10)))')).toBe('1970-01-01T00:00:01.250Z');
    expect(iso('timestamp_seconds(-1.000001)')).toBe('1969-12-31T23:59:58.999999Z');
    expect(rowError('timestamp_seconds(1.2345678)').message).toMatch(/Rounding necessary/);
    expect(rowError('timestamp_seconds(-1.0000005)').message).toMatch(/Rounding necessary/);
  });
});

describe('timestamp_seconds reads a STRING as DOUBLE, as its NumericType input', () => {
  it("timestamp_seconds('1.5') is 1.5 seconds after the epoch", () => {
    expect(iso("timestamp_seconds('1.5')")).toBe('1970-01-01T00:00:01.500Z');
  });

  // AnsiTypeCoercion.implicitCast casts a STRING to an AtomicType, NumericType, DecimalType or
  // AnyTimestampType input, never to the IntegralType of MillisToTimestamp / MicrosToTimestamp
  // (AnsiTypeCoercionSuite: shouldNotCast(StringType, IntegralType)); a NULL is the default type's
  it.each(["timestamp_millis('1500')", "timestamp_micros('12')", 'timestamp_millis(1.5)'])('%s is refused', (text) => {
    expect(refusal(text).errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
  });

  it.each(['timestamp_seconds(NULL)', 'timestamp_millis(NULL)', 'timestamp_micros(NULL)'])('%s is a NULL TIMESTAMP', (text) => {
    expect(value(text)).toBeNull();
  });
});

describe("CAST(DECIMAL AS TIMESTAMP) truncates below the microsecond (Spark's decimalToTimestamp)", () => {
  it.each([
    ['CAST(1.0000005 AS TIMESTAMP)', '1970-01-01T00:00:01.000Z'],
    ['CAST(-1.0000005 AS TIMESTAMP)', '1969-12-31T23:59:59.000Z'],
    ['CAST(1.9999999 AS TIMESTAMP)', '1970-01-01T00:00:01.999999Z'],
    ['CAST(-1.5 AS TIMESTAMP)', '1969-12-31T23:59:58.500Z'],
  ])('%s = %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });
});

describe('more of Spark 4 datetime functions (examples of the Spark SQL function reference)', () => {
  it.each([
    ["weekday(DATE '2026-10-05')", 0], // a Monday
    ["weekday(DATE '2026-10-04')", 6], // a Sunday
    ["dayname(DATE '2026-10-04')", 'Sun'],
    ["monthname(DATE '2026-10-04')", 'Oct'],
    ["next_day('2015-01-14', 'TU')", '2015-01-20'],
    ["next_day(DATE '2015-07-27', 'monday')", '2015-08-03'], // strictly after the start
    ["next_day(NULL, 'xx')", null],
    ["months_between('1997-02-28 10:30:00', '1996-10-30')", 3.94959677],
    ["months_between('1997-02-28 10:30:00', '1996-10-30', false)", 3.9495967741935485],
    ["months_between(DATE '2026-03-31', DATE '2026-02-28')", 1], // two month ends: whole months
    ["date_diff('2009-07-31', '2009-07-30')", 1],
  ])('%s = %s', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('next_day of a word that is not a day is ILLEGAL_DAY_OF_WEEK', () => {
    expect(rowError("next_day(DATE '2015-07-23', 'xx')").errorClass).toBe('ILLEGAL_DAY_OF_WEEK');
    expect(rowError("next_day(DATE '2015-07-23', ' mon')").errorClass).toBe('ILLEGAL_DAY_OF_WEEK');
  });

  it.each([
    ["from_utc_timestamp('2016-08-31', 'Asia/Seoul')", '2016-08-31T09:00:00.000Z'],
    ["to_utc_timestamp('2016-08-31', 'Asia/Seoul')", '2016-08-30T15:00:00.000Z'],
    ["from_utc_timestamp(TIMESTAMP '2026-07-01 12:00:00', 'America/New_York')", '2026-07-01T08:00:00.000Z'],
    ["from_utc_timestamp(TIMESTAMP '2026-01-01 12:00:00', 'America/New_York')", '2026-01-01T07:00:00.000Z'],
    ["to_utc_timestamp(TIMESTAMP '2026-07-01 08:00:00', 'America/New_York')", '2026-07-01T12:00:00.000Z'],
    ["from_utc_timestamp(TIMESTAMP '2026-07-01 12:00:00', '+05:30')", '2026-07-01T17:30:00.000Z'],
  ])('%s = %s', (text, expected) => {
    expect(iso(text)).toBe(expected);
  });

  it('a zone Java does not know is INVALID_TIMEZONE', () => {
    expect(rowError("from_utc_timestamp(TIMESTAMP '2026-07-01 12:00:00', 'Nowhere/City')").errorClass).toBe('INVALID_TIMEZONE');
  });
});

describe("EXTRACT(field FROM source) and date_part (Spark's DatePart.parseExtractField)", () => {
  it.each([
    ["extract(YEAR FROM TIMESTAMP '2019-08-12 01:00:00.123456')", 2019],
    ["extract(yrs FROM DATE '2019-08-12')", 2019],
    ["extract(QTR FROM DATE '2019-08-12')", 3],
    ["extract(MONTH FROM '2019-08-12')", 8],
    ["extract(WEEK FROM DATE '2021-01-03')", 53],
    ["extract(DAY FROM DATE '2019-08-12')", 12],
    ["extract(DAYOFWEEK FROM DATE '2019-08-12')", 2], // a Monday: Sunday is 1
    ["extract(DOW_ISO FROM DATE '2019-08-12')", 1], // Monday is 1
    ["extract(DOY FROM DATE '2019-08-12')", 224],
    ["extract(HOUR FROM TIMESTAMP '2019-08-12 13:14:15')", 13],
    ["extract(MINUTE FROM TIMESTAMP '2019-08-12 13:14:15')", 14],
    ["extract(SECOND FROM TIMESTAMP '2019-08-12 13:14:15.5')", '15.500000'],
    ["extract(SECOND FROM TIMESTAMP '1969-12-31 23:59:58.000001')", '58.000001'],
    ["date_part('DOW_ISO', DATE '2019-08-12')", 1],
    ["date_part('seconds', TIMESTAMP '2019-08-12 13:14:15.123456')", '15.123456'],
  ])('%s = %s', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('is named as written, and SECOND is DECIMAL(8,6)', () => {
    expect(compileExpression('extract(YEAR FROM t)', COLS).sql).toBe('extract(YEAR FROM t)');
    expect(compileExpression('extract(SECOND FROM t)', COLS).sqlType).toEqual({ type: 'DECIMAL', precision: 8, scale: 6 });
  });

  it('an unknown field is INVALID_EXTRACT_FIELD', () => {
    expect(refusal('extract(FOO FROM d)').errorClass).toBe('INVALID_EXTRACT_FIELD');
    expect(refusal("date_part('fortnight', d)").errorClass).toBe('INVALID_EXTRACT_FIELD');
  });
});

describe('subtracting dates and timestamps gives an ANSI interval (SubtractDates, SubtractTimestamps)', () => {
  const row = { d: '2026-10-01', t: 1_790_857_800_000_000 }; // t = 2026-10-01 12:30:00

  it("an output column holds Spark's text of the interval", () => {
    expect(value("d - DATE '2026-09-01'", row)).toBe("INTERVAL '30' DAY");
    expect(value("'2026-10-05' - d", row)).toBe("INTERVAL '4' DAY");
    expect(value("t - TIMESTAMP '2026-09-29 11:16:39.5'", row)).toBe("INTERVAL '2 01:13:20.5' DAY TO SECOND");
    expect(value("TIMESTAMP '2026-10-01 12:00:00' - t", row)).toBe("INTERVAL '-0 00:30:00' DAY TO SECOND");
    expect(value('t - d', row)).toBe("INTERVAL '0 12:30:00' DAY TO SECOND");
    expect(compileExpression("d - DATE '2026-09-01'", COLS).sqlType).toEqual({ type: 'INTERVAL', days: true, units: ['DAY', 'DAY'] });
  });

  it('an interval times or divided by a number is exact, rounds HALF_UP, and spans its whole kind (MultiplyDTInterval, DivideYMInterval)', () => {
    // the result type is DAY TO SECOND (YEAR TO MONTH) whatever the interval's fields; n * interval is named interval first
    expect(value("INTERVAL '10' MINUTE * 2")).toBe("INTERVAL '0 00:20:00' DAY TO SECOND");
    expect(compileExpression("3 * INTERVAL '10' MINUTE", COLS).type.name).toBe("(INTERVAL '10' MINUTE * 3)");
    // 30 minutes / 4 = 7.5 minutes; a DECIMAL factor exactly: 10 s × 1.5 = 15 s
    expect(value("(t - TIMESTAMP '2026-10-01 12:00:00') / 4", row)).toBe("INTERVAL '0 00:07:30' DAY TO SECOND");
    expect(value("INTERVAL '10' SECOND * 1.5")).toBe("INTERVAL '0 00:00:15' DAY TO SECOND");
    // half a microsecond rounds away from zero, either sign
    expect(value("INTERVAL '1' SECOND / 2000000")).toBe("INTERVAL '0 00:00:00.000001' DAY TO SECOND");
    expect(value("INTERVAL '-1' SECOND / 2000000")).toBe("INTERVAL '-0 00:00:00.000001' DAY TO SECOND");
    // months: 5 / 2 = 2.5 → 3; 14 × 2 = 28 = 2 years 4 months
    expect(value("INTERVAL '5' MONTH / 2")).toBe("INTERVAL '0-3' YEAR TO MONTH");
    expect(value("INTERVAL '1-2' YEAR TO MONTH * 2")).toBe("INTERVAL '2-4' YEAR TO MONTH");
    // the timestamp arithmetic takes the product: 12:30 + 2 × 15 minutes
    expect(iso('t + INTERVAL 15 MINUTES * 2', row)).toBe('2026-10-01T13:00:00.000Z');
    expect(() => value("INTERVAL '1' DAY / 0")).toThrow(/^\[INTERVAL_DIVIDED_BY_ZERO\]/);
    expect(() => value('INTERVAL 106751991 DAYS * 2')).toThrow(/^\[ARITHMETIC_OVERFLOW\]/);
    expect(refusal("INTERVAL '1' DAY + 1").errorClass).toBe('DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES');
  });

  it('intervals compare, add to timestamps and an INTERVAL DAY casts to its days', () => {
    expect(value("t - TIMESTAMP '2026-10-01 12:20:00' > INTERVAL 5 MINUTES", row)).toBe(true);
    expect(value("t - TIMESTAMP '2026-10-01 12:20:00' > INTERVAL '10' MINUTE", row)).toBe(false);
    expect(value("d - DATE '2026-09-01' >= INTERVAL '30' DAY", row)).toBe(true);
    expect(value("CAST(d - DATE '2026-09-01' AS INT)", row)).toBe(30);
    expect(iso("TIMESTAMP '2026-10-01 00:00:00' + (t - TIMESTAMP '2026-10-01 00:00:00')", row)).toBe('2026-10-01T12:30:00.000Z');
    // a DAY TO SECOND casts to its seconds, truncated (IntervalUtils.dayTimeIntervalToLong: micros / MICROS_PER_SECOND)
    expect(value("CAST(t - TIMESTAMP '2026-10-01 12:20:00' AS INT)", row)).toBe(600);
    expect(value("CAST(TIMESTAMP '2026-10-01 12:20:00' - (t + INTERVAL '0.5' SECOND) AS BIGINT)", row)).toBe(-600);
    expect(value("CAST(t - TIMESTAMP '2026-10-01 12:19:58.5' AS DECIMAL(6,1))", row)).toBe('601.5');
    expect(value("CAST(d - DATE '2026-09-01' AS DECIMAL(4,1))", row)).toBe('30.0');
    // an interval ending in HOUR or MINUTE counts that field (dayTimeIntervalToLong divides by its end field)
    expect(value("CAST(INTERVAL '10' MINUTE AS INT)", row)).toBe(10);
    expect(value('CAST(INTERVAL 1 HOUR 30 MINUTES AS BIGINT)', row)).toBe(90);
    expect(value("CAST(INTERVAL -'90' MINUTE AS INT)", row)).toBe(-90);
    expect(value("CAST(INTERVAL '2' HOUR AS DECIMAL(3,0))", row)).toBe('2');
    expect(value("CAST(INTERVAL '1 02:03:04.5' DAY TO SECOND AS INT)", row)).toBe(93_784);
    // a computed interval keeps its fields: MINUTE + MINUTE counts minutes, -MINUTE too
    expect(value("CAST(INTERVAL '90' MINUTE + INTERVAL '30' MINUTE AS INT)", row)).toBe(120);
    expect(value("CAST(-INTERVAL '10' MINUTE AS INT)", row)).toBe(-10);
    // a year-month interval casts to its months, or its whole years when YEAR is its last field (yearMonthIntervalToInt)
    expect(value("CAST(INTERVAL '1-2' YEAR TO MONTH AS INT)", row)).toBe(14);
    expect(value("CAST(INTERVAL '3' YEAR AS BIGINT)", row)).toBe(3);
    expect(value('CAST(-INTERVAL 14 MONTHS AS DECIMAL(4,0))', row)).toBe('-14');
  });
});

describe('a datetime pattern may be a column, as Spark builds the formatter per row', () => {
  const cols = parseDdlColumns('s STRING, fmt STRING, t TIMESTAMP');
  const run = (text: string, row: Record<string, unknown>) => compileExpression(text, cols).evaluate(row);

  it('parses and formats with each row its pattern', () => {
    expect(formatTimestamp(run('to_timestamp(s, fmt)', { s: '01/10/2026', fmt: 'dd/MM/yyyy' }) as number)).toBe('2026-10-01T00:00:00.000Z');
    expect(formatTimestamp(run('to_timestamp(s, fmt)', { s: '2026-10-01 12', fmt: 'yyyy-MM-dd HH' }) as number)).toBe('2026-10-01T12:00:00.000Z');
    expect(run('to_date(s, fmt)', { s: 'Oct 1 2026', fmt: 'MMM d yyyy' })).toBe('2026-10-01');
    expect(run('date_format(t, fmt)', { t: 1_790_857_800_000_000, fmt: 'HH:mm' })).toBe('12:30');
    expect(run('try_to_timestamp(s, fmt)', { s: 'x', fmt: 'yyyy' })).toBeNull();
    expect(run('to_timestamp(s, fmt)', { s: '2026', fmt: null })).toBeNull();
  });

  it("a row's pattern that Spark refuses is that row's error, with Spark's class", () => {
    const e = compileExpression('date_format(t, fmt)', cols);
    expect(() => e.evaluate({ t: 0, fmt: 'YYYY' })).toThrow(SparkRowError);
    expect(rowErrorOf('date_format(t, fmt)', cols, { t: 0, fmt: 'YYYY' }).errorClass).toBe('INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION');
  });
});

describe('date_add / date_sub / add_months and the operators that stand for them past the years 1 to 9999 a DATE holds', () => {
  // Spark's DateAdd adds the int of days (wrapping), AddMonths fails past the int, and a year past
  // 9999 prints as "+10000": sluice makes such a row a dead letter, never a malformed or null date
  it.each([
    ["date_add(DATE '9999-12-31', 1)"],
    ["date_sub(DATE '0001-01-01', 1)"],
    ["date_add(DATE '2026-01-01', 2147483647)"],
    ["date_sub(DATE '2026-01-01', -2147483648)"],
    ["add_months(DATE '9999-12-31', 1)"],
    ["add_months(DATE '2026-01-31', -30000)"],
    // DATE ± n is DateAdd / DateSub, DATE ± a year-month interval DateAddYMInterval, DATE ± an
    // interval of days date_add, TIMESTAMP ± a day-time interval TimeAdd: the same rule
    ["DATE '9999-12-31' + 1"],
    ["DATE '0001-01-01' - 1"],
    ["DATE '9999-12-01' + INTERVAL '1' MONTH"],
    ["DATE '0001-01-01' - INTERVAL '1' YEAR"],
    ["DATE '9999-12-31' + INTERVAL '1' DAY"],
    ["TIMESTAMP '9999-12-31 23:00:00' + INTERVAL '2' HOUR"],
    ["TIMESTAMP '0001-01-01 00:00:00' - INTERVAL '1' SECOND"],
  ])('%s is ARITHMETIC_OVERFLOW', (text) => {
    expect(rowError(text).errorClass).toBe('ARITHMETIC_OVERFLOW');
  });

  it.each([
    ["date_add(DATE '9999-12-30', 1)", '9999-12-31'],
    ["date_sub(DATE '0001-01-02', 1)", '0001-01-01'],
    ["add_months(DATE '9999-11-30', 1)", '9999-12-30'],
    ["add_months(DATE '0001-03-31', -1)", '0001-02-28'],
    ["DATE '9999-12-30' + 1", '9999-12-31'],
    ["DATE '9999-11-30' + INTERVAL '1' MONTH", '9999-12-30'],
    ["DATE '9999-12-30' + INTERVAL '1' DAY", '9999-12-31'],
  ])('%s = %s', (text, expected) => {
    expect(value(text)).toBe(expected);
  });
});

describe('the try_ forms of a date moved past the years 1 to 9999', () => {
  it.each([["try_add(DATE '9999-12-31', 1)"], ["try_subtract(DATE '0001-01-01', 1)"], ["try_add(TIMESTAMP '9999-12-31 23:00:00', INTERVAL '2' HOUR)"]])(
    '%s is NULL',
    (text) => {
      expect(value(text)).toBeNull();
    },
  );
});
