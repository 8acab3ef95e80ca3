/**
 * The functions module's core (pyspark's `col`, `lit`, `expr`, `when`, the conditional
 * functions) and the helpers its other files build calls with: a column argument is a Column or
 * a column's name, a value argument a Column or a literal.
 */
import { InvalidQueryError } from '../../errors';
import { Column, type Operand, operand } from '../column';
import type { ArgType, ColArg, ColOf, ColType, Common, LitType, UnknownType } from '../column-types';
import { columnText, type Literal, PREC, sqlLiteral } from '../sql-text';

/** The name Spark gives a column named by `col(path)`: the last field of a path, the name itself. */
type ColName<S extends string> = S extends `${string}[${string}` ? string : S extends `${string}.${infer R}` ? ColName<R> : S;

/**
 * `col('amount')`, `col('customer.country')`: a column (or a nested path) by name. Its type is not
 * known here (`UnknownType`); `frame.col(name)` gives the frame's type of the column.
 */
export function col<const S extends string>(name: S): Column<UnknownType, ColName<S>> {
  return new Column(columnText(name));
}
/** pyspark's `column`: the same as `col`. */
export function column<const S extends string>(name: S): Column<UnknownType, ColName<S>> {
  return col(name);
}

/**
 * `lit(value)`: a literal. A string is quoted, an integer within ±2147483647 is an INT and beyond a
 * BIGINT (`3000000000L`), another number a DOUBLE (`1.5D`; JavaScript has no 2.0 apart from 2: write
 * `lit(2).cast('DOUBLE')`), a bigint a BIGINT, a Date a TIMESTAMP (UTC, milliseconds), an array an
 * `array(...)`, null NULL.
 */
export function lit<const V extends Literal>(value: V): Column<LitType<V>> {
  const { sql, prec } = sqlLiteral(value);
  return new Column(sql, undefined, prec);
}

/** The SQL text of a column argument: a Column's text, or a name. */
export function arg(c: ColArg): string {
  if (c instanceof Column) return c.sql;
  if (typeof c !== 'string')
    throw new InvalidQueryError(`${JSON.stringify(c)} is not a column: give a column's name or a Column (col(...), expr(...), lit(...))`);
  return columnText(c);
}
/** The SQL text of a value argument: a Column's text, or a literal. */
export function val(v: Operand): string {
  return operand(v).sql;
}
/** `name(args...)` as a Column of type R. */
export function call<R extends ColType>(name: string, ...args: string[]): Column<R> {
  return new Column(`${name}(${args.join(', ')})`);
}
/** A literal argument that must be given (a pattern, a format, a count). */
export function litArg(v: Literal, fn: string, what: string): string {
  if (v === undefined) throw new InvalidQueryError(`${fn}: give ${what}`);
  return sqlLiteral(v).sql;
}

/** The common type of columns (coalesce, greatest, least): the same type, or the widest number. */
export type CommonOf<A extends readonly unknown[], Acc = never> = A extends readonly [infer H, ...infer R]
  ? CommonOf<R, [Acc] extends [never] ? ArgType<H> : Common<Acc, ArgType<H>>>
  : [Acc] extends [never]
    ? UnknownType
    : A extends readonly []
      ? Acc
      : UnknownType;

// ---------------------------------------------------------------------------- CASE WHEN

/** `CASE WHEN ... END` being built: `when(c, v).when(c2, v2).otherwise(v3)`. */
export class CaseColumn<T extends ColType = ColType> extends Column<T> {
  constructor(private readonly branches: readonly string[]) {
    super(`CASE ${branches.join(' ')} END`);
  }
  /** Another `WHEN condition THEN value`. */
  when<const V extends Operand>(condition: ColOf<'BOOLEAN'>, value: V): CaseColumn<Common<T, LitType<V>>> {
    return new CaseColumn([...this.branches, branch(condition, value)]);
  }
  /** `ELSE value`: the value when no condition holds (without it, NULL). */
  otherwise<const V extends Operand>(value: V): Column<Common<T, LitType<V>>> {
    return new Column(`CASE ${this.branches.join(' ')} ELSE ${val(value)} END`);
  }
}
function branch(condition: Column, value: Operand): string {
  if (!(condition instanceof Column))
    throw new InvalidQueryError(`when(${JSON.stringify(condition)}, ...): the condition is a BOOLEAN Column, e.g. col('n').gt(0)`);
  return `WHEN ${condition.sql} THEN ${val(value)}`;
}
/** `when(condition, value)`: pyspark's `F.when`, a CASE WHEN; chain `.when(...)` and `.otherwise(...)`. A value that is not a Column is a literal. */
export function when<const V extends Operand>(condition: ColOf<'BOOLEAN'>, value: V): CaseColumn<LitType<V>> {
  return new CaseColumn([branch(condition, value)]);
}

// ---------------------------------------------------------------------------- conditional functions

/** `coalesce(a, b, ...)`: the first non-null. */
export function coalesce<const A extends readonly ColArg[]>(...cols: A): Column<CommonOf<A>> {
  return call('coalesce', ...cols.map(arg));
}
/** `nullif(a, b)`: NULL when a = b, else a. */
export function nullif<A extends ColArg>(a: A, b: ColArg): Column<ArgType<A>> {
  return call('nullif', arg(a), arg(b));
}
/** `nvl(a, b)` / `ifnull(a, b)`: b when a is NULL. */
export function nvl<const A extends ColArg, const B extends ColArg>(a: A, b: B): Column<Common<ArgType<A>, ArgType<B>>> {
  return call('nvl', arg(a), arg(b));
}
export function ifnull<const A extends ColArg, const B extends ColArg>(a: A, b: B): Column<Common<ArgType<A>, ArgType<B>>> {
  return call('ifnull', arg(a), arg(b));
}
/** `nvl2(a, b, c)`: b when a is not NULL, else c. */
export function nvl2<const B extends ColArg, const C extends ColArg>(a: ColArg, b: B, c: C): Column<Common<ArgType<B>, ArgType<C>>> {
  return call('nvl2', arg(a), arg(b), arg(c));
}
/** `isnull(a)`. */
export function isnull(c: ColArg): Column<'BOOLEAN'> {
  return call('isnull', arg(c));
}
/** `isnotnull(a)`. */
export function isnotnull(c: ColArg): Column<'BOOLEAN'> {
  return call('isnotnull', arg(c));
}
/** `greatest(a, b, ...)`: the largest, nulls skipped. */
export function greatest<const A extends readonly ColArg[]>(...cols: A): Column<CommonOf<A>> {
  return call('greatest', ...cols.map(arg));
}
/** `least(a, b, ...)`: the smallest, nulls skipped. */
export function least<const A extends readonly ColArg[]>(...cols: A): Column<CommonOf<A>> {
  return call('least', ...cols.map(arg));
}
/** `input_file_name()`: the URI of the file the row was read from ('' after a stateful operator, or on a stream). */
export function input_file_name(): Column<'STRING'> {
  return call('input_file_name');
}
/** `NOT x` as a function (pyspark's `~`). */
export function not(c: ColOf<'BOOLEAN'>): Column<'BOOLEAN'> {
  return new Column(`NOT ${c.prec < PREC.not ? `(${c.sql})` : c.sql}`, undefined, PREC.not);
}
