/**
 * Spark's analysis of a streaming plan: the unsupported-operation rules (UnsupportedOperationChecker)
 * and the column checks of its stateful operators, each refusal an InvalidQueryError that names
 * the value, the rule and the fix. toPlan (to-plan.ts) runs checkPlan.
 */
import { InvalidQueryError } from '../errors';
import { type ChainDraft, type ChainedOperator, type Marks, operatorChain } from './chain';
import { keptBelowDedup, nextOnInput } from './pruning';
import { isBitAgg, isBooleanAgg, isPairAgg, isStatisticalAgg } from './agg-kinds';
import { type ColumnInfo, unknownColumn } from './columns';
import type { AggSpec, OutputMode, StatefulSpec, StreamJoinSpec, StreamJoinType, TransformWithStateSpec } from './types';
import { type ColumnType, type DataType, holdsType } from '../schema';

/** The column types sum and avg refuse, as Spark's analysis does (UNEXPECTED_INPUT_TYPE). */
const NOT_SUMMABLE: ReadonlySet<ColumnType> = new Set(['BOOLEAN', 'TIMESTAMP', 'DATE', 'ARRAY', 'MAP', 'STRUCT']);

/**
 * Spark's analysis of a plan in `outputMode` (toPlan runs it): complete mode needs an aggregation,
 * and each stateful operator is checked with its own input columns and event-time marks.
 */
export function checkPlan(draft: ChainDraft, outputMode: OutputMode): void {
  const ops = draft.operators;
  const allOps = [...ops, ...(draft.inputs ?? []).flatMap((i) => i.operators)];
  if (outputMode === 'complete' && allOps.some((o) => o.spec.kind === 'transformWithState'))
    throw new InvalidQueryError(
      '[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations on streaming DataFrames/DataSets: transformWithState emits the rows its processor returns, so use append or update',
    );
  if (!allOps.some((o) => o.spec.kind === 'aggregate') && outputMode === 'complete') {
    throw new InvalidQueryError(
      allOps.some((o) => o.spec.kind === 'streamJoin')
        ? 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: a stream-stream join emits each joined row once, so use append'
        : ops.length
          ? 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: dropDuplicates emits each first row once, so use append (or update)'
          : 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: use append (or update), or add a groupBy(...).agg(...)',
    );
  }
  checkOrderStages(draft, outputMode);
  // every operator's checks with its own input columns and event-time marks (operatorChain)
  const chain = operatorChain(draft).operators;
  for (const op of chain) {
    const st = op.spec;
    const cols = op.inputColumns;
    if (st.kind === 'streamJoin') checkStreamJoin(op, outputMode);
    if (op.afterAggregation && outputMode !== 'append') checkCorrectness(st, op.marks, cols, outputMode);
    if (st.kind === 'aggregate') {
      checkAggregate(st, cols, new Set(op.marks.keys()), outputMode);
    } else if (st.kind === 'transformWithState') {
      checkTransformWithState(st, cols, op.watermarkOffsetMs !== null, outputMode);
    } else if (st.kind === 'dedup') {
      for (const c of st.columns ?? []) if (!cols.find((x) => x.name === c)) throw unknownColumn(c, cols, 'dropDuplicates');
      if (st.withinWatermark && op.marks.size === 0) {
        throw new InvalidQueryError(
          'dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark: call withWatermark(eventTimeColumn, delay) before it, as without a watermark no key would ever expire',
        );
      }
    }
  }
  // Spark (SPARK-36463) refuses update mode when the query's last aggregation groups by a session
  // window: a merged session is a new row, and update mode has no way to retract the old ones
  const lastAggregate = chain.filter((o) => o.spec.kind === 'aggregate').at(-1)?.spec as Extract<StatefulSpec, { kind: 'aggregate' }> | undefined;
  if (outputMode === 'update' && lastAggregate?.keys.some((k) => k.kind === 'session')) {
    throw new InvalidQueryError(
      'Update output mode not supported for session window on streaming DataFrames/DataSets: a session that grows or merges becomes a new row, which update mode cannot retract; use append (each session once, when the watermark passes its end) or complete',
    );
  }
  chain.forEach((op, i) => checkOneEventTimeColumn(op, nextOnInput(chain, i), outputMode));
  // and a streaming session window needs a grouping column besides it (SessionWindowStateStoreRestoreExec
  // asserts so when the query starts; the Guide lists it among the session window's restrictions)
  for (const op of chain) {
    if (op.spec.kind === 'aggregate' && op.spec.keys.some((k) => k.kind === 'session') && !op.spec.keys.some((k) => k.kind === 'column')) {
      throw new InvalidQueryError(
        'assertion failed: Grouping key must be specified when using sessionWindow: a streaming session window needs at least one grouping column besides session_window, e.g. groupBy(session_window(...), user)',
      );
    }
  }
}

