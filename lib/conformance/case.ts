/**
 * Conformance cases (../shared/conformance/FORMAT.md): a case file parsed, its query turned into
 * a plan, its steps' files. The format's keys and their check: case-format.ts; FORMAT-4's steps
 * (processor, clock): format-4.ts. Results and their comparison with the expectations: results.ts.
 */
import { gzipSync } from 'node:zlib';
import { dirname, resolve } from 'node:path';
import type { TimeMode } from '../engine/tws/api';
import { InvalidQueryError } from '../engine/errors';
import { isLosslessNumber } from 'lossless-json';
import { JsonObject, mayReorderMembers, parseOrdered } from '../engine/json-ordered';
import { parseSchema } from '../engine/schema';
import { parseJsonLine } from '../engine/json-record';
import type { Row } from '../engine/ports';
import type { AggFn, QueryPlan, GroupKey, JoinPredicate, ProjectItem } from '../engine/plan/types';
import { operatorChain } from '../engine/plan/chain';
import {
  AGGREGATES_BY_NAME,
  anyValue,
  approxCountDistinct,
  first,
  last,
  count,
  sessionWindow,
  window,
  listagg,
  percentile,
  percentileApprox,
  percentilesAt,
  TWO_COLUMN_AGGREGATES_BY_NAME,
  type AggBuilder,
  renamed,
  windowEnd,
  windowOf,
  windowStart,
  windowTime,
} from '../engine/query/functions';
import { type StaticTable, staticTable } from '../engine/query/static-table';
import { type Column, expr } from '../engine/query/column';
import type { StreamFrame } from '../engine/query/frame';
import { DataStreamReader } from '../engine/query/reader';
import { validateCase } from './case-format';
import { loadProcessor, processorAt } from './format-4';

/** A stage of a FORMAT-2 `pipeline`: exactly one of these keys. */
export interface CaseStage {
  watermark?: { column: string; delay: string };
  groupBy?: CaseQuery['groupBy'];
  aggregations?: CaseQuery['aggregations'];
  dropDuplicates?: { columns?: string[]; withinWatermark?: boolean };
  select?: Array<string | Record<string, unknown>>;
  join?: {
    with: string;
    type: string;
    on: Array<string | { left: string; right: string }>;
    timeRange?: { left: string; right: string; lower?: string; upper?: string; lowerStrict?: boolean; upperStrict?: boolean };
    condition?: unknown[];
  };
  /** FORMAT-3 "Expressions": Spark SQL text. */
  selectExpr?: string[];
  filter?: string;
  withColumn?: { name: string; expr: string };
  /** FORMAT-4: a transformWithState stage. */
  transformWithState?: CaseTransformWithState;
}

/** FORMAT-4 "The stage". */
export interface CaseTransformWithState {
  groupBy: string[];
  processor: string;
  timeMode?: string;
  outputSchema: string;
  eventTimeColumn?: string;
}

interface CaseInput {
  schema: string;
  /** FORMAT-3: the input's file format (json, csv, text, parquet). */
  format?: string;
  watermark?: { column: string; delay: string };
  pipeline?: CaseStage[];
}

interface CaseQuery {
  schema?: string;
  watermark?: { column: string; delay: string };
  groupBy?: Array<
    | string
    | { window: { column: string; duration: string; slide?: string; startTime?: string } }
    | { sessionWindow: { column: string; gap: string } }
    | { expr: string; as?: string }
  >;
  /** `ignoreNulls`: first's, last's and any_value's flag. `by`: max_by's and min_by's ordering column, a pair aggregate's x (corr, regr_slope, ...: sluice's own cases; FORMAT's aggregations have none). */
  aggregations?: Array<{
    fn: string;
    column?: string;
    expr?: string;
    by?: string;
    percentage?: number | number[];
    accuracy?: number;
    /** percentile's third argument: the integral column that says how many times a row's value counts. */
    frequency?: string;
    /** listagg's (string_agg's) delimiter (absent: none) and WITHIN GROUP keys: a column, or {column or expr, desc, nullsFirst}. */
    delimiter?: string | null;
    orderBy?: Array<string | { column?: string; expr?: string; desc?: boolean; nullsFirst?: boolean }>;
    ignoreNulls?: boolean;
    as: string;
  }>;
  dropDuplicates?: { columns?: string[]; withinWatermark?: boolean };
  outputMode: string;
  options?: Record<string, string | number | boolean>;
  /** FORMAT-2: an ordered list of stages instead of groupBy / dropDuplicates. */
  pipeline?: CaseStage[];
  /** FORMAT-2: named streaming inputs instead of `schema`, with `from` naming the first. */
  inputs?: Record<string, CaseInput>;
  from?: string;
  /** FORMAT-2: batch tables a join stage can name. */
  static?: Record<string, { schema: string; rows: Array<Record<string, unknown>> }>;
  /** FORMAT-3: the source's file format (json, csv, text, parquet). */
  format?: string;
  /** FORMAT-4: a transformWithState query. */
  transformWithState?: CaseTransformWithState;
}

