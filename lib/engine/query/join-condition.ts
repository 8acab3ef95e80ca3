/**
 * A join condition given as a Spark SQL expression (`join(other, on, type, { condition: "..." })`):
 * analyzed against both sides' columns and split into its conjuncts (top-level AND), each one
 * classified as Spark's optimizer and StreamingSymmetricHashJoinExec classify them: reading the
 * left side only, the right side only, or both. The caller pushes a one-side conjunct into that
 * side's input where Spark does (FORMAT-2 "Where condition applies") and checks the rest in the
 * join.
 *
 * Names: `left.x` and `right.x` name column x of the left frame (the rows so far) and of the right
 * frame or static table; an unqualified name is the column of the one side that has it (case-
 * insensitively, as Spark resolves names), and a name both sides have must be qualified (Spark's
 * AMBIGUOUS_REFERENCE). A column that is itself named `left` or `right` is a column, not a side.
 */
import type { ColumnInfo } from '../plan/columns';
import type { TimeRange } from '../plan/types';
import type { Row } from '../ports';
import { Analyzer, type ColumnReference } from '../expr/analyze';
import { checkFilterBoolean, ExpressionError } from '../expr';
import { type Ast, parseExpression } from '../expr/parser';
import { compileTyped } from '../expr/typed';
import { pairSide } from '../predicate';
import { exactText, mapNames } from './sql-text';
import { resolveName } from '../resolve-name';

type JoinSideName = 'left' | 'right';

/** One conjunct of a join condition. */
export interface JoinConjunct {
  /** Spark's SQL text of the conjunct (one side's: bare names; both sides': qualified names). */
  readonly text: string;
  /** The side it reads ('left' also for a conjunct that reads no column, as Spark classifies it). */
  readonly side: JoinSideName | 'both';
  /** The columns of its side it reads (one side only; empty for 'both'). */
  readonly columns: readonly string[];
  /** One side: true when that side's row passes (null and false reject it). */
  readonly sideTest: ((row: Row) => boolean) | null;
  /** True when the pair (predicate.ts pairRow) passes. */
  readonly pairTest: (pair: Row) => boolean;
  /**
   * Set when the conjunct bounds the left side's TIMESTAMP column by the right's (`lt >= rt -
   * INTERVAL 5 SECONDS`, `lt BETWEEN rt - INTERVAL 5 SECONDS AND rt`): the time range it is.
   */
  readonly bound?: TimeBound;
  /**
   * A conjunct on the pair: the columns of each side it reads through null-intolerant operators
   * only (`lv <> rv`, `a + 1 < b`), whose isnotnull Spark's optimizer infers from it
   * (InferFiltersFromConstraints, constructIsNotNullConstraints) and pushes into the sides that
   * cannot produce outer rows.
   */
  readonly notNull?: Readonly<Record<JoinSideName, readonly string[]>>;
}

