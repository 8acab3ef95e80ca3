/**
 * A SELECT with GROUP BY (or with aggregates and no GROUP BY) as `groupBy(...).agg(...)`: each
 * select item is a grouping expression (the same text, its alias, or its ordinal) or an aggregate
 * call; the select list's order and aliases make a final select when they differ from the
 * aggregation's keys-then-aggregates (docs/sql.md, "Aggregations").
 *
 * A key or an aggregate input that is a column is given by name and a window over a column by
 * `window(col, ...)`, as a TypeScript query writes them; anything else as `expr(text)`.
 */
import { tokenize } from '../expr/lexer';
import { prettySql } from '../expr';
import { suggest } from '../expr/analyze';
import type { ColumnInfo } from '../plan/columns';
import type { Ast } from '../expr/parser';
import { Column, expr } from '../query/column';
import type { StreamFrame } from '../query/frame';
import {
  AGGREGATES_BY_NAME,
  AggBuilder,
  approxCountDistinct,
  aggregateName,
  count,
  listagg,
  mode,
  modeWithinGroup,
  percentile,
  percentileApprox,
  percentilesAt,
  percentileWithinGroup,
  renamed,
  sessionWindow,
  type SortKey,
  TWO_COLUMN_AGGREGATES_BY_NAME,
  window,
} from '../query/functions';
import type { AnyColumns, GroupArg } from '../query/types';
import type { GroupKey } from '../plan/types';
import { type Span, SqlError, unsupported, within } from './errors';
import type { SelectItem, SqlExpr, SqlQuery } from './statement';
import {
  type AggregateCall,
  aggregateCalls,
  astChildren,
  columnRefs,
  groupingExprs,
  hiddenName,
  inSpans,
  quoted,
  type Replacement,
  rewritten,
  tokenKey,
  words,
} from './over-aggregates';

const AGGREGATES: Readonly<Record<string, (c: string | Column) => AggBuilder>> = { count: (c) => count(c), ...AGGREGATES_BY_NAME };

/** The aggregates of two arguments (twoColumnAggOf, percentileOf). */
const BY_AGGREGATES: ReadonlySet<string> = new Set([
  ...Object.keys(TWO_COLUMN_AGGREGATES_BY_NAME),
  'percentile',
  'percentile_approx',
  'approx_percentile',
  'percentile_cont',
  'percentile_disc',
]);

/** Every aggregate the SQL front end takes, by name (lower case). */
export const SQL_AGGREGATE_NAMES: ReadonlySet<string> = new Set([...Object.keys(AGGREGATES), ...BY_AGGREGATES]);

function isAggregate(a: Ast): a is Extract<Ast, { k: 'call' }> {
  return a.k === 'call' && SQL_AGGREGATE_NAMES.has(a.name.toLowerCase());
}

/** Whether an aggregate call is anywhere in `a`. */
export function hasAggregate(a: Ast): boolean {
  if (isAggregate(a)) return true;
  return astChildren(a).some(hasAggregate);
}

/** The text's tokens, words in upper case: two spellings of one expression compare equal. */
function canonical(text: string): string {
  return words(text).map(tokenKey).join(' ');
}

/** A grouping key as the frame API takes it. */
function keyOf(k: SqlExpr, alias: string | undefined): string | GroupKey | Column {
  const a = k.ast;
  if (a.k === 'name') return k.text;
  if (a.k === 'call' && ['window', 'session_window'].includes(a.name.toLowerCase()) && a.args[0]?.k === 'name' && a.args[0].parts.length === 1) {
    const texts = a.args.slice(1).map((x) => (x.k === 'lit' && typeof x.value === 'string' ? x.value : null));
    if (texts.length >= 1 && texts.every((t) => t !== null)) {
      const column = a.args[0].parts[0];
      if (a.name.toLowerCase() === 'session_window' && texts.length === 1) return sessionWindow(column, texts[0]!);
      if (a.name.toLowerCase() === 'window' && texts.length <= 3) return window(column, texts[0]!, texts[1] ?? undefined, texts[2] ?? undefined);
    }
  }
  return alias === undefined ? expr(k.text) : expr(k.text).as(alias);
}

/**
 * The aggregate a select item calls; with `FILTER (WHERE cond)`, over the rows where cond is true:
 * its input is `CASE WHEN cond THEN input END`, which every aggregate here skips when null (count(*)
 * counts `CASE WHEN cond THEN 1 END`, max_by and min_by filter their ordering column), named as
 * Spark names it, `sum(x) FILTER (WHERE (v > 1))`. first, last and any_value keep a null value
 * of a row they take: without their ignoreNulls flag, their input is the value in a struct,
 * `CASE WHEN cond THEN named_struct('v', x) END`, taken with ignoreNulls (a row the condition
 * drops is null, one it takes a struct even when its value is null), and the aggregate is WRAPPED:
 * the select after the aggregation takes its `v` back out.
 */
