/**
 * Declares "total", a value state of count-renamed.ts, as a list state: a key that holds a value
 * under that name fails the batch (STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE).
 * Input `value STRING` grouped by `value`; output `key STRING, count INT`.
 */
import { type ListState, StatefulProcessor, type StatefulProcessorHandle } from 'sluice';

type Key = { value: string };
type Out = { key: string; count: number };

export default class CountAsList extends StatefulProcessor<Key, Key, Out> {
  private total!: ListState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.total = handle.getListState<number>('total');
  }

  handleInputRows(key: Key): Out[] {
    this.total.appendValue(1);
    return [{ key: key.value, count: [...this.total.get()].length }];
  }
}
