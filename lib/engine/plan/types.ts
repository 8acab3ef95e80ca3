/**
 * The query plan as plain data (plus the user's row functions): what the builders in
 * lib/engine/query/ produce and the executor runs. Analysing a plan is in this folder's other
 * modules: columns.ts (the columns after each stage), chain.ts (the operators in run order),
 * analysis.ts (Spark's refusals), to-plan.ts (the checked plan), shape.ts (the checkpoint's shape).
 */
import type { ColumnType, DataType, Schema } from '../schema';
import type { FileFormat } from '../formats';
import type { BatchLimits, OutputRow, Row } from '../ports';
import type { CompiledExpression, CompiledSelect } from '../expr';
import type { ProcessorClass, TimeMode } from '../tws/api';

export type OutputMode = 'append' | 'update' | 'complete';

export interface SourceSpec {
  readonly kind: 'files' | 'kinesis';
  /** The files' format (lib/engine/formats): Kinesis records are JSON. */
  readonly format: FileFormat;
  /** s3://bucket/prefix for files; the stream name or ARN for Kinesis. Optional: a runtime may supply it. */
  readonly path?: string;
  readonly schema: Schema;
  readonly options: Readonly<Record<string, string | number | boolean>>;
}

export type StatelessStage =
  | { readonly kind: 'filter'; readonly fn: (row: Row) => boolean; readonly label: string }
  | { readonly kind: 'select'; readonly columns: readonly string[] }
  | { readonly kind: 'project'; readonly items: readonly ProjectItem[] }
  | {
      readonly kind: 'withColumn';
      readonly name: string;
      readonly type: ColumnType;
      /** The full type when one was given in DDL (`DECIMAL(21,2)`, `ARRAY<STRING>`). */
      readonly dataType?: DataType;
      readonly fn: (row: Row) => unknown;
      /** The row with column `name` set to the value, as one object literal over the stage's input columns (rowExtender); without it, a spread. */
      readonly extend?: RowExtender;
    }
  | {
      readonly kind: 'watermark';
      readonly id: string;
      readonly column: string;
      readonly delayMs: number;
      readonly delayText: string;
      /**
       * Conjuncts of later filters that Spark's optimizer pushes below the watermark (deterministic,
       * not reading the event-time column): a row that fails one never reaches the watermark, so
       * its event time does not count (query/frame.ts filter). The filter itself stays in place.
       */
      readonly gates?: ReadonlyArray<(row: Row) => boolean>;
    }
  /**
   * Adds (or replaces) column `name` with the value at a nested path: a groupBy on
   * `customer.country`. `unread`: no later stage reads it, so the value is NULL (column-pruning.ts).
   */
  | { readonly kind: 'extract'; readonly name: string; readonly path: ColumnPath; readonly extend?: RowExtender; readonly unread?: true }
  | ExprStage
  | JoinStage
  | OrderStage;

/**
 * Spark's sort (orderBy) and limit over a batch's whole output: only after a complete-mode
 * aggregation, whose every batch emits the whole result table (plan/analysis.ts refuses them
 * elsewhere, as Spark does). They take all the rows the stages before them gave at once
 * (order.ts, through run/runtime.ts runStages), never a chunk.
 */
export type OrderStage = { readonly kind: 'sort'; readonly keys: readonly SortStageKey[] } | { readonly kind: 'limit'; readonly n: number };

/** A sort key: its expression over the rows, compiled, and its direction and null placement. */
export interface SortStageKey extends SortDirection {
  /** The key as written (`n DESC NULLS LAST` is text `n`). */
  readonly text: string;
  /** Its value in a row and the order of two values of its type (expr/values.ts comparator). */
  readonly value: (row: Row) => unknown;
  readonly compare: (a: unknown, b: unknown) => number;
}

/**
 * A stage of Spark SQL expressions (lib/engine/expr, FORMAT-3 "Expressions"): its text as
 * written, and the text compiled once, when the stage was added, against the columns it
 * receives. A row whose expression raises an ANSI error becomes a dead letter.
 */
export type ExprStage =
  | { readonly kind: 'selectExpr'; readonly items: readonly string[]; readonly compiled: CompiledSelect }
  | { readonly kind: 'filterExpr'; readonly text: string; readonly test: (row: Row) => boolean }
  | {
      readonly kind: 'withColumnExpr';
      readonly name: string;
      readonly text: string;
      readonly compiled: CompiledExpression;
      readonly extend?: RowExtender;
    };

