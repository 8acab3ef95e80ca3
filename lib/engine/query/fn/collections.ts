/**
 * pyspark's collection, generator, JSON and hash functions. A value argument (array_contains's
 * value, element_at's index or key) is a literal unless it is a Column.
 */
import { InvalidQueryError } from '../../errors';
import { Column, type Operand } from '../column';
import type { ArgType, ArrayOf, ColArg, ItemType, MapOf, StructOf, UnknownType } from '../column-types';
import type { AnyColumns, SchemaColumns } from '../types';
import { arg, call, litArg, val } from './core';

type Coll = ColArg<ArrayOf | MapOf | 'ARRAY' | 'MAP'>;
type Arr = ColArg<ArrayOf | 'ARRAY'>;

/** `size(a)`: an ARRAY's elements or a MAP's entries (-1 for NULL is Spark's legacy: under ANSI NULL). */
export const size = (c: Coll): Column<'INT'> => call('size', arg(c));
/** `element_at(a, i)` (1-based; negative from the end) or `element_at(m, key)`. */
export const element_at = <const A extends Coll>(c: A, extraction: Operand): Column<ItemType<ArgType<A>>> => call('element_at', arg(c), val(extraction));
/** `array_contains(a, value)`. */
export const array_contains = (c: Arr, value: Operand): Column<'BOOLEAN'> => call('array_contains', arg(c), val(value));
/** `array(a, b, ...)`: an ARRAY of the columns. */
export const array = (...cols: ColArg[]): Column<'ARRAY'> => call('array', ...cols.map(arg));
/** `struct(a, b, ...)`: a STRUCT whose fields are the columns, named as the columns are. */
export const struct = (...cols: ColArg[]): Column<'STRUCT'> => call('struct', ...cols.map(arg));
/** `named_struct('name1', a, 'name2', b, ...)` from an object of name to column. */
export function named_struct(fields: Record<string, ColArg>): Column<'STRUCT'> {
  return call('named_struct', ...Object.entries(fields).flatMap(([k, c]) => [litArg(k, 'named_struct', 'a field name'), arg(c)]));
}
/** pyspark's `create_map(k1, v1, k2, v2, ...)`: `map(...)`. */
export const create_map = (...cols: ColArg[]): Column<'MAP'> => call('map', ...cols.map(arg));
/** `map_keys(m)`. */
export const map_keys = (m: ColArg<MapOf | 'MAP'>): Column<ArrayOf<'STRING'>> => call('map_keys', arg(m));
/** `map_values(m)`. */
export const map_values = <const A extends ColArg<MapOf | 'MAP'>>(m: A): Column<ArrayOf<ItemType<ArgType<A>>>> => call('map_values', arg(m));
/** `array_distinct(a)`. */
export const array_distinct = <const A extends Arr>(a: A): Column<ArgType<A>> => call('array_distinct', arg(a));
/** `array_join(a, delimiter[, nullReplacement])`. */
export function array_join(a: Arr, delimiter: string, nullReplacement?: string): Column<'STRING'> {
  const d = litArg(delimiter, 'array_join', 'a delimiter');
  return nullReplacement === undefined ? call('array_join', arg(a), d) : call('array_join', arg(a), d, litArg(nullReplacement, 'array_join', 'a replacement'));
}
/** `sort_array(a[, asc])`: nulls first ascending, last descending. */
export function sort_array<const A extends Arr>(a: A, asc?: boolean): Column<ArgType<A>> {
  return asc === undefined ? call('sort_array', arg(a)) : call('sort_array', arg(a), litArg(asc, 'sort_array', 'asc'));
}
/** `flatten(a)`: an ARRAY of ARRAYs as one ARRAY. */
export const flatten = <const A extends Arr>(a: A): Column<ItemType<ArgType<A>>> => call('flatten', arg(a));
/** `slice(a, start, length)`: 1-based; a negative start counts from the end. */
export const slice = <const A extends Arr>(a: A, start: number, length: number): Column<ArgType<A>> =>
  call('slice', arg(a), litArg(start, 'slice', 'a start'), litArg(length, 'slice', 'a length'));
/** `array_max(a)`. */
export const array_max = <const A extends Arr>(a: A): Column<ItemType<ArgType<A>>> => call('array_max', arg(a));
/** `array_min(a)`. */
export const array_min = <const A extends Arr>(a: A): Column<ItemType<ArgType<A>>> => call('array_min', arg(a));

// ---------------------------------------------------------------------------- higher-order functions

/** How deep the lambdas being built are nested: a lambda's parameters are named by their depth, so an inner one never hides an outer one. */
let lambdaDepth = 0;

/**
 * pyspark's lambda argument as SQL: `f` is called with a Column per parameter (as many as it
 * declares, or `arity`) and its Column is the body: `(x) => x.plus(1)` is `x_1 -> (x_1 + 1)`.
 */
