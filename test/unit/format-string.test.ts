/**
 * format_string / printf (format-string.ts): Spark's FormatString, which hands its Catalyst values
 * to java.util.Formatter in Locale.US. Every expectation is worked out by hand from the Formatter's
 * documented rules and the JDK's Formatter/FormattedFloatingDecimal (HALF_UP rounding of the
 * shortest decimal digits of a double, two's complement for %o/%x in the argument's own width,
 * Java's exception classes and messages) and from what Spark passes for each type (a DATE as its
 * day number, a DECIMAL as Spark's Decimal class, a STRING as a UTF8String); never from sluice's output.
 */
import { readStream } from '../../lib/api/query';
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression, ExpressionError } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('f STRING, s STRING, i INT, x DOUBLE, d DECIMAL(10,2), n BIGINT');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const refusal = (text: string) => refusalOf(text, COLS);
const rowError = (text: string, row: Record<string, unknown>) => rowErrorOf(text, COLS, row);

describe('%s and %S: String.valueOf of the value Spark passes', () => {
  it('prints strings, integers, booleans as their text, and a BIGINT exactly', () => {
    expect(value("format_string('%s|%s|%s|%s', 'a', 42, 9223372036854775807L, true)")).toBe('a|42|9223372036854775807|true');
    expect(value("printf('Hello World %d %s', 100, 'days')")).toBe('Hello World 100 days');
  });

  it('prints a DOUBLE as Double.toString and a FLOAT as Float.toString', () => {
    expect(value("format_string('%s %s %s %s', 1e10, 1D, 0.1D, CAST(0.1 AS FLOAT))")).toBe('1.0E10 1.0 0.1 0.1');
    expect(value("format_string('%S', CAST('NaN' AS DOUBLE))")).toBe('NAN');
  });

  it('prints a DECIMAL as BigDecimal.toString: its exact digits, E-notation below an adjusted exponent of -6', () => {
    expect(value("format_string('%s', CAST('12345678901234567890.125' AS DECIMAL(38,3)))")).toBe('12345678901234567890.125');
    expect(value("format_string('%s', CAST('12.50' AS DECIMAL(4,2)))")).toBe('12.50');
    expect(value("format_string('%s', CAST('0.000001' AS DECIMAL(10,6)))")).toBe('0.000001');
    expect(value("format_string('%s', CAST('0.0000001' AS DECIMAL(10,7)))")).toBe('1E-7');
    expect(value("format_string('%s', CAST('-0.00000012' AS DECIMAL(10,8)))")).toBe('-1.2E-7');
    expect(value("format_string('%s', CAST(0 AS DECIMAL(10,7)))")).toBe('0E-7');
  });

  it('prints a DATE as its day number and a TIMESTAMP as its microseconds (the values Spark passes)', () => {
    expect(value("format_string('%s %d', DATE '1970-01-11', DATE '1969-12-31')")).toBe('10 -1');
    expect(value("format_string('%s', TIMESTAMP '1970-01-01 00:00:01')")).toBe('1000000');
  });

  it('cuts to the precision (UTF-16 units), pads to the width, upper-cases with %S', () => {
    expect(value("format_string('%.3s|%6s|%-6s|%S', 'abcdef', 'ab', 'ab', 'straße')")).toBe('abc|    ab|ab    |STRASSE');
  });
});

describe('%b, %c, %h, %% and %n', () => {
  it('%b is a BOOLEAN as it is, false for null, true for any other value', () => {
    expect(value("format_string('%b %b %b %B %.2b', true, 'false', NULL, false, true)")).toBe('true true false FALSE tr');
  });

  it('%c takes a TINYINT, SMALLINT or INT code point, supplementary ones too', () => {
    expect(value("format_string('%c%c%C%c', 65, 128512, 97, 66Y)")).toBe('A\u{1F600}AB');
    expect(value("format_string('%-3c|', 65)")).toBe('A  |');
  });

  it("%h is Integer.toHexString of the Java value's hashCode", () => {
    // Integer: itself; Boolean: 1231 / 1237; Long: its halves xor'ed; Double: the same of its IEEE bits
    expect(value("format_string('%h %h %H %h %h', 255, -1, 255, true, false)")).toBe('ff ffffffff FF 4cf 4d5');
    expect(value("format_string('%h %h %h %h', 1L, -1L, 1D, NULL)")).toBe('1 0 3ff00000 null');
  });

  it("%h of a STRING is the UTF8String's hashCode: Murmur3 of its UTF-8 bytes, seed 42, which is Spark's hash()", () => {
    for (const s of ['Spark', 'abc', 'héllo wörld', '']) {
      const h = value(`hash('${s}')`) as number;
      expect(value(`format_string('%h', '${s}')`)).toBe((h >>> 0).toString(16));
    }
  });

  it('%% is a percent sign (justified to its width) and %n a line feed; neither takes an argument', () => {
    expect(value("format_string('100%% %s%n%-3%|%3%', 'x')")).toBe('100% x\n%  |  %');
  });
});

