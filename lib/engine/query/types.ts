/**
 * The query API's type-level helpers: a frame's columns read from the schema's DDL, the row types
 * functions see and queries emit, and what groupBy, agg and join accept for given columns.
 */
import type { Json, OutputRow, Row } from '../ports';
import type { ColumnType } from '../schema';
import type {
  AggFn,
  AggSpec,
  BitAggFn,
  BooleanAggFn,
  ByAggFn,
  CollectAggFn,
  ColumnKey,
  PairAggFn,
  QueryPlan,
  SessionKey,
  StatisticalAggFn,
  WindowKey,
} from '../plan/types';
import type { AggBuilder, GeneratorItem } from './functions';
import type { Column } from './column';
import type { FrameType } from './column-types';

// ------------------------------------------------------------------------- types for the user
//
// The builders carry the frame's columns as a type parameter (column name to ColumnType), read
// from the schema's DDL when it is a literal string, so that a typo in a column name or a window
// over a non-TIMESTAMP column is a compile error, and `.plan()` returns a QueryPlan whose output
// row type names the grouping keys and the aliases. With a schema that is not a literal (a
// `string` variable) every column name is accepted and rows are loosely typed, as before.

/**
 * A column's type as the types see it: a ColumnType, or the structure of a nested one read from a
 * literal DDL (`ARRAY<STRUCT<sku: STRING>>` is `{ kind: 'ARRAY'; element: { kind: 'STRUCT'; fields:
 * { sku: 'STRING' } } }`). A bare 'ARRAY', 'MAP' or 'STRUCT' (withColumn's type) has no structure.
 */
export type TypeOf = ColumnType | ArrayOf | MapOf | StructOf;
/** ARRAY<element> at the type level. */
export interface ArrayOf<E = unknown> {
  readonly kind: 'ARRAY';
  readonly element: E;
}
/** MAP<STRING, value> at the type level. */
export interface MapOf<V = unknown> {
  readonly kind: 'MAP';
  readonly value: V;
}
/** STRUCT<fields> at the type level: field name to its type. */
export interface StructOf<F = Record<string, unknown>> {
  readonly kind: 'STRUCT';
  readonly fields: F;
}
/** A frame's columns: name to type. `window` / `session_window` of an aggregation are 'WINDOW'. */
export type FrameColumns = Record<string, TypeOf | 'WINDOW'>;
/** The columns of a frame whose schema the types cannot read: any name, any type. */
export type AnyColumns = Record<string, TypeOf | 'WINDOW'>;

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
/** The occurrences of Ch in S, as a tuple (one step per occurrence, not per character: the compiler stays fast). */
type Occurrences<S extends string, Ch extends string, N extends 0[] = []> = S extends `${string}${Ch}${infer R}` ? Occurrences<R, Ch, [...N, 0]> : N;
/** Whether S closes every '<' and '(' it opens. */
type Balanced<S extends string> = [...Occurrences<S, '<'>, ...Occurrences<S, '('>]['length'] extends [...Occurrences<S, '>'>, ...Occurrences<S, ')'>]['length']
  ? true
  : false;
/** The parts of S between its top-level commas: the commas inside `<...>` and `(...)` stay in their part. */
type SplitTop<S extends string> = JoinParts<SplitComma<S>>;
type JoinParts<P extends string[], Cur extends string | null = null, Acc extends string[] = []> = P extends [
  infer H extends string,
  ...infer T extends string[],
]
  ? Cur extends string
    ? Balanced<`${Cur},${H}`> extends true
      ? JoinParts<T, null, [...Acc, `${Cur},${H}`]>
      : JoinParts<T, `${Cur},${H}`, Acc>
    : Balanced<H> extends true
      ? JoinParts<T, null, [...Acc, H]>
      : JoinParts<T, H, Acc>
  : Cur extends string
    ? [...Acc, Cur]
    : Acc;
