/**
 * Spark's functions that fail a row on purpose, for data-quality guards in a query
 * (misc.scala's RaiseError and AssertTrue): `raise_error(message)` always, `assert_true(cond
 * [, message])` when `cond` is not true (false or null). Spark stops the query with
 * USER_RAISED_EXCEPTION; here, as every row error, the row goes to the dead letters with the class
 * and the message and the batch goes on. Both are of type NULL, so `CASE WHEN amount < 0 THEN
 * raise_error('negative amount') ELSE amount END` keeps amount's type.
 */
import type { FunctionDef } from './analyze';
import { SparkRowError } from './errors';
import { call, def, str } from './fn-util';
import { NULL_TYPE } from './types';

function raised(message: unknown): never {
  throw new SparkRowError('USER_RAISED_EXCEPTION', message === null || message === undefined ? 'null' : String(message));
}

export const RAISE_FUNCTIONS: Record<string, FunctionDef> = {
  raise_error: def(1, 1, ([a], c) =>
    call(
      c,
      NULL_TYPE,
      [str(c, a, 0)],
      ([m]) =>
        (row) =>
          raised(m(row)),
    ),
  ),
  assert_true: def(1, 2, (args, c) => {
    const cond = c.az.implicitBoolean(args[0], c.sql, c.pos);
    // Spark's default message quotes the condition (its simpleString, here its SQL)
    const fallback = `'${args[0].sql}' is not true!`;
    const children = args.length === 2 ? [cond, str(c, args[1], 1)] : [cond];
    return call(
      c,
      NULL_TYPE,
      children,
      ([test, message]) =>
        (row) =>
          test(row) === true ? null : raised(message ? message(row) : fallback),
    );
  }),
};
