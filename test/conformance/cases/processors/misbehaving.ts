/**
 * A running count that misbehaves for some keys: "boom" throws an Error from handleInputRows,
 * "declare" declares a state variable outside init.
 * Input `key STRING` grouped by `key`; output `key STRING, n INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { key: string };
type Out = { key: string; n: number };

export default class Misbehaving extends StatefulProcessor<Key, Key, Out> {
  private count!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState<number>('count');
  }

  handleInputRows(key: Key): Out[] {
    const n = (this.count.get() ?? 0) + 1;
    this.count.update(n);
    if (key.key === 'boom') throw new Error('boom key');
    if (key.key === 'declare') this.getHandle().getValueState<number>('late');
    return [{ key: key.key, n }];
  }
}
