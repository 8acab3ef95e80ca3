/**
 * Several processing-time timers per key, driven by the input: action reg registers a timer at
 * `t`, del deletes the timer at `t`, list emits the key's timers. A fired timer emits its expiry
 * and the key's timers as listTimers() gives them in the handler; for key "b", a timer before
 * 40 s registers another 20 s later. Every emitted row carries its place among the key's rows of
 * the batch (`seq`), which pins the order of the key's calls (a key's calls all go to one
 * processor instance; keys may be spread over several, one per state partition, as in Spark).
 * Input `key STRING, action STRING, t LONG` grouped by `key`;
 * output `key STRING, expiry LONG, seq INT, timers STRING`.
 */
import {
  type ExpiredTimerInfo,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type TimerValues,
} from 'sluice';

type Key = { key: string };
type In = { key: string; action: string; t: number | null };
type Out = { key: string; expiry: number | null; seq: number; timers: string };

export default class MultiTimers extends StatefulProcessor<Key, In, Out> {
  private readonly seq = new Map<string, number>();

  init(_handle: StatefulProcessorHandle): void {}

  private next(key: Key): number {
    const n = (this.seq.get(key.key) ?? 0) + 1;
    this.seq.set(key.key, n);
    return n;
  }

  private timers(): string {
    return [...this.getHandle().listTimers()].join(',');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>, _timerValues: TimerValues): Out[] {
    const out: Out[] = [];
    for (const r of rows) {
      if (r.action === 'reg') this.getHandle().registerTimer(r.t ?? 0);
      else if (r.action === 'del') this.getHandle().deleteTimer(r.t ?? 0);
      else if (r.action === 'list') out.push({ key: key.key, expiry: null, seq: this.next(key), timers: this.timers() });
    }
    return out;
  }

  handleExpiredTimer(key: Key, _timerValues: TimerValues, info: ExpiredTimerInfo): Out[] {
    const expiry = info.getExpiryTimeInMs();
    const row = { key: key.key, expiry, seq: this.next(key), timers: this.timers() };
    if (key.key === 'b' && expiry < 40_000) this.getHandle().registerTimer(expiry + 20_000);
    return [row];
  }
}
