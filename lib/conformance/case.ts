/**
 * Conformance cases (../shared/conformance/FORMAT.md): a case file parsed, its query turned into
 * a plan, its steps' files. Results and their comparison with the expectations: results.ts.
 */
import { InvalidQueryError } from '../engine/errors';
import {
  AggFn,
  avg,
  count,
  DataStreamReader,
  max,
  min,
  QueryPlan,
  sessionWindow,
  StreamFrame,
  sum,
  window,
  first,
  last,
  approxCountDistinct,
  GroupKey,
  AggBuilder,
} from '../engine/query';

export interface CaseQuery {
  schema: string;
  watermark?: { column: string; delay: string };
  groupBy?: Array<string | { window: { column: string; duration: string; slide?: string; startTime?: string } } | { sessionWindow: { column: string; gap: string } }>;
  aggregations?: Array<{ fn: string; column?: string; as: string }>;
  dropDuplicates?: { columns?: string[]; withinWatermark?: boolean };
  outputMode: string;
  options?: Record<string, string | number | boolean>;
}

export interface CaseStep {
  add?: Array<Record<string, unknown>>;
  files?: Array<Array<Record<string, unknown>>>;
  expect: Record<string, unknown>;
}

export interface ConformanceCase {
  name: string;
  about?: string;
  query: CaseQuery;
  steps: CaseStep[];
}

const AGGS: Record<string, (c: string) => AggBuilder> = {
  sum, min, max, avg, first, last, approxCountDistinct,
  approx_count_distinct: approxCountDistinct,
  mean: avg,
};

export function caseToPlan(c: ConformanceCase, name = 'conformance'): QueryPlan {
  const q = c.query;
  if (!q || typeof q !== 'object') throw new InvalidQueryError(`case ${c.name}: "query" is missing: see FORMAT.md`);
  let reader = new DataStreamReader().format('json').schema(q.schema);
  for (const [k, v] of Object.entries(q.options ?? {})) reader = reader.option(k, v);
  let frame: StreamFrame = reader.load();
  if (q.watermark) frame = frame.withWatermark(q.watermark.column, q.watermark.delay);
  if (q.groupBy && q.dropDuplicates) {
    throw new InvalidQueryError(`case ${c.name} has both groupBy and dropDuplicates: a case uses one stateful operator`);
  }
  if (q.groupBy) {
    const keys: GroupKey[] = q.groupBy.map((k) => {
      if (typeof k === 'string') return k as unknown as GroupKey;
      if ('window' in k) return window(k.window.column, k.window.duration, k.window.slide, k.window.startTime);
      if ('sessionWindow' in k) return sessionWindow(k.sessionWindow.column, k.sessionWindow.gap);
      throw new InvalidQueryError(`case ${c.name}: grouping key ${JSON.stringify(k)} is not a column name, {"window": ...} or {"sessionWindow": ...}`);
    });
    const aggs = (q.aggregations ?? []).map((a) => {
      let b: AggBuilder;
      if (a.fn === 'count') b = count(a.column);
      else {
        const f = AGGS[a.fn];
        if (!f) throw new InvalidQueryError(`case ${c.name}: aggregation ${JSON.stringify(a.fn)} is not one of count, sum, min, max, avg, first, last, approxCountDistinct`);
        if (!a.column) throw new InvalidQueryError(`case ${c.name}: ${a.fn} needs a "column"`);
        b = f(a.column);
      }
      return b.as(a.as ?? `${a.fn as AggFn}`);
    });
    frame = frame.groupBy(...(keys as Array<GroupKey | string>)).agg(...aggs);
  } else if (q.dropDuplicates) {
    const cols = q.dropDuplicates.columns;
    frame = q.dropDuplicates.withinWatermark ? frame.dropDuplicatesWithinWatermark(cols) : frame.dropDuplicates(cols);
  } else if (q.aggregations && q.aggregations.length) {
    throw new InvalidQueryError(`case ${c.name} has aggregations without groupBy: add "groupBy" (a global aggregation is not supported by the format)`);
  }
  return frame.writeStream.outputMode(q.outputMode).trigger({ availableNow: true }).queryName(name).plan();
}

export function stepFiles(step: CaseStep): Array<Array<Record<string, unknown>>> {
  if (step.files) return step.files;
  if (step.add) return [step.add];
  return [];
}

export function parseCase(text: string, file: string): ConformanceCase {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new InvalidQueryError(`${file} is not valid JSON (${(e as Error).message}): a case is one JSON object, see FORMAT.md`);
  }
  const c = parsed as ConformanceCase;
  if (!c || typeof c !== 'object' || typeof c.name !== 'string' || !Array.isArray(c.steps)) {
    throw new InvalidQueryError(`${file} is not a conformance case: it needs "name", "query" and "steps" (see FORMAT.md)`);
  }
  return c;
}

