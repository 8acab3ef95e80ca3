/**
 * A schema-driven reader of one JSON-lines record: the fast path of `parseJsonLine`.
 *
 * `compileLineParser(schema)` returns a function that gives what `parseJsonLine(schema, line)`
 * gives for the columns of the schema (the same ok/failed decision, the same typed values, the
 * same reason), without building the fields the schema does not declare. JSON.parse builds every
 * field of every object and is most of the cost of a source; this reads a line in three tiers:
 *
 * 1. A regular expression for the shape of the latest lines: the schema's keys in the order the
 *    producer writes them, other fields anywhere (scalars, or objects and arrays of scalars), and
 *    whitespace only if the lines have any. Irregexp checks and splits the whole line in one
 *    native pass, where a charCodeAt loop costs about as much per character as JSON.parse. The
 *    shapes are learnt from the lines that tier 2 reads (up to 16 per parser); when 16 lines in a
 *    row miss the current one, the next 1024 lines skip this tier, and lines over 1 MiB always do.
 * 2. A charCodeAt scan that takes keys in any order (escaped ones too), with or without
 *    whitespace, and skips nested values of other fields (checking that they are valid JSON).
 * 3. `parseJsonLine(schema, line)` itself, for everything else, so the outcome and the reason of
 *    a bad record are always the reference's: a backslash escape in the value of a column, a key
 *    of the schema given twice (JSON.parse keeps the last one), a nested value for a column,
 *    nesting deeper than 64 levels, anything that is not valid JSON (control characters in
 *    strings, trailing commas, truncated lines, trailing garbage, a top level that is not an
 *    object), and every record the schema rejects (a missing column, a value of the wrong type).
 *
 * Differences from `parseJsonLine`, by design:
 * - a row holds exactly the columns of the schema (or those of `options.columns`), in schema order;
 *   the fields outside the schema are not on it (`parseJsonLine` leaves them on the row, where they are never used). Rows that
 *   come from tier 3 keep them, as `parseJsonLine` does;
 * - string values are slices of the line, so (as V8 shares the characters of slices of 13
 *   characters or more) a row that is kept can keep its line, or the text the line was sliced
 *   from, alive.
 *
 * The returned function is synchronous: it keeps scratch state between calls (the learnt shapes,
 * the last hour of a timestamp) but is done with it when it returns.
 *
 * Files: this one (the tiers put together, the shapes learnt), json-shapes.ts (a shape's regular
 * expression), json-chars.ts (tier 2's scan, the JSON it reads, a token's value in a column).
 */
import type { Row } from './ports';
import type { Schema } from './schema';
import { parseJsonLine, unreadableReason, type CoerceResult } from './json-record';
import { BACKSLASH, BAD, fromString, fromToken, lineScanner, plainTimestampReader, QUOTE, sawWhitespace, T_STRING, T_TIMESTAMP, typeCode } from './json-chars';
import { shapeRegExp, type Shape } from './json-shapes';
import { arrayLineRows, isArrayLine } from './formats/json-array';

function rowFactory(names: readonly string[], kept: readonly number[], codegen: boolean): (vals: unknown[]) => Row {
  // An object literal gives every row the same shape at once; the loop is for runtimes that
  // refuse code generation from strings.
  if (codegen) {
    try {
      const body = `return {${kept.map((c) => `${JSON.stringify(names[c])}: v[${c}]`).join(', ')}};`;
      const f = new Function('v', body) as (vals: unknown[]) => Row;
      const probe = f(names.map((_, i) => i));
      if (kept.every((c) => Object.hasOwn(probe, names[c]) && probe[names[c]] === c) && Object.keys(probe).length === kept.length) return f;
    } catch {
      // code generation from strings is disallowed: the loop below
    }
  }
  return (vals) => {
    const row: Row = {};
    for (const c of kept) row[names[c]] = vals[c];
    return row;
  };
}

const MAX_SHAPES = 16;

/** After this many lines in a row that the current shape misses, ... */
const MAX_MISSES = 16;
/** ... this many lines skip tier 1 (then the shape gets another try). */
const REST_LINES = 1024;

/**
 * Longest line tried with a shape's expression. Irregexp keeps a backtrack entry for each
 * repetition of a field or an escape, and throws past a few million of them (about 18 MB of
 * `"x":1,`); longer lines go to tier 2, which is linear and keeps nothing per field.
 */
const MAX_SHAPE_LINE = 1 << 20;

/** How many lines each tier has read (a line that tier 1 or 2 hands on counts once, where it ended). */
interface LineParserStats {
  /** Read by the expression of a learnt shape (tier 1). */
  shape: number;
  /** Read by the charCodeAt scan (tier 2). */
  scan: number;
  /** Given to parseJsonLine (tier 3): every bad record, and the good ones the tiers above leave. */
  reference: number;
}

export type LineParser = ((line: string) => CoerceResult) & {
  readonly stats: LineParserStats;
  /** Pushes the line's row onto `rows` and returns null, or returns why the line is bad (no result object per line). */
  readonly into: (line: string, rows: Row[]) => string | null;
};

