/**
 * Maps whose keys are not strings (`map(1, 'a')` is MAP<INT, STRING> in Spark). The expectations
 * are worked by hand from Spark's source: CreateMap and MapFromArrays build through
 * ArrayBasedMapBuilder (a null key is NULL_MAP_KEY, a repeated key DUPLICATED_MAP_KEY under the
 * default spark.sql.mapKeyDedupPolicy=EXCEPTION, a DOUBLE key normalized so -0.0 equals 0.0),
 * MapKeys returns the key array with the key type, GetMapValue and ElementAt cast the key to the
 * map's key type, JacksonGenerator.writeMapData names each key by its internal value's toString
 * (a DATE's days since the epoch), Cast to STRING writes `{k -> v}` with each key cast to STRING,
 * and Murmur3Hash hashes a map's key (by its type) then its value, entry by entry.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { mapEntries } from '../../lib/engine/map-entries';

const compiled = (text: string, ddl = '') => compileExpression(text, ddl === '' ? [] : parseDdlColumns(ddl));
const value = (text: string, row: Record<string, unknown> = {}, ddl = '') => compiled(text, ddl).evaluate(row);
const errorOf = (text: string, row: Record<string, unknown> = {}, ddl = ''): string => {
  try {
    value(text, row, ddl);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
};

describe('map keeps the type of its keys', () => {
  it.each([
    ["map(1, 'a', 2, 'b')", 'MAP<INT, STRING>'],
    ["map(1L, 'a', 2, 'b')", 'MAP<BIGINT, STRING>'],
    ["map(1.5D, 'a')", 'MAP<DOUBLE, STRING>'],
    ["map(DATE '2026-01-01', 1)", 'MAP<DATE, INT>'],
    ["map(TRUE, 'y')", 'MAP<BOOLEAN, STRING>'],
    ["map('k', 1)", 'MAP<STRING, INT>'],
    ["map_from_arrays(array(1, 2), array('a', 'b'))", 'MAP<INT, STRING>'],
  ])('%s is %s', (text, type) => {
    expect(typeName(compiled(text).type)).toBe(type);
  });

  it('map_keys gives the keys with their type', () => {
    expect(value("map_keys(map(1, 'a', 2, 'b'))")).toEqual([1, 2]);
    expect(value("map_keys(map(1, 'a', 2, 'b'))[1] + 1")).toBe(3);
    expect(value("map_keys(map(1.5D, 'a', 2.0D, 'b'))")).toEqual([1.5, 2]);
    expect(value("map_keys(map(TRUE, 'y'))")).toEqual([true]);
    expect(value("map_keys(map(DATE '2026-01-01', 1))")).toEqual(['2026-01-01']);
    expect(value("map_keys(map_from_arrays(array(1, 2), array('a', 'b')))")).toEqual([1, 2]);
    expect(typeName(compiled("map_keys(map(1, 'a'))").type)).toBe('ARRAY<INT>');
  });

  it('looks a key up by its value, cast to the key type', () => {
    expect(value("element_at(map(1, 'a', 2, 'b'), 1)")).toBe('a');
    expect(value("map(1, 'a', 2, 'b')[2]")).toBe('b');
    expect(value("map(1, 'a', 2, 'b')['2']")).toBe('b');
    expect(value("element_at(map(1, 'a', 2, 'b'), 3)")).toBeNull();
    expect(value("try_element_at(map(1L, 'a'), 1)")).toBe('a');
    expect(value("element_at(map(0.0D, 'zero'), -0.0D)")).toBe('zero');
    expect(value("map(DATE '2026-01-01', 7)[DATE '2026-01-01']")).toBe(7);
    expect(value('element_at(map(k, v), 5)', { k: 5, v: 'x' }, 'k INT, v STRING')).toBe('x');
  });

  it('explodes a map into typed keys', () => {
    const e = compiled("explode(map(2, 'b', 3, 'c'))");
    expect(e.generator?.columns.map((c) => `${c.name} ${typeName(c.type)}`)).toEqual(['key INT', 'value STRING']);
  });

  it('refuses a null key and a repeated key', () => {
    expect(errorOf("map(CAST(NULL AS INT), 'a')")).toMatch(/^\[NULL_MAP_KEY\]/);
    expect(errorOf("map(1, 'a', 1, 'b')")).toMatch(/^\[DUPLICATED_MAP_KEY\] Duplicate map key 1 /);
    // -0.0 and 0.0 are one key once normalized
    expect(errorOf("map(1.0D, 'a', -0.0D, 'b', 0.0D, 'c')")).toMatch(/^\[DUPLICATED_MAP_KEY\] Duplicate map key 0\.0 /);
    expect(errorOf("map(1L, 'a', 1, 'b')")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(errorOf("map_from_arrays(array(1, 1), array('a', 'b'))")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(errorOf("map_from_arrays(array(1, NULL), array('a', 'b'))")).toMatch(/^\[NULL_MAP_KEY\]/);
    expect(errorOf("map(map('a', 1), 'x')")).toContain('INVALID_MAP_KEY_TYPE');
  });

  it('from_json refuses a schema whose map keys are not STRING (ExprUtils.checkJsonSchema)', () => {
    expect(errorOf("from_json('{\"1\": 2}', 'MAP<INT, INT>')")).toMatch(/^\[DATATYPE_MISMATCH\.INVALID_JSON_MAP_KEY_TYPE\].*"MAP<INT, INT>"/);
    expect(errorOf("from_json('{}', 'a ARRAY<MAP<DATE, INT>>')")).toMatch(/^\[DATATYPE_MISMATCH\.INVALID_JSON_MAP_KEY_TYPE\]/);
    expect(mapEntries(value("from_json('{\"1\": 2}', 'MAP<STRING, INT>')") as object)).toEqual([['1', 2]]);
  });

  it('map_from_arrays is null for a null array', () => {
    expect(value("map_from_arrays(a, array('x'))", { a: null }, 'a ARRAY<INT>')).toBeNull();
  });

  it('writes keys as Spark writes them', () => {
    expect(value("to_json(map(1, 'a', 2, 'b'))")).toBe('{"1":"a","2":"b"}');
    expect(value("to_json(map(1.5D, 'a', 2.0D, 'b'))")).toBe('{"1.5":"a","2.0":"b"}');
    // a DATE key's internal value is its days since 1970-01-01
    expect(value("to_json(map(DATE '1970-01-03', 1))")).toBe('{"2":1}');
    // a TIMESTAMP key's is its microseconds; a DECIMAL key's is Java's BigDecimal.toString, scientific below 1E-6
    expect(value("to_json(map(TIMESTAMP '1970-01-01 00:00:01', 1))")).toBe('{"1000000":1}');
    expect(value('to_json(map(1.50BD, 1))')).toBe('{"1.50":1}');
    expect(value('to_json(map(CAST(0.00000001 AS DECIMAL(10,8)), 2))')).toBe('{"1E-8":2}');
    expect(value("CAST(map(DATE '2026-01-01', 1) AS STRING)")).toBe('{2026-01-01 -> 1}');
    expect(value("CAST(map(2.0D, 'x') AS STRING)")).toBe('{2.0 -> x}');
  });

  it('hashes a key by its type', () => {
    expect(value("hash(map(1, 'a'))")).toBe(value("hash(1, 'a')"));
    expect(value("hash(map(1.5D, 'a'))")).toBe(value("hash(1.5D, 'a')"));
    expect(value("xxhash64(map(7L, 'a'))")).toBe(value("xxhash64(7L, 'a')"));
  });
});
