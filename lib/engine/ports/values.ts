/** The plain values every port carries: JSON, rows, output rows. */

/** A JSON value as stored in checkpoints and state. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A row as it flows through the engine: column name to value. Timestamps are epoch µs (timestamps.ts Micros: a number, or a bigint beyond 2^53 − 1). */
export type Row = Record<string, unknown>;

/** Output rows are JSON-ready: timestamps as ISO strings, windows as {start, end}. */
export type OutputRow = Record<string, Json>;
