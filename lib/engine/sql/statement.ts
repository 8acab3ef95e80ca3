/**
 * The statement parser of SQL query modules (docs/sql.md): a leading list of `SET key = value;`
 * and one streaming SELECT, in Databricks SQL's streaming forms:
 *
 *   SET outputMode = append;
 *   [WITH name AS (SELECT ...), ...]
 *   SELECT <item> [AS name], ... FROM STREAM read_files(['s3://...',] format => 'json', schema => '...')
 *                                     | (SELECT ... [UNION ALL SELECT ...] [DISTRIBUTE BY ...]) | a WITH query's name
 *     [AS alias] [WATERMARK col DELAY OF INTERVAL 10 MINUTES]
 *     [[INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER] | LEFT SEMI | LEFT ANTI] JOIN <relation> ON ... | USING (k, ...)]
 *     [LATERAL VIEW [OUTER] explode(...) t [AS] c, ...]
 *   [WHERE <expr>] [GROUP BY <expr>, ... | GROUP BY ALL] [HAVING <expr>] [WINDOW w AS (...), ...]
 *   [UNION ALL SELECT ...] [ORDER BY ... | CLUSTER BY ... | DISTRIBUTE BY ... [SORT BY ...] | SORT BY ...] [LIMIT n]
 *
 * It steps through the statement's tokens with its cursor (cursor.ts), which hands every
 * expression to the expression parser and keeps its text as written (a slice of the statement),
 * which the compiler passes on to the frame API verbatim; the tree it builds is syntax.ts's. Why a
 * hand-written parser: docs/sql.md, "The parser".
 */
import { hasAggregate } from './aggregate-calls';
import { CLAUSE_WORDS, SqlCursor } from './cursor';
import { SqlError, syntaxError, unsupported } from './errors';
import type { GroupingItem, JoinClause, LateralView, Relation, SelectItem, SetOption, SqlArg, SqlExpr, SqlQuery, UnpivotClause } from './syntax';

