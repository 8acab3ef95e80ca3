/**
 * The frames a query is built from: StreamFrame (stateless stages, stateful operators, joins),
 * GroupedFrame (groupBy ... agg) and DataStreamWriter (writeStream ... plan()).
 */
import { cubeSets, GroupingSetsFrame, rollupSets, setsOf } from './grouping-sets';
import { InvalidQueryError } from '../errors';
import { parseWatermarkDelay } from '../duration';
import { type ColumnType, WINDOW_STRUCT } from '../schema';
import type { Row } from '../ports';
import type {
  ColumnKey,
  GroupKey,
  JoinKeyPair,
  JoinStage,
  OperatorStep,
  PlanInput,
  ProjectItem,
  RowExtender,
  SourceSpec,
  StatefulSpec,
  StatelessStage,
  StreamJoinType,
  WindowFilter,
} from '../plan/types';
import { type ColumnInfo, columnsAfter, explodeColumns } from '../plan/columns';
import { isPath, parsePath, pathColumn, pathName } from '../plan/paths';
import { ddlOf, hiveTypeOf, parseDdlType } from '../ddl';
import { outputColumns } from '../plan/chain';
import { sourceLimits } from '../plan/to-plan';
import { SORT_REFUSED } from '../plan/analysis';
import { col } from './functions';
import { Column, expr } from './column';
import type { AsColType, ColType, FrameType, UnknownType } from './column-types';
import { columnText } from './sql-text';
import { analyzeExpression, compileExpression, compileFilter, compileSelect } from '../expr';
import { METADATA_COLUMN } from '../expr/input-file';
import { rowExtender } from '../rows';
import { staticJoinType, type TimeRangeArg } from './join-args';
import { filterThroughJoin, pushesBelowWatermark } from './join-pushdown';
import { type JoinConjunct, splitJoinCondition } from './join-condition';
import {
  type ColumnStep,
  dropnaStep,
  dropStep,
  exprText,
  fillnaStep,
  renameStep,
  type ReplaceScalar,
  replaceStep,
  sortKeys,
  unionSteps,
  withColumnsStep,
} from './column-ops';
import type { SortKey } from './functions';
import type { StaticTable } from './static-table';
import { GroupedFrame } from './grouped';
import { filterBelowProjection } from './projection-pushdown';
import { unpivotItems } from './unpivot';
import { DataStreamWriter } from './writer';
import { isConditionExpr, type JoinConditionArg, pushFilter, streamJoinFrame } from './stream-join-frame';

export type { JoinConditionArg } from './stream-join-frame';
import type {
  AggArg,
  AnyColumns,
  ColumnsOfType,
  DdlTypeOf,
  FrameColumns,
  GroupArg,
  InputRowOf,
  JoinedColumns,
  JoinOnArg,
  KeyColumns,
  Names,
  DroppedColumns,
  UnionColumns,
  RenamedColumns,
  PathInfo,
  SelectArg,
  SelectColumns,
  Simplify,
  StreamJoinedColumns,
  ColumnPaths,
} from './types';

/** The Column `frame.col(path)` gives: the path's type in the frame and the name Spark gives it (not known for a frame whose schema the types cannot read). */
type FrameCol<C extends FrameColumns, P extends string> = string extends keyof C
  ? Column<UnknownType, PathInfo<C, P>[1] extends string ? PathInfo<C, P>[1] : string>
  : Column<PathInfo<C, P>[0] extends 'WINDOW' ? 'WINDOW' : AsColType<PathInfo<C, P>[0]>, PathInfo<C, P>[1]>;

/** An aggregation's window filter with more conjuncts (those of an earlier filter first). */
function windowFilterOf(earlier: WindowFilter | undefined, conjuncts: readonly JoinConjunct[]): WindowFilter {
  const tests = [...(earlier ? [earlier.test] : []), ...conjuncts.map((c) => c.sideTest!)];
  return { texts: [...(earlier?.texts ?? []), ...conjuncts.map((c) => c.text)], test: (row) => tests.every((t) => t(row)) };
}

/** A frame's `na` functions (Spark's DataFrameNaFunctions): the same calls as its dropna, fillna and replace. */
export interface NaFunctions<C extends FrameColumns> {
  readonly drop: StreamFrame<C>['dropna'];
  readonly fill: StreamFrame<C>['fillna'];
  readonly replace: StreamFrame<C>['replace'];
}