function aggOf(sql: string, item: SelectItem, spans: Span[], columns: readonly ColumnInfo[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const filter = call.filter;
  if (filter === undefined) return aggOfCall(sql, item, spans, columns);
  // the call without its FILTER clause
  const b = aggOfCall(sql, { ...item, text: item.text.slice(0, filter.at - item.pos).trimEnd() }, spans, columns);
  const cond = sql.slice(filter.start, filter.end).trim();
  if (hasAggregate(filter.cond)) refuseNested(sql, filter.cond);
  let prettyCond: string;
  try {
    prettyCond = prettySql(cond, columns);
  } catch {
    prettyCond = cond; // (the aggregation's input stage reports the condition's error)
  }
  const text = (c: string | Column | undefined) => (c === undefined ? '1' : c instanceof Column ? `(${c.sql})` : quoted(c));
  const when = (c: string | Column | undefined) => expr(`CASE WHEN (${cond}) THEN ${text(c)} END`);
  const name = `${b.name} FILTER (WHERE ${prettyCond})`;
  if ((b.fn === 'first' || b.fn === 'last' || b.fn === 'any_value') && b.ignoreNulls !== true) {
    const wrapped = b.withInputs(expr(`CASE WHEN (${cond}) THEN named_struct('v', ${text(b.column)}) END`), name, b.by, true);
    WRAPPED.add(wrapped);
    return wrapped;
  }
  if (b.fn === 'max_by' || b.fn === 'min_by') return b.withInputs(b.column, name, when(b.by));
  return b.withInputs(when(b.column), name, b.by);
}

/** The aggregates of aggOf whose value is the field `v` of what they aggregate (first, last, any_value with FILTER). */
const WRAPPED = new WeakSet<AggBuilder>();

/** The aggregate a select item calls (its FILTER aside). */
function aggOfCall(sql: string, item: SelectItem, spans: Span[], columns: readonly ColumnInfo[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const fn = call.name.toLowerCase();
  if (fn === 'listagg' || fn === 'string_agg') return listaggOf(sql, item, spans, columns);
  if (fn === 'mode') return modeOf(sql, item, spans, columns);
  if (fn === 'percentile_cont' || fn === 'percentile_disc') return inverseDistributionOf(sql, item, spans, columns, fn);
  if (fn === 'approx_count_distinct' && call.args.length === 2) {
    // approx_count_distinct(x, rsd): the rsd a constant; Spark names it by its value alone, approx_count_distinct(x)
    const rsd = literalNumber(call.args[1]);
    if (Number.isNaN(rsd))
      throw new SqlError(
        'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT',
        `approx_count_distinct's relative standard deviation must be a constant number, e.g. approx_count_distinct(user, 0.05)`,
        sql,
        call.args[1].pos,
      );
    refuseNested(sql, call.args[0]);
    const [first] = callArgTexts(item.text);
    const input = argInput(call.args[0], first, item, spans);
    const b = approxCountDistinct(input, rsd);
    let pretty = first.text;
    try {
      pretty = prettySql(first.text, columns);
    } catch {
      // (the aggregation reports the expression's error, at its place)
    }
    return b.as(`approx_count_distinct(${typeof input === 'string' ? input : pretty})`);
  }
  if (call.withinGroup !== undefined) {
    throw new SqlError(
      'INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX',
      `${call.name} does not take WITHIN GROUP here: it goes with listagg, string_agg, mode, percentile_cont and percentile_disc`,
      sql,
      call.withinGroup.at,
    );
  }
  if (call.distinct) {
    throw unsupported(sql, item.pos, `${call.name}(DISTINCT ...) is not supported on a stream: use approx_count_distinct(...) for a distinct count`);
  }
  const arg = call.args[0];
  if (call.star || (fn === 'count' && arg?.k === 'lit' && arg.value === 1 && call.args.length === 1)) {
    if (fn !== 'count') throw new SqlError('INVALID_USAGE_OF_STAR_OR_REGEX', `Invalid usage of '*' in ${call.name}`, sql, item.pos);
    return count();
  }
  if (fn in TWO_COLUMN_AGGREGATES_BY_NAME) return twoColumnAggOf(sql, item, spans, fn);
  if (fn === 'percentile') return percentileOf(sql, item, spans);
  if (fn === 'percentile_approx' || fn === 'approx_percentile') return percentileApproxOf(sql, item, spans, fn);
  // first(x, true), last(x, false), any_value(x, true): Spark's ignoreNulls, a BOOLEAN literal
  const flag = call.args[1];
  const flagged = IGNORE_NULLS_AGGREGATES.has(fn) && call.args.length === 2 && flag.k === 'lit' && typeof flag.value === 'boolean' ? flag.value : null;
  if (call.args.length !== 1 && flagged === null) {
    const what = IGNORE_NULLS_AGGREGATES.has(fn) ? 'one argument and optionally its ignoreNulls flag (true or false)' : 'one argument here';
    throw new SqlError('WRONG_NUM_ARGS', `${call.name} takes ${what}, not ${call.args.length} arguments`, sql, item.pos);
  }
  // first(x) IGNORE NULLS is first(x, true); RESPECT NULLS leaves the flag as it is (Spark sets ignoreNulls only when the clause asks for it)
  if (call.nulls?.ignore === true && !IGNORE_NULLS_AGGREGATES.has(fn)) {
    throw new SqlError(
      'INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX',
      `The function ${call.name} does not support IGNORE NULLS: it goes with first, first_value, last, last_value and any_value (${call.name} skips nulls by itself)`,
      sql,
      call.nulls.at,
    );
  }
  const ignoreNulls = call.nulls?.ignore === true ? true : flagged;
  refuseNested(sql, arg);
  // the argument as written: between the call's parentheses (before the flag's comma)
  const open = item.text.indexOf('(') + 1;
  const inner = item.text.slice(open, item.text.lastIndexOf(')'));
  const { text: argText, start } =
    flagged === null ? { text: inner.trim(), start: open + (inner.length - inner.trimStart().length) } : callArgTexts(item.text)[0];
  const input = arg.k === 'name' && arg.parts.length === 1 ? arg.parts[0] : expr(argText);
  if (typeof input !== 'string') spans.push({ text: argText, pos: item.pos + start });
  const plain = AGGREGATES[fn](input);
  const b = ignoreNulls === true ? new AggBuilder(plain.fn, plain.column, plain.name, undefined, undefined, undefined, true) : plain;
  // without AS, Spark's name: the argument's pretty SQL, under the name the call used when Spark keeps it (mean, first_value, last_value)
  let pretty: string;
  try {
    pretty = prettySql(argText, columns);
  } catch {
    return b; // (the aggregation reports the expression's error, at its place)
  }
  return b.as(aggregateName(b.fn, pretty, SPARK_ALIASES.has(fn) ? fn : undefined, ignoreNulls === true));
}

/** The aggregates that take Spark's ignoreNulls flag as a second argument. */
const IGNORE_NULLS_AGGREGATES: ReadonlySet<string> = new Set(['first', 'first_value', 'last', 'last_value', 'any_value']);

/**
 * max_by(x, ord), min_by(x, ord) and the pair aggregates (corr(y, x), regr_slope(y, x), ...): two
 * arguments, each a column or an expression; named `fn(a, b)` as Spark names it.
 */
function twoColumnAggOf(sql: string, item: SelectItem, spans: Span[], fn: string): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  if (call.args.length !== 2) {
    const what = fn === 'max_by' || fn === 'min_by' ? 'the value and the column that orders the rows' : 'y and x';
    throw new SqlError('WRONG_NUM_ARGS', `${call.name} takes two arguments (${what}), not ${call.args.length}`, sql, item.pos);
  }
  const args = callArgTexts(item.text);
  const inputs = call.args.map((a, i) => {
    refuseNested(sql, a);
    return argInput(a, args[i], item, spans);
  });
  return TWO_COLUMN_AGGREGATES_BY_NAME[fn](inputs[0], inputs[1]);
}

/**
 * listagg(x[, delimiter]) [WITHIN GROUP (ORDER BY k [ASC | DESC] [NULLS FIRST | LAST], ...)] and
 * string_agg: the delimiter a constant STRING or NULL, the value and the keys columns or
 * expressions; named as Spark names it, `listagg(x, ', ') WITHIN GROUP (ORDER BY k ASC NULLS FIRST)`.
 */
function listaggOf(sql: string, item: SelectItem, spans: Span[], columns: readonly ColumnInfo[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  if (call.distinct) {
    throw unsupported(
      sql,
      item.pos,
      `${call.name}(DISTINCT ...) is not supported on a stream: drop the duplicates first (dropDuplicates), or collect them with collect_set`,
    );
  }
  if (call.star || call.args.length < 1 || call.args.length > 2) {
    throw new SqlError(
      'WRONG_NUM_ARGS',
      `${call.name} takes a value and optionally a constant delimiter, e.g. ${call.name}(name, ', '), not ${call.args.length} arguments`,
      sql,
      item.pos,
    );
  }
  const [arg, delim] = call.args;
  refuseNested(sql, arg);
  let delimiter: string | null = null;
  if (delim !== undefined) {
    if (delim.k !== 'lit' || (typeof delim.value !== 'string' && delim.value !== null)) {
      throw new SqlError(
        'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT',
        `${call.name}'s delimiter must be a constant STRING or NULL, e.g. ${call.name}(name, ', ')`,
        sql,
        delim.pos,
      );
    }
    delimiter = delim.value as string | null;
  }
  const [first] = callArgTexts(item.text);
  const input = argInput(arg, first, item, spans);
  const pretty = (text: string) => {
    try {
      return prettySql(text, columns);
    } catch {
      return text; // (the aggregation reports the expression's error, at its place)
    }
  };
  const keys: SortKey[] = [];
  const prettyKeys: SortKey[] = [];
  for (const k of call.withinGroup?.keys ?? []) {
    refuseNested(sql, k.expr);
    const text = sql.slice(k.start, k.end).trim();
    let key: string | Column;
    if (k.expr.k === 'name' && k.expr.parts.length === 1) key = k.expr.parts[0];
    else {
      spans.push({ text, pos: k.start });
      key = expr(text);
    }
    keys.push({ key, desc: k.desc, nullsFirst: k.nullsFirst });
    prettyKeys.push({ key: typeof key === 'string' ? key : pretty(text), desc: k.desc, nullsFirst: k.nullsFirst });
  }
  const b = listagg(input, delimiter, keys);
  return b.as(listagg(typeof input === 'string' ? input : pretty(first.text), delimiter, prettyKeys).name);
}

/**
 * mode(x), mode(x, deterministic) and mode() WITHIN GROUP (ORDER BY x [ASC | DESC]), as Spark's
 * ModeBuilder reads them: the most frequent value; of equally frequent ones the lowest (mode(x)
 * here too: Spark's returns any of them), the highest with DESC. Named as Spark names them:
 * `mode(x)`, and for mode(x, true) and the ascending WITHIN GROUP `mode() WITHIN GROUP (ORDER BY x
 * DESC)` (Spark prints its reverse flag), for the descending one `mode() WITHIN GROUP (ORDER BY x)`.
 */
function modeOf(sql: string, item: SelectItem, spans: Span[], columns: readonly ColumnInfo[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const within = call.withinGroup;
  if (call.distinct) throw unsupported(sql, item.pos, `${call.name}(DISTINCT ...) is not supported: mode counts every value already`);
  if (call.star) throw new SqlError('INVALID_USAGE_OF_STAR_OR_REGEX', `Invalid usage of '*' in ${call.name}`, sql, item.pos);
  const pretty = (text: string) => {
    try {
      return prettySql(text, columns);
    } catch {
      return text; // (the aggregation reports the expression's error, at its place)
    }
  };
  if (within !== undefined) {
    if (call.args.length !== 0) {
      throw new SqlError('WRONG_NUM_ARGS', `${call.name} takes no argument with WITHIN GROUP: write mode() WITHIN GROUP (ORDER BY x)`, sql, item.pos);
    }
    if (within.keys.length !== 1) {
      throw new SqlError(
        'INVALID_WITHIN_GROUP_EXPRESSION.WRONG_NUM_ORDERINGS',
        `The function mode requires 1 orderings in WITHIN GROUP but got ${within.keys.length}`,
        sql,
        within.at,
      );
    }
    const k = within.keys[0];
    refuseNested(sql, k.expr);
    const text = sql.slice(k.start, k.end).trim();
    const plain = k.expr.k === 'name' && k.expr.parts.length === 1;
    if (!plain) spans.push({ text, pos: k.start });
    const b = modeWithinGroup(plain ? (k.expr as { parts: readonly string[] }).parts[0] : expr(text), k.desc);
    return b.as(`mode() WITHIN GROUP (ORDER BY ${plain ? text : pretty(text)}${k.desc ? '' : ' DESC'})`);
  }
  if (call.args.length === 0) {
    throw new SqlError(
      'INVALID_WITHIN_GROUP_EXPRESSION.WITHIN_GROUP_MISSING',
      `WITHIN GROUP is required for mode(): write mode() WITHIN GROUP (ORDER BY x), or mode(x)`,
      sql,
      item.pos,
    );
  }
  if (call.args.length > 2)
    throw new SqlError('WRONG_NUM_ARGS', `${call.name} takes a value and optionally its deterministic flag, not ${call.args.length} arguments`, sql, item.pos);
  const [arg, flag] = call.args;
  if (flag !== undefined && (flag.k !== 'lit' || typeof flag.value !== 'boolean')) {
    throw new SqlError(
      'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT',
      `mode's second argument, deterministic, must be a constant BOOLEAN (true or false), e.g. mode(status, true)`,
      sql,
      flag.pos,
    );
  }
  refuseNested(sql, arg);
  const [first] = callArgTexts(item.text);
  const input = argInput(arg, first, item, spans);
  const text = typeof input === 'string' ? input : pretty(first.text);
  const deterministic = flag !== undefined && flag.k === 'lit' && flag.value === true;
  return mode(input, deterministic).as(deterministic ? `mode() WITHIN GROUP (ORDER BY ${text} DESC)` : `mode(${text})`);
}

/**
 * percentile_cont(p) and percentile_disc(p) WITHIN GROUP (ORDER BY x [ASC | DESC]): p a constant
 * percentage (or an array of them), one key; named as Spark names them, with the percentage as
 * written: `percentile_cont(0.25) WITHIN GROUP (ORDER BY x DESC)`.
 */
function inverseDistributionOf(
  sql: string,
  item: SelectItem,
  spans: Span[],
  columns: readonly ColumnInfo[],
  fn: 'percentile_cont' | 'percentile_disc',
): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const within = call.withinGroup;
  if (call.distinct) throw unsupported(sql, item.pos, `${call.name}(DISTINCT ...) is not supported`);
  const value = percentages(call.args[0]);
  if (call.star || call.args.length !== 1 || value === null) {
    throw new SqlError(
      'WRONG_NUM_ARGS',
      `${call.name} takes one constant percentage (or an array of them), e.g. ${fn}(0.5) WITHIN GROUP (ORDER BY x)`,
      sql,
      item.pos,
    );
  }
  if (within === undefined) {
    throw new SqlError(
      'INVALID_WITHIN_GROUP_EXPRESSION.WITHIN_GROUP_MISSING',
      `WITHIN GROUP is required for ${fn}: write ${fn}(0.5) WITHIN GROUP (ORDER BY x)`,
      sql,
      item.pos,
    );
  }
  if (within.keys.length !== 1) {
    throw new SqlError(
      'INVALID_WITHIN_GROUP_EXPRESSION.WRONG_NUM_ORDERINGS',
      `The function ${fn} requires 1 orderings in WITHIN GROUP but got ${within.keys.length}`,
      sql,
      within.at,
    );
  }
  const k = within.keys[0];
  refuseNested(sql, k.expr);
  const text = sql.slice(k.start, k.end).trim();
  const plain = k.expr.k === 'name' && k.expr.parts.length === 1;
  if (!plain) spans.push({ text, pos: k.start });
  const b = percentileWithinGroup(fn, plain ? (k.expr as { parts: readonly string[] }).parts[0] : expr(text), value, k.desc);
  let pretty = text;
  if (!plain) {
    try {
      pretty = prettySql(text, columns);
    } catch {
      // (the aggregation reports the expression's error, at its place)
    }
  }
  const [{ text: pText }] = callArgTexts(item.text);
  return b.as(`${fn}(${percentageText(pText)}) WITHIN GROUP (ORDER BY ${pretty}${k.desc ? ' DESC' : ''})`);
}

/** An aggregate inside an aggregate's argument: Spark's NESTED_AGGREGATE_FUNCTION. */
function refuseNested(sql: string, arg: Ast): void {
  if (!hasAggregate(arg)) return;
  throw new SqlError(
    'NESTED_AGGREGATE_FUNCTION',
    'It is not allowed to use an aggregate function in the argument of another aggregate function: compute the inner aggregate in a first query',
    sql,
    arg.pos,
  );
}

/** An aggregate's argument as the frame API takes it: a column by name, else the expression of its text (its place noted for errors). */
function argInput(a: Ast, arg: { text: string; start: number }, item: SelectItem, spans: Span[]): string | Column {
  if (a.k === 'name' && a.parts.length === 1) return a.parts[0];
  spans.push({ text: arg.text, pos: item.pos + arg.start });
  return expr(arg.text);
}

/** The texts of a call's arguments as written, with where each starts in `text`: split at the commas between the call's own parentheses. */
function callArgTexts(text: string): Array<{ text: string; start: number }> {
  const tokens = tokenize(text);
  const open = tokens.findIndex((t) => t.kind === 'op' && t.text === '(');
  const out: Array<{ text: string; start: number }> = [];
  let depth = 0;
  let from = tokens[open].pos + 1;
  for (let i = open + 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'op') continue;
    if (t.text === '(' || t.text === '[') depth++;
    else if ((t.text === ')' || t.text === ']') && depth > 0) depth--;
    else if ((t.text === ',' && depth === 0) || t.text === ')') {
      const raw = text.slice(from, t.pos);
      out.push({ text: raw.trim(), start: from + (raw.length - raw.trimStart().length) });
      from = t.pos + 1;
      if (t.text === ')') break;
    }
  }
  return out;
}

/** A numeric literal's value, else NaN. */
function literalNumber(a: Ast | undefined): number {
  return a?.k === 'lit' && typeof a.value !== 'boolean' && a.value !== null ? Number(a.value) : Number.NaN;
}

/** A percentage argument: a numeric literal, or `array(...)` of them (then a list); null for anything else. */
function percentages(a: Ast | undefined): number | number[] | null {
  if (a?.k === 'call' && a.name.toLowerCase() === 'array' && !a.star && a.args.length > 0) {
    const list = a.args.map(literalNumber);
    return list.some(Number.isNaN) ? null : list;
  }
  const value = literalNumber(a);
  return Number.isNaN(value) ? null : value;
}

/** The text Spark prints for a percentage argument: a literal as written, an array as `array(0.25, 0.75)` with its elements as written. */
function percentageText(text: string): string {
  return /^array\s*\(/i.test(text)
    ? `array(${callArgTexts(text)
        .map((t) => t.text)
        .join(', ')})`
    : text;
}

/**
 * percentile(x, p[, frequency]): p a numeric literal from 0 to 1, or an array of them; the
 * frequency a column or an expression (how many times each row's value counts), 1 when absent.
 * Named as Spark names it: percentile(x, 0.95, 1).
 */
function percentileOf(sql: string, item: SelectItem, spans: Span[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const [arg, p, freq] = call.args;
  const value = percentages(p);
  if (call.args.length < 2 || call.args.length > 3 || value === null) {
    throw new SqlError(
      'WRONG_NUM_ARGS',
      `${call.name} takes a column, a constant percentage (or an array of them) and optionally a frequency column here, e.g. percentile(latency, 0.95), percentile(latency, array(0.5, 0.95)) or percentile(latency, 0.5, hits)`,
      sql,
      item.pos,
    );
  }
  refuseNested(sql, arg);
  const [first, { text: pText }, third] = callArgTexts(item.text);
  const input = argInput(arg, first, item, spans);
  let frequency: string | Column | undefined;
  if (freq !== undefined) {
    refuseNested(sql, freq);
    // (the literal 1 is Spark's default: no frequency column)
    if (!(freq.k === 'lit' && freq.type.type === 'INT' && literalNumber(freq) === 1)) frequency = argInput(freq, third, item, spans);
  }
  const b = typeof value === 'number' ? percentile(input, value, frequency) : percentilesAt('percentile', input, value, undefined, frequency);
  // Spark prints the percentage as written and the default frequency 1: percentile(x, 0.95, 1)
  if (arg.k !== 'name' || arg.parts.length !== 1 || frequency instanceof Column) return b;
  return b.as(`percentile(${arg.parts[0]}, ${percentageText(pText)}, ${frequency ?? 1})`);
}

/**
 * percentile_approx(x, p[, accuracy]) / approx_percentile: p a numeric literal from 0 to 1, the
 * accuracy an integer literal (default 10000); named by the name it was called by, with every
 * argument, as Spark names it: percentile_approx(x, 0.95, 10000).
 */
function percentileApproxOf(sql: string, item: SelectItem, spans: Span[], fn: 'percentile_approx' | 'approx_percentile'): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const [arg, p, acc] = call.args;
  const value = percentages(p);
  const accuracy = acc === undefined ? undefined : literalNumber(acc);
  if (call.args.length < 2 || call.args.length > 3 || value === null || (accuracy !== undefined && Number.isNaN(accuracy))) {
    throw new SqlError(
      'WRONG_NUM_ARGS',
      `${call.name} takes a column, a constant percentage (or an array of them) and optionally a constant accuracy here, e.g. ${fn}(latency, 0.95), ${fn}(latency, array(0.5, 0.95)) or ${fn}(latency, 0.95, 100)`,
      sql,
      item.pos,
    );
  }
  refuseNested(sql, arg);
  const texts = callArgTexts(item.text);
  const input = argInput(arg, texts[0], item, spans);
  const b = typeof value === 'number' ? percentileApprox(input, value, accuracy, fn) : percentilesAt(fn, input, value, accuracy);
  // Spark prints the percentage and the accuracy as written, the default accuracy as 10000
  const rest = `${percentageText(texts[1].text)}, ${acc === undefined ? b.accuracy : texts[2].text}`;
  return arg.k === 'name' && arg.parts.length === 1 ? b.as(`${fn}(${arg.parts[0]}, ${rest})`) : b;
}

/** The aggregate names Spark keeps in a column's name when a query calls them (FunctionRegistry's setAlias): mean(x), not avg(x). */
const SPARK_ALIASES: ReadonlySet<string> = new Set([
  'mean',
  'first_value',
  'last_value',
  'stddev_samp',
  'std',
  'var_samp',
  'every',
  'some',
  'any',
  'array_agg',
]);

/** `frame` grouped and aggregated as the query's GROUP BY and select list say. */
export function aggregated(sql: string, q: SqlQuery, frame: StreamFrame<AnyColumns>): StreamFrame<AnyColumns> {
  const columns = frame.columnsNow_();
  // GROUP BY items: an ordinal or a select alias stands for its select item
  const groups = (q.groupBy ?? []).map((g): { e: SqlExpr; alias?: string } => {
    if (g.ast.k === 'lit' && typeof g.ast.value === 'number') {
      const item = q.items[g.ast.value - 1];
      if (!item || !Number.isInteger(g.ast.value)) {
        throw new SqlError(
          'GROUP_BY_POS_OUT_OF_RANGE',
          `GROUP BY position ${g.text} is not in select list (valid range is [1, ${q.items.length}])`,
          sql,
          g.pos,
        );
      }
      if (hasAggregate(item.ast))
        throw new SqlError('GROUP_BY_POS_AGGREGATE', `GROUP BY ${g.text} refers to an expression ${item.text} that contains an aggregate function`, sql, g.pos);
      return { e: item, alias: item.alias };
    }
    if (g.ast.k === 'name' && g.ast.parts.length === 1 && !columns.some((c) => c.name === g.text)) {
      const item = q.items.find((i) => i.alias === g.text);
      if (item) return { e: item, alias: item.alias };
    }
    if (hasAggregate(g.ast)) throw new SqlError('GROUP_BY_AGGREGATE', `Aggregate functions are not allowed in GROUP BY, but found ${g.text}`, sql, g.pos);
    return { e: g };
  });
  const groupText = groups.map((g) => canonical(g.e.text));
  // each select item: a key (its index), an aggregate, or an expression over aggregates and plain grouping columns
  const spans: Span[] = groups.map((g) => ({ text: g.e.text, pos: g.e.pos }));
  const aggs: AggBuilder[] = [];
  // the hidden aggregates of expressions and HAVING, one per distinct call: its index in aggs, and its Spark name
  const hidden = new Map<string, Hidden>();
  const hiddenOf = (call: AggregateCall): Hidden => {
    const key = canonical(call.text);
    let h = hidden.get(key);
    if (h === undefined) {
      const b = aggOf(sql, { ast: call.ast, text: call.text, pos: call.start, full: call.text }, spans, columns);
      aggs.push(b.as(hiddenName(hidden.size)));
      hidden.set(key, (h = { agg: aggs.length - 1, name: b.name, wrapped: WRAPPED.has(b) }));
    }
    return h;
  };
  // the plain columns the query groups by (an expression over them may be selected)
  // (a window key is the aggregation's column `window` or `session_window`: window.start reads it)
  const plainKeys = new Set(
    groups.flatMap((g) => {
      const a = g.e.ast;
      if (a.k === 'name' && a.parts.length === 1) return [a.parts[0].toLowerCase()];
      return a.k === 'call' && (a.name === 'window' || a.name === 'session_window') ? [a.name] : [];
    }),
  );
  const inputs = new Set(columns.map((c) => c.name.toLowerCase()));
  const aliases = new Set(q.items.flatMap((i) => (i.alias === undefined ? [] : [i.alias.toLowerCase()])));
  // the grouping keys that are expressions (lower(k), date_trunc('hour', t), a + b): an expression may read them whole
  const exprGroups = groups.flatMap((g, index) => {
    const a = g.e.ast;
    return a.k === 'name' || (a.k === 'call' && (a.name === 'window' || a.name === 'session_window')) ? [] : [{ index, text: g.e.text }];
  });
  /**
   * What `e` reads after the aggregation: its aggregate calls and its grouping calls, or null when
   * it reads a column outside them that is not a plain grouping column (nor, in HAVING, a select
   * alias); a name that is none of the input's is Spark's UNRESOLVED_COLUMN.
   */
  const overKeys = (e: SqlExpr, aliased = false) => {
    const calls = aggregateCalls(sql, e, isAggregate);
    const keys = groupingExprs(e, exprGroups, calls);
    // (the columns read outside the grouping expressions)
    const refs = columnRefs(sql, e, isAggregate).filter((r) => !inSpans(keys, r.start));
    const ok = refs.every((r) => {
      const name = r.name.toLowerCase();
      if (plainKeys.has(name) || (aliased && aliases.has(name))) return true;
      if (inputs.has(name)) return false;
      throw unresolved(sql, r, columns);
    });
    return ok ? { calls, keys, refs } : null;
  };
  type Reads = { calls: Array<{ call: AggregateCall; hidden: Hidden }>; keys: Array<{ start: number; end: number; group: number }> };
  type Pick = { key: number } | { agg: number } | ({ expr: SqlExpr; name?: string } & Reads);
  const picks = q.items.map((item): Pick => {
    if (item.ast.k === 'star') {
      throw new SqlError(
        'MISSING_AGGREGATION',
        `The non-aggregating expression ${item.text} is based on columns which are not participating in the GROUP BY clause: list the columns`,
        sql,
        item.pos,
      );
    }
    const key = groupText.indexOf(canonical(item.text));
    if (key >= 0) {
      if (item.alias !== undefined) groups[key].alias ??= item.alias;
      return { key };
    }
    if (isAggregate(item.ast)) {
      const b = aggOf(sql, item, spans, columns);
      if (WRAPPED.has(b)) {
        // its value is a field of the aggregate: the select after the aggregation takes it out
        const call = { ast: item.ast as AggregateCall['ast'], start: item.pos, end: item.pos + item.text.length, text: item.text };
        return { expr: item, calls: [{ call, hidden: hiddenOf(call) }], keys: [], name: b.name };
      }
      aggs.push(item.alias === undefined ? b : b.as(item.alias));
      return { agg: aggs.length - 1 };
    }
    const reads = overKeys(item);
    if (reads === null) throw missingAggregation(sql, item);
    return { expr: item, calls: reads.calls.map((call) => ({ call, hidden: hiddenOf(call) })), keys: reads.keys };
  });
  const having = q.having;
  const havingReads = having === undefined ? null : overKeys(having, true);
  if (having !== undefined && havingReads === null) throw missingAggregation(sql, having);
  const havingCalls = havingReads === null ? [] : havingReads.calls.map((call) => ({ call, hidden: hiddenOf(call) }));
  const keys = groups.map((g) => keyOf(g.e, g.alias));
  const out = within(sql, spans, () => frame.groupBy(...(keys as GroupArg<AnyColumns>[])).agg(...aggs));
  // the select list's order and names over the aggregation's keys-then-aggregates
  const outCols = out.columnsNow_().map((c) => c.name);
  const aggColumn = (agg: number) => outCols[groups.length + agg];
  if (having === undefined && picks.every((p) => !('expr' in p))) {
    const wanted = picks.map((p, i) => {
      const from = 'key' in p ? outCols[p.key] : aggColumn((p as { agg: number }).agg);
      return { from, as: q.items[i].alias ?? from };
    });
    if (wanted.length === outCols.length && wanted.every((w, i) => w.from === outCols[i] && w.as === w.from)) return out;
    if (wanted.every((w) => w.as === w.from)) return out.select(...wanted.map((w) => w.from));
    return out.select(...wanted.map((w) => renamed(w.from, w.as)));
  }
  // an expression reads its aggregates' hidden columns and its grouping calls' key columns
  const evaluated = (e: SqlExpr, reads: Reads, more: readonly Replacement[] = []) =>
    rewritten(e, [
      ...reads.calls.map(({ call, hidden: h }) => ({ start: call.start, end: call.end, text: hiddenText(h, aggColumn) })),
      ...reads.keys.map(({ start, end, group }) => ({ start, end, text: quoted(outCols[group]) })),
      ...more,
    ]);
  const outInfo = out.columnsNow_();
  const items = picks.map((p, i) => {
    const item = q.items[i];
    if (!('expr' in p)) {
      const from = 'key' in p ? outCols[p.key] : aggColumn(p.agg);
      return { text: quoted(from), as: item.alias ?? from, pos: item.pos };
    }
    const text = evaluated(p.expr, p);
    return { text, as: item.alias ?? p.name ?? sparkName(text, outInfo, hidden, aggColumn), pos: item.pos };
  });
  let filtered = out;
  if (having !== undefined) {
    // a select alias in HAVING stands for its item (Spark resolves HAVING against the select list too)
    const aliasOf = new Map(items.map((it, i) => [q.items[i].alias?.toLowerCase(), it.text] as const).filter(([a]) => a !== undefined));
    const aliasRefs = havingReads!.refs
      .filter((r) => aliasOf.has(r.name.toLowerCase()) && !inputs.has(r.name.toLowerCase()))
      .map((r) => ({ start: r.start, end: r.end, text: `(${aliasOf.get(r.name.toLowerCase())})` }));
    const condition = evaluated(having, { calls: havingCalls, keys: havingReads!.keys }, aliasRefs);
    filtered = sparkNames(hidden, aggColumn, () => within(sql, [{ text: condition, pos: having.pos }], () => out.filter(condition)));
  }
  return sparkNames(hidden, aggColumn, () =>
    within(
      sql,
      items.map((it) => ({ text: it.text, pos: it.pos })),
      () => filtered.selectExpr(...items.map((it) => `${it.text} AS ${quoted(it.as)}`)),
    ),
  );
}

/** A hidden aggregate: its index among the aggregation's, its call's Spark name, and whether its value is its field `v` (WRAPPED). */
interface Hidden {
  readonly agg: number;
  readonly name: string;
  readonly wrapped: boolean;
}

/** What an expression reads for a hidden aggregate: its column, or the column's `v`. */
function hiddenText(h: Hidden, aggColumn: (agg: number) => string): string {
  return h.wrapped ? `${quoted(aggColumn(h.agg))}.v` : quoted(aggColumn(h.agg));
}

/** `text` with each spelling of a hidden aggregate's column (and its `v`) written as the call's name. */
function named(text: string, h: Hidden, aggColumn: (agg: number) => string): string {
  const col = aggColumn(h.agg);
  return text
    .replaceAll(`${quoted(col)}.v`, h.name)
    .replaceAll(`${col}.v`, h.name)
    .replaceAll(quoted(col), h.name)
    .replaceAll(col, h.name);
}

/** Runs `build`; an error it throws names each hidden aggregate by its call's name, as the query wrote it. */
function sparkNames<T>(hidden: ReadonlyMap<string, Hidden>, aggColumn: (agg: number) => string, build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof Error) for (const h of hidden.values()) e.message = named(e.message, h, aggColumn);
    throw e;
  }
}