/**
 * The event-time columns a stateful operator finds its watermark by, in order, when it looks
 * (Spark's WatermarkSupport.findEventTimeColumn over the operator's child output, which refuses
 * more than one distinct column unless spark.sql.streaming.statefulOperator.allowMultiple is off):
 *  - dropDuplicates (both kinds) and transformWithState (any time mode) read their input rows and
 *    filter late ones in every batch: their marked input columns, less those Spark's optimizer
 *    prunes below a dropDuplicates (ColumnPruning: a column that is not a key and that nothing
 *    downstream reads; plan/pruning.ts);
 *  - an aggregation's state operators see the partial aggregates, whose columns are the grouping
 *    keys and the aggregation buffers (unmarked): its marked keys, a window or session window over
 *    a marked column included. A session window filters late rows in every mode; any other
 *    aggregation only in append and update (complete mode never evaluates the watermark);
 *  - a stream-stream join takes each side's first marked column, and never refuses.
 * Null: the operator does not look.
 */
function eventTimeColumns(op: ChainedOperator, next: ChainedOperator | undefined, mode: OutputMode): string[] | null {
  const st = op.spec;
  const marked = op.inputColumns.map((c) => c.name).filter((c) => op.marks.has(c));
  if (st.kind === 'transformWithState') return marked;
  if (st.kind === 'dedup') return marked.filter(keptBelowDedup(op, next));
  if (st.kind !== 'aggregate') return null;
  const session = st.keys.some((k) => k.kind === 'session');
  if (mode === 'complete' && !session) return null;
  return st.keys
    .filter((k) => op.marks.has(k.kind === 'column' ? k.name : k.column))
    .map((k) => (k.kind === 'column' ? k.name : `${k.kind === 'window' ? 'window' : 'session_window'}(${k.column})`));
}

/**
 * Spark refuses a stateful operator that finds more than one event-time column (eventTimeColumns),
 * typically after a stream-stream join whose output keeps both sides' marked columns: the operator
 * would not know which one the watermark is for. Spark fails when the query runs; sluice refuses
 * the plan before any batch.
 */
