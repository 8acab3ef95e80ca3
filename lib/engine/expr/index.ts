/**
 * Spark SQL expressions: the entry point a stage calls. Text is parsed (parser.ts), analyzed
 * against the stage's input columns (analyze.ts: names, types, Spark's refusals) and compiled once
 * into a function of a row, generated JavaScript (codegen.ts, closures for the few node kinds
 * without it, typed.ts): nothing is interpreted per row.
 *
 *   const e = compileExpression('amount * quantity', columns);  // refuses bad text, names, types
 *   e.type                    // DECIMAL(21,2): the output column's type
 *   e.evaluate(row)           // the value; throws SparkRowError (ANSI) for the row's dead letter
 *
 *   const s = compileSelect(['id', 'CAST(code AS INT) AS code_num', 'o.*'], columns);
 *   s.columns; s.project(row) // or s.generate(row) when an item is explode(...)
 *
 *   const keep = compileFilter("country IN ('DE', 'FR')", columns); keep(row) // true passes
 */
import type { Row } from '../ports/values';
import type { ColumnInfo } from '../plan/columns';
import { Analyzer, implicitCast } from './analyze';
import { ExpressionError } from './errors';
import { type Ast, parseExpression, parseNamedExpression } from './parser';
import { compileExpr, compilePredicate, compileProjection } from './codegen';
import { constantBuilder, type Eval, type GeneratorInfo, type Typed } from './typed';
import { keyValue } from './map-keys';
import { mapEntries } from '../map-entries';
import { type SqlType, toDataType, typeName } from './types';
import { resolveName } from '../resolve-name';

export { ExpressionError, isSparkRowError, SparkRowError } from './errors';
export type { SqlType } from './types';
export type { Typed, Eval, GeneratorInfo } from './typed';

/** One compiled expression. */
export interface CompiledExpression {
  /** The output column's type (a NULL literal's is STRING). */
  readonly type: ColumnInfo;
  /** The expression's type as analyzed (may be NULL or INTERVAL). */
  readonly sqlType: SqlType;
  /** Spark's text of the expression, for messages and dead-letter reasons. */
  readonly sql: string;
  readonly evaluate: Eval;
  /** Set when the expression is a generator (explode...): the stage emits one row per element of `evaluate(row)`. */
  readonly generator?: GeneratorInfo;
  /** Set when the expression is a bare input column: its name (the column keeps its type, window flag and event-time mark). */
  readonly source?: string;
  /** The input column whose event-time mark the expression keeps: its `source`, or the window of window_time(<window column>) (Spark's keeps the watermark). */
  readonly eventTimeSource?: string;
}

/** Parses and types `text` against `columns`; throws ExpressionError (Spark's class, position, fix) when Spark would refuse it. */
export function analyzeExpression(text: string, columns: readonly ColumnInfo[], stars = false): Typed {
  const ast = parseExpression(text);
  return prettyNamed(new Analyzer({ text, columns, stars }).analyze(ast), ast, text, columns, stars);
}

/**
 * `t` with the name Spark gives it without AS: a column its name, a nested field its last part,
 * else its pretty SQL (Spark's toPrettySQL: literals as their values, `(1 + 1)` for `1L + 1`).
 */
function prettyNamed(t: Typed, ast: Ast, text: string, columns: readonly ColumnInfo[], stars: boolean): Typed {
  // A cast written over a bare column (CAST(x AS INT), x::int, TRY_CAST(x AS INT)) is named after the
  // column: Spark's toNamed gives a top-level Cast of a NamedExpression an UnresolvedAlias without a
  // generated name, and ResolveAliases names Cast(attribute) by the attribute (a nested field is no
  // attribute there: its cast keeps its SQL text). Casts of casts of a column too: toNamed turns
  // the innermost into an UnresolvedAlias (a NamedExpression), so each cast around it is again a
  // Cast of a NamedExpression, named by the column (CAST(CAST(x AS DOUBLE) AS STRING) is x)
  if (ast.k === 'cast') {
    let inner: Ast = ast.arg;
    while (inner.k === 'cast') inner = inner.arg;
    const ref = columnOf(inner, columns);
    if (ref) return { ...t, name: ref.name };
  }
  if (t.name !== t.sql) return t;
  try {
    const name = new Analyzer({ text, columns, pretty: true, stars }).analyze(ast).sql;
    return name === t.name ? t : { ...t, name };
  } catch {
    return t;
  }
}

