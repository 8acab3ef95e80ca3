/**
 * FROM and JOIN of a SQL query module as frame API calls: `STREAM read_files(...)` is
 * `readStream.format(...).schema(...).option(...).load(path?)`, `STREAM kinesis(...)` is
 * `.kinesis(name?)`, a WATERMARK clause `.withWatermark(col, delay)`; a JOIN is `frame.join(...)`
 * with the equi keys and the time range its ON condition gives (docs/sql.md, "Joins").
 */
import type { Ast } from '../expr/parser';
import type { ColumnInfo } from '../plan/columns';
import { readStream } from '../query/reader';
import { type StaticTable, staticTable } from '../query/static-table';
import type { StreamFrame } from '../query/frame';
import type { TimeRangeArg } from '../query/join-args';
import { conjunctsOf } from '../query/join-condition';
import type { AnyColumns } from '../query/types';
import { SqlError, unsupported } from './errors';
import type { JoinClause, Relation, SqlExpr } from './syntax';

/** The options of a relation: its named arguments, and the path (the first argument without a name). */
function argsOf(sql: string, r: Relation): { path?: string; named: Map<string, string | number | boolean> } {
  const named = new Map<string, string | number | boolean>();
  let path: string | undefined;
  r.args.forEach((a, i) => {
    if (a.name === undefined) {
      if (i !== 0 || typeof a.value !== 'string')
        throw unsupported(sql, a.pos, `${r.fn}: only the first argument may be given without a name (the path): write name => value`);
      path = a.value;
    } else named.set(a.name, a.value);
  });
  return { path, named };
}

/** The named argument `key` (any case) as a string, taken out of `named`. */
function take(named: Map<string, string | number | boolean>, key: string): string | undefined {
  for (const [k, v] of named) {
    if (k.toLowerCase() === key.toLowerCase()) {
      named.delete(k);
      return String(v);
    }
  }
  return undefined;
}

/** A streaming relation as a frame, `options` (SET's reader options) added to its own. */
export function streamOf(sql: string, r: Relation, options: ReadonlyArray<readonly [string, string | number | boolean]> = []): StreamFrame<AnyColumns> {
  if (!r.stream) {
    throw unsupported(sql, r.pos, `FROM ${r.fn}(...) without STREAM is a static table: the query reads a stream, so write FROM STREAM ${r.fn}(...)`);
  }
  const { path, named } = argsOf(sql, r);
  const kinesis = r.fn === 'kinesis' || r.fn === 'read_kinesis';
  if (!kinesis && r.fn !== 'read_files') {
    throw unsupported(
      sql,
      r.pos,
      `STREAM ${r.fn}(...) is not a source sluice reads: use read_files(...) (an S3 landing prefix) or kinesis(...) (a Kinesis stream)`,
    );
  }
  const where = kinesis ? (take(named, 'streamName') ?? path) : path;
  const format = take(named, 'format');
  const schema = take(named, 'schema');
  let reader = readStream.format(format ?? 'json');
  if (schema !== undefined) reader = reader.schema(schema);
  for (const [k, v] of [...named, ...options]) reader = reader.option(k, v);
  let frame = kinesis ? reader.kinesis(where) : reader.load(where);
  if (r.watermark) frame = frame.withWatermark(r.watermark.column, r.watermark.delay);
  return frame;
}

/** The column names of a static relation (a stream-static join's right side). */
export function staticColumns(sql: string, r: Relation): string[] {
  return staticOf(sql, r).spec.schema.columns.map((c) => c.name);
}