function checkOneEventTimeColumn(op: ChainedOperator, next: ChainedOperator | undefined, mode: OutputMode): void {
  // a stream-stream join looks on each side, in every batch (OneSideHashJoiner.storeAndJoinWithOtherSide):
  // a side fed by an earlier join keeps that join's two marked columns
  if (op.join !== undefined) {
    const sides: Array<[string, string[]]> = [
      ['left', op.inputColumns.map((c) => c.name).filter((c) => op.marks.has(c))],
      ['right', op.join.rightColumns.map((c) => c.name).filter((c) => op.join!.rightMarks.has(c))],
    ];
    for (const [side, cols] of sides) {
      if (cols.length <= 1) continue;
      throw new InvalidQueryError(
        `More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: (${cols.join(', ')}): ` +
          `the stream-stream join takes the watermark of its ${side} side from that side's one event-time column, and an earlier join's output keeps both of its sides' (a renamed copy of one is another); select or drop all but one of them before this join, e.g. drop(${JSON.stringify(cols.at(-1))})`,
      );
    }
    return;
  }
  const cols = eventTimeColumns(op, next, mode);
  if (cols === null || cols.length <= 1) return;
  const st = op.spec;
  const what =
    st.kind === 'dedup'
      ? st.withinWatermark
        ? 'dropDuplicatesWithinWatermark'
        : 'dropDuplicates'
      : st.kind === 'transformWithState'
        ? 'transformWithState'
        : st.kind === 'aggregate' && st.keys.some((k) => k.kind === 'session')
          ? 'the session-window aggregation'
          : 'the aggregation';
  const fix =
    st.kind === 'aggregate'
      ? `group by one of them only (${cols.join(' or ')})`
      : `select or drop all but one of them before ${what}, e.g. drop(${JSON.stringify(cols.at(-1))})`;
  throw new InvalidQueryError(
    `More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: (${cols.join(', ')}): ` +
      `${what} takes its watermark from its input's one event-time column, and a stream-stream join's output keeps both sides' (a renamed copy of one is another); ${fix}`,
  );
}

/** transformWithState's refusals (FORMAT-4 "Refusals and failures"): its keys, its eventTimeColumn. */
function checkTransformWithState(st: TransformWithStateSpec, cols: ColumnInfo[], watermarked: boolean, mode: OutputMode): void {
  if (st.outputMode !== undefined && st.outputMode !== mode)
    throw new InvalidQueryError(
      `transformWithState was given outputMode ${st.outputMode} but the query writes in ${mode} output mode: give writeStream.outputMode('${st.outputMode}'), or the same mode to both`,
    );
  if (!st.keys.length) throw new InvalidQueryError('transformWithState needs grouping columns: call groupBy(column, ...) before it');
  for (const k of st.keys) if (!cols.find((x) => x.name === k)) throw unknownColumn(k, cols, 'groupBy');
  const et = st.eventTimeColumn;
  if (et === null) return;
  // Spark (ResolveUpdateEventTimeWatermarkColumn) asks for a withWatermark anywhere upstream,
  // whether or not its column reaches transformWithState
  if (!watermarked)
    throw new InvalidQueryError(
      `[CANNOT_ASSIGN_EVENT_TIME_COLUMN_WITHOUT_WATERMARK] Watermark needs to be defined to reassign event time column ${et}: call withWatermark(eventTimeColumn, delay) before transformWithState, or leave eventTimeColumn out`,
    );
  const out = st.outputSchema.columns;
  const found = out.find((c) => c.name === et);
  if (!found)
    throw new InvalidQueryError(
      `[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name \`${et}\` cannot be resolved among the output columns [${out.map((c) => `\`${c.name}\``).join(', ')}]: name a TIMESTAMP column of the outputSchema as eventTimeColumn`,
    );
  if (found.type !== 'TIMESTAMP')
    throw new InvalidQueryError(
      `transformWithState's eventTimeColumn ${et} is ${found.type}: an event-time column must be a TIMESTAMP column of the outputSchema`,
    );
}

/**
 * Spark's check for chained operators (UnsupportedOperationChecker, on by default): in update or
 * complete mode an aggregation emits rows the watermark may already have passed, so a stateful
 * operator after it that compares event time with the watermark could drop them as late.
 */
function checkCorrectness(st: StatefulSpec, marks: Marks, cols: readonly ColumnInfo[], mode: OutputMode): void {
  const what =
    st.kind === 'aggregate'
      ? 'an aggregation'
      : st.kind === 'streamJoin'
        ? 'a stream-stream join'
        : st.kind === 'transformWithState' || st.kind === 'limit'
          ? null
          : st.withinWatermark
            ? 'dropDuplicatesWithinWatermark'
            : (st.columns ?? cols.map((c) => c.name)).some((c) => marks.has(c))
              ? 'a dropDuplicates over an event-time column'
              : null;
  if (what === null) return;
  throw new InvalidQueryError(
    `Detected pattern of possible 'correctness' issue due to global watermark: in ${mode} output mode, ${what} downstream of an aggregation may drop the rows it emits as late; use append output mode, or split the pipeline into two queries`,
  );
}

