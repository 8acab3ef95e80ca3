/**
 * Spark's limit in append mode (StreamingGlobalLimitExec): the first `n` rows to reach it over all
 * the query's batches pass, in the order they come; then none. Its state is one entry, the count
 * passed so far, read at version N−1 and written at N with the batch's other changes, so a replay
 * passes the same rows. It reads no watermark (Spark's does not) and has nothing to do in a batch
 * without data.
 */
import type { OperatorStateSpec, Row, StateChange, StateKey, StateStore } from '../ports';
import type { BatchMeta } from './batch';
import type { Accumulator, OperatorConfig, OperatorOutput, StatefulOperator } from './operator';
import { stateId, statePartition } from './state-id';

/** The id of the one state entry: the empty grouping key, as Spark's limit keys its count. */
const COUNT_ID = stateId([]);

export class LimitOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches = false;
  private readonly key: StateKey;

  constructor(
    private readonly n: number,
    cfg: OperatorConfig,
  ) {
    this.spec = { operatorId: cfg.operatorId, fixedEviction: true, evictionGranularityMs: 1000 };
    const partitions = cfg.statePartitions ?? 1;
    this.key = partitions <= 1 ? { id: COUNT_ID, evictAt: null } : { id: COUNT_ID, evictAt: null, partition: statePartition(COUNT_ID, partitions) };
  }

  begin(batch: BatchMeta): Accumulator {
    // no more than n rows can pass in any batch: the rest are never held
    const kept: Row[] = [];
    return {
      add: (rows) => {
        for (const r of rows) {
          if (kept.length >= this.n) return;
          kept.push(r);
        }
      },
      finish: (state) => this.finish(batch, kept, state),
    };
  }

  private async finish(batch: BatchMeta, kept: Row[], state: StateStore): Promise<OperatorOutput> {
    if (kept.length === 0) return { rows: [], changes: [], late: [], stateRowsDelta: 0 };
    const stored = (await state.get(this.spec, [this.key], batch.batchId - 1)).get(COUNT_ID);
    const before = stored === undefined ? 0 : (stored.value as number);
    const rows = kept.slice(0, Math.max(0, this.n - before));
    if (rows.length === 0) return { rows, changes: [], late: [], stateRowsDelta: 0 };
    const changes: StateChange[] = [{ key: this.key, value: before + rows.length }];
    return { rows, changes, late: [], stateRowsDelta: stored === undefined ? 1 : 0 };
  }
}
