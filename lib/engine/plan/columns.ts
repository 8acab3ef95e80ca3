/**
 * The columns of a plan's rows: those visible after each stateless stage (with the analysis
 * checks of the stages: unknown columns, types, a join's keys and names), an aggregate's output
 * type, and the time a window value stands for.
 */
import { InvalidQueryError } from '../errors';
import type { ColumnType, DataType } from '../schema';
import type { AggSpec, JoinKeyPair, JoinPredicate, JoinStage, StatelessStage, StaticTableSpec } from './types';

/**
 * The time a window value stands for when a window is taken over it: Spark's window_time, its
 * end − 1 µs (in epoch ms, end − 0.001). Any other value is its own time.
 */
export function timeOfValue(v: unknown): number | null | undefined {
  if (v !== null && typeof v === 'object') return (v as { end: number }).end - 0.001;
  return v as number | null | undefined;
}

/** The time a marked value is compared with a watermark by: a window by its end. */
export function watermarkTimeOf(v: unknown): number | null | undefined {
  if (v !== null && typeof v === 'object') return (v as { end: number }).end;
  return v as number | null | undefined;
}

/** A column of a plan's rows: its name and full type (a DECIMAL's precision and scale, a STRUCT's fields...). */
export interface ColumnInfo extends DataType {
  readonly name: string;
  /** A window column ({start, end}; its type says TIMESTAMP): an aggregation's window or session_window, or a select's window. */
  readonly window?: boolean;
}

/** The columns visible after a list of stages, starting from the source schema. */
export function columnsAfter(start: readonly ColumnInfo[], stages: readonly StatelessStage[]): ColumnInfo[] {
  let cols = [...start];
  for (const s of stages) {
    if (s.kind === 'select') {
      cols = s.columns.map((c) => {
        const found = cols.find((x) => x.name === c);
        if (!found) throw unknownColumn(c, cols, 'select');
        return found;
      });
    } else if (s.kind === 'project') {
      const before = cols;
      const find = (c: string) => {
        const found = before.find((x) => x.name === c);
        if (!found) throw unknownColumn(c, before, 'select');
        return found;
      };
      cols = s.items.map((item): ColumnInfo => {
        if (item.kind === 'column') {
          const found = find(item.column);
          return item.as === found.name ? found : { ...found, name: item.as };
        }
        if (item.kind === 'window') {
          const found = find(item.window.column);
          if (found.type !== 'TIMESTAMP' || found.window)
            throw new InvalidQueryError(
              `select: window(${item.window.column}, ...) needs a TIMESTAMP column, but ${item.window.column} is ${found.window ? 'a window' : found.type}: take the window over a TIMESTAMP column`,
            );
          return { name: item.as, type: 'TIMESTAMP', window: true };
        }
        const found = find(item.column);
        if (!found.window)
          throw new InvalidQueryError(
            `select: ${item.kind}(${item.column}) needs a window column, but ${item.column} is ${found.type}: name an aggregation's window column`,
          );
        return { name: item.as, type: 'TIMESTAMP' };
      });
      const names = new Set<string>();
      for (const c of cols) {
        if (names.has(c.name)) throw new InvalidQueryError(`select: the output column ${JSON.stringify(c.name)} is listed twice: give each item its own name`);
        names.add(c.name);
      }
    } else if (s.kind === 'withColumn') {
      cols = [...cols.filter((c) => c.name !== s.name), { name: s.name, type: s.type }];
    } else if (s.kind === 'watermark') {
      const found = cols.find((x) => x.name === s.column);
      if (!found) throw unknownColumn(s.column, cols, 'withWatermark');
      if (found.type !== 'TIMESTAMP') {
        throw new InvalidQueryError(
          `withWatermark("${s.column}", "${s.delayText}"): event time must be a TIMESTAMP column, but ${s.column} is ${found.type}: declare it TIMESTAMP in the schema or derive a TIMESTAMP column with withColumn`,
        );
      }
    } else if (s.kind === 'join') {
      cols = joinedColumns(cols, s);
    }
  }
  return cols;
}

/** The numeric types, which a join key may mix. */
export const NUMERIC: ReadonlySet<ColumnType> = new Set(['INT', 'LONG', 'DOUBLE']);

/** A static table's description in errors. */
export function describeStaticTable(t: StaticTableSpec): string {
  return t.kind === 's3' ? t.uri : t.kind === 'dynamodb' ? `dynamodb://${t.tableName}` : 'staticTable.rows';
}