/** A static relation (a stream-static join's right side) as a StaticTable. */
function staticOf(sql: string, r: Relation): StaticTable<AnyColumns> {
  const { path, named } = argsOf(sql, r);
  const schema = take(named, 'schema');
  if (schema === undefined) throw new SqlError('UNSUPPORTED_FEATURE', `${r.fn}(...): give the table's schema => 'id STRING, name STRING'`, sql, r.pos);
  if (r.watermark) throw unsupported(sql, r.watermark.pos, 'WATERMARK on a static table: a watermark is for a stream (JOIN STREAM ...)');
  if (r.fn === 'read_files') {
    const format = take(named, 'format') ?? 'json';
    if (path === undefined) throw unsupported(sql, r.pos, "a static read_files needs its location: read_files('s3://bucket/prefix/', ...)");
    if (format !== 'json' && format !== 'csv') throw unsupported(sql, r.pos, `a static table's format '${format}' is not supported: json or csv`);
    return staticTable.s3(path, { format, schema });
  }
  if (r.fn === 'dynamodb') {
    const key = take(named, 'key');
    if (path === undefined || key === undefined)
      throw unsupported(sql, r.pos, "dynamodb('table-name', key => 'id', schema => '...') needs the table name and its key");
    return staticTable.dynamodb(path, { key: key.split(',').map((k) => k.trim()), schema });
  }
  throw unsupported(sql, r.pos, `${r.fn}(...) is not a table sluice reads: a static side is read_files('s3://...', ...) or dynamodb('table', ...)`);
}

const STREAM_JOINS: Record<string, string> = {
  INNER: 'inner',
  LEFT: 'leftOuter',
  'LEFT OUTER': 'leftOuter',
  RIGHT: 'rightOuter',
  'RIGHT OUTER': 'rightOuter',
  FULL: 'fullOuter',
  'FULL OUTER': 'fullOuter',
  'LEFT SEMI': 'leftSemi',
  SEMI: 'leftSemi',
};

/** Which side a column reference is on: by its qualifier (an alias), else by the side that has the column. */
function sideOf(sql: string, a: Ast, left: Side, right: Side): { side: 'left' | 'right'; column: string } | null {
  if (a.k !== 'name' || a.parts.length > 2) return null;
  const [q, c] = a.parts.length === 2 ? a.parts : [undefined, a.parts[0]];
  const has = (s: Side) => s.columns.some((x) => x.name === c);
  if (q !== undefined) {
    const side = left.aliases.includes(q.toLowerCase()) ? 'left' : right.aliases.includes(q.toLowerCase()) ? 'right' : null;
    if (side === null) throw new SqlError('UNRESOLVED_COLUMN', `${q}.${c}: ${q} is not the alias of either side of the join`, sql, a.pos);
    return { side, column: c };
  }
  if (has(left) && has(right)) {
    throw new SqlError('AMBIGUOUS_REFERENCE', `Reference ${c} is ambiguous: both sides have it; qualify it with the side's alias`, sql, a.pos);
  }
  if (has(left)) return { side: 'left', column: c };
  if (has(right)) return { side: 'right', column: c };
  return null;
}

interface Side {
  readonly aliases: readonly string[];
  readonly columns: readonly ColumnInfo[];
}

/** `col`, `col + INTERVAL ...` or `col - INTERVAL ...`: the column and the offset in µs. */
function offsetOf(a: Ast): { ref: Ast; us: number } | null {
  if (a.k === 'name') return { ref: a, us: 0 };
  if (a.k === 'binary' && (a.op === '+' || a.op === '-') && a.left.k === 'name' && a.right.k === 'lit' && a.right.type.type === 'INTERVAL') {
    if ('yearMonth' in a.right.type && a.right.type.yearMonth) return null;
    const us = a.right.value as number;
    return { ref: a.left, us: a.op === '+' ? us : -us };
  }
  return null;
}

/** Where an expression starts in the statement (an operator's node is at the operator). */
function startOf(a: Ast): number {
  switch (a.k) {
    case 'binary':
      return startOf(a.left);
    case 'is':
    case 'in':
    case 'between':
    case 'like':
      return startOf(a.arg);
    case 'field':
    case 'index':
      return startOf(a.base);
    case 'cast':
      return a.syntax === '::' ? startOf(a.arg) : a.pos;
    default:
      return a.pos;
  }
}

