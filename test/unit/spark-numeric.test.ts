/**
 * Numeric semantics checked against Apache Spark 4's rules (ANSI on), each expectation worked by
 * hand from Spark's source: DecimalPrecision, arithmetic.scala, mathExpressions.scala, Cast.scala.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { avg, count, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { createTestRunner } from './engine-factories';
import { refusalOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('p DECIMAL(10,2), m DECIMAL(38,18), i INT, s STRING, d DOUBLE, f FLOAT');
const typeOf = (text: string) => typeName(analyzeExpression(text, COLS).type);
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const nameOf = (text: string) => compileExpression(text, COLS).type.name;

describe('an integral literal beside a DECIMAL takes the digits it needs (literalPickMinimumPrecision)', () => {
  it.each([
    // DECIMAL(10,2) / DECIMAL(1,0): scale max(6, 2+1+1) = 6, precision 10-2+0+6 = 14
    ['p / 4', 'DECIMAL(14,6)'],
    // DECIMAL(2,1) / DECIMAL(1,0): scale max(6, 1+1+1) = 6, precision 2-1+0+6 = 7
    ['1.0 / 3', 'DECIMAL(7,6)'],
    // DECIMAL(38,18) * DECIMAL(1,0): 40 digits, adjusted: 22 integer digits keep, scale 38-22 = 16
    ['m * 2', 'DECIMAL(38,16)'],
    ['2 * m', 'DECIMAL(38,16)'],
    // DECIMAL(10,2) + DECIMAL(1,0): max(8, 1) + 2 + 1 = 11
    ['p + 1', 'DECIMAL(11,2)'],
    // -12 is one literal, DECIMAL(2,0): max(8,2) + 2 + 1 = 11
    ['p - -12', 'DECIMAL(11,2)'],
    // DECIMAL(38,18) % DECIMAL(1,0): min(20, 1) + 18 = 19
    ['m % 3', 'DECIMAL(19,18)'],
    // a BIGINT literal 12345678901 is DECIMAL(11,0): 10+11+1 = 22
    ['p * 12345678901', 'DECIMAL(22,2)'],
    ['p * 1L', 'DECIMAL(12,2)'],
    // a TINYINT literal keeps DECIMAL(3,0): 10+3+1 = 14
    ['p * 1Y', 'DECIMAL(14,2)'],
    // a SMALLINT literal takes its digits: 10+1+1 = 12
    ['p * 1S', 'DECIMAL(12,2)'],
    // 0 needs one digit
    ['p + 0', 'DECIMAL(11,2)'],
    // a column keeps DECIMAL(10,0): 10+10+1 = 21
    ['p * i', 'DECIMAL(21,2)'],
    // try_ functions and pmod are the operators
    ['try_add(p, 1)', 'DECIMAL(11,2)'],
    ['try_divide(p, 4)', 'DECIMAL(14,6)'],
    ['try_multiply(m, 2)', 'DECIMAL(38,16)'],
    ['pmod(m, 3)', 'DECIMAL(19,18)'],
    // CASE / coalesce / greatest keep the type's width (not a binary operator)
    ['coalesce(p, 1)', 'DECIMAL(12,2)'],
    ['greatest(p, 1)', 'DECIMAL(12,2)'],
  ])('%s is %s', (text, type) => {
    expect(typeOf(text)).toBe(type);
  });

  it.each([
    ['p / 4', { p: '12.34' }, '3.085000'],
    ['1.0 / 3', {}, '0.333333'],
    ['m * 2', { m: '1.000000000000000000' }, '2.0000000000000000'],
  ])('%s of %j is %s', (text, row, out) => {
    expect(value(text, row)).toBe(out);
  });
});

describe('log2 is ln(x) / ln(2) as Spark computes it', () => {
  it('log2(536870912) carries the division rounding', () => {
    // 2^29: ln(2^29) / ln(2) in doubles is 29.000000000000004
    expect(value('log2(536870912)')).toBe(29.000000000000004);
    expect(value('log2(8)')).toBe(Math.log(8) / Math.log(2));
    expect(value('log2(0)')).toBeNull();
  });
});

describe('/ of two non-DECIMAL operands is DOUBLE (DivisionTypeCoercion)', () => {
  it.each([
    ['CAST(1 AS FLOAT) / CAST(3 AS FLOAT)', 0.3333333333333333],
    ['try_divide(CAST(1 AS FLOAT), CAST(3 AS FLOAT))', 0.3333333333333333],
    // 0.1f widened exactly: 0.100000001490116119384765625 / 1
    ['CAST(0.1 AS FLOAT) / 1', 0.10000000149011612],
  ])('%s is DOUBLE %d', (text, out) => {
    expect(typeOf(text)).toBe('DOUBLE');
    expect(value(text)).toBe(out);
  });

  it('f / f and f / i are DOUBLE', () => {
    expect(typeOf('f / f')).toBe('DOUBLE');
    expect(typeOf('f / i')).toBe('DOUBLE');
  });
});

describe('sum and avg of a STRING column cast each text to DOUBLE under ANSI', () => {
  // Spark: sum/avg take a numeric input, a STRING is implicitly cast to DOUBLE (ANSI): 'x' and
  // '0x10' are CAST_INVALID_INPUT (a dead letter here), 'inf' Infinity, '1.5d' 1.5, ' 2 ' 2.
  const plan = readStream
    .schema('k STRING, s STRING')
    .load()
    .groupBy('k')
    // (the typed builders take numeric columns only; Spark takes a STRING and casts it)
    .agg(count().as('c'), sum('s').as('total') as never, avg('s').as('mean') as never)
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('string-sum')
    .plan();

  it('makes a row with text that is not a number a dead letter, and reads 1.5d, inf and NaN', async () => {
    const runner = createTestRunner(plan);
    runner.drop(
      [
        '{"k":"a","s":"1.5d"}',
        '{"k":"a","s":"x"}',
        '{"k":"a","s":" 2 "}',
        '{"k":"b","s":"0x10"}',
        '{"k":"b","s":"1"}',
        '{"k":"c","s":"inf"}',
        '{"k":"d","s":"NaN"}',
        '{"k":"d","s":null}',
      ].join('\n'),
    );
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as { raw: string; reason: string }[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([
      { k: 'a', s: 'x' },
      { k: 'b', s: '0x10' },
    ]);
    expect(dead[0].reason).toMatch(/^\[CAST_INVALID_INPUT\] The value 'x' of the type "STRING" cannot be cast to "DOUBLE"/);
    const rows = Object.fromEntries(runner.sinkRows().map((r) => [r.k, r]));
    expect(rows.a).toEqual({ k: 'a', c: 2, total: 3.5, mean: 1.75 });
    expect(rows.b).toEqual({ k: 'b', c: 1, total: 1, mean: 1 });
    expect(rows.c).toEqual({ k: 'c', c: 1, total: 'Infinity', mean: 'Infinity' });
    expect(rows.d).toEqual({ k: 'd', c: 2, total: 'NaN', mean: 'NaN' });
  });
});

describe('try_add and friends null only their own error (EvalMode.TRY on numeric arguments)', () => {
  it.each([['try_add(2147483647, 1)'], ['try_subtract(-2147483648, 1)'], ['try_multiply(-2147483648, 10)'], ['try_divide(1, 0)'], ['try_mod(1, 0)']])(
    '%s is null',
    (text) => {
      expect(value(text)).toBeNull();
    },
  );

  it.each([
    ['try_add(1, CAST(s AS INT))', /^\[CAST_INVALID_INPUT\]/],
    ['try_subtract(CAST(s AS INT), 1)', /^\[CAST_INVALID_INPUT\]/],
    ['try_multiply(2, CAST(s AS INT))', /^\[CAST_INVALID_INPUT\]/],
    ['try_divide(1, CAST(s AS DOUBLE))', /^\[CAST_INVALID_INPUT\]/],
    ['try_divide(1, i + 2147483647)', /^\[ARITHMETIC_OVERFLOW\]/],
  ])("%s raises the argument's error", (text, error) => {
    expect(() => value(text, { s: 'x', i: 1 })).toThrow(error);
  });

  it('a STRING argument is TryEval of the ANSI operator: its cast error is null too', () => {
    expect(value("try_add('x', 1)")).toBeNull();
    expect(value('try_add(s, 1)', { s: 'x' })).toBeNull();
  });
});

describe('-0 only where Java has it', () => {
  it.each([
    ['-2 * 0', 0],
    ['i * 0', 0],
    ['CAST(-0.5D AS INT)', 0],
    ['CAST(-0.5D AS BIGINT)', 0],
    ['ceil(-0.5D)', 0],
    ['-4 % 2', 0],
    ['pmod(-4, 2)', 0],
  ])('%s is 0', (text, out) => {
    expect(Object.is(value(text, { i: -3 }), out)).toBe(true);
  });

  it.each([
    ['-4.0D % 2', -0],
    ['pmod(-4.0D, 2)', -0],
    ['sign(-0.0D)', -0],
    ['signum(-0.0D)', -0],
    ['sign(0.0D)', 0],
    ['sign(-2.5D)', -1],
  ])('%s is %d as in Java', (text, out) => {
    expect(Object.is(value(text), out)).toBe(true);
  });
});

describe('CAST of NaN or Infinity to DECIMAL is NULL (castToDecimal catches NumberFormatException)', () => {
  it.each([
    ["CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(10,2))"],
    ["CAST(CAST('Infinity' AS DOUBLE) AS DECIMAL(10,2))"],
    ["CAST(CAST('-inf' AS FLOAT) AS DECIMAL(5,0))"],
    ['CAST(d AS DECIMAL(38,0))'],
  ])('%s is null', (text) => {
    expect(value(text, { d: Number.NEGATIVE_INFINITY })).toBeNull();
  });

  it('a finite double too large still overflows', () => {
    expect(() => value('CAST(1e10D AS DECIMAL(5,0))')).toThrow(/^\[NUMERIC_VALUE_OUT_OF_RANGE\]/);
  });
});

describe('TINYINT and SMALLINT + - * overflow is BINARY_ARITHMETIC_OVERFLOW', () => {
  it.each([
    ['127Y + 1Y', /^\[BINARY_ARITHMETIC_OVERFLOW\] 127S \+ 1S caused overflow\. Use `try_add` /],
    ['-128Y - 1Y', /^\[BINARY_ARITHMETIC_OVERFLOW\] -128S - 1S caused overflow\. Use `try_subtract` /],
    ['16384S * 2S', /^\[BINARY_ARITHMETIC_OVERFLOW\] 16384S \* 2S caused overflow\. Use `try_multiply` /],
  ])('%s', (text, error) => {
    expect(() => value(text)).toThrow(error);
  });

  it('try_add makes it null; in range it is the value', () => {
    expect(value('try_add(127Y, 1Y)')).toBeNull();
    expect(value('100Y + 27Y')).toBe(127);
    expect(typeOf('100Y + 27Y')).toBe('TINYINT');
  });
});

describe('number literals are range-checked with their sign (Spark: MINUS? INTEGER_VALUE...)', () => {
  it.each([
    ['-9223372036854775808L', 'BIGINT', -(2n ** 63n)],
    ['-9223372036854775808', 'BIGINT', -(2n ** 63n)],
    ['9223372036854775808', 'DECIMAL(19,0)', '9223372036854775808'],
    ['-128Y', 'TINYINT', -128],
    ['-32768S', 'SMALLINT', -32768],
    ['-2147483648', 'INT', -2147483648],
    ['-2147483649', 'BIGINT', -2147483649],
    ['-1.50', 'DECIMAL(3,2)', '-1.50'],
  ])('%s is %s %s', (text, type, out) => {
    expect(typeOf(text)).toBe(type);
    expect(value(text)).toEqual(out);
  });

  const refusal = (text: string) => refusalOf(text, COLS).errorClass;

  it.each([
    ['128Y', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['-129Y', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['32768S', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['9223372036854775808L', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['-9223372036854775809L', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['1e400', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['1e400D', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['-1e400D', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['1e39F', 'INVALID_NUMERIC_LITERAL_RANGE'],
    ['123456789012345678901234567890123456789', 'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION'],
    ['-1234567890123456789012345678901234567.89', 'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION'],
  ])('%s is refused with %s', (text, cls) => {
    expect(refusal(text)).toBe(cls);
  });

  it('-5 is a literal before a postfix operator and beside a DECIMAL', () => {
    expect(typeOf('p * -5')).toBe('DECIMAL(12,2)');
    expect(value('- 5')).toBe(-5);
    expect(value('-(5)')).toBe(-5);
  });
});

describe('floor and ceil with a scale (RoundFloor / RoundCeil), and of DECIMAL(p,0)', () => {
  it.each([
    // DECIMAL(5,4): integer digits 5-4+1 = 2, scale min(4, 3) = 3
    ['ceil(3.1411, 3)', 'DECIMAL(5,3)', '3.142'],
    ['floor(3.1411, 3)', 'DECIMAL(5,3)', '3.141'],
    // negative scale: precision max(2, 3+1) = 4, scale 0
    ['ceil(3.1411, -3)', 'DECIMAL(4,0)', '1000'],
    ['floor(3.1411, -3)', 'DECIMAL(4,0)', '0'],
    ['floor(-3.1411, 1)', 'DECIMAL(3,1)', '-3.2'],
    ['ceil(-3.1411, 1)', 'DECIMAL(3,1)', '-3.1'],
    // an INT is DECIMAL(10,0): 11 integer digits
    ['floor(i, -1)', 'DECIMAL(11,0)', '-20'],
    ['ceiling(i, -1)', 'DECIMAL(11,0)', '-10'],
    ['ceil(p, 5)', 'DECIMAL(11,2)', '12.34'],
    // a DOUBLE is DECIMAL(30,15) (DecimalType.forType): 16 integer digits; a FLOAT DECIMAL(14,7)
    ['floor(0.25D, 1)', 'DECIMAL(17,1)', '0.2'],
    ['ceil(-0.35D, 1)', 'DECIMAL(17,1)', '-0.3'],
    ['floor(-0.35D, -1)', 'DECIMAL(16,0)', '-10'],
    ['floor(CAST(2.25 AS FLOAT), 1)', 'DECIMAL(9,1)', '2.2'],
    // DECIMAL(p,0) stays itself
    ['floor(CAST(5 AS DECIMAL(5,0)))', 'DECIMAL(5,0)', '5'],
    ['ceil(CAST(-5 AS DECIMAL(38,0)))', 'DECIMAL(38,0)', '-5'],
  ])('%s is %s %s', (text, type, out) => {
    expect(typeOf(text)).toBe(type);
    expect(value(text, { i: -15, p: '12.34' })).toBe(out);
  });

  it('the scale must be an INT literal', () => {
    expect(() => analyzeExpression('floor(p, i)', COLS)).toThrow(expect.objectContaining({ errorClass: 'NON_FOLDABLE_ARGUMENT' }));
    expect(() => analyzeExpression('floor(p, 1L)', COLS)).toThrow(expect.objectContaining({ errorClass: 'NON_FOLDABLE_ARGUMENT' }));
  });
});

describe("names without AS are Spark's (golden file sql-expression-schema.md, toPrettySQL)", () => {
  it.each([
    ['sqrt(4)', 'SQRT(4)'],
    ['exp(0)', 'EXP(0)'],
    ['cbrt(27.0)', 'CBRT(27.0)'],
    ['ceil(-0.1)', 'CEIL(-0.1)'],
    ['ceiling(-0.1)', 'ceiling(-0.1)'],
    ['floor(-0.1)', 'FLOOR(-0.1)'],
    ['floor(3.1411, 3)', 'floor(3.1411, 3)'],
    ['log10(10)', 'LOG10(10)'],
    ['log2(2)', 'LOG2(2)'],
    ['log(10, 100)', 'LOG(10, 100)'],
    ['log(10)', 'LOG(E(), 10)'],
    ['ln(1)', 'ln(1)'],
    ['power(2, 3)', 'POWER(2, 3)'],
    ['pow(2, 3)', 'pow(2, 3)'],
    ['signum(40)', 'SIGNUM(40)'],
    ['sign(40)', 'sign(40)'],
    ['round(2.5)', 'round(2.5, 0)'],
    ['bround(2.5, 0)', 'bround(2.5, 0)'],
    ['abs(-1)', 'abs(-1)'],
    ['3 div 2', '(3 div 2)'],
    ['1L + 1', '(1 + 1)'],
    ['1.5D', '1.5'],
    ['1e3', '1000.0'],
    ['1.5BD', '1.5'],
    ['.5', '0.5'],
    ['-1.5D * i', '(-1.5 * i)'],
    ['isnull(1)', '(1 IS NULL)'],
    ['isnotnull(1)', '(1 IS NOT NULL)'],
    ["if(1 < 2, 'a', 'b')", '(IF((1 < 2), a, b))'],
    ['0.5 BETWEEN 0.1 AND 1.0', 'between(0.5, 0.1, 1.0)'],
    ["CAST('10' AS INT)", 'CAST(10 AS INT)'],
    // Column.named: a top-level cast of a column, or of casts of one, is named by the column
    ['CAST(i AS STRING)', 'i'],
    ['CAST(CAST(i AS DOUBLE) AS STRING)', 'i'],
    ['TRY_CAST(i::DOUBLE AS STRING)', 'i'],
    ['CAST(CAST(i AS DOUBLE) + 1 AS STRING)', 'CAST((CAST(i AS DOUBLE) + 1) AS STRING)'],
    ['coalesce(NULL, 1, NULL)', 'coalesce(NULL, 1, NULL)'],
    ['i', 'i'],
  ])('%s is named %s', (text, name) => {
    expect(nameOf(text)).toBe(name);
  });

  it('keeps the SQL text (with its literals) for messages', () => {
    expect(compileExpression('1L + 1', COLS).sql).toBe('(1L + 1)');
  });
});

describe('names show the arguments Spark fills in (sql-expression-schema.md)', () => {
  it.each([
    ["locate('bar', 'foobarbar')", 'locate(bar, foobarbar, 1)'],
    ["regexp_replace('100-200', '(\\\\d+)', 'num')", 'regexp_replace(100-200, (\\d+), num, 1)'],
    ["split('oneAtwoBthreeC', '[ABC]')", 'split(oneAtwoBthreeC, [ABC], -1)'],
    ["substr('Spark SQL', 5)", 'substr(Spark SQL, 5, 2147483647)'],
    ["substring('Spark SQL', 5)", 'substring(Spark SQL, 5, 2147483647)'],
    ["sort_array(array('b', 'a'))", 'sort_array(array(b, a), true)'],
    ["lpad('hi', 5)", 'lpad(hi, 5,  )'],
    ['from_unixtime(0)', 'from_unixtime(0, yyyy-MM-dd HH:mm:ss)'],
    ['from_json(\'{"a":1, "b":0.8}\', \'a INT, b DOUBLE\')', 'from_json({"a":1, "b":0.8})'],
    ["unix_timestamp('2016-04-08 00:00:00')", 'unix_timestamp(2016-04-08 00:00:00, yyyy-MM-dd HH:mm:ss)'],
  ])('%s is named %s', (text, name) => {
    expect(nameOf(text)).toBe(name);
  });

  it('the SQL text quotes a filled-in string', () => {
    expect(compileExpression("lpad('hi', 5)", COLS).sql).toBe("lpad('hi', 5, ' ')");
  });
});

describe("STRING to DOUBLE and to an integral: Java's trimming and parseDouble", () => {
  it.each([
    ["CAST('+NaN' AS DOUBLE)", Number.NaN],
    ["CAST('-NaN' AS DOUBLE)", Number.NaN],
    ["CAST(' 1.5d ' AS DOUBLE)", 1.5],
    ['CAST(s AS DOUBLE)', 2],
    ['CAST(s AS INT)', 2],
  ])('%s is %d', (text, out) => {
    // s: '\x01 2\x7f' for the INT cast (trimAll drops DEL), '\x01 2\x1f' for DOUBLE (Java's trim)
    const s = text.includes('INT') ? '\x01 2\x7f' : '\x01 2\x1f';
    expect(value(text, { s })).toEqual(out);
  });

  it.each([["CAST('+nan' AS DOUBLE)"], ["CAST('0x10' AS DOUBLE)"], ['CAST(s AS DOUBLE)'], ['CAST(s AS INT)']])('%s is CAST_INVALID_INPUT', (text) => {
    // a no-break space is not trimmed by Java
    expect(() => value(text, { s: '\u00a02' })).toThrow(/^\[CAST_INVALID_INPUT\]/);
  });

  it("CAST of 2^63 as a double to BIGINT saturates, as Java (long) after Spark's range check", () => {
    expect(value('CAST(9.223372036854775807E18 AS BIGINT)')).toBe(2n ** 63n - 1n);
    expect(() => value('CAST(1.8446744073709552E19 AS BIGINT)')).toThrow(/^\[CAST_OVERFLOW\]/);
  });
});
