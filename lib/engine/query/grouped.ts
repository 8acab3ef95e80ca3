/**
 * `frame.groupBy(...)`: the grouped frame whose `agg`, `count` and `transformWithState` add the
 * stateful operator to the frame (query/frame.ts).
 */
import { InvalidQueryError } from '../errors';
import { parseSchema } from '../schema';
import type { ProcessorClass, ProcessorOutputMode, StatefulProcessor, TimeMode } from '../tws/api';
import type { AggSpec, ColumnKey, GroupKey } from '../plan/types';
import { AggBuilder, avg, count, max, min, sum } from './functions';
import { unknownColumn } from '../plan/columns';
import { isNumeric } from '../expr/types';
import { resolveName } from '../resolve-name';
import type { Column } from './column';
import { aggregation, usesExpressions } from './expr-agg';
import type { AggArg, AggColumns, AnyColumns, FrameColumns, GroupArg, ProcessorRowOf, SchemaColumns, Simplify } from './types';
import type { StreamFrame } from './frame';

/**
 * A grouped frame: C are the input columns, K the grouping keys' output columns. `agg` checks
 * the aggregates' columns against C and returns a frame of K and the aliases.
 */
export class GroupedFrame<C extends FrameColumns = AnyColumns, K extends FrameColumns = AnyColumns> {
  constructor(
    private readonly frame: StreamFrame<FrameColumns>,
    private readonly keys: GroupKey[],
    /** Columns a nested key's column replaced (`customer.country` over a column `country`): no aggregate may read them. */
    private readonly shadowed: readonly string[] = [],
    /** The keys as given, when some are expressions (then `keys` is empty and agg builds them). */
    private readonly exprKeys: ReadonlyArray<string | GroupKey | Column> | null = null,
  ) {}
  agg<A extends AggArg<C>[]>(...aggs: A): StreamFrame<Simplify<K & AggColumns<C, A>>> {
    if (this.exprKeys || usesExpressions([], aggs)) {
      const builders = aggs.map((a) =>
        a instanceof AggBuilder
          ? a
          : new AggBuilder(a.fn, a.column, a.as, a.by, a.percentage, a.accuracy, a.ignoreNulls, {
              ...(a.delimiter === undefined ? {} : { delimiter: a.delimiter }),
              ...(a.order === undefined ? {} : { order: a.order }),
            }),
      );
      const plan = aggregation(this.frame.columnsNow_(), this.exprKeys ?? this.keys, builders);
      const out = (plan.items ? this.frame.selectExpr(...plan.items) : this.frame).groupBy(...(plan.keys as GroupArg<AnyColumns>[])).agg(...plan.aggs);
      // biome-ignore lint/suspicious/noExplicitAny: the columns of a grouping by expressions are known only at run time
      return (plan.renames ? out.select(...plan.renames) : out) as any;
    }
    const specs = aggs.map((a): AggSpec => (a instanceof AggBuilder ? a.toSpec() : { ...a }));
    for (const a of specs) {
      const shadowedRead = [a.column, a.by].find((c) => c !== undefined && this.shadowed.includes(c));
      if (shadowedRead !== undefined) {
        throw new InvalidQueryError(
          `agg: ${a.fn}(${a.column}) reads column ${shadowedRead}, but a nested grouping key has that name too: select the key under another name first (select(renamed(...)))`,
        );
      }
    }
    return this.frame.stateful_({ kind: 'aggregate', keys: this.keys, aggs: specs });
  }
  /** Spark's GroupedData.sum(...columns): each named numeric column's sum, named `sum(x)`; every numeric column when none is named. */
  sum(...columns: Array<keyof C & string>): StreamFrame<AnyColumns> {
    return this.numeric('sum', columns);
  }
  /** Spark's GroupedData.avg: each numeric column's mean, named `avg(x)`. */
  avg(...columns: Array<keyof C & string>): StreamFrame<AnyColumns> {
    return this.numeric('avg', columns);
  }
  /** Spark's GroupedData.mean: avg (its columns are named `avg(x)`, as Spark names them). */
  mean(...columns: Array<keyof C & string>): StreamFrame<AnyColumns> {
    return this.numeric('avg', columns);
  }
  /** Spark's GroupedData.max: each numeric column's greatest value, named `max(x)`. */
  max(...columns: Array<keyof C & string>): StreamFrame<AnyColumns> {
    return this.numeric('max', columns);
  }
  /** Spark's GroupedData.min: each numeric column's least value, named `min(x)`. */
  min(...columns: Array<keyof C & string>): StreamFrame<AnyColumns> {
    return this.numeric('min', columns);
  }

