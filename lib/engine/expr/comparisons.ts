/**
 * The comparison predicates' typing and evaluation: `= <> < <= > >= <=>` over a common comparable
 * type (Spark's ordering: NaN largest, strings by code point...), IS [NOT] NULL/TRUE/FALSE,
 * [NOT] IN (a list with nulls is three-valued) and LIKE/ILIKE/RLIKE. Called by the analyzer.
 */
import { type Analyzer, implicitCast } from './analyze';
import { javaRegex, likeRegex } from './patterns';
import { SparkRowError } from './errors';
import { strict, type Typed, withJs } from './typed';
import { BOOLEAN, commonType, STRING, typeName } from './types';
import { comparator } from './values';
export function compare(az: Analyzer, op: string, l: Typed, r: Typed, sql: string, pos: number): Typed {
  const c = az.comparable(l, r, sql, pos);
  const cmp = comparator(c.type);
  const test: (n: number) => boolean =
    op === '=' || op === '<=>'
      ? (n) => n === 0
      : op === '<>'
        ? (n) => n !== 0
        : op === '<'
          ? (n) => n < 0
          : op === '<='
            ? (n) => n <= 0
            : op === '>'
              ? (n) => n > 0
              : (n) => n >= 0;
  // (a STRING's order is by code point, not JS's `<`: only its equality takes the plain path)
  const equality = op === '=' || op === '<=>' || op === '<>';
  const fast = c.type.type === 'INT' || c.type.type === 'DATE' || c.type.type === 'BOOLEAN' || (c.type.type === 'STRING' && equality);
  let f: (x: unknown, y: unknown) => boolean = (x, y) => test(cmp(x, y));
  if (c.type.type === 'DOUBLE' && op !== '<=>' && op !== '=' && op !== '<>') {
    // plain comparison unless a NaN is involved (Spark orders NaN above every number)
    const slow = f;
    f =
      op === '<'
        ? (x, y) => (!Number.isNaN(x as number) && !Number.isNaN(y as number) ? (x as number) < (y as number) : slow(x, y))
        : op === '<='
          ? (x, y) => (!Number.isNaN(x as number) && !Number.isNaN(y as number) ? (x as number) <= (y as number) : slow(x, y))
          : op === '>'
            ? (x, y) => (!Number.isNaN(x as number) && !Number.isNaN(y as number) ? (x as number) > (y as number) : slow(x, y))
            : (x, y) => (!Number.isNaN(x as number) && !Number.isNaN(y as number) ? (x as number) >= (y as number) : slow(x, y));
  }
  if (fast) {
    if (op === '=' || op === '<=>') f = (x, y) => x === y;
    else if (op === '<>') f = (x, y) => x !== y;
    else if (op === '<') f = (x, y) => (x as number) < (y as number);
    else if (op === '<=') f = (x, y) => (x as number) <= (y as number);
    else if (op === '>') f = (x, y) => (x as number) > (y as number);
    else f = (x, y) => (x as number) >= (y as number);
  }
  if (op === '<=>') {
    return {
      type: BOOLEAN,
      sql,
      name: sql,
      children: [c.l, c.r],
      build: withJs(
        ([a, b]) =>
          (row) => {
            const x = a(row);
            const y = b(row);
            return x == null || y == null ? x == null && y == null : f(x, y);
          },
        ([a, b], g) => {
          const x = g.tmp();
          const y = g.tmp();
          return `((${x} = ${a}), (${y} = ${b}), ${x} == null || ${y} == null ? ${x} == null && ${y} == null : ${g.ref(f)}(${x}, ${y}))`;
        },
      ),
    };
  }
  return { type: BOOLEAN, sql, name: sql, children: [c.l, c.r], build: strict(f) };
}

export function isTest(az: Analyzer, what: 'NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN', not: boolean, arg: Typed, pos: number): Typed {
  const sql = `(${arg.sql} IS ${not ? 'NOT ' : ''}${what})`;
  // IS [NOT] UNKNOWN is Spark's IS [NOT] NULL of a BOOLEAN (IsUnknown expects the type, no implicit cast; a NULL literal is one)
  if (what === 'UNKNOWN' && arg.type.type !== 'BOOLEAN' && arg.type.type !== 'NULL') {
    throw az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      sql,
      `the first parameter requires the "BOOLEAN" type, however ${arg.sql} has the type "${typeName(arg.type)}"`,
      pos,
    );
  }
  if (what === 'NULL' || what === 'UNKNOWN') {
    return {
      type: BOOLEAN,
      sql,
      name: sql,
      children: [arg],
      build: withJs(
        ([a]) => (not ? (row) => a(row) != null : (row) => a(row) == null),
        ([a]) => `(${a} ${not ? '!=' : '=='} null)`,
      ),
    };
  }
  const b = az.implicitBoolean(arg, sql, pos);
  const want = what === 'TRUE';
  return {
    type: BOOLEAN,
    sql,
    name: sql,
    children: [b],
    build: withJs(
      ([a]) =>
        (row) =>
          (a(row) === want) !== not,
      ([a]) => `((${a} === ${want}) !== ${not})`,
    ),
  };
}

