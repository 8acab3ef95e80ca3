/**
 * The collection and math functions of array-map-functions.ts and functions.ts beyond the examples
 * of docs/expressions.md: their nulls, widening and errors, as Spark's collectionOperations.scala
 * and mathExpressions.scala define them.
 */
import { compileExpression, compileSelect } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { errorMessageOf } from '../helpers/expr-errors';
import { mapEntries } from '../../lib/engine/map-entries';

const value = (text: string) => compileExpression(text, []).evaluate({});
const typeOf = (text: string) => typeName(compileExpression(text, []).sqlType);
const errorOf = (text: string) => errorMessageOf(text);

describe('array functions', () => {
  it('array_position: 1-based, 0 when absent, nulls skipped, null for a null argument', () => {
    expect(value('array_position(array(NULL, 1, 1), 1)')).toBe(2);
    expect(value('array_position(array(1), 2)')).toBe(0);
    expect(value('array_position(CAST(NULL AS ARRAY<INT>), 1)')).toBeNull();
    expect(value('array_position(array(1), CAST(NULL AS INT))')).toBeNull();
    expect(typeOf('array_position(array(1), 1)')).toBe('BIGINT');
  });

  it('array_remove removes every equal element and keeps nulls', () => {
    expect(value('array_remove(array(1, NULL, 1, 2), 1)')).toEqual([null, 2]);
    expect(value('array_remove(array(1), CAST(NULL AS INT))')).toBeNull();
  });

  it('arrays_overlap is null when nothing is common, both have elements and one holds a null', () => {
    expect(value('arrays_overlap(array(1), array(1, NULL))')).toBe(true);
    expect(value('arrays_overlap(array(1, NULL), array(2))')).toBeNull();
    expect(value('arrays_overlap(array(1), array(2, NULL))')).toBeNull();
    expect(value('arrays_overlap(CAST(array() AS ARRAY<INT>), array(CAST(NULL AS INT)))')).toBe(false);
    expect(value('arrays_overlap(array(1), array(2))')).toBe(false);
  });

  it('array_union, array_intersect and array_except give distinct values in first-seen order, a null as a value', () => {
    expect(value('array_union(array(1, NULL, 1), array(NULL, 2))')).toEqual([1, null, 2]);
    expect(value('array_intersect(array(1, NULL, 1, 3), array(NULL, 1))')).toEqual([1, null]);
    expect(value('array_except(array(1, NULL, 2, 1), array(2))')).toEqual([1, null]);
    expect(value("array_union(array(CAST('NaN' AS DOUBLE)), array(CAST('NaN' AS DOUBLE)))")).toEqual([Number.NaN]);
  });

  it('widens the element types, and refuses arrays of types with no common one', () => {
    expect(typeOf('array_union(array(1), array(1.5D))')).toBe('ARRAY<DOUBLE>');
    expect(value('array_union(array(1), array(1.5D))')).toEqual([1, 1.5]);
    expect(errorOf('array_union(array(1), array(true))')).toMatch(/^\[DATATYPE_MISMATCH\.BINARY_ARRAY_DIFF_TYPES\]/);
    expect(errorOf("array_position(array(1), 'a')")).toMatch(/^\[DATATYPE_MISMATCH\.ARRAY_FUNCTION_DIFF_TYPES\]/);
  });

  it('array_append and array_prepend add a null element too and widen; a null array is null', () => {
    expect(value('array_append(array(1, 2), CAST(NULL AS INT))')).toEqual([1, 2, null]);
    expect(value('array_prepend(array(1), 2.5D)')).toEqual([2.5, 1]);
    expect(typeOf('array_append(array(1), 2L)')).toBe('ARRAY<BIGINT>');
    expect(value('array_append(CAST(NULL AS ARRAY<INT>), 1)')).toBeNull();
    expect(value('array_size(CAST(NULL AS ARRAY<INT>))')).toBeNull();
  });

  it('array_repeat: a null count is null, a negative one empty', () => {
    expect(value("array_repeat('a', -1)")).toEqual([]);
    expect(value("array_repeat('a', CAST(NULL AS INT))")).toBeNull();
    expect(value('array_repeat(CAST(NULL AS STRING), 2)')).toEqual([null, null]);
  });

  it('sequence steps from start towards stop, and refuses a step the other way', () => {
    expect(value('sequence(5, 5, 0)')).toEqual([5]);
    expect(value('sequence(1, 6, 2)')).toEqual([1, 3, 5]);
    expect(value('sequence(9007199254740990L, 9007199254740994L, 2)')).toEqual([9007199254740990, 9007199254740992n, 9007199254740994n]);
    expect(typeOf('sequence(1L, 3)')).toBe('ARRAY<BIGINT>');
    expect(errorOf('sequence(1, 5, -1)')).toMatch(/^\[INVALID_PARAMETER_VALUE\.SEQUENCE_BOUNDARIES\]/);
    expect(errorOf('sequence(1, 5, 0)')).toMatch(/^\[INVALID_PARAMETER_VALUE\.SEQUENCE_BOUNDARIES\]/);
    expect(errorOf("sequence('a', 'b')")).toMatch(/^\[DATATYPE_MISMATCH\.SEQUENCE_WRONG_INPUT_TYPES\]/);
    expect(value('sequence(1, CAST(NULL AS INT))')).toBeNull();
  });
});

