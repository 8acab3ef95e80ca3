/**
 * A column given as a Spark SQL expression (pyspark's `Column`): `expr('amount * qty')`. It is
 * its SQL text and an optional name; a frame analyzes and compiles it against its columns when
 * the column is used (select, filter, withColumn, groupBy, an aggregate's input), so an unknown
 * name or a type Spark refuses is refused when the query is built. The functions module (`F`)
 * and the methods below build the same text from typed calls, so both forms make the same plan.
 *
 * Type parameters: T, the column's type (a frame column type such as 'DOUBLE', or UnknownType
 * when the types cannot know it), and N, its output name when the types know it.
 */
import { InvalidQueryError } from '../errors';
import type { Arith, CastType, ColOf, ColType, Divide, FieldName, FieldType, ItemType, LitType, NumericType, UnknownType } from './column-types';
import { type Literal, PREC, quoteName, quoteString, sqlLiteral } from './sql-text';
import type { SortKey } from './functions';

export { quoteName } from './sql-text';

/** What an operator or a value argument takes: a Column, or a literal (`col('a').eq('x')` compares with the string 'x'). */
export type Operand = Column | Literal;
type Bool = ColOf<'BOOLEAN'>;

export class Column<out T extends ColType = ColType, out N extends string = string> {
  /** The column's type, for the compiler only (no value at run time). */
  declare readonly __type?: T;
  /** The column's output name, for the compiler only. */
  declare readonly __name?: N;
  constructor(
    /** The expression's Spark SQL text. */
    readonly sql: string,
    /** The output name (`AS`), when one was given. */
    readonly name?: string,
    /** @internal The precedence of the text's outermost operator (sql-text.ts PREC): where it needs parentheses. */
    readonly prec: number = PREC.atom,
  ) {}
  /** Names the column, as Spark's `.alias` / `.as`. */
  as<M extends string>(name: M): Column<T, M> {
    return new Column(this.sql, name, this.prec);
  }
  alias<M extends string>(name: M): Column<T, M> {
    return this.as(name);
  }
  /** A sort key of this column, ascending (nulls first), for orderBy: Spark's `.asc`. */
  asc(): SortKey {
    return { key: this };
  }
  /** Descending (nulls last): Spark's `.desc`. */
  desc(): SortKey {
    return { key: this, desc: true };
  }
  /** Ascending with the nulls last: Spark's `.asc_nulls_last`. */
  ascNullsLast(): SortKey {
    return { key: this, nullsFirst: false };
  }
  /** Descending with the nulls first: Spark's `.desc_nulls_first`. */
  descNullsFirst(): SortKey {
    return { key: this, desc: true, nullsFirst: true };
  }
  /** The text of a selectExpr item: the expression, with `AS name` when named. */
  toString(): string {
    return this.name === undefined ? this.sql : `${this.sql} AS ${quoteName(this.name)}`;
  }
  /** `CAST(x AS type)`, type in Spark's DDL: `.cast('DECIMAL(10,2)')`. */
  cast<const S extends string>(type: S): Column<CastType<S>> {
    if (typeof type !== 'string' || type.trim() === '')
      throw new InvalidQueryError(`cast(${JSON.stringify(type)}): the type is a DDL type such as 'DOUBLE' or 'DECIMAL(10,2)'`);
    return new Column(`CAST(${this.sql} AS ${type})`);
  }

  // ---------------------------------------------------------------------------- arithmetic
  /** `x + other`. */
  plus<const V extends Operand>(this: ColOf<NumericType | 'DATE' | 'TIMESTAMP'>, other: V): Column<Arith<T, LitType<V>>> {
    return binary(this, '+', other, PREC.additive);
  }
  /** `x - other`. */
  minus<const V extends Operand>(this: ColOf<NumericType | 'DATE' | 'TIMESTAMP'>, other: V): Column<Arith<T, LitType<V>>> {
    return binary(this, '-', other, PREC.additive);
  }
  /** `x * other`. */
  multiply<const V extends Operand>(this: ColOf<NumericType>, other: V): Column<Arith<T, LitType<V>>> {
    return binary(this, '*', other, PREC.multiplicative);
  }
  /** `x / other`: DOUBLE, or DECIMAL when one side is DECIMAL and neither DOUBLE. */
  divide<const V extends Operand>(this: ColOf<NumericType>, other: V): Column<Divide<T, LitType<V>>> {
    return binary(this, '/', other, PREC.multiplicative);
  }
  /** `x % other`. */
  mod<const V extends Operand>(this: ColOf<NumericType>, other: V): Column<Arith<T, LitType<V>>> {
    return binary(this, '%', other, PREC.multiplicative);
  }
  /** `-x`. */
  negate(this: ColOf<NumericType>): Column<T> {
    // (`--` opens a comment: the negation of a negative is written -(-x))
    const inner = wrap(this, PREC.unary);
    return new Column(`-${inner.startsWith('-') ? `(${inner})` : inner}`, undefined, PREC.unary);
  }