describe('%d, %o, %x: integral values', () => {
  it('%d with width, zero padding, signs, parentheses and grouping', () => {
    expect(value("format_string('%5d|%-5d|%05d|%d', 42, 42, -42, -42)")).toBe('   42|42   |-0042|-42');
    expect(value("format_string('%+d %+d % d % d %(d %(d', 5, -5, 5, -5, 5, -5)")).toBe('+5 -5  5 -5 5 (5)');
    expect(value("format_string('%(06d', -42)")).toBe('(0042)');
    // the zero padding goes before the grouped digits, without separators of its own
    expect(value("format_string('%,d %,015d', 1234567, -1234567)")).toBe('1,234,567 -000001,234,567');
  });

  it('%o and %x of a negative value are its two\u2019s complement in its own type (Byte, Short, Integer, Long)', () => {
    expect(value("format_string('%x %x %x %x', -1Y, -1S, -1, -1L)")).toBe('ff ffff ffffffff ffffffffffffffff');
    expect(value("format_string('%o %o %o', 8, -1Y, -1)")).toBe('10 377 37777777777');
    expect(value("format_string('%X %#x %#X %#o %08x %#08x %-6x|', 255, 255, 255, 8, 255, 255, 255)")).toBe('FF 0xff 0XFF 010 000000ff 0x0000ff ff    |');
  });

  it('a BIGINT stays exact past 2^53', () => {
    expect(value("format_string('%d %x %o', 9223372036854775807L, 9223372036854775807L, 9223372036854775807L)")).toBe(
      `9223372036854775807 7fffffffffffffff ${'7'.repeat(21)}`,
    );
    expect(value("format_string('%,d', 9223372036854775807L)")).toBe('9,223,372,036,854,775,807');
    expect(value("format_string('%d %x', CAST('-9223372036854775808' AS BIGINT), CAST('-9223372036854775808' AS BIGINT))")).toBe(
      '-9223372036854775808 8000000000000000',
    );
    expect(value("format_string('%d', 9007199254740993L)")).toBe('9007199254740993');
  });
});