/**
 * Spark's pretty SQL of an expression as an argument of another (toPrettySQL, as in an
 * aggregate's name without AS, `sum((amount * 2))`): a column by its name as it is (no quotes),
 * a nested field by its path, a literal by its value, `(1 + 1)` for `1L + 1`. Unlike a column's
 * own name, a nested field keeps its path. Throws ExpressionError as analyzeExpression does.
 */
export function prettySql(text: string, columns: readonly ColumnInfo[]): string {
  const ast = parseExpression(text);
  const ref = columnOf(ast, columns);
  if (ref) return ref.name;
  const t = new Analyzer({ text, columns }).analyze(ast);
  try {
    return new Analyzer({ text, columns, pretty: true }).analyze(ast).sql;
  } catch {
    return t.sql;
  }
}

/**
 * Parses, analyzes and compiles one expression; its column is named `name`, or as Spark names it
 * without AS. A `*` argument expands (struct(*)), as in a projection (withColumn is one).
 */
export function compileExpression(text: string, columns: readonly ColumnInfo[], name?: string): CompiledExpression {
  const ast = parseExpression(text);
  const t = prettyNamed(new Analyzer({ text, columns, stars: true }).analyze(ast), ast, text, columns, true);
  const ref = columnOf(ast, columns);
  const type: ColumnInfo = ref ? { ...ref, name: name ?? ref.name } : { ...toDataType(t.type), name: name ?? t.name };
  const marked = ref?.name ?? windowTimeOf(ast, columns);
  return {
    type,
    sqlType: t.type,
    sql: t.sql,
    evaluate: compileExpr(asOutput(t)),
    generator: t.generator,
    ...(ref ? { source: ref.name } : {}),
    ...(marked ? { eventTimeSource: marked } : {}),
  };
}

/** The window column of `window_time(<window column>)`, else undefined. */
function windowTimeOf(ast: Ast, columns: readonly ColumnInfo[]): string | undefined {
  if (ast.k !== 'call' || ast.name.toLowerCase() !== 'window_time' || ast.args.length !== 1) return undefined;
  const c = columnOf(ast.args[0], columns);
  return c?.window ? c.name : undefined;
}

/**
 * An expression as an output column holds it: an INTERVAL (t2 - t1, INTERVAL '10' MINUTE) as
 * Spark's text of it in its fields (INTERVAL '0 00:13:20' DAY TO SECOND, INTERVAL '10' MINUTE,
 * INTERVAL '1-2' YEAR TO MONTH), which is what its JSON writer prints for one.
 */
function asOutput(t: Typed): Typed {
  return t.type.type === 'INTERVAL' ? implicitCast(t, { type: 'STRING' }) : t;
}

/** The input column a bare name resolves to (case-insensitively, as the analyzer resolves it), else undefined. */
function columnOf(ast: Ast, columns: readonly ColumnInfo[]): ColumnInfo | undefined {
  if (ast.k !== 'name' || ast.parts.length !== 1) return undefined;
  return resolveName(columns, ast.parts[0]);
}

/**
 * The check a `filter` stage makes (Spark's DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN): the expression
 * must be BOOLEAN (a NULL literal is taken as one, as Spark does).
 */
