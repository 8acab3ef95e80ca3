import { arrayLineRows, isArrayLine } from '../../lib/engine/formats/json-array';
import { isDeepStrictEqual } from 'node:util';
import { compileLineParser, type LineParser, type LineParserOptions } from '../../lib/engine/json-scan';
import { parseSchema, type Schema } from '../../lib/engine/schema';
import { parseJsonLine, type CoerceResult } from '../../lib/engine/json-record';
import type { Row } from '../../lib/engine/ports';

/**
 * The scanner must give what parseJsonLine gives: the same ok/failed decision, the same reason,
 * and for a good record the same typed value in every column of the schema (Object.is, so -0 and
 * NaN count). Its rows may lack the fields outside the schema; any field they have beyond the
 * schema must be the reference's.
 */
function mismatch(schema: Schema, line: string, got: CoerceResult, ref: CoerceResult = parseJsonLine(schema, line)): string | null {
  const what = `line ${JSON.stringify(line)}`;
  if (got.ok !== ref.ok) return `${what}: ok=${got.ok}, reference ok=${ref.ok}${ref.ok ? '' : ` (${ref.reason})`}`;
  if (!got.ok || !ref.ok) {
    return !got.ok && !ref.ok && got.reason !== ref.reason ? `${what}: reason ${JSON.stringify(got.reason)}, reference ${JSON.stringify(ref.reason)}` : null;
  }
  for (const c of schema.columns) {
    if (!Object.hasOwn(got.row, c.name)) return `${what}: column ${c.name} missing from the row`;
    if (!Object.is(got.row[c.name], ref.row[c.name]))
      return `${what}: column ${c.name} is ${String(got.row[c.name])} (${typeof got.row[c.name]}), reference ${String(ref.row[c.name])} (${typeof ref.row[c.name]})`;
  }
  for (const k of Object.keys(got.row)) {
    if (!Object.hasOwn(ref.row, k) || !isDeepStrictEqual(got.row[k], ref.row[k])) return `${what}: field ${k} is not the reference's`;
  }
  return null;
}

const ALL = parseSchema('s STRING, i INT, l LONG, d DOUBLE, b BOOLEAN, t TIMESTAMP');
const BASE = '{"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}';

/** The parsers a line is read with: each tier gets its turn. */
function parsers(schema: Schema, warm: string[]): Array<[string, LineParser]> {
  const warmed = (lines: string[], options: LineParserOptions) => {
    const p = compileLineParser(schema, options);
    for (const l of lines) p(l);
    return p;
  };
  return [
    ['fresh', compileLineParser(schema)],
    ['no shapes', compileLineParser(schema, { shapes: false })],
    ['warm compact', warmed(warm.slice(0, 1), {})],
    ['warm spaced', warmed(warm, {})],
    ['warm compact, no codegen', warmed(warm.slice(0, 1), { codegen: false })],
    ['warm spaced, no codegen', warmed(warm, { codegen: false })],
  ];
}

/** Reads the line with every parser (the fresh one twice: scan and learn, then its shape). */
function expectSame(schema: Schema, line: string, warm: string[]): void {
  const problems: string[] = [];
  for (const [name, p] of parsers(schema, warm)) {
    const reads = name === 'fresh' ? 2 : 1;
    for (let k = 0; k < reads; k++) {
      const m = mismatch(schema, line, p(line));
      if (m) problems.push(`${name}${reads > 1 ? ` read ${k + 1}` : ''}: ${m}`);
    }
  }
  expect(problems).toEqual([]);
}

const WARM_ALL = [BASE, ' { "s" : "x" , "i" : 0 , "l" : 0 , "d" : 0 , "b" : false , "t" : "2026-10-01 00:00:00" } '];

