/**
 * The math and bit functions of math-functions.ts beyond the examples of docs/expressions.md,
 * with Spark 4's ANSI semantics: result types, implicit casts, nulls, edges and errors. The
 * expectations come from Spark's function documentation and its test suites (MathExpressionsSuite,
 * BitwiseExpressionsSuite, Hive's conv tests) or are worked out by hand from Java's rules (int and
 * long shifts, Long.bitCount, Math.rint); the hypot values where V8's Math.hypot differs in the last
 * bit are java.lang.Math.hypot's (fdlibm), as a JDK computes them.
 */
import { compileExpression, compileSelect } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { errorMessageOf } from '../helpers/expr-errors';

const value = (text: string) => compileExpression(text, []).evaluate({});
const typeOf = (text: string) => typeName(compileExpression(text, []).sqlType);
const nameOf = (text: string) => compileExpression(text, []).type.name;
const errorOf = (text: string) => errorMessageOf(text);

describe('expm1, log1p, rint and hypot', () => {
  it('are DOUBLE of a number or a string, null of a null, named as Spark prints them', () => {
    expect(typeOf('expm1(1)')).toBe('DOUBLE');
    expect(value('expm1(1)')).toBe(1.718281828459045);
    expect(value("expm1('0')")).toBe(0);
    expect(value('expm1(NULL)')).toBeNull();
    expect(value('expm1(1e-10D)')).toBe(1.00000000005e-10);
    expect(value('expm1(1000D)')).toBe(Number.POSITIVE_INFINITY);
    expect(nameOf('expm1(0)')).toBe('EXPM1(0)');
    expect(nameOf('log1p(0)')).toBe('LOG1P(0)');
    expect(nameOf('rint(1.5)')).toBe('rint(1.5)');
    expect(nameOf('hypot(3, 4)')).toBe('HYPOT(3, 4)');
    expect(errorOf('expm1(true)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });

  it('log1p is NULL at and below -1 (Spark: not -Infinity or NaN), NaN of NaN', () => {
    expect(value('log1p(-0.5D)')).toBe(-Math.LN2); // ln(0.5), -0.6931471805599453
    expect(value('log1p(1e-10D)')).toBe(9.999999999500001e-11);
    expect(value('log1p(-1)')).toBeNull();
    expect(value('log1p(-2)')).toBeNull();
    expect(value("log1p(CAST('NaN' AS DOUBLE))")).toBeNaN();
  });

  it('rint rounds half to even and keeps the sign of zero', () => {
    expect(value('rint(2.5)')).toBe(2);
    expect(value('rint(3.5)')).toBe(4);
    expect(value('rint(-2.5)')).toBe(-2);
    expect(Object.is(value('rint(-0.4)'), -0)).toBe(true);
    expect(value('rint(7)')).toBe(7);
    expect(value('rint(1e300D)')).toBe(1e300);
    expect(value('rint(4503599627370497D)')).toBe(4503599627370497);
    expect(value('rint(NULL)')).toBeNull();
  });

  it("hypot is fdlibm's, as java.lang.Math.hypot: no overflow, an infinity wins over NaN", () => {
    expect(value('hypot(-3, -4)')).toBe(5);
    expect(value('hypot(5, 12)')).toBe(13);
    expect(value('hypot(0, 0)')).toBe(0);
    // V8's Math.hypot gives 5.099019513592785 and 12.041594578792294
    expect(value('hypot(1, 5)')).toBe(5.0990195135927845);
    expect(value('hypot(1, 12)')).toBe(12.041594578792296);
    expect(value('hypot(1e308D, 1e308D)')).toBe(1.4142135623730951e308);
    expect(value('hypot(3e-320D, 4e-320D)')).toBe(5e-320);
    expect(value("hypot(CAST('Infinity' AS DOUBLE), CAST('NaN' AS DOUBLE))")).toBe(Number.POSITIVE_INFINITY);
    expect(value("hypot(CAST('NaN' AS DOUBLE), 1)")).toBeNaN();
    expect(value('hypot(NULL, 1)')).toBeNull();
  });
});

describe('factorial', () => {
  it('is a BIGINT for 0..20 (exact beyond 2^53) and NULL outside', () => {
    expect(typeOf('factorial(5)')).toBe('BIGINT');
    expect(value('factorial(0)')).toBe(1);
    expect(value('factorial(18)')).toBe(6402373705728000);
    expect(value('factorial(19)')).toBe(121645100408832000n);
    expect(value('factorial(20)')).toBe(2432902008176640000n);
    expect(value('factorial(21)')).toBeNull();
    expect(value('factorial(-1)')).toBeNull();
    expect(value('factorial(NULL)')).toBeNull();
  });

  it('casts its argument to INT (ANSI): a BIGINT beyond INT is CAST_OVERFLOW, a BOOLEAN is refused', () => {
    expect(value('factorial(5L)')).toBe(120);
    expect(value("factorial('5')")).toBe(120);
    expect(value('factorial(5.9D)')).toBe(120);
    expect(errorOf('factorial(3000000000L)')).toMatch(/^\[CAST_OVERFLOW\]/);
    expect(errorOf('factorial(true)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe('shiftleft, shiftright, shiftrightunsigned', () => {
  it("shift an INT as Java's int (the count's low 5 bits) and a BIGINT as Java's long (its low 6 bits)", () => {
    expect(value('shiftleft(21, 1)')).toBe(42);
    expect(value('shiftleft(1, 31)')).toBe(-2147483648);
    expect(value('shiftleft(1, 32)')).toBe(1);
    expect(value('shiftleft(1, -1)')).toBe(-2147483648);
    expect(value('shiftleft(1L, 32)')).toBe(4294967296);
    expect(value('shiftleft(1L, 63)')).toBe(-9223372036854775808n);
    expect(value('shiftleft(1L, 64)')).toBe(1);
    expect(value('shiftleft(-21L, 1)')).toBe(-42);
    expect(value('shiftright(-8, 1)')).toBe(-4);
    expect(value('shiftright(-1, 31)')).toBe(-1);
    expect(value('shiftright(8, 33)')).toBe(4);
    expect(value('shiftright(-42L, 1)')).toBe(-21);
    expect(value('shiftrightunsigned(-1, 1)')).toBe(2147483647);
    expect(value('shiftrightunsigned(-1, 32)')).toBe(-1);
    expect(value('shiftrightunsigned(-42L, 1)')).toBe(9223372036854775787n);
  });

  it('are INT or BIGINT as their first argument; TINYINT, a DECIMAL or a STRING is cast to INT', () => {
    expect(typeOf('shiftleft(1, 1)')).toBe('INT');
    expect(typeOf('shiftleft(1L, 1)')).toBe('BIGINT');
    expect(typeOf('shiftleft(CAST(127 AS TINYINT), 1)')).toBe('INT');
    expect(value('shiftleft(CAST(127 AS TINYINT), 1)')).toBe(254);
    expect(value("shiftleft('8', 1)")).toBe(16);
    expect(value('shiftleft(2.5, 1)')).toBe(4);
    expect(value('shiftleft(NULL, 1)')).toBeNull();
    expect(value('shiftright(1, NULL)')).toBeNull();
    expect(errorOf('shiftleft(true, 1)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('shiftleft(1, 4294967296L)')).toMatch(/^\[CAST_OVERFLOW\]/);
  });
});

describe("Spark 4's shift operators << >> >>>", () => {
  it('are shiftleft, shiftright and shiftrightunsigned, named as the operator was written', () => {
    expect(value('2 << 1')).toBe(4);
    expect(value('1 << -1')).toBe(-2147483648);
    expect(value('-8 >> 1')).toBe(-4);
    expect(value('-1 >>> 1')).toBe(2147483647);
    expect(value('1L << 63')).toBe(-9223372036854775808n);
    expect(compileSelect(['2 << 1', 'shiftleft(2, 1)', '4 >>> 1'], []).columns.map((c) => c.name)).toEqual(['(2 << 1)', 'shiftleft(2, 1)', '(4 >>> 1)']);
  });

  it('bind tighter than & and looser than +, as in SqlBaseParser', () => {
    expect(value('1 + 1 << 2')).toBe(8); // (1 + 1) << 2
    expect(value('1 << 2 & 6')).toBe(4); // (1 << 2) & 6
    expect(value('8 >> 1 > 3')).toBe(true);
  });

  it('are the characters written together: a space between two < is two comparisons, and a nested type still closes with >>', () => {
    expect(errorOf('2 < < 3')).toMatch(/^\[PARSE_SYNTAX_ERROR\]/);
    expect(value('2 < 3')).toBe(true);
    expect(value('size(CAST(array(array(1)) AS ARRAY<ARRAY<BIGINT>>))')).toBe(1);
    expect(value('size(array(array(1))::array<array<bigint>>)')).toBe(1);
  });
});

describe('bit_count and bit_get', () => {
  it('bit_count counts the bits of the value as a 64-bit long (-1 has 64), a BOOLEAN as 1 or 0', () => {
    expect(typeOf('bit_count(7)')).toBe('INT');
    expect(value('bit_count(7)')).toBe(3);
    expect(value('bit_count(-1)')).toBe(64);
    expect(value('bit_count(CAST(-1 AS TINYINT))')).toBe(64);
    expect(value('bit_count(9223372036854775807L)')).toBe(63);
    expect(value('bit_count(true)')).toBe(1);
    expect(value('bit_count(false)')).toBe(0);
    expect(value('bit_count(NULL)')).toBeNull();
  });

  it('bit_count takes no implicit cast: a STRING or a DOUBLE is refused', () => {
    expect(errorOf("bit_count('1')")).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('bit_count(1.5D)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });

  it('bit_get / getbit is the TINYINT bit at pos, within the bits of the argument type', () => {
    expect(typeOf('bit_get(11, 0)')).toBe('TINYINT');
    expect(value('bit_get(11, 1)')).toBe(1);
    expect(value('bit_get(11, 3)')).toBe(1);
    expect(value('getbit(11, 2)')).toBe(0);
    expect(value('bit_get(CAST(23 AS TINYINT), 3)')).toBe(0);
    expect(value('bit_get(CAST(23 AS TINYINT), 0)')).toBe(1);
    expect(value('bit_get(-1, 31)')).toBe(1);
    expect(value('bit_get(-1L, 63)')).toBe(1);
    expect(value('bit_get(1L, 63)')).toBe(0);
    expect(value("bit_get(11, '0')")).toBe(1);
    expect(value('bit_get(NULL, 0)')).toBeNull();
    expect(value('bit_get(11, NULL)')).toBeNull();
  });

  it('bit_get out of range is INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE; a STRING or DOUBLE value is refused', () => {
    expect(errorOf('bit_get(CAST(23 AS TINYINT), 8)')).toBe(
      '[INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE] The value of parameter(s) `pos` in `bit_get` is invalid: expects an integer value in [0, 8), but got 8.',
    );
    expect(errorOf('getbit(1, -1)')).toMatch(/^\[INVALID_PARAMETER_VALUE\.BIT_POSITION_RANGE\] .*`getbit`.*\[0, 32\), but got -1\.$/);
    expect(errorOf('bit_get(1L, 64)')).toMatch(/\[0, 64\), but got 64\.$/);
    expect(errorOf("bit_get('11', 0)")).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('bit_get(1.5D, 0)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe('bit_length', () => {
  it("counts the bits of the string's UTF-8 bytes; a number is cast to its text", () => {
    expect(typeOf("bit_length('a')")).toBe('INT');
    expect(value("bit_length('')")).toBe(0);
    expect(value("bit_length('é')")).toBe(16);
    expect(value("bit_length('日本')")).toBe(48);
    expect(value("bit_length('😀')")).toBe(32);
    expect(value('bit_length(123)')).toBe(24);
    expect(value('bit_length(NULL)')).toBeNull();
  });
});

describe('conv', () => {
  it('converts between bases 2..36, upper case, through 64 unsigned bits', () => {
    expect(typeOf("conv('3', 10, 2)")).toBe('STRING');
    expect(value("conv('3', 10, 2)")).toBe('11');
    expect(value("conv('big', 36, 16)")).toBe('3A48');
    expect(value("conv('ff', 16, 10)")).toBe('255');
    expect(value('conv(255, 10, 16)')).toBe('FF');
    expect(value("conv('4521', 10, 36)")).toBe('3HL');
    expect(value("conv('facebook', 36, 16)")).toBe('116ED2B2FB4');
    expect(value("conv('FFFFFFFFFFFFFFFF', 16, 10)")).toBe('18446744073709551615');
  });

  it("a negative number is two's complement to a positive base, signed to a negative base", () => {
    expect(value("conv('-15', 10, -16)")).toBe('-F');
    expect(value("conv('-15', 10, 16)")).toBe('FFFFFFFFFFFFFFF1');
    expect(value("conv('-1', 10, 16)")).toBe('FFFFFFFFFFFFFFFF');
    expect(value("conv('-641', 10, -10)")).toBe('-641');
    expect(value("conv('1011', 2, -16)")).toBe('B');
    expect(value("conv('FFFFFFFFFFFFFFFF', 16, -10)")).toBe('-1');
    expect(value("conv('-0', 10, 10)")).toBe('0');
  });

  it('reads the longest prefix of digits after trimming spaces; NULL for a bad base, an empty number or a null', () => {
    expect(value("conv('11abc', 10, 16)")).toBe('B');
    expect(value("conv('  12  ', 10, 10)")).toBe('12');
    expect(value("conv('+5', 10, 10)")).toBe('0');
    expect(value("conv('1234', 10, 37)")).toBeNull();
    expect(value("conv('1234', 1, 10)")).toBeNull();
    expect(value("conv('1234', 10, -1)")).toBeNull();
    expect(value("conv('', 10, 16)")).toBeNull();
    expect(value("conv('   ', 10, 16)")).toBeNull();
    expect(value('conv(NULL, 36, 16)')).toBeNull();
    expect(value("conv('3', NULL, 16)")).toBeNull();
    expect(value("conv('3', 16, NULL)")).toBeNull();
  });

  it('a number beyond 64 unsigned bits is ARITHMETIC_OVERFLOW (ANSI; Spark without ANSI gives -1)', () => {
    expect(errorOf("conv('9223372036854775807', 36, 16)")).toMatch(/^\[ARITHMETIC_OVERFLOW\] Overflow in function conv\(\)/);
    expect(errorOf("conv('10000000000000000', 16, 10)")).toMatch(/^\[ARITHMETIC_OVERFLOW\]/);
    expect(errorOf("conv('-10000000000000000', 16, -10)")).toMatch(/^\[ARITHMETIC_OVERFLOW\]/);
  });
});

describe('width_bucket', () => {
  it('is the BIGINT bucket of the value, 0 below and num_bucket + 1 at or above the range', () => {
    expect(typeOf('width_bucket(5.3, 0.2, 10.6, 5)')).toBe('BIGINT');
    expect(value('width_bucket(0.2, 0.2, 10.6, 5)')).toBe(1);
    expect(value('width_bucket(10.6, 0.2, 10.6, 5)')).toBe(6);
    expect(value("width_bucket(CAST('Infinity' AS DOUBLE), 0, 10, 5)")).toBe(6);
    expect(value("width_bucket(CAST('-Infinity' AS DOUBLE), 0, 10, 5)")).toBe(0);
    expect(value("width_bucket('5.3', 0.2, 10.6, 5)")).toBe(3);
  });

  it('counts down when min > max', () => {
    expect(value('width_bucket(5.2, 5.2, 0.5, 2)')).toBe(1);
    expect(value('width_bucket(5.3, 5.2, 0.5, 2)')).toBe(0);
    expect(value('width_bucket(0.5, 5.2, 0.5, 2)')).toBe(3);
  });

  it('is NULL for num_bucket <= 0 or BIGINT max, a NaN value, min = max, a NaN or infinite bound, a null', () => {
    expect(value('width_bucket(5.3, 0.2, 10.6, 0)')).toBeNull();
    expect(value('width_bucket(5.3, 0.2, 10.6, -1)')).toBeNull();
    expect(value('width_bucket(5.3, 0.2, 10.6, 9223372036854775807L)')).toBeNull();
    expect(value("width_bucket(CAST('NaN' AS DOUBLE), 0, 10, 5)")).toBeNull();
    expect(value('width_bucket(5, 1, 1, 5)')).toBeNull();
    expect(value("width_bucket(5, 0, CAST('Infinity' AS DOUBLE), 5)")).toBeNull();
    expect(value("width_bucket(5, CAST('NaN' AS DOUBLE), 10, 5)")).toBeNull();
    expect(value('width_bucket(NULL, 0, 10, 5)')).toBeNull();
    expect(value('width_bucket(5, 0, 10, NULL)')).toBeNull();
  });

  it('keeps a large num_bucket exact (its double is 2^63, the bucket 2^62 + 1)', () => {
    expect(value('width_bucket(5, 0, 10, 9223372036854775806L)')).toBe(4611686018427387905n);
  });

  it('takes three intervals of one kind; a mix of types is DATA_DIFF_TYPES, a BOOLEAN is refused', () => {
    expect(value("width_bucket(INTERVAL '5' YEAR, INTERVAL '1' YEAR, INTERVAL '11' YEAR, 10)")).toBe(5);
    expect(errorOf("width_bucket(INTERVAL '1' DAY, 0, 10, 10)")).toMatch(/^\[DATATYPE_MISMATCH\.DATA_DIFF_TYPES\]/);
    expect(errorOf('width_bucket(true, 0, 10, 10)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe('negative and positive', () => {
  it('negate or keep a number of its own type; a STRING is a DOUBLE, a NULL a DOUBLE null', () => {
    expect(typeOf('negative(1)')).toBe('INT');
    expect(value('negative(-2)')).toBe(2);
    expect(value('negative(1.5)')).toBe('-1.5');
    expect(value('negative(9223372036854775807L)')).toBe(-9223372036854775807n);
    expect(typeOf("negative('5')")).toBe('DOUBLE');
    expect(value("negative('5')")).toBe(-5);
    expect(typeOf('negative(NULL)')).toBe('DOUBLE');
    expect(value('negative(NULL)')).toBeNull();
    expect(value('positive(-1.5)')).toBe('-1.5');
    expect(typeOf("positive('5')")).toBe('DOUBLE');
    expect(value('positive(NULL)')).toBeNull();
  });

  it('are named negative(x) and (+ x), as Spark prints them', () => {
    expect(nameOf('negative(1)')).toBe('negative(1)');
    expect(nameOf('positive(1)')).toBe('(+ 1)');
  });

  it('negating the least INT is ARITHMETIC_OVERFLOW; a BOOLEAN is refused', () => {
    expect(errorOf("negative(CAST('-2147483648' AS INT))")).toMatch(/^\[ARITHMETIC_OVERFLOW\]/);
    expect(errorOf('negative(true)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('positive(true)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe("round / bround / floor / ceil with a negative scale, at the type's edge (Spark's RoundBase)", () => {
  it.each([
    ['round(CAST(125 AS TINYINT), -1)', 'try_round'],
    ['round(2147483647, -1)', 'try_round'],
    ['bround(9223372036854775807L, -1)', 'try_bround'],
  ])('%s overflows its integral type: ARITHMETIC_OVERFLOW naming %s', (text, hint) => {
    expect(errorOf(text)).toMatch(/^\[ARITHMETIC_OVERFLOW\]/);
    expect(errorOf(text)).toContain(`'${hint}'`);
  });

  it.each([
    ['round(CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0)), -1)'],
    ['bround(CAST(99999999999999999999999999999999999995 AS DECIMAL(38,0)), -1)'],
    ['ceil(CAST(99999999999999999999999999999999999991 AS DECIMAL(38,0)), -1)'],
  ])('%s needs 39 digits: DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION, not null', (text) => {
    expect(typeOf(text)).toBe('DECIMAL(38,0)');
    expect(errorOf(text)).toMatch(/^\[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION\] Decimal precision 39 exceeds max precision 38/);
  });

  it('rounding down, or within the precision, is a value', () => {
    expect(value('floor(CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0)), -1)')).toBe('99999999999999999999999999999999999990');
    expect(value('round(CAST(99999999999999999999999999999999999994 AS DECIMAL(38,0)), -1)')).toBe('99999999999999999999999999999999999990');
    expect(value('round(CAST(125 AS TINYINT), -2)')).toBe(100);
    expect(value('bround(CAST(125 AS TINYINT), -1)')).toBe(120);
    expect(typeOf('round(123.456, -1)')).toBe('DECIMAL(4,0)');
    expect(value('round(123.456, -1)')).toBe('120');
  });
});

describe('round / bround with a NULL or an extreme scale (RoundBase: scaleV null, BigDecimal.setScale)', () => {
  it('a NULL scale is a NULL result of the type the value would round to at scale 0', () => {
    expect(value('round(1.5, NULL)')).toBeNull();
    expect(typeOf('round(1.5, NULL)')).toBe('DECIMAL(2,0)');
    expect(value('bround(1.5D, NULL)')).toBeNull();
    expect(value('round(1, NULL)')).toBeNull();
    expect(typeOf('round(1, NULL)')).toBe('INT');
  });

  it.each([
    ['round(123.4567, 2147483647)', '123.4567'], // a scale past the value's: no rounding
    ['round(123.4567D, 2147483647)', 123.4567],
    ['round(123.4567, -2147483647)', '0'],
    ['round(1.5D, -1000)', 0],
    ['round(12345L, -2147483647)', 0],
    ['round(-12345L, -19)', 0],
  ])('%s = %p', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it('5000000000000000000L to -19 rounds half up to 10^19, past BIGINT', () => {
    expect(errorOf('round(5000000000000000000L, -19)')).toMatch(/^\[ARITHMETIC_OVERFLOW\]/);
  });
});
