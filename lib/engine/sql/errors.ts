/**
 * The error of a SQL query module: Spark's error class, the position in the whole statement
 * (0-based) and its line and column (1-based), so `[PARSE_SYNTAX_ERROR] ... (line 3, column 12)`
 * points into the .sql file. An expression's error (lib/engine/expr) found while the query is
 * built is re-raised as one, its position moved from the expression's text into the statement's.
 */
import { InvalidQueryError, SluiceError } from '../errors';
import { ExpressionError } from '../expr/errors';

export class SqlError extends InvalidQueryError {
  readonly line: number;
  readonly column: number;
  constructor(
    readonly errorClass: string,
    /** The message without the class and the position. */
    readonly reason: string,
    readonly sql: string,
    readonly position: number,
  ) {
    const before = sql.slice(0, position).split('\n');
    const line = before.length;
    const column = before[before.length - 1].length + 1;
    super(`[${errorClass}] ${reason} (line ${line}, column ${column})`, { details: { errorClass, position, line, column } });
    this.line = line;
    this.column = column;
  }
}

/** A syntax error at `pos`: what was found there and what was expected. */
export function syntaxError(sql: string, pos: number, expected: string): SqlError {
  const rest = sql.slice(pos).match(/^(\w+|\S)/)?.[0];
  const near = rest === undefined ? 'end of input' : `'${rest.length > 20 ? `${rest.slice(0, 20)}...` : rest}'`;
  return new SqlError('PARSE_SYNTAX_ERROR', `Syntax error at or near ${near}: expected ${expected}`, sql, pos);
}

/** A form sluice's SQL does not take (yet): what it is and the fix. */
export function unsupported(sql: string, pos: number, what: string): SqlError {
  return new SqlError('UNSUPPORTED_FEATURE', what, sql, pos);
}

const POSITION_SUFFIX = / \(at position \d+ of [\s\S]*\)$/;

/** The message of an ExpressionError without its class and position. */
export function reasonOf(e: ExpressionError): string {
  return e.message.replace(/^\[[^\]]+\] /, '').replace(POSITION_SUFFIX, '');
}

/** A slice of the statement: its text and where it starts. */
export interface Span {
  readonly text: string;
  readonly pos: number;
}

/**
 * Runs `build` (a frame API call given the texts of `spans`, slices of the statement); an
 * ExpressionError about one of them comes back as a SqlError at its place in the statement.
 */
export function within<T>(sql: string, spans: readonly Span[], build: () => T): T {
  try {
    return build();
  } catch (e) {
    const span = e instanceof ExpressionError ? spans.find((s) => s.text === e.text) : undefined;
    if (e instanceof ExpressionError && span) throw new SqlError(e.errorClass, reasonOf(e), sql, span.pos + (e.position ?? 0));
    throw e;
  }
}

/**
 * Runs `build` (frame API calls for the clause at `pos`); a refusal of the frame API, which has no
 * position of its own, gets the clause's line and column appended (its class and text kept).
 */
export function atClause<T>(sql: string, pos: number, build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (e instanceof SluiceError && !(e instanceof SqlError) && !(e instanceof ExpressionError) && !/\(line \d+, column \d+\)$/.test(e.message)) {
      const before = sql.slice(0, pos).split('\n');
      e.message = `${e.message} (line ${before.length}, column ${before[before.length - 1].length + 1})`;
    }
    throw e;
  }
}
