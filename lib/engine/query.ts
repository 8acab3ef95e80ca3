/**
 * The query API: Spark's vocabulary in TypeScript.
 *
 *   readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
 *     .option('maxFilesPerTrigger', 1).load('s3://bucket/landing/')
 *     .withWatermark('event_time', '10 minutes')
 *     .groupBy(window('event_time', '10 minutes'))
 *     .agg(sum('amount').as('total'), count().as('events'))
 *     .writeStream.outputMode('append').trigger({ availableNow: true }).queryName('totals')
 *
 * Building produces a `QueryPlan` (plain data plus the user's row functions). Spark's analysis and
 * unsupported-operation rules are checked when the query is built (`.plan()` / `toPlan()`), with
 * messages that name the value, the rule and the fix.
 */
import { InvalidOptionError, InvalidQueryError } from './errors';
import { parseInterval, parseWatermarkDelay, parseWindowDuration } from './duration';
import { rowHolds } from './predicate';
import { coerceRecord, ColumnType, parseSchema, Schema } from './schema';
import type { BatchLimits, Json, OutputRow, Row } from './ports';

export type OutputMode = 'append' | 'update' | 'complete';

export interface SourceSpec {
  readonly kind: 'files' | 'kinesis';
  readonly format: 'json';
  /** s3://bucket/prefix for files; the stream name or ARN for Kinesis. Optional: a runtime may supply it. */
  readonly path?: string;
  readonly schema: Schema;
  readonly options: Readonly<Record<string, string | number | boolean>>;
}

export type StatelessStage =
  | { readonly kind: 'filter'; readonly fn: (row: Row) => boolean; readonly label: string }
  | { readonly kind: 'select'; readonly columns: readonly string[] }
  | { readonly kind: 'project'; readonly items: readonly ProjectItem[] }
  | { readonly kind: 'withColumn'; readonly name: string; readonly type: ColumnType; readonly fn: (row: Row) => unknown }
  | { readonly kind: 'watermark'; readonly id: string; readonly column: string; readonly delayMs: number; readonly delayText: string }
  | JoinStage;

// ------------------------------------------------------------------------ stream-static joins

/**
 * A static table (Spark's batch DataFrame on a join's right side), as plain data: the executor
 * opens it through the StaticTables port (ports.ts). `rows` holds typed rows (TIMESTAMP as ms).
 */
export type StaticTableSpec =
  | { readonly kind: 'rows'; readonly schema: Schema; readonly rows: readonly Row[] }
  | { readonly kind: 's3'; readonly uri: string; readonly format: 'json' | 'csv'; readonly schema: Schema }
  | { readonly kind: 'dynamodb'; readonly tableName: string; readonly key: readonly string[]; readonly schema: Schema };

/** A static table with its columns `C` (types only). Build one with `staticTable`. */
export interface StaticTable<C extends FrameColumns = AnyColumns> {
  readonly [ROW_TYPE]?: C;
  readonly spec: StaticTableSpec;
}

/** The join types of a stream-static join (the stream on the left). */
export type StaticJoinType = 'inner' | 'leftOuter' | 'leftSemi';

/** One item of a join's `condition` (FORMAT-2): a comparison with a literal, or any of several. */
export type JoinPredicate =
  | { readonly column: string; readonly op: '=' | '!=' | '<' | '<=' | '>' | '>='; readonly value: string | number | boolean }
  | { readonly anyOf: readonly JoinPredicate[] };

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
  readonly lowerMs: number | null;
  readonly upperMs: number | null;
  readonly lowerStrict: boolean;
  readonly upperStrict: boolean;
}

/** The typed form of a time range: intervals as Spark writes them ('-10 seconds', '5 minutes'). */
export interface TimeRangeArg {
  readonly left: string;
  readonly right: string;
  readonly lower?: string;
  readonly upper?: string;
  readonly lowerStrict?: boolean;
  readonly upperStrict?: boolean;
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
}

function staticSchema(schema: string | Schema, what: string): Schema {
  if (typeof schema === 'string') return parseSchema(schema);
  if (!schema || !Array.isArray(schema.columns)) throw new InvalidOptionError(`${what}: schema must be Spark DDL, e.g. 'id STRING, name STRING'`);
  return schema;
}

/** Static tables for `frame.join(table, on, type)`. */
export const staticTable = {
  /**
   * Every object under `uri` (s3://bucket/prefix), read once per run: JSON lines, or CSV with a
   * header line; each row typed by `schema` (a bad row fails the run, naming object and line).
   */
  s3<D extends string>(uri: string, opts: { format: 'json' | 'csv'; schema: D }): StaticTable<SchemaColumns<D>> {
    if (typeof uri !== 'string' || !/^s3:\/\/[^/]+/.test(uri)) {
      throw new InvalidOptionError(`staticTable.s3(${JSON.stringify(uri)}): the location must be an S3 URI, e.g. s3://my-bucket/reference/users/`);
    }
    if (opts?.format !== 'json' && opts?.format !== 'csv') {
      throw new InvalidOptionError(`staticTable.s3 format ${JSON.stringify(opts?.format)} is not 'json' (JSON lines) or 'csv' (with a header line)`);
    }
    return { spec: { kind: 's3', uri, format: opts.format, schema: staticSchema(opts.schema, 'staticTable.s3') } };
  },
  /**
   * A DynamoDB table looked up by its key (`key`: the partition key attribute, or [partition,
   * sort]) with BatchGetItem, each key once per run; the item's attributes are the schema's columns.
   */
  dynamodb<D extends string>(tableName: string, opts: { key: string | readonly string[]; schema: D }): StaticTable<SchemaColumns<D>> {
    const schema = staticSchema(opts?.schema, `staticTable.dynamodb(${JSON.stringify(tableName)})`);
    const key = typeof opts?.key === 'string' ? [opts.key] : [...(opts?.key ?? [])];
    if (typeof tableName !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(tableName)) {
      throw new InvalidOptionError(`staticTable.dynamodb(${JSON.stringify(tableName)}): a table name is 3-255 letters, digits, '_', '-' or '.'`);
    }
    if (key.length < 1 || key.length > 2) {
      throw new InvalidOptionError(`staticTable.dynamodb(${JSON.stringify(tableName)}) key ${JSON.stringify(opts?.key)}: give the partition key attribute, or [partition, sort]`);
    }
    for (const k of key) {
      const c = schema.columns.find((x) => x.name === k);
      if (!c || (c.type !== 'STRING' && c.type !== 'INT' && c.type !== 'LONG')) {
        throw new InvalidOptionError(`staticTable.dynamodb(${JSON.stringify(tableName)}): key attribute ${JSON.stringify(k)} must be a STRING, INT or LONG column of the schema (${schema.columns.map((x) => `${x.name} ${x.type}`).join(', ')})`);
      }
    }
    return { spec: { kind: 'dynamodb', tableName, key, schema } };
  },
  /** Rows given here (tests, samples), typed by `schema` as a source types JSON records. */
  rows<D extends string>(schema: D, rows: ReadonlyArray<Record<string, unknown>>): StaticTable<SchemaColumns<D>> {
    const parsed = staticSchema(schema, 'staticTable.rows');
    const typed = rows.map((r, i) => {
      const res = coerceRecord(parsed, { ...r });
      if (!res.ok) throw new InvalidOptionError(`staticTable.rows: row ${i + 1} ${JSON.stringify(r)}: ${res.reason}`);
      return res.row;
    });
    return { spec: { kind: 'rows', schema: parsed, rows: typed } };
  },
};

/** Spark's join type names (any case, `_` ignored) to the types sluice runs. */
const JOIN_TYPES: Record<string, StaticJoinType | 'rightOuter' | 'fullOuter' | null> = {
  inner: 'inner',
  left: 'leftOuter', leftouter: 'leftOuter',
  semi: 'leftSemi', leftsemi: 'leftSemi',
  right: 'rightOuter', rightouter: 'rightOuter',
  outer: 'fullOuter', full: 'fullOuter', fullouter: 'fullOuter',
  anti: null, leftanti: null, cross: null,
};

/** The join type `type` names, or Spark's refusal (the stream is the left side). */
export function staticJoinType(type: string): StaticJoinType {
  const t = JOIN_TYPES[String(type).toLowerCase().replace(/_/g, '')];
  if (t === 'rightOuter') {
    throw new InvalidQueryError('RightOuter join with a streaming DataFrame/Dataset on the left and a static DataFrame/DataSet on the right not supported: the stream is the left side, so use inner or leftOuter');
  }
  if (t === 'fullOuter') {
    throw new InvalidQueryError('FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported: use leftOuter to keep every stream row');
  }
  if (!t) throw new InvalidQueryError(`join type ${JSON.stringify(type)} is not supported by sluice: a stream-static join is inner, leftOuter or leftSemi`);
  return t;
}

/** The join type `type` names for a stream-stream join (Spark's spellings accepted). */
export function streamJoinType(type: string): StreamJoinType {
  const t = JOIN_TYPES[String(type).toLowerCase().replace(/_/g, '')];
  if (!t) throw new InvalidQueryError(`join type ${JSON.stringify(type)} is not supported by sluice for a stream-stream join: use inner, leftOuter, rightOuter, fullOuter or leftSemi`);
  return t;
}

/** A signed interval ('-10 seconds'), months refused (they have no fixed length). */
function signedInterval(text: string, what: string): number {
  const { ms, months } = parseInterval(text, what);
  if (months !== 0) throw new InvalidOptionError(`${what} "${text}" uses months or years, which have no fixed length: express it in days, hours or smaller units`);
  return ms;
}

