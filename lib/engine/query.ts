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
import { parseWatermarkDelay, parseWindowDuration } from './duration';
import { ColumnType, parseSchema, Schema } from './schema';
import type { BatchLimits, Json, Row } from './ports';

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
  | { readonly kind: 'withColumn'; readonly name: string; readonly type: ColumnType; readonly fn: (row: Row) => unknown }
  | { readonly kind: 'watermark'; readonly id: string; readonly column: string; readonly delayMs: number; readonly delayText: string };

export interface WindowKey {
  readonly kind: 'window';
  readonly column: string;
  readonly durationMs: number;
  readonly slideMs: number;
  readonly startMs: number;
  readonly text: string;
}
export interface SessionKey {
  readonly kind: 'session';
  readonly column: string;
  readonly gapMs: number;
  readonly text: string;
}
export interface ColumnKey {
  readonly kind: 'column';
  readonly name: string;
}
export type GroupKey = WindowKey | SessionKey | ColumnKey;

export type AggFn = 'count' | 'sum' | 'min' | 'max' | 'avg' | 'first' | 'last' | 'approxCountDistinct';
export interface AggSpec {
  readonly fn: AggFn;
  /** Absent (or '*') for count(*). */
  readonly column?: string;
  readonly as: string;
}

export type StatefulSpec =
  | { readonly kind: 'aggregate'; readonly keys: readonly GroupKey[]; readonly aggs: readonly AggSpec[] }
  | { readonly kind: 'dedup'; readonly columns: readonly string[] | null; readonly withinWatermark: boolean };

export interface QueryPlan {
  readonly name: string;
  readonly source: SourceSpec;
  /** Stateless stages before the stateful operator (or all of them for a stateless query). */
  readonly stages: readonly StatelessStage[];
  readonly stateful: StatefulSpec | null;
  /** Stateless stages applied to the stateful operator's output rows. */
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
}

// ---------------------------------------------------------------- grouping and aggregate helpers

