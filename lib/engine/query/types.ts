/**
 * The query API's type-level helpers: a frame's columns read from the schema's DDL, the row types
 * functions see and queries emit, and what groupBy, agg and join accept for given columns.
 */
import type { Row } from '../ports';
import type { ColumnType } from '../schema';
import type { AggFn, AggSpec, ColumnKey, QueryPlan, SessionKey, WindowKey } from '../plan/types';
import type { AggBuilder } from './functions';

// ------------------------------------------------------------------------- types for the user
//
// The builders carry the frame's columns as a type parameter (column name to ColumnType), read
// from the schema's DDL when it is a literal string, so that a typo in a column name or a window
// over a non-TIMESTAMP column is a compile error, and `.plan()` returns a QueryPlan whose output
// row type names the grouping keys and the aliases. With a schema that is not a literal (a
// `string` variable) every column name is accepted and rows are loosely typed, as before.

/** A frame's columns: name to type. `window` / `session_window` of an aggregation are 'WINDOW'. */
export type FrameColumns = Record<string, ColumnType | 'WINDOW'>;
/** The columns of a frame whose schema the types cannot read: any name, any type. */
export type AnyColumns = Record<string, ColumnType | 'WINDOW'>;

type TrimLeft<S extends string> = S extends ` ${infer R}` ? TrimLeft<R> : S extends `\n${infer R}` ? TrimLeft<R> : S extends `\t${infer R}` ? TrimLeft<R> : S;
type TrimRight<S extends string> = S extends `${infer R} `
  ? TrimRight<R>
  : S extends `${infer R}\n`
    ? TrimRight<R>
    : S extends `${infer R}\t`
      ? TrimRight<R>
      : S;
type Trim<S extends string> = TrimLeft<TrimRight<S>>;
type SplitComma<S extends string> = S extends `${infer H},${infer T}` ? [H, ...SplitComma<T>] : [S];
type DdlType<T extends string> =
  Uppercase<T> extends 'STRING' | 'VARCHAR'
    ? 'STRING'
    : Uppercase<T> extends 'INT' | 'INTEGER' | 'SMALLINT' | 'SHORT' | 'TINYINT' | 'BYTE'
      ? 'INT'
      : Uppercase<T> extends 'LONG' | 'BIGINT'
        ? 'LONG'
        : Uppercase<T> extends 'DOUBLE' | 'FLOAT' | 'REAL'
          ? 'DOUBLE'
          : Uppercase<T> extends 'BOOLEAN' | 'BOOL'
            ? 'BOOLEAN'
            : Uppercase<T> extends 'TIMESTAMP' | 'TIMESTAMP_LTZ'
              ? 'TIMESTAMP'
              : never;
type DdlName<N extends string> = N extends `\`${infer M}\`` ? M : N extends `${infer M}:` ? DdlName<M> : N;
type FirstWord<S extends string> = S extends `${infer W} ${string}` ? W : S;
/** One "name TYPE" part as [name, type], or never when the types cannot read it. */
type DdlColumn<P extends string> = Trim<P> extends `${infer N} ${infer Rest}` ? [DdlName<N>, DdlType<FirstWord<Trim<Rest>>>] : never;
// biome-ignore lint/complexity/noBannedTypes: {} is the identity of the intersection that accumulates the columns
type DdlColumns<Parts extends string[], Acc extends FrameColumns = {}> = Parts extends [infer H extends string, ...infer T extends string[]]
  ? DdlColumn<H> extends [infer N extends string, infer C extends ColumnType]
    ? DdlColumns<T, Acc & { [K in N]: C }>
    : AnyColumns
  : Simplify<Acc>;
/** The columns a Spark DDL string declares: `SchemaColumns<'user STRING, amount DOUBLE'>` is `{ user: 'STRING'; amount: 'DOUBLE' }`. */
export type SchemaColumns<D extends string> = string extends D ? AnyColumns : DdlColumns<SplitComma<D>>;

export type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type Names<C> = keyof C & string;
type Known<C> = string extends keyof C ? false : true;
export type ColumnsOfType<C, T> = Known<C> extends true ? { [K in keyof C]: C[K] extends T ? K : never }[keyof C] & string : string;

/**
 * A value as functions given to filter/withColumn see it: TIMESTAMP (and a window's start and end)
 * as epoch **microseconds**, a number when it is a safe integer (years 1685 to 2255) and a bigint
 * beyond, as a BIGINT is (before issue 29 it was epoch milliseconds: a breaking change).
 */