/** FORMAT-3: a step's file as an object: rows or raw text, with an optional key under the landing prefix. */
interface CaseFileObject {
  rows?: Array<Record<string, unknown>>;
  text?: string;
  key?: string;
}

/** A step's file: a list of rows (FORMAT.md) or an object (FORMAT-3 "Step files"). */
type CaseFile = Array<Record<string, unknown>> | CaseFileObject;

/** A step's file as the runner writes it: rows or text, and the key it names (if any). */
export interface StepFile {
  readonly input: string;
  readonly rows?: Array<Record<string, unknown>>;
  readonly text?: string;
  readonly key?: string;
}

export interface CaseStep {
  add?: Array<Record<string, unknown>>;
  files?: CaseFile[];
  /** FORMAT-2: one new file per named input. */
  addTo?: Record<string, Array<Record<string, unknown>>>;
  filesTo?: Record<string, CaseFile[]>;
  /** FORMAT-4: the run's processing time (ISO 8601). */
  clock?: string;
  /** FORMAT-4: from this step on, the query runs with this processor module (and output schema). */
  processor?: string;
  outputSchema?: string;
  expect: Record<string, unknown>;
}

export interface ConformanceCase {
  name: string;
  about?: string;
  query: CaseQuery;
  /** Absent in a FORMAT-2 case that expects the query to be refused. */
  steps: CaseStep[];
  /** FORMAT-2: the query must be refused before any batch runs, with an error containing this text. */
  expectError?: string;
  /** Not a key of the format: the folder of the case file, which a FORMAT-4 `processor` path is relative to (parseCase sets it). */
  dir?: string;
}

/** True when the case uses FORMAT-2's pipeline form: its results carry stateRows per stage. */
export function isPipelineCase(c: ConformanceCase): boolean {
  return c.query.pipeline !== undefined || c.query.inputs !== undefined;
}

const AGGS: Readonly<Record<string, (c: string | Column) => AggBuilder>> = { ...AGGREGATES_BY_NAME, approxCountDistinct };
/** The aggregates that take an "ignoreNulls" flag (sluice's own cases). */
const IGNORE_NULLS_AGGS: Readonly<Record<string, (c: string | Column, ignoreNulls: boolean) => AggBuilder>> = { first, last, any_value: anyValue };

/** How a case's `static` table becomes a table of the query API (the runner: an S3 object it wrote). */
export type CaseStaticTables = (name: string, table: { schema: string; rows: Array<Record<string, unknown>> }) => StaticTable;

/**
 * The default: the case's rows themselves (staticTable.rows), each read again from its text as
 * the case writes it (recordText), as a source reads a record: an integer beyond 2^53 stays exact.
 */
const rowsStaticTable: CaseStaticTables = (_name, t) => linesStaticTable(t, t.rows.map(recordText));

/**
 * A case's static table from its rows' lines (recordText's, which a worker thread is handed: the
 * case it gets is a copy JSON.parse's numbers, without the written texts), read as a source reads
 * a record; a row that does not fit is refused by staticTable.rows, with its reason.
 */
export function linesStaticTable(t: { schema: string; rows: Array<Record<string, unknown>> }, lines: readonly string[]): StaticTable {
  const schema = parseSchema(t.schema);
  const rows: Row[] = [];
  for (const line of lines) {
    const res = parseJsonLine(schema, line);
    if (!res.ok) return staticTable.rows(t.schema, t.rows);
    rows.push(Object.fromEntries(schema.columns.map((c) => [c.name, res.row[c.name]])));
  }
  return { spec: { kind: 'rows', schema, rows } };
}

