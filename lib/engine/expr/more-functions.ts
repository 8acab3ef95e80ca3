/**
 * More of Spark 4's functions, as its sources define them (ANSI mode):
 * - str_to_map (complexTypeCreator.scala's StringToMap): the text split by two Java regular
 *   expressions, as UTF8String.split does (an empty delimiter splits into characters), a duplicate
 *   key DUPLICATED_MAP_KEY (spark.sql.mapKeyDedupPolicy's default, EXCEPTION);
 * - arrays_zip and array_insert (collectionOperations.scala): arrays_zip's fields are named after
 *   arguments that are columns or fields, else by their ordinal ("0", "1"); array_insert is 1-based,
 *   -1 appends (spark.sql.legacy.negativeIndexInArrayInsert's default, false), positions past either
 *   end pad with nulls, 0 is INVALID_INDEX_OF_ZERO, the item widened by TypeCoercion.findTightestCommonType;
 * - position (StringLocate under its alias), overlay's function form, decode's CASE form (null-safe
 *   equality, a STRING NULL default), luhn_check (ExpressionImplUtils.isLuhnNumber) and mask
 *   (maskExpressions.scala), the last two over UTF-16 chars as Java's Character classifies them.
 */
import { checkArrayLength } from './value-limits';
import { hasEntry, setEntry } from '../map-entries';
import type { CallCtx, FunctionDef } from './analyze';
import { implicitCast } from './analyze';
import { SparkRowError } from './errors';
import { call, codePoints, def, int, str } from './fn-util';
import { duplicatedMapKey, mapType } from './map-keys';
import { javaRegex } from './patterns';
import { splitJava } from './regexp';
import { STRING_FUNCTIONS } from './strings';
import { compileTyped, constantBuilder, strict, type Typed } from './typed';
import { BOOLEAN, commonType, INT, isIntegral, isNumeric, type SqlType, sameType, STRING, TIMESTAMP, typeName } from './types';

/** `t` under Spark's SQL text (and name) `sql`: the call with the arguments Spark fills in. */
function withSql(t: Typed, sql: string): Typed {
  return { ...t, sql, name: sql };
}

/** A string literal's text in a call's SQL: quoted, or its value in Spark's pretty form (a column's name). */
function quoted(c: CallCtx, v: string): string {
  return c.az.scope.pretty ? v : `'${v}'`;
}

/** The call's SQL with the defaults Spark fills in for the optional parameters from `first` on (`str_to_map(a, ',', ':')`). */
function filledSql(c: CallCtx, args: readonly Typed[], first: number, defaults: readonly string[]): string {
  return `${c.name}(${[...args.map((a) => a.sql), ...defaults.slice(args.length - first)].join(', ')})`;
}

/** A literal STRING argument (a default Spark fills in). */
function stringLiteral(v: string | null): Typed {
  const sql = v === null ? 'NULL' : `'${v}'`;
  return { type: STRING, sql, name: sql, children: [], constant: { value: v }, build: constantBuilder(v) };
}

/** A delimiter argument's RegExp per row: a literal one compiled once, at analysis (an invalid one refused then). */
function delimiterRegex(c: CallCtx, d: Typed): (pattern: string) => RegExp {
  const constant = d.constant?.value;
  const fixed = typeof constant === 'string' ? javaRegex(constant, c.az, c.pos, 'g') : null;
  return (pattern) => fixed ?? javaRegex(pattern, null, 0, 'g');
}

function strToMap(args: readonly Typed[], c: CallCtx): Typed {
  const [text, pairs, kvs] = [args[0], args[1] ?? stringLiteral(','), args[2] ?? stringLiteral(':')].map((a, i) => str(c, a, i));
  const pairRegex = delimiterRegex(c, pairs);
  const kvRegex = delimiterRegex(c, kvs);
  const node = call(
    c,
    mapType(STRING, STRING),
    [text, pairs, kvs],
    strict((t, pd, kvd) => {
      const out: Record<string, unknown> = {};
      for (const entry of splitJava(t as string, pairRegex(pd as string), -1, pd as string)) {
        const [key, value = null] = splitJava(entry, kvRegex(kvd as string), 2, kvd as string);
        if (hasEntry(out, key)) throw duplicatedMapKey(key);
        setEntry(out, key, value);
      }
      return out;
    }),
  );
  return withSql(node, filledSql(c, args, 1, [quoted(c, ','), quoted(c, ':')]));
}

