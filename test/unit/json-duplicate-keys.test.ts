/**
 * A JSON object that gives a key twice (`{"a":1,"a":2}`), everywhere sluice reads JSON. The
 * expectations are worked by hand from Spark's source: JacksonParser's convertObject converts each
 * member in turn (a value that fits replaces the one before; one that does not fit leaves it, and
 * makes the record bad), GetJsonObject's path walk takes the first member that matches and is not
 * null, JsonTuple's parseRow sets a column again for each later member that is not null.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { compileLineParser } from '../../lib/engine/json-scan';
import { parseSchema } from '../../lib/engine/schema';
import { parseJsonLine } from '../../lib/engine/json-record';
import { givesEveryKeyOnce } from '../../lib/engine/json-duplicates';

const value = (text: string, row: Record<string, unknown>, ddl: string) => compileExpression(text, parseDdlColumns(ddl)).evaluate(row);
const fromJson = (json: string, schema: string) => value(`from_json(j, '${schema}')`, { j: json }, 'j STRING');

describe('from_json converts each member of a repeated key in turn', () => {
  it.each([
    // the later value replaces the earlier
    ['{"a":1,"a":2}', 'a INT', { a: 2 }],
    // the first does not fit (partial result: skipped), the second fits
    ['{"a":"x","a":2}', 'a INT', { a: 2 }],
    // the second does not fit: the first stays
    ['{"a":1,"a":"x"}', 'a INT', { a: 1 }],
    // null is a value that fits: it replaces
    ['{"a":1,"a":null}', 'a INT', { a: null }],
    ['{"a":1,"b":"t","a":3}', 'a INT, b STRING', { a: 3, b: 't' }],
    // in a nested struct too
    ['{"s":{"x":1,"x":2}}', 's STRUCT<x: INT>', { s: { x: 2 } }],
    ['{"s":{"x":1},"s":"no"}', 's STRUCT<x: INT>', { s: { x: 1 } }],
    // a STRING field holding an object keeps Jackson's copy of it: every member, in order
    ['{"t":{"k":1,"z":true,"k":2}}', 't STRING', { t: '{"k":1,"z":true,"k":2}' }],
  ])('from_json(%s, %s)', (json, schema, expected) => {
    expect(fromJson(json, schema)).toEqual(expected);
  });

  it('reads each element of an array of structs the same way', () => {
    expect(fromJson('[{"x":1,"x":2},{"x":"bad","x":3}]', 'ARRAY<STRUCT<x: INT>>')).toEqual([{ x: 2 }, { x: 3 }]);
  });
});

describe('get_json_object takes the first member that matches', () => {
  const gjo = (json: string, path: string) => value('get_json_object(j, p)', { j: json, p: path }, 'j STRING, p STRING');

  it.each([
    ['{"a":1,"a":2}', '$.a', '1'],
    // a null value does not match: the walk goes on to the next member of that name
    ['{"a":null,"a":2}', '$.a', '2'],
    // the first member's value has no `c`: the second is tried
    ['{"a":{"b":1},"a":{"c":2}}', '$.a.c', '2'],
    ['{"a":{"c":1},"a":{"c":2}}', '$.a.c', '1'],
    // the whole object is copied member by member, in order
    ['{"a":1,"b":2,"a":3}', '$', '{"a":1,"b":2,"a":3}'],
    ['{"o":{"a":"x","a":"y"}}', '$.o', '{"a":"x","a":"y"}'],
  ])('get_json_object(%s, %s)', (json, path, expected) => {
    expect(gjo(json, path)).toBe(expected);
  });
});

describe('json_tuple keeps the last member of a key that is not null', () => {
  const tuple = (json: string, ...keys: string[]) => value(`json_tuple(j, ${keys.map((k) => `'${k}'`).join(', ')})`, { j: json }, 'j STRING');

  it.each([
    ['{"a":1,"a":2}', ['a'], ['2']],
    ['{"a":1,"a":null}', ['a'], ['1']],
    ['{"a":"x","b":3,"a":{"k":1,"k":2}}', ['a', 'b'], ['{"k":1,"k":2}', '3']],
    // a key asked for twice: both columns take each value
    ['{"a":1,"a":2}', ['a', 'a'], ['2', '2']],
  ])('json_tuple(%s, %j)', (json, keys, expected) => {
    expect(tuple(json, ...keys)).toEqual(expected);
  });
});

describe('the JSON-lines reader converts each member of a repeated key in turn', () => {
  const schema = parseSchema('a INT, s STRUCT<x: INT>, l ARRAY<STRUCT<x: INT>>, t STRING, m MAP<STRING, INT>');
  const scan = compileLineParser(schema);

  it.each([
    ['{"a":1,"a":2}', { a: 2 }],
    ['{"a":1,"a":null}', { a: null }],
    ['{"t":1,"t":"v"}', { t: 'v' }],
    ['{"a":1,"other":"x","other":2}', { a: 1 }],
    ['{"s":{"x":1,"x":2}}', { s: { x: 2 } }],
    // the same key in sibling or nested objects is not given twice
    ['{"l":[{"x":1},{"x":2}],"a":3,"s":{"a":"no"}}', { a: 3, l: [{ x: 1 }, { x: 2 }], s: { x: null } }],
  ])('%s is a good record', (line, expected) => {
    for (const r of [parseJsonLine(schema, line), scan(line)]) {
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.row).toMatchObject(expected);
    }
  });

  it.each([
    // the first value does not fit: the record is bad though the second fits
    ['{"a":"x","a":2}', 'column a (INT) has string "x"'],
    ['{"a":"x","a":null}', 'column a (INT) has string "x"'],
    ['{"a":{"z":1},"a":2}', 'column a (INT) has object'],
    ['{"\\u0061":"x","a":2}', 'column a (INT) has string "x"'],
    // at any depth
    ['{"s":{"x":"bad","x":1}}', 'column s.x (INT) has string "bad"'],
    ['{"l":[{"x":"bad","x":1}]}', 'column l[0].x (INT) has string "bad"'],
    ['{"m":{"k":"x","k":1}}', 'column m["k"] (INT) has string "x"'],
    // among many other keys, and after strings that hold quotes and braces
    [`{"a":"x",${Array.from({ length: 20 }, (_, i) => `"k${i}":${i}`).join(',')},"a":2}`, 'column a (INT) has string "x"'],
    ['{"t":"{\\"a\\":","a":"x","t":"}","a":1}', 'column a (INT) has string "x"'],
    // whitespace between a key and its colon
    ['{"a" :"x", "a":2}', 'column a (INT) has string "x"'],
    ['{ "s" : { "x" : "bad" , "x" : 1 } }', 'column s.x (INT) has string "bad"'],
  ])('%s is a bad record', (line, reason) => {
    for (const r of [parseJsonLine(schema, line), scan(line)]) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.reason).toContain(reason);
        expect(r.reason).toContain('is given more than once');
      }
    }
  });

  it('still reads a repeated key whose later value does not fit as a bad record', () => {
    const r = parseJsonLine(schema, '{"a":1,"a":"x"}');
    expect(r.ok).toBe(false);
  });
});

describe("the reader's quick test that a line gives every key once", () => {
  it.each([
    ['{"a":1,"b":{"c":2},"l":[{"x":1},{"x":2}]}', true],
    ['{"a" : 1, "b" :2}', true],
    ['[{"a":1},{"a":2}]', true],
    ['{"a":1,"a":2}', false],
    ['{"s":{"x":1,"x":2}}', false],
    ['{"a" :1, "a":2}', false],
    // a colon after an escaped quote in a string counts as a key: the line is checked through
    ['{"t":"say \\":\\" here"}', false],
  ])('%s: %s', (line, once) => {
    expect(givesEveryKeyOnce(line, JSON.parse(line))).toBe(once);
  });
});
