import { elementTexts } from '../../lib/engine/formats/lenient-json';
import { parseSchema } from '../../lib/engine/schema';
import { parseJsonLine } from '../../lib/engine/json-record';

describe("a STRING inside a container keeps the value's text as the line writes it (Spark 4's exact string parsing)", () => {
  it('splits an array text into its elements as written', () => {
    expect(elementTexts('[ 1.50 , {"a": [1, 2]}, "x,]" ]')).toEqual(['1.50', '{"a": [1, 2]}', '"x,]"']);
    expect(elementTexts('[ ]')).toEqual([]);
    expect(elementTexts('{"a": 1}')).toEqual([]);
  });
  it('reads a STRUCT field, an element and a MAP value from their text', () => {
    const schema = parseSchema('s STRUCT<r: STRING>, a ARRAY<STRING>, m MAP<STRING, STRING>');
    const r = parseJsonLine(schema, '{"s": {"r": {"k": 1.50}}, "a": [[1, 2], 3.0], "m": {"p": { }}}');
    expect(r.ok && r.row).toMatchObject({ s: { r: '{"k": 1.50}' }, a: ['[1, 2]', '3.0'], m: { p: '{ }' } });
  });
});
