/**
 * Spark's column operations that are shorthand for a projection or a filter (drop,
 * withColumns, withColumnRenamed, na.drop, na.fill, na.replace): each reads the frame's columns and
 * says which select, selectExpr or filter does its work, so the frame (frame.ts) adds nothing a
 * query built by hand could not hold, and the analysis checks it as any other stage.
 */
import { InvalidQueryError } from '../errors';
import { ddlOf } from '../ddl';
import type { ColumnInfo } from '../plan/columns';
import type { ProjectItem, SortStageKey } from '../plan/types';
import type { Row } from '../ports';
import { holdsType } from '../schema';
import { analyzeExpression, compileExpression } from '../expr';
import { comparator } from '../expr/values';
import { commonType, isNumeric, sameType, TIMESTAMP, toDataType } from '../expr/types';
import { resolveName } from '../resolve-name';
import { Column } from './column';
import type { SortKey } from './functions';
import { quoteName, sqlLiteral } from './sql-text';

/** What an operation does to the frame: nothing, a projection (select's items), selectExpr's items, or a filter. */
export type ColumnStep =
  | { readonly kind: 'same' }
  | { readonly kind: 'project'; readonly items: ReadonlyArray<string | ProjectItem> }
  | { readonly kind: 'selectExpr'; readonly items: readonly string[] }
  | { readonly kind: 'filter'; readonly text: string; readonly label: string };

const SAME: ColumnStep = { kind: 'same' };

/** An expression's text, from a string or a Column; `where` names the call in the error. */
export function exprText(e: unknown, where: string): string {
  if (e instanceof Column) return e.sql;
  if (typeof e !== 'string' || e.trim() === '')
    throw new InvalidQueryError(`${where}: ${JSON.stringify(e)} is not an expression: give Spark SQL text, e.g. "amount > 0", or expr(...)`);
  return e;
}

/** A value fillna takes: a finite number, a string or a boolean. */
function fillValue(v: unknown): number | string | boolean {
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'string' || typeof v === 'boolean') return v;
  throw new InvalidQueryError(`fillna(${JSON.stringify(v)}): the value is a finite number, a string or a boolean, as Spark's na.fill takes`);
}

/** The columns `subset` names (every column when absent), matched in any case; a name that is no column is refused. */
function subsetColumns(where: string, cols: readonly ColumnInfo[], subset: readonly string[] | undefined): readonly ColumnInfo[] {
  if (subset === undefined) return cols;
  return subset.map((name) => {
    const c = resolveName(cols, String(name));
    if (c === undefined)
      throw new InvalidQueryError(`${where}: subset names ${JSON.stringify(name)}, which is no column; the columns are ${cols.map((x) => x.name).join(', ')}`);
    return c;
  });
}

/** Spark's `drop`: the columns left without the named ones (any case; a name the frame does not have is ignored). */
export function dropStep(cols: readonly ColumnInfo[], names: readonly string[]): ColumnStep {
  for (const c of names)
    if (typeof c !== 'string') throw new InvalidQueryError(`drop: ${JSON.stringify(c)} is not a column name: pass names, e.g. drop('debug', 'raw')`);
  const gone = new Set(names.map((c) => c.toLowerCase()));
  const kept = cols.filter((c) => !gone.has(c.name.toLowerCase())).map((c) => c.name);
  if (kept.length === cols.length) return SAME;
  if (kept.length === 0) {
    throw new InvalidQueryError(
      `drop(${names.map((c) => JSON.stringify(c)).join(', ')}) leaves no column: a query emits rows of at least one column; keep one, or select the ones to emit`,
    );
  }
  return { kind: 'project', items: kept };
}

