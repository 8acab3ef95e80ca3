/**
 * Spark's `unpivot` / `melt` (Dataset.unpivot, 3.4): the id columns, then one row per value column
 * with its name in the variable column and its value in the value column, as a selectExpr of a
 * `stack` generator (Spark's Unpivot is an Expand of the same rows). Null values are kept (the
 * DataFrame form; SQL's UNPIVOT drops them by default). The value columns meet in their common
 * type, a STRING only beside STRINGs, as Spark's UnpivotCoercion (findWiderTypeWithoutStringPromotion)
 * finds it; none is UNPIVOT_VALUE_DATA_TYPE_MISMATCH.
 */
import { ddlOf } from '../ddl';
import { InvalidQueryError } from '../errors';
import { analyzeExpression } from '../expr';
import { commonType, sameType, typeName } from '../expr/types';
import type { ColumnInfo } from '../plan/columns';
import type { DataType } from '../schema';
import { resolveName } from '../resolve-name';
import { quoteName, quoteString } from './sql-text';

/** The selectExpr items of the unpivot of a frame with `columns`. */
export function unpivotItems(
  columns: readonly ColumnInfo[],
  ids: readonly string[],
  values: readonly string[] | null,
  variableColumnName: string,
  valueColumnName: string,
  /** What the variable column holds for each value column (SQL's `IN (a AS x)`); default: their names. */
  labels?: readonly string[],
): string[] {
  for (const [what, name] of [
    ['variableColumnName', variableColumnName],
    ['valueColumnName', valueColumnName],
  ] as const) {
    if (typeof name !== 'string' || name === '') throw new InvalidQueryError(`unpivot: ${what} is the name of an output column, a non-empty string`);
  }
  const find = (name: string): string => {
    const c = typeof name === 'string' ? resolveName(columns, name) : undefined;
    if (c === undefined) {
      throw new InvalidQueryError(
        `[UNRESOLVED_COLUMN.WITH_SUGGESTION] unpivot: the column ${JSON.stringify(name)} cannot be resolved: the frame has ${columns.map((x) => x.name).join(', ')}`,
      );
    }
    return c.name;
  };
  const idNames = ids.map(find);
  const valueNames = values === null ? columns.map((c) => c.name).filter((n) => !idNames.includes(n)) : values.map(find);
  if (valueNames.length === 0) {
    throw new InvalidQueryError(
      '[UNPIVOT_REQUIRES_VALUE_COLUMNS] At least one value column needs to be specified for UNPIVOT, all columns specified as ids: name the value columns, or fewer ids',
    );
  }
  const types = valueNames.map((n) => analyzeExpression(quoteName(n), columns).type);
  // (a frame's column is never of the NULL literal's type nor an INTERVAL: common is a column type)
  const common = commonType(types, false);
  if (common === null) {
    throw new InvalidQueryError(
      `[UNPIVOT_VALUE_DATA_TYPE_MISMATCH] Unpivot value columns must share a least common type, some types do not: [${valueNames.map((n, i) => `\`${n}\` ${typeName(types[i])}`).join(', ')}]: cast the value columns to one type first`,
    );
  }
  const valueText = (n: string, i: number) => (sameType(types[i], common) ? quoteName(n) : `CAST(${quoteName(n)} AS ${ddlOf(common as DataType)})`);
  const stack = `stack(${valueNames.length}, ${valueNames.map((n, i) => `${quoteString(labels?.[i] ?? n)}, ${valueText(n, i)}`).join(', ')})`;
  return [...idNames.map(quoteName), `${stack} AS (${quoteName(variableColumnName)}, ${quoteName(valueColumnName)})`];
}
