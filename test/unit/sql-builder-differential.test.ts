/**
 * A differential property test of the two ways to write a query: Spark SQL text (lib/engine/sql,
 * docs/sql.md) and the fluent builder API (lib/engine/query: readStream ... withWatermark, filter,
 * select with typed Columns, groupBy(window(...), 'k').agg(...), dropDuplicates), as a TypeScript
 * user would write each. Where Spark's DataFrame API and its SQL give the same answer, both forms
 * must too.
 *
 * A query is drawn from a grammar both forms express, then written twice:
 *
 *   expressions  numbers (v DOUBLE, n INT, literals, + - *, unary minus, CASE WHEN, length, CAST
 *                of a string to INT), strings (k, s, literals with a quote, lower, upper, concat,
 *                substring, CAST of a number to STRING, CASE WHEN), conditions (comparisons,
 *                AND/OR/NOT, IS [NOT] NULL, IN, BETWEEN); the SQL text with as few parentheses as
 *                Spark's grammar needs, or a pair around every operator, the builder's by
 *                Column's methods and the functions module (col, lit, when, lower, ...)
 *   stateless    [WHERE c] SELECT items [AS alias]   /   .filter(c).select(columns)
 *   aggregation  [WHERE c] SELECT keys, aggregates and expressions over them GROUP BY window
 *                (tumbling or sliding), k, lower(k) [HAVING c]   /   .filter(c).groupBy(...)
 *                .agg(count(), sum(...), ... hidden ones for HAVING and expressions).filter(c)
 *                .select(...), in append (watermarked window), update or complete mode
 *   distinct     SELECT DISTINCT items   /   .select(...).groupBy(every column).agg() (Spark's
 *                ReplaceDistinctWithAggregate), in append (refused without a watermarked column
 *                among them), update or complete mode
 *   watermark    WATERMARK t DELAY OF INTERVAL n SECONDS   /   .withWatermark('t', 'n seconds')
 *
 * Both plans run on the in-memory ports over the same files (several runs, late rows, nulls,
 * values that overflow an INT, strings that do not cast, now and then a line that is not JSON),
 * and are compared batch by batch: batch ids, watermarks, output rows as a multiset (column names
 * and exact values), rows dropped as late, dead letters (how many and their error classes), state
 * rows; or both refuse the query with the same error class.
 *
 * The harness it shares with the other differential tests (the rows' canonical text and the
 * per-batch view) is test/helpers/differential.ts.
 *
 * The seed is fixed (SLUICE_PROPERTY_SEED overrides it, SLUICE_PROPERTY_RUNS the runs) so that CI
 * is reproducible; hunt with other seeds and more runs locally.
 */
import fc from 'fast-check';
import type { Json } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import type { Column } from '../../lib/engine/query/column';
import { col, concat, length, lit, lower, not, substring, upper, when } from '../../lib/engine/query/fn';
import { type AggBuilder, avg, count, max, min, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import type { AnyColumns, GroupArg } from '../../lib/engine/query/types';
import { compileSql } from '../../lib/engine/sql';
import { type RunSeen, seenOfRun } from '../helpers/differential';
import { createTestRunner } from './engine-factories';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261206);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 60);

const SCHEMA = 'k STRING, s STRING, t TIMESTAMP, v DOUBLE, n INT';
const SEC = 1000;
/** 2026-10-01 12:00:00 UTC in epoch ms. */
const BASE_MS = Date.UTC(2026, 9, 1, 12);
const INT_MAX = 2 ** 31 - 1;
const INPUTS = ['k', 's', 't', 'v', 'n'];

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

type Num =
  | { readonly k: 'col'; readonly c: 'v' | 'n' }
  | { readonly k: 'int'; readonly v: number }
  | { readonly k: 'dbl'; readonly v: number }
  | { readonly k: 'arith'; readonly op: '+' | '-' | '*'; readonly l: Num; readonly r: Num }
  | { readonly k: 'neg'; readonly a: Num }
  | { readonly k: 'case'; readonly c: Bool; readonly a: Num; readonly b: Num | null }
  | { readonly k: 'length'; readonly a: Str }
  | { readonly k: 'toInt'; readonly a: Str };
type Str =
  | { readonly k: 'col'; readonly c: 'k' | 's' }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'lower' | 'upper'; readonly a: Str }
  | { readonly k: 'concat'; readonly a: Str; readonly b: Str }
  | { readonly k: 'substring'; readonly a: Str; readonly pos: number; readonly len: number }
  | { readonly k: 'toStr'; readonly a: Num }
  | { readonly k: 'scase'; readonly c: Bool; readonly a: Str; readonly b: Str | null };
type Cmp = '=' | '<>' | '<' | '<=' | '>' | '>=';
type Bool =
  | { readonly k: 'cmpN'; readonly op: Cmp; readonly l: Num; readonly r: Num }
  | { readonly k: 'cmpS'; readonly op: Cmp; readonly l: Str; readonly r: Str }
  | { readonly k: 'and' | 'or'; readonly l: Bool; readonly r: Bool }
  | { readonly k: 'not'; readonly a: Bool }
  /** NOT of a number: Spark's DATATYPE_MISMATCH, refused by both. */
  | { readonly k: 'notNum'; readonly a: Num }
  | { readonly k: 'isNull'; readonly not: boolean; readonly a: Num | Str }
  | { readonly k: 'inN'; readonly a: Num; readonly list: readonly number[] }
  | { readonly k: 'inS'; readonly a: Str; readonly list: readonly string[] }
  | { readonly k: 'between'; readonly a: Num; readonly lo: number; readonly hi: number };