/** Spark's `withColumns`: one projection in which every expression reads the columns as they were. */
export function withColumnsStep(cols: readonly ColumnInfo[], columns: Readonly<Record<string, string | Column>>): ColumnStep {
  if (columns === null || typeof columns !== 'object' || Object.keys(columns).length === 0)
    throw new InvalidQueryError(`withColumns(${JSON.stringify(columns)}): pass an object of column names to expressions, e.g. { total: 'qty * price' }`);
  const entries = Object.entries(columns).map(([name, e]) => [name, exprText(e, `withColumns(${JSON.stringify(name)}: ...)`)] as const);
  const seen = new Map<string, string>();
  for (const [name] of entries) {
    const twin = seen.get(name.toLowerCase());
    if (twin !== undefined)
      throw new InvalidQueryError(
        `withColumns: [COLUMN_ALREADY_EXISTS] the column ${quoteName(name)} is given twice (${JSON.stringify(twin)} and ${JSON.stringify(name)}): give each name once`,
      );
    seen.set(name.toLowerCase(), name);
  }
  for (const [name, text] of entries) {
    if (analyzeExpression(text, cols).generator !== undefined) {
      throw new InvalidQueryError(
        `withColumns(${JSON.stringify(name)}: ${JSON.stringify(text)}): [UNSUPPORTED_GENERATOR.OUTSIDE_SELECT] a generator is only allowed in a select: selectExpr("*", "${text} AS ${name}")`,
      );
    }
  }
  const taken = new Set<string>();
  const items = cols.map((c) => {
    const e = entries.find(([name]) => name.toLowerCase() === c.name.toLowerCase());
    if (e === undefined) return quoteName(c.name);
    taken.add(e[0]);
    return `${e[1]} AS ${quoteName(e[0])}`;
  });
  for (const [name, text] of entries) if (!taken.has(name)) items.push(`${text} AS ${quoteName(name)}`);
  return { kind: 'selectExpr', items };
}

/** Spark's `withColumnRenamed`: `existing` (any case) named `name` in its place; renaming onto another column's name is refused. */
export function renameStep(cols: readonly ColumnInfo[], existing: string, name: string): ColumnStep {
  if (typeof existing !== 'string' || typeof name !== 'string' || name === '')
    throw new InvalidQueryError(`withColumnRenamed(${JSON.stringify(existing)}, ${JSON.stringify(name)}): pass the column's name and its new, non-empty name`);
  const at = resolveName(cols, existing);
  if (at === undefined || at.name === name) return SAME;
  const clash = cols.find((c) => c !== at && c.name.toLowerCase() === name.toLowerCase());
  if (clash !== undefined) {
    throw new InvalidQueryError(
      `withColumnRenamed(${JSON.stringify(existing)}, ${JSON.stringify(name)}): the frame already has a column ${JSON.stringify(clash.name)}, and a row holds one column of a name: drop('${clash.name}') first, or pick another name`,
    );
  }
  return { kind: 'project', items: cols.map((c) => (c === at ? { kind: 'column' as const, as: name, column: c.name } : c.name)) };
}

/** Spark's `na.drop`: the filter keeping rows with at least `thresh` (else by `how`) values that are neither null nor NaN among `subset`. */
export function dropnaStep(cols: readonly ColumnInfo[], how: string, thresh: number | undefined, subset: readonly string[] | undefined): ColumnStep {
  if (how !== 'any' && how !== 'all') throw new InvalidQueryError(`dropna(${JSON.stringify(how)}): how is 'any' or 'all'`);
  const among = subsetColumns('dropna', cols, subset);
  const need = thresh ?? (how === 'any' ? among.length : 1);
  if (!Number.isInteger(need) || need < 0) throw new InvalidQueryError(`dropna(thresh ${JSON.stringify(thresh)}): thresh is a whole number of values, e.g. 2`);
  if (among.length === 0) return need <= 0 ? SAME : { kind: 'filter', text: 'false', label: 'dropna' };
  const present = among.map((c) => {
    const q = quoteName(c.name);
    return `CASE WHEN ${q} IS NULL${c.type === 'DOUBLE' ? ` OR isnan(${q})` : ''} THEN 0 ELSE 1 END`;
  });
  return { kind: 'filter', text: `${present.join(' + ')} >= ${need}`, label: 'dropna' };
}

