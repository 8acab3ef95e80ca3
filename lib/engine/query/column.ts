/**
 * A column given as a Spark SQL expression (pyspark's `Column`): `expr('amount * qty')`. It is
 * its SQL text and an optional name; a frame analyzes and compiles it against its columns when
 * the column is used (select, filter, withColumn, groupBy, an aggregate's input), so an unknown
 * name or a type Spark refuses is refused when the query is built. The functions module builds
 * the same text from typed calls, so both forms make the same plan.
 */
import { InvalidQueryError } from '../errors';

export class Column {
  constructor(
    /** The expression's Spark SQL text. */
    readonly sql: string,
    /** The output name (`AS`), when one was given. */
    readonly name?: string,
  ) {}
  /** Names the column, as Spark's `.alias` / `.as`. */
  as(name: string): Column {
    return new Column(this.sql, name);
  }
  alias(name: string): Column {
    return this.as(name);
  }
  /** The text of a selectExpr item: the expression, with `AS name` when named. */
  toString(): string {
    return this.name === undefined ? this.sql : `${this.sql} AS ${quoteName(this.name)}`;
  }
}

/** `expr('lower(country)')`: a column from Spark SQL text (checked when a frame uses it). */
export function expr(text: string): Column {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidQueryError(`expr(${JSON.stringify(text)}): an expression is Spark SQL text, e.g. expr("amount * quantity")`);
  }
  return new Column(text);
}

/** A name as SQL text: plain when it is an identifier, else in backticks (a backtick doubled). */
export function quoteName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}
