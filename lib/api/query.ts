/**
 * `sluice` (and `sluice/query`): the query API, Spark's vocabulary in TypeScript. No AWS and no
 * CDK imports: a query module built from this runs anywhere the engine does.
 *
 *   import { readStream, window, sum, count } from 'sluice';
 */
export {
  readStream,
  window,
  sessionWindow,
  col,
  count,
  sum,
  min,
  max,
  avg,
  first,
  last,
  approxCountDistinct,
  renamed,
  windowOf,
  windowStart,
  windowEnd,
  windowTime,
  outputColumns,
  AggBuilder,
  DataStreamReader,
  DataStreamWriter,
  GroupedFrame,
  StreamFrame,
  staticTable,
  type AggArg,
  type AggFn,
  type AggSpec,
  type AnyColumns,
  type ColumnInfo,
  type FrameColumns,
  type GroupArg,
  type GroupKey,
  type InputRowOf,
  type InputValue,
  type OperatorStep,
  type OutputMode,
  type OutputRowOf,
  type OutputValue,
  type ProjectItem,
  type QueryPlan,
  type RowOf,
  type SchemaColumns,
  type SourceSpec,
  type JoinOnArg,
  type JoinPredicate,
  type JoinedColumns,
  type StaticJoinType,
  type StaticTable,
  type StaticTableSpec,
} from '../engine/query';
export type { ColumnType, Schema } from '../engine/schema';
export type { Json, OutputRow, Row, StaticTableReader, StaticTables } from '../engine/ports';
export type { StreamingProgress, ProgressListener } from '../engine/progress';
export { SluiceError, InvalidQueryError, InvalidOptionError, CheckpointMismatchError, LeaseLostError, DataLossError } from '../engine/errors';