const STRINGS = ['a', 'b', 'B', 'ab', '', "it's", '12', ' x'];
const cmp = fc.constantFrom<Cmp>('=', '<>', '<', '<=', '>', '>=');
const intLit = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -3, max: 5 }) }, { weight: 1, arbitrary: fc.constantFrom(1000, INT_MAX) });

const exprs = fc.letrec<{ num: Num; str: Str; bool: Bool }>((tie) => ({
  num: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: fc.record({ k: fc.constant('col' as const), c: fc.constantFrom('v' as const, 'n' as const) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('int' as const), v: intLit }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('dbl' as const), v: fc.constantFrom(0.5, 2.5, -1.25) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        k: fc.constant('arith' as const),
        op: fc.constantFrom('+' as const, '-' as const, '*' as const),
        l: tie('num') as fc.Arbitrary<Num>,
        r: tie('num') as fc.Arbitrary<Num>,
      }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('neg' as const), a: tie('num') as fc.Arbitrary<Num> }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('case' as const),
        c: tie('bool') as fc.Arbitrary<Bool>,
        a: tie('num') as fc.Arbitrary<Num>,
        b: fc.option(tie('num') as fc.Arbitrary<Num>, { nil: null }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('length' as const), a: tie('str') as fc.Arbitrary<Str> }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('toInt' as const), a: tie('str') as fc.Arbitrary<Str> }) },
  ),
  str: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: fc.record({ k: fc.constant('col' as const), c: fc.constantFrom('k' as const, 's' as const) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('str' as const), v: fc.constantFrom(...STRINGS) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constantFrom('lower' as const, 'upper' as const), a: tie('str') as fc.Arbitrary<Str> }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('concat' as const), a: tie('str') as fc.Arbitrary<Str>, b: tie('str') as fc.Arbitrary<Str> }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('substring' as const),
        a: tie('str') as fc.Arbitrary<Str>,
        pos: fc.integer({ min: -2, max: 3 }),
        len: fc.integer({ min: 0, max: 3 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('toStr' as const), a: tie('num') as fc.Arbitrary<Num> }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('scase' as const),
        c: tie('bool') as fc.Arbitrary<Bool>,
        a: tie('str') as fc.Arbitrary<Str>,
        b: fc.option(tie('str') as fc.Arbitrary<Str>, { nil: null }),
      }),
    },
  ),
  bool: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 20, arbitrary: fc.record({ k: fc.constant('cmpN' as const), op: cmp, l: tie('num') as fc.Arbitrary<Num>, r: tie('num') as fc.Arbitrary<Num> }) },
    { weight: 10, arbitrary: fc.record({ k: fc.constant('cmpS' as const), op: cmp, l: tie('str') as fc.Arbitrary<Str>, r: tie('str') as fc.Arbitrary<Str> }) },
    {
      weight: 10,
      arbitrary: fc.record({ k: fc.constantFrom('and' as const, 'or' as const), l: tie('bool') as fc.Arbitrary<Bool>, r: tie('bool') as fc.Arbitrary<Bool> }),
    },
    { weight: 5, arbitrary: fc.record({ k: fc.constant('not' as const), a: tie('bool') as fc.Arbitrary<Bool> }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('notNum' as const), a: tie('num') as fc.Arbitrary<Num> }) },
    {
      weight: 10,
      arbitrary: fc.record({
        k: fc.constant('isNull' as const),
        not: fc.boolean(),
        a: fc.oneof(tie('num') as fc.Arbitrary<Num>, tie('str') as fc.Arbitrary<Str>),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({ k: fc.constant('inN' as const), a: tie('num') as fc.Arbitrary<Num>, list: fc.array(intLit, { minLength: 1, maxLength: 3 }) }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('inS' as const),
        a: tie('str') as fc.Arbitrary<Str>,
        list: fc.array(fc.constantFrom(...STRINGS), { minLength: 1, maxLength: 3 }),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('between' as const),
        a: tie('num') as fc.Arbitrary<Num>,
        lo: fc.integer({ min: -3, max: 2 }),
        hi: fc.integer({ min: 0, max: 5 }),
      }),
    },
  ),
}));

/** Spark's grammar's binding strengths, loosest first. */
const P = { or: 1, and: 2, not: 3, predicate: 4, comparison: 5, additive: 9, multiplicative: 10, unary: 11, atom: 13 } as const;

