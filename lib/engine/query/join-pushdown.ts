/**
 * Where a filter Spark's optimizer derives from a join lands in one side's input (FORMAT-2 "Where
 * condition applies"): a join condition's single-side conjuncts and the isnotnull(key) Spark infers
 * from an equi-join. Spark pushes a filter down as far as it can: through projections that keep
 * its columns and through EventTimeWatermark unless it reads the event-time column, so a row it
 * rejects is not even counted by that input's watermark. Each filter is placed on its own: one
 * that cannot pass the watermark (an inferred isnotnull(window), a column the input's stages
 * compute) must not hold back the others.
 */
import type { OperatorStep, SourceSpec, StatelessStage } from '../plan/types';
import { columnsAfter } from '../plan/columns';

/** The part of a frame a filter is pushed into: its source, its stages, its stateful operators. */
export interface PushSide {
  readonly source: SourceSpec;
  readonly stages: readonly StatelessStage[];
  readonly operators: readonly OperatorStep[];
}

/** Whether column `name` reaches the end of `stages` as the same value (not replaced, renamed or dropped). */
export function keptThrough(name: string, stages: readonly StatelessStage[]): boolean {
  for (const s of stages) {
    switch (s.kind) {
      case 'select':
        if (!s.columns.includes(name)) return false;
        break;
      case 'project':
        if (!s.items.some((i) => i.kind === 'column' && i.as === name && i.column === name)) return false;
        break;
      case 'withColumn':
      case 'withColumnExpr':
      case 'extract':
        if (s.name === name) return false;
        break;
      case 'selectExpr':
        if (!s.compiled.columns.some((c, i) => c.name === name && s.compiled.sources[i] === name)) return false;
        break;
      case 'join':
        // a stream-static join keeps the stream's columns; a table column of that name is another value
        if (s.table.schema.columns.some((c) => c.name === name) && !s.on.some((k) => k.using && k.left === name)) return false;
        break;
      default:
        // filter, filterExpr and watermark stages keep every column
        break;
    }
  }
  return true;
}

/**
 * Whether a filter reading `columns` goes below the side's (first) watermark: the side has no
 * stateful operator of its own, the columns exist before the watermark and reach the join
 * unchanged, and none is an event-time column (Spark's EventTimeWatermark lets a predicate pass
 * only when it does not reference the event time).
 */
export function pushesBelowWatermark(side: PushSide, columns: readonly string[]): boolean {
  if (side.operators.length) return false;
  const at = side.stages.findIndex((s) => s.kind === 'watermark');
  if (at < 0) return false;
  const rest = side.stages.slice(at);
  const eventTime = new Set(rest.flatMap((s) => (s.kind === 'watermark' ? [s.column] : [])));
  const before = columnsAfter(side.source.schema.columns, side.stages.slice(0, at));
  return columns.every((c) => !eventTime.has(c) && before.some((x) => x.name === c) && keptThrough(c, rest));
}

/**
 * The side's stages and operators with `below` inserted before its first watermark and `above`
 * after its stages (after its last stateful operator's stages when it has one).
 */
export function withPushedFilters(side: PushSide, below: readonly StatelessStage[], above: readonly StatelessStage[]): Pick<PushSide, 'stages' | 'operators'> {
  if (side.operators.length) {
    const last = side.operators[side.operators.length - 1];
    return { stages: side.stages, operators: [...side.operators.slice(0, -1), { spec: last.spec, post: [...last.post, ...below, ...above] }] };
  }
  const at = below.length ? side.stages.findIndex((s) => s.kind === 'watermark') : -1;
  const stages = at >= 0 ? [...side.stages.slice(0, at), ...below, ...side.stages.slice(at), ...above] : [...side.stages, ...below, ...above];
  return { stages, operators: [] };
}
