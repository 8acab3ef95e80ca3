import { parseSchema } from '../../lib/engine/schema';
import { coerceRecord, parseJsonLine } from '../../lib/engine/json-record';
import { parseTimestamp } from '../../lib/engine/timestamps';
import { compileLineParser } from '../../lib/engine/json-scan';
import { parseInterval, parseWatermarkDelay, parseWindowDuration } from '../../lib/engine/duration';

describe('declared schemas in Spark DDL', () => {
  it('parses names and types, with aliases', () => {
    const s = parseSchema('user STRING, n BIGINT, x double, ok BOOLEAN, t TIMESTAMP, i INTEGER');
    expect(s.columns).toEqual([
      { name: 'user', type: 'STRING' },
      { name: 'n', type: 'LONG' },
      { name: 'x', type: 'DOUBLE' },
      { name: 'ok', type: 'BOOLEAN' },
      { name: 't', type: 'TIMESTAMP' },
      { name: 'i', type: 'INT' },
    ]);
  });

  it('names the column and the supported types when a type is unknown', () => {
    expect(() => parseSchema('a STRING, b BINARY')).toThrow(/b has type BINARY, which sluice does not support: use one of STRING, BOOLEAN, TINYINT/);
  });

  it('rejects a column declared twice', () => {
    expect(() => parseSchema('a STRING, a INT')).toThrow(/column a is declared twice/);
  });
});

describe('timestamps, read as UTC like spark.sql.session.timeZone=UTC', () => {
  it.each([
    ['2026-10-01 12:01:00', Date.UTC(2026, 9, 1, 12, 1, 0)],
    ['2026-10-01 12:01:00.250', Date.UTC(2026, 9, 1, 12, 1, 0, 250)],
    ['2026-10-01T12:01:00Z', Date.UTC(2026, 9, 1, 12, 1, 0)],
    ['2026-10-01T14:01:00+02:00', Date.UTC(2026, 9, 1, 12, 1, 0)],
    ['1970-01-01 00:00:10', 10_000],
    ['2026-10-01', Date.UTC(2026, 9, 1)],
  ])('%s', (text, ms) => {
    // epoch microseconds
    expect(parseTimestamp(text)).toBe(ms * 1000);
  });

  it.each(['2026-13-01 00:00:00', '2026-02-30 00:00:00', 'yesterday', '12:00'])('%s is not a timestamp', (text) => {
    expect(parseTimestamp(text)).toBeNull();
  });
});

