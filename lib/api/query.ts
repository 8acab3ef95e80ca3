/**
 * `sluice` (and `sluice/query`): the query API, Spark's vocabulary in TypeScript. No AWS and no
 * CDK imports: a query module built from this runs anywhere the engine does.
 *
 *   import { readStream, window, sum, count } from 'sluice';
 *
 * Spark SQL expressions: `expr('amount * qty')`, and the functions module as the namespace `F`
 * (pyspark's `functions as F`): `F.upper(F.col('country'))`, `F.when(...)`, `frame.col('amount').multiply(2)`.
 * The top-level `col` and `explode` keep their older meanings (a groupBy key, a select's generator item).
 */
export { readStream, DataStreamReader } from '../engine/query/reader';
export { type NaFunctions, StreamFrame } from '../engine/query/frame';
export { GroupedFrame } from '../engine/query/grouped';
export { type DirectKey, GroupingCall, GroupingSetsFrame, grouping, groupingId } from '../engine/query/grouping-sets';
export { DataStreamWriter } from '../engine/query/writer';
export {
  window,
  sessionWindow,
  col,
  count,
  sum,
  min,
  max,
  avg,
  tryAvg,
  trySum,
  first,
  anyValue,
  last,
  approxCountDistinct,
  stddev,
  stddevSamp,
  stddevPop,
  variance,
  varSamp,
  varPop,
  skewness,
  kurtosis,
  median,
  mode,
  percentile,
  percentileApprox,
  listagg,
  stringAgg,
  countIf,
  boolAnd,
  boolOr,
  collectList,
  collectSet,
  bitAnd,
  bitOr,
  bitXor,
  product,
  maxBy,
  minBy,
  corr,
  covarPop,
  covarSamp,
  regrCount,
  regrAvgx,
  regrAvgy,
  regrSxx,
  regrSyy,
  regrSxy,
  regrSlope,
  regrIntercept,
  regrR2,
  renamed,
  windowOf,
  windowStart,
  windowEnd,
  windowTime,
  explode,
  explodeOuter,
  posexplode,
  posexplodeOuter,
  AggBuilder,
  GeneratorItem,
  asc,
  desc,
} from '../engine/query/functions';
export type { SortKey } from '../engine/query/functions';
export * as F from '../engine/query/fn';
export { compileSql, SqlError } from '../engine/sql';
export { explainPlan as explain } from '../observe/explain';
export { expr } from '../engine/query/column';
export type { Operand } from '../engine/query/column';
export type { Literal } from '../engine/query/sql-text';
export type { ColArg, ColOf, ColType, UnknownType } from '../engine/query/column-types';
export { multiplyDecimal, addDecimal } from '../engine/query/decimals';
export { entryValue, mapEntries, setEntry } from '../engine/map-entries';
export { staticTable, type StaticTable } from '../engine/query/static-table';
export { StatefulProcessor } from '../engine/tws/api';
export type {
  ExpiredTimerInfo,
  Json as ProcessorJsonValue,
  ListState,
  MapState,
  ProcessorClass,
  ProcessorModes,
  ProcessorOutputMode,
  ProcessorRow,
  QueryInfo,
  StatefulProcessorHandle,
  StateValue,
  TimeMode,
  TimerValues,
  TTLConfig,
  ValueState,
} from '../engine/tws/api';
export type { TimeRangeArg } from '../engine/query/join-args';
export type {
  AggArg,
  AnyColumns,
  FrameColumns,
  GroupArg,
  InputRowOf,
  InputValue,
  OutputRowOf,
  OutputValue,
  RowOf,
  SchemaColumns,
  TypeOf,
  ArrayOf,
  MapOf,
  StructOf,
  DdlTypeOf,
  ColumnPaths,
  PathInfo,
  ProcessorRowOf,
  ProcessorValue,
  SelectArg,
  SelectColumns,
  JoinOnArg,
  JoinedColumns,
  StreamJoinedColumns,
} from '../engine/query/types';
export type {
  AggFn,
  BooleanAggFn,
  ByAggFn,
  BitAggFn,
  PairAggFn,
  CollectAggFn,
  StatisticalAggFn,
  AggSpec,
  SortDirection,
  GroupKey,
  OperatorStep,
  OutputMode,
  ProjectItem,
  ExplodeItem,
  ColumnPath,
  PathStep,
  QueryPlan,
  SourceSpec,
  JoinPredicate,
  StaticJoinType,
  StaticTableSpec,
  StreamJoinType,
  PlanInput,
} from '../engine/plan/types';
export { outputColumns } from '../engine/plan/chain';
export type { ColumnInfo } from '../engine/plan/columns';
export type { Column, ColumnType, DataType, Schema } from '../engine/schema';
export type { FileFormat } from '../engine/formats';
export type { Json, OutputRow, Row, StaticTableReader, StaticTables } from '../engine/ports';
export type { StreamingProgress, ProgressListener, ProgressDurations, ProgressEventTime, SluiceProgress } from '../engine/progress';
// Types the exports above name in their signatures, exported so the API reference (npm run docs) documents them.
export type { AggColumns, DroppedColumns, KeyColumns, RenamedColumns, UnionColumns } from '../engine/query/types';
export type { ReplaceScalar } from '../engine/query/column-ops';
export type { JoinConditionArg } from '../engine/query/frame';
export type {
  ColumnKey,
  WindowKey,
  SessionKey,
  StatefulSpec,
  StatelessStage,
  ExprStage,
  OrderStage,
  SortStageKey,
  RowExtender,
  JoinExprCondition,
  JoinConditionCheck,
  StreamJoinSpec,
  TransformWithStateSpec,
  JoinStage,
  JoinKeyPair,
  TimeRange,
  WindowFilter,
} from '../engine/plan/types';
export type { ChainDraft } from '../engine/plan/chain';
export type { BatchLimits } from '../engine/ports/source';
export { SluiceError, InvalidQueryError, InvalidOptionError, CheckpointMismatchError, LeaseLostError, DataLossError } from '../engine/errors';
