/**
 * from_csv (lib/engine/expr/from-csv.ts): a text's first CSV record read by the CSV reader's rules
 * into the schema's columns by position, with Spark's PERMISSIVE partial results and FAILFAST row
 * errors. Expected values are written out by hand from each text.
 */
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const COLUMNS = [{ name: 's', type: 'STRING' as const }];
const value = (text: string, s: string | null = null) => compileExpression(text, COLUMNS).evaluate({ s });

describe('from_csv', () => {
  it('reads the fields by position, as the CSV reader converts them', () => {
    expect(value(`from_csv(s, 'a INT, b DOUBLE, c STRING, d BOOLEAN')`, '1,0.8,x,TRUE')).toEqual({ a: 1, b: 0.8, c: 'x', d: true });
    // a quoted field keeps the separator; an escaped quote inside it is a quote
    expect(value(`from_csv(s, 'a STRING, b INT')`, '"x,\\"y\\"",2')).toEqual({ a: 'x,"y"', b: 2 });
    // an empty field is null, quoted or not (nullValue unset); a DECIMAL rounds HALF_UP
    expect(value(`from_csv(s, 'a STRING, b STRING, c DECIMAL(5,2)')`, ',"",1.005')).toEqual({ a: null, b: null, c: '1.01' });
    expect(value(`from_csv(s, 'a INT')`, null)).toBeNull();
  });

  it('gives the fields that fit and null for the rest (PERMISSIVE), the text in the corrupt-record column', () => {
    expect(value(`from_csv(s, 'a INT, b INT')`, '1,x')).toEqual({ a: 1, b: null });
    expect(value(`from_csv(s, 'a INT, b INT')`, '7')).toEqual({ a: 7, b: null });
    expect(value(`from_csv(s, 'a INT, b INT')`, '1,2,3')).toEqual({ a: 1, b: 2 });
    expect(value(`from_csv(s, 'a INT')`, '')).toEqual({ a: null });
    expect(value(`from_csv(s, 'a INT, _corrupt_record STRING')`, 'x')).toEqual({ a: null, _corrupt_record: 'x' });
    expect(value(`from_csv(s, 'a INT, _corrupt_record STRING')`, '5')).toEqual({ a: 5, _corrupt_record: null });
  });

  it('takes the CSV options of its map', () => {
    // with nullValue set, a quoted empty field is the empty string
    expect(value(`from_csv(s, 'a STRING, b DATE, c STRING', map('sep', ';', 'dateFormat', 'dd/MM/yyyy', 'nullValue', '-'))`, '-;26/08/2015;""')).toEqual({
      a: null,
      b: '2015-08-26',
      c: '',
    });
  });

  it('is a row error in FAILFAST mode, and refuses what Spark refuses', () => {
    expect(rowErrorOf(`from_csv(s, 'a INT', map('mode', 'FAILFAST'))`, COLUMNS, { s: 'x' }).message).toMatch(
      /\[MALFORMED_RECORD_IN_PARSING\.WITHOUT_SUGGESTION\] Malformed records are detected in record parsing: x\. Parse Mode: FAILFAST/,
    );
    expect(refusalOf(`from_csv(s, 'a ARRAY<INT>')`, COLUMNS).message).toMatch(/UNSUPPORTED_DATATYPE.*ARRAY<INT>/);
    expect(refusalOf(`from_csv(s, 'a INT', map('mode', 'DROPMALFORMED'))`, COLUMNS).message).toMatch(/PARSE_MODE_UNSUPPORTED/);
    expect(refusalOf(`from_csv(s, 'a INT', map('sep', ''))`, COLUMNS).message).toMatch(/INVALID_OPTIONS/);
    expect(refusalOf(`from_csv(s, s)`, COLUMNS).message).toMatch(/NON_FOLDABLE_INPUT/);
  });
});
