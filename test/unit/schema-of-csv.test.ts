/**
 * schema_of_csv (lib/engine/expr/schema-of-csv.ts): the DDL Spark's CSV schema inference gives the
 * first record of a constant text. Expected texts are CSVInferSchema's order of tries (INT, BIGINT,
 * DECIMAL of scale 0, DOUBLE, DATE with preferDate, TIMESTAMP, BOOLEAN, STRING) applied by hand.
 */
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf } from '../helpers/expr-errors';

const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, [{ name: 's', type: 'STRING' }]).evaluate(row);

describe('schema_of_csv', () => {
  it("infers Spark's example", () => {
    expect(value(`schema_of_csv('1,abc')`)).toBe('STRUCT<_c0: INT, _c1: STRING>');
  });

  it('tries each field as Spark does, in its order', () => {
    expect(value(`schema_of_csv('1,3000000000,12345678901234567890,1.5,2026-10-01,2026-10-01 12:00:00,TRUE,,NaN,1e5,x')`)).toBe(
      'STRUCT<_c0: INT, _c1: BIGINT, _c2: DECIMAL(20,0), _c3: DOUBLE, _c4: DATE, _c5: TIMESTAMP, _c6: BOOLEAN, _c7: STRING, _c8: DOUBLE, _c9: DOUBLE, _c10: STRING>',
    );
    // Java's parseInt takes no blank, parseDouble does; a date not in yyyy-MM-dd is read by the lenient timestamp forms
    expect(value(`schema_of_csv(' 1,2026-1-5,1.0e1,${'9'.repeat(39)}')`)).toBe('STRUCT<_c0: DOUBLE, _c1: TIMESTAMP, _c2: DECIMAL(2,0), _c3: DOUBLE>');
  });

  it('takes the options of its map', () => {
    expect(value(`schema_of_csv('26/08/2015;x', map('sep', ';', 'dateFormat', 'dd/MM/yyyy'))`)).toBe('STRUCT<_c0: DATE, _c1: STRING>');
    expect(value(`schema_of_csv('2026-10-01', map('preferDate', 'false'))`)).toBe('STRUCT<_c0: TIMESTAMP>');
    expect(value(`schema_of_csv('-,1', map('nullValue', '-'))`)).toBe('STRUCT<_c0: STRING, _c1: INT>');
  });

  it('is a schema from_csv takes, and needs a constant', () => {
    expect(value(`from_csv(s, schema_of_csv('1,abc'))`, { s: '7,x' })).toEqual({ _c0: 7, _c1: 'x' });
    expect(refusalOf('schema_of_csv(s)', [{ name: 's', type: 'STRING' }]).message).toMatch(/NON_FOLDABLE_INPUT/);
  });
});