/** A row with one column added or replaced: `{...row, [name]: value}`, made faster (lib/engine/rows.ts rowExtender). */
export type RowExtender = (row: Row, value: unknown) => Row;

// ------------------------------------------------------------------------ nested values

/** One step into a nested value: a STRUCT's field, an ARRAY's element (0-based), a MAP's value. */
export type PathStep = { readonly field: string } | { readonly index: number } | { readonly key: string };

/** A nested value's path: `lines[0].sku` is column `lines`, then index 0, then field `sku`. */
export interface ColumnPath {
  readonly column: string;
  readonly steps: readonly PathStep[];
  /** The path as written (errors name it). */
  readonly text: string;
}

// ------------------------------------------------------------------------ stream-static joins

/**
 * A static table (Spark's batch DataFrame on a join's right side), as plain data: the executor
 * opens it through the StaticTables port (ports.ts). `rows` holds typed rows (TIMESTAMP as ms).
 */
export type StaticTableSpec =
  | { readonly kind: 'rows'; readonly schema: Schema; readonly rows: readonly Row[] }
  | { readonly kind: 's3'; readonly uri: string; readonly format: 'json' | 'csv'; readonly schema: Schema }
  | { readonly kind: 'dynamodb'; readonly tableName: string; readonly key: readonly string[]; readonly schema: Schema };

/** The join types of a stream-static join (the stream on the left). */
export type StaticJoinType = 'inner' | 'leftOuter' | 'leftSemi' | 'leftAnti';

/** One item of a join's `condition` (FORMAT-2): a comparison with a literal, or any of several. */
export type JoinPredicate =
  | { readonly column: string; readonly op: '=' | '!=' | '<' | '<=' | '>' | '>='; readonly value: string | number | boolean }
  | { readonly anyOf: readonly JoinPredicate[] };

/** A conjunct of a join condition given as an expression, compiled: its text and its test. */
export interface JoinConditionCheck {
  readonly text: string;
  readonly test: (row: Row) => boolean;
}

/**
 * A join condition given as a Spark SQL expression (query/join-condition.ts), split into its
 * conjuncts. Those Spark pushes into an input became filterExpr stages there (`pushed` keeps their
 * text for the shape); the others are checked in the join: `left` / `right` on one side's row
 * (a row failing one is not matched, and an outer side's is emitted with nulls at once), `pair`
 * on the pair (predicate.ts pairRow), which is no match when one fails.
 */
export interface JoinExprCondition {
  /** The condition as written. */
  readonly text: string;
  readonly left: readonly JoinConditionCheck[];
  readonly right: readonly JoinConditionCheck[];
  readonly pair: readonly JoinConditionCheck[];
  readonly pushed: readonly string[];
}

/** An equi-join key: `using` for a string key (one output column), else left = right (both output). */
export interface JoinKeyPair {
  readonly left: string;
  readonly right: string;
  readonly using: boolean;
}

export interface JoinStage {
  readonly kind: 'join';
  readonly id: string;
  readonly table: StaticTableSpec;
  readonly type: StaticJoinType;
  readonly on: readonly JoinKeyPair[];
  readonly condition: readonly JoinPredicate[];
  /** A condition given as an expression: every conjunct checked on the pair (a stream-static join pushes nothing). */
  readonly conditionExpr?: JoinExprCondition;
}

// ------------------------------------------------------------------------ stream-stream joins

/** The join types of a stream-stream join (Spark's StreamingSymmetricHashJoinExec). */
export type StreamJoinType = 'inner' | 'leftOuter' | 'rightOuter' | 'fullOuter' | 'leftSemi';

/**
 * A join's event-time range, FORMAT-2's `timeRange`: `right + lower <= left <= right + upper` on
 * two TIMESTAMP columns (`<` where strict), Spark's `left BETWEEN right + lower AND right + upper`.
 * Either bound may be absent (null).
 */
export interface TimeRange {
  readonly left: string;
  readonly right: string;
  /** The bounds in µs (a duration, a safe integer). */
  readonly lowerUs: number | null;
  readonly upperUs: number | null;
  readonly lowerStrict: boolean;
  readonly upperStrict: boolean;
}

