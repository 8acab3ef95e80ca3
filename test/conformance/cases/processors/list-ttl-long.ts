/**
 * Spark's ListStateTTLProcessor (TransformWithListStateTTLSuite), keeping the actions a processor
 * can see: a list state "listState" with a TTL of 3 minutes (list-ttl-short.ts: 15 s); "put"
 * replaces the list with the row's value, "append" appends it, "get" emits every unexpired
 * element, "clear" removes the list. (Spark's other actions read internal TTL indexes.)
 * Input `key STRING, action STRING, value INT` grouped by `key`; output `key STRING, value INT`.
 */
import { type ListState, StatefulProcessor, type StatefulProcessorHandle, type TimerValues } from 'sluice';

type Key = { key: string };
type In = { key: string; action: string; value: number | null };
type Out = { key: string; value: number };

export default class ListTtlLong extends StatefulProcessor<Key, In, Out> {
  protected ttlMs = 180_000;
  private list!: ListState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState<number>('listState', { ttlDurationMs: this.ttlMs });
  }

  handleInputRows(key: Key, rows: IterableIterator<In>, _timerValues: TimerValues): Out[] {
    const out: Out[] = [];
    for (const r of rows) {
      if (r.action === 'get') for (const v of this.list.get()) out.push({ key: key.key, value: v });
      else if (r.action === 'put') this.list.put([r.value ?? 0]);
      else if (r.action === 'append') this.list.appendValue(r.value ?? 0);
      else if (r.action === 'clear') this.list.clear();
    }
    return out;
  }
}