export type InputValue<T> = T extends 'STRING'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'WINDOW'
      ? { readonly start: number | bigint; readonly end: number | bigint }
      : T extends 'LONG' | 'TIMESTAMP'
        ? number | bigint | null
        : number | null;
/**
 * A value in an emitted row: TIMESTAMP as ISO text, NaN and the infinities of a DOUBLE as Spark's
 * JSON writer spells them, a BIGINT beyond ±(2^53 − 1) as the string of its digits (FORMAT-3).
 */
export type OutputValue<T> = T extends 'STRING' | 'TIMESTAMP'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'DOUBLE'
      ? number | 'NaN' | 'Infinity' | '-Infinity' | null
      : T extends 'WINDOW'
        ? { readonly start: string; readonly end: string }
        : T extends 'LONG'
          ? number | string | null
          : number | null;
/** A row as filter/withColumn functions see it. */
export type InputRowOf<C extends FrameColumns> = Known<C> extends true ? Simplify<{ [K in keyof C]: InputValue<C[K]> }> : Row;
/** A row the query emits, as the sinks write it and `RunReport` rows hold it. */
export type OutputRowOf<C extends FrameColumns> = Simplify<{ [K in keyof C]: OutputValue<C[K]> }>;
/** The output row type of a plan: `RowOf<typeof plan>`. */
export type RowOf<P> = P extends QueryPlan<infer R> ? R : never;

/** What groupBy takes for a frame with columns C. */
export type GroupArg<C extends FrameColumns> =
  | Names<C>
  | ColumnKey<Names<C>>
  | WindowKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>>
  | SessionKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>>;
type KeyColumn<C extends FrameColumns, K> =
  K extends WindowKey<string>
    ? { window: 'WINDOW' }
    : K extends SessionKey<string>
      ? { session_window: 'WINDOW' }
      : K extends ColumnKey<infer N>
        ? { [P in N]: C[N] }
        : K extends string
          ? { [P in K]: C[K] }
          : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
export type KeyColumns<C extends FrameColumns, K extends readonly unknown[]> =
  Known<C> extends false ? AnyColumns : UnionToIntersection<{ [I in keyof K]: KeyColumn<C, K[I]> }[number]> & {};

type NumericType = 'INT' | 'LONG' | 'DOUBLE' | 'TIMESTAMP';
/** The aggregates a frame with columns C accepts (sum and avg need a numeric column). */
export type AggArg<C extends FrameColumns> =
  Known<C> extends false
    ? AggBuilder | AggSpec
    :
        | AggBuilder<string, 'count', Names<C> | undefined>
        | AggBuilder<string, 'sum' | 'avg', ColumnsOfType<C, NumericType>>
        | AggBuilder<string, 'min' | 'max' | 'first' | 'last' | 'approxCountDistinct', Names<C>>
        | AggSpec;
type AggType<C extends FrameColumns, F extends AggFn, Col> = F extends 'count' | 'approxCountDistinct'
  ? 'LONG'
  : F extends 'avg'
    ? 'DOUBLE'
    : Col extends keyof C
      ? F extends 'sum'
        ? C[Col] extends 'INT' | 'LONG'
          ? 'LONG'
          : 'DOUBLE'
        : C[Col]
      : ColumnType;
type AggColumn<C extends FrameColumns, A> =
  A extends AggBuilder<infer N, infer F, infer Col> ? { [P in N]: AggType<C, F, Col> } : A extends AggSpec ? AnyColumns : never;
export type AggColumns<C extends FrameColumns, A extends readonly unknown[]> =
  Known<C> extends false ? AnyColumns : UnionToIntersection<{ [I in keyof A]: AggColumn<C, A[I]> }[number]> & {};

/** What `join` takes as `on` for a stream with columns C and a table with columns T. */
export type JoinOnArg<C extends FrameColumns, T extends FrameColumns> = (Names<C> & Names<T>) | { readonly left: Names<C>; readonly right: Names<T> };
type UsingKeys<O> = O extends readonly (infer E)[] ? Extract<E, string> : Extract<O, string>;
type IsSemi<J> = Lowercase<J & string> extends 'leftsemi' | 'left_semi' | 'semi' ? true : false;
/** The columns after a stream-static join: the stream's, then the table's but its string keys (leftSemi: the stream's). */
export type JoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> =
  IsSemi<J> extends true ? C : Known<C> extends false ? AnyColumns : Known<T> extends false ? AnyColumns : Simplify<C & Omit<T, UsingKeys<O>>>;

/** The columns after a stream-stream join: the string keys, the left's other columns, the right's (leftSemi: the left's). */
export type StreamJoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> = JoinedColumns<C, T, O, J>;
