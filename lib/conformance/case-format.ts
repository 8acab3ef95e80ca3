/**
 * The case format's keys (FORMAT.md to FORMAT-4.md) and the check that a case uses only those,
 * in the places and combinations the formats allow: a runner that ignored a key would run another
 * query than the case means.
 */
import { InvalidQueryError } from '../engine/errors';
import { parseTimestamp } from '../engine/timestamps';
import type { CaseStage, CaseTransformWithState, ConformanceCase } from './case';
import { isTransformWithStateCase } from './format-4';

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
  aggregation: ['fn', 'column', 'expr', 'by', 'percentage', 'accuracy', 'frequency', 'delimiter', 'orderBy', 'ignoreNulls', 'as'],
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
export function validateCase(c: ConformanceCase, file: string): void {
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
