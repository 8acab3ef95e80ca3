/**
 * List and map state with a TTL of 10 s each (time mode processingTime). Each input row is an
 * action on the key's list "items" or map "seen": append (appendValue), appendList and putList
 * (the value split at commas), map (updateValue(value, batch timestamp)), unmap (removeKey),
 * dump (emits every unexpired list element as kind "list" and every unexpired map key as kind
 * "map") and exists (emits "list,map" exists() as kind "exists").
 * Input `key STRING, action STRING, value STRING` grouped by `key`;
 * output `key STRING, kind STRING, value STRING`.
 */
import {
  type ListState,
  type MapState,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type TimerValues,
} from 'sluice';

type Key = { key: string };
type In = { key: string; action: string; value: string | null };
type Out = { key: string; kind: string; value: string };

const TTL = { ttlDurationMs: 10_000 };

export default class ListMapTtl extends StatefulProcessor<Key, In, Out> {
  private items!: ListState<string>;
  private seen!: MapState<string, number>;

  init(handle: StatefulProcessorHandle): void {
    this.items = handle.getListState<string>('items', TTL);
    this.seen = handle.getMapState<string, number>('seen', TTL);
  }

  handleInputRows(key: Key, rows: IterableIterator<In>, timerValues: TimerValues): Out[] {
    const out: Out[] = [];
    for (const r of rows) {
      const v = r.value ?? '';
      switch (r.action) {
        case 'append':
          this.items.appendValue(v);
          break;
        case 'appendList':
          this.items.appendList(v.split(','));
          break;
        case 'putList':
          this.items.put(v.split(','));
          break;
        case 'map':
          this.seen.updateValue(v, timerValues.getCurrentProcessingTimeInMs());
          break;
        case 'unmap':
          this.seen.removeKey(v);
          break;
        case 'dump':
          for (const e of this.items.get()) out.push({ key: key.key, kind: 'list', value: e });
          for (const k of this.seen.keys()) out.push({ key: key.key, kind: 'map', value: k });
          break;
        case 'exists':
          out.push({ key: key.key, kind: 'exists', value: `${this.items.exists()},${this.seen.exists()}` });
          break;
      }
    }
    return out;
  }
}
