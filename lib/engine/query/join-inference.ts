/**
 * The filters Spark's optimizer infers across a stream-stream equi-join (InferFiltersFromConstraints
 * with ConstraintHelper.inferAdditionalConstraints): a predicate one side's rows are known to hold
 * that reads exactly one of that side's join keys holds, with the key replaced by its partner, for
 * every row of the other side that can match. Spark then filters the other side's input with it,
 * below its watermark when it can pass it, so a row it rejects is never buffered and does not move
 * that watermark (FORMAT-2's stateRows and watermark see the difference).
 *
 * What a side is known to hold (its constraints, as far as sluice tracks them): the filter
 * expressions of its own pipeline after which the key reaches the join unchanged, its condition
 * items and condition conjuncts (pushed into it or checked in the join). Spark carries them over
 * for inner and leftSemi joins both ways, for leftOuter from left to right, for rightOuter from
 * right to left, and not for fullOuter. A predicate reading two keys, or a key and another column,
 * is not carried (Spark substitutes one equality at a time and keeps only what reads the other
 * side alone), nor is one between keys of different types (Spark's equality there holds a cast).
 */
import { type ColumnInfo, predicateColumns } from '../plan/columns';
import type { JoinKeyPair, JoinPredicate, StatelessStage, StreamJoinType } from '../plan/types';
import type { Row } from '../ports';
import { Analyzer, type ColumnReference } from '../expr/analyze';
import { checkFilterBoolean } from '../expr';
import { compileTyped } from '../expr/typed';
import { parseExpression } from '../expr/parser';
import { conjunctsOf, type JoinConjunct } from './join-condition';
import { resolveName } from '../resolve-name';
import { keptThrough, type PushSide } from './join-pushdown';
import { exactText, mapNames } from './sql-text';

type Side = 'left' | 'right';

/** A side's constraints: FORMAT-2 condition items and expression texts (each a conjunction). */
export interface SideFacts {
  readonly predicates: readonly JoinPredicate[];
  readonly texts: readonly string[];
}

/** The directions Spark infers filters in for a join type (InferFiltersFromConstraints). */
export function inferenceDirections(type: StreamJoinType): ReadonlyArray<{ from: Side; to: Side }> {
  switch (type) {
    case 'inner':
    case 'leftSemi':
      return [
        { from: 'left', to: 'right' },
        { from: 'right', to: 'left' },
      ];
    case 'leftOuter':
      return [{ from: 'left', to: 'right' }];
    case 'rightOuter':
      return [{ from: 'right', to: 'left' }];
    default:
      return [];
  }
}

/** The filter expressions of a side's own stages after which `column` reaches the join unchanged. */
export function stageFacts(side: PushSide, column: string): string[] {
  const stages: readonly StatelessStage[] = side.operators.length ? side.operators[side.operators.length - 1].post : side.stages;
  const out: string[] = [];
  stages.forEach((s, i) => {
    if (s.kind === 'filterExpr' && keptThrough(column, stages.slice(i + 1))) out.push(s.text);
  });
  return out;
}

/**
 * The predicates carried from one side to the other over the equi-join keys `on`: FORMAT-2 items
 * with the column renamed, and expression conjuncts analyzed again over the partner column.
 */
export function carriedFacts(
  facts: SideFacts,
  on: readonly JoinKeyPair[],
  from: Side,
  fromCols: readonly ColumnInfo[],
  toCols: readonly ColumnInfo[],
): { predicates: JoinPredicate[]; conjuncts: JoinConjunct[] } {
  const partner = new Map<string, string>();
  for (const k of on) {
    const [a, b] = from === 'left' ? [k.left, k.right] : [k.right, k.left];
    const ca = resolveName(fromCols, a);
    const cb = resolveName(toCols, b);
    // (a window key, or keys of different types: not carried)
    if (ca && cb && ca.type === cb.type && !ca.window && !cb.window) partner.set(ca.name, cb.name);
  }
  const predicates: JoinPredicate[] = [];
  for (const p of facts.predicates) {
    const cols = [...new Set(predicateColumns(p))];
    if (cols.length === 1 && partner.has(cols[0])) predicates.push(renamed(p, partner.get(cols[0])!));
  }
  const conjuncts: JoinConjunct[] = [];
  for (const text of facts.texts) {
    let asts: ReturnType<typeof conjunctsOf>;
    try {
      asts = conjunctsOf(parseExpression(text));
    } catch {
      continue;
    }
    for (const ast of asts) {
      const c = carried(text, ast, fromCols, toCols, partner);
      if (c) conjuncts.push(c);
    }
  }
  return { predicates, conjuncts };
}

function renamed(p: JoinPredicate, column: string): JoinPredicate {
  return 'anyOf' in p ? { anyOf: p.anyOf.map((q) => renamed(q, column)) } : { ...p, column };
}

/** One conjunct over exactly one key column, analyzed over the partner column (null: not carried). */
function carried(
  text: string,
  ast: ReturnType<typeof parseExpression>,
  fromCols: readonly ColumnInfo[],
  toCols: readonly ColumnInfo[],
  partner: ReadonlyMap<string, string>,
): JoinConjunct | null {
  const read = new Set<string>();
  const fromRefer = (parts: readonly string[]): ColumnReference | null => {
    const column = resolveName(fromCols, parts[0]);
    if (!column) return null;
    read.add(column.name);
    return { column, used: 1, sql: column.name, read: (row: Row) => row[column.name] };
  };
  try {
    new Analyzer({ text, columns: fromCols, refer: fromRefer }).analyze(ast);
  } catch {
    return null;
  }
  const [only] = [...read];
  if (read.size !== 1 || !partner.has(only)) return null;
  const target = resolveName(toCols, partner.get(only)!)!;
  const toRefer = (parts: readonly string[]): ColumnReference | null =>
    resolveName(fromCols, parts[0])?.name === only ? { column: target, used: 1, sql: target.name, read: (row: Row) => row[target.name] } : null;
  try {
    const typed = checkFilterBoolean(new Analyzer({ text, columns: toCols, refer: toRefer }).analyze(ast), text);
    const e = compileTyped(typed);
    // as text the parser reads back into the same tree (the analyzer's display loses a string
    // literal's escapes: sql-text.ts astText)
    const onPartner = mapNames(ast, (node) =>
      resolveName(fromCols, node.parts[0])?.name === only ? { ...node, parts: [target.name, ...node.parts.slice(1)] } : node,
    );
    return { text: exactText(onPartner) ?? typed.sql, side: 'left', columns: [target.name], sideTest: (row) => e(row) === true, pairTest: () => false };
  } catch {
    return null;
  }
}
