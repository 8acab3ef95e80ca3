/**
 * Issue 29's types in the DDL parser and the JSON reader: DECIMAL read from the number's text
 * (HALF_UP to the scale, Spark's JSON reader), DATE, and ARRAY/MAP/STRUCT to any depth. Expected
 * values are worked out from FORMAT-3's rules, not taken from the reader.
 */
import { partitionValues } from '../../lib/aws/s3/file-rules';
import { ddlOf, hiveTypeOf, parseDdlType } from '../../lib/engine/ddl';
import { dateOfEpochDay, epochDayOf, parseDate } from '../../lib/engine/dates';
import { decimalOfText, divideHalfUp, formatDecimal, unscaledOf } from '../../lib/engine/decimal';
import { outputValue, parseSchema } from '../../lib/engine/schema';
import { parseJsonLine } from '../../lib/engine/json-record';

function good(ddl: string, line: string): Record<string, unknown> {
  const r = parseJsonLine(parseSchema(ddl), line);
  if (!r.ok) throw new Error(`refused ${line}: ${r.reason}`);
  return r.row;
}

function reason(ddl: string, line: string): string {
  const r = parseJsonLine(parseSchema(ddl), line);
  if (r.ok) throw new Error(`accepted ${line}`);
  return r.reason;
}

describe('Spark DDL with nested types', () => {
  it('reads DECIMAL with and without precision, DATE, and nested types to any depth', () => {
    const s = parseSchema(
      'id BIGINT, price DECIMAL(10,2), d DATE, n NUMERIC, lines ARRAY<STRUCT<sku: STRING, qty INT, price: DECIMAL(10,2)>>, tags MAP<STRING, ARRAY<INT>>',
    );
    expect(s.columns.map((c) => `${c.name} ${ddlOf(c)}`)).toEqual([
      'id BIGINT',
      'price DECIMAL(10,2)',
      'd DATE',
      'n DECIMAL(10,0)',
      'lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>',
      'tags MAP<STRING, ARRAY<INT>>',
    ]);
    expect(s.numberText).toBe(true);
    expect(parseSchema('a STRING, b INT').numberText).toBeUndefined();
  });

  it('takes backticked names holding any character, NOT NULL and COMMENT', () => {
    const s = parseSchema("`odd, name` STRING NOT NULL COMMENT 'a, b', `back``tick` INT, s STRUCT<`x y`: INT>");
    expect(s.columns.map((c) => c.name)).toEqual(['odd, name', 'back`tick', 's']);
    expect(ddlOf(s.columns[2])).toBe('STRUCT<`x y`: INT>');
  });

  it('gives Hive types for a Glue table', () => {
    expect(hiveTypeOf(parseDdlType('ARRAY<STRUCT<sku: STRING, price: DECIMAL(10,2), d: DATE, m: MAP<STRING, SMALLINT>>>'))).toBe(
      'array<struct<sku:string,price:decimal(10,2),d:date,m:map<string,smallint>>>',
    );
  });

  it.each([
    ['a DECIMAL(39,2)', /a is DECIMAL\(39,2\): the precision must be 1 to 38/],
    ['a DECIMAL(5,6)', /scale at most the precision/],
    ['a MAP<INT, STRING>', /a is a MAP with INT keys; JSON object keys are strings: declare MAP<STRING, \.\.\.>/],
    ['a ARRAY<INT', /text ends early; expected ">" to close ARRAY</],
    ['s STRUCT<x: INT, x: STRING>', /struct field x is declared twice/],
    ['a `b', /backticked name is not closed/],
  ])('refuses %s naming the rule', (ddl, message) => {
    expect(() => parseSchema(ddl)).toThrow(message);
  });
});