/** BASE with the value of one column replaced by raw JSON text. */
function withValue(col: string, raw: string): string {
  const o: Record<string, string> = { s: '"a"', i: '1', l: '2', d: '1.5', b: 'true', t: '"2026-10-01 12:00:00"' };
  o[col] = raw;
  return `{${Object.entries(o)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
}

function without(col: string): string {
  const o = JSON.parse(BASE) as Record<string, unknown>;
  delete o[col];
  return JSON.stringify(o);
}

describe('compileLineParser gives what parseJsonLine gives', () => {
  const cases: Array<[string, string]> = [
    ['the base record', BASE],
    ['keys in another order', '{"t":"2026-10-01 12:00:00","b":true,"d":1.5,"l":2,"i":1,"s":"a"}'],
    ['whitespace around every token', ' \t{ "s" :\t"a" ,\n"i"\r: 1 , "l" : 2 ,"d":1.5 , "b" : true , "t" : "2026-10-01 12:00:00" }\r\n '],
    ['a trailing newline', `${BASE}\n`],
    ['a trailing carriage return', `${BASE}\r`],
    ['escaped quote', withValue('s', '"a\\"b"')],
    ['escaped backslash', withValue('s', '"a\\\\b"')],
    ['escaped newline', withValue('s', '"a\\nb"')],
    ['escaped solidus', withValue('s', '"a\\/b"')],
    ['unicode escape', withValue('s', '"caf\\u00e9"')],
    ['surrogate pair escape', withValue('s', '"\\ud83d\\ude00"')],
    ['raw unicode', withValue('s', '"héllo wörld 😀 日本"')],
    ['raw lone surrogate', withValue('s', '"a\ud800b"')],
    ['raw U+2028', withValue('s', '"a\u2028b"')],
    ['raw DEL', withValue('s', '"a\u007fb"')],
    ['raw control character in a string', withValue('s', '"a\u0001b"')],
    ['raw tab in a string', withValue('s', '"a\tb"')],
    ['raw newline in a string', withValue('s', '"a\nb"')],
    ['invalid escape', withValue('s', '"a\\xb"')],
    ['short unicode escape', withValue('s', '"a\\u12"')],
    ['escaped key of the schema', '{"\\u0073":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['escaped key of the schema, duplicated', '{"s":"a","\\u0073":"b","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['escaped unknown key', '{"x\\"y":1,"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['empty string', withValue('s', '""')],
    ['null string', withValue('s', 'null')],
    ['null int', withValue('i', 'null')],
    ['null long', withValue('l', 'null')],
    ['null double', withValue('d', 'null')],
    ['null boolean', withValue('b', 'null')],
    ['null timestamp', withValue('t', 'null')],
    ['all null', '{"s":null,"i":null,"l":null,"d":null,"b":null,"t":null}'],
    ['missing s', without('s')],
    ['missing i', without('i')],
    ['missing t', without('t')],
    ['number in a STRING column', withValue('s', '1.50')],
    ['exponent in a STRING column', withValue('s', '1e2')],
    ['negative zero in a STRING column', withValue('s', '-0')],
    ['huge number in a STRING column', withValue('s', '1e400')],
    ['boolean in a STRING column', withValue('s', 'false')],
    ['object in a STRING column', withValue('s', '{"x":[1,"y"]}')],
    ['array in a STRING column', withValue('s', '[1, 2]')],
    ['fraction in an INT column', withValue('i', '1.5')],
    ['string in an INT column', withValue('i', '"1"')],
    ['INT max', withValue('i', '2147483647')],
    ['INT min', withValue('i', '-2147483648')],
    ['above INT max', withValue('i', '2147483648')],
    ['below INT min', withValue('i', '-2147483649')],
    ['integral exponent in an INT column', withValue('i', '1e3')],
    ['integral fraction in an INT column', withValue('i', '1.0')],
    ['negative zero in an INT column', withValue('i', '-0')],
    ['beyond 2^53 in a LONG column', withValue('l', '9007199254740993')],
    ['20 digits in a LONG column', withValue('l', '12345678901234567890')],
    ['1e20 in a LONG column', withValue('l', '1e20')],
    ['fraction in a LONG column', withValue('l', '2.5')],
    ['boolean in a LONG column', withValue('l', 'true')],
    ['negative zero', withValue('d', '-0')],
    ['negative zero fraction', withValue('d', '-0.0')],
    ['zero exponent', withValue('d', '0e10')],
    ['1e5', withValue('d', '1e5')],
    ['1.5E-3', withValue('d', '1.5E-3')],
    ['1E+2', withValue('d', '1E+2')],
    ['0.1', withValue('d', '0.1')],
    ['0.30000000000000004', withValue('d', '0.30000000000000004')],
    ['17 significant digits', withValue('d', '1.2345678901234567')],
    ['15 significant digits', withValue('d', '123456.789012345')],
    ['16 significant digits', withValue('d', '1234567.890123456')],
    ['long fraction of zeros', withValue('d', '0.000000000000000000001')],
    ['exponent 22', withValue('d', '123e22')],
    ['exponent 23', withValue('d', '123e23')],
    ['exponent -22', withValue('d', '123e-22')],
    ['exponent -23', withValue('d', '123e-23')],
    ['smallest subnormal', withValue('d', '5e-324')],
    ['underflow to negative zero', withValue('d', '-1e-400')],
    ['largest double', withValue('d', '1.7976931348623157e308')],
    ['overflow to Infinity', withValue('d', '1e400')],
    ['huge exponent', withValue('d', '1e99999999999999999999')],
    ['30 digits', withValue('d', '123456789012345678901234567890')],
    ['negative', withValue('d', '-42.125')],
    ['"NaN"', withValue('d', '"NaN"')],
    ['"Infinity"', withValue('d', '"Infinity"')],
    ['"+Infinity"', withValue('d', '"+Infinity"')],
    ['"-Infinity"', withValue('d', '"-Infinity"')],
    ['"+INF"', withValue('d', '"+INF"')],
    ['"-INF"', withValue('d', '"-INF"')],
    ['"INF"', withValue('d', '"INF"')],
    ['"nan"', withValue('d', '"nan"')],
    ['"1.5"', withValue('d', '"1.5"')],
    ['boolean in a DOUBLE column', withValue('d', 'false')],
    ['bare NaN', withValue('d', 'NaN')],
    ['bare Infinity', withValue('d', 'Infinity')],
    ['leading zero', withValue('d', '01')],
    ['trailing dot', withValue('d', '1.')],
    ['leading dot', withValue('d', '.5')],
    ['plus sign', withValue('d', '+1')],
    ['lone minus', withValue('d', '-')],
    ['double minus', withValue('d', '--1')],
    ['empty exponent', withValue('d', '1e')],
    ['signed empty exponent', withValue('d', '1e+')],
    ['hex', withValue('d', '0x10')],
    ['underscore', withValue('d', '1_000')],
    ['false', withValue('b', 'false')],
    ['"true"', withValue('b', '"true"')],
    ['1 for a boolean', withValue('b', '1')],
    ['tru', withValue('b', 'tru')],
    ['True', withValue('b', 'True')],
    ['truex', withValue('b', 'truex')],
    ['nul', withValue('s', 'nul')],
    ['nullx', withValue('s', 'nullx')],
    ['ISO with Z', withValue('t', '"2026-10-01T12:00:00Z"')],
    ['ISO with an offset', withValue('t', '"2026-10-01T14:00:00+02:00"')],
    ['one fraction digit', withValue('t', '"2026-10-01 12:00:00.5"')],
    ['two fraction digits', withValue('t', '"2026-10-01 12:00:00.25"')],
    ['three fraction digits', withValue('t', '"2026-10-01 12:59:59.719"')],
    ['four fraction digits', withValue('t', '"2026-10-01 12:00:00.1234"')],
    ['nine fraction digits', withValue('t', '"2026-10-01 12:00:00.123456789"')],
    ['no seconds', withValue('t', '"2026-10-01 12:00"')],
    ['date alone', withValue('t', '"2026-10-01"')],
    ['T separator', withValue('t', '"2026-10-01T12:00:00"')],
    ['t separator', withValue('t', '"2026-10-01t12:00:00"')],
    ['February 30', withValue('t', '"2026-02-30 00:00:00"')],
    ['February 29 of a leap year', withValue('t', '"2028-02-29 23:59:59.999"')],
    ['hour 24', withValue('t', '"2026-10-01 24:00:00"')],
    ['minute 60', withValue('t', '"2026-10-01 12:60:00"')],
    ['second 60', withValue('t', '"2026-10-01 12:00:60"')],
    ['month 13', withValue('t', '"2026-13-01 12:00:00"')],
    ['year 0050', withValue('t', '"0050-01-01 00:00:00"')],
    ['a leading space in the text', withValue('t', '" 2026-10-01 12:00:00"')],
    ['a trailing space in the text', withValue('t', '"2026-10-01 12:00:00 "')],
    ['escaped timestamp', withValue('t', '"2026-10-01\\u002012:00:00"')],
    ['noon', withValue('t', '"noon"')],
    ['epoch seconds', withValue('t', '1700000000')],
    ['fractional epoch seconds', withValue('t', '1700000000.5')],
    ['negative epoch seconds', withValue('t', '-1')],
    ['infinite epoch seconds', withValue('t', '1e400')],
    ['boolean timestamp', withValue('t', 'true')],
    ['nested unknown object', '{"x":{"a":[1,{"b":null}],"c":"d\\"e"},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['nested unknown array', `{"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00","x":[[], {}, [[1, "2"]], {"k": [true, false, null]}]}`],
    ['empty nested values', '{"s":"a","x":{},"i":1,"y":[],"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['spaced nested values', '{"s":"a","x": { "a" : [ 1 , 2 ] } ,"i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['deep nesting', `{"x":${'['.repeat(100)}${']'.repeat(100)},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}`],
    ['nesting at the depth limit', `{"x":${'['.repeat(64)}${']'.repeat(64)},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}`],
    ['nested trailing comma', '{"x":{"a":1,},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['nested array trailing comma', '{"x":[1,],"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['nested key without a value', '{"x":{"a"},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['nested array without commas', '{"x":[1 2],"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['nested number key', '{"x":{1:2},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['an array closed by a brace', '{"x":[1},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['an object closed by a bracket', '{"x":{"a":1],"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    [
      'past the depth limit, an object closed by a bracket',
      `{"x":${'{"a":'.repeat(70)}1]${'}'.repeat(69)},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}`,
    ],
    ['past the depth limit, valid', `{"x":${'{"a":['.repeat(40)}1${']}'.repeat(40)},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}`],
    ['unbalanced nesting', '{"x":[1}],"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    [
      'unknown scalars of every kind',
      '{"a":"q\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9","s":"a","c":-0.5e-7,"i":1,"e":true,"l":2,"f":false,"d":1.5,"g":null,"b":true,"t":"2026-10-01 12:00:00","h":""}',
    ],
    ['unknown string with a bad escape', '{"a":"q\\q","s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['unknown key equal to a prefix', '{"ss":1,"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['unknown key in another case', '{"S":1,"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['__proto__ field', '{"__proto__":{"s":"p"},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['constructor field', '{"constructor":1,"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['duplicate schema key', '{"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00","s":"b"}'],
    ['duplicate schema key, second wrong', '{"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00","i":"x"}'],
    ['duplicate schema key, first wrong', '{"i":"x","s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['duplicate unknown key', '{"x":1,"s":"a","i":1,"x":2,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['trailing comma', '{"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00",}'],
    ['leading comma', '{,"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['double comma', '{"s":"a",,"i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['missing comma', '{"s":"a" "i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['missing colon', '{"s" "a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['single quotes', "{'s':'a','i':1,'l':2,'d':1.5,'b':true,'t':'2026-10-01 12:00:00'}"],
    ['unquoted key', '{s:"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}'],
    ['trailing garbage', `${BASE}x`],
    ['two objects', `${BASE}${BASE}`],
    ['an extra brace', `${BASE}}`],
    ['a byte order mark', `\ufeff${BASE}`],
    ['form feed as whitespace', BASE.replace(',"i"', ',\f"i"')],
    ['vertical tab as whitespace', BASE.replace(',"i"', ',\v"i"')],
    ['no-break space as whitespace', BASE.replace(',"i"', ',\u00a0"i"')],
    ['empty object', '{}'],
    ['spaced empty object', ' { } '],
    ['empty line', ''],
    ['blank line', '   '],
    ['null', 'null'],
    ['a number', '1'],
    ['a string', '"s"'],
    ['an array', '[]'],
    ['the record in an array', `[${BASE}]`],
    ['the record nested', `{"r":${BASE}}`],
  ];
  it.each(cases)('%s', (_name, line) => {
    expectSame(ALL, line, WARM_ALL);
  });

  it('every truncation of a record', () => {
    const line = '{"s":"a\\"b","x":[1,{"y":null}],"i":-1,"l":20,"d":-1.5e-3,"b":false,"t":"2026-10-01 12:00:00.5","z":"w"}';
    for (let k = 0; k < line.length; k++) expectSame(ALL, line.slice(0, k), WARM_ALL);
  });

  it('column names that are prefixes of one another', () => {
    const schema = parseSchema('a STRING, ab STRING, abc INT, b_c DOUBLE');
    const warm = ['{"a":"1","ab":"2","abc":3,"b_c":4}', '{ "a" : "1" , "ab" : "2" , "abc" : 3 , "b_c" : 4 }'];
    for (const line of [
      ...warm,
      '{"abc":3,"ab":"2","a":"1","b_c":4}',
      '{"a":"1","abcd":0,"ab":"2","abc":3,"b_c":4}',
      '{"a":"1","ab":"2","abc":3}',
      '{"a":"1","ab":"2","ab":"3","abc":3,"b_c":4}',
      '{"a":"1","ab":"2","abc":3,"b_c":4,"a":null}',
    ]) {
      expectSame(schema, line, warm);
    }
  });

  it('columns named like Object.prototype members take the reference', () => {
    const schema = parseSchema('constructor STRING, toString INT, n INT');
    const p = compileLineParser(schema);
    for (const line of ['{"constructor":"a","toString":1,"n":2}', '{"n":2}', '{"constructor":null,"n":1}']) {
      expect(mismatch(schema, line, p(line))).toBeNull();
    }
    expect(p.stats.reference).toBe(3);
  });

  it('a schema of one TIMESTAMP column, across hours and days', () => {
    const schema = parseSchema('t TIMESTAMP');
    const p = compileLineParser(schema);
    let ms = Date.UTC(2026, 11, 31, 22, 58, 59, 990);
    for (let k = 0; k < 3000; k++) {
      const iso = new Date(ms).toISOString();
      const text = k % 7 === 0 ? iso : `${iso.slice(0, 10)}${k % 2 ? 'T' : ' '}${iso.slice(11, 19 + (k % 5))}`;
      const line = `{"t":"${text}"}`;
      const m = mismatch(schema, line, p(line));
      if (m) throw new Error(m);
      ms += 1237 * (k % 3) - 900;
      if (k % 500 === 0) ms += 3_600_000 * 25;
    }
    expect(p.stats.shape).toBeGreaterThan(2000);
  });

  it('an invalid date or hour right after a valid one that differs in one field', () => {
    const schema = parseSchema('t TIMESTAMP');
    const p = compileLineParser(schema);
    const valid = '2026-10-01 12:34:56.789';
    const invalid = ['2026-10-32 12:34:56.789', '2026-13-01 12:34:56.789', '2026-10-01 24:34:56.789', '2026-02-30 12:34:56.789', '0000-00-00 12:34:56.789'];
    for (const text of invalid) {
      for (const t of [valid, text, valid]) {
        const line = `{"t":"${t}"}`;
        const m = mismatch(schema, line, p(line));
        if (m) throw new Error(m);
      }
      expect(p(`{"t":"${text}"}`).ok).toBe(false);
    }
  });

  it('timestamps of two or three hours interleaved (late events around the turn of an hour, or of a day)', () => {
    const schema = parseSchema('t TIMESTAMP, n INT');
    const p = compileLineParser(schema);
    const hours = [Date.UTC(2026, 11, 31, 22), Date.UTC(2026, 11, 31, 23), Date.UTC(2027, 0, 1, 0)];
    let seed = 7;
    for (let k = 0; k < 2000; k++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      // mostly the last two hours, in any order; sometimes the first; a T now and then
      const h = hours[seed % 10 === 0 ? 0 : 1 + (seed % 2)];
      const iso = new Date(h + (seed % 3_600_000)).toISOString();
      const text = `${iso.slice(0, 10)}${k % 13 === 0 ? 'T' : ' '}${iso.slice(11, 23)}`;
      const line = `{"t":"${text}","n":${k}}`;
      const m = mismatch(schema, line, p(line));
      if (m) throw new Error(m);
    }
    expect(p.stats.shape).toBeGreaterThan(1900);
  });
});

describe('microsecond timestamps in every tier', () => {
  it('reads 1 to 6 fraction digits exactly and truncates 7 to 9 to the microsecond, the fast tiers as the reference', () => {
    const schema = parseSchema('t TIMESTAMP, n INT');
    const p = compileLineParser(schema);
    const base = Date.UTC(2026, 9, 1, 12) * 1000; // 2026-10-01T12:00:00Z in µs
    const want: Array<[string, number]> = [
      ['2026-10-01 12:00:09.999999', base + 9_999_999],
      ['2026-10-01 12:00:10.000000', base + 10_000_000],
      ['2026-10-01 12:00:10.000001', base + 10_000_001],
      ['2026-10-01 12:00:00.5', base + 500_000],
      ['2026-10-01T12:00:00.12345', base + 123_450],
      ['2026-10-01 12:00:00.1234567', base + 123_456],
      ['2026-10-01 12:00:00.123456789', base + 123_456],
      ['2026-10-01T12:00:00.000001Z', base + 1],
      ['2026-10-01T14:00:00.000001+02:00', base + 1],
    ];
    for (const [text, us] of want) {
      for (const line of [`{"t":"${text}","n":1}`, `{"n":1, "t":"${text}"}`, `{"t":"${text}","n":1,"x":{"y":[{"z":1}]}}`]) {
        const r = p(line);
        expect(r.ok && r.row.t).toBe(us);
        expect(mismatch(schema, line, r)).toBeNull();
      }
    }
    expect(p.stats.shape).toBeGreaterThan(0);
    // a seventh digit that is not a digit is no timestamp
    expect(p('{"t":"2026-10-01 12:00:00.123456x","n":1}').ok).toBe(false);
  });

  it('gives a bigint, exactly, for an instant beyond 2^53 µs (after 2255 or before 1685), in every tier', () => {
    const schema = parseSchema('t TIMESTAMP');
    const p = compileLineParser(schema);
    for (const [text, us] of [
      ['9999-12-31 23:59:59.999999', 253402300799999999n],
      ['0001-01-01 00:00:00.000001', -62135596799999999n],
      ['2300-01-01T00:00:00.5Z', 10413792000500000n],
    ] as const) {
      for (const line of [`{"t":"${text}"}`, `{ "t" : "${text}" }`]) {
        const r = p(line);
        expect(r.ok && r.row.t).toBe(us);
        expect(mismatch(schema, line, r)).toBeNull();
      }
    }
    // the last hour whose every µs is safe stays a number
    const safe = p('{"t":"2255-06-05 22:00:00.000001"}');
    expect(safe.ok && typeof safe.row.t).toBe('number');
  });
});

describe('rows and tiers', () => {
  it('rows of the fast tiers carry exactly the columns of the schema', () => {
    const p = compileLineParser(ALL);
    const line = '{"x":{"deep":[1]},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00","extra":"e"}';
    const scanned = p(line);
    const matched = p(line.replace('{"deep":[1]}', '0'));
    expect(p.stats).toEqual({ shape: 1, scan: 1, reference: 0 });
    for (const r of [scanned, matched]) {
      expect(r.ok && Object.keys(r.row)).toEqual(['s', 'i', 'l', 'd', 'b', 't']);
    }
    expect(matched).toEqual({ ok: true, row: { s: 'a', i: 1, l: 2, d: 1.5, b: true, t: Date.UTC(2026, 9, 1, 12) * 1000 } });
  });

  it('decodes escaped keys in tier 2: they may spell a column', () => {
    const p = compileLineParser(parseSchema('s STRING, n INT'));
    expect(p('{"caf\\u00e9":1,"s":"a","n":1}')).toEqual({ ok: true, row: { s: 'a', n: 1 } });
    expect(p('{"\\u0073":"b","n":2}')).toEqual({ ok: true, row: { s: 'b', n: 2 } });
    expect(p.stats).toEqual({ shape: 0, scan: 2, reference: 0 });
    expect(p('{"s":"a","\\u0073":"b","n":3}')).toEqual(parseJsonLine(parseSchema('s STRING, n INT'), '{"s":"a","\\u0073":"b","n":3}'));
    expect(p.stats.reference).toBe(1); // a duplicate
  });

  it('rows from the reference keep the fields outside the schema', () => {
    const p = compileLineParser(ALL);
    const r = p('{"s":"a\\nb","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00","extra":"e"}');
    expect(p.stats.reference).toBe(1);
    expect(r).toEqual({ ok: true, row: { s: 'a\nb', i: 1, l: 2, d: 1.5, b: true, t: Date.UTC(2026, 9, 1, 12) * 1000, extra: 'e' } });
  });

  it('skips nested values outside the schema up to 64 levels deep, and leaves deeper ones to the reference', () => {
    const p = compileLineParser(ALL);
    const nested = (depth: number) => `{"x":${'['.repeat(depth)}${']'.repeat(depth)},"s":"a","i":1,"l":2,"d":1.5,"b":true,"t":"2026-10-01 12:00:00"}`;
    expect(p(nested(64)).ok).toBe(true);
    expect(p.stats).toEqual({ shape: 0, scan: 1, reference: 0 });
    expect(p(nested(65)).ok).toBe(true);
    expect(p.stats).toEqual({ shape: 0, scan: 1, reference: 1 });
  });

  it('reads lines of megabytes without the expression (its backtracking would overflow)', () => {
    const schema = parseSchema('s STRING, i INT');
    const p = compileLineParser(schema);
    p('{"s":"a","i":1}');
    const long = `{"s":"a",${'"x":1,'.repeat(3_000_000)}"i":2}`;
    expect(p(long)).toEqual({ ok: true, row: { s: 'a', i: 2 } });
    const escapes = `{"x":"${'a\\n'.repeat(2_000_000)}","s":"b","i":3}`;
    expect(p(escapes)).toEqual({ ok: true, row: { s: 'b', i: 3 } });
    expect(p.stats).toEqual({ shape: 0, scan: 3, reference: 0 });
  });

  it('learns the key order and the spacing of the lines', () => {
    const p = compileLineParser(ALL);
    const reordered = '{"t":"2026-10-01 12:00:00","b":true,"d":1.5,"l":2,"i":1,"s":"a"}';
    for (let k = 0; k < 10; k++) p(reordered);
    expect(p.stats).toEqual({ shape: 9, scan: 1, reference: 0 });
    const spaced = reordered.replace(/,/g, ' , ');
    for (let k = 0; k < 10; k++) p(spaced);
    expect(p.stats).toEqual({ shape: 18, scan: 2, reference: 0 });
    // a spaced expression takes compact lines too
    for (let k = 0; k < 10; k++) p(reordered);
    expect(p.stats).toEqual({ shape: 28, scan: 2, reference: 0 });
    for (let k = 0; k < 10; k++) p(BASE);
    expect(p.stats).toEqual({ shape: 37, scan: 3, reference: 0 });
  });

  it('rests the expression of a shape while the lines keep missing it, then tries again', () => {
    const p = compileLineParser(ALL);
    const deep = BASE.replace('{', '{"x":{"y":{}},'); // nested too deep for the expression
    p(BASE);
    expect(p.stats).toEqual({ shape: 0, scan: 1, reference: 0 });
    for (let k = 0; k < 16; k++) p(deep);
    expect(p.stats).toEqual({ shape: 0, scan: 17, reference: 0 });
    for (let k = 0; k < 1024; k++) p(BASE);
    expect(p.stats).toEqual({ shape: 0, scan: 1041, reference: 0 });
    p(BASE);
    expect(p.stats).toEqual({ shape: 1, scan: 1041, reference: 0 });
  });

  it('stops learning shapes when the key order keeps changing, and stays right', () => {
    const schema = parseSchema('a INT, b INT, c INT, d INT');
    const p = compileLineParser(schema);
    const keys = ['a', 'b', 'c', 'd'];
    const orders: string[][] = [];
    const permute = (done: string[], rest: string[]): void => {
      if (rest.length === 0) orders.push(done);
      rest.forEach((k, i) => permute([...done, k], [...rest.slice(0, i), ...rest.slice(i + 1)]));
    };
    permute([], keys);
    for (let round = 0; round < 3; round++) {
      for (const order of orders) {
        const line = `{${order.map((k, i) => `"${k}":${i + round}`).join(',')}}`;
        expect(mismatch(schema, line, p(line))).toBeNull();
      }
    }
    expect(p.stats.reference).toBe(0);
    expect(p.stats.shape + p.stats.scan).toBe(72);
  });
});

/** mulberry32: a small seeded generator, so that a failure can be replayed. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random JSON-lines records around a schema: mostly good, with every kind of trouble mixed in. */
function recordGenerator(schema: Schema, seed: number, opts: { ordered: number; compact: number; mutate: number; trouble: number }) {
  const trouble = opts.trouble;
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const digits = (n: number) => Array.from({ length: n }, () => String(int(0, 9))).join('');
  const pad = (v: number, n: number) => String(v).padStart(n, '0');

  const strPieces = ['a', 'b', 'xyz', ' ', ',', ':', '{', '}', '[', ']', 'é', '日本', '😀', '\u2028', '\u007f', '-', '/', 'user-000123'];
  const escapes = ['\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u0041', '\\u00e9', '\\ud83d\\ude00', '\\uD800'];
  const badInString = ['\u0001', '\t', '\n', '\\x', '\\u12', '\\'];
  function stringContent(): string {
    let s = '';
    const k = int(0, 6);
    for (let j = 0; j < k; j++) {
      const x = r();
      s += x < 0.17 * trouble ? pick(escapes) : x < 0.2 * trouble ? pick(badInString) : pick(strPieces);
    }
    return s;
  }
  function timestampText(): string {
    const x = r();
    const odd = 0.05 * trouble;
    const y = chance(odd) ? pick([50, 1970, 2000, 2028, 9999]) : int(2020, 2030);
    const mo = chance(odd) ? pick([0, 13]) : int(1, 12);
    const d = chance(odd) ? pick([0, 29, 30, 31, 32]) : int(1, 28);
    const h = chance(odd) ? 24 : int(0, 23);
    const mi = chance(odd) ? 60 : int(0, 59);
    const s = chance(odd) ? 60 : int(0, 59);
    const date = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`;
    const frac = pick(['', '', `.${digits(1)}`, `.${digits(2)}`, `.${digits(3)}`, `.${digits(3)}`, `.${digits(4)}`, `.${digits(9)}`]);
    if (x < 0.7) return `${date}${pick([' ', ' ', 'T', 't'])}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}`;
    if (x < 0.8) return `${date}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}${pick(['Z', '+02:00', '-0530', 'UTC', ' Z'])}`;
    if (x < 0.85) return date;
    if (x < 0.9 || !chance(trouble)) return `${date} ${pad(h, 2)}:${pad(mi, 2)}`;
    return pick(['noon', '', 'NaN', '2026-10-01 12:00:00\\u0020', ' 2026-10-01 12:00:00', '2026-10-01 12:00:00 ', '1700000000']);
  }
  function numberText(): string {
    if (chance(0.05 * trouble)) return pick(['01', '1.', '.5', '+1', '-', '--1', '1e', '1e+', '0x10', 'NaN', 'Infinity', '1_0']);
    const x = r();
    if (x < 0.3) return String(int(-1000, 1000));
    if (x < 0.45) return `${chance(0.3) ? '-' : ''}${int(0, 99999)}.${digits(int(1, 4))}`;
    if (x < 0.55)
      return `${chance(0.3) ? '-' : ''}${int(1, 9)}${chance(0.5) ? `.${digits(int(1, 3))}` : ''}${pick(['e', 'E'])}${pick(['', '+', '-'])}${int(0, 30)}`;
    if (x < 0.65)
      return pick([
        '0',
        '-0',
        '-0.0',
        '0.1',
        '2147483647',
        '-2147483648',
        '2147483648',
        '-2147483649',
        '9007199254740993',
        '1e400',
        '-1e-400',
        '5e-324',
        '1.7976931348623157e308',
        '0.30000000000000004',
      ]);
    if (x < 0.75) return `${chance(0.2) ? '-' : ''}${int(1, 9)}${digits(int(10, 25))}${chance(0.5) ? `.${digits(int(1, 20))}` : ''}`;
    return String(int(1_600_000_000, 1_800_000_000)) + (chance(0.3) ? `.${digits(3)}` : '');
  }
  function literalText(): string {
    return chance(0.05 * trouble) ? pick(['tru', 'nul', 'True', 'falsey', 'nulll']) : pick(['true', 'false', 'null']);
  }
  function nestedText(depth: number): string {
    if (depth > 2 || chance(0.3)) return scalarText();
    const n = int(0, 3);
    const items: string[] = [];
    if (chance(0.5)) {
      for (let j = 0; j < n; j++) items.push(`"${pick(['k', 'a', 's', 'i'])}"${ws()}:${ws()}${nestedText(depth + 1)}`);
      return `{${ws()}${items.join(`${ws()},${ws()}`)}${ws()}${chance(0.03 * trouble) ? ',' : ''}}`;
    }
    for (let j = 0; j < n; j++) items.push(nestedText(depth + 1));
    return `[${ws()}${items.join(`${ws()},${ws()}`)}${ws()}${chance(0.03 * trouble) ? ',' : ''}]`;
  }
  function scalarText(): string {
    const x = r();
    if (x < 0.4) return `"${stringContent()}"`;
    if (x < 0.8) return numberText();
    return literalText();
  }
  function anyText(): string {
    const x = r();
    if (x < 0.85) return scalarText();
    if (x < 0.9) return pick(['"NaN"', '"Infinity"', '"-Infinity"', '"+Infinity"', '"+INF"', '"-INF"', `"${timestampText()}"`]);
    return nestedText(0);
  }
  function valueFor(type: string): string {
    const x = r();
    if (x < 0.08) return 'null';
    if (x < 0.08 + 0.17 * trouble) return anyText();
    switch (type) {
      case 'STRING':
        return `"${stringContent()}"`;
      case 'INT':
      case 'LONG':
        return chance(0.9) ? String(int(-100000, 100000)) : numberText();
      case 'DOUBLE':
        return chance(0.95) ? numberText() : pick(['"NaN"', '"Infinity"', '"-Infinity"', '"+Infinity"', '"+INF"', '"-INF"']);
      case 'BOOLEAN':
        return pick(['true', 'false']);
      default:
        return chance(0.9) ? `"${timestampText()}"` : numberText();
    }
  }
  let spaced = false;
  function ws(): string {
    if (!spaced || chance(0.5)) return '';
    let s = '';
    const k = int(1, 3);
    for (let j = 0; j < k; j++) s += chance(0.02 * trouble) ? pick(['\f', '\v', '\u00a0']) : pick([' ', '\t', '\n', '\r']);
    return s;
  }
  const unknownKeys = ['x', 'extra', 'referrer', '__proto__', 'constructor', 'S', 'ss', '', 'k\\"q', 'caf\\u00e9'];
  function key(name: string): string {
    // occasionally the same name written with an escape
    return chance(0.02 * trouble) && name.length > 0 ? `\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${name.slice(1)}` : name;
  }

  return function next(): string {
    spaced = !chance(opts.compact);
    const fields: string[] = [];
    for (const c of schema.columns) {
      if (chance(0.03 * trouble)) continue; // missing
      fields.push(`"${key(c.name)}"${ws()}:${ws()}${valueFor(c.type)}`);
      if (chance(0.02 * trouble)) fields.push(`"${c.name}"${ws()}:${ws()}${valueFor(c.type)}`); // duplicate
    }
    if (!chance(opts.ordered)) {
      for (let j = fields.length - 1; j > 0; j--) {
        const k = int(0, j);
        [fields[j], fields[k]] = [fields[k], fields[j]];
      }
    }
    const extras = chance(0.5) ? int(1, 3) : 0;
    for (let j = 0; j < extras; j++) {
      const f = `"${pick(unknownKeys)}"${ws()}:${ws()}${chance(0.85) ? scalarText() : nestedText(0)}`;
      fields.splice(int(0, fields.length), 0, f);
    }
    let line = `${ws()}{${ws()}${fields.join(`${ws()},${ws()}`)}${ws()}}${ws()}`;
    if (chance(opts.mutate)) {
      const at = int(0, line.length);
      const m = r();
      if (m < 0.3) line = line.slice(0, at);
      else if (m < 0.5) line = line.slice(0, at) + pick(['"', ',', '}', '{', ':', '\\', 'x', '1', ' ', '\u0000']) + line.slice(at);
      else if (m < 0.7) line = line.slice(0, at) + line.slice(at + 1);
      else if (m < 0.8) line = line.replace(/}(\s*)$/, ',}$1');
      else if (m < 0.9) line += pick(['x', '}', '{}', ',', ' 1']);
      else line = `[${line}]`;
    }
    return line;
  };
}