/** Every column reference (`name` node) in an expression. */
function namesIn(a: Ast | undefined): Extract<Ast, { k: 'name' }>[] {
  if (a === undefined) return [];
  switch (a.k) {
    case 'name':
      return [a];
    case 'field':
      return namesIn(a.base);
    case 'index':
      return [...namesIn(a.base), ...namesIn(a.index)];
    case 'unary':
    case 'is':
    case 'cast':
      return namesIn(a.arg);
    case 'binary':
      return [...namesIn(a.left), ...namesIn(a.right)];
    case 'in':
      return [...namesIn(a.arg), ...a.list.flatMap(namesIn)];
    case 'between':
      return [...namesIn(a.arg), ...namesIn(a.lo), ...namesIn(a.hi)];
    case 'like':
      return [...namesIn(a.arg), ...namesIn(a.pattern)];
    case 'case':
      return [...namesIn(a.operand), ...a.whens.flatMap((w) => [...namesIn(w.when), ...namesIn(w.result)]), ...namesIn(a.otherwise)];
    case 'call':
      return a.args.flatMap(namesIn);
    default:
      return [];
  }
}

/**
 * A conjunct of ON that is neither an equi-key nor the time range, as the frame API's join
 * condition takes it (query/join-condition.ts): its text, each side's alias written `left.` or
 * `right.` (an unqualified name stays: the side that has it). Null: a qualifier that is not an
 * alias of either side, or one in backticks, which this rewriting does not read.
 */
function conditionText(sql: string, c: Ast, end: number, left: Side, right: Side): string | null {
  const start = startOf(c);
  let out = '';
  let at = start;
  for (const n of namesIn(c).sort((a, b) => a.pos - b.pos)) {
    if (n.parts.length < 2) continue;
    const q = n.parts[0];
    const written = sql.slice(n.pos, n.pos + q.length);
    if (written.toLowerCase() !== q.toLowerCase()) return null;
    const side = left.aliases.includes(q.toLowerCase()) ? 'left' : right.aliases.includes(q.toLowerCase()) ? 'right' : null;
    if (side === null) return null;
    out += sql.slice(at, n.pos) + side;
    at = n.pos + q.length;
  }
  return `(${(out + sql.slice(at, end)).trim()})`;
}

const NOT_YET =
  "is not supported in a join's ON: each conjunct is an equality of columns (a.k = b.k), for two streams one event-time range (a.t BETWEEN b.t - INTERVAL ... AND b.t + INTERVAL ...), or a condition whose names are columns of a side or qualified by a side's alias";

/** The equi keys and the time range of an ON condition. */
function onCondition(
  sql: string,
  on: SqlExpr,
  left: Side,
  right: Side,
  stream: boolean,
): { keys: Array<{ left: string; right: string }>; timeRange?: TimeRangeArg; condition?: string } {
  const keys: Array<{ left: string; right: string }> = [];
  let timeRange: TimeRangeArg | undefined;
  const others: string[] = [];
  const textOf = (a: Ast, next?: Ast) => sql.slice(startOf(a), next ? startOf(next) : on.pos + on.text.length).replace(/\s*AND\s*$/i, '');
  const parts = conjunctsOf(on.ast);
  parts.forEach((c, i) => {
    const refuse = () => unsupported(sql, startOf(c), `${textOf(c, parts[i + 1])} ${NOT_YET}`);
    /** Any other conjunct: checked by the join's condition expression (pushed into a side where Spark pushes it). */
    const other = () => {
      const end = startOf(c) + textOf(c, parts[i + 1]).length;
      const text = conditionText(sql, c, end, left, right);
      if (text === null) throw refuse();
      others.push(text);
    };
    const a = c.k === 'binary' && c.op === '=' ? sideOf(sql, c.left, left, right) : null;
    const b = c.k === 'binary' && c.op === '=' ? sideOf(sql, c.right, left, right) : null;
    if (c.k === 'binary' && c.op === '=' && !(a && b && a.side !== b.side)) return other();
    if (c.k === 'binary' && c.op === '=' && a && b) {
      const pair = a.side === 'left' ? { left: a.column, right: b.column } : { left: b.column, right: a.column };
      if (pair.left === pair.right) {
        throw unsupported(
          sql,
          startOf(c),
          `ON ${textOf(c, parts[i + 1])}: both sides would output a column ${pair.left}: write USING (${pair.left}) for one output column`,
        );
      }
      keys.push(pair);
      return;
    }
    if (c.k === 'between' && !c.not && stream && timeRange === undefined) {
      const arg = sideOf(sql, c.arg, left, right);
      const lo = offsetOf(c.lo);
      const hi = offsetOf(c.hi);
      const loSide = lo && sideOf(sql, lo.ref, left, right);
      const hiSide = hi && sideOf(sql, hi.ref, left, right);
      if (!arg || !lo || !hi || !loSide || !hiSide || loSide.side !== hiSide.side || loSide.column !== hiSide.column || loSide.side === arg.side)
        return other();
      const us = (n: number) => `${n} microseconds`;
      // left BETWEEN right + lo AND right + hi; with the sides swapped, left BETWEEN right - hi AND right - lo
      timeRange =
        arg.side === 'left'
          ? { left: arg.column, right: loSide.column, lower: us(lo.us), upper: us(hi.us) }
          : { left: loSide.column, right: arg.column, lower: us(-hi.us), upper: us(-lo.us) };
      return;
    }
    other();
  });
  if (keys.length === 0) throw unsupported(sql, on.pos, `ON ${on.text}: a join needs at least one equality of columns (a.k = b.k)`);
  return { keys, ...(timeRange ? { timeRange } : {}), ...(others.length ? { condition: others.join(' AND ') } : {}) };
}