const JOIN_TYPE_NAMES: Record<StreamJoinType, string> = {
  inner: 'Inner',
  leftOuter: 'LeftOuter',
  rightOuter: 'RightOuter',
  fullOuter: 'FullOuter',
  leftSemi: 'LeftSemi',
};

/** Spark's refusals of a stream-stream join (UnsupportedOperationChecker): output mode, outer joins that could never emit their nulls. */
function checkStreamJoin(op: ChainedOperator, mode: OutputMode): void {
  const spec = op.spec as StreamJoinSpec;
  if (mode !== 'append') {
    const name = mode === 'update' ? 'Update' : 'Complete';
    throw new InvalidQueryError(
      `Join between two streaming DataFrames/Datasets is not supported in ${name} output mode, only in Append output mode: use outputMode('append')`,
    );
  }
  const j = op.join!;
  // (the type as written: a filter after the join may have made the optimizer run it as another)
  const type = spec.declaredType ?? spec.type;
  // (Spark's checkForStreamStreamJoinWatermark: the side whose rows may go unmatched needs a state
  // watermark the checker can find, a full outer join one side at least; JoinSides.stateWatermarks)
  const needs =
    type === 'leftOuter' || type === 'leftSemi'
      ? [j.stateWatermarks.left]
      : type === 'rightOuter'
        ? [j.stateWatermarks.right]
        : type === 'fullOuter'
          ? [j.stateWatermarks.left, j.stateWatermarks.right]
          : [];
  if (needs.length && !needs.some((found) => found)) {
    throw new InvalidQueryError(
      `Stream-stream ${JOIN_TYPE_NAMES[type]} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition: ` +
        'put withWatermark on both inputs and join on an event-time key (a window) or add a timeRange between the two event-time columns',
    );
  }
}