function lambda(f: (...xs: Column<UnknownType>[]) => Column, fn: string, arities: readonly number[]): string {
  const n = arities.includes(f.length) ? f.length : arities[0];
  lambdaDepth++;
  try {
    const names = Array.from({ length: n }, (_, i) => `${'xyz'[i] ?? 'p'}_${lambdaDepth}`);
    const body = f(...names.map((x) => new Column<UnknownType>(x)));
    if (!(body instanceof Column)) throw new InvalidQueryError(`${fn}: the function must return a Column (F.col, F.lit, x.plus(1), ...), got ${typeof body}`);
    return `${n === 1 ? names[0] : `(${names.join(', ')})`} -> ${body.sql}`;
  } finally {
    lambdaDepth--;
  }
}

/** A lambda of one parameter, as pyspark's `lambda x: ...`: a Column for the parameter in, the body's Column out. */
export type ColumnLambda = (x: Column<UnknownType>) => Column;
/** A lambda of one or two parameters (`(x) => ...` or `(x, i) => ...`). */
export type ColumnLambda2 = (x: Column<UnknownType>, y: Column<UnknownType>) => Column;
/** A lambda of three parameters (map_zip_with's `(k, v1, v2) => ...`). */
export type ColumnLambda3 = (x: Column<UnknownType>, y: Column<UnknownType>, z: Column<UnknownType>) => Column;

/** `transform(a, x -> ...)` or, with two parameters, `(x, i) -> ...` (the 0-based index). */
export const transform = (a: Arr, f: ColumnLambda2): Column<'ARRAY'> => call('transform', arg(a), lambda(f, 'transform', [1, 2]));
/** `filter(a, x -> ...)`: the elements for which the function is true (`(x, i) -> ...` with the index). */
export const filter = <const A extends Arr>(a: A, f: ColumnLambda2): Column<ArgType<A>> => call('filter', arg(a), lambda(f, 'filter', [1, 2]));
/** `exists(a, x -> ...)`: true when the function is true for an element (null when none is and one gave null). */
export const exists = (a: Arr, f: ColumnLambda): Column<'BOOLEAN'> => call('exists', arg(a), lambda(f, 'exists', [1]));
/** `forall(a, x -> ...)`: true when the function is true for every element (null when none is false and one gave null). */
export const forall = (a: Arr, f: ColumnLambda): Column<'BOOLEAN'> => call('forall', arg(a), lambda(f, 'forall', [1]));
/** `aggregate(a, zero, (acc, x) -> ...[, acc -> ...])`: the merge must give the zero's type. */
export function aggregate(a: Arr, zero: Operand, merge: ColumnLambda2, finish?: ColumnLambda): Column<UnknownType> {
  const args = [arg(a), val(zero), lambda(merge, 'aggregate', [2])];
  return call('aggregate', ...(finish ? [...args, lambda(finish, 'aggregate', [1])] : args));
}
/** `zip_with(a, b, (x, y) -> ...)`: element by element, the shorter array padded with nulls. */
export const zip_with = (a: Arr, b: Arr, f: ColumnLambda2): Column<'ARRAY'> => call('zip_with', arg(a), arg(b), lambda(f, 'zip_with', [2]));
/** `array_sort(a[, (left, right) -> INT])`: ascending with nulls last, or by the comparator. */
export function array_sort<const A extends Arr>(a: A, comparator?: ColumnLambda2): Column<ArgType<A>> {
  return comparator ? call('array_sort', arg(a), lambda(comparator, 'array_sort', [2])) : call('array_sort', arg(a));
}
/** `map_filter(m, (k, v) -> ...)`. */
export const map_filter = <const M extends ColArg<MapOf | 'MAP'>>(m: M, f: ColumnLambda2): Column<ArgType<M>> =>
  call('map_filter', arg(m), lambda(f, 'map_filter', [2]));
/** `transform_values(m, (k, v) -> ...)`. */
export const transform_values = (m: ColArg<MapOf | 'MAP'>, f: ColumnLambda2): Column<'MAP'> =>
  call('transform_values', arg(m), lambda(f, 'transform_values', [2]));
/** `transform_keys(m, (k, v) -> ...)`. */
export const transform_keys = (m: ColArg<MapOf | 'MAP'>, f: ColumnLambda2): Column<'MAP'> => call('transform_keys', arg(m), lambda(f, 'transform_keys', [2]));
/** `map_zip_with(m1, m2, (k, v1, v2) -> ...)`: one entry per key of either map (v1 or v2 null where that map lacks the key). */
export const map_zip_with = (m1: ColArg<MapOf | 'MAP'>, m2: ColArg<MapOf | 'MAP'>, f: ColumnLambda3): Column<'MAP'> =>
  call('map_zip_with', arg(m1), arg(m2), lambda(f, 'map_zip_with', [3]));