function parseTimeRange(t: TimeRangeArg): TimeRange {
  if (!t || typeof t.left !== 'string' || typeof t.right !== 'string') {
    throw new InvalidQueryError(`join timeRange ${JSON.stringify(t)}: give the two TIMESTAMP columns and the bounds, e.g. { left: 'clickTime', right: 'impressionTime', lower: '0 seconds', upper: '1 hour' }`);
  }
  const lowerMs = t.lower === undefined ? null : signedInterval(t.lower, 'join timeRange lower');
  const upperMs = t.upper === undefined ? null : signedInterval(t.upper, 'join timeRange upper');
  if (lowerMs === null && upperMs === null) throw new InvalidQueryError(`join timeRange on ${t.left} and ${t.right} has neither lower nor upper: give at least one bound, e.g. upper: '1 hour'`);
  if (lowerMs !== null && upperMs !== null && lowerMs > upperMs) {
    throw new InvalidQueryError(`join timeRange on ${t.left} and ${t.right}: lower (${t.lower}) is after upper (${t.upper}), so no pair of rows could match: swap them`);
  }
  return { left: t.left, right: t.right, lowerMs, upperMs, lowerStrict: t.lowerStrict === true, upperStrict: t.upperStrict === true };
}

/** The columns a condition item reads. */
function predicateColumns(p: JoinPredicate): string[] {
  return 'anyOf' in p ? p.anyOf.flatMap(predicateColumns) : [p.column];
}

/**
 * A frame with a filter by `predicates` where Spark's optimizer would put it: before the input's
 * watermark when its columns are there (so a filtered row is not even counted by the watermark),
 * else after the stages so far.
 */
function pushFilter(frame: StreamFrame<FrameColumns>, predicates: readonly JoinPredicate[], notNull: readonly string[] = []): StreamFrame<FrameColumns> {
  const fn = (row: Row): boolean => {
    for (const c of notNull) if (row[c] === null || row[c] === undefined) return false;
    return rowHolds(predicates, row);
  };
  const stage: StatelessStage = { kind: 'filter', fn, label: notNull.length ? `join keys not null${predicates.length ? ' and condition' : ''}` : 'join condition' };
  if (frame.operators.length) {
    const last = frame.operators[frame.operators.length - 1];
    return new StreamFrame(frame.source, frame.stages, [...frame.operators.slice(0, -1), { spec: last.spec, post: [...last.post, stage] }], frame.inputs);
  }
  const at = frame.stages.findIndex((st) => st.kind === 'watermark');
  const cols = [...predicates.flatMap(predicateColumns), ...notNull];
  if (at >= 0 && cols.every((c) => columnsAfter(frame.source.schema.columns, frame.stages.slice(0, at)).some((x) => x.name === c))) {
    return new StreamFrame(frame.source, [...frame.stages.slice(0, at), stage, ...frame.stages.slice(at)], [], frame.inputs);
  }
  return new StreamFrame(frame.source, [...frame.stages, stage], [], frame.inputs);
}

/**
 * An item of a projection (FORMAT-2's `select`): a column copied or renamed, the tumbling window
 * containing a TIMESTAMP, or the start, end or window_time (end − 1 µs) of a window column.
 */
export type ProjectItem =
  | { readonly kind: 'column'; readonly as: string; readonly column: string }
  | { readonly kind: 'window'; readonly as: string; readonly window: WindowKey }
  | { readonly kind: 'windowStart' | 'windowEnd' | 'windowTime'; readonly as: string; readonly column: string };

/** `select(renamed('eventTime', 'ts'))`: column `column` under the name `as`. */
export function renamed(column: string, as: string): ProjectItem {
  return { kind: 'column', as, column };
}
/** `select(windowTime('window', 'wt'))`: Spark's window_time(window), the window's end − 1 µs, a TIMESTAMP that keeps the window's watermark. */
export function windowTime(column: string, as = 'window_time'): ProjectItem {
  return { kind: 'windowTime', as, column };
}
/** `select(windowStart('window', 'start'))`: the window's start as a TIMESTAMP (no watermark). */
export function windowStart(column: string, as: string): ProjectItem {
  return { kind: 'windowStart', as, column };
}
/** `select(windowEnd('window', 'end'))`: the window's end as a TIMESTAMP (no watermark). */
export function windowEnd(column: string, as: string): ProjectItem {
  return { kind: 'windowEnd', as, column };
}
/** `select(windowOf(window('eventTime', '10 seconds'), 'w'))`: the tumbling window that contains the column's time. */
export function windowOf(w: WindowKey, as: string): ProjectItem {
  if (w.slideMs !== w.durationMs) throw new InvalidQueryError(`select: the window on ${w.column} (${w.text}) slides, so a row has several: a select takes a tumbling window; group by the sliding window instead`);
  return { kind: 'window', as, window: w };
}

/**
 * The time a window value stands for when a window is taken over it: Spark's window_time, its
 * end − 1 µs (in epoch ms, end − 0.001). Any other value is its own time.
 */
export function timeOfValue(v: unknown): number | null | undefined {
  if (v !== null && typeof v === 'object') return (v as { end: number }).end - 0.001;
  return v as number | null | undefined;
}

/** The time a marked value is compared with a watermark by: a window by its end. */
export function watermarkTimeOf(v: unknown): number | null | undefined {
  if (v !== null && typeof v === 'object') return (v as { end: number }).end;
  return v as number | null | undefined;
}

export interface WindowKey<Col extends string = string> {
  readonly kind: 'window';
  readonly column: Col;
  readonly durationMs: number;
  readonly slideMs: number;
  readonly startMs: number;
  readonly text: string;
}
export interface SessionKey<Col extends string = string> {
  readonly kind: 'session';
  readonly column: Col;
  readonly gapMs: number;
  readonly text: string;
}
export interface ColumnKey<Name extends string = string> {
  readonly kind: 'column';
  readonly name: Name;
}
export type GroupKey = WindowKey | SessionKey | ColumnKey;

export type AggFn = 'count' | 'sum' | 'min' | 'max' | 'avg' | 'first' | 'last' | 'approxCountDistinct';
export interface AggSpec {
  readonly fn: AggFn;
  /** Absent (or '*') for count(*). */
  readonly column?: string;
  readonly as: string;
}

/** A stateful operator of a plan and the stateless stages between it and the next (or the sink). */
export interface OperatorStep {
  readonly spec: StatefulSpec;
  readonly post: readonly StatelessStage[];
}

export type StatefulSpec =
  | { readonly kind: 'aggregate'; readonly keys: readonly GroupKey[]; readonly aggs: readonly AggSpec[] }
  | { readonly kind: 'dedup'; readonly columns: readonly string[] | null; readonly withinWatermark: boolean }
  | StreamJoinSpec;

/**
 * A stream-stream join: the rows so far (left) with plan.inputs[input] (right). `condition` holds
 * the single-side items checked in the join; those Spark pushes into an input became a filter
 * stage of that input (`pushed` keeps them for the shape).
 */
export interface StreamJoinSpec {
  readonly kind: 'streamJoin';
  readonly input: number;
  readonly type: StreamJoinType;
  readonly on: readonly JoinKeyPair[];
  readonly timeRange: TimeRange | null;
  readonly condition: readonly JoinPredicate[];
  readonly pushed: readonly JoinPredicate[];
}

/** Carries a plan's output row type (types only: no such property exists at runtime). */
declare const ROW_TYPE: unique symbol;

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

// ---------------------------------------------------------------- grouping and aggregate helpers

/** `window(column, windowDuration, slideDuration?, startTime?)`: tumbling, or sliding with a slide. */
export function window<Col extends string>(on: Col | ColumnKey<Col>, duration: string, slide?: string, startTime?: string): WindowKey<Col> {
  // window(col('window'), ...) / window('window', ...) over an earlier aggregation's window: over its window_time
  const column = (typeof on === 'string' ? on : on.name) as Col;
  const durationMs = parseWindowDuration(duration, `window duration for ${column}`);
  const slideMs = slide === undefined ? durationMs : parseWindowDuration(slide, `window slide for ${column}`);
  const startMs = startTime === undefined ? 0 : parseSignedStart(startTime, column);
  if (slideMs > durationMs) {
    throw new InvalidQueryError(
      `window on ${column}: the slide duration (${slide}) must be less than or equal to the window duration (${duration}): use a shorter slide or a longer window`,
    );
  }
  if (Math.abs(startMs) >= slideMs) {
    throw new InvalidQueryError(
      `window on ${column}: the absolute value of the start time (${startTime}) must be less than the slide duration (${slide ?? duration}): use an offset smaller than the slide`,
    );
  }
  return { kind: 'window', column, durationMs, slideMs, startMs, text: [duration, slide, startTime].filter(Boolean).join(', ') };
}

function parseSignedStart(text: string, column: string): number {
  const t = text.trim();
  if (t.startsWith('-')) return -parseWindowDuration(t.slice(1), `window startTime for ${column}`, true);
  return parseWindowDuration(t, `window startTime for ${column}`, true);
}

/** `session_window(column, gapDuration)`; over an earlier aggregation's window column, over its window_time. */
export function sessionWindow<Col extends string>(column: Col, gap: string): SessionKey<Col> {
  return { kind: 'session', column, gapMs: parseWindowDuration(gap, `session window gap for ${column}`), text: gap };
}

export function col<Name extends string>(name: Name): ColumnKey<Name> {
  return { kind: 'column', name };
}