function checkAggregate(st: Extract<StatefulSpec, { kind: 'aggregate' }>, cols: ColumnInfo[], watermarked: Set<string>, mode: OutputMode): void {
  const timeKeys = st.keys.filter((k) => k.kind !== 'column');
  if (timeKeys.length > 1) {
    throw new InvalidQueryError(
      'Multiple time/session window expressions would result in a cartesian product of rows, therefore they are currently not supported: group by one window or session window',
    );
  }
  const names = new Set<string>();
  for (const k of st.keys) {
    const c = k.kind === 'column' ? k.name : k.column;
    const found = cols.find((x) => x.name === c);
    if (!found) throw unknownColumn(c, cols, 'groupBy');
    if (k.kind !== 'column' && found.type !== 'TIMESTAMP') {
      throw new InvalidQueryError(
        `${k.kind === 'window' ? 'window' : 'session_window'}(${c}, ...): the time column must be a TIMESTAMP, but ${c} is ${found.type}: declare it TIMESTAMP in the schema`,
      );
    }
    const outName = k.kind === 'column' ? k.name : k.kind === 'window' ? 'window' : 'session_window';
    if (names.has(outName)) throw new InvalidQueryError(`groupBy lists ${outName} twice: list each grouping key once`);
    names.add(outName);
  }
  for (const a of st.aggs) {
    if (a.column !== undefined) {
      const found = cols.find((x) => x.name === a.column);
      if (!found) throw unknownColumn(a.column, cols, `${a.fn}`);
      const type = found.window ? 'a window' : found.type;
      // an aggregate of an expression reads a column the query made for it (expr-agg.ts): named by the aggregate's output, not that column
      const hidden = /^__agg\d+$/.test(a.column);
      const call = hidden ? a.as : `${a.fn}(${a.column})`;
      const input = hidden ? 'its input' : a.column;
      const shown = hidden ? '(the expression)' : a.column;
      const summed = a.fn === 'sum' || a.fn === 'try_sum';
      const averaged = a.fn === 'avg' || a.fn === 'try_avg';
      if ((summed || averaged || a.fn === 'product' || isStatisticalAgg(a.fn)) && NOT_SUMMABLE.has(found.type)) {
        // Spark's Sum, Average and CentralMomentAgg take numeric (and interval) input, a STRING cast to DOUBLE; others fail analysis
        const verb = summed ? 'summed' : averaged ? 'averaged' : a.fn === 'product' ? 'multiplied' : 'measured';
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${call}: ${input} is ${type}, which cannot be ${verb}: ${a.fn} needs a numeric column (TINYINT to BIGINT, FLOAT, DOUBLE, DECIMAL); count it, take min or max of it, or ${a.fn} a numeric column`,
        );
      }
      if ((a.fn === 'median' || a.fn === 'percentile' || a.fn === 'percentile_disc') && !['INT', 'LONG', 'DOUBLE', 'DECIMAL'].includes(found.type)) {
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${call}: ${input} is ${type}, but ${a.fn} takes a numeric column (TINYINT to BIGINT, FLOAT, DOUBLE, DECIMAL): cast it first`,
        );
      }
      const percentages = typeof a.percentage === 'number' ? [a.percentage] : (a.percentage ?? [Number.NaN]);
      if (
        (a.fn === 'percentile' || a.fn === 'percentile_disc' || a.fn === 'percentile_approx') &&
        !percentages.every((p) => typeof p === 'number' && p >= 0 && p <= 1)
      ) {
        const shown = typeof a.percentage === 'number' ? a.percentage : `array(${(a.percentage ?? []).join(', ')})`;
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] ${a.fn}(${a.column}, ${shown}): each percentage must be between 0.0 and 1.0 (e.g. 0.95 for the 95th percentile)`,
        );
      }
      if (a.fn === 'mode' && !orderable(found)) {
        // sluice's mode breaks a tie by the column's order (Spark 4's mode(x, true)): a MAP has none
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${call}: ${input} is or holds a MAP, but sluice's mode takes the least of equally frequent values, and a MAP has no order: take mode of one of its values, e.g. ${shown}['key'], or of to_json(${shown})`,
        );
      }
      if ((a.fn === 'min' || a.fn === 'max') && !orderable(found)) {
        // Spark's Min and Max check TypeUtils.checkForOrderingExpr: a MAP, or an ARRAY or STRUCT holding one, has no order
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] ${call}: the \`${a.fn}\` does not support ordering on type ${found.type}: ${input} is or holds a MAP, which has no order; take ${a.fn} of one of its values, e.g. ${shown}['key']`,
        );
      }
      if (a.fn === 'percentile_approx') {
        if (!['INT', 'LONG', 'DOUBLE', 'DECIMAL', 'DATE', 'TIMESTAMP'].includes(found.type) || found.window) {
          throw new InvalidQueryError(
            `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] percentile_approx(${a.column}, ${a.percentage}): ${a.column} is ${type}, but percentile_approx takes a number, a DATE or a TIMESTAMP: cast it first`,
          );
        }
        const acc = a.accuracy ?? 10_000;
        if (!(Number.isInteger(acc) && acc > 0 && acc <= 2147483647)) {
          throw new InvalidQueryError(
            `[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] percentile_approx(${a.column}, ${a.percentage}, ${acc}): the accuracy must be a positive integer up to 2147483647 (the default is 10000; a higher one is more exact)`,
          );
        }
      }
      if (isBitAgg(a.fn) && (!['INT', 'LONG'].includes(found.type) || found.window)) {
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${a.fn}(${a.column}): ${a.column} is ${type}, but ${a.fn} takes an integral column (TINYINT, SMALLINT, INT, BIGINT): cast it first`,
        );
      }
      if (isBooleanAgg(a.fn) && (found.type !== 'BOOLEAN' || found.window)) {
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${a.fn}(${a.column}): ${a.column} is ${type}, but ${a.fn} takes a BOOLEAN: write the condition, e.g. ${a.fn}(expr('${a.column} > 0'))`,
        );
      }
    } else if (a.fn !== 'count') {
      throw new InvalidQueryError(`${a.fn} needs a column, e.g. ${a.fn}("amount")`);
    }
    if (isPairAgg(a.fn)) {
      const found = a.by === undefined ? undefined : cols.find((x) => x.name === a.by);
      if (a.by === undefined) throw new InvalidQueryError(`${a.fn} needs two columns, y and x, e.g. ${a.fn}('amount', 'quantity')`);
      if (!found) throw unknownColumn(a.by, cols, `${a.fn}`);
      for (const [name, c] of [
        [a.column, cols.find((x) => x.name === a.column)],
        [a.by, found],
      ] as const) {
        if (c !== undefined && (NOT_SUMMABLE.has(c.type) || c.window)) {
          throw new InvalidQueryError(
            `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${a.fn}(${a.column}, ${a.by}): ${name} is ${c.window ? 'a window' : c.type}, but ${a.fn} takes two numeric columns (TINYINT to BIGINT, FLOAT, DOUBLE, DECIMAL): cast it first`,
          );
        }
      }
    }
    if (a.fn === 'listagg') checkListagg(a, cols);
    if (a.fn === 'percentile' && a.by !== undefined) {
      // percentile(x, p, f): f an integral column (Spark's third argument, IntegralType)
      const found = cols.find((x) => x.name === a.by);
      if (!found) throw unknownColumn(a.by, cols, `${a.fn}`);
      if (!['INT', 'LONG'].includes(found.type) || found.window) {
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${a.as}: its frequency ${a.by} is ${found.window ? 'a window' : found.type}, but percentile's third argument is an integral column (TINYINT, SMALLINT, INT, BIGINT): cast it first, e.g. CAST(${a.by} AS BIGINT)`,
        );
      }
    }
    if (a.fn === 'max_by' || a.fn === 'min_by') {
      const found = a.by === undefined ? undefined : cols.find((x) => x.name === a.by);
      if (a.by === undefined) throw new InvalidQueryError(`${a.fn} needs the column that orders the rows, e.g. ${a.fn}('status', 'event_time')`);
      if (!found) throw unknownColumn(a.by, cols, `${a.fn}`);
      // (an ARRAY or STRUCT orders as Spark's interpreted orderings do, aggregates.ts lessFor; a MAP has no order)
      if (!orderable(found)) {
        throw new InvalidQueryError(
          `[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] ${a.fn}(${a.column}, ${a.by}): ${a.by} is ${found.type}, which sluice does not order here: order by a number, string, date, timestamp, boolean, array or struct column without a MAP`,
        );
      }
    }
    if (names.has(a.as)) {
      throw new InvalidQueryError(`the output column name ${JSON.stringify(a.as)} is used twice: give each aggregation a distinct alias with .alias(...)`);
    }
    names.add(a.as);
  }
  if (mode === 'append') {
    const linked = st.keys.some((k) => (k.kind === 'column' ? watermarked.has(k.name) : watermarked.has(k.column)));
    if (!linked) {
      const hint = watermarked.size
        ? `the watermark is on ${[...watermarked].join(', ')}, which is not a grouping key: group by window(${[...watermarked][0]}, ...) or by ${[...watermarked][0]} itself`
        : 'call withWatermark(eventTimeColumn, delay) and group by window(eventTimeColumn, ...)';
      throw new InvalidQueryError(
        `Append output mode not supported when there are streaming aggregations on streaming DataFrames/DataSets without watermark: ${hint}, or use update/complete output mode`,
      );
    }
  }
}