/** The columns after a stream-static join (FORMAT-2 "Output rows"), its keys and names checked. */
function joinedColumns(left: readonly ColumnInfo[], s: JoinStage): ColumnInfo[] {
  const right = s.table.schema.columns;
  const where = `join with ${describeStaticTable(s.table)}`;
  for (const k of s.on) {
    if (typeof k.left !== 'string' || typeof k.right !== 'string')
      throw new InvalidQueryError(`${where}: a key of \`on\` must be a column name or { left, right }, not ${JSON.stringify(k)}`);
    const l = left.find((c) => c.name === k.left);
    if (!l) throw unknownColumn(k.left, left, `${where} (stream side)`);
    const r = right.find((c) => c.name === k.right);
    if (!r) throw unknownColumn(k.right, right, `${where} (table side)`);
    if (l.type !== r.type && !(NUMERIC.has(l.type) && NUMERIC.has(r.type))) {
      throw new InvalidQueryError(
        `${where}: key ${k.left} is ${l.type} on the stream side but ${k.right} is ${r.type} in the table: declare both the same type`,
      );
    }
  }
  if (s.table.kind === 'dynamodb') {
    const keys = s.on.map((k) => k.right).sort();
    if (keys.join('\u0000') !== [...s.table.key].sort().join('\u0000')) {
      throw new InvalidQueryError(
        `${where}: the table is looked up by its key (${s.table.key.join(', ')}), so \`on\` must name exactly those columns on its side, not ${s.on.map((k) => k.right).join(', ')}`,
      );
    }
  }
  for (const p of s.condition) checkPredicate(p, left, right, where);
  return joinOutputColumns(left, right, s.on, s.type === 'leftSemi', where);
}

/** A join's output columns (FORMAT-2 "Output rows"): the string keys, the left's others, the right's others; leftSemi: the left's. */
export function joinOutputColumns(
  left: readonly ColumnInfo[],
  right: readonly ColumnInfo[],
  on: readonly JoinKeyPair[],
  semi: boolean,
  where: string,
): ColumnInfo[] {
  if (semi) return [...left];
  const using = on.filter((k) => k.using).map((k) => k.left);
  const usingSet = new Set(using);
  const rightOthers = right.filter((c) => !usingSet.has(c.name));
  for (const c of rightOthers) {
    if (left.some((l) => l.name === c.name)) {
      throw new InvalidQueryError(`${where}: column ${c.name} is on both sides: rename it on one side (withColumn, select) or join on it by name`);
    }
  }
  return [...using.map((n) => left.find((c) => c.name === n)!), ...left.filter((c) => !usingSet.has(c.name)), ...rightOthers.map((c): ColumnInfo => c)];
}

/** A join condition item checked: its op, and its column on one side or the other. */
export function checkPredicate(p: JoinPredicate, left: readonly ColumnInfo[], right: readonly ColumnInfo[], where: string): void {
  if ('anyOf' in p) {
    if (!Array.isArray(p.anyOf) || p.anyOf.length === 0) throw new InvalidQueryError(`${where}: a condition's anyOf must be a non-empty list of predicates`);
    for (const q of p.anyOf) checkPredicate(q, left, right, where);
    return;
  }
  if (!['=', '!=', '<', '<=', '>', '>='].includes(p.op))
    throw new InvalidQueryError(`${where}: condition op ${JSON.stringify(p.op)} is not one of = != < <= > >=`);
  if (!left.some((c) => c.name === p.column) && !right.some((c) => c.name === p.column)) {
    throw unknownColumn(p.column, [...left, ...right], `${where} condition`);
  }
}

/** The analysis error for a column name that is not among `cols`. */
export function unknownColumn(name: string, cols: readonly ColumnInfo[], where: string): InvalidQueryError {
  return new InvalidQueryError(
    `${where}: column ${JSON.stringify(name)} does not exist; the columns are ${cols.map((c) => c.name).join(', ')}: fix the name or add it to the schema`,
  );
}

/** The columns a condition item reads. */
export function predicateColumns(p: JoinPredicate): string[] {
  return 'anyOf' in p ? p.anyOf.flatMap(predicateColumns) : [p.column];
}

export function aggOutputType(a: AggSpec, cols: readonly ColumnInfo[]): ColumnType {
  const inType = a.column ? cols.find((c) => c.name === a.column)?.type : undefined;
  switch (a.fn) {
    case 'count':
    case 'approxCountDistinct':
      return 'LONG';
    case 'avg':
      return 'DOUBLE';
    case 'sum':
      return inType === 'INT' || inType === 'LONG' ? 'LONG' : 'DOUBLE';
    default:
      return inType ?? 'STRING';
  }
}
