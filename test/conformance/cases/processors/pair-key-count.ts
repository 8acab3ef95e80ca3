/**
 * A running count of rows per grouping key of two columns, either of which may be null: each
 * call adds the key's rows of the batch to its value state and emits the key's columns as the
 * processor received them, with the count.
 * Input `a STRING, b INT, x STRING` grouped by `a`, `b`; output `a STRING, b INT, n INT`.
 */
import { StatefulProcessor, type StatefulProcessorHandle, type ValueState } from 'sluice';

type Key = { a: string | null; b: number | null };
type In = { a: string | null; b: number | null; x: string | null };
type Out = { a: string | null; b: number | null; n: number };

export default class PairKeyCount extends StatefulProcessor<Key, In, Out> {
  private count!: ValueState<number>;

  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState<number>('count');
  }

  handleInputRows(key: Key, rows: IterableIterator<In>): Out[] {
    const n = (this.count.get() ?? 0) + [...rows].length;
    this.count.update(n);
    return [{ a: key.a, b: key.b, n }];
  }
}