/** An argument that must be an ARRAY (a NULL literal too is refused: arrays_zip and array_insert expect, not cast, their arrays). */
function strictArray(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type === 'ARRAY') return a;
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `argument ${i + 1} of ${c.name} requires the "ARRAY" type, however ${a.sql} has the type "${typeName(a.type)}"${a.type.type === 'NULL' ? '; cast the NULL to an ARRAY type' : ''}`,
    c.pos,
  );
}

/** arrays_zip's name for argument `i`: a column's or field's name (as Spark names a NamedExpression), else its ordinal. */
function zipFieldName(a: Typed, i: number): string {
  return a.constant === undefined && (a.children.length === 0 || a.name !== a.sql) ? a.name : String(i);
}

function arraysZip(args: readonly Typed[], c: CallCtx): Typed {
  const arrays = args.map((a, i) => strictArray(c, a, i));
  const names = arrays.map(zipFieldName);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) {
    throw c.az.fail(
      'UNSUPPORTED_FEATURE',
      `${c.sql}: two of the zipped arrays would both be the struct field \`${twice}\`, which Spark allows but sluice cannot hold (a struct value is keyed by its fields' names); zip distinct columns`,
      c.pos,
    );
  }
  const fields = arrays.map((a, i) => ({ ...a.type.element!, name: names[i] }));
  return call(c, { type: 'ARRAY', element: { type: 'STRUCT', fields } }, arrays, (evs) => (row) => {
    const xs: unknown[][] = [];
    for (const e of evs) {
      const v = e(row) as unknown[] | null;
      if (v == null) return null;
      xs.push(v);
    }
    const n = Math.max(0, ...xs.map((x) => x.length));
    return Array.from({ length: n }, (_, j) => Object.fromEntries(names.map((name, k) => [name, xs[k][j] ?? null])));
  });
}

/** The rank of a numeric type that is not a DECIMAL in TypeCoercion.numericPrecedence (TINYINT ... DOUBLE). */
function precedence(t: SqlType): number {
  if (t.type === 'INT') return t.bits === 8 ? 0 : t.bits === 16 ? 1 : 2;
  return t.type === 'LONG' ? 3 : t.binary32 ? 4 : 5;
}

/** The digits of an integral type as a DECIMAL (DecimalType.forType): TINYINT 3, SMALLINT 5, INT 10, BIGINT 20. */
function integralDigits(t: SqlType): number {
  return t.type === 'LONG' ? 20 : t.bits === 8 ? 3 : t.bits === 16 ? 5 : 10;
}

/**
 * TypeCoercion.findTightestCommonType, which array_insert widens with: the same type, NULL beside
 * anything, integral types and floats to the higher of the two, an integral type beside a DECIMAL
 * that holds all its digits, DATE beside TIMESTAMP, arrays of such; no STRING promotion.
 */
function tightest(a: SqlType, b: SqlType): SqlType | null {
  if (sameType(a, b) || b.type === 'NULL') return a;
  if (a.type === 'NULL') return b;
  if (isNumeric(a) && isNumeric(b)) {
    const [d, other] = a.type === 'DECIMAL' ? [a, b] : [b, a];
    if (d.type !== 'DECIMAL') return precedence(a) >= precedence(b) ? a : b;
    return isIntegral(other) && d.precision! - d.scale! >= integralDigits(other) ? d : null;
  }
  if ((a.type === 'DATE' && b.type === 'TIMESTAMP') || (a.type === 'TIMESTAMP' && b.type === 'DATE')) return TIMESTAMP;
  if (a.type === 'ARRAY' && b.type === 'ARRAY') {
    const e = tightest(a.element!, b.element!);
    return e === null ? null : { type: 'ARRAY', element: e };
  }
  return null;
}