/**
 * A streaming input other than the query's first one, joined in by a stream-stream join: its own
 * source, its stateless stages (a withWatermark among them) and its own stateful operators.
 */
export interface PlanInput {
  readonly name: string;
  readonly source: SourceSpec;
  readonly stages: readonly StatelessStage[];
  readonly operators: readonly OperatorStep[];
  /** Its rate limits (maxFilesPerTrigger, ...): each input's apply to it alone. */
  readonly limits: BatchLimits;
  /**
   * A union's other stream (StreamFrame.union): its rows, after its own stages, join the query's
   * own rows before plan.stages[unionAt] and go on through the stages from there, as if read by
   * the first source. Absent: a stream-stream join's other side (its `input` names it). An index:
   * whatever puts a stage into plan.stages before it must move it (query/stream-join-frame.ts
   * pushFilter puts nothing there for that reason).
   */
  readonly unionAt?: number;
}

/**
 * An item of a projection (FORMAT-2's `select`): a column copied or renamed, the tumbling window
 * containing a TIMESTAMP, or the start, end or window_time (end − 1 µs) of a window column.
 */
export type ProjectItem =
  | { readonly kind: 'column'; readonly as: string; readonly column: string }
  /**
   * The value at a nested path (`customer.country`, `lines[0]`, `attrs['color']`); `unread`: no
   * later stage reads the column, so the path is not followed and the value is NULL (column-pruning.ts).
   */
  | { readonly kind: 'path'; readonly as: string; readonly path: ColumnPath; readonly unread?: true }
  | ExplodeItem
  | { readonly kind: 'window'; readonly as: string; readonly window: WindowKey }
  | { readonly kind: 'windowStart' | 'windowEnd' | 'windowTime'; readonly as: string; readonly column: string };

/**
 * Spark's explode / explode_outer / posexplode / posexplode_outer as a select item: one output row
 * per element of an ARRAY (columns `col`, with `pos` first for posexplode) or entry of a MAP
 * (`key`, `value`); a null or empty one gives no row, or (outer) one row of nulls. `names`
 * renames the columns in order (Spark's `.as(...)`); null: Spark's names.
 */
export interface ExplodeItem {
  readonly kind: 'explode';
  readonly path: ColumnPath;
  readonly outer: boolean;
  readonly position: boolean;
  readonly names: readonly string[] | null;
  /** The key type of the exploded MAP when it is not STRING (`map(1, 'a')`): its keys, held as text, are read back to it. */
  readonly keyType?: DataType;
}

export interface WindowKey<Col extends string = string> {
  readonly kind: 'window';
  readonly column: Col;
  /** Length, slide and start offset in µs (durations: safe integers). */
  readonly durationUs: number;
  readonly slideUs: number;
  readonly startUs: number;
  readonly text: string;
}
export interface SessionKey<Col extends string = string> {
  readonly kind: 'session';
  readonly column: Col;
  /** The gap in µs (0 when the gap is per row, `gapColumn`, or `calendarGap`). */
  readonly gapUs: number;
  readonly text: string;
  /**
   * A dynamic gap (`session_window(t, CASE ... END)`): the column the stage before the
   * aggregation computes the row's gap into, a STRING read as an interval; a row whose gap is
   * null, unreadable or not positive joins no session.
   */
  readonly gapColumn?: string;
  /**
   * A literal gap that is no positive fixed duration (zero, negative, or with months), which Spark
   * runs: each row's session ends at its time plus `text` read as an interval (calendar months
   * included), and a row whose session does not end after it starts joins none.
   */
  readonly calendarGap?: true;
}
export interface ColumnKey<Name extends string = string> {
  readonly kind: 'column';
  readonly name: Name;
}
export type GroupKey = WindowKey | SessionKey | ColumnKey;

export type AggFn =
  | 'count'
  | 'sum'
  | 'min'
  | 'max'
  | 'avg'
  | 'try_sum'
  | 'try_avg'
  | 'first'
  | 'any_value'
  | 'last'
  | 'approxCountDistinct'
  | StatisticalAggFn
  | CollectAggFn
  | BooleanAggFn
  | ByAggFn
  | PairAggFn
  | BitAggFn
  | 'product'
  | 'median'
  | 'mode'
  | 'percentile'
  | 'percentile_disc'
  | 'percentile_approx'
  | 'listagg';