/** The binary operators whose Spark expressions are null-intolerant: the comparisons but <=>, the arithmetic. */
const NULL_INTOLERANT_BINARY = new Set(['=', '==', '<>', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%']);

/** A conjunct as a time range: `right + lower <= left <= right + upper` (`<` where strict), one bound or both. */
interface TimeBound {
  readonly left: string;
  readonly right: string;
  readonly lower?: { readonly us: number; readonly strict: boolean };
  readonly upper?: { readonly us: number; readonly strict: boolean };
}

/** `name` quoted for SQL text when it is not a plain identifier. */
function sqlName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}

/** The conjuncts of `ast`: its operands through every top-level AND (parentheses only group). */
export function conjunctsOf(ast: Ast): Ast[] {
  return ast.k === 'binary' && ast.op === 'AND' ? [...conjunctsOf(ast.left), ...conjunctsOf(ast.right)] : [ast];
}

/**
 * Analyzes `text` against the two sides' columns and splits it into conjuncts. Throws
 * ExpressionError (Spark's class and the position) for a syntax error, an unknown or ambiguous
 * name, a condition that is not BOOLEAN.
 */
export function splitJoinCondition(text: string, left: readonly ColumnInfo[], right: readonly ColumnInfo[]): JoinConjunct[] {
  const ast = parseExpression(text);
  const sides: Record<JoinSideName, readonly ColumnInfo[]> = { left, right };
  const qualifier = (parts: readonly string[]): JoinSideName | null => {
    if (parts.length < 2) return null;
    const q = parts[0].toLowerCase();
    if (q !== 'left' && q !== 'right') return null;
    return resolveName(left, parts[0]) || resolveName(right, parts[0]) ? null : q;
  };
  /** The side and column a name refers to; null when no side has it (the analyzer then reports it with suggestions). */
  const resolve = (parts: readonly string[], pos: number): { side: JoinSideName; column: ColumnInfo; used: number } | null => {
    const q = qualifier(parts);
    if (q !== null) {
      const column = resolveName(sides[q], parts[1]);
      if (!column) {
        throw new ExpressionError(
          'UNRESOLVED_COLUMN.WITH_SUGGESTION',
          `A column, variable, or function parameter with name \`${q}\`.\`${parts[1]}\` cannot be resolved. Did you mean one of the following? [${sides[q].map((c) => `\`${q}\`.\`${c.name}\``).join(', ')}]: fix the name`,
          text,
          pos,
        );
      }
      return { side: q, column, used: 2 };
    }
    const l = resolveName(left, parts[0]);
    const r = resolveName(right, parts[0]);
    if (l && r) {
      throw new ExpressionError(
        'AMBIGUOUS_REFERENCE',
        `Reference \`${parts[0]}\` is ambiguous, could be: [\`left\`.\`${l.name}\`, \`right\`.\`${r.name}\`]: qualify it with left. or right.`,
        text,
        pos,
      );
    }
    if (l) return { side: 'left', column: l, used: 1 };
    if (r) return { side: 'right', column: r, used: 1 };
    return null;
  };
  /** `c`, `c + INTERVAL ...`, `c - INTERVAL ...` over a TIMESTAMP column: the column and the offset (µs). */
  const timeTerm = (a: Ast): { side: JoinSideName; column: string; us: number } | null => {
    if (a.k === 'name') {
      let found: ReturnType<typeof resolve> = null;
      try {
        found = resolve(a.parts, a.pos);
      } catch {
        return null; // the analysis reports it
      }
      if (found === null || found.used !== a.parts.length || found.column.type !== 'TIMESTAMP' || found.column.window) return null;
      return { side: found.side, column: found.column.name, us: 0 };
    }
    if (a.k === 'binary' && (a.op === '+' || a.op === '-') && a.right.k === 'lit' && a.right.type.type === 'INTERVAL' && !a.right.type.yearMonth) {
      const base = timeTerm(a.left);
      const us = a.right.value as number;
      return base && Number.isSafeInteger(us) ? { ...base, us: base.us + (a.op === '+' ? us : -us) } : null;
    }
    return null;
  };
  /** `x op y` over terms of the two sides, as left op right + d. */
  const compare = (op: string, x: Ast, y: Ast): TimeBound | null => {
    const a = timeTerm(x);
    const b = timeTerm(y);
    if (!a || !b || a.side === b.side) return null;
    const flip: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
    // a + a.us op b + b.us, with a on the left: left op right + (b.us - a.us)
    const [l, r, o] = a.side === 'left' ? [a, b, op] : [b, a, flip[op]];
    const d = r.us - l.us;
    if (o === '>=' || o === '>') return { left: l.column, right: r.column, lower: { us: d, strict: o === '>' } };
    if (o === '<=' || o === '<') return { left: l.column, right: r.column, upper: { us: d, strict: o === '<' } };
    return null;
  };
  const boundOf = (c: Ast): TimeBound | null => {
    if (c.k === 'binary') return compare(c.op, c.left, c.right);
    if (c.k !== 'between' || c.not) return null;
    const lo = compare('>=', c.arg, c.lo);
    const hi = compare('<=', c.arg, c.hi);
    if (!lo || !hi || lo.left !== hi.left || lo.right !== hi.right) return null;
    return { ...lo, ...hi };
  };
  return conjunctsOf(ast).map((conjunct): JoinConjunct => {
    // on the pair: every name read from its side of the pair
    const read = new Map<JoinSideName, Set<string>>();
    const pairRefer = (parts: readonly string[], pos: number): ColumnReference | null => {
      const found = resolve(parts, pos);
      if (found === null) return null;
      const { side, column, used } = found;
      if (!read.has(side)) read.set(side, new Set());
      read.get(side)!.add(column.name);
      return { column, used, sql: `${side}.${sqlName(column.name)}`, read: (pair) => pairSide(pair, side)[column.name] };
    };
    const pairTyped = checkFilterBoolean(new Analyzer({ text, columns: [...left, ...right], refer: pairRefer }).analyze(conjunct), text);
    const pairEval = compileTyped(pairTyped);
    const pairTest = (pair: Row) => pairEval(pair) === true;
    if (read.size === 2) {
      const bound = boundOf(conjunct);
      const notNull: Record<JoinSideName, string[]> = { left: [], right: [] };
      // Spark's scanNullIntolerantAttribute: the columns reached through null-intolerant nodes only
      const scan = (a: Ast): void => {
        if (a.k === 'name') {
          const found = resolve(a.parts, a.pos);
          if (found !== null && found.used === a.parts.length && !notNull[found.side].includes(found.column.name)) notNull[found.side].push(found.column.name);
        } else if (a.k === 'binary' && NULL_INTOLERANT_BINARY.has(a.op)) {
          scan(a.left);
          scan(a.right);
        } else if (a.k === 'unary' && (a.op === '-' || a.op === 'NOT')) scan(a.arg);
        // (BETWEEN is two comparisons, each a constraint of its own)
        else if (a.k === 'between' && !a.not) for (const x of [a.arg, a.lo, a.hi]) scan(x);
      };
      scan(conjunct);
      return { text: pairTyped.sql, side: 'both', columns: [], sideTest: null, pairTest, ...(bound ? { bound } : {}), notNull };
    }
    const side: JoinSideName = read.has('right') ? 'right' : 'left';
    // on one side's row: the same conjunct over that side's columns, with bare names
    const sideRefer = (parts: readonly string[], pos: number): ColumnReference | null => {
      const found = resolve(parts, pos);
      if (found === null) return null;
      const name = found.column.name;
      return { column: found.column, used: found.used, sql: sqlName(name), read: (row) => row[name] };
    };
    const typed = checkFilterBoolean(new Analyzer({ text, columns: sides[side], refer: sideRefer }).analyze(conjunct), text);
    const e = compileTyped(typed);
    return { text: sideText(conjunct, resolve) ?? typed.sql, side, columns: [...(read.get(side) ?? [])], sideTest: (row) => e(row) === true, pairTest };
  });
}