describe('map functions', () => {
  it('map_concat keeps the maps order and refuses a key given twice', () => {
    expect(mapEntries(value("map_concat(map('b', 1, '10', 2), map('a', 3))") as object)).toEqual([
      ['b', 1],
      ['10', 2],
      ['a', 3],
    ]);
    expect(errorOf("map_concat(map('a', 1), map('a', 2))")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(value("map_concat(map('a', 1), CAST(NULL AS MAP<STRING, INT>))")).toBeNull();
    expect(errorOf("map_concat(map('a', 1), map('a', 'x'))")).toMatch(/^\[DATATYPE_MISMATCH\.DATA_DIFF_TYPES\]/);
  });

  it('map_from_entries is null for a null entry, and refuses a null or repeated key', () => {
    expect(value("map_from_entries(array(struct(1, 'a'), NULL))")).toBeNull();
    expect(errorOf("map_from_entries(array(struct(CAST(NULL AS INT), 'a')))")).toMatch(/^\[NULL_MAP_KEY\]/);
    expect(errorOf("map_from_entries(array(struct(1, 'a'), struct(1, 'b')))")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(typeOf("map_from_entries(array(struct(1, 'a')))")).toBe('MAP<INT, STRING>');
  });

  it('map_contains_key and map_entries read integer-like keys as written', () => {
    expect(value("map_contains_key(map('10', 1), '10')")).toBe(true);
    expect(value("map_contains_key(map('10', 1), '1')")).toBe(false);
    expect(value("map_entries(map('b', 1, '10', 2))")).toEqual([
      { key: 'b', value: 1 },
      { key: '10', value: 2 },
    ]);
  });
});

describe('math functions', () => {
  it('isnan is false for null; nanvl replaces NaN only', () => {
    expect(value('isnan(CAST(NULL AS DOUBLE))')).toBe(false);
    expect(value('isnan(1.5)')).toBe(false);
    expect(value('nanvl(1.5, 2)')).toBe(1.5);
    expect(value('nanvl(CAST(NULL AS DOUBLE), 2)')).toBeNull();
  });

  it('are named as Spark names them', () => {
    expect(compileSelect(['sin(0)', 'pi()', 'atan2(1, 2)', 'isnan(1.0)'], []).columns.map((c) => c.name)).toEqual([
      'SIN(0)',
      'PI()',
      'ATAN2(1, 2)',
      'isnan(1.0)',
    ]);
  });

  it('atan2 takes -0.0 as 0.0, as Spark adds 0.0 to both', () => {
    expect(Object.is(value('atan2(-0.0D, -1)'), Math.PI)).toBe(true);
  });

  it("acosh, asinh and atanh compute Spark's formulas, where they round otherwise than the exact function", () => {
    // log(x + sqrt(x * x - 1)): x * x overflows, where acosh(1e200) is about 461.2
    expect(value('acosh(1e200D)')).toBe(Number.POSITIVE_INFINITY);
    // log(x + sqrt(x * x + 1)) cancels for a large negative x: -Infinity, not about -23.7
    expect(value('asinh(-1e10D)')).toBe(Number.NEGATIVE_INFINITY);
    expect(value("asinh(CAST('-Infinity' AS DOUBLE))")).toBe(Number.NEGATIVE_INFINITY);
    expect(value('atanh(1)')).toBe(Number.POSITIVE_INFINITY);
    expect(value('acosh(0)')).toBeNaN();
    expect(compileSelect(['acosh(1)', 'sec(0)', 'csc(1)'], []).columns.map((c) => c.name)).toEqual(['ACOSH(1)', 'SEC(0)', 'CSC(1)']);
  });
});
