/** The two ways an expression fails in tests: refused when compiled, or a row error when evaluated. */
import type { ColumnInfo } from '../../lib/engine/plan/columns';
import { compileExpression, ExpressionError, SparkRowError } from '../../lib/engine/expr';

/** The ExpressionError compiling `text` over `columns` raises (fails the test when it compiles). */
export function refusalOf(text: string, columns: readonly ColumnInfo[]): ExpressionError {
  try {
    compileExpression(text, columns);
  } catch (e) {
    if (e instanceof ExpressionError) return e;
    throw e;
  }
  throw new Error(`${text} was not refused`);
}

/** The SparkRowError evaluating `text` on `row` raises (fails the test when it raises none). */
export function rowErrorOf(text: string, columns: readonly ColumnInfo[], row: Record<string, unknown> = {}): SparkRowError {
  const e = compileExpression(text, columns);
  try {
    e.evaluate(row);
  } catch (err) {
    if (err instanceof SparkRowError) return err;
    throw err;
  }
  throw new Error(`${text} raised no row error`);
}

/** The message of the error compiling or evaluating `text` raises, or 'no error'. */
export function errorMessageOf(text: string, columns: readonly ColumnInfo[] = [], row: Record<string, unknown> = {}): string {
  try {
    compileExpression(text, columns).evaluate(row);
  } catch (e) {
    return (e as Error).message;
  }
  return 'no error';
}