type Primitive<U extends string> = U extends 'STRING' | 'VARCHAR' | 'CHAR' | 'TEXT' | `VARCHAR(${string})` | `CHAR(${string})`
  ? 'STRING'
  : U extends 'INT' | 'INTEGER' | 'SMALLINT' | 'SHORT' | 'TINYINT' | 'BYTE'
    ? 'INT'
    : U extends 'LONG' | 'BIGINT'
      ? 'LONG'
      : U extends 'DOUBLE' | 'FLOAT' | 'REAL'
        ? 'DOUBLE'
        : U extends 'BOOLEAN' | 'BOOL'
          ? 'BOOLEAN'
          : U extends 'TIMESTAMP' | 'TIMESTAMP_LTZ'
            ? 'TIMESTAMP'
            : U extends 'DATE'
              ? 'DATE'
              : U extends 'DECIMAL' | 'DEC' | 'NUMERIC' | `${'DECIMAL' | 'DEC' | 'NUMERIC'}(${string})`
                ? 'DECIMAL'
                : never;
/** The text between a type's first '<' and its last '>'. */
type Inner<T extends string> = T extends `${string}<${infer I}>` ? I : never;
/** One DDL type (trimmed), or never when the types cannot read it (then the frame is untyped). */
type DdlType<T extends string> =
  Uppercase<T> extends `ARRAY<${string}`
    ? Wrap<DdlType<Trim<Inner<T>>>, 'ARRAY'>
    : Uppercase<T> extends `MAP<${string}`
      ? SplitTop<Inner<T>> extends [infer K extends string, infer V extends string]
        ? DdlType<Trim<K>> extends 'STRING'
          ? Wrap<DdlType<Trim<V>>, 'MAP'>
          : never
        : never
      : Uppercase<T> extends `STRUCT<${string}`
        ? Trim<Inner<T>> extends ''
          ? StructOf<Record<never, never>>
          : Wrap<DdlFields<SplitTop<Inner<T>>>, 'STRUCT'>
        : Primitive<Uppercase<T>>;
type Wrap<T, K extends 'ARRAY' | 'MAP' | 'STRUCT'> = [T] extends [never] ? never : K extends 'ARRAY' ? ArrayOf<T> : K extends 'MAP' ? MapOf<T> : StructOf<T>;
/** A field's type text without what follows the type (NOT NULL, COMMENT '...'). */
type TypeText<T extends string> = T extends `${infer H} NOT NULL${string}`
  ? TypeText<TrimRight<H>>
  : T extends `${infer H} not null${string}`
    ? TypeText<TrimRight<H>>
    : T extends `${infer H} COMMENT ${string}`
      ? TrimRight<H>
      : T extends `${infer H} comment ${string}`
        ? TrimRight<H>
        : T;
/** A field's name and the rest: `` `odd name` TYPE``, `name: TYPE`, `name:TYPE` or `name TYPE`. */
type NameAndRest<P extends string> = P extends `\`${infer N}\`${infer R}`
  ? [N, R]
  : P extends `${infer N}:${infer R}`
    ? N extends `${string} ${string}`
      ? P extends `${infer M} ${infer S}`
        ? [M, S]
        : never
      : [N, R]
    : P extends `${infer N} ${infer R}`
      ? [N, R]
      : never;
/** One "name TYPE" part as [name, type], or never when the types cannot read it. */
type DdlColumn<P extends string> =
  NameAndRest<Trim<P>> extends [infer N extends string, infer R extends string] ? [N, DdlType<TypeText<Trim<R extends `:${infer S}` ? S : R>>>] : never;
/** The fields of a DDL list, or never when one of them cannot be read. */
// biome-ignore lint/complexity/noBannedTypes: {} is the identity of the intersection that accumulates the columns
type DdlFields<Parts extends string[], Acc = {}> = Parts extends [infer H extends string, ...infer T extends string[]]
  ? DdlColumn<H> extends [infer N extends string, infer C]
    ? [C] extends [never]
      ? never
      : DdlFields<T, Acc & { [K in N]: C }>
    : never
  : Simplify<Acc>;
