/**
 * Every way a JSON line is read, for tests that check each gives the same value or the same
 * dead-letter reason: the reference parser, a fresh compiled reader, one warmed on good lines
 * (tier 1 learnt), one without shapes, one without codegen.
 */
import { compileLineParser, type LineParser } from '../../lib/engine/json-scan';
import type { Schema } from '../../lib/engine/schema';
import { parseJsonLine, type CoerceResult } from '../../lib/engine/json-record';

/** The readers of `schema`, by name; `good` is a line of it the warmed ones have read three times. */
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

/** Every reader makes `line` a bad record whose reason matches `reason` (none throws, none accepts it). */
export function expectBad(schema: Schema, good: string, line: string, reason: RegExp): void {
  for (const [name, read] of readers(schema, good)) {
    let got: CoerceResult;
    try {
      got = read(line);
    } catch (e) {
      throw new Error(`${name} threw on ${line.slice(0, 80)}: ${(e as Error).message}`);
    }
    if (got.ok) throw new Error(`${name} accepted ${line.slice(0, 80)} as ${JSON.stringify(got.row, bigints).slice(0, 200)}`);
    expect([name, got.reason]).toEqual([name, expect.stringMatching(reason)]);
  }
}

/** Every reader reads `line` with `value` in `column`. */
export function expectGood(schema: Schema, good: string, line: string, column: string, value: unknown): void {
  for (const [name, read] of readers(schema, good)) {
    const got = read(line);
    if (!got.ok) throw new Error(`${name} refused ${line}: ${got.reason}`);
    expect([name, got.row[column]]).toEqual([name, value]);
  }
}

/** JSON.stringify's replacer for a row that holds a bigint (an exact LONG). */
function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}