/** ArrayInsert.nullSafeEval with legacyNegativeIndex false. */
function insertAt(xs: readonly unknown[], pos: number, item: unknown): unknown[] {
  if (pos === 0) {
    throw new SparkRowError('INVALID_INDEX_OF_ZERO', 'The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1).');
  }
  const n = xs.length;
  if (pos < 0 && -pos > n) {
    // before the first element: the item, nulls, then the array (-pos elements in all)
    checkArrayLength(-pos, 'array_insert', 'FUNCTION');
    return [item, ...Array.from({ length: -pos - 1 - n }, () => null), ...xs.map((x) => x ?? null)];
  }
  const at = pos < 0 ? pos + n + 1 : pos - 1;
  checkArrayLength(Math.max(n + 1, at + 1), 'array_insert', 'FUNCTION');
  const out: unknown[] = Array.from({ length: Math.max(n + 1, at + 1) }, () => null);
  for (let i = 0; i < n; i++) out[i >= at ? i + 1 : i] = xs[i] ?? null;
  out[at] = item;
  return out;
}

function arrayInsert([a, p, x]: readonly Typed[], c: CallCtx): Typed {
  const arr = strictArray(c, a, 0);
  if (p.type.type !== 'INT') {
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `argument 2 of array_insert requires the "INT" type, however ${p.sql} has the type "${typeName(p.type)}"${p.type.type === 'NULL' ? '; cast the NULL to INT' : ''}`,
      c.pos,
    );
  }
  const t = tightest(arr.type.element!, x.type);
  if (t === null) {
    throw c.az.mismatch(
      'ARRAY_FUNCTION_DIFF_TYPES',
      c.sql,
      `Input to \`array_insert\` should have been "ARRAY" followed by a value with same element type, but it's ["${typeName(arr.type)}", "${typeName(x.type)}"]`,
      c.pos,
    );
  }
  const at: SqlType = { type: 'ARRAY', element: t };
  return call(c, at, [implicitCast(arr, at), implicitCast(p, INT), implicitCast(x, t)], ([ea, ep, ex]) => (row) => {
    const xs = ea(row) as unknown[] | null;
    if (xs == null) return null;
    const pos = ep(row) as number | null;
    return pos == null ? null : insertAt(xs, pos, ex(row) ?? null);
  });
}

/** UTF8String.substringSQL(pos, length) over code points: 1-based, a negative pos from the end, 0 as 1; Java's int bounds. */
function substringSql(chars: readonly string[], pos: number, length: number): string {
  let start = pos > 0 ? pos - 1 : pos < 0 ? chars.length + pos : 0;
  const end = Math.min(start + length, 2147483647);
  start = Math.max(start, 0);
  return start >= end ? '' : chars.slice(start, end).join('');
}

/** Overlay.calculate: the input before pos, the replacement, the input from pos + len (len < 0: the replacement's length); int arithmetic as Java's. */
function overlay(input: string, replace: string, pos: number, len: number): string {
  const chars = codePoints(input);
  const length = len >= 0 ? len : codePoints(replace).length;
  return substringSql(chars, 1, (pos - 1) | 0) + replace + substringSql(chars, (pos + length) | 0, 2147483647);
}

/** decode(expr, search, result [, search, result] ... [, default]): Spark's CASE WHEN expr <=> search THEN result ... ELSE default END. */
function decode(args: readonly Typed[], c: CallCtx): Typed {
  if (args.length === 2) {
    throw c.az.fail(
      'UNSUPPORTED_FEATURE',
      `${c.sql}: decode(bin, charset) decodes a BINARY value, and sluice has no BINARY type; decode(expr, search, result [, search, result] ... [, default]) is supported`,
      c.pos,
    );
  }
  const [input, ...rest] = args;
  const pairs = Math.floor(rest.length / 2);
  const conds = Array.from({ length: pairs }, (_, i) => c.az.binary('<=>', input, rest[2 * i], c.pos));
  // without a default, Spark's is a NULL of type STRING, which takes part in the result's type
  const values = [...Array.from({ length: pairs }, (_, i) => rest[2 * i + 1]), rest.length % 2 === 1 ? rest[rest.length - 1] : stringLiteral(null)];
  const t = commonType(values.map((v) => v.type));
  if (t === null) {
    throw c.az.mismatch(
      'DATA_DIFF_TYPES',
      c.sql,
      `the results and the default of \`decode\` should all be the same type, but they are [${values.map((v) => `"${typeName(v.type)}"`).join(', ')}]; cast them to one type (without a default, it is a NULL of type STRING)`,
      c.pos,
    );
  }
  const vs = values.map((v) => implicitCast(v, t));
  return call(c, t, [...conds, ...vs], (evs) => {
    const cs = evs.slice(0, pairs);
    const rs = evs.slice(pairs);
    return (row) => {
      for (let i = 0; i < pairs; i++) if (cs[i](row) === true) return rs[i](row);
      return rs[pairs](row);
    };
  });
}