  // ---------------------------------------------------------------------------- comparisons
  eq(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '=', other, PREC.comparison);
  }
  neq(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '<>', other, PREC.comparison);
  }
  lt(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '<', other, PREC.comparison);
  }
  leq(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '<=', other, PREC.comparison);
  }
  gt(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '>', other, PREC.comparison);
  }
  geq(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '>=', other, PREC.comparison);
  }
  /** `x <=> other`: equal, with NULL equal to NULL. */
  eqNullSafe(other: Operand): Column<'BOOLEAN'> {
    return binary(this, '<=>', other, PREC.comparison);
  }

  // ---------------------------------------------------------------------------- logic
  and(this: Bool, other: Bool | boolean): Column<'BOOLEAN'> {
    return binary(this, 'AND', other, PREC.and);
  }
  or(this: Bool, other: Bool | boolean): Column<'BOOLEAN'> {
    return binary(this, 'OR', other, PREC.or);
  }
  /** `NOT x` (pyspark's `~x`). */
  not(this: Bool): Column<'BOOLEAN'> {
    return new Column(`NOT ${wrap(this, PREC.not)}`, undefined, PREC.not);
  }

  // ---------------------------------------------------------------------------- predicates
  isNull(): Column<'BOOLEAN'> {
    return new Column(`${wrap(this, PREC.comparison)} IS NULL`, undefined, PREC.predicate);
  }
  isNotNull(): Column<'BOOLEAN'> {
    return new Column(`${wrap(this, PREC.comparison)} IS NOT NULL`, undefined, PREC.predicate);
  }
  /** `x IN (v1, v2, ...)`; an array is spread, as pyspark's `isin([...])`. */
  isin(...values: Array<Operand | readonly Operand[]>): Column<'BOOLEAN'> {
    const list = values.length === 1 && Array.isArray(values[0]) ? (values[0] as readonly Operand[]) : (values as Operand[]);
    if (list.length === 0) throw new InvalidQueryError(`${this.sql}.isin(): give at least one value`);
    return new Column(`${wrap(this, PREC.comparison)} IN (${list.map((v) => operand(v).sql).join(', ')})`, undefined, PREC.predicate);
  }
  /** `x BETWEEN lower AND upper` (both included). */
  between(lower: Operand, upper: Operand): Column<'BOOLEAN'> {
    return new Column(
      `${wrap(this, PREC.comparison)} BETWEEN ${wrap(operand(lower), PREC.comparison)} AND ${wrap(operand(upper), PREC.comparison)}`,
      undefined,
      PREC.predicate,
    );
  }
  /** `x LIKE 'pattern'` (`%` any characters, `_` one; backslash escapes). */
  like(this: ColOf<'STRING'>, pattern: string): Column<'BOOLEAN'> {
    return new Column(`${wrap(this, PREC.comparison)} LIKE ${quoteString(pattern)}`, undefined, PREC.predicate);
  }
  /** `x ILIKE 'pattern'`: LIKE ignoring case. */
  ilike(this: ColOf<'STRING'>, pattern: string): Column<'BOOLEAN'> {
    return new Column(`${wrap(this, PREC.comparison)} ILIKE ${quoteString(pattern)}`, undefined, PREC.predicate);
  }
  /** `x RLIKE 'regex'`: the regular expression matches somewhere in x. */
  rlike(this: ColOf<'STRING'>, regex: string): Column<'BOOLEAN'> {
    return new Column(`${wrap(this, PREC.comparison)} RLIKE ${quoteString(regex)}`, undefined, PREC.predicate);
  }
  /** `contains(x, other)`. */
  contains(this: ColOf<'STRING'>, other: Operand): Column<'BOOLEAN'> {
    return new Column(`contains(${this.sql}, ${operand(other).sql})`);
  }
  /** `startswith(x, other)`. */
  startswith(this: ColOf<'STRING'>, other: Operand): Column<'BOOLEAN'> {
    return new Column(`startswith(${this.sql}, ${operand(other).sql})`);
  }
  /** `endswith(x, other)`. */
  endswith(this: ColOf<'STRING'>, other: Operand): Column<'BOOLEAN'> {
    return new Column(`endswith(${this.sql}, ${operand(other).sql})`);
  }
  /** `substring(x, pos, len)` (1-based, as pyspark's `substr`). */
  substr(this: ColOf<'STRING'>, pos: number, len: number): Column<'STRING'> {
    return new Column(`substring(${this.sql}, ${sqlLiteral(pos).sql}, ${sqlLiteral(len).sql})`);
  }

  // ---------------------------------------------------------------------------- nested values
  /** `x.field`: a STRUCT's field. */
  getField<F extends FieldName<T>>(field: F): Column<FieldType<T, F>, F> {
    return new Column(`${wrap(this, PREC.postfix)}.${quoteName(field)}`, undefined, PREC.postfix);
  }
  /** `x[i]` (an ARRAY's element, 0-based) or `x['key']` (a MAP's value). */
  getItem(key: number | string | Column): Column<ItemType<T>> {
    return new Column(`${wrap(this, PREC.postfix)}[${operand(key).sql}]`, undefined, PREC.postfix);
  }
}

/** `expr('lower(country)')`: a column from Spark SQL text (checked when a frame uses it). */
export function expr(text: string): Column<UnknownType> {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidQueryError(`expr(${JSON.stringify(text)}): an expression is Spark SQL text, e.g. expr("amount * quantity")`);
  }
  // a text of several tokens is taken as the loosest expression: parenthesized as an operand
  return new Column(text, undefined, /^[A-Za-z_][A-Za-z0-9_]*$/.test(text.trim()) ? PREC.atom : 0);
}

/** An operand as a Column: a Column as it is, anything else a literal. */
export function operand(v: Operand): Column {
  if (v instanceof Column) return v;
  const { sql, prec } = sqlLiteral(v);
  return new Column(sql, undefined, prec);
}

/** The text of c where the position needs precedence `min`: in parentheses when c binds less. */
function wrap(c: Column, min: number): string {
  return c.prec < min ? `(${c.sql})` : c.sql;
}

/** `left op right` for a left-associative operator of precedence `prec`. */
function binary<R extends ColType>(left: Column, op: string, right: Operand, prec: number): Column<R> {
  return new Column(`${wrap(left, prec)} ${op} ${wrap(operand(right), prec + 1)}`, undefined, prec);
}