/** A fluent aggregate: `sum('amount').as('total')`. Its type parameters are the output name, the function and the column. */
export class AggBuilder<Name extends string = string, Fn extends AggFn = AggFn, Col extends string | undefined = string | undefined> {
  constructor(readonly fn: Fn, readonly column: Col, readonly name: Name) {}
  /** Names the output column, as Spark's `.alias` / `.as`. */
  as<N extends string>(name: N): AggBuilder<N, Fn, Col> {
    return new AggBuilder(this.fn, this.column, name);
  }
  alias<N extends string>(name: N): AggBuilder<N, Fn, Col> {
    return this.as(name);
  }
  toSpec(): AggSpec {
    return { fn: this.fn, column: this.column, as: this.name };
  }
}
function agg<F extends AggFn, C extends string | undefined>(fn: F, column: C): AggBuilder<C extends string ? `${F}(${C})` : `${F}(1)`, F, C> {
  return new AggBuilder(fn, column, (column === undefined ? `${fn}(1)` : `${fn}(${column})`) as C extends string ? `${F}(${C})` : `${F}(1)`);
}
/** `count()` / `count('*')` counts rows, `count(column)` the non-null values of the column. */
export function count(): AggBuilder<'count(1)', 'count', undefined>;
export function count<C extends string>(column: C): AggBuilder<C extends '*' ? 'count(1)' : `count(${C})`, 'count', C extends '*' ? undefined : C>;
export function count(column?: string): AggBuilder<string, 'count', string | undefined>;
export function count(column?: string): AggBuilder<string, 'count', string | undefined> {
  return agg('count', column === '*' ? undefined : column);
}
export const sum = <C extends string>(column: C) => agg('sum', column);
export const min = <C extends string>(column: C) => agg('min', column);
export const max = <C extends string>(column: C) => agg('max', column);
export const avg = <C extends string>(column: C) => agg('avg', column);
export const first = <C extends string>(column: C) => agg('first', column);
export const last = <C extends string>(column: C) => agg('last', column);
export const approxCountDistinct = <C extends string>(column: C) => agg('approxCountDistinct', column);

// ------------------------------------------------------------------------- types for the user
//
// The builders carry the frame's columns as a type parameter (column name to ColumnType), read
// from the schema's DDL when it is a literal string, so that a typo in a column name or a window
// over a non-TIMESTAMP column is a compile error, and `.plan()` returns a QueryPlan whose output
// row type names the grouping keys and the aliases. With a schema that is not a literal (a
// `string` variable) every column name is accepted and rows are loosely typed, as before.

/** A frame's columns: name to type. `window` / `session_window` of an aggregation are 'WINDOW'. */
export type FrameColumns = Record<string, ColumnType | 'WINDOW'>;
/** The columns of a frame whose schema the types cannot read: any name, any type. */
export type AnyColumns = Record<string, ColumnType | 'WINDOW'>;

type TrimLeft<S extends string> = S extends ` ${infer R}` ? TrimLeft<R> : S extends `\n${infer R}` ? TrimLeft<R> : S extends `\t${infer R}` ? TrimLeft<R> : S;
type TrimRight<S extends string> = S extends `${infer R} ` ? TrimRight<R> : S extends `${infer R}\n` ? TrimRight<R> : S extends `${infer R}\t` ? TrimRight<R> : S;
type Trim<S extends string> = TrimLeft<TrimRight<S>>;
type SplitComma<S extends string> = S extends `${infer H},${infer T}` ? [H, ...SplitComma<T>] : [S];
type DdlType<T extends string> = Uppercase<T> extends 'STRING' | 'VARCHAR'
  ? 'STRING'
  : Uppercase<T> extends 'INT' | 'INTEGER' | 'SMALLINT' | 'SHORT' | 'TINYINT' | 'BYTE'
    ? 'INT'
    : Uppercase<T> extends 'LONG' | 'BIGINT'
      ? 'LONG'
      : Uppercase<T> extends 'DOUBLE' | 'FLOAT' | 'REAL'
        ? 'DOUBLE'
        : Uppercase<T> extends 'BOOLEAN' | 'BOOL'
          ? 'BOOLEAN'
          : Uppercase<T> extends 'TIMESTAMP' | 'TIMESTAMP_LTZ'
            ? 'TIMESTAMP'
            : never;
type DdlName<N extends string> = N extends `\`${infer M}\`` ? M : N extends `${infer M}:` ? DdlName<M> : N;
type FirstWord<S extends string> = S extends `${infer W} ${string}` ? W : S;
/** One "name TYPE" part as [name, type], or never when the types cannot read it. */
type DdlColumn<P extends string> = Trim<P> extends `${infer N} ${infer Rest}` ? [DdlName<N>, DdlType<FirstWord<Trim<Rest>>>] : never;
type DdlColumns<Parts extends string[], Acc extends FrameColumns = {}> = Parts extends [infer H extends string, ...infer T extends string[]]
  ? DdlColumn<H> extends [infer N extends string, infer C extends ColumnType]
    ? DdlColumns<T, Acc & { [K in N]: C }>
    : AnyColumns
  : Simplify<Acc>;
/** The columns a Spark DDL string declares: `SchemaColumns<'user STRING, amount DOUBLE'>` is `{ user: 'STRING'; amount: 'DOUBLE' }`. */
export type SchemaColumns<D extends string> = string extends D ? AnyColumns : DdlColumns<SplitComma<D>>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Names<C> = keyof C & string;
type Known<C> = string extends keyof C ? false : true;
type ColumnsOfType<C, T> = Known<C> extends true ? { [K in keyof C]: C[K] extends T ? K : never }[keyof C] & string : string;

/** A value as functions given to filter/withColumn see it: TIMESTAMP as epoch milliseconds. */
export type InputValue<T> = T extends 'STRING'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'WINDOW'
      ? { readonly start: number; readonly end: number }
      : number | null;
/** A value in an emitted row: TIMESTAMP as ISO text, NaN and the infinities of a DOUBLE as Spark's JSON writer spells them. */
export type OutputValue<T> = T extends 'STRING' | 'TIMESTAMP'
  ? string | null
  : T extends 'BOOLEAN'
    ? boolean | null
    : T extends 'DOUBLE'
      ? number | 'NaN' | 'Infinity' | '-Infinity' | null
      : T extends 'WINDOW'
        ? { readonly start: string; readonly end: string }
        : number | null;
/** A row as filter/withColumn functions see it. */
export type InputRowOf<C extends FrameColumns> = Known<C> extends true ? Simplify<{ [K in keyof C]: InputValue<C[K]> }> : Row;
/** A row the query emits, as the sinks write it and `RunReport` rows hold it. */
export type OutputRowOf<C extends FrameColumns> = Simplify<{ [K in keyof C]: OutputValue<C[K]> }>;
/** The output row type of a plan: `RowOf<typeof plan>`. */
export type RowOf<P> = P extends QueryPlan<infer R> ? R : never;

/** What groupBy takes for a frame with columns C. */
export type GroupArg<C extends FrameColumns> = Names<C> | ColumnKey<Names<C>> | WindowKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>> | SessionKey<ColumnsOfType<C, 'TIMESTAMP' | 'WINDOW'>>;
type KeyColumn<C extends FrameColumns, K> = K extends WindowKey<string>
  ? { window: 'WINDOW' }
  : K extends SessionKey<string>
    ? { session_window: 'WINDOW' }
    : K extends ColumnKey<infer N>
      ? { [P in N]: C[N] }
      : K extends string
        ? { [P in K]: C[K] }
        : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type KeyColumns<C extends FrameColumns, K extends readonly unknown[]> = Known<C> extends false ? AnyColumns : UnionToIntersection<{ [I in keyof K]: KeyColumn<C, K[I]> }[number]> & {};

type NumericType = 'INT' | 'LONG' | 'DOUBLE' | 'TIMESTAMP';
/** The aggregates a frame with columns C accepts (sum and avg need a numeric column). */
export type AggArg<C extends FrameColumns> = Known<C> extends false
  ? AggBuilder | AggSpec
  :
  | AggBuilder<string, 'count', Names<C> | undefined>
  | AggBuilder<string, 'sum' | 'avg', ColumnsOfType<C, NumericType>>
  | AggBuilder<string, 'min' | 'max' | 'first' | 'last' | 'approxCountDistinct', Names<C>>
  | AggSpec;
type AggType<C extends FrameColumns, F extends AggFn, Col> = F extends 'count' | 'approxCountDistinct'
  ? 'LONG'
  : F extends 'avg'
    ? 'DOUBLE'
    : Col extends keyof C
      ? F extends 'sum'
        ? C[Col] extends 'INT' | 'LONG'
          ? 'LONG'
          : 'DOUBLE'
        : C[Col]
      : ColumnType;
type AggColumn<C extends FrameColumns, A> = A extends AggBuilder<infer N, infer F, infer Col> ? { [P in N]: AggType<C, F, Col> } : A extends AggSpec ? AnyColumns : never;
type AggColumns<C extends FrameColumns, A extends readonly unknown[]> = Known<C> extends false ? AnyColumns : UnionToIntersection<{ [I in keyof A]: AggColumn<C, A[I]> }[number]> & {};

/** What `join` takes as `on` for a stream with columns C and a table with columns T. */
export type JoinOnArg<C extends FrameColumns, T extends FrameColumns> = (Names<C> & Names<T>) | { readonly left: Names<C>; readonly right: Names<T> };
type UsingKeys<O> = O extends readonly (infer E)[] ? Extract<E, string> : Extract<O, string>;
type IsSemi<J> = Lowercase<J & string> extends 'leftsemi' | 'left_semi' | 'semi' ? true : false;
/** The columns after a stream-static join: the stream's, then the table's but its string keys (leftSemi: the stream's). */
export type JoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> = IsSemi<J> extends true
  ? C
  : Known<C> extends false
    ? AnyColumns
    : Known<T> extends false
      ? AnyColumns
      : Simplify<C & Omit<T, UsingKeys<O>>>;

/** The columns after a stream-stream join: the string keys, the left's other columns, the right's (leftSemi: the left's). */
export type StreamJoinedColumns<C extends FrameColumns, T extends FrameColumns, O, J> = JoinedColumns<C, T, O, J>;

// ---------------------------------------------------------------------------------- the builders

export class DataStreamReader<C extends FrameColumns = AnyColumns> {
  private fmt: 'json' = 'json';
  private ddl: string | undefined;
  private readonly opts: Record<string, string | number | boolean> = {};