/**
 * `frame` joined as `j` says; `aliases` are the names of the left side so far; `streamFrame` gives
 * a streaming relation's frame (a table function's reader, or a subquery's frame).
 */
export function joined(
  sql: string,
  frame: StreamFrame<AnyColumns>,
  aliases: readonly string[],
  j: JoinClause,
  streamFrame: (r: Relation) => StreamFrame<AnyColumns>,
): StreamFrame<AnyColumns> {
  const r = j.relation;
  const rightAliases = r.alias ? [r.alias.toLowerCase()] : [];
  if (r.stream) {
    const type = STREAM_JOINS[j.type];
    if (j.type === 'LEFT ANTI' || j.type === 'ANTI')
      throw unsupported(
        sql,
        j.pos,
        'Left anti joins with a streaming DataFrame/Dataset on the right are not supported: join a static table (read_files without STREAM), or LEFT JOIN with a time range and keep the rows whose right columns are null',
      );
    if (!type) throw unsupported(sql, j.pos, `${j.type} JOIN of two streams is not supported: use INNER, LEFT, RIGHT, FULL [OUTER] or LEFT SEMI`);
    const other = streamFrame(r);
    const name = r.alias && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(r.alias) ? { name: r.alias } : {};
    if (j.using) return frame.join(other, [...j.using], type, name);
    const cond = onCondition(sql, j.on!, { aliases, columns: frame.columnsNow_() }, { aliases: rightAliases, columns: other.columnsNow_() }, true);
    return frame.join(other, cond.keys, type, {
      ...name,
      ...(cond.timeRange ? { timeRange: cond.timeRange } : {}),
      ...(cond.condition ? { condition: cond.condition } : {}),
    });
  }
  const type = {
    INNER: 'inner',
    LEFT: 'leftOuter',
    'LEFT OUTER': 'leftOuter',
    'LEFT SEMI': 'leftSemi',
    SEMI: 'leftSemi',
    'LEFT ANTI': 'leftAnti',
    ANTI: 'leftAnti',
  }[j.type];
  if (!type)
    throw unsupported(
      sql,
      j.pos,
      `${j.type} JOIN with a static table is not supported: the stream is the left side, so use INNER, LEFT [OUTER], LEFT SEMI or LEFT ANTI`,
    );
  const table = staticOf(sql, r);
  if (j.using) return frame.join(table, [...j.using], type);
  const columns = table.spec.schema.columns.map((c) => ({ ...c }) as unknown as ColumnInfo);
  const cond = onCondition(sql, j.on!, { aliases, columns: frame.columnsNow_() }, { aliases: rightAliases, columns }, false);
  return frame.join(table, cond.keys, type, cond.condition ? { condition: cond.condition } : {});
}