const DIGIT = /^\p{Nd}$/u;
const UPPER = /^\p{Lu}$/u;
const LOWER = /^\p{Ll}$/u;

/** Character.getNumericValue of a decimal digit: Unicode lays each script's digits out as runs of ten from its zero. */
function digitValue(code: number): number {
  let below = 0;
  while (DIGIT.test(String.fromCharCode(code - below - 1))) below++;
  return below % 10;
}

/** ExpressionImplUtils.isLuhnNumber: every UTF-16 char a decimal digit (of any script), the Luhn sum a multiple of 10; "" is false. */
function isLuhnNumber(s: string): boolean {
  if (s.length === 0) return false;
  let sum = 0;
  for (let i = s.length - 1, second = false; i >= 0; i--, second = !second) {
    if (!DIGIT.test(s[i])) return false;
    const d = digitValue(s.charCodeAt(i)) * (second ? 2 : 1);
    sum += (d % 10) + Math.floor(d / 10);
  }
  return sum % 10 === 0;
}

const MASK_ARGS = ['upperChar', 'lowerChar', 'digitChar', 'otherChar'] as const;

/** A replacement of mask: a foldable STRING, NULL (keep the character) or one character; its first UTF-16 char, as Spark's charAt(0). */
function maskReplacement(c: CallCtx, a: Typed, i: number): string | null {
  const foldable = (t: Typed): boolean => t.constant !== undefined || (t.children.length > 0 && t.children.every(foldable));
  const name = MASK_ARGS[i - 1];
  if (!foldable(a)) {
    throw c.az.mismatch('NON_FOLDABLE_INPUT', c.sql, `the input \`${name}\` should be a foldable "STRING" expression; however, got ${a.sql}`, c.pos);
  }
  const v = (a.constant !== undefined ? a.constant.value : compileTyped(a)({})) as string | null;
  if (v !== null && codePoints(v).length !== 1) {
    throw c.az.mismatch('INPUT_SIZE_NOT_ONE', c.sql, `Length of \`${name}\` should be 1 (${JSON.stringify(v)} given)`, c.pos);
  }
  return v === null ? null : v.charAt(0);
}

function mask(args: readonly Typed[], c: CallCtx): Typed {
  const defaults = [stringLiteral('X'), stringLiteral('x'), stringLiteral('n'), stringLiteral(null)];
  const all = [...args, ...defaults.slice(args.length - 1)].map((a, i) => str(c, a, i));
  const reps = all.slice(1).map((a, i) => maskReplacement(c, a, i + 1));
  const node = call(
    c,
    STRING,
    [all[0]],
    strict((v) => {
      const s = v as string;
      let out = '';
      for (let i = 0; i < s.length; i++) {
        const ch = s[i];
        const k = UPPER.test(ch) ? 0 : LOWER.test(ch) ? 1 : DIGIT.test(ch) ? 2 : 3;
        out += reps[k] ?? ch;
      }
      return out;
    }),
  );
  return withSql(node, filledSql(c, args, 1, [quoted(c, 'X'), quoted(c, 'x'), quoted(c, 'n'), 'NULL']));
}

export const MORE_FUNCTIONS: Record<string, FunctionDef> = {
  str_to_map: def(1, 3, strToMap),
  arrays_zip: def(0, Number.POSITIVE_INFINITY, arraysZip),
  array_insert: def(3, 3, arrayInsert),
  position: def(2, 3, (args, c) => withSql(STRING_FUNCTIONS.locate.resolve(args, c), filledSql(c, args, 2, ['1']))),
  overlay: def(3, 4, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), int(c, args[2], 2), ...(args[3] === undefined ? [] : [int(c, args[3], 3)])];
    const node = call(
      c,
      STRING,
      ts,
      strict((s, r, p, l = -1) => overlay(s as string, r as string, p as number, l as number)),
    );
    return withSql(node, filledSql(c, args, 3, ['-1']));
  }),
  decode: def(2, Number.POSITIVE_INFINITY, decode),
  luhn_check: def(1, 1, ([a], c) =>
    call(
      c,
      BOOLEAN,
      [str(c, a, 0)],
      strict((s) => isLuhnNumber(s as string)),
    ),
  ),
  mask: def(1, 5, mask),
};
