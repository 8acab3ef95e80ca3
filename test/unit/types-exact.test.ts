/**
 * Issue 29's exact types (FORMAT-3 "Types"): every way a line is read (the reference parser and
 * each tier of the compiled reader) gives the same value, or the same dead-letter reason.
 * Expectations from Spark's type ranges, not from sluice's output.
 */
import { addLongs } from '../../lib/engine/aggregates';
import { stateId } from '../../lib/engine/operators/state-id';
import type { Json } from '../../lib/engine/ports';
import { count, max, min, sum } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { outputValue, parseSchema } from '../../lib/engine/schema';
import { parseJsonLine } from '../../lib/engine/json-record';
import { expectBad, expectGood } from '../helpers/line-readers';
import { decodeStateJson, encodeStateJson } from '../../lib/engine/state-json';
import { createTestRunner } from './engine-factories';

describe('TINYINT and SMALLINT are range-checked to their width', () => {
  const schema = parseSchema('k STRING, t TINYINT, s SMALLINT, b BYTE, h SHORT');
  const good = '{"k":"a","t":1,"s":2,"b":3,"h":4}';
  const line = (col: string, v: string) => good.replace(new RegExp(`"${col}":\\d+`), `"${col}":${v}`);

  it('keeps the ends of each range', () => {
    expectGood(schema, good, line('t', '127'), 't', 127);
    expectGood(schema, good, line('t', '-128'), 't', -128);
    expectGood(schema, good, line('s', '32767'), 's', 32767);
    expectGood(schema, good, line('s', '-32768'), 's', -32768);
    expectGood(schema, good, line('b', '-128'), 'b', -128);
    expectGood(schema, good, line('h', '32767'), 'h', 32767);
  });

  it('makes a value one past either end a dead letter naming the column, the value, the type, its range and the fix', () => {
    expectBad(
      schema,
      good,
      line('t', '128'),
      /^column t \(TINYINT\) has number 128: out of the TINYINT range -128\.\.127; declare the column SMALLINT, INT or wider$/,
    );
    expectBad(schema, good, line('t', '-129'), /^column t \(TINYINT\) has number -129: out of the TINYINT range/);
    expectBad(
      schema,
      good,
      line('s', '32768'),
      /^column s \(SMALLINT\) has number 32768: out of the SMALLINT range -32768\.\.32767; declare the column INT or wider$/,
    );
    expectBad(schema, good, line('s', '-32769'), /SMALLINT range/);
    expectBad(schema, good, line('b', '300'), /^column b \(TINYINT\) has number 300/);
    expectBad(schema, good, line('h', '40000'), /^column h \(SMALLINT\) has number 40000/);
  });

  it('still refuses a fraction and names the declared type', () => {
    expectBad(schema, good, line('t', '1.5'), /^column t \(TINYINT\) has number 1\.5: expected a JSON integer/);
  });

  it('leaves INT at 32 bits', () => {
    const ints = parseSchema('i INT');
    expectGood(ints, '{"i":1}', '{"i":2147483647}', 'i', 2147483647);
    expectBad(
      ints,
      '{"i":1}',
      '{"i":2147483648}',
      /^column i \(INT\) has number 2147483648: out of the INT range -2147483648\.\.2147483647; declare the column BIGINT or wider$/,
    );
  });

  it('declares the narrower integers as INT columns with their width', () => {
    expect(schema.columns.map((c) => [c.type, c.bits])).toEqual([
      ['STRING', undefined],
      ['INT', 8],
      ['INT', 16],
      ['INT', 8],
      ['INT', 16],
    ]);
  });
});

describe('types sluice does not read', () => {
  it.each(['BINARY', 'INTERVAL', 'VARIANT'])('%s is refused naming the type and the supported ones', (t) => {
    expect(() => parseSchema(`x ${t}`)).toThrow(
      new RegExp(`x has type ${t}, which sluice does not support: use one of STRING, BOOLEAN, .*DECIMAL\\(p,s\\), DATE`),
    );
  });
});

