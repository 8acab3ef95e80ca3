/**
 * A filter right after a projection: Spark's optimizer (PushPredicateThroughNonJoin, its Project
 * case) moves it below the projection, each column the projection copies named as the column it
 * copies, so that the filter can go on down: below an aggregation when it reads only grouping
 * columns, through a stream-stream join, below the watermark. `selectExpr("country AS c", "n")`
 * after an aggregation then `filter("c = 'DE'")` keeps the other countries' groups out of the
 * state, as the filter right after the aggregation does.
 *
 * Moved here: a filter that reads only columns the projection copies unchanged, below a projection
 * that only copies, renames or drops columns (a `select`, or a `selectExpr` of bare columns):
 * such a projection can raise no error for a row, so which rows become dead letters, and with
 * which reason, does not depend on where the filter runs. Spark also moves a filter through a
 * projection that computes, with the expression in place of the name; not done here.
 */
import { Analyzer, type ColumnReference } from '../expr/analyze';
import { checkFilterBoolean } from '../expr';
import { parseExpression } from '../expr/parser';
import type { ColumnInfo } from '../plan/columns';
import type { StatelessStage } from '../plan/types';
import type { Row } from '../ports';
import { find } from './join-condition';

/** For each column a copying projection outputs, the input column it copies; null for a stage that is not one. */
function copiedColumns(stage: StatelessStage): Map<string, string> | null {
  switch (stage.kind) {
    case 'select':
      return new Map(stage.columns.map((c) => [c, c]));
    case 'project':
      if (!stage.items.every((i) => i.kind === 'column')) return null;
      return new Map(stage.items.map((i) => [i.as, (i as { column: string }).column]));
    case 'selectExpr': {
      const { compiled } = stage;
      if (compiled.generates || compiled.sources.some((s) => s === null)) return null;
      return new Map(compiled.columns.map((c, k) => [c.name, compiled.sources[k]!]));
    }
    default:
      return null;
  }
}

/**
 * The filter `text` (over `outCols`, what `stage` outputs) as a filter over `inCols`, what the
 * stage receives, when it may move below the stage (see the file comment); else null.
 */
export function filterBelowProjection(text: string, stage: StatelessStage, inCols: readonly ColumnInfo[], outCols: readonly ColumnInfo[]): string | null {
  const copies = copiedColumns(stage);
  if (copies === null) return null;
  // each name the filter reads is the input column it copies; a name that is not one resolves
  // nowhere (the scope has no columns of its own), so the filter stays
  const refer = (parts: readonly string[]): ColumnReference | null => {
    const out = find(outCols, parts[0]);
    const source = out && copies.get(out.name);
    const column = source === undefined ? undefined : find(inCols, source);
    return column ? { column, used: 1, sql: column.name, read: (row: Row) => row[column.name] } : null;
  };
  try {
    return checkFilterBoolean(new Analyzer({ text, columns: [], refer }).analyze(parseExpression(text)), text).sql;
  } catch {
    return null;
  }
}
