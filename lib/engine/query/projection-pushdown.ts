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
 * The projections: `select`, FORMAT-2's select items that copy or rename, `selectExpr`,
 * `withColumn` of an expression (and of a function, for filters that do not read the column it
 * makes). Through a `selectExpr` with a generator (Spark's Generate case) only the conjuncts that
 * read none of the generator's columns move. Every expression is deterministic (sluice refuses
 * the others), as Spark requires of the projection. A row the filter rejects below never reaches
 * the projection, so an error the projection would raise for it is not raised (no dead letter),
 * as in Spark's plan; a row the moved filter fails on is a dead letter with the error of the same
 * expression. An item whose output is not its expression's type (a DAY TO SECOND interval written
 * as text) is not replaced: a filter reading it stays.
 */
import { Analyzer } from '../expr/analyze';
import type { Typed } from '../expr/typed';
import { checkFilterBoolean } from '../expr';
import { type Ast, parseExpression, parseNamedExpression } from '../expr/parser';
import type { ColumnInfo } from '../plan/columns';
import type { StatelessStage } from '../plan/types';
import { conjunctsOf } from './join-condition';
import { resolveName } from '../resolve-name';
import { exactText, mapNames } from './sql-text';

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
      // (a DAY TO SECOND interval is output as text: not its expression's type)
      if (analyzed(ast, stage.text, inCols)?.type.type !== 'INTERVAL') out.set(stage.name, { computes: ast });
      return out;
    }
    case 'selectExpr': {
      const { compiled, items } = stage;
      const out = new Map<string, Origin>();
      compiled.columns.forEach((c, k) => {
        const source = compiled.sources[k];
        if (source !== null) out.set(c.name, { copies: source });
      });
      // each item makes one column, in order, but a star and a generator, which make the rest:
      // with one such item which columns each item made is known
      const parsed = items.map((text) => {
        const { ast } = parseNamedExpression(text);
        return { text, ast, typed: ast.k === 'star' ? null : analyzed(ast, text, inCols) };
      });
      const wide = parsed.filter((p) => p.ast.k === 'star' || p.typed?.generator !== undefined).length;
      if (wide > 1) return out;
      const restWidth = compiled.columns.length - (parsed.length - wide);
      let at = 0;
      for (const p of parsed) {
        const single = p.ast.k !== 'star' && p.typed !== null && p.typed.generator === undefined;
        if (single && compiled.sources[at] === null && p.typed!.type.type !== 'INTERVAL') out.set(compiled.columns[at].name, { computes: p.ast });
        at += single ? 1 : restWidth;
      }
      return out;
    }
    default:
      return null;
  }
}

/** An expression analyzed over the projection's input, or null when it does not analyze. */
function analyzed(ast: Ast, text: string, inCols: readonly ColumnInfo[]): Typed | null {
  try {
    return new Analyzer({ text, columns: inCols }).analyze(ast);
  } catch {
    return null;
  }
}

/** Thrown inside `substitute` when a name is not one the projection outputs a replacement for. */
const STAYS = Symbol('stays');

/** `ast` with each name that reads an output column replaced by what makes it (a copy renamed, an expression in place). */
function substitute(ast: Ast, outCols: readonly ColumnInfo[], origins: ReadonlyMap<string, Origin>): Ast {
  return mapNames(ast, (node) => {
    const out = resolveName(outCols, node.parts[0]);
    const origin = out && origins.get(out.name);
    if (origin === undefined) throw STAYS;
    if ('copies' in origin) return { ...node, parts: [origin.copies, ...node.parts.slice(1)] };
    // a field of a computed STRUCT: field access on the expression (a path on a path)
    const rest = node.parts.slice(1);
    if (origin.computes.k === 'name') return { ...origin.computes, parts: [...origin.computes.parts, ...rest] };
    let base: Ast = origin.computes;
    for (const name of rest) base = { k: 'field', pos: node.pos, base, name };
    return base;
  });
}

/**
 * The filter `text` (over `outCols`, what `stage` outputs) as a filter over `inCols`, what the
 * stage receives, when it may move below the stage (see the file comment); else null.
 */
export function filterBelowProjection(text: string, stage: StatelessStage, inCols: readonly ColumnInfo[], outCols: readonly ColumnInfo[]): string | null {
  try {
    const origins = originsOf(stage, inCols);
    if (origins === null) return null;
    const ast = parseExpression(text);
    let below: Ast;
    if (stage.kind === 'selectExpr' && stage.compiled.generates) {
      // through a generator (Spark's Generate case): the conjuncts that read none of its columns
      const moved: Ast[] = [];
      for (const c of conjunctsOf(ast)) {
        try {
          moved.push(substitute(c, outCols, origins));
        } catch (e) {
          if (e !== STAYS) throw e;
        }
      }
      if (moved.length === 0) return null;
      below = moved.reduce((l, r) => ({ k: 'binary', pos: l.pos, op: 'AND', left: l, right: r }));
    } else below = substitute(ast, outCols, origins);
    checkFilterBoolean(new Analyzer({ text, columns: inCols }).analyze(below), text);
    // as text the parser reads back into the same tree (the analyzer's display would lose a
    // string literal's escapes); should it not, the filter stays
    return exactText(below);
  } catch {
    return null; // a name the projection makes no replacement for, or a text that does not analyze: the filter stays
  }
}
