/**
 * The string and conversion functions of text-functions.ts beyond the examples of
 * docs/expressions.md: java.net.URLEncoder's and URLDecoder's rules, UTF8String's soundex and
 * levenshtein, two's complement hex and bin, Spark's errors, and the types Spark gives.
 */
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { errorMessageOf } from '../helpers/expr-errors';

const value = (text: string) => compileExpression(text, []).evaluate({});
const typeOf = (text: string) => typeName(compileExpression(text, []).sqlType);
const errorOf = (text: string) => errorMessageOf(text);

describe('URL encoding', () => {
  it("encodes as URLEncoder: a space as +, '~' and non-ASCII as their UTF-8 bytes, '.-*_' as they are", () => {
    expect(value("url_encode('a b~c.-*_é')")).toBe('a+b%7Ec.-*_%C3%A9');
  });

  it('decodes + and %XX sequences as UTF-8, and a bad % is CANNOT_DECODE_URL (try_url_decode: null)', () => {
    expect(value("url_decode('a+b%7Ec%C3%A9')")).toBe('a b~cé');
    expect(errorOf("url_decode('100%')")).toMatch(/^\[CANNOT_DECODE_URL\]/);
    expect(errorOf("url_decode('%G1')")).toMatch(/^\[CANNOT_DECODE_URL\]/);
    expect(value("try_url_decode('100%')")).toBeNull();
  });
});

describe('soundex and levenshtein', () => {
  it('soundex skips H and W, codes the first letter too, and returns text not starting with a letter as it is', () => {
    expect(value("soundex('Ashcraft')")).toBe('A261');
    expect(value("soundex('Tymczak')")).toBe('T522');
    expect(value("soundex('Pfister')")).toBe('P236');
    expect(value("soundex('1abc')")).toBe('1abc');
    expect(value("soundex('')")).toBe('');
  });

  it('levenshtein counts code points', () => {
    expect(value("levenshtein('😀a', 'a')")).toBe(1);
    expect(value("levenshtein('', 'abc')")).toBe(3);
  });
});

describe('hex, bin and chr', () => {
  it('take a BIGINT as its 64 bits', () => {
    expect(value('hex(-1)')).toBe('FFFFFFFFFFFFFFFF');
    expect(value('hex(9223372036854775807L)')).toBe('7FFFFFFFFFFFFFFF');
    expect(value('bin(0)')).toBe('0');
    expect(errorOf('hex(1.5D)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });

  it('chr takes n mod 256, and a negative n is empty', () => {
    expect(value('chr(321)')).toBe('A');
    expect(value('chr(-1)')).toBe('');
    expect(value('chr(0)')).toBe('\u0000');
  });
});

describe('elt, find_in_set, typeof and the null functions', () => {
  it('elt out of range is INVALID_ARRAY_INDEX; a null index is null', () => {
    expect(errorOf("elt(3, 'a', 'b')")).toMatch(/^\[INVALID_ARRAY_INDEX\]/);
    expect(value("elt(CAST(NULL AS INT), 'a')")).toBeNull();
    expect(value("elt(2, 'a', 7)")).toBe('7');
  });

  it('find_in_set is 0 for a string holding a comma', () => {
    expect(value("find_in_set('a,b', 'a,b')")).toBe(0);
    expect(value("find_in_set('', 'a,,b')")).toBe(2);
  });

  it("typeof gives Spark's simple type names", () => {
    expect(value("typeof(named_struct('a', 1, 'b', map('k', 1.5D)))")).toBe('struct<a:int,b:map<string,double>>');
    expect(value('typeof(CAST(1 AS DECIMAL(5,2)))')).toBe('decimal(5,2)');
    expect(value('typeof(NULL)')).toBe('void');
    expect(value('typeof(1L)')).toBe('bigint');
  });

  it('zeroifnull widens as coalesce(x, 0) does; nullifzero keeps the type', () => {
    expect(typeOf('zeroifnull(CAST(NULL AS DECIMAL(10,2)))')).toBe('DECIMAL(12,2)');
    expect(value('zeroifnull(CAST(NULL AS DECIMAL(10,2)))')).toBe('0.00');
    expect(typeOf('zeroifnull(1.5D)')).toBe('DOUBLE');
    expect(value('nullifzero(CAST(0 AS DECIMAL(4,2)))')).toBeNull();
    expect(typeOf('nullifzero(CAST(0 AS DECIMAL(4,2)))')).toBe('DECIMAL(4,2)');
  });
});

describe('timestampadd and timestampdiff (a unit as a bare word)', () => {
  it('counts whole months by the day and the time of day, truncated towards zero (ChronoUnit.between)', () => {
    expect(value("timestampdiff(MONTH, TIMESTAMP '2022-01-31 10:00:00', TIMESTAMP '2022-02-28 09:00:00')")).toBe(0);
    expect(value("timestampdiff(MONTH, TIMESTAMP '2022-01-31 10:00:00', TIMESTAMP '2022-02-28 10:00:00')")).toBe(0);
    expect(value("timestampdiff(MONTH, TIMESTAMP '2022-01-28 10:00:00', TIMESTAMP '2022-02-28 10:00:00')")).toBe(1);
    expect(value("timestampdiff(MONTH, DATE '2022-03-01', DATE '2022-01-31')")).toBe(-1);
    expect(value("timestampdiff(second, TIMESTAMP '2022-01-01 00:00:01', TIMESTAMP '2022-01-01 00:00:00.5')")).toBe(0);
    expect(value("timestampdiff(WEEK, DATE '2022-01-01', DATE '2022-01-14')")).toBe(1);
  });

  it('adds months to the day, clamped to the month end, and keeps the time of day', () => {
    expect(value("timestampadd(QUARTER, 1, TIMESTAMP '2022-11-30 06:07:08')")).toBe(value("TIMESTAMP '2023-02-28 06:07:08'"));
    expect(value("date_add(DAY, 1, DATE '2022-12-31')")).toBe(value("TIMESTAMP '2023-01-01 00:00:00'"));
    expect(typeOf("dateadd(DAY, 1, DATE '2022-12-31')")).toBe('TIMESTAMP');
    expect(typeOf("timestampdiff(DAY, DATE '2022-12-31', DATE '2023-01-01')")).toBe('BIGINT');
  });

  it('is null for a null argument; refuses an unknown unit; leaving years 1-9999 is DATETIME_OVERFLOW', () => {
    expect(value("timestampadd(DAY, CAST(NULL AS INT), TIMESTAMP '2022-01-01 00:00:00')")).toBeNull();
    expect(errorOf("timestampadd(FORTNIGHT, 1, TIMESTAMP '2022-01-01 00:00:00')")).toMatch(/^\[INVALID_PARAMETER_VALUE\.DATETIME_UNIT\]/);
    expect(errorOf("timestampdiff(DAYOFYEAR, DATE '2022-01-01', DATE '2022-01-02')")).toMatch(/^\[INVALID_PARAMETER_VALUE\.DATETIME_UNIT\]/);
    expect(errorOf("timestampadd(YEAR, 10000, TIMESTAMP '2022-01-01 00:00:00')")).toMatch(/^\[DATETIME_OVERFLOW\]/);
    expect(errorOf("timestampadd(DAY, 3000000, TIMESTAMP '2022-01-01 00:00:00')")).toMatch(/^\[DATETIME_OVERFLOW\]/);
    expect(value("datediff(DATE '2022-01-03', DATE '2022-01-01')")).toBe(2);
  });
});