describe('%e, %f, %g: a double rounded HALF_UP from its shortest decimal digits', () => {
  it('%f: 6 decimals by default, HALF_UP on the digits Double.toString shows (1.005 is 1.01, 0.25 is 0.3)', () => {
    expect(value("format_string('%f', 3.14159D)")).toBe('3.141590');
    expect(value("format_string('%.2f %.1f %.0f %.0f %.1f', 1.005D, 0.25D, 0.5D, 2.5D, 0.05D)")).toBe('1.01 0.3 1 3 0.1');
    expect(value("format_string('%.2f %.1f %.0f', 0.0049D, 0.0049D, 0.09D)")).toBe('0.00 0.0 0');
    expect(value("format_string('%.0f %.3f', 9.5D, -0.0D)")).toBe('10 -0.000');
    expect(value("format_string('%f', 1e20)")).toBe('100000000000000000000.000000');
    expect(value("format_string('%,.2f %#.0f %,.3f', 1234567.891D, 3D, 1234.5D)")).toBe('1,234,567.89 3. 1,234.500');
    expect(value("format_string('%(,010.2f|%-8.1f|', -1234.5D, 2D)")).toBe('(1,234.50)|2.0     |');
  });

  it('a FLOAT is formatted as the double it widens to (0.1f is 0.10000000149011612)', () => {
    expect(value("format_string('%.10f', CAST(0.1 AS FLOAT))")).toBe('0.1000000015');
  });

  it('a DOUBLE far past 2^53 keeps the zeros of its shortest digits', () => {
    expect(value("format_string('%.2f', CAST(CAST('12345678901234567890.125' AS DECIMAL(38,3)) AS DOUBLE))")).toBe('12345678901234567000.00');
  });

  it('%e: one digit before the point, an exponent of two digits at least', () => {
    expect(value("format_string('%e', 12345.678D)")).toBe('1.234568e+04');
    expect(value("format_string('%.2E', 0.000123456D)")).toBe('1.23E-04');
    expect(value("format_string('%e %.0e %#.0e', 0D, 15D, 15D)")).toBe('0.000000e+00 2e+01 2.e+01');
    expect(value("format_string('%e', 1e100)")).toBe('1.000000e+100');
    expect(value("format_string('%+.1e|%012.3e', 12345D, -1234.5D)")).toBe('+1.2e+04|-001.235e+03');
  });

  it('%g: precision significant digits; scientific below 10^-4 or from 10^precision; trailing zeros kept', () => {
    expect(value("format_string('%g %g %g %g', 0.0001D, 123456789D, 100000D, 1000000D)")).toBe('0.000100000 1.23457e+08 100000 1.00000e+06');
    expect(value("format_string('%.3g %G %g %.0g', 0.00001234D, 0.00001D, 0D, 5D)")).toBe('1.23e-05 1.00000E-05 0.00000 5');
    expect(value("format_string('%g', 99999.95D)")).toBe('100000');
  });

  it('NaN and Infinity: no zero padding, a sign but no grouping', () => {
    const inf = "CAST('Infinity' AS DOUBLE)";
    const ninf = "CAST('-Infinity' AS DOUBLE)";
    const nan = "CAST('NaN' AS DOUBLE)";
    expect(value(`format_string('%f|%+08.2f|%(f|%E|%010f|%e', ${nan}, ${inf}, ${ninf}, ${nan}, ${nan}, ${ninf})`)).toBe(
      'NaN|+Infinity|(Infinity)|NAN|       NaN|-Infinity',
    );
  });
});

describe('argument indexes', () => {
  it('explicit (2$), relative (<), and an ordinary index that counts on its own', () => {
    expect(value("format_string('%2$s %1$s', 'a', 'b')")).toBe('b a');
    expect(value("format_string('%s %<s %s', 'a', 'b')")).toBe('a a b');
    expect(value("format_string('%2$s %s %s', 'a', 'b')")).toBe('b a b');
    expect(value("format_string('%1$s %1$5s|%2$<s', 'a', 'b')")).toBe('a     a|a');
    // extra arguments are ignored
    expect(value("format_string('%s', 'a', 'b')")).toBe('a');
  });
});

describe('nulls', () => {
  it('a null format is NULL, whatever the arguments (which are then not evaluated)', () => {
    expect(value('format_string(NULL, 1)')).toBeNull();
    expect(value('format_string(f, 1)', { f: null })).toBeNull();
    expect(value('format_string(f, i DIV 0)', { f: null, i: 1 })).toBeNull();
  });

  it('every argument is evaluated, as Spark builds the whole argument list, referenced or not', () => {
    expect(rowError("format_string('%s', s, i DIV 0)", { s: 'a', i: 1 }).errorClass).toBe('DIVIDE_BY_ZERO');
  });

  it('a null argument prints "null" (cut by the precision, upper-cased by an upper conversion), "false" for %b', () => {
    expect(value("format_string('%s|%d|%.2f|%b|%5s|%S|%x|%c|%h', s, i, x, s, s, s, i, i, s)", { s: null, i: null, x: null })).toBe(
      'null|null|nu|false| null|NULL|null|null|null',
    );
    // a NULL literal fits every conversion
    expect(value("format_string('%d %e %c', NULL, NULL, NULL)")).toBe('null null null');
  });
});

