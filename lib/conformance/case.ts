/**
 * Conformance cases (../shared/conformance/FORMAT.md): a case file parsed, its query turned into
 * a plan, its steps' files. Results and their comparison with the expectations: results.ts.
 */
import { gzipSync } from 'node:zlib';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseTimestamp } from '../engine/timestamps';
import type { ProcessorClass, TimeMode } from '../engine/tws/api';
import { requireWithPackageName } from '../local/package-name';
import { InvalidQueryError } from '../engine/errors';
import type { AggFn, QueryPlan, GroupKey, JoinPredicate, ProjectItem } from '../engine/plan/types';
import { operatorChain } from '../engine/plan/chain';
import {
  avg,
  count,
  max,
  min,
  sessionWindow,
  sum,
  window,
  first,
  last,
  approxCountDistinct,
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

/** A stage of a FORMAT-2 `pipeline`: exactly one of these keys. */
interface CaseStage {
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
interface CaseTransformWithState {
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
  aggregations?: Array<{ fn: string; column?: string; expr?: string; as: string }>;
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

const AGGS: Record<string, (c: string | Column) => AggBuilder> = {
  sum,
  min,
  max,
  avg,
  first,
  last,
  approxCountDistinct,
  approx_count_distinct: approxCountDistinct,
  mean: avg,
};

/** How a case's `static` table becomes a table of the query API (the runner: an S3 object it wrote). */
export type CaseStaticTables = (name: string, table: { schema: string; rows: Array<Record<string, unknown>> }) => StaticTable;

/** The default: the case's rows themselves (staticTable.rows). */
const rowsStaticTable: CaseStaticTables = (_name, t) => staticTable.rows(t.schema, t.rows);

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

/** FORMAT-4: whether the case has a transformWithState stage (its results carry `timers`). */
export function isTransformWithStateCase(c: ConformanceCase): boolean {
  return c.query.transformWithState !== undefined || (c.query.pipeline ?? []).some((s) => s.transformWithState !== undefined);
}

/** FORMAT-4: the processor module and output schema step `step` (0-based) runs with: the last a step up to it set, else none. */
function processorAt(c: ConformanceCase, step: number): { processor?: string; outputSchema?: string } {
  const out: { processor?: string; outputSchema?: string } = {};
  (c.steps ?? []).slice(0, step + 1).forEach((s) => {
    if (s.processor !== undefined) out.processor = s.processor;
    if (s.outputSchema !== undefined) out.outputSchema = s.outputSchema;
  });
  return out;
}

/** FORMAT-4: whether step `step` (0-based) runs another processor module or output schema than the step before. */
export function processorChangesAt(c: ConformanceCase, step: number): boolean {
  return step > 0 && JSON.stringify(processorAt(c, step)) !== JSON.stringify(processorAt(c, step - 1));
}

/** FORMAT-4: a step's `clock` in epoch ms, or undefined (the runner's wall clock). */
export function stepClockMs(c: ConformanceCase, step: CaseStep): number | undefined {
  if (step.clock === undefined) return undefined;
  const us = parseTimestamp(step.clock);
  if (us === null)
    throw new InvalidQueryError(`case ${c.name}: step clock ${JSON.stringify(step.clock)} is not an ISO 8601 instant, e.g. "1970-01-01T00:00:01.000Z"`);
  return Number(us) / 1000;
}

/**
 * A processor module's class (FORMAT-4): its default export, loaded as a user's module is (a .ts
 * one through tsx), with the package name `sluice` resolving to this package's own entry, so the
 * module extends the engine's StatefulProcessor wherever it lives.
 */
function loadProcessor(c: ConformanceCase, path: string): ProcessorClass {
  const file = resolve(c.dir ?? '.', path);
  if (!existsSync(file))
    throw new InvalidQueryError(`case ${c.name}: processor module ${path} does not exist (looked for ${file}): give its path relative to the case file`);
  const mod = requireWithPackageName(file) as { default?: unknown };
  const cls = mod.default;
  if (typeof cls !== 'function')
    throw new InvalidQueryError(`case ${c.name}: processor module ${path} has no default export class: export default a class extending StatefulProcessor`);
  return cls as ProcessorClass;
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
      else {
        const f = AGGS[a.fn];
        if (!f)
          throw new InvalidQueryError(
            `case ${c.name}: aggregation ${JSON.stringify(a.fn)} is not one of count, sum, min, max, avg, first, last, approxCountDistinct`,
          );
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
  const bytes = Buffer.from(f.text ?? (f.rows ?? []).map((r) => JSON.stringify(r)).join('\n'), 'utf8');
  return key.endsWith('.gz') ? gzipSync(bytes) : bytes;
}

/** Whether any step names a file's key or gives raw text (FORMAT-3 "Step files"): a landing prefix of files must run it. */
export function usesFileObjects(c: ConformanceCase): boolean {
  return stepInputFilesOf(c).some((f) => f.key !== undefined || f.text !== undefined);
}

function stepInputFilesOf(c: ConformanceCase): StepFile[] {
  return (c.steps ?? []).flatMap((s) => stepInputFiles(s));
}

export function parseCase(text: string, file: string): ConformanceCase {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new InvalidQueryError(`${file} is not valid JSON (${(e as Error).message}): a case is one JSON object, see FORMAT.md`);
  }
  const c = parsed as ConformanceCase;
  if (!c || typeof c !== 'object' || Array.isArray(c) || typeof c.name !== 'string' || !c.query || typeof c.query !== 'object') {
    throw new InvalidQueryError(`${file} is not a conformance case: it needs "name", "query" and "steps" (see FORMAT.md)`);
  }
  validateCase(c, file);
  const dir = dirname(resolve(file));
  if (c.expectError !== undefined) return { ...c, steps: [], dir };
  return { ...c, dir };
}

// ------------------------------------------------------------------------- the format's keys

/** Every key the formats define, by where it may appear (FORMAT.md, FORMAT-2.md). */
const KEYS = {
  case: ['name', 'about', 'query', 'steps', 'expectError'],
  query: [
    'schema',
    'watermark',
    'groupBy',
    'aggregations',
    'dropDuplicates',
    'outputMode',
    'options',
    'pipeline',
    'inputs',
    'from',
    'static',
    'format',
    'transformWithState',
  ],
  transformWithState: ['groupBy', 'processor', 'timeMode', 'outputSchema', 'eventTimeColumn'],
  watermark: ['column', 'delay'],
  window: ['column', 'duration', 'slide', 'startTime'],
  sessionWindow: ['column', 'gap'],
  aggregation: ['fn', 'column', 'expr', 'as'],
  groupExpr: ['expr', 'as'],
  withColumn: ['name', 'expr'],
  dropDuplicates: ['columns', 'withinWatermark'],
  input: ['schema', 'watermark', 'pipeline', 'format'],
  static: ['schema', 'rows'],
  stage: ['watermark', 'groupBy', 'aggregations', 'dropDuplicates', 'select', 'join', 'selectExpr', 'filter', 'withColumn', 'transformWithState'],
  join: ['with', 'type', 'on', 'timeRange', 'condition'],
  timeRange: ['left', 'right', 'lower', 'upper', 'lowerStrict', 'upperStrict'],
  step: ['add', 'files', 'addTo', 'filesTo', 'clock', 'processor', 'outputSchema', 'expect'],
  file: ['rows', 'text', 'key'],
  expect: ['rows', 'watermark', 'stateRows', 'droppedByWatermark', 'droppedByStage', 'batches', 'deadLetters', 'deadLetterErrors', 'timers', 'error'],
} as const;

/**
 * Refuses a case with a key the formats do not define, anywhere, or keys that cannot go together:
 * a runner that ignored one would run another query than the case means and report a pass or a
 * failure for the wrong reason.
 */
function validateCase(c: ConformanceCase, file: string): void {
  const where = `case ${JSON.stringify(c.name)} (${file})`;
  const known = (obj: unknown, kind: keyof typeof KEYS, path: string) => {
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new InvalidQueryError(`${where}: ${path} must be an object: see FORMAT.md`);
    for (const k of Object.keys(obj)) {
      if (!(KEYS[kind] as readonly string[]).includes(k)) {
        throw new InvalidQueryError(
          `${where}: key ${JSON.stringify(k)} in ${path} is not part of the case format (known: ${KEYS[kind].join(', ')}): remove it, or see FORMAT.md and FORMAT-2.md`,
        );
      }
    }
  };
  known(c, 'case', 'the case');
  const q = c.query;
  known(q, 'query', '"query"');
  if (c.expectError !== undefined) {
    if (typeof c.expectError !== 'string' || !c.expectError)
      throw new InvalidQueryError(`${where}: "expectError" must be the text of the expected error: see FORMAT-2.md`);
    if (c.steps !== undefined) throw new InvalidQueryError(`${where}: a case has either "expectError" or "steps", not both: see FORMAT-2.md`);
  } else if (!Array.isArray(c.steps)) {
    throw new InvalidQueryError(`${where}: "steps" must be a list (or the case has "expectError"): see FORMAT.md`);
  }
  const groupBy = (keys: unknown, path: string) => {
    if (!Array.isArray(keys)) throw new InvalidQueryError(`${where}: ${path} must be a list of grouping keys`);
    keys.forEach((k, i) => {
      if (typeof k === 'string') return;
      const o = k as Record<string, unknown>;
      if (o && typeof o === 'object' && 'window' in o && Object.keys(o).length === 1) known(o.window, 'window', `${path}[${i}].window`);
      else if (o && typeof o === 'object' && 'sessionWindow' in o && Object.keys(o).length === 1)
        known(o.sessionWindow, 'sessionWindow', `${path}[${i}].sessionWindow`);
      else if (o && typeof o === 'object' && typeof o.expr === 'string') known(o, 'groupExpr', `${path}[${i}]`);
      else
        throw new InvalidQueryError(
          `${where}: ${path}[${i}] ${JSON.stringify(k)} is not a column name, {"window": ...}, {"sessionWindow": ...} or {"expr": ...}: see FORMAT.md and FORMAT-3.md`,
        );
    });
  };
  const aggregations = (aggs: unknown, path: string) => {
    if (!Array.isArray(aggs)) throw new InvalidQueryError(`${where}: ${path} must be a list`);
    aggs.forEach((a, i) => {
      known(a, 'aggregation', `${path}[${i}]`);
      if (a.column !== undefined && a.expr !== undefined)
        throw new InvalidQueryError(`${where}: ${path}[${i}] has both "column" and "expr": an aggregation takes one of them (FORMAT-3 "Expressions")`);
    });
  };
  const stages = (list: unknown, path: string) => {
    if (!Array.isArray(list)) throw new InvalidQueryError(`${where}: ${path} must be a list of stages`);
    list.forEach((st, i) => {
      const p = `${path}[${i}]`;
      known(st, 'stage', p);
      const kinds = Object.keys(st).filter((k) => k !== 'aggregations');
      if (kinds.length !== 1 || ('aggregations' in st && kinds[0] !== 'groupBy')) {
        throw new InvalidQueryError(
          `${where}: ${p} must have exactly one of watermark, groupBy (with aggregations), dropDuplicates, select, join, selectExpr, filter, withColumn: see FORMAT-2.md and FORMAT-3.md`,
        );
      }
      const stage = st as CaseStage;
      if (stage.watermark) known(stage.watermark, 'watermark', `${p}.watermark`);
      if (stage.groupBy) groupBy(stage.groupBy, `${p}.groupBy`);
      if (stage.aggregations) aggregations(stage.aggregations, `${p}.aggregations`);
      if (stage.dropDuplicates) known(stage.dropDuplicates, 'dropDuplicates', `${p}.dropDuplicates`);
      if (stage.selectExpr !== undefined && (!Array.isArray(stage.selectExpr) || stage.selectExpr.some((e) => typeof e !== 'string')))
        throw new InvalidQueryError(`${where}: ${p}.selectExpr must be a list of expressions (strings): see FORMAT-3.md "Expressions"`);
      if (stage.filter !== undefined && typeof stage.filter !== 'string')
        throw new InvalidQueryError(`${where}: ${p}.filter must be an expression (a string): see FORMAT-3.md "Expressions"`);
      if (stage.withColumn !== undefined) known(stage.withColumn, 'withColumn', `${p}.withColumn`);
      if (stage.transformWithState !== undefined) twsStage(stage.transformWithState, `${p}.transformWithState`);
      if (stage.join) {
        known(stage.join, 'join', `${p}.join`);
        if (stage.join.timeRange) known(stage.join.timeRange, 'timeRange', `${p}.join.timeRange`);
      }
    });
  };
  const twsStage = (t: unknown, path: string) => {
    known(t, 'transformWithState', path);
    const s = t as CaseTransformWithState;
    if (!Array.isArray(s.groupBy) || !s.groupBy.length || s.groupBy.some((k) => typeof k !== 'string'))
      throw new InvalidQueryError(`${where}: ${path}.groupBy must be a non-empty list of column names: see FORMAT-4.md`);
    if (typeof s.processor !== 'string' || typeof s.outputSchema !== 'string')
      throw new InvalidQueryError(`${where}: ${path} needs "processor" (a module path) and "outputSchema" (DDL): see FORMAT-4.md`);
  };
  if (q.transformWithState !== undefined) twsStage(q.transformWithState, '"query.transformWithState"');
  if (q.watermark) known(q.watermark, 'watermark', '"query.watermark"');
  if (q.groupBy) groupBy(q.groupBy, '"query.groupBy"');
  if (q.aggregations) aggregations(q.aggregations, '"query.aggregations"');
  if (q.dropDuplicates) known(q.dropDuplicates, 'dropDuplicates', '"query.dropDuplicates"');
  if (q.pipeline !== undefined) {
    stages(q.pipeline, '"query.pipeline"');
    if (q.groupBy || q.aggregations || q.dropDuplicates) {
      throw new InvalidQueryError(
        `${where}: a query with "pipeline" has no groupBy, aggregations or dropDuplicates key (they are stages of the pipeline): see FORMAT-2.md`,
      );
    }
  }
  if (q.inputs !== undefined) {
    if (q.schema !== undefined) throw new InvalidQueryError(`${where}: a query with "inputs" has no "schema" (each input has its own): see FORMAT-2.md`);
    if (!q.from || !(q.from in q.inputs))
      throw new InvalidQueryError(
        `${where}: "from" ${JSON.stringify(q.from)} must name one of the inputs ${JSON.stringify(Object.keys(q.inputs))}: see FORMAT-2.md`,
      );
    for (const [name, input] of Object.entries(q.inputs)) {
      known(input, 'input', `input ${JSON.stringify(name)}`);
      if (input.watermark) known(input.watermark, 'watermark', `input ${JSON.stringify(name)}.watermark`);
      if (input.pipeline) stages(input.pipeline, `input ${JSON.stringify(name)}.pipeline`);
    }
  } else if (q.from !== undefined) {
    throw new InvalidQueryError(`${where}: "from" goes with "inputs": see FORMAT-2.md`);
  }
  for (const [name, t] of Object.entries(q.static ?? {})) known(t, 'static', `static table ${JSON.stringify(name)}`);
  (c.steps ?? []).forEach((step, i) => {
    known(step, 'step', `step ${i + 1}`);
    known(step.expect, 'expect', `step ${i + 1}.expect`);
    const feeds = ['add', 'files', 'addTo', 'filesTo'].filter((k) => k in step);
    if (feeds.length > 1)
      throw new InvalidQueryError(
        `${where}: step ${i + 1} has ${feeds.join(' and ')}: a step has one of add, files (one input) or addTo, filesTo (named inputs)`,
      );
    if ((step.addTo || step.filesTo) && !q.inputs)
      throw new InvalidQueryError(`${where}: step ${i + 1} uses addTo/filesTo, which need named "inputs": use add or files`);
    if ((step.add || step.files) && q.inputs)
      throw new InvalidQueryError(`${where}: step ${i + 1} uses add/files in a query with named inputs: use addTo or filesTo`);
    const files = [...(step.files ?? []), ...Object.values(step.filesTo ?? {}).flat()];
    files.forEach((f, j) => {
      if (Array.isArray(f)) return;
      const path = `step ${i + 1} file ${j + 1}`;
      known(f, 'file', path);
      if ((f.rows === undefined) === (f.text === undefined))
        throw new InvalidQueryError(`${where}: ${path} must have exactly one of "rows" (a list of rows) or "text" (raw content): see FORMAT-3.md "Step files"`);
      if (f.rows !== undefined && !Array.isArray(f.rows)) throw new InvalidQueryError(`${where}: ${path}.rows must be a list of rows`);
      if (f.text !== undefined && typeof f.text !== 'string') throw new InvalidQueryError(`${where}: ${path}.text must be a string`);
      if (f.key !== undefined && (typeof f.key !== 'string' || f.key === '' || f.key.startsWith('/')))
        throw new InvalidQueryError(`${where}: ${path}.key ${JSON.stringify(f.key)} must be a key relative to the landing prefix, e.g. "dt=2026-10-01/b.json"`);
    });
    if (step.clock !== undefined && (typeof step.clock !== 'string' || parseTimestamp(step.clock) === null))
      throw new InvalidQueryError(`${where}: step ${i + 1}.clock ${JSON.stringify(step.clock)} must be an ISO 8601 instant: see FORMAT-4.md`);
    if ((step.processor !== undefined || step.outputSchema !== undefined) && !isTransformWithStateCase(c))
      throw new InvalidQueryError(`${where}: step ${i + 1} sets processor or outputSchema, which only a transformWithState query has: see FORMAT-4.md`);
    const errors = step.expect?.deadLetterErrors;
    if (errors !== undefined && (!Array.isArray(errors) || errors.some((e) => typeof e !== 'string')))
      throw new InvalidQueryError(`${where}: step ${i + 1}.expect.deadLetterErrors must be a list of strings: see FORMAT-3.md "Expect additions"`);
  });
}