// ---------------------------------------------------------------------------- generators (select only)

/** `explode(a)`: one row per element (column `col`; a MAP's `key` and `value`); name it with `.as('x')`. Only in a select. */
export const explode = (c: Coll): Column<UnknownType> => call('explode', arg(c));
/** `explode_outer(a)`: as explode, one row of nulls for a NULL or empty input. */
export const explode_outer = (c: Coll): Column<UnknownType> => call('explode_outer', arg(c));
/** `posexplode(a)`: as explode, with the 0-based position `pos` first. */
export const posexplode = (c: Coll): Column<UnknownType> => call('posexplode', arg(c));
/** `inline(a)`: an ARRAY of STRUCTs, one row per element with the struct's fields as columns. Only in a select. */
export const inline = (c: Arr): Column<UnknownType> => call('inline', arg(c));
/** `stack(n, v1, ..., vk)`: n rows of the values in order, columns `col0`, `col1`... (`selectExpr("stack(...) AS (name, value)")` names them). Only in a select. */
export const stack = (n: number, ...values: Operand[]): Column<UnknownType> => call('stack', litArg(n, 'stack', 'the number of rows'), ...values.map(val));
/** `inline_outer(a)`: as inline, one row of nulls for a NULL or empty input. */
export const inline_outer = (c: Arr): Column<UnknownType> => call('inline_outer', arg(c));
/** `posexplode_outer(a)`. */
export const posexplode_outer = (c: Coll): Column<UnknownType> => call('posexplode_outer', arg(c));

// ---------------------------------------------------------------------------- JSON

/** The STRUCT from_json gives for a DDL schema the types can read. */
type JsonStruct<S extends string> = SchemaColumns<S> extends infer C ? (AnyColumns extends C ? UnknownType : StructOf<C>) : UnknownType;
/** `from_json(s, 'a INT, b DOUBLE')`: the JSON text as a STRUCT (typed as the JSON reader types input). */
export const from_json = <const S extends string>(s: ColArg<'STRING'>, schema: S): Column<JsonStruct<S>> =>
  call('from_json', arg(s), litArg(schema, 'from_json', 'a DDL schema'));
/** `to_json(v)`: a STRUCT, MAP or ARRAY as JSON text. */
export const to_json = (v: ColArg<StructOf | MapOf | ArrayOf | 'STRUCT' | 'MAP' | 'ARRAY'>): Column<'STRING'> => call('to_json', arg(v));
/** `get_json_object(s, '$.a.b[1]')`: the value at the path, as text. */
export const get_json_object = (s: ColArg<'STRING'>, path: string): Column<'STRING'> =>
  call('get_json_object', arg(s), litArg(path, 'get_json_object', 'a JSON path'));

// ---------------------------------------------------------------------------- hashes

/** `md5(s)`: hex. */
export const md5 = (s: ColArg<'STRING'>): Column<'STRING'> => call('md5', arg(s));
/** `sha1(s)`: hex. */
export const sha1 = (s: ColArg<'STRING'>): Column<'STRING'> => call('sha1', arg(s));
/** `sha2(s, numBits)`: 224, 256, 384 or 512 bits (0 is 256), hex. */
export const sha2 = (s: ColArg<'STRING'>, numBits: number): Column<'STRING'> => call('sha2', arg(s), litArg(numBits, 'sha2', 'a number of bits'));
/** `crc32(s)`. */
export const crc32 = (s: ColArg<'STRING'>): Column<'LONG'> => call('crc32', arg(s));
/** `hash(a, b, ...)`: Spark's Murmur3 (seed 42). */
export const hash = (...cols: ColArg[]): Column<'INT'> => call('hash', ...cols.map(arg));
/** `xxhash64(a, b, ...)`: Spark's XXH64 (seed 42). */
export const xxhash64 = (...cols: ColArg[]): Column<'LONG'> => call('xxhash64', ...cols.map(arg));
/** `sha(s)`: sha1. */
export const sha = (s: ColArg<'STRING'>): Column<'STRING'> => call('sha', arg(s));

// ---------------------------------------------------------------------------- more names Spark has

/** `cardinality(a)`: size. */
export const cardinality = (c: Coll): Column<'INT'> => call('cardinality', arg(c));
/** `get(a, i)`: the 0-based element, NULL beyond the ends. */
export const get = <const A extends Arr>(c: A, index: Operand): Column<ItemType<ArgType<A>>> => call('get', arg(c), val(index));
/** `try_element_at(a, i)` / `try_element_at(m, key)`: element_at, NULL instead of an ANSI error. */
export const try_element_at = <const A extends Coll>(c: A, extraction: Operand): Column<ItemType<ArgType<A>>> =>
  call('try_element_at', arg(c), val(extraction));