describe('the format and the arguments from columns', () => {
  it('formats each row with its own format', () => {
    expect(value('format_string(f, s, i)', { f: '%s=%04d', s: 'k', i: 7 })).toBe('k=0007');
    expect(value('format_string(f, s, i)', { f: '[%2$d]', s: 'k', i: 7 })).toBe('[7]');
    expect(value("format_string('%.1f|%s|%d', x, d, n)", { x: 2.25, d: '-3.10', n: 12 })).toBe('2.3|-3.10|12');
  });

  it("a format from a column fails the row with Java's exception", () => {
    const e = rowError('format_string(f, x)', { f: '%d', x: 1.5 });
    expect(e.errorClass).toBe('INVALID_PARAMETER_VALUE.PATTERN');
    expect(e.message).toContain("'%d' fails with java.util.IllegalFormatConversionException: d != java.lang.Double");
    expect(rowError('format_string(f, x)', { f: '%q', x: 1 }).message).toContain("UnknownFormatConversionException: Conversion = 'q'");
    // Spark checks %0$ in a literal only; from a column it is Java 17's IllegalFormatArgumentIndexException
    expect(rowError('format_string(f, s)', { f: '%0$s', s: 'a' }).message).toContain('IllegalFormatArgumentIndexException: Illegal format argument index = 0');
    // a type error is raised for a non-null value only
    expect(value('format_string(f, x)', { f: '%d', x: null })).toBe('null');
  });

  it('%c of a value that is no code point is a row error even with a literal format', () => {
    const e = rowError("format_string('%c', i)", { i: -1 });
    expect(e.errorClass).toBe('INVALID_PARAMETER_VALUE.PATTERN');
    expect(e.message).toContain('IllegalFormatCodePointException: Code point = 0xffffffff');
    expect(rowError("format_string('%c', i)", { i: 0x110000 }).message).toContain('Code point = 0x110000');
  });
});

describe("Java's exceptions for a literal format are refused before the query runs", () => {
  const refused = (text: string, fragment: string) => {
    const e = refusal(text);
    expect(e).toBeInstanceOf(ExpressionError);
    expect(e.errorClass).toBe('INVALID_PARAMETER_VALUE.PATTERN');
    expect(e.message).toContain('`strfmt` in `');
    expect(e.message).toContain(fragment);
  };

  it('UnknownFormatConversionException', () => {
    refused("format_string('%q')", "'%q' fails with java.util.UnknownFormatConversionException: Conversion = 'q'");
    refused("format_string('50%')", "Conversion = '%'");
    refused("format_string('%-', 1)", "Conversion = '-'");
    refused("format_string('%.f', 1D)", "Conversion = '.'");
  });

  it('DuplicateFormatFlagsException', () => {
    refused("format_string('%--5d', 1)", "DuplicateFormatFlagsException: Flags = '-'");
    refused("format_string('%005d', 1)", "DuplicateFormatFlagsException: Flags = '0'");
  });

  it('FormatFlagsConversionMismatchException', () => {
    refused("format_string('%#d', 1)", 'FormatFlagsConversionMismatchException: Conversion = d, Flags = #');
    refused("format_string('%,x', 1)", 'Conversion = x, Flags = ,');
    refused("format_string('%+s', 'a')", 'Conversion = s, Flags = +');
    refused("format_string('%,e', 1D)", 'Conversion = e, Flags = ,');
    refused("format_string('%#g', 1D)", 'Conversion = g, Flags = #');
    refused("format_string('%#b', true)", 'Conversion = b, Flags = #');
    // '#' of %s fails for any argument that is not a Formattable, a null one too
    refused("format_string('%#s', NULL)", 'Conversion = s, Flags = #');
    // a sign flag of %o / %x fails for a Byte, Short, Integer or Long
    refused("format_string('%+x', 255)", 'Conversion = x, Flags = +');
    refused("format_string('%(o', 8L)", 'Conversion = o, Flags = (');
  });

  it('IllegalFormatPrecisionException, MissingFormatWidthException, IllegalFormatFlagsException, IllegalFormatWidthException', () => {
    refused("format_string('%.2d', 1)", 'IllegalFormatPrecisionException: 2');
    refused("format_string('%.1c', 65)", 'IllegalFormatPrecisionException: 1');
    refused("format_string('%-d', 1)", 'MissingFormatWidthException: %-d');
    refused("format_string('%0f', 1D)", 'MissingFormatWidthException: %0f');
    refused("format_string('%-s', 'a')", 'MissingFormatWidthException: %-s');
    refused("format_string('%+ d', 1)", "IllegalFormatFlagsException: Flags = '+ '");
    refused("format_string('%-05d', 1)", "IllegalFormatFlagsException: Flags = '-0'");
    refused("format_string('%5n')", 'IllegalFormatWidthException: 5');
  });

  it('MissingFormatArgumentException, quoting the specifier as Java writes it', () => {
    refused("format_string('%s %s', 'a')", "MissingFormatArgumentException: Format specifier '%s'");
    refused("format_string('%<s')", "Format specifier '%<s'");
    refused("format_string('%3$-5s', 'a', 'b')", "Format specifier '%-3$5s'");
  });

  it('IllegalFormatConversionException names the Java class Spark passes', () => {
    refused("format_string('%d', 1.5D)", 'IllegalFormatConversionException: d != java.lang.Double');
    refused("format_string('%f', 1)", 'f != java.lang.Integer');
    refused("format_string('%e', 1L)", 'e != java.lang.Long');
    refused("format_string('%d', 'a')", 'd != org.apache.spark.unsafe.types.UTF8String');
    refused("format_string('%c', 1L)", 'c != java.lang.Long');
    refused("format_string('%g', true)", 'g != java.lang.Boolean');
    refused("format_string('%d', CAST(NULL AS DOUBLE))", 'd != java.lang.Double');
  });

  it('a DECIMAL is Spark\u2019s own Decimal class, which %e %f %g refuse (its exact digits: %s)', () => {
    refused(
      "format_string('%.2f', CAST('12345678901234567890.125' AS DECIMAL(38,3)))",
      "'%.2f' fails with java.util.IllegalFormatConversionException: f != org.apache.spark.sql.types.Decimal",
    );
    refused("format_string('%d', d)", 'd != org.apache.spark.sql.types.Decimal');
  });

  it("a literal containing %0$ is Spark's INVALID_PARAMETER_VALUE.ZERO_INDEX", () => {
    const e = refusal("format_string('%0$s', 'a')");
    expect(e.errorClass).toBe('INVALID_PARAMETER_VALUE.ZERO_INDEX');
    expect(e.message).toContain('expects `%1$`, `%2$` and so on, but got `%0$`.');
  });
});

