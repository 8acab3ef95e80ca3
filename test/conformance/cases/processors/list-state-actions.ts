/**
 * Spark's TestListStateProcessor (TransformWithListStateSuite): each input row is an action on the
 * key's ListState "testListState". emit outputs the row's value; emitAllInState outputs every
 * element, then clears the list; append, appendAll (the value split at commas) and put (likewise)
 * write it; remove clears it; tryPutNullList and tryAppendingNullList pass null for the list,
 * which Spark refuses with ILLEGAL_STATE_STORE_VALUE.NULL_VALUE. Other actions do nothing.
 * Input `key STRING, action STRING, value STRING` grouped by `key`; output `key STRING, value STRING`.
 */
import { type ListState, StatefulProcessor, type StatefulProcessorHandle } from 'sluice';

type Key = { key: string };
type In = { key: string; action: string; value: string };
type Out = { key: string; value: string };

export default class ListStateActions extends StatefulProcessor<Key, In, Out> {
  private list!: ListState<string>;

  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState<string>('testListState');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>): Out[] {
    const out: Out[] = [];
    for (const row of rows) {
      switch (row.action) {
        case 'emit':
          out.push({ key: key.key, value: row.value });
          break;
        case 'emitAllInState':
          for (const v of this.list.get()) out.push({ key: key.key, value: v });
          this.list.clear();
          break;
        case 'append':
          this.list.appendValue(row.value);
          break;
        case 'appendAll':
          this.list.appendList(row.value.split(','));
          break;
        case 'put':
          this.list.put(row.value.split(','));
          break;
        case 'remove':
          this.list.clear();
          break;
        case 'tryPutNullList':
          this.list.put(null as unknown as string[]);
          break;
        case 'tryAppendingNullList':
          this.list.appendList(null as unknown as string[]);
          break;
      }
    }
    return out;
  }
}
