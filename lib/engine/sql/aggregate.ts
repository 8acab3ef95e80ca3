/**
 * A SELECT with GROUP BY (or with aggregates and no GROUP BY) as `groupBy(...).agg(...)`: each
 * select item is a grouping expression (the same text, its alias, or its ordinal) or an aggregate
 * call; the select list's order and aliases make a final select when they differ from the
 * aggregation's keys-then-aggregates (docs/sql.md, "Aggregations").
 *
 * A key or an aggregate input that is a column is given by name and a window over a column by
 * `window(col, ...)`, as a TypeScript query writes them; anything else as `expr(text)`.
 */
import { suggest } from '../expr/analyze';
import type { ColumnInfo } from '../plan/columns';
import { resolveName } from '../resolve-name';
import type { StreamFrame } from '../query/frame';
import { type AggBuilder, renamed } from '../query/functions';
import type { AnyColumns, GroupArg } from '../query/types';
import { aggOf, hasAggregate, isAggregate, prettyOr, WRAPPED } from './aggregate-calls';
import { type Span, SqlError, within } from './errors';
import { isOrderByAll, ordinalOf, selectedName, sortedBy } from './order-by';
import { tempNames } from '../query/temp-names';
import { GROUPING_ID_COLUMN, type Group, GroupingCalls, groupedBySets, groupingSetsOf, isGroupingCall, keyOf } from './grouping';
import type { SqlExpr, SqlQuery } from './syntax';
import {
  type AggregateCall,
  aggregateCalls,
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

/** The text's tokens, words in upper case: two spellings of one expression compare equal. */
function canonical(text: string): string {
  return words(text).map(tokenKey).join(' ');
}

/** `frame` grouped and aggregated as the query's GROUP BY and select list say. */
export function aggregated(sql: string, q: SqlQuery, frame: StreamFrame<AnyColumns>): StreamFrame<AnyColumns> {
  const columns = frame.columnsNow_();
  // GROUP BY items: an ordinal or a select alias stands for its select item
  const written = (q.groupBy ?? []).map((g): Group => {
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
  // ROLLUP, CUBE, GROUPING SETS: the distinct grouping expressions and the sets over them (grouping.ts)
  const analytics = q.grouping ? groupingSetsOf(sql, q.grouping, written, canonical) : null;
  const groups = analytics ? analytics.keys.map((i) => written[i]) : written;
  const groupText = groups.map((g) => canonical(g.e.text));
  const groupingCalls = new GroupingCalls(
    sql,
    analytics ? groups.map((g, i) => ({ same: groupText[i], text: prettyOr(g.e.text, columns) })) : null,
    canonical,
    columns,
  );
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
    // grouping(k) and grouping_id(): read the grouping id (checked here, each call's column made once)
    const groupings = aggregateCalls(sql, e, isGroupingCall).map((call) => ({ start: call.start, end: call.end, column: groupingCalls.of(call).column }));
    const keys = groupingExprs(e, exprGroups, [...calls, ...groupings]);
    // (the columns read outside the grouping expressions)
    const refs = columnRefs(sql, e, isAggregate).filter((r) => !inSpans(keys, r.start) && !inSpans(groupings, r.start));
    const ok = refs.every((r) => {
      const name = r.name.toLowerCase();
      if (plainKeys.has(name) || (aliased && aliases.has(name))) return true;
      if (inputs.has(name)) return false;
      throw unresolved(sql, r, columns);
    });
    return ok ? { calls, keys, refs, groupings } : null;
  };
  type Reads = {
    calls: Array<{ call: AggregateCall; hidden: Hidden }>;
    refs?: Array<{ name: string; start: number; end: number }>;
    keys: Array<{ start: number; end: number; group: number }>;
    groupings: Array<{ start: number; end: number; column: string }>;
  };
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
        return { expr: item, calls: [{ call, hidden: hiddenOf(call) }], keys: [], groupings: [], name: b.name };
      }
      aggs.push(item.alias === undefined ? b : b.as(item.alias));
      return { agg: aggs.length - 1 };
    }
    const reads = overKeys(item);
    if (reads === null) throw missingAggregation(sql, item);
    return { expr: item, calls: reads.calls.map((call) => ({ call, hidden: hiddenOf(call) })), keys: reads.keys, groupings: reads.groupings };
  });
  const having = q.having;
  const havingReads = having === undefined ? null : overKeys(having, true);
  if (having !== undefined && havingReads === null) throw missingAggregation(sql, having);
  const havingCalls = havingReads === null ? [] : havingReads.calls.map((call) => ({ call, hidden: hiddenOf(call) }));
  // ORDER BY (the statement's: this SELECT is all of it): a key over the select list's columns sorts
  // them as they are; a key that reads an aggregate, a grouping call or a column the select list
  // leaves out is computed beside them and dropped after the sort (Spark's ResolveAggregateFunctions
  // and ResolveMissingReferences on a Sort over an Aggregate)
  const selectNames = new Set(q.items.flatMap((item) => selectedName(item) ?? []));
  const orderReads = (q.orderBy?.keys ?? []).map(({ expr: e }): Reads | null => {
    if (ordinalOf(e) !== undefined) return null;
    // (ORDER BY ALL: every select column, unless a column is named all)
    if (isOrderByAll(q) && !selectNames.has('all') && !inputs.has('all')) return null;
    const overSelect =
      aggregateCalls(sql, e, isAggregate).length === 0 &&
      aggregateCalls(sql, e, isGroupingCall).length === 0 &&
      columnRefs(sql, e, isAggregate).every((r) => selectNames.has(r.name.toLowerCase()));
    if (overSelect) return null;
    const reads = overKeys(e, true);
    if (reads === null) throw missingAggregation(sql, e);
    return { ...reads, calls: reads.calls.map((call) => ({ call, hidden: hiddenOf(call) })) };
  });
  const computedOrder = orderReads.some((r) => r !== null);
  const aggregatedFrame = within(sql, spans, () => {
    if (analytics) return groupedBySets(sql, frame, groups, analytics.sets).aggregate_(aggs, GROUPING_ID_COLUMN);
    return frame.groupBy(...(groups.map((g) => keyOf(g.e, g.alias)) as GroupArg<AnyColumns>[])).agg(...aggs);
  });
  // the aggregation's keys, then its aggregates (then the grouping id, and each grouping call's value)
  const grouping = groupingCalls.all;
  const out = grouping.length ? aggregatedFrame.selectExpr('*', ...grouping.map((g) => `${g.text} AS ${quoted(g.column)}`)) : aggregatedFrame;
  // the select list's order and names over the aggregation's keys-then-aggregates
  const outCols = out.columnsNow_().map((c) => c.name);
  const aggColumn = (agg: number) => outCols[groups.length + agg];
  if (having === undefined && !computedOrder && picks.every((p) => !('expr' in p))) {
    const wanted = picks.map((p, i) => {
      const from = 'key' in p ? outCols[p.key] : aggColumn((p as { agg: number }).agg);
      return { from, as: q.items[i].alias ?? from };
    });
    if (wanted.length === outCols.length && wanted.every((w, i) => w.from === outCols[i] && w.as === w.from)) return sortedBy(sql, q, out, []);
    if (wanted.every((w) => w.as === w.from)) return sortedBy(sql, q, out.select(...wanted.map((w) => w.from)), []);
    return sortedBy(sql, q, out.select(...wanted.map((w) => renamed(w.from, w.as))), []);
  }
  // an expression reads its aggregates' hidden columns and its grouping calls' key columns
  const evaluated = (e: SqlExpr, reads: Reads, more: readonly Replacement[] = []) =>
    rewritten(e, [
      ...reads.calls.map(({ call, hidden: h }) => ({ start: call.start, end: call.end, text: hiddenText(h, aggColumn) })),
      ...reads.keys.map(({ start, end, group }) => ({ start, end, text: quoted(outCols[group]) })),
      ...reads.groupings.map(({ start, end, column }) => ({ start, end, text: quoted(column) })),
      ...more,
    ]);
  const outInfo = out.columnsNow_();
  // the hidden columns as Spark names what they hold: an aggregate call, a grouping call
  const hiddenNames: HiddenName[] = [
    ...[...hidden.values()].map((h) => ({ column: aggColumn(h.agg), name: h.name })),
    ...grouping.map((g) => ({ column: g.column, name: g.name })),
  ];
  const items = picks.map((p, i) => {
    const item = q.items[i];
    if (!('expr' in p)) {
      const from = 'key' in p ? outCols[p.key] : aggColumn(p.agg);
      return { text: quoted(from), as: item.alias ?? from, pos: item.pos };
    }
    const text = evaluated(p.expr, p);
    return { text, as: item.alias ?? p.name ?? namedItemName(item.ast, columns) ?? sparkName(text, outInfo, hiddenNames), pos: item.pos };
  });
  // a select alias in HAVING or ORDER BY stands for its item (Spark resolves them against the select list too)
  const aliasOf = new Map(items.map((it, i) => [q.items[i].alias?.toLowerCase(), it.text] as const).filter(([a]) => a !== undefined));
  const aliasRefs = (refs: Reads['refs'], overInput: boolean) =>
    (refs ?? [])
      .filter((r) => aliasOf.has(r.name.toLowerCase()) && !(overInput && inputs.has(r.name.toLowerCase())))
      .map((r) => ({ start: r.start, end: r.end, text: `(${aliasOf.get(r.name.toLowerCase())})` }));
  let filtered = out;
  if (having !== undefined) {
    // (in HAVING an input column of the alias's name is the column)
    const condition = evaluated(having, { ...havingReads!, calls: havingCalls }, aliasRefs(havingReads!.refs, true));
    filtered = sparkNames(hiddenNames, () => within(sql, [{ text: condition, pos: having.pos }], () => out.filter(condition)));
  }
  // the ORDER BY keys computed beside the select list, under temporary names
  const temp = tempNames([...outInfo, ...items.map((it) => ({ name: it.as }))]);
  const computed = orderReads.map((reads, i) => {
    if (reads === null) return null;
    // (in ORDER BY the select list's name comes first, as Spark resolves a Sort against its child's output)
    const text = evaluated(q.orderBy!.keys[i].expr, reads, aliasRefs(reads.refs, false));
    return { text, as: temp('order'), pos: q.orderBy!.keys[i].expr.pos };
  });
  const extra = computed.flatMap((c) => c ?? []);
  const selected = sparkNames(hiddenNames, () =>
    within(
      sql,
      [...items, ...extra].map((it) => ({ text: it.text, pos: it.pos })),
      () => filtered.selectExpr(...[...items, ...extra].map((it) => `${it.text} AS ${quoted(it.as)}`)),
    ),
  );
  const sorted = sparkNames(hiddenNames, () => sortedBy(sql, q, selected, computed));
  return extra.length ? sorted.select(...items.map((it) => it.as)) : sorted;
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