describe('what sluice does not format', () => {
  it('refuses %t, %a, %h of a DECIMAL and ARRAY, MAP or STRUCT arguments (UNSUPPORTED_FEATURE)', () => {
    expect(refusal("format_string('%tY', 1L)").errorClass).toBe('UNSUPPORTED_FEATURE');
    expect(refusal("format_string('%a', 1D)").errorClass).toBe('UNSUPPORTED_FEATURE');
    expect(refusal("format_string('%h', d)").errorClass).toBe('UNSUPPORTED_FEATURE');
    for (const arg of ['array(1)', "map('k', 1)", "named_struct('a', 1)"]) {
      const e = refusal(`format_string('%s', ${arg})`);
      expect(e.errorClass).toBe('UNSUPPORTED_FEATURE');
      expect(e.message).toContain('to_json(x)');
    }
  });

  it('returns a STRING; the format is implicitly cast to STRING', () => {
    expect(compileExpression("format_string('%d', 1)", []).sqlType).toEqual({ type: 'STRING' });
    expect(value('format_string(12)')).toBe('12');
  });
});

describe('format_string in a query', () => {
  it("a selectExpr's compiled stage formats the row", () => {
    const plan = readStream.format('json').schema('k STRING, n INT').load('s3://b/in/').selectExpr("format_string('%s-%05d', k, n) AS x").writeStream.plan();
    const [stage] = plan.stages;
    expect(stage.kind).toBe('selectExpr');
    if (stage.kind !== 'selectExpr') return;
    expect(stage.compiled.project({ k: 'a', n: 42 })).toEqual({ x: 'a-00042' });
    expect(stage.compiled.project({ k: null, n: -7 })).toEqual({ x: 'null--0007' });
    expect(stage.compiled.columns.map((c) => [c.name, c.type])).toEqual([['x', 'STRING']]);
  });
});