/** A string literal as Spark SQL reads it (a quote escaped by a backslash). */
const sqlString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** An expression as SQL text: `full`, a pair of parentheses around every operator, or as few as the grammar needs. */
function sqlOf(e: Num | Str | Bool, full: boolean): string {
  const at = (x: Num | Str | Bool, min: number): string => {
    const [text, prec] = node(x);
    return prec < min || (full && prec < P.atom) ? `(${text})` : text;
  };
  const node = (x: Num | Str | Bool): [string, number] => {
    switch (x.k) {
      case 'col':
        return [x.c, P.atom];
      case 'int':
        return [String(x.v), x.v < 0 ? P.unary : P.atom];
      case 'dbl':
        return [`${x.v}D`, x.v < 0 ? P.unary : P.atom];
      case 'str':
        return [sqlString(x.v), P.atom];
      case 'arith': {
        const prec = x.op === '*' ? P.multiplicative : P.additive;
        return [`${at(x.l, prec)} ${x.op} ${at(x.r, prec + 1)}`, prec];
      }
      case 'neg':
        // (a space: `- -1` is not a comment's `--`)
        return [`- ${at(x.a, P.unary)}`, P.unary];
      case 'case':
      case 'scase':
        return [`CASE WHEN ${sqlOf(x.c, full)} THEN ${sqlOf(x.a, full)}${x.b === null ? '' : ` ELSE ${sqlOf(x.b, full)}`} END`, P.atom];
      case 'length':
        return [`length(${sqlOf(x.a, full)})`, P.atom];
      case 'toInt':
        return [`CAST(${sqlOf(x.a, full)} AS INT)`, P.atom];
      case 'toStr':
        return [`CAST(${sqlOf(x.a, full)} AS STRING)`, P.atom];
      case 'lower':
      case 'upper':
        return [`${x.k}(${sqlOf(x.a, full)})`, P.atom];
      case 'concat':
        return [`concat(${sqlOf(x.a, full)}, ${sqlOf(x.b, full)})`, P.atom];
      case 'substring':
        return [`substring(${sqlOf(x.a, full)}, ${x.pos}, ${x.len})`, P.atom];
      case 'cmpN':
      case 'cmpS':
        return [`${at(x.l, P.comparison + 1)} ${x.op} ${at(x.r, P.comparison + 1)}`, P.comparison];
      case 'and':
      case 'or': {
        const prec = x.k === 'and' ? P.and : P.or;
        return [`${at(x.l, prec)} ${x.k.toUpperCase()} ${at(x.r, prec + 1)}`, prec];
      }
      case 'not':
      case 'notNum':
        return [`NOT ${at(x.a, P.not)}`, P.not];
      case 'isNull':
        return [`${at(x.a, P.comparison + 1)} IS ${x.not ? 'NOT ' : ''}NULL`, P.predicate];
      case 'inN':
        return [`${at(x.a, P.comparison + 1)} IN (${x.list.join(', ')})`, P.predicate];
      case 'inS':
        return [`${at(x.a, P.comparison + 1)} IN (${x.list.map(sqlString).join(', ')})`, P.predicate];
      case 'between':
        return [`${at(x.a, P.comparison + 1)} BETWEEN ${x.lo} AND ${x.hi}`, P.predicate];
    }
  };
  return node(e)[0];
}

const CMP: Record<Cmp, 'eq' | 'neq' | 'lt' | 'leq' | 'gt' | 'geq'> = { '=': 'eq', '<>': 'neq', '<': 'lt', '<=': 'leq', '>': 'gt', '>=': 'geq' };

// biome-ignore lint/suspicious/noExplicitAny: the builder's Columns are typed by the frame; the grammar's are not
type AnyCol = Column<any>;

