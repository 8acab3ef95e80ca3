/**
 * Whole queries written in SQL (docs/sql.md): `compileSql(text)` parses a SQL query module
 * (statement.ts) and builds its plan by calling the public frame API, so a .sql query and the
 * TypeScript query written with the same calls have the same plan:
 *
 *   FROM STREAM read_files(...) WATERMARK ...  readStream.format().schema().option().load() .withWatermark()
 *   JOIN ... ON / USING                        .join(other, keys, type, { timeRange, name })
 *   WHERE <expr>                               .filter('<expr>')
 *   SELECT <items> (no aggregate)              .selectExpr('<item>', ...)   (nothing for SELECT *)
 *   SELECT DISTINCT                            .groupBy(<every column>).agg(): an aggregation
 *   GROUP BY / aggregates                      .groupBy(...).agg(...)[.select(...)]   (aggregate.ts)
 *   HAVING, expressions over aggregates        .groupBy(...).agg(...).filter(...).selectExpr(...)   (over-aggregates.ts)
 *   SELECT ... UNION ALL SELECT ...            .union(<the other SELECT's frame>)
 *   FROM (SELECT ...) / WITH t AS (SELECT ...)  the subquery's frame, the outer SELECT's calls after its own
 *   ORDER BY k DESC [NULLS FIRST] ..., LIMIT n .orderBy({ key: expr('k'), desc, nullsFirst }, ...).limit(n)
 *   SET outputMode, queryName, trigger, ...    .writeStream.outputMode().queryName()... .plan()
 *
 * No AWS imports: the Lambda bundle and the CLI both compile a .sql file with it.
 */
import { resolveName } from '../resolve-name';
import type { QueryPlan } from '../plan/types';
import { aggregated } from './aggregate';
import { missingOrderItems, sortedBy } from './order-by';
import { hasAggregate } from './aggregate-calls';
import { atClause, type Span, SqlError, unsupported, within } from './errors';
import { joined, staticColumns, streamOf } from './relations';
import { type Unqualified, unqualified } from './qualifiers';
import { parseSql } from './statement';
import type { LateralView, Relation, SetOption, SqlQuery, UnpivotClause } from './syntax';
import { unpivotItems } from '../query/unpivot';
import { quoteName } from '../query/sql-text';
import type { Ast } from '../expr/parser';
import { prettySql } from '../expr';
import { quoted } from './over-aggregates';
import type { StreamFrame } from '../query/frame';
import type { DataStreamWriter } from '../query/writer';
import type { AnyColumns } from '../query/types';

export { SqlError } from './errors';
export { parseSql } from './statement';

/** SET keys the writer takes (any case); every other key is an option of the FROM stream's reader. */
const WRITER_KEYS = [
  'outputmode',
  'queryname',
  'trigger',
  'lateRows',
  'statePartitions',
  'idleTimeout',
  'multipleWatermarkPolicy',
  'spark.sql.streaming.multipleWatermarkPolicy',
].map((k) => k.toLowerCase());

/** A column reference qualified by a join side's alias (`a.k`) outside ON, or null. */
function qualified(a: Ast, aliases: readonly string[]): Ast | null {
  if ((a.k === 'name' && a.parts.length > 1) || (a.k === 'star' && a.qualifier.length)) {
    const q = (a.k === 'name' ? a.parts[0] : a.qualifier[0]).toLowerCase();
    if (aliases.includes(q)) return a;
  }
  for (const v of Object.values(a)) {
    for (const x of Array.isArray(v) ? v : [v]) {
      const hit = x && typeof x === 'object' && 'k' in x ? qualified(x as Ast, aliases) : null;
      if (hit) return hit;
    }
  }
  return null;
}

function writerOptions(sql: string, settings: readonly SetOption[]): SetOption[] {
  const seen = new Map<string, SetOption>();
  for (const s of settings) {
    const k = s.key.toLowerCase();
    const before = seen.get(k);
    if (before) throw new SqlError('DUPLICATE_KEY', `SET ${s.key} is given twice: keep one`, sql, s.pos);
    seen.set(k, s);
  }
  return settings.filter((s) => WRITER_KEYS.includes(s.key.toLowerCase()));
}

/** Whether a SELECT aggregates: GROUP BY, HAVING or an aggregate among its items. */
function isAggregating(q: SqlQuery): boolean {
  return q.groupBy !== undefined || q.having !== undefined || q.items.some((i) => hasAggregate(i.ast));
}

