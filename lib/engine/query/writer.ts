/**
 * `frame.writeStream`: the query's output mode, trigger, name, late-row target, state partitions,
 * idle timeout and watermark policy, checked once, and `plan()`, which builds the query plan.
 */
import { InvalidOptionError } from '../errors';
import { parseDurationMs } from '../duration';
import type { OutputMode, QueryPlan } from '../plan/types';
import { MAX_STATE_PARTITIONS, positiveIntOption, toPlan } from '../plan/to-plan';
import type { AnyColumns, FrameColumns, OutputRowOf } from './types';
import type { StreamFrame } from './frame';

export class DataStreamWriter<C extends FrameColumns = AnyColumns> {
  private mode: OutputMode = 'append';
  private trig: 'availableNow' | 'once' = 'availableNow';
  private name = 'query';
  private late: 'drop' | 'dead-letter' = 'drop';
  private partitions = 1;
  private idleTimeoutMs: number | undefined;
  private policy: 'min' | 'max' = 'min';

  constructor(private readonly frame: StreamFrame<FrameColumns>) {}

  /**
   * `option('statePartitions', P)`: the state is split into P partitions (1 to 256, default 1) by a
   * hash of the grouping key, window left out; each partition's state and versions are independent.
   * P is fixed when the checkpoint is created: a restart with another P is refused.
   *
   * `option('idleTimeout', '30 minutes')` (sluice's, off by default as in Spark): when a run finds
   * no new data and none has come for at least this long, the watermark advances by the wall
   * clock that passed since the last input and a no-data batch emits the windows it closes.
   * Only for a query with a watermark and state it can evict (not complete mode): plan() refuses
   * it elsewhere, where it could change nothing.
   *
   * `option('multipleWatermarkPolicy', 'max')`: with several inputs (each with its withWatermark),
   * the global watermark follows the fastest input instead of the slowest (Spark's
   * spark.sql.streaming.multipleWatermarkPolicy); the policy is part of the checkpoint's shape.
   */
  option(key: string, value: string | number | boolean): this {
    if (key === 'multipleWatermarkPolicy' || key === 'spark.sql.streaming.multipleWatermarkPolicy') {
      const v = String(value).toLowerCase();
      if (v !== 'min' && v !== 'max') {
        throw new InvalidOptionError(
          `option multipleWatermarkPolicy=${JSON.stringify(value)} is not 'min' or 'max': min (Spark's default) waits for the slowest input, max follows the fastest and drops more of the others' rows as late`,
        );
      }
      this.policy = v;
      return this;
    }
    if (key === 'idleTimeout') {
      if (typeof value !== 'string') {
        throw new InvalidOptionError(
          `option idleTimeout=${JSON.stringify(value)} is not a duration: write it as Spark writes intervals, e.g. .option('idleTimeout', '30 minutes')`,
        );
      }
      this.idleTimeoutMs = parseDurationMs(value, 'option idleTimeout');
      return this;
    }
    if (key !== 'statePartitions') {
      throw new InvalidOptionError(
        `writeStream option ${JSON.stringify(key)} is not known: the writer takes 'statePartitions', 'idleTimeout' and 'multipleWatermarkPolicy'; source options (maxFilesPerTrigger, ...) go on readStream`,
      );
    }
    const n = positiveIntOption(key, value);
    if (n > MAX_STATE_PARTITIONS) {
      throw new InvalidOptionError(`option statePartitions=${n} is above ${MAX_STATE_PARTITIONS}: one partition holds many keys, so use 256 or fewer`);
    }
    this.partitions = n;
    return this;
  }

  /**
   * Rows dropped by the watermark: 'drop' (Spark: counted, then gone) or 'dead-letter' (also
   * written, with the reason and the watermark that rejected them, to the dead-letter location,
   * exactly once per batch, so a reconciliation job can read them).
   */
  lateRows(target: 'drop' | 'dead-letter'): this {
    if (target !== 'drop' && target !== 'dead-letter') {
      throw new InvalidOptionError(`lateRows ${JSON.stringify(target)} is not 'drop' or 'dead-letter'`);
    }
    this.late = target;
    return this;
  }

  outputMode(mode: string): this {
    if (mode !== 'append' && mode !== 'update' && mode !== 'complete') {
      throw new InvalidOptionError(`output mode ${JSON.stringify(mode)} is not one of append, update, complete`);
    }
    this.mode = mode;
    return this;
  }
  /** `{ availableNow: true }`, or `{ once: true }` (deprecated alias, as in Spark). */
  trigger(t: { availableNow?: boolean; once?: boolean; processingTime?: string; continuous?: string }): this {
    if (t.availableNow) this.trig = 'availableNow';
    else if (t.once) this.trig = 'once';
    else {
      throw new InvalidOptionError(
        `trigger ${JSON.stringify(t)} is not supported: sluice runs on a schedule, so use { availableNow: true } (and let the schedule set the interval)`,
      );
    }
    return this;
  }
  queryName(name: string): this {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(name)) {
      throw new InvalidOptionError(`query name ${JSON.stringify(name)} must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`);
    }
    this.name = name;
    return this;
  }
  /** The checked plan. Throws InvalidQueryError with Spark's rule and the fix. */
  plan(): QueryPlan<OutputRowOf<C>> {
    const plan = {
      ...toPlan(this.frame, this.mode, this.trig, this.name),
      lateRows: this.late,
      statePartitions: this.partitions,
      ...(this.policy === 'max' ? { watermarkPolicy: 'max' as const } : {}),
    };
    if (this.idleTimeoutMs === undefined) return plan as QueryPlan<OutputRowOf<C>>;
    checkIdleTimeout(plan);
    return { ...plan, idleTimeoutMs: this.idleTimeoutMs } as QueryPlan<OutputRowOf<C>>;
  }
}

/** idleTimeout moves the watermark of a no-data batch: refused where that could change nothing. */
function checkIdleTimeout(plan: QueryPlan): void {
  const why = !plan.stateful
    ? 'this query is stateless, so it has no windows to close'
    : !plan.stages.some((s) => s.kind === 'watermark')
      ? 'this query has no withWatermark, so nothing waits for a watermark'
      : plan.outputMode === 'complete'
        ? 'complete mode never evicts, so a later watermark changes nothing'
        : null;
  if (why !== null) {
    throw new InvalidOptionError(`option idleTimeout advances the watermark of an idle source, but ${why}: remove the option`);
  }
}
