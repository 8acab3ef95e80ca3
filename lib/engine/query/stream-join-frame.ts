/**
 * Building a stream-stream join (StreamFrame.join with a stream): the other stream made one of the
 * plan's inputs, the join's keys, range and condition read as Spark reads them, and the filters its
 * optimizer derives from the join pushed into each side (join-pushdown.ts, join-inference.ts).
 * Also pushFilter, which a stream-static join uses too.
 */
import { InvalidQueryError } from '../errors';
import { rowHolds } from '../predicate';
import type { Row } from '../ports';
import type { JoinKeyPair, JoinPredicate, PlanInput, StatelessStage, StreamJoinSpec, StreamJoinType } from '../plan/types';
import { checkPredicate, type ColumnInfo, columnsAfter, predicateColumns, predicateSide } from '../plan/columns';
import { operatorChain, outputColumns } from '../plan/chain';
import { sourceLimits } from '../plan/to-plan';
import { Column } from './column';
import { exprText } from './column-ops';
import { parseTimeRange, streamJoinType, type TimeRangeArg } from './join-args';
import { type PushSide, pushesBelowWatermark, withPushedFilters } from './join-pushdown';
import { carriedFacts, inferenceDirections, type SideFacts, stageFacts } from './join-inference';
import { type JoinConjunct, splitJoinCondition, timeRangeOf } from './join-condition';
import { StreamFrame } from './frame';
import type { FrameColumns } from './types';

/**
 * A join's `condition`: FORMAT-2's list of predicates, or a Spark SQL boolean expression
 * (`"right.status = 'ok' AND left.amount > right.minAmount"`, `expr(...)`) whose names may be
 * qualified with `left.` / `right.` (query/join-condition.ts).
 */
export type JoinConditionArg = readonly JoinPredicate[] | string | Column;

export function isConditionExpr(c: JoinConditionArg | undefined): c is string | Column {
  return typeof c === 'string' || c instanceof Column;
}

/**
 * A frame with the filters Spark's optimizer derives from a join on this side: the condition
 * items `predicates` and the inferred isnotnull of the keys `notNull`, each one where Spark would
 * put it (join-pushdown.ts): before the input's watermark when it can pass it (so a filtered row
 * is not even counted by the watermark), else after the stages so far.
 */
export function pushFilter(
  frame: StreamFrame<FrameColumns>,
  predicates: readonly JoinPredicate[],
  notNull: readonly string[] = [],
  conjuncts: readonly JoinConjunct[] = [],
): StreamFrame<FrameColumns> {
  // a union as built: the filters go into each of its inputs, as Spark pushes them through a union
  const union = frame.unionInputs_();
  if (union !== undefined) return pushFilter(union.left, predicates, notNull, conjuncts).union(pushFilter(union.right, predicates, notNull, conjuncts));
  // (a union with stages after it: its other stream joins the frame's rows at a stage index, so
  // nothing is put before it, and a filter placed after the stages holds for both streams' rows)
  const unioned = frame.inputs.some((i) => i.unionAt !== undefined);
  const below = (cols: readonly string[]) => !unioned && pushesBelowWatermark(frame, cols);
  const stage = (ps: readonly JoinPredicate[], keys: readonly string[]): StatelessStage[] => {
    if (!ps.length && !keys.length) return [];
    const fn = (row: Row): boolean => {
      for (const c of keys) if (row[c] === null || row[c] === undefined) return false;
      return rowHolds(ps, row);
    };
    // labelled as Spark's plan writes the inferred filter: isnotnull of each key or event time the condition reads
    const notNulls = keys.map((c) => `isnotnull(${c})`).join(' AND ');
    return [{ kind: 'filter', fn, label: keys.length ? `${notNulls}${ps.length ? ' and condition' : ''}` : 'join condition' }];
  };
  const lowP = predicates.filter((p) => below(predicateColumns(p)));
  const lowK = notNull.filter((c) => below([c]));
  // an expression's conjunct: a filterExpr stage of its own
  const exprStage = (c: JoinConjunct): StatelessStage => ({ kind: 'filterExpr', text: c.text, test: c.sideTest! });
  const lowC = conjuncts.filter((c) => below(c.columns));
  const pushed = withPushedFilters(
    frame,
    [...stage(lowP, lowK), ...lowC.map(exprStage)],
    [
      ...stage(
        predicates.filter((p) => !lowP.includes(p)),
        notNull.filter((c) => !lowK.includes(c)),
      ),
      ...conjuncts.filter((c) => !lowC.includes(c)).map(exprStage),
    ],
  );
  return new StreamFrame(frame.source, pushed.stages, pushed.operators, frame.inputs);
}