/** The frame the query's FROM, JOINs, WHERE and SELECT describe. */
function frameOf(written: SqlQuery): StreamFrame<AnyColumns> {
  let q = written;
  const sql = q.sql;
  const readerOptions = q.settings.filter((s) => !WRITER_KEYS.includes(s.key.toLowerCase())).map((s) => [s.key, s.value] as const);
  let frame = atClause(sql, q.from.pos, () => relationFrame(sql, q.from, readerOptions));
  const aliases = q.from.alias ? [q.from.alias.toLowerCase()] : [];
  for (const j of q.joins) {
    const left = frame;
    frame = atClause(sql, j.pos, () => joined(sql, left, aliases, j, (r) => relationFrame(sql, r)));
    if (j.relation.alias) aliases.push(j.relation.alias.toLowerCase());
  }
  for (const v of q.lateralViews ?? []) {
    const before = frame;
    frame = atClause(sql, v.pos, () => lateralView(sql, before, v));
    // (its t.column is cut before this by qualifiers.ts; what is left is a t.* of a view without column names)
    if (v.table !== '' && v.columns.length === 0) aliases.push(v.table.toLowerCase());
  }
  if (q.unpivot) {
    const u = q.unpivot;
    const before = frame;
    frame = atClause(sql, u.pos, () => unpivoted(before, u));
  }
  for (const e of [...q.items, ...(q.where ? [q.where] : []), ...(q.groupBy ?? []), ...(q.having ? [q.having] : [])]) {
    const hit = aliases.length ? qualified(e.ast, aliases) : null;
    if (hit) {
      throw unsupported(
        sql,
        hit.pos,
        hit.k === 'star'
          ? `${(hit as { qualifier: readonly string[] }).qualifier[0]}.* of a relation holding an outer join's USING key (one output column, not that side's own), or of a LATERAL VIEW without column names, is not supported: list the columns, or SELECT * for all`
          : "a column qualified by a relation's alias is read only in the select list, WHERE, GROUP BY, HAVING and a join's ON: write the name without the alias",
      );
    }
  }
  if (q.where) {
    const where = q.where;
    frame = within(sql, [where], () => frame.filter(where.text));
  }
  // GROUP BY ALL over an input with a column named all groups by that column, as in Spark
  if (q.groupByAllName && resolveName(frame.columnsNow_(), 'all') !== undefined) q = { ...q, groupBy: [q.groupByAllName] };
  if (isAggregating(q)) {
    if (q.distinct) throw unsupported(sql, q.items[0].pos, 'SELECT DISTINCT with GROUP BY: the groups are distinct already, drop DISTINCT');
    const grouped = frame;
    return atClause(sql, q.groupBy?.[0]?.pos ?? q.items[0].pos, () => aggregated(sql, q, grouped));
  }
  const star = q.items.length === 1 && q.items[0].ast.k === 'star' && q.items[0].ast.qualifier.length === 0 && q.items[0].alias === undefined;
  if (!star) {
    const spans: Span[] = q.items.map((i) => ({ text: sqlNamed(i, frame), pos: i.pos }));
    frame = within(sql, spans, () => frame.selectExpr(...spans.map((s) => s.text)));
  }
  return q.distinct ? distinctRows(sql, frame, q.items[0].pos) : frame;
}

/**
 * SQL's DISTINCT (SELECT DISTINCT, UNION without ALL): an aggregation by every column with no
 * aggregate, as Spark's optimizer makes a Distinct (ReplaceDistinctWithAggregate; its checker
 * counts a streaming Distinct as one). Append mode needs a watermarked column among them and emits
 * a row once the watermark passes it; update mode emits a row again in each batch that brings it;
 * complete mode the whole set each batch. (The TypeScript API's distinct() is Dataset.distinct,
 * dropDuplicates: another operator.)
 */
function distinctRows(sql: string, frame: StreamFrame<AnyColumns>, pos: number): StreamFrame<AnyColumns> {
  return atClause(sql, pos, () => frame.groupBy(...frame.columnsNow_().map((c) => c.name)).agg());
}

/**
 * `UNPIVOT [INCLUDE | EXCLUDE NULLS] (v FOR n IN (a [AS x], ...))`: the columns not listed, then
 * n and v, a row per listed column (Dataset.unpivot's), rows whose v is null dropped unless
 * INCLUDE NULLS (Spark's default for the SQL clause is EXCLUDE NULLS).
 */
function unpivoted(frame: StreamFrame<AnyColumns>, u: UnpivotClause): StreamFrame<AnyColumns> {
  const columns = frame.columnsNow_();
  const listed = u.columns.map((c) => c.column.toLowerCase());
  const ids = columns.map((c) => c.name).filter((n) => !listed.includes(n.toLowerCase()));
  const items = unpivotItems(
    columns,
    ids,
    u.columns.map((c) => c.column),
    u.nameColumn,
    u.valueColumn,
    u.columns.map((c) => c.name),
  );
  const out = frame.selectExpr(...items);
  return u.includeNulls ? out : out.filter(`${quoteName(u.valueColumn)} IS NOT NULL`);
}