/** A type named by a ColumnType or written in DDL (`DdlTypeOf<'DECIMAL(21,2)'>` is 'DECIMAL'); any type when the types cannot read it. */
export type DdlTypeOf<T extends string> = T extends ColumnType
  ? T
  : string extends T
    ? TypeOf
    : DdlType<Trim<T>> extends infer R
      ? [R] extends [never]
        ? TypeOf
        : R
      : TypeOf;
/**
 * The columns a Spark DDL string declares: `SchemaColumns<'user STRING, amount DOUBLE'>` is
 * `{ user: 'STRING'; amount: 'DOUBLE' }`; nested types give their structure (TypeOf).
 */
export type SchemaColumns<D extends string> = string extends D
  ? AnyColumns
  : DdlFields<SplitTop<D>> extends infer R
    ? [R] extends [never]
      ? AnyColumns
      : R extends FrameColumns
        ? R
        : AnyColumns
    : AnyColumns;

export type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type Names<C> = keyof C & string;
/** The columns after `drop(...names)`: C without them (names C does not have change nothing, as in Spark). */
export type DroppedColumns<C, K extends string> =
  Known<C> extends true ? (Simplify<Omit<C, K>> extends infer R extends FrameColumns ? R : AnyColumns) : AnyColumns;
/** The columns after `withColumnRenamed(existing, name)`: C with `existing` under `name`, in its place. */
export type RenamedColumns<C, E extends string, N extends string> =
  Known<C> extends true ? (Simplify<{ [K in keyof C as K extends E ? N : K]: C[K] }> extends infer R extends FrameColumns ? R : AnyColumns) : AnyColumns;
type Known<C> = string extends keyof C ? false : true;
export type ColumnsOfType<C, T> = Known<C> extends true ? { [K in keyof C]: C[K] extends T ? K : never }[keyof C] & string : string;

/**
 * A value as functions given to filter/withColumn see it: TIMESTAMP (and a window's start and end)
 * as epoch **microseconds**, a number when it is a safe integer (years 1685 to 2255) and a bigint
 * beyond, as a BIGINT is (earlier versions gave epoch milliseconds: a breaking change); DECIMAL
 * as its canonical text ("12.30", exactly `scale` digits after the point), DATE as "YYYY-MM-DD",
 * ARRAY as an array, MAP and STRUCT as objects (a STRUCT has every field it declares).
 */
export type InputValue<T> = T extends 'STRING' | 'DECIMAL' | 'DATE'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'WINDOW'
      ? { readonly start: number | bigint; readonly end: number | bigint }
      : T extends 'LONG' | 'TIMESTAMP'
        ? number | bigint | null
        : T extends ArrayOf<infer E>
          ? InputValue<E>[] | null
          : T extends MapOf<infer V>
            ? Record<string, InputValue<V>> | null
            : T extends StructOf<infer F>
              ? { [K in keyof F]: InputValue<F[K]> } | null
              : T extends 'ARRAY'
                ? unknown[] | null
                : T extends 'MAP' | 'STRUCT'
                  ? Record<string, unknown> | null
                  : number | null;
/**
 * A value in an emitted row: TIMESTAMP as ISO text, NaN and the infinities of a DOUBLE as Spark's
 * JSON writer spells them, a BIGINT beyond ±(2^53 − 1) as the string of its digits, a DECIMAL as
 * its canonical text (FORMAT-3); nested values the same at any depth.
 */
export type OutputValue<T> = T extends 'STRING' | 'TIMESTAMP' | 'DECIMAL' | 'DATE'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'DOUBLE'
      ? number | 'NaN' | 'Infinity' | '-Infinity' | null
      : T extends 'WINDOW'
        ? { readonly start: string; readonly end: string }
        : T extends 'LONG'
          ? number | string | null
          : T extends ArrayOf<infer E>
            ? OutputValue<E>[] | null
            : T extends MapOf<infer V>
              ? Record<string, OutputValue<V>> | null
              : T extends StructOf<infer F>
                ? { [K in keyof F]: OutputValue<F[K]> } | null
                : T extends 'ARRAY'
                  ? Json[] | null
                  : T extends 'MAP' | 'STRUCT'
                    ? { [k: string]: Json } | null
                    : number | null;
