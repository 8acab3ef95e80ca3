/**
 * A plan's stateful operators in the order a batch runs them (operatorChain), each with its input
 * columns, its event-time columns (marks) and, for a stream-stream join, its two sides and how
 * their state is cleaned; and the columns a plan emits (outputColumns).
 */
import { InvalidQueryError } from '../errors';
import { aggOutputType, checkPredicate, type ColumnInfo, columnsAfter, joinOutputColumns, NUMERIC, unknownColumn } from './columns';
import { dedupMarks } from './pruning';
import type { OperatorStep, QueryPlan, SourceSpec, StatefulSpec, StatelessStage, StreamJoinSpec } from './types';

/** Event-time columns (FORMAT-2 "Event-time columns"): name to the delay of the watermark they carry. */
export type Marks = ReadonlyMap<string, number>;

/** The marks after stateless stages: a watermark marks its column, renames keep a mark, select and withColumn drop what they drop. */
function marksAfter(marks: Marks, stages: readonly StatelessStage[]): Marks {
  let m = new Map(marks);
  for (const s of stages) {
    if (s.kind === 'watermark') m.set(s.column, s.delayMs);
    else if (s.kind === 'withColumn' || s.kind === 'extract') m.delete(s.name);
    else if (s.kind === 'withColumnExpr') {
      // a bare copy of a marked column is marked too (Spark's alias keeps the event-time metadata), and so is window_time of a marked window
      const from = s.compiled.eventTimeSource;
      if (from !== undefined && m.has(from)) m.set(s.name, m.get(from)!);
      else m.delete(s.name);
    } else if (s.kind === 'selectExpr') {
      const next = new Map<string, number>();
      s.compiled.eventTimeSources.forEach((from, i) => {
        if (from !== null && m.has(from)) next.set(s.compiled.columns[i].name, m.get(from)!);
      });
      m = next;
    } else if (s.kind === 'select') m = new Map([...m].filter(([c]) => s.columns.includes(c)));
    else if (s.kind === 'project') {
      const next = new Map<string, number>();
      for (const item of s.items) {
        if (item.kind === 'path' || item.kind === 'explode') continue; // a nested value carries no watermark
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
  if (spec.kind === 'dedup' || spec.kind === 'limit') return marks;
  // transformWithState: its eventTimeColumn (Spark's eventTimeColumnName) is the one event-time column after it
  if (spec.kind === 'transformWithState')
    return spec.eventTimeColumn === null ? new Map() : new Map([[spec.eventTimeColumn, marks.size ? Math.min(...marks.values()) : 0]]);
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
export type JoinRemoval =
  | { readonly kind: 'key'; readonly column: string }
  | { readonly kind: 'value'; readonly column: string; readonly offsetMs: number }
  | null;

/** A stream-stream join as the executor runs it: its right side, and how each side's state is cleaned. */
export interface JoinSides {
  readonly rightColumns: ColumnInfo[];
  readonly rightMarks: Marks;
  /** The column each side's late rows are judged by (its first event-time column), null: none late. */
  readonly leftEventColumn: string | null;
  readonly rightEventColumn: string | null;
  readonly leftRemoval: JoinRemoval;
  readonly rightRemoval: JoinRemoval;
  /**
   * Whether Spark's checker finds a state watermark for each side (StreamingJoinHelper
   * getStateValueWatermark, or an event-time key): a bound of the range on that side against the
   * other side's watermarked column. It does not ask that side to have a watermark of its own, which
   * the join's removal does: with the left unwatermarked, a leftOuter join passes the check but
   * never removes a left row nor emits its outer row, as in Spark.
   */
  readonly stateWatermarks: { readonly left: boolean; readonly right: boolean };
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

/** What operatorChain reads of a plan (a frame being built has these too). */
export type ChainDraft = Pick<QueryPlan, 'source' | 'stages' | 'operators' | 'inputs'>;

/**
 * The plan's stateful operators in the order a batch runs them (the plan order of stateRows and
 * progress records): the query's pipeline, where a stream-stream join is preceded by the
 * operators of its input's own pipeline. `output` are the columns the last stage emits.
 */
export function operatorChain(plan: ChainDraft): { operators: ChainedOperator[]; output: ColumnInfo[] } {
  const operators: ChainedOperator[] = [];
  const flow = walkPipeline(plan, null, plan.source, plan.stages, plan.operators, operators);
  // a dropDuplicates keeps only the marks Spark's column pruning leaves below it (pruning.ts)
  return { operators: operators.map((op, i) => (op.spec.kind === 'dedup' ? { ...op, marks: dedupMarks(operators, i) } : op)), output: flow.cols };
}

function walkPipeline(
  plan: ChainDraft,
  input: number | null,
  source: SourceSpec,
  stages: readonly StatelessStage[],
  ops: readonly OperatorStep[],
  out: ChainedOperator[],
): Flow {
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
      if (input !== null)
        throw new InvalidQueryError(
          'join: a stream-stream join inside a joined input is not supported: join the streams one at a time from the left, e.g. a.join(b, ...).join(c, ...)',
        );
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
    if (typeof k.left !== 'string' || typeof k.right !== 'string')
      throw new InvalidQueryError(`${where}: a key of \`on\` must be a column name or { left, right }, not ${JSON.stringify(k)}`);
    const l = left.cols.find((c) => c.name === k.left);
    if (!l) throw unknownColumn(k.left, left.cols, `${where} (left side)`);
    const r = right.cols.find((c) => c.name === k.right);
    if (!r) throw unknownColumn(k.right, right.cols, `${where} (right side)`);
    if (!!l.window !== !!r.window || (l.type !== r.type && !(NUMERIC.has(l.type) && NUMERIC.has(r.type)))) {
      throw new InvalidQueryError(
        `${where}: key ${k.left} is ${l.window ? 'a window' : l.type} on the left but ${k.right} is ${r.window ? 'a window' : r.type} on the right: join keys must have the same type`,
      );
    }
  }
  const tr = spec.timeRange;
  if (tr) {
    for (const [name, cols, side] of [
      [tr.left, left.cols, 'left'],
      [tr.right, right.cols, 'right'],
    ] as const) {
      const c = cols.find((x) => x.name === name);
      if (!c) throw unknownColumn(name, cols, `${where} timeRange (${side} side)`);
      if (c.type !== 'TIMESTAMP' || c.window)
        throw new InvalidQueryError(
          `${where}: timeRange column ${name} is ${c.window ? 'a window' : c.type}, not a TIMESTAMP: range over a TIMESTAMP column of each side`,
        );
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
    // watermark once left <= E + lower (1 ms less unless strict), a right row once right <= E - upper.
    // The offsets are in ms, as watermarks are: a bound with a part below the ms is rounded down
    // (the row stays a little longer, never leaves too early).
    if (tr.lowerUs !== null) leftRemoval = { kind: 'value', column: tr.left, offsetMs: Math.floor(tr.lowerUs / 1000) - (tr.lowerStrict ? 0 : 1) };
    if (tr.upperUs !== null) rightRemoval = { kind: 'value', column: tr.right, offsetMs: Math.floor(-tr.upperUs / 1000) - (tr.upperStrict ? 0 : 1) };
  }
  const stateWatermarks = {
    left: keyed !== undefined || (tr !== null && tr !== undefined && tr.lowerUs !== null && right.marks.has(tr.right)),
    right: keyed !== undefined || (tr !== null && tr !== undefined && tr.upperUs !== null && left.marks.has(tr.left)),
  };
  const offsets = [leftRemoval, rightRemoval].map((r) => (r === null ? null : r.kind === 'key' ? 0 : r.offsetMs)).filter((o): o is number => o !== null);
  return {
    rightColumns: right.cols,
    rightMarks: right.marks,
    leftEventColumn: firstMarked(left),
    rightEventColumn: firstMarked(right),
    leftRemoval,
    rightRemoval,
    stateWatermarks,
    outputOffsetMs: Math.min(0, ...offsets),
  };
}

/** The first event-time column among a flow's columns (Spark's watermark attribute of a join side). */
function firstMarked(flow: Flow): string | null {
  return flow.cols.find((c) => flow.marks.has(c.name))?.name ?? null;
}

/** Names and types of the rows a plan's last stateful operator emits (before its post stages); a stateless plan's rows. */
export function outputColumns(plan: ChainDraft): ColumnInfo[] {
  const { operators } = operatorChain({ ...plan, operators: plan.operators.map((o, i) => (i === plan.operators.length - 1 ? { spec: o.spec, post: [] } : o)) });
  const last = operators[operators.length - 1];
  return last ? operatorOutputColumns(last.spec, last.inputColumns, last.join) : columnsAfter(plan.source.schema.columns, plan.stages);
}

/** The columns an operator emits from rows of `cols`: dedup its input's, an aggregation its keys (windows as window columns) and aggregates, a join both sides'. */
function operatorOutputColumns(st: StatefulSpec, cols: ColumnInfo[], join?: JoinSides): ColumnInfo[] {
  if (st.kind === 'dedup' || st.kind === 'limit') return cols;
  if (st.kind === 'transformWithState') return st.outputSchema.columns.map((c) => ({ ...c }));
  if (st.kind === 'streamJoin') return joinOutputColumns(cols, join!.rightColumns, st.on, st.type === 'leftSemi', 'join');
  const out: ColumnInfo[] = [];
  for (const k of st.keys) {
    if (k.kind === 'column') out.push(cols.find((c) => c.name === k.name)!);
    else out.push({ name: k.kind === 'window' ? 'window' : 'session_window', type: 'TIMESTAMP', window: true });
  }
  for (const a of st.aggs) out.push({ ...aggOutputType(a, cols), name: a.as });
  return out;
}
