/**
 * What FORMAT-4 adds to a step's result: the timers registered after the run, read from the
 * state the run committed (the transformWithState operator's entries: tws/handle.ts StoredKey).
 */
import type { QueryPlan } from '../engine/plan/types';
import { operatorChain } from '../engine/plan/chain';
import { createOperator } from '../engine/operators/registry';
import type { StateStore } from '../engine/ports';
import type { StoredKey } from '../engine/tws/handle';
import { VARS_ID } from '../engine/operators/transform-with-state';

/** The timers held in the state at `version` (the last committed batch), over all keys and partitions. */
export async function timersAfter(plan: QueryPlan, state: StateStore, version: number): Promise<number> {
  if (version < 0) return 0;
  let n = 0;
  for (const chained of operatorChain(plan).operators) {
    if (chained.spec.kind !== 'transformWithState') continue;
    const op = createOperator(chained.spec, {
      operatorId: chained.operatorId,
      outputMode: plan.outputMode,
      inputColumns: chained.inputColumns,
      watermarks: chained.marks,
      statePartitions: plan.statePartitions,
    });
    for (const e of await state.all(op.spec, version)) if (e.key.id !== VARS_ID) n += (e.value as unknown as StoredKey).t.length;
  }
  return n;
}
