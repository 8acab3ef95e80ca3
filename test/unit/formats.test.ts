/**
 * File formats (lib/engine/formats) and Spark's datetime patterns, with expectations worked by
 * hand from Spark's rules (DateTimeFormatter patterns, univocity's CSV settings, hyparquet's
 * Parquet); the conformance cases sluice-files-* run the same through the S3 landing source.
 */
import { compileDatetimePattern } from '../../lib/engine/datetime-patterns';
import { checkFileFormat, fileDecoder } from '../../lib/engine/formats';
import type { ReaderOptions } from '../../lib/engine/formats/options';
import type { ReadResult } from '../../lib/engine/ports';
import { parseSchema } from '../../lib/engine/schema';
import { formatTimestamp, parseTimestamp } from '../../lib/engine/timestamps';
import { parquetFileOf } from '../../lib/conformance/parquet-file';
import { readStream } from '../../lib/engine/query/reader';

async function decode(ddl: string, format: string, options: ReaderOptions, body: string | Uint8Array): Promise<ReadResult> {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const out: ReadResult = { rows: [], deadLetters: [], bytes: 0 };
  for await (const c of fileDecoder(parseSchema(ddl), format, options).decode('k', buf, buf.length)) {
    out.rows.push(...c.rows);
    out.deadLetters.push(...c.deadLetters);
  }
  return out;
}

const ts = (iso: string) => parseTimestamp(iso);

