/**
 * A count per key in the value state "w", without TTL; it does not declare ttl-count-v.ts's "v",
 * so a query that switches to it keeps "v"'s values as they are (no TTL cleanup of "v").
 * Input `key STRING` grouped by `key`; output `key STRING, n INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { key: string };
type Out = { key: string; n: number };

export default class CountW extends StatefulProcessor<Key, Key, Out> {
  private w!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.w = handle.getValueState<number>('w');
  }

  handleInputRows(key: Key): Out[] {
    const n = (this.w.get() ?? 0) + 1;
    this.w.update(n);
    return [{ key: key.key, n }];
  }
}
