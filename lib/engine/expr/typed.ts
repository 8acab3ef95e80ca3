/**
 * The typed expression tree the analyzer produces and the compiler turns into a function. Each
 * node knows its type, Spark's SQL text (for names and messages) and how to build its evaluator
 * from its children's: compiling is one walk that closes over the children, done once per query.
 */
import type { Row } from '../ports/values';
import type { SqlType } from './types';

/** An expression compiled for one row. */
export type Eval = (row: Row) => unknown;

/** What a generator (explode, posexplode...) emits per element: its output columns. */
export interface GeneratorInfo {
  readonly kind: 'explode' | 'explode_outer' | 'posexplode' | 'posexplode_outer' | 'json_tuple';
  /** The columns each element becomes: `col`; `pos, col`; `key, value`; `pos, key, value`; json_tuple: `c0, c1...`, its value being the one row. */
  readonly columns: readonly { readonly name: string; readonly type: SqlType }[];
}

export interface Typed {
  readonly type: SqlType;
  /** Spark's SQL text of the expression: `(total / qty)`, `lower(country)`, `CAST(code AS INT)`. */
  readonly sql: string;
  /** The output column name Spark gives it without AS: a column its name, a nested field its last part, else `sql`. */
  readonly name: string;
  readonly children: readonly Typed[];
  /** The evaluator, from the children's evaluators (in `children` order). */
  readonly build: (children: readonly Eval[]) => Eval;
  /** A literal: its value (constant for every row). */
  readonly constant?: { readonly value: unknown };
  /** A generator (explode...): the stage emits one row per element of the value this node evaluates to. */
  readonly generator?: GeneratorInfo;
}

/** Compiles a typed tree into one function of a row (closures built once; nothing is interpreted per row). */
export function compileTyped(t: Typed): Eval {
  return t.build(t.children.map(compileTyped));
}

/** A node whose value is null when any argument is null, else `fn` of the arguments (Spark's NullIntolerant). */
export function strict(fn: (...args: unknown[]) => unknown): (children: readonly Eval[]) => Eval {
  return (evs) => {
    switch (evs.length) {
      case 0:
        return () => fn();
      case 1: {
        const [a] = evs;
        return (row) => {
          const x = a(row);
          return x == null ? null : fn(x);
        };
      }
      case 2: {
        const [a, b] = evs;
        return (row) => {
          const x = a(row);
          if (x == null) return null;
          const y = b(row);
          return y == null ? null : fn(x, y);
        };
      }
      case 3: {
        const [a, b, c] = evs;
        return (row) => {
          const x = a(row);
          if (x == null) return null;
          const y = b(row);
          if (y == null) return null;
          const z = c(row);
          return z == null ? null : fn(x, y, z);
        };
      }
      default:
        return (row) => {
          const vals: unknown[] = [];
          for (const e of evs) {
            const v = e(row);
            if (v == null) return null;
            vals.push(v);
          }
          return fn(...vals);
        };
    }
  };
}
