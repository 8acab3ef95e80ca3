/**
 * The aggregate calls of a SQL select list or HAVING (aggregate.ts puts them into an
 * aggregation): which calls are aggregates, and each call as the frame API's aggregate, its
 * arguments, FILTER, IGNORE NULLS and WITHIN GROUP read as Spark reads them, and named as Spark
 * names it (toPrettySQL).
 */
import { prettySql } from '../expr';
import type { ColumnInfo } from '../plan/columns';
import type { Ast, SortItem } from '../expr/parser';
import { tokenize } from '../expr/lexer';
import { Column, expr } from '../query/column';
import {
  AGGREGATES_BY_NAME,
  AggBuilder,
  approxCountDistinct,
  aggregateName,
  count,
  listagg,
  listaggName,
  mode,
  modeWithinGroup,
  percentile,
  percentileApprox,
  percentilesAt,
  percentileWithinGroup,
  type SortKey,
  TWO_COLUMN_AGGREGATES_BY_NAME,
} from '../query/functions';
import { type Span, SqlError, unsupported } from './errors';
import type { SelectItem } from './syntax';
import { astChildren, quoted } from './over-aggregates';

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

export function isAggregate(a: Ast): a is Extract<Ast, { k: 'call' }> {
  return a.k === 'call' && SQL_AGGREGATE_NAMES.has(a.name.toLowerCase());
}

/** Whether an aggregate call is anywhere in `a`. */
export function hasAggregate(a: Ast): boolean {
  if (isAggregate(a)) return true;
  return astChildren(a).some(hasAggregate);
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
export function aggOf(sql: string, item: SelectItem, spans: Span[], columns: readonly ColumnInfo[]): AggBuilder {
  const call = item.ast as Extract<Ast, { k: 'call' }>;
  const filter = call.filter;
  if (filter === undefined) return aggOfCall(sql, item, spans, columns);
  // the call without its FILTER clause
  const b = aggOfCall(sql, { ...item, text: item.text.slice(0, filter.at - item.pos).trimEnd() }, spans, columns);
  const cond = sql.slice(filter.start, filter.end).trim();
  if (hasAggregate(filter.cond)) refuseNested(sql, filter.cond);
  // (a condition that does not analyze: the aggregation's input stage reports its error)
  const prettyCond = prettyOr(cond, columns);
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
export const WRAPPED = new WeakSet<AggBuilder>();

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
    return approxCountDistinct(input, rsd).as(`approx_count_distinct(${typeof input === 'string' ? input : prettyOr(first.text, columns)})`);
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
  const keys: SortKey[] = [];
  const prettyKeys: SortKey[] = [];
  for (const k of call.withinGroup?.keys ?? []) {
    const { key, pretty } = sortKeyOf(sql, k, spans, columns);
    keys.push({ key, desc: k.desc, nullsFirst: k.nullsFirst });
    prettyKeys.push({ key: pretty, desc: k.desc, nullsFirst: k.nullsFirst });
  }
  const b = listagg(input, delimiter, keys);
  return b.as(listaggName(typeof input === 'string' ? input : prettyOr(first.text, columns), delimiter, prettyKeys));
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
  if (within !== undefined) {
    if (call.args.length !== 0) {
      throw new SqlError('WRONG_NUM_ARGS', `${call.name} takes no argument with WITHIN GROUP: write mode() WITHIN GROUP (ORDER BY x)`, sql, item.pos);
    }
    const { key, pretty, desc } = oneSortKey(sql, 'mode', within, spans, columns);
    return modeWithinGroup(key, desc).as(`mode() WITHIN GROUP (ORDER BY ${pretty}${desc ? '' : ' DESC'})`);
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
  const text = typeof input === 'string' ? input : prettyOr(first.text, columns);
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
  const { key, pretty, desc } = oneSortKey(sql, fn, within, spans, columns);
  const b = percentileWithinGroup(fn, key, value, desc);
  const [{ text: pText }] = callArgTexts(item.text);
  return b.as(`${fn}(${percentageText(pText)}) WITHIN GROUP (ORDER BY ${pretty}${desc ? ' DESC' : ''})`);
}

/** An expression's pretty SQL (Spark's toPrettySQL), or its text when it does not analyze (the aggregation reports that at its place). */
export function prettyOr(text: string, columns: readonly ColumnInfo[]): string {
  try {
    return prettySql(text, columns);
  } catch {
    return text;
  }
}

/** A WITHIN GROUP key as the frame API takes it (a column by name, else its expression, its place noted), and its text as Spark prints it. */
function sortKeyOf(sql: string, k: SortItem, spans: Span[], columns: readonly ColumnInfo[]): { key: string | Column; pretty: string } {
  refuseNested(sql, k.expr);
  const text = sql.slice(k.start, k.end).trim();
  if (k.expr.k === 'name' && k.expr.parts.length === 1) return { key: k.expr.parts[0], pretty: k.expr.parts[0] };
  spans.push({ text, pos: k.start });
  return { key: expr(text), pretty: prettyOr(text, columns) };
}

/** The one key of an inverse distribution's WITHIN GROUP (mode, percentile_cont, percentile_disc): Spark's WRONG_NUM_ORDERINGS for any other count. */
function oneSortKey(sql: string, fn: string, within: { keys: readonly SortItem[]; at: number }, spans: Span[], columns: readonly ColumnInfo[]) {
  if (within.keys.length !== 1) {
    throw new SqlError(
      'INVALID_WITHIN_GROUP_EXPRESSION.WRONG_NUM_ORDERINGS',
      `The function ${fn} requires 1 orderings in WITHIN GROUP but got ${within.keys.length}`,
      sql,
      within.at,
    );
  }
  return { ...sortKeyOf(sql, within.keys[0], spans, columns), desc: within.keys[0].desc };
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
