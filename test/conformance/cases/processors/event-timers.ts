/**
 * Event-time timers driven by the input, and what the batch's TimerValues say: every row with a
 * non-null `t` registers a timer at `t` for its key. Each handleInputRows call emits kind "rows"
 * with the key's number of rows; each fired timer emits kind "timer" with its expiry; both carry
 * the batch's watermark and processing time. The key "boom" throws from handleExpiredTimer.
 * Input `k STRING, ts TIMESTAMP, t LONG` grouped by `k`;
 * output `k STRING, kind STRING, n LONG, wm LONG, now LONG`.
 */
import { type ExpiredTimerInfo, StatefulProcessor, type StatefulProcessorHandle, type TimerValues } from 'sluice';

type Key = { k: string };
type In = { k: string; ts: number; t: number | null };
type Out = { k: string; kind: string; n: number; wm: number; now: number };

export default class EventTimers extends StatefulProcessor<Key, In, Out> {
  init(_handle: StatefulProcessorHandle): void {}

  handleInputRows(key: Key, rows: IterableIterator<In>, timerValues: TimerValues): Out[] {
    let n = 0;
    for (const r of rows) {
      n++;
      if (r.t !== null) this.getHandle().registerTimer(r.t);
    }
    return [{ k: key.k, kind: 'rows', n, wm: timerValues.getCurrentWatermarkInMs(), now: timerValues.getCurrentProcessingTimeInMs() }];
  }

  handleExpiredTimer(key: Key, timerValues: TimerValues, info: ExpiredTimerInfo): Out[] {
    if (key.k === 'boom') throw new Error(`timer ${info.getExpiryTimeInMs()} of boom`);
    return [
      { k: key.k, kind: 'timer', n: info.getExpiryTimeInMs(), wm: timerValues.getCurrentWatermarkInMs(), now: timerValues.getCurrentProcessingTimeInMs() },
    ];
  }
}