// ------------------------------------------------------------------------ nested fields by path
//
// A nested value is named by a path, as in Spark: `customer.country` (a STRUCT's field),
// `lines[0]` (an ARRAY's element, 0-based), `attrs['color']` (a MAP's value), to any depth
// (`lines[0].sku`). The types list the paths a frame's columns have, so that a typo in a nested
// field is a compile error, and give a path's type and the name Spark gives its column.

/** An aggregation's window column to a path: Spark's STRUCT<start: TIMESTAMP, end: TIMESTAMP>. */
type WindowStruct = StructOf<{ start: 'TIMESTAMP'; end: 'TIMESTAMP' }>;
/** T, with a window column as the struct it is to a path. */
type Pathed<T> = T extends 'WINDOW' ? WindowStruct : T;

type PathsOf<T0, P extends string, D extends 0[], T = Pathed<T0>> =
  | P
  | (D['length'] extends 5
      ? never
      : T extends StructOf<infer F>
        ? { [K in keyof F & string]: PathsOf<F[K], `${P}.${K}`, [...D, 0]> }[keyof F & string]
        : T extends ArrayOf<infer E>
          ?
              | PathsOf<E, `${P}[${number}]`, [...D, 0]>
              // an array of structs: a field of every element (`lines.sku`, an ARRAY)
              | (E extends StructOf<infer F> ? { [K in keyof F & string]: PathsOf<ArrayOf<F[K]>, `${P}.${K}`, [...D, 0]> }[keyof F & string] : never)
          : T extends MapOf<infer V>
            ? PathsOf<V, `${P}['${string}']`, [...D, 0]>
            : never);
/** The columns and nested paths of a frame with columns C (any string when C is not known). */
export type ColumnPaths<C> = Known<C> extends true ? { [K in keyof C & string]: PathsOf<C[K], K, []> }[keyof C & string] : string;
/** The paths of C that are STRUCTs, with `.*` after them: `select('customer.*')`. */
type StarPaths<C> =
  Known<C> extends true ? { [P in ColumnPaths<C>]: Pathed<PathInfo<C, P>[0]> extends StructOf ? `${P}.*` : never }[ColumnPaths<C>] : `${string}.*`;
/** The paths of C whose value is an ARRAY or a MAP: what explode takes. */
type ExplodablePaths<C> =
  Known<C> extends true ? { [P in ColumnPaths<C>]: PathInfo<C, P>[0] extends ArrayOf | MapOf | 'ARRAY' | 'MAP' ? P : never }[ColumnPaths<C>] : string;

/** A path's first name: `lines` of `lines[0].sku`. */
type Head<S extends string> = S extends `${infer N}[${string}` ? (N extends `${infer M}.${string}` ? M : N) : S extends `${infer M}.${string}` ? M : S;
type Unquote<K extends string> = K extends `'${infer U}'` ? U : K extends `"${infer U}"` ? U : K;
/** The type at the rest of a path and the column name Spark gives it: a field's own name, else the path's text. */
type Walk<T0, Rest extends string, Text extends string, Name extends string, T = Pathed<T0>> = Rest extends ''
  ? [T0, Name]
  : Rest extends `.${infer R}`
    ? T extends StructOf<infer F>
      ? Head<R> extends infer N extends keyof F & string
        ? R extends `${N}${infer After}`
          ? Walk<F[N], After, `${Text}.${N}`, N>
          : never
        : never
      : T extends ArrayOf<StructOf<infer F>>
        ? Head<R> extends infer N extends keyof F & string
          ? R extends `${N}${infer After}`
            ? Walk<ArrayOf<F[N]>, After, `${Text}.${N}`, N>
            : never
          : never
        : never
    : Rest extends `[${infer I}]${infer R}`
      ? T extends ArrayOf<infer E>
        ? Walk<E, R, `${Text}[${I}]`, `${Text}[${I}]`>
        : T extends MapOf<infer V>
          ? Walk<V, R, `${Text}[${Unquote<I>}]`, `${Text}[${Unquote<I>}]`>
          : never
      : never;
