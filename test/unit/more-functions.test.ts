/**
 * The functions of more-functions.ts beyond the examples of docs/expressions.md: types, nulls,
 * edges and errors as Spark 4 defines them (StringToMap, ArraysZip, ArrayInsert, StringLocate,
 * Overlay, Decode, Luhncheck and Mask, with their test suites and function documentation). The
 * expected values were worked out by hand from those definitions.
 */
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { mapEntries } from '../../lib/engine/map-entries';
import type { ColumnInfo } from '../../lib/engine/plan/columns';
import { errorMessageOf } from '../helpers/expr-errors';

const value = (text: string, columns: readonly ColumnInfo[] = [], row: Record<string, unknown> = {}) => compileExpression(text, columns).evaluate(row);
const typeOf = (text: string, columns: readonly ColumnInfo[] = []) => typeName(compileExpression(text, columns).sqlType);
const nameOf = (text: string, columns: readonly ColumnInfo[] = []) => compileExpression(text, columns).type.name;
const errorOf = (text: string, columns: readonly ColumnInfo[] = []) => errorMessageOf(text, columns);
const entries = (text: string) => mapEntries(value(text) as object);

describe('str_to_map', () => {
  it('splits into pairs by "," and keys from values by ":", a MAP<STRING, STRING> in the text\'s order', () => {
    expect(entries("str_to_map('b:1,a:2,10:3')")).toEqual([
      ['b', '1'],
      ['a', '2'],
      ['10', '3'],
    ]);
    expect(typeOf("str_to_map('a:1')")).toBe('MAP<STRING, STRING>');
    expect(entries("str_to_map('a=1&b=2', '&', '=')")).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });

  it('a pair without the key-value delimiter has a null value; only the first delimiter splits a pair', () => {
    expect(entries("str_to_map('a')")).toEqual([['a', null]]);
    expect(entries("str_to_map('a:1:2')")).toEqual([['a', '1:2']]);
    // Java's split with limit -1 keeps a trailing empty pair, and "" splits into [""]
    expect(entries("str_to_map('a:1,')")).toEqual([
      ['a', '1'],
      ['', null],
    ]);
    expect(entries("str_to_map('')")).toEqual([['', null]]);
  });

  it('the delimiters are Java regular expressions', () => {
    expect(entries("str_to_map('a:1;b:2|c:3', '[;|]')")).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
    ]);
    expect(entries("str_to_map('a 1,b   2', ',', '\\\\s+')")).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(entries("str_to_map('a:1.b:2', '\\\\.')")).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    // '.' is any character: every part is "", so the second "" key is a duplicate
    expect(errorOf("str_to_map('a:1.b:2', '.')")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(errorOf("str_to_map('a:1', '[')")).toMatch(/^\[INVALID_PARAMETER_VALUE\.PATTERN\]/);
  });

  it('an empty delimiter splits into characters (UTF8String.split)', () => {
    expect(entries("str_to_map('ab', '')")).toEqual([
      ['a', null],
      ['b', null],
    ]);
    expect(entries("str_to_map('a1,b2', ',', '')")).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });

  it('a duplicate key is DUPLICATED_MAP_KEY (mapKeyDedupPolicy EXCEPTION); keys are case-sensitive', () => {
    expect(errorOf("str_to_map('a:1,a:2')")).toMatch(/^\[DUPLICATED_MAP_KEY\] Duplicate map key a /);
    expect(entries("str_to_map('a:1,A:2')")).toEqual([
      ['a', '1'],
      ['A', '2'],
    ]);
  });

  it('is null when an argument is null; casts atomic arguments to STRING; is named with its defaults', () => {
    expect(value('str_to_map(NULL)')).toBeNull();
    expect(value("str_to_map('a:1', NULL)")).toBeNull();
    expect(value("str_to_map('a:1', ',', CAST(NULL AS STRING))")).toBeNull();
    expect(entries('str_to_map(12)')).toEqual([['12', null]]);
    expect(nameOf("str_to_map('a')")).toBe('str_to_map(a, ,, :)');
    expect(nameOf("str_to_map('a:1,b:2,c:3', ',', ':')")).toBe('str_to_map(a:1,b:2,c:3, ,, :)');
  });
});