/** An expression as the builder writes it: Column methods and the functions module. */
function columnOf(x: Num | Str | Bool): AnyCol {
  switch (x.k) {
    case 'col':
      return col(x.c);
    case 'int':
    case 'dbl':
    case 'str':
      return lit(x.v);
    case 'arith': {
      const l = columnOf(x.l);
      return x.op === '+' ? l.plus(columnOf(x.r)) : x.op === '-' ? l.minus(columnOf(x.r)) : l.multiply(columnOf(x.r));
    }
    case 'neg':
      return columnOf(x.a).negate();
    case 'case':
    case 'scase': {
      const c = when(columnOf(x.c), columnOf(x.a));
      return x.b === null ? c : c.otherwise(columnOf(x.b));
    }
    case 'length':
      return length(columnOf(x.a));
    case 'toInt':
      return columnOf(x.a).cast('INT');
    case 'toStr':
      return columnOf(x.a).cast('STRING');
    case 'lower':
      return lower(columnOf(x.a));
    case 'upper':
      return upper(columnOf(x.a));
    case 'concat':
      return concat(columnOf(x.a), columnOf(x.b));
    case 'substring':
      return substring(columnOf(x.a), x.pos, x.len);
    case 'cmpN':
    case 'cmpS':
      return columnOf(x.l)[CMP[x.op]](columnOf(x.r));
    case 'and':
      return columnOf(x.l).and(columnOf(x.r));
    case 'or':
      return columnOf(x.l).or(columnOf(x.r));
    case 'not':
    case 'notNum':
      return not(columnOf(x.a));
    case 'isNull':
      return x.not ? columnOf(x.a).isNotNull() : columnOf(x.a).isNull();
    case 'inN':
    case 'inS':
      return columnOf(x.a).isin(...x.list);
    case 'between':
      return columnOf(x.a).between(x.lo, x.hi);
  }
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

type Mode = 'append' | 'update' | 'complete';

/** A select item: an expression, named or not. */
interface Item {
  readonly e: Num | Str | Bool;
  readonly as: string | null;
}

interface Common {
  /** withWatermark('t', n seconds) (null: none). */
  readonly delaySec: number | null;
  readonly where: Bool | null;
  /** The SQL text's parentheses: around every operator, or as few as needed. */
  readonly fullParens: boolean;
  readonly maxFiles: number | null;
  readonly steps: string[][];
}

interface Stateless extends Common {
  readonly kind: 'stateless';
  /** null: SELECT *. */
  readonly items: readonly Item[] | null;
}

interface Distinct extends Common {
  readonly kind: 'distinct';
  readonly items: readonly Item[];
  readonly mode: 'append' | 'update' | 'complete';
}

type AggFn = 'count' | 'sum' | 'min' | 'max' | 'avg';
/** An aggregate call: count(*) when `arg` is null. */
interface AggCall {
  readonly fn: AggFn;
  readonly arg: Num | null;
}
/** A value over the aggregation: an aggregate, a number, or an arithmetic of them. */
type Over =
  | { readonly k: 'agg'; readonly call: AggCall }
  | { readonly k: 'int'; readonly v: number }
  | { readonly k: 'arith'; readonly op: '+' | '-' | '*'; readonly l: Over; readonly r: Over };
/** A condition over the aggregation (HAVING). */
type OverBool =
  | { readonly k: 'cmp'; readonly op: Cmp; readonly l: Over; readonly r: Over }
  | { readonly k: 'key'; readonly op: Cmp; readonly v: string }
  | { readonly k: 'alias'; readonly op: Cmp; readonly v: number }
  | { readonly k: 'and' | 'or'; readonly l: OverBool; readonly r: OverBool }
  | { readonly k: 'not'; readonly a: OverBool };

type KeyName = 'window' | 'k' | 'lower(k)';
type AggItem =
  | { readonly k: 'key'; readonly key: KeyName; readonly as: string | null }
  | { readonly k: 'windowStart'; readonly as: string }
  | { readonly k: 'agg'; readonly call: AggCall; readonly as: string | null }
  | { readonly k: 'over'; readonly over: Over; readonly as: string };

interface Aggregation extends Common {
  readonly kind: 'aggregate';
  readonly keys: readonly KeyName[];
  /** The window's duration and slide, in seconds. */
  readonly window: { readonly duration: number; readonly slide: number };
  readonly items: readonly AggItem[];
  readonly having: OverBool | null;
  readonly mode: Mode;
}

type Query = Stateless | Distinct | Aggregation;

const num = exprs.num;
const str = exprs.str;
const bool = exprs.bool;
const anyExpr: fc.Arbitrary<Num | Str | Bool> = fc.oneof(
  { weight: 3, arbitrary: num as fc.Arbitrary<Num | Str | Bool> },
  { weight: 3, arbitrary: str as fc.Arbitrary<Num | Str | Bool> },
  { weight: 1, arbitrary: bool as fc.Arbitrary<Num | Str | Bool> },
);

/** Output names: fresh ones, and ones that are input columns (an alias that shadows one). */
const alias = fc.option(fc.constantFrom('a', 'b', 'x', 'total', 'k', 'v'), { nil: null, freq: 2 });

/** Select items whose names are told apart (Spark allows duplicates, but rows as objects do not). */
function distinctNames<T>(items: readonly T[], nameOf: (i: T) => string): boolean {
  const names = items.map((i) => nameOf(i).toLowerCase());
  return new Set(names).size === names.length;
}

const aggCall: fc.Arbitrary<AggCall> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ fn: 'count' as const, arg: null }) },
  {
    weight: 5,
    arbitrary: fc.record({
      fn: fc.constantFrom<AggFn>('count', 'sum', 'min', 'max', 'avg'),
      arg: fc.oneof({ weight: 3, arbitrary: fc.constantFrom<Num>({ k: 'col', c: 'v' }, { k: 'col', c: 'n' }) }, { weight: 1, arbitrary: num }),
    }),
  },
);

const over: fc.Arbitrary<Over> = fc.letrec<{ over: Over }>((tie) => ({
  over: fc.oneof(
    { depthSize: 'small' },
    { weight: 4, arbitrary: aggCall.map((call) => ({ k: 'agg' as const, call })) },
    { weight: 1, arbitrary: fc.integer({ min: -1, max: 3 }).map((v) => ({ k: 'int' as const, v })) },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant('arith' as const), op: fc.constantFrom('+' as const, '-' as const, '*' as const), l: tie('over'), r: tie('over') }),
    },
  ),
})).over;

const COUNT_ALL: Over = { k: 'agg', call: { fn: 'count', arg: null } };
const hasAgg = (o: Over): boolean => o.k === 'agg' || (o.k === 'arith' && (hasAgg(o.l) || hasAgg(o.r)));

