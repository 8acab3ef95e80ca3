/**
 * An event-time timer at 15 s for every key that has rows; when it fires, the key is emitted with
 * an event time 10 s after the timer and the watermark the batch runs with. The processor never
 * sees an event time: its input is the key alone.
 * Input `k STRING` grouped by `k`; output `k STRING, at TIMESTAMP, wm LONG`.
 */
import { type ExpiredTimerInfo, StatefulProcessor, type StatefulProcessorHandle, type TimerValues } from 'sluice';

type Key = { k: string };
type Out = { k: string; at: number; wm: number };

export default class FixedEventTimer extends StatefulProcessor<Key, Key, Out> {
  init(_handle: StatefulProcessorHandle): void {}

  handleInputRows(_key: Key, _rows: IterableIterator<Key>): Out[] {
    this.getHandle().registerTimer(15_000);
    return [];
  }

  handleExpiredTimer(key: Key, timerValues: TimerValues, info: ExpiredTimerInfo): Out[] {
    return [{ k: key.k, at: info.getExpiryTimeInMs() + 10_000, wm: timerValues.getCurrentWatermarkInMs() }];
  }
}
