/**
 * The count of timer-in-none-mode.ts under a new name: init deletes the state variable "count"
 * (every key's) and counts in "total" from 1 again.
 * Input `value STRING` grouped by `value`; output `key STRING, count INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { value: string };
type Out = { key: string; count: number };

export default class CountRenamed extends StatefulProcessor<Key, Key, Out> {
  private total!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    handle.deleteIfExists('count');
    this.total = handle.getValueState<number>('total');
  }

  handleInputRows(key: Key): Out[] {
    const n = (this.total.get() ?? 0) + 1;
    this.total.update(n);
    return [{ key: key.value, count: n }];
  }
}
