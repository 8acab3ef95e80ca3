/**
 * groupBy and agg with expressions (FORMAT-3 "Expressions": a groupBy item `{expr, as}`, an
 * aggregation `{fn, expr, as}`): the expressions become one selectExpr stage before the
 * aggregation, which computes every grouping key and aggregate input from the same input row and
 * passes the other columns through (a bare column keeps its event-time mark). So a row whose
 * expression fails is a dead letter before the aggregation, and no aggregate counts it, as
 * FORMAT-3 says. `window(...)` and `session_window(...)` as expressions are the window keys.
 */
import { tempNames } from './temp-names';
import { InvalidQueryError } from '../errors';
import { parseExpression, type Ast } from '../expr/parser';
import { analyzeExpression, prettySql } from '../expr';
import type { GroupKey, SessionKey, WindowKey } from '../plan/types';
import type { ColumnInfo } from '../plan/columns';
import { Column, quoteName } from './column';
import { AggBuilder, aggregateName, renamed, sessionWindow, window } from './functions';

/** The keys, aggregates and stage an aggregation with expressions is built from. */
export interface ExprAggregation {
  /** The selectExpr items of the stage before the aggregation; null when it computes nothing (only window keys over columns). */
  readonly items: string[] | null;
  readonly keys: Array<string | GroupKey>;
  readonly aggs: AggBuilder[];
  /** Renames after the aggregation (a window key named other than `window`), or null. */
  readonly renames: ReturnType<typeof renamed>[] | null;
}

/** Whether a grouping or its aggregates use expressions (then aggregation() builds them). */
export function usesExpressions(keys: readonly unknown[], aggs: readonly unknown[]): boolean {
  return keys.some((k) => k instanceof Column) || aggs.some((a) => a instanceof AggBuilder && (a.column instanceof Column || a.by instanceof Column));
}

