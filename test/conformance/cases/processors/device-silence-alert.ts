/**
 * An alert when a device stops reporting, on event time: each device's latest reading time in a
 * value state and one event-time timer 60 s after it; when the watermark passes the timer, the
 * device is reported silent (with its last reading) and its state cleared.
 * Input `device STRING, ts TIMESTAMP` grouped by `device`; output `device STRING, lastSeen TIMESTAMP`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type TimerValues, type ValueState } from 'sluice';

type Key = { device: string };
type In = { device: string; ts: number };
type Out = { device: string; lastSeen: number };

const SILENCE_MS = 60_000;

export default class DeviceSilenceAlert extends StatefulProcessor<Key, In, Out> {
  private lastSeen!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.lastSeen = handle.getValueState<number>('lastSeen');
  }

  handleInputRows(_key: Key, rows: IterableIterator<In>): Out[] {
    const before = this.lastSeen.get();
    let latest = before ?? Number.NEGATIVE_INFINITY;
    for (const r of rows) latest = Math.max(latest, r.ts);
    if (before !== undefined && latest === before) return [];
    const handle = this.getHandle();
    for (const t of handle.listTimers()) handle.deleteTimer(t);
    handle.registerTimer(latest + SILENCE_MS);
    this.lastSeen.update(latest);
    return [];
  }

  handleExpiredTimer(key: Key, _timerValues: TimerValues): Out[] {
    const seen = this.lastSeen.get();
    this.lastSeen.clear();
    return seen === undefined ? [] : [{ device: key.device, lastSeen: seen }];
  }
}
