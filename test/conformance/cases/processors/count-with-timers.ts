/**
 * A running count per key (value state "count") with processing-time timers driven by the input:
 * every row adds one to the count and, when its `t` is not null, registers a timer at `t`. Each
 * handleInputRows call emits kind "rows" with the count after its rows and the key's timers; each
 * fired timer emits kind "timer" with the count it reads (null when none), its expiry and the
 * key's timers as listTimers() gives them in the handler, then clears the count; a timer that
 * finds no count and expires before 100 s registers another 100 s later.
 * Input `key STRING, t LONG` grouped by `key`;
 * output `key STRING, kind STRING, count INT, at LONG, timers STRING`.
 */
import { type ExpiredTimerInfo, StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from 'sluice';

type Key = { key: string };
type In = { key: string; t: number | null };
type Out = { key: string; kind: string; count: number | null; at: number | null; timers: string };

export default class CountWithTimers extends StatefulProcessor<Key, In, Out> {
  private count!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState<number>('count');
  }

  private timers(): string {
    return [...this.getHandle().listTimers()].join(',');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>, _timerValues: TimerValues): Out[] {
    let n = this.count.get() ?? 0;
    for (const r of rows) {
      n++;
      if (r.t !== null) this.getHandle().registerTimer(r.t);
    }
    this.count.update(n);
    return [{ key: key.key, kind: 'rows', count: n, at: null, timers: this.timers() }];
  }

  handleExpiredTimer(key: Key, _timerValues: TimerValues, info: ExpiredTimerInfo): Out[] {
    const expiry = info.getExpiryTimeInMs();
    const count = this.count.get() ?? null;
    const row = { key: key.key, kind: 'timer', count, at: expiry, timers: this.timers() };
    this.count.clear();
    if (count === null && expiry < 100_000) this.getHandle().registerTimer(expiry + 100_000);
    return [row];
  }
}