/** The stage, keys and aggregates of a grouping by `keys` with `aggs`, some of them expressions, over `cols`. */
export function aggregation(cols: readonly ColumnInfo[], keys: ReadonlyArray<string | GroupKey | Column>, aggs: readonly AggBuilder[]): ExprAggregation {
  const computed: string[] = []; // `expr AS name` items
  const computedNames = new Set<string>();
  const outKeys: Array<string | GroupKey> = [];
  const keyNames: string[] = [];
  const finalNames: string[] = [];
  const tempName = tempNames(cols);
  for (const k of keys) {
    if (!(k instanceof Column)) {
      outKeys.push(k);
      const name =
        typeof k === 'string' ? k.split('.').pop()! : k.kind === 'column' ? k.name.split('.').pop()! : k.kind === 'window' ? 'window' : 'session_window';
      keyNames.push(name);
      finalNames.push(name);
      continue;
    }
    const win = windowKey(k, cols, tempName);
    if (win) {
      for (const c of win.computed) {
        computed.push(c.item);
        computedNames.add(c.name);
      }
      outKeys.push(win.key);
      const name = win.key.kind === 'window' ? 'window' : 'session_window';
      keyNames.push(name);
      finalNames.push(k.name ?? name);
      continue;
    }
    const typed = analyzeExpression(k.sql, cols);
    if (typed.generator !== undefined) {
      throw new InvalidQueryError(
        `groupBy(${k.sql}): [UNSUPPORTED_GENERATOR.OUTSIDE_SELECT] The generator is not supported: outside the SELECT clause, found: Aggregate ${typed.sql}; explode in a select first (selectExpr("*", "${k.sql} AS x")), then group by x`,
      );
    }
    const name = k.name ?? typed.name;
    computed.push(`${k.sql} AS ${quoteName(name)}`);
    computedNames.add(name);
    outKeys.push(name);
    keyNames.push(name);
    finalNames.push(name);
  }
  /** The input column of an aggregate: a computed one for an expression, or for a column a computed key shadows (read as it came in). */
  const input = (c: string | Column, fn: string): string => {
    if (!(c instanceof Column) && !computedNames.has(c)) return c;
    if (c instanceof Column && analyzeExpression(c.sql, cols).generator !== undefined) {
      throw new InvalidQueryError(
        `${fn}(${c.sql}): [UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS] The generator is not supported: nested in expressions "${fn}(${c.sql})"; explode in a select first (selectExpr("*", "${c.sql} AS x")), then aggregate x`,
      );
    }
    const name = tempName('agg');
    computed.push(`${c instanceof Column ? c.sql : quoteName(c)} AS ${name}`);
    computedNames.add(name);
    return name;
  };
  const outAggs = aggs.map((a) => {
    const c = a.column;
    if (a.by !== undefined) {
      // max_by / min_by: Spark names it by its arguments' pretty SQL, `max_by(x, (t + 1))`
      const text = (x: string | Column) => (x instanceof Column ? x.sql : x);
      const pretty = (x: string | Column) => (x instanceof Column ? prettySql(x.sql, cols) : x);
      const named = a.name === `${a.fn}(${text(c as string | Column)}, ${text(a.by)})` ? `${a.fn}(${pretty(c as string | Column)}, ${pretty(a.by)})` : a.name;
      return a.over(input(c as string | Column, a.fn), named, input(a.by, a.fn));
    }
    if (c instanceof Column) {
      const name = input(c, a.fn);
      // (Spark's name shows no cast it adds to the input: its toPrettySQL drops them, since 3.4)
      const head = a.percentage !== undefined ? percentileHead(a.name, c.sql) : null;
      const named =
        a.name === aggregateName(a.fn, c.sql, undefined, a.ignoreNulls)
          ? aggregateName(a.fn, prettySql(c.sql, cols), undefined, a.ignoreNulls)
          : head !== null
            ? `${head}(${prettySql(c.sql, cols)}${a.name.slice(head.length + 1 + c.sql.length)}`
            : a.name;
      return a.over(name, named);
    }
    if (typeof c === 'string' && computedNames.has(c)) return a.over(input(c, a.fn), a.name);
    return a;
  });
  const items = computed.length === 0 ? null : [...cols.filter((c) => !computedNames.has(c.name)).map((c) => quoteName(c.name)), ...computed];
  const changed = finalNames.some((n, i) => n !== keyNames[i]);
  const renames = changed ? [...keyNames.map((n, i) => renamed(n, finalNames[i])), ...outAggs.map((a) => renamed(a.name, a.name))] : null;
  return { items, keys: outKeys, aggs: outAggs, renames };
}

