/**
 * to_number, try_to_number, to_char and to_varchar (number-format.ts): Spark's ToNumber,
 * TryToNumber and ToCharacterBuilder over ToNumberParser. The expectations are Spark's own: its
 * function docs, StringExpressionsSuite's ToNumber / ToCharacter cases, the golden files
 * string-functions.sql.out and postgreSQL/numeric.sql.out (values and result types), the
 * INVALID_FORMAT error messages, and a few cases worked out by hand from ToNumberParser's rules
 * (marked); never sluice's output.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('s STRING, f STRING, d DECIMAL(38,10), n BIGINT, b BOOLEAN, day DATE');
const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const typeOf = (text: string) => compileExpression(text, COLS).sqlType;
const toNumber = (s: string, fmt: string) => value(`to_number(${q(s)}, ${q(fmt)})`);
const tryToNumber = (s: string, fmt: string) => value(`try_to_number(${q(s)}, ${q(fmt)})`);
const toChar = (x: string, fmt: string) => value(`to_char(${x}, ${q(fmt)})`);
const refusal = (text: string) => refusalOf(text, COLS);

describe('to_number and try_to_number', () => {
  it("reads Spark's doc examples", () => {
    for (const f of [toNumber, tryToNumber]) {
      expect(f('454', '999')).toBe('454');
      expect(f('454.00', '000.00')).toBe('454.00');
      expect(f('12,454', '99,999')).toBe('12454');
      expect(f('$78.12', '$99.99')).toBe('78.12');
      expect(f('12,454.8-', '99,999.9S')).toBe('-12454.8');
    }
  });

  it('is a DECIMAL of all the format digits, scaled by those after its point (the golden files)', () => {
    expect(typeOf("to_number('454', '000')")).toEqual({ type: 'DECIMAL', precision: 3, scale: 0 });
    expect(typeOf("to_number('454.2', '000.0')")).toEqual({ type: 'DECIMAL', precision: 4, scale: 1 });
    expect(typeOf("to_number('12,454', '00,000')")).toEqual({ type: 'DECIMAL', precision: 5, scale: 0 });
    expect(typeOf("to_number('$78.12', '$00.00')")).toEqual({ type: 'DECIMAL', precision: 4, scale: 2 });
    expect(typeOf("to_number('12,454.8-', '00,000.9MI')")).toEqual({ type: 'DECIMAL', precision: 6, scale: 1 });
    expect(typeOf("to_number('0.00001-', '9.999999S')")).toEqual({ type: 'DECIMAL', precision: 7, scale: 6 });
    expect(typeOf("to_number('.0', '99999999.99999999')")).toEqual({ type: 'DECIMAL', precision: 16, scale: 8 });
    expect(typeOf("try_to_number('34,50', '999,99')")).toEqual({ type: 'DECIMAL', precision: 5, scale: 0 });
    expect(typeOf("to_number('1', 'S$999,0,0,0,999.00000')")).toEqual({ type: 'DECIMAL', precision: 14, scale: 5 });
  });

  it('gives the values of the golden files, padded to the scale', () => {
    expect(toNumber('454', '000')).toBe('454');
    expect(toNumber('454.2', '000.0')).toBe('454.2');
    expect(toNumber('12,454', '00,000')).toBe('12454');
    expect(toNumber('$78.12', '$00.00')).toBe('78.12');
    expect(toNumber('+454', 'S000')).toBe('454');
    expect(toNumber('-454', 'S000')).toBe('-454');
    expect(toNumber('12,454.8-', '00,000.9MI')).toBe('-12454.8');
    expect(toNumber('00,454.8-', '00,000.9MI')).toBe('-454.8');
    expect(toNumber('<00,454.8>', '00,000.9PR')).toBe('-454.8');
    expect(toNumber('0.00001-', '9.999999S')).toBe('-0.000010');
    expect(toNumber('.0', '99999999.99999999')).toBe('0.00000000');
    expect(toNumber('0', '99.99')).toBe('0.00');
    expect(toNumber('.01-', '99.99S')).toBe('-0.01');
    expect(toNumber('34,50', '999,99')).toBe('3450');
  });

  it("reads StringExpressionsSuite's positive cases", () => {
    const cases: [string, string, string][] = [
      ['$345', 'S$999,099.99', '345.00'],
      ['-$12,345.67', 'S$999,099.99', '-12345.67'],
      ['454,123', '999,099', '454123'],
      ['$045', 'S$999,099.99', '45.00'],
      ['454', '099', '454'],
      ['454.', '099.99', '454.00'],
      ['454.6', '099D99', '454.60'],
      ['454.67', '099.00', '454.67'],
      ['  454 ', '9099', '454'],
      ['454.67', '099.99', '454.67'],
      ['$454', '$999', '454'],
      ['  454,123 ', '999G099', '454123'],
      ['$454,123', '$999G099', '454123'],
      ['+$89,1,2,3,45.123', 'S$999,0,0,0,999.00000', '8912345.12300'],
      ['-454', 'S999', '-454'],
      ['+454', 'S999', '454'],
      ['454', '999PR', '454'],
      [' 454 ', '999PR', '454'],
      ['454-', '999MI', '-454'],
      ['-$54', 'MI$99', '-54'],
      ['036', '999', '36'],
      ['036', 'S099.', '36'],
      ['03.6', '99.9', '3.6'],
      ['0,3,6', '999,999,0', '36'],
    ];
    for (const [s, fmt, expected] of cases) {
      expect([s, fmt, toNumber(s, fmt)]).toEqual([s, fmt, expected]);
      expect([s, fmt, tryToNumber(s, fmt)]).toEqual([s, fmt, expected]);
    }
  });

  it('keeps more digits than a double holds exactly', () => {
    const fmt = '999,999,999,999,999,999,999';
    expect(toNumber('123,456,789,123,456,789,123', fmt)).toBe('123456789123456789123');
    expect(typeOf(`to_number('1', ${q(fmt)})`)).toEqual({ type: 'DECIMAL', precision: 21, scale: 0 });
    expect(toNumber('-12345678901234567890.123456789012345678', 'S99999999999999999999.999999999999999999')).toBe('-12345678901234567890.123456789012345678');
  });

  it('takes the format in any case', () => {
    expect(toNumber('12,454.8-', '99g999d9s')).toBe('-12454.8');
    expect(toNumber('<454>', '999pr')).toBe('-454');
    expect(toNumber('454-', '999mi')).toBe('-454');
  });

  it('reads Java digits and skips Java whitespace among the digits (Character.isDigit / isWhitespace; by hand)', () => {
    expect(toNumber('\u0664\u0665\u0664', '999')).toBe('454');
    expect(toNumber('4\u20035\t4', '999')).toBe('454');
    // a no-break space is not Java whitespace
    expect(tryToNumber('4\u00a054', '999')).toBeNull();
  });

  it('casts a non-STRING input to STRING and reads a column per row', () => {
    expect(value("to_number(454, '999')")).toBe('454');
    expect(value("to_number(s, '99.9')", { s: '12.5' })).toBe('12.5');
    expect(value("try_to_number(s, '99.9')", { s: '12.55' })).toBeNull();
  });

  const mismatches: [string, string][] = [
    ['45', '0,9'],
    ['4', '09'],
    ['454', '09'],
    ['454', '99'],
    ['45', '$99'],
    ['45>', '99PR'],
    ['<45', '99PR'],
    ['454+', '999MI'],
    ['<454', '999PR'],
    ['454>', '999PR'],
    ['<454 ', '999PR'],
    [' 454>', '999PR'],
    ['<<454>>', '999PR'],
    ['45', 'S$999,099.99'],
    ['$345', 'S$099,099.99'],
    ['4D5', '0D9'],
    ['-34,338,492', '99G999G999'],
    ['123456', '999G999'],
    ['xx', '999'],
  ];

  it('refuses an input that does not match with INVALID_FORMAT.MISMATCH_INPUT; try_to_number gives NULL', () => {
    for (const [s, fmt] of mismatches) {
      const e = rowErrorOf(`to_number(${q(s)}, ${q(fmt)})`, COLS);
      expect([s, fmt, e.errorClass]).toEqual([s, fmt, 'INVALID_FORMAT.MISMATCH_INPUT']);
      expect([s, fmt, tryToNumber(s, fmt)]).toEqual([s, fmt, null]);
    }
    expect(rowErrorOf("to_number('xx', '999')", COLS).message).toContain(
      '[INVALID_FORMAT.MISMATCH_INPUT] The format is invalid: 999. The input "STRING" xx does not match the format.',
    );
    expect(rowErrorOf("to_number('454+', '999mi')", COLS).message).toContain('The format is invalid: 999MI. The input "STRING" 454+ does not match');
  });

  it('refuses an input without a digit (Spark 4.1, SPARK-54843: an empty or blank string)', () => {
    for (const [s, fmt] of [
      ['', '99'],
      ['  ', '999'],
      ['$', '$99'],
      ['', '9.9'],
    ]) {
      expect(rowErrorOf(`to_number(${q(s)}, ${q(fmt)})`, COLS).errorClass).toBe('INVALID_FORMAT.MISMATCH_INPUT');
      expect(tryToNumber(s, fmt)).toBeNull();
    }
  });

  it('is NULL for a NULL input; a NULL format is DECIMAL(10,0) and NULL', () => {
    expect(value("to_number(NULL, '999')")).toBeNull();
    expect(typeOf("to_number(NULL, '999')")).toEqual({ type: 'DECIMAL', precision: 3, scale: 0 });
    expect(value("to_number(s, '999')", { s: null })).toBeNull();
    expect(value("try_to_number('454', NULL)")).toBeNull();
    expect(typeOf("to_number('454', NULL)")).toEqual({ type: 'DECIMAL', precision: 10, scale: 0 });
    expect(typeOf("try_to_number('454', CAST(NULL AS STRING))")).toEqual({ type: 'DECIMAL', precision: 10, scale: 0 });
  });

  it('refuses a format past 38 digits (DecimalType: DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION)', () => {
    expect(typeOf(`to_number('1', ${q('9'.repeat(38))})`)).toEqual({ type: 'DECIMAL', precision: 38, scale: 0 });
    const e = refusal(`to_number('1', ${q(`${'9'.repeat(20)}.${'9'.repeat(19)}`)})`);
    expect(e.errorClass).toBe('DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION');
    expect(e.message).toContain('Decimal precision 39 exceeds max precision 38');
  });
});

describe('invalid formats: INVALID_FORMAT.* when the query is built', () => {
  const cases: [string, string][] = [
    ['', 'EMPTY'],
    ['999@', 'UNEXPECTED_TOKEN'],
    ['999M', 'UNEXPECTED_TOKEN'],
    ['999P', 'UNEXPECTED_TOKEN'],
    ['$', 'WRONG_NUM_DIGIT'],
    ['99.99.99', 'WRONG_NUM_TOKEN'],
    ['$$99', 'WRONG_NUM_TOKEN'],
    ['$9MI9', 'UNEXPECTED_TOKEN'],
    ['SMI9', 'UNEXPECTED_TOKEN'],
    ['SS$99', 'WRONG_NUM_TOKEN'],
    ['MI$99MI', 'WRONG_NUM_TOKEN'],
    ['$9MI9MI', 'WRONG_NUM_TOKEN'],
    ['PR$99', 'UNEXPECTED_TOKEN'],
    ['$9PR9', 'UNEXPECTED_TOKEN'],
    ['999PRPR', 'WRONG_NUM_TOKEN'],
    ['9$99', 'CUR_MUST_BEFORE_DIGIT'],
    ['.$99', 'CUR_MUST_BEFORE_DEC'],
    [',099', 'CONT_THOUSANDS_SEPS'],
    [',999,099', 'CONT_THOUSANDS_SEPS'],
    ['9,,09.99', 'CONT_THOUSANDS_SEPS'],
    ['9,99,.99', 'CONT_THOUSANDS_SEPS'],
    ['9,99,', 'CONT_THOUSANDS_SEPS'],
    [',,999,099.99', 'CONT_THOUSANDS_SEPS'],
    ['999G', 'CONT_THOUSANDS_SEPS'],
    ['099.99,9', 'THOUSANDS_SEPS_MUST_BEFORE_DEC'],
    ['99G999G999D999G999', 'THOUSANDS_SEPS_MUST_BEFORE_DEC'],
  ];

  it("refuses StringExpressionsSuite's invalid formats in to_number, try_to_number, to_char and to_varchar", () => {
    for (const [fmt, sub] of cases) {
      for (const call of [`to_number('454', ${q(fmt)})`, `try_to_number('454', ${q(fmt)})`, `to_char(456, ${q(fmt)})`, `to_varchar(d, ${q(fmt)})`]) {
        expect([call, refusal(call).errorClass]).toEqual([call, `INVALID_FORMAT.${sub}`]);
      }
    }
  });

  it("says what is wrong in Spark's words, naming the upper-cased format", () => {
    const message = (fmt: string) => refusal(`to_number('1', ${q(fmt)})`).message;
    expect(message('')).toContain("[INVALID_FORMAT.EMPTY] The format is invalid: ''. The number format string cannot be empty.");
    expect(message('$')).toContain("The format is invalid: '$'. The format string requires at least one number digit.");
    expect(message('999g')).toContain(
      "[INVALID_FORMAT.CONT_THOUSANDS_SEPS] The format is invalid: '999G'. Thousands separators (, or G) must have digits in between them in the number format.",
    );
    expect(message('099.99,9')).toContain('Thousands separators (, or G) may not appear after the decimal point in the number format.');
    expect(message('9$99')).toContain('Currency characters must appear before digits in the number format.');
    expect(message('.$99')).toContain('Currency characters must appear before any decimal point in the number format.');
    expect(message('99.99.99')).toContain('At most one . or D is allowed in the number format.');
    expect(message('$$99')).toContain('At most one $ is allowed in the number format.');
    expect(message('SS$99')).toContain('At most one S is allowed in the number format.');
    expect(message('mi$99mi')).toContain("The format is invalid: 'MI$99MI'. At most one MI is allowed in the number format.");
    expect(message('999PRPR')).toContain('At most one PR is allowed in the number format.');
    expect(message('999@')).toContain(
      "Found the unexpected character '@'' in the format string; the structure of the format string must match: `[MI|S]` `[$]` `[0|9|G|,]*` `[.|D]` `[0|9]*` `[$]` `[PR|MI|S]`.",
    );
    expect(message('$9PR9')).toContain('Found the unexpected digit sequence in the format string');
    expect(message('PR$99')).toContain('Found the unexpected $ in the format string');
  });

  it('needs a constant format (DATATYPE_MISMATCH.NON_FOLDABLE_INPUT)', () => {
    for (const call of ["to_number('1', f)", 'try_to_number(s, f)', 'to_char(d, f)', 'to_varchar(1, f)']) {
      expect([call, refusal(call).errorClass]).toEqual([call, 'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT']);
    }
    expect(value("to_number('12', concat('9', '9'))")).toBe('12');
  });
});

describe('to_char and to_varchar of a number', () => {
  it("writes Spark's doc examples", () => {
    for (const fn of ['to_char', 'to_varchar']) {
      expect(value(`${fn}(454, '999')`)).toBe('454');
      expect(value(`${fn}(454.00, '000D00')`)).toBe('454.00');
      expect(value(`${fn}(12454, '99G999')`)).toBe('12,454');
      expect(value(`${fn}(78.12, '$99.99')`)).toBe('$78.12');
      expect(value(`${fn}(-12454.8, '99G999D9S')`)).toBe('12,454.8-');
    }
  });

  it('is a STRING named to_char, to_varchar included', () => {
    const e = compileExpression("to_varchar(12, '999')", COLS);
    expect(e.sqlType).toEqual({ type: 'STRING' });
    expect(e.sql).toBe("to_char(12, '999')");
    expect(e.evaluate({})).toBe(' 12');
  });

  it('pads 9s with spaces and 0s with zeros before the point (StringExpressionsSuite)', () => {
    const cases: [string, string, string][] = [
      ['454', '9999', ' 454'],
      ['454', '99999', '  454'],
      ['4', '0', '4'],
      ['45', '00', '45'],
      ['454', '000', '454'],
      ['454', '0000', '0454'],
      ['454', '00000', '00454'],
      ['34', '000D00', '034.00'],
      ['56', '$99.99', '$56.00'],
    ];
    for (const [x, fmt, expected] of cases) expect([x, fmt, toChar(x, fmt)]).toEqual([x, fmt, expected]);
  });

  it('writes the point and the digits after it, a lone point as a space', () => {
    const cases: [string, string, string][] = [
      ['0.4542', '.00000', '.45420'],
      ['454.2', '000.0', '454.2'],
      ['454', '000.0', '454.0'],
      ['454.2', '000.00', '454.20'],
      ['454', '000.00', '454.00'],
      ['0.4542', '.0000', '.4542'],
      ['4542', '0000.', '4542 '],
      ['454.2', '0000.00', '0454.20'],
      ['454', '0000.00', '0454.00'],
      ['4542', '00000.', '04542 '],
      ['454.2', '9999.99', ' 454.20'],
      ['454', '9999.99', ' 454.00'],
      ['4542', '99999.', ' 4542 '],
    ];
    for (const [x, fmt, expected] of cases) {
      expect([x, fmt, toChar(x, fmt)]).toEqual([x, fmt, expected]);
      expect([x, fmt, toChar(x, fmt.replace('.', 'D'))]).toEqual([x, fmt, expected]);
    }
  });

  it('writes a comma (or G) between digits, a space where the digits have not started', () => {
    const both: [string, string, string][] = [
      ['12454', '0,0000', '1,2454'],
      ['12454', '00,000', '12,454'],
      ['124543', '000,000', '124,543'],
      ['12', '000,000', '000,012'],
      ['1245436', '0,000,000', '1,245,436'],
      ['12454367', '00,000,000', '12,454,367'],
    ];
    for (const [x, fmt, expected] of both) {
      expect([x, fmt, toChar(x, fmt)]).toEqual([x, fmt, expected]);
      expect([x, fmt, toChar(x, fmt.replace(/,/g, 'G'))]).toEqual([x, fmt, expected]);
    }
    const cases: [string, string, string][] = [
      ['12454', '000,000', '012,454'],
      ['12454', '00,0000', '01,2454'],
      ['12454', '000,0000', '001,2454'],
      ['12454', '0000,0000', '0001,2454'],
      ['12454367', '000,000,000', '012,454,367'],
      ['12454', '999,999', ' 12,454'],
      ['12454', '9,9999', '1,2454'],
      ['12454', '99,9999', ' 1,2454'],
      ['12454', '999,9999', '  1,2454'],
      ['12454', '9999,9999', '   1,2454'],
      ['12454367', '999,999,999', ' 12,454,367'],
    ];
    for (const [x, fmt, expected] of cases) expect([x, fmt, toChar(x, fmt)]).toEqual([x, fmt, expected]);
  });

  it('writes $, and the sign of S (+ or -), MI (space or -) and PR (<...> or two spaces)', () => {
    const big = "CAST('4.31' AS DECIMAL(38,10))";
    const cases: [string, string, string][] = [
      ['78.12', '$99.99', '$78.12'],
      ['78.12', '$00.00', '$78.12'],
      ['83028485', 'S99999999999.9999999', '   +83028485.0000000'],
      ['0', '9999999999999999.999999999999999S', '               0.000000000000000+'],
      [big, '9999999999999999.999999999999999S', '               4.310000000000000+'],
      ['-454.8', '99G999.9S', '   454.8-'],
      ['-454.8', '00G000.0S', '00,454.8-'],
      ['-454', 'S999', '-454'],
      ['-454', '999S', '454-'],
      ['-12454.8', '99G999D9S', '12,454.8-'],
      ['-83028485', '99999999999.9999999S', '   83028485.0000000-'],
      ['4.31', '9999999999999999.999999999999999MI', '               4.310000000000000 '],
      ['0', '9999999999999999.999999999999999MI', '               0.000000000000000 '],
      [big, '9999999999999999.999999999999999MI', '               4.310000000000000 '],
      ['-454.8', '99G999.9MI', '   454.8-'],
      ['-454.8', '00G000.0MI', '00,454.8-'],
      ['-454', '999MI', '454-'],
      ['-12454.8', '99G999D9MI', '12,454.8-'],
      ['-4.31', 'MI9999999999999999.999999999999999', '               -4.310000000000000'],
      ['4.31', '9999999999999999.999999999999999PR', '               4.310000000000000  '],
      ['0', '9999999999999999.999999999999999PR', '               0.000000000000000  '],
      [big, '9999999999999999.999999999999999PR', '               4.310000000000000  '],
      ['-123', '9999999999999999.999PR', '             <123.000>'],
      ['-123.4', '9999999999999999.999PR', '             <123.400>'],
      ['-454.8', '99G999.9PR', '   <454.8>'],
      ['-454.8', '00G000.0PR', '<00,454.8>'],
      ['-454', '999PR', '<454>'],
      ['-12454.8', '99G999D9PR', '<12,454.8>'],
    ];
    for (const [x, fmt, expected] of cases) expect([x, fmt, toChar(x, fmt)]).toEqual([x, fmt, expected]);
  });

  it("formats postgreSQL/numeric.sql's DECIMAL(38,10) values", () => {
    const fmt = (v: string, f: string) => value(`to_char(d, ${q(f)})`, { d: v });
    expect(fmt('-24926804.0450474200', '9999999999999999.999999999999999PR')).toBe('        <24926804.045047420000000>');
    expect(fmt('16397.0384910000', '9999999999999999.999999999999999S')).toBe('           16397.038491000000000+');
    expect(fmt('-34338492.2153970470', 'MI9999999999999999.999999999999999')).toBe('        -34338492.215397047000000');
    expect(fmt('16397.0384910000', 'MI9999999999999999.999999999999999')).toBe('            16397.038491000000000');
    expect(fmt('-83028485.0000000000', '0999999999999999.999999999999999')).toBe('0000000083028485.000000000000000');
    expect(fmt('0.0000000000', 'S0999999999999999.999999999999999')).toBe('+0000000000000000.000000000000000');
    expect(fmt('-24926804.0450474200', 'S0999999999999999.999999999999999')).toBe('-0000000024926804.045047420000000');
  });

  it('writes # for each digit of the format when the value has more digits than it', () => {
    expect(toChar('454', '0')).toBe('#');
    expect(toChar('454', '00')).toBe('##');
    expect(toChar('4.67', '9.9')).toBe('#.#');
    expect(toChar('4.67', '99.9')).toBe('##.#');
    // by hand: a separator after a # is a space, as it follows no digit
    expect(toChar('12454', '9,999')).toBe('# ###');
  });

  it('takes a DECIMAL exactly, a BIGINT past 2^53 exactly, a DOUBLE as DECIMAL(30,15), a STRING as DECIMAL(38,18)', () => {
    const d = '1234567890123456789012345678.0000000001';
    expect(value(`to_char(d, '${'9'.repeat(26)}.${'9'.repeat(10)}')`, { d })).toBe(`${'#'.repeat(26)}.${'#'.repeat(10)}`);
    expect(value(`to_char(d, '${'9'.repeat(28)}.${'9'.repeat(10)}')`, { d })).toBe(d);
    expect(value("to_char(n, '99999999999999999999')", { n: 9007199254740993n })).toBe('    9007199254740993');
    expect(value("to_char(9223372036854775807L, '9G999G999G999G999G999G999')")).toBe('9,223,372,036,854,775,807');
    expect(value("to_char(0.1D, '0.9')")).toBe('0.1');
    expect(value("to_char('12.5', '99.99')")).toBe('12.50');
    expect(rowErrorOf("to_char(s, '999')", COLS, { s: 'abc' }).errorClass).toBe('CAST_INVALID_INPUT');
  });

  it('refuses a value that is not a number (DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE)', () => {
    expect(refusal("to_char(b, '9')").errorClass).toBe('DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE');
    expect(refusal("to_char(b, '9')").message).toContain('"DECIMAL"');
  });

  it('is NULL for a NULL value or format', () => {
    expect(value("to_char(NULL, '999')")).toBeNull();
    expect(value("to_char(d, '999')", { d: null })).toBeNull();
    expect(value('to_char(454, NULL)')).toBeNull();
    expect(typeOf('to_varchar(454, NULL)')).toEqual({ type: 'STRING' });
  });

  it("refuses Spark's BINARY formats: sluice has no BINARY value", () => {
    for (const fmt of ['base64', 'hex', 'utf-8', 'HEX']) {
      const e = refusal(`to_char(s, ${q(fmt)})`);
      expect(e.errorClass).toBe('INVALID_FORMAT.WRONG_NUM_DIGIT');
      expect(e.message).toContain('no BINARY type');
    }
  });
});

describe('to_char and to_varchar of a DATE or TIMESTAMP: date_format', () => {
  it("formats with a datetime pattern, as Spark's ToCharacterBuilder makes it date_format", () => {
    expect(value("to_char(DATE '2016-04-08', 'y')")).toBe('2016');
    expect(value("to_varchar(DATE '2016-04-08', 'y')")).toBe('2016');
    expect(value("to_char(TIMESTAMP '2026-10-01 12:05:09', 'yyyy-MM-dd HH:mm')")).toBe('2026-10-01 12:05');
    expect(value('to_char(day, f)', { day: '2016-07-18', f: 'yyyy/MM/dd' })).toBe('2016/07/18');
    expect(compileExpression("to_varchar(DATE '2016-04-08', 'y')", COLS).sql).toBe("date_format(DATE '2016-04-08', 'y')");
    expect(value('to_char(day, NULL)', { day: '2016-07-18' })).toBeNull();
  });
});