/**
 * A stream-stream join of `stream` with `other` (StreamFrame.join): the other stream becomes one of
 * the plan's inputs; the filters Spark derives from the join are pushed into each side first.
 * The frame it returns is checked (keys, range, names) now, not at plan().
 */
export function streamJoinFrame(
  stream: StreamFrame<FrameColumns>,
  other: StreamFrame<FrameColumns>,
  on: unknown,
  type: string,
  options: { timeRange?: TimeRangeArg; condition?: JoinConditionArg; name?: string },
  declaredType?: StreamJoinType,
): StreamFrame<FrameColumns> {
  if (other.inputs.length) {
    throw new InvalidQueryError('join: the right stream has joins of its own: join the streams one at a time from the left, e.g. a.join(b, ...).join(c, ...)');
  }
  if (other === stream)
    throw new InvalidQueryError(
      'join: a stream joined with itself needs two inputs: read the source twice (two readStream...load calls) and rename the columns of one side',
    );
  const joinType = streamJoinType(type);
  const index = stream.inputs.length;
  const name = options.name ?? `input${index + 2}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) || stream.inputs.some((i) => i.name === name)) {
    throw new InvalidQueryError(
      `join: input name ${JSON.stringify(name)} must be 1-64 letters, digits, '.', '_' or '-' and not name another input of the query (${stream.inputs.map((i) => i.name).join(', ') || 'none yet'})`,
    );
  }
  const list = (Array.isArray(on) ? on : [on]) as ReadonlyArray<string | { left: string; right: string }>;
  if (list.length === 0) throw new InvalidQueryError('join: `on` is empty: a stream-stream join needs at least one equi-join key, e.g. join(other, "userId")');
  const pairs: JoinKeyPair[] = list.map((k) => (typeof k === 'string' ? { left: k, right: k, using: true } : { left: k?.left, right: k?.right, using: false }));
  // the other stream's watermark stages get ids of their own (the checkpoint keeps each one's watermark by id)
  let wm = 0;
  const rename = (st: StatelessStage): StatelessStage => (st.kind === 'watermark' ? { ...st, id: `in${index}wm${wm++}` } : st);
  let input: PlanInput = {
    name,
    source: other.source,
    stages: other.stages.map(rename),
    operators: other.operators.map((o) => ({ spec: o.spec, post: o.post.map(rename) })),
    limits: sourceLimits(other.source),
  };
  let timeRange = options.timeRange === undefined ? null : parseTimeRange(options.timeRange);
  const cond = options.condition;
  const condition = Array.isArray(cond) ? [...cond] : [];
  // Spark pushes a single-side item into the input that cannot produce outer rows: there it
  // filters rows before anything else (FORMAT-2 "Where condition applies")
  const leftCols = columnsAfter(outputColumns(stream), stream.operators.length ? stream.operators[stream.operators.length - 1].post : []);
  const rightCols = columnsAfter(outputColumns(input), input.operators.length ? input.operators[input.operators.length - 1].post : []);
  for (const p of condition) checkPredicate(p, leftCols, rightCols, 'join');
  const pushLeft = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'rightOuter';
  const pushRight = joinType === 'inner' || joinType === 'leftSemi' || joinType === 'leftOuter';
  // (an anyOf naming both sides' columns is a condition on the pair: checked in the join)
  const toLeft = condition.filter((p) => pushLeft && predicateSide(p, leftCols) === 'left');
  const toRight = condition.filter((p) => pushRight && predicateSide(p, leftCols) === 'right');
  const inJoin = condition.filter((p) => !toLeft.includes(p) && !toRight.includes(p));
  // a condition given as an expression: its conjuncts, each pushed or checked in the join as Spark does
  const text = isConditionExpr(cond) ? exprText(cond, 'join condition') : null;
  const conjuncts = text === null ? [] : splitJoinCondition(text, leftCols, rightCols);
  const exprLeft = conjuncts.filter((c) => pushLeft && c.side === 'left');
  const exprRight = conjuncts.filter((c) => pushRight && c.side === 'right');
  let checked = conjuncts.filter((c) => !exprLeft.includes(c) && !exprRight.includes(c));
  // without a timeRange, the conjuncts bounding one side's event time by the other's are the range (as Spark reads them)
  const derived = timeRange === null ? timeRangeOf(checked) : null;
  if (derived) {
    timeRange = derived.range;
    checked = checked.filter((c) => !derived.used.includes(c));
  }
  const check = (side: JoinConjunct['side']) =>
    checked.filter((c) => c.side === side).map((c) => ({ text: c.text, test: side === 'both' ? c.pairTest : c.sideTest! }));
  // Spark infers isnotnull(key) from the equi-join on the sides that cannot produce outer rows
  // (InferFiltersFromConstraints) and pushes it down with the rest: a null-key row there is invisible
  // and isnotnull of the columns a condition conjunct on the pair reads null-intolerantly (`lv <> rv`:
  // a row with a null lv can match nothing), the time range's two columns among them (a range given
  // as timeRange is Spark's `lt >= rt + lower AND lt <= rt + upper`). An event-time column's
  // isnotnull stays above its watermark (PushPredicateThroughNonJoin keeps a predicate on the event
  // time there): a null event time's row still counts for the watermark, then is never buffered
  // (conformance case sluice-join-null-event-time-holds-watermark).
  const pairNotNull = (side: 'left' | 'right') => [
    ...conjuncts.flatMap((c) => (c.side === 'both' && c.notNull ? c.notNull[side] : [])),
    ...(timeRange === null ? [] : [timeRange[side]]),
  ];
  const leftKeys =
    joinType === 'inner' || joinType === 'leftSemi' || joinType === 'rightOuter' ? [...new Set([...pairs.map((k) => k.left), ...pairNotNull('left')])] : [];
  const rightKeys =
    joinType === 'inner' || joinType === 'leftSemi' || joinType === 'leftOuter' ? [...new Set([...pairs.map((k) => k.right), ...pairNotNull('right')])] : [];
  // and the filters it infers across the equi-join from what each side is known to hold (join-inference.ts)
  const factsOf = (side: 'left' | 'right', frame: PushSide, cols: readonly ColumnInfo[]): SideFacts => ({
    predicates: condition.filter((p) => predicateSide(p, leftCols) === side),
    texts: [...new Set(pairs.flatMap((k) => stageFacts(frame, side === 'left' ? k.left : k.right)))].concat(
      conjuncts.filter((c) => c.side === side && c.columns.every((x) => cols.some((y) => y.name === x))).map((c) => c.text),
    ),
  });
  const facts = { left: factsOf('left', stream, leftCols), right: factsOf('right', input, rightCols) };
  const cols = { left: leftCols, right: rightCols };
  const none: ReturnType<typeof carriedFacts> = { predicates: [], conjuncts: [] };
  const inferred = { left: none, right: none };
  for (const d of inferenceDirections(joinType)) inferred[d.to] = carriedFacts(facts[d.from], pairs, d.from, cols[d.from], cols[d.to]);
  const predsLeft = [...toLeft, ...inferred.left.predicates];
  const predsRight = [...toRight, ...inferred.right.predicates];
  const conjLeft = [...exprLeft, ...inferred.left.conjuncts];
  const conjRight = [...exprRight, ...inferred.right.conjuncts];
  let left: StreamFrame<FrameColumns> = stream;
  if (predsLeft.length || leftKeys.length || conjLeft.length) left = pushFilter(left, predsLeft, leftKeys, conjLeft);
  if (predsRight.length || rightKeys.length || conjRight.length) {
    const pushed = pushFilter(new StreamFrame(input.source, input.stages, input.operators), predsRight, rightKeys, conjRight);
    input = { ...input, stages: pushed.stages, operators: pushed.operators };
  }
  const spec: StreamJoinSpec = {
    kind: 'streamJoin',
    input: index,
    type: joinType,
    ...(declaredType === undefined ? {} : { declaredType }),
    on: pairs,
    timeRange,
    condition: inJoin,
    pushed: [...toLeft, ...toRight],
    ...(text === null
      ? {}
      : { conditionExpr: { text, left: check('left'), right: check('right'), pair: check('both'), pushed: [...exprLeft, ...exprRight].map((c) => c.text) } }),
  };
  const joined = new StreamFrame<FrameColumns>(left.source, left.stages, [...left.operators, { spec, post: [] }], [...left.inputs, input]);
  operatorChain(joined); // checks the keys, the range and the names now, not at plan()
  return joined;
}