/** Whether Spark orders values of the type (RowOrdering.isOrderable): not a MAP, nor an ARRAY or STRUCT holding one. */
function orderable(t: DataType): boolean {
  return !holdsType(t, (x) => x.type === 'MAP');
}

/**
 * listagg: a value Spark casts to STRING implicitly (not an ARRAY, MAP or STRUCT), and WITHIN
 * GROUP keys it can order here (one key: its column; several: the STRUCT of them, field by field).
 */
function checkListagg(a: AggSpec, cols: readonly ColumnInfo[]): void {
  const value = cols.find((x) => x.name === a.column);
  const complex = (t: string | undefined) => t === 'ARRAY' || t === 'MAP' || t === 'STRUCT';
  if (value !== undefined && (complex(value.type) || value.window)) {
    throw new InvalidQueryError(
      `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] ${a.as}: ${a.column} is ${value.window ? 'a window' : value.type}, but listagg takes a STRING (or a value cast to one): give it a string, e.g. to_json(${a.column})`,
    );
  }
  if (a.order === undefined || a.by === undefined) return;
  const key = cols.find((x) => x.name === a.by);
  if (key === undefined) throw unknownColumn(a.by, cols, 'listagg');
  const keyTypes = a.order.length === 1 ? [key.type] : (key.fields ?? []).map((f) => f.type);
  if (keyTypes.some(complex) || (a.order.length === 1 && key.window)) {
    throw new InvalidQueryError(
      `[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] ${a.as}: a WITHIN GROUP key is an ARRAY, MAP or STRUCT, which sluice does not order here: order by a number, string, date, timestamp or boolean`,
    );
  }
}

