/**
 * Spark's null semantics (three-valued AND/OR, <=>, IN with nulls, coalesce, concat vs concat_ws)
 * and the ANSI row errors each expression raises, with the class the dead letter will name:
 * values worked out from Spark's documentation and its ANSI test outputs (sql-tests/results/ansi).
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression, compileFilter, compileSelect, isSparkRowError, type SparkRowError } from '../../lib/engine/expr';

const COLS = parseDdlColumns('p BOOLEAN, q BOOLEAN, i INT, j INT, s STRING, arr ARRAY<INT>');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);

function rowError(text: string, row: Record<string, unknown> = {}): SparkRowError {
  try {
    value(text, row);
  } catch (e) {
    if (isSparkRowError(e)) return e;
    throw e;
  }
  throw new Error(`${text} did not fail`);
}

describe('three-valued logic', () => {
  const T = true;
  const F = false;
  const N = null;
  it.each([
    [T, T, T, T],
    [T, F, F, T],
    [T, N, N, T],
    [F, F, F, F],
    [F, N, F, N],
    [N, N, N, N],
    [N, T, N, T],
    [N, F, F, N],
  ])('p=%s q=%s: AND is %s, OR is %s', (p, q, and, or) => {
    expect(value('p AND q', { p, q })).toBe(and);
    expect(value('p OR q', { p, q })).toBe(or);
  });

  it('NOT of null is null; IS TRUE / IS NOT NULL are never null', () => {
    expect(value('NOT p', { p: null })).toBeNull();
    expect(value('p IS TRUE', { p: null })).toBe(false);
    expect(value('p IS NOT FALSE', { p: null })).toBe(true);
    expect(value('p IS NULL', { p: null })).toBe(true);
  });

  it('evaluates AND/OR lazily: a false left side skips an erroring right side, as Spark short-circuits', () => {
    expect(value('i > 0 AND 10 / i > 1', { i: 0 })).toBe(false);
  });
});

describe('comparisons with null', () => {
  it.each([
    ['i = j', 1, null, null],
    ['i <=> j', 1, null, false],
    ['i <=> j', null, null, true],
    ['i <=> j', 2, 2, true],
    ['i < j', null, 1, null],
    ['i IN (1, 2)', null, 0, null],
    ['i IN (1, NULL)', 1, 0, true],
    ['i IN (1, NULL)', 2, 0, null],
    ['i NOT IN (1, NULL)', 2, 0, null],
    ['i NOT IN (1, 3)', 2, 0, true],
    ['i IN (j, 5)', 5, null, true],
    ['i BETWEEN 1 AND j', 1, null, null],
    ['i NOT BETWEEN 2 AND 4', 5, 0, true],
  ])('%s with i=%s j=%s is %s', (text, i, j, expected) => {
    expect(value(text, { i, j })).toBe(expected);
  });

  it('drops a row in a filter when the condition is null or false', () => {
    const keep = compileFilter('i > 1', COLS);
    expect([keep({ i: 2 }), keep({ i: 1 }), keep({ i: null })]).toEqual([true, false, false]);
  });
});

describe('functions that handle null their own way', () => {
  it.each([
    ['coalesce(i, j, 7)', { i: null, j: null }, 7],
    ['coalesce(i, j)', { i: null, j: null }, null],
    ['nvl(i, 0)', { i: null }, 0],
    ['ifnull(i, 0)', { i: 3 }, 3],
    ['nullif(i, 2)', { i: 2 }, null],
    ['nullif(i, 2)', { i: 3 }, 3],
    ['if(p, 1, 2)', { p: null }, 2],
    ["concat('a', s)", { s: null }, null],
    ["concat_ws('-', 'a', s, 'b')", { s: null }, 'a-b'],
    ["s || 'x'", { s: null }, null],
    ['greatest(i, j, 3)', { i: null, j: 5 }, 5],
    ['least(i, j)', { i: null, j: null }, null],
    ['i + 1', { i: null }, null],
    ['CASE WHEN p THEN 1 ELSE 2 END', { p: null }, 2],
    ['CASE i WHEN 1 THEN 10 WHEN 2 THEN 20 END', { i: 3 }, null],
    ['CASE i WHEN 1 THEN 10 WHEN 2 THEN 20 END', { i: 2 }, 20],
    ['size(arr)', { arr: null }, null],
    ['array_contains(arr, 3)', { arr: [1, null] }, null],
    ['array_contains(arr, 1)', { arr: [1, null] }, true],
  ])('%s with %j is %s', (text, row, expected) => {
    expect(value(text, row)).toEqual(expected);
  });
});

describe('ANSI row errors (FORMAT-3: the row is a dead letter naming the class)', () => {
  it.each([
    ['i / j', { i: 10, j: 0 }, 'DIVIDE_BY_ZERO'],
    ['i div j', { i: 10, j: 0 }, 'DIVIDE_BY_ZERO'],
    ['i % j', { i: 10, j: 0 }, 'DIVIDE_BY_ZERO'],
    ['1.5 / 0', {}, 'DIVIDE_BY_ZERO'],
    ['1.5D / 0', {}, 'DIVIDE_BY_ZERO'],
    ['CAST(s AS INT)', { s: 'abc' }, 'CAST_INVALID_INPUT'],
    ['CAST(s AS INT)', { s: '1.5' }, 'CAST_INVALID_INPUT'],
    ['CAST(s AS DATE)', { s: '2026-02-30' }, 'CAST_INVALID_INPUT'],
    ['CAST(s AS BOOLEAN)', { s: 'maybe' }, 'CAST_INVALID_INPUT'],
    ['CAST(s AS TIMESTAMP)', { s: 'noon' }, 'CAST_INVALID_INPUT'],
    ['CAST(s AS DECIMAL(3,1))', { s: '123.4' }, 'NUMERIC_VALUE_OUT_OF_RANGE'],
    ['CAST(2147483648L AS INT)', {}, 'CAST_OVERFLOW'],
    ['CAST(300 AS TINYINT)', {}, 'CAST_OVERFLOW'],
    ["CAST('1e10' AS DOUBLE) :: INT", {}, 'CAST_OVERFLOW'],
    ['i + 1', { i: 2147483647 }, 'ARITHMETIC_OVERFLOW'],
    ['i * j', { i: 65536, j: 65536 }, 'ARITHMETIC_OVERFLOW'],
    ['-i', { i: -2147483648 }, 'ARITHMETIC_OVERFLOW'],
    ['abs(i)', { i: -2147483648 }, 'ARITHMETIC_OVERFLOW'],
    ['9223372036854775807L + 1', {}, 'ARITHMETIC_OVERFLOW'],
    ['arr[3]', { arr: [1, 2, 3] }, 'INVALID_ARRAY_INDEX'],
    ['arr[-1]', { arr: [1, 2, 3] }, 'INVALID_ARRAY_INDEX'],
    ['element_at(arr, 4)', { arr: [1, 2, 3] }, 'INVALID_ARRAY_INDEX_IN_ELEMENT_AT'],
    ['element_at(arr, 0)', { arr: [1, 2, 3] }, 'INVALID_INDEX_OF_ZERO'],
    ["map('a', 1, 'a', 2)", {}, 'DUPLICATED_MAP_KEY'],
    ["unix_timestamp('10/01/2026')", {}, 'CANNOT_PARSE_TIMESTAMP'],
    ['make_date(2026, 2, 30)', {}, 'DATETIME_FIELD_OUT_OF_BOUNDS'],
  ])('%s with %j raises %s', (text, row, errorClass) => {
    const e = rowError(text, row);
    expect(e.errorClass).toBe(errorClass);
    expect(e.message.startsWith(`[${errorClass}] `)).toBe(true);
  });

  it('says what failed and how to tolerate it', () => {
    expect(rowError('i / j', { i: 1, j: 0 }).message).toMatch(/^\[DIVIDE_BY_ZERO\] Division by zero in \(i \/ j\).*Use `try_divide`/);
    expect(rowError('CAST(s AS INT)', { s: 'abc' }).message).toBe(
      '[CAST_INVALID_INPUT] The value \'abc\' of the type "STRING" cannot be cast to "INT" because it is malformed. Correct the value as per the syntax, or change its target type. Use `try_cast` to tolerate malformed input and return NULL instead.',
    );
    expect(rowError('arr[5]', { arr: [1, 2, 3] }).message).toMatch(/The index 5 is out of bounds. The array has 3 elements/);
  });

  it.each([
    ['try_divide(i, j)', { i: 1, j: 0 }],
    ['try_add(i, 1)', { i: 2147483647 }],
    ['try_subtract(i, 1)', { i: -2147483648 }],
    ['try_multiply(i, j)', { i: 65536, j: 65536 }],
    ['try_cast(s AS INT)', { s: 'abc' }],
    ['try_element_at(arr, 5)', { arr: [1] }],
  ])('%s returns null instead', (text, row) => {
    expect(value(text, row)).toBeNull();
  });

  it('keeps try_ values otherwise', () => {
    expect(value('try_divide(3, 2)')).toBe(1.5);
    expect(value('try_add(i, 1)', { i: 1 })).toBe(2);
  });
});

describe('the public case expr-ansi-errors-are-dead-letters, evaluated row by row', () => {
  // schema id INT, total INT, qty INT, code STRING; withColumn unit_price = total / qty, then
  // selectExpr id, unit_price, CAST(code AS INT) AS code_num. INT / INT divides as DOUBLE.
  const cols = parseDdlColumns('id INT, total INT, qty INT, code STRING');
  const unitPrice = compileExpression('total / qty', cols);
  const select = compileSelect(['id', 'unit_price', 'CAST(code AS INT) AS code_num'], [...cols, { ...unitPrice.type, name: 'unit_price' }]);

  function run(row: Record<string, unknown>): Record<string, unknown> | string {
    try {
      return select.project({ ...row, unit_price: unitPrice.evaluate(row) });
    } catch (e) {
      return (e as SparkRowError).errorClass;
    }
  }

  it('emits the good rows and names the class of the bad ones', () => {
    expect(run({ id: 1, total: 10, qty: 4, code: '12' })).toEqual({ id: 1, unit_price: 2.5, code_num: 12 });
    expect(run({ id: 2, total: 10, qty: 0, code: '7' })).toBe('DIVIDE_BY_ZERO');
    expect(run({ id: 3, total: 9, qty: 3, code: 'abc' })).toBe('CAST_INVALID_INPUT');
    expect(run({ id: 4, total: 7, qty: 2, code: ' 5 ' })).toEqual({ id: 4, unit_price: 3.5, code_num: 5 });
    expect(run({ id: 5, total: 8, qty: 8, code: '-3' })).toEqual({ id: 5, unit_price: 1, code_num: -3 });
    expect(run({ id: 6, total: 1, qty: 3, code: '0' })).toEqual({ id: 6, unit_price: 1 / 3, code_num: 0 });
  });
});
