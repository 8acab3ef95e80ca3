/**
 * Columns qualified by a relation's alias in a SQL query module (`SELECT e.user ... FROM STREAM
 * read_files(...) AS e`, `clicks.clickTime` after a JOIN ... AS clicks): the frame API names
 * columns without qualifiers (a join's two sides never share a column name: the join refuses
 * that), so outside a join's ON, which reads aliases itself (relations.ts), `alias.column` is the
 * column. `unqualified` gives the statement with each such alias and its dot cut out (Spark names
 * an output column without its qualifier too: `upper(e.user)` is `upper(user)`), and a map from a
 * position in it back to the statement as written, for the line and column of an error.
 */
import type { Ast } from '../expr/parser';
import { quoteName } from '../query/sql-text';
import { resolveName } from '../resolve-name';
import { SqlError } from './errors';
import type { Relation, SqlExpr, SqlQuery } from './syntax';

/** A qualified reference found: where its qualifier starts, the alias and the column it names. */
interface Qualified {
  readonly pos: number;
  readonly alias: string;
  readonly column: string | null;
}

/** The `alias.column` and `alias.*` references of an expression whose alias is in `aliases` (lambda variables left alone). */
function qualifiedRefs(a: Ast, aliases: ReadonlySet<string>, bound: ReadonlySet<string> = new Set()): Qualified[] {
  if (a.k === 'name') {
    const q = a.parts[0].toLowerCase();
    return a.parts.length > 1 && aliases.has(q) && !bound.has(q) ? [{ pos: a.pos, alias: q, column: a.parts[1] }] : [];
  }
  if (a.k === 'star')
    return a.qualifier.length === 1 && aliases.has(a.qualifier[0].toLowerCase()) ? [{ pos: a.pos, alias: a.qualifier[0].toLowerCase(), column: null }] : [];
  const inner = a.k === 'lambda' ? new Set([...bound, ...a.params.map((p) => p.toLowerCase())]) : bound;
  const out: Qualified[] = [];
  // (the children: Ast nodes, and the nodes inside a CASE's branches, a FILTER or a WITHIN GROUP's keys)
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v !== null && typeof v === 'object') {
      if ('k' in v && 'pos' in v) out.push(...qualifiedRefs(v as Ast, aliases, inner));
      else for (const x of Object.values(v)) visit(x);
    }
  };
  for (const [key, v] of Object.entries(a)) if (key !== 'type' && key !== 'to' && key !== 'value') visit(v);
  return out;
}

/** Every SELECT of the statement: each UNION ALL branch, and each subquery (a WITH query once). */
function selectsOf(q: SqlQuery, seen = new Set<SqlQuery>()): SqlQuery[] {
  if (seen.has(q)) return [];
  seen.add(q);
  const out = [q];
  for (const r of [q.from, ...q.joins.map((j) => j.relation)]) if (r.subquery) out.push(...selectsOf(r.subquery, seen));
  for (const u of q.unionAll ?? []) out.push(...selectsOf(u.query, seen));
  return out;
}

/** The statement without its qualifiers, and the position in the statement as written of a position in it. */
export interface Unqualified {
  readonly sql: string;
  readonly original: (pos: number) => number;
}

/**
 * The statement with every `alias.column` outside ON written as `column` (the alias and its dot
 * cut), or the statement itself when it has none. `columnsOf` gives a relation's column names
 * (null: not known, nothing checked). A column its alias's relation lacks is UNRESOLVED_COLUMN.
 * `alias.*` of the only relation of its SELECT is `*`; beside a JOIN or LATERAL VIEW it is that
 * relation's columns, listed (Spark's expansion of a qualified star), unless they are not known or
 * hold a key of an outer join's USING, whose one output column is not that side's own: then it is
 * left as written, for the compiler to refuse.
 */
