/**
 * pyspark's string and math functions: each builds the call Spark SQL text would (`upper(country)`),
 * with the column arguments typed (upper takes a STRING column) and the result typed as Spark types it.
 */
import type { Column } from '../column';
import type { ArgType, Arith, ArrayOf, ColArg, ColType, Divide, LitType, NumericType, UnknownType } from '../column-types';
import { arg, call, litArg } from './core';

type Str = ColArg<'STRING'>;
type Num = ColArg<NumericType>;

// ---------------------------------------------------------------------------- strings

/** `upper(s)`. */
export const upper = (s: Str): Column<'STRING'> => call('upper', arg(s));
/** `lower(s)`. */
export const lower = (s: Str): Column<'STRING'> => call('lower', arg(s));
/** `trim(s)`: without leading and trailing spaces. */
export const trim = (s: Str): Column<'STRING'> => call('trim', arg(s));
/** `ltrim(s)`. */
export const ltrim = (s: Str): Column<'STRING'> => call('ltrim', arg(s));
/** `rtrim(s)`. */
export const rtrim = (s: Str): Column<'STRING'> => call('rtrim', arg(s));
/** `length(s)`: characters (code points). */
export const length = (s: Str): Column<'INT'> => call('length', arg(s));
/** `initcap(s)`. */
export const initcap = (s: Str): Column<'STRING'> => call('initcap', arg(s));
/** `ascii(s)`. */
export const ascii = (s: Str): Column<'INT'> => call('ascii', arg(s));
/** `substring(s, pos[, len])`: 1-based; a negative pos counts from the end. */
export function substring(s: Str, pos: number, len?: number): Column<'STRING'> {
  return len === undefined
    ? call('substring', arg(s), litArg(pos, 'substring', 'a position'))
    : call('substring', arg(s), litArg(pos, 'substring', 'a position'), litArg(len, 'substring', 'a length'));
}
/** `concat(a, b, ...)`: STRINGs (or ARRAYs) one after another; NULL when one is NULL. */
export function concat<const A extends readonly ColArg<'STRING' | ArrayOf | 'ARRAY'>[]>(...cols: A): Column<ConcatType<A>> {
  return call('concat', ...cols.map(arg));
}
type ConcatType<A extends readonly unknown[]> = [ArgType<A[number]>] extends ['STRING'] ? 'STRING' : UnknownType;
/** `concat_ws(sep, a, b, ...)`: joined by sep, nulls skipped. */
export function concat_ws(sep: string, ...cols: ColArg<'STRING' | ArrayOf<'STRING'>>[]): Column<'STRING'> {
  return call('concat_ws', litArg(sep, 'concat_ws', 'a separator'), ...cols.map(arg));
}
/** `regexp_extract(s, pattern, idx)`: group idx of the first match ('' when none). */
export function regexp_extract(s: Str, pattern: string, idx: number): Column<'STRING'> {
  return call('regexp_extract', arg(s), litArg(pattern, 'regexp_extract', 'a pattern'), litArg(idx, 'regexp_extract', 'a group index'));
}
/** `regexp_replace(s, pattern, replacement)`: every match replaced (`$1` is a group). */
export function regexp_replace(s: Str, pattern: string, replacement: string): Column<'STRING'> {
  return call('regexp_replace', arg(s), litArg(pattern, 'regexp_replace', 'a pattern'), litArg(replacement, 'regexp_replace', 'a replacement'));
}
/** `split(s, pattern[, limit])`: an ARRAY<STRING> of the parts between matches. */
export function split(s: Str, pattern: string, limit?: number): Column<ArrayOf<'STRING'>> {
  const p = litArg(pattern, 'split', 'a pattern');
  return limit === undefined ? call('split', arg(s), p) : call('split', arg(s), p, litArg(limit, 'split', 'a limit'));
}
/** `lpad(s, len, pad)`. */
export const lpad = (s: Str, len: number, pad: string): Column<'STRING'> => call('lpad', arg(s), litArg(len, 'lpad', 'a length'), litArg(pad, 'lpad', 'a pad'));
/** `rpad(s, len, pad)`. */
export const rpad = (s: Str, len: number, pad: string): Column<'STRING'> => call('rpad', arg(s), litArg(len, 'rpad', 'a length'), litArg(pad, 'rpad', 'a pad'));
/** `instr(s, substr)`: the 1-based position of substr, 0 when absent. */
export const instr = (s: Str, substr: string): Column<'INT'> => call('instr', arg(s), litArg(substr, 'instr', 'a substring'));
/** `locate(substr, s[, pos])`: as instr, from position pos. */
export function locate(substr: string, s: Str, pos?: number): Column<'INT'> {
  const sub = litArg(substr, 'locate', 'a substring');
  return pos === undefined ? call('locate', sub, arg(s)) : call('locate', sub, arg(s), litArg(pos, 'locate', 'a position'));
}
/** `repeat(s, n)`. */
export const repeat = (s: Str, n: number): Column<'STRING'> => call('repeat', arg(s), litArg(n, 'repeat', 'a count'));
/** `reverse(s)`: a STRING's characters, or an ARRAY's elements, in reverse order. */
export const reverse = <const A extends ColArg<'STRING' | ArrayOf | 'ARRAY'>>(s: A): Column<ArgType<A>> => call('reverse', arg(s));
/** `format_number(x, d)`: `12,332.1235`. */
export const format_number = (x: Num, d: number): Column<'STRING'> => call('format_number', arg(x), litArg(d, 'format_number', 'a number of decimals'));

