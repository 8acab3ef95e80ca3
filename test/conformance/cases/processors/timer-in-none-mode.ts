/**
 * A running count per key that registers a timer for the key "timer": in time mode none that
 * call fails the batch (STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE).
 * Input `value STRING` grouped by `value`; output `key STRING, count INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { value: string };
type Out = { key: string; count: number };

export default class TimerInNoneMode extends StatefulProcessor<Key, Key, Out> {
  private count!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState<number>('count');
  }

  handleInputRows(key: Key): Out[] {
    if (key.value === 'timer') this.getHandle().registerTimer(1000);
    const n = (this.count.get() ?? 0) + 1;
    this.count.update(n);
    return [{ key: key.value, count: n }];
  }
}