/** `window(column, windowDuration, slideDuration?, startTime?)`: tumbling, or sliding with a slide. */
export function window(column: string, duration: string, slide?: string, startTime?: string): WindowKey {
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

/** `session_window(column, gapDuration)`. */
export function sessionWindow(column: string, gap: string): SessionKey {
  return { kind: 'session', column, gapMs: parseWindowDuration(gap, `session window gap for ${column}`), text: gap };
}

export function col(name: string): ColumnKey {
  return { kind: 'column', name };
}

/** A fluent aggregate: `sum('amount').as('total')`. */
export class AggBuilder {
  constructor(readonly fn: AggFn, readonly column: string | undefined, readonly name: string) {}
  /** Names the output column, as Spark's `.alias` / `.as`. */
  as(name: string): AggBuilder {
    return new AggBuilder(this.fn, this.column, name);
  }
  alias(name: string): AggBuilder {
    return this.as(name);
  }
  toSpec(): AggSpec {
    return { fn: this.fn, column: this.column, as: this.name };
  }
}
function agg(fn: AggFn, column: string | undefined): AggBuilder {
  return new AggBuilder(fn, column, column === undefined ? `${fn}(1)` : `${fn}(${column})`);
}
export const count = (column?: string) => agg('count', column === '*' ? undefined : column);
export const sum = (column: string) => agg('sum', column);
export const min = (column: string) => agg('min', column);
export const max = (column: string) => agg('max', column);
export const avg = (column: string) => agg('avg', column);
export const first = (column: string) => agg('first', column);
export const last = (column: string) => agg('last', column);
export const approxCountDistinct = (column: string) => agg('approxCountDistinct', column);

// ---------------------------------------------------------------------------------- the builders

export class DataStreamReader {
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
  schema(ddl: string): this {
    this.ddl = ddl;
    return this;
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
  json(path?: string): StreamFrame {
    return this.load(path);
  }
  load(path?: string): StreamFrame {
    return new StreamFrame(this.spec('files', path), [], null, []);
  }
  /** A Kinesis data stream of JSON records. */
  kinesis(streamName?: string): StreamFrame {
    return new StreamFrame(this.spec('kinesis', streamName), [], null, []);
  }
}

/** Entry point, as `spark.readStream`. */
export const readStream = {
  format: (f: string) => new DataStreamReader().format(f),
  schema: (ddl: string) => new DataStreamReader().schema(ddl),
};

export class StreamFrame {
  constructor(
    readonly source: SourceSpec,
    readonly stages: readonly StatelessStage[],
    readonly stateful: StatefulSpec | null,
    readonly post: readonly StatelessStage[],
  ) {}

  private add(stage: StatelessStage): StreamFrame {
    if (this.stateful) return new StreamFrame(this.source, this.stages, this.stateful, [...this.post, stage]);
    return new StreamFrame(this.source, [...this.stages, stage], null, []);
  }

  withWatermark(column: string, delay: string): StreamFrame {
    if (this.stateful) {
      throw new InvalidQueryError(
        `withWatermark("${column}", "${delay}") after ${this.stateful.kind === 'aggregate' ? 'an aggregation' : 'dropDuplicates'} is not supported: call withWatermark on the input, before the stateful operator`,
      );
    }
    const id = `wm${this.stages.filter((s) => s.kind === 'watermark').length}`;
    const stage: StatelessStage = { kind: 'watermark', id, column, delayMs: parseWatermarkDelay(delay), delayText: delay };
    columnsAfter(this.source.schema.columns, [...this.stages, stage]); // checks the column now, not at plan()
    return this.add(stage);
  }
  filter(fn: (row: Row) => boolean, label = 'filter'): StreamFrame {
    return this.add({ kind: 'filter', fn, label });
  }
  where(fn: (row: Row) => boolean): StreamFrame {
    return this.filter(fn, 'where');
  }
  select(...columns: string[]): StreamFrame {
    return this.add({ kind: 'select', columns });
  }
  withColumn(name: string, type: ColumnType, fn: (row: Row) => unknown): StreamFrame {
    return this.add({ kind: 'withColumn', name, type, fn });
  }
  groupBy(...keys: Array<GroupKey | string>): GroupedFrame {
    return new GroupedFrame(this, keys.map((k) => (typeof k === 'string' ? col(k) : k)));
  }
  dropDuplicates(columns?: string[]): StreamFrame {
    return this.stateful_({ kind: 'dedup', columns: columns && columns.length ? columns : null, withinWatermark: false });
  }
  dropDuplicatesWithinWatermark(columns?: string[]): StreamFrame {
    return this.stateful_({ kind: 'dedup', columns: columns && columns.length ? columns : null, withinWatermark: true });
  }
  /** @internal */
  stateful_(spec: StatefulSpec): StreamFrame {
    if (this.stateful) {
      throw new InvalidQueryError(
        'a second stateful operator after the first is not supported by sluice yet: split the pipeline into two queries, the first writing to a landing prefix the second reads',
      );
    }
    return new StreamFrame(this.source, this.stages, spec, []);
  }
  get writeStream(): DataStreamWriter {
    return new DataStreamWriter(this);
  }
}

export class GroupedFrame {
  constructor(private readonly frame: StreamFrame, private readonly keys: GroupKey[]) {}
  agg(...aggs: Array<AggBuilder | AggSpec>): StreamFrame {
    const specs = aggs.map((a) => (a instanceof AggBuilder ? a.toSpec() : { fn: a.fn, column: a.column, as: a.as }));
    return this.frame.stateful_({ kind: 'aggregate', keys: this.keys, aggs: specs });
  }
  count(): StreamFrame {
    return this.agg(count().alias('count'));
  }
}

export class DataStreamWriter {
  private mode: OutputMode = 'append';
  private trig: 'availableNow' | 'once' = 'availableNow';
  private name = 'query';
  private late: 'drop' | 'dead-letter' = 'drop';
  private partitions = 1;

  constructor(private readonly frame: StreamFrame) {}

  /**
   * `option('statePartitions', P)`: the state is split into P partitions (1 to 256, default 1) by a
   * hash of the grouping key, window left out; each partition's state and versions are independent.
   * P is fixed when the checkpoint is created: a restart with another P is refused.
   */
  option(key: string, value: string | number | boolean): this {
    if (key !== 'statePartitions') {
      throw new InvalidOptionError(`writeStream option ${JSON.stringify(key)} is not known: the writer takes 'statePartitions'; source options (maxFilesPerTrigger, ...) go on readStream`);
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
  plan(): QueryPlan {
    return { ...toPlan(this.frame, this.mode, this.trig, this.name), lateRows: this.late, statePartitions: this.partitions };
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
    }
  }
  return cols;
}

function unknownColumn(name: string, cols: readonly ColumnInfo[], where: string): InvalidQueryError {
  return new InvalidQueryError(
    `${where}: column ${JSON.stringify(name)} does not exist; the columns are ${cols.map((c) => c.name).join(', ')}: fix the name or add it to the schema`,
  );
}

export function toPlan(frame: StreamFrame, outputMode: OutputMode, trigger: 'availableNow' | 'once', name: string): QueryPlan {
  const limits: { -readonly [K in keyof BatchLimits]: BatchLimits[K] } = {};
  for (const [k, v] of Object.entries(frame.source.options)) {
    if (k in LIMIT_OPTIONS) limits[LIMIT_OPTIONS[k]] = positiveIntOption(k, v);
  }
  if (trigger === 'once') {
    // Trigger.Once runs one batch with everything: Spark ignores the rate limits for it.
    delete limits.maxFilesPerTrigger;
    delete limits.maxBytesPerTrigger;
    delete limits.maxRecordsPerTrigger;
  }
  const cols = columnsAfter(frame.source.schema.columns, frame.stages);
  const watermarks = frame.stages.filter((s): s is Extract<StatelessStage, { kind: 'watermark' }> => s.kind === 'watermark');
  const watermarked = new Set(watermarks.map((w) => w.column));
  const st = frame.stateful;

  if (!st) {
    if (outputMode === 'complete') {
      throw new InvalidQueryError(
        'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: use append (or update), or add a groupBy(...).agg(...)',
      );
    }
  } else if (st.kind === 'aggregate') {
    checkAggregate(st, cols, watermarked, outputMode);
  } else {
    if (outputMode === 'complete') {
      throw new InvalidQueryError(
        'Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets: dropDuplicates emits each first row once, so use append (or update)',
      );
    }
    for (const c of st.columns ?? []) if (!cols.find((x) => x.name === c)) throw unknownColumn(c, cols, 'dropDuplicates');
    if (st.withinWatermark && watermarks.length === 0) {
      throw new InvalidQueryError(
        'dropDuplicatesWithinWatermark is not supported on a streaming DataFrame without a watermark: call withWatermark(eventTimeColumn, delay) before it (the delay is how long keys are kept)',
      );
    }
  }
  if (st) {
    const outCols = outputColumns({ source: frame.source, stages: frame.stages, stateful: st } as QueryPlan);
    columnsAfter(outCols, frame.post);
  }
  return { name, source: frame.source, stages: frame.stages, stateful: st, post: frame.post, outputMode, trigger, limits, lateRows: 'drop', statePartitions: 1 };
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

/** Names and types of the rows a plan emits (before post stages). */
export function outputColumns(plan: Pick<QueryPlan, 'source' | 'stages' | 'stateful'>): ColumnInfo[] {
  const cols = columnsAfter(plan.source.schema.columns, plan.stages);
  const st = plan.stateful;
  if (!st || st.kind === 'dedup') return cols;
  const out: ColumnInfo[] = [];
  for (const k of st.keys) {
    if (k.kind === 'column') out.push(cols.find((c) => c.name === k.name)!);
    else out.push({ name: k.kind === 'window' ? 'window' : 'session_window', type: 'TIMESTAMP' });
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
  const st = plan.stateful;
  const wms = plan.stages.filter((s) => s.kind === 'watermark').map((s) => (s as { column: string }).column);
  if (!st) return { kind: 'stateless', outputMode: plan.outputMode };
  if (st.kind === 'dedup') {
    return { kind: 'dedup', columns: st.columns ? [...st.columns] : null, withinWatermark: st.withinWatermark, watermarks: wms, outputMode: plan.outputMode };
  }
  return {
    kind: 'aggregate',
    keys: st.keys.map((k): Json =>
      k.kind === 'column' ? { column: k.name } : k.kind === 'window' ? { window: k.column, durationMs: k.durationMs, slideMs: k.slideMs, startMs: k.startMs } : { session: k.column, gapMs: k.gapMs },
    ),
    aggs: st.aggs.map((a) => ({ fn: a.fn, column: a.column ?? null, as: a.as })),
    watermarks: wms,
    outputMode: plan.outputMode,
  };
}
