/**
 * GROUP BY's grouping analytics in SQL: ROLLUP (...), CUBE (...) and GROUPING SETS (...), beside
 * plain grouping expressions or not (`GROUP BY k, ROLLUP(a, b)`), WITH ROLLUP / WITH CUBE and
 * Hive's `GROUP BY a, b GROUPING SETS (...)`, read as Spark's analyzer reads them: the sets are
 * the cartesian product of each item's sets (a plain item is in every set), the grouping
 * expressions the distinct expressions of the items in the order written, and a set's grouping id
 * has a bit per grouping expression, 1 where the set leaves it out, the first the highest. And the
 * grouping() / grouping_id() calls of the select list and HAVING, which read that id. The
 * aggregation itself is the frame's (query/grouping-sets.ts).
 */
import type { ColumnInfo } from '../plan/columns';
import { type DirectKey, GroupingSetsFrame, MAX_GROUPING_SETS } from '../query/grouping-sets';
import { Column, expr } from '../query/column';
import { sessionWindow, window } from '../query/functions';
import type { GroupKey } from '../plan/types';
import type { StreamFrame } from '../query/frame';
import type { AnyColumns, FrameColumns } from '../query/types';
import type { Ast } from '../expr/parser';
import { prettyOr } from './aggregate-calls';
import { SqlError } from './errors';
import { type AggregateCall, quoted, words } from './over-aggregates';
import type { GroupingItem, SqlExpr } from './syntax';

/** A GROUP BY expression as the aggregation reads it: an ordinal or alias stands for its select item, whose alias it keeps. */
export interface Group {
  readonly e: SqlExpr;
  alias?: string;
}

/** The grouping id's column while the select list and HAVING are computed (dropped by the last select). */
export const GROUPING_ID_COLUMN = 'sluice_hidden_grouping_id_';

/** Each set of one item, as indexes into the query's groupBy. */
function setsOfItem(item: GroupingItem): number[][] {
  if (item.kind === 'EXPR') return [[item.expr]];
  const els = item.elements;
  if (item.kind === 'ROLLUP') return Array.from({ length: els.length + 1 }, (_, n) => els.slice(0, els.length - n).flat());
  if (item.kind === 'CUBE') {
    // Spark's order: the sets with the first element, then those without it
    const cube = (from: number): number[][] => {
      if (from === els.length) return [[]];
      const rest = cube(from + 1);
      return [...rest.map((s) => [...els[from], ...s]), ...rest];
    };
    return cube(0);
  }
  return els.map((e) => [...e]);
}

/** How many sets an item gives, without making them. */
function countOfItem(item: GroupingItem): number {
  if (item.kind === 'EXPR') return 1;
  if (item.kind === 'ROLLUP') return item.elements.length + 1;
  if (item.kind === 'CUBE') return 2 ** item.elements.length;
  return item.elements.length;
}

/**
 * The grouping expressions (indexes into `groups`, the distinct ones by `same`, in Spark's order)
 * and each grouping set as indexes into them, in Spark's order of sets.
 */
export function groupingSetsOf(
  sql: string,
  items: readonly GroupingItem[],
  groups: readonly Group[],
  same: (text: string) => string,
): { keys: number[]; sets: number[][] } {
  const count = items.reduce((n, it) => n * countOfItem(it), 1);
  if (count > MAX_GROUPING_SETS) {
    const at = items.find((it) => it.kind !== 'EXPR') as { pos: number };
    throw new SqlError(
      'GROUPING_SIZE_LIMIT_EXCEEDED',
      `Grouping sets size cannot be greater than ${MAX_GROUPING_SETS}: this GROUP BY makes ${count} (each input row is repeated once per set); group by fewer columns`,
      sql,
      at.pos,
    );
  }
  const flat = items.flatMap((it) => (it.kind === 'EXPR' ? [it.expr] : [...(it.over ?? []), ...it.elements.flat()]));
  const keyOf = new Map<string, number>();
  const keys: number[] = [];
  for (const i of flat) {
    const k = same(groups[i].e.text);
    if (!keyOf.has(k)) {
      keyOf.set(k, keys.length);
      keys.push(i);
    }
  }
  const each = items.map(setsOfItem);
  const sets = each.slice(1).reduce((xs, ys) => xs.flatMap((x) => ys.map((y) => [...x, ...y])), each[0]);
  return { keys, sets: sets.map((set) => [...new Set(set.map((i) => keyOf.get(same(groups[i].e.text))!))]) };
}