  format(f: string): this {
    if (f !== 'json') {
      throw new InvalidOptionError(`source format ${JSON.stringify(f)} is not supported: sluice reads JSON lines (optionally gzip); use format('json')`);
    }
    this.fmt = 'json';
    return this;
  }
  /** Spark DDL. A literal string also gives the frame's column types (SchemaColumns). */
  schema<D extends string>(ddl: D): DataStreamReader<SchemaColumns<D>> {
    this.ddl = ddl;
    return this as unknown as DataStreamReader<SchemaColumns<D>>;
  }
  option(key: string, value: string | number | boolean): this {
    this.opts[key] = value;
    return this;
  }
  options(o: Record<string, string | number | boolean>): this {
    Object.assign(this.opts, o);
    return this;
  }
  private spec(kind: 'files' | 'kinesis', path?: string): SourceSpec {
    if (this.ddl === undefined) {
      throw new InvalidQueryError(
        'the source has no schema: streaming sources need a declared schema, e.g. .schema("user STRING, event_time TIMESTAMP, amount DOUBLE")',
      );
    }
    return { kind, format: this.fmt, path, schema: parseSchema(this.ddl), options: { ...this.opts } };
  }
  /** An S3 landing prefix of JSON-lines objects (`s3://bucket/prefix/`), or leave it to the runtime. */
  json(path?: string): StreamFrame<C> {
    return this.load(path);
  }
  load(path?: string): StreamFrame<C> {
    return new StreamFrame<C>(this.spec('files', path), [], []);
  }
  /** A Kinesis data stream of JSON records. */
  kinesis(streamName?: string): StreamFrame<C> {
    return new StreamFrame<C>(this.spec('kinesis', streamName), [], []);
  }
}

/** Entry point, as `spark.readStream`. */
export const readStream = {
  format: (f: string): DataStreamReader<AnyColumns> => new DataStreamReader().format(f),
  schema: <D extends string>(ddl: D): DataStreamReader<SchemaColumns<D>> => new DataStreamReader().schema(ddl),
};

export class StreamFrame<C extends FrameColumns = AnyColumns> {
  constructor(
    readonly source: SourceSpec,
    /** Stateless stages before the first stateful operator. */
    readonly stages: readonly StatelessStage[],
    /** The stateful operators so far, each with the stateless stages after it. */
    readonly operators: readonly OperatorStep[],
    /** The streams joined in so far (stream-stream joins), in join order. */
    readonly inputs: readonly PlanInput[] = [],
  ) {}

  private add<N extends FrameColumns = C>(stage: StatelessStage): StreamFrame<N> {
    const ops = this.operators;
    if (ops.length === 0) return new StreamFrame<N>(this.source, [...this.stages, stage], [], this.inputs);
    const last = ops[ops.length - 1];
    return new StreamFrame<N>(this.source, this.stages, [...ops.slice(0, -1), { spec: last.spec, post: [...last.post, stage] }], this.inputs);
  }

  withWatermark(column: ColumnsOfType<C, 'TIMESTAMP'>, delay: string): StreamFrame<C> {
    const st = this.operators[0]?.spec;
    if (st) {
      throw new InvalidQueryError(
        `withWatermark("${column}", "${delay}") after ${st.kind === 'aggregate' ? 'an aggregation' : st.kind === 'dedup' ? 'dropDuplicates' : 'a stream-stream join'} is not supported: call withWatermark on the input, before the stateful operators (an aggregation's window keeps its watermark)`,
      );
    }
    const id = `wm${this.stages.filter((s) => s.kind === 'watermark').length}`;
    const stage: StatelessStage = { kind: 'watermark', id, column, delayMs: parseWatermarkDelay(delay), delayText: delay };
    columnsAfter(this.source.schema.columns, [...this.stages, stage]); // checks the column now, not at plan()
    return this.add(stage);
  }
  filter(fn: (row: InputRowOf<C>) => boolean, label = 'filter'): StreamFrame<C> {
    return this.add({ kind: 'filter', fn: fn as (row: Row) => boolean, label });
  }
  where(fn: (row: InputRowOf<C>) => boolean): StreamFrame<C> {
    return this.filter(fn, 'where');
  }
  /**
   * Keeps the listed columns. An item may also be a ProjectItem (renamed, windowOf, windowStart,
   * windowEnd, windowTime), FORMAT-2's select items; then the frame's columns are loosely typed.
   */
  select<K extends Names<C>>(...columns: K[]): StreamFrame<Simplify<Pick<C, K>>>;
  select(...items: Array<Names<C> | ProjectItem>): StreamFrame<AnyColumns>;
  select(...items: Array<string | ProjectItem>): StreamFrame<any> {
    if (items.every((i): i is string => typeof i === 'string')) return this.add({ kind: 'select', columns: items });
    return this.add({ kind: 'project', items: items.map((i): ProjectItem => (typeof i === 'string' ? { kind: 'column', as: i, column: i } : i)) });
  }
  withColumn<N extends string, T extends ColumnType>(name: N, type: T, fn: (row: InputRowOf<C>) => unknown): StreamFrame<Simplify<Omit<C, N> & { [P in N]: T }>> {
    return this.add({ kind: 'withColumn', name, type, fn: fn as (row: Row) => unknown });
  }
  /**
   * `join(table, on, type)` with a static table (Spark's stream-static join, stateless): each
   * batch's rows joined with the table's. `on`: a column both sides have (one output column), or
   * `{ left, right }`, or a list of them; equal means equal and non-null. `type`: 'inner'
   * (default), 'leftOuter' (unmatched rows with nulls), 'leftSemi' (matched rows, unchanged);
   * Spark's spellings (left_outer, left_semi, ...) too. Output columns: the string keys, the
   * stream's other columns, the table's other columns; another name on both sides is refused.
   */
  join<T extends FrameColumns, const O extends JoinOnArg<C, T> | readonly JoinOnArg<C, T>[], J extends string = 'inner'>(
    table: StaticTable<T>,
    on: O,
    type?: J,
    options?: { condition?: readonly JoinPredicate[] },
  ): StreamFrame<JoinedColumns<C, T, O, J>>;
  /**
   * `join(otherStream, on, type, { timeRange, condition })`: a stream-stream join (Spark's
   * symmetric hash join, stateful): both sides' rows are buffered in the state store until the
   * watermark says no future row can match them. `type`: 'inner' (default), 'leftOuter',
   * 'rightOuter', 'fullOuter', 'leftSemi'. `timeRange`: the typed form of Spark's
   * `expr("left BETWEEN right - INTERVAL 10 SECONDS AND right + INTERVAL 5 SECONDS")`, i.e.
   * `{ left: 'leftTime', right: 'rightTime', lower: '-10 seconds', upper: '5 seconds' }`; with a
   * watermark on both sides it lets the state be cleaned. `name`: the input's name in progress
   * records (default input2, input3, ...).
   */
  join<T extends FrameColumns, const O extends JoinOnArg<C, T> | readonly JoinOnArg<C, T>[], J extends string = 'inner'>(
    other: StreamFrame<T>,
    on: O,
    type?: J,
    options?: { timeRange?: TimeRangeArg; condition?: readonly JoinPredicate[]; name?: string },
  ): StreamFrame<StreamJoinedColumns<C, T, O, J>>;
  join(
    table: StaticTable<FrameColumns> | StreamFrame<FrameColumns>,
    on: JoinOnArg<FrameColumns, FrameColumns> | readonly JoinOnArg<FrameColumns, FrameColumns>[],
    type?: string,
    options: { timeRange?: TimeRangeArg; condition?: readonly JoinPredicate[]; name?: string } = {},
  ): StreamFrame<any> {
    if (table instanceof StreamFrame) return this.streamJoin(table, on, type ?? 'inner', options);
    if (!table || typeof table !== 'object' || !table.spec) {
      throw new InvalidQueryError('join: the right side must be a stream (readStream...) or a static table built with staticTable.s3(...), staticTable.dynamodb(...) or staticTable.rows(...)');
    }
    if (options.timeRange) throw new InvalidQueryError('join: timeRange is for a stream-stream join; a stream-static join matches by its keys and condition');
    const joinType = staticJoinType(type ?? 'inner');
    const list = (Array.isArray(on) ? on : [on]) as ReadonlyArray<string | { left: string; right: string }>;
    if (list.length === 0) throw new InvalidQueryError('join: `on` is empty: name at least one key column, e.g. join(table, "userId")');
    const pairs: JoinKeyPair[] = list.map((k) => (typeof k === 'string' ? { left: k, right: k, using: true } : { left: k?.left, right: k?.right, using: false }));
    const id = `join${[...this.stages, ...this.operators.flatMap((o) => o.post)].filter((s) => s.kind === 'join').length}`;
    const stage: JoinStage = { kind: 'join', id, table: table.spec, type: joinType, on: pairs, condition: options.condition ?? [] };
    const last = this.operators[this.operators.length - 1];
    const before = last ? columnsAfter(outputColumns({ source: this.source, stages: this.stages, operators: this.operators }), last.post) : columnsAfter(this.source.schema.columns, this.stages);
    columnsAfter(before, [stage]); // checks the keys and the names now, not at plan()
    // Spark infers isnotnull(key) on the stream side of an inner or semi equi-join and pushes it
    // below the watermark (InferFiltersFromConstraints): a null-key row is not even seen by it
    if (joinType === 'inner' || joinType === 'leftSemi') {
      const pushed = pushFilter(this as unknown as StreamFrame<FrameColumns>, [], pairs.map((k) => k.left));
      return (pushed as unknown as StreamFrame<C>).add(stage);
    }
    return this.add(stage);
  }