/** The generators LATERAL VIEW takes, and their OUTER forms (a row with nulls for an empty or null input). */
const LATERAL_GENERATORS: Record<string, string> = {
  explode: 'explode_outer',
  posexplode: 'posexplode_outer',
  inline: 'inline_outer',
  explode_outer: 'explode_outer',
  posexplode_outer: 'posexplode_outer',
  inline_outer: 'inline_outer',
  // (n rows whatever its values: OUTER changes nothing)
  stack: 'stack',
};

/**
 * `LATERAL VIEW [OUTER] gen(args) t AS c, ...`: every column, and the generator's beside them
 * (Spark's Generate with its child's output), as `selectExpr('*', 'gen(args) AS (c, ...)')`; OUTER
 * is the generator's _outer form.
 */
function lateralView(sql: string, frame: StreamFrame<AnyColumns>, v: LateralView): StreamFrame<AnyColumns> {
  const outer = LATERAL_GENERATORS[v.fn];
  if (outer === undefined)
    throw unsupported(
      sql,
      v.call.pos,
      `LATERAL VIEW ${v.call.text}: the generator is explode or posexplode (an array, or a map's key and value), inline (an array of structs), their _outer forms, or stack`,
    );
  const call = v.outer ? `${outer}${v.call.text.slice(v.call.text.indexOf('('))}` : v.call.text;
  const as = v.columns.length === 0 ? '' : v.columns.length === 1 ? ` AS ${quoted(v.columns[0])}` : ` AS (${v.columns.map(quoted).join(', ')})`;
  return within(sql, [{ text: v.call.text, pos: v.call.pos }], () => frame.selectExpr('*', `${call}${as}`));
}

/**
 * A select item as selectExpr is to take it under SQL's name. The two name a cast of a cast of a
 * column apart: selectExpr (Column.named) names CAST(CAST(x AS DOUBLE) AS STRING) x, where SQL's
 * ResolveAliases names only a cast directly over a column by it and anything else by its pretty SQL.
 */
function sqlNamed(item: SqlQuery['items'][number], frame: StreamFrame<AnyColumns>): string {
  const ast = item.ast;
  if (item.alias !== undefined || ast.k !== 'cast' || ast.arg.k !== 'cast') return item.full;
  return `${item.full} AS ${quoted(prettySql(item.full, frame.columnsNow_()))}`;
}

/** A FROM or JOIN relation that is a stream as a frame: a table function's reader (with SET's reader options), or a subquery's frame. */
function relationFrame(sql: string, r: Relation, readerOptions: ReadonlyArray<readonly [string, string | number | boolean]> = []): StreamFrame<AnyColumns> {
  if (r.subquery === undefined) return streamOf(sql, r, readerOptions);
  const frame = unionFrame(r.subquery);
  distributed(sql, r.subquery, frame);
  const w = r.watermark;
  return w ? atClause(sql, w.pos, () => frame.withWatermark(w.column, w.delay)) : frame;
}

/** A DISTRIBUTE BY's expressions resolved over the rows it repartitions, as Spark's analyzer checks them: the repartitioning itself changes no row. */
function distributed(sql: string, q: SqlQuery, frame: StreamFrame<AnyColumns>): void {
  for (const e of q.distributeBy ?? []) within(sql, [e], () => frame.selectExpr(e.text));
}

/** The frame of a SELECT and the SELECTs its UNION ALLs add: each SELECT's frame, the later ones unioned onto the first. */
function unionFrame(q: SqlQuery): StreamFrame<AnyColumns> {
  const sql = q.sql;
  let frame = frameOf(q);
  for (const u of q.unionAll ?? []) {
    for (const branch of [q, u.query]) {
      if (isAggregating(branch) || branch.distinct)
        throw unsupported(
          sql,
          u.pos,
          'UNION ALL of a SELECT with GROUP BY, an aggregate or DISTINCT: a union comes before any stateful operator; make each SELECT plain and aggregate the union in a subquery: SELECT k, count(*) FROM (SELECT k FROM STREAM ... UNION ALL SELECT k FROM STREAM ...) GROUP BY k',
        );
    }
    const left = frame;
    frame = atClause(sql, u.pos, () => left.union(frameOf(u.query)));
    // UNION (DISTINCT) is Distinct over the union so far (distinctRows); a union after it would
    // follow a stateful operator, which a union may not: only the last UNION may drop the ALL
    if (u.distinct) {
      const later = (q.unionAll ?? []).slice((q.unionAll ?? []).indexOf(u) + 1);
      if (later.length > 0)
        throw unsupported(
          sql,
          later[0].pos,
          'a UNION after a UNION without ALL: the first makes the rows distinct, an aggregation, and a union comes before any stateful operator; write UNION ALL for all but the last, whose DISTINCT then holds for every SELECT',
        );
      frame = distinctRows(sql, frame, u.pos);
    }
  }
  return frame;
}