const overBool: fc.Arbitrary<OverBool> = fc.letrec<{ b: OverBool }>((tie) => ({
  b: fc.oneof(
    { depthSize: 'small' },
    { weight: 4, arbitrary: fc.record({ k: fc.constant('cmp' as const), op: cmp, l: over, r: over }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('key' as const), op: cmp, v: fc.constantFrom(...STRINGS) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('alias' as const), op: cmp, v: fc.integer({ min: 0, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constantFrom('and' as const, 'or' as const), l: tie('b'), r: tie('b') }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('not' as const), a: tie('b') }) },
  ),
})).b;

// ---------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------

const key = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'b', 'B', 'ab') },
  { weight: 2, arbitrary: fc.constantFrom(null, '', '12', "it's", ' x', 'Ω') },
);
const doubleValue = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -4, max: 6 }).map((i) => i / 2) },
  { weight: 1, arbitrary: fc.constantFrom('"NaN"', '"Infinity"', '1e308', '-0.0') },
  { weight: 2, arbitrary: fc.constant(null) },
);
const intValue = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -3, max: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom(INT_MAX, -INT_MAX - 1, 65536) },
  { weight: 2, arbitrary: fc.constant(null) },
);

/** An event time as the input writes it, "YYYY-MM-DD HH:MM:SS" (UTC). */
const inputTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** A JSON line of run `stepNo`: event times drift forward by run and go back (late), sometimes none; now and then not JSON. */
function line(stepNo: number): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 40,
      arbitrary: fc
        .record({
          k: key,
          s: key,
          t: fc.option(fc.integer({ min: -45, max: 20 }), { nil: null, freq: 15 }),
          v: doubleValue,
          n: intValue,
        })
        .map(({ k, s, t, v, n }) => {
          const time = t === null ? 'null' : JSON.stringify(inputTime(BASE_MS + (stepNo * 20 + t) * SEC));
          return `{"k":${JSON.stringify(k)},"s":${JSON.stringify(s)},"t":${time},"v":${v},"n":${n}}`;
        }),
    },
    { weight: 1, arbitrary: fc.constant('{"k": "a", "t": ') },
  );
}

/** One to four runs of one to three files of 0 to 8 lines. */
const steps: fc.Arbitrary<string[][]> = fc.integer({ min: 1, max: 4 }).chain((n) =>
  fc.tuple(
    ...Array.from({ length: n }, (_, stepNo) =>
      fc.array(
        fc.array(line(stepNo), { maxLength: 8 }).map((ls) => ls.join('\n')),
        { minLength: 1, maxLength: 3 },
      ),
    ),
  ),
);

const common = fc.record({
  delaySec: fc.option(fc.constantFrom(0, 5, 10, 30), { nil: null, freq: 3 }),
  where: fc.option(bool, { nil: null, freq: 2 }),
  fullParens: fc.boolean(),
  maxFiles: fc.option(fc.integer({ min: 1, max: 2 }), { nil: null, freq: 2 }),
  steps,
});

/** A cast of a cast of a column: CAST(CAST(n AS STRING) AS INT). */
function castOfCastOfColumn(e: Num | Str | Bool): boolean {
  const castOfColumn = (x: Num | Str | Bool): boolean => x.k === 'col' || ((x.k === 'toInt' || x.k === 'toStr') && castOfColumn(x.a));
  return (e.k === 'toInt' || e.k === 'toStr') && (e.a.k === 'toInt' || e.a.k === 'toStr') && castOfColumn(e.a);
}

/**
 * A select item. Spark names an unaliased cast of a cast of a column apart in its two APIs: the
 * Dataset's Column.named by the column (`n`), SQL's ResolveAliases by its pretty SQL
 * (docs/sql.md; sql/index.ts sqlNamed): such an item is given an alias.
 */
const item: fc.Arbitrary<Item> = fc.record({ e: anyExpr, as: alias }).map((i) => (i.as === null && castOfCastOfColumn(i.e) ? { ...i, as: 'cc' } : i));

const stateless: fc.Arbitrary<Stateless> = fc
  .record({ common, items: fc.option(fc.array(item, { minLength: 1, maxLength: 4 }), { nil: null, freq: 6 }) })
  .filter(({ items }) => items === null || distinctNames(items, (i) => i.as ?? sqlOf(i.e, false)))
  .map(({ common: c, items }) => ({ kind: 'stateless', ...c, items }));

const distinct: fc.Arbitrary<Distinct> = fc
  .record({
    common,
    items: fc.array(
      fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constantFrom<Item>({ e: { k: 'col', c: 'k' }, as: null }, { e: { k: 'col', c: 'n' }, as: null }, { e: { k: 'col', c: 'v' }, as: null }),
        },
        { weight: 1, arbitrary: item },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    mode: fc.constantFrom<'append' | 'update' | 'complete'>('append', 'update', 'complete'),
  })
  .filter(({ items }) => distinctNames(items, (i) => i.as ?? sqlOf(i.e, false)))
  .map(({ common: c, items, mode }) => ({ kind: 'distinct', ...c, items, mode }));

const KEY_SETS: KeyName[][] = [['window'], ['window', 'k'], ['k', 'window'], ['k'], ['lower(k)'], ['window', 'lower(k)'], []];

