/**
 * The syntax tree of a SQL query module (docs/sql.md), as the statement parser (statement.ts)
 * reads it and the compiler (index.ts and its helpers) takes it: every expression with its text as
 * written and where it stands, so that an error can point into the statement.
 */
import type { Ast } from '../expr/parser';

/** An expression of the statement: its syntax tree, its text as written and where that starts. */
export interface SqlExpr {
  readonly ast: Ast;
  readonly text: string;
  readonly pos: number;
}

export interface SelectItem extends SqlExpr {
  readonly alias?: string;
  /** The item as written, with its alias: what selectExpr is given. */
  readonly full: string;
}

/** A literal argument of a table function: `'s3://...'` or `name => value`. */
export interface SqlArg {
  readonly name?: string;
  readonly value: string | number | boolean;
  readonly pos: number;
}

/**
 * A table function in FROM or JOIN (read_files(...), kinesis(...), dynamodb(...)), or a subquery:
 * `(SELECT ...)` or the name of a WITH query, whose SELECT then stands in `subquery` (fn is the
 * name, or "subquery"; no args).
 */
export interface Relation {
  readonly stream: boolean;
  readonly fn: string;
  readonly subquery?: SqlQuery;
  readonly pos: number;
  readonly args: readonly SqlArg[];
  readonly alias?: string;
  readonly watermark?: { readonly column: string; readonly delay: string; readonly pos: number };
}

export interface JoinClause {
  /** As written, upper case: INNER, LEFT OUTER, LEFT SEMI, ... */
  readonly type: string;
  readonly pos: number;
  readonly relation: Relation;
  readonly on?: SqlExpr;
  readonly using?: readonly string[];
}

/** `UNPIVOT [INCLUDE | EXCLUDE NULLS] (value FOR name IN (column [AS alias], ...))` after FROM: a row per listed column, the others kept (Spark 3.4). */
export interface UnpivotClause {
  readonly pos: number;
  /** INCLUDE NULLS: rows whose value is null are kept (the default, EXCLUDE NULLS, drops them). */
  readonly includeNulls: boolean;
  readonly valueColumn: string;
  readonly nameColumn: string;
  /** The columns unpivoted, and the text the name column holds for each (the alias, else the column's name). */
  readonly columns: ReadonlyArray<{ readonly column: string; readonly name: string }>;
}

/** `LATERAL VIEW [OUTER] generator(args) table [AS] column, ...`: a generator's rows beside each input row (Spark's Generate). */
export interface LateralView {
  readonly pos: number;
  readonly outer: boolean;
  /** The generator's call as written (explode(tags)), and its function's name, lower case. */
  readonly call: SqlExpr;
  readonly fn: string;
  /** The view's name, which qualifies its columns ('': none given, as Hive allows). */
  readonly table: string;
  /** The generated columns' names; none: the generator's own (col; key, value; pos, col). */
  readonly columns: readonly string[];
}

export interface SetOption {
  readonly key: string;
  readonly value: string | number | boolean;
  readonly pos: number;
}

export interface SqlQuery {
  readonly sql: string;
  readonly settings: readonly SetOption[];
  readonly distinct: boolean;
  readonly items: readonly SelectItem[];
  readonly from: Relation;
  readonly joins: readonly JoinClause[];
  readonly lateralViews?: readonly LateralView[];
  readonly unpivot?: UnpivotClause;
  readonly where?: SqlExpr;
  readonly groupBy?: readonly SqlExpr[];
  /**
   * GROUP BY's items when it has ROLLUP (...), CUBE (...) or GROUPING SETS (...) (or ends in WITH
   * ROLLUP / WITH CUBE, or is Hive's `GROUP BY a, b GROUPING SETS (...)`): each a plain expression
   * or a grouping analytics whose elements are lists of expressions, every expression an index
   * into `groupBy` (which lists them all, in the order written).
   */
  readonly grouping?: readonly GroupingItem[];
  /** `GROUP BY ALL` as written, read as the name `all`: Spark groups by a column of that name when there is one. */
  readonly groupByAllName?: SqlExpr;
  /** HAVING's condition: a filter over the aggregation's output. */
  readonly having?: SqlExpr;
  /** `UNION ALL SELECT ...`: the SELECTs whose rows follow this one's (each parsed as this one, without SET), and where each UNION stands. */
  /** The SELECTs unioned onto this one, in order; `distinct`: a UNION (UNION DISTINCT), not UNION ALL. */
  readonly unionAll?: ReadonlyArray<{ readonly pos: number; readonly query: SqlQuery; readonly distinct?: true }>;
  /** `ORDER BY key [ASC | DESC] [NULLS FIRST | LAST], ...` of the whole statement, and where it stands. */
  readonly orderBy?: { readonly pos: number; readonly keys: ReadonlyArray<{ readonly expr: SqlExpr; readonly desc: boolean; readonly nullsFirst: boolean }> };
  /**
   * `DISTRIBUTE BY expr, ...`: Spark repartitions the rows by them, which changes no row a query
   * emits; its expressions are checked against the output's columns and otherwise ignored.
   */
  readonly distributeBy?: readonly SqlExpr[];
  /** `LIMIT n`, and where it stands. */
  readonly limit?: { readonly pos: number; readonly n: number };
}

/** One GROUP BY item, its expressions indexes into the query's `groupBy`. */
export type GroupingItem =
  | { readonly kind: 'EXPR'; readonly expr: number }
  | {
      readonly kind: 'ROLLUP' | 'CUBE' | 'GROUPING SETS';
      readonly pos: number;
      /** Each element's expressions: `(a, b)`, `a`, or `()` (none). */
      readonly elements: ReadonlyArray<readonly number[]>;
      /** Hive's `GROUP BY a, b GROUPING SETS (...)`: the list before GROUPING SETS (grouping columns of every set's id). */
      readonly over?: readonly number[];
    };