export function caseToPlan(c: ConformanceCase, name = 'conformance', tables: CaseStaticTables = rowsStaticTable, step = 0): QueryPlan {
  const q = c.query;
  const tws = (stage: CaseTransformWithState) => ({ ...stage, ...processorAt(c, step) });
  if (!q || typeof q !== 'object') throw new InvalidQueryError(`case ${c.name}: "query" is missing: see FORMAT.md`);
  if (q.inputs) return inputsToPlan(c, name, tables);
  if (typeof q.schema !== 'string') throw new InvalidQueryError(`case ${c.name}: "query.schema" is missing: see FORMAT.md`);
  let reader = new DataStreamReader().format(q.format ?? 'json').schema(q.schema);
  for (const [k, v] of Object.entries(q.options ?? {})) reader = reader.option(k, v);
  let frame: StreamFrame = reader.load();
  if (q.watermark) frame = frame.withWatermark(q.watermark.column, q.watermark.delay);
  if ([q.groupBy, q.dropDuplicates, q.transformWithState].filter((x) => x !== undefined).length > 1) {
    throw new InvalidQueryError(
      `case ${c.name} has both groupBy and dropDuplicates: a case uses one stateful operator (or a "pipeline" of stages, FORMAT-2.md)`,
    );
  }
  const stages: CaseStage[] =
    q.pipeline ??
    (q.groupBy
      ? [{ groupBy: q.groupBy, aggregations: q.aggregations ?? [] }]
      : q.dropDuplicates
        ? [{ dropDuplicates: q.dropDuplicates }]
        : q.transformWithState
          ? [{ transformWithState: q.transformWithState }]
          : []);
  if (!q.pipeline && !q.groupBy && q.aggregations?.length) {
    throw new InvalidQueryError(`case ${c.name} has aggregations without groupBy: add "groupBy" (a global aggregation is not supported by the format)`);
  }
  for (const stage of stages) frame = applyStage(c, frame, stage.transformWithState ? { transformWithState: tws(stage.transformWithState) } : stage, tables);
  return frame.writeStream.outputMode(q.outputMode).trigger({ availableNow: true }).queryName(name).plan();
}

/**
 * A join stage's `condition`: FORMAT-2's list of predicates. The query API also takes an
 * expression, which the case format does not define, so text there is refused, not run.
 */
function caseCondition(c: ConformanceCase, condition: unknown[] | undefined): JoinPredicate[] {
  if (condition === undefined) return [];
  if (!Array.isArray(condition))
    throw new InvalidQueryError(
      `case ${c.name}: the join's "condition" must be a list of predicates ({"column", "op", "value"} or {"anyOf": [...]}), not ${JSON.stringify(condition)}: see FORMAT-2.md`,
    );
  return condition as JoinPredicate[];
}

/**
 * A query with named `inputs` (FORMAT-2): each input a stream of its own (schema, watermark, own
 * pipeline), the query's pipeline from `from`, the other inputs joined in by its join stages.
 */
function inputsToPlan(c: ConformanceCase, name: string, tables: CaseStaticTables): QueryPlan {
  const q = c.query;
  const inputs = q.inputs!;
  const streams = new Map<string, StreamFrame>();
  for (const [inputName, input] of Object.entries(inputs)) {
    if (typeof input?.schema !== 'string') throw new InvalidQueryError(`case ${c.name}: input ${JSON.stringify(inputName)} has no "schema": see FORMAT-2.md`);
    let reader = new DataStreamReader().format(input.format ?? q.format ?? 'json').schema(input.schema);
    for (const [k, v] of Object.entries(q.options ?? {})) reader = reader.option(k, v);
    let frame: StreamFrame = reader.load();
    if (input.watermark) frame = frame.withWatermark(input.watermark.column, input.watermark.delay);
    for (const stage of input.pipeline ?? []) {
      if (stage.join && streams.has(stage.join.with))
        throw new InvalidQueryError(
          `case ${c.name}: input ${JSON.stringify(inputName)} joins the stream ${JSON.stringify(stage.join.with)} in its own pipeline: join streams in the query's pipeline`,
        );
      frame = applyStage(c, frame, stage, tables);
    }
    streams.set(inputName, frame);
  }
  const from = q.from!;
  let frame = streams.get(from)!;
  if (q.watermark) frame = frame.withWatermark(q.watermark.column, q.watermark.delay);
  const joined = new Set<string>([from]);
  for (const stage of q.pipeline ?? []) {
    const other = stage.join ? streams.get(stage.join.with) : undefined;
    if (!stage.join || !other) {
      frame = applyStage(c, frame, stage, tables);
      continue;
    }
    const j = stage.join;
    if (joined.has(j.with))
      throw new InvalidQueryError(
        `case ${c.name}: the input ${JSON.stringify(j.with)} is ${j.with === from ? 'the one the pipeline starts from' : 'joined twice'}: join each other input once`,
      );
    joined.add(j.with);
    if (!Array.isArray(j.on)) throw new InvalidQueryError(`case ${c.name}: the join's "on" must be a list of keys: see FORMAT-2.md`);
    frame = frame.join(other, j.on, j.type, { timeRange: j.timeRange, condition: caseCondition(c, j.condition), name: j.with });
  }
  const missing = Object.keys(inputs).filter((n) => !joined.has(n));
  if (missing.length)
    throw new InvalidQueryError(
      `case ${c.name}: input(s) ${missing.join(', ')} are never joined: every input but "from" is joined in by a join stage (FORMAT-2.md)`,
    );
  return frame.writeStream.outputMode(q.outputMode).trigger({ availableNow: true }).queryName(name).plan();
}

