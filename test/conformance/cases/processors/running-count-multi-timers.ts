/**
 * Spark's RunningCountStatefulProcessorWithMultipleTimers (TransformWithStateSuite): handleInputRows
 * adds the key's number of rows to its count and, when the key has no timer, registers three
 * processing-time timers 5 s, 10 s and 15 s after the batch timestamp; it emits nothing. Each
 * fired timer emits the count and clears it when listTimers() lists only one timer (the one being
 * handled, the key's last).
 * Input `value STRING` grouped by `value`; output `key STRING, count STRING`.
 */
import { type ExpiredTimerInfo, StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from 'sluice';

type Key = { value: string };
type In = { value: string };
type Out = { key: string; count: string };

export default class RunningCountWithMultipleTimers extends StatefulProcessor<Key, In, Out> {
  private countState!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.countState = handle.getValueState<number>('countState');
  }

  handleInputRows(_key: Key, rows: IterableIterator<In>, timerValues: TimerValues): Out[] {
    const count = (this.countState.get() ?? 0) + [...rows].length;
    this.countState.update(count);
    const handle = this.getHandle();
    if ([...handle.listTimers()].length === 0) {
      const now = timerValues.getCurrentProcessingTimeInMs();
      handle.registerTimer(now + 5000);
      handle.registerTimer(now + 10000);
      handle.registerTimer(now + 15000);
    }
    return [];
  }

  handleExpiredTimer(key: Key, _timerValues: TimerValues, _info: ExpiredTimerInfo): Out[] {
    const count = this.countState.get() ?? 0;
    if ([...this.getHandle().listTimers()].length === 1) this.countState.clear();
    return [{ key: key.value, count: String(count) }];
  }
}