// ---------------------------------------------------------------------------- math

/** The type of a numeric argument (a name: not known). */
type NumOf<A> = ArgType<A> extends infer T extends ColType ? T : UnknownType;
/** floor/ceil: a DECIMAL stays DECIMAL, the rest is BIGINT. */
type Rounded<T> = [T] extends ['DECIMAL'] ? 'DECIMAL' : [T] extends [UnknownType] ? UnknownType : 'LONG';

/** `abs(x)`. */
export const abs = <const A extends Num>(x: A): Column<NumOf<A>> => call('abs', arg(x));
/** `round(x[, scale])`: HALF_UP; the type stays x's. */
export function round<const A extends Num>(x: A, scale?: number): Column<NumOf<A>> {
  return scale === undefined ? call('round', arg(x)) : call('round', arg(x), litArg(scale, 'round', 'a scale'));
}
/** `bround(x[, scale])`: HALF_EVEN. */
export function bround<const A extends Num>(x: A, scale?: number): Column<NumOf<A>> {
  return scale === undefined ? call('bround', arg(x)) : call('bround', arg(x), litArg(scale, 'bround', 'a scale'));
}
/** `floor(x)`. */
export const floor = <const A extends Num>(x: A): Column<Rounded<NumOf<A>>> => call('floor', arg(x));
/** `ceil(x)`. */
export const ceil = <const A extends Num>(x: A): Column<Rounded<NumOf<A>>> => call('ceil', arg(x));
/** `sqrt(x)`. */
export const sqrt = (x: Num): Column<'DOUBLE'> => call('sqrt', arg(x));
/** `cbrt(x)`. */
export const cbrt = (x: Num): Column<'DOUBLE'> => call('cbrt', arg(x));
/** `exp(x)`. */
export const exp = (x: Num): Column<'DOUBLE'> => call('exp', arg(x));
/** `ln(x)`. */
export const ln = (x: Num): Column<'DOUBLE'> => call('ln', arg(x));
/** `log10(x)`. */
export const log10 = (x: Num): Column<'DOUBLE'> => call('log10', arg(x));
/** `log2(x)`. */
export const log2 = (x: Num): Column<'DOUBLE'> => call('log2', arg(x));
/** `log(x)` (natural), or pyspark's `log(base, x)`: `log(base, x)`. */
export function log(a: Num | number, x?: Num): Column<'DOUBLE'> {
  if (x === undefined) return call('ln', arg(a as Num));
  return call('log', typeof a === 'number' ? litArg(a, 'log', 'a base') : arg(a), arg(x));
}
/** `pow(x, y)`. */
export const pow = (x: Num, y: Num | number): Column<'DOUBLE'> => call('pow', arg(x), typeof y === 'number' ? litArg(y, 'pow', 'an exponent') : arg(y));
/** `signum(x)`: -1.0, 0.0 or 1.0. */
export const signum = (x: Num): Column<'DOUBLE'> => call('signum', arg(x));
/** `pmod(x, y)`: the positive remainder. */
export const pmod = <const A extends Num>(x: A, y: Num | number): Column<NumOf<A>> =>
  call('pmod', arg(x), typeof y === 'number' ? litArg(y, 'pmod', 'a divisor') : arg(y));