/**
 * Which case input each source of the plan reads: source 0 is `from` (or the only input of a
 * single-input case, named ''), source k + 1 the plan's inputs[k].
 */
export function caseSourceInputs(c: ConformanceCase, plan: QueryPlan): string[] {
  return [c.query.inputs ? c.query.from! : '', ...(plan.inputs ?? []).map((i) => i.name)];
}

/**
 * FORMAT-2's order of the stateful stages (stateRows, droppedByStage): each input's own pipeline
 * (inputs in the order written), then the query's; as indexes into the plan's run order
 * (operatorChain), which runs a joined input's operators just before its join.
 */
export function caseStageOrder(c: ConformanceCase, plan: QueryPlan): number[] {
  const chain = operatorChain(plan).operators;
  if (!c.query.inputs) return chain.map((_, i) => i);
  const stateful = (stages: CaseStage[] | undefined) =>
    (stages ?? []).filter((st) => st.groupBy || st.dropDuplicates || st.transformWithState || (st.join && c.query.inputs![st.join.with])).length;
  const fromOwn = stateful(c.query.inputs[c.query.from!]?.pipeline);
  const owner = (i: number): string => {
    const o = chain[i];
    if (o.input !== null) return plan.inputs![o.input].name;
    const mainIndex = chain.slice(0, i).filter((x) => x.input === null).length;
    return mainIndex < fromOwn ? c.query.from! : '';
  };
  const order: number[] = [];
  for (const name of [...Object.keys(c.query.inputs), '']) chain.forEach((_, i) => owner(i) === name && order.push(i));
  return order;
}

