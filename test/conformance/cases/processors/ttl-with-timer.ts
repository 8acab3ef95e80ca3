/**
 * A value state "last" with a TTL of 10 s and a processing-time timer: a key's rows store the
 * row count and register a timer 5 s later; when the timer fires, the handler emits what "last"
 * holds (or "none" once it expired) and stores "timer" in it, which restamps its TTL.
 * Input `key STRING` grouped by `key`; output `key STRING, seen STRING`.
 */
import {
  type ExpiredTimerInfo,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type TimerValues,
  type ValueState,
} from 'sluice';

type Key = { key: string };
type Out = { key: string; seen: string };

export default class TtlWithTimer extends StatefulProcessor<Key, Key, Out> {
  private last!: ValueState<string>;

  init(handle: StatefulProcessorHandle): void {
    this.last = handle.getValueState<string>('last', { ttlDurationMs: 10_000 });
  }

  handleInputRows(_key: Key, rows: IterableIterator<Key>, timerValues: TimerValues): Out[] {
    this.last.update(String([...rows].length));
    this.getHandle().registerTimer(timerValues.getCurrentProcessingTimeInMs() + 5_000);
    return [];
  }

  handleExpiredTimer(key: Key, _timerValues: TimerValues, _info: ExpiredTimerInfo): Out[] {
    const seen = this.last.get() ?? 'none';
    this.last.update('timer');
    return [{ key: key.key, seen }];
  }
}
