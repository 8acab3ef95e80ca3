/**
 * A query made ready to run, the same for every scheduler: its operators built from the plan's
 * operator chain, its sources with their rate limits, its output columns, its stateful shape
 * and fingerprint, and the static tables of a run. Nothing here decides a batch or has an effect.
 */
import { createHash } from 'node:crypto';
import { SluiceError } from '../errors';
import { JoinTables, planStages } from '../join';
import type { StatefulOperator } from '../operators/operator';
import { createOperator } from '../operators/registry';
import type { Clock, InputFile, Json, OutputColumnType, ReadOptions, Row, SinkContext, Source } from '../ports';
import { systemClock } from '../ports';
import { type ChainedOperator, operatorChain, outputColumns } from '../plan/chain';
import { type ColumnInfo, columnsAfter } from '../plan/columns';
import { statefulShape } from '../plan/shape';
import type { OrderStage, QueryPlan } from '../plan/types';
import { applyOrderStage, isOrderStage } from '../order';
import type { DataType } from '../schema';
import { applyStages, applyStagesAsync, hasJoin, mergeEventTimes, type RowErrorHandler, type StageResult } from '../rows';
import { WatermarkPolicy } from '../watermark';
import type { ExecutorDeps } from './types';

/** A stateful operator of the plan, built, with what it receives (its columns, its event-time columns) and the stages after it. */
export interface RunningOperator {
  readonly op: StatefulOperator;
  readonly chained: ChainedOperator;
}

export class QueryRuntime {
  readonly plan: QueryPlan;
  /** The stateful operators in plan order (op0, op1, ...). */
  readonly operators: readonly RunningOperator[];
  readonly outColumns: readonly ColumnInfo[];
  readonly clock: Clock;
  /** The processing time of new batches, when it is not `clock`'s (ExecutorDeps.processingClock). */
  readonly processingClock: Clock | null;
  /**
   * The checkpoint's query id and this run's id, once the scheduler knows them (a processor's
   * QueryInfo, through each operator's BatchMeta); set at the start of every run or task.
   */
  runIds: { readonly queryId: string; readonly runId: string } | null = null;
  readonly shape: Json;
  readonly fingerprint: string;
  /** The fingerprint of this plan's shape while TIMESTAMP state was in ms, when it differs from `fingerprint`. */
  readonly legacyFingerprint: string | null;
  /** The fingerprint of this plan's shape while a stream-stream join's state was kept per key, when it differs from `fingerprint`. */
  readonly perKeyJoinFingerprint: string | null;
  readonly log: (event: Record<string, unknown>) => void;
  readonly watermarks: WatermarkPolicy;
  readonly readOptions: ReadOptions;
  /** The query's sources: the first, then those of plan.inputs; each with its own rate limits. */
  readonly sources: readonly Source[];
  readonly limits: readonly QueryPlan['limits'][];
  /** RunReport.warnings: the same for every run of the plan. */
  readonly warnings: readonly string[];
  /** The run's static tables when the plan joins one (its stages then run on the async path). */
  private joins: JoinTables | null = null;

  constructor(readonly deps: ExecutorDeps) {
    this.plan = deps.plan;
    this.clock = deps.clock ?? systemClock;
    this.processingClock = deps.processingClock ?? null;
    this.log = deps.log ?? (() => undefined);
    this.shape = statefulShape(this.plan);
    this.fingerprint = shapeFingerprint(this.shape);
    // the fingerprint the same plan had when TIMESTAMP state was in ms (recovery.ts says so when a checkpoint has it)
    const legacy = shapeFingerprint(statefulShape(this.plan, true));
    this.legacyFingerprint = legacy === this.fingerprint ? null : legacy;
    // the fingerprint the same plan had when a stream-stream join kept its state per key (recovery.ts says so)
    const perKey = shapeFingerprint(statefulShape(this.plan, false, true));
    this.perKeyJoinFingerprint = perKey === this.fingerprint ? null : perKey;
    this.watermarks = new WatermarkPolicy(this.plan);
    // each operator with its own input columns and event-time columns (its marks)
    // (a dropDuplicates' marks are those Spark's column pruning leaves it: plan/pruning.ts)
    const chain = operatorChain(this.plan).operators;
    this.operators = chain.map((chained) => ({
      chained,
      op: createOperator(chained.spec, {
        operatorId: chained.operatorId,
        outputMode: this.plan.outputMode,
        inputColumns: chained.inputColumns,
        watermarks: chained.marks,
        watermarked: chained.watermarkOffsetMs !== null,
        statePartitions: this.plan.statePartitions,
        join: chained.join,
      }),
    }));
    this.outColumns = columnsAfter(outputColumns(this.plan), this.plan.post);
    this.readOptions = { columns: columnsRead(this.plan, deps.lateRows !== undefined) };
    JoinTables.check(this.plan, deps.staticTables);
    const inputs = this.plan.inputs ?? [];
    if ((deps.inputSources?.length ?? 0) !== inputs.length) {
      throw new SluiceError(
        `query ${this.plan.name} reads ${inputs.length} other stream(s), joined or unioned, (${inputs.map((i) => i.name).join(', ') || 'none'}) but the executor was given ${deps.inputSources?.length ?? 0} input source(s): pass one Source per input in inputSources`,
        { retriable: false },
      );
    }
    this.sources = [deps.source, ...(deps.inputSources ?? [])];
    this.limits = [this.plan.limits, ...inputs.map((i) => i.limits)];
    this.warnings = stateWarnings(
      this.plan,
      this.operators.map((o) => o.chained),
    );
  }

  /** Opens the static tables at the start of every run (or task): a new run sees each table as it is now. */
  openStaticTables(): void {
    if (hasJoin(planStages(this.plan))) this.joins = new JoinTables(this.deps.staticTables);
  }