/** A column or path of C as [its type, its output column's name]: `PathInfo<C, 'customer.country'>` is `['STRING', 'country']`. */
export type PathInfo<C, S extends string> = S extends keyof C
  ? [C[S], S]
  : Head<S> extends infer N extends keyof C & string
    ? S extends `${N}${infer R}`
      ? Walk<C[N], R, N, N>
      : [never, never]
    : [never, never];
/** The column one select item gives: a column, a path (named as Spark names it), or a STRUCT's fields for `path.*`. */
type SelectItemColumns<C, I> = I extends `${infer P}.*`
  ? Pathed<PathInfo<C, P>[0]> extends StructOf<infer F>
    ? F
    : AnyColumns
  : I extends string
    ? { [K in PathInfo<C, I>[1]]: PathInfo<C, I>[0] }
    : I extends GeneratorItem<infer P, infer Pos, boolean, infer A>
      ? GeneratorColumns<PathInfo<C, P>[0], Pos, A>
      : I extends Column<infer T, infer N>
        ? string extends N
          ? AnyColumns
          : { [K in N]: FrameType<T> }
        : AnyColumns;
/** The columns explode/posexplode give: `col` (or `key`, `value` of a MAP), after `pos` for posexplode; renamed by `.as(...)`. */
type GeneratorColumns<T, Pos extends boolean, A> = Named<
  T extends ArrayOf<infer E>
    ? Pos extends true
      ? [['pos', 'INT'], ['col', E]]
      : [['col', E]]
    : T extends MapOf<infer V>
      ? Pos extends true
        ? [['pos', 'INT'], ['key', 'STRING'], ['value', V]]
        : [['key', 'STRING'], ['value', V]]
      : T extends 'MAP'
        ? Pos extends true
          ? [['pos', 'INT'], ['key', 'STRING'], ['value', TypeOf]]
          : [['key', 'STRING'], ['value', TypeOf]]
        : Pos extends true
          ? [['pos', 'INT'], ['col', TypeOf]]
          : [['col', TypeOf]],
  A
>;
// biome-ignore lint/complexity/noBannedTypes: {} is the identity of the intersection that accumulates the columns
type Named<L, A, Acc = {}> = L extends [[infer N extends string, infer T], ...infer R]
  ? A extends readonly [infer M extends string, ...infer AR]
    ? Named<R, AR, Acc & { [K in M]: T }>
    : Named<R, A, Acc & { [K in N]: T }>
  : Acc;
/** The columns after `select(...items)`. */
export type SelectColumns<C extends FrameColumns, K extends readonly unknown[]> =
  Known<C> extends false
    ? AnyColumns
    : Simplify<UnionToIntersection<{ [I in keyof K]: SelectItemColumns<C, K[I]> }[number]>> extends infer R extends FrameColumns
      ? R
      : AnyColumns;
/** What select takes for a frame with columns C: columns, paths, `struct.*`, an explode, Columns (the functions module's: a Column's name and type give the output column's when the types know them). */
export type SelectArg<C extends FrameColumns> =
  | ColumnPaths<C>
  | StarPaths<C>
  | GeneratorItem<ExplodablePaths<C>, boolean, boolean, readonly string[] | null>
  | Column;

