/**
 * Spark's datetime patterns in expressions (issue 30): date_format / from_unixtime print a
 * TIMESTAMP as Java's DateTimeFormatter does under Spark 3+/4 (session time zone UTC), and
 * to_timestamp / to_date / unix_timestamp / try_to_timestamp parse with them. Expected texts are
 * worked from Spark's "Datetime Patterns for Formatting and Parsing" page and Java's
 * DateTimeFormatter rules, not from this compiler's output; µs beyond 2^53 stay bigint. Also
 * json_tuple, Spark's generator of one row of c0, c1... per input row.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression, compileSelect } from '../../lib/engine/expr';
import { refusalOf, rowErrorOf } from '../helpers/expr-errors';
import { formatTimestamp, parseTimestamp } from '../../lib/engine/timestamps';

const TS = parseDdlColumns('t TIMESTAMP, d DATE, s STRING, n BIGINT');
const value = (text: string, row: Record<string, unknown> = {}) => compileExpression(text, TS).evaluate(row);
const us = (iso: string) => parseTimestamp(iso)!;

const refusal = (text: string) => refusalOf(text, TS);
const rowError = (text: string, row: Record<string, unknown> = {}) => rowErrorOf(text, TS, row);

describe('date_format', () => {
  const t = us('2026-10-01T12:05:09.123456Z');
  it.each([
    ['yyyy-MM-dd HH:mm:ss.SSS', '2026-10-01 12:05:09.123'],
    ['EEE, d MMM yyyy hh:mm a', 'Thu, 1 Oct 2026 12:05 PM'],
    ['S SSSSSS SSSSSSSSS', '1 123456 123456000'],
    ['EEEE, MMMM dd', 'Thursday, October 01'],
    ['y yy yyy yyyy yyyyy', '2026 26 2026 2026 02026'],
    ['M MM L D DD DDD', '10 10 10 274 274 274'],
    ['H h K k m s', '12 12 0 12 5 9'],
    ['X XXX x xx xxx Z ZZZZ ZZZZZ', 'Z Z +00 +0000 +00:00 +0000 GMT Z'],
    ["'o''clock' '' hh 'T'", "o'clock ' 12 T"],
    ['G GGGG Q QQ QQQ QQQQ', 'AD Anno Domini 4 04 Q4 4th quarter'],
    ['[yyyy]-MM', '2026-10'],
    ['', ''],
  ])('prints %j as %j', (pattern, expected) => {
    expect(value(`date_format(t, '${pattern.replace(/'/g, "\\'")}')`, { t })).toBe(expected);
  });

  it('prints the 12-hour clock and AM/PM at midnight and noon', () => {
    expect(value("date_format(t, 'hh:mm a K k')", { t: us('2026-10-01T00:30:00Z') })).toBe('12:30 AM 0 24');
    expect(value("date_format(t, 'hh:mm a K k')", { t: us('2026-10-01T13:00:00Z') })).toBe('01:00 PM 1 13');
  });

  it('takes a DATE (its midnight) and a STRING (cast to TIMESTAMP)', () => {
    expect(value("date_format(d, 'dd.MM.yyyy HH:mm EEE')", { d: '2024-02-29' })).toBe('29.02.2024 00:00 Thu');
    expect(value("date_format('2016-04-08', 'y')")).toBe('2016');
  });

  it('prints the ends of the range, and µs beyond 2^53 from a bigint exactly', () => {
    expect(value("date_format(t, 'yyyy-MM-dd EEE HH:mm:ss.SSSSSS')", { t: us('0001-01-01T00:00:00Z') })).toBe('0001-01-01 Mon 00:00:00.000000');
    expect(value("date_format(t, 'yyyy-MM-dd EEE HH:mm:ss.SSSSSS')", { t: 253402300799999999n })).toBe('9999-12-31 Fri 23:59:59.999999');
    for (const big of [9007199254740993n, 9007199254740999n, -9007199254740993n]) {
      // the ISO text of timestamps.ts, worked out separately, with the space of Spark's form
      const iso = formatTimestamp(big);
      expect(value("date_format(t, 'yyyy-MM-dd HH:mm:ss.SSSSSS')", { t: big })).toBe(iso.replace('T', ' ').replace('Z', ''));
    }
    expect(value("date_format(t, 'SSSSSS')", { t: 9007199254740993n })).toBe('740993');
  });

  it('is null for a null value or a NULL pattern', () => {
    expect(value("date_format(t, 'yyyy')", { t: null })).toBeNull();
    expect(value('date_format(t, NULL)', { t: 0 })).toBeNull();
  });
});

describe('from_unixtime and unix_timestamp with a pattern', () => {
  it('prints seconds in the pattern, and reads them back', () => {
    expect(value("from_unixtime(n, 'dd/MM/yyyy HH:mm:ss XXX')", { n: 1460073600 })).toBe('08/04/2016 00:00:00 Z');
    expect(value("from_unixtime(n, 'yyyy-MM-dd HH:mm:ss')", { n: 253402300799 })).toBe('9999-12-31 23:59:59');
    expect(value("unix_timestamp('2016-04-08', 'yyyy-MM-dd')")).toBe(1460073600);
    expect(value("unix_timestamp(s, 'yyyy-MM-dd HH:mm:ss')", { s: '9999-12-31 23:59:59' })).toBe(253402300799);
    expect(value("unix_timestamp(s, 'yyyy-MM-dd HH:mm:ss.SSS')", { s: '1969-12-31 23:59:59.500' })).toBe(-1);
  });
});

describe('to_timestamp, to_date and try_to_timestamp with a pattern', () => {
  it.each([
    ['2016-12-31', 'yyyy-MM-dd', '2016-12-31T00:00:00Z'],
    ['31/12/2016 01:02:03.5 PM', 'dd/MM/yyyy hh:mm:ss.S a', '2016-12-31T13:02:03.500Z'],
    ['2026-10-01 00:30 -01:30', 'yyyy-MM-dd HH:mm XXX', '2026-10-01T02:00:00Z'],
    ['2026-10-01T12:00:00Z', "yyyy-MM-dd'T'HH:mm:ssX", '2026-10-01T12:00:00Z'],
    ['Oct 1 26', 'MMM d yy', '2026-10-01T00:00:00Z'],
    ['274/2026', 'D/yyyy', '2026-10-01T00:00:00Z'],
    // optional sections: read when their content matches, else rolled back (Java's optionalStart)
    ['2026-03-05', 'yyyy-MM-dd[ HH:mm[:ss]][.SSS]', '2026-03-05T00:00:00Z'],
    ['2026-03-05 10:11', 'yyyy-MM-dd[ HH:mm[:ss]][.SSS]', '2026-03-05T10:11:00Z'],
    ['2026-03-05 10:11:12.25', 'yyyy-MM-dd[ HH:mm[:ss]][.SSS]', '2026-03-05T10:11:12.250Z'],
    ['2026-03-05.5', 'yyyy-MM-dd[ HH:mm[:ss]][.SSS]', '2026-03-05T00:00:00.500Z'],
    ['2026-10-01T12:00:00.1+02:00', "yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]", '2026-10-01T10:00:00.100Z'],
    ['2026-10-01T12:00:00', "yyyy-MM-dd'T'HH:mm:ss[.SSS][XXX]", '2026-10-01T12:00:00Z'],
  ])('reads %j with %j', (text, pattern, iso) => {
    expect(value(`to_timestamp(s, '${pattern.replace(/'/g, "\\'")}')`, { s: text })).toBe(us(iso));
  });

  it('does not read a text that an optional section leaves unread', () => {
    expect(value("try_to_timestamp(s, 'yyyy-MM-dd[ HH:mm[:ss]]')", { s: '2026-03-05 10' })).toBeNull();
  });

  it('reads back what date_format prints (parse∘format is the identity), number and bigint µs alike', () => {
    const patterns = [
      'yyyy-MM-dd HH:mm:ss.SSSSSS',
      'dd/MM/yyyy hh:mm:ss.SSSSSS a XXX',
      'yyyyMMddHHmmssSSSSSS',
      'MMMM d, yyyy HH:mm:ss.SSSSSS xxx',
      "D yyyy 'at' H m s SSSSSS Z",
    ];
    const instants = [0, -1, us('2026-10-01T12:05:09.123456Z'), us('0001-01-01T00:00:00Z'), 9007199254740993n, 253402300799999999n];
    for (const p of patterns) {
      const e = compileExpression(`to_timestamp(date_format(t, '${p.replace(/'/g, "\\'")}'), '${p.replace(/'/g, "\\'")}')`, TS);
      for (const t of instants) expect([p, e.evaluate({ t })]).toEqual([p, t]);
    }
  });

  it('to_date is the UTC day of the instant read', () => {
    expect(value("to_date('2016-12-31', 'yyyy-MM-dd')")).toBe('2016-12-31');
    expect(value("to_date(s, 'dd/MM/yyyy HH:mm XXX')", { s: '01/10/2026 23:30 -02:00' })).toBe('2026-10-02');
  });

  it('takes a TIMESTAMP or DATE argument as its instant', () => {
    expect(value("to_timestamp(t, 'yyyy')", { t: 9007199254740993n })).toBe(9007199254740993n);
    expect(value("to_timestamp(d, 'yyyy')", { d: '2026-10-01' })).toBe(us('2026-10-01T00:00:00Z'));
  });

  it('makes a text that does not match the row error CANNOT_PARSE_TIMESTAMP (ANSI), null with try_to_timestamp', () => {
    const e = rowError("to_timestamp(s, 'yyyy-MM-dd')", { s: '2026/10/01' });
    expect(e.errorClass).toBe('CANNOT_PARSE_TIMESTAMP');
    expect(e.message).toBe(
      "[CANNOT_PARSE_TIMESTAMP] Text '2026/10/01' could not be parsed at index 4. Use `try_to_timestamp` to tolerate invalid input string and return NULL instead.",
    );
    expect(rowError("to_timestamp(s, 'yyyy-MM-dd')", { s: '2026-10-01 12:00' }).message).toMatch(/unparsed text found at index 10/);
    expect(rowError("to_date(s, 'yyyy-MM-dd')", { s: '2026-02-30' }).errorClass).toBe('CANNOT_PARSE_TIMESTAMP');
    expect(rowError("unix_timestamp(s, 'dd/MM/yyyy')", { s: '13/13/2026' }).errorClass).toBe('CANNOT_PARSE_TIMESTAMP');
    expect(value("try_to_timestamp(s, 'yyyy-MM-dd')", { s: '2026/10/01' })).toBeNull();
    expect(value("try_to_timestamp(s, 'yyyy-MM-dd')", { s: '2026-10-01' })).toBe(us('2026-10-01T00:00:00Z'));
    expect(value('try_to_timestamp(s)', { s: 'nope' })).toBeNull();
    expect(value('try_to_timestamp(s)', { s: '2026-10-01 12:00:00' })).toBe(us('2026-10-01T12:00:00Z'));
  });

  it('is null for a null text or a NULL pattern', () => {
    expect(value("to_timestamp(s, 'yyyy')", { s: null })).toBeNull();
    expect(value('to_timestamp(s, NULL)', { s: '2026' })).toBeNull();
    expect(value("to_date(s, 'yyyy')", { s: null })).toBeNull();
    expect(value("unix_timestamp(s, 'yyyy')", { s: null })).toBeNull();
  });
});

describe('patterns Spark refuses, refused when the query is built', () => {
  it.each([
    // Spark's legacy check: a refusal of a pattern Spark 2.4's SimpleDateFormat took is DATETIME_PATTERN_RECOGNITION
    ["date_format(t, 'YYYY-MM-dd')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["to_timestamp(s, 'yyyy-ww')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["date_format(t, 'u')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["to_timestamp(s, 'EEE yyyy')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["date_format(t, 'EEEEE')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["date_format(t, 'MMMMM')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["date_format(t, 'yyyyyyy')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    // and the new formatter's own class when SimpleDateFormat refused it too (e, c, Q, q, A, b are none of its letters)
    ["date_format(t, 'e')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_WEEK_BASED_PATTERN'],
    ["date_format(t, 'YYYY Q')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_WEEK_BASED_PATTERN'],
    ["date_format(t, 'A')", 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER'],
    ["date_format(t, 'yyyy b')", 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER'],
    ["to_date(s, 'Q yyyy')", 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER'],
    ["date_format(t, 'QQQQQ')", 'INVALID_DATETIME_PATTERN.LENGTH'],
    ["date_format(t, 'yyyyyyy XXXX')", 'INVALID_DATETIME_PATTERN.LENGTH'],
    ["date_format(t, 'HHH')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["unix_timestamp(s, 'yyyy aa')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
    ["date_format(t, 'yyyy \\'open')", 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER'],
    // (a pattern column is Spark's per-row formatter: spark-datetime.test.ts; from_unixtime still wants a constant)
    ['from_unixtime(n, s)', 'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT'],
    ["to_timestamp(s, 'yyyy VV')", 'UNSUPPORTED_FEATURE.DATETIME_PATTERN'],
    ["to_timestamp(s, 'yyyy]')", 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION'],
  ])('%s is refused with %s', (text, errorClass) => {
    const e = refusal(text);
    expect(e.errorClass).toBe(errorClass);
    expect(e.position).toBe(0);
  });

  it('names the letter and its index in the pattern', () => {
    expect(refusal("date_format(t, 'yyyy-MM-dd YYYY')").message).toMatch(/week-based letter Y.*at index 11 of the pattern/);
  });

  it('accepts E, Q and q for formatting, where Spark refuses them only for parsing', () => {
    expect(value("date_format(t, 'E q')", { t: 0 })).toBe('Thu 1');
  });
});

describe('json_tuple', () => {
  const cols = parseDdlColumns('id INT, j STRING, k STRING');
  const s = compileSelect(['id', "json_tuple(j, 'a', 'b', k)"], cols);

  it('emits one row per input row with the STRING columns c0, c1...', () => {
    expect(s.columns.map((c) => [c.name, c.type])).toEqual([
      ['id', 'INT'],
      ['c0', 'STRING'],
      ['c1', 'STRING'],
      ['c2', 'STRING'],
    ]);
    expect(s.generate({ id: 1, j: '{"a":"x","b":{"c":[1,true]},"z":12345678901234567890}', k: 'z' })).toEqual([
      { id: 1, c0: 'x', c1: '{"c":[1,true]}', c2: '12345678901234567890' },
    ]);
  });

  it('gives null for a missing key, a JSON null or a null key', () => {
    expect(s.generate({ id: 2, j: '{"a":null,"b":false}', k: null })).toEqual([{ id: 2, c0: null, c1: 'false', c2: null }]);
    expect(s.generate({ id: 3, j: '{}', k: 'a' })).toEqual([{ id: 3, c0: null, c1: null, c2: null }]);
  });

  it('emits a row of nulls for null, malformed or non-object JSON', () => {
    for (const j of [null, 'not json', '[1, 2]', '"a"', '12']) expect(s.generate({ id: 4, j, k: 'a' })).toEqual([{ id: 4, c0: null, c1: null, c2: null }]);
  });

  it('needs a key, as Spark', () => {
    expect(() => compileSelect(['json_tuple(j)'], cols)).toThrow(/WRONG_NUM_ARGS/);
  });
});