export interface LineParserOptions {
  /** Learn line shapes and match them with a regular expression (default true; false: tests, benchmarks). */
  readonly shapes?: boolean;
  /**
   * Compile the code that builds rows with `new Function` (default true; false: tests, and what
   * happens anyway where code generation from strings is disallowed).
   */
  readonly codegen?: boolean;
  /**
   * After 16 lines in a row that the shape's expression missed, read the next 1024 with tier 2
   * alone (default true; false: tests that want tier 1 to see every line).
   */
  readonly backoff?: boolean;
  /**
   * The columns to put on rows (default: all of the schema's). The others are still read and
   * checked, so a line is good or bad, and for the same reason, whatever the query reads; only
   * their values are not kept (strings are not even cut out of the line). Rows from tier 3 carry
   * every column.
   */
  readonly columns?: readonly string[];
}

/**
 * Compiles the reader of one schema. The result behaves as `(line) => parseJsonLine(schema,
 * line)` except that rows carry only the schema's columns (see the file comment).
 */
export function compileLineParser(schema: Schema, options: LineParserOptions = {}): LineParser {
  const useShapes = options.shapes ?? true;
  const codegen = options.codegen ?? true;
  const backoff = options.backoff ?? true;
  const stats: LineParserStats = { shape: 0, scan: 0, reference: 0 };
  const cols = schema.columns;
  const n = cols.length;
  const names = cols.map((c) => c.name);
  const types = cols.map(typeCode);
  const reference = (line: string): CoerceResult => {
    stats.reference++;
    return parseJsonLine(schema, line);
  };
  /** The reference, with anything it throws a bad record: no line can fail the batch. */
  const guardedReference = (line: string): CoerceResult => {
    try {
      return reference(line);
    } catch (e) {
      return { ok: false, reason: unreadableReason(e) };
    }
  };
  /** The reference's row pushed, or its reason; a line that is an array gives its elements' rows, as Spark reads it (json-array.ts). */
  const referenceInto = (line: string, rows: Row[]): string | null => {
    const r = guardedReference(line);
    if (r.ok || !isArrayLine(line)) return pushRow(r, rows);
    let a: ReturnType<typeof arrayLineRows>;
    try {
      a = arrayLineRows(schema, line);
    } catch (e) {
      return unreadableReason(e);
    }
    if (!a.ok) return a.reason;
    for (const x of a.rows) rows.push(x);
    return null;
  };
  // Column names the scanner cannot match byte for byte, or that an object reads through its
  // prototype ("constructor", "__proto__"...), where the reference does odd but defined things.
  const unsafe = names.some((name) => {
    if (name in {} || name === '__proto__') return true;
    for (let k = 0; k < name.length; k++) {
      const c = name.charCodeAt(k);
      if (c < 32 || c === QUOTE || c === BACKSLASH) return true;
    }
    return false;
  });
  if (n === 0 || unsafe || new Set(names).size !== n || types.some((t) => t === undefined))
    return Object.assign(guardedReference, { stats, into: referenceInto });

  const keep = names.map((name) => options.columns === undefined || options.columns.includes(name));
  const kept = names.map((_, c) => c).filter((c) => keep[c]);
  const makeRow = rowFactory(names, kept, codegen);
  const vals: unknown[] = new Array(n).fill(null);
  /** The columns in the order of the last line scanned. */
  const order = new Int32Array(n);
  const shapes = new Map<string, Shape>();
  let shape: Shape | null = null;
  /** Lines in a row that the shape's expression missed. */
  let misses = 0;
  /** Lines still to read without trying the expression. */
  let resting = 0;
  /** Tier 1's parseTimestamp of the plain timestamps its expression matched, an hour parsed once (json-chars.ts). */
  const plainTimestamp = plainTimestampReader();
  /** Tier 2: the row from a charCodeAt scan of the line, or null for the reference to decide (json-chars.ts). */
  const scan = lineScanner(names, types, vals, order, makeRow);

  /** Tier 1: the row from a match of a shape, or null when a value does not fit its column. */
  function fromMatch(m: RegExpExecArray, pos: Int32Array, groups: Int32Array): Row | null {
    for (let p = 0; p < n; p++) {
      const col = pos[p];
      const t = types[col];
      const g = groups[p];
      let v: unknown;
      if (g < 0) continue; // a STRING column left off the row: any scalar fits
      if (t === T_TIMESTAMP) {
        const plainText = m[g];
        if (plainText !== undefined) v = plainTimestamp(plainText);
        else {
          const text = m[g + 1];
          v = text !== undefined ? fromString(t, text) : fromToken(t, m[g + 2]);
        }
      } else {
        const text = m[g];
        v = text !== undefined ? fromString(t, text) : fromToken(t, m[g + 1]);
      }
      if (v === BAD) return null;
      vals[col] = v;
    }
    return makeRow(vals);
  }

  /**
   * fromMatch unrolled for one shape: straight-line code with the groups, the types and the row
   * literal written in (a fifth faster than the loop). Falls back to the loop without codegen.
   */
  function extractor(pos: Int32Array, groups: Int32Array): (m: RegExpExecArray) => Row | null {
    const generic = (m: RegExpExecArray) => fromMatch(m, pos, groups);
    if (!codegen) return generic;
    let body = '';
    for (let p = 0; p < n; p++) {
      const t = types[pos[p]];
      const g = groups[p];
      const v = `v${pos[p]}`;
      if (g < 0) continue; // a STRING column left off the row: nothing captured, nothing to check
      if (t === T_TIMESTAMP) {
        body += `  let ${v}; if ((x = m[${g}]) !== undefined) ${v} = ts(x); else if ((x = m[${g + 1}]) !== undefined) ${v} = str(${t}, x); else ${v} = tok(${t}, m[${g + 2}]);\n  if (${v} === BAD) return null;\n`;
      } else if (t === T_STRING) {
        body += `  let ${v} = m[${g}]; if (${v} === undefined) ${v} = tok(${t}, m[${g + 1}]); // never BAD\n`;
      } else {
        body += `  let ${v}; if ((x = m[${g}]) !== undefined) ${v} = str(${t}, x); else ${v} = tok(${t}, m[${g + 1}]);\n  if (${v} === BAD) return null;\n`;
      }
    }
    const row = kept.map((c) => `${JSON.stringify(names[c])}: v${c}`).join(', ');
    const src = `return function extract(m) {\n  let x;\n${body}  return { ${row} };\n};`;
    try {
      return new Function('BAD', 'str', 'tok', 'ts', src)(BAD, fromString, fromToken, plainTimestamp);
    } catch {
      return generic;
    }
  }

  /**
   * After tier 2 read a line: makes its shape (the order of its keys, whether it has whitespace)
   * the one tried first, unless the current shape already covers it.
   */
  function learn(spaced: boolean): void {
    if (shape !== null && (shape.spaced || !spaced)) {
      const cur = shape.cols;
      let same = true;
      for (let p = 0; p < n; p++) {
        if (cur[p] !== order[p]) {
          same = false;
          break;
        }
      }
      if (same) return; // the line has the shape but something the expression does not take
    }
    const key = `${order.join(',')}${spaced ? ' spaced' : ''}`;
    let next = shapes.get(key);
    if (next === undefined) {
      if (shapes.size >= MAX_SHAPES) return; // shapes vary too much: tier 2 reads them all
      const pos = Int32Array.from(order);
      const { re, groups } = shapeRegExp(names, types, keep, pos, spaced);
      next = { cols: pos, groups, spaced, re, extract: extractor(pos, groups) };
      shapes.set(key, next);
    }
    shape = next;
    misses = 0;
    resting = 0;
  }

  /** The row of a line by tier 1 or 2, or null for the reference to decide. */
  function fastRow(line: string): Row | null {
    if (shape !== null && line.length <= MAX_SHAPE_LINE) {
      if (resting > 0) resting--;
      else {
        const m = shape.re.exec(line);
        if (m !== null) {
          misses = 0;
          const r = shape.extract(m);
          if (r === null) return null;
          stats.shape++;
          return r;
        }
        // a miss costs about what tier 2 does: when the lines keep missing (values nested
        // deeper, escapes in the schema's values), stop trying for a while
        if (++misses === MAX_MISSES && backoff) {
          misses = 0;
          resting = REST_LINES;
        }
      }
    }
    const r = scan(line);
    if (r === null) return null;
    stats.scan++;
    if (useShapes) learn(sawWhitespace());
    return r;
  }

  function parseLine(line: string): CoerceResult {
    const row = guardedFastRow(line);
    return row !== null ? { ok: true, row } : guardedReference(line);
  }

  function into(line: string, rows: Row[]): string | null {
    const row = guardedFastRow(line);
    if (row !== null) {
      rows.push(row);
      return null;
    }
    return referenceInto(line, rows);
  }

  /** Tiers 1 and 2; a line that makes them throw goes to the reference, which decides. */
  function guardedFastRow(line: string): Row | null {
    try {
      return fastRow(line);
    } catch {
      return null;
    }
  }
  return Object.assign(parseLine, { stats, into });
}

function pushRow(r: CoerceResult, rows: Row[]): string | null {
  if (!r.ok) return r.reason;
  rows.push(r.row);
  return null;
}

/** The parsers of one schema by the columns their rows keep, compiled on first use. */
export class LineParsers {
  private readonly byColumns = new Map<string, LineParser>();
  constructor(private readonly schema: Schema) {}

  /** The parser whose rows keep `columns` (all of the schema's when absent). */
  for(columns?: readonly string[]): LineParser {
    const key = columns === undefined ? '*' : JSON.stringify(columns);
    let p = this.byColumns.get(key);
    if (p === undefined) this.byColumns.set(key, (p = compileLineParser(this.schema, { columns })));
    return p;
  }
}