/** bit_and, bit_or and bit_xor: the bitwise AND, OR or XOR of an integral column's non-null values, of its type. */
export type BitAggFn = 'bit_and' | 'bit_or' | 'bit_xor';
/** max_by(x, by) and min_by(x, by): the value of `column` on the row whose `by` is the largest (smallest). */
export type ByAggFn = 'max_by' | 'min_by';
/**
 * Aggregates of number pairs (the rows where both are non-null), `fn(column, by)`: corr,
 * covar_pop, covar_samp and the regressions of `column` (y, the dependent variable) on `by` (x).
 */
export type PairAggFn =
  | 'corr'
  | 'covar_pop'
  | 'covar_samp'
  | 'regr_count'
  | 'regr_avgx'
  | 'regr_avgy'
  | 'regr_sxx'
  | 'regr_syy'
  | 'regr_sxy'
  | 'regr_slope'
  | 'regr_intercept'
  | 'regr_r2';
/** Spark's second-moment aggregates (CentralMomentAgg), by the names Spark prints them with. */
export type StatisticalAggFn = 'stddev' | 'stddev_samp' | 'std' | 'stddev_pop' | 'variance' | 'var_samp' | 'var_pop' | 'skewness' | 'kurtosis';
/** collect_list and collect_set: an ARRAY of the column's non-null values. */
export type CollectAggFn = 'collect_list' | 'collect_set';
/** Aggregates of a BOOLEAN column: count_if (BIGINT), bool_and / every and bool_or / some / any (BOOLEAN). */
export type BooleanAggFn = 'count_if' | 'bool_and' | 'every' | 'bool_or' | 'some' | 'any';
export interface AggSpec {
  readonly fn: AggFn;
  /** Absent (or '*') for count(*). */
  readonly column?: string;
  /** max_by and min_by: the column whose largest (smallest) value picks the row; a pair aggregate (corr, covar_*, regr_*): its second column. */
  readonly by?: string;
  /** percentile and percentile_approx: the percentage, from 0 to 1, or an array of them (the aggregate is then an ARRAY). */
  readonly percentage?: number | readonly number[];
  /** first, last and any_value: skip null values (Spark's ignoreNulls, `first(x, true)`). */
  readonly ignoreNulls?: true;
  /** percentile_approx: its accuracy (Spark's default 10000; 1/accuracy is its relative error). */
  readonly accuracy?: number;
  /** listagg: the text between values (absent: Spark's NULL delimiter, none). */
  readonly delimiter?: string;
  /**
   * listagg's WITHIN GROUP (ORDER BY ...): each key's direction and where its nulls go; the keys'
   * values are `by` (one key: its column; several: a STRUCT of them, field by field). mode's: one
   * key, its own column; descending, the highest of equally frequent values (else the lowest).
   * percentile's and percentile_disc's (percentile_cont's WITHIN GROUP): descending, the values
   * sorted from the highest.
   */
  readonly order?: readonly SortDirection[];
  readonly as: string;
}

