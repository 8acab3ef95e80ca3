/**
 * A filter right after a projection: Spark's optimizer (PushPredicateThroughNonJoin, its Project
 * case) moves it below the projection, each column the projection outputs replaced by what makes
 * it (the column it copies, or the expression that computes it), so that the filter can go on
 * down: below an aggregation when it reads only grouping columns, through a stream-stream join,
 * below the watermark. `selectExpr("country AS c", "n")` after an aggregation then
 * `filter("c = 'DE'")` keeps the other countries' groups out of the state, as the filter right
 * after the aggregation does; `withColumn("total", expr("price * qty")).filter("total > 100")`
 * after a watermark tests `(price * qty) > 100` before the watermark, so a row it rejects does
 * not move the watermark.
 *
 * The projections: `select`, FORMAT-2's select items that copy or rename, `selectExpr` without a
 * generator, `withColumn` of an expression (and of a function, for filters that do not read the
 * column it makes). Every expression is deterministic (sluice refuses the others), as Spark
 * requires of the projection. A row the filter rejects below never reaches the projection, so an
 * error the projection would raise for it is not raised (no dead letter), as in Spark's plan; a
 * row the moved filter fails on is a dead letter with the error of the same expression. An item
 * whose output is not its expression's type (a DAY TO SECOND interval written as text) is not
 * replaced: a filter reading it stays.
 */
import { Analyzer } from '../expr/analyze';
import { checkFilterBoolean } from '../expr';
import { type Ast, parseExpression, parseNamedExpression } from '../expr/parser';
import type { ColumnInfo } from '../plan/columns';
import type { StatelessStage } from '../plan/types';
import { find } from './join-condition';

/** What makes an output column of a projection: the input column it copies, or the expression over the input columns that computes it. */
type Origin = { readonly copies: string } | { readonly computes: Ast };

/**
 * For each column a projection outputs, what makes it; null for a stage that is not a projection
 * a filter moves below. A column left out (an opaque function's, an item not replaced) stops a
 * filter that reads it.
 */
function originsOf(stage: StatelessStage, inCols: readonly ColumnInfo[]): Map<string, Origin> | null {
  const copyAll = (except: string) => new Map(inCols.filter((c) => c.name !== except).map((c) => [c.name, { copies: c.name }] as const));
  switch (stage.kind) {
    case 'select':
      return new Map(stage.columns.map((c) => [c, { copies: c }]));
    case 'project':
      if (!stage.items.every((i) => i.kind === 'column')) return null;
      return new Map(stage.items.map((i) => [i.as, { copies: (i as { column: string }).column }]));
    case 'withColumn':
      return copyAll(stage.name);
    case 'withColumnExpr': {
      const out: Map<string, Origin> = copyAll(stage.name);
      const ast = parseExpression(stage.text);
      if (keepsType(ast, stage.text, inCols)) out.set(stage.name, { computes: ast });
      return out;
    }
    case 'selectExpr': {
      const { compiled, items } = stage;
      if (compiled.generates) return null;
      const out = new Map<string, Origin>();
      const parsed = items.map((text) => ({ text, ...parseNamedExpression(text) }));
      const stars = parsed.filter((p) => p.ast.k === 'star').length;
      // each item but a star makes one column, in order; a star the rest (with two stars, which
      // columns each made is not known here: only their copies are taken)
      const starWidth = compiled.columns.length - (parsed.length - stars);
      let at = 0;
      for (const p of parsed) {
        const width = p.ast.k === 'star' ? starWidth : 1;
        for (let k = at; k < at + width && k < compiled.columns.length; k++) {
          const name = compiled.columns[k].name;
          const source = compiled.sources[k];
          if (source !== null) out.set(name, { copies: source });
          else if (stars <= 1 && p.ast.k !== 'star' && keepsType(p.ast, p.text, inCols)) out.set(name, { computes: p.ast });
        }
        at += width;
      }
      return out;
    }
    default:
      return null;
  }
}

/** Whether an item's output column has its expression's type (a DAY TO SECOND interval is output as text). */
function keepsType(ast: Ast, text: string, inCols: readonly ColumnInfo[]): boolean {
  try {
    const t = new Analyzer({ text, columns: inCols }).analyze(ast);
    return t.type.type !== 'INTERVAL';
  } catch {
    return false;
  }
}

/** Thrown inside `substitute` when a name is not one the projection outputs a replacement for. */
const STAYS = Symbol('stays');

/** `ast` with each name that reads an output column replaced by what makes it (a copy renamed, an expression in place). */
function substitute(ast: Ast, outCols: readonly ColumnInfo[], origins: ReadonlyMap<string, Origin>): Ast {
  const walk = (node: Ast): Ast => {
    if (node.k === 'lit' || node.k === 'star') return node;
    if (node.k === 'name') {
      const out = find(outCols, node.parts[0]);
      const origin = out && origins.get(out.name);
      if (origin === undefined) throw STAYS;
      if ('copies' in origin) return { ...node, parts: [origin.copies, ...node.parts.slice(1)] };
      // a field of a computed STRUCT: field access on the expression
      let base: Ast = origin.computes;
      for (const name of node.parts.slice(1)) base = { k: 'field', pos: node.pos, base, name };
      return base;
    }
    const copy: Record<string, unknown> = { ...node };
    for (const [key, v] of Object.entries(node)) {
      if (isAst(v)) copy[key] = walk(v);
      else if (Array.isArray(v)) copy[key] = v.map((x) => (isAst(x) ? walk(x) : isWhen(x) ? { when: walk(x.when), result: walk(x.result) } : x));
    }
    return copy as unknown as Ast;
  };
  return walk(ast);
}

function isAst(v: unknown): v is Ast {
  return typeof v === 'object' && v !== null && typeof (v as { k?: unknown }).k === 'string';
}

function isWhen(v: unknown): v is { when: Ast; result: Ast } {
  return typeof v === 'object' && v !== null && isAst((v as { when?: unknown }).when) && isAst((v as { result?: unknown }).result);
}

/**
 * The filter `text` (over `outCols`, what `stage` outputs) as a filter over `inCols`, what the
 * stage receives, when it may move below the stage (see the file comment); else null.
 */
export function filterBelowProjection(text: string, stage: StatelessStage, inCols: readonly ColumnInfo[], outCols: readonly ColumnInfo[]): string | null {
  try {
    const origins = originsOf(stage, inCols);
    if (origins === null) return null;
    const below = substitute(parseExpression(text), outCols, origins);
    return checkFilterBoolean(new Analyzer({ text, columns: inCols }).analyze(below), text).sql;
  } catch {
    return null; // a name the projection makes no replacement for, or a text that does not analyze: the filter stays
  }
}
