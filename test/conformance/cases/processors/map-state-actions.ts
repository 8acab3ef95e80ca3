/**
 * Spark's TestMapStateProcessor (TransformWithMapStateSuite): a map state "sessionState" of
 * string keys and values, one action per input row on the key's map, with the row's (k, v) as
 * Spark's value tuple. exists emits (key, "exists", exists()); getValue emits (key, k, value or
 * null); containsKey emits (key, k, "true"/"false"); updateValue, removeKey and clear change the
 * map; iterator emits (key, k, v) per entry, keys (key, k, row's v) per key, values (key, row's k,
 * v) per value. A null k reaches the map as a null user key.
 * Input `key STRING, action STRING, k STRING, v STRING` grouped by `key`;
 * output `key STRING, k STRING, v STRING`.
 */
import { type MapState, StatefulProcessor, type StatefulProcessorHandle, type TimerValues } from 'sluice';

type Key = { key: string };
type In = { key: string; action: string; k: string | null; v: string | null };
type Out = { key: string; k: string | null; v: string | null };

export default class MapStateActions extends StatefulProcessor<Key, In, Out> {
  private map!: MapState<string, string>;

  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState<string, string>('sessionState');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>, _timerValues: TimerValues): Out[] {
    const out: Out[] = [];
    for (const r of rows) {
      const k = r.k as string;
      switch (r.action) {
        case 'exists':
          out.push({ key: key.key, k: 'exists', v: String(this.map.exists()) });
          break;
        case 'getValue':
          out.push({ key: key.key, k, v: this.map.getValue(k) ?? null });
          break;
        case 'containsKey':
          out.push({ key: key.key, k, v: String(this.map.containsKey(k)) });
          break;
        case 'updateValue':
          this.map.updateValue(k, r.v as string);
          break;
        case 'iterator':
          for (const [mk, mv] of this.map.iterator()) out.push({ key: key.key, k: mk, v: mv });
          break;
        case 'keys':
          for (const mk of this.map.keys()) out.push({ key: key.key, k: mk, v: r.v });
          break;
        case 'values':
          for (const mv of this.map.values()) out.push({ key: key.key, k: r.k, v: mv });
          break;
        case 'removeKey':
          this.map.removeKey(k);
          break;
        case 'clear':
          this.map.clear();
          break;
      }
    }
    return out;
  }
}
