/**
 * schema_of_json (lib/engine/expr/schema-of-json.ts): the DDL Spark's JSON schema inference gives
 * a constant JSON text, and from_json reading a text with it. Expected texts are Spark's rules
 * applied by hand to each sample.
 */
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf } from '../helpers/expr-errors';

const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, [{ name: 's', type: 'STRING' }]).evaluate(row);

describe('schema_of_json', () => {
  it.each([
    // integers are BIGINT, fractions DOUBLE, fields in name order
    ['{"b": 1, "a": 0.5, "c": "x", "d": true}', 'STRUCT<a: DOUBLE, b: BIGINT, c: STRING, d: BOOLEAN>'],
    // past a long: a DECIMAL of its digits; past 38 digits: DOUBLE
    ['{"n": 12345678901234567890}', 'STRUCT<n: DECIMAL(20,0)>'],
    [`{"n": ${'9'.repeat(39)}}`, 'STRUCT<n: DOUBLE>'],
    // an array's element is its elements' common type; a BIGINT with a DOUBLE is DOUBLE
    ['{"xs": [1, 2.5], "ys": [1, "a"], "zs": [], "w": null}', 'STRUCT<w: STRING, xs: ARRAY<DOUBLE>, ys: ARRAY<STRING>, zs: ARRAY<STRING>>'],
    // structs merge field by field
    ['[{"a": 1}, {"b": "x", "a": null}]', 'ARRAY<STRUCT<a: BIGINT, b: STRING>>'],
    ['{"o": {"in ner": [{"k": 1}, {"k": 9223372036854775808}]}}', 'STRUCT<o: STRUCT<`in ner`: ARRAY<STRUCT<k: DECIMAL(20,0)>>>>'],
    ['{}', 'STRUCT<>'],
    ['[1, 2]', 'ARRAY<BIGINT>'],
    ['"text"', 'STRING'],
  ])('%s is %s', (json, ddl) => {
    expect(value(`schema_of_json('${json}')`)).toBe(ddl);
  });

  it('takes prefersDecimal and dropFieldIfAllNull', () => {
    expect(value(`schema_of_json('{"a": 1.50, "b": null}', map('prefersDecimal', 'true', 'dropFieldIfAllNull', 'true'))`)).toBe('STRUCT<a: DECIMAL(3,2)>');
  });

  it('is a schema from_json takes', () => {
    expect(value(`from_json(s, schema_of_json('{"id": 1, "tags": ["a"]}'))`, { s: '{"id": 7, "tags": ["x", "y"], "more": 1}' })).toEqual({
      id: 7,
      tags: ['x', 'y'],
    });
  });

  it('needs a constant JSON text', () => {
    expect(refusalOf('schema_of_json(s)', [{ name: 's', type: 'STRING' }]).message).toMatch(/NON_FOLDABLE_INPUT/);
    expect(refusalOf(`schema_of_json('{"a": ')`, []).message).toMatch(/cannot infer a schema from .*: it is not JSON/);
  });
});