/** A grouping key as the frame API takes it (aggregate.ts's plain GROUP BY too). */
export function keyOf(k: SqlExpr, alias: string | undefined): string | GroupKey | Column {
  const a = k.ast;
  if (a.k === 'name') return k.text;
  if (a.k === 'call' && ['window', 'session_window'].includes(a.name.toLowerCase()) && a.args[0]?.k === 'name' && a.args[0].parts.length === 1) {
    const texts = a.args.slice(1).map((x) => (x.k === 'lit' && typeof x.value === 'string' ? x.value : null));
    if (texts.length >= 1 && texts.every((t) => t !== null)) {
      const column = a.args[0].parts[0];
      if (a.name.toLowerCase() === 'session_window' && texts.length === 1) return sessionWindow(column, texts[0]!);
      if (a.name.toLowerCase() === 'window' && texts.length <= 3) return window(column, texts[0]!, texts[1] ?? undefined, texts[2] ?? undefined);
    }
  }
  return alias === undefined ? expr(k.text) : expr(k.text).as(alias);
}

/**
 * The frame grouped by the sets: a key that is a column is grouped by by name, an expression is
 * selected into a column first, a window that is in every set (a plain GROUP BY item beside the
 * analytics) is grouped by as it is, so that the sets keep its event-time key, and the output
 * keys are named as a GROUP BY names them.
 */
export function groupedBySets(sql: string, frame: StreamFrame<AnyColumns>, groups: readonly Group[], sets: number[][]): GroupingSetsFrame {
  const columns = frame.columnsNow_();
  const keys: Array<string | DirectKey> = [];
  const names: string[] = [];
  const projections: string[] = [];
  groups.forEach((g, i) => {
    const a = g.e.ast;
    if (a.k === 'call' && ['window', 'session_window'].includes(a.name.toLowerCase())) {
      const key = keyOf(g.e, g.alias);
      if (typeof key !== 'object' || key instanceof Column || key.kind !== 'window' || !sets.every((set) => set.includes(i))) {
        throw new SqlError(
          'UNSUPPORTED_FEATURE',
          `${a.name}(...) inside ROLLUP, CUBE or GROUPING SETS is not supported by sluice: group by window(column, '...') beside them (GROUP BY window(t, '10 minutes'), ROLLUP(a)), so that every set keeps the window`,
          sql,
          g.e.pos,
        );
      }
      const name = g.alias ?? 'window';
      keys.push({ arg: key as GroupKey, name });
      names.push(name);
      return;
    }
    if (a.k === 'name' && a.parts.length === 1) {
      keys.push(a.parts[0]);
      names.push(columns.find((c) => c.name.toLowerCase() === a.parts[0].toLowerCase())?.name ?? a.parts[0]);
      return;
    }
    const column = `sluice_hidden_key_${i}_`;
    projections.push(`${g.e.text} AS ${quoted(column)}`);
    keys.push(column);
    names.push(g.alias ?? prettyOr(g.e.text, columns));
  });
  const source = projections.length ? frame.selectExpr('*', ...projections) : frame;
  return new GroupingSetsFrame(source as unknown as StreamFrame<FrameColumns>, keys, sets, 'GROUP BY', names);
}

/** Whether a call is grouping() or grouping_id(). */
export function isGroupingCall(a: Ast): boolean {
  return a.k === 'call' && ['grouping', 'grouping_id'].includes(a.name.toLowerCase());
}

/** A grouping() or grouping_id() call's value: a hidden column made from the grouping id, and the call's name as Spark prints it. */
export interface GroupingColumn {
  readonly column: string;
  readonly name: string;
  /** The value, over GROUPING_ID_COLUMN. */
  readonly text: string;
}