/** A row as filter/withColumn functions see it. */
export type InputRowOf<C extends FrameColumns> = Known<C> extends true ? Simplify<{ [K in keyof C]: InputValue<C[K]> }> : Row;
/** A row the query emits, as the sinks write it and `RunReport` rows hold it. */
export type OutputRowOf<C extends FrameColumns> = Known<C> extends true ? Simplify<{ [K in keyof C]: OutputValue<C[K]> }> : OutputRow;
/** The output row type of a plan: `RowOf<typeof plan>`. */
export type RowOf<P> = P extends QueryPlan<infer R> ? R : never;

/** What groupBy takes for a frame with columns C. */
export type GroupArg<C extends FrameColumns> =
  | Column
  | ColumnPaths<C>
  | ColumnKey<ColumnPaths<C>>
  | WindowKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>>
  | SessionKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>>;
type KeyColumn<C extends FrameColumns, K> =
  K extends WindowKey<string>
    ? { window: 'WINDOW' }
    : K extends SessionKey<string>
      ? { session_window: 'WINDOW' }
      : K extends ColumnKey<infer N>
        ? { [P in PathInfo<C, N>[1]]: PathInfo<C, N>[0] }
        : K extends string
          ? { [P in PathInfo<C, K>[1]]: PathInfo<C, K>[0] }
          : K extends Column<infer T, infer N>
            ? string extends N
              ? AnyColumns
              : { [P in N]: FrameType<T> }
            : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
export type KeyColumns<C extends FrameColumns, K extends readonly unknown[]> =
  Known<C> extends false ? AnyColumns : Column extends K[number] ? AnyColumns : UnionToIntersection<{ [I in keyof K]: KeyColumn<C, K[I]> }[number]> & {};

type NumericType = 'INT' | 'LONG' | 'DOUBLE' | 'DECIMAL' | 'TIMESTAMP';
/** The aggregates a frame with columns C accepts (sum and avg need a numeric column). */
export type AggArg<C extends FrameColumns> =
  Known<C> extends false
    ? AggBuilder | AggSpec
    :
        | AggBuilder<string, 'count', Names<C> | undefined>
        | AggBuilder<
            string,
            | 'sum'
            | 'avg'
            | 'try_sum'
            | 'try_avg'
            | 'median'
            | 'percentile'
            | 'percentile_disc'
            | 'percentile_approx'
            | 'product'
            | StatisticalAggFn
            | PairAggFn,
            ColumnsOfType<C, NumericType>
          >
        | AggBuilder<string, BooleanAggFn, ColumnsOfType<C, 'BOOLEAN'>>
        | AggBuilder<string, BitAggFn, ColumnsOfType<C, 'INT' | 'LONG'>>
        | AggBuilder<string, 'min' | 'max' | 'first' | 'any_value' | 'last' | 'mode' | 'approxCountDistinct' | 'listagg' | CollectAggFn | ByAggFn, Names<C>>
        | AggBuilder<string, AggFn, Column>
        | AggSpec;
/** The type of an aggregate whose type does not depend on its input's (never: it does). */
type FixedAggType<F extends AggFn> = F extends 'count' | 'approxCountDistinct' | 'count_if' | 'regr_count'
  ? 'LONG'
  : F extends 'regr_avgx' | 'regr_avgy'
    ? 'DOUBLE' | 'DECIMAL' // avg's type of x or y
    : F extends StatisticalAggFn | PairAggFn | 'median' | 'percentile' | 'percentile_disc' | 'product'
      ? 'DOUBLE'
      : F extends 'listagg'
        ? 'STRING'
        : F extends BooleanAggFn
          ? 'BOOLEAN'
          : F extends CollectAggFn
            ? 'ARRAY'
            : never;
type AggType<C extends FrameColumns, F extends AggFn, Col> = [FixedAggType<F>] extends [never]
  ? Col extends keyof C
    ? F extends 'sum' | 'avg' | 'try_sum' | 'try_avg'
      ? C[Col] extends 'DECIMAL'
        ? 'DECIMAL' // sum: DECIMAL(min(38, p + 10), s); avg: DECIMAL(min(38, p + 4), min(38, s + 4))
        : F extends 'avg' | 'try_avg'
          ? 'DOUBLE'
          : C[Col] extends 'INT' | 'LONG'
            ? 'LONG'
            : 'DOUBLE'
      : C[Col]
    : F extends 'avg' | 'try_avg'
      ? 'DOUBLE'
      : ColumnType
  : FixedAggType<F>;