describe('records against the schema', () => {
  const schema = parseSchema('user STRING, event_time TIMESTAMP, amount DOUBLE, n INT');

  it('types a good record and keeps explicit nulls (fields outside the schema ride along, never output)', () => {
    const r = parseJsonLine(schema, '{"user":"a","event_time":"2026-10-01 12:01:00.5","amount":10,"n":null,"extra":1}');
    expect(r).toEqual({ ok: true, row: { user: 'a', event_time: Date.UTC(2026, 9, 1, 12, 1, 0, 500) * 1000, amount: 10, n: null, extra: 1 } });
  });

  it.each([
    ['{"user":"a","event_time":"2026-10-01 12:01:00","amount":10', /malformed JSON/],
    ['{"user":"a","event_time":"noon","amount":1,"n":1}', /column event_time \(TIMESTAMP\) has string "noon"/],
    ['{"user":"a","event_time":"2026-10-01 12:01:00","amount":"ten","n":1}', /column amount \(DOUBLE\) has string "ten"/],
    ['{"user":"a","event_time":"2026-10-01 12:01:00","amount":1,"n":1.5}', /column n \(INT\) has number 1.5: expected a JSON integer/],
    ['[1,2]', /record is a JSON array/],
  ])('a bad line gives a reason naming the value and the rule: %s', (line, reason) => {
    const r = parseJsonLine(schema, line);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it("reads the strings Spark's JSON reader takes for a DOUBLE, and no others, in every tier", () => {
    const d = parseSchema('d DOUBLE');
    const tiers = [(line: string) => parseJsonLine(d, line), compileLineParser(d), compileLineParser(d, { shapes: false })];
    const cases: Array<[string, number | null]> = [
      ['"NaN"', NaN],
      ['"Infinity"', Infinity],
      ['"+Infinity"', Infinity],
      ['"+INF"', Infinity],
      ['"-Infinity"', -Infinity],
      ['"-INF"', -Infinity],
      ['"INF"', null],
      ['"inf"', null],
      ['"nan"', null],
      ['"1.5"', null],
    ];
    for (const parse of tiers) {
      for (const [text, want] of cases) {
        // twice: the second line of a shape is read by tier 1
        for (let k = 0; k < 2; k++) {
          const r = parse(`{"d":${text}}`);
          if (want === null) expect([text, r.ok]).toEqual([text, false]);
          else expect([text, r.ok && r.row.d]).toEqual([text, want]);
        }
      }
    }
    // the fast tiers take the accepted strings themselves (the reference reads only bad lines)
    for (const p of tiers.slice(1) as ReturnType<typeof compileLineParser>[])
      expect(p.stats.reference).toBe(2 * cases.filter(([, want]) => want === null).length);
  });

  it("reads the bare tokens Spark's JSON reader takes as numbers (NaN, Infinity, ±Infinity, ±INF), and no others, in every tier", () => {
    const s = parseSchema('d DOUBLE, s STRING, n INT');
    const tiers = [(line: string) => parseJsonLine(s, line), compileLineParser(s), compileLineParser(s, { shapes: false })];
    const cases: Array<[string, number | null]> = [
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['+Infinity', Infinity],
      ['+INF', Infinity],
      ['-Infinity', -Infinity],
      ['-INF', -Infinity],
      ['INF', null],
      ['inf', null],
      ['nan', null],
      ['-NaN', null],
      ['+NaN', null],
      ['+1', null],
      ['NaNa', null],
      ['Infinity1', null],
    ];
    for (const parse of tiers) {
      for (const [token, want] of cases) {
        for (const line of [`{"d":${token},"s":"x","n":1}`, `{"d": ${token} , "s":"x","n":1,"other":[${token}]}`]) {
          const r = parse(line);
          if (want === null) expect([line, r.ok]).toEqual([line, false]);
          else expect([line, r.ok && { d: r.row.d, s: r.row.s, n: r.row.n }]).toEqual([line, { d: want, s: 'x', n: 1 }]);
        }
      }
      // inside strings they are text; in a STRING column a bare one is kept as Jackson writes it back, quoted
      expect(parse('{"d":1,"s":"NaN -Infinity","n":1}')).toEqual({ ok: true, row: { d: 1, s: 'NaN -Infinity', n: 1 } });
      // a STRING keeps the token as written (Spark 4's exact string parsing)
      expect(parse('{"d":1,"s":-INF,"n":1}')).toEqual({ ok: true, row: { d: 1, s: '-INF', n: 1 } });
      expect(parse('{"d":1,"s":[NaN,{"a":Infinity}],"n":1}')).toEqual({ ok: true, row: { d: 1, s: '[NaN,{"a":Infinity}]', n: 1 } });
      // not a number for an INT column: a dead letter that names the value
      const bad = parse('{"d":1,"s":"x","n":NaN}');
      expect(!bad.ok && bad.reason).toMatch(/column n \(INT\) has number NaN: expected a JSON integer/);
      // a token where a key belongs is not taken
      expect(parse('{NaN:1,"d":1,"s":"x","n":1}').ok).toBe(false);
    }
  });

  it('reads a number for a TIMESTAMP as epoch seconds, as Spark does', () => {
    expect(coerceRecord(parseSchema('t TIMESTAMP'), { t: 10 })).toEqual({ ok: true, row: { t: 10_000_000 } });
    // exact from the number's digits, not through a product of doubles: 1.000001 s is 1,000,001 µs
    expect(coerceRecord(parseSchema('t TIMESTAMP'), { t: 1.000001 })).toEqual({ ok: true, row: { t: 1_000_001 } });
    expect(coerceRecord(parseSchema('t TIMESTAMP'), { t: 1790856000.123456 })).toEqual({ ok: true, row: { t: 1_790_856_000_123_456 } });
  });
});

describe('Spark interval strings', () => {
  it.each([
    ['10 minutes', 600_000],
    ['1 hour', 3_600_000],
    ['interval 5 seconds', 5000],
    ['1 hour 30 minutes', 5_400_000],
    ['500 milliseconds', 500],
    ['2 days', 172_800_000],
    ['10 microseconds', 0.01],
    ['1 second 250 microseconds', 1000.25],
  ])('%s', (text, ms) => {
    // in µs, the precision of a TIMESTAMP
    expect(parseInterval(text, 'x').us).toBe(Math.round(ms * 1000));
  });

  it('drops the part of a watermark delay below the millisecond, as Spark getDelayMs does', () => {
    expect(parseWatermarkDelay('10 seconds 999 microseconds')).toBe(10_000);
    expect(parseWindowDuration('10 microseconds', 'window duration')).toBe(10);
  });

  it('refuses a duration that is not a whole number of microseconds', () => {
    expect(() => parseWindowDuration('0.5 microseconds', 'window duration')).toThrow(/whole number of microseconds/);
  });

  it('counts a month as 31 days in a watermark delay, as Spark does', () => {
    expect(parseWatermarkDelay('1 month')).toBe(31 * 86_400_000);
  });

  it('refuses months in a window duration and an unknown unit', () => {
    expect(() => parseWindowDuration('1 month', 'window duration')).toThrow(/months or years/);
    expect(() => parseInterval('10 fortnights', 'delay')).toThrow(/unit "fortnights"/);
  });
});
