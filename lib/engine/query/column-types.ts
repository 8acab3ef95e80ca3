/**
 * The types a Column carries: its type (a frame column type, or UnknownType when the types cannot
 * know it) and the rules the functions module follows for the type of a result (Spark's numeric
 * widening, a DOUBLE literal, a struct's field). Where a type is not known the result is
 * UnknownType, which every function takes: the analyzer checks it when a frame uses the column.
 */
import type { Column } from './column';
import type { ArrayOf, DdlTypeOf, MapOf, StructOf, TypeOf } from './types';

export type { ArrayOf, MapOf, StructOf } from './types';

/** The type of a column the types do not know (`expr(...)`, a column named by a string): any function takes it. */
export interface UnknownType {
  readonly kind: 'UNKNOWN';
}
/** A Column's type parameter: a frame column's type, or UnknownType. */
export type ColType = TypeOf | 'WINDOW' | UnknownType;
/** The numeric types. */
export type NumericType = 'INT' | 'LONG' | 'DOUBLE' | 'DECIMAL';
/** A column of type T (or of a type not known). */
export type ColOf<T extends ColType> = Column<T | UnknownType, string>;
/** A function's column argument: a Column of type T or of a type not known, or a column's name (not typed). */
export type ColArg<T extends ColType = ColType> = ColOf<T> | string;

/** The type a column argument has: a Column's, UnknownType for a name. */
export type ArgType<A> = A extends Column<infer T, string> ? T : UnknownType;

/** Whether an integer's text has 10 digits or more (then it may be beyond INT). */
type Long<S extends string, N extends 0[] = []> = N['length'] extends 10
  ? true
  : S extends `${infer C}${infer R}`
    ? Long<R, C extends '-' ? N : [...N, 0]>
    : false;
/**
 * The type of a literal argument as sqlLiteral renders it: an integer of up to 9 digits is INT,
 * another number DOUBLE (10 digits and more, or a `number` that is not a literal: not known).
 */
export type LitType<V> =
  V extends Column<infer T, string>
    ? T
    : V extends string
      ? 'STRING'
      : V extends boolean
        ? 'BOOLEAN'
        : V extends bigint
          ? 'LONG'
          : V extends number
            ? number extends V
              ? UnknownType
              : `${V}` extends `${bigint}`
                ? Long<`${V}`> extends true
                  ? UnknownType
                  : 'INT'
                : 'DOUBLE'
            : V extends Date
              ? 'TIMESTAMP'
              : V extends readonly (infer E)[]
                ? ArrayOf<LitType<E>>
                : UnknownType;

type IsUnknown<T> = [T] extends [UnknownType] ? true : [UnknownType] extends [T] ? true : false;
/** The type of `a + b`, `a - b`, `a * b`, `a % b` (Spark's widening: DOUBLE, then DECIMAL, then BIGINT, then INT). */
export type Arith<A, B> = [A] extends ['DOUBLE']
  ? 'DOUBLE'
  : [B] extends ['DOUBLE']
    ? 'DOUBLE'
    : IsUnknown<A> extends true
      ? UnknownType
      : IsUnknown<B> extends true
        ? UnknownType
        : [A | B] extends [NumericType]
          ? 'DECIMAL' extends A | B
            ? 'DECIMAL'
            : 'LONG' extends A | B
              ? 'LONG'
              : 'INT'
          : UnknownType;
/** The type of `a / b`: DECIMAL when one is DECIMAL and the other is not DOUBLE, else DOUBLE. */
export type Divide<A, B> = Arith<A, B> extends infer R ? ([R] extends ['DECIMAL'] ? 'DECIMAL' : [R] extends [UnknownType] ? UnknownType : 'DOUBLE') : never;
/** The type of a value that is one of A and B (CASE, coalesce): the same type, or the wider number. */
export type Common<A, B> =
  IsUnknown<A> extends true
    ? UnknownType
    : IsUnknown<B> extends true
      ? UnknownType
      : [A] extends [B]
        ? [B] extends [A]
          ? A
          : Arith<A, B>
        : [A | B] extends [NumericType]
          ? Arith<A, B>
          : UnknownType;

/** The field names of a STRUCT type (any string when the type is not known). */
export type FieldName<T> = [T] extends [StructOf<infer F>] ? keyof F & string : string;
/** A STRUCT field's type. */
export type FieldType<T, F extends string> = [T] extends [StructOf<infer Fs>] ? (F extends keyof Fs ? AsColType<Fs[F]> : UnknownType) : UnknownType;
/** An ARRAY's element or a MAP's value type. */
export type ItemType<T> = [T] extends [ArrayOf<infer E>] ? AsColType<E> : [T] extends [MapOf<infer V>] ? AsColType<V> : UnknownType;
/** A type from a frame's TypeOf (a nested element may be typed `unknown`). */
export type AsColType<T> = IsUnknown<T> extends true ? UnknownType : T extends ColType ? (TypeOf extends T ? UnknownType : T) : UnknownType;
/** The type of `CAST(x AS type)` for a DDL type (UnknownType when the types cannot read it). */
export type CastType<S extends string> = DdlTypeOf<S> extends infer R ? (TypeOf extends R ? UnknownType : AsColType<R>) : UnknownType;
/** A column's type as a frame holds it: a type not known is any type (TypeOf). */
export type FrameType<T> = IsUnknown<T> extends true ? TypeOf : T;