export function checkFilterBoolean(t: Typed, text: string): Typed {
  if (t.generator !== undefined) {
    throw new ExpressionError(
      'UNSUPPORTED_GENERATOR.OUTSIDE_SELECT',
      `The generator is not supported: outside the SELECT clause, found: Filter ${t.sql}; explode in a select first (selectExpr("*", "${t.sql} AS x")), then filter on x`,
      text,
      0,
    );
  }
  if (t.type.type === 'BOOLEAN') return t;
  if (t.type.type === 'NULL') return implicitCast(t, { type: 'BOOLEAN' });
  throw new ExpressionError(
    'DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN',
    `Cannot resolve "${t.sql}" due to data type mismatch: Filter expression "${t.sql}" of type "${typeName(t.type)}" is not a boolean; compare it with a value (${t.sql} = ...) or use a BOOLEAN column`,
    text,
    0,
  );
}

/** A filter: the compiled predicate, true when the row passes (null and false drop it, as Spark's filter). */
export function compileFilter(text: string, columns: readonly ColumnInfo[]): (row: Row) => boolean {
  return compilePredicate(checkFilterBoolean(analyzeExpression(text, columns), text));
}

/** A compiled selectExpr list. */
export interface CompiledSelect {
  readonly columns: readonly ColumnInfo[];
  /** For each output column, the input column it is a bare copy of (it keeps that column's event-time mark), else null. */
  readonly sources: readonly (string | null)[];
  /** For each output column, the input column whose event-time mark it keeps: its source, or the window of a window_time(window) item; else null. */
  readonly eventTimeSources: readonly (string | null)[];
  /** Whether an item is a generator (explode...): rows come from `generate`, not `project`. */
  readonly generates: boolean;
  /** The output row of an input row (no generator among the items). */
  readonly project: (row: Row) => Row;
  /** The output rows of an input row: one per element when an item is a generator, else [project(row)]. */
  readonly generate: (row: Row) => Row[];
  /**
   * For each output column, the input columns its item reads (lower case, a nested name's first
   * part and its whole text), or null for any of them (a star inside it).
   */
  readonly reads: ReadonlyArray<ReadonlySet<string> | null>;
  /**
   * The same select with the items of these output columns evaluated as NULL of their type
   * (Spark's ColumnPruning: nothing after the stage reads them, so they never run and raise no
   * error). A bare column, a star's columns and a generator's stay as they are.
   */
  pruned(unread: ReadonlySet<string>): CompiledSelect;
}

/**
 * The input columns an expression's text reads (lower case: Spark resolves names without case),
 * over-approximated: a name's first part and its whole dotted text; null when a star is in it.
 */
export function namesRead(ast: Ast): Set<string> | null {
  const out = new Set<string>();
  let star = false;
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (typeof v !== 'object' || v === null) return;
    const node = v as { k?: unknown; parts?: readonly string[] };
    if (node.k === 'star') star = true;
    else if (node.k === 'name' && node.parts) {
      out.add(node.parts[0].toLowerCase());
      out.add(node.parts.join('.').toLowerCase());
    } else for (const x of Object.values(v)) walk(x);
  };
  walk(ast);
  return star ? null : out;
}

/** namesRead of an expression's text. */
export function namesReadOf(text: string): Set<string> | null {
  return namesRead(parseExpression(text));
}

interface Item {
  readonly name: string;
  readonly typed: Typed;
  /** The input column the item is a bare copy of. */
  readonly ref?: ColumnInfo;
  /** The window column of a window_time(window) item. */
  readonly timeOf?: string;
}

/**
 * Spark's selectExpr: each item `expr [AS name]`, `*` or `s.*` (the fields of a STRUCT, null when
 * the struct is null). At most one item may be a generator (explode, explode_outer, posexplode,
 * posexplode_outer), as Spark allows one per SELECT.
 */
