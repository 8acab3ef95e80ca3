/**
 * The typed expression tree the analyzer produces and the compiler turns into a function. Each
 * node knows its type, Spark's SQL text (for names and messages) and how to build its evaluator
 * from its children's (compileTyped: one walk that closes over the children) and, for most
 * kinds, its JavaScript (`build.js`), from which codegen.ts makes one function per query.
 */
import type { Row } from '../ports/values';
import type { SqlType } from './types';

/** An expression compiled for one row. */
export type Eval = (row: Row) => unknown;

/** What a generator (explode, posexplode...) emits per element: its output columns. */
export interface GeneratorInfo {
  readonly kind: 'explode' | 'explode_outer' | 'posexplode' | 'posexplode_outer' | 'json_tuple' | 'inline' | 'inline_outer' | 'stack';
  /**
   * The columns each element becomes: `col`; `pos, col`; `key, value`; `pos, key, value`;
   * json_tuple: `c0, c1...`, its value being the one row; inline: the struct's fields; stack:
   * `col0, col1...`, its value being the rows, each an array of the columns' values.
   */
  readonly columns: readonly { readonly name: string; readonly type: SqlType }[];
}

export interface Typed {
  readonly type: SqlType;
  /** Spark's SQL text of the expression: `(total / qty)`, `lower(country)`, `CAST(code AS INT)`. */
  readonly sql: string;
  /** The output column name Spark gives it without AS: a column its name, a nested field its last part, else `sql`. */
  readonly name: string;
  /**
   * An extraction by a string key (arr[0].f, st['g'], m['k']): the key, which struct() names its
   * field by (Spark's CreateStruct takes an UnresolvedExtractValue's literal key) while the column is
   * named by `sql`.
   */
  readonly fieldName?: string;
  readonly children: readonly Typed[];
  /** The evaluator, from the children's evaluators (in `children` order); with `js`, its JavaScript too (codegen.ts). */
  readonly build: Builder;
  /** A literal: its value (constant for every row). */
  readonly constant?: { readonly value: unknown };
  /** A generator (explode...): the stage emits one row per element of the value this node evaluates to. */
  readonly generator?: GeneratorInfo;
}

/**
 * A node's JavaScript, for the code generator (codegen.ts): an expression over `row` from its
 * children's expressions, each of which it must place exactly once (a child may throw or be costly)
 * and may leave unevaluated (AND, CASE). `g.tmp()` names a fresh local, `g.ref(value)` a constant
 * the generated function closes over (a function to call, an object).
 */
export type JsGen = (args: readonly string[], g: GenContext) => string;

export interface GenContext {
  tmp(): string;
  ref(value: unknown): string;
}

/**
 * How a node builds its evaluator; `js`, when set, is the same semantics as JavaScript source. It
 * sits on the builder, not on the node, so a node copied with a new `build` (`{...inner, build}`,
 * as try_add wraps add) does not keep a `js` that no longer matches.
 */
export type Builder = ((children: readonly Eval[]) => Eval) & { readonly js?: JsGen };

/** A builder with its JavaScript. */
export function withJs(build: (children: readonly Eval[]) => Eval, js: JsGen): Builder {
  return Object.assign(build, { js });
}

/** The builder of a constant: its value for every row (a number, string, boolean or null is inlined). */
export function constantBuilder(value: unknown): Builder {
  return withJs(
    () => () => value,
    (_, g) => {
      if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
      if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return `(${value})`;
      return g.ref(value);
    },
  );
}

/** The builder of an input column's value (null when the row has none). */
export function columnBuilder(key: string): Builder {
  return withJs(
    () => (row) => row[key] ?? null,
    () => `(row[${JSON.stringify(key)}] ?? null)`,
  );
}

/** Compiles a typed tree into nested closures (built once; nothing is interpreted per row). codegen.ts's compileExpr is faster. */
export function compileTyped(t: Typed): Eval {
  return t.build(t.children.map(compileTyped));
}

/** A node whose value is null when any argument is null, else `fn` of the arguments (Spark's NullIntolerant). */
export function strict(fn: (...args: unknown[]) => unknown): Builder {
  return withJs(strictClosure(fn), (args, g) => {
    const f = g.ref(fn);
    if (args.length === 0) return `${f}()`;
    const ts = args.map(() => g.tmp());
    return `(${args.map((a, i) => `(${ts[i]} = ${a}) == null ? null : `).join('')}${f}(${ts.join(', ')}))`;
  });
}

/** A strict node (see strict) named by its SQL, of `type`, over `children`. */
export function strictNode(type: SqlType, sql: string, children: Typed[], fn: (...args: unknown[]) => unknown): Typed {
  return { type, sql, name: sql, children, build: strict(fn) };
}

function strictClosure(fn: (...args: unknown[]) => unknown): (children: readonly Eval[]) => Eval {
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