export function unqualified(sql: string, q: SqlQuery, columnsOf: (r: Relation) => readonly string[] | null): Unqualified {
  /** The spans to cut: each qualifier with its dot, or a qualified star, which `text` replaces. */
  const spans: Array<{ from: number; to: number; text?: string }> = [];
  for (const s of selectsOf(q)) {
    // each alias's columns: a relation's, or a lateral view's named ones (null: its generator's own, not checked)
    const scopes = new Map<string, () => readonly string[] | null>();
    for (const r of [s.from, ...s.joins.map((j) => j.relation)])
      if (r.alias)
        scopes.set(
          r.alias.toLowerCase(),
          once(() => columnsOf(r)),
        );
    for (const v of s.lateralViews ?? []) if (v.table !== '') scopes.set(v.table.toLowerCase(), () => (v.columns.length ? v.columns : null));
    if (scopes.size === 0) continue;
    // an outer join's USING key is one output column, not each side's own (a right side's is null where the left's is not)
    const outerUsing = s.joins.filter((j) => j.using && j.type !== 'INNER').flatMap((j) => j.using!.map((k) => k.toLowerCase()));
    const aliases = new Set(scopes.keys());
    // (ORDER BY belongs to the statement, held by its first SELECT)
    const exprs: SqlExpr[] = [
      ...s.items,
      ...(s.where ? [s.where] : []),
      ...(s.groupBy ?? []),
      ...(s.having ? [s.having] : []),
      ...(s.orderBy?.keys.map((k) => k.expr) ?? []),
    ];
    for (const ref of exprs.flatMap((e) => qualifiedRefs(e.ast, aliases))) {
      if (ref.column === null) {
        const star = dotAfter(sql, ref.pos);
        if (s.joins.length === 0 && !s.lateralViews?.length) spans.push({ from: ref.pos, to: star });
        else {
          const columns = scopes.get(ref.alias)!();
          if (columns !== null && !columns.some((c) => outerUsing.includes(c.toLowerCase())))
            spans.push({ from: ref.pos, to: star + 1, text: columns.map(quoteName).join(', ') });
        }
        continue;
      }
      const columns = scopes.get(ref.alias)!();
      if (columns !== null && resolveName(columns, ref.column, (c) => c) === undefined) {
        throw new SqlError(
          'UNRESOLVED_COLUMN.WITH_SUGGESTION',
          `A column, variable, or function parameter with name \`${ref.alias}\`.\`${ref.column}\` cannot be resolved: ${ref.alias} has the columns ${columns.map((c) => `\`${c}\``).join(', ')}`,
          sql,
          ref.pos,
        );
      }
      spans.push({ from: ref.pos, to: dotAfter(sql, ref.pos) });
    }
  }
  if (spans.length === 0) return { sql, original: (pos) => pos };
  let out = '';
  let at = 0;
  /** Each cut: where it starts in the new text and in the statement as written, what it cut and what it put there. */
  const cuts: Array<{ at: number; from: number; cut: number; put: number }> = [];
  for (const b of spans.sort((x, y) => x.from - y.from)) {
    if (b.from < at) continue; // (found twice: GROUP BY ALL's keys are select items)
    out += sql.slice(at, b.from);
    cuts.push({ at: out.length, from: b.from, cut: b.to - b.from, put: b.text?.length ?? 0 });
    out += b.text ?? '';
    at = b.to;
  }
  // a position just after a cut (the column's name) is the qualifier's, where Spark points; one
  // inside a star's columns is the star's
  const original = (pos: number) => {
    let shift = 0;
    for (const c of cuts) {
      if (c.put > 0 && pos >= c.at && pos < c.at + c.put) return c.from;
      if (c.at < pos) shift += c.cut - c.put;
    }
    return pos + shift;
  };
  return { sql: out + sql.slice(at), original };
}

/** `f`, called at most once (a relation's columns build its frame: a subquery's is compiled again otherwise, per reference). */
function once<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

/** Where the text after a qualifier's dot starts: the qualifier (plain or in backticks), spaces, the dot, spaces. */
function dotAfter(sql: string, pos: number): number {
  let i = pos;
  if (sql[i] === '`') {
    i++;
    while (i < sql.length && !(sql[i] === '`' && sql[i + 1] !== '`')) i += sql[i] === '`' ? 2 : 1;
    i++;
  } else while (i < sql.length && /[\p{L}\p{N}_]/u.test(sql[i])) i++;
  while (/\s/.test(sql[i] ?? '')) i++;
  if (sql[i] === '.') i++;
  while (/\s/.test(sql[i] ?? '')) i++;
  return i;
}
