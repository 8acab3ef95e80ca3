/**
 * The generated JavaScript (lib/engine/expr/codegen.ts) against the closures (compileTyped) on the
 * same inputs: every expression below, on every row below (nulls, INT and BIGINT overflow, division
 * by zero, NaN, exact DECIMAL), gives the same value or the same ANSI error (class and message).
 * The closures are the reference: the expression tests (expr-*.test.ts) check them against Spark.
 */
import { parseDdlColumns } from '../../lib/engine/ddl';
import { analyzeExpression, compileFilter, compileSelect } from '../../lib/engine/expr';
import { compileExpr, compilePredicate, compileProjection } from '../../lib/engine/expr/codegen';
import { compileTyped, type Typed } from '../../lib/engine/expr/typed';
import { rowExtender } from '../../lib/engine/rows';

const COLS = parseDdlColumns(
  'p BOOLEAN, q BOOLEAN, i INT, j INT, l BIGINT, m BIGINT, d DOUBLE, e DOUBLE, x DECIMAL(10,2), y DECIMAL(10,2), s STRING, t STRING, st STRUCT<a: INT, b: STRING>, arr ARRAY<INT>',
);

const ROWS: Record<string, unknown>[] = [
  {},
  { p: true, q: false, i: 3, j: 4, l: 10, m: 3, d: 2.5, e: -1.5, x: '12.34', y: '0.66', s: 'Hello', t: 'World', st: { a: 1, b: 'b' }, arr: [1, 2, 3] },
  {
    p: false,
    q: null,
    i: 2147483647,
    j: 1,
    l: 9007199254740993n,
    m: 9223372036854775807n,
    d: Number.NaN,
    e: 0,
    x: '99999999.99',
    y: '0.00',
    s: '',
    t: null,
    st: null,
    arr: null,
  },
  {
    p: null,
    q: true,
    i: -2147483648,
    j: -1,
    l: -9223372036854775808n,
    m: -1,
    d: 0,
    e: -0,
    x: '-0.01',
    y: '-99999999.99',
    s: 'ÄÖÜ ß',
    t: '42',
    st: { a: null, b: null },
    arr: [],
  },
  {
    p: true,
    q: true,
    i: 0,
    j: 0,
    l: 0,
    m: 0,
    d: Number.POSITIVE_INFINITY,
    e: Number.NEGATIVE_INFINITY,
    x: null,
    y: '1.00',
    s: null,
    t: 'x',
    st: { a: 7, b: 'z' },
    arr: [null],
  },
  { i: 7, j: null, l: null, m: 5, d: 1e308, e: 1e308, s: '  padded  ', t: '  ' },
];

const EXPRESSIONS = [
  // column refs and literals
  'i',
  'st',
  'st.a',
  'st.b',
  '1',
  "'text'",
  'NULL',
  'true',
  '2.50',
  '9223372036854775807',
  '-0.0',
  // arithmetic: INT, BIGINT (overflow), DOUBLE, DECIMAL (exact), division by zero
  'i + j',
  'i - j',
  'i * j',
  'i / j',
  'i % j',
  'i div j',
  'l + m',
  'l * m',
  'l - m',
  'l % m',
  'l div m',
  'd * 2',
  'd / e',
  'd + e',
  'x + y',
  'x * y',
  'x / y',
  'x - y',
  'x % y',
  '-i',
  '-l',
  'abs(i)',
  'i + l',
  'i + d',
  'x + i',
  'try_add(i, j)',
  'try_divide(i, j)',
  'try_multiply(l, m)',
  'pmod(i, j)',
  // comparisons (NaN sorts above every number), null-safe equality
  'i > j',
  'i >= j',
  'i < j',
  'i <= j',
  'i = j',
  'i <> j',
  'd > e',
  'd >= e',
  'd < e',
  'd = e',
  'd <=> e',
  'i <=> j',
  'x > y',
  'l < m',
  's = t',
  's < t',
  "s = 'Hello'",
  // three-valued logic, IS [NOT] NULL / TRUE / FALSE
  'p AND q',
  'p OR q',
  'NOT p',
  'p AND NOT q',
  '(p OR q) AND i > 0',
  'i IS NULL',
  'i IS NOT NULL',
  'p IS TRUE',
  'p IS NOT FALSE',
  'i / j > 1 OR p',
  'p AND i / j > 1',
  // CASE, IF, COALESCE, NVL2, NULLIF
  "CASE WHEN i > 2 THEN 'big' WHEN i > 0 THEN 'small' ELSE 'other' END",
  'CASE WHEN p THEN i END',
  "CASE i WHEN 3 THEN 'three' WHEN 0 THEN 'zero' END",
  'if(p, i, j)',
  'if(i > j, l, m)',
  'coalesce(j, i, 0)',
  'coalesce(t, s)',
  'nvl(l, m)',
  'nvl2(t, s, t)',
  'nullif(i, 3)',
  // strings by call, casts
  'lower(s)',
  'upper(s)',
  'length(s)',
  "concat(s, '-', t)",
  's || t',
  "concat_ws('/', s, t)",
  'trim(s)',
  'substring(s, 2, 3)',
  "s LIKE 'H%'",
  "replace(s, 'l', 'L')",
  'CAST(t AS INT)',
  'CAST(i AS STRING)',
  'CAST(d AS BIGINT)',
  'CAST(x AS DOUBLE)',
  'try_cast(t AS INT)',
  'i IN (1, 3, NULL)',
  'arr[1]',
  'size(arr)',
  'greatest(i, j)',
];

type Outcome = { value: unknown } | { error: string };

