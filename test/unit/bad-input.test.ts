/**
 * Records that once wedged a query (issue 14, holes 3a, 3b, 5 and 10): each is a bad record with
 * a reason that names the rule and the fix, read the same way by every tier of the line reader
 * and by the reference parser, never an error that fails the batch.
 */
import { parseSchema } from '../../lib/engine/schema';
import { formatTimestamp, parseTimestamp } from '../../lib/engine/timestamps';
import { expectBad, expectGood } from '../helpers/line-readers';

describe("a TIMESTAMP outside Spark's range (years 1 to 9999)", () => {
  const schema = parseSchema('k STRING, t TIMESTAMP');
  const good = '{"k":"a","t":"2026-10-01 12:00:00"}';

  it('is a bad record when a number is epoch microseconds, with the likely cause in the reason', () => {
    expectBad(schema, good, '{"k":"a","t":1790000000000000}', /epoch seconds outside 0001-01-01\.\.9999-12-31 \(milliseconds or microseconds\?\)/);
  });

  it('is a bad record when a number is epoch milliseconds far in the future', () => {
    expectBad(schema, good, '{"k":"a","t":1790000000000}', /epoch seconds outside/);
  });

  it('keeps epoch seconds inside the range', () => {
    expectGood(schema, good, '{"k":"a","t":1790000000}', 't', 1790000000 * 1_000_000);
  });

  it('reads year 0001 as year 1, not 1901', () => {
    // (epoch µs beyond 2^53: a bigint, exactly)
    expect(formatTimestamp(parseTimestamp('0001-01-01 00:00:00')!)).toBe('0001-01-01T00:00:00.000Z');
    expect(formatTimestamp(parseTimestamp('0099-12-31T23:59:59.000001Z')!)).toBe('0099-12-31T23:59:59.000001Z');
    expectGood(schema, good, '{"k":"a","t":"0001-01-01 00:00:00"}', 't', BigInt(Date.parse('0001-01-01T00:00:00Z')) * 1000n);
  });

  it('refuses year 0000 and an impossible day in a year below 100', () => {
    expectBad(schema, good, '{"k":"a","t":"0000-06-01 00:00:00"}', /years 0001-9999/);
    expectBad(schema, good, '{"k":"a","t":"0097-02-29 00:00:00"}', /years 0001-9999/);
    expect(parseTimestamp('0096-02-29 00:00:00')).toBe(BigInt(Date.parse('0096-02-29T00:00:00Z')) * 1000n);
  });

  it('refuses an offset beyond ±18:00 or with 60 minutes or more', () => {
    expectBad(schema, good, '{"k":"a","t":"2026-10-01T12:00:00+99:99"}', /offset up to ±18:00/);
    expectBad(schema, good, '{"k":"a","t":"2026-10-01T12:00:00+05:60"}', /offset up to ±18:00/);
    expectBad(schema, good, '{"k":"a","t":"2026-10-01T12:00:00-18:01"}', /offset up to ±18:00/);
    expectGood(schema, good, '{"k":"a","t":"2026-10-01T12:00:00+18:00"}', 't', Date.parse('2026-10-01T12:00:00+18:00') * 1000);
  });
});

describe('a LONG beyond 2^53 - 1', () => {
  const schema = parseSchema('id LONG');
  const good = '{"id":7}';

  it('keeps its exact digits as a bigint rather than a rounded id (two ids must not collapse into one)', () => {
    expectGood(schema, good, '{"id":9007199254740993}', 'id', 9007199254740993n);
    expectGood(schema, good, '{"id":9007199254740992}', 'id', 9007199254740992n);
    expectGood(schema, good, '{"id":-9007199254740993}', 'id', -9007199254740993n);
  });

  it('is a bad record for 1e300, which is an integer only as a double (Spark reads a BIGINT from no exponent)', () => {
    expectBad(schema, good, '{"id":1e300}', /has number 1e300: expected a JSON integer \(a fraction or an exponent/);
  });

  it('keeps 2^53 - 1 exactly', () => {
    expectGood(schema, good, '{"id":9007199254740991}', 'id', 9007199254740991);
    expectGood(schema, good, '{"id":-9007199254740991}', 'id', -9007199254740991);
  });
});

describe('a STRING column holding a value nested thousands of levels deep', () => {
  const schema = parseSchema('k STRING, payload STRING');
  const good = '{"k":"a","payload":"x"}';

  it('is a bad record, not a stack overflow that fails the batch', () => {
    const depth = 200_000;
    const line = `{"k":"a","payload":${'['.repeat(depth)}1${']'.repeat(depth)}}`;
    expectBad(schema, good, line, /nests too deeply to keep a column's value as text.*flatten the value at the producer/);
  });

  it('keeps a modestly nested value as its JSON text, as Spark does', () => {
    expectGood(schema, good, '{"k":"a","payload":[[1,2],{"x":[3]}]}', 'payload', '[[1,2],{"x":[3]}]');
  });
});

describe('columns named like Object.prototype members', () => {
  it('a missing "constructor" or "toString" is a null column (as Spark), not a function from the prototype', () => {
    const schema = parseSchema('constructor STRING, toString STRING');
    const good = '{"constructor":"a","toString":"b"}';
    expectGood(schema, good, '{"toString":"b"}', 'constructor', null);
    expectGood(schema, good, '{"constructor":"a"}', 'toString', null);
    expectGood(schema, good, '{"constructor":"a","toString":"b"}', 'constructor', 'a');
  });

  it('a column named __proto__ is refused when the schema is declared, with the fix', () => {
    expect(() => parseSchema('__proto__ STRING, k STRING')).toThrow(
      /a column named __proto__ cannot be held as data by JavaScript objects: rename the field at the producer/,
    );
  });
});