/** Spark's `na.fill`: coalesce(column, value cast to its type) for the columns of the value's kind (or each named column of an object of values). */
export function fillnaStep(
  cols: readonly ColumnInfo[],
  value: number | string | boolean | Readonly<Record<string, number | string | boolean>>,
  subset: readonly string[] | undefined,
): ColumnStep {
  const fills = new Map<string, number | string | boolean>();
  if (value !== null && typeof value === 'object') {
    if (subset !== undefined) throw new InvalidQueryError('fillna(values, subset): with an object of values per column, leave subset out');
    for (const [name, v] of Object.entries(value)) {
      const c = resolveName(cols, name);
      if (c === undefined) throw new InvalidQueryError(`fillna: no column ${JSON.stringify(name)}; the columns are ${cols.map((x) => x.name).join(', ')}`);
      fills.set(c.name, fillValue(v));
    }
  } else {
    const v = fillValue(value);
    for (const c of subsetColumns('fillna', cols, subset)) {
      if (c.window) continue;
      if (typeof v === 'number' ? isNumeric(c) : typeof v === 'string' ? c.type === 'STRING' : c.type === 'BOOLEAN') fills.set(c.name, v);
    }
  }
  if (fills.size === 0) return SAME;
  const items = cols.map((c) => {
    const v = fills.get(c.name);
    const q = quoteName(c.name);
    if (v === undefined) return q;
    const filled = c.type === 'DOUBLE' ? `nanvl(${q}, NULL)` : q;
    return `coalesce(${filled}, CAST(${sqlLiteral(v).sql} AS ${ddlOf(c)})) AS ${q}`;
  });
  return { kind: 'selectExpr', items };
}

/** A value na.replace matches or puts in: a number (NaN and the infinities too), a string or a boolean. */
export type ReplaceScalar = number | string | boolean;

/** The kind a replacement's values are of; Spark's replace takes one kind per call. */
function scalarKind(v: unknown): 'number' | 'string' | 'boolean' | null {
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' ? (typeof v as 'number' | 'string' | 'boolean') : null;
}

/**
 * The pairs (value to match, its replacement) of replace's arguments, PySpark's forms: a scalar or
 * a list to match with a scalar or a list of as many replacements, or one mapping (an object of
 * strings, or a Map) to replacements; a replacement may be null.
 */
function replacePairs(toReplace: unknown, value: unknown): Array<[ReplaceScalar, ReplaceScalar | null]> {
  const where = `replace(${JSON.stringify(toReplace instanceof Map ? [...toReplace] : toReplace)}${value === undefined ? '' : `, ${JSON.stringify(value)}`})`;
  let pairs: Array<[unknown, unknown]>;
  if (toReplace instanceof Map) pairs = [...toReplace.entries()];
  else if (Array.isArray(toReplace)) {
    if (Array.isArray(value) && value.length !== toReplace.length)
      throw new InvalidQueryError(
        `${where}: the lists of values to match and of replacements are of the same length (${toReplace.length} and ${value.length})`,
      );
    if (value === undefined) throw new InvalidQueryError(`${where}: give the replacement too, e.g. replace(['N/A', '-'], null)`);
    pairs = toReplace.map((k, i) => [k, Array.isArray(value) ? value[i] : value]);
  } else if (toReplace !== null && typeof toReplace === 'object') pairs = Object.entries(toReplace);
  else {
    if (value === undefined || Array.isArray(value)) throw new InvalidQueryError(`${where}: give one replacement for one value, e.g. replace('N/A', null)`);
    pairs = [[toReplace, value]];
  }
  if (pairs.length === 0) throw new InvalidQueryError(`${where}: nothing to replace: give at least one value to match`);
  const keyKind = scalarKind(pairs[0][0]);
  for (const [k, v] of pairs) {
    if (scalarKind(k) === null)
      throw new InvalidQueryError(`${where}: ${JSON.stringify(k) ?? String(k)} cannot be matched: match numbers, strings or booleans`);
    const vk = v === null ? keyKind : scalarKind(v);
    if (scalarKind(k) !== keyKind || vk !== keyKind)
      throw new InvalidQueryError(
        `${where}: mixed kinds of values (${JSON.stringify(k)} → ${JSON.stringify(v) ?? String(v)}): Spark replaces numbers with numbers, strings with strings and booleans with booleans (or null); make one call per kind`,
      );
  }
  // a value given twice: its last replacement, in its first place (as a map built from the pairs)
  return [...new Map(pairs as Array<[ReplaceScalar, ReplaceScalar | null]>)];
}

/**
 * Spark's `na.replace` (PySpark's `replace`): in each column of the values' kind among `subset`
 * (every column when absent; numbers match every numeric column), `CASE c WHEN k THEN v ... ELSE
 * c END` with every value cast to the column's type, as Spark's replaceCol builds it (a number
 * matched in an INT column is cast to INT first, so 1.5 matches 1). A NaN or infinity matches only
 * in DOUBLE columns: no value of the other numeric types equals one.
 */
