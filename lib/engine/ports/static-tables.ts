import type { StaticTableSpec } from '../plan/types';
import type { Row } from './values';

/**
 * A static table a stream-static join reads (query.ts StaticTableSpec), opened once per run.
 * A table is read whole (`load`: every row, typed by its schema) or looked up by key (`lookup`:
 * the rows whose key columns, in the spec's `key` order, equal one of `keys`; any order, keys
 * without a row left out). Rows are typed as a source's (TIMESTAMP as epoch µs).
 */
export interface StaticTableReader {
  readonly description: string;
  load?(): Promise<Row[]>;
  lookup?(keys: ReadonlyArray<readonly unknown[]>): Promise<Row[]>;
}

/** Opens the static tables of a plan's join stages (lib/aws/pipeline.ts builds the AWS one). */
export interface StaticTables {
  open(spec: StaticTableSpec): StaticTableReader;
}
