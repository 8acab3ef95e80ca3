/**
 * Issue 29's exact types (FORMAT-3 "Types"): every way a line is read (the reference parser and
 * each tier of the compiled reader) gives the same value, or the same dead-letter reason.
 * Expectations from Spark's type ranges, not from sluice's output.
 */
import { compileLineParser, type LineParser } from '../../lib/engine/json-scan';
import { parseJsonLine, parseSchema, type CoerceResult, type Schema } from '../../lib/engine/schema';

function readers(schema: Schema, good: string): Array<[string, (line: string) => CoerceResult]> {
  const warmed = (p: LineParser) => {
    for (let i = 0; i < 3; i++) p(good);
    return p;
  };
  return [
    ['reference', (l) => parseJsonLine(schema, l)],
    ['compiled', compileLineParser(schema)],
    ['warmed', warmed(compileLineParser(schema))],
    ['no shapes', warmed(compileLineParser(schema, { shapes: false }))],
    ['no codegen', warmed(compileLineParser(schema, { codegen: false }))],
  ];
}

function expectBad(schema: Schema, good: string, line: string, reason: RegExp): void {
  for (const [name, read] of readers(schema, good)) {
    const got = read(line);
    if (got.ok) throw new Error(`${name} accepted ${line} as ${String(Object.values(got.row))}`);
    expect([name, got.reason]).toEqual([name, expect.stringMatching(reason)]);
  }
}

function expectGood(schema: Schema, good: string, line: string, column: string, value: unknown): void {
  for (const [name, read] of readers(schema, good)) {
    const got = read(line);
    if (!got.ok) throw new Error(`${name} refused ${line}: ${got.reason}`);
    expect([name, got.row[column]]).toEqual([name, value]);
  }
}

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

describe('types outside this slice', () => {
  it.each(['DATE', 'ARRAY', 'BINARY'])('%s is refused naming the type and issue 29', (t) => {
    expect(() => parseSchema(`x ${t}`)).toThrow(new RegExp(`has type ${t}, which sluice does not support yet \\(issue 29\\)`));
  });
});
