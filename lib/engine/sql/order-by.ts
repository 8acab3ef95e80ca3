/**
 * ORDER BY of a SQL statement (docs/sql.md): its keys over the select list's columns (an ordinal
 * naming a select item, ORDER BY ALL every one), and the keys a plain SELECT carries to the sort
 * from columns its select list leaves out. An aggregating SELECT computes its own such keys beside
 * its select list (aggregate.ts) and sorts with sortedBy too.
 */
import { resolveName } from '../resolve-name';
import { expr } from '../query/column';
import type { StreamFrame } from '../query/frame';
import { tempNames } from '../query/temp-names';
import type { AnyColumns } from '../query/types';
import { atClause, SqlError, within } from './errors';
import { columnRefs, quoted } from './over-aggregates';
import type { SelectItem, SqlExpr, SqlQuery } from './syntax';

/**
 * `frame` sorted by the statement's ORDER BY, if it has one: each key an ordinal of the select
 * list, the column computed for it (`computed[i]`), or an expression over the frame's columns.
 */
export function sortedBy(
  sql: string,
  q: SqlQuery,
  frame: StreamFrame<AnyColumns>,
  computed: ReadonlyArray<{ readonly as: string } | null>,
): StreamFrame<AnyColumns> {
  const order = q.orderBy;
  if (order === undefined) return frame;
  const columns = frame.columnsNow_();
  const [first] = order.keys;
  // ORDER BY ALL: the select list's columns, left to right, each in the order written (Spark's ResolveOrderByAll)
  const keys =
    isOrderByAll(q) && computed[0] == null && resolveName(columns, 'all') === undefined
      ? columns.slice(0, selectWidth(q, columns)).map((c) => ({ key: expr(quoted(c.name)), desc: first.desc, nullsFirst: first.nullsFirst }))
      : order.keys.map((k, i) => {
          const c = computed[i];
          return { key: expr(c ? quoted(c.as) : orderKeyText(k.expr, frame, q)), desc: k.desc, nullsFirst: k.nullsFirst };
        });
  const spans = order.keys.map((k) => k.expr);
  return atClause(sql, order.pos, () => within(sql, spans, () => frame.orderBy(...keys)));
}

/** Whether the statement's ORDER BY is `ORDER BY ALL [ASC | DESC] [NULLS ...]`. */
export function isOrderByAll(q: SqlQuery): boolean {
  const keys = q.orderBy?.keys ?? [];
  const a = keys[0]?.expr.ast;
  return keys.length === 1 && a.k === 'name' && a.parts.length === 1 && a.parts[0].toLowerCase() === 'all';
}

/** The number of an ORDER BY ordinal (`ORDER BY 2`), or undefined for any other key. */
export function ordinalOf(e: SqlExpr): number | undefined {
  return e.ast.k === 'lit' && typeof e.ast.value === 'number' && /^\d+$/.test(e.text) ? Number(e.text) : undefined;
}

/**
 * An ORDER BY key's text over the query's output columns: an ordinal (`ORDER BY 2`) is the select
 * item's output column, as Spark's SubstituteUnresolvedOrdinals reads it; anything else as written.
 */
function orderKeyText(e: SqlExpr, frame: StreamFrame<AnyColumns>, q: SqlQuery): string {
  const i = ordinalOf(e);
  if (i === undefined) return e.text;
  const cols = frame.columnsNow_();
  const n = selectWidth(q, cols);
  if (i < 1 || i > n) throw new SqlError('ORDER_BY_POS_OUT_OF_RANGE', `ORDER BY position ${i} is not in select list (valid range is [1, ${n}])`, q.sql, e.pos);
  return quoted(cols[i - 1].name);
}

/** How many of the frame's columns the select list makes: all of them with a `*`, else one an item (columns carried for ORDER BY come after). */
function selectWidth(q: SqlQuery, columns: readonly unknown[]): number {
  return q.items.some((it) => it.ast.k === 'star') ? columns.length : q.items.length;
}

/** The name a select item's column is known by before it is computed (its alias, or a column's name), lower case; undefined for an expression. */
export function selectedName(item: SqlQuery['items'][number]): string | undefined {
  const name = item.alias ?? (item.ast.k === 'name' ? item.ast.parts[item.ast.parts.length - 1] : undefined);
  return name?.toLowerCase();
}

/**
 * A plain SELECT's ORDER BY keys that read only columns its select list leaves out (`SELECT user
 * FROM (SELECT user, count(*) AS n ...) ORDER BY n DESC`), each as a select item under a temporary
 * name (null for a key over the select list's columns): Spark's ResolveMissingReferences carries
 * such columns through the projection to the sort and drops them after it. Not after DISTINCT or
 * UNION ALL, whose sort Spark resolves against the select list alone, and not for an aggregating
 * SELECT (its aggregation computes such keys: aggregate.ts).
 */
export function missingOrderItems(q: SqlQuery): Array<(SelectItem & { readonly alias: string }) | null> {
  const keys = q.orderBy?.keys ?? [];
  if (keys.length === 0 || q.distinct || (q.unionAll?.length ?? 0) > 0 || q.items.some((i) => i.ast.k === 'star') || isOrderByAll(q)) return [];
  const selected = new Set(q.items.map((i) => selectedName(i) ?? i.text.toLowerCase()));
  const temp = tempNames(q.items.map((i) => ({ name: i.alias ?? i.text })));
  return keys.map(({ expr: e }) => {
    const refs = columnRefs(q.sql, e, () => false);
    if (refs.length === 0 || refs.some((r) => selected.has(r.name.toLowerCase()))) return null;
    const alias = temp('order');
    return { ...e, alias, full: `${e.text} AS ${quoted(alias)}` };
  });
}
