/**
 * No state: every call emits the key, its number of rows, and the batch's TimerValues (the
 * watermark and the processing time).
 * Input `k STRING, ts TIMESTAMP` grouped by `k`; output `k STRING, n INT, wm LONG, now LONG`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type TimerValues } from 'sluice';

type Key = { k: string };
type In = { k: string; ts: number };
type Out = { k: string; n: number; wm: number; now: number };

export default class TimeEcho extends StatefulProcessor<Key, In, Out> {
  init(_handle: StatefulProcessorHandle): void {}

  handleInputRows(key: Key, rows: IterableIterator<In>, timerValues: TimerValues): Out[] {
    return [{ k: key.k, n: [...rows].length, wm: timerValues.getCurrentWatermarkInMs(), now: timerValues.getCurrentProcessingTimeInMs() }];
  }
}