/** The ColumnTypes, which withColumn takes as they are (a DDL type is parsed). */
const BARE_TYPES: ReadonlySet<string> = new Set<ColumnType>([
  'STRING',
  'INT',
  'LONG',
  'DOUBLE',
  'BOOLEAN',
  'TIMESTAMP',
  'DECIMAL',
  'DATE',
  'ARRAY',
  'MAP',
  'STRUCT',
]);

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

  /** The frame add() made this one from, one stage shorter (withFilterBelowProjection). */
  private before_?: StreamFrame<FrameColumns>;
  /**
   * Set on the frame filter() returns (an SQL filter, not after a join): the frame it was called
   * on and the condition, so that the next filter right after it is taken with it as one (Spark's
   * CombineFilters) and moves down as one.
   */
  private filtered_?: { readonly base: StreamFrame<C>; readonly text: string };
  /** Set on the frame filter() returns after a stream-stream join: the join as written and the filters so far (filtersAfterJoin_). */
  private afterJoin_?: { readonly join: StreamFrame<C>; readonly filters: ReadonlyArray<{ readonly text: string; readonly test: (row: Row) => boolean }> };
  /**
   * Set on the frame union_ returns: its two inputs, each with the steps that give it the union's
   * columns, so that a filter right after the union goes into both (withFilterThroughUnion).
   */
  private unionArgs_?: { readonly left: StreamFrame<FrameColumns>; readonly right: StreamFrame<FrameColumns> };
  /** Set on the frame a stream-stream join returns: how to build that join again (withFilterThroughJoin). */
  private joinArgs_?: {
    readonly left: StreamFrame<FrameColumns>;
    readonly other: StreamFrame<FrameColumns>;
    readonly on: unknown;
    readonly options: { timeRange?: TimeRangeArg; condition?: JoinConditionArg; name?: string };
  };

  private add<N extends FrameColumns = C>(stage: StatelessStage): StreamFrame<N> {
    const ops = this.operators;
    const last = ops[ops.length - 1];
    const next =
      last === undefined
        ? new StreamFrame<N>(this.source, [...this.stages, stage], [], this.inputs)
        : new StreamFrame<N>(this.source, this.stages, [...ops.slice(0, -1), { spec: last.spec, post: [...last.post, stage] }], this.inputs);
    next.before_ = this as unknown as StreamFrame<FrameColumns>;
    return next;
  }

  /**
   * `frame.col('amount')`: the frame's column (or nested path, `customer.country`) as a Column
   * typed as the frame types it (`Column<'DOUBLE'>`), for the functions module (`F.upper(frame.col('country'))`).
   * The name is checked against the frame's columns now.
   */
  col<const P extends ColumnPaths<C>>(name: P): FrameCol<C, P> {
    const text = columnText(name);
    analyzeExpression(text, this.columnsNow_()); // an unknown column is refused here, with Spark's suggestion
    return new Column(text) as FrameCol<C, P>;
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
  /**
   * Keeps the rows for which `condition` holds: a Spark SQL expression (`"country IN ('DE', 'FR')"`,
   * `expr(...)`), which must be BOOLEAN and keeps a row when true (null and false drop it), or a
   * function of the row.
   */
  filter(condition: string | Column<'BOOLEAN' | UnknownType> | ((row: InputRowOf<C>) => boolean), label = 'filter'): StreamFrame<C> {
    if (typeof condition === 'function') return this.add({ kind: 'filter', fn: condition as (row: Row) => boolean, label });
    const text = exprText(condition, label);
    const test = compileFilter(text, this.columnsNow_());
    const throughUnion = this.withFilterThroughUnion(text, label);
    if (throughUnion !== null) return throughUnion;
    const afterJoin = this.filtersAfterJoin_();
    if (afterJoin !== null) {
      // Spark combines adjacent filters (CombineFilters) before it moves them through the join:
      // the join is built again from the filters after it so far and this one, as one
      const filters = [...afterJoin.filters, { text, test }];
      const combined = filters.length === 1 ? text : filters.map((f) => `(${f.text})`).join(' AND ');
      let out = afterJoin.join.withFilterThroughJoin(combined);
      for (const f of filters) out = out.add({ kind: 'filterExpr', text: f.text, test: f.test });
      out.afterJoin_ = { join: afterJoin.join, filters };
      return out;
    }
    if (this.filtered_ !== undefined) {
      // Spark combines adjacent filters (CombineFilters) before it moves them: the filter right
      // before this one and this one are one filter, (A) AND (B), where that one was added (so B
      // is tested only where A is not false, and moves as far as each conjunct can go)
      return this.filtered_.base.filter(`(${this.filtered_.text}) AND (${text})`, label);
    }
    const below = this.withFilterBelowProjection(text);
    const out =
      below !== null
        ? below.add<C>({ kind: 'filterExpr', text, test })
        : this.withFilterBelowAggregate(text).withWatermarkGates(text).add<C>({ kind: 'filterExpr', text, test });
    out.filtered_ = { base: this, text };
    return out;
  }

  /**
   * A filter right after a projection: Spark moves it below (a copied column renamed, a computed
   * one as its expression), and on from there (projection-pushdown.ts). The frame with the moved
   * filter below the projection, or null; the filter itself still follows.
   */
  private withFilterBelowProjection(text: string): StreamFrame<C> | null {
    const prev = this.before_;
    if (prev === undefined || prev.operators.length !== this.operators.length) return null;
    const tail = (f: StreamFrame<FrameColumns>) => (f.operators.length ? f.operators[f.operators.length - 1].post : f.stages);
    const mine = tail(this as unknown as StreamFrame<FrameColumns>);
    if (mine.length !== tail(prev).length + 1) return null;
    const stage = mine[mine.length - 1];
    const moved = filterBelowProjection(text, stage, prev.columnsNow_(), this.columnsNow_());
    if (moved === null) return null;
    try {
      return prev.filter(moved).add<C>(stage);
    } catch {
      return null; // (a text the printer wrote that does not parse again moves nothing)
    }
  }

  /** @internal The two inputs of the union this frame is, as built (each with the union's columns), for a join's pushed filters (stream-join-frame.ts). */
  unionInputs_(): { readonly left: StreamFrame<FrameColumns>; readonly right: StreamFrame<FrameColumns> } | undefined {
    return this.unionArgs_;
  }

  /**
   * A filter right after a union: Spark's optimizer (PushPredicateThroughNonJoin, its Union case)
   * runs it on each input before the union, where it moves on as a filter there does (below a
   * projection, and into the gates of that input's watermark, so that a row it rejects does not
   * move the input's watermark). The union built again from its two inputs, each filtered; null
   * for any other frame.
   */
  private withFilterThroughUnion(text: string, label: string): StreamFrame<C> | null {
    const u = this.unionArgs_;
    if (u === undefined) return null;
    try {
      return u.left.filter(text, label).union_(u.right.filter(text, label), false, false) as unknown as StreamFrame<C>;
    } catch {
      return null; // (the filter after the union as written)
    }
  }

  /** A stream-stream join as written and the SQL filters that follow it directly (none yet: the join's own frame); null for any other frame. */
  private filtersAfterJoin_(): { join: StreamFrame<C>; filters: ReadonlyArray<{ text: string; test: (row: Row) => boolean }> } | null {
    if (this.afterJoin_ !== undefined) return this.afterJoin_;
    const last = this.operators[this.operators.length - 1];
    return this.joinArgs_ !== undefined && last?.spec.kind === 'streamJoin' && last.post.length === 0 ? { join: this, filters: [] } : null;
  }

  /**
   * A filter right after a stream-stream join: Spark's optimizer may run an outer join as inner
   * (or one-sided) when the filter rejects its null rows, and pushes the conjuncts over one side
   * into that input (join-pushdown.ts filterThroughJoin), so the rows they reject are never
   * buffered nor counted by that input's watermark. The join built again with those filters on
   * its inputs and that type; the whole filter still follows it.
   */
  private withFilterThroughJoin(text: string): StreamFrame<C> {
    const a = this.joinArgs_;
    const spec = this.operators[this.operators.length - 1]?.spec;
    if (a === undefined || spec?.kind !== 'streamJoin') return this;
    const moved = filterThroughJoin(text, spec.type, spec.on, a.left.columnsNow_(), a.other.columnsNow_());
    if (moved === null) return this;
    try {
      let left = a.left;
      for (const t of moved.left) left = left.filter(t);
      let other = a.other;
      for (const t of moved.right) other = other.filter(t);
      return left.streamJoin(other, a.on, moved.type, a.options, spec.declaredType ?? (moved.type === spec.type ? undefined : spec.type)) as StreamFrame<C>;
    } catch {
      return this; // (the join as written stands: a conjunct Spark's printer wrote that does not parse again moves nothing)
    }
  }

  /**
   * A filter right after an aggregation: Spark's optimizer (PushPredicateThroughNonJoin, its
   * Aggregate case) evaluates the conjuncts that read only grouping columns before the
   * aggregation, so the groups they reject never reach the state (and, through the watermark's
   * gates, rows they reject do not move it). The frame with those conjuncts as a filter before
   * the aggregation; the whole filter still follows it (the pushed conjuncts hold there already).
   * Only plain grouping columns: a window key is left after the aggregation.
   */
  private withFilterBelowAggregate(text: string): StreamFrame<C> {
    const last = this.operators[this.operators.length - 1];
    if (last === undefined || last.post.length > 0 || last.spec.kind !== 'aggregate') return this;
    const spec = last.spec;
    const keys = new Set(spec.keys.flatMap((k) => (k.kind === 'column' ? [k.name] : [])));
    const names = new Set([
      ...spec.keys.map((k) => (k.kind === 'column' ? k.name : k.kind === 'window' ? 'window' : 'session_window')),
      ...spec.aggs.map((a) => a.as),
    ]);
    let conjuncts: ReturnType<typeof splitJoinCondition>;
    try {
      conjuncts = splitJoinCondition(text, this.columnsNow_(), []);
    } catch {
      return this;
    }
    const pushed = conjuncts.filter((c) => c.side === 'left' && c.columns.length > 0 && c.columns.every((col) => keys.has(col) && names.has(col)));
    // (a conjunct on the window: tested per row and window inside the aggregation, as Spark's moved filter)
    const onWindow = spec.keys.some((k) => k.kind === 'window')
      ? conjuncts.filter(
          (c) => c.side === 'left' && c.sideTest !== null && c.columns.includes('window') && c.columns.every((col) => col === 'window' || keys.has(col)),
        )
      : [];
    if (!pushed.length && !onWindow.length) return this;
    let before = new StreamFrame<FrameColumns>(this.source, this.stages, this.operators.slice(0, -1), this.inputs);
    try {
      for (const c of pushed) before = before.filter(c.text);
    } catch {
      return this;
    }
    const step = onWindow.length ? { ...last, spec: { ...spec, windowFilter: windowFilterOf(spec.windowFilter, onWindow) } } : last;
    return new StreamFrame<C>(before.source, before.stages, [...before.operators, step], before.inputs);
  }

  /**
   * Spark's optimizer (PushPredicateThroughNonJoin) moves a filter's deterministic conjuncts that do
   * not read the event-time column below EventTimeWatermark, through the projections between: a
   * row they reject is never seen by the watermark. The filter stays where it is (its rows and
   * errors are the same); the watermark stage gets those conjuncts as gates, so that its maximum
   * event time skips the rows they reject. Only conjuncts over columns the watermark's input has
   * and the stages after it keep unchanged (join-pushdown.ts pushesBelowWatermark).
   */
  private withWatermarkGates(text: string): StreamFrame<C> {
    if (this.operators.length || !this.stages.some((s) => s.kind === 'watermark')) return this;
    let conjuncts: ReturnType<typeof splitJoinCondition>;
    try {
      conjuncts = splitJoinCondition(text, this.columnsNow_(), []);
    } catch {
      return this;
    }
    const side = this as unknown as StreamFrame<FrameColumns>;
    const gates = conjuncts.filter((c) => c.side === 'left' && c.sideTest !== null && pushesBelowWatermark(side, c.columns)).map((c) => c.sideTest!);
    if (!gates.length) return this;
    const at = this.stages.findIndex((s) => s.kind === 'watermark');
    const wm = this.stages[at] as Extract<StatelessStage, { kind: 'watermark' }>;
    const stages = [...this.stages];
    stages[at] = { ...wm, gates: [...(wm.gates ?? []), ...gates] };
    return new StreamFrame<C>(this.source, stages, this.operators, this.inputs);
  }
  where(condition: string | Column<'BOOLEAN' | UnknownType> | ((row: InputRowOf<C>) => boolean)): StreamFrame<C> {
    return this.filter(condition, 'where');
  }
  /**
   * Spark's selectExpr: each item a Spark SQL expression with an optional `AS name`, `*`, or a
   * STRUCT's fields (`o.*`); one item may be a generator (`explode(lines) AS line`). The text is
   * analyzed against the frame's columns now: an unknown column or a type Spark refuses is
   * refused here, with Spark's error class and the position.
   */
  selectExpr(...items: Array<string | Column>): StreamFrame<AnyColumns> {
    if (items.length === 0) throw new InvalidQueryError('selectExpr: give at least one expression, e.g. selectExpr("id", "amount * qty AS revenue")');
    const texts = items.map((i) => (i instanceof Column ? i.toString() : exprText(i, 'selectExpr')));
    return this.add({ kind: 'selectExpr', items: texts, compiled: compileSelect(texts, this.columnsNow_()) });
  }
  /** @internal The columns of the frame's rows after the stages so far (the analysis checks them as it goes). */
  columnsNow_(): ColumnInfo[] {
    const last = this.operators[this.operators.length - 1];
    return last ? columnsAfter(outputColumns(this as unknown as StreamFrame<FrameColumns>), last.post) : columnsAfter(this.source.schema.columns, this.stages);
  }

  /**
   * Keeps the listed columns. An item may also be a nested path (`customer.country`, named
   * `country` as Spark names it; `lines[0]`, 0-based; `attrs['color']`), a STRUCT's fields
   * (`customer.*`), one generator (`explode('lines')`, `posexplode`, `explodeOuter`, ...), or a
   * ProjectItem (renamed, windowOf, windowStart, windowEnd, windowTime), FORMAT-2's select items;
   * with those the frame's columns are loosely typed.
   */
  select<const K extends readonly SelectArg<C>[]>(...items: K): StreamFrame<SelectColumns<C, K>>;
  select(...items: Array<Names<C> | ProjectItem | Column>): StreamFrame<AnyColumns>;
  // biome-ignore lint/suspicious/noExplicitAny: an overload's implementation; the signatures above type the result
  select(...items: Array<string | ProjectItem | Column>): StreamFrame<any> {
    if (items.some((i) => i instanceof Column || (typeof i === 'string' && this.isMetadata_(i)))) {
      // a Column among the items: every item is an expression (a name is one too)
      const bad = items.find((i) => typeof i !== 'string' && !(i instanceof Column));
      if (bad !== undefined) {
        throw new InvalidQueryError(
          `select: ${JSON.stringify(bad)} cannot be mixed with expression columns in one select: write it as an expression too (window(...), explode(...)) or select in two steps`,
        );
      }
      return this.selectExpr(...(items as Array<string | Column>));
    }
    return this.project_(items as Array<string | ProjectItem>);
  }
  private project_(items: Array<string | ProjectItem>): StreamFrame<AnyColumns> {
    const cols = this.columnsNow_();
    const isColumn = (i: string): boolean => !isPath(i) || cols.some((c) => c.name === i);
    if (items.every((i): i is string => typeof i === 'string' && isColumn(i))) return this.add({ kind: 'select', columns: items });
    const expanded = items.flatMap((i): ProjectItem[] => {
      if (typeof i !== 'string') {
        if (i?.kind !== 'explode') return [i];
        // Spark's names for the generator's columns follow its input's type: fixed now
        const { kind, path, outer, position } = i;
        const names = i.names ?? explodeColumns(i, cols).map((c) => c.name);
        // a MAP whose keys are not strings: the rows read its keys back to their type
        const keyType = pathColumn(path, cols, 'explode').key;
        return [keyType === undefined ? { kind, path, outer, position, names } : { kind, path, outer, position, names, keyType }];
      }
      if (isColumn(i)) return [{ kind: 'column', as: i, column: i }];
      if (i.endsWith('.*')) {
        const path = parsePath(i.slice(0, -2), 'select');
        const found = pathColumn(path, cols, 'select');
        // (a window column is Spark's STRUCT<start, end>)
        const t = found.window ? WINDOW_STRUCT : found;
        if (t.type !== 'STRUCT') {
          throw new InvalidQueryError(
            `select: [INVALID_USAGE_OF_STAR_OR_REGEX] ${i} expands a STRUCT into its fields, but ${path.text} is ${ddlOf(t)}: name a STRUCT column or field`,
          );
        }
        return t.fields!.map(
          (f): ProjectItem => ({ kind: 'path', as: f.name, path: { ...path, steps: [...path.steps, { field: f.name }], text: `${path.text}.${f.name}` } }),
        );
      }
      const path = parsePath(i, 'select');
      return [{ kind: 'path', as: pathName(path), path }];
    });
    const stage: StatelessStage = { kind: 'project', items: expanded };
    columnsAfter(cols, [stage]); // checks the paths and the names now, not at plan()
    return this.add(stage);
  }
  /**
   * Adds (or replaces) column `name` with `fn`'s value for each row. `type` is a ColumnType or a
   * type in Spark's DDL (`'DECIMAL(21,2)'`, `'ARRAY<STRING>'`), which the output and later
   * stages follow; `fn` returns a value of that type as rows hold it (a DECIMAL as its canonical
   * text: see multiplyDecimal).
   */
  withColumn<N extends string, const T extends ColumnType | (string & {})>(
    name: N,
    type: T,
    fn: (row: InputRowOf<C>) => unknown,
  ): StreamFrame<Simplify<Omit<C, N> & { [P in N]: DdlTypeOf<T> }>>;
  /**
   * Adds (or replaces) column `name` with a Column's value (`F.upper(frame.col('country'))`): the
   * frame's column `name` has the Column's type (any type when the types do not know it).
   */
  withColumn<N extends string, T extends ColType>(name: N, expression: Column<T>): StreamFrame<Simplify<Omit<C, N> & { [P in N]: FrameType<T> }>>;
  /** Adds (or replaces) column `name` with a Spark SQL expression's value (`'amount * qty'`, `expr(...)`), typed as Spark types it. */
  withColumn<N extends string>(name: N, expression: string | Column): StreamFrame<AnyColumns>;
  // biome-ignore lint/suspicious/noExplicitAny: an overload's implementation; the signatures above type the result
  withColumn(name: string, type: string | Column, fn?: (row: any) => unknown): StreamFrame<any> {
    const cols = this.columnsNow_();
    const variant = cols.some((c) => c.name === name) ? undefined : cols.filter((c) => c.name.toLowerCase() === name.toLowerCase());
    if (variant?.length === 1) {
      // Spark's withColumns finds the column to replace with the analyzer's resolver, which ignores
      // case by default: withColumn("ID", ...) replaces id where it stands, under the new spelling
      const old = variant[0].name;
      const replaced = fn === undefined ? this.withColumn(old, type) : this.withColumn(old, type as string, fn);
      return replaced.select(...cols.map((c): string | ProjectItem => (c.name === old ? { kind: 'column', as: name, column: old } : c.name)));
    }
    if (fn === undefined) {
      const text = exprText(type, `withColumn(${JSON.stringify(name)}, ...)`);
      const compiled = compileExpression(text, this.columnsNow_(), name);
      if (compiled.generator) {
        throw new InvalidQueryError(
          `withColumn(${JSON.stringify(name)}, ${JSON.stringify(text)}): [UNSUPPORTED_GENERATOR.OUTSIDE_SELECT] a generator is only allowed in a select: selectExpr("*", "${text} AS ${name}")`,
        );
      }
      return this.add({ kind: 'withColumnExpr', name, text, compiled, extend: this.extender(name) });
    }
    if (typeof type !== 'string') throw new InvalidQueryError(`withColumn(${JSON.stringify(name)}, type, fn): the type is a DDL type such as 'DOUBLE'`);
    if (BARE_TYPES.has(type))
      return this.add({ kind: 'withColumn', name, type: type as ColumnType, fn: fn as (row: Row) => unknown, extend: this.extender(name) });
    const dataType = parseDdlType(type);
    return this.add({ kind: 'withColumn', name, type: dataType.type, dataType, fn: fn as (row: Row) => unknown, extend: this.extender(name) });
  }
  /** The stage's `{...row, [name]: value}` over this frame's columns (rows.ts rowExtender). */
  private extender(name: string): RowExtender {
    return rowExtender(
      this.columnsNow_().map((c) => c.name),
      name,
    );
  }
  /**
   * `join(table, on, type)` with a static table (Spark's stream-static join, stateless): each
   * batch's rows joined with the table's. `on`: a column both sides have (one output column), or
   * `{ left, right }`, or a list of them; equal means equal and non-null. `type`: 'inner'
   * (default), 'leftOuter' (unmatched rows with nulls), 'leftSemi' (matched rows, unchanged),
   * 'leftAnti' (unmatched rows, unchanged; a null key matches nothing); Spark's spellings
   * (left_outer, left_semi, left_anti, ...) too. Output columns: the string keys, the
   * stream's other columns, the table's other columns; another name on both sides is refused.
   * `condition`: a predicate list or a Spark SQL boolean expression, checked on each pair.
   */
  join<T extends FrameColumns, const O extends JoinOnArg<C, T> | readonly JoinOnArg<C, T>[], J extends string = 'inner'>(
    table: StaticTable<T>,
    on: O,
    type?: J,
    options?: { condition?: JoinConditionArg },
  ): StreamFrame<JoinedColumns<C, T, O, J>>;
  /**
   * `join(otherStream, on, type, { timeRange, condition })`: a stream-stream join (Spark's
   * symmetric hash join, stateful): both sides' rows are buffered in the state store until the
   * watermark says no future row can match them. `type`: 'inner' (default), 'leftOuter',
   * 'rightOuter', 'fullOuter', 'leftSemi'. `timeRange`: the typed form of Spark's
   * `expr("left BETWEEN right - INTERVAL 10 SECONDS AND right + INTERVAL 5 SECONDS")`, i.e.
   * `{ left: 'leftTime', right: 'rightTime', lower: '-10 seconds', upper: '5 seconds' }`; with a
   * watermark on both sides it lets the state be cleaned. `name`: the input's name in progress
   * records (default input2, input3, ...). `condition`: FORMAT-2's predicate list, or a Spark SQL
   * boolean expression (`"right.status = 'ok' AND amount <= right.limit"`, `expr(...)`; `left.` /
   * `right.` qualify a name) split at its top-level ANDs, each conjunct pushed into an input or
   * checked in the join as Spark does (docs/writing-queries.md, "Condition as an expression").
   */
  join<T extends FrameColumns, const O extends JoinOnArg<C, T> | readonly JoinOnArg<C, T>[], J extends string = 'inner'>(
    other: StreamFrame<T>,
    on: O,
    type?: J,
    options?: { timeRange?: TimeRangeArg; condition?: JoinConditionArg; name?: string },
  ): StreamFrame<StreamJoinedColumns<C, T, O, J>>;
  join(
    table: StaticTable<FrameColumns> | StreamFrame<FrameColumns>,
    on: JoinOnArg<FrameColumns, FrameColumns> | readonly JoinOnArg<FrameColumns, FrameColumns>[],
    type?: string,
    options: { timeRange?: TimeRangeArg; condition?: JoinConditionArg; name?: string } = {},
    // biome-ignore lint/suspicious/noExplicitAny: an overload's implementation; the signatures above type the result
  ): StreamFrame<any> {
    if (table instanceof StreamFrame) return this.streamJoin(table, on, type ?? 'inner', options);
    if (!table || typeof table !== 'object' || !table.spec) {
      throw new InvalidQueryError(
        'join: the right side must be a stream (readStream...) or a static table built with staticTable.s3(...), staticTable.dynamodb(...) or staticTable.rows(...)',
      );
    }
    if (options.timeRange) throw new InvalidQueryError('join: timeRange is for a stream-stream join; a stream-static join matches by its keys and condition');
    const joinType = staticJoinType(type ?? 'inner');
    const list = (Array.isArray(on) ? on : [on]) as ReadonlyArray<string | { left: string; right: string }>;
    if (list.length === 0) throw new InvalidQueryError('join: `on` is empty: name at least one key column, e.g. join(table, "userId")');
    const pairs: JoinKeyPair[] = list.map((k) =>
      typeof k === 'string' ? { left: k, right: k, using: true } : { left: k?.left, right: k?.right, using: false },
    );
    const id = `join${[...this.stages, ...this.operators.flatMap((o) => o.post)].filter((s) => s.kind === 'join').length}`;
    const last = this.operators[this.operators.length - 1];
    const before = last
      ? columnsAfter(outputColumns({ source: this.source, stages: this.stages, operators: this.operators }), last.post)
      : columnsAfter(this.source.schema.columns, this.stages);
    const cond = options.condition;
    let stage: JoinStage = { kind: 'join', id, table: table.spec, type: joinType, on: pairs, condition: Array.isArray(cond) ? cond : [] };
    if (isConditionExpr(cond)) {
      // a stream-static join checks every conjunct in the join (FORMAT-2): on the pair
      const text = exprText(cond, 'join condition');
      const pair = splitJoinCondition(text, before, table.spec.schema.columns).map((c) => ({ text: c.text, test: c.pairTest }));
      stage = { ...stage, conditionExpr: { text, left: [], right: [], pair, pushed: [] } };
    }
    columnsAfter(before, [stage]); // checks the keys and the names now, not at plan()
    // Spark infers isnotnull(key) on the stream side of an inner or semi equi-join and pushes it
    // below the watermark (InferFiltersFromConstraints): a null-key row is not even seen by it
    if (joinType === 'inner' || joinType === 'leftSemi') {
      const pushed = pushFilter(
        this as unknown as StreamFrame<FrameColumns>,
        [],
        pairs.map((k) => k.left),
      );
      return (pushed as unknown as StreamFrame<C>).add(stage);
    }
    return this.add(stage);
  }

  /** A stream-stream join with `other` (see join; stream-join-frame.ts builds it): the other stream becomes one of the plan's inputs. */
  private streamJoin(
    other: StreamFrame<FrameColumns>,
    on: unknown,
    type: string,
    options: { timeRange?: TimeRangeArg; condition?: JoinConditionArg; name?: string },
    declaredType?: StreamJoinType,
    // biome-ignore lint/suspicious/noExplicitAny: typed by join's overloads, which return it
  ): StreamFrame<any> {
    const left = this as unknown as StreamFrame<FrameColumns>;
    const joined = streamJoinFrame(left, other, on, type, options, declaredType);
    joined.joinArgs_ = { left, other, on, options };
    return joined;
  }
  /**
   * Groups by columns, nested fields (`customer.country`: the key column is named `country`, as
   * Spark names it) and window / session_window keys; `agg` then gives the aggregates.
   */
  groupBy<K extends GroupArg<C>[]>(...given: K): GroupedFrame<C, KeyColumns<C, K>> {
    // `_metadata.file_path` (a file source's hidden column, expr/input-file.ts) is an expression key
    const keys = given.map((k) => (typeof k === 'string' && this.isMetadata_(k) ? expr(k) : k)) as K;
    // an expression among the keys: the grouping is built with its aggregates (expr-agg.ts)
    if (keys.some((k) => k instanceof Column)) return new GroupedFrame(this as unknown as StreamFrame<FrameColumns>, [], [], keys);
    const named = keys.map((k) => (typeof k === 'string' ? col(k) : k)) as GroupKey[];
    const paths = named.filter((k): k is ColumnKey => k.kind === 'column' && isPath(k.name));
    if (paths.length === 0) return new GroupedFrame(this as unknown as StreamFrame<FrameColumns>, named);
    // a nested key becomes a column of its own (Spark's name for it) before the aggregation
    const cols = this.columnsNow_();
    let frame: StreamFrame<FrameColumns> = this as unknown as StreamFrame<FrameColumns>;
    const replaced = new Map<string, string>();
    const keyOf = new Map<GroupKey, GroupKey>();
    for (const k of paths) {
      if (cols.some((c) => c.name === k.name)) continue; // a column whose name has a dot, in backticks in the schema
      const path = parsePath(k.name, 'groupBy');
      const name = pathName(path);
      if (replaced.has(name) && replaced.get(name) !== path.text) {
        throw new InvalidQueryError(
          `groupBy: ${replaced.get(name)} and ${path.text} would both be named ${name}: group by one of them, or select them under other names first (select(renamed(...)))`,
        );
      }
      const stage: StatelessStage = { kind: 'extract', name, path, extend: frame.extender(name) };
      columnsAfter(cols, [stage]); // checks the path now
      if (!replaced.has(name)) frame = frame.add(stage);
      replaced.set(name, path.text);
      keyOf.set(k, { kind: 'column', name });
    }
    const shadowed = [...replaced.keys()].filter((n) => cols.some((c) => c.name === n));
    return new GroupedFrame(
      frame,
      named.map((k) => keyOf.get(k) ?? k),
      shadowed,
    );
  }
  /** Whether a name is (a field of) the hidden `_metadata` column: `_metadata...` when no column has the name. */
  private isMetadata_(name: string): boolean {
    const head = name.split('.')[0].toLowerCase();
    return head === METADATA_COLUMN && !this.columnsNow_().some((c) => c.name.toLowerCase() === head || c.name === name);
  }
  /** What a column operation (column-ops.ts) does, done to this frame. */
  private apply_<N extends FrameColumns>(step: ColumnStep): StreamFrame<N> {
    const frame: unknown =
      step.kind === 'same'
        ? this
        : step.kind === 'project'
          ? this.project_([...step.items])
          : step.kind === 'selectExpr'
            ? this.selectExpr(...step.items)
            : this.filter(step.text, step.label);
    return frame as StreamFrame<N>;
  }

  /**
   * Spark's `drop`: the frame without the named columns (top-level names, matched in any case as
   * Spark resolves them; a name the frame does not have is ignored, as in Spark). A kept column
   * keeps its watermark and window marks.
   */
  drop<const K extends readonly string[]>(...columns: K): StreamFrame<DroppedColumns<C, K[number]>> {
    return this.apply_(dropStep(this.columnsNow_(), columns));
  }

  /**
   * Spark's `withColumns`: adds or replaces several columns at once, each a Spark SQL expression
   * or a Column over this frame's columns (all read the columns as they are before the call, as in
   * Spark, so `{ a: 'b', b: 'a' }` swaps them). A replaced column (matched in any case) keeps its
   * place, a new one comes last; an untouched column keeps its marks.
   */
  withColumns(columns: Readonly<Record<string, string | Column>>): StreamFrame<AnyColumns> {
    return this.apply_(withColumnsStep(this.columnsNow_(), columns));
  }

  /**
   * Spark's `withColumnsRenamed`: several columns renamed at once (`{ old: 'new', ... }`), each as
   * withColumnRenamed does it.
   */
  withColumnsRenamed(renames: Readonly<Record<string, string>>): StreamFrame<AnyColumns> {
    if (renames === null || typeof renames !== 'object')
      throw new InvalidQueryError(`withColumnsRenamed(${JSON.stringify(renames)}): pass an object of names to new names, e.g. { amt: 'amount' }`);
    let frame = this as unknown as StreamFrame<AnyColumns>;
    for (const [existing, name] of Object.entries(renames)) frame = frame.withColumnRenamed(existing, name) as StreamFrame<AnyColumns>;
    return frame;
  }

  /**
   * Spark's `withColumnRenamed`: column `existing` (matched in any case) named `name`, in its place,
   * with its marks (a watermarked column stays watermarked); a frame without `existing` is returned
   * as it is, as in Spark. Renaming onto another column's name is refused: Spark would then hold
   * two columns of one name, which a row here cannot.
   */
  withColumnRenamed<const E extends string, const N extends string>(existing: E, name: N): StreamFrame<RenamedColumns<C, E, N>> {
    return this.apply_(renameStep(this.columnsNow_(), existing, name));
  }

  /**
   * Spark's `dropna` (`na.drop`): drops the rows with a null, or a NaN in a FLOAT or DOUBLE column,
   * among `subset` (default: every column): with `how` 'any' (the default) when any is, 'all' when
   * all are; `thresh` keeps the rows with at least that many such values that are neither (and
   * overrides `how`), as Spark's AtLeastNNonNulls counts them.
   */
  dropna(how: 'any' | 'all' = 'any', thresh?: number, subset?: readonly Names<C>[]): StreamFrame<C> {
    return this.apply_(dropnaStep(this.columnsNow_(), how, thresh, subset));
  }

  /**
   * Spark's `fillna` (`na.fill`): a value for the nulls of the columns of its kind among `subset`
   * (default: every column): a number fills the numeric columns (cast to each one's type, and a
   * FLOAT or DOUBLE column's NaN too), a string the STRING columns, a boolean the BOOLEAN ones. An
   * object of column names to values fills each named column with its value, whatever its kind.
   */
  fillna(value: number | string | boolean | Readonly<Record<string, number | string | boolean>>, subset?: readonly Names<C>[]): StreamFrame<C> {
    return this.apply_(fillnaStep(this.columnsNow_(), value, subset));
  }

  /**
   * Spark's `na.replace` (PySpark's `replace`): values replaced in the columns of their kind among
   * `subset` (default: every column): `replace(value, replacement, subset?)`, `replace([values],
   * [replacements] | replacement, subset?)`, or `replace({ value: replacement }, subset?)` (an
   * object's keys are strings; a Map matches numbers or booleans too). Numbers replace numbers in
   * every numeric column (each value cast to the column's type), strings strings in STRING columns,
   * booleans booleans in BOOLEAN ones; a replacement may be null.
   */
  replace(
    toReplace: ReplaceScalar | readonly ReplaceScalar[],
    value: ReplaceScalar | null | readonly (ReplaceScalar | null)[],
    subset?: readonly Names<C>[],
  ): StreamFrame<C>;
  replace(
    replacements: Readonly<Record<string, string | null>> | ReadonlyMap<ReplaceScalar, ReplaceScalar | null>,
    subset?: readonly Names<C>[],
  ): StreamFrame<C>;
  replace(toReplace: unknown, valueOrSubset?: unknown, subset?: readonly Names<C>[]): StreamFrame<C> {
    const mapping = toReplace instanceof Map || (toReplace !== null && typeof toReplace === 'object' && !Array.isArray(toReplace));
    if (mapping && (subset !== undefined || (valueOrSubset !== undefined && !Array.isArray(valueOrSubset))))
      throw new InvalidQueryError(
        `replace(replacements, ${JSON.stringify(valueOrSubset)}): with an object or Map of replacements, the second argument is the subset, a list of column names`,
      );
    const step = mapping
      ? replaceStep(this.columnsNow_(), toReplace, undefined, valueOrSubset as readonly string[] | undefined)
      : replaceStep(this.columnsNow_(), toReplace, valueOrSubset, subset);
    return this.apply_(step);
  }

  /**
   * Spark's `union` (`unionAll`): this stream's rows and `other`'s, matched by column position
   * (the output keeps this stream's names; each column takes the wider of its two types). Both
   * streams are read in every batch, each from its own offsets and with its own rate limits, and
   * what follows the union sees their rows as one stream: a watermark set on either counts toward
   * the query's (the minimum of the inputs' by default, as in Spark); a column keeps the event-time
   * mark this stream gave it. Union before any stateful operator (groupBy, dropDuplicates, a
   * stream-stream join, transformWithState).
   */
  union<O extends FrameColumns>(other: StreamFrame<O>): StreamFrame<UnionColumns<C, O>> {
    return this.union_(other as unknown as StreamFrame<FrameColumns>, false, false) as unknown as StreamFrame<UnionColumns<C, O>>;
  }

  /**
   * Spark's `unionByName`: as union, with the columns matched by name (in any case); with
   * `allowMissingColumns` a column one side lacks is NULL in its rows (the other stream's extra
   * columns come last).
   */
  unionByName<O extends FrameColumns>(other: StreamFrame<O>, allowMissingColumns = false): StreamFrame<AnyColumns> {
    return this.union_(other as unknown as StreamFrame<FrameColumns>, true, allowMissingColumns === true);
  }

  private union_(other: StreamFrame<FrameColumns>, byName: boolean, allowMissing: boolean): StreamFrame<AnyColumns> {
    const what = byName ? 'unionByName' : 'union';
    if (!(other instanceof StreamFrame)) throw new InvalidQueryError(`${what}: pass another stream (readStream...load()), not ${JSON.stringify(other)}`);
    if (this.operators.length > 0 || other.operators.length > 0) {
      throw new InvalidQueryError(
        `${what}: union the streams before any groupBy, dropDuplicates, stream-stream join or transformWithState: sluice merges the inputs' rows and runs the stateful operators over both, e.g. a.union(b).groupBy(...)`,
      );
    }
    if (other.inputs.length > 0)
      throw new InvalidQueryError(`${what}: the other stream has inputs of its own: union the streams one at a time from the left, e.g. a.union(b).union(c)`);
    if ([...this.stages, ...other.stages].some((st) => st.kind === 'limit'))
      throw new InvalidQueryError(`${what}: a limit on one side of a union is not supported: limit after the union, e.g. a.union(b).limit(n)`);
    const steps = unionSteps(this.columnsNow_(), other.columnsNow_(), byName, allowMissing);
    let left = this as unknown as StreamFrame<FrameColumns>;
    for (const step of steps.left) left = left.apply_(step);
    let right = other;
    for (const step of steps.right) right = right.apply_(step);
    const index = left.inputs.length;
    // the other stream's watermark stages get ids of their own (the checkpoint keeps each one's watermark by id)
    let wm = 0;
    const input: PlanInput = {
      name: `input${index + 2}`,
      source: right.source,
      stages: right.stages.map((st) => (st.kind === 'watermark' ? { ...st, id: `in${index}wm${wm++}` } : st)),
      operators: [],
      limits: sourceLimits(right.source),
      unionAt: left.stages.length,
    };
    const out = new StreamFrame<AnyColumns>(left.source, left.stages, [], [...left.inputs, input]);
    out.unionArgs_ = { left, right };
    return out;
  }

  /**
   * Spark's `orderBy` (`sort`): each batch's rows sorted by the keys, each a column's name, an
   * expression (a Column: `expr('total / n')`) or a sort key (`desc('n')`, `col('n').desc()`,
   * `{ key, desc, nullsFirst }`), ascending with nulls first unless it says otherwise. As in
   * Spark, only over an aggregation in complete mode, where each batch emits the whole result
   * table: the sink then takes each batch's rows in this order (rows with equal keys in the
   * aggregation's order).
   */
  orderBy(...keys: Array<Names<C> | Column | SortKey>): StreamFrame<C> {
    const last = this.operators.at(-1);
    if (last?.spec.kind !== 'aggregate') throw new InvalidQueryError(SORT_REFUSED);
    return this.add({ kind: 'sort', keys: sortKeys(this.columnsNow_(), keys) });
  }

  /** Spark's `sort`: orderBy. */
  sort(...keys: Array<Names<C> | Column | SortKey>): StreamFrame<C> {
    return this.orderBy(...keys);
  }

  /**
   * Spark's `limit`: in complete mode, after the aggregation, the first `n` rows of each batch's
   * result table (after orderBy: the top n); in append mode the first `n` rows to reach it over all
   * the query's batches, its count kept in state (Spark's StreamingGlobalLimitExec; the plan makes
   * it an operator). Spark refuses it in update mode.
   */
  limit(n: number): StreamFrame<C> {
    if (!Number.isSafeInteger(n) || n < 0) throw new InvalidQueryError(`limit(${JSON.stringify(n)}): the number of rows is a whole number, 0 or more`);
    return this.add({ kind: 'limit', n });
  }

  /** Spark's `distinct`: dropDuplicates over every column. */
  distinct(): StreamFrame<C> {
    return this.dropDuplicates();
  }

  /** Spark's `rollup(...columns)`: the aggregation by the columns, then by each prefix of them, then of every row (query/grouping-sets.ts). */
  rollup(...columns: Array<Names<C>>): GroupingSetsFrame {
    return new GroupingSetsFrame(this as unknown as StreamFrame<FrameColumns>, columns, rollupSets(columns.length), 'rollup');
  }

  /** Spark's `cube(...columns)`: the aggregation by every subset of the columns (query/grouping-sets.ts). */
  cube(...columns: Array<Names<C>>): GroupingSetsFrame {
    return new GroupingSetsFrame(this as unknown as StreamFrame<FrameColumns>, columns, cubeSets(columns.length), 'cube');
  }

  /** Spark 4's `groupingSets(sets, ...columns)`: the aggregation by each set, a list of the columns (`[['a', 'b'], ['a'], []]`). */
  groupingSets(sets: ReadonlyArray<ReadonlyArray<Names<C>>>, ...columns: Array<Names<C>>): GroupingSetsFrame {
    return new GroupingSetsFrame(this as unknown as StreamFrame<FrameColumns>, columns, setsOf(sets, columns), 'groupingSets');
  }

  /** Spark's `agg` on a frame: `groupBy().agg(...)`, one group of every row (a global aggregation). */
  agg<A extends AggArg<C>[]>(...aggs: A) {
    return this.groupBy().agg(...aggs);
  }

  /** Spark's `toDF(...names)`: every column renamed, in order (as many names as columns), each keeping its type and marks. */
  toDF(...names: string[]): StreamFrame<AnyColumns> {
    const cols = this.columnsNow_();
    if (names.length !== cols.length || names.some((n) => typeof n !== 'string' || n === ''))
      throw new InvalidQueryError(
        `toDF: the number of columns doesn't match: old column names (${cols.length}): ${cols.map((c) => c.name).join(', ')}; new column names (${names.length}): ${names.join(', ')}: give one non-empty name per column`,
      );
    const taken = new Set<string>();
    for (const n of names) {
      if (taken.has(n.toLowerCase())) throw new InvalidQueryError(`toDF: the name ${JSON.stringify(n)} is given twice: a row holds one column of a name`);
      taken.add(n.toLowerCase());
    }
    return this.project_(cols.map((c, i) => (c.name === names[i] ? c.name : { kind: 'column' as const, as: names[i], column: c.name })));
  }

  /**
   * Spark's `unpivot(ids, values, variableColumnName, valueColumnName)` (3.4): the id columns, then
   * one row per value column (`values` null: every column but the ids) with its name and its value,
   * the values in their common type, nulls kept (query/unpivot.ts).
   */
  unpivot(
    ids: string | readonly string[],
    values: string | readonly string[] | null,
    variableColumnName: string,
    valueColumnName: string,
  ): StreamFrame<AnyColumns> {
    const list = (v: string | readonly string[]) => (typeof v === 'string' ? [v] : [...v]);
    return this.selectExpr(...unpivotItems(this.columnsNow_(), list(ids), values === null ? null : list(values), variableColumnName, valueColumnName));
  }

  /** Spark's `melt`: `unpivot` under its pandas name. */
  melt(
    ids: string | readonly string[],
    values: string | readonly string[] | null,
    variableColumnName: string,
    valueColumnName: string,
  ): StreamFrame<AnyColumns> {
    return this.unpivot(ids, values, variableColumnName, valueColumnName);
  }

  /** Spark's `transform(f)`: `f(this)`, for chaining a function of your own that takes and returns a frame. */
  transform<R>(f: (frame: this) => R): R {
    if (typeof f !== 'function') throw new InvalidQueryError(`transform: pass a function of the frame, e.g. transform((f) => f.filter('amount > 0'))`);
    return f(this);
  }

  /** Spark's `columns`: the names of the frame's columns, in order. */
  get columns(): string[] {
    return this.columnsNow_().map((c) => c.name);
  }

  /** PySpark's `dtypes`: each column's name and type, in order, the type as Spark's simpleString writes it (`int`, `decimal(10,2)`, `array<struct<a:int>>`). */
  get dtypes(): Array<[string, string]> {
    // (a window column's type says TIMESTAMP; its values are Spark's {start, end} struct)
    return this.columnsNow_().map((c) => [c.name, hiveTypeOf(c.window ? WINDOW_STRUCT : c)]);
  }

  /** Spark's `na` functions: `na.drop(...)`, `na.fill(...)` and `na.replace(...)` are dropna, fillna and replace. */
  get na(): NaFunctions<C> {
    return { drop: this.dropna.bind(this), fill: this.fillna.bind(this), replace: this.replace.bind(this) };
  }

  dropDuplicates(columns?: Array<Names<C>>): StreamFrame<C> {
    return this.stateful_({ kind: 'dedup', columns: columns?.length ? columns : null, withinWatermark: false });
  }
  dropDuplicatesWithinWatermark(columns?: Array<Names<C>>): StreamFrame<C> {
    return this.stateful_({ kind: 'dedup', columns: columns?.length ? columns : null, withinWatermark: true });
  }
  /** @internal */
  stateful_<N extends FrameColumns = C>(spec: StatefulSpec): StreamFrame<N> {
    return new StreamFrame<N>(this.source, this.stages, [...this.operators, { spec, post: [] }], this.inputs);
  }
  get writeStream(): DataStreamWriter<C> {
    return new DataStreamWriter<C>(this as unknown as StreamFrame<FrameColumns>);
  }
}