const aggregation: fc.Arbitrary<Aggregation> = fc
  .record({
    common,
    keys: fc.constantFrom(...KEY_SETS),
    window: fc.constantFrom({ duration: 10, slide: 10 }, { duration: 10, slide: 10 }, { duration: 10, slide: 5 }, { duration: 30, slide: 10 }),
    keyAliases: fc.array(fc.option(fc.constantFrom('w', 'kk', 'key'), { nil: null, freq: 2 }), { minLength: 2, maxLength: 2 }),
    windowStart: fc.boolean(),
    aggs: fc.array(fc.record({ call: aggCall, as: fc.option(fc.constantFrom('c', 'total', 'm', 'n'), { nil: null, freq: 2 }) }), { maxLength: 3 }),
    // (an expression over the aggregation reads an aggregate: without one, and without GROUP BY, SQL's query is not an aggregation)
    overs: fc.array(
      fc.record({ over: over.map((o) => (hasAgg(o) ? o : { k: 'arith' as const, op: '+' as const, l: COUNT_ALL, r: o })), as: fc.constantFrom('r', 'q') }),
      {
        maxLength: 1,
      },
    ),
    having: fc.option(overBool, { nil: null, freq: 2 }),
    mode: fc.constantFrom<Mode>('append', 'append', 'update', 'complete'),
    order: fc.nat(),
  })
  .map(({ common: c, keys, window: w, keyAliases, windowStart, aggs, overs, having, mode, order }) => {
    const items: AggItem[] = [
      ...keys.map((key, i) => ({ k: 'key' as const, key, as: keyAliases[i] ?? null })),
      ...(windowStart && keys.includes('window') ? [{ k: 'windowStart' as const, as: 'ws' }] : []),
      ...aggs.map((a) => ({ k: 'agg' as const, ...a })),
      ...overs.map((o) => ({ k: 'over' as const, ...o })),
    ];
    if (items.length === 0) items.push({ k: 'agg', call: { fn: 'count', arg: null }, as: null });
    // append needs a watermarked window: mostly given one (the rest refused by both)
    const delaySec = mode === 'append' && keys.includes('window') && c.delaySec === null && order % 4 !== 0 ? 5 : c.delaySec;
    // a rotation of the select list
    const at = order % items.length;
    return { kind: 'aggregate' as const, ...c, delaySec, keys, window: w, items: [...items.slice(at), ...items.slice(0, at)], having, mode };
  })
  .filter((q) => distinctNames(q.items, aggItemName));

const query: fc.Arbitrary<Query> = fc.oneof({ weight: 3, arbitrary: stateless }, { weight: 1, arbitrary: distinct }, { weight: 4, arbitrary: aggregation });

// ---------------------------------------------------------------------------------------------
// The SQL form
// ---------------------------------------------------------------------------------------------

function windowSql(q: Aggregation): string {
  const { duration, slide } = q.window;
  return slide === duration ? `window(t, '${duration} seconds')` : `window(t, '${duration} seconds', '${slide} seconds')`;
}

const AGG_NAME: Record<AggFn, string> = { count: 'count', sum: 'sum', min: 'min', max: 'max', avg: 'avg' };

function aggSql(a: AggCall, full: boolean): string {
  return a.arg === null ? 'count(*)' : `${AGG_NAME[a.fn]}(${sqlOf(a.arg, full)})`;
}

function overSql(o: Over, full: boolean): string {
  if (o.k === 'agg') return aggSql(o.call, full);
  if (o.k === 'int') return o.v < 0 ? `(${o.v})` : String(o.v);
  return `(${overSql(o.l, full)} ${o.op} ${overSql(o.r, full)})`;
}

/** The select item a HAVING's `alias` reads: the first aggregate item with an alias, else the first key. */
function aliasTarget(q: Aggregation): string | null {
  // (not one that is an input column's name too: HAVING reads the input column there, as Spark resolves it)
  const a = q.items.find((i) => i.k === 'agg' && i.as !== null && !INPUTS.includes(i.as));
  return a === undefined ? null : a.as;
}

function havingSql(b: OverBool, q: Aggregation, full: boolean): string {
  switch (b.k) {
    case 'cmp':
      return `${overSql(b.l, full)} ${b.op} ${overSql(b.r, full)}`;
    case 'key':
      return `${q.keys.includes('k') ? 'k' : q.keys.includes('lower(k)') ? 'lower(k)' : sqlString(b.v)} ${b.op} ${sqlString(b.v)}`;
    case 'alias':
      return `${aliasTarget(q) ?? 'count(*)'} ${b.op} ${b.v}`;
    case 'and':
    case 'or':
      return `(${havingSql(b.l, q, full)}) ${b.k.toUpperCase()} (${havingSql(b.r, q, full)})`;
    case 'not':
      return `NOT (${havingSql(b.a, q, full)})`;
  }
}

function keySql(key: KeyName, q: Aggregation): string {
  return key === 'window' ? windowSql(q) : key;
}

function itemSql(i: AggItem, q: Aggregation, full: boolean): string {
  const as = (a: string | null) => (a === null ? '' : ` AS ${a}`);
  switch (i.k) {
    case 'key':
      return `${keySql(i.key, q)}${as(i.as)}`;
    case 'windowStart':
      return `window.start AS ${i.as}`;
    case 'agg':
      return `${aggSql(i.call, full)}${as(i.as)}`;
    case 'over':
      return `${overSql(i.over, full)} AS ${i.as}`;
  }
}