/** A literal's value as an option takes it: a number or boolean as such, anything else as text. */
function optionValue(text: string): string | number | boolean {
  const t = text.trim();
  if (/^[+-]?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  const quoted = /^'(.*)'$|^"(.*)"$/s.exec(t);
  return quoted ? (quoted[1] ?? quoted[2]) : t;
}

class StatementParser extends SqlCursor {
  /** The module's SETs (every SELECT of the module is read under them). */
  private settings: readonly SetOption[] = [];
  /** The WITH queries so far, by lower-case name. */
  private readonly named = new Map<string, SqlQuery>();

  parse(): SqlQuery {
    const settings: SetOption[] = [];
    while (this.isWord('SET')) settings.push(this.setOption());
    this.settings = settings;
    this.withQueries();
    const q = this.unionOfSelects();
    const { orderBy, distributeBy } = this.resultClauses();
    const limit = this.limit();
    if (this.isWord('OFFSET')) {
      throw unsupported(
        this.sql,
        this.peek().pos,
        "Offset is not supported on streaming DataFrames/Datasets (OFFSET): a stream's rows have no fixed order to skip some of; drop OFFSET, or skip rows when you read the output",
      );
    }
    this.end();
    return { ...q, ...(orderBy ? { orderBy } : {}), ...(distributeBy ? { distributeBy } : {}), ...(limit ? { limit } : {}) };
  }

  /** `SELECT ... [UNION [ALL | DISTINCT] SELECT ...] ...`: the first SELECT, the others in its unionAll. */
  private unionOfSelects(): SqlQuery {
    const first = this.select(this.settings);
    const unionAll: Array<{ pos: number; query: SqlQuery; distinct?: true }> = [];
    while (this.isWord('UNION')) {
      const pos = this.peek().pos;
      this.i++;
      const all = this.word('ALL');
      if (!all) this.word('DISTINCT');
      unionAll.push({ pos, query: this.select(this.settings), ...(all ? {} : { distinct: true as const }) });
    }
    return unionAll.length ? { ...first, unionAll } : first;
  }

  /**
   * `(SELECT ... [UNION ALL SELECT ...] [DISTRIBUTE BY ...])` after its '(': a DISTRIBUTE BY is
   * kept to be checked over the subquery's output; ORDER BY, SORT BY, CLUSTER BY and LIMIT belong
   * to the whole statement (Spark refuses a sort of a stream before a complete-mode aggregation).
   */
  private subquery(open: number): SqlQuery {
    const q = this.unionOfSelects();
    const at = this.peek();
    const clause = ['ORDER', 'SORT', 'CLUSTER'].find((w) => this.isWord(w));
    if (clause !== undefined || this.isWord('LIMIT'))
      throw unsupported(
        this.sql,
        at.pos,
        `${clause === undefined ? 'LIMIT' : `${clause} BY`} in a subquery: a stream's rows have no order until the result table of a complete-mode aggregation; write ${clause === 'CLUSTER' ? 'DISTRIBUTE BY in the subquery and ORDER BY' : 'ORDER BY and LIMIT'} at the end of the statement`,
      );
    const { orderBy, distributeBy } = this.resultClauses();
    if (orderBy !== undefined)
      throw unsupported(
        this.sql,
        orderBy.pos,
        "SORT BY in a subquery: a stream's rows have no order until the result table of a complete-mode aggregation; write ORDER BY at the end of the statement",
      );
    const before = this.sql.slice(0, open).split('\n');
    this.expectOp(')', `')' to close the subquery opened at line ${before.length}, column ${before[before.length - 1].length + 1}`);
    return distributeBy ? { ...q, distributeBy } : q;
  }

  /** `WITH name AS (SELECT ...), ...`: queries a later FROM or JOIN names (each read once, where it is named). */
  private withQueries(): void {
    if (!this.word('WITH')) return;
    do {
      const t = this.peek();
      const name = this.identifier('the name of a WITH query: WITH name AS (SELECT ...)');
      if (this.named.has(name.toLowerCase())) throw syntaxError(this.sql, t.pos, `another name: ${name} is already a WITH query`);
      this.expectWord('AS', `AS (SELECT ...) after WITH ${name}`);
      const open = this.peek().pos;
      this.expectOp('(', `'(' and a SELECT after WITH ${name} AS`);
      this.named.set(name.toLowerCase(), this.subquery(open));
    } while (this.op(','));
  }

  /**
   * `ORDER BY ...`, or Spark's `[CLUSTER BY ...] | [DISTRIBUTE BY ...] [SORT BY ...]`, in its
   * grammar's order. A DISTRIBUTE BY repartitions (no row changes: its expressions are kept to be
   * checked), SORT BY sorts each partition (a batch's output is one partition here, so it sorts it
   * as ORDER BY does), CLUSTER BY is both by the same expressions; Spark refuses any other
   * combination (UNSUPPORTED_FEATURE.COMBINATION_QUERY_RESULT_CLAUSES).
   */
  private resultClauses(): { orderBy?: SqlQuery['orderBy']; distributeBy?: SqlQuery['distributeBy'] } {
    const start = this.peek().pos;
    const orderBy = this.sortClause('ORDER');
    const cluster = this.isWord('CLUSTER') ? this.peek().pos : -1;
    const clusterBy = this.byList('CLUSTER');
    const distributeBy = this.byList('DISTRIBUTE');
    const sortBy = this.sortClause('SORT');
    const given = [orderBy, clusterBy, distributeBy, sortBy].filter((c) => c !== undefined).length;
    if (given > 1 && (orderBy !== undefined || clusterBy !== undefined)) {
      throw new SqlError(
        'UNSUPPORTED_FEATURE.COMBINATION_QUERY_RESULT_CLAUSES',
        'The feature is not supported: Combination of ORDER BY/SORT BY/DISTRIBUTE BY/CLUSTER BY: write ORDER BY alone, CLUSTER BY alone, or DISTRIBUTE BY and SORT BY',
        this.sql,
        start,
      );
    }
    if (clusterBy !== undefined)
      return { orderBy: { pos: cluster, keys: clusterBy.map((expr) => ({ expr, desc: false, nullsFirst: true })) }, distributeBy: clusterBy };
    return { orderBy: orderBy ?? sortBy, distributeBy };
  }

  /** `<word> BY expr, ...`, or undefined. */
  private byList(word: 'CLUSTER' | 'DISTRIBUTE'): SqlExpr[] | undefined {
    if (!this.isWord(word)) return undefined;
    this.i++;
    this.expectWord('BY', `BY after ${word}`);
    const exprs: SqlExpr[] = [];
    do exprs.push(this.expression());
    while (this.op(','));
    return exprs;
  }

  /** `ORDER BY key [ASC | DESC] [NULLS FIRST | NULLS LAST], ...` (or `SORT BY ...`), or undefined. */
  private sortClause(word: 'ORDER' | 'SORT'): SqlQuery['orderBy'] {
    if (!this.isWord(word)) return undefined;
    const pos = this.peek().pos;
    this.i++;
    this.expectWord('BY', `BY after ${word}`);
    const keys: Array<{ expr: SqlExpr; desc: boolean; nullsFirst: boolean }> = [];
    do {
      const expr = this.expression();
      const desc = this.word('DESC');
      if (!desc) this.word('ASC');
      let nullsFirst = !desc;
      if (this.word('NULLS')) {
        if (this.word('FIRST')) nullsFirst = true;
        else {
          this.expectWord('LAST', 'FIRST or LAST after NULLS');
          nullsFirst = false;
        }
      }
      keys.push({ expr, desc, nullsFirst });
    } while (this.op(','));
    return { pos, keys };
  }

  /** `LIMIT n` (a whole number), or undefined. */
  private limit(): SqlQuery['limit'] {
    if (!this.isWord('LIMIT')) return undefined;
    const pos = this.peek().pos;
    this.i++;
    const t = this.peek();
    if (t.kind !== 'num' || !/^\d+$/.test(t.text) || t.suffix) throw syntaxError(this.sql, t.pos, 'a whole number of rows after LIMIT, e.g. LIMIT 10');
    this.i++;
    return { pos, n: Number(t.text) };
  }

  /** One SELECT ... FROM ... [JOIN ...] [WHERE ...] [GROUP BY ...] [HAVING ...], under the module's SETs. */
  private select(settings: readonly SetOption[]): SqlQuery {
    const start = this.peek();
    if (!this.word('SELECT')) {
      throw syntaxError(
        this.sql,
        start.pos,
        settings.length ? 'SET key = value; or the SELECT of the query' : 'SELECT (a query module holds one streaming SELECT)',
      );
    }
    const distinct = this.word('DISTINCT');
    if (!distinct) this.word('ALL');
    const items: SelectItem[] = [];
    do items.push(this.selectItem());
    while (this.op(','));
    this.expectWord('FROM', "',' or FROM");
    const from = this.relation();
    const joins: JoinClause[] = [];
    for (let j = this.joinClause(); j; j = this.joinClause()) joins.push(j);
    const lateralViews: LateralView[] = [];
    while (this.isWord('LATERAL')) lateralViews.push(this.lateralView());
    const unpivot = this.isWord('UNPIVOT') ? this.unpivotClause() : undefined;
    const where = this.word('WHERE') ? this.expression() : undefined;
    let groupBy: SqlExpr[] | undefined;
    let grouping: GroupingItem[] | undefined;
    let groupByAllName: SqlExpr | undefined;
    if (this.word('GROUP')) {
      this.expectWord('BY', 'BY after GROUP');
      if (this.isWord('ALL') && !this.isOp('(', 1) && !this.isOp(',', 1)) {
        // Spark's GROUP BY ALL: every select item without an aggregate is a grouping expression
        // (unless the input has a column named all: the compiler checks, with the name kept here)
        groupByAllName = this.expression();
        // (none: the items all aggregate, one group of every row, as without GROUP BY)
        const keys = items.filter((it) => !hasAggregate(it.ast)).map((it) => ({ ast: it.ast, text: it.text, pos: it.pos }));
        groupBy = keys.length ? keys : undefined;
      } else ({ exprs: groupBy, items: grouping } = this.groupByList());
    }
    const having = this.word('HAVING') ? this.expression() : undefined;
    this.namedWindows();
    return {
      sql: this.sql,
      settings,
      distinct,
      items,
      from,
      joins,
      ...(lateralViews.length ? { lateralViews } : {}),
      ...(unpivot ? { unpivot } : {}),
      where,
      groupBy,
      ...(grouping ? { grouping } : {}),
      ...(groupByAllName ? { groupByAllName } : {}),
      ...(having ? { having } : {}),
    };
  }

  /**
   * `WINDOW name AS (<window spec>) | name AS other, ...`: named windows for `OVER name`. A window
   * function is refused on a stream (the expression parser's OVER), so a definition no item uses
   * is read and dropped, as Spark's analyzer drops an unused one.
   */
  private namedWindows(): void {
    if (!this.isWord('WINDOW') || this.peek(1).kind !== 'ident' || !this.isWord('AS', 2)) return;
    this.i++;
    do {
      this.identifier('the name of a window after WINDOW');
      this.expectWord('AS', 'AS after the name of a window');
      if (!this.isOp('(')) {
        this.identifier("a window's specification after AS: (PARTITION BY ... ORDER BY ...) or another window's name");
        continue;
      }
      const before = this.sql.slice(0, this.peek().pos).split('\n');
      let depth = 0;
      do {
        const t = this.peek();
        if (t.kind === 'eof')
          throw syntaxError(
            this.sql,
            t.pos,
            `')' to close the window specification opened at line ${before.length}, column ${before[before.length - 1].length + 1}`,
          );
        if (t.kind === 'op' && t.text === '(') depth++;
        else if (t.kind === 'op' && t.text === ')') depth--;
        this.i++;
      } while (depth > 0);
    } while (this.op(','));
  }

  /**
   * GROUP BY's list: expressions, ROLLUP (...), CUBE (...) and GROUPING SETS (...), then WITH ROLLUP,
   * WITH CUBE or Hive's GROUPING SETS (...) over the list. `items` only when there is an analytics.
   */
  private groupByList(): { exprs: SqlExpr[]; items?: GroupingItem[] } {
    const exprs: SqlExpr[] = [];
    const add = (e: SqlExpr) => exprs.push(e) - 1;
    const items: GroupingItem[] = [];
    do {
      const pos = this.peek().pos;
      const kind = this.analyticsKind();
      items.push(kind ? { kind, pos, elements: this.groupingElements(kind, exprs, add) } : { kind: 'EXPR', expr: add(this.expression()) });
    } while (this.op(','));
    const analytics = items.some((it) => it.kind !== 'EXPR');
    const plain = () => {
      if (analytics) throw syntaxError(this.sql, this.peek().pos, 'plain grouping expressions before WITH ROLLUP, WITH CUBE or GROUPING SETS');
      return items.map((it) => (it as { expr: number }).expr);
    };
    if (this.isWord('WITH') && (this.isWord('ROLLUP', 1) || this.isWord('CUBE', 1))) {
      const pos = this.peek(1).pos;
      const kind = this.peek(1).text.toUpperCase() as 'ROLLUP' | 'CUBE';
      this.i += 2;
      return { exprs, items: [{ kind, pos, elements: plain().map((e) => [e]) }] };
    }
    if (this.isWord('GROUPING') && this.isWord('SETS', 1) && this.isOp('(', 2)) {
      const pos = this.peek().pos;
      this.i += 2;
      const over = plain();
      return { exprs, items: [{ kind: 'GROUPING SETS', pos, elements: this.groupingElements('GROUPING SETS', exprs, add), over }] };
    }
    return analytics ? { exprs, items } : { exprs };
  }

  /** ROLLUP, CUBE or GROUPING SETS when the next words are one followed by '(' (and taken), else null. */
  private analyticsKind(): 'ROLLUP' | 'CUBE' | 'GROUPING SETS' | null {
    for (const kind of ['ROLLUP', 'CUBE'] as const) {
      if (this.isWord(kind) && this.isOp('(', 1)) {
        this.i++;
        return kind;
      }
    }
    if (this.isWord('GROUPING') && this.isWord('SETS', 1) && this.isOp('(', 2)) {
      this.i += 2;
      return 'GROUPING SETS';
    }
    return null;
  }

  /** `( element, ... )` of an analytics: each `(a, b)`, `()` or one expression, as indexes given by `add`. */
  private groupingElements(kind: string, exprs: SqlExpr[], add: (e: SqlExpr) => number): number[][] {
    this.expectOp('(', `'(' after ${kind}`);
    const elements: number[][] = [];
    do {
      const at = this.peek();
      if (
        (at.kind === 'ident' && ['ROLLUP', 'CUBE'].includes(at.text.toUpperCase()) && this.isOp('(', 1)) ||
        (this.isWord('GROUPING') && this.isWord('SETS', 1))
      )
        throw syntaxError(
          this.sql,
          at.pos,
          `an expression or a list of them in ${kind} (a ROLLUP, CUBE or GROUPING SETS inside another is not supported: list its sets)`,
        );
      elements.push(this.groupingElement(exprs, add));
    } while (this.op(','));
    this.expectOp(')', `',' or ')' closing ${kind} (...)`);
    return elements;
  }

  /** One grouping set: `(a, b)`, `()`, or an expression (`(a + b) * 2` is one). */
  private groupingElement(exprs: SqlExpr[], add: (e: SqlExpr) => number): number[] {
    if (this.isOp('(')) {
      const at = this.i;
      const had = exprs.length;
      this.i++;
      const list: number[] = [];
      if (!this.op(')')) {
        do list.push(add(this.expression()));
        while (this.op(','));
        this.expectOp(')', "',' or ')' closing the grouping set");
      }
      if (this.isOp(',') || this.isOp(')')) return list;
      // not a list: an expression that starts with a parenthesis
      this.i = at;
      exprs.length = had;
    }
    return [add(this.expression())];
  }

  /** `LATERAL VIEW [OUTER] generator(args) table [AS] column, ...` (Spark's grammar: the table's name is required, the columns not). */
  private lateralView(): LateralView {
    const pos = this.peek().pos;
    this.i++;
    this.expectWord('VIEW', 'VIEW after LATERAL (LATERAL VIEW explode(tags) t AS tag)');
    const outer = this.word('OUTER');
    const call = this.expression();
    if (call.ast.k !== 'call') throw syntaxError(this.sql, call.pos, 'a generator after LATERAL VIEW, e.g. explode(tags)');
    // (Spark's grammar wants the table's name; Hive's `LATERAL VIEW explode(tags) AS tag` without one is taken too)
    const table = this.isWord('AS') ? '' : this.identifier('the name of the lateral view after its generator: LATERAL VIEW explode(tags) t AS tag');
    const columns: string[] = [];
    const named = this.word('AS');
    const t = this.peek();
    if (named || ((t.kind === 'ident' || t.kind === 'qident') && !CLAUSE_WORDS.has(t.text.toUpperCase()))) {
      do columns.push(this.identifier('a column name of the lateral view'));
      while (this.op(','));
    }
    return { pos, outer, call, fn: call.ast.name.toLowerCase(), table, columns };
  }

  private unpivotClause(): UnpivotClause {
    const pos = this.peek().pos;
    this.i++;
    let includeNulls = false;
    if (this.isWord('INCLUDE') || this.isWord('EXCLUDE')) {
      includeNulls = this.isWord('INCLUDE');
      this.i++;
      this.expectWord('NULLS', 'NULLS after INCLUDE or EXCLUDE');
    }
    this.expectOp('(', "'(' after UNPIVOT: UNPIVOT (value FOR name IN (a, b))");
    if (this.isOp('('))
      throw syntaxError(
        this.sql,
        this.peek().pos,
        'one value column: UNPIVOT (value FOR name IN (a, b)) (several value columns at once are not supported: UNPIVOT once per value)',
      );
    const valueColumn = this.identifier('the value column of UNPIVOT (value FOR name IN (a, b))');
    this.expectWord('FOR', 'FOR after the value column: UNPIVOT (value FOR name IN (a, b))');
    const nameColumn = this.identifier('the name column of UNPIVOT (value FOR name IN (a, b))');
    this.expectWord('IN', 'IN after the name column: UNPIVOT (value FOR name IN (a, b))');
    this.expectOp('(', "'(' before the unpivoted columns");
    const columns: Array<{ column: string; name: string }> = [];
    do {
      const column = this.identifier('a column to unpivot');
      const alias = this.word('AS') || this.peek().kind === 'ident' || this.peek().kind === 'qident' ? this.identifier('the name for the column') : undefined;
      columns.push({ column, name: alias ?? column });
    } while (this.op(','));
    this.expectOp(')', "')' after the unpivoted columns");
    this.expectOp(')', "')' closing UNPIVOT (...)");
    // (an alias of the unpivoted relation is read and not kept: its columns are named without it)
    const t = this.peek();
    if (this.word('AS') || ((t.kind === 'ident' || t.kind === 'qident') && !CLAUSE_WORDS.has(t.text.toUpperCase())))
      this.identifier('the alias of UNPIVOT (...)');
    return { pos, includeNulls, valueColumn, nameColumn, columns };
  }

  private end(): void {
    this.op(';');
    if (this.peek().kind !== 'eof') {
      throw syntaxError(
        this.sql,
        this.peek().pos,
        'the end of the query (one SELECT a module, or SELECTs joined by UNION ALL; a clause may be misspelt or out of order: FROM, JOIN, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT)',
      );
    }
  }

  /** `SET key = value;`: the key's words and dots as written, the value up to the `;`. */
  private setOption(): SetOption {
    const set = this.peek();
    this.i++;
    const k0 = this.i;
    while (!this.isOp('=') && !this.isOp(';') && this.peek().kind !== 'eof') this.i++;
    if (this.i === k0 || !this.isOp('=')) throw syntaxError(this.sql, this.peek().pos, 'SET key = value;');
    const key = this.slice(k0, this.i).replace(/\s+/g, '');
    this.i++;
    const v0 = this.i;
    while (!this.isOp(';') && this.peek().kind !== 'eof') this.i++;
    if (this.i === v0) throw syntaxError(this.sql, this.peek().pos, `a value after SET ${key} =`);
    const value = this.slice(v0, this.i);
    this.expectOp(';', `';' after SET ${key} = ${value}`);
    const one = this.i - v0 === 2 ? this.tokens[v0] : undefined; // a single token before the ';'
    return { key, value: one?.kind === 'str' ? one.text : optionValue(value), pos: set.pos };
  }

  private selectItem(): SelectItem {
    const start = this.i;
    const e = this.expression();
    const alias = this.alias();
    return { ...e, alias, full: this.slice(start, this.i) };
  }

  /** `[STREAM] fn(args) [AS alias] [WATERMARK col DELAY OF INTERVAL ...] [AS alias]`. */
  private relation(): Relation {
    const stream = this.word('STREAM');
    const t = this.peek();
    if (this.isOp('(') && this.isWord('SELECT', 1)) {
      this.i++;
      return this.relationAfter({ stream: true, fn: 'subquery', subquery: this.subquery(t.pos), pos: t.pos, args: [] });
    }
    const named = (t.kind === 'ident' || t.kind === 'qident') && !this.isOp('(', 1) ? this.named.get(t.text.toLowerCase()) : undefined;
    if (named !== undefined) {
      this.i++;
      // (the WITH query's name qualifies its columns, unless an alias replaces it)
      const r = this.relationAfter({ stream: true, fn: t.text, subquery: named, pos: t.pos, args: [] });
      return r.alias === undefined ? { ...r, alias: t.text } : r;
    }
    if (t.kind !== 'ident' || !this.isOp('(', 1)) {
      throw syntaxError(
        this.sql,
        t.pos,
        stream
          ? "a source: read_files('s3://...', format => 'json', schema => '...') or kinesis('stream', schema => '...')"
          : "STREAM and a source (FROM STREAM read_files(...)), or a table function (read_files, dynamodb) on a join's static side",
      );
    }
    this.i += 2;
    const args: SqlArg[] = [];
    if (!this.op(')')) {
      do args.push(this.argument());
      while (this.op(','));
      this.expectOp(')', "',' or ')' after an argument");
    }
    return this.relationAfter({ stream, fn: t.text.toLowerCase(), pos: t.pos, args });
  }

  /** A relation's `[AS alias] [WATERMARK col DELAY OF INTERVAL ...] [AS alias]`. */
  private relationAfter(r: Relation): Relation {
    if (this.isWord('PIVOT')) {
      throw unsupported(
        this.sql,
        this.peek().pos,
        "PIVOT is not supported: aggregate one column per value instead, e.g. sum(CASE WHEN k = 'x' THEN v END) AS x, or count(*) FILTER (WHERE k = 'x') AS x",
      );
    }
    if (this.isWord('TABLESAMPLE')) {
      throw unsupported(
        this.sql,
        this.peek().pos,
        'Sampling is not supported on streaming DataFrames/Datasets (TABLESAMPLE): keep a deterministic share of the rows with a filter instead, e.g. WHERE pmod(hash(k), 10) = 0',
      );
    }
    let alias = this.alias();
    let watermark: Relation['watermark'];
    const w = this.peek();
    if (this.word('WATERMARK')) {
      const column = this.identifier('the event-time column after WATERMARK');
      this.expectWord('DELAY', 'DELAY OF INTERVAL ... after the WATERMARK column');
      this.expectWord('OF', 'OF after DELAY');
      watermark = { column, delay: this.intervalText(), pos: w.pos };
      alias ??= this.alias();
    }
    return { ...r, alias, watermark };
  }

  /** A table function's argument: a literal, or `name => literal`. */
  private argument(): SqlArg {
    const t = this.peek();
    let name: string | undefined;
    if ((t.kind === 'ident' || t.kind === 'qident') && this.isOp('=>', 1)) {
      name = t.text;
      this.i += 2;
    }
    const v = this.peek();
    const e = this.expression();
    if (e.ast.k !== 'lit' || (typeof e.ast.value !== 'string' && typeof e.ast.value !== 'number' && typeof e.ast.value !== 'boolean')) {
      throw syntaxError(this.sql, v.pos, `a literal${name ? ` for ${name}` : ''} (a string, a number or true/false)`);
    }
    return { name, value: e.ast.value, pos: t.pos };
  }

  /** `INTERVAL 10 MINUTES` / `INTERVAL '10 minutes'` as the frame API writes a delay: '10 minutes'. */
  private intervalText(): string {
    const t = this.peek();
    if (!this.isWord('INTERVAL')) throw syntaxError(this.sql, t.pos, 'INTERVAL and a delay after DELAY OF, e.g. INTERVAL 10 MINUTES');
    const e = this.expression();
    if (e.ast.k !== 'lit' || e.ast.type.type !== 'INTERVAL') throw syntaxError(this.sql, t.pos, 'an interval such as INTERVAL 10 MINUTES');
    return e.text
      .replace(/^INTERVAL\s+/i, '')
      .replace(/'/g, '')
      .replace(/\s+/g, ' ')
      .toLowerCase();
  }

  private joinClause(): JoinClause | undefined {
    const t = this.peek();
    const words: string[] = [];
    while (['INNER', 'LEFT', 'RIGHT', 'FULL', 'OUTER', 'SEMI', 'ANTI', 'CROSS', 'NATURAL'].some((w) => this.isWord(w))) {
      words.push(this.peek().text.toUpperCase());
      this.i++;
    }
    if (!this.word('JOIN')) {
      if (words.length) throw syntaxError(this.sql, this.peek().pos, `JOIN after ${words.join(' ')}`);
      if (this.isOp(',')) throw unsupported(this.sql, this.peek().pos, 'a comma join (FROM a, b) is not supported: write JOIN ... ON or JOIN ... USING');
      return undefined;
    }
    const relation = this.relation();
    const type = words.join(' ') || 'INNER';
    if (this.word('ON')) return { type, pos: t.pos, relation, on: this.expression() };
    if (this.word('USING')) {
      this.expectOp('(', "'(' after USING");
      const using: string[] = [];
      do using.push(this.identifier('a column name in USING (...)'));
      while (this.op(','));
      this.expectOp(')', "',' or ')' in USING (...)");
      return { type, pos: t.pos, relation, using };
    }
    throw syntaxError(this.sql, this.peek().pos, 'ON <condition> or USING (<columns>) after the joined relation');
  }
}

/** Parses a SQL query module's text. Throws SqlError with Spark's error class and the position. */
export function parseSql(sql: string): SqlQuery {
  return new StatementParser(sql).parse();
}