describe('BIGINT beyond 2^53 − 1, read from the JSON text', () => {
  const schema = parseSchema('k STRING, n BIGINT');
  const good = '{"k":"a","n":1}';

  it('is a bigint with the exact digits on every tier (2^53 + 1 is not 2^53)', () => {
    expectGood(schema, good, '{"k":"a","n":9007199254740993}', 'n', 9007199254740993n);
    expectGood(schema, good, '{"k":"a","n":-9007199254740993}', 'n', -9007199254740993n);
    expectGood(schema, good, '{"k":"a","n":9223372036854775807}', 'n', 9223372036854775807n);
    expectGood(schema, good, '{"k":"a","n":-9223372036854775808}', 'n', -9223372036854775808n);
    expectGood(schema, good, '{ "k" : "a" , "n" : 12345678901234567 }', 'n', 12345678901234567n);
  });

  it('stays a number within ±(2^53 − 1): one form per value', () => {
    expectGood(schema, good, '{"k":"a","n":9007199254740991}', 'n', 9007199254740991);
    expectGood(schema, good, '{"k":"a","n":1000000000000000}', 'n', 1000000000000000);
  });

  it('is exact also on the reference path (an escape in another column sends the line there)', () => {
    expectGood(schema, good, '{"k":"a\\"b","n":9007199254740993}', 'n', 9007199254740993n);
    // JSON.parse keeps the last of a repeated key; so does the exact re-read
    expectGood(schema, good, '{"k":"a","n":1,"n":9007199254740995}', 'n', 9007199254740995n);
  });

  it('leaves a big integer in other columns as JSON.parse reads it', () => {
    const s2 = parseSchema('k STRING, n BIGINT, d DOUBLE');
    const r = parseJsonLine(s2, '{"k":"a\\u0041","n":9007199254740993,"d":9007199254740993}');
    expect(r.ok && [r.row.n, r.row.d]).toEqual([9007199254740993n, 9007199254740992]);
  });

  it('makes a value beyond 64 bits a dead letter naming the exact digits, the range and the fix', () => {
    expectBad(
      schema,
      good,
      '{"k":"a","n":9223372036854775808}',
      /^column n \(BIGINT\) has number 9223372036854775808: out of the BIGINT range -9223372036854775808\.\.9223372036854775807; declare the column DECIMAL\(38,0\) or STRING$/,
    );
    expectBad(schema, good, '{"k":"a","n":-9223372036854775809}', /has number -9223372036854775809: out of the BIGINT range/);
  });

  it('makes an exponent or fraction beyond 2^53 a dead letter (Spark reads a BIGINT only from an integer token)', () => {
    expectBad(schema, good, '{"k":"a","n":1e20}', /has number 1e20: expected a JSON integer \(a fraction or an exponent/);
    expectBad(schema, good, '{"k":"a","n":9007199254740993.0}', /expected a JSON integer \(a fraction or an exponent/);
  });

  it('is output as a string of its digits beyond ±(2^53 − 1), as a number within', () => {
    expect(outputValue('LONG', 9007199254740993n)).toBe('9007199254740993');
    expect(outputValue('LONG', -9223372036854775808n)).toBe('-9223372036854775808');
    expect(outputValue('LONG', 9007199254740991)).toBe(9007199254740991);
  });

  it('survives state text exactly, beside NaN, and plain values keep plain JSON', () => {
    const v = [9007199254740993n, { s: [-9223372036854775808n, NaN, 1] }, 'n'] as unknown as Json;
    const back = decodeStateJson(encodeStateJson(v));
    expect(back).toEqual(v);
    expect(encodeStateJson([1, 'x'])).toBe('[1,"x"]');
  });

  it('groups apart from the number next to it and from its digits as a STRING', () => {
    const ids = [9007199254740993n, 9007199254740992, '9007199254740993'].map((v) => stateId([v as unknown as Json]));
    expect(new Set(ids).size).toBe(3);
  });
});

describe('sum of BIGINT is exact (Spark: BIGINT, ANSI overflow an error)', () => {
  it('adds across 2^53 and back, in one form', () => {
    expect(addLongs(9007199254740991, 2)).toBe(9007199254740993n);
    expect(addLongs(9007199254740993n, -9007199254740991)).toBe(2);
    expect(addLongs(4611686018427387904n, 4611686018427387903n)).toBe(9223372036854775807n);
  });

  it('throws ARITHMETIC_OVERFLOW past 64 bits, with the fix', () => {
    expect(() => addLongs(9223372036854775807n, 1)).toThrow(/^\[ARITHMETIC_OVERFLOW\] long overflow.*9223372036854775808.*declare the column DECIMAL\(38,0\)/);
  });

  it('through a query on the in-memory twins: sum, min, max of BIGINT and sum of TINYINT, state across batches', async () => {
    const plan = readStream
      .schema('k STRING, n BIGINT, t TINYINT')
      .load()
      .groupBy('k')
      .agg(count().as('c'), sum('n').as('total'), min('n').as('low'), max('n').as('high'), sum('t').as('ts'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('bigint-sum')
      .plan();
    const runner = createTestRunner(plan);
    // text, as a producer writes it: the rows never pass through a double
    runner.drop(
      [
        '{"k":"a","n":9007199254740991,"t":100}',
        '{"k":"a","n":2,"t":100}',
        '{"k":"b","n":-9223372036854775808,"t":-128}',
        '{"k":"b","n":9223372036854775807,"t":300}',
      ].join('\n'),
    );
    await runner.run();
    // b's second row is a dead letter (TINYINT 300): no aggregate counts it
    const dead = runner.deadLetters.all('malformed') as Array<{ source: { line: number }; reason: string }>;
    expect(dead.map((d) => [d.source.line, d.reason])).toEqual([[4, expect.stringMatching(/^column t \(TINYINT\) has number 300: out of the TINYINT range/)]]);
    const byKey = (rows: Record<string, unknown>[]) => Object.fromEntries(rows.map((r) => [r.k, r]));
    expect(byKey(runner.sinkRows())).toEqual({
      a: { k: 'a', c: 2, total: '9007199254740993', low: 2, high: 9007199254740991, ts: 200 },
      b: { k: 'b', c: 1, total: '-9223372036854775808', low: '-9223372036854775808', high: '-9223372036854775808', ts: -128 },
    });
    runner.drop('{"k":"a","n":-9007199254740991,"t":1}');
    await runner.run();
    expect(byKey(runner.sinkRows().slice(2))).toEqual({ a: { k: 'a', c: 3, total: 2, low: -9007199254740991, high: 9007199254740991, ts: 201 } });
  });
});

describe('FLOAT (and REAL) is IEEE 754 binary32', () => {
  const schema = parseSchema('k STRING, f FLOAT, r REAL, d DOUBLE');
  const good = '{"k":"a","f":1,"r":1,"d":1}';

  it('rounds each value to binary32 on every tier, and DOUBLE stays binary64', () => {
    // FORMAT-3: 0.1 as a FLOAT is output as 0.10000000149011612 (the double of its binary32)
    expectGood(schema, good, '{"k":"a","f":0.1,"r":1,"d":1}', 'f', 0.10000000149011612);
    expectGood(schema, good, '{"k":"a","f":1,"r":0.1,"d":1}', 'r', 0.10000000149011612);
    expectGood(schema, good, '{"k":"a","f":1,"r":1,"d":0.1}', 'd', 0.1);
    // 2^24 + 1 is the first integer binary32 cannot hold: it rounds to even, 2^24
    expectGood(schema, good, '{"k":"a","f":16777217,"r":1,"d":1}', 'f', 16777216);
    expectGood(schema, good, '{"k":"a\\"","f":16777217,"r":1,"d":1}', 'f', 16777216);
    expectGood(schema, good, '{"k":"a","f":"NaN","r":1,"d":1}', 'f', NaN);
  });

  it('names FLOAT in a dead letter', () => {
    expectBad(schema, good, '{"k":"a","f":"x","r":1,"d":1}', /^column f \(FLOAT\) has string "x": expected a JSON number/);
  });

  it('sums as DOUBLE over the binary32 values (Spark casts FLOAT to DOUBLE for sum)', async () => {
    const plan = readStream
      .schema('k STRING, f FLOAT')
      .load()
      .groupBy('k')
      .agg(sum('f').as('total'), max('f').as('high'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .queryName('float-sum')
      .plan();
    const runner = createTestRunner(plan);
    runner.drop('{"k":"a","f":0.1}\n{"k":"a","f":0.2}');
    await runner.run();
    // 0.10000000149011612 + 0.20000000298023224, in doubles
    expect(runner.sinkRows()).toEqual([{ k: 'a', total: 0.30000000447034836, high: 0.20000000298023224 }]);
  });
});
