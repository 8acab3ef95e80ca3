/**
 * The expression parser: Spark's precedence (SqlBaseParser: OR < AND < NOT < predicates <
 * comparisons < | < ^ < & < + - || < * / % div < unary < postfix), literals with Spark's types, and
 * PARSE_SYNTAX_ERROR with the position and what was expected. Shapes are checked through Spark's
 * SQL text of the analyzed tree, which parenthesizes every operator as Spark prints it.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, compileExpression, type ExpressionError } from '../../lib/engine/expr';
import { parseExpression, parseNamedExpression } from '../../lib/engine/expr/parser';
import { typeName } from '../../lib/engine/expr/types';

const COLS = parseDdlColumns(
  'a INT, b INT, c INT, s STRING, t STRING, ok BOOLEAN, `odd name` INT, arr ARRAY<INT>, m MAP<STRING, INT>, st STRUCT<f: INT, g: STRUCT<h: STRING>>',
);
const sqlOf = (text: string) => analyzeExpression(text, COLS).sql;
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, COLS).evaluate(row);
const typeOf = (text: string) => typeName(analyzeExpression(text, COLS).type);

function syntaxError(text: string): ExpressionError {
  try {
    parseExpression(text);
  } catch (e) {
    return e as ExpressionError;
  }
  throw new Error(`${text} parsed`);
}

describe('precedence, as Spark groups operators', () => {
  it.each([
    ['a + b * c', '(a + (b * c))'],
    ['a * b + c', '((a * b) + c)'],
    ['a - b - c', '((a - b) - c)'],
    ['a % b * c', '((a % b) * c)'],
    ['a div b * c', '((a div b) * c)'],
    ['a + b = c', '((a + b) = c)'],
    ['s || t = s', '(concat(s, t) = s)'],
    ['a & b + c', '(a & (b + c))'],
    ['a | b & c', '(a | (b & c))'],
    ['a = 1 OR b = 2 AND c = 3', '((a = 1) OR ((b = 2) AND (c = 3)))'],
    ['NOT a = 1 AND ok', '((NOT (a = 1)) AND ok)'],
    ['a IS NULL OR ok', '((a IS NULL) OR ok)'],
    ['a + 1 IS NOT NULL', '((a + 1) IS NOT NULL)'],
    ['a BETWEEN 1 AND 3 AND ok', '(between(a, 1, 3) AND ok)'],
    ['-a * b', '((- a) * b)'],
    ['-a::BIGINT', '(- CAST(a AS BIGINT))'],
    ['a <=> b', '(a <=> b)'],
    ['a == b', '(a = b)'],
    ['a != b', '(NOT (a = b))'],
    ['a NOT IN (1, 2)', '(NOT (a IN (1, 2)))'],
  ])('%s groups as %s', (text, sql) => {
    expect(sqlOf(text)).toBe(sql);
  });

  it('evaluates left to right within a level and binds * before +', () => {
    expect(value('1 - 2 - 3')).toBe(-4);
    expect(value('2 + 3 * 4')).toBe(14);
    expect(value('10 div 3 * 2')).toBe(6); // (10 div 3) * 2
    expect(value('2 * 3 % 4')).toBe(2); // (2 * 3) % 4
    expect(value('NOT false AND false')).toBe(false); // (NOT false) AND false
    expect(value('true OR true AND false')).toBe(true); // true OR (true AND false)
  });
});

describe('literals have Spark types', () => {
  it.each([
    ['1', 'INT'],
    ['2147483648', 'BIGINT'],
    ['-2147483648', 'INT'],
    ['1L', 'BIGINT'],
    ['1S', 'SMALLINT'],
    ['1Y', 'TINYINT'],
    ['1.5', 'DECIMAL(2,1)'],
    ['0.05', 'DECIMAL(2,2)'],
    ['1.50', 'DECIMAL(3,2)'],
    ['1.5BD', 'DECIMAL(2,1)'],
    ['1.5D', 'DOUBLE'],
    ['1.5F', 'FLOAT'],
    ['1e3', 'DOUBLE'],
    ['12345678901234567890', 'DECIMAL(20,0)'],
    ["'x'", 'STRING'],
    ['TRUE', 'BOOLEAN'],
    ['NULL', 'VOID'],
    ["DATE '2026-10-01'", 'DATE'],
    ["TIMESTAMP '2026-10-01 12:00:00'", 'TIMESTAMP'],
  ])('%s is %s', (text, type) => {
    expect(typeOf(text)).toBe(type);
  });

  it('reads values exactly', () => {
    expect(value('1e3')).toBe(1000);
    expect(value('9223372036854775807L')).toBe(9223372036854775807n);
    expect(value('1.50')).toBe('1.50');
    expect(value('-0.5')).toBe('-0.5');
    expect(value("DATE '2026-10-01'")).toBe('2026-10-01');
    // 2026-10-01T12:00:00.5Z: 1790856000 s since the epoch, plus half a second, in microseconds
    expect(value("TIMESTAMP '2026-10-01 12:00:00.5'")).toBe(1_790_856_000_500_000);
  });

  it('reads backslash escapes and concatenates adjacent strings (no doubled-quote escape)', () => {
    expect(value("'It''s'")).toBe('Its');
    expect(value("'a' 'b' \"c\"")).toBe('abc');
    expect(value("'tab\\there'")).toBe('tab\there');
    expect(value("'quote \\' here'")).toBe("quote ' here");
    expect(value("'back\\\\slash'")).toBe('back\\slash');
    expect(value("'\\u0041'")).toBe('A');
  });

  it.each([
    // the type spans the fields the literal names (Spark's DayTimeIntervalType(start, end))
    ["INTERVAL '10' MINUTE", 600_000_000, 'INTERVAL MINUTE'],
    ['INTERVAL 10 MINUTES', 600_000_000, 'INTERVAL MINUTE'],
    ['INTERVAL 1 HOUR 30 MINUTES', 5_400_000_000, 'INTERVAL HOUR TO MINUTE'],
    ["INTERVAL '10 minutes'", 600_000_000, 'INTERVAL MINUTE'],
    ['INTERVAL 2 DAYS', 172_800_000_000, 'INTERVAL DAY'],
  ])('%s is a day-time interval of %d µs, %s', (text, micros, type) => {
    // (an interval output column holds Spark's text of it: its µs are read through a timestamp)
    expect(value(`unix_micros(TIMESTAMP '1970-01-01 00:00:00' + ${text})`)).toBe(micros);
    expect(typeOf(text)).toBe(type);
  });
});

describe('names', () => {
  it('reads columns case-insensitively, backticked names, fields, elements and map keys', () => {
    const row = { a: 7, 'odd name': 3, arr: [10, 20], m: { k: 5 }, st: { f: 1, g: { h: 'deep' } } };
    expect(value('A', row)).toBe(7);
    expect(value('`odd name` + 1', row)).toBe(4);
    expect(value('arr[1]', row)).toBe(20);
    expect(value("m['k']", row)).toBe(5);
    expect(value('st.f', row)).toBe(1);
    expect(value('st.g.h', row)).toBe('deep');
    expect(value('ST.G.H', row)).toBe('deep');
  });
});

describe('syntax errors: PARSE_SYNTAX_ERROR, where, and what was expected', () => {
  it.each([
    ['1 +', 3, /end of input: expected an expression/],
    ['(1 + 2', 6, /expected '\)'/],
    ['a b', 2, /expected the end of the expression/],
    ['CASE WHEN a THEN 1', 18, /expected WHEN, ELSE or END/],
    ['a IN 1', 5, /expected '\(' after IN/],
    ['f(1,', 4, /expected an expression/],
    ["'open", 0, /the string is not closed/],
    ['a IS 3', 5, /NULL, TRUE, FALSE or DISTINCT FROM after IS/],
  ])('%s fails at %d', (text, pos, message) => {
    const e = syntaxError(text);
    expect(e.errorClass).toBe('PARSE_SYNTAX_ERROR');
    expect(e.position).toBe(pos);
    expect(e.message).toMatch(/^\[PARSE_SYNTAX_ERROR\] Syntax error at or near /);
    expect(e.message).toMatch(message);
  });

  it('takes a bare alias in a selectExpr item, and nothing after it', () => {
    expect(parseNamedExpression('a b').alias).toBe('b');
    expect(parseNamedExpression('a + 1 AS `the sum`').alias).toBe('the sum');
    expect(() => parseNamedExpression('a b c')).toThrow(/at position 5/);
  });

  it('refuses a type CAST does not know, naming it', () => {
    expect(() => parseExpression('CAST(a AS INTEGR)')).toThrow(/UNSUPPORTED_DATATYPE.*INTEGR/);
  });
});