/** One stage of the case's query, through the query API. */
function applyStage(c: ConformanceCase, frame: StreamFrame, stage: CaseStage, tables: CaseStaticTables): StreamFrame {
  if (stage.watermark) return frame.withWatermark(stage.watermark.column, stage.watermark.delay);
  if (stage.groupBy) {
    const keys: Array<GroupKey | Column> = stage.groupBy.map((k) => {
      if (typeof k === 'string') return k as unknown as GroupKey;
      if ('window' in k) return window(k.window.column, k.window.duration, k.window.slide, k.window.startTime);
      if ('sessionWindow' in k) return sessionWindow(k.sessionWindow.column, k.sessionWindow.gap);
      if ('expr' in k) return k.as === undefined ? expr(k.expr) : expr(k.expr).as(k.as);
      throw new InvalidQueryError(
        `case ${c.name}: grouping key ${JSON.stringify(k)} is not a column name, {"window": ...}, {"sessionWindow": ...} or {"expr": ...}`,
      );
    });
    const aggs = (stage.aggregations ?? []).map((a) => {
      let b: AggBuilder;
      const input = a.expr !== undefined ? expr(a.expr) : a.column;
      if (a.fn === 'count') b = count(input);
      else if (a.fn === 'percentile') {
        if (input === undefined || a.percentage === undefined)
          throw new InvalidQueryError(`case ${c.name}: percentile needs a "column" (or "expr") and a "percentage" (a number or a list)`);
        b =
          typeof a.percentage === 'number'
            ? percentile(input, a.percentage, a.frequency)
            : percentilesAt('percentile', input, a.percentage, undefined, a.frequency);
      } else if (a.fn === 'percentile_approx' || a.fn === 'approx_percentile') {
        if (input === undefined || a.percentage === undefined)
          throw new InvalidQueryError(
            `case ${c.name}: percentile_approx needs a "column" (or "expr") and a "percentage" (a number or a list; optionally an "accuracy")`,
          );
        b = typeof a.percentage === 'number' ? percentileApprox(input, a.percentage, a.accuracy, a.fn) : percentilesAt(a.fn, input, a.percentage, a.accuracy);
      } else if (a.fn === 'listagg' || a.fn === 'string_agg') {
        if (input === undefined) throw new InvalidQueryError(`case ${c.name}: ${a.fn} needs a "column" or an "expr"`);
        const keys = (a.orderBy ?? []).map((k) => {
          if (typeof k === 'string') return k;
          const key = k.expr !== undefined ? expr(k.expr) : k.column;
          if (key === undefined)
            throw new InvalidQueryError(`case ${c.name}: each "orderBy" key of ${a.fn} is a column name, or an object with a "column" or an "expr"`);
          return { key, ...(k.desc === undefined ? {} : { desc: k.desc }), ...(k.nullsFirst === undefined ? {} : { nullsFirst: k.nullsFirst }) };
        });
        b = listagg(input, a.delimiter, keys);
      } else if (a.fn in TWO_COLUMN_AGGREGATES_BY_NAME) {
        if (input === undefined || a.by === undefined) throw new InvalidQueryError(`case ${c.name}: ${a.fn} needs a "column" (or "expr") and a "by" column`);
        b = TWO_COLUMN_AGGREGATES_BY_NAME[a.fn](input, a.by);
      } else if (a.ignoreNulls !== undefined) {
        const f = IGNORE_NULLS_AGGS[a.fn];
        if (!f || input === undefined)
          throw new InvalidQueryError(`case ${c.name}: "ignoreNulls" goes with first, last or any_value of a "column" or an "expr"`);
        b = f(input, a.ignoreNulls);
      } else {
        const f = AGGS[a.fn];
        if (!f) throw new InvalidQueryError(`case ${c.name}: aggregation ${JSON.stringify(a.fn)} is not one of count, ${Object.keys(AGGS).join(', ')}`);
        if (input === undefined) throw new InvalidQueryError(`case ${c.name}: ${a.fn} needs a "column" or an "expr"`);
        b = f(input);
      }
      return b.as(a.as ?? `${a.fn as AggFn}`);
    });
    return frame.groupBy(...(keys as Array<GroupKey | string>)).agg(...aggs);
  }
  if (stage.dropDuplicates) {
    const cols = stage.dropDuplicates.columns;
    return stage.dropDuplicates.withinWatermark ? frame.dropDuplicatesWithinWatermark(cols) : frame.dropDuplicates(cols);
  }
  if (stage.transformWithState) {
    const t = stage.transformWithState;
    if (typeof t.processor !== 'string') throw new InvalidQueryError(`case ${c.name}: transformWithState needs "processor", the path of its module`);
    return frame.groupBy(...(t.groupBy as string[])).transformWithState(loadProcessor(c, t.processor) as never, {
      outputSchema: t.outputSchema,
      ...(t.timeMode !== undefined ? { timeMode: t.timeMode as TimeMode } : {}),
      ...(t.eventTimeColumn !== undefined ? { eventTimeColumn: t.eventTimeColumn } : {}),
    });
  }
  if (stage.selectExpr) return frame.selectExpr(...stage.selectExpr);
  if (stage.filter !== undefined) return frame.filter(stage.filter);
  if (stage.withColumn) return frame.withColumn(stage.withColumn.name, stage.withColumn.expr);
  if (stage.select) {
    if (stage.select.every((i) => typeof i === 'string')) return frame.select(...(stage.select as string[]));
    return frame.select(...stage.select.map((i) => selectItem(c, i)));
  }
  if (stage.join) {
    const j = stage.join;
    const t = c.query.static && Object.hasOwn(c.query.static, j.with) ? c.query.static[j.with] : undefined;
    if (!t)
      throw new InvalidQueryError(
        `case ${c.name}: the join with ${JSON.stringify(j.with)} names neither a "static" table nor an input of the query: see FORMAT-2.md`,
      );
    if (j.timeRange)
      throw new InvalidQueryError(
        `case ${c.name}: the join with the static table ${JSON.stringify(j.with)} has a timeRange, which only a stream-stream join has: remove it`,
      );
    if (!Array.isArray(j.on)) throw new InvalidQueryError(`case ${c.name}: the join's "on" must be a list of keys: see FORMAT-2.md`);
    return frame.join(tables(j.with, t), j.on, j.type, { condition: caseCondition(c, j.condition) });
  }
  throw new InvalidQueryError(`case ${c.name}: stage ${JSON.stringify(stage)} is not a stage of FORMAT-2.md`);
}