/**
 * The grouping calls of a query, one hidden column per distinct call. `keys` are the grouping
 * expressions (null: the GROUP BY has no analytics, where Spark refuses them), each with its
 * form for comparing and its text.
 */
export class GroupingCalls {
  private readonly byCall = new Map<string, GroupingColumn>();
  constructor(
    private readonly sql: string,
    private readonly keys: ReadonlyArray<{ readonly same: string; readonly text: string }> | null,
    private readonly same: (text: string) => string,
    private readonly columns: readonly ColumnInfo[],
  ) {}

  get all(): GroupingColumn[] {
    return [...this.byCall.values()];
  }

  /** The call's column, checked as Spark's analyzer checks it. */
  of(call: AggregateCall): GroupingColumn {
    const name = call.ast.name.toLowerCase();
    const keys = this.keys;
    if (keys === null) {
      throw new SqlError(
        'UNSUPPORTED_GROUPING_EXPRESSION',
        `grouping()/grouping_id() can only be used with GroupingSets/Cube/Rollup: group by ROLLUP (...), CUBE (...) or GROUPING SETS (...), or drop ${name}()`,
        this.sql,
        call.start,
      );
    }
    const args = argTexts(call);
    const key = `${name}(${args.map(this.same).join(',')})`;
    const known = this.byCall.get(key);
    if (known !== undefined) return known;
    const pretty = args.map((t) => prettyOr(t, this.columns));
    const id = quoted(GROUPING_ID_COLUMN);
    let text: string;
    if (name === 'grouping') {
      if (args.length !== 1) {
        throw new SqlError(
          'WRONG_NUM_ARGS.WITHOUT_SUGGESTION',
          `The \`grouping\` requires 1 parameters but the actual number is ${args.length}: pass one grouping column`,
          this.sql,
          call.start,
        );
      }
      const i = keys.findIndex((k) => k.same === this.same(args[0]));
      if (i < 0) {
        throw new SqlError(
          'GROUPING_COLUMN_MISMATCH',
          `Column of grouping (${pretty[0]}) can't be found in grouping columns ${keys.map((k) => k.text).join(',')}: pass one of the GROUP BY's expressions`,
          this.sql,
          call.start,
        );
      }
      text = `CAST(shiftright(${id}, ${keys.length - 1 - i}) & 1 AS TINYINT)`;
    } else {
      if (args.length > 0 && (args.length !== keys.length || args.some((a, i) => this.same(a) !== keys[i].same))) {
        throw new SqlError(
          'GROUPING_ID_COLUMN_MISMATCH',
          `Columns of grouping_id (${pretty.join(',')}) does not match grouping columns (${keys.map((k) => k.text).join(',')}): list every grouping column in that order, or none`,
          this.sql,
          call.start,
        );
      }
      text = `CAST(${id} AS BIGINT)`;
    }
    const column: GroupingColumn = { column: `sluice_hidden_grouping_${this.byCall.size}_`, name: `${name}(${pretty.join(', ')})`, text };
    this.byCall.set(key, column);
    return column;
  }
}

/** The texts of a call's arguments, as written (split at the commas outside parentheses). */
function argTexts(call: AggregateCall): string[] {
  const tokens = words(call.text);
  const open = tokens.findIndex((t) => t.kind === 'op' && t.text === '(');
  const out: string[] = [];
  let depth = 0;
  let from = tokens[open].pos + 1;
  for (const t of tokens.slice(open + 1)) {
    if (t.kind !== 'op') continue;
    if (t.text === '(' || t.text === '[') depth++;
    else if ((t.text === ')' || t.text === ']') && depth > 0) depth--;
    else if (t.text === ',' || t.text === ')') {
      out.push(call.text.slice(from, t.pos).trim());
      from = t.pos + 1;
      if (t.text === ')') break;
    }
  }
  return out.length === 1 && out[0] === '' ? [] : out;
}
