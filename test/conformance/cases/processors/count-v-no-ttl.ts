/**
 * ttl-count-v.ts's count in the value state "v", declared without its TTL: a query whose "v"
 * was stored with a TTL refuses it (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE).
 * Input `key STRING` grouped by `key`; output `key STRING, n INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { key: string };
type Out = { key: string; n: number };

export default class CountVNoTtl extends StatefulProcessor<Key, Key, Out> {
  private v!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.v = handle.getValueState<number>('v');
  }

  handleInputRows(key: Key): Out[] {
    const n = (this.v.get() ?? 0) + 1;
    this.v.update(n);
    return [{ key: key.key, n }];
  }
}
