/**
 * Collection, JSON and hash functions against Apache Spark's own behaviour: the expectations are
 * worked by hand from Spark's source (GetJsonObject's path walk, JacksonParser's partial results,
 * JsonTuple), its test suites (JsonExpressionsSuite) and its documentation, never from sluice's output.
 */
import { ddlOf, parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const value = (text: string, row: Record<string, unknown> = {}, ddl = '') => compileExpression(text, ddl === '' ? [] : parseDdlColumns(ddl)).evaluate(row);

// the document of Spark's JsonExpressionsSuite (Hive's get_json_object test data)
const STORE = [
  '{"store":{"fruit":[{"weight":8,"type":"apple"},{"weight":9,"type":"pear"}],',
  '"basket":[[1,2,{"b":"y","a":"x"}],[3,4],[5,6]],"book":[{"author":"Nigel Rees",',
  '"title":"Sayings of the Century","category":"reference","price":8.95},',
  '{"author":"Herman Melville","title":"Moby Dick","category":"fiction","price":8.99,',
  '"isbn":"0-553-21311-3"},{"author":"J. R. R. Tolkien","title":"The Lord of the Rings",',
  '"category":"fiction","reader":[{"age":25,"name":"bob"},{"age":26,"name":"jack"}],',
  '"price":22.99,"isbn":"0-395-19395-8"}],"bicycle":{"price":19.95,"color":"red"}},',
  '"email":"amy@only_for_json_udf_test.net","owner":"amy","zip code":"94025",',
  '"fb:testid":"1234"}',
].join('');

describe('get_json_object walks the path as Spark does', () => {
  const gjo = (path: string, json = STORE) => value('get_json_object(j, p)', { j: json, p: path }, 'j STRING, p STRING');

  it.each([
    ['$.store.bicycle', '{"price":19.95,"color":"red"}'],
    ["$['store'].bicycle", '{"price":19.95,"color":"red"}'],
    ["$['store']['bicycle']", '{"price":19.95,"color":"red"}'],
    ['$.store.book[0].category', 'reference'],
    ['$.store.book[*].category', '["reference","fiction","fiction"]'],
    ['$.store.book[*].isbn', '["0-553-21311-3","0-395-19395-8"]'],
    ['$.store.book[*].reader', '[{"age":25,"name":"bob"},{"age":26,"name":"jack"}]'],
    ['$.store.basket[0][1]', '2'],
    ['$.store.basket[*]', '[[1,2,{"b":"y","a":"x"}],[3,4],[5,6]]'],
    ['$.store.basket[*][0]', '[1,3,5]'],
    ['$.store.basket[0][*]', '[1,2,{"b":"y","a":"x"}]'],
    ['$.store.basket[*][*]', '[1,2,{"b":"y","a":"x"},3,4,5,6]'],
    ['$.store.basket[0][2].b', 'y'],
    ['$.store.basket[0][*].b', '["y"]'],
    ['$.zip code', '94025'],
    ['$.fb:testid', '1234'],
    ['$.non_exist_key', null],
    ['$..no_recursive', null],
    ['$.store.book[10]', null],
    ['$.store.book[0].non_exist_key', null],
    ['$.store.basket[*].non_exist_key', null],
  ])('%s of the store document (JsonExpressionsSuite)', (path, expected) => {
    expect(gjo(path)).toBe(expected);
  });

  it('unwraps a wildcard with exactly one match, quoting a string there', () => {
    expect(gjo('$.a[*]', '{"a":["x"]}')).toBe('"x"');
    expect(gjo('$.a[*].b', '{"a":[{"b":1},{"c":2}]}')).toBe('1');
    expect(gjo('$.a[*]', '{"a":[]}')).toBeNull();
  });

  it('writes a number with a fraction or an exponent through a double, as Jackson copies it', () => {
    expect(gjo('$.a', '{"a":1.50}')).toBe('1.5');
    expect(gjo('$.a', '{"a":1e2}')).toBe('100.0');
    expect(gjo('$.a', '{"a":1.0E-7}')).toBe('1.0E-7');
    expect(gjo('$.a', '{"a":{"b":2.10,"c":[3.0]}}')).toBe('{"b":2.1,"c":[3.0]}');
    expect(gjo('$.a', '{"a":12345678901234567890}')).toBe('12345678901234567890');
  });

  it('never matches a child wildcard, and a field whose value is null is no match', () => {
    expect(gjo('$.*', '{"a":1}')).toBeNull();
    expect(gjo('$.a.*', '{"a":{"b":1}}')).toBeNull();
    expect(gjo("$['*']", '{"a":1}')).toBeNull();
    expect(gjo('$.a', '{"a":null}')).toBeNull();
  });
});

describe('json_tuple copies values as Jackson does', () => {
  it('gives strings unquoted, numbers with a fraction through a double, null for null', () => {
    // JsonExpressionsSuite "json_tuple - hive key 1"
    expect(
      compileExpression("json_tuple(j, 'f1', 'f2', 'f3', 'f4', 'f5')", parseDdlColumns('j STRING')).evaluate({
        j: '{"f1": "value1", "f2": "value2", "f3": 3, "f5": 5.23}',
      }),
    ).toEqual(['value1', 'value2', '3', null, '5.23']);
    expect(compileExpression("json_tuple(j, 'a', 'b')", parseDdlColumns('j STRING')).evaluate({ j: '{"a": 1.50, "b": [1.0, 2e1]}' })).toEqual([
      '1.5',
      '[1.0,20.0]',
    ]);
  });
});

describe('from_json types the text as JacksonParser does with partial results', () => {
  const fj = (json: string, schema: string) => value(`from_json(j, '${schema}')`, { j: json }, 'j STRING');

  it('keeps the fields of a struct that fit and nulls the others, at any depth', () => {
    expect(fj('{"a":"x","b":2}', 'a INT, b INT')).toEqual({ a: null, b: 2 });
    expect(fj('{"s":{"x":"bad","y":1},"n":3}', 's STRUCT<x: INT, y: INT>, n INT')).toEqual({ s: { x: null, y: 1 }, n: 3 });
    expect(fj('{"a":[{"x":1},{"x":"bad"}]}', 'a ARRAY<STRUCT<x: INT>>')).toEqual({ a: [{ x: 1 }, { x: null }] });
  });

  it('makes an array or a map null when one element or value does not fit', () => {
    expect(fj('{"a":[1,"x",3],"b":2}', 'a ARRAY<INT>, b INT')).toEqual({ a: null, b: 2 });
    expect(fj('{"m":{"k":1,"j":"x"},"b":2}', 'm MAP<STRING,INT>, b INT')).toEqual({ m: null, b: 2 });
    expect(fj('[1,"x"]', 'ARRAY<INT>')).toBeNull();
    expect(fj('{"a":[[1],[2,"x"]]}', 'a ARRAY<ARRAY<INT>>')).toEqual({ a: null });
  });

  it('takes only a JSON integer for an integral type or a TIMESTAMP in seconds', () => {
    expect(fj('{"a":1.0,"b":1e2,"c":7}', 'a INT, b BIGINT, c INT')).toEqual({ a: null, b: null, c: 7 });
    expect(fj('{"t":1.5}', 't TIMESTAMP')).toEqual({ t: null });
    expect(fj('{"t":1}', 't TIMESTAMP')).toEqual({ t: 1_000_000 });
  });

  it('reads a DECIMAL from a JSON string, and a non-string for a STRING as Jackson copies it', () => {
    expect(fj('{"d":"1,234.5"}', 'd DECIMAL(10,2)')).toEqual({ d: '1234.50' });
    expect(fj('{"s":1.50,"t":{"x":[1.0]}}', 's STRING, t STRING')).toEqual({ s: '1.5', t: '{"x":[1.0]}' });
  });

  it('reads an object as a one-element array for an ARRAY<STRUCT> schema (SPARK-19595)', () => {
    expect(fj('{"x":1}', 'ARRAY<STRUCT<x: INT>>')).toEqual([{ x: 1 }]);
  });

  it('is null for a text without any JSON token, a row of nulls for malformed text', () => {
    expect(fj('', 'a INT')).toBeNull();
    expect(fj('   ', 'a INT')).toBeNull();
    expect(fj('{"a" 1}', 'a INT')).toEqual({ a: null });
    expect(fj('[{"a":1}]', 'a INT')).toEqual({ a: null });
  });
});

describe('to_json writes values as Jackson does', () => {
  it('writes an ANSI interval as its text in its fields (JacksonGenerator: toDayTimeIntervalString, toYearMonthIntervalString)', () => {
    expect(value("to_json(named_struct('d', INTERVAL '3' DAY, 'm', INTERVAL 90 MINUTES, 'y', INTERVAL '1-2' YEAR TO MONTH))")).toBe(
      `{"d":"INTERVAL '3' DAY","m":"INTERVAL '90' MINUTE","y":"INTERVAL '1-2' YEAR TO MONTH"}`,
    );
    expect(value("to_json(array(TIMESTAMP '2026-10-01 12:00:01.5' - TIMESTAMP '2026-10-01 12:00:00'))")).toBe(`["INTERVAL '0 00:00:01.5' DAY TO SECOND"]`);
  });

  it("writes a DECIMAL as Java's BigDecimal.toString: scientific below an adjusted exponent of -6", () => {
    expect(value("to_json(named_struct('x', CAST(0 AS DECIMAL(10,8))))")).toBe('{"x":0E-8}');
    expect(value("to_json(named_struct('x', CAST(0.00000012 AS DECIMAL(10,8))))")).toBe('{"x":1.2E-7}');
    expect(value("to_json(named_struct('x', CAST(-0.0000012 AS DECIMAL(10,8))))")).toBe('{"x":-0.00000120}');
    expect(value("to_json(named_struct('x', CAST(0 AS DECIMAL(10,6))))")).toBe('{"x":0.000000}');
    expect(value("to_json(named_struct('x', 12.30BD))")).toBe('{"x":12.30}');
  });
});

describe('array_contains types its arguments as Spark does', () => {
  const errorOf = (text: string) => refusalOf(text, parseDdlColumns('a ARRAY<INT>')).errorClass;

  it('refuses a NULL literal argument (DATATYPE_MISMATCH.NULL_TYPE)', () => {
    expect(errorOf('array_contains(a, NULL)')).toBe('DATATYPE_MISMATCH.NULL_TYPE');
    expect(errorOf('array_contains(NULL, 1)')).toBe('DATATYPE_MISMATCH.NULL_TYPE');
  });

  it('refuses a value that only a STRING promotion would match (ARRAY_FUNCTION_DIFF_TYPES)', () => {
    expect(errorOf("array_contains(a, '1')")).toBe('DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES');
    expect(errorOf("array_contains(array('1'), 1)")).toBe('DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES');
  });

  it('widens numbers, and is null with a null element and no match', () => {
    expect(value('array_contains(array(1.5, 2), 2)')).toBe(true);
    expect(value('array_contains(array(1, 2), 2L)')).toBe(true);
    expect(value('array_contains(array(1, NULL), 2)')).toBeNull();
    expect(value('array_contains(array(1, NULL), 1)')).toBe(true);
    expect(value('array_contains(a, CAST(NULL AS INT))', { a: [1] }, 'a ARRAY<INT>')).toBeNull();
  });
});

describe('element_at and try_element_at', () => {
  const rowError = (text: string) => rowErrorOf(text, []).errorClass;

  it('fails index 0 even in try_element_at (Spark docs: for arrays, index 0 throws)', () => {
    expect(rowError('try_element_at(array(1, 2, 3), 0)')).toBe('INVALID_INDEX_OF_ZERO');
    expect(rowError('element_at(array(1, 2, 3), 0)')).toBe('INVALID_INDEX_OF_ZERO');
  });

  it('is null beyond the array for try_element_at, an error for element_at under ANSI', () => {
    expect(value('try_element_at(array(1, 2, 3), 4)')).toBeNull();
    expect(value('try_element_at(array(1, 2, 3), -4)')).toBeNull();
    expect(rowError('element_at(array(1, 2, 3), -4)')).toBe('INVALID_ARRAY_INDEX_IN_ELEMENT_AT');
    expect(value('element_at(array(1, 2, 3), -1)')).toBe(3);
    expect(value("element_at(map('a', 1), 'b')")).toBeNull();
  });
});

describe('array_join casts an array of atomic values to ARRAY<STRING> (ANSI implicit cast)', () => {
  it.each([
    ["array_join(array(1, 2), ',')", '1,2'],
    ["array_join(array(1.5D, NULL), ',', 'x')", '1.5,x'],
    ["array_join(array(DATE '2026-10-01', NULL), ',')", '2026-10-01'],
    ["array_join(array(true, false), ' ')", 'true false'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });
});

describe('to_json options', () => {
  it("formats a TIMESTAMP with timestampFormat (Spark's to_json documentation example)", () => {
    expect(value("to_json(named_struct('time', to_timestamp('2015-08-26', 'yyyy-MM-dd')), map('timestampFormat', 'dd/MM/yyyy'))")).toBe(
      '{"time":"26/08/2015"}',
    );
  });

  it('formats a DATE with dateFormat and keeps null fields with ignoreNullFields false', () => {
    expect(value("to_json(named_struct('d', DATE '2026-10-01'), map('dateFormat', 'dd.MM.yyyy'))")).toBe('{"d":"01.10.2026"}');
    expect(value("to_json(named_struct('a', 1, 'b', NULL), map('ignoreNullFields', 'false'))")).toBe('{"a":1,"b":null}');
    expect(value("to_json(named_struct('a', 1, 'b', NULL))")).toBe('{"a":1}');
  });

  it('refuses options that are not a map (INVALID_OPTIONS.NON_MAP_FUNCTION)', () => {
    expect(() => value("to_json(named_struct('a', 1), 'x')")).toThrow(expect.objectContaining({ errorClass: 'INVALID_OPTIONS.NON_MAP_FUNCTION' }));
  });
});

describe('from_json options', () => {
  it("parses a TIMESTAMP with timestampFormat (Spark's from_json documentation example), without fallback", () => {
    expect(value("from_json('{\"time\":\"26/08/2015\"}', 'time Timestamp', map('timestampFormat', 'dd/MM/yyyy'))")).toEqual({ time: 1_440_547_200_000_000 });
    expect(value("from_json('{\"time\":\"2015-08-26 10:00:00\"}', 'time Timestamp', map('timestampFormat', 'dd/MM/yyyy'))")).toEqual({ time: null });
  });

  it('parses a DATE with dateFormat', () => {
    expect(value("from_json('{\"d\":\"26/08/2015\"}', 'd DATE', map('dateFormat', 'dd/MM/yyyy'))")).toEqual({ d: '2015-08-26' });
  });
});

describe("Jackson's reading of the JSON text", () => {
  const gjo = (json: string, path: string) => value('get_json_object(j, p)', { j: json, p: path }, 'j STRING, p STRING');
  const fj = (json: string, schema: string) => value(`from_json(j, '${schema}')`, { j: json }, 'j STRING');

  it('takes single-quoted strings (ALLOW_SINGLE_QUOTES) in get_json_object, json_tuple and from_json', () => {
    expect(gjo("{'a': 'x y', 'b': [1, 'q\"z']}", '$.a')).toBe('x y');
    expect(gjo("{'a': 'x y', 'b': [1, 'q\"z']}", '$.b')).toBe('[1,"q\\"z"]');
    expect(compileExpression("json_tuple(j, 'a')", parseDdlColumns('j STRING')).evaluate({ j: "{'a': 'v'}" })).toEqual(['v']);
    expect(fj("{'a': 1, 'b': 'x'}", 'a INT, b STRING')).toEqual({ a: 1, b: 'x' });
  });

  it('keeps a raw newline in get_json_object (JsonExpressionsSuite "preserve newlines") but not in from_json', () => {
    expect(gjo('{"a":"b\nc"}', '$.a')).toBe('b\nc');
    expect(fj('{"a":"b\nc"}', 'a STRING')).toEqual({ a: null });
  });

  it('reads only the first value: what follows it is not read', () => {
    expect(gjo('{"a":1} trailing', '$.a')).toBe('1');
    expect(fj('{"a":1} {"a":2}', 'a INT')).toEqual({ a: 1 });
    expect(gjo('{"a":[1,2]', '$.a')).toBeNull();
  });
});

describe("json_array_length and json_object_keys read the outermost value as Spark's Jackson parser does", () => {
  const len = (json: string | null) => value('json_array_length(j)', { j: json }, 'j STRING');
  const keys = (json: string | null) => value('json_object_keys(j)', { j: json }, 'j STRING');

  it.each([
    ['[]', 0],
    ['[1,2,3,{"f1":1,"f2":[5,6]},4]', 5], // nested values count once (skipChildren)
    ["['a', 'b']", 2], // single quotes (ALLOW_SINGLE_QUOTES)
    ['[1,2] [3]', 2], // nothing after the first value is read
    ['[1,2', null], // end of input inside the array: Jackson throws
    ['[1,,2]', null],
    ['{"a":[1]}', null], // not an array
    ['7', null],
    ['', null],
    [null, null],
  ])('json_array_length(%j) is %j', (json, expected) => {
    expect(len(json)).toBe(expected);
  });

  it.each([
    ['{}', []],
    ['{"key": "value"}', ['key']],
    ['{"f1":"abc","f2":{"f3":"a", "f4":"b"}}', ['f1', 'f2']], // the outermost object's keys only
    ['{"a":1,"b":2,"a":3}', ['a', 'b', 'a']], // a repeated key each time it comes
    ['{"a":1} {"b":2}', ['a']],
    ['{"a":', null],
    ['[1,2]', null],
    ['"text"', null],
  ])('json_object_keys(%j) is %j', (json, expected) => {
    expect(keys(json)).toEqual(expected);
  });

  it('takes a STRING only, as ExpectsInputTypes does (no implicit cast)', () => {
    expect(refusalOf('json_array_length(1)', []).message).toMatch(/UNEXPECTED_INPUT_TYPE.*requires the "STRING" type/);
    expect(refusalOf('json_object_keys(1)', []).message).toMatch(/UNEXPECTED_INPUT_TYPE/);
  });
});

describe("from_json reads a DATE without dateFormat as Spark's default date parser (stringToDate)", () => {
  const fj = (json: string) => value("from_json(j, 'd DATE')", { j: json }, 'j STRING');
  it.each([
    ['{"d":"2026-10-01"}', '2026-10-01'],
    ['{"d":"2026-10"}', '2026-10-01'],
    ['{"d":"2026-10-01T10:00:00"}', '2026-10-01'],
    ['{"d":" 2026-10-01 "}', '2026-10-01'],
    ['{"d":"2026-02-30"}', null],
    ['{"d":"01/10/2026"}', null],
    ['{"d":20000}', null],
  ])('%s gives d = %j', (json, expected) => {
    expect(fj(json)).toEqual({ d: expected });
  });
});

describe('sha2', () => {
  it('takes the bit length from a column, per row (Spark evaluates it per row; another length is null)', () => {
    const sha = (bits: number | null) => value('sha2(s, b)', { s: 'Spark', b: bits }, 's STRING, b INT');
    expect(sha(256)).toBe('529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b');
    expect(sha(0)).toBe('529bc3b07127ecb7e53a4dcf1991d9152c24537d919178022b2c42657f79a26b');
    expect(sha(1)).toBeNull();
    expect(sha(null)).toBeNull();
  });
});

describe('named_struct', () => {
  it('refuses a field name that is a column or not a string (CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING)', () => {
    const errorOf = (text: string) => refusalOf(text, parseDdlColumns('s STRING')).errorClass;
    expect(errorOf('named_struct(s, 1)')).toBe('DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING');
    expect(errorOf('named_struct(1, 1)')).toBe('DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING');
    expect(value("named_struct('a', 1, 'b', 'x')")).toEqual({ a: 1, b: 'x' });
  });
});

describe('array() and map() have VOID elements, which give way to any other type (Spark 4 CreateArray/CreateMap)', () => {
  const typeOf = (text: string, ddl: string) => ddlOf(compileExpression(text, parseDdlColumns(ddl)).type);

  it.each([
    ['coalesce(a, array())', 'a ARRAY<STRUCT<x: INT>>', 'ARRAY<STRUCT<x: INT>>'],
    ['coalesce(a, array())', 'a ARRAY<INT>', 'ARRAY<INT>'],
    ['concat(a, array())', 'a ARRAY<BOOLEAN>', 'ARRAY<BOOLEAN>'],
    ['array(a, array(NULL))', 'a ARRAY<INT>', 'ARRAY<ARRAY<INT>>'],
    ['flatten(array(a, array()))', 'a ARRAY<INT>', 'ARRAY<INT>'],
    ['coalesce(m, map())', 'm MAP<STRING, STRUCT<x: INT>>', 'MAP<STRING, STRUCT<x: INT>>'],
    ['coalesce(map(x, 1L), map())', 'x INT', 'MAP<INT, BIGINT>'],
  ])('%s over %s is %s', (text, ddl, expected) => {
    expect(typeOf(text, ddl)).toBe(expected);
  });

  it('evaluates them as before: an empty array or map, nulls kept', () => {
    expect(value('coalesce(a, array())', { a: null }, 'a ARRAY<STRUCT<x: INT>>')).toEqual([]);
    expect(value('array(a, array(NULL))', { a: [1] }, 'a ARRAY<INT>')).toEqual([[1], [null]]);
    expect(value('to_json(array(NULL))')).toBe('[null]');
    expect(value('size(map())')).toBe(0);
  });
});

describe("from_json takes Jackson's non-numeric numbers (JSONOptions allowNonNumericNumbers, on by default)", () => {
  const fj = (json: string, schema: string) => value(`from_json(j, '${schema}')`, { j: json }, 'j STRING');

  it('reads a bare NaN or infinity word as a number: a DOUBLE or FLOAT takes it, an INT or DECIMAL does not', () => {
    expect(fj('{"a":NaN,"b":-Infinity,"c":+INF,"d":Infinity}', 'a DOUBLE, b DOUBLE, c FLOAT, d DOUBLE')).toEqual({
      a: NaN,
      b: -Infinity,
      c: Infinity,
      d: Infinity,
    });
    expect(fj('{"a":NaN,"b":1}', 'a INT, b INT')).toEqual({ a: null, b: 1 });
    expect(fj('{"a":-INF}', 'a DECIMAL(5,2)')).toEqual({ a: null });
    expect(fj('[NaN, 1.5]', 'ARRAY<DOUBLE>')).toEqual([NaN, 1.5]);
  });

  it("copies it for a STRING as Jackson's generator writes a non-finite double: quoted", () => {
    expect(fj('{"s":NaN,"t":[-Infinity]}', 's STRING, t STRING')).toEqual({ s: '"NaN"', t: '["-Infinity"]' });
  });

  it('takes the quoted words for a DOUBLE too, case-sensitive', () => {
    expect(fj('{"a":"NaN","b":"-INF","c":"nan","d":""}', 'a DOUBLE, b DOUBLE, c DOUBLE, d DOUBLE')).toEqual({ a: NaN, b: -Infinity, c: null, d: null });
  });

  it('leaves get_json_object strict (its factory does not allow them): no value', () => {
    expect(value('get_json_object(j, p)', { j: '{"a":NaN}', p: '$.a' }, 'j STRING, p STRING')).toBeNull();
  });
});

describe("from_json's parse modes and corrupt-record column (Spark's JsonToStructsEvaluator and FailureSafeParser)", () => {
  const fj = (json: string, schema: string, options = '') => value(`from_json(j, '${schema}'${options})`, { j: json }, 'j STRING');
  const rowError = (json: string, schema: string, options: string) =>
    rowErrorOf(`from_json(j, '${schema}'${options})`, parseDdlColumns('j STRING'), { j: json }).errorClass;

  it('puts a bad record in the _corrupt_record column, with the fields that fitted; a good record leaves it null', () => {
    expect(fj('{"a":"x","b":"y"}', 'a INT, b STRING, _corrupt_record STRING')).toEqual({ a: null, b: 'y', _corrupt_record: '{"a":"x","b":"y"}' });
    expect(fj('{"a":1,"b":"y"}', 'a INT, b STRING, _corrupt_record STRING')).toEqual({ a: 1, b: 'y', _corrupt_record: null });
    expect(fj('{"a":1', 'a INT, _corrupt_record STRING')).toEqual({ a: null, _corrupt_record: '{"a":1' });
    expect(fj('[{"a":1}]', 'a INT, _corrupt_record STRING')).toEqual({ a: null, _corrupt_record: '[{"a":1}]' });
    expect(fj('{"s":{"x":"bad","y":2}}', 's STRUCT<x: INT, y: INT>, _corrupt_record STRING')).toEqual({
      s: { x: null, y: 2 },
      _corrupt_record: '{"s":{"x":"bad","y":2}}',
    });
    expect(fj('', 'a INT, _corrupt_record STRING')).toBeNull();
  });

  it('names the column with columnNameOfCorruptRecord, and refuses one that is not a STRING', () => {
    expect(fj('{"a":"x"}', 'a INT, bad STRING', ", map('columnNameOfCorruptRecord', 'bad')")).toEqual({ a: null, bad: '{"a":"x"}' });
    expect(refusalOf("from_json(j, 'a INT, _corrupt_record INT')", parseDdlColumns('j STRING')).errorClass).toBe('INVALID_CORRUPT_RECORD_TYPE');
  });

  it('fails a bad record in FAILFAST mode (MALFORMED_RECORD_IN_PARSING), the mode case-insensitive', () => {
    expect(rowError('{"a":"x"}', 'a INT', ", map('mode', 'FAILFAST')")).toBe('MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION');
    expect(rowError('{"a', 'a INT', ", map('mode', 'failfast')")).toBe('MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION');
    expect(rowError('[1,"x"]', 'ARRAY<INT>', ", map('mode', 'FAILFAST')")).toBe('MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION');
    expect(rowError('[{"a":1}]', 'a INT', ", map('mode', 'FAILFAST')")).toBe('MALFORMED_RECORD_IN_PARSING.CANNOT_PARSE_JSON_ARRAYS_AS_STRUCTS');
    expect(fj('{"a":1}', 'a INT', ", map('mode', 'FAILFAST')")).toEqual({ a: 1 });
    expect(fj('', 'a INT', ", map('mode', 'FAILFAST')")).toBeNull();
  });

  it('refuses DROPMALFORMED (PARSE_MODE_UNSUPPORTED); another name is PERMISSIVE', () => {
    expect(refusalOf("from_json(j, 'a INT', map('mode', 'DROPMALFORMED'))", parseDdlColumns('j STRING')).errorClass).toBe('PARSE_MODE_UNSUPPORTED');
    expect(fj('{"a":"x"}', 'a INT', ", map('mode', 'bogus')")).toEqual({ a: null });
  });

  it('keeps the partial value of an ARRAY schema in PERMISSIVE mode', () => {
    expect(fj('[{"a":"x"},{"a":2}]', 'ARRAY<STRUCT<a: INT>>')).toEqual([{ a: null }, { a: 2 }]);
  });
});

describe("struct's arguments are named expressions (Spark's grammar, #struct; CreateStruct names the fields)", () => {
  const cols = 'x INT, y STRING';
  const row = { x: 1, y: 's' };

  it.each([
    ['struct(x AS z)', { z: 1 }],
    ['struct(x z, y)', { z: 1, y: 's' }],
    ['struct(x + 1 AS `a b`, y)', { 'a b': 2, y: 's' }],
    ['struct(x + 1, y)', { col1: 2, y: 's' }],
    ['struct(x AS z).z', 1],
    ['to_json(struct(x AS id, y AS name))', '{"id":1,"name":"s"}'],
  ])('%s is %j', (text, expected) => {
    expect(value(text, row, cols)).toEqual(expected);
  });

  it('keeps the alias in the call text, and wants a name after AS', () => {
    expect(compileExpression('struct(x AS z, y)', parseDdlColumns(cols)).type.name).toBe('struct(x AS z, y)');
    expect(refusalOf('struct(x AS)', parseDdlColumns(cols)).errorClass).toBe('PARSE_SYNTAX_ERROR');
  });
});

describe('the JSON functions take STRING arguments without implicit casts (Spark: ExpectsInputTypes; JsonTuple its own check)', () => {
  const errorOf = (text: string) => refusalOf(text, parseDdlColumns('j STRING')).errorClass;

  it.each([
    ["get_json_object(1, '$')", 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ['get_json_object(j, 1)', 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ["from_json(1, 'a INT')", 'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE'],
    ['json_tuple(j, 1)', 'DATATYPE_MISMATCH.NON_STRING_TYPE'],
    ["json_tuple(1, 'a')", 'DATATYPE_MISMATCH.NON_STRING_TYPE'],
    ["json_tuple(j, 'a', NULL)", 'DATATYPE_MISMATCH.NON_STRING_TYPE'],
  ])('%s is refused (%s)', (text, errorClass) => {
    expect(errorOf(text)).toBe(errorClass);
  });

  it('takes a NULL literal where Spark coerces it to a STRING null (ExpectsInputTypes)', () => {
    expect(value("get_json_object(NULL, '$.a')")).toBeNull();
    expect(value('get_json_object(\'{"a":1}\', NULL)')).toBeNull();
    expect(value("from_json(NULL, 'a INT')")).toBeNull();
  });
});

describe("from_json's schema is a type or a list of columns (Spark's DataType.fromDDL), a struct, an array or a map", () => {
  it('refuses an atomic type (INVALID_JSON_SCHEMA), and reads a column named like a type', () => {
    expect(refusalOf("from_json(j, 'INT')", parseDdlColumns('j STRING')).errorClass).toBe('DATATYPE_MISMATCH.INVALID_JSON_SCHEMA');
    expect(refusalOf("from_json(j, 'string')", parseDdlColumns('j STRING')).errorClass).toBe('DATATYPE_MISMATCH.INVALID_JSON_SCHEMA');
    expect(value("from_json(j, 'int INT, date DATE')", { j: '{"int":1,"date":"2026-10-01"}' }, 'j STRING')).toEqual({ int: 1, date: '2026-10-01' });
    expect(refusalOf("from_json(j, 'STRUCT<a INT')", parseDdlColumns('j STRING')).errorClass).toBe('INVALID_SCHEMA.PARSE_ERROR');
  });
});

describe("element_at's argument types (Spark's ElementAt.inputTypes and checkInputDataTypes)", () => {
  const errorOf = (text: string) => refusalOf(text, []).errorClass;

  it('takes an INT index (a TINYINT or SMALLINT cast to one), not a BIGINT or a STRING', () => {
    expect(value('element_at(array(1, 2, 3), CAST(2 AS SMALLINT))')).toBe(2);
    expect(errorOf('element_at(array(1, 2, 3), 2L)')).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
    expect(errorOf("try_element_at(array(1, 2, 3), '2')")).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
  });

  it('takes a key of a type with a tightest common type with the keys: a STRING against numbers has none', () => {
    expect(value("element_at(map(1, 'a'), 1L)")).toBe('a');
    expect(errorOf("element_at(map(1, 'a'), '1')")).toBe('DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES');
    expect(errorOf("try_element_at(map('a', 1), 1)")).toBe('DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES');
  });
});