function outcome(f: () => unknown): Outcome {
  try {
    return { value: f() };
  } catch (e) {
    return { error: `${(e as Error).constructor.name}: ${(e as Error).message}` };
  }
}

const typed = (text: string): Typed => analyzeExpression(text, COLS);

describe('generated JavaScript against the closures', () => {
  it.each(EXPRESSIONS)('%s', (text) => {
    const t = typed(text);
    const closure = compileTyped(t);
    const generated = compileExpr(t);
    for (const row of ROWS) expect([row, outcome(() => generated(row))]).toEqual([row, outcome(() => closure(row))]);
  });

  it('overflow and division by zero raise the same ANSI error from the generated code', () => {
    const failing: Array<[string, Record<string, unknown>]> = [
      ['i + j', { i: 2147483647, j: 1 }],
      ['l * m', { l: 9223372036854775807n, m: 2 }],
      ['i / j', { i: 1, j: 0 }],
      ['x / y', { x: '1.00', y: '0.00' }],
      ['CAST(t AS INT)', { t: 'x' }],
    ];
    for (const [text, row] of failing) {
      const got = outcome(() => compileExpr(typed(text))(row));
      expect(got).toHaveProperty('error');
      expect(got).toEqual(outcome(() => compileTyped(typed(text))(row)));
      expect((got as { error: string }).error).toMatch(/^SparkRowError/);
    }
  });

  it('the common node kinds are generated as source, not called as closures', () => {
    // a closure would be a `k<n>(row)` call in the source; an operator's own function is called with its arguments
    for (const text of [
      'i',
      'st.a',
      'i + j',
      'd * 2',
      'x + y',
      'p AND q',
      'p OR NOT q',
      'i IS NOT NULL',
      'i >= j',
      'CASE WHEN p THEN i ELSE j END',
      'coalesce(j, i)',
      'if(p, i, j)',
      'lower(s)',
      'd <=> e',
    ]) {
      expect(compileExpr(typed(text)).toString()).not.toMatch(/k\d+\(row\)/);
    }
  });

  it('a node without JavaScript is its closure, its children generated', () => {
    // greatest has no JavaScript of its own
    const t = typed('greatest(i + 1, j)');
    expect(compileExpr(t)({ i: 1, j: 5 })).toBe(5);
    expect(compileExpr(t)({ i: 9, j: null })).toBe(10);
  });

  it('a predicate is true only when the expression is true (null and false drop the row)', () => {
    for (const text of ['p AND q', 'p OR q', 'i > j', 'i / j > 1', 'NULL', 'i IS NULL']) {
      const t = typed(text);
      const closure = compileTyped(t);
      const test = compilePredicate(t);
      for (const row of ROWS) expect(outcome(() => test(row))).toEqual(outcome(() => closure(row) === true));
    }
  });

  it('a projection builds the items in order, as the closures do', () => {
    const texts = ['lower(s)', 'i * j', 'x + y', 'st.b', 'coalesce(t, s)'];
    const names = ['a', 'b', 'c', 'd', 'e'];
    const project = compileProjection(names, texts.map(typed));
    const closures = texts.map((t) => compileTyped(typed(t)));
    for (const row of ROWS) {
      const want = outcome(() => Object.fromEntries(names.map((n, k) => [n, closures[k](row)])));
      const got = outcome(() => project(row));
      expect(got).toEqual(want);
      if ('value' in got) expect(Object.keys(got.value as object)).toEqual(names);
    }
  });

  it('names and strings that are not identifiers stay data', () => {
    const cols = parseDdlColumns('`a"b` INT, `x y` STRING');
    const s = compileSelect(['`a"b` + 1 AS `c"d`', "concat(`x y`, '\\'); throw 1; (\\'') AS `e f`"], cols);
    expect(s.project({ 'a"b': 1, 'x y': 'v' })).toEqual({ 'c"d': 2, 'e f': "v'); throw 1; ('" });
    const keep = compileFilter('`a"b` > 0', cols);
    expect(keep({ 'a"b': 1 })).toBe(true);
    expect(keep({ 'a"b': null })).toBe(false);
  });

  it('a column named __proto__ is an output column, not the prototype', () => {
    const s = compileSelect(['i AS __proto__', 'j'], COLS);
    const r = s.project({ i: 1, j: 2 });
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.keys(r)).toEqual(['__proto__', 'j']);
  });
});

describe('rowExtender: withColumn without a spread', () => {
  it('copies the columns and adds the new one last, as the plan orders them', () => {
    const extend = rowExtender(['a', 'b', 'c"d'], 'n');
    const row = { a: 1, b: null, 'c"d': 'x' };
    const r = extend(row, 5);
    expect(r).toEqual({ a: 1, b: null, 'c"d': 'x', n: 5 });
    expect(Object.keys(r)).toEqual(['a', 'b', 'c"d', 'n']);
    expect(row).toEqual({ a: 1, b: null, 'c"d': 'x' });
  });

  it('replaces a column of the same name, moving it last', () => {
    const r = rowExtender(['a', 'b'], 'a')({ a: 1, b: 2 }, 9);
    expect(Object.keys(r)).toEqual(['b', 'a']);
    expect(r).toEqual({ a: 9, b: 2 });
  });

  it('a column the row lacks reads as undefined, as the spread leaves it', () => {
    const r = rowExtender(['a', 'b'], 'n')({ a: 1 }, null);
    expect(r.b).toBeUndefined();
    expect(r.n).toBeNull();
  });

  it('a column named __proto__ is a column, not the prototype', () => {
    const r = rowExtender(['a'], '__proto__')({ a: 1 }, 2);
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(r, '__proto__')?.value).toBe(2);
  });
});