export function inList(az: Analyzer, arg: Typed, list: readonly Typed[], not: boolean, pos: number): Typed {
  // x NOT IN (...) is Spark's Not(In(...)): its SQL text is (NOT (x IN (...)))
  const inSql = `(${arg.sql} IN (${list.map((x) => x.sql).join(', ')}))`;
  const sql = not ? `(NOT ${inSql})` : inSql;
  // Spark's InTypeCoercion: the wider common type of the value and every item, strings promoted; none is DATA_DIFF_TYPES
  let t = commonType([arg.type, ...list.map((x) => x.type)]);
  if (t === null) {
    throw az.mismatch(
      'DATA_DIFF_TYPES',
      inSql,
      `the input should all be the same type, but it's [${[arg, ...list].map((x) => `"${typeName(x.type)}"`).join(', ')}]; cast the values to one type`,
      pos,
    );
  }
  if (t.type === 'NULL') t = BOOLEAN;
  const a = implicitCast(arg, t);
  const items = list.map((x) => implicitCast(x, t));
  const cmp = comparator(t);
  const simple = t.type === 'INT' || t.type === 'STRING' || t.type === 'DATE' || t.type === 'BOOLEAN';
  const consts = items.every((x) => x.constant !== undefined) && simple ? new Set(items.map((x) => x.constant!.value)) : null;
  const hasNull = consts?.has(null) ?? false;
  return {
    type: BOOLEAN,
    sql,
    name: sql,
    children: [a, ...items],
    build: ([e, ...es]) => {
      if (consts !== null) {
        return (row) => {
          const v = e(row);
          if (v == null) return null;
          if (consts.has(v)) return !not;
          return hasNull ? null : not;
        };
      }
      return (row) => {
        const v = e(row);
        if (v == null) return null;
        let sawNull = false;
        for (const x of es) {
          const w = x(row);
          if (w == null) sawNull = true;
          else if (cmp(v, w) === 0) return !not;
        }
        return sawNull ? null : not;
      };
    },
  };
}

export function likeTest(
  az: Analyzer,
  op: 'LIKE' | 'ILIKE' | 'RLIKE',
  arg: Typed,
  pattern: Typed,
  not: boolean,
  escapeChar: string | undefined,
  pos: number,
): Typed {
  const word = op === 'RLIKE' ? 'RLIKE' : op.toLowerCase();
  const sql0 = op === 'RLIKE' ? `RLIKE(${arg.sql}, ${pattern.sql})` : `${arg.sql} ${op} ${pattern.sql}`;
  const a = az.implicit(arg, STRING, pos, `the first argument of ${word}`);
  const p = az.implicit(pattern, STRING, pos, `the pattern of ${word}`);
  const toRegex = (s: string, atAnalysis: boolean): RegExp => {
    if (op === 'RLIKE') return javaRegex(s, atAnalysis ? az : null, pos);
    try {
      // ILIKE is Spark's lower(str) LIKE lower(pattern)
      return likeRegex(op === 'ILIKE' ? s.toLowerCase() : s, escapeChar ?? '\\');
    } catch (e) {
      if (atAnalysis && e instanceof SparkRowError) throw az.fail(e.errorClass, e.message.replace(/^\[[^\]]+\] /, ''), pos);
      throw e;
    }
  };
  const fixed = p.constant && typeof p.constant.value === 'string' ? toRegex(p.constant.value, true) : null;
  let lastText: string | null = null;
  let last: RegExp | null = null;
  const node: Typed = {
    type: BOOLEAN,
    sql: sql0,
    name: sql0,
    children: [a, p],
    build: strict((s, pat) => {
      let re = fixed;
      if (re === null) {
        if (pat !== lastText) {
          last = toRegex(pat as string, false);
          lastText = pat as string;
        }
        re = last!;
      }
      return re.test(op === 'ILIKE' ? (s as string).toLowerCase() : (s as string));
    }),
  };
  return not ? az.unary('NOT', node, pos) : node;
}
