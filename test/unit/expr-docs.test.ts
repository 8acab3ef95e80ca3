/**
 * docs/expressions.md lists every supported function with an example and its result: each
 * example is evaluated through the expression compiler and compared with the result on the page
 * (issue 30: "the docs have an expressions page listing every supported function with a one-line
 * example each, checked by a test"). The results on the page were worked out from Spark's
 * function documentation, not copied from this compiler's output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileExpression, compileSelect } from '../../lib/engine/expr';
import { mapEntries } from '../../lib/engine/map-entries';
import { FUNCTIONS } from '../../lib/engine/expr/functions';
import { formatTimestampIso, type Micros, splitMicros } from '../../lib/engine/expr/time';
import type { SqlType } from '../../lib/engine/expr/types';

const page = readFileSync(join(__dirname, '../../docs/expressions.md'), 'utf8');

interface Example {
  readonly section: string;
  readonly fn: string;
  readonly text: string;
  readonly result: string;
}

/** The table rows `| \`fn\` | \`example\` | \`result\` |` of the page, with `\|` unescaped. */
function examples(): Example[] {
  const out: Example[] = [];
  let section = '';
  for (const line of page.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    const m = /^\| `(.+?)` \| `(.+)` \| `(.+)` \|$/.exec(line);
    if (m === null) continue;
    const un = (s: string) => s.replace(/\\\|/g, '|');
    out.push({ section, fn: un(m[1]), text: un(m[2]), result: m[3] });
  }
  return out;
}

/** A value in FORMAT-3's output form: TIMESTAMP as ISO 8601 (6 fraction digits when it has microseconds), BIGINT beyond 2^53 as digits. */
function outputForm(v: unknown, t: SqlType): unknown {
  if (v == null) return null;
  switch (t.type) {
    case 'TIMESTAMP': {
      const iso = formatTimestampIso(v as Micros);
      const micros = splitMicros(v as Micros).micros % 1000;
      return micros === 0 ? iso : `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
    }
    case 'LONG':
      return typeof v === 'bigint' ? String(v) : v;
    case 'ARRAY':
      return (v as unknown[]).map((x) => outputForm(x, t.element!));
    case 'MAP':
      return Object.fromEntries(mapEntries(v as object).map(([k, x]) => [k, outputForm(x, t.value!)]));
    case 'STRUCT':
      return Object.fromEntries(t.fields!.map((f) => [f.name, outputForm((v as Record<string, unknown>)[f.name], f)]));
    default:
      return v;
  }
}

const all = examples();

describe('docs/expressions.md', () => {
  it('has examples', () => {
    expect(all.length).toBeGreaterThan(150);
  });

  it.each(all.filter((e) => e.section !== 'Generators').map((e) => [e.fn, e.text, e.result]))('%s: %s is %s', (_fn, text, result) => {
    const e = compileExpression(text, []);
    expect(outputForm(e.evaluate({}), e.sqlType)).toEqual(JSON.parse(result));
  });

  it.each(all.filter((e) => e.section === 'Generators').map((e) => [e.fn, e.text, e.result]))('%s: %s emits %s', (_fn, text, rows) => {
    expect(compileSelect([text], []).generate({})).toEqual(JSON.parse(rows));
  });

  it('lists every function of the registry (one that only refuses, under "Not supported yet")', () => {
    const listed = new Set(all.map((e) => e.fn));
    const notYet = page.slice(page.indexOf('## Not supported yet'));
    const missing = Object.keys(FUNCTIONS).filter((name) => !listed.has(name) && !notYet.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