export function replaceStep(cols: readonly ColumnInfo[], toReplace: unknown, value: unknown, subset: readonly string[] | undefined): ColumnStep {
  const pairs = replacePairs(toReplace, value);
  const kind = scalarKind(pairs[0][0]);
  const among = new Set(subsetColumns('replace', cols, subset));
  let changed = false;
  const items = cols.map((c) => {
    const q = quoteName(c.name);
    const fits = kind === 'number' ? isNumeric(c) : kind === 'string' ? c.type === 'STRING' : c.type === 'BOOLEAN';
    if (!among.has(c) || !fits || c.window) return q;
    const type = ddlOf(c);
    const branches = pairs
      .filter(([k]) => c.type === 'DOUBLE' || typeof k !== 'number' || Number.isFinite(k))
      .map(([k, v]) => `WHEN CAST(${sqlLiteral(k).sql} AS ${type}) THEN CAST(${sqlLiteral(v).sql} AS ${type})`);
    if (branches.length === 0) return q;
    changed = true;
    return `CASE ${q} ${branches.join(' ')} ELSE ${q} END AS ${q}`;
  });
  return changed ? { kind: 'selectExpr', items } : SAME;
}

/** What each side of a union does to its rows before they meet: the columns in the output's order, names and types. */
export interface UnionSteps {
  readonly left: readonly ColumnStep[];
  readonly right: readonly ColumnStep[];
}

/** "first", "second", ... for Spark's messages about a column's place. */
function ordinal(i: number): string {
  const words = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
  return words[i] ?? `${i + 1}th`;
}

/**
 * Spark's union (by position) and unionByName: the output has the left side's column names, each
 * column of the wider of its two types (Spark's WidenSetOperationTypes, with ANSI's string
 * promotion); the right side's rows are renamed (and cast) into those columns, and the left's cast
 * where the right's type is wider. By name, a column one side lacks is refused, or with
 * `allowMissing` filled with NULL of the other side's type (the right's extra columns come last).
 */
export function unionSteps(left: readonly ColumnInfo[], right: readonly ColumnInfo[], byName: boolean, allowMissing: boolean): UnionSteps {
  const what = byName ? 'unionByName' : 'union';
  const names = (cols: readonly ColumnInfo[]) => cols.map((c) => c.name).join(', ');
  // the output's columns: [left's column or null, right's column or null]
  const pairs: Array<[ColumnInfo | null, ColumnInfo | null]> = [];
  if (byName) {
    for (const l of left) {
      const r = resolveName(right, l.name) ?? null;
      if (r === null && !allowMissing)
        throw new InvalidQueryError(
          `unionByName: the other stream has no column ${quoteName(l.name)} (its columns: ${names(right)}): add it there, or pass allowMissingColumns true to fill it with NULL`,
        );
      pairs.push([l, r]);
    }
    for (const r of right) {
      if (resolveName(left, r.name) !== undefined) continue;
      if (!allowMissing)
        throw new InvalidQueryError(
          `unionByName: the other stream's column ${quoteName(r.name)} is not in this one (its columns: ${names(left)}): drop it there, or pass allowMissingColumns true to keep it, NULL in this stream's rows`,
        );
      pairs.push([null, r]);
    }
  } else {
    if (left.length !== right.length)
      throw new InvalidQueryError(
        `union: [NUM_COLUMNS_MISMATCH] UNION can only be performed on inputs with the same number of columns, but the first input has ${left.length} columns (${names(left)}) and the second input has ${right.length} columns (${names(right)}): select the same columns on both, in the same order (or unionByName)`,
      );
    for (let i = 0; i < left.length; i++) pairs.push([left[i], right[i]]);
  }
  const leftRename: Array<string | ProjectItem> = [];
  const rightRename: Array<string | ProjectItem> = [];
  const leftItems: string[] = [];
  const rightItems: string[] = [];
  let leftCasts = false;
  let rightCasts = false;
  let rightRenames = false;
  pairs.forEach(([l, r], i) => {
    const name = (l ?? r)!.name;
    const q = quoteName(name);
    if (l !== null && r !== null) {
      const type = (l.window ?? false) === (r.window ?? false) ? commonType([l, r]) : null;
      if (type === null)
        throw new InvalidQueryError(
          `${what}: [INCOMPATIBLE_COLUMN_TYPE] UNION can only be performed on inputs with compatible column types. The ${ordinal(i)} column of the second input is "${r.window ? 'WINDOW' : ddlOf(r)}" type which is not compatible with "${l.window ? 'WINDOW' : ddlOf(l)}" at the same column of the first input: cast one of them`,
        );
      const ddl = ddlOf(toDataType(type));
      leftRename.push(l.name);
      rightRename.push(r.name === name ? r.name : { kind: 'column', as: name, column: r.name });
      rightRenames ||= r.name !== name;
      const castLeft = !sameType(l, type);
      const castRight = !sameType(r, type);
      leftCasts ||= castLeft;
      rightCasts ||= castRight;
      leftItems.push(castLeft ? `CAST(${q} AS ${ddl}) AS ${q}` : q);
      rightItems.push(castRight ? `CAST(${q} AS ${ddl}) AS ${q}` : q);
    } else if (l !== null) {
      leftItems.push(q);
      rightItems.push(`CAST(NULL AS ${ddlOf(l)}) AS ${q}`);
      rightCasts = true;
    } else {
      leftItems.push(`CAST(NULL AS ${ddlOf(r!)}) AS ${q}`);
      leftCasts = true;
      rightRename.push(r!.name);
      rightItems.push(q);
    }
  });
  const rightOrder = rightRename.length !== right.length || rightRename.some((item, i) => item !== right[i].name);
  return {
    left: leftCasts ? [{ kind: 'selectExpr', items: leftItems }] : [],
    right: [
      ...(rightRenames || rightOrder ? [{ kind: 'project' as const, items: rightRename }] : []),
      ...(rightCasts ? [{ kind: 'selectExpr' as const, items: rightItems }] : []),
    ],
  };
}