describe('DECIMAL values', () => {
  it('rounds HALF_UP to the scale from the text, as Spark sets the scale', () => {
    expect(['0.1', '1', '0.125', '1.005', '-0.125', '-0.124', '2.5e-1', '1E2', '0'].map((t) => decimalOfText(t, 10, 2))).toEqual([
      '0.10',
      '1.00',
      '0.13',
      '1.01',
      '-0.13',
      '-0.12',
      '0.25',
      '100.00',
      '0.00',
    ]);
  });

  it('refuses more integer digits than p − s, and non-numbers', () => {
    expect(decimalOfText('12345678.99', 10, 2)).toBe('12345678.99');
    expect(decimalOfText('123456789.1', 10, 2)).toBeNull();
    expect(decimalOfText('99999999.995', 10, 2)).toBeNull(); // rounds up to 9 integer digits
    expect(decimalOfText('abc', 10, 2)).toBeNull();
    expect(decimalOfText('.', 10, 2)).toBeNull();
  });

  it('keeps 38 digits exactly, and formats small and negative values', () => {
    const big = '1234567890123456789012345678.0123456789';
    expect(decimalOfText(big, 38, 10)).toBe(big);
    expect(formatDecimal(-5n, 2)).toBe('-0.05');
    expect(formatDecimal(7n, 0)).toBe('7');
    expect(unscaledOf('-0.05')).toBe(-5n);
    expect([divideHalfUp(5n, 3n), divideHalfUp(-5n, 3n), divideHalfUp(3n, 2n), divideHalfUp(-3n, 2n)]).toEqual([2n, -2n, 2n, -2n]);
  });

  it('is read from the JSON text, never through a double', () => {
    // 0.1 + 0.2 through doubles is 0.30000000000000004; 1.005 as a double is 1.00499999999999989...
    const row = good('k STRING, a DECIMAL(38,20), b DECIMAL(10,2)', '{"k":"x","a":0.30000000000000000001,"b":1.005}');
    expect(row).toEqual({ k: 'x', a: '0.30000000000000000001', b: '1.01' });
  });

  it('reads the same value through a double when every literal of the line has at most 15 significant digits', () => {
    // the fast path: JSON.parse, then the double's shortest text; it must agree with the text itself
    let seed = 29;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 5000; i++) {
      const digits = String(next()).padStart(10, '0') + String(next() % 100000).padStart(5, '0');
      const point = next() % 16;
      const literal = `${next() % 2 ? '-' : ''}${digits.slice(0, point).replace(/^0+/, '') || '0'}.${digits.slice(point) || '0'}`;
      const row = good('p DECIMAL(38,12)', `{"p":${literal}}`);
      expect([literal, row.p]).toEqual([literal, decimalOfText(literal, 38, 12)]);
    }
    expect(good('b DECIMAL(10,2)', '{"b":1.005}').b).toBe('1.01'); // 1.00499999999999989... as a double
  });

  it('makes a value with too many integer digits a dead letter naming the column, the rule and a wider type', () => {
    expect(reason('p DECIMAL(4,2)', '{"p":123.4}')).toBe(
      'column p (DECIMAL(4,2)) has number 123.4: needs more than 2 digits before the point; declare the column DECIMAL(14,2) or wider (at most 38 digits)',
    );
    expect(reason('p DECIMAL(38,2)', `{"p":1${'0'.repeat(36)}}`)).toMatch(
      /needs more than 36 digits before the point; declare the column with a smaller scale, e\.g\. DECIMAL\(38,1\), or DOUBLE$/,
    );
    expect(reason('p DECIMAL(38,0)', `{"p":1${'0'.repeat(38)}}`)).toMatch(/more than the 38 a DECIMAL holds: declare the column DOUBLE or STRING$/);
    // a number past a double's range: no DECIMAL or DOUBLE holds it (its text is not kept on the fast path)
    expect(reason('p DECIMAL(10,2)', '{"p":1e100000000}')).toBe(
      'column p (DECIMAL(10,2)) has a number above 1.8e308 (a huge exponent): needs more than 8 digits before the point, more than a DECIMAL or a DOUBLE holds: declare the column STRING to keep its text',
    );
    // a wider DECIMAL is one that holds this number's digits
    expect(reason('p DECIMAL(10,2)', `{"p":1${'0'.repeat(20)}}`)).toMatch(/declare the column DECIMAL\(23,2\) or wider/);
    expect(reason('p DECIMAL(4,2)', '{"p":"1.5x"}')).toMatch(
      /column p \(DECIMAL\(4,2\)\) has string "1\.5x": expected a JSON number, or a string of one \(Java's BigDecimal text/,
    );
    expect(reason('p DECIMAL(4,2)', '{"p":"123.5"}')).toMatch(
      /has string "123\.5": needs more than 2 digits before the point; declare the column DECIMAL\(14,2\)/,
    );
  });

  it("takes a string of a number as Spark's JSON reader does (Java's BigDecimal of the text without commas), HALF_UP to the scale", () => {
    const ddl = 'p DECIMAL(10,2)';
    const read = (text: string) => good(ddl, `{"p":${JSON.stringify(text)}}`).p;
    expect(['1.5', '1,234.5', '1e2', '+7', '-0.005', '.5', '2.', '1.2E-1', '\u0663.5'].map(read)).toEqual([
      '1.50',
      '1234.50',
      '100.00',
      '7.00',
      '-0.01',
      '0.50',
      '2.00',
      '0.12',
      '3.50',
    ]);
    // BigDecimal takes no blank, and Spark refuses an empty string for every type but STRING
    for (const text of [' 1.2', '1.2 ', '', '1..2', 'NaN', '0x10', '--1'])
      expect([text, reason(ddl, `{"p":${JSON.stringify(text)}}`)]).toEqual([text, expect.stringMatching(/expected a JSON number, or a string of one/)]);
  });
});

