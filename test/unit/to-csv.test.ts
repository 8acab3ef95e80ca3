/**
 * to_csv (lib/engine/expr/to-csv.ts, lib/engine/formats/csv-writer.ts): a struct as one CSV record,
 * each field written as Spark's UnivocityGenerator and univocity's writer write it. Expected texts
 * are worked out by hand from univocity's CsvWriter rules (quote on the separator, a line end or a
 * quote; the first field on the comment character; blanks trimmed; "" for the empty string).
 */
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf } from '../helpers/expr-errors';

const value = (text: string) => compileExpression(text, []).evaluate({});

describe('to_csv', () => {
  it("writes Spark's examples", () => {
    expect(value(`to_csv(named_struct('a', 1, 'b', 2))`)).toBe('1,2');
    expect(value(`to_csv(named_struct('time', to_timestamp('2015-08-26', 'yyyy-MM-dd')), map('timestampFormat', 'dd/MM/yyyy'))`)).toBe('26/08/2015');
  });

  it('quotes, escapes and trims as univocity does', () => {
    expect(value(`to_csv(named_struct('a', '#x', 'b', 'a,b', 'c', '', 'd', CAST(NULL AS STRING), 'e', '  x  ', 'f', 'say "hi"', 'g', '#y'))`)).toBe(
      '"#x","a,b","",,x,"say \\"hi\\"",#y',
    );
    // an escape alone stays as it is; inside quotes it is escaped too
    expect(value(`to_csv(named_struct('a', 'a\\\\b', 'b', 'a\\\\b,c'))`)).toBe('a\\b,"a\\\\b,c"');
    // a line end is quoted; trailing blanks go, inside quotes too
    expect(value(`to_csv(named_struct('a', 'one\\ntwo', 'b', 'c, '))`)).toBe('"one\ntwo","c,"');
    // a value of only blanks is the empty string's `""`
    expect(value(`to_csv(named_struct('a', '   '))`)).toBe('""');
  });

  it('writes each type as Spark does', () => {
    expect(
      value(
        `to_csv(named_struct('t', TIMESTAMP '2026-10-01 12:00:00.5', 'd', DATE '2026-10-01', 'x', 1e20D, 'm', CAST('0.00000001' AS DECIMAL(10,8)), 'ok', true, 'n', 9223372036854775807L))`,
      ),
    ).toBe('2026-10-01T12:00:00.500Z,2026-10-01,1.0E20,1E-8,true,9223372036854775807');
    expect(value(`to_csv(CAST(NULL AS STRUCT<a: INT>))`)).toBeNull();
  });

  it('takes the writer options of its map', () => {
    expect(value(`to_csv(named_struct('a', 1, 'b', 'x', 'c', CAST(NULL AS INT)), map('sep', ';', 'quoteAll', 'true'))`)).toBe('"1";"x";""');
    expect(value(`to_csv(named_struct('a', CAST(NULL AS INT), 'b', ''), map('nullValue', 'NA', 'emptyValue', 'EMPTY'))`)).toBe('NA,EMPTY');
    expect(value(`to_csv(named_struct('a', ' x '), map('ignoreLeadingWhiteSpace', 'false', 'ignoreTrailingWhiteSpace', 'false'))`)).toBe(' x ');
    expect(value(`to_csv(named_struct('a', 'q"q'), map('escapeQuotes', 'false'))`)).toBe('q"q');
  });

  it('follows univocity on a separator of two characters, quoteAll over null and "", and an escape that is the quote', () => {
    expect(value(`to_csv(named_struct('a', 'x||y', 'b', 'x|y'), map('sep', '||'))`)).toBe('"x||y"||x|y');
    expect(value(`to_csv(named_struct('a', 'x', 'b', CAST(NULL AS STRING), 'c', ''), map('quoteAll', 'true'))`)).toBe('"x","",""');
    expect(value(`to_csv(named_struct('a', 'say "hi", ok'), map('escape', '"'))`)).toBe('"say ""hi"", ok"');
  });

  it('quotes a value holding a character of lineSep, as univocity counts the line separator among its quotation triggers', () => {
    expect(value(`to_csv(named_struct('a', 'x|y', 'b', 'z'), map('lineSep', '|'))`)).toBe('"x|y",z');
    expect(value(`to_csv(named_struct('a', 'x|y'))`)).toBe('x|y');
    expect(refusalOf(`to_csv(named_struct('a', 1), map('lineSep', ''))`, []).message).toMatch(/INVALID_OPTIONS.*lineSep="" must be one character/);
  });

  it('refuses a value that is not a struct, and nested fields', () => {
    expect(refusalOf(`to_csv(1)`, []).message).toMatch(/UNSUPPORTED_INPUT_TYPE.*"INT"/);
    expect(refusalOf(`to_csv(named_struct('a', array(1)))`, []).message).toMatch(/field a .*"ARRAY<INT>"/);
    expect(refusalOf(`to_csv(named_struct('a', 1), map('quoteAll', 'yes'))`, []).message).toMatch(/INVALID_OPTIONS.*quoteAll="yes" must be true or false/);
    expect(refusalOf(`to_csv(named_struct('a', 1), map('quote', '<<'))`, []).message).toMatch(/INVALID_OPTIONS.*quote="<<" must be one character/);
  });
});
