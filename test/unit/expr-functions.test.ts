/**
 * Functions beyond the one-line examples of docs/expressions.md: edge cases from Spark's
 * documentation and semantics (substring positions, LIKE escapes, Java's double text in casts,
 * from_json's PERMISSIVE typing), the public cases' expressions, and exactness of BIGINT,
 * DECIMAL and microsecond timestamps beyond 2^53.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, compileExpression, compileFilter, compileSelect } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';

const value = (text: string, row: Record<string, unknown> = {}, ddl = '') => compileExpression(text, ddl === '' ? [] : parseDdlColumns(ddl)).evaluate(row);

describe('strings', () => {
  it.each([
    ["substring('Spark SQL', 0)", 'Spark SQL'],
    ["substring('Spark SQL', 0, 2)", 'Sp'],
    ["substring('Spark SQL', 20)", ''],
    ["substring('Spark SQL', -20, 3)", ''],
    ["substring('Spark SQL', 2, -1)", ''],
    ["substring('a😀b', 2, 1)", '😀'],
    ["left('abc', -1)", ''],
    ["lpad('hi', 1, '??')", 'h'],
    ["trim('\\tx\\t')", '\tx\t'],
    ["locate('bar', 'foobarbar')", 4],
    ["locate('x', 'foobar')", 0],
    ["instr('a😀bc', 'b')", 3],
    ["replace('abc', 'b')", 'ac'],
    ["regexp_extract('abc', 'x(\\\\d)', 1)", ''],
    ["regexp_replace('a.b.c', '\\\\.', '\\\\$')", 'a$b$c'],
    ["regexp_replace('2026-10-01', '(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1')", '01/10/2026'],
    ["split('a,b,,', ',')", ['a', 'b', '', '']],
    ["split('abc', '')", ['a', 'b', 'c']],
    ["initcap('hello  wORLD')", 'Hello  World'],
    ['format_number(0.5, 0)', '0'],
    ['format_number(1.5, 0)', '2'],
    ['format_number(-1234.567D, 2)', '-1,234.57'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });

  it('matches LIKE with % and _, and escapes with \\ or ESCAPE', () => {
    expect(value("'50%' LIKE '50\\\\%'")).toBe(true);
    expect(value("'500' LIKE '50\\\\%'")).toBe(false);
    expect(value("'a_b' LIKE 'a!_b' ESCAPE '!'")).toBe(true);
    expect(value("'axb' LIKE 'a!_b' ESCAPE '!'")).toBe(false);
    expect(value("'line1\\nline2' LIKE 'line1%'")).toBe(true);
    expect(value("'Spark' NOT LIKE 's%'")).toBe(true);
    expect(value('s RLIKE pattern', { s: 'abc123', pattern: '\\d+' }, 's STRING, pattern STRING')).toBe(true);
  });

  it('concatenates numbers and dates as their text (|| and concat cast them)', () => {
    expect(value("'n=' || 1")).toBe('n=1');
    expect(value("concat('d=', DATE '2026-10-01', ' x=', 1.50)")).toBe('d=2026-10-01 x=1.50');
  });
});

describe('CAST text, as Spark prints values', () => {
  it.each([
    ['CAST(1.0D AS STRING)', '1.0'],
    ['CAST(0.1D AS STRING)', '0.1'],
    ['CAST(1e7 AS STRING)', '1.0E7'],
    ['CAST(1.5e-4 AS STRING)', '1.5E-4'],
    ['CAST(123456.789D AS STRING)', '123456.789'],
    ["CAST(CAST('NaN' AS DOUBLE) AS STRING)", 'NaN'],
    ['CAST(0.1F AS STRING)', '0.1'],
    ['CAST(true AS STRING)', 'true'],
    ["CAST(TIMESTAMP '2026-10-01 12:00:00' AS STRING)", '2026-10-01 12:00:00'],
    ["CAST(TIMESTAMP '2026-10-01 12:00:00.120' AS STRING)", '2026-10-01 12:00:00.12'],
    ['CAST(array(1, 2) AS STRING)', '[1, 2]'],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toBe(expected);
  });

  it.each([
    ["CAST('  42  ' AS BIGINT)", 42],
    ["CAST('-0' AS INT)", 0],
    ["CAST('1.5e2' AS DOUBLE)", 150],
    ["CAST('Infinity' AS DOUBLE)", Number.POSITIVE_INFINITY],
    ["CAST('12.345' AS DECIMAL(5,2))", '12.35'],
    ["CAST('-0.005' AS DECIMAL(4,2))", '-0.01'],
    ['CAST(3.99D AS INT)', 3],
    ['CAST(-3.99D AS INT)', -3],
    ['CAST(-3.99 AS INT)', -3],
    ['CAST(0.1D AS DECIMAL(5,3))', '0.100'],
    ["CAST(' yes ' AS BOOLEAN)", true],
    ["CAST('0' AS BOOLEAN)", false],
    ["CAST('2026-10' AS DATE)", '2026-10-01'],
    ["CAST('2026-10-01T08:30:00' AS DATE)", '2026-10-01'],
    ["CAST('+2026-10-01' AS DATE)", '2026-10-01'],
    ["CAST('02026-1-5' AS DATE)", '2026-01-05'],
    ["TRY_CAST('2026-10 01' AS DATE)", null],
    ["DATE '+2026-1-1'", '2026-01-01'],
    ["CAST(TIMESTAMP '2026-10-01 23:59:59' AS DATE)", '2026-10-01'],
    ["CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS BIGINT)", -1],
    ['CAST(1 AS TIMESTAMP)', 1_000_000],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });
});

describe('exact values beyond 2^53', () => {
  it('keeps a far-future timestamp exact in microseconds', () => {
    // 9999-12-31 23:59:59.999999 is 253402300799999999 µs: beyond 2^53, so a bigint
    const ts = value("TIMESTAMP '9999-12-31 23:59:59.999999'");
    expect(ts).toBe(253402300799999999n);
    expect(value('year(ts)', { ts }, 'ts TIMESTAMP')).toBe(9999);
    expect(value('second(ts)', { ts }, 'ts TIMESTAMP')).toBe(59);
    expect(value('unix_micros(ts)', { ts }, 'ts TIMESTAMP')).toBe(253402300799999999n);
  });

  it('sums DECIMAL(38,0) digits without a double', () => {
    expect(value('d + 1', { d: '99999999999999999999999999999999999998' }, 'd DECIMAL(38,0)')).toBe('99999999999999999999999999999999999999');
  });

  it('divides BIGINT exactly with div', () => {
    expect(value('l div 3', { l: 9223372036854775807n }, 'l BIGINT')).toBe(3074457345618258602n);
  });
});

describe('dates and timestamps', () => {
  it.each([
    ["date_add(DATE '2024-02-28', 1)", '2024-02-29'],
    ["add_months(DATE '2024-01-31', 1)", '2024-02-29'],
    ["add_months(DATE '2024-03-31', -1)", '2024-02-29'],
    ["DATE '2026-10-01' + 3", '2026-10-04'],
    ["DATE '2026-10-01' - INTERVAL 1 MONTH", '2026-09-01'],
    ["weekofyear(DATE '2021-01-01')", 53],
    ["weekofyear(DATE '2026-12-31')", 53],
    ["dayofweek(DATE '2026-10-04')", 1],
    ["trunc(DATE '2026-11-15', 'QUARTER')", '2026-10-01'],
    ["trunc(DATE '2026-11-15', 'DAY')", null],
    ["datediff(DATE '2026-01-01', DATE '2026-12-31')", -364],
    ["unix_timestamp(TIMESTAMP '1969-12-31 23:59:59.9')", -1],
    ["hour(TIMESTAMP '1969-12-31 23:30:00')", 23],
  ])('%s is %j', (text, expected) => {
    expect(value(text)).toEqual(expected);
  });

  it('adds day-time intervals to timestamps in microseconds', () => {
    expect(value("TIMESTAMP '2026-10-01 12:00:00' - INTERVAL '1.5' SECOND")).toBe(1_790_855_998_500_000);
    expect(value("date_trunc('MINUTE', TIMESTAMP '2026-10-01 12:34:56.789')")).toBe(1_790_858_040_000_000);
  });
});

describe('the public cases', () => {
  it('expr-from-json-kafka-value: from_json then o.*', () => {
    const cols = parseDdlColumns('key STRING, value STRING');
    const first = compileSelect(['key', "from_json(value, 'a INT, b STRING') AS o"], cols);
    const second = compileSelect(['key', 'o.*'], first.columns);
    expect(second.columns.map((c) => [c.name, c.type])).toEqual([
      ['key', 'STRING'],
      ['a', 'INT'],
      ['b', 'STRING'],
    ]);
    const run = (key: string, v: string | null) => second.project(first.project({ key, value: v }));
    expect(run('k1', '{"a": 1, "b": "x"}')).toEqual({ key: 'k1', a: 1, b: 'x' });
    expect(run('k2', '{"a": 2}')).toEqual({ key: 'k2', a: 2, b: null });
    expect(run('k3', '{"b": "y", "c": true}')).toEqual({ key: 'k3', a: null, b: 'y' });
    expect(run('k4', 'not json')).toEqual({ key: 'k4', a: null, b: null });
    expect(run('k5', null)).toEqual({ key: 'k5', a: null, b: null });
  });

  it('expr-groupby-window-and-lower-country: the key and the aggregated expression', () => {
    const cols = parseDdlColumns('order_id STRING, event_time TIMESTAMP, country STRING, amount DECIMAL(10,2), quantity INT');
    const revenue = analyzeExpression('amount * quantity', cols);
    expect(typeName(revenue.type)).toBe('DECIMAL(21,2)');
    expect(value('amount * quantity', { amount: '1.99', quantity: 3 }, 'amount DECIMAL(10,2), quantity INT')).toBe('5.97');
    for (const c of ['US', 'us', 'uS']) expect(value('lower(country)', { country: c }, 'country STRING')).toBe('us');
  });

  it('from_json reads DECIMAL and BIGINT from the number text, and nested types', () => {
    expect(value(`from_json('{"p": 0.1, "n": 9007199254740993}', 'p DECIMAL(10,2), n BIGINT')`)).toEqual({ p: '0.10', n: 9007199254740993n });
    expect(value(`from_json('{"xs": [{"q": 1}, {"q": "bad"}]}', 'xs ARRAY<STRUCT<q: INT>>')`)).toEqual({ xs: [{ q: 1 }, { q: null }] });
    expect(value(`from_json('[1, 2]', 'ARRAY<INT>')`)).toEqual([1, 2]);
    expect(value(`from_json('{"t": "2026-10-01 12:00:00.000001"}', 't TIMESTAMP')`)).toEqual({ t: 1_790_856_000_000_001 });
  });
});

describe('generators', () => {
  it('explodes beside other columns, naming the element as AS says', () => {
    const cols = parseDdlColumns('id INT, tags ARRAY<STRING>');
    const s = compileSelect(['id', 'explode(tags) AS tag'], cols);
    expect(s.columns.map((c) => c.name)).toEqual(['id', 'tag']);
    expect(s.generate({ id: 1, tags: ['a', 'b'] })).toEqual([
      { id: 1, tag: 'a' },
      { id: 1, tag: 'b' },
    ]);
    expect(s.generate({ id: 2, tags: null })).toEqual([]);
    expect(s.generate({ id: 3, tags: [] })).toEqual([]);
  });

  it('projects columns with any name, even __proto__', () => {
    const cols = parseDdlColumns('`a"b` INT');
    const s = compileSelect(['*', '1 AS `x y`', '2 AS `__proto__`'], cols);
    const out = s.project({ 'a"b': 6 });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['a"b', 'x y', '__proto__']);
  });

  it('refuses two generators in one select', () => {
    const cols = parseDdlColumns('a ARRAY<INT>, b ARRAY<INT>');
    expect(() => compileSelect(['explode(a)', 'explode(b)'], cols)).toThrow(/UNSUPPORTED_GENERATOR.MULTI_GENERATOR/);
  });

  it('refuses a generator nested in another expression, as Spark does, before the outer one types it', () => {
    const cols = parseDdlColumns('a ARRAY<INT>, c ARRAY<ARRAY<INT>>');
    const nested = /\[UNSUPPORTED_GENERATOR\.NESTED_IN_EXPRESSIONS\] .*nested in expressions "(.*)"; explode in a select of its own first/;
    for (const text of [
      'size(explode(a))',
      'explode(explode(c))',
      'explode(a) + 1',
      'size(stack(2, 1, 2))',
      'CASE WHEN true THEN explode(a) END',
      'transform(c, x -> explode(x))',
    ]) {
      expect(() => compileSelect([text], cols)).toThrow(nested);
      expect(() => compileExpression(text, cols)).toThrow(nested);
    }
    expect(() => compileSelect(['size(explode(a)) AS n'], cols)).toThrow(/nested in expressions "size\(explode\(a\)\) AS n".*\(at position 6 of/);
    // at the root of a select item it is the generator it always was
    expect(compileSelect(['explode(a) AS x'], cols).columns.map((c) => c.name)).toEqual(['x']);
    expect(compileSelect(['stack(2, 1, 2)'], cols).columns.map((c) => c.name)).toEqual(['col0']);
  });

  it('refuses a generator as a filter', () => {
    const cols = parseDdlColumns('b ARRAY<BOOLEAN>');
    expect(() => compileFilter('explode(b)', cols)).toThrow(
      /\[UNSUPPORTED_GENERATOR\.OUTSIDE_SELECT\] .*found: Filter explode\(b\); explode in a select first/,
    );
  });
});

describe('string order', () => {
  it("is Spark's, by code point (its UTF-8 bytes'), where JS's < puts a character past U+FFFF below U+E000..U+FFFF", () => {
    // U+1F600 (a surrogate pair in UTF-16) is above U+FFFD in code points; its first UTF-16 unit, 0xD83D, is below 0xFFFD
    const row = { a: '\u{1F600}', b: '\uFFFD' };
    const ddl = 'a STRING, b STRING';
    expect(value('a > b', row, ddl)).toBe(true);
    expect(value('a <= b', row, ddl)).toBe(false);
    expect(value('greatest(a, b)', row, ddl)).toBe('\u{1F600}');
    expect(value('least(a, b)', row, ddl)).toBe('\uFFFD');
    expect(value('sort_array(array(a, b))', row, ddl)).toEqual(['\uFFFD', '\u{1F600}']);
    expect(value('array_max(array(a, b, NULL))', row, ddl)).toBe('\u{1F600}');
    // the plain order elsewhere: prefixes first, then by character
    expect(value("'ab' < 'abc' AND 'abc' < 'abd' AND 'B' < 'a'")).toBe(true);
    expect(value('a = b', row, ddl)).toBe(false);
  });
});

describe('md5, sha1, sha2 and crc32 take BINARY: a STRING (its UTF-8 bytes) or NULL, nothing else', () => {
  const refusal = (text: string) => {
    try {
      compileExpression(text, []);
    } catch (e) {
      return (e as Error).message;
    }
    return 'compiled';
  };

  it.each(['md5(123)', 'sha1(1.5D)', 'sha(true)', "sha2(DATE '2026-01-01', 256)", "crc32(TIMESTAMP '2026-01-01 00:00:00')", 'md5(CAST(1 AS BIGINT))'])(
    '%s is refused: ANSI coercion casts no number, BOOLEAN, DATE or TIMESTAMP to BINARY',
    (text) => {
      expect(refusal(text)).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*"BINARY"/);
    },
  );

  it('a STRING, its cast, or NULL is hashed as before; sha2 of another bit length is null', () => {
    expect(value('md5(CAST(123 AS STRING))')).toBe('202cb962ac59075b964b07152d234b70'); // md5 of the bytes "123"
    expect(value('md5(NULL)')).toBeNull();
    expect(value("crc32('')")).toBe(0);
    expect(value("sha2('', 224)")).toBe('d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f');
    expect(value("sha2('abc', 384)")).toBe('cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7');
    expect(value("sha2('abc', 512)")).toBe(
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    );
    expect(value("sha2('abc', 0)")).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(value("sha2('abc', 128)")).toBeNull();
    expect(value("sha2('abc', NULL)")).toBeNull();
  });
});