  /** Spark's aggregateNumericColumns: `fn` over the named columns, which must be numeric, or over every numeric column. */
  private numeric(fn: 'sum' | 'avg' | 'max' | 'min', columns: readonly string[]): StreamFrame<AnyColumns> {
    const cols = this.frame.columnsNow_();
    const names = columns.map((name) => {
      const c = resolveName(cols, String(name));
      if (c === undefined) throw unknownColumn(String(name), cols, `groupBy(...).${fn}`);
      if (!isNumeric(c) || c.window)
        throw new InvalidQueryError(`groupBy(...).${fn}: "${c.name}" is not a numeric column. Aggregation function can only be applied on a numeric column.`);
      return c.name;
    });
    const all = names.length > 0 ? names : cols.filter((c) => isNumeric(c) && !c.window).map((c) => c.name);
    if (all.length === 0)
      throw new InvalidQueryError(`groupBy(...).${fn}(): the frame has no numeric column (its columns: ${cols.map((c) => c.name).join(', ')})`);
    const make = { sum, avg, max, min }[fn];
    // biome-ignore lint/suspicious/noExplicitAny: the builders' names are known only at run time
    return this.agg(...(all.map((c) => make(c)) as any)) as unknown as StreamFrame<AnyColumns>;
  }

  count(): StreamFrame<Simplify<K & { count: 'LONG' }>> {
    // biome-ignore lint/suspicious/noExplicitAny: a grouping by expressions has columns known only at run time
    if (this.exprKeys) return this.agg(...([count().alias('count')] as any)) as any;
    return this.frame.stateful_({ kind: 'aggregate', keys: this.keys, aggs: [count().alias('count').toSpec()] });
  }

  /**
   * Spark 4's transformWithState (FORMAT-4, docs/transform-with-state.md): the processor (an
   * instance or its class; the engine makes a new instance of its class for every batch) handles
   * each key's rows, its state variables and its timers, and emits rows of `outputSchema`.
   * `eventTimeColumn` (a TIMESTAMP column of the output) makes the time mode eventTime and that
   * column the event-time column after it. The key, input and output rows of the processor follow
   * from the frame's columns and the output schema (ProcessorRowOf).
   */
  transformWithState<D extends string>(
    processor:
      | StatefulProcessor<ProcessorRowOf<K>, ProcessorRowOf<C>, ProcessorRowOf<SchemaColumns<D>>>
      | (new () => StatefulProcessor<ProcessorRowOf<K>, ProcessorRowOf<C>, ProcessorRowOf<SchemaColumns<D>>>),
    options: { readonly timeMode?: TimeMode; readonly outputMode?: ProcessorOutputMode; readonly outputSchema: D; readonly eventTimeColumn?: string },
  ): StreamFrame<SchemaColumns<D>> {
    if (this.exprKeys || this.keys.some((k) => k.kind !== 'column'))
      throw new InvalidQueryError(
        'transformWithState groups by columns: call groupBy with column names (select an expression or a window into a column first)',
      );
    const cls = (typeof processor === 'function' ? processor : processor?.constructor) as ProcessorClass | undefined;
    if (typeof cls !== 'function' || typeof cls.prototype?.handleInputRows !== 'function' || typeof cls.prototype?.init !== 'function')
      throw new InvalidQueryError(
        `transformWithState takes a StatefulProcessor (an instance or its class, with init and handleInputRows), not ${String(processor)}: extend StatefulProcessor from 'sluice'`,
      );
    const et = options.eventTimeColumn ?? null;
    const timeMode = options.timeMode ?? (et !== null ? 'eventTime' : undefined);
    if (timeMode !== 'none' && timeMode !== 'processingTime' && timeMode !== 'eventTime')
      throw new InvalidQueryError(
        `[STATEFUL_PROCESSOR_UNKNOWN_TIME_MODE] Unknown time mode ${JSON.stringify(timeMode)}: use 'none', 'processingTime' or 'eventTime'`,
      );
    if (et !== null && timeMode !== 'eventTime')
      throw new InvalidQueryError(
        `transformWithState with eventTimeColumn ${et} runs in time mode eventTime, not ${timeMode}: leave timeMode out or set it to 'eventTime'`,
      );
    if (options.outputMode !== undefined && options.outputMode !== 'append' && options.outputMode !== 'update')
      throw new InvalidQueryError(
        `[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: ${String(options.outputMode)}. This output mode is not supported for no streaming aggregations on streaming DataFrames/DataSets: use append or update`,
      );
    if (typeof options.outputSchema !== 'string')
      throw new InvalidQueryError('transformWithState needs outputSchema, the DDL of the rows the processor emits, e.g. "key STRING, count LONG"');
    return this.frame.stateful_({
      kind: 'transformWithState',
      keys: this.keys.map((k) => (k as ColumnKey).name),
      processor: cls,
      processorName: cls.name || 'processor',
      timeMode,
      outputSchema: parseSchema(options.outputSchema),
      eventTimeColumn: et,
      ...(options.outputMode !== undefined ? { outputMode: options.outputMode } : {}),
    });
  }
}