/** A sort key's direction: Spark's ASC NULLS FIRST by default, DESC NULLS LAST. */
export interface SortDirection {
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

/** The texts of the conjuncts, and their test of a row that holds the grouping keys and the window (`{start, end}`). */
export interface WindowFilter {
  readonly texts: readonly string[];
  readonly test: (row: Row) => boolean;
}

/** A stateful operator of a plan and the stateless stages between it and the next (or the sink). */
export interface OperatorStep {
  readonly spec: StatefulSpec;
  readonly post: readonly StatelessStage[];
}

export type StatefulSpec =
  | {
      readonly kind: 'aggregate';
      readonly keys: readonly GroupKey[];
      readonly aggs: readonly AggSpec[];
      /**
       * Conjuncts of a filter after the aggregation that read its window (and only grouping keys
       * besides): Spark's optimizer moves them below the aggregation, where they test each (row,
       * window) before the row is added to that window's group (query/frame.ts). A pair they reject
       * makes no group and is not late. The filter itself stays after the aggregation too.
       */
      readonly windowFilter?: WindowFilter;
    }
  | { readonly kind: 'dedup'; readonly columns: readonly string[] | null; readonly withinWatermark: boolean }
  /**
   * Spark's limit in append mode (StreamingGlobalLimitExec): the first `n` rows the query ever
   * passes here, over all its batches; the count emitted so far is its state. toPlan makes a
   * frame's limit() this operator in append mode (a complete-mode limit is an OrderStage).
   */
  | { readonly kind: 'limit'; readonly n: number }
  | StreamJoinSpec
  | TransformWithStateSpec;

/**
 * transformWithState (FORMAT-4): a user's StatefulProcessor over the rows grouped by `keys`, in
 * `timeMode`, emitting rows of `outputSchema`. `processor` is the class the engine instantiates
 * for every batch; `processorName` names it in messages.
 */
export interface TransformWithStateSpec {
  readonly kind: 'transformWithState';
  readonly keys: readonly string[];
  readonly processor: ProcessorClass;
  readonly processorName: string;
  readonly timeMode: TimeMode;
  readonly outputSchema: Schema;
  /** Spark's eventTimeColumnName: a TIMESTAMP column of the output, an event-time column after it. */
  readonly eventTimeColumn: string | null;
  /** The output mode transformWithState was given, when it was: the writer's must be the same. */
  readonly outputMode?: 'append' | 'update';
}

/**
 * A stream-stream join: the rows so far (left) with plan.inputs[input] (right). `condition` holds
 * the single-side items checked in the join; those Spark pushes into an input became a filter
 * stage of that input (`pushed` keeps them for the shape).
 */
export interface StreamJoinSpec {
  readonly kind: 'streamJoin';
  readonly input: number;
  readonly type: StreamJoinType;
  /**
   * The type the query was written with, when a filter after the join made Spark's optimizer run
   * it as `type` (EliminateOuterJoin: query/join-pushdown.ts filterThroughJoin). Spark checks the
   * query as written (UnsupportedOperationChecker), so plan/analysis.ts checks this one.
   */
  readonly declaredType?: StreamJoinType;
  readonly on: readonly JoinKeyPair[];
  readonly timeRange: TimeRange | null;
  readonly condition: readonly JoinPredicate[];
  readonly pushed: readonly JoinPredicate[];
  /** A condition given as an expression instead of `condition`. */
  readonly conditionExpr?: JoinExprCondition;
}

/** Carries a plan's output row type (types only: no such property exists at runtime). */
export declare const ROW_TYPE: unique symbol;

/** A checked query. `R` is the type of the rows it emits (see OutputRowOf); only the types carry it. */
export interface QueryPlan<R = OutputRow> {
  readonly [ROW_TYPE]?: R;
  readonly name: string;
  readonly source: SourceSpec;
  /**
   * The other streaming inputs, in the order they were joined (a stream-stream join's `input`
   * indexes them); their offsets follow the first source's in the checkpoint. Absent: none.
   */
  readonly inputs?: readonly PlanInput[];
  /** Stateless stages before the first stateful operator (or all of them for a stateless query). */
  readonly stages: readonly StatelessStage[];
  /**
   * The stateful operators in plan order (operatorId op0, op1, ...), each with the stateless stages
   * that follow it; each one receives the rows the one before emitted in the same batch.
   */
  readonly operators: readonly OperatorStep[];
  /** The first stateful operator (operators[0].spec), null for a stateless query. */
  readonly stateful: StatefulSpec | null;
  /** The stateless stages after the last stateful operator (its operators[].post). */
  readonly post: readonly StatelessStage[];
  readonly outputMode: OutputMode;
  readonly trigger: 'availableNow' | 'once';
  readonly limits: BatchLimits;
  /** What happens to rows the watermark rejects: Spark drops them; 'dead-letter' keeps them. */
  readonly lateRows: 'drop' | 'dead-letter';
  /**
   * Partitions of the stateful operator's state, by a hash of the grouping key (window left
   * out); fixed when the checkpoint is created, as Spark fixes spark.sql.shuffle.partitions.
   */
  readonly statePartitions: number;
  /**
   * writeStream option('idleTimeout', '30 minutes'), sluice's own (Spark has none): after this
   * long without input, a run advances the watermark by the wall clock (run/planner.ts idleWatermark).
   * Absent: off, as in Spark.
   */
  readonly idleTimeoutMs?: number;
  /**
   * How the global watermark combines the inputs' (Spark's spark.sql.streaming.multipleWatermarkPolicy):
   * 'min' (default) or 'max'. writeStream option('multipleWatermarkPolicy', 'max').
   */
  readonly watermarkPolicy?: 'min' | 'max';
}