/** The type of an aggregate of a Column of type T (the functions module's: `sum(frame.col('amount'))`). */
type ColumnAggType<F extends AggFn, T> = [FixedAggType<F>] extends [never]
  ? F extends 'sum' | 'avg' | 'try_sum' | 'try_avg'
    ? [T] extends ['DECIMAL']
      ? 'DECIMAL'
      : F extends 'avg' | 'try_avg'
        ? 'DOUBLE'
        : [T] extends ['INT' | 'LONG']
          ? 'LONG'
          : [T] extends ['DOUBLE']
            ? 'DOUBLE'
            : TypeOf
    : FrameType<T>
  : FixedAggType<F>;
type AggColumn<C extends FrameColumns, A> =
  A extends AggBuilder<infer N, infer F, Column<infer T, string>>
    ? string extends N
      ? AnyColumns
      : { [P in N]: ColumnAggType<F, T> }
    : A extends AggBuilder<infer N, infer F, infer Col>
      ? { [P in N]: AggType<C, F, Col> }
      : A extends AggSpec
        ? AnyColumns
        : never;
export type AggColumns<C extends FrameColumns, A extends readonly unknown[]> =
  Known<C> extends false ? AnyColumns : UnionToIntersection<{ [I in keyof A]: AggColumn<C, A[I]> }[number]> & {};

/** What `join` takes as `on` for a stream with columns C and a table with columns T. */
export type JoinOnArg<C extends FrameColumns, T extends FrameColumns> = (Names<C> & Names<T>) | { readonly left: Names<C>; readonly right: Names<T> };
type UsingKeys<O> = O extends readonly (infer E)[] ? Extract<E, string> : Extract<O, string>;
type IsSemi<J> = Lowercase<J & string> extends 'leftsemi' | 'left_semi' | 'semi' | 'leftanti' | 'left_anti' | 'anti' ? true : false;
/** The columns after a stream-static join: the stream's, then the table's but its string keys (leftSemi and leftAnti: the stream's). */
export type JoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> =
  IsSemi<J> extends true ? C : Known<C> extends false ? AnyColumns : Known<T> extends false ? AnyColumns : Simplify<C & Omit<T, UsingKeys<O>>>;

/** The columns after a stream-stream join: the string keys, the left's other columns, the right's (leftSemi: the left's). */
export type StreamJoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> = JoinedColumns<C, T, O, J>;

import type { Json as ProcessorJsonValue } from '../tws/api';

/**
 * A value as a transformWithState processor sees it (FORMAT-4 "Values"): TIMESTAMP as epoch
 * milliseconds, numbers as numbers, DECIMAL and DATE as their text, nested types as JSON.
 */
export type ProcessorValue<T> = T extends 'STRING' | 'DECIMAL' | 'DATE'
  ? string
  : T extends 'BOOLEAN'
    ? boolean
    : T extends 'INT' | 'LONG' | 'DOUBLE' | 'TIMESTAMP'
      ? number
      : ProcessorJsonValue;
/** A key or input row of a processor over columns C (a value may be null); an output row of a processor emitting C (a column may be left out). */
export type ProcessorRowOf<C extends FrameColumns> =
  Known<C> extends true ? { [K in keyof C]?: ProcessorValue<C[K]> | null } : { readonly [column: string]: ProcessorJsonValue | undefined };

/**
 * The columns of a union: this stream's when the other's are the same names and types; else
 * known only at run time (a widened type, INT beside DECIMAL, may change how a value is held).
 */
export type UnionColumns<C extends FrameColumns, O extends FrameColumns> = [C] extends [O] ? ([O] extends [C] ? C : AnyColumns) : AnyColumns;
