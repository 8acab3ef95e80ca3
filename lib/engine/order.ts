/**
 * Sort and limit stages (plan/types.ts OrderStage) over a batch's rows: Spark's orderBy and limit
 * after a complete-mode aggregation. A sort is stable, so rows with equal keys keep the order the
 * aggregation emitted them in (its groups' order, the same on a replay): the rows a limit keeps,
 * and the order a sink receives, do not depend on the run.
 */
import type { OrderStage, StatelessStage } from './plan/types';
import type { Row } from './ports';

/** Whether a stage takes the batch's rows all at once (sort, limit) rather than row by row. */
export function isOrderStage(stage: StatelessStage): stage is OrderStage {
  return stage.kind === 'sort' || stage.kind === 'limit';
}

/** A key to sort items of type T by: its value in an item, the order of two non-null values, the direction and where nulls go. */
export interface SortKeyOf<T> {
  readonly value: (item: T) => unknown;
  readonly compare: (a: unknown, b: unknown) => number;
  readonly desc: boolean;
  readonly nullsFirst: boolean;
}

/**
 * Compares two items by the keys in turn: each key's nulls first or last (whatever the
 * direction), then its values ascending or descending. The sort stage's and listagg's WITHIN
 * GROUP order (more-aggregates.ts) both sort by it.
 */
export function keysComparator<T>(keys: readonly SortKeyOf<T>[]): (a: T, b: T) => number {
  return (a, b) => {
    for (const k of keys) {
      const x = k.value(a) ?? null;
      const y = k.value(b) ?? null;
      if (x === null || y === null) {
        if (x === y) continue;
        return (x === null) === k.nullsFirst ? -1 : 1;
      }
      const c = k.compare(x, y);
      if (c !== 0) return k.desc ? -c : c;
    }
    return 0;
  };
}

/** The rows a sort or limit stage gives (a new array; the input is left as it was). */
export function applyOrderStage(stage: OrderStage, rows: readonly Row[]): Row[] {
  if (stage.kind === 'limit') return rows.slice(0, stage.n);
  // Array.prototype.sort is stable (ES2019)
  return [...rows].sort(keysComparator<Row>(stage.keys));
}