  /**
   * Stateless stages over a chunk: the sync path, or the async one when the plan joins a static
   * table. A sort or limit stage (after a complete-mode aggregation, whose output comes here whole)
   * takes the rows the stages before it gave all at once.
   */
  runStages(stages: QueryPlan['stages'], rows: readonly Row[], onRowError?: RowErrorHandler, file?: InputFile): StageResult | Promise<StageResult> {
    const cut = stages.findIndex(isOrderStage);
    if (cut >= 0) return this.runOrdered(stages, cut, rows, onRowError, file);
    return this.joins && hasJoin(stages) ? applyStagesAsync(stages, rows, this.joins, onRowError, file) : applyStages(stages, rows, onRowError, file);
  }

  /** The stages before stages[cut], then the sort or limit over all their rows, then the stages after it. */
  private async runOrdered(
    stages: QueryPlan['stages'],
    cut: number,
    rows: readonly Row[],
    onRowError?: RowErrorHandler,
    file?: InputFile,
  ): Promise<StageResult> {
    const before = await this.runStages(stages.slice(0, cut), rows, onRowError, file);
    const after = await this.runStages(stages.slice(cut + 1), applyOrderStage(stages[cut] as OrderStage, before.rows), onRowError, file);
    mergeEventTimes(after, before);
    return after;
  }

  /** Whether some operator can emit or evict in a batch without data. */
  get runsNoDataBatches(): boolean {
    return this.operators.some((o) => o.op.runsNoDataBatches);
  }

  /** What the sink is told of the output: its columns and their types, the grouping keys. */
  get sinkContext(): Omit<SinkContext, 'queryId'> {
    const stateful = this.operators.length ? this.operators[this.operators.length - 1].chained.spec : null;
    const keyColumns =
      stateful && stateful.kind === 'aggregate'
        ? stateful.keys.map((k) => (k.kind === 'column' ? k.name : k.kind === 'window' ? 'window' : 'session_window'))
        : [];
    const columnTypes = outputColumnTypes(this.plan);
    const ordered = this.plan.post.some((s) => s.kind === 'sort');
    return {
      queryName: this.plan.name,
      outputMode: this.plan.outputMode,
      columns: this.outColumns.map((c) => c.name),
      columnTypes,
      keyColumns,
      ...(ordered ? { ordered } : {}),
    };
  }
}

/**
 * The type of each column a plan emits (after its post stages), by name: the window and session
 * keys are WINDOW (their rows hold `{start, end}`), unless a later stage replaced the column.
 */
export function outputColumnTypes(plan: QueryPlan): Record<string, OutputColumnType> {
  const out: Record<string, OutputColumnType> = {};
  for (const c of columnsAfter(outputColumns(plan), plan.post)) out[c.name] = c.window ? 'WINDOW' : dataTypeOf(c);
  return out;
}

/** A column's type without its name and plan marks (what a sink or the CDK is told). */
function dataTypeOf(c: DataType): DataType {
  const { type, bits, binary32, precision, scale, element, value, fields } = c;
  return {
    type,
    ...(bits !== undefined ? { bits } : {}),
    ...(binary32 ? { binary32 } : {}),
    ...(precision !== undefined ? { precision, scale } : {}),
    ...(element ? { element } : {}),
    ...(value ? { value } : {}),
    ...(fields ? { fields } : {}),
  };
}

/**
 * The source columns a plan reads, when they are known: an aggregation behind watermarks only
 * reads its keys, its aggregated columns (and max_by's ordering ones) and its watermark columns. Undefined (all columns) when
 * a stage runs user code over whole rows (filter, withColumn), for deduplication and stateless
 * queries (they emit input rows), and when late rows are written out whole.
 */
export function columnsRead(plan: QueryPlan, writesLateRows: boolean): string[] | undefined {
  const stateful = plan.stateful;
  if (writesLateRows || !stateful || stateful.kind !== 'aggregate') return undefined;
  const cols = new Set<string>();
  for (const stage of plan.stages) {
    if (stage.kind !== 'watermark') return undefined;
    cols.add(stage.column);
  }
  for (const k of stateful.keys) cols.add(k.kind === 'column' ? k.name : k.column);
  for (const a of stateful.aggs) {
    if (a.column !== undefined && a.column !== '*') cols.add(a.column);
    if (a.by !== undefined) cols.add(a.by);
  }
  return plan.source.schema.columns.map((c) => c.name).filter((c) => cols.has(c));
}

export function shapeFingerprint(shape: Json): string {
  return createHash('sha256').update(JSON.stringify(shape)).digest('hex').slice(0, 32);
}

/**
 * The run report's warnings about state that nothing removes: each side of a stream-stream join
 * without a state watermark (no event-time key and no usable time range: FORMAT-2 "State
 * watermarks") keeps every row it buffers.
 */
export function stateWarnings(plan: QueryPlan, chain: readonly ChainedOperator[]): string[] {
  const out: string[] = [];
  for (const o of chain) {
    if (o.spec.kind !== 'streamJoin' || !o.join) continue;
    const input = plan.inputs?.[o.spec.input]?.name ?? `input ${o.spec.input + 2}`;
    const sides = [o.join.leftRemoval === null ? 'left' : null, o.join.rightRemoval === null ? `right (${input})` : null].filter(
      (x): x is string => x !== null,
    );
    if (!sides.length) continue;
    out.push(
      `the stream-stream join ${o.operatorId} with ${input} keeps every row of its ${sides.join(' and ')} side${sides.length > 1 ? 's' : ''} in state, so its state grows forever: ` +
        'put withWatermark on both inputs and join on an event-time column (a window) or add a timeRange between the two event-time columns with both bounds',
    );
  }
  return out;
}