/** The function name of a percentile's default name over `sql` (`percentile(<sql>, 0.5, 1)`, `approx_percentile(<sql>, ...)`), or null when it is named otherwise. */
function percentileHead(name: string, sql: string): string | null {
  const head = /^(percentile|percentile_approx|approx_percentile)\(/.exec(name)?.[1];
  return head !== undefined && name.startsWith(`${head}(${sql}, `) ? head : null;
}

/**
 * `window(time, '10 minutes'[, slide[, start]])` or `session_window(time, gap)` as a grouping
 * expression: its key, over the time column, or over a column the stage computes (`computed`)
 * when the time is an expression. A session gap that is not a literal (Spark's dynamic gap,
 * `session_window(t, CASE WHEN ... THEN '5 seconds' ... END)`) is computed into a column too,
 * and each row's session is [t, t + its gap). Null: another expression.
 */
function windowKey(
  k: Column,
  cols: readonly ColumnInfo[],
  temp: (base: string) => string,
): { key: WindowKey | SessionKey; computed: Array<{ item: string; name: string }> } | null {
  const ast = parseExpression(k.sql);
  if (ast.k !== 'call') return null;
  const fn = ast.name.toLowerCase();
  if (fn !== 'window' && fn !== 'session_window') return null;
  const want = fn === 'window' ? [2, 4] : [2, 2];
  if (ast.args.length < want[0] || ast.args.length > want[1]) {
    throw new InvalidQueryError(
      `groupBy ${k.sql}: [WRONG_NUM_ARGS] ${fn} takes ${fn === 'window' ? 'a time column, a duration and optionally a slide and a start time' : 'a time column and a gap'}, e.g. ${fn === 'window' ? "window(event_time, '10 minutes')" : "session_window(event_time, '5 minutes')"}`,
    );
  }
  const computed: Array<{ item: string; name: string }> = [];
  let column: string;
  const time = ast.args[0];
  const ref = time.k === 'name' && time.parts.length === 1 ? cols.find((c) => c.name.toLowerCase() === time.parts[0].toLowerCase()) : undefined;
  if (ref) column = ref.name;
  else {
    column = temp('time');
    computed.push({ item: `${timeText(k.sql, ast)} AS ${column}`, name: column });
  }
  if (fn === 'session_window' && !isStringLiteral(ast.args[1])) {
    const gapSql = k.sql.slice(k.sql.lastIndexOf(',', ast.args[1].pos) + 1, k.sql.lastIndexOf(')')).trim();
    checkGapType(gapSql, cols, k.sql);
    const gapColumn = temp('gap');
    computed.push({ item: `${gapSql} AS ${gapColumn}`, name: gapColumn });
    const key: SessionKey = { kind: 'session', column, gapUs: 0, text: gapSql, gapColumn };
    return { key, computed };
  }
  const texts = ast.args.slice(1).map((a, i) => durationText(a, k.sql, i + 2));
  const key = fn === 'window' ? window(column, texts[0], texts[1], texts[2]) : sessionWindow(column, texts[0]);
  return { key, computed };
}

/** Whether an argument is a string literal ('5 minutes'): a fixed session gap. */
function isStringLiteral(a: Ast): boolean {
  return a.k === 'lit' && typeof a.value === 'string';
}

/**
 * A session gap that is not a string literal must be a STRING, which Spark's session window
 * rewrite casts to a CalendarInterval (a null literal is a null gap). Nothing else casts to one,
 * an ANSI INTERVAL (INTERVAL 5 MINUTES, a DAY TO SECOND value) included, so Spark refuses it
 * (TimeWindowResolution, sessionWindowGapDurationDataTypeError), literal or not.
 */
function checkGapType(gapSql: string, cols: readonly ColumnInfo[], sql: string): void {
  const t = analyzeExpression(gapSql, cols).type;
  if (t.type === 'STRING' || t.type === 'NULL') return;
  const shown = t.type === 'INTERVAL' ? (t.yearMonth ? 'INTERVAL YEAR TO MONTH' : 'INTERVAL DAY TO SECOND') : t.type;
  throw new InvalidQueryError(
    `groupBy ${sql}: [_LEGACY_ERROR_TEMP_1040] Gap duration expression used in session window must be CalendarIntervalType, but got ${shown}: give the gap as a STRING, '5 minutes' or an expression of one such as CASE WHEN ... THEN '5 minutes' ... END (${gapSql})`,
  );
}

/** The time argument's text: after the call's parenthesis, up to the comma before the duration. */
function timeText(text: string, call: Extract<Ast, { k: 'call' }>): string {
  return text.slice(text.indexOf('(', call.pos) + 1, text.lastIndexOf(',', call.args[1].pos)).trim();
}

/** A duration argument: a string literal ('10 minutes') or a day-time interval literal (INTERVAL 10 MINUTES). */
function durationText(a: Ast, sql: string, n: number): string {
  if (a.k === 'lit' && typeof a.value === 'string') return a.value;
  if (a.k === 'lit' && a.type.type === 'INTERVAL' && !a.type.yearMonth && typeof a.value === 'number') return `${a.value} microseconds`;
  throw new InvalidQueryError(
    `groupBy ${sql}: [DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] argument ${n} must be a duration literal such as '10 minutes', not an expression`,
  );
}