/** Spark's name of an expression over aggregates: its pretty SQL, each hidden aggregate written as the call's name (`(sum(a) / count(1))`). */
function sparkName(text: string, columns: readonly ColumnInfo[], hidden: ReadonlyMap<string, Hidden>, aggColumn: (agg: number) => string): string {
  let pretty: string;
  try {
    pretty = prettySql(text, columns);
  } catch {
    pretty = text; // (the select reports the expression's error, at its place)
  }
  for (const h of hidden.values()) pretty = named(pretty, h, aggColumn);
  return pretty;
}

/** Spark's UNRESOLVED_COLUMN for a name no input column has. */
function unresolved(sql: string, ref: { name: string; start: number }, columns: readonly ColumnInfo[]): SqlError {
  const near = suggest(
    ref.name,
    columns.map((c) => c.name),
  );
  return new SqlError(
    'UNRESOLVED_COLUMN.WITH_SUGGESTION',
    `A column, variable, or function parameter with name ${quoted(ref.name)} cannot be resolved. Did you mean one of the following? [${near.map(quoted).join(', ')}]: fix the name, or add the column to the schema`,
    sql,
    ref.start,
  );
}

/** Spark's MISSING_AGGREGATION for an expression that reads a column the query does not group by, outside an aggregate. */
function missingAggregation(sql: string, e: SqlExpr): SqlError {
  return new SqlError(
    'MISSING_AGGREGATION',
    `The non-aggregating expression "${e.text}" is based on columns which are not participating in the GROUP BY clause. Add the columns or the expression to the GROUP BY, aggregate the expression, or use "first(${e.text})" if you do not care which of the values within a group is returned`,
    sql,
    e.pos,
  );
}