/** The plan of a SQL query module's text. Throws SqlError (or the frame API's error) naming what to fix. */
export function compileSql(text: string): QueryPlan {
  const written = parseSql(text);
  // alias.column outside ON is the column (qualifiers.ts): the statement without those qualifiers
  // is compiled, and an error's place is moved back into the statement as written
  const bare = unqualified(text, written, (r) => {
    try {
      return r.stream
        ? relationFrame(text, r)
            .columnsNow_()
            .map((c) => c.name)
        : staticColumns(text, r);
    } catch {
      return null; // (the relation's own error: the compilation below reports it, at its place)
    }
  });
  if (bare.sql === text) return compileStatement(written);
  try {
    return compileStatement(parseSql(bare.sql));
  } catch (e) {
    throw placedIn(e, text, bare);
  }
}

/** An error of the statement without qualifiers, placed in the statement as written. */
function placedIn(e: unknown, text: string, bare: Unqualified): unknown {
  if (e instanceof SqlError) return new SqlError(e.errorClass, e.reason, text, bare.original(e.position));
  if (!(e instanceof Error)) return e;
  // (an error of the frame API, placed by atClause as "(line L, column C)" in the statement without qualifiers)
  const m = /\(line (\d+), column (\d+)\)$/.exec(e.message);
  if (m === null) return e;
  const lines = bare.sql.split('\n');
  const pos = lines.slice(0, Number(m[1]) - 1).reduce((n, l) => n + l.length + 1, 0) + Number(m[2]) - 1;
  const before = text.slice(0, bare.original(pos)).split('\n');
  e.message = `${e.message.slice(0, m.index)}(line ${before.length}, column ${before[before.length - 1].length + 1})`;
  return e;
}

/** The plan of a parsed statement. */
function compileStatement(q: SqlQuery): QueryPlan {
  const sql = q.sql;
  const writerSets = writerOptions(sql, q.settings);
  // ORDER BY keys that read columns a plain select list leaves out ride along as select items, dropped after the sort
  const missing = isAggregating(q) ? [] : missingOrderItems(q);
  const carried = missing.flatMap((m) => m ?? []);
  let frame = unionFrame(carried.length ? { ...q, items: [...q.items, ...carried] } : q);
  // (an aggregating SELECT sorts inside its aggregation, which can compute keys the select list leaves out: aggregate.ts)
  if (q.orderBy && !isAggregating(q))
    frame = sortedBy(
      sql,
      q,
      frame,
      missing.map((m) => m && { as: m.alias }),
    );
  if (carried.length) {
    const sorted = frame;
    const kept = sorted.columnsNow_().slice(0, -carried.length);
    frame = sorted.select(...kept.map((c) => c.name));
  }
  distributed(sql, q, frame);
  if (q.limit) {
    const { n } = q.limit;
    const limited = frame;
    frame = atClause(sql, q.limit.pos, () => limited.limit(n));
  }
  const writer = frame.writeStream;
  writer.trigger({ availableNow: true });
  for (const s of writerSets) atClause(sql, s.pos, () => setWriter(sql, writer, s));
  // a refusal of the whole query (append without a watermark, ...) points at its GROUP BY or select list
  return atClause(sql, q.groupBy?.[0]?.pos ?? q.items[0].pos, () => writer.plan());
}

/** One writer SET on `writer`. */
function setWriter(sql: string, writer: DataStreamWriter<AnyColumns>, s: SetOption): void {
  const key = s.key.toLowerCase();
  const v = s.value;
  if (key === 'outputmode') writer.outputMode(String(v).toLowerCase());
  else if (key === 'queryname') writer.queryName(String(v));
  else if (key === 'laterows') writer.lateRows(String(v) as 'drop' | 'dead-letter');
  else if (key === 'trigger') {
    const t = String(v)
      .toLowerCase()
      .replace(/[^a-z]/g, '');
    if (t !== 'availablenow' && t !== 'once')
      throw unsupported(sql, s.pos, `SET trigger = ${v}: sluice runs on a schedule, so the trigger is availableNow (the default) or once`);
    writer.trigger(t === 'once' ? { once: true } : { availableNow: true });
  } else writer.option(s.key.startsWith('spark.') ? s.key : (WRITER_KEYS_CASED[key] ?? s.key), v);
}

const WRITER_KEYS_CASED: Record<string, string> = {
  statepartitions: 'statePartitions',
  idletimeout: 'idleTimeout',
  multiplewatermarkpolicy: 'multipleWatermarkPolicy',
};