/** A hidden column, and the name Spark gives what it holds. */
interface HiddenName {
  readonly column: string;
  readonly name: string;
}

/** `text` with each spelling of a hidden column (and of its `v`, a wrapped aggregate's value) written as Spark's name. */
function named(text: string, h: HiddenName): string {
  const col = h.column;
  return text
    .replaceAll(`${quoted(col)}.v`, h.name)
    .replaceAll(`${col}.v`, h.name)
    .replaceAll(quoted(col), h.name)
    .replaceAll(col, h.name);
}

/** Runs `build`; an error it throws names each hidden column by what it holds, as the query wrote it. */
function sparkNames<T>(hidden: readonly HiddenName[], build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof Error) for (const h of hidden) e.message = named(e.message, h);
    throw e;
  }
}

/**
 * The name of a select item that is a named expression to Spark, not its pretty SQL: a field of a
 * grouping column (`window.start`, resolved to an alias of its last part) is `start`, and a cast
 * directly over a column (ResolveAliases' Cast of a NamedExpression) is the column's name as the
 * schema spells it (`CAST(k AS STRING)` is `k`); undefined for anything else.
 */
function namedItemName(ast: SqlExpr['ast'], columns: readonly ColumnInfo[]): string | undefined {
  if (ast.k === 'name' && ast.parts.length > 1) return ast.parts[ast.parts.length - 1];
  if (ast.k !== 'cast' || ast.arg.k !== 'name' || ast.arg.parts.length !== 1) return undefined;
  return resolveName(columns, ast.arg.parts[0])?.name;
}

/** Spark's name of an expression over aggregates: its pretty SQL, each hidden column written as Spark's name (`(sum(a) / count(1))`). */
function sparkName(text: string, columns: readonly ColumnInfo[], hidden: readonly HiddenName[]): string {
  // (an expression that does not analyze: the select reports its error, at its place)
  let pretty = prettyOr(text, columns);
  for (const h of hidden) pretty = named(pretty, h);
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
