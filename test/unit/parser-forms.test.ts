/**
 * Spark SQL's special syntactic forms and interval literals, each as Spark 4's parser builds it
 * (SqlBaseParser.g4, AstBuilder): the value, the type, the name of the column without AS, and
 * Spark's error class for what it refuses. Expectations are worked out by hand from Spark's
 * grammar, AstBuilder, IntervalUtils / SparkIntervalUtils and the golden files of sql-tests
 * (results/interval.sql.out, string-functions.sql.out, like-any.sql.out), not from this parser.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, compileExpression } from '../../lib/engine/expr';
import { compileExpr } from '../../lib/engine/expr/codegen';
import { parseExpression, parseNamedExpression } from '../../lib/engine/expr/parser';
import { typeName } from '../../lib/engine/expr/types';
import { astText, sameAst } from '../../lib/engine/query/sql-text';
import { refusalOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('s STRING, company STRING, b BOOLEAN, t TIMESTAMP');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const nameOf = (text: string) => compileExpression(text, COLS).type.name;
const typeOf = (text: string) => typeName(compileExpression(text, COLS).sqlType);
/** The value as the expression computes it, before an output column turns an interval into its text: a year-month interval's months. */
const raw = (text: string) => compileExpr(analyzeExpression(text, COLS))({});
const refusal = (text: string) => refusalOf(text, COLS);
/** A day-time interval's microseconds, read through a timestamp (its output column is Spark's text of it). */
const micros = (interval: string) => value(`unix_micros(TIMESTAMP '1970-01-01 00:00:00' + ${interval})`);

const DAY = 86_400_000_000;
const HOUR = 3_600_000_000;
const MINUTE = 60_000_000;
const SECOND = 1_000_000;

