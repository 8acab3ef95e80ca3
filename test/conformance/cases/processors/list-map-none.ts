/**
 * List and map state without time: each key's values in arrival order (ListState) and how often
 * each value came (MapState); a row "reset" clears both. Every call emits the key's list joined
 * with commas and the number of distinct values.
 * Input `key STRING, value STRING` grouped by `key`; output `key STRING, events STRING, distinct INT`.
 */
import { type ListState, type MapState, StatefulProcessor, type StatefulProcessorHandle } from 'sluice';

type Key = { key: string };
type In = { key: string; value: string };
type Out = { key: string; events: string; distinct: number };

export default class ListMapNone extends StatefulProcessor<Key, In, Out> {
  private events!: ListState<string>;
  private counts!: MapState<string, number>;

  init(handle: StatefulProcessorHandle): void {
    this.events = handle.getListState<string>('events');
    this.counts = handle.getMapState<string, number>('counts');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>): Out[] {
    for (const r of rows) {
      if (r.value === 'reset') {
        this.events.clear();
        this.counts.clear();
        continue;
      }
      this.events.appendValue(r.value);
      this.counts.updateValue(r.value, (this.counts.getValue(r.value) ?? 0) + 1);
    }
    return [{ key: key.key, events: [...this.events.get()].join(','), distinct: [...this.counts.keys()].length }];
  }
}
