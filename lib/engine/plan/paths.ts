/**
 * Nested values by path, as Spark names them: `customer.country` (a STRUCT's field), `lines[0]`
 * (an ARRAY's element, 0-based), `attrs['color']` (a MAP's value), to any depth. parsePath reads
 * the text, pathType checks it against the columns when the query is built (Spark's analysis
 * errors), pathName is the column name Spark gives it, valueAt reads it from a row.
 */
import { InvalidQueryError } from '../errors';
import { entryValue } from '../map-entries';
import { ddlOf } from '../ddl';
import { type DataType, WINDOW_STRUCT } from '../schema';
import type { Row } from '../ports';
import type { ColumnInfo } from './columns';
import type { ColumnPath, PathStep } from './types';

/**
 * Said with every unknown column: a column of `col=value` partition folders is known only when the
 * schema declares it (sluice builds a query before any listing; Spark infers it from one).
 */
export const PARTITION_HINT = "(a file source's col=value partition folder is a column only when the schema declares it, e.g. .schema('..., dt DATE'))";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** A path's text read into its column and steps; refused (with the rule) when it does not parse. */
export function parsePath(text: string, where: string): ColumnPath {
  if (typeof text !== 'string' || text === '')
    throw new InvalidQueryError(`${where}: a column or path must be a non-empty string, not ${JSON.stringify(text)}`);
  let i = 0;
  const fail = (rule: string): never => {
    throw new InvalidQueryError(
      `${where}: [PARSE_SYNTAX_ERROR] path ${JSON.stringify(text)} at position ${i + 1}: ${rule}; write it as Spark does: s.field, a[0], m['key'], \`odd name\``,
    );
  };
  const name = (): string => {
    if (text[i] === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) fail('a backticked name is not closed');
      const n = text.slice(i + 1, end);
      i = end + 1;
      return n;
    }
    const m = NAME.exec(text.slice(i));
    if (!m) fail('expected a name');
    i += m![0].length;
    return m![0];
  };
  const column = name();
  const steps: PathStep[] = [];
  while (i < text.length) {
    const c = text[i];
    if (c === '.') {
      i++;
      steps.push({ field: name() });
    } else if (c === '[') {
      const close = text.indexOf(']', i);
      if (close < 0) fail('a "[" is not closed');
      const inside = text.slice(i + 1, close).trim();
      const quoted = /^'(.*)'$|^"(.*)"$/.exec(inside);
      if (quoted) steps.push({ key: quoted[1] ?? quoted[2] });
      else if (/^-?[0-9]+$/.test(inside)) steps.push({ index: Number(inside) });
      else fail(`expected an index (a[0]) or a quoted key (m['key']) inside [], not ${JSON.stringify(inside)}`);
      i = close + 1;
    } else fail(`expected ".", "[" or the end, not ${JSON.stringify(c)}`);
  }
  return { column, steps, text };
}

