/**
 * A join's `condition` items (FORMAT-2): comparisons of a column with a literal, or any of several.
 * A comparison with null is false; a literal compared with a TIMESTAMP is read as one.
 */
import type { Row } from './ports';
import type { JoinPredicate } from './plan/types';
import { parseTimestamp } from './timestamps';

/** A condition item on the pair (l, r): its column is the left one when the stream has it. */
export function holds(p: JoinPredicate, l: Row, r: Row): boolean {
  if ('anyOf' in p) return p.anyOf.some((q) => holds(q, l, r));
  const v = Object.hasOwn(l, p.column) ? l[p.column] : r[p.column];
  if (v === null || v === undefined) return false;
  let lit: unknown = p.value;
  // (a TIMESTAMP is epoch µs, a number or a bigint: the literal's instant compares with either exactly)
  if ((typeof v === 'number' || typeof v === 'bigint') && typeof lit === 'string') lit = parseTimestamp(lit) ?? Number(lit);
  const a = v as number | string | boolean;
  const b = lit as number | string | boolean;
  switch (p.op) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
  }
}

/** Whether one row satisfies every item (each item's column is one of the row's). */
export function rowHolds(predicates: readonly JoinPredicate[], row: Row): boolean {
  for (const p of predicates) if (!holds(p, row, row)) return false;
  return true;
}

/** The keys of a pair's two rows in pairRow's object (no column of a row can be named so). */
const PAIR: Readonly<Record<'left' | 'right', string>> = { left: '\u0000left', right: '\u0000right' };

/** A joined pair as one value, for a condition compiled on both sides' columns (query/join-condition.ts). */
export function pairRow(l: Row, r: Row): Row {
  return { [PAIR.left]: l, [PAIR.right]: r };
}

/** One side's row of a pairRow. */
export function pairSide(pair: Row, side: 'left' | 'right'): Row {
  return pair[PAIR[side]] as Row;
}
