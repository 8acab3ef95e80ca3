/**
 * How each file format turns bytes into typed rows, against Spark 4's readers. Expectations are
 * worked by hand from Spark's source: JacksonParser.makeConverter (which JSON token fits which
 * type; SQLConf spark.sql.json.enableExactStringParsing, default true since 4.0), and the suites
 * named in each block.
 */
import { parseSchema } from '../../lib/engine/schema';
import { expectBad, expectGood } from '../helpers/line-readers';

describe('JSON: an integral or TIMESTAMP column takes only an integer token (JacksonParser: VALUE_NUMBER_INT)', () => {
  const schema = parseSchema('k STRING, i INT, l BIGINT, b TINYINT, t TIMESTAMP');
  const good = '{"k":"a","i":1,"l":2,"b":3,"t":"2026-10-01 12:00:00"}';
  const line = (col: string, v: string) => good.replace(new RegExp(`"${col}":[^,}]+`), `"${col}":${v}`);

  it('refuses 1.0 for an INT, 1e2 for a BIGINT, 3.0 for a TINYINT (a float token, though its value is whole)', () => {
    expectBad(schema, good, line('i', '1.0'), /column i \(INT\) has number 1\.0: expected a JSON integer \(a fraction or an exponent/);
    expectBad(schema, good, line('l', '1e2'), /column l \(BIGINT\) has number 1e2: expected a JSON integer/);
    expectBad(schema, good, line('l', '-5E0'), /column l \(BIGINT\) has number -5E0: expected a JSON integer/);
    expectBad(schema, good, line('b', '3.0'), /column b \(TINYINT\) has number 3\.0: expected a JSON integer/);
  });

  it('refuses a fraction for a TIMESTAMP (epoch seconds only as an integer token)', () => {
    expectBad(schema, good, line('t', '1790856000.5'), /column t \(TIMESTAMP\) has number 1790856000\.5: a number is epoch seconds only as a JSON integer/);
    expectBad(schema, good, line('t', '1.7908560E9'), /column t \(TIMESTAMP\) has number 1\.7908560E9/);
    expectGood(schema, good, line('t', '1790856000'), 't', 1790856000 * 1_000_000);
  });

  it('reads an integer token as ever, -0 as 0', () => {
    expectGood(schema, good, line('i', '-7'), 'i', -7);
    expectGood(schema, good, line('l', '-0'), 'l', 0);
    expectGood(schema, good, line('i', '-0'), 'i', 0);
  });

  it('refuses a float token in a nested integral value too', () => {
    const nested = parseSchema('k STRING, s STRUCT<q: INT>, a ARRAY<BIGINT>, m MAP<STRING, INT>');
    const ok = '{"k":"a","s":{"q":1},"a":[1,2],"m":{"x":1}}';
    expectBad(nested, ok, '{"k":"a","s":{"q":2.0},"a":[1,2],"m":{"x":1}}', /column s\.q \(INT\) has number 2\.0: expected a JSON integer/);
    expectBad(nested, ok, '{"k":"a","s":{"q":1},"a":[1,2e0],"m":{"x":1}}', /column a\[1\] \(BIGINT\) has number 2e0/);
    expectBad(nested, ok, '{"k":"a","s":{"q":1},"a":[1,2],"m":{"x":1.5}}', /column m\["x"\] \(INT\) has number 1\.5/);
    expectGood(nested, ok, '{"k":"a","s":{"q":-3},"a":[4],"m":{"x":5},"other":1.5}', 's', { q: -3 });
  });

  it('still reads a DOUBLE and a DECIMAL from any number token', () => {
    const s = parseSchema('k STRING, d DOUBLE, x DECIMAL(10,2), i INT');
    const ok = '{"k":"a","d":1,"x":1,"i":1}';
    expectGood(s, ok, '{"k":"a","d":1e2,"x":1e2,"i":1}', 'd', 100);
    expectGood(s, ok, '{"k":"a","d":1e2,"x":1e2,"i":1}', 'x', '100.00');
    expectGood(s, ok, '{"k":"a","d":2.50,"x":2.505,"i":1}', 'x', '2.51');
  });
});

/** A reader's scenario: each case reads lines to the column's value, or refuses them with the reason. */
interface LineCase {
  readonly it: string;
  readonly reads?: readonly (readonly [line: string, column: string, value: unknown])[];
  readonly refuses?: readonly (readonly [line: string, reason: RegExp])[];
}

describe.each<{ title: string; ddl: string; good: string; cases: readonly LineCase[] }>([
  {
    title: 'JSON: a STRING column keeps a number token as written (Spark 4 exact string parsing)',
    ddl: 's STRING, i INT',
    good: '{"s":"x","i":1}',
    cases: [
      {
        it: 'keeps 1.50, 1e2, -0 and a 20-digit integer exactly as the file has them',
        reads: [
          ['{"s":1.50,"i":1}', 's', '1.50'],
          ['{"s":1e2,"i":1}', 's', '1e2'],
          ['{"s":-0,"i":1}', 's', '-0'],
          ['{"s":12345678901234567890,"i":1}', 's', '12345678901234567890'],
          ['{"i":1,"s":1.50}', 's', '1.50'],
          // the reference's own path (an escape elsewhere on the line sends it past the fast tiers)
          ['{"s":0.10,"i":1,"e":"\\u00e9"}', 's', '0.10'],
        ],
      },
      { it: 'keeps true and false as their words', reads: [['{"s":true,"i":1}', 's', 'true']] },
      {
        it: 'keeps an object or an array as the line writes it, spaces and number forms included',
        reads: [
          ['{"s": {"a": 1.50, "b": [1, 2]} ,"i":1}', 's', '{"a": 1.50, "b": [1, 2]}'],
          ['{"i":1,"s":[ "x,y", {"k": "}"} ]}', 's', '[ "x,y", {"k": "}"} ]'],
          ['{"s":{"a":1},"i":1,"s":[]}', 's', '[]'],
        ],
      },
    ],
  },
  {
    title: 'JSON: a field the record leaves out is null (JacksonParser.convertObject sets only the fields it meets)',
    ddl: 'k STRING, n INT, s STRUCT<a: INT, b: STRING>',
    good: '{"k":"a","n":1,"s":{"a":1,"b":"x"}}',
    cases: [
      {
        it: 'is null at the top level as in a struct, and as an explicit null is',
        reads: [
          ['{"k":"a","s":{"a":1,"b":"x"}}', 'n', null],
          ['{"n":2}', 'k', null],
          ['{"n":2}', 's', null],
          ['{"k":"a","n":null,"s":{"b":"y"}}', 's', { a: null, b: 'y' }],
          ['{}', 'n', null],
        ],
      },
      { it: 'still makes a record whose present field does not fit a dead letter', refuses: [['{"k":"a","n":"1"}', /column n \(INT\) has string "1"/]] },
    ],
  },
  {
    title: "DATE from text without a dateFormat: Spark's stringToDate (DefaultDateFormatter)",
    ddl: 'k STRING, d DATE',
    good: '{"k":"a","d":"2026-10-01"}',
    cases: [
      {
        it: 'takes one-digit months and days, a time after a space or T, and blanks around',
        reads: [
          ['{"k":"a","d":"2026-1-5"}', 'd', '2026-01-05'],
          ['{"k":"a","d":"2026-10-01T12:30:00Z"}', 'd', '2026-10-01'],
          ['{"k":"a","d":"2026-10-01 12:30"}', 'd', '2026-10-01'],
          ['{"k":"a","d":" 2026-10-01 "}', 'd', '2026-10-01'],
        ],
      },
      {
        it: 'refuses a day that does not exist, text after the year or month, and a three-digit month',
        refuses: [
          ['{"k":"a","d":"2026-02-30"}', /column d \(DATE\) has string "2026-02-30"/],
          ['{"k":"a","d":"2026-10x"}', /column d \(DATE\)/],
          ['{"k":"a","d":"2026-100-01"}', /column d \(DATE\)/],
          ['{"k":"a","d":"01/10/2026"}', /column d \(DATE\)/],
        ],
      },
      { it: "reads a string of days since 1970 as Spark 1.5 wrote dates (the JSON reader's fallback)", reads: [['{"k":"a","d":"123"}', 'd', '1970-05-04']] },
    ],
  },
  {
    title: 'JSON lines: text after a complete object is ignored (JacksonParser.parse reads one value, never the rest)',
    ddl: 'k STRING, n INT',
    good: '{"k":"a","n":1}',
    cases: [
      {
        it: 'reads the object of a line with a trailing comma, brace or second object',
        reads: [
          ['{"k":"a","n":2},', 'n', 2],
          ['{"k":"a","n":3}}', 'n', 3],
          ['{"k":"a","n":4} {"k":"b","n":5}', 'n', 4],
          ['{"k":"a}","n":6} x', 'n', 6],
        ],
      },
      {
        it: 'still refuses an object that is not complete, or does not fit',
        refuses: [
          ['{"k":"a","n":2', /malformed JSON/],
          ['{"k":"a","n":"2"} x', /^column n \(INT\) has string "2"/],
        ],
      },
    ],
  },
])('$title', ({ ddl, good, cases }) => {
  const schema = parseSchema(ddl);
  it.each(cases)('$it', ({ reads = [], refuses = [] }) => {
    for (const [line, column, value] of reads) expectGood(schema, good, line, column, value);
    for (const [line, reason] of refuses) expectBad(schema, good, line, reason);
  });
});

describe("JSON lines without options: Spark's allowSingleQuotes is on by default (JSONOptions)", () => {
  const schema = parseSchema('k STRING, n INT');
  const good = '{"k":"a","n":1}';

  it("reads 'single-quoted' names and strings, an escaped quote in them, a double quote inside", () => {
    expectGood(schema, good, "{'k':'b','n':2}", 'k', 'b');
    expectGood(schema, good, "{'k':'it\\'s \"x\"','n':2}", 'k', 'it\'s "x"');
    expectGood(schema, good, '{"k":\'c\',"n":3}', 'n', 3);
  });

  it('still refuses a line that is not JSON with them', () => {
    expectBad(schema, good, "{'k':'b','n':2", /malformed JSON/);
    expectBad(schema, good, "{'k':'b','n':'2'}", /column n \(INT\) has string "2"/);
  });

  it('reads them as strict JSON when the allowSingleQuotes option is false', async () => {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const buf = Buffer.from('{\'k\':\'b\',\'n\':2}\n{"k":"c","n":3}\n');
    const out = { rows: [] as unknown[], dead: [] as string[] };
    for await (const c of fileDecoder(schema, 'json', { allowSingleQuotes: false }).decode('f', buf, buf.length)) {
      out.rows.push(...c.rows);
      out.dead.push(...c.deadLetters.map((d) => d.reason));
    }
    expect(out.rows).toEqual([{ k: 'c', n: 3 }]);
    expect(out.dead).toEqual([expect.stringMatching(/malformed JSON/)]);
  });
});

describe('JSON lines: a line that is an array gives a row per element (JacksonParser, SPARK-3308)', () => {
  const schema = parseSchema('k STRING, n INT');
  async function read(text: string, options: Record<string, string | boolean> = {}) {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const out = { rows: [] as unknown[], dead: [] as Array<{ line: number; reason: string }> };
    const d = fileDecoder(schema, 'json', options);
    for (const via of ['bytes', 'text'] as const) {
      const buf = Buffer.from(text);
      const got = { rows: [] as unknown[], dead: [] as Array<{ line: number; reason: string }> };
      for await (const c of via === 'bytes' ? d.decode('f', buf, buf.length) : d.decodeText('f', text)) {
        got.rows.push(...c.rows);
        got.dead.push(...c.deadLetters.map((x) => ({ line: x.source.line!, reason: x.reason })));
      }
      if (via === 'bytes') Object.assign(out, got);
      else expect(got).toEqual(out);
    }
    return out;
  }

  it('reads each object of the array as a row, an empty array as none, in line order with the other lines', async () => {
    const out = await read('{"k":"a","n":1}\n[{"k":"b","n":2}, {"k":"c"}]\n[]\n {"n":4,"k":"d"}\n');
    expect(out.rows).toEqual([
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
      { k: 'c', n: null },
      { k: 'd', n: 4 },
    ]);
    expect(out.dead).toEqual([]);
  });

  it('makes the whole line one dead letter when an element is not an object or does not fit', async () => {
    const out = await read('[{"k":"a","n":1}, 2]\n[{"k":"b","n":"x"},{"k":"c","n":3}]\n[null]\n[{"k":"d","n":1}\n');
    expect(out.rows).toEqual([]);
    expect(out.dead).toEqual([
      { line: 1, reason: expect.stringMatching(/^element 1 of the line's array: record is a JSON number, not an object/) },
      { line: 2, reason: expect.stringMatching(/^element 0 of the line's array: column n \(INT\) has string "x"/) },
      { line: 3, reason: expect.stringMatching(/^element 0 of the line's array: record is a JSON null/) },
      { line: 4, reason: expect.stringMatching(/malformed JSON/) },
    ]);
  });

  it('does the same with reader options (the whole-file path) and single quotes', async () => {
    const out = await read("[{'k':'a','n':1},{'k':'b','n':2}] // two\n", { allowComments: true });
    expect(out.rows).toEqual([
      { k: 'a', n: 1 },
      { k: 'b', n: 2 },
    ]);
    expect((await read("[{'k':'a','n':1}]\n")).rows).toEqual([{ k: 'a', n: 1 }]);
  });
});

describe("text: a UTF-8 BOM opening the file is not part of the first line (Hadoop's LineRecordReader skips it)", () => {
  async function read(body: Buffer, options: Record<string, boolean> = {}) {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const rows: unknown[] = [];
    for await (const c of fileDecoder(parseSchema('value STRING'), 'text', options).decode('f', body, body.length)) rows.push(...c.rows);
    return rows;
  }
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);

  it('drops it from the first line; wholetext keeps the bytes as they are', async () => {
    expect(await read(Buffer.concat([bom, Buffer.from('a\r\nb\n')]))).toEqual([{ value: 'a' }, { value: 'b' }]);
    expect(await read(Buffer.concat([bom, Buffer.from('a\n')]), { wholetext: true })).toEqual([{ value: '\ufeffa\n' }]);
  });
});

describe('partition folders cast to the declared type (PartitioningUtils.castPartValueToDesiredType)', () => {
  it('reads a BIGINT exactly, a FLOAT as binary32, NaN for a DOUBLE; refuses blanks for an INT and a TINYINT out of range', async () => {
    const { partitionValues } = await import('../../lib/aws/s3/file-rules');
    const schema = parseSchema('v STRING, id BIGINT, f FLOAT, d DOUBLE, n INT, t TINYINT');
    expect(partitionValues(schema, [['id', '9007199254740993']])).toEqual({ values: [['id', 9007199254740993n]] });
    expect(partitionValues(schema, [['id', '-12']])).toEqual({ values: [['id', -12]] });
    expect(partitionValues(schema, [['f', '0.1']])).toEqual({ values: [['f', Math.fround(0.1)]] });
    expect(partitionValues(schema, [['d', 'NaN']])).toEqual({ values: [['d', Number.NaN]] });
    expect(partitionValues(schema, [['d', '-Infinity']])).toEqual({ values: [['d', Number.NEGATIVE_INFINITY]] });
    expect(partitionValues(schema, [['d', '1e3']])).toEqual({ values: [['d', 1000]] });
    expect(partitionValues(schema, [['n', '+7']])).toEqual({ values: [['n', 7]] });
    expect(partitionValues(schema, [['n', ' 7']])).toEqual({ error: expect.stringMatching(/partition folder n= 7 is not a INT/) });
    expect(partitionValues(schema, [['t', '300']])).toEqual({ error: expect.stringMatching(/partition folder t=300 is not a TINYINT/) });
    expect(partitionValues(schema, [['t', '-128']])).toEqual({ values: [['t', -128]] });
    expect(partitionValues(schema, [['id', '9223372036854775808']])).toEqual({ error: expect.stringMatching(/is not a BIGINT/) });
  });
});

describe("CSV multiLine: the file's line separator inside quotes reads as \\n (univocity, normalizeLineEndingsWithinQuotes)", () => {
  async function read(text: string) {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const rows: unknown[] = [];
    const buf = Buffer.from(text);
    for await (const c of fileDecoder(parseSchema('id INT, note STRING'), 'csv', { multiLine: true }).decode('f', buf, buf.length)) rows.push(...c.rows);
    return rows;
  }

  it('turns CRLF inside a quoted value into LF in a CRLF file, and keeps LF files as they are', async () => {
    expect(await read('1,"a\r\nb"\r\n2,c\r\n')).toEqual([
      { id: 1, note: 'a\nb' },
      { id: 2, note: 'c' },
    ]);
    expect(await read('1,"a\nb"\n2,"x\r\ny"\n')).toEqual([
      { id: 1, note: 'a\nb' },
      { id: 2, note: 'x\r\ny' },
    ]);
  });
});

describe('JSON multiLine: the file is its first JSON value (Spark parses one value and stops)', () => {
  it('reads the first object of a file that holds several, and ignores the rest', async () => {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const text = '{"k": "a",\n "n": 1}\n{"k": "b", "n": 2}\n';
    const buf = Buffer.from(text);
    const out = { rows: [] as unknown[], dead: 0 };
    for await (const c of fileDecoder(parseSchema('k STRING, n INT'), 'json', { multiLine: true }).decode('f', buf, buf.length)) {
      out.rows.push(...c.rows);
      out.dead += c.deadLetters.length;
    }
    expect(out).toEqual({ rows: [{ k: 'a', n: 1 }], dead: 0 });
  });
});

describe('JSON dateFormat and timestampFormat: read at any depth, a number still epoch seconds (JacksonParser)', () => {
  async function read(ddl: string, text: string, options: Record<string, string>) {
    const { fileDecoder } = await import('../../lib/engine/formats');
    const out = { rows: [] as unknown[], dead: [] as string[] };
    const buf = Buffer.from(text);
    for await (const c of fileDecoder(parseSchema(ddl), 'json', options).decode('f', buf, buf.length)) {
      out.rows.push(...c.rows);
      out.dead.push(...c.deadLetters.map((d) => d.reason));
    }
    return out;
  }

  it('reads a nested DATE and TIMESTAMP by the patterns, and an integer TIMESTAMP as epoch seconds', async () => {
    const out = await read(
      'id INT, s STRUCT<d: DATE, at: TIMESTAMP>, ds ARRAY<DATE>, at TIMESTAMP',
      '{"id":1,"s":{"d":"01.10.2026","at":"2026/10/01 12:00"},"ds":["02.10.2026"],"at":1790856000}\n{"id":2,"s":{"d":"2026-10-01","at":null},"ds":[],"at":null}\n',
      { dateFormat: 'dd.MM.yyyy', timestampFormat: 'yyyy/MM/dd HH:mm' },
    );
    expect(out.rows).toEqual([{ id: 1, s: { d: '2026-10-01', at: 1790856000 * 1_000_000 }, ds: ['2026-10-02'], at: 1790856000 * 1_000_000 }]);
    expect(out.dead).toEqual([expect.stringMatching(/^column s\.d \(DATE\) has string "2026-10-01": not a date of dateFormat "dd\.MM\.yyyy"/)]);
  });
});