export function compileSelect(items: readonly string[], columns: readonly ColumnInfo[], unread: ReadonlySet<string> = new Set()): CompiledSelect {
  const out: Item[] = [];
  const itemReads: (Set<string> | null)[] = [];
  let generatorAt = -1;
  let generatorNames: readonly string[] | undefined;
  for (const text of items) {
    const { ast, alias, aliases } = parseNamedExpression(text);
    const az = new Analyzer({ text, columns, stars: true });
    if (ast.k === 'star') {
      if (alias !== undefined) throw new ExpressionError('PARSE_SYNTAX_ERROR', `Syntax error at or near 'AS': '*' cannot have an alias`, text, ast.pos);
      const expanded = az.expandStar(ast).map((e) => (e.ref ? { ...e, typed: { ...e.typed, type: e.ref } } : e));
      out.push(...expanded);
      const root = ast.qualifier.length ? new Set([ast.qualifier[0].toLowerCase(), ast.qualifier.join('.').toLowerCase()]) : null;
      for (const e of expanded) itemReads.push(root ?? new Set([e.name.toLowerCase()]));
      continue;
    }
    const typed = asOutput(prettyNamed(az.analyze(ast), ast, text, columns, true));
    if (typed.generator !== undefined) {
      if (generatorAt >= 0) {
        throw new ExpressionError(
          'UNSUPPORTED_GENERATOR.MULTI_GENERATOR',
          `only one generator allowed per select clause but found 2: ${out[generatorAt].typed.sql}, ${typed.sql}; explode in two stages`,
          text,
          ast.pos,
        );
      }
      generatorAt = out.length;
      generatorNames = aliases;
    }
    if (aliases !== undefined) {
      if (typed.generator === undefined) {
        throw new ExpressionError(
          'MULTI_ALIAS_WITHOUT_GENERATOR',
          `Multi part aliasing (${aliases.join(', ')}) is not supported with ${typed.sql} as it is not a generator function`,
          text,
          ast.pos,
        );
      }
      if (aliases.length !== typed.generator.columns.length) {
        throw new ExpressionError(
          'UDTF_ALIAS_NUMBER_MISMATCH',
          `The number of aliases supplied in the AS clause does not match the number of columns output by the UDTF: expected ${typed.generator.columns.length} aliases, but got ${aliases.join(',')}`,
          text,
          ast.pos,
        );
      }
    }
    const ref = columnOf(ast, columns);
    const name = alias ?? typed.name;
    // an item nothing after the stage reads: NULL of its type, never evaluated (see pruned)
    const skip = unread.has(name) && ref === undefined && typed.generator === undefined;
    const timeOf = windowTimeOf(ast, columns);
    out.push({
      name,
      typed: skip ? { ...typed, children: [], build: constantBuilder(null), constant: { value: null } } : typed,
      ...(ref ? { ref } : {}),
      ...(timeOf ? { timeOf } : {}),
    });
    itemReads.push(namesRead(ast));
  }
  const names = out.map((i) => i.name);
  const gen = generatorAt >= 0 ? out[generatorAt].typed.generator! : undefined;
  const outColumns: ColumnInfo[] = [];
  const sources: (string | null)[] = [];
  const eventTimeSources: (string | null)[] = [];
  const reads: (Set<string> | null)[] = [];
  out.forEach((item, i) => {
    if (i === generatorAt && gen !== undefined) {
      const single = gen.columns.length === 1 || (gen.columns.length === 2 && gen.columns[0].name === 'pos');
      for (const [k, c] of gen.columns.entries()) {
        const name = generatorNames?.[k] ?? (c.name === 'col' && single && items.length > 0 && hasAlias(item) ? item.name : c.name);
        outColumns.push({ ...toDataType(c.type), name });
        sources.push(null);
      }
    } else if (item.ref) {
      outColumns.push({ ...item.ref, name: item.name });
      sources.push(item.ref.name);
    } else {
      outColumns.push({ ...toDataType(item.typed.type), name: item.name });
      sources.push(null);
    }
    // (each output column of the item reads what the item reads)
    while (reads.length < outColumns.length) reads.push(itemReads[i]);
    while (eventTimeSources.length < outColumns.length) eventTimeSources.push(sources[eventTimeSources.length] ?? item.timeOf ?? null);
  });
  const pruned = (more: ReadonlySet<string>) => compileSelect(items, columns, new Set([...unread, ...more]));
  const seen = new Set<string>();
  for (const c of outColumns) {
    if (seen.has(c.name)) {
      throw new ExpressionError(
        'COLUMN_ALREADY_EXISTS',
        `The column \`${c.name}\` already exists in the output of selectExpr: give each item its own name with AS`,
        items.join(', '),
      );
    }
    seen.add(c.name);
  }
  const n = out.length;
  if (gen === undefined) {
    const project = projector(
      names,
      out.map((i) => i.typed),
    );
    return { columns: outColumns, sources, eventTimeSources, generates: false, project, generate: (row) => [project(row)], reads, pruned };
  }
  const evals = out.map((i) => compileExpr(i.typed));
  const genNames = outColumns.slice(generatorAt, generatorAt + gen.columns.length).map((c) => c.name);
  const withPos = gen.kind.startsWith('pos');
  const outer = gen.kind.endsWith('_outer');
  // a MAP's keys of another type than STRING are held as text: read back to their type (map-keys.ts)
  const inline = gen.kind === 'inline' || gen.kind === 'inline_outer';
  const keyType = gen.columns.find((c) => c.name === 'key' && gen.kind !== 'json_tuple' && !inline)?.type;
  const fields = gen.columns.map((c) => c.name);
  const key = keyType === undefined || keyType.type === 'STRING' ? (k: string): unknown => k : keyValue(keyType);
  return {
    columns: outColumns,
    sources,
    eventTimeSources,
    reads,
    pruned,
    generates: true,
    project: () => {
      throw new Error('internal: a select with a generator emits rows with generate(row)');
    },
    generate: (row) => {
      const base: unknown[] = evals.map((e, i) => (i === generatorAt ? null : e(row)));
      const v = evals[generatorAt](row);
      const elements: unknown[][] = [];
      if (gen.kind === 'json_tuple') elements.push(v as unknown[]);
      else if (gen.kind === 'stack') elements.push(...(v as unknown[][]));
      else if (inline) {
        // (a null element is a row of nulls, as Spark's Inline gives it)
        for (const x of (v as Array<Record<string, unknown> | null> | null) ?? []) elements.push(fields.map((f) => (x === null ? null : (x[f] ?? null))));
      } else if (Array.isArray(v)) v.forEach((x, i) => elements.push(withPos ? [i, x ?? null] : [x ?? null]));
      else if (v != null) mapEntries(v as object).forEach(([k, x], i) => elements.push(withPos ? [i, key(k), x ?? null] : [key(k), x ?? null]));
      if (elements.length === 0 && outer) elements.push(genNames.map(() => null));
      return elements.map((el) => {
        const r: Row = {};
        for (let i = 0; i < n; i++) {
          if (i === generatorAt) genNames.forEach((g, j) => (r[g] = el[j]));
          else r[names[i]] = base[i];
        }
        return r;
      });
    },
  };
}

/** The output row of the items: one generated function (codegen.ts compileProjection), the items' code inline. */
function projector(names: readonly string[], items: readonly Typed[]): (row: Row) => Row {
  if (names.includes('__proto__')) {
    // a literal key "__proto__" would set the prototype: define the columns one by one instead
    const evals = items.map(compileExpr);
    return (row) => {
      const r: Row = {};
      names.forEach((name, i) => Object.defineProperty(r, name, { value: evals[i](row), enumerable: true, writable: true, configurable: true }));
      return r;
    };
  }
  return compileProjection(names, items);
}

function hasAlias(item: Item): boolean {
  return item.name !== item.typed.name;
}