/** A FORMAT-2 select item: a name, {as, column}, {as, window}, {as, windowStart | windowEnd | windowTime}. */
function selectItem(c: ConformanceCase, item: string | Record<string, unknown>): string | ProjectItem {
  if (typeof item === 'string') return item;
  const keys = Object.keys(item).filter((k) => k !== 'as');
  const as = item.as;
  const bad = () =>
    new InvalidQueryError(
      `case ${c.name}: select item ${JSON.stringify(item)} is not a column name or {"as", one of column, window, windowStart, windowEnd, windowTime}: see FORMAT-2.md`,
    );
  if (typeof as !== 'string' || keys.length !== 1) throw bad();
  const v = item[keys[0]];
  switch (keys[0]) {
    case 'column':
      if (typeof v !== 'string') throw bad();
      return renamed(v, as);
    case 'window': {
      const w = v as { column?: unknown; duration?: unknown; startTime?: unknown };
      if (!w || typeof w.column !== 'string' || typeof w.duration !== 'string' || Object.keys(w).some((k) => !['column', 'duration', 'startTime'].includes(k)))
        throw bad();
      return windowOf(window(w.column, w.duration, undefined, w.startTime as string | undefined), as);
    }
    case 'windowStart':
    case 'windowEnd':
    case 'windowTime': {
      if (typeof v !== 'string') throw bad();
      const f = keys[0] === 'windowStart' ? windowStart : keys[0] === 'windowEnd' ? windowEnd : windowTime;
      return f(v, as);
    }
    default:
      throw bad();
  }
}

function stepFiles(step: CaseStep): CaseFile[] {
  if (step.files) return step.files;
  if (step.add) return [step.add];
  return [];
}

function stepFile(input: string, f: CaseFile): StepFile {
  if (Array.isArray(f)) return { input, rows: f };
  return {
    input,
    ...(f.rows !== undefined ? { rows: f.rows } : {}),
    ...(f.text !== undefined ? { text: f.text } : {}),
    ...(f.key !== undefined ? { key: f.key } : {}),
  };
}

/** A step's new files with the input each lands in ('' for a single-input case): addTo / filesTo, or add / files. */
export function stepInputFiles(step: CaseStep): StepFile[] {
  const out: StepFile[] = [];
  for (const [input, rows] of Object.entries(step.addTo ?? {})) if (rows.length) out.push({ input, rows });
  for (const [input, files] of Object.entries(step.filesTo ?? {})) for (const f of files) out.push(stepFile(input, f));
  for (const f of stepFiles(step)) out.push(stepFile('', f));
  return out;
}

/**
 * Where a step's file lands under its landing prefix (FORMAT-3): its own key, or `part-<n>.<ext>`
 * (json, csv, txt or parquet by the format) made to sort after `lastKey`, the key sorting last of
 * those written before in the case.
 */
export function stepFileKey(f: StepFile, fileNo: number, lastKey: string | undefined, format = 'json'): string {
  if (f.key !== undefined) return f.key;
  const ext = { csv: 'csv', text: 'txt', parquet: 'parquet' }[format.toLowerCase()] ?? 'json';
  let rel = `part-${String(fileNo).padStart(6, '0')}.${ext}`;
  while (lastKey !== undefined && rel <= lastKey) rel = `~${rel}`;
  return rel;
}

/** A step file's bytes: its text, or its rows as JSON lines; gzip-compressed when its key ends in `.gz`. */
export function stepFileBytes(f: StepFile, key: string): Buffer {
  const bytes = Buffer.from(f.text ?? recordLines(f.rows ?? []), 'utf8');
  return key.endsWith('.gz') ? gzipSync(bytes) : bytes;
}

/** Whether any step names a file's key or gives raw text (FORMAT-3 "Step files"): a landing prefix of files must run it. */
export function usesFileObjects(c: ConformanceCase): boolean {
  return stepInputFilesOf(c).some((f) => f.key !== undefined || f.text !== undefined);
}

function stepInputFilesOf(c: ConformanceCase): StepFile[] {
  return (c.steps ?? []).flatMap((s) => stepInputFiles(s));
}