// ---------------------------------------------------------------------------- more names Spark has

/** `lcase(s)`: lower. */
export const lcase = (s: Str): Column<'STRING'> => call('lcase', arg(s));
/** `ucase(s)`: upper. */
export const ucase = (s: Str): Column<'STRING'> => call('ucase', arg(s));
/** `char_length(s)`: length. */
export const char_length = (s: Str): Column<'INT'> => call('char_length', arg(s));
/** `left(s, n)`: the first n characters. */
export const left = (s: Str, n: number): Column<'STRING'> => call('left', arg(s), litArg(n, 'left', 'a length'));
/** `right(s, n)`: the last n characters. */
export const right = (s: Str, n: number): Column<'STRING'> => call('right', arg(s), litArg(n, 'right', 'a length'));
/** `ceiling(x)`: ceil. */
export const ceiling = <const A extends Num>(x: A): Column<Rounded<NumOf<A>>> => call('ceiling', arg(x));
/** `power(x, y)`: pow. */
export const power = (x: Num, y: Num | number): Column<'DOUBLE'> => call('power', arg(x), typeof y === 'number' ? litArg(y, 'power', 'an exponent') : arg(y));
/** `sign(x)`: signum. */
export const sign = (x: Num): Column<'DOUBLE'> => call('sign', arg(x));

// ---------------------------------------------------------------------------- try_: NULL instead of an ANSI error

const numArg = (v: Num | number, fn: string): string => (typeof v === 'number' ? litArg(v, fn, 'a number') : arg(v));
/** `try_add(a, b)`: a + b, NULL on overflow. */
export const try_add = <const A extends Num, const B extends Num | number>(a: A, b: B): Column<Arith<NumOf<A>, B extends number ? LitType<B> : NumOf<B>>> =>
  call('try_add', arg(a), numArg(b, 'try_add'));
/** `try_subtract(a, b)`: a - b, NULL on overflow. */
export const try_subtract = <const A extends Num, const B extends Num | number>(
  a: A,
  b: B,
): Column<Arith<NumOf<A>, B extends number ? LitType<B> : NumOf<B>>> => call('try_subtract', arg(a), numArg(b, 'try_subtract'));
/** `try_multiply(a, b)`: a * b, NULL on overflow. */
export const try_multiply = <const A extends Num, const B extends Num | number>(
  a: A,
  b: B,
): Column<Arith<NumOf<A>, B extends number ? LitType<B> : NumOf<B>>> => call('try_multiply', arg(a), numArg(b, 'try_multiply'));
/** `try_divide(a, b)`: a / b, NULL for a zero divisor. */
export const try_divide = <const A extends Num, const B extends Num | number>(a: A, b: B): Column<Divide<NumOf<A>, B extends number ? LitType<B> : NumOf<B>>> =>
  call('try_divide', arg(a), numArg(b, 'try_divide'));
/** `try_mod(a, b)`: a % b, NULL for a zero divisor. */
export const try_mod = <const A extends Num, const B extends Num | number>(a: A, b: B): Column<Arith<NumOf<A>, B extends number ? LitType<B> : NumOf<B>>> =>
  call('try_mod', arg(a), numArg(b, 'try_mod'));