describe('DATE values', () => {
  it('takes days of years 1 to 9999, leap days by the Gregorian rules', () => {
    expect(['2026-10-01', '2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31'].map(parseDate)).toEqual([
      '2026-10-01',
      '2024-02-29',
      '2000-02-29',
      '0001-01-01',
      '9999-12-31',
    ]);
    expect(['2026-02-30', '1900-02-29', '2026-13-01', '0000-01-01', '2026-1-01', '2026-10-01T00:00'].map(parseDate)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  it('counts days from 1970-01-01 both ways', () => {
    expect(epochDayOf('1970-01-02')).toBe(1);
    expect(epochDayOf('1969-12-31')).toBe(-1);
    expect(epochDayOf('2026-10-01')).toBe(20727);
    for (const d of ['0001-01-01', '0050-06-15', '1600-02-29', '9999-12-31']) expect(dateOfEpochDay(epochDayOf(d))).toBe(d);
  });

  it('makes an impossible day a dead letter', () => {
    expect(reason('d DATE', '{"d":"2026-02-30"}')).toMatch(/^column d \(DATE\) has string "2026-02-30": expected "YYYY-MM-DD"/);
  });
});

describe('nested records', () => {
  const ddl =
    'order_id STRING, customer STRUCT<id: BIGINT, country: STRING>, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, attrs MAP<STRING, INT>';

  it('types every level: absent struct fields are null, undeclared ones dropped, BIGINT exact inside a struct', () => {
    const row = good(
      ddl,
      '{"order_id":"o1","customer":{"id":9007199254740993,"tier":"gold"},"lines":[{"sku":"A","qty":2,"price":9.999},null,{"sku":"B"}],"attrs":{"x":1,"y":null}}',
    );
    expect(row).toEqual({
      order_id: 'o1',
      customer: { id: 9007199254740993n, country: null },
      lines: [{ sku: 'A', qty: 2, price: '10.00' }, null, { sku: 'B', qty: null, price: null }],
      attrs: { x: 1, y: null },
    });
  });

  it('names the path of a value that does not fit', () => {
    expect(reason(ddl, '{"order_id":"o1","customer":null,"lines":[{"sku":"A","qty":2.5,"price":1}],"attrs":{}}')).toMatch(
      /^column lines\[0\]\.qty \(INT\) has number 2\.5: expected a JSON integer/,
    );
    expect(reason(ddl, '{"order_id":"o1","customer":null,"lines":[],"attrs":{"k":"v"}}')).toMatch(/^column attrs\["k"\] \(INT\) has string "v"/);
    expect(reason(ddl, '{"order_id":"o1","customer":[1],"lines":[],"attrs":{}}')).toMatch(
      /^column customer \(STRUCT<id: BIGINT, country: STRING>\) has array \[1\]: expected a JSON object/,
    );
  });

  it('keeps a map key named __proto__ as data', () => {
    const row = good('m MAP<STRING, INT>', '{"m":{"__proto__":1,"a":2}}');
    const m = row.m as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype);
  });

  it('outputs nested values by their types: bigints as digits, decimals as their text', () => {
    const s = parseSchema(ddl);
    const row = good(ddl, '{"order_id":"o1","customer":{"id":9007199254740993,"country":"DE"},"lines":[{"sku":"A","qty":1,"price":0.5}],"attrs":{}}');
    expect(s.columns.map((c) => outputValue(c, row[c.name]))).toEqual([
      'o1',
      { id: '9007199254740993', country: 'DE' },
      [{ sku: 'A', qty: 1, price: '0.50' }],
      {},
    ]);
  });

  it('keeps a STRING column holding a nested value as its JSON text in the number-text mode too', () => {
    const row = good('k STRING, raw STRING, p DECIMAL(5,1)', '{"k":"a","raw":{"x":[1,2.5]},"p":1}');
    expect(row.raw).toBe('{"x":[1,2.5]}');
  });
});

describe('partition folders of the new types', () => {
  it('reads DATE and DECIMAL folders in the declared type, and names the folder when one does not fit', () => {
    const schema = parseSchema('v INT, dt DATE, band DECIMAL(4,1)');
    expect(
      partitionValues(schema, [
        ['dt', '2026-10-01'],
        ['band', '2.25'],
      ]),
    ).toEqual({
      values: [
        ['dt', '2026-10-01'],
        ['band', '2.3'],
      ],
    });
    expect(partitionValues(schema, [['dt', '2026-02-30']])).toEqual({
      error: "partition folder dt=2026-02-30 is not a DATE (the schema's type of dt): rename the folder or declare dt STRING",
    });
    expect(partitionValues(schema, [['band', '12345']])).toEqual({
      error: "partition folder band=12345 is not a DECIMAL(4,1) (the schema's type of band): rename the folder or declare band STRING",
    });
  });
});
