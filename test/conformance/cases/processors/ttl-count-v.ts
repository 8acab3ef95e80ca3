/**
 * A count per key in the value state "v" with a TTL of 10 s (time mode processingTime): every
 * call adds one to the unexpired count (0 when it expired) and emits it.
 * Input `key STRING` grouped by `key`; output `key STRING, n INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { key: string };
type Out = { key: string; n: number };

export default class TtlCountV extends StatefulProcessor<Key, Key, Out> {
  private v!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.v = handle.getValueState<number>('v', { ttlDurationMs: 10_000 });
  }

  handleInputRows(key: Key): Out[] {
    const n = (this.v.get() ?? 0) + 1;
    this.v.update(n);
    return [{ key: key.key, n }];
  }
}
