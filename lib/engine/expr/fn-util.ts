/** Helpers shared by the function modules: typing arguments with Spark's implicit casts, and building call nodes. */
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { constantBuilder, type Eval, type Typed } from './typed';
import { DATE, DOUBLE, INT, isNumeric, STRING, type SqlType, TIMESTAMP, typeName } from './types';

export function def(min: number, max: number, resolve: FunctionDef['resolve']): FunctionDef {
  return { args: [min, max], resolve };
}

/** A call node of type `type` over `children`. */
export function call(c: CallCtx, type: SqlType, children: readonly Typed[], build: (evs: readonly Eval[]) => Eval): Typed {
  return { type, sql: c.sql, name: c.sql, children, build };
}

export function what(c: CallCtx, i: number): string {
  return `argument ${i + 1} of ${c.name}`;
}

export function str(c: CallCtx, a: Typed, i: number): Typed {
  return c.az.implicit(a, STRING, c.pos, what(c, i));
}

/**
 * A STRING argument of a function Spark types with ExpectsInputTypes (no implicit cast: another
 * type is UNEXPECTED_INPUT_TYPE); a NULL literal becomes a STRING null, as Spark's coercion does.
 */
export function stringOnly(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type === 'STRING') return a;
  if (a.type.type === 'NULL') return str(c, a, i);
  throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires the "STRING" type, however ${a.sql} has the type "${typeName(a.type)}"`, c.pos);
}

export function int(c: CallCtx, a: Typed, i: number): Typed {
  return c.az.implicit(a, INT, c.pos, what(c, i));
}

/** A numeric argument: a STRING (or NULL) is read as DOUBLE, as Spark's implicit cast to a numeric input. */
export function numeric(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type.type;
  if (t === 'STRING' || t === 'NULL') return implicitCast(a, DOUBLE);
  if (!isNumeric(a.type)) {
    throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires a numeric type, however ${a.sql} has the type "${typeName(a.type)}"`, c.pos);
  }
  return a;
}

export function double(c: CallCtx, a: Typed, i: number): Typed {
  return implicitCast(numeric(c, a, i), DOUBLE);
}

/** An argument read as a DATE: a DATE, a TIMESTAMP's day, or a STRING cast (ANSI). */
export function dateArg(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type.type;
  if (t === 'DATE') return a;
  if (t === 'TIMESTAMP' || t === 'STRING' || t === 'NULL') return implicitCast(a, DATE);
  throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires the "DATE" type, however ${a.sql} has the type "${typeName(a.type)}"`, c.pos);
}

/** An argument read as a TIMESTAMP: a TIMESTAMP, a DATE's midnight, or a STRING cast (ANSI). */
export function timestampArg(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type.type;
  if (t === 'TIMESTAMP') return a;
  if (t === 'DATE' || t === 'STRING' || t === 'NULL') return implicitCast(a, TIMESTAMP);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `${what(c, i)} requires the "TIMESTAMP" type, however ${a.sql} has the type "${typeName(a.type)}"`,
    c.pos,
  );
}

/** The value of a literal argument, or a refusal naming the argument (a function that needs a constant, e.g. from_json's schema). */
export function constantArg(c: CallCtx, a: Typed, i: number, need: string): unknown {
  if (a.constant === undefined) {
    throw c.az.fail('DATATYPE_MISMATCH.NON_FOLDABLE_INPUT', `Cannot resolve "${c.sql}": ${what(c, i)} must be a constant (${need}), but it is ${a.sql}`, c.pos);
  }
  return a.constant.value;
}

/**
 * The text of a constant STRING argument a function reads when the query is compiled (a sample for
 * schema_of_json / schema_of_csv): `what` names the input in Spark's UNEXPECTED_NULL for a null.
 */
export function constantText(c: CallCtx, a: Typed, i: number, what: string, need: string): string {
  const text = constantArg(c, stringOnly(c, a, i), i, need);
  if (typeof text !== 'string')
    throw c.az.fail('DATATYPE_MISMATCH.UNEXPECTED_NULL', `Cannot resolve "${c.sql}": the input ${what} must not be null: give ${need}`, c.pos);
  return text;
}

/** A call whose value is known when the query is compiled: a STRING constant, as a literal is. */
export function constantString(c: CallCtx, value: string): Typed {
  return { type: STRING, sql: c.sql, name: c.sql, children: [], constant: { value }, build: constantBuilder(value) };
}

/** Each code point of a string (Spark counts characters as code points). */
export function codePoints(s: string): string[] {
  return Array.from(s);
}

/** Whether a string is plain ASCII-range UTF-16 with no surrogate pairs (then indices are characters). */
export function simple(s: string): boolean {
  return !/[\uD800-\uDFFF]/.test(s);
}
