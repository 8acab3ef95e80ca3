/**
 * The errors of Spark SQL expressions, each carrying Spark's error class and a message that begins
 * with it in brackets, as Spark's messages do (`[DIVIDE_BY_ZERO] ...`):
 *
 * - `ExpressionError`: the expression cannot be used (a syntax error, an unknown column, a type Spark
 *   refuses, a non-deterministic function). Raised when the query is built, before any batch runs;
 *   it is an `InvalidQueryError`, so callers that refuse invalid queries refuse it alike.
 * - `SparkRowError`: the expression failed for one row under ANSI (division by zero, a cast of
 *   malformed text, an overflow...). The stage turns it into a dead letter (FORMAT-3, "Errors are
 *   dead letters") and goes on.
 */
import { InvalidQueryError, SluiceError } from '../errors';

/** An expression refused before it runs: Spark's error class, the expression's text and the position in it (0-based). */
export class ExpressionError extends InvalidQueryError {
  constructor(
    readonly errorClass: string,
    message: string,
    readonly text: string,
    readonly position?: number,
  ) {
    super(`[${errorClass}] ${message}${position === undefined ? '' : ` (at position ${position + 1} of ${JSON.stringify(text)})`}`, {
      details: { errorClass, text, position },
    });
  }
}

/** An ANSI error raised by an expression for one row; `message` begins with `[errorClass]`. */
export class SparkRowError extends SluiceError {
  constructor(
    readonly errorClass: string,
    message: string,
  ) {
    super(`[${errorClass}] ${message}`, { details: { errorClass } });
  }
}

/** Whether `e` is a row error of an expression (the stage's dead-letter test). */
export function isSparkRowError(e: unknown): e is SparkRowError {
  return e instanceof SparkRowError;
}

/** `fn` with its row errors (SparkRowError) as NULL: a try_ function's or try_cast's failOnError false. */
export function nullOnRowError<A extends unknown[]>(fn: (...args: A) => unknown): (...args: A) => unknown {
  return (...args) => {
    try {
      return fn(...args);
    } catch (e) {
      if (e instanceof SparkRowError) return null;
      throw e;
    }
  };
}