describe('arrays_zip', () => {
  const cols: ColumnInfo[] = [
    { name: 'a', type: 'ARRAY', element: { type: 'INT' } },
    { name: 'b', type: 'ARRAY', element: { type: 'STRING' } },
    { name: 's', type: 'STRUCT', fields: [{ name: 'xs', type: 'ARRAY', element: { type: 'LONG' } }] },
  ];

  it('pads the shorter arrays with nulls and keeps null elements', () => {
    expect(value("arrays_zip(array(1, 2), array('a'))")).toEqual([
      { '0': 1, '1': 'a' },
      { '0': 2, '1': null },
    ]);
    expect(value('arrays_zip(array(1, NULL), array(3, 4))')).toEqual([
      { '0': 1, '1': 3 },
      { '0': null, '1': 4 },
    ]);
    expect(value('arrays_zip(array(1))')).toEqual([{ '0': 1 }]);
  });

  it('is null when an array is null; no argument or empty arrays give an empty array', () => {
    expect(value('arrays_zip(array(1), CAST(NULL AS ARRAY<INT>))')).toBeNull();
    expect(value('arrays_zip()')).toEqual([]);
    expect(value('arrays_zip(CAST(array() AS ARRAY<INT>), CAST(array() AS ARRAY<INT>))')).toEqual([]);
  });

  it("names a field after a column or nested field, else after the argument's ordinal", () => {
    expect(typeOf('arrays_zip(a, b)', cols)).toBe('ARRAY<STRUCT<a: INT, b: STRING>>');
    expect(value('arrays_zip(a, b)', cols, { a: [1, 2], b: ['x'] })).toEqual([
      { a: 1, b: 'x' },
      { a: 2, b: null },
    ]);
    expect(value('arrays_zip(s.xs, array(true), a)', cols, { s: { xs: [7] }, a: [1] })).toEqual([{ xs: 7, '1': true, a: 1 }]);
    expect(value('transform(array(a), x -> arrays_zip(x, b))', cols, { a: [1], b: ['y'] })).toEqual([[{ x: 1, b: 'y' }]]);
  });

  it('refuses what is not an ARRAY (a NULL literal too), and two fields of one name', () => {
    expect(errorOf('arrays_zip(array(1), 1)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('arrays_zip(NULL, array(1))')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('arrays_zip(a, a)', cols)).toMatch(/^\[UNSUPPORTED_FEATURE\]/);
  });
});

describe('array_insert', () => {
  it('inserts at a 1-based position, padding with nulls past the end', () => {
    expect(value('array_insert(array(1, 2, 3), 2, 10)')).toEqual([1, 10, 2, 3]);
    expect(value('array_insert(array(1, 2, 3), 1, 10)')).toEqual([10, 1, 2, 3]);
    expect(value('array_insert(array(1, 2, 3), 4, 10)')).toEqual([1, 2, 3, 10]);
    expect(value('array_insert(array(1, 2), 5, 9)')).toEqual([1, 2, null, null, 9]);
    expect(value('array_insert(CAST(array() AS ARRAY<INT>), 1, 10)')).toEqual([10]);
  });

  it('counts a negative position from the end, -1 after the last element (the legacy flag is off)', () => {
    expect(value("array_insert(array('a', 'b'), -1, 'x')")).toEqual(['a', 'b', 'x']);
    expect(value("array_insert(array('c', 'b', 'a'), -2, 'd')")).toEqual(['c', 'b', 'd', 'a']);
    expect(value('array_insert(array(1, 2, 3), -3, 9)')).toEqual([1, 9, 2, 3]);
    expect(value('array_insert(array(1, 2, 3), -4, 9)')).toEqual([9, 1, 2, 3]);
    // before the first element: the item, then nulls, then the array
    expect(value('array_insert(array(1, 2, 3), -5, 9)')).toEqual([9, null, 1, 2, 3]);
    expect(value('array_insert(array(2, 3, NULL, 4), -5, 1)')).toEqual([1, 2, 3, null, 4]);
  });

  it('position 0 is INVALID_INDEX_OF_ZERO', () => {
    expect(errorOf('array_insert(array(1, 2), 0, 9)')).toMatch(/^\[INVALID_INDEX_OF_ZERO\]/);
  });

  it('a null array or position is null; a null item is inserted', () => {
    expect(value('array_insert(CAST(NULL AS ARRAY<INT>), 1, 1)')).toBeNull();
    expect(value('array_insert(array(1, 2, 3, NULL), CAST(NULL AS INT), 4)')).toBeNull();
    expect(value('array_insert(array(1, 2, 3, NULL), 4, CAST(NULL AS INT))')).toEqual([1, 2, 3, null, null]);
    expect(value('array_insert(array(1, 2), 1, NULL)')).toEqual([null, 1, 2]);
    expect(typeOf('array_insert(array(1, 2), 1, NULL)')).toBe('ARRAY<INT>');
  });

  it('widens the array and the item to their tightest common type, with no STRING promotion', () => {
    expect(value('array_insert(array(1, 2), 2, 3D)')).toEqual([1, 3, 2]);
    expect(typeOf('array_insert(array(1, 2), 2, 3D)')).toBe('ARRAY<DOUBLE>');
    expect(typeOf('array_insert(array(1), 2, CAST(2 AS TINYINT))')).toBe('ARRAY<INT>');
    expect(typeOf('array_insert(array(CAST(1 AS TINYINT)), 2, 5L)')).toBe('ARRAY<BIGINT>');
    expect(value('array_insert(array(CAST(1 AS DECIMAL(12,2))), 1, 2)')).toEqual(['2.00', '1.00']);
    expect(errorOf("array_insert(array(1, 2), 1, 'z')")).toMatch(/^\[DATATYPE_MISMATCH\.ARRAY_FUNCTION_DIFF_TYPES\]/);
    // DECIMAL(2,1) cannot hold every INT, so there is no tightest common type
    expect(errorOf('array_insert(array(1), 1, 1.5)')).toMatch(/^\[DATATYPE_MISMATCH\.ARRAY_FUNCTION_DIFF_TYPES\]/);
  });

  it('the position is an INT (TINYINT, SMALLINT too), the first argument an ARRAY', () => {
    expect(value('array_insert(array(1), CAST(1 AS SMALLINT), 2)')).toEqual([2, 1]);
    expect(errorOf('array_insert(array(1), 1L, 2)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf("array_insert(array(1), '1', 2)")).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('array_insert(array(1), NULL, 2)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
    expect(errorOf('array_insert(NULL, 1, 2)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe('position', () => {
  it("is locate: 1-based, from a start position, 0 when absent or the start is null; named with Spark's default start", () => {
    expect(value("position('bar', 'foobarbar')")).toBe(4);
    expect(value("position('bar', 'foobarbar', 5)")).toBe(7);
    expect(value("position('x', 'foobarbar')")).toBe(0);
    expect(value("position('', 'abc')")).toBe(1);
    expect(value("position('bar', 'foobarbar', CAST(NULL AS INT))")).toBe(0);
    expect(value("position('bar', NULL)")).toBeNull();
    expect(typeOf("position('bar', 'foobarbar')")).toBe('INT');
    expect(nameOf("position('bar', 'foobarbar')")).toBe('position(bar, foobarbar, 1)');
    expect(nameOf("position('bar', 'foobarbar', 5)")).toBe('position(bar, foobarbar, 5)');
  });
});

describe('overlay', () => {
  it('replaces the length of the replacement, or len characters, from pos', () => {
    expect(value("overlay('Spark SQL', 'CORE', 7)")).toBe('Spark CORE');
    expect(value("overlay('Spark SQL', 'ANSI ', 7, 0)")).toBe('Spark ANSI SQL');
    expect(value("overlay('Spark SQL', '##', 10)")).toBe('Spark SQL##');
    expect(value("overlay('abc', 'X', 2, 10)")).toBe('aX');
    expect(value("overlay('Spark的SQL', '_', 6)")).toBe('Spark_SQL');
  });

  it("follows substring's rules for a position of 0 or below", () => {
    // before pos: substring(input, 1, pos - 1); after: substring(input, pos + len)
    expect(value("overlay('abc', 'x', 0)")).toBe('xabc');
    expect(value("overlay('abcdef', 'X', -2)")).toBe('Xf');
  });

  it('is null when an argument is null; casts to STRING and INT; is named with its default len', () => {
    expect(value("overlay(NULL, 'x', 1)")).toBeNull();
    expect(value("overlay('abc', 'x', 1, CAST(NULL AS INT))")).toBeNull();
    expect(value('overlay(12345, 0, 2)')).toBe('10345');
    expect(nameOf("overlay('Spark SQL', '_', 6)")).toBe('overlay(Spark SQL, _, 6, -1)');
    expect(errorOf("overlay('abc', 'x', array(1))")).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\]/);
  });
});

describe('decode', () => {
  it('is the result of the first search equal to expr (null-safe), else the default, else NULL', () => {
    expect(value("decode(1, 1, 'Southlake')")).toBe('Southlake');
    expect(value("decode(2, 1, 'Southlake')")).toBeNull();
    expect(value("decode(1, 1, 'a', 1, 'b')")).toBe('a');
    expect(value("decode(NULL, 1, 'one', NULL, 'none')")).toBe('none');
    expect(value("decode(CAST(NULL AS INT), 1, 'a')")).toBeNull();
    expect(value("decode(NULL, 6, 'Spark', NULL, 'SQL', 4, 'rocks', NULL, '.')")).toBe('SQL');
  });

  it('without a default, the NULL of type STRING takes part in the result type (BIGINT beside INT, under ANSI)', () => {
    expect(value('decode(2, 1, 10, 2, 20)')).toBe(20);
    expect(typeOf('decode(2, 1, 10, 2, 20)')).toBe('BIGINT');
    expect(typeOf('decode(2, 1, 10, 2, 20, 0)')).toBe('INT');
    expect(errorOf('decode(1, 1, array(1))')).toMatch(/^\[DATATYPE_MISMATCH\.DATA_DIFF_TYPES\]/);
  });

  it('compares as = does (a STRING beside a number is read as one) and evaluates only the chosen result', () => {
    expect(value("decode('1', 1, 'one')")).toBe('one');
    expect(value('decode(1, 1, 1, 2, 1 / 0)')).toBe(1);
  });

  it('refuses the charset form (sluice has no BINARY) and fewer than two arguments', () => {
    expect(errorOf("decode('abc', 'utf-8')")).toMatch(/^\[UNSUPPORTED_FEATURE\]/);
    expect(errorOf('decode(1)')).toMatch(/^\[WRONG_NUM_ARGS/);
  });
});

describe('luhn_check', () => {
  it('checks the Luhn sum of a string of digits', () => {
    expect(value("luhn_check('8112189876')")).toBe(true);
    expect(value("luhn_check('0')")).toBe(true);
    expect(value("luhn_check('1')")).toBe(false);
    expect(value("luhn_check('4111111111111111')")).toBe(true);
    expect(value("luhn_check('4111111111111112')")).toBe(false);
  });

  it('is false for "" or any character that is not a digit; digits of any script count', () => {
    expect(value("luhn_check('')")).toBe(false);
    expect(value("luhn_check('7992739871a')")).toBe(false);
    expect(value("luhn_check(' 79927398713')")).toBe(false);
    expect(value("luhn_check('７９９２７３９８７１３')")).toBe(true);
    expect(value("luhn_check('٧٩٩٢٧٣٩٨٧١٣')")).toBe(true);
    expect(value("luhn_check('٧٩٩٢٧٣٩٨٧١٤')")).toBe(false);
  });

  it('is null for null, BOOLEAN, and casts a number to its text', () => {
    expect(value('luhn_check(NULL)')).toBeNull();
    expect(typeOf("luhn_check('0')")).toBe('BOOLEAN');
    expect(value('luhn_check(79927398713)')).toBe(true);
  });
});

describe('mask', () => {
  it('masks upper-case, lower-case letters and digits by default, keeps other characters', () => {
    expect(value("mask('AbCD123-@$#')")).toBe('XxXXnnn-@$#');
    expect(value("mask('abcd-EFGH-8765-4321', 'Q')")).toBe('xxxx-QQQQ-nnnn-nnnn');
    expect(value("mask('AbCD123-@$#', 'Q', 'q', 'd')")).toBe('QqQQddd-@$#');
    expect(value("mask('AbCD123-@$#', NULL, NULL, 'd', 'o')")).toBe('AbCDdddoooo');
    expect(value("mask('AbCD123-@$#', NULL, NULL, NULL, NULL)")).toBe('AbCD123-@$#');
  });

  it('classifies each UTF-16 char by its Unicode category (Lu, Ll, Nd; anything else is other)', () => {
    expect(value("mask('Ünïcödé ٣')")).toBe('Xxxxxxx n');
    // a titlecase letter is "other"; so is each half of a surrogate pair
    expect(value("mask('ǅ')")).toBe('ǅ');
    expect(value("mask('ǅ😀', NULL, NULL, NULL, '*')")).toBe('***');
  });

  it('is null for a null input; casts the input to STRING; is named with its defaults', () => {
    expect(value('mask(NULL)')).toBeNull();
    expect(value("mask(NULL, NULL, NULL, NULL, 'o')")).toBeNull();
    expect(value('mask(1234)')).toBe('nnnn');
    expect(nameOf("mask('abcd-EFGH-8765-4321')")).toBe('mask(abcd-EFGH-8765-4321, X, x, n, NULL)');
    expect(nameOf("mask('AbCD123-@$#', 'Q', 'q')")).toBe('mask(AbCD123-@$#, Q, q, n, NULL)');
  });

  it('a replacement is a foldable STRING of one character, or NULL', () => {
    expect(value("mask('aBc', upper('q'))")).toBe('xQx');
    expect(errorOf("mask('abc', 'XY')")).toMatch(/^\[DATATYPE_MISMATCH\.INPUT_SIZE_NOT_ONE\]/);
    expect(errorOf("mask('abc', 'X', '')")).toMatch(/^\[DATATYPE_MISMATCH\.INPUT_SIZE_NOT_ONE\]/);
    expect(errorOf('mask(s, s)', [{ name: 's', type: 'STRING' }])).toMatch(/^\[DATATYPE_MISMATCH\.NON_FOLDABLE_INPUT\]/);
  });
});
