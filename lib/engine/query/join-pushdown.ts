/**
 * Where a filter Spark's optimizer derives from a join lands in one side's input (FORMAT-2 "Where
 * condition applies"): a join condition's single-side conjuncts and the isnotnull(key) Spark infers
 * from an equi-join. Spark pushes a filter down as far as it can: through projections that keep
 * its columns and through EventTimeWatermark unless it reads the event-time column, so a row it
 * rejects is not even counted by that input's watermark. Each filter is placed on its own: one
 * that cannot pass the watermark (an inferred isnotnull(window), a column the input's stages
 * compute) must not hold back the others.
 */
import type { JoinKeyPair, OperatorStep, SourceSpec, StatelessStage, StreamJoinType } from '../plan/types';
import { type ColumnInfo, columnsAfter } from '../plan/columns';
import type { Row } from '../ports';
import { type JoinConjunct, splitJoinCondition } from './join-condition';

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

/** Where Spark's optimizer puts a filter that follows a stream-stream join (filterThroughJoin). */
export interface FilterThroughJoin {
  /** The join type the query runs with: an outer join whose missing side the filter rejects is inner (or one-sided). */
  readonly type: StreamJoinType;
  /** The conjuncts (Spark SQL text over one side's columns) that filter the left input, and the right input. */
  readonly left: readonly string[];
  readonly right: readonly string[];
}

/**
 * A filter right after a stream-stream join, as Spark's optimizer takes it (null: nothing moves).
 * EliminateOuterJoin first: a conjunct over one side's columns that rejects the row in which that
 * side is missing (all its columns null) makes the join no longer produce such rows, so leftOuter
 * with a right-side one is inner, rightOuter with a left-side one is inner, fullOuter with both is
 * inner and with one side's is the outer join that keeps that side. Then PushPredicateThroughJoin
 * pushes the conjuncts over one side into that input where the (new) type lets it: inner both
 * sides, leftOuter and leftSemi the left, rightOuter the right, fullOuter none. The filter still
 * follows the join whole (the pushed conjuncts hold there already). A string key both sides have
 * is the left's column after inner, leftOuter and leftSemi, the right's after rightOuter, and both
 * after fullOuter (a conjunct reading it there moves nothing).
 */
export function filterThroughJoin(
  text: string,
  type: StreamJoinType,
  on: readonly JoinKeyPair[],
  leftCols: readonly ColumnInfo[],
  rightCols: readonly ColumnInfo[],
): FilterThroughJoin | null {
  const using = new Set(on.filter((k) => k.using).map((k) => k.left));
  const left = type === 'rightOuter' || type === 'fullOuter' ? leftCols.filter((c) => !using.has(c.name)) : leftCols;
  const right = type === 'leftSemi' ? [] : type === 'rightOuter' ? rightCols : rightCols.filter((c) => !using.has(c.name));
  let conjuncts: JoinConjunct[];
  try {
    conjuncts = splitJoinCondition(text, left, right);
  } catch {
    return null;
  }
  const rejectsMissing = (side: 'left' | 'right', cols: readonly ColumnInfo[]) => {
    const missing: Row = Object.fromEntries(cols.map((col) => [col.name, null]));
    return conjuncts.some((c) => {
      if (c.side !== side || c.sideTest === null || c.columns.length === 0) return false;
      try {
        return !c.sideTest(missing);
      } catch {
        return false;
      }
    });
  };
  const l = rejectsMissing('left', left);
  const r = rejectsMissing('right', right);
  const converted: StreamJoinType =
    type === 'leftOuter' && r
      ? 'inner'
      : type === 'rightOuter' && l
        ? 'inner'
        : type === 'fullOuter' && l && r
          ? 'inner'
          : type === 'fullOuter' && l
            ? 'leftOuter'
            : type === 'fullOuter' && r
              ? 'rightOuter'
              : type;
  const toLeft = converted === 'inner' || converted === 'leftOuter' || converted === 'leftSemi';
  const toRight = converted === 'inner' || converted === 'rightOuter';
  const side = (s: 'left' | 'right') => conjuncts.filter((c) => c.side === s && c.sideTest !== null && c.columns.length > 0).map((c) => c.text);
  const out = { type: converted, left: toLeft ? side('left') : [], right: toRight ? side('right') : [] };
  return out.type === type && out.left.length === 0 && out.right.length === 0 ? null : out;
}
