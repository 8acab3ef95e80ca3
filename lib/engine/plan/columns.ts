/**
 * The columns of a plan's rows: those visible after each stateless stage (with the analysis
 * checks of the stages: unknown columns, types, a join's keys and names), an aggregate's output
 * type, and the time a window value stands for.
 */
import { InvalidQueryError } from '../errors';
import { type ColumnType, type DataType, WINDOW_STRUCT } from '../schema';
import { type Micros, subMicros } from '../timestamps';
import { avgDecimalType, sumDecimalType } from '../decimal';
import { ddlOf } from '../ddl';
import { PARTITION_HINT, pathColumn } from './paths';
import { isBooleanAgg, isCollectAgg, isPairAgg, isStatisticalAgg } from './agg-kinds';
import type { AggSpec, ExplodeItem, JoinKeyPair, JoinPredicate, JoinStage, ProjectItem, StatelessStage, StaticTableSpec } from './types';

/**
 * The time (epoch µs) a window value stands for when a window is taken over it: Spark's
 * window_time, its end − 1 µs. Any other value is its own time.
 */
export function timeOfValue(v: unknown): Micros | null | undefined {
  if (v !== null && typeof v === 'object') return subMicros((v as { end: Micros }).end, 1);
  return v as Micros | null | undefined;
}