/** Whether a name given where a column is taken is a path rather than a plain column name. */
export function isPath(text: string): boolean {
  return typeof text === 'string' && /[.[`]/.test(text);
}

/** The name Spark gives a path's column: a field's own name when it ends in a field, else the path's text (`m['k']` as `m[k]`). */
export function pathName(path: ColumnPath): string {
  const last = path.steps[path.steps.length - 1];
  if (last === undefined) return path.column;
  if ('field' in last) return last.field;
  let out = path.column;
  for (const s of path.steps) out += 'field' in s ? `.${s.field}` : 'index' in s ? `[${s.index}]` : `[${s.key}]`;
  return out;
}

/** The column of a path's value: its type checked step by step against the columns (Spark's analysis errors). */
export function pathColumn(path: ColumnPath, cols: readonly ColumnInfo[], where: string, as = pathName(path)): ColumnInfo {
  const found = cols.find((c) => c.name === path.column);
  if (!found) {
    throw new InvalidQueryError(
      `${where}: [UNRESOLVED_COLUMN] column ${JSON.stringify(path.column)} of ${JSON.stringify(path.text)} does not exist; the columns are ${cols.map((c) => c.name).join(', ')}: fix the name or add it to the schema ${PARTITION_HINT}`,
    );
  }
  // a window column (a TIMESTAMP marked window) is Spark's STRUCT<start, end> to a path
  let t: DataType = found.window && path.steps.length > 0 ? WINDOW_STRUCT : found;
  let text = path.column;
  for (const s of path.steps) {
    if ('field' in s) {
      // a field of an ARRAY of STRUCTs is that field of every element, an ARRAY (Spark's GetArrayStructFields)
      const ofArray = t.type === 'ARRAY' && t.element!.type === 'STRUCT';
      const struct = ofArray ? t.element! : t;
      if (struct.type !== 'STRUCT') throw notExtractable(where, path, text, t, `field ${s.field}`);
      const f = struct.fields!.find((x) => x.name === s.field);
      if (!f) {
        throw new InvalidQueryError(
          `${where}: [FIELD_NOT_FOUND] no such struct field ${JSON.stringify(s.field)} in ${text} (${ddlOf(t)}); its fields are ${struct.fields!.map((x) => x.name).join(', ') || 'none'}: fix the name in ${JSON.stringify(path.text)}`,
        );
      }
      if (ofArray) {
        const { name: _f, ...element } = f;
        t = { type: 'ARRAY', element };
      } else t = f;
      text += `.${s.field}`;
    } else if ('index' in s) {
      if (t.type !== 'ARRAY') {
        throw t.type === 'MAP'
          ? new InvalidQueryError(`${where}: ${text} is a MAP, so its values are taken by a quoted key (${text}['${s.index}']), not an index: quote the key`)
          : notExtractable(where, path, text, t, `element ${s.index}`);
      }
      t = t.element!;
      text += `[${s.index}]`;
    } else {
      if (t.type !== 'MAP') {
        throw t.type === 'ARRAY'
          ? new InvalidQueryError(`${where}: ${text} is an ARRAY, so its elements are taken by a 0-based index (${text}[0]), not a key: write an integer index`)
          : notExtractable(where, path, text, t, `key '${s.key}'`);
      }
      t = t.value!;
      text += `[${s.key}]`;
    }
  }
  const { name: _n, window: _w, ...type } = t as ColumnInfo;
  if (path.steps.length === 0 && found.window) return { ...found, name: as };
  return { ...type, name: as };
}

function notExtractable(where: string, path: ColumnPath, text: string, t: DataType, what: string): InvalidQueryError {
  return new InvalidQueryError(
    `${where}: [INVALID_EXTRACT_BASE_FIELD_TYPE] cannot take ${what} of ${text} in ${JSON.stringify(path.text)}: it is ${ddlOf(t)}, and only a STRUCT (s.field), an ARRAY (a[0]) or a MAP (m['key']) has parts: fix the path`,
  );
}

/** A row error: the row goes no further (Spark under ANSI fails the query with this error). */
export class RowError extends Error {}

/**
 * The value at a path in a row: null when a step meets a null, or a MAP has no such key (Spark's
 * `m['k']`); an index outside the array is Spark's INVALID_ARRAY_INDEX under ANSI.
 */
export function valueAt(row: Row, path: ColumnPath): unknown {
  let v: unknown = row[path.column];
  for (const s of path.steps) {
    if (v === null || v === undefined) return null;
    if ('field' in s) {
      if (Array.isArray(v)) {
        // an ARRAY of STRUCTs: the field of each element (pathColumn allows it only there)
        const f = s.field;
        v = v.map((e) => (e === null || e === undefined ? null : Object.hasOwn(e, f) ? (e[f] ?? null) : null));
      } else v = Object.hasOwn(v as object, s.field) ? (v as Record<string, unknown>)[s.field] : null;
    } else if ('key' in s) v = entryValue(v as object, s.key) ?? null;
    else {
      const a = v as unknown[];
      if (s.index < 0 || s.index >= a.length) {
        throw new RowError(
          `[INVALID_ARRAY_INDEX] The index ${s.index} is out of bounds. The array has ${a.length} elements. Use the SQL function \`get()\` to tolerate accessing element at invalid index and return NULL instead. (in ${path.text})`,
        );
      }
      v = a[s.index];
    }
  }
  return v === undefined ? null : v;
}
