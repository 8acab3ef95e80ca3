/**
 * Type rules of the analyzer, worked out from Spark 4's documented rules (ANSI on):
 * numeric widening (TINYINT < SMALLINT < INT < BIGINT < DECIMAL < FLOAT < DOUBLE), DecimalPrecision's
 * result types with adjustPrecisionScale when p > 38, strings promoted beside numbers
 * (AnsiTypeCoercion: BIGINT beside an integral, DOUBLE beside another number), and the refusals
 * with Spark's error classes.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, checkFilterBoolean, compileExpression, compileFilter, type ExpressionError } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';

const COLS = parseDdlColumns(
  'i INT, l BIGINT, ti TINYINT, si SMALLINT, d DOUBLE, f FLOAT, s STRING, b BOOLEAN, dt DATE, ts TIMESTAMP, ' +
    'd10_2 DECIMAL(10,2), d5_3 DECIMAL(5,3), d38_10 DECIMAL(38,10), d38_2 DECIMAL(38,2), d20_0 DECIMAL(20,0), arr ARRAY<INT>, m MAP<STRING, INT>',
);
const typeOf = (text: string) => typeName(analyzeExpression(text, COLS).type);
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);

function refusal(text: string): ExpressionError {
  try {
    analyzeExpression(text, COLS);
  } catch (e) {
    return e as ExpressionError;
  }
  throw new Error(`${text} was accepted`);
}

describe('numeric result types', () => {
  it.each([
    ['i + i', 'INT'],
    ['ti + ti', 'TINYINT'],
    ['ti + si', 'SMALLINT'],
    ['i + l', 'BIGINT'],
    ['i + d', 'DOUBLE'],
    ['f + f', 'FLOAT'],
    // ANSI: an integral beside FLOAT meets it in DOUBLE (AnsiTypeCoercionSuite: IntegerType, FloatType -> DoubleType)
    ['i + f', 'DOUBLE'],
    ['l * f', 'DOUBLE'],
    ['f + d', 'DOUBLE'],
    ['d10_2 + d', 'DOUBLE'],
    ['d10_2 + f', 'DOUBLE'],
    // Divide takes DOUBLE or DECIMAL: integers are divided as DOUBLE
    ['i / i', 'DOUBLE'],
    ['l div i', 'BIGINT'],
    ['i % l', 'BIGINT'],
    ['-ti', 'TINYINT'],
  ])('%s is %s', (text, type) => {
    expect(typeOf(text)).toBe(type);
  });
});

describe('DECIMAL result precision and scale (DecimalPrecision)', () => {
  it.each([
    // INT is DECIMAL(10,0); a product has p1+p2+1, s1+s2: 10+10+1 = 21, 2+0 = 2
    ['d10_2 * i', 'DECIMAL(21,2)'],
    // BIGINT is DECIMAL(20,0): 10+20+1 = 31
    ['d10_2 * l', 'DECIMAL(31,2)'],
    // TINYINT is DECIMAL(3,0): 10+3+1 = 14
    ['d10_2 * ti', 'DECIMAL(14,2)'],
    // +: scale max(2,3) = 3, precision max(10-2, 5-3) + 3 + 1 = 12
    ['d10_2 + d5_3', 'DECIMAL(12,3)'],
    ['d10_2 - d5_3', 'DECIMAL(12,3)'],
    // /: scale max(6, s1+p2+1) = max(6, 2+5+1) = 8, precision p1-s1+s2+scale = 10-2+3+8 = 19
    ['d10_2 / d5_3', 'DECIMAL(19,8)'],
    // /: scale max(6, 10+38+1) = 49, precision 38-10+10+49 = 87 > 38: integer digits 38, scale max(38-38, min(49,6)) = 6
    ['d38_10 / d38_10', 'DECIMAL(38,6)'],
    // *: 38+38+1 = 77, scale 4 > 38: integer digits 73, scale max(38-73, min(4,6)) = 4
    ['d38_2 * d38_2', 'DECIMAL(38,4)'],
    // +: 38-2+1+2 = 39 > 38: integer digits 37, scale max(38-37, min(2,6)) = 2
    ['d38_2 + d38_2', 'DECIMAL(38,2)'],
    // %: precision min(10-2, 5-3) + max(2,3) = 5, scale 3
    ['d10_2 % d5_3', 'DECIMAL(5,3)'],
    // literals: 1.5 is DECIMAL(2,1), the INT literal 2 beside it DECIMAL(1,0) (literalPickMinimumPrecision): scale 1, precision max(1, 1) + 1 + 1 = 3
    ['1.5 + 2', 'DECIMAL(3,1)'],
    ['0.1 + 0.2', 'DECIMAL(2,1)'],
  ])('%s is %s', (text, type) => {
    expect(typeOf(text)).toBe(type);
  });

  it('computes exactly, rounding HALF_UP to the result scale', () => {
    expect(value('d10_2 * i', { d10_2: '10.50', i: 2 })).toBe('21.00');
    expect(value('0.1 + 0.2')).toBe('0.3');
    // 1/3 at DECIMAL(38,6)
    expect(value('CAST(1 AS DECIMAL(38,10)) / CAST(3 AS DECIMAL(38,10))')).toBe('0.333333');
    // 2/3 = 0.6666666... at scale 8 rounds up
    expect(value('CAST(2 AS DECIMAL(10,2)) / CAST(3 AS DECIMAL(5,3))')).toBe('0.66666667');
  });

  it('fails the row when the exact result needs more digits than the result type has', () => {
    // 1.23e31 squared is about 1.5e62: more than DECIMAL(38,4)'s 34 integer digits
    expect(() => value('d38_2 * d38_2', { d38_2: '12345678901234567890123456789012.34' })).toThrow(
      /^\[NUMERIC_VALUE_OUT_OF_RANGE\] .* cannot be represented as DECIMAL\(38,4\)/,
    );
    expect(value('try_multiply(d38_2, d38_2)', { d38_2: '12345678901234567890123456789012.34' })).toBeNull();
  });

  it('keeps BIGINT exact beyond 2^53', () => {
    expect(value('l + 1', { l: 9007199254740993n })).toBe(9007199254740994n);
    expect(value('l * 2', { l: 4611686018427387903n })).toBe(9223372036854775806n);
    expect(() => value('l * 2', { l: 4611686018427387904n })).toThrow(/^\[ARITHMETIC_OVERFLOW\]/);
  });
});

describe('strings beside other types (ANSI implicit casts)', () => {
  it.each([
    ["'1' + 1", 'BIGINT'],
    ["'1' + 1.5D", 'DOUBLE'],
    ["'1' + d10_2", 'DOUBLE'],
    ["'1' + '2'", 'DOUBLE'],
    ["-'5'", 'DOUBLE'],
  ])('%s is %s', (text, type) => {
    expect(typeOf(text)).toBe(type);
  });

  it('parses the string, and fails the row when it is not a number', () => {
    expect(value("'10' + 5")).toBe(15);
    expect(value("' 2 ' * 3")).toBe(6);
    expect(() => value("'ten' + 5")).toThrow(/^\[CAST_INVALID_INPUT\] The value 'ten' of the type "STRING" cannot be cast to "BIGINT"/);
  });

  it('compares a string with a date, a timestamp or a number in that type', () => {
    expect(value("dt = '2026-10-01'", { dt: '2026-10-01' })).toBe(true);
    expect(value("dt < '2026-10-02'", { dt: '2026-10-01' })).toBe(true);
    expect(value("ts > '2026-10-01 11:59:59'", { ts: 1_790_856_000_000_000 })).toBe(true);
    expect(value("i = '7'", { i: 7 })).toBe(true);
    // as numbers, not as text: '10' > 9
    expect(value("'10' > i", { i: 9 })).toBe(true);
  });

  it('greatest and least find a common type without promoting a STRING (findWiderTypeWithoutStringPromotion)', () => {
    expect(refusal("greatest(i, '5')").errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
    expect(refusal('least(s, 1)').errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
    expect(refusal("greatest(dt, '2026-05-01')").errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
    expect(refusal("greatest(array(i), array('5'))").errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
    // numbers and datetimes still widen; CASE, coalesce and IN promote the STRING
    expect(typeOf('greatest(i, l, d10_2)')).toBe('DECIMAL(22,2)');
    expect(typeOf('least(dt, ts)')).toBe('TIMESTAMP');
    expect(typeOf("coalesce(i, '5')")).toBe('BIGINT');
    expect(typeOf("CASE WHEN b THEN dt ELSE '2026-05-01' END")).toBe('DATE');
  });

  it('IN widens the value and every item to one type, strings promoted, or is DATA_DIFF_TYPES (InTypeCoercion)', () => {
    expect(value("i IN ('7', 8)", { i: 7 })).toBe(true);
    expect(() => value("i IN ('x', 8)", { i: 8 })).toThrow(/^\[CAST_INVALID_INPUT\]/);
    expect(refusal("arr IN ('x')").errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
    expect(refusal("b IN ('true', 1)").errorClass).toBe('DATATYPE_MISMATCH.DATA_DIFF_TYPES');
  });

  it("nullif(a, b) is If(a = b, NULL, a): the comparison coerces, the result keeps a's type", () => {
    expect(typeOf("nullif(i, '7')")).toBe('INT');
    expect(typeOf('nullif(s, 7)')).toBe('STRING');
    expect(value('nullif(s, 7)', { s: '5' })).toBe('5');
    expect(value('nullif(s, 7)', { s: '7' })).toBeNull();
    expect(() => value('nullif(s, 7)', { s: 'x' })).toThrow(/^\[CAST_INVALID_INPUT\]/);
  });

  it('subtracts a STRING from a DATE or TIMESTAMP as that type (PromoteStrings, then SubtractDates / SubtractTimestamps)', () => {
    expect(typeOf("dt - '2026-09-30'")).toBe('INTERVAL DAY');
    expect(value("dt - '2026-09-30'", { dt: '2026-10-01' })).toBe("INTERVAL '1' DAY");
    expect(typeOf("ts - '2026-10-01'")).toBe('INTERVAL DAY TO SECOND');
    expect(value("ts - '2026-10-01'", { ts: 1_790_856_000_000_000 })).toBe("INTERVAL '0 12:00:00' DAY TO SECOND");
    expect(() => value("dt - 'x'", { dt: '2026-10-01' })).toThrow(/^\[CAST_INVALID_INPUT\]/);
    // DATE + STRING stays refused: the STRING becomes a DATE, and date_add takes no DATE days
    expect(refusal("dt + '1'").errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
  });

  it('compares DECIMALs of different scales by value', () => {
    expect(value('d10_2 = d5_3', { d10_2: '1.50', d5_3: '1.500' })).toBe(true);
    expect(value('d10_2 < 1.6', { d10_2: '1.50' })).toBe(true);
    expect(value('d10_2 = i', { d10_2: '3.00', i: 3 })).toBe(true);
  });
});

describe('refusals, with Spark error classes', () => {
  it('names close columns for an unknown one', () => {
    const e = refusal('amout + 1');
    expect(e.errorClass).toBe('UNRESOLVED_COLUMN.WITH_SUGGESTION');
    expect(e.message).toMatch(/with name `amout` cannot be resolved. Did you mean one of the following\? \[/);
    expect(e.position).toBe(0);
  });

  it('suggests the closest names first', () => {
    const e = analyzeErr('cuntry', parseDdlColumns('country STRING, city STRING, amount INT'));
    expect(e.message).toMatch(/\[`country`, /);
  });

  it('names a missing struct field', () => {
    expect(analyzeErr('st.x', parseDdlColumns('st STRUCT<f: INT>')).errorClass).toBe('FIELD_NOT_FOUND');
  });

  it.each([
    // DATE + n is date_add(dt, n), whose days are INT, SMALLINT or TINYINT (Spark's date.sql: date_add(d, 1L) is refused)
    ['l + dt', 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ['b + 1', 'DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES'],
    // one type that is not a number: BINARY_OP_WRONG_TYPE (BinaryOperator.checkInputDataTypes), a STRING promoted first
    ['b + b', 'DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE'],
    ["ts + '1'", 'DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE'],
    ['s * b', 'DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE'],
    ['ts * 1', 'DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES'],
    ['i AND b', 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ['upper(arr)', 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ['length(m)', 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    // between DATE and a number Spark suggests the functions (Cast.typeCheckFailureMessage)
    ['CAST(dt AS INT)', 'DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION'],
    ['m = m', 'DATATYPE_MISMATCH.INVALID_ORDERING_TYPE'],
    ['CASE WHEN b THEN 1 ELSE dt END', 'DATATYPE_MISMATCH.DATA_DIFF_TYPES'],
    ['d div 2', 'DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE'],
    ['no_such_fn(i)', 'UNRESOLVED_ROUTINE'],
    ['substring(s)', 'WRONG_NUM_ARGS.WITHOUT_SUGGESTION'],
    ['sum(i)', 'UNSUPPORTED_EXPR_FOR_OPERATOR'],
    ['from_json(s, s)', 'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT'],
  ])('%s is refused with %s', (text, errorClass) => {
    expect(refusal(text).errorClass).toBe(errorClass);
  });

  it.each(['rand()', 'uuid()', 'current_timestamp()', 'now()', 'unix_timestamp()'])('refuses the non-deterministic %s, naming it', (text) => {
    const e = refusal(text);
    expect(e.errorClass).toBe('INVALID_NON_DETERMINISTIC_EXPRESSIONS');
    expect(e.message).toContain(text.replace('()', ''));
    expect(e.message).toMatch(/not deterministic/);
  });

  it("checks a filter's type (DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN)", () => {
    expect(() => checkFilterBoolean(analyzeExpression('i + 1', COLS), 'i + 1')).toThrow(
      /^\[DATATYPE_MISMATCH\.FILTER_NOT_BOOLEAN\] .*"\(i \+ 1\)" of type "INT" is not a boolean/,
    );
    expect(() => compileFilter('s', COLS)).toThrow(/FILTER_NOT_BOOLEAN/);
    expect(compileFilter('i > 1', COLS)({ i: 2 })).toBe(true);
  });
});

describe('atomic values given where a STRING is expected (AnsiTypeCoercion casts them)', () => {
  it('reads a number, a date or a boolean as its text', () => {
    expect(value('upper(b)', { b: true })).toBe('TRUE');
    expect(value('length(i)', { i: -120 })).toBe(4);
    expect(value("startswith(dt, '2026')", { dt: '2026-10-01' })).toBe(true);
    expect(value('length(d)', { d: 1 })).toBe(3); // 1.0
  });
});

describe('window columns', () => {
  it('are STRUCT<start: TIMESTAMP, end: TIMESTAMP>, as Spark types window(...)', () => {
    const cols = [{ name: 'window', type: 'TIMESTAMP' as const, window: true as const }];
    expect(typeName(analyzeExpression('window', cols).type)).toBe('STRUCT<start: TIMESTAMP, end: TIMESTAMP>');
    expect(typeName(analyzeExpression('window.end', cols).type)).toBe('TIMESTAMP');
  });
});

describe('output names, as Spark names a column without AS', () => {
  it('keeps a column its name, a nested field its last part, and prints the rest', () => {
    const cols = parseDdlColumns('Amount INT, st STRUCT<inner: STRUCT<leaf: INT>>');
    expect(analyzeExpression('amount', cols).name).toBe('Amount');
    expect(analyzeExpression('st.inner.leaf', cols).name).toBe('leaf');
    expect(analyzeExpression('amount + 1', cols).name).toBe('(Amount + 1)');
  });

  it('names a cast of a bare column after the column, as Spark names Cast(attribute)', () => {
    const cols = parseDdlColumns('Amount INT, st STRUCT<f: INT>');
    expect(analyzeExpression('CAST(amount AS STRING)', cols).name).toBe('Amount');
    expect(analyzeExpression('amount::bigint', cols).name).toBe('Amount');
    expect(analyzeExpression('TRY_CAST(amount AS DOUBLE)', cols).name).toBe('Amount');
    expect(analyzeExpression('CAST(st.f AS BIGINT)', cols).name).toBe('CAST(st.f AS BIGINT)');
    expect(analyzeExpression('CAST(amount AS BIGINT) + 1', cols).name).toBe('(CAST(Amount AS BIGINT) + 1)');
    expect(analyzeExpression('CAST(1 AS STRING)', cols).name).toBe('CAST(1 AS STRING)');
  });

  it('names a simple CASE as the CaseWhen of equalities Spark parses it into', () => {
    const cols = parseDdlColumns('a INT');
    expect(analyzeExpression("CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' ELSE 'z' END", cols).name).toBe('CASE WHEN (a = 1) THEN x WHEN (a = 2) THEN y ELSE z END');
    expect(analyzeExpression("CASE WHEN a > 1 THEN 'x' END", cols).name).toBe('CASE WHEN (a > 1) THEN x END');
  });

  it('names date and time arithmetic as the expression Spark resolves it into', () => {
    const cols = parseDdlColumns('t TIMESTAMP, dt DATE');
    expect(analyzeExpression('dt + 1', cols).name).toBe('date_add(dt, 1)');
    expect(analyzeExpression('2 + dt', cols).name).toBe('date_add(dt, 2)');
    expect(analyzeExpression('dt - 7', cols).name).toBe('date_sub(dt, 7)');
    expect(analyzeExpression('t + INTERVAL 2 DAYS', cols).name).toBe("t + INTERVAL '2' DAY");
    expect(analyzeExpression('INTERVAL 3 DAYS + t', cols).name).toBe("t + INTERVAL '3' DAY");
    expect(analyzeExpression("t - INTERVAL '1' MONTH", cols).name).toBe("t - INTERVAL '1' MONTH");
    expect(analyzeExpression("dt + INTERVAL '1' YEAR", cols).name).toBe("dt + INTERVAL '1' YEAR");
    expect(analyzeExpression("dt - DATE '2026-01-01'", cols).name).toBe("(dt - DATE '2026-01-01')");
  });

  it('names an extraction that is not a column path by its SQL text', () => {
    const cols = parseDdlColumns('st STRUCT<g: INT>, arr ARRAY<STRUCT<f: INT>>, s STRING');
    expect(analyzeExpression('st.g', cols).name).toBe('g');
    expect(analyzeExpression("st['g']", cols).name).toBe('st.g');
    expect(analyzeExpression('arr[0].f', cols).name).toBe('arr[0].f');
    expect(analyzeExpression('arr.f', cols).name).toBe('f');
    expect(analyzeExpression("from_json(s, 'x INT').x", cols).name).toBe('from_json(s).x');
    // struct() still names such a field by its key, as Spark's CreateStruct does
    expect(typeName(analyzeExpression("struct(arr[0].f, st['g'], st.g + 1)", cols).type)).toBe('STRUCT<f: INT, g: INT, col3: INT>');
  });

  it('names a || b concat(a, b), as Spark parses it into Concat', () => {
    const cols = parseDdlColumns('s STRING, a ARRAY<INT>');
    expect(analyzeExpression("s || 'x' || s", cols).name).toBe('concat(concat(s, x), s)');
    expect(analyzeExpression('a || a', cols).name).toBe('concat(a, a)');
  });
});

function analyzeErr(text: string, cols: ReturnType<typeof parseDdlColumns>): ExpressionError {
  try {
    analyzeExpression(text, cols);
  } catch (e) {
    return e as ExpressionError;
  }
  throw new Error(`${text} was accepted`);
}
