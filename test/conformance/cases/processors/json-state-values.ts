/**
 * State values as JSON copies: a map keyed by objects (equal when their members are, in any
 * order), a value state holding an object that the processor mutates after storing and after
 * reading, and a list read while it is cleared and appended to. Emits what it reads.
 * Input `key STRING` grouped by `key`; output `key STRING, what STRING, value STRING`.
 */
import {
  type ListState,
  type MapState,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type ValueState,
} from 'sluice';

type Key = { key: string };
type Out = { key: string; what: string; value: string };
type Obj = { n: number[] };
type MapKey = { a: number; b: number };

export default class JsonStateValues extends StatefulProcessor<Key, Key, Out> {
  private byPair!: MapState<MapKey, string>;
  private obj!: ValueState<Obj>;
  private items!: ListState<string>;

  init(handle: StatefulProcessorHandle): void {
    this.byPair = handle.getMapState<MapKey, string>('byPair');
    this.obj = handle.getValueState<Obj>('obj');
    this.items = handle.getListState<string>('items');
  }

  handleInputRows(key: Key): Out[] {
    const k = key.key;
    const out: Out[] = [];
    const seen = this.byPair.getValue({ a: 2, b: 1 });
    out.push({ key: k, what: 'before', value: seen ?? 'none' });
    this.byPair.updateValue({ b: 1, a: 2 }, 'first');
    this.byPair.updateValue({ a: 2, b: 1 }, `second-${k}`);
    out.push({ key: k, what: 'mapSize', value: String([...this.byPair.values()].length) });
    out.push({ key: k, what: 'mapValue', value: this.byPair.getValue({ b: 1, a: 2 }) ?? 'none' });
    const o: Obj = { n: [1] };
    this.obj.update(o);
    o.n.push(2);
    const got = this.obj.get();
    got?.n.push(3);
    out.push({ key: k, what: 'obj', value: JSON.stringify(this.obj.get()) });
    this.items.put(['x', 'y']);
    const it = this.items.get();
    this.items.clear();
    this.items.appendValue('z');
    out.push({ key: k, what: 'snapshot', value: [...it].join(',') });
    out.push({ key: k, what: 'now', value: [...this.items.get()].join(',') });
    return out;
  }
}