describe("Spark's datetime patterns", () => {
  it('read numbers, names, 12-hour clocks, fractions, offsets and quoted text', () => {
    const p = compileDatetimePattern("EEE, dd MMM yyyy hh:mm:ss.SSS a XXX 'at' ''");
    expect(p.parseTimestamp("Thu, 01 Oct 2026 01:02:03.456 PM +02:00 at '")).toBe(ts('2026-10-01T11:02:03.456Z'));
    // the weekday must be the date's: 2026-10-01 is a Thursday
    expect(p.parseTimestamp("Fri, 01 Oct 2026 01:02:03.456 PM +02:00 at '")).toBeNull();
    expect(compileDatetimePattern('yyyyMMddHHmmssSSSSSS').parseTimestamp('20261001235959123456')).toBe(ts('2026-10-01T23:59:59.123456Z'));
    expect(compileDatetimePattern('yyyy-MM-dd HH:mm Z').parseTimestamp('2026-10-01 00:30 -0130')).toBe(ts('2026-10-01T02:00:00Z'));
    expect(compileDatetimePattern('dd/MM/yyyy').parseDate('29/02/2024')).toBe('2024-02-29');
    expect(compileDatetimePattern('dd/MM/yyyy').parseDate('29/02/2026')).toBeNull();
    expect(compileDatetimePattern('dd/MM/yyyy').parseDate('1/02/2026')).toBeNull();
    expect(compileDatetimePattern('d/M/yy').parseDate('1/2/26')).toBe('2026-02-01');
  });
  it('refuse letters they do not read, with the letters they do', () => {
    expect(() => compileDatetimePattern('yyyy-ww')).toThrow(/letter w.*Spark's pattern letters/);
    expect(() => compileDatetimePattern("yyyy 'open")).toThrow(/never closed/);
  });
});

describe('CSV', () => {
  it('tells quoted from unquoted empty fields only when nullValue is set', async () => {
    const unset = await decode('a STRING, b STRING', 'csv', {}, '"",\n');
    expect(unset.rows).toEqual([{ a: null, b: null }]);
    const set = await decode('a STRING, b STRING, c STRING', 'csv', { nullValue: '-' }, '"",,-\n');
    expect(set.rows).toEqual([{ a: '', b: null, c: null }]);
  });
  it('reads Java doubles and exact decimals, and makes a bad value or field count a dead letter with its line', async () => {
    const r = await decode('x DOUBLE, d DECIMAL(5,1)', 'csv', {}, '1e2,1.25\n.5d,-1.25\n\n1,99999.9\nx,1\n1\n');
    expect(r.rows).toEqual([
      { x: 100, d: '1.3' },
      { x: 0.5, d: '-1.3' },
    ]);
    expect(r.deadLetters.map((d) => [d.source.line, d.raw])).toEqual([
      [4, '1,99999.9'],
      [5, 'x,1'],
      [6, '1'],
    ]);
    expect(r.deadLetters[1].reason).toMatch(/column x \(DOUBLE\): "x" is not a number/);
  });
  it("reads a quoted field as univocity does with Spark's settings (STOP_AT_DELIMITER)", async () => {
    // [options, line, the two fields], worked by hand from univocity's CsvParser.parseQuotedValue
    const table: Array<[ReaderOptions, string, [string, string]]> = [
      [{}, '"a\\"b","c\\\\d"\n', ['a"b', 'c\\d']],
      [{}, '"a\\b",x\n', ['a\\b', 'x']],
      // a doubled quote is not an escape unless escape is the quote: what follows it makes the value raw
      [{}, '"a""b",x\n', ['"a""b"', 'x']],
      [{}, '"He said ""hi""",x\n', ['"He said ""hi"""', 'x']],
      [{}, '"a"",b"\n', ['a"', 'b"']],
      [{}, '"ab"cd,x\n', ['"ab"cd', 'x']],
      [{}, '"ab" cd,x\n', ['"ab" cd', 'x']],
      [{}, '"ab"  ,x\n', ['ab', 'x']],
      [{ escape: '"' }, '"a""b","""q"""\n', ['a"b', '"q"']],
      [{ escape: '"' }, '"""",x\n', ['"', 'x']],
      [{ multiLine: true }, '"c""d",y\n', ['"c""d"', 'y']],
      [{}, '1,"ab', ['1', 'ab']],
    ];
    for (const [options, line, [a, b]] of table) expect((await decode('a STRING, b STRING', 'csv', options, line)).rows).toEqual([{ a, b }]);
  });
  it('takes an empty quote or escape as none, charToEscapeQuoteEscaping, and a multiLine line of blanks as a record', async () => {
    const noQuote = await decode('a STRING, b STRING', 'csv', { quote: '' }, '"x,y"\n');
    expect(noQuote.rows).toEqual([{ a: '"x', b: 'y"' }]);
    // escape ' and charToEscapeQuoteEscaping #: #' is the escape character itself, '" a quote
    const esc = await decode('a STRING, b STRING', 'csv', { quote: '"', escape: "'", charToEscapeQuoteEscaping: '#' }, '"a#\'","b\'"c"\n');
    expect(esc.rows).toEqual([{ a: "a'", b: 'b"c' }]);
    const blanks = await decode('a STRING, b STRING', 'csv', { multiLine: true }, 'x,y\n  \nz,w\n');
    expect(blanks.rows).toEqual([
      { a: 'x', b: 'y' },
      { a: 'z', b: 'w' },
    ]);
    expect(blanks.deadLetters.map((d) => [d.source.line, d.raw])).toEqual([[2, '  ']]);
    const skipped = await decode('a STRING, b STRING', 'csv', { multiLine: true, ignoreLeadingWhiteSpace: true }, 'x,y\n  \nz,w\n');
    expect(skipped.deadLetters).toEqual([]);
  });
  it('reads a separator of several characters as one, also inside and after quotes', async () => {
    const r = await decode('a STRING, b STRING, c INT', 'csv', { sep: '||', quote: "'" }, "x||'y||z'||1\n p ||||2\n");
    expect(r.rows).toEqual([
      { a: 'x', b: 'y||z', c: 1 },
      { a: ' p ', b: null, c: 2 },
    ]);
    expect(r.deadLetters.map((d) => d.reason)).toEqual([]);
  });
  it('reads nanValue, negativeInf and positiveInf before Java\'s parse, and emptyValue for a quoted ""', async () => {
    const names = { nanValue: 'nan', positiveInf: '+inf', negativeInf: '-inf' };
    const r = await decode('d DOUBLE, f FLOAT', 'csv', names, 'nan,-inf\n+inf,NaN\nInfinity,-Infinity\nInf,1\n');
    expect(r.rows).toEqual([
      { d: Number.NaN, f: Number.NEGATIVE_INFINITY },
      { d: Number.POSITIVE_INFINITY, f: Number.NaN },
      { d: Number.POSITIVE_INFINITY, f: Number.NEGATIVE_INFINITY },
    ]);
    // "Inf" is the positiveInf text only by default; Java's parse does not take it
    expect(r.deadLetters.map((d) => d.source.line)).toEqual([4]);
    const empty = [
      [{ emptyValue: 'E' }, { a: 'E', b: null }],
      [
        { emptyValue: 'E', nullValue: 'E' },
        { a: null, b: null },
      ],
      [
        { nullValue: 'NA', emptyValue: 'NA' },
        { a: null, b: null },
      ],
    ] as const;
    for (const [options, row] of empty) expect((await decode('a STRING, b STRING', 'csv', options, '"",\n')).rows).toEqual([row]);
  });
  it('skips comment lines (the character first on the line), and ends lines only at lineSep when set', async () => {
    const c = await decode('a STRING, b INT', 'csv', { comment: '#', header: true }, '#note\n\nh1,h2\n#x,1\n #y,2\n');
    expect(c.rows).toEqual([{ a: ' #y', b: 2 }]);
    const s = await decode('a STRING, b INT', 'csv', { lineSep: ';' }, 'a\n,1;b,2;;');
    expect(s.rows).toEqual([
      { a: 'a\n', b: 1 },
      { a: 'b', b: 2 },
    ]);
    const m = await decode('a STRING, b INT', 'csv', { lineSep: '|', multiLine: true }, 'a,1|"b|c",2|');
    expect(m.rows).toEqual([
      { a: 'a', b: 1 },
      { a: 'b|c', b: 2 },
    ]);
  });
  it("with enforceSchema false, refuses a file whose header names are not the schema's (any case) with one dead letter", async () => {
    const ok = await decode('a STRING, b INT', 'csv', { header: true, enforceSchema: false }, 'A,b\nx,1\n');
    expect(ok.rows).toEqual([{ a: 'x', b: 1 }]);
    const renamed = await decode('a STRING, b INT', 'csv', { header: true, enforceSchema: false }, 'a,c\nx,1\ny,2\n');
    expect(renamed.rows).toEqual([]);
    expect(renamed.deadLetters.map((d) => [d.source.line, d.reason.slice(0, 57)])).toEqual([
      [1, 'the CSV header\'s name "c" is not the schema\'s column b at'],
    ]);
    const short = await decode('a STRING, b INT', 'csv', { header: true, enforceSchema: false }, 'a\nx,1\n');
    expect(short.deadLetters.map((d) => d.reason)).toEqual([expect.stringMatching(/header has 1 name\(s\), the schema 2 column/)]);
    // enforceSchema true (the default): the header is dropped unread
    expect((await decode('a STRING, b INT', 'csv', { header: true }, 'x\ny,2\n')).rows).toEqual([{ a: 'y', b: 2 }]);
  });
  it('refuses nested columns and bad options when the query is built', () => {
    expect(() => readStream.format('csv').schema('a ARRAY<INT>').load()).toThrow(/cannot read column a of a nested type/);
    expect(() => readStream.format('csv').schema('a INT').option('sep', '\\.').load()).toThrow(/sep="\\\\." has an unsupported escape/);
    expect(() => readStream.format('csv').schema('a INT').option('sep', ';\\').load()).toThrow(/unsupported escape/);
    expect(() => readStream.format('csv').schema('a TIMESTAMP').option('timestampFormat', 'yyyy-qq').load()).toThrow(/timestampFormat/);
    expect(() => readStream.format('csv').schema('a INT').option('lineSep', 'abc').load()).toThrow(/lineSep="abc" must be one character/);
    expect(() => readStream.format('csv').schema('a INT').option('comment', '//').load()).toThrow(/comment="\/\/" must be one character/);
  });
});

describe('text', () => {
  it('needs the schema value STRING, refused when the query is built', () => {
    expect(() => readStream.format('text').schema('line STRING').load()).toThrow(/declare .schema\('value STRING'\)/);
    expect(checkFileFormat('text', parseSchema('value STRING'), {})).toBe('text');
  });
  it('ends lines only at lineSep when set; an empty file is no row, with wholetext too (Spark never reads a 0-byte file)', async () => {
    const r = await decode('value STRING', 'text', { lineSep: ';;' }, 'a\r\nb;;;;c;');
    expect(r.rows).toEqual([{ value: 'a\r\nb' }, { value: '' }, { value: 'c;' }]);
    expect((await decode('value STRING', 'text', { lineSep: ';' }, 'a;')).rows).toEqual([{ value: 'a' }]);
    expect((await decode('value STRING', 'text', { wholetext: true }, '')).rows).toEqual([]);
    expect((await decode('value STRING', 'parquet', {}, '')).deadLetters).toEqual([]);
    expect((await decode('value STRING', 'text', {}, '')).rows).toEqual([]);
    expect(() => readStream.format('text').schema('value STRING').option('lineSep', '').load()).toThrow(/lineSep must not be empty/);
  });
  it('reads a stored file whose gzip content is empty: wholetext gives one row of "" (Spark reads any file of stored length > 0)', async () => {
    // (the landing source hands the decoder the gunzipped bytes and the stored length: 20 for a gzip of '')
    const whole = async (options: ReaderOptions, storedBytes: number) => {
      const rows = [];
      for await (const c of fileDecoder(parseSchema('value STRING'), 'text', options).decode('k.gz', Buffer.alloc(0), storedBytes)) rows.push(...c.rows);
      return rows;
    };
    expect(await whole({ wholetext: true }, 20)).toEqual([{ value: '' }]);
    expect(await whole({ wholetext: true }, 0)).toEqual([]);
    expect(await whole({}, 20)).toEqual([]);
  });
  it('makes a line that is not UTF-8 a dead letter, and keeps the others', async () => {
    const r = await decode('value STRING', 'text', {}, Buffer.from([0x61, 0x0a, 0xff, 0x0a, 0x62]));
    expect(r.rows).toEqual([{ value: 'a' }, { value: 'b' }]);
    expect(r.deadLetters.map((d) => d.source.line)).toEqual([2]);
  });
});

describe('Parquet', () => {
  it('refuses a file whose column type does not fit the declared one with one dead letter naming both', async () => {
    const file = await parquetFileOf(parseSchema('id STRING, amount DECIMAL(12,4)'), [{ id: 'a', amount: '1.2345' }]);
    const strict = await decode('id INT, amount DECIMAL(12,4)', 'parquet', {}, file);
    expect(strict.rows).toEqual([]);
    expect(strict.deadLetters).toHaveLength(1);
    expect(strict.deadLetters[0].reason).toMatch(/Parquet column id: the file's BYTE_ARRAY .* cannot be read as INT/);
    // a smaller scale would drop digits: refused, not rounded
    const narrow = await decode('id STRING, amount DECIMAL(12,2)', 'parquet', {}, file);
    expect(narrow.deadLetters[0].reason).toMatch(/without losing digits \(declare at least DECIMAL\(12,4\)\)/);
    // a wider decimal keeps the value exactly; a column the file lacks is null
    const wide = await decode('id STRING, amount DECIMAL(20,6), missing INT', 'parquet', {}, file);
    expect(wide.rows).toEqual([{ id: 'a', amount: '1.234500', missing: null }]);
  });
  it('keeps microseconds and decimals beyond a double', async () => {
    const file = await parquetFileOf(parseSchema('at TIMESTAMP, d DECIMAL(38,0)'), [
      { at: '2026-10-01 12:00:00.123456', d: '99999999999999999999999999999999999999' },
    ]);
    const r = await decode('at TIMESTAMP, d DECIMAL(38,0)', 'parquet', {}, file);
    expect(r.rows[0].d).toBe('99999999999999999999999999999999999999');
    expect(r.rows[0].at).toBe(parseTimestamp('2026-10-01T12:00:00.123456Z'));
    expect(formatTimestamp(r.rows[0].at as number)).toMatch(/^2026-10-01T12:00:00\.123/);
  });
  it('matches a column ignoring case when no name matches exactly, and makes a file that is not Parquet one dead letter', async () => {
    const file = await parquetFileOf(parseSchema('Sku STRING'), [{ Sku: 'A-1' }]);
    expect((await decode('sku STRING', 'parquet', {}, file)).rows).toEqual([{ sku: 'A-1' }]);
    const notParquet = await decode('sku STRING', 'parquet', {}, '{"sku": "A-1"}\n');
    expect(notParquet.rows).toEqual([]);
    expect(notParquet.deadLetters.map((d) => [d.source.file, d.reason.slice(0, 24)])).toEqual([['k', 'the file is not Parquet ']]);
  });
});

describe('JSON options', () => {
  it('with multiLine, makes a bad element of an array one dead letter with its line, the others rows', async () => {
    const r = await decode('id INT', 'json', { multiLine: true }, '[\n {"id": 1},\n {"id": "x"},\n {"id": 3}\n]');
    expect(r.rows).toEqual([{ id: 1 }, { id: 3 }]);
    expect(r.deadLetters.map((d) => d.source.line)).toEqual([3]);
  });
});

describe('chunks in input order', () => {
  /** Each chunk as [its dead letters' lines, its rows]: a dead letter after rows starts a new chunk. */
  async function chunksOf(ddl: string, format: string, options: ReaderOptions, body: string | Uint8Array) {
    const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const out: Array<[Array<number | undefined>, unknown[]]> = [];
    for await (const c of fileDecoder(parseSchema(ddl), format, options).decode('k', buf, buf.length)) {
      if (c.rows.length + c.deadLetters.length > 0) out.push([c.deadLetters.map((d) => d.source.line), c.rows.map((r) => Object.values(r)[0])]);
    }
    return out;
  }
  // the run writes a chunk's dead letters, then its rows' row errors: so within a chunk every dead letter comes before every row
  it("CSV, text, JSON with options and Parquet hold a chunk's dead letters before its rows", async () => {
    expect(await chunksOf('n INT', 'csv', {}, '1\nx\n2\n3\ny\nz\n4\n')).toEqual([
      [[], [1]],
      [[2], [2, 3]],
      [[5, 6], [4]],
    ]);
    const bad = Buffer.concat([Buffer.from('a\n'), Buffer.from([0xff]), Buffer.from('\nb\n')]);
    expect(await chunksOf('value STRING', 'text', {}, bad)).toEqual([
      [[], ['a']],
      [[2], ['b']],
    ]);
    expect(await chunksOf('n INT', 'json', { allowComments: true }, '{"n":1}\n{"n":"x"}\n{"n":2}\n')).toEqual([
      [[], [1]],
      [[2], [2]],
    ]);
    const file = await parquetFileOf(parseSchema('n INT'), [{ n: 1 }, { n: 300 }, { n: 2 }]);
    expect(await chunksOf('n TINYINT', 'parquet', {}, file)).toEqual([
      [[], [1]],
      [[2], [2]],
    ]);
  });
});