describe('randomized: the same outcome as parseJsonLine', () => {
  const schemas: Array<[string, Schema]> = [
    ['all types', ALL],
    ['bench-like', parseSchema('user STRING, event_time TIMESTAMP, amount DOUBLE, country STRING, n LONG, ok BOOLEAN')],
    ['one column', parseSchema('v DOUBLE')],
  ];
  const streams = [
    { name: 'mostly ordered and compact, little trouble', ordered: 0.95, compact: 0.95, mutate: 0.02, trouble: 0.15 },
    { name: 'ordered, often spaced, some trouble', ordered: 0.9, compact: 0.5, mutate: 0.05, trouble: 0.4 },
    { name: 'any order, any spacing, much trouble', ordered: 0.3, compact: 0.5, mutate: 0.3, trouble: 1 },
  ];
  for (const [schemaName, schema] of schemas) {
    for (const [k, s] of streams.entries()) {
      it(`${schemaName}, ${s.name}`, () => {
        const seed = 1000 * (schemas.findIndex(([n]) => n === schemaName) + 1) + k;
        const next = recordGenerator(schema, seed, s);
        const stream = compileLineParser(schema); // learns shapes over the whole stream
        const eager = compileLineParser(schema, { backoff: false }); // tries its shape on every line
        const noCodegen = compileLineParser(schema, { codegen: false, backoff: false });
        const noShapes = compileLineParser(schema, { shapes: false });
        // `into`, what the sources call: one row pushed or the reason, nothing else
        const pushing = compileLineParser(schema);
        const viaInto = (line: string): CoerceResult => {
          const rows: Row[] = [];
          const reason = pushing.into(line, rows);
          // a line that is an array pushes its elements' rows (spark-formats.test.ts): here, as the reference, a line of one row or none
          if (isArrayLine(line)) {
            const a = arrayLineRows(schema, line);
            if (a.ok && reason === null && JSON.stringify(rows, bigintText) === JSON.stringify(a.rows, bigintText)) return parseJsonLine(schema, line);
            if (!a.ok && reason === a.reason) return parseJsonLine(schema, line);
            return { ok: false, reason: `into pushed ${rows.length} rows and returned ${reason} for an array line` };
          }
          if (rows.length !== (reason === null ? 1 : 0)) return { ok: false, reason: `into pushed ${rows.length} rows and returned ${reason}` };
          return reason === null ? { ok: true, row: rows[0] } : { ok: false, reason };
        };
        const problems: string[] = [];
        let good = 0;
        const lines = 3000;
        for (let j = 0; j < lines && problems.length < 5; j++) {
          const line = next();
          // the reference's reading of the line, once for the seven readings compared with it
          const ref = parseJsonLine(schema, line);
          if (ref.ok) good++;
          for (const [name, p] of [
            ['stream', stream],
            ['stream, no backoff', eager],
            ['stream, no codegen', noCodegen],
            ['no shapes', noShapes],
            ['into', viaInto],
          ] as const) {
            const m = mismatch(schema, line, p(line), ref);
            if (m) problems.push(`seed ${seed} record ${j} (${name}): ${m}`);
          }
          // a fresh parser reads the line with tier 2 and learns it; the second read uses tier 1
          if (j % 4 !== 0) continue;
          const fresh = compileLineParser(schema);
          for (const read of [1, 2]) {
            const m = mismatch(schema, line, fresh(line), ref);
            if (m) problems.push(`seed ${seed} record ${j} (fresh, read ${read}): ${m}`);
          }
        }
        expect(problems).toEqual([]);
        // the stream mixes good and bad records, and the fast tiers did the work they should
        expect(good).toBeGreaterThan(lines * 0.1);
        expect(good).toBeLessThan(lines * 0.98);
        expect(stream.stats.shape + stream.stats.scan).toBeGreaterThan(0);
        if (s.ordered > 0.5) expect(eager.stats.shape).toBeGreaterThan(eager.stats.scan);
      });
    }
  }
});

/** JSON.stringify's replacer for rows that hold a bigint. */
function bigintText(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? `${v}n` : v;
}