  /** A stream-stream join with `other` (see join): the other stream becomes one of the plan's inputs. */
  private streamJoin(other: StreamFrame<FrameColumns>, on: unknown, type: string, options: { timeRange?: TimeRangeArg; condition?: readonly JoinPredicate[]; name?: string }): StreamFrame<any> {
    if (other.inputs.length) {
      throw new InvalidQueryError('join: the right stream has joins of its own: join the streams one at a time from the left, e.g. a.join(b, ...).join(c, ...)');
    }
    if (other === (this as unknown)) throw new InvalidQueryError('join: a stream joined with itself needs two inputs: read the source twice (two readStream...load calls) and rename the columns of one side');
    const joinType = streamJoinType(type);
    const index = this.inputs.length;
    const name = options.name ?? `input${index + 2}`;
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) || this.inputs.some((i) => i.name === name)) {
      throw new InvalidQueryError(`join: input name ${JSON.stringify(name)} must be 1-64 letters, digits, '.', '_' or '-' and not name another input of the query (${this.inputs.map((i) => i.name).join(', ') || 'none yet'})`);
    }
    const list = (Array.isArray(on) ? on : [on]) as ReadonlyArray<string | { left: string; right: string }>;
    if (list.length === 0) throw new InvalidQueryError('join: `on` is empty: a stream-stream join needs at least one equi-join key, e.g. join(other, "userId")');
    const pairs: JoinKeyPair[] = list.map((k) => (typeof k === 'string' ? { left: k, right: k, using: true } : { left: k?.left, right: k?.right, using: false }));
    // the other stream's watermark stages get ids of their own (the checkpoint keeps each one's watermark by id)
    let wm = 0;
    const rename = (st: StatelessStage): StatelessStage => (st.kind === 'watermark' ? { ...st, id: `in${index}wm${wm++}` } : st);
    let input: PlanInput = { name, source: other.source, stages: other.stages.map(rename), operators: other.operators.map((o) => ({ spec: o.spec, post: o.post.map(rename) })), limits: sourceLimits(other.source) };
    const timeRange = options.timeRange === undefined ? null : parseTimeRange(options.timeRange);
    const condition = [...(options.condition ?? [])];
    // Spark pushes a single-side item into the input that cannot produce outer rows: there it
    // filters rows before anything else (FORMAT-2 "Where condition applies")
    const leftCols = columnsAfter(outputColumns(this), this.operators.length ? this.operators[this.operators.length - 1].post : []);
    const rightCols = columnsAfter(outputColumns(input), input.operators.length ? input.operators[input.operators.length - 1].post : []);
    const sideOf = (p: JoinPredicate): 'left' | 'right' => (predicateColumns(p).every((c) => leftCols.some((x) => x.name === c)) ? 'left' : 'right');
    const pushLeft = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'rightOuter';
    const pushRight = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'leftOuter';
    const toLeft = condition.filter((p) => pushLeft && sideOf(p) === 'left');
    const toRight = condition.filter((p) => pushRight && sideOf(p) === 'right');
    const inJoin = condition.filter((p) => !toLeft.includes(p) && !toRight.includes(p));
    for (const p of condition) checkPredicate(p, leftCols, rightCols, 'join');
    // Spark infers isnotnull(key) from the equi-join on the sides that cannot produce outer rows
    // (InferFiltersFromConstraints) and pushes it down with the rest: a null-key row there is invisible
    const leftKeys = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'rightOuter' ? pairs.map((k) => k.left) : [];
    const rightKeys = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'leftOuter' ? pairs.map((k) => k.right) : [];
    let left: StreamFrame<FrameColumns> = this as unknown as StreamFrame<FrameColumns>;
    if (toLeft.length || leftKeys.length) left = pushFilter(left, toLeft, leftKeys);
    if (toRight.length || rightKeys.length) {
      const pushed = pushFilter(new StreamFrame(input.source, input.stages, input.operators), toRight, rightKeys);
      input = { ...input, stages: pushed.stages, operators: pushed.operators };
    }
    const spec: StreamJoinSpec = { kind: 'streamJoin', input: index, type: joinType, on: pairs, timeRange, condition: inJoin, pushed: [...toLeft, ...toRight] };
    const joined = new StreamFrame<FrameColumns>(left.source, left.stages, [...left.operators, { spec, post: [] }], [...left.inputs, input]);
    operatorChain(joined); // checks the keys, the range and the names now, not at plan()
    return joined;
  }
  groupBy<K extends GroupArg<C>[]>(...keys: K): GroupedFrame<C, KeyColumns<C, K>> {
    return new GroupedFrame(this as unknown as StreamFrame<FrameColumns>, keys.map((k) => (typeof k === 'string' ? col(k) : k)) as GroupKey[]);
  }
  dropDuplicates(columns?: Array<Names<C>>): StreamFrame<C> {
    return this.stateful_({ kind: 'dedup', columns: columns && columns.length ? columns : null, withinWatermark: false });
  }
  dropDuplicatesWithinWatermark(columns?: Array<Names<C>>): StreamFrame<C> {
    return this.stateful_({ kind: 'dedup', columns: columns && columns.length ? columns : null, withinWatermark: true });
  }
  /** @internal */
  stateful_<N extends FrameColumns = C>(spec: StatefulSpec): StreamFrame<N> {
    return new StreamFrame<N>(this.source, this.stages, [...this.operators, { spec, post: [] }], this.inputs);
  }
  get writeStream(): DataStreamWriter<C> {
    return new DataStreamWriter<C>(this as unknown as StreamFrame<FrameColumns>);
  }
}

/**
 * A grouped frame: C are the input columns, K the grouping keys' output columns. `agg` checks
 * the aggregates' columns against C and returns a frame of K and the aliases.
 */
export class GroupedFrame<C extends FrameColumns = AnyColumns, K extends FrameColumns = AnyColumns> {
  constructor(private readonly frame: StreamFrame<FrameColumns>, private readonly keys: GroupKey[]) {}
  agg<A extends AggArg<C>[]>(...aggs: A): StreamFrame<Simplify<K & AggColumns<C, A>>> {
    const specs = aggs.map((a) => (a instanceof AggBuilder ? a.toSpec() : { fn: a.fn, column: a.column, as: a.as }));
    return this.frame.stateful_({ kind: 'aggregate', keys: this.keys, aggs: specs });
  }
  count(): StreamFrame<Simplify<K & { count: 'LONG' }>> {
    return this.frame.stateful_({ kind: 'aggregate', keys: this.keys, aggs: [count().alias('count').toSpec()] });
  }
}

export class DataStreamWriter<C extends FrameColumns = AnyColumns> {
  private mode: OutputMode = 'append';
  private trig: 'availableNow' | 'once' = 'availableNow';
  private name = 'query';
  private late: 'drop' | 'dead-letter' = 'drop';
  private partitions = 1;
  private idleTimeoutMs: number | undefined;
  private policy: 'min' | 'max' = 'min';

  constructor(private readonly frame: StreamFrame<FrameColumns>) {}

  /**
   * `option('statePartitions', P)`: the state is split into P partitions (1 to 256, default 1) by a
   * hash of the grouping key, window left out; each partition's state and versions are independent.
   * P is fixed when the checkpoint is created: a restart with another P is refused.
   *
   * `option('idleTimeout', '30 minutes')` (sluice's, off by default as in Spark): when a run finds
   * no new data and none has come for at least this long, the watermark advances by the wall
   * clock that passed since the last input and a no-data batch emits the windows it closes.
   * Only for a query with a watermark and state it can evict (not complete mode): plan() refuses
   * it elsewhere, where it could change nothing.
   *
   * `option('multipleWatermarkPolicy', 'max')`: with several inputs (each with its withWatermark),
   * the global watermark follows the fastest input instead of the slowest (Spark's
   * spark.sql.streaming.multipleWatermarkPolicy); the policy is part of the checkpoint's shape.
   */
  option(key: string, value: string | number | boolean): this {
    if (key === 'multipleWatermarkPolicy' || key === 'spark.sql.streaming.multipleWatermarkPolicy') {
      const v = String(value).toLowerCase();
      if (v !== 'min' && v !== 'max') {
        throw new InvalidOptionError(`option multipleWatermarkPolicy=${JSON.stringify(value)} is not 'min' or 'max': min (Spark's default) waits for the slowest input, max follows the fastest and drops more of the others' rows as late`);
      }
      this.policy = v;
      return this;
    }
    if (key === 'idleTimeout') {
      if (typeof value !== 'string') {
        throw new InvalidOptionError(`option idleTimeout=${JSON.stringify(value)} is not a duration: write it as Spark writes intervals, e.g. .option('idleTimeout', '30 minutes')`);
      }
      this.idleTimeoutMs = parseWindowDuration(value, 'option idleTimeout');
      return this;
    }
    if (key !== 'statePartitions') {
      throw new InvalidOptionError(`writeStream option ${JSON.stringify(key)} is not known: the writer takes 'statePartitions', 'idleTimeout' and 'multipleWatermarkPolicy'; source options (maxFilesPerTrigger, ...) go on readStream`);
    }
    const n = positiveIntOption(key, value);
    if (n > MAX_STATE_PARTITIONS) {
      throw new InvalidOptionError(`option statePartitions=${n} is above ${MAX_STATE_PARTITIONS}: one partition holds many keys, so use 256 or fewer`);
    }
    this.partitions = n;
    return this;
  }

  /**
   * Rows dropped by the watermark: 'drop' (Spark: counted, then gone) or 'dead-letter' (also
   * written, with the reason and the watermark that rejected them, to the dead-letter location,
   * exactly once per batch, so a reconciliation job can read them).
   */
  lateRows(target: 'drop' | 'dead-letter'): this {
    if (target !== 'drop' && target !== 'dead-letter') {
      throw new InvalidOptionError(`lateRows ${JSON.stringify(target)} is not 'drop' or 'dead-letter'`);
    }
    this.late = target;
    return this;
  }

