/**
 * Expressions compiled to JavaScript source, once per query, and made a function with
 * `new Function` (as the JSON line parser is, lib/engine/json-scan.ts). A node whose builder has
 * `js` (typed.ts: column references, literals, every null-intolerant operator and function, AND,
 * OR, IS NULL, CASE, COALESCE...) becomes source; any other node is its closure,
 * called from the source (its children generated in turn). The semantics are the closures': the operators' own functions (overflow
 * checks, exact DECIMAL, ANSI errors) are called from the source, only the plumbing between them
 * (null checks, three-valued logic, branches) is written out. What this buys: each call site in the
 * generated function is its own, so V8 sees one callee there and inlines it; in the closures, one
 * site (strict's `a(row)`) serves every node of every query and is megamorphic.
 */
import type { Row } from '../ports/values';
import type { Eval, GenContext, Typed } from './typed';

/** The pieces of one generated function: the constants it closes over and its locals. */
class Gen implements GenContext {
  readonly refs: unknown[] = [];
  private temps = 0;
  tmp(): string {
    return `t${this.temps++}`;
  }
  ref(value: unknown): string {
    let i = this.refs.indexOf(value);
    if (i < 0) i = this.refs.push(value) - 1;
    return `k${i}`;
  }
  /** `let t0, t1...;` for the function's body. */
  locals(): string {
    return this.temps === 0 ? '' : `let ${Array.from({ length: this.temps }, (_, i) => `t${i}`).join(', ')};`;
  }
  /** A function of the refs (k0, k1...) and `body`'s free names; `body` is the source of a function expression. */
  make<F>(body: string): F {
    const names = this.refs.map((_, i) => `k${i}`);
    return new Function('k', `'use strict'; const [${names.join(', ')}] = k; return ${body};`)(this.refs) as F;
  }
}

/** The source of `t` over `row`. */
function source(t: Typed, g: Gen): string {
  const js = t.build.js;
  if (js === undefined) return `${g.ref(compileExpr(t))}(row)`;
  return js(
    t.children.map((c) => source(c, g)),
    g,
  );
}

/** `t` as one generated function of a row. */
export function compileExpr(t: Typed): Eval {
  // a node without JavaScript: its closure over its children, each generated
  if (t.build.js === undefined) return t.build(t.children.map(compileExpr));
  const g = new Gen();
  const expr = source(t, g);
  return g.make<Eval>(`function (row) { ${g.locals()} return ${expr}; }`);
}

/** A filter's test as one generated function: true when `t` (BOOLEAN) is true; null and false drop the row. */
export function compilePredicate(t: Typed): (row: Row) => boolean {
  const g = new Gen();
  const expr = source(t, g);
  return g.make<(row: Row) => boolean>(`function (row) { ${g.locals()} return ${expr} === true; }`);
}

/**
 * A projection as one generated function whose object literal has the columns as fixed keys:
 * every output row gets the same hidden class, which keeps the stages after it fast (a loop of
 * `r[name] = ...` makes dictionary-mode objects). The items are evaluated in order.
 */
export function compileProjection(names: readonly string[], items: readonly Typed[]): (row: Row) => Row {
  const g = new Gen();
  const fields = names.map((name, i) => `${JSON.stringify(name)}: ${source(items[i], g)}`).join(', ');
  return g.make<(row: Row) => Row>(`function (row) { ${g.locals()} return { ${fields} }; }`);
}