/**
 * The time range a condition's conjuncts give when the join has none (Spark reads it from the
 * condition: StreamingJoinHelper): the bounds on the first pair of TIMESTAMP columns a conjunct
 * bounds. When several conjuncts bound the same side, the loosest is the range's (the lowest
 * lower, the highest upper; `<=` looser than `<` at the same value): Spark computes a state
 * watermark from each conjunct and keeps a row until the least of them passes it
 * (getStateValueWatermark's min), so the loosest bound decides when a row leaves the state and
 * when its outer row is emitted. Returns the range and the conjuncts it replaces; every other
 * conjunct (a tighter bound, a bound on another pair) stays a check on the pair, so matching
 * still meets them all.
 */
export function timeRangeOf(conjuncts: readonly JoinConjunct[]): { range: TimeRange; used: JoinConjunct[] } | null {
  const first = conjuncts.find((c) => c.bound);
  if (!first) return null;
  const { left, right } = first.bound!;
  type Edge = NonNullable<TimeBound['lower']>;
  // whether bound a lets more pairs through than b (a lower bound: lower; an upper bound: higher)
  const looser = (a: Edge, b: Edge | undefined, sign: 1 | -1) => b === undefined || sign * (b.us - a.us) > 0 || (a.us === b.us && !a.strict && b.strict);
  let lower: Edge | undefined;
  let upper: Edge | undefined;
  const pair = conjuncts.filter((c) => c.bound && c.bound.left === left && c.bound.right === right);
  for (const c of pair) {
    if (c.bound!.lower && looser(c.bound!.lower, lower, 1)) lower = c.bound!.lower;
    if (c.bound!.upper && looser(c.bound!.upper, upper, -1)) upper = c.bound!.upper;
  }
  // a conjunct is replaced by the range when each bound it gives is the range's (the first such one)
  const used: JoinConjunct[] = [];
  let lowerTaken = lower === undefined;
  let upperTaken = upper === undefined;
  for (const c of pair) {
    const b = c.bound!;
    const givesLower = b.lower !== undefined;
    const givesUpper = b.upper !== undefined;
    if (givesLower && (lowerTaken || b.lower !== lower)) continue;
    if (givesUpper && (upperTaken || b.upper !== upper)) continue;
    if (givesLower) lowerTaken = true;
    if (givesUpper) upperTaken = true;
    used.push(c);
  }
  return {
    range: { left, right, lowerUs: lower?.us ?? null, upperUs: upper?.us ?? null, lowerStrict: lower?.strict ?? false, upperStrict: upper?.strict ?? false },
    used,
  };
}

/**
 * A one-side conjunct as text over that side's bare column names, which the parser reads back
 * into the same tree (the analyzer's display would lose a string literal's escapes: sql-text.ts
 * astText); null when it would not.
 */
function sideText(conjunct: Ast, resolve: (parts: readonly string[], pos: number) => { column: ColumnInfo; used: number } | null): string | null {
  const bare = mapNames(conjunct, (node) => {
    const found = resolve(node.parts, node.pos);
    return found === null ? node : { ...node, parts: [found.column.name, ...node.parts.slice(found.used)] };
  });
  return exactText(bare);
}