/** Spark's refusal of a sort that is not over an aggregation in complete mode (the frame's orderBy refuses it early with the same words). */
export const SORT_REFUSED =
  "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated DataFrame/Dataset in Complete output mode: sort after groupBy(...).agg(...) with outputMode('complete'), or sort when you read the output";

/**
 * Spark's rules for sort and limit on a stream (UnsupportedOperationChecker): a sort only over an
 * aggregation's output in complete mode (each batch emits the whole result table); a limit never
 * in update mode. An append-mode limit is an operator by now (toPlan), counting in its state the
 * rows it passed, as Spark's StreamingGlobalLimitExec.
 */
function checkOrderStages(draft: ChainDraft, outputMode: OutputMode): void {
  const last = draft.operators.at(-1);
  const elsewhere = [
    ...draft.stages,
    ...draft.operators.slice(0, -1).flatMap((o) => o.post),
    ...(draft.inputs ?? []).flatMap((i) => [...i.stages, ...i.operators.flatMap((o) => o.post)]),
  ];
  const afterAggregation = last?.spec.kind === 'aggregate' ? last.post : [];
  const afterOther = last !== undefined && last.spec.kind !== 'aggregate' ? last.post : [];
  const sorted = [...elsewhere, ...afterOther].some((s) => s.kind === 'sort') || (afterAggregation.some((s) => s.kind === 'sort') && outputMode !== 'complete');
  if (sorted) {
    throw new InvalidQueryError(SORT_REFUSED);
  }
  const limited = [...elsewhere, ...afterOther, ...afterAggregation].some((s) => s.kind === 'limit') || draft.operators.some((o) => o.spec.kind === 'limit');
  if (!limited) return;
  if (outputMode === 'update')
    throw new InvalidQueryError(
      "Limits are not supported on streaming DataFrames/Datasets in Update output mode: use append (the first n rows ever) or complete (each batch's first n rows of the result table)",
    );
  const inputs = (draft.inputs ?? []).flatMap((i) => [...i.stages, ...i.operators.flatMap((o) => o.post)]);
  if (inputs.some((s) => s.kind === 'limit'))
    throw new InvalidQueryError('limit on a joined or unioned input is not supported: limit after the join or the union');
  // (in append mode toPlan made every limit of the query's pipeline an operator)
  if (outputMode === 'complete' && [...elsewhere, ...afterOther].some((s) => s.kind === 'limit')) {
    throw new InvalidQueryError(
      "limit before an aggregation in complete mode is not supported: each batch would count its own first rows; limit after groupBy(...).agg(...) (each batch's first n rows of the result table), or use append mode (the first n rows ever)",
    );
  }
}