function sqlText(q: Query): string {
  const sets = [
    ...(q.kind === 'aggregate' || q.kind === 'distinct' ? [`SET outputMode = ${q.mode};`] : []),
    ...(q.maxFiles === null ? [] : [`SET maxFilesPerTrigger = ${q.maxFiles};`]),
  ];
  const from = `FROM STREAM read_files(format => 'json', schema => '${SCHEMA}')${q.delaySec === null ? '' : ` WATERMARK t DELAY OF INTERVAL ${q.delaySec} SECONDS`}`;
  const where = q.where === null ? '' : `\nWHERE ${sqlOf(q.where, q.fullParens)}`;
  const plainItem = (i: Item) => `${sqlOf(i.e, q.fullParens)}${i.as === null ? '' : ` AS ${i.as}`}`;
  if (q.kind === 'stateless') return `${sets.join('\n')}\nSELECT ${q.items === null ? '*' : q.items.map(plainItem).join(', ')}\n${from}${where}`;
  if (q.kind === 'distinct') return `${sets.join('\n')}\nSELECT DISTINCT ${q.items.map(plainItem).join(', ')}\n${from}${where}`;
  const groupBy = q.keys.length === 0 ? '' : `\nGROUP BY ${q.keys.map((k) => keySql(k, q)).join(', ')}`;
  const having = q.having === null ? '' : `\nHAVING ${havingSql(q.having, q, q.fullParens)}`;
  return `${sets.join('\n')}\nSELECT ${q.items.map((i) => itemSql(i, q, q.fullParens)).join(', ')}\n${from}${where}${groupBy}${having}`;
}

// ---------------------------------------------------------------------------------------------
// The builder form
// ---------------------------------------------------------------------------------------------

/** An aggregate item's output name (Spark's: its alias, or the call as Spark prints it). */
function aggItemName(i: AggItem): string {
  if (i.as !== null) return i.as;
  if (i.k === 'key') return i.key;
  if (i.k === 'agg') return aggBuilder(i.call).name;
  return '';
}

function aggBuilder(a: AggCall): AggBuilder {
  if (a.arg === null) return count();
  const arg = a.arg.k === 'col' ? a.arg.c : columnOf(a.arg);
  const fns: Record<AggFn, (c: string | AnyCol) => AggBuilder> = { count: (c) => count(c as string), sum, min, max, avg };
  return fns[a.fn](arg);
}

function builderPlan(q: Query): QueryPlan {
  let reader = readStream.format('json').schema(SCHEMA);
  if (q.maxFiles !== null) reader = reader.option('maxFilesPerTrigger', q.maxFiles);
  let frame = reader.load() as unknown as import('../../lib/engine/query/frame').StreamFrame<AnyColumns>;
  if (q.delaySec !== null) frame = frame.withWatermark('t' as never, `${q.delaySec} seconds`);
  if (q.where !== null) frame = frame.filter(columnOf(q.where));
  const plainItem = (i: Item) => (i.as === null ? columnOf(i.e) : columnOf(i.e).as(i.as));
  if (q.kind === 'stateless') return (q.items === null ? frame : frame.select(...q.items.map(plainItem))).writeStream.outputMode('append').plan();
  if (q.kind === 'distinct') {
    // Spark's optimizer makes SELECT DISTINCT an aggregation by every column (ReplaceDistinctWithAggregate)
    const selected = frame.select(...q.items.map(plainItem));
    return selected
      .groupBy(...(selected.columnsNow_().map((c) => c.name) as never[]))
      .agg()
      .writeStream.outputMode(q.mode)
      .plan();
  }

  // the aggregation: the select list's aggregates in its order, a hidden one where an expression
  // reads one, then those HAVING reads (Spark's Aggregate lists them so, and evaluates them in that
  // order: a row that fails two of them is a dead letter by the first)
  const keys = q.keys.map(
    (k): GroupArg<AnyColumns> =>
      k === 'window'
        ? window('t', `${q.window.duration} seconds`, q.window.slide === q.window.duration ? undefined : `${q.window.slide} seconds`)
        : k === 'k'
          ? 'k'
          : lower(col('k')),
  );
  const aggs: AggBuilder[] = [];
  const hidden: string[] = [];
  const hiddenOf = (a: AggCall): AnyCol => {
    const name = `_h${hidden.length}`;
    hidden.push(name);
    aggs.push(aggBuilder(a).as(name));
    return col(name);
  };
  const overCol = (o: Over): AnyCol => {
    if (o.k === 'agg') return hiddenOf(o.call);
    if (o.k === 'int') return lit(o.v);
    const l = overCol(o.l);
    const r = overCol(o.r);
    return o.op === '+' ? l.plus(r) : o.op === '-' ? l.minus(r) : l.multiply(r);
  };
  const keyColumn = (key: KeyName) => col(key);
  const havingCol = (b: OverBool): AnyCol => {
    switch (b.k) {
      case 'cmp':
        return overCol(b.l)[CMP[b.op]](overCol(b.r));
      case 'key':
        return (q.keys.includes('k') ? keyColumn('k') : q.keys.includes('lower(k)') ? keyColumn('lower(k)') : lit(b.v))[CMP[b.op]](b.v);
      case 'alias': {
        const target = aliasTarget(q);
        return (target === null ? hiddenOf({ fn: 'count', arg: null }) : col(target))[CMP[b.op]](b.v);
      }
      case 'and':
        return havingCol(b.l).and(havingCol(b.r));
      case 'or':
        return havingCol(b.l).or(havingCol(b.r));
      case 'not':
        return not(havingCol(b.a));
    }
  };
  /** Each select item's aggregate's place among the aggregation's, or its column over them. */
  const aggAt = new Map<(typeof q.items)[number], number>();
  const outs = q.items.map((i): AnyCol | null => {
    if (i.k === 'over') return overCol(i.over).as(i.as);
    if (i.k === 'agg') {
      aggAt.set(i, aggs.length);
      aggs.push(i.as === null ? aggBuilder(i.call) : aggBuilder(i.call).as(i.as));
    }
    return null;
  });
  const condition = q.having === null ? null : havingCol(q.having);
  const grouped = frame.groupBy(...keys);
  let out = grouped.agg(...(aggs as never[])) as unknown as typeof frame;
  // (an aggregate of an expression is named by Spark's pretty SQL of it: read from the frame, by place)
  const aggNames = out
    .columnsNow_()
    .slice(keys.length)
    .map((c) => c.name);
  if (condition !== null) out = out.filter(condition);
  const selected = q.items.map((i, n): AnyCol => {
    switch (i.k) {
      case 'key':
        return i.as === null ? keyColumn(i.key) : keyColumn(i.key).as(i.as);
      case 'windowStart':
        return col('window')
          .getField('start' as never)
          .as(i.as);
      case 'agg':
        return col(aggNames[aggAt.get(i)!]);
      case 'over':
        return outs[n]!;
    }
  });
  return out
    .select(...selected)
    .writeStream.outputMode(q.mode)
    .plan();
}