/**
 * The JSON text of an object of a case file whose members JSON.parse listed in another order than
 * the file writes them (an integer-like key, `{"b": 1, "10": 2}`, comes first in a JS object), or
 * that holds a number JSON.parse rounds (an integer beyond 2^53: 9007199254740993 is 9007199254740992;
 * a decimal of more digits than a double's), with the members in the file's order and such
 * numbers as written: a record's line as the case's
 * author wrote it, as Spark read it.
 */
const writtenTexts = new WeakMap<object, string>();

/** An input record of a case as a JSON line: its members in the order the case file writes them. */
export function recordText(r: unknown): string {
  return (r !== null && typeof r === 'object' && writtenTexts.get(r)) || JSON.stringify(r);
}

/** A case's input records as JSON lines (recordText). */
export function recordLines(rows: readonly unknown[]): string {
  return rows.map(recordText).join('\n');
}

/**
 * A number literal whose value JSON.parse changes, as parseOrdered gives it: its text; else null.
 * An integer beyond 2^53 (9007199254740993 is read as ...992), a decimal with more digits than a
 * double holds (a DECIMAL(38,20)'s 0.12345678901234567890): FORMAT-3 reads a number from its text.
 */
function roundedNumberText(o: unknown): string | null {
  if (!isLosslessNumber(o)) return null;
  const text = o.toString();
  return decimalValue(text) === decimalValue(JSON.stringify(Number(text))) ? null : text;
}

/** A JSON number's exact value as `digits e exponent` (no leading or trailing zeros in digits): equal texts are equal values. */
function decimalValue(text: string): string {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text);
  if (m === null) return text;
  let digits = m[2] + (m[3] ?? '');
  let exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  return `${m[1]}${digits}e${exponent}`;
}

/** A value's text in a record line: an integer JSON.parse rounded as written, else recordText. */
function valueText(v: unknown, o: unknown): string {
  return roundedNumberText(o) ?? recordText(v);
}

/**
 * Notes in writtenTexts each object or array of `v` (JSON.parse's) whose members' order differs
 * from `o`'s (parseOrdered's), or that holds an integer JSON.parse rounded, at any depth; true
 * when one does.
 */
function noteWrittenOrder(v: unknown, o: unknown): boolean {
  if (typeof v === 'number') return roundedNumberText(o) !== null;
  if (Array.isArray(v) && Array.isArray(o)) {
    let differs = false;
    for (let i = 0; i < v.length; i++) if (noteWrittenOrder(v[i], o[i])) differs = true;
    if (differs) writtenTexts.set(v, `[${v.map((x, i) => valueText(x, o[i])).join(',')}]`);
    return differs;
  }
  if (v === null || typeof v !== 'object' || !(o instanceof JsonObject)) return false;
  const members = o.lastValues();
  const rec = v as Record<string, unknown>;
  const keys = Object.keys(rec);
  const order = [...members.keys()];
  let differs = keys.length !== order.length || keys.some((k, i) => k !== order[i]);
  for (const k of keys) if (noteWrittenOrder(rec[k], members.get(k))) differs = true;
  if (differs) writtenTexts.set(rec, writtenText(rec, members));
  return differs;
}

function writtenText(rec: Record<string, unknown>, members: Map<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, o] of members) if (Object.hasOwn(rec, k)) parts.push(`${JSON.stringify(k)}:${valueText(rec[k], o)}`);
  return `{${parts.join(',')}}`;
}

export function parseCase(text: string, file: string): ConformanceCase {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new InvalidQueryError(`${file} is not valid JSON (${(e as Error).message}): a case is one JSON object, see FORMAT.md`);
  }
  // (a run of 16 digits or more: an integer JSON.parse may have rounded)
  if (mayReorderMembers(text) || /[0-9]{16}/.test(text)) noteWrittenOrder(parsed, parseOrdered(text));
  const c = parsed as ConformanceCase;
  if (!c || typeof c !== 'object' || Array.isArray(c) || typeof c.name !== 'string' || !c.query || typeof c.query !== 'object') {
    throw new InvalidQueryError(`${file} is not a conformance case: it needs "name", "query" and "steps" (see FORMAT.md)`);
  }
  validateCase(c, file);
  const dir = dirname(resolve(file));
  if (c.expectError !== undefined) return { ...c, steps: [], dir };
  return { ...c, dir };
}