describe('INTERVAL ... YEAR TO MONTH', () => {
  it.each([
    ["INTERVAL '1-5' YEAR TO MONTH", 17, "INTERVAL '1-5' YEAR TO MONTH"],
    ["INTERVAL '10-9' year to month", 129, "INTERVAL '10-9' YEAR TO MONTH"],
    ["INTERVAL '0-0' YEAR TO MONTH", 0, "INTERVAL '0-0' YEAR TO MONTH"],
    ["INTERVAL '-1-5' YEAR TO MONTH", -17, "INTERVAL '-1-5' YEAR TO MONTH"],
    ["INTERVAL '+1-5' YEAR TO MONTH", 17, "INTERVAL '1-5' YEAR TO MONTH"],
    // a sign before the string negates it (AstBuilder.visitUnitToUnitInterval)
    ["INTERVAL -'1-1' YEAR TO MONTH", -13, "INTERVAL '-1-1' YEAR TO MONTH"],
    ["INTERVAL -'-1-1' YEAR TO MONTH", 13, "INTERVAL '1-1' YEAR TO MONTH"],
    ["INTERVAL +'-1-1' YEAR TO MONTH", -13, "INTERVAL '-1-1' YEAR TO MONTH"],
    // white space and control characters around the string are trimmed (UTF8String.trimAll)
    ["INTERVAL '2-2\\t' YEAR TO MONTH", 26, "INTERVAL '2-2' YEAR TO MONTH"],
    // the INT range of months: 178956970 years 7 months, and one month more below zero
    ["INTERVAL '178956970-7' YEAR TO MONTH", 2147483647, "INTERVAL '178956970-7' YEAR TO MONTH"],
    ["INTERVAL '-178956970-8' YEAR TO MONTH", -2147483648, "INTERVAL '-178956970-8' YEAR TO MONTH"],
  ])('%s is %d months, named %s', (text, months, name) => {
    expect(raw(text)).toBe(months);
    // and an output column holds Spark's text of it, as the literal is named
    expect(value(text)).toBe(name);
    expect(typeOf(text)).toBe('INTERVAL YEAR TO MONTH');
    expect(nameOf(text)).toBe(name);
  });

  it.each([
    // castStringToYMInterval: `[+|-]y-m` or nothing
    ["INTERVAL '1-x' YEAR TO MONTH", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING'],
    ["INTERVAL '5' YEAR TO MONTH", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING'],
    ["INTERVAL '-\\t2-2\\t' YEAR TO MONTH", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING'],
    // toYMInterval's ranges, wrapped by safeToInterval
    ["INTERVAL '1-12' YEAR TO MONTH", 'INVALID_INTERVAL_FORMAT.INTERVAL_PARSING'],
    ["INTERVAL '178956970-8' YEAR TO MONTH", 'INVALID_INTERVAL_FORMAT.INTERVAL_PARSING'],
    // the value of a range must be a string; a range Spark does not have
    ['INTERVAL 1 YEAR TO MONTH', '_LEGACY_ERROR_TEMP_0027'],
    ["INTERVAL '1' YEAR TO SECOND", '_LEGACY_ERROR_TEMP_0028'],
    ["INTERVAL '1' MONTH TO YEAR", '_LEGACY_ERROR_TEMP_0028'],
    // one range alone
    ["INTERVAL '10-9' YEAR TO MONTH '2-1' YEAR TO MONTH", '_LEGACY_ERROR_TEMP_0024'],
    ["INTERVAL 1 YEAR '2-1' YEAR TO MONTH", '_LEGACY_ERROR_TEMP_0024'],
    ["INTERVAL '10-9' YEAR TO MONTH '1' YEAR", '_LEGACY_ERROR_TEMP_0024'],
    // the units of a range are singular (unitInUnitToUnit)
    ["INTERVAL '1-2' YEARS TO MONTH", 'PARSE_SYNTAX_ERROR'],
  ])('%s is refused with %s', (text, errorClass) => {
    expect(refusal(text).errorClass).toBe(errorClass);
  });

  it('names the format it wants', () => {
    expect(refusal("INTERVAL '1-x' YEAR TO MONTH").message).toContain(
      "does not match year-month format of `[+|-]y-m`, `INTERVAL [+|-]'[+|-]y-m' YEAR TO MONTH` when cast to interval year to month: 1-x",
    );
  });
});

describe('INTERVAL ... DAY TO SECOND and the other day-time ranges', () => {
  it.each([
    ["INTERVAL '3 04:05:06.789' DAY TO SECOND", 3 * DAY + 4 * HOUR + 5 * MINUTE + 6_789_000, "INTERVAL '3 04:05:06.789' DAY TO SECOND"],
    ["INTERVAL '20 15' DAY TO HOUR", 20 * DAY + 15 * HOUR, "INTERVAL '20 15' DAY TO HOUR"],
    ["INTERVAL '20 15:40' DAY TO MINUTE", 20 * DAY + 15 * HOUR + 40 * MINUTE, "INTERVAL '20 15:40' DAY TO MINUTE"],
    // nanoseconds are cut to the microsecond
    ["INTERVAL '20 15:40:32.99899999' DAY TO SECOND", 20 * DAY + 15 * HOUR + 40 * MINUTE + 32_998_999, "INTERVAL '20 15:40:32.998999' DAY TO SECOND"],
    ["INTERVAL '15:40' HOUR TO MINUTE", 15 * HOUR + 40 * MINUTE, "INTERVAL '15:40' HOUR TO MINUTE"],
    ["INTERVAL '15:40:32.99899999' HOUR TO SECOND", 15 * HOUR + 40 * MINUTE + 32_998_999, "INTERVAL '15:40:32.998999' HOUR TO SECOND"],
    ["INTERVAL '40:32.99899999' MINUTE TO SECOND", 40 * MINUTE + 32_998_999, "INTERVAL '40:32.998999' MINUTE TO SECOND"],
    ["INTERVAL '40:32' MINUTE TO SECOND", 40 * MINUTE + 32 * SECOND, "INTERVAL '40:32' MINUTE TO SECOND"],
    ["INTERVAL '0 0:0:0.1' DAY TO SECOND", 100_000, "INTERVAL '0 00:00:00.1' DAY TO SECOND"],
    // the leading field has its whole range (an hour beyond 23 when it leads)
    ["INTERVAL '26:00' HOUR TO MINUTE", 26 * HOUR, "INTERVAL '26:00' HOUR TO MINUTE"],
    // signs, inside the string or before it
    ["INTERVAL '-1 2:3:4.001' DAY TO SECOND", -(DAY + 2 * HOUR + 3 * MINUTE + 4_001_000), "INTERVAL '-1 02:03:04.001' DAY TO SECOND"],
    ["INTERVAL - '1 2:3:4.001' DAY TO SECOND", -(DAY + 2 * HOUR + 3 * MINUTE + 4_001_000), "INTERVAL '-1 02:03:04.001' DAY TO SECOND"],
    ["INTERVAL -'-1 2:3:4.001' DAY TO SECOND", DAY + 2 * HOUR + 3 * MINUTE + 4_001_000, "INTERVAL '1 02:03:04.001' DAY TO SECOND"],
    ["INTERVAL '\\n0 12:34:46.789\\t' DAY TO SECOND", 12 * HOUR + 34 * MINUTE + 46_789_000, "INTERVAL '0 12:34:46.789' DAY TO SECOND"],
  ])('%s is %d µs, named %s', (text, us, name) => {
    expect(micros(text)).toBe(us);
    // the type is the literal's range (Spark's DayTimeIntervalType(start, end))
    expect(typeOf(text)).toBe(`INTERVAL ${/ (\w+ TO \w+)$/.exec(text)![1]}`);
    expect(nameOf(text)).toBe(name);
  });

  it('reaches the BIGINT of microseconds: 2562047788 hours lead HOUR TO MINUTE', () => {
    expect(nameOf("INTERVAL '2562047788:00' HOUR TO MINUTE")).toBe("INTERVAL '2562047788:00' HOUR TO MINUTE");
    expect(nameOf("INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND")).toBe("INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND");
    expect(nameOf("INTERVAL '106751991 04:00:54.775807' DAY TO SECOND")).toBe("INTERVAL '106751991 04:00:54.775807' DAY TO SECOND");
    // one microsecond more overflows the BIGINT (Spark: an ArithmeticException, long overflow)
    expect(refusal("INTERVAL '106751991 04:00:54.775808' DAY TO SECOND").errorClass).toBe('INVALID_INTERVAL_FORMAT.ARITHMETIC_EXCEPTION');
  });

  it('outputs as Spark casts a day-time interval to STRING', () => {
    expect(value("INTERVAL '3 04:05:06.789' DAY TO SECOND")).toBe("INTERVAL '3 04:05:06.789' DAY TO SECOND");
    expect(value("INTERVAL '-0 00:00:01' DAY TO SECOND")).toBe("INTERVAL '-0 00:00:01' DAY TO SECOND");
  });

  it.each([
    // castStringToDTInterval: the range's pattern, or UNMATCHED_FORMAT_STRING_WITH_NOTICE
    ["INTERVAL '20 15:40:32.99899999' DAY TO HOUR", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    ["INTERVAL '20 15:40:32.99899999' DAY TO MINUTE", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    ["INTERVAL '15:40:32.99899999' HOUR TO MINUTE", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    ["INTERVAL '15:40' HOUR TO SECOND", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    ["INTERVAL '20 40:32.99899999' MINUTE TO SECOND", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    ["INTERVAL '\\n-\\t10\\t 12:34:46.789\\t' DAY TO SECOND", 'INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING_WITH_NOTICE'],
    // a field outside its range: IntervalUtils' require, _LEGACY_ERROR_TEMP_0063
    ["INTERVAL '106751992 04' DAY TO HOUR", '_LEGACY_ERROR_TEMP_0063'],
    ["INTERVAL '2562047789:00' HOUR TO MINUTE", '_LEGACY_ERROR_TEMP_0063'],
    ["INTERVAL '1 24:00' DAY TO MINUTE", '_LEGACY_ERROR_TEMP_0063'],
    ["INTERVAL '10:60' MINUTE TO SECOND", '_LEGACY_ERROR_TEMP_0063'],
    ["INTERVAL '1' SECOND TO MINUTE", '_LEGACY_ERROR_TEMP_0028'],
    ["INTERVAL '1' DAY TO DAY", '_LEGACY_ERROR_TEMP_0028'],
  ])('%s is refused with %s', (text, errorClass) => {
    expect(refusal(text).errorClass).toBe(errorClass);
  });

  it("says which field is out of range, as Spark's message does", () => {
    expect(refusal("INTERVAL '106751992 04' DAY TO HOUR").message).toContain('requirement failed: day 106751992 outside range [0, 106751991]');
    expect(refusal("INTERVAL '2562047789:00' HOUR TO MINUTE").message).toContain('requirement failed: hour 2562047789 outside range [0, 2562047788]');
    expect(refusal("INTERVAL '15:40' HOUR TO SECOND").message).toContain(
      "does not match day-time format of `[+|-]h:m:s.n`, `INTERVAL [+|-]'[+|-]h:m:s.n' HOUR TO SECOND` when cast to interval hour to second: 15:40",
    );
  });
});

describe('single-unit and unit-value intervals', () => {
  it("INTERVAL '0' YEAR and INTERVAL '2' MONTH are year-month intervals (a zero was typed day-time before)", () => {
    expect(raw("INTERVAL '0' YEAR")).toBe(0);
    expect(typeOf("INTERVAL '0' YEAR")).toBe('INTERVAL YEAR');
    expect(nameOf("INTERVAL '0' YEAR")).toBe("INTERVAL '0' YEAR");
    expect(raw("INTERVAL '2' MONTH")).toBe(2);
    expect(typeOf("INTERVAL '2' MONTH")).toBe('INTERVAL MONTH');
    expect(typeOf('INTERVAL 0 MONTHS')).toBe('INTERVAL MONTH');
    // so a DATE plus a zero year-month interval stays a DATE, and it meets other year-month intervals
    expect(value("DATE '2026-01-31' + INTERVAL '0' MONTH")).toBe('2026-01-31');
    expect(value("INTERVAL '0' YEAR = INTERVAL '0-0' YEAR TO MONTH")).toBe(true);
    expect(value("width_bucket(INTERVAL '0' YEAR, INTERVAL '0' YEAR, INTERVAL '10' YEAR, 10)")).toBe(1);
  });

  it.each([
    // interval.sql.out: each literal is named by Spark's Literal.sql of its fields
    ['INTERVAL 2 YEARS 4 MONTHS', "INTERVAL '2-4' YEAR TO MONTH"],
    ["INTERVAL '30' year '25' month", "INTERVAL '32-1' YEAR TO MONTH"],
    ["INTERVAL -'1' year", "INTERVAL '-1' YEAR"],
    ["INTERVAL -'-11' month", "INTERVAL '11' MONTH"],
    ["INTERVAL -'23' hour", "INTERVAL '-23' HOUR"],
    ["INTERVAL -'59' minute", "INTERVAL '-59' MINUTE"],
    ["INTERVAL -'59' second", "INTERVAL '-59' SECOND"],
    ["INTERVAL '2' HOUR", "INTERVAL '02' HOUR"],
    ['INTERVAL 2 SECOND', "INTERVAL '02' SECOND"],
    ['INTERVAL 10 MINUTES', "INTERVAL '10' MINUTE"],
    ['INTERVAL 1 WEEK', "INTERVAL '7' DAY"],
    ['INTERVAL 2 MILLISECOND', "INTERVAL '00.002' SECOND"],
    ['INTERVAL 3 MICROSECOND', "INTERVAL '00.000003' SECOND"],
    ['INTERVAL 13.123456789 SECONDS', "INTERVAL '13.123456' SECOND"],
    ['INTERVAL -13.123456789 SECOND', "INTERVAL '-13.123456' SECOND"],
    ['INTERVAL 4 DAY 5 HOUR 6 MINUTE 7 SECONDS', "INTERVAL '4 05:06:07' DAY TO SECOND"],
    ['INTERVAL 3 WEEK 8 MILLISECOND 9 MICROSECOND', "INTERVAL '21 00:00:00.008009' DAY TO SECOND"],
    ["INTERVAL '-100' day '40' hour '80' minute '299.889987299' second", "INTERVAL '-98 06:35:00.110013' DAY TO SECOND"],
    ["INTERVAL '1\\t' day", "INTERVAL '1' DAY"],
    ["INTERVAL '-\\t 1' day", "INTERVAL '-1' DAY"],
    // the typed literal: the string is the whole interval, an `interval` word first allowed
    ["INTERVAL 'interval 3 year 1 month'", "INTERVAL '3-1' YEAR TO MONTH"],
    ["INTERVAL '3 year 1 month'", "INTERVAL '3-1' YEAR TO MONTH"],
    ["INTERVAL '2 weeks 2 days 1 hour 3 minutes 2 seconds 100 millisecond 200 microseconds'", "INTERVAL '16 01:03:02.1002' DAY TO SECOND"],
    ["INTERVAL '\\t interval 1 day'", "INTERVAL '1' DAY"],
  ])('%s is named %s', (text, name) => {
    expect(nameOf(text)).toBe(name);
  });

  it('keeps the values and types the unit forms had', () => {
    expect(micros('INTERVAL 1 HOUR 30 MINUTES')).toBe(90 * MINUTE);
    expect(micros("INTERVAL '1 hour 30 minutes'")).toBe(90 * MINUTE);
    expect(micros('INTERVAL 13.123456789 SECONDS')).toBe(13_123_456);
    expect(micros("INTERVAL '-100' day '40' hour '80' minute '299.889987299' second")).toBe(-(98 * DAY + 6 * HOUR + 35 * MINUTE + 110_013));
    expect(typeOf('INTERVAL 2 DAYS')).toBe('INTERVAL DAY');
    expect(typeOf("INTERVAL '2 days'")).toBe('INTERVAL DAY');
    expect(typeOf('INTERVAL 1 DAY 2 HOURS')).toBe('INTERVAL DAY TO HOUR');
    expect(raw('INTERVAL 2 YEARS 4 MONTHS')).toBe(28);
  });

  it('reads a pair only when a unit follows its value: INTERVAL 1 DAY - INTERVAL 1 HOUR keeps its minus', () => {
    expect(micros('INTERVAL 1 DAY - INTERVAL 1 HOUR')).toBe(23 * HOUR);
    expect(value("t - INTERVAL 1 DAY - INTERVAL '1' HOUR", { t: DAY })).toBe(-HOUR);
    // (the minus stays an operator: an INTERVAL DAY minus an INT is refused at analysis, not parsed as a pair)
    expect(refusal('INTERVAL 1 DAY - 1').errorClass).toMatch(/^DATATYPE_MISMATCH\./);
  });

  it('takes a unit word after the literal as its alias, as Spark (interval 30 day day)', () => {
    expect(parseNamedExpression('INTERVAL 30 day day').alias).toBe('day');
    expect(parseNamedExpression('INTERVAL 30 days days').alias).toBe('days');
  });

  it.each([
    // year-month and day-time fields do not mix (constructMultiUnitsIntervalLiteral)
    ['INTERVAL 4 month 2 weeks 3 microseconds', '_LEGACY_ERROR_TEMP_0029'],
    ["INTERVAL '-1 month 1 day -1 second'", '_LEGACY_ERROR_TEMP_0029'],
    ['INTERVAL 0 YEAR 1 DAY', '_LEGACY_ERROR_TEMP_0029'],
    // a string value of the pairs holds a number only (SPARK-32840)
    ["INTERVAL '1 day 2' day", '_LEGACY_ERROR_TEMP_0026'],
    ["INTERVAL 'interval 1' day", '_LEGACY_ERROR_TEMP_0026'],
    // stringToInterval: only SECOND has a fraction; a value is a number; a unit is one of its units
    ['INTERVAL 1.5 HOURS', 'INVALID_INTERVAL_FORMAT.INVALID_FRACTION'],
    ["INTERVAL '1.5' DAY", 'INVALID_INTERVAL_FORMAT.INVALID_FRACTION'],
    ["INTERVAL '1-2' YEAR", 'INVALID_INTERVAL_FORMAT.INVALID_VALUE'],
    ['INTERVAL 10 nanoseconds', 'INVALID_INTERVAL_FORMAT.INVALID_UNIT'],
    ["INTERVAL '178956971' YEAR", 'INVALID_INTERVAL_FORMAT.ARITHMETIC_EXCEPTION'],
    // the typed literal's string must be a whole interval
    ["INTERVAL '1'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '1.2'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '+'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '- 2'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '1 day -'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '1 day 1'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL '中文 interval 1 day'", 'INVALID_TYPED_LITERAL'],
    ["INTERVAL 'interval中文 1 day'", 'INVALID_TYPED_LITERAL'],
    ['INTERVAL 1 fake_unit', 'PARSE_SYNTAX_ERROR'],
    ['INTERVAL 1', 'PARSE_SYNTAX_ERROR'],
  ])('%s is refused with %s', (text, errorClass) => {
    expect(refusal(text).errorClass).toBe(errorClass);
  });
});

describe('interval arithmetic and comparisons keep Spark names', () => {
  it.each([
    // 29 and -15 months, of the wider type YEAR TO MONTH
    ["INTERVAL '2-2' YEAR TO MONTH + INTERVAL '3' MONTH", "INTERVAL '2-5' YEAR TO MONTH", "(INTERVAL '2-2' YEAR TO MONTH + INTERVAL '3' MONTH)"],
    ["INTERVAL '2' YEAR - INTERVAL '3-3' YEAR TO MONTH", "INTERVAL '-1-3' YEAR TO MONTH", "(INTERVAL '2' YEAR - INTERVAL '3-3' YEAR TO MONTH)"],
    // a year minus a month: YEAR and MONTH widen to YEAR TO MONTH; minutes and seconds to MINUTE TO SECOND
    ["INTERVAL '1' YEAR - INTERVAL '1' MONTH", "INTERVAL '0-11' YEAR TO MONTH", "(INTERVAL '1' YEAR - INTERVAL '1' MONTH)"],
    ["INTERVAL '90' MINUTE + INTERVAL '5.5' SECOND", "INTERVAL '90:05.5' MINUTE TO SECOND", "(INTERVAL '90' MINUTE + INTERVAL '05.5' SECOND)"],
    [
      "INTERVAL '99 11:22:33.123456789' DAY TO SECOND + INTERVAL '10 9:8' DAY TO MINUTE",
      "INTERVAL '109 20:30:33.123456' DAY TO SECOND",
      "(INTERVAL '99 11:22:33.123456' DAY TO SECOND + INTERVAL '10 09:08' DAY TO MINUTE)",
    ],
    [
      "INTERVAL '22:33.123456789' MINUTE TO SECOND - INTERVAL '10' DAY",
      "INTERVAL '-9 23:37:26.876544' DAY TO SECOND",
      "(INTERVAL '22:33.123456' MINUTE TO SECOND - INTERVAL '10' DAY)",
    ],
    ["INTERVAL '1' DAY > INTERVAL '1' HOUR", true, "(INTERVAL '1' DAY > INTERVAL '01' HOUR)"],
    ["INTERVAL '1 02' DAY TO HOUR = INTERVAL '02:10:55' HOUR TO SECOND", false, "(INTERVAL '1 02' DAY TO HOUR = INTERVAL '02:10:55' HOUR TO SECOND)"],
    ["INTERVAL '1' YEAR < INTERVAL '1' MONTH", false, "(INTERVAL '1' YEAR < INTERVAL '1' MONTH)"],
    ["INTERVAL '-1-1' YEAR TO MONTH = INTERVAL '-13' MONTH", true, "(INTERVAL '-1-1' YEAR TO MONTH = INTERVAL '-13' MONTH)"],
  ])('%s is %s, named %s', (text, result, name) => {
    expect(value(text)).toBe(result);
    expect(nameOf(text)).toBe(name);
  });

  it('refuses to compare a year-month interval with a day-time one', () => {
    expect(refusal('INTERVAL 1 MONTH > INTERVAL 20 DAYS').errorClass).toBe('DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES');
  });
});

describe('POSITION, SUBSTRING, OVERLAY, TRIM and EXTRACT with keywords', () => {
  it.each([
    // string-functions.sql.out: POSITION(... IN ...) is a StringLocate, named locate(..., 1)
    ["position('bar' IN 'foobarbar')", 4, 'locate(bar, foobarbar, 1)'],
    ["POSITION('o' IN 'foo')", 2, 'locate(o, foo, 1)'],
    ["position(NULL IN 'foobarbar')", null, 'locate(NULL, foobarbar, 1)'],
    ["position('bar', 'foobarbar')", 4, 'position(bar, foobarbar, 1)'],
    // SUBSTR / SUBSTRING (str FROM pos [FOR len]): a Substring, named substring whichever word
    ["substr('Spark SQL' FROM 5)", 'k SQL', 'substring(Spark SQL, 5, 2147483647)'],
    ["substr('Spark SQL' FROM -3)", 'SQL', 'substring(Spark SQL, -3, 2147483647)'],
    ["substr('Spark SQL' FROM 5 FOR 1)", 'k', 'substring(Spark SQL, 5, 1)'],
    ["substring('Spark SQL' FROM 5)", 'k SQL', 'substring(Spark SQL, 5, 2147483647)'],
    ["SUBSTRING('Spark SQL' FROM 5 FOR 1)", 'k', 'substring(Spark SQL, 5, 1)'],
    ["substr('Spark SQL', 5)", 'k SQL', 'substr(Spark SQL, 5, 2147483647)'],
    ["substring('Spark SQL', 5, 1)", 'k', 'substring(Spark SQL, 5, 1)'],
    // OVERLAY(input PLACING replace FROM pos [FOR len]): Overlay, its length -1 when not given
    ["overlay('Spark SQL' PLACING '_' FROM 6)", 'Spark_SQL', 'overlay(Spark SQL, _, 6, -1)'],
    ["overlay('Spark SQL' PLACING 'CORE' FROM 7)", 'Spark CORE', 'overlay(Spark SQL, CORE, 7, -1)'],
    ["OVERLAY('Spark SQL' PLACING 'ANSI ' FROM 7 FOR 0)", 'Spark ANSI SQL', 'overlay(Spark SQL, ANSI , 7, 0)'],
    ["overlay('Spark SQL' PLACING 'tructured' FROM 2 FOR 4)", 'Structured SQL', 'overlay(Spark SQL, tructured, 2, 4)'],
    // TRIM([BOTH | LEADING | TRAILING] [trimStr] FROM str): StringTrim's sql with a trim string
    ["trim(BOTH 'xyz' FROM 'yxTomxx')", 'Tom', 'TRIM(BOTH xyz FROM yxTomxx)'],
    ["trim('xyz' FROM 'yxTomxx')", 'Tom', 'TRIM(BOTH xyz FROM yxTomxx)'],
    ["trim(LEADING 'xyz' FROM 'zzzytestxyz')", 'testxyz', 'TRIM(LEADING xyz FROM zzzytestxyz)'],
    ["trim(TRAILING 'xy' FROM 'TURNERyxXxy')", 'TURNERyxX', 'TRIM(TRAILING xy FROM TURNERyxXxy)'],
    ["trim(' xyz ')", 'xyz', 'trim( xyz )'],
    ["trim(LEADING FROM ' xyz ')", 'xyz ', 'ltrim( xyz )'],
    // EXTRACT(field FROM source): the field as written
    ["EXTRACT(year FROM TIMESTAMP '2019-08-12 01:00:00.123456')", 2019, "extract(year FROM TIMESTAMP '2019-08-12 01:00:00.123456')"],
  ])('%s is %j, named %s', (text, result, name) => {
    expect(value(text)).toBe(result);
    expect(nameOf(text)).toBe(name);
  });

  it('reads the operands as value expressions, columns included', () => {
    expect(value("position('o' IN s)", { s: 'foo' })).toBe(2);
    expect(value('substring(s FROM 1 + 1 FOR 2)', { s: 'abcd' })).toBe('bc');
    expect(value('overlay(s PLACING upper(s) FROM length(s))', { s: 'ab' })).toBe('aAB');
    expect(value("position('a' IN s) = 1", { s: 'abc' })).toBe(true);
  });

  it('refuses a form with a part missing', () => {
    expect(refusal("overlay('Spark' PLACING 'x')").errorClass).toBe('PARSE_SYNTAX_ERROR');
    expect(refusal("substring('Spark' FROM 2 FOR)").errorClass).toBe('PARSE_SYNTAX_ERROR');
  });
});

describe('IS [NOT] TRUE / FALSE / UNKNOWN / DISTINCT FROM', () => {
  it.each([
    // AstBuilder: IS TRUE is EqualNullSafe(x, true), IS NOT TRUE its NOT
    ['NULL IS TRUE', false, '(NULL <=> true)'],
    ['true IS TRUE', true, '(true <=> true)'],
    ['NULL IS NOT TRUE', true, '(NOT (NULL <=> true))'],
    ['false IS FALSE', true, '(false <=> false)'],
    ['NULL IS NOT FALSE', true, '(NOT (NULL <=> false))'],
    ["'true' IS TRUE", true, '(true <=> true)'],
    // IsUnknown / IsNotUnknown: IS [NOT] NULL of a BOOLEAN
    ['NULL IS UNKNOWN', true, '(NULL IS UNKNOWN)'],
    ['(1 > 2) IS UNKNOWN', false, '((1 > 2) IS UNKNOWN)'],
    ['true IS NOT UNKNOWN', true, '(true IS NOT UNKNOWN)'],
    // IS DISTINCT FROM is NOT (x <=> y)
    ['1 IS DISTINCT FROM 2', true, '(NOT (1 <=> 2))'],
    ['NULL IS DISTINCT FROM NULL', false, '(NOT (NULL <=> NULL))'],
    ['NULL IS NOT DISTINCT FROM NULL', true, '(NULL <=> NULL)'],
  ])('%s is %s, named %s', (text, result, name) => {
    expect(value(text)).toBe(result);
    expect(nameOf(text)).toBe(name);
  });

  it('reads a BOOLEAN column', () => {
    expect(value('b IS UNKNOWN', { b: null })).toBe(true);
    expect(value('b IS NOT UNKNOWN', { b: false })).toBe(true);
    expect(value('b IS NOT TRUE', { b: null })).toBe(true);
    expect(nameOf('b IS NOT TRUE')).toBe('(NOT (b <=> true))');
  });

  it('refuses a value Spark cannot compare with a BOOLEAN', () => {
    expect(refusal('1 IS UNKNOWN').errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
    expect(refusal("'x' IS NOT UNKNOWN").errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
    expect(refusal('1 IS TRUE').errorClass).toBe('DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES');
    expect(refusal('s IS MAYBE').errorClass).toBe('PARSE_SYNTAX_ERROR');
  });
});

describe('[NOT] ILIKE and LIKE / ILIKE ANY | SOME | ALL', () => {
  it('ILIKE and NOT ILIKE (already parsed)', () => {
    expect(value("'Spark' ILIKE 'sp_rk'")).toBe(true);
    expect(value("'Spark' NOT ILIKE 'sp%'")).toBe(false);
    expect(nameOf("'Spark' NOT ILIKE 'sp%'")).toBe('(NOT Spark ILIKE sp%)');
  });

  // like-any.sql.out: google, facebook, linkedin
  const companies = ['google', 'facebook', 'linkedin'];
  const matching = (text: string) => companies.filter((company) => value(text, { company }) === true);
  it.each([
    ["company LIKE ANY ('%oo%', '%in', 'fa%')", ['google', 'facebook', 'linkedin']],
    ["company LIKE ANY ('microsoft', '%yoo%')", []],
    ["company NOT LIKE ANY ('%oo%', '%in', 'fa%')", ['google', 'facebook', 'linkedin']],
    ["company NOT LIKE ANY ('%oo%', 'fa%')", ['google', 'linkedin']],
    ["NOT company LIKE ANY ('%oo%', 'fa%')", ['linkedin']],
    ["company LIKE ANY ('%oo%', NULL)", ['google', 'facebook']],
    ["company NOT LIKE ANY ('%oo%', NULL)", ['linkedin']],
    ['company LIKE ANY (NULL, NULL)', []],
    ["company LIKE SOME ('%in', 'go%')", ['google', 'linkedin']],
    ["company LIKE ALL ('%oo%', '%gle')", ['google']],
    ["company NOT LIKE ALL ('%oo%', '%in')", []],
    ["company NOT LIKE ALL ('%x%', '%in')", ['google', 'facebook']],
    ["company ILIKE ANY ('GOO%', 'FA%')", ['google', 'facebook']],
    ["company NOT ILIKE ALL ('%O%', '%Z%')", ['linkedin']],
  ])('%s holds for %j', (text, rows) => {
    expect(matching(text)).toEqual(rows);
  });

  it('is null when a null pattern decides, and for a null value', () => {
    expect(value("company LIKE ANY ('%oo%', NULL)", { company: 'linkedin' })).toBeNull();
    expect(value("company LIKE ALL ('%in', NULL)", { company: 'linkedin' })).toBeNull();
    expect(value("company LIKE ALL ('%x', NULL)", { company: 'linkedin' })).toBe(false);
    expect(value("company LIKE ANY ('%')", { company: null })).toBeNull();
  });

  it('takes a pattern column too, and is named as the LIKEs it stands for', () => {
    expect(value("company LIKE ANY ('%zz%', s)", { company: 'google', s: 'g%' })).toBe(true);
    expect(nameOf("company LIKE ANY ('a%', 'b%')")).toBe('(company LIKE a% OR company LIKE b%)');
  });

  it("refuses an empty list (Spark: expected something between '(' and ')')", () => {
    const e = refusal('company LIKE ANY ()');
    expect(e.errorClass).toBe('PARSE_SYNTAX_ERROR');
    expect(e.message).toMatch(/something between '\(' and '\)'/);
  });
});

describe('the text a filter moves as (astText) parses back to the same tree', () => {
  it.each([
    "t > TIMESTAMP '2026-01-01 00:00:00' - INTERVAL '1-5' YEAR TO MONTH",
    "t > TIMESTAMP '2026-01-01 00:00:00' - INTERVAL -'3 04:05:06.789' DAY TO SECOND",
    "t < TIMESTAMP '2026-01-01 00:00:00' + INTERVAL '15:40' HOUR TO MINUTE + INTERVAL '0' YEAR + INTERVAL 13.123456789 SECONDS",
    "t < TIMESTAMP '2026-01-01 00:00:00' + INTERVAL '2 weeks 3 hours' + INTERVAL 1 WEEK",
    "position('o' IN s) > 1 AND substr(s FROM 2 FOR 1) = 'o' AND overlay(s PLACING 'x' FROM 1) <> s",
    'b IS NOT TRUE OR b IS UNKNOWN OR b IS NOT UNKNOWN OR b IS FALSE',
    "company NOT LIKE ANY ('a%', 'b%') AND company ILIKE ALL ('%a%', s)",
  ])('%s', (text) => {
    const ast = parseExpression(text);
    expect(sameAst(parseExpression(astText(ast)), ast)).toBe(true);
  });
});