/** The time (epoch µs) a marked value is compared with a watermark by: a window by its end. */
export function watermarkTimeOf(v: unknown): Micros | null | undefined {
  if (v !== null && typeof v === 'object') return (v as { end: Micros }).end;
  return v as Micros | null | undefined;
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
      if (s.items.filter((i) => i.kind === 'explode').length > 1) {
        throw new InvalidQueryError(
          `select: [UNSUPPORTED_GENERATOR.MULTI_GENERATOR] only one generator (explode, posexplode, ...) is allowed per select, but there are ${s.items.filter((i) => i.kind === 'explode').length}: explode in two selects one after the other`,
        );
      }
      cols = s.items.flatMap((item): ColumnInfo[] => {
        if (item.kind === 'explode') return explodeColumns(item, before);
        if (item.kind === 'path') return [pathColumn(item.path, before, 'select', item.as)];
        return [projectColumn(item)];
      });
      function projectColumn(item: Exclude<ProjectItem, { kind: 'explode' | 'path' }>): ColumnInfo {
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
      }
      const names = new Set<string>();
      for (const c of cols) {
        if (names.has(c.name)) throw new InvalidQueryError(`select: the output column ${JSON.stringify(c.name)} is listed twice: give each item its own name`);
        names.add(c.name);
      }
    } else if (s.kind === 'withColumn') {
      cols = replaced(cols, { ...(s.dataType ?? { type: s.type }), name: s.name });
    } else if (s.kind === 'selectExpr') {
      cols = [...s.compiled.columns];
    } else if (s.kind === 'withColumnExpr') {
      cols = replaced(cols, s.compiled.type);
    } else if (s.kind === 'extract') {
      const c = pathColumn(s.path, cols, 'groupBy', s.name);
      cols = [...cols.filter((x) => x.name !== s.name), c];
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

/** The columns an explode item gives (Spark's names, or its `names` in order), its input checked to be an ARRAY or a MAP. */
export function explodeColumns(item: ExplodeItem, cols: readonly ColumnInfo[]): ColumnInfo[] {
  const fn = `${item.position ? 'pos' : ''}explode${item.outer ? '_outer' : ''}`;
  const t = pathColumn(item.path, cols, fn);
  let out: ColumnInfo[];
  const pos: ColumnInfo[] = item.position ? [{ name: 'pos', type: 'INT' }] : [];
  if (t.type === 'ARRAY') out = [...pos, { ...t.element!, name: 'col' }];
  else if (t.type === 'MAP') out = [...pos, { ...(t.key ?? { type: 'STRING' }), name: 'key' }, { ...t.value!, name: 'value' }];
  else {
    throw new InvalidQueryError(
      `select: [DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] cannot resolve ${fn}(${item.path.text}): its parameter must be an ARRAY or a MAP, but ${item.path.text} is ${ddlOf(t)}: explode an array or a map column`,
    );
  }
  if (item.names === null) return out;
  if (item.names.length !== out.length) {
    throw new InvalidQueryError(
      `select: ${fn}(${item.path.text}) gives ${out.length} column(s) (${out.map((c) => c.name).join(', ')}) but .as names ${item.names.length} (${item.names.join(', ')}): [UDTF_ALIAS_NUMBER_MISMATCH] name each column once`,
    );
  }
  return out.map((c, i) => ({ ...c, name: item.names![i] }));
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
  return joinOutputColumns(left, right, s.on, s.type === 'leftSemi' || s.type === 'leftAnti', where);
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
  const onLeft = left.some((c) => c.name === p.column);
  const onRight = right.some((c) => c.name === p.column);
  if (!onLeft && !onRight) throw unknownColumn(p.column, [...left, ...right], `${where} condition`);
  if (onLeft && onRight) {
    // Spark refuses an unqualified name both sides have; which side an item reads decides where it
    // applies (an outer join's preserved side or the other), so it is not guessed either
    throw new InvalidQueryError(
      `${where}: [AMBIGUOUS_REFERENCE] condition column ${JSON.stringify(p.column)} is on both sides: a condition item names the columns of one side; rename the column on one side first (select, withColumn), or give the condition as an expression with left.${p.column} or right.${p.column}`,
    );
  }
}

/** The side a condition item reads: 'both' for an anyOf that names columns of each side (checked on the pair). */
export function predicateSide(p: JoinPredicate, left: readonly ColumnInfo[]): 'left' | 'right' | 'both' {
  const cols = predicateColumns(p);
  const onLeft = cols.filter((c) => left.some((x) => x.name === c)).length;
  return onLeft === cols.length ? 'left' : onLeft === 0 ? 'right' : 'both';
}

/** The analysis error for a column name that is not among `cols`. */
export function unknownColumn(name: string, cols: readonly ColumnInfo[], where: string): InvalidQueryError {
  return new InvalidQueryError(
    `${where}: column ${JSON.stringify(name)} does not exist; the columns are ${cols.map((c) => c.name).join(', ')}: fix the name or add it to the schema ${PARTITION_HINT}`,
  );
}

/** The columns a condition item reads. */
export function predicateColumns(p: JoinPredicate): string[] {
  return 'anyOf' in p ? p.anyOf.flatMap(predicateColumns) : [p.column];
}

/**
 * An aggregate's output type, by Spark's rules (FORMAT-3 "Types"): count and approx_count_distinct
 * BIGINT; sum of an integer type BIGINT, of DECIMAL(p,s) DECIMAL(min(38, p + 10), s), of anything
 * else DOUBLE (a FLOAT widened); avg of DECIMAL(p,s) DECIMAL(min(38, p + 4), min(38, s + 4)), else
 * DOUBLE; min, max, first and last keep the column's type; the second-moment aggregates (stddev,
 * variance, ...) DOUBLE, count_if BIGINT, bool_and and bool_or BOOLEAN, collect_list and
 * collect_set an ARRAY of the column's type; regr_count BIGINT, regr_avgx and regr_avgy avg's type
 * of x and of y, the other pair aggregates (corr, covar_*, regr_*) DOUBLE.
 */
export function aggOutputType(a: AggSpec, cols: readonly ColumnInfo[]): DataType {
  const found = a.column ? cols.find((c) => c.name === a.column) : undefined;
  switch (a.fn) {
    case 'count':
    case 'approxCountDistinct':
      return { type: 'LONG' };
    case 'try_avg':
    case 'avg':
      return found?.type === 'DECIMAL' ? { type: 'DECIMAL', ...avgDecimalType(found.precision ?? 10, found.scale ?? 0) } : { type: 'DOUBLE' };
    case 'try_sum':
    case 'sum':
      if (found?.type === 'DECIMAL') return { type: 'DECIMAL', ...sumDecimalType(found.precision ?? 10, found.scale ?? 0) };
      return found?.type === 'INT' || found?.type === 'LONG' ? { type: 'LONG' } : { type: 'DOUBLE' };
    case 'count_if':
    case 'regr_count':
      return { type: 'LONG' };
    case 'regr_avgx':
      return aggOutputType({ fn: 'avg', column: a.by, as: a.as }, cols);
    case 'regr_avgy':
      return aggOutputType({ fn: 'avg', column: a.column, as: a.as }, cols);
    case 'median':
    case 'product':
      return { type: 'DOUBLE' };
    case 'listagg':
      return { type: 'STRING' };
    case 'percentile':
    case 'percentile_disc':
      return Array.isArray(a.percentage) ? { type: 'ARRAY', element: { type: 'DOUBLE' } } : { type: 'DOUBLE' };
    default: {
      if (isStatisticalAgg(a.fn) || isPairAgg(a.fn)) return { type: 'DOUBLE' };
      if (isBooleanAgg(a.fn)) return { type: 'BOOLEAN' };
      if (!found) return { type: 'STRING' };
      // the column's type, without its name or the window mark; a window is Spark's STRUCT<start, end> of TIMESTAMPs
      const { name: _name, window: _window, ...plain } = found;
      const type: DataType = found.window ? WINDOW_STRUCT : plain;
      return isCollectAgg(a.fn) || (a.fn === 'percentile_approx' && Array.isArray(a.percentage)) ? { type: 'ARRAY', element: type } : type;
    }
  }
}

/**
 * The columns with `col` in place of the column of its name, where that column stands, or added
 * last: Spark's withColumns selects the input's columns with the replaced one in its place.
 */
function replaced(cols: ColumnInfo[], col: ColumnInfo): ColumnInfo[] {
  const i = cols.findIndex((c) => c.name === col.name);
  return i < 0 ? [...cols, col] : cols.map((c, j) => (j === i ? col : c));
}
