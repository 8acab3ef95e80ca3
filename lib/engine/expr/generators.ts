/**
 * Generators that the engine expands in a select (expr/index.ts compileSelect): inline and
 * inline_outer (an array of structs, one row per element with the fields as columns) and stack
 * (n rows of the arguments, Spark's way to unpivot). explode and posexplode are in functions.ts.
 */
import type { CallCtx, FunctionDef } from './analyze';
import { constantArg, def, what } from './fn-util';
import type { Typed } from './typed';
import { sameType, STRING, type SqlType, typeName } from './types';

/** inline / inline_outer: an ARRAY of STRUCTs, one row per element with the struct's fields as columns (Spark's Inline). */
function inlineGenerator(kind: 'inline' | 'inline_outer'): FunctionDef {
  return def(1, 1, ([a], c) => {
    const t = a.type;
    if (t.type !== 'ARRAY' || t.element?.type !== 'STRUCT') {
      throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${c.name} takes an ARRAY of STRUCTs, however ${a.sql} has the type "${typeName(t)}"`, c.pos);
    }
    const columns = t.element.fields!.map((f) => ({ name: f.name, type: f as SqlType }));
    return { type: t, sql: c.sql, name: c.sql, children: [a], build: ([e]) => e, generator: { kind, columns } };
  });
}

/**
 * stack(n, v1, ..., vk): Spark's generator of n rows of ceil(k / n) columns col0, col1...: row r
 * holds v(r * columns + 1)... in order, null past vk. n is a constant INT of at least 1; a
 * column's values must have one type (STACK_COLUMN_DIFF_TYPES otherwise), a NULL literal taking
 * the column's first other type (STRING when it has none), as Spark's StackCoercion types it.
 */
function stackGenerator(args: readonly Typed[], c: CallCtx): Typed {
  const [count, ...values] = args;
  if (count.type.type !== 'INT' || count.type.bits !== undefined) {
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `the first parameter of stack requires the "INT" type, however ${count.sql} has the type "${typeName(count.type)}"`,
      c.pos,
    );
  }
  const n = constantArg(c, count, 0, 'the number of rows, an INT literal');
  if (typeof n !== 'number' || n < 1) {
    throw c.az.mismatch('VALUE_OUT_OF_RANGE', c.sql, `the number of rows of stack must be 1 or more, not ${String(n)}`, c.pos);
  }
  const width = Math.ceil(values.length / n);
  const typeOf = (j: number): SqlType => {
    for (let i = j; i < values.length; i += width) if (values[i].type.type !== 'NULL') return values[i].type;
    return STRING;
  };
  const columns = Array.from({ length: width }, (_, j) => ({ name: `col${j}`, type: typeOf(j) }));
  const typed = values.map((v, i) => (v.type.type === 'NULL' ? c.az.implicit(v, columns[i % width].type, c.pos, what(c, i + 1)) : v));
  typed.forEach((v, i) => {
    const col = columns[i % width];
    if (!sameType(v.type, col.type)) {
      throw c.az.mismatch(
        'STACK_COLUMN_DIFF_TYPES',
        c.sql,
        `The data type of the column (${i % width}) do not have the same type: "${typeName(col.type)}" (argument ${(i % width) + 2}) <> "${typeName(v.type)}" (argument ${i + 2}); cast the values of a column to one type`,
        c.pos,
      );
    }
  });
  return {
    type: { type: 'ARRAY', element: { type: 'ARRAY', element: STRING } },
    sql: c.sql,
    name: c.sql,
    children: typed,
    build: (evs) => (row) => {
      const rows: unknown[][] = [];
      for (let r = 0; r < n; r++) rows.push(columns.map((_, j) => (r * width + j < evs.length ? evs[r * width + j](row) : null)));
      return rows;
    },
    generator: { kind: 'stack', columns },
  };
}

export const GENERATOR_FUNCTIONS: Record<string, FunctionDef> = {
  inline: inlineGenerator('inline'),
  inline_outer: inlineGenerator('inline_outer'),
  stack: def(2, Number.POSITIVE_INFINITY, stackGenerator),
};
