/**
 * CAST edges checked against Apache Spark 4's Cast.scala (ANSI on, session time zone UTC), each
 * expectation worked by hand from Spark's source: which text each target reads (UTF8String's
 * trimAll for BOOLEAN and the integral types, Java's String.trim and BigDecimal for DECIMAL,
 * Double.parseDouble for DOUBLE), the error class of each failure, the subclass of a refused
 * cast (Cast.typeCheckFailureMessage) and Java's Double.toString / Float.toString for text.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('s STRING, i INT, l BIGINT, d DOUBLE, f FLOAT, b BOOLEAN, dt DATE, ts TIMESTAMP, arr ARRAY<INT>');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);

describe('STRING to BOOLEAN: StringUtils.isTrueString / isFalseString of the text after trimAll', () => {
  it.each([
    ['\x01true', true], // trimAll drops control characters up to U+0020...
    ['\t\n false \t\r', false],
    [' YES ', true],
    ['t', true],
    ['n', false],
    ['0\x7f', false], // ...and DEL
  ])('%j is %s', (s, out) => {
    expect(value('CAST(s AS BOOLEAN)', { s })).toBe(out);
  });

  it.each([['on'], ['true\u00a0'], ['2'], ['']])('%j is CAST_INVALID_INPUT (a no-break space is not trimmed)', (s) => {
    expect(rowErrorOf('CAST(s AS BOOLEAN)', COLS, { s }).errorClass).toBe('CAST_INVALID_INPUT');
  });
});

describe("STRING to DECIMAL: Decimal.fromStringANSI (Java's BigDecimal of the text after String.trim)", () => {
  it.each([
    ['\x015', 'DECIMAL(3,0)', '5'], // String.trim drops everything up to U+0020
    ['+.5e1', 'DECIMAL(3,0)', '5'],
    ['5.', 'DECIMAL(3,1)', '5.0'],
    ['1.5', 'DECIMAL(2,0)', '2'], // HALF_UP
    ['-2.5', 'DECIMAL(2,0)', '-3'],
    // 45 fraction digits: fewer than 38 before the point, so read, then rounded to the scale
    [`0.${'0'.repeat(44)}1`, 'DECIMAL(5,2)', '0.00'],
    // an exponent far below the scale: BigDecimal reads it (its scale fits an int) and it rounds to 0
    ['1e-100000000', 'DECIMAL(38,2)', '0.00'],
    ['-9.9e-20000', 'DECIMAL(10,4)', '0.0000'],
    ['5e-3', 'DECIMAL(3,2)', '0.01'],
  ])('%j AS %s is %s', (s, type, out) => {
    expect(value(`CAST(s AS ${type})`, { s })).toBe(out);
  });

  it.each([
    ['\u00a05', 'DECIMAL(3,0)', 'CAST_INVALID_INPUT'],
    ['5\x7f', 'DECIMAL(3,0)', 'CAST_INVALID_INPUT'], // String.trim keeps DEL
    ['.', 'DECIMAL(3,0)', 'CAST_INVALID_INPUT'],
    ['1e5d', 'DECIMAL(3,0)', 'CAST_INVALID_INPUT'],
    // an exponent whose scale does not fit Java's int: BigDecimal's NumberFormatException
    ['1e-2147483649', 'DECIMAL(3,0)', 'CAST_INVALID_INPUT'],
    // more than 38 digits before the point: BigDecimal's precision - scale > 38 fails fast
    ['1e38', 'DECIMAL(38,0)', 'NUMERIC_OUT_OF_SUPPORTED_RANGE'],
    ['1'.repeat(39), 'DECIMAL(10,0)', 'NUMERIC_OUT_OF_SUPPORTED_RANGE'],
    // a zero too: BigDecimal's precision 1 less its scale -400000
    ['0e400000', 'DECIMAL(3,1)', 'NUMERIC_OUT_OF_SUPPORTED_RANGE'],
    // 38 digits before the point is read, and rounding it up needs a 39th: the target's overflow
    [`${'9'.repeat(38)}.5`, 'DECIMAL(38,0)', 'NUMERIC_VALUE_OUT_OF_RANGE'],
    ['1e37', 'DECIMAL(10,0)', 'NUMERIC_VALUE_OUT_OF_RANGE'],
  ])('%j AS %s is %s', (s, type, errorClass) => {
    expect(rowErrorOf(`CAST(s AS ${type})`, COLS, { s }).errorClass).toBe(errorClass);
    expect(value(`TRY_CAST(s AS ${type})`, { s })).toBeNull();
  });
});

describe("STRING to DATE trims with trimAll: U+0000 to U+0020 and DEL, byte by byte (a multi-byte character's bytes are negative Java bytes)", () => {
  it.each([
    ['\x01 2026-10-01\x7f', '2026-10-01'],
    ['\t2026-10\n', '2026-10-01'],
  ])('%j is %s', (s, out) => {
    expect(value('CAST(s AS DATE)', { s })).toBe(out);
  });

  it.each([['2026-10-01\u00a0'], ['\u20032026-10-01'], ['2026-10-01\u0085']])('%j is CAST_INVALID_INPUT', (s) => {
    expect(rowErrorOf('CAST(s AS DATE)', COLS, { s }).errorClass).toBe('CAST_INVALID_INPUT');
  });
});

describe("STRING to DOUBLE reads Java's hexadecimal floating-point text", () => {
  it.each([
    ['0x1p3', 8],
    [' -0x1.8p1d ', -3],
    ['0x.8p0', 0.5],
  ])('%j is %d', (s, out) => {
    expect(value('CAST(s AS DOUBLE)', { s })).toBe(out);
  });

  it.each([['0x10'], ['0xp3'], ['0x1.8']])('%j (no binary exponent, or no digits) is CAST_INVALID_INPUT', (s) => {
    expect(rowErrorOf('CAST(s AS DOUBLE)', COLS, { s }).errorClass).toBe('CAST_INVALID_INPUT');
  });
});

describe('numbers and timestamps', () => {
  it('a NaN or infinite DOUBLE or FLOAT to TIMESTAMP is malformed input (doubleToTimestampAnsi), not an overflow', () => {
    expect(rowErrorOf('CAST(d AS TIMESTAMP)', COLS, { d: Number.NaN }).errorClass).toBe('CAST_INVALID_INPUT');
    expect(rowErrorOf('CAST(f AS TIMESTAMP)', COLS, { f: Number.POSITIVE_INFINITY }).errorClass).toBe('CAST_INVALID_INPUT');
    expect(value('TRY_CAST(d AS TIMESTAMP)', { d: Number.NaN })).toBeNull();
    expect(value('CAST(d AS TIMESTAMP)', { d: -1.5 })).toBe(-1_500_000);
  });

  it('a TIMESTAMP to FLOAT is its seconds as a double, then rounded to a float', () => {
    // 2026-10-01 00:00:01.5 is 1790812801.5 s; floats there are 128 apart: 13990725 × 128
    expect(value('CAST(ts AS FLOAT)', { ts: 1_790_812_801_500_000 })).toBe(1_790_812_800);
    expect(value('CAST(ts AS DOUBLE)', { ts: 1_790_812_801_500_000 })).toBe(1_790_812_801.5);
  });

  it("names a value in an overflow message as Spark's toSQLValue prints it", () => {
    expect(rowErrorOf('CAST(l AS INT)', COLS, { l: 2_147_483_648 }).message).toContain('The value 2147483648L of the type "BIGINT"');
    expect(rowErrorOf('CAST(d AS BIGINT)', COLS, { d: 1e20 }).message).toContain('The value 1.0E20D of the type "DOUBLE"');
    expect(rowErrorOf('CAST(CAST(i AS DECIMAL(12,2)) AS TINYINT)', COLS, { i: 300 }).message).toContain('The value 300.00BD of the type "DECIMAL(12,2)"');
  });
});

describe("DOUBLE and FLOAT to STRING: Java's shortest text, two digits where one is farther from the value", () => {
  it.each([
    ['CAST(4.9e-324D AS STRING)', '4.9E-324'], // Double.MIN_VALUE: 5e-324 also reads back, 4.9E-324 is closer
    ['CAST(1e-323D AS STRING)', '9.9E-324'],
    ['CAST(CAST(1e-45 AS FLOAT) AS STRING)', '1.4E-45'], // Float.MIN_VALUE
    ['CAST(CAST(3e-45 AS FLOAT) AS STRING)', '2.8E-45'],
    ['CAST(1e7D AS STRING)', '1.0E7'],
    ['CAST(9999999.0D AS STRING)', '9999999.0'],
    ['CAST(0.001D AS STRING)', '0.001'],
    ['CAST(1e-4D AS STRING)', '1.0E-4'],
    ['CAST(-0.0D AS STRING)', '-0.0'],
    ['CAST(CAST(0.1 AS FLOAT) AS STRING)', '0.1'],
  ])('%s is %s', (text, out) => {
    expect(value(text)).toBe(out);
  });
});

describe('a STRUCT target type may name its fields `name: TYPE`, as in a DDL string', () => {
  it.each([
    ["CAST(named_struct('a', '1') AS STRUCT<b: INT>)", 'STRUCT<b: INT>', { b: 1 }],
    ["CAST(named_struct('a', '1', 'c', 2) AS STRUCT<b:BIGINT, c: STRING>)", 'STRUCT<b: BIGINT, c: STRING>', { b: 1, c: '2' }],
    ["CAST(array(named_struct('a', 1.5)) AS ARRAY<STRUCT<x: DOUBLE>>)", 'ARRAY<STRUCT<x: DOUBLE>>', [{ x: 1.5 }]],
    ["named_struct('a', 2)::STRUCT<a: STRING>", 'STRUCT<a: STRING>', { a: '2' }],
  ])('%s is %s', (text, type, out) => {
    const e = compileExpression(text, COLS);
    expect(typeName(e.type)).toBe(type);
    expect(e.evaluate({})).toEqual(out);
  });

  it('a colon anywhere else is still a syntax error', () => {
    expect(refusalOf('i : 1', COLS).errorClass).toBe('PARSE_SYNTAX_ERROR');
  });
});

describe('a refused CAST names the subclass Spark picks (Cast.typeCheckFailureMessage)', () => {
  it.each([
    // between DATE and a number: the functions that convert
    ['CAST(dt AS INT)', 'CAST_WITH_FUNC_SUGGESTION'],
    ['CAST(i AS DATE)', 'CAST_WITH_FUNC_SUGGESTION'],
    ['TRY_CAST(dt AS DOUBLE)', 'CAST_WITH_FUNC_SUGGESTION'],
    // what the non-ANSI Cast.canCast takes: the setting
    ['CAST(dt AS BOOLEAN)', 'CAST_WITH_CONF_SUGGESTION'],
    ['CAST(ts AS BOOLEAN)', 'CAST_WITH_CONF_SUGGESTION'],
    ['CAST(b AS TIMESTAMP)', 'CAST_WITH_CONF_SUGGESTION'],
    ['CAST(array(dt) AS ARRAY<INT>)', 'CAST_WITH_CONF_SUGGESTION'],
    // try_cast has no setting to suggest; the rest is refused either way
    ['TRY_CAST(b AS TIMESTAMP)', 'CAST_WITHOUT_SUGGESTION'],
    ['CAST(b AS DATE)', 'CAST_WITHOUT_SUGGESTION'],
    ['CAST(arr AS INT)', 'CAST_WITHOUT_SUGGESTION'],
    ['CAST(s AS ARRAY<INT>)', 'CAST_WITHOUT_SUGGESTION'],
  ])('%s is DATATYPE_MISMATCH.%s', (text, subclass) => {
    expect(refusalOf(text, COLS).errorClass).toBe(`DATATYPE_MISMATCH.${subclass}`);
  });
});