/** An orderBy key as the frame API takes it: a column's name, an expression (a Column), or a SortKey (`desc('n')`, `col.desc()`). */
export type OrderByArg = string | Column | SortKey;

/**
 * The sort stage's keys over the frame's columns `cols`: a name is the column (or a nested path,
 * `window.start`), a Column its expression; each compiled once, with Spark's order of its type
 * (expr/values.ts comparator; a window by its start, then its end). A MAP has no order, as in
 * Spark (INVALID_ORDERING_TYPE).
 */
export function sortKeys(cols: readonly ColumnInfo[], args: readonly OrderByArg[]): SortStageKey[] {
  if (args.length === 0) throw new InvalidQueryError("orderBy(): give at least one key, e.g. orderBy(desc('n'))");
  return args.map((arg) => {
    const k: SortKey = typeof arg === 'string' || arg instanceof Column ? { key: arg } : arg;
    if (k === null || typeof k !== 'object' || (typeof k.key !== 'string' && !(k.key instanceof Column)))
      throw new InvalidQueryError(
        `orderBy: ${JSON.stringify(arg)} is not a sort key: give a column name, a Column (expr(...), col.desc()) or { key, desc, nullsFirst }`,
      );
    const text = typeof k.key === 'string' ? (resolveName(cols, k.key) !== undefined ? quoteName(k.key) : k.key) : k.key.sql;
    const compiled = compileExpression(text, cols);
    const desc = k.desc === true;
    const direction = { desc, nullsFirst: k.nullsFirst ?? !desc };
    if (compiled.type.window && compiled.source !== undefined) {
      const column = compiled.source;
      const time = comparator(TIMESTAMP);
      const compare = (a: unknown, b: unknown) => {
        const x = a as { start: unknown; end: unknown };
        const y = b as { start: unknown; end: unknown };
        return time(x.start, y.start) || time(x.end, y.end);
      };
      return { text, ...direction, value: (row: Row) => row[column], compare };
    }
    if (holdsType(compiled.type, (t) => t.type === 'MAP'))
      throw new InvalidQueryError(
        `orderBy(${text}): [DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] ${compiled.sql} is or holds a MAP, which has no order: sort by one of its values, e.g. ${compiled.sql}['key']`,
      );
    return { text, ...direction, value: compiled.evaluate as (row: Row) => unknown, compare: comparator(compiled.sqlType) };
  });
}
