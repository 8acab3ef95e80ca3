/**
 * Deduplication (Spark's StreamingDeduplicateExec and StreamingDeduplicateWithinWatermarkExec):
 * dropDuplicates(columns) emits the first row of each key, and keeps the key in the state for
 * good, or until the watermark passes its event time when that column is in the key;
 * dropDuplicatesWithinWatermark(columns) keeps each key until event time + the watermark delay.
 */
import type { Json, OperatorStateSpec, Row, StateChange, StateEntry, StateStore } from '../ports';
import type { StatefulSpec } from '../plan/types';
import { watermarkTimeOf } from '../plan/columns';
import { ceilMillis, type Micros } from '../timestamps';
import { type BatchMeta, isExpired, isLate } from './batch';
import type { Accumulator, OperatorConfig, OperatorOutput, StatefulOperator } from './operator';
import { byId, stateId, statePartition } from './state-id';

type DedupSpec = Extract<StatefulSpec, { kind: 'dedup' }>;

/** The first row of a key in this batch, and when its state entry expires (null: never). */
interface FirstRow {
  readonly row: Row;
  readonly evictAt: number | null;
}

export class DedupOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly columns: string[];
  /** The watermarked input column, if any: lateness follows it. */
  private readonly eventColumn: string | undefined;
  private readonly delayMs: number;
  /** Eviction time is the event-time column of the key itself (dropDuplicates with it in the key). */
  private readonly keyTimed: boolean;
  /** Whether keys expire: within the watermark, or timed by their own event-time column. */
  private readonly evicts: boolean;

  /** The query's state partitions (StateKey.partition). */
  private readonly partitions: number;

  constructor(
    private readonly dedup: DedupSpec,
    cfg: OperatorConfig,
  ) {
    this.partitions = cfg.statePartitions ?? 1;
    this.columns = dedup.columns ? [...dedup.columns] : cfg.inputColumns.map((c) => c.name);
    // The event-time column among the keys when there is one (it times the keys' eviction, as
    // Spark's state watermark predicate takes it from the keys), else the input's first.
    const marked = [...cfg.watermarks.entries()].filter(([c]) => cfg.inputColumns.some((x) => x.name === c));
    const first = marked.find(([c]) => this.columns.includes(c)) ?? marked[0];
    this.eventColumn = first?.[0];
    this.delayMs = first?.[1] ?? 0;
    this.keyTimed = !dedup.withinWatermark && this.eventColumn !== undefined && this.columns.includes(this.eventColumn);
    this.evicts = this.eventColumn !== undefined && (this.keyTimed || dedup.withinWatermark);
    this.spec = {
      operatorId: cfg.operatorId,
      fixedEviction: !dedup.withinWatermark,
      evictionGranularityMs: Math.max(1000, this.delayMs),
    };
    // Spark's BaseStreamingDeduplicateExec.shouldRunAnotherBatch asks for its input watermark, which
    // follows the plan (FORMAT-2), not its columns: a withWatermark upstream whose column a select
    // dropped still moves it, and a no-data batch still runs (it evicts nothing then)
    this.runsNoDataBatches = cfg.watermarked ?? this.eventColumn !== undefined;
  }

  /** The event time of a row (undefined without a watermarked column). */
  private eventTime(row: Row): Micros | null | undefined {
    // (a window column is compared with the watermark by its end)
    return this.eventColumn === undefined ? undefined : watermarkTimeOf(row[this.eventColumn]);
  }

  /** Whether a row is late: its event time is at or before the previous batch's watermark. */
  private isRowLate(row: Row, batch: BatchMeta): boolean {
    return isLate(this.eventTime(row), batch);
  }

  /**
   * When the state entry of a row's key expires, in ms: event time (+ delay within the watermark),
   * or never. The event time is in µs: ceilMillis keeps "t <= W × 1000" exact (batch.ts).
   */
  private evictAtOf(row: Row): number | null {
    const t = this.eventTime(row);
    // (within the watermark, Spark reads a null event time as 0 (UnsafeRow.getLong of a null
    // field): the key expires at epoch + delay; a null key time never expires)
    if (this.dedup.withinWatermark && t === null) return this.delayMs;
    if (t === null || t === undefined) return null;
    if (this.dedup.withinWatermark) return ceilMillis(t) + this.delayMs;
    return this.keyTimed ? ceilMillis(t) : null;
  }

  /** Whether a key expires in this batch: its eviction time is at or before the batch's watermark. */
  private isKeyExpired(evictAt: number | null, batch: BatchMeta): boolean {
    return this.evicts && isExpired(evictAt, batch);
  }

  begin(batch: BatchMeta): Accumulator {
    const firsts = new Map<string, FirstRow>();
    const late: Row[] = [];
    return {
      add: (rows) => this.accumulate(batch, rows, firsts, late),
      // a read task's first rows (beginPartials): the first of each key over the splits, in split order
      addPartials: (entries) => this.accumulate(batch, entries as unknown as Row[], firsts, late),
      finish: (state) => this.finish(batch, firsts, late, state),
    };
  }

  /**
   * A read task's share of the batch (a partitioned run): the first row of each key in its rows,
   * late rows dropped, by state partition; the partition task keeps the first over the splits.
   */
  beginPartials(batch: BatchMeta): { add(rows: readonly Row[]): void; take(): { partials: Map<number, Json[]>; late: Row[] } } {
    const firsts = new Map<string, FirstRow>();
    const late: Row[] = [];
    return {
      add: (rows) => this.accumulate(batch, rows, firsts, late),
      take: () => {
        const partials = new Map<number, Json[]>();
        for (const [id, first] of firsts) {
          const p = statePartition(id, this.partitions);
          let list = partials.get(p);
          if (!list) partials.set(p, (list = []));
          list.push(first.row as unknown as Json);
        }
        return { partials, late };
      },
    };
  }

  /** The partition of a row's key (the dedup columns' values). */
  partitionOf(row: Row): number {
    return statePartition(stateId(this.columns.map((c) => (row[c] ?? null) as Json)), this.partitions);
  }

  private accumulate(batch: BatchMeta, rows: readonly Row[], firsts: Map<string, FirstRow>, late: Row[]): void {
    for (const row of rows) {
      if (this.isRowLate(row, batch)) {
        late.push(row);
        continue;
      }
      const id = stateId(this.columns.map((c) => (row[c] ?? null) as Json));
      if (!firsts.has(id)) firsts.set(id, { row, evictAt: this.evictAtOf(row) });
    }
  }

  private async finish(batch: BatchMeta, firsts: Map<string, FirstRow>, late: Row[], state: StateStore): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    // (within the watermark, eviction is not fixed: the key's eviction time comes from its stored value)
    const keys = [...firsts].map(([id, first]) => ({
      id,
      evictAt: this.dedup.withinWatermark ? null : first.evictAt,
      partition: statePartition(id, this.partitions),
    }));
    const stored = firsts.size ? await state.get(this.spec, keys, version) : new Map<string, StateEntry>();
    const out: Row[] = [];
    const changes: StateChange[] = [];
    let delta = 0;
    for (const [id, first] of firsts) {
      if (stored.has(id)) continue;
      out.push(first.row);
      if (this.isKeyExpired(first.evictAt, batch)) continue; // emitted, and already past the watermark
      changes.push({ key: { id, evictAt: first.evictAt, partition: statePartition(id, this.partitions) }, value: first.evictAt ?? 1 });
      delta++;
    }
    if (this.evicts) {
      for (const e of await state.expired(this.spec, batch.evictWm, version)) {
        changes.push({ key: e.key, value: null });
        delta--;
      }
    }
    return { rows: out, changes: changes.sort(byId), late, stateRowsDelta: delta };
  }
}