  outputMode(mode: string): this {
    if (mode !== 'append' && mode !== 'update' && mode !== 'complete') {
      throw new InvalidOptionError(`output mode ${JSON.stringify(mode)} is not one of append, update, complete`);
    }
    this.mode = mode;
    return this;
  }
  /** `{ availableNow: true }`, or `{ once: true }` (deprecated alias, as in Spark). */
  trigger(t: { availableNow?: boolean; once?: boolean; processingTime?: string; continuous?: string }): this {
    if (t.availableNow) this.trig = 'availableNow';
    else if (t.once) this.trig = 'once';
    else {
      throw new InvalidOptionError(
        `trigger ${JSON.stringify(t)} is not supported: sluice runs on a schedule, so use { availableNow: true } (and let the schedule set the interval)`,
      );
    }
    return this;
  }
  queryName(name: string): this {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(name)) {
      throw new InvalidOptionError(`query name ${JSON.stringify(name)} must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`);
    }
    this.name = name;
    return this;
  }
  /** The checked plan. Throws InvalidQueryError with Spark's rule and the fix. */
  plan(): QueryPlan<OutputRowOf<C>> {
    const plan = { ...toPlan(this.frame, this.mode, this.trig, this.name), lateRows: this.late, statePartitions: this.partitions, ...(this.policy === 'max' ? { watermarkPolicy: 'max' as const } : {}) };
    if (this.idleTimeoutMs === undefined) return plan as QueryPlan<OutputRowOf<C>>;
    checkIdleTimeout(plan);
    return { ...plan, idleTimeoutMs: this.idleTimeoutMs } as QueryPlan<OutputRowOf<C>>;
  }
}

/** idleTimeout moves the watermark of a no-data batch: refused where that could change nothing. */
function checkIdleTimeout(plan: QueryPlan): void {
  const why = !plan.stateful
    ? 'this query is stateless, so it has no windows to close'
    : !plan.stages.some((s) => s.kind === 'watermark')
      ? 'this query has no withWatermark, so nothing waits for a watermark'
      : plan.outputMode === 'complete'
        ? 'complete mode never evicts, so a later watermark changes nothing'
        : null;
  if (why !== null) {
    throw new InvalidOptionError(`option idleTimeout advances the watermark of an idle source, but ${why}: remove the option`);
  }
}

// ----------------------------------------------------------------------------------- validation

/** The most state partitions a query may have. */
export const MAX_STATE_PARTITIONS = 256;

const LIMIT_OPTIONS: Record<string, keyof BatchLimits> = {
  maxFilesPerTrigger: 'maxFilesPerTrigger',
  maxBytesPerTrigger: 'maxBytesPerTrigger',
  maxRecordsPerTrigger: 'maxRecordsPerTrigger',
};

function positiveIntOption(key: string, v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0) {
    throw new InvalidOptionError(`option ${key}=${JSON.stringify(v)} must be a positive integer, e.g. .option('${key}', 100)`);
  }
  return n;
}

export interface ColumnInfo {
  readonly name: string;
  readonly type: ColumnType;
  /** A window column ({start, end}; its type says TIMESTAMP): an aggregation's window or session_window, or a select's window. */
  readonly window?: boolean;
}

/** The columns visible after a list of stages, starting from the source schema. */
export function columnsAfter(start: readonly ColumnInfo[], stages: readonly StatelessStage[]): ColumnInfo[] {
  let cols = [...start];
  for (const s of stages) {
    if (s.kind === 'select') {
      cols = s.columns.map((c) => {
        const found = cols.find((x) => x.name === c);
        if (!found) throw unknownColumn(c, cols, 'select');
        return found;
      });
    } else if (s.kind === 'project') {
      const before = cols;
      const find = (c: string) => {
        const found = before.find((x) => x.name === c);
        if (!found) throw unknownColumn(c, before, 'select');
        return found;
      };
      cols = s.items.map((item): ColumnInfo => {
        if (item.kind === 'column') {
          const found = find(item.column);
          return item.as === found.name ? found : { ...found, name: item.as };
        }
        if (item.kind === 'window') {
          const found = find(item.window.column);
          if (found.type !== 'TIMESTAMP' || found.window) throw new InvalidQueryError(`select: window(${item.window.column}, ...) needs a TIMESTAMP column, but ${item.window.column} is ${found.window ? 'a window' : found.type}: take the window over a TIMESTAMP column`);
          return { name: item.as, type: 'TIMESTAMP', window: true };
        }
        const found = find(item.column);
        if (!found.window) throw new InvalidQueryError(`select: ${item.kind}(${item.column}) needs a window column, but ${item.column} is ${found.type}: name an aggregation's window column`);
        return { name: item.as, type: 'TIMESTAMP' };
      });
      const names = new Set<string>();
      for (const c of cols) {
        if (names.has(c.name)) throw new InvalidQueryError(`select: the output column ${JSON.stringify(c.name)} is listed twice: give each item its own name`);
        names.add(c.name);
      }
    } else if (s.kind === 'withColumn') {
      cols = [...cols.filter((c) => c.name !== s.name), { name: s.name, type: s.type }];
    } else if (s.kind === 'watermark') {
      const found = cols.find((x) => x.name === s.column);
      if (!found) throw unknownColumn(s.column, cols, 'withWatermark');
      if (found.type !== 'TIMESTAMP') {
        throw new InvalidQueryError(
          `withWatermark("${s.column}", "${s.delayText}"): event time must be a TIMESTAMP column, but ${s.column} is ${found.type}: declare it TIMESTAMP in the schema or derive a TIMESTAMP column with withColumn`,
        );
      }
    } else if (s.kind === 'join') {
      cols = joinedColumns(cols, s);
    }
  }
  return cols;
}

const NUMERIC: ReadonlySet<ColumnType> = new Set(['INT', 'LONG', 'DOUBLE']);

/** A static table's description in errors. */
export function describeStaticTable(t: StaticTableSpec): string {
  return t.kind === 's3' ? t.uri : t.kind === 'dynamodb' ? `dynamodb://${t.tableName}` : 'staticTable.rows';
}

/** The columns after a stream-static join (FORMAT-2 "Output rows"), its keys and names checked. */
function joinedColumns(left: readonly ColumnInfo[], s: JoinStage): ColumnInfo[] {
  const right = s.table.schema.columns;
  const where = `join with ${describeStaticTable(s.table)}`;
  for (const k of s.on) {
    if (typeof k.left !== 'string' || typeof k.right !== 'string') throw new InvalidQueryError(`${where}: a key of \`on\` must be a column name or { left, right }, not ${JSON.stringify(k)}`);
    const l = left.find((c) => c.name === k.left);
    if (!l) throw unknownColumn(k.left, left, `${where} (stream side)`);
    const r = right.find((c) => c.name === k.right);
    if (!r) throw unknownColumn(k.right, right, `${where} (table side)`);
    if (l.type !== r.type && !(NUMERIC.has(l.type) && NUMERIC.has(r.type))) {
      throw new InvalidQueryError(`${where}: key ${k.left} is ${l.type} on the stream side but ${k.right} is ${r.type} in the table: declare both the same type`);
    }
  }
  if (s.table.kind === 'dynamodb') {
    const keys = s.on.map((k) => k.right).sort();
    if (keys.join('\u0000') !== [...s.table.key].sort().join('\u0000')) {
      throw new InvalidQueryError(`${where}: the table is looked up by its key (${s.table.key.join(', ')}), so \`on\` must name exactly those columns on its side, not ${s.on.map((k) => k.right).join(', ')}`);
    }
  }
  for (const p of s.condition) checkPredicate(p, left, right, where);
  return joinOutputColumns(left, right, s.on, s.type === 'leftSemi', where);
}

/** A join's output columns (FORMAT-2 "Output rows"): the string keys, the left's others, the right's others; leftSemi: the left's. */
function joinOutputColumns(left: readonly ColumnInfo[], right: readonly ColumnInfo[], on: readonly JoinKeyPair[], semi: boolean, where: string): ColumnInfo[] {
  if (semi) return [...left];
  const using = on.filter((k) => k.using).map((k) => k.left);
  const usingSet = new Set(using);
  const rightOthers = right.filter((c) => !usingSet.has(c.name));
  for (const c of rightOthers) {
    if (left.some((l) => l.name === c.name)) {
      throw new InvalidQueryError(`${where}: column ${c.name} is on both sides: rename it on one side (withColumn, select) or join on it by name`);
    }
  }
  return [...using.map((n) => left.find((c) => c.name === n)!), ...left.filter((c) => !usingSet.has(c.name)), ...rightOthers.map((c): ColumnInfo => (c.window ? { name: c.name, type: c.type, window: true } : { name: c.name, type: c.type }))];
}

function checkPredicate(p: JoinPredicate, left: readonly ColumnInfo[], right: readonly ColumnInfo[], where: string): void {
  if ('anyOf' in p) {
    if (!Array.isArray(p.anyOf) || p.anyOf.length === 0) throw new InvalidQueryError(`${where}: a condition's anyOf must be a non-empty list of predicates`);
    for (const q of p.anyOf) checkPredicate(q, left, right, where);
    return;
  }
  if (!['=', '!=', '<', '<=', '>', '>='].includes(p.op)) throw new InvalidQueryError(`${where}: condition op ${JSON.stringify(p.op)} is not one of = != < <= > >=`);
  if (!left.some((c) => c.name === p.column) && !right.some((c) => c.name === p.column)) {
    throw unknownColumn(p.column, [...left, ...right], `${where} condition`);
  }
}

function unknownColumn(name: string, cols: readonly ColumnInfo[], where: string): InvalidQueryError {
  return new InvalidQueryError(
    `${where}: column ${JSON.stringify(name)} does not exist; the columns are ${cols.map((c) => c.name).join(', ')}: fix the name or add it to the schema`,
  );
}

/** A source's rate limits, from its options. */
function sourceLimits(source: SourceSpec, trigger: 'availableNow' | 'once' = 'availableNow'): BatchLimits {
  const limits: { -readonly [K in keyof BatchLimits]: BatchLimits[K] } = {};
  // Trigger.Once runs one batch with everything: Spark ignores the rate limits for it.
  if (trigger === 'once') return limits;
  for (const [k, v] of Object.entries(source.options)) {
    if (k in LIMIT_OPTIONS) limits[LIMIT_OPTIONS[k]] = positiveIntOption(k, v);
  }
  return limits;
}