// ---------------------------------------------------------------------------------------------
// Running both
// ---------------------------------------------------------------------------------------------

/** Both runs, compared batch by batch (rows as canonical text: -0 is 0, as the state stores keep no sign of zero), or the refusal. */
type Seen = { refused: string } | { runs: RunSeen[]; deadLetters: string[] };

/** A refusal's class: Spark's error class in brackets, else the message without its place. */
function refusal(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const m = /^\[([A-Z_.]+)\]/.exec(message);
  if (m) return m[1];
  return message.replace(/ \(line \d+, column \d+\)$/, '').replace(/ \(at position \d+ of [\s\S]*\)$/, '');
}

/** A dead letter's class: its error class, or its reason's first words. */
function deadLetterClass(r: Json): string {
  const o = r as Record<string, Json>;
  const reason = String(o.errorClass ?? o.error ?? o.reason ?? JSON.stringify(Object.keys(o)));
  return /^\[?([A-Z_.]{4,})/.exec(reason)?.[1] ?? reason.slice(0, 40);
}

async function run(build: () => QueryPlan, q: Query): Promise<Seen> {
  let plan: QueryPlan;
  try {
    plan = build();
  } catch (e) {
    return { refused: refusal(e) };
  }
  const t = createTestRunner(plan);
  const runs: RunSeen[] = [];
  for (const files of q.steps) {
    for (const f of files) t.drop(f);
    runs.push(seenOfRun(await t.run()));
  }
  const deadLetters = [...t.deadLetters.records.entries()].flatMap(([k, rs]) => rs.map((r) => `${k.split('/')[0]}:${deadLetterClass(r)}`)).sort();
  return { runs, deadLetters };
}

async function bothWays(q: Query): Promise<{ sql: Seen; builder: Seen; text: string }> {
  const text = sqlText(q);
  return { text, sql: await run(() => compileSql(text), q), builder: await run(() => builderPlan(q), q) };
}

describe('a query written in SQL and with the builder API', () => {
  it('emits, drops, dead-letters and keeps the same, batch by batch, or both refuse it alike', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const { sql, builder, text } = await bothWays(q);
        expect({ text, seen: sql }).toEqual({ text, seen: builder });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('counterexamples the differential test found', () => {
  it('negates a negation in the builder as SQL does: -(-v), not --v (a comment in Spark SQL)', async () => {
    // found by the property: SELECT - - v = v ran in SQL, where col('v').negate().negate().eq(col('v'))
    // was written `--v = v` and refused as PARSE_SYNTAX_ERROR
    const q: Stateless = {
      kind: 'stateless',
      delaySec: null,
      where: { k: 'cmpN', op: '<', l: { k: 'neg', a: { k: 'int', v: -1 } }, r: { k: 'col', c: 'v' } },
      fullParens: false,
      maxFiles: null,
      steps: [['{"k":"a","v":2,"n":3}\n{"k":"b","v":0.5,"n":-4}']],
      items: [{ e: { k: 'neg', a: { k: 'neg', a: { k: 'col', c: 'n' } } }, as: null }],
    };
    const { sql, builder } = await bothWays(q);
    expect(builder).toEqual(sql);
    expect('runs' in builder && builder.runs[0].batches[0].rows).toEqual(['{"(- (- n))":3}']);
  });
});
