/**
 * Deletes "total" (count-renamed.ts's value state) in init and declares it again, in the same
 * init, as a list state. Spark's driver-side handle deletes nothing while it collects the
 * declarations, and checks them against the variables the query recorded, so the kind change is
 * refused (STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE) despite the delete.
 * Input `value STRING` grouped by `value`; output `key STRING, count INT`.
 */
import { type ListState, StatefulProcessor, type StatefulProcessorHandle } from 'sluice';

type Key = { value: string };
type Out = { key: string; count: number };

export default class TotalDeletedAsList extends StatefulProcessor<Key, Key, Out> {
  private total!: ListState<number>;

  init(handle: StatefulProcessorHandle): void {
    handle.deleteIfExists('total');
    this.total = handle.getListState<number>('total');
  }

  handleInputRows(key: Key): Out[] {
    this.total.appendValue(1);
    return [{ key: key.value, count: [...this.total.get()].length }];
  }
}