export function toPlan(frame: StreamFrame<FrameColumns>, outputMode: OutputMode, trigger: 'availableNow' | 'once', name: string): QueryPlan {
  const limits = sourceLimits(frame.source, trigger);
  const inputs = frame.inputs.map((i) => ({ ...i, limits: sourceLimits(i.source, trigger) }));
  const ops = frame.operators;
  const allOps = [...ops, ...frame.inputs.flatMap((i) => i.operators)];
  if (!allOps.some((o) => o.spec.kind === 'aggregate') && outputMode === 'complete') {
    throw new InvalidQueryError(
      allOps.some((o) => o.spec.kind === 'streamJoin')
        ? 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: a stream-stream join emits each joined row once, so use append'
        : ops.length
        ? 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: dropDuplicates emits each first row once, so use append (or update)'
        : 'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: use append (or update), or add a groupBy(...).agg(...)',
    );
  }
  // every operator's checks with its own input columns and event-time marks (operatorChain)
  const draft = { source: frame.source, stages: frame.stages, operators: ops, inputs };
  const chain = operatorChain(draft).operators;
  for (const op of chain) {
    const st = op.spec;
    const cols = op.inputColumns;
    if (st.kind === 'streamJoin') checkStreamJoin(op, outputMode);
    if (op.afterAggregation && outputMode !== 'append') checkCorrectness(st, op.marks, cols, outputMode);
    if (st.kind === 'aggregate') {
      checkAggregate(st, cols, new Set(op.marks.keys()), outputMode);
    } else if (st.kind === 'dedup') {
      for (const c of st.columns ?? []) if (!cols.find((x) => x.name === c)) throw unknownColumn(c, cols, 'dropDuplicates');
      if (st.withinWatermark && op.marks.size === 0) {
        throw new InvalidQueryError(
          'dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark: call withWatermark(eventTimeColumn, delay) before it, as without a watermark no key would ever expire',
        );
      }
    }
  }
  const last = ops[ops.length - 1];
  return {
    name,
    source: frame.source,
    ...(inputs.length ? { inputs } : {}),
    stages: frame.stages,
    operators: ops,
    stateful: ops[0]?.spec ?? null,
    post: last ? last.post : [],
    outputMode,
    trigger,
    limits,
    lateRows: 'drop',
    statePartitions: 1,
  };
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

/** Event-time columns (FORMAT-2 "Event-time columns"): name to the delay of the watermark they carry. */
export type Marks = ReadonlyMap<string, number>;

/** The marks after stateless stages: a watermark marks its column, renames keep a mark, select and withColumn drop what they drop. */
export function marksAfter(marks: Marks, stages: readonly StatelessStage[]): Marks {
  let m = new Map(marks);
  for (const s of stages) {
    if (s.kind === 'watermark') m.set(s.column, s.delayMs);
    else if (s.kind === 'withColumn') m.delete(s.name);
    else if (s.kind === 'select') m = new Map([...m].filter(([c]) => s.columns.includes(c)));
    else if (s.kind === 'project') {
      const next = new Map<string, number>();
      for (const item of s.items) {
        const from = item.kind === 'window' ? item.window.column : item.column;
        if ((item.kind === 'column' || item.kind === 'window' || item.kind === 'windowTime') && m.has(from)) next.set(item.as, m.get(from)!);
      }
      m = next;
    }
  }
  return m;
}

/** The marks on what an operator emits: an aggregation's marked keys (its window when taken over a marked column); dedup keeps its input's; a join both sides'. */
function marksAfterOperator(spec: StatefulSpec, marks: Marks, join?: JoinSides): Marks {
  if (spec.kind === 'dedup') return marks;
  if (spec.kind === 'streamJoin') {
    if (spec.type === 'leftSemi') return marks;
    const out = new Map(marks);
    for (const [c, d] of join!.rightMarks) if (!out.has(c)) out.set(c, d);
    return out;
  }
  const out = new Map<string, number>();
  for (const k of spec.keys) {
    if (k.kind === 'column') {
      if (marks.has(k.name)) out.set(k.name, marks.get(k.name)!);
    } else if (marks.has(k.column)) out.set(k.kind === 'window' ? 'window' : 'session_window', marks.get(k.column)!);
  }
  return out;
}

/**
 * How a stream-stream join's buffered rows of one side leave the state (FORMAT-2 "State
 * watermarks"), with E the join's eviction watermark: `key`, when the time of an event-time key
 * column is <= E; `value`, when the row's own time column is <= E + offsetMs; null: never.
 */
export type JoinRemoval = { readonly kind: 'key'; readonly column: string } | { readonly kind: 'value'; readonly column: string; readonly offsetMs: number } | null;

/** A stream-stream join as the executor runs it: its right side, and how each side's state is cleaned. */
export interface JoinSides {
  readonly rightColumns: ColumnInfo[];
  readonly rightMarks: Marks;
  /** The column each side's late rows are judged by (its first event-time column), null: none late. */
  readonly leftEventColumn: string | null;
  readonly rightEventColumn: string | null;
  readonly leftRemoval: JoinRemoval;
  readonly rightRemoval: JoinRemoval;
  /** The output watermark is the input one plus this (min of 0 and the state watermarks' offsets). */
  readonly outputOffsetMs: number;
}

/** One stateful operator of a plan as the executor runs it. */
export interface ChainedOperator {
  /** op0, op1, ... on the query's pipeline, in0op0, ... on an input's own: its state's operator id. */
  readonly operatorId: string;
  readonly spec: StatefulSpec;
  /** The columns of the rows it receives (a join: the left side's). */
  readonly inputColumns: ColumnInfo[];
  /** Its input's event-time columns and their delays (a join: the left side's). */
  readonly marks: Marks;
  /** The stateless stages between it and the next operator (or the sink, or the join it feeds). */
  readonly post: readonly StatelessStage[];
  /** The input whose own pipeline the operator is on (an index of plan.inputs), null: the query's. */
  readonly input: number | null;
  /**
   * Its input watermark: the global watermark plus this (<= 0; a join upstream lowers it), or null
   * when no withWatermark is upstream (FORMAT-2 "Input watermark of a stateful stage").
   */
  readonly watermarkOffsetMs: number | null;
  /** Whether an aggregation is upstream of it (Spark's correctness check). */
  readonly afterAggregation: boolean;
  /** A stream-stream join's right side and state watermarks. */
  readonly join?: JoinSides;
}

/** What flows along a pipeline: columns, marks, the watermark offset, whether an aggregation was upstream. */
interface Flow {
  readonly cols: ColumnInfo[];
  readonly marks: Marks;
  readonly offset: number | null;
  readonly afterAggregation: boolean;
}

type ChainDraft = Pick<QueryPlan, 'source' | 'stages' | 'operators' | 'inputs'>;

/**
 * The plan's stateful operators in the order a batch runs them (the plan order of stateRows and
 * progress records): the query's pipeline, where a stream-stream join is preceded by the
 * operators of its input's own pipeline. `output` are the columns the last stage emits.
 */
export function operatorChain(plan: ChainDraft): { operators: ChainedOperator[]; output: ColumnInfo[] } {
  const operators: ChainedOperator[] = [];
  const flow = walkPipeline(plan, null, plan.source, plan.stages, plan.operators, operators);
  return { operators, output: flow.cols };
}

function walkPipeline(plan: ChainDraft, input: number | null, source: SourceSpec, stages: readonly StatelessStage[], ops: readonly OperatorStep[], out: ChainedOperator[]): Flow {
  let flow: Flow = {
    cols: columnsAfter(source.schema.columns, stages),
    marks: marksAfter(new Map(), stages),
    offset: stages.some((st) => st.kind === 'watermark') ? 0 : null,
    afterAggregation: false,
  };
  ops.forEach((op, j) => {
    let join: JoinSides | undefined;
    let offset = flow.offset;
    let afterAggregation = flow.afterAggregation;
    if (op.spec.kind === 'streamJoin') {
      if (input !== null) throw new InvalidQueryError('join: a stream-stream join inside a joined input is not supported: join the streams one at a time from the left, e.g. a.join(b, ...).join(c, ...)');
      const other = plan.inputs?.[op.spec.input];
      if (!other) throw new InvalidQueryError(`a stream-stream join names input ${op.spec.input}, which the plan does not have`);
      const right = walkPipeline(plan, op.spec.input, other.source, other.stages, other.operators, out);
      join = joinSides(op.spec, flow, right, other.name);
      // a stage with two inputs takes the minimum of those that carry a watermark
      offset = flow.offset === null ? right.offset : right.offset === null ? flow.offset : Math.min(flow.offset, right.offset);
      afterAggregation = afterAggregation || right.afterAggregation;
    }
    out.push({
      operatorId: input === null ? `op${j}` : `in${input}op${j}`,
      spec: op.spec,
      inputColumns: flow.cols,
      marks: flow.marks,
      post: op.post,
      input,
      watermarkOffsetMs: offset,
      afterAggregation,
      ...(join ? { join } : {}),
    });
    const cols = operatorOutputColumns(op.spec, flow.cols, join);
    const marks = marksAfterOperator(op.spec, flow.marks, join);
    flow = {
      cols: columnsAfter(cols, op.post),
      marks: marksAfter(marks, op.post),
      offset: join && offset !== null ? offset + join.outputOffsetMs : offset,
      afterAggregation: afterAggregation || op.spec.kind === 'aggregate',
    };
  });
  return flow;
}

/** A stream-stream join's sides checked (keys, range), and its state watermarks (FORMAT-2 "State watermarks"). */
function joinSides(spec: StreamJoinSpec, left: Flow, right: Flow, inputName: string): JoinSides {
  const where = `join with input ${inputName}`;
  for (const k of spec.on) {
    if (typeof k.left !== 'string' || typeof k.right !== 'string') throw new InvalidQueryError(`${where}: a key of \`on\` must be a column name or { left, right }, not ${JSON.stringify(k)}`);
    const l = left.cols.find((c) => c.name === k.left);
    if (!l) throw unknownColumn(k.left, left.cols, `${where} (left side)`);
    const r = right.cols.find((c) => c.name === k.right);
    if (!r) throw unknownColumn(k.right, right.cols, `${where} (right side)`);
    if (!!l.window !== !!r.window || (l.type !== r.type && !(NUMERIC.has(l.type) && NUMERIC.has(r.type)))) {
      throw new InvalidQueryError(`${where}: key ${k.left} is ${l.window ? 'a window' : l.type} on the left but ${k.right} is ${r.window ? 'a window' : r.type} on the right: join keys must have the same type`);
    }
  }
  const tr = spec.timeRange;
  if (tr) {
    for (const [name, cols, side] of [[tr.left, left.cols, 'left'], [tr.right, right.cols, 'right']] as const) {
      const c = cols.find((x) => x.name === name);
      if (!c) throw unknownColumn(name, cols, `${where} timeRange (${side} side)`);
      if (c.type !== 'TIMESTAMP' || c.window) throw new InvalidQueryError(`${where}: timeRange column ${name} is ${c.window ? 'a window' : c.type}, not a TIMESTAMP: range over a TIMESTAMP column of each side`);
    }
  }
  for (const p of spec.condition) checkPredicate(p, left.cols, right.cols, where);
  const keyed = spec.on.find((k) => left.marks.has(k.left) || right.marks.has(k.right));
  let leftRemoval: JoinRemoval = null;
  let rightRemoval: JoinRemoval = null;
  if (keyed) {
    leftRemoval = { kind: 'key', column: keyed.left };
    rightRemoval = { kind: 'key', column: keyed.right };
  } else if (tr && left.marks.has(tr.left) && right.marks.has(tr.right)) {
    // left BETWEEN right + lower AND right + upper: a left row can meet no right row after the
    // watermark once left <= E + lower (1 ms less unless strict), a right row once right <= E - upper
    if (tr.lowerMs !== null) leftRemoval = { kind: 'value', column: tr.left, offsetMs: tr.lowerMs - (tr.lowerStrict ? 0 : 1) };
    if (tr.upperMs !== null) rightRemoval = { kind: 'value', column: tr.right, offsetMs: -tr.upperMs - (tr.upperStrict ? 0 : 1) };
  }
  const offsets = [leftRemoval, rightRemoval].map((r) => (r === null ? null : r.kind === 'key' ? 0 : r.offsetMs)).filter((o): o is number => o !== null);
  return {
    rightColumns: right.cols,
    rightMarks: right.marks,
    leftEventColumn: firstMarked(left),
    rightEventColumn: firstMarked(right),
    leftRemoval,
    rightRemoval,
    outputOffsetMs: Math.min(0, ...offsets),
  };
}

/** The first event-time column among a flow's columns (Spark's watermark attribute of a join side). */
function firstMarked(flow: Flow): string | null {
  return flow.cols.find((c) => flow.marks.has(c.name))?.name ?? null;
}

const JOIN_TYPE_NAMES: Record<StreamJoinType, string> = { inner: 'Inner', leftOuter: 'LeftOuter', rightOuter: 'RightOuter', fullOuter: 'FullOuter', leftSemi: 'LeftSemi' };

/** Spark's refusals of a stream-stream join (UnsupportedOperationChecker): output mode, outer joins that could never emit their nulls. */
function checkStreamJoin(op: ChainedOperator, mode: OutputMode): void {
  const spec = op.spec as StreamJoinSpec;
  if (mode !== 'append') {
    const name = mode === 'update' ? 'Update' : 'Complete';
    throw new InvalidQueryError(`Join between two streaming DataFrames/Datasets is not supported in ${name} output mode, only in Append output mode: use outputMode('append')`);
  }
  const j = op.join!;
  // (Spark's checkForStreamStreamJoinWatermark: a full outer join needs a state watermark on one side at least)
  const needs = spec.type === 'leftOuter' || spec.type === 'leftSemi' ? [j.leftRemoval] : spec.type === 'rightOuter' ? [j.rightRemoval] : spec.type === 'fullOuter' ? [j.leftRemoval, j.rightRemoval] : [];
  if (needs.length && (spec.type === 'fullOuter' ? needs.every((r) => r === null) : needs.some((r) => r === null))) {
    throw new InvalidQueryError(
      `Stream-stream ${JOIN_TYPE_NAMES[spec.type]} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition: ` +
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
      if ((a.fn === 'sum' || a.fn === 'avg') && found.type === 'BOOLEAN') {
        throw new InvalidQueryError(`${a.fn}(${a.column}): ${a.column} is BOOLEAN, which cannot be summed: count it, or sum a numeric column`);
      }
    } else if (a.fn !== 'count') {
      throw new InvalidQueryError(`${a.fn} needs a column, e.g. ${a.fn}("amount")`);
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

/** Names and types of the rows a plan's last stateful operator emits (before its post stages); a stateless plan's rows. */
export function outputColumns(plan: ChainDraft): ColumnInfo[] {
  const { operators } = operatorChain({ ...plan, operators: plan.operators.map((o, i) => (i === plan.operators.length - 1 ? { spec: o.spec, post: [] } : o)) });
  const last = operators[operators.length - 1];
  return last ? operatorOutputColumns(last.spec, last.inputColumns, last.join) : columnsAfter(plan.source.schema.columns, plan.stages);
}

/** The columns an operator emits from rows of `cols`: dedup its input's, an aggregation its keys (windows as window columns) and aggregates, a join both sides'. */
function operatorOutputColumns(st: StatefulSpec, cols: ColumnInfo[], join?: JoinSides): ColumnInfo[] {
  if (st.kind === 'dedup') return cols;
  if (st.kind === 'streamJoin') return joinOutputColumns(cols, join!.rightColumns, st.on, st.type === 'leftSemi', 'join');
  const out: ColumnInfo[] = [];
  for (const k of st.keys) {
    if (k.kind === 'column') out.push(cols.find((c) => c.name === k.name)!);
    else out.push({ name: k.kind === 'window' ? 'window' : 'session_window', type: 'TIMESTAMP', window: true });
  }
  for (const a of st.aggs) out.push({ name: a.as, type: aggOutputType(a, cols) });
  return out;
}

export function aggOutputType(a: AggSpec, cols: readonly ColumnInfo[]): ColumnType {
  const inType = a.column ? cols.find((c) => c.name === a.column)?.type : undefined;
  switch (a.fn) {
    case 'count':
    case 'approxCountDistinct':
      return 'LONG';
    case 'avg':
      return 'DOUBLE';
    case 'sum':
      return inType === 'INT' || inType === 'LONG' ? 'LONG' : 'DOUBLE';
    default:
      return inType ?? 'STRING';
  }
}

/**
 * The stateful shape of a plan, fingerprinted into the checkpoint: a restart with a different
 * shape is refused, as Spark refuses an incompatible state schema.
 */
export function statefulShape(plan: QueryPlan): Json {
  const wms = plan.stages.filter((s) => s.kind === 'watermark').map((s) => (s as { column: string }).column);
  if (plan.operators.length === 0) return { kind: 'stateless', outputMode: plan.outputMode };
  // One operator: the shape (and so the fingerprint) of checkpoints written before chains existed.
  const inputs = plan.inputs ?? [];
  const policy: Record<string, Json> = plan.watermarkPolicy === 'max' ? { watermarkPolicy: 'max' } : {};
  if (plan.operators.length === 1 && inputs.length === 0) return { ...(operatorShape(plan.operators[0].spec, wms, plan.outputMode) as Record<string, Json>), ...policy };
  if (inputs.length === 0) return { kind: 'chain', operators: plan.operators.map((o) => operatorShape(o.spec, wms, plan.outputMode)), watermarks: wms, outputMode: plan.outputMode, ...policy };
  // with joined inputs: every operator in run order (their state ids follow it), and each input's watermark columns
  return {
    kind: 'chain',
    operators: operatorChain(plan).operators.map((o) => ({ ...(operatorShape(o.spec, wms, plan.outputMode) as Record<string, Json>), id: o.operatorId })),
    watermarks: wms,
    inputs: inputs.map((i) => ({ name: i.name, kind: i.source.kind, watermarks: i.stages.filter((st) => st.kind === 'watermark').map((st) => (st as { column: string }).column) })),
    outputMode: plan.outputMode,
    ...policy,
  };
}

function operatorShape(st: StatefulSpec, wms: string[], outputMode: OutputMode): Json {
  if (st.kind === 'streamJoin') {
    return {
      kind: 'streamJoin',
      input: st.input,
      type: st.type,
      on: st.on.map((k) => ({ left: k.left, right: k.right, using: k.using })),
      timeRange: st.timeRange ? { ...st.timeRange } : null,
      condition: [...st.condition, ...st.pushed] as unknown as Json,
    };
  }
  if (st.kind === 'dedup') {
    return { kind: 'dedup', columns: st.columns ? [...st.columns] : null, withinWatermark: st.withinWatermark, watermarks: wms, outputMode };
  }
  return {
    kind: 'aggregate',
    keys: st.keys.map((k): Json =>
      k.kind === 'column' ? { column: k.name } : k.kind === 'window' ? { window: k.column, durationMs: k.durationMs, slideMs: k.slideMs, startMs: k.startMs } : { session: k.column, gapMs: k.gapMs },
    ),
    aggs: st.aggs.map((a) => ({ fn: a.fn, column: a.column ?? null, as: a.as })),
    watermarks: wms,
    outputMode,
  };
}
