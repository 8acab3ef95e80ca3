/** Collection functions (arrays, maps, structs) and concat; the JSON functions are in json-functions.ts. */
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { SparkRowError } from './errors';
import { call, constantArg, def, int, str } from './fn-util';
import { strict, type Typed } from './typed';
import { BOOLEAN, commonType, INT, NULL_TYPE, STRING, type SqlField, type SqlType, typeName } from './types';
import { comparator, nullsFirst } from './values';

function arrayArg(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type === 'NULL') return { ...a, type: { type: 'ARRAY', element: NULL_TYPE } };
  if (a.type.type !== 'ARRAY') {
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `argument ${i + 1} of ${c.name} requires the "ARRAY" type, however ${a.sql} has the type "${typeName(a.type)}"`,
      c.pos,
    );
  }
  return a;
}

function mapArg(c: CallCtx, a: Typed, i: number): Typed {
  if (a.type.type !== 'MAP') {
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `argument ${i + 1} of ${c.name} requires the "MAP" type, however ${a.sql} has the type "${typeName(a.type)}"`,
      c.pos,
    );
  }
  return a;
}

/** element_at(array, i) (1-based, negative from the end) or element_at(map, key); `safe` is try_element_at. */
function elementAt([a, k]: readonly Typed[], c: CallCtx, safe: boolean): Typed {
  if (a.type.type === 'MAP') {
    return call(
      c,
      a.type.value!,
      [a, str(c, k, 1)],
      strict((m, key) => (Object.hasOwn(m as object, key as string) ? ((m as Record<string, unknown>)[key as string] ?? null) : null)),
    );
  }
  const arr = arrayArg(c, a, 0);
  return call(
    c,
    arr.type.element!,
    [arr, int(c, k, 1)],
    strict((v, n) => {
      const xs = v as unknown[];
      const i = n as number;
      // index 0 is an error for try_element_at too (Spark's ElementAt checks it before failOnError)
      if (i === 0) {
        throw new SparkRowError('INVALID_INDEX_OF_ZERO', 'The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1).');
      }
      const at = i > 0 ? i - 1 : xs.length + i;
      if (at < 0 || at >= xs.length) {
        if (safe) return null;
        throw new SparkRowError(
          'INVALID_ARRAY_INDEX_IN_ELEMENT_AT',
          `The index ${i} is out of bounds. The array has ${xs.length} elements. Use \`try_element_at\` to tolerate accessing element at invalid index and return NULL instead.`,
        );
      }
      return xs[at] ?? null;
    }),
  );
}

/** The name struct(...) gives an argument: a column's or field's own name, else colN. */
function structFieldName(a: Typed, i: number): string {
  if (a.constant === undefined && (a.children.length === 0 || a.name !== a.sql)) return a.name;
  return `col${i + 1}`;
}

function structOf(names: readonly string[], values: readonly Typed[], c: CallCtx): Typed {
  const fields: SqlField[] = values.map((v, i) => ({ ...v.type, name: names[i] }));
  return call(c, { type: 'STRUCT', fields }, values, (evs) => (row) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < evs.length; i++) out[names[i]] = evs[i](row);
    return out;
  });
}

function sameValue(t: SqlType): (a: unknown, b: unknown) => boolean {
  const cmp = nullsFirst(comparator(t));
  return (a, b) => cmp(a, b) === 0;
}

function concat(args: readonly Typed[], c: CallCtx): Typed {
  if (args.length > 0 && args.every((a) => a.type.type === 'ARRAY' || a.type.type === 'NULL')) {
    const t = commonType(args.map((a) => a.type));
    if (t === null)
      throw c.az.mismatch(
        'DATA_DIFF_TYPES',
        c.sql,
        `the arrays to concatenate have different element types: ${args.map((a) => `"${typeName(a.type)}"`).join(', ')}`,
        c.pos,
      );
    const as = args.map((a) => implicitCast(a, t));
    return call(
      c,
      t,
      as,
      strict((...xs) => (xs as unknown[][]).flat(1)),
    );
  }
  const as = args.map((a) => c.az.toStringArg(a, c.sql, c.pos));
  return call(
    c,
    STRING,
    as,
    strict((...xs) => (xs as string[]).join('')),
  );
}

export const COLLECTION_FUNCTIONS: Record<string, FunctionDef> = {
  concat: def(0, Number.POSITIVE_INFINITY, concat),
  size: def(1, 1, ([a], c) => {
    if (a.type.type === 'MAP')
      return call(
        c,
        INT,
        [a],
        strict((m) => Object.keys(m as object).length),
      );
    return call(
      c,
      INT,
      [arrayArg(c, a, 0)],
      strict((v) => (v as unknown[]).length),
    );
  }),
  cardinality: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [a.type.type === 'MAP' ? a : arrayArg(c, a, 0)],
      strict((v) => (Array.isArray(v) ? v.length : Object.keys(v as object).length)),
    ),
  ),
  element_at: def(2, 2, (args, c) => elementAt(args, c, false)),
  try_element_at: def(2, 2, (args, c) => elementAt(args, c, true)),
  get: def(2, 2, ([a, k], c) => {
    const arr = arrayArg(c, a, 0);
    return call(
      c,
      arr.type.element!,
      [arr, int(c, k, 1)],
      strict((v, n) => (v as unknown[])[n as number] ?? null),
    );
  }),
  array_contains: def(2, 2, ([a, x], c) => {
    if (a.type.type === 'NULL' || x.type.type === 'NULL') {
      throw c.az.mismatch('NULL_TYPE', c.sql, 'Null typed values cannot be used as arguments of `array_contains`: cast the NULL to the element type', c.pos);
    }
    const arr = arrayArg(c, a, 0);
    // Spark widens the element and the value without promoting either to STRING
    const stringOnOneSide = (arr.type.element!.type === 'STRING') !== (x.type.type === 'STRING');
    const t = stringOnOneSide ? null : commonType([arr.type.element!, x.type]);
    if (t === null)
      throw c.az.mismatch(
        'ARRAY_FUNCTION_DIFF_TYPES',
        c.sql,
        `Input to \`array_contains\` should have been "ARRAY" followed by a value with same element type, but it's ["${typeName(arr.type)}", "${typeName(x.type)}"]`,
        c.pos,
      );
    const eq = sameValue(t);
    const arrT = implicitCast(arr, { type: 'ARRAY', element: t });
    return call(
      c,
      BOOLEAN,
      [arrT, implicitCast(x, t)],
      strict((v, y) => {
        let sawNull = false;
        for (const e of v as unknown[]) {
          if (e == null) sawNull = true;
          else if (eq(e, y)) return true;
        }
        return sawNull ? null : false;
      }),
    );
  }),
  array: def(0, Number.POSITIVE_INFINITY, (args, c) => {
    const t = commonType(args.map((a) => a.type));
    if (t === null)
      throw c.az.mismatch(
        'DATA_DIFF_TYPES',
        c.sql,
        `the input to \`array\` should all be the same type, but it's [${args.map((a) => `"${typeName(a.type)}"`).join(', ')}]; cast them to one type`,
        c.pos,
      );
    const as = args.map((a) => implicitCast(a, t));
    return call(c, { type: 'ARRAY', element: t.type === 'NULL' ? STRING : t }, as, (evs) => (row) => evs.map((e) => e(row)));
  }),
  struct: def(1, Number.POSITIVE_INFINITY, (args, c) => structOf(args.map(structFieldName), args, c)),
  named_struct: def(2, Number.POSITIVE_INFINITY, (args, c) => {
    if (args.length % 2 !== 0)
      throw c.az.fail(
        'WRONG_NUM_ARGS.WITHOUT_SUGGESTION',
        `named_struct takes name, value pairs, but got ${args.length} arguments: add the missing value`,
        c.pos,
      );
    const names: string[] = [];
    const values: Typed[] = [];
    for (let i = 0; i < args.length; i += 2) {
      const n = args[i].constant?.value;
      if (typeof n !== 'string')
        throw c.az.mismatch(
          'CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING',
          c.sql,
          `only foldable STRING expressions are allowed to appear at odd position, got ${args[i].sql}`,
          c.pos,
        );
      names.push(n);
      values.push(args[i + 1]);
    }
    return structOf(names, values, c);
  }),
  map: def(0, Number.POSITIVE_INFINITY, (args, c) => {
    if (args.length % 2 !== 0)
      throw c.az.fail('WRONG_NUM_ARGS.WITHOUT_SUGGESTION', `map takes key, value pairs, but got ${args.length} arguments: add the missing value`, c.pos);
    const keys = args.filter((_, i) => i % 2 === 0).map((k, i) => str(c, k, 2 * i));
    const vt = commonType(args.filter((_, i) => i % 2 === 1).map((v) => v.type));
    if (vt === null) throw c.az.mismatch('MAP_FUNCTION_DIFF_TYPES', c.sql, 'the values of `map` should all be the same type; cast them to one type', c.pos);
    const vals = args.filter((_, i) => i % 2 === 1).map((v) => implicitCast(v, vt));
    const n = keys.length;
    return call(c, { type: 'MAP', value: vt.type === 'NULL' ? STRING : vt }, [...keys, ...vals], (evs) => (row) => {
      const out: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const k = evs[i](row);
        if (k == null) throw new SparkRowError('NULL_MAP_KEY', 'Cannot use null as map key: filter out the rows whose key is null, or coalesce it');
        if (Object.hasOwn(out, k as string)) {
          throw new SparkRowError('DUPLICATED_MAP_KEY', `Duplicate map key ${k} was found: keys must be distinct (spark.sql.mapKeyDedupPolicy is EXCEPTION)`);
        }
        Object.defineProperty(out, k as string, { value: evs[n + i](row), enumerable: true, writable: true, configurable: true });
      }
      return out;
    });
  }),
  map_keys: def(1, 1, ([m], c) =>
    call(
      c,
      { type: 'ARRAY', element: STRING },
      [mapArg(c, m, 0)],
      strict((v) => Object.keys(v as object)),
    ),
  ),
  map_values: def(1, 1, ([m], c) => {
    const a = mapArg(c, m, 0);
    return call(
      c,
      { type: 'ARRAY', element: a.type.value! },
      [a],
      strict((v) => Object.values(v as object)),
    );
  }),
  array_distinct: def(1, 1, ([a], c) => {
    const arr = arrayArg(c, a, 0);
    const eq = sameValue(arr.type.element!);
    return call(
      c,
      arr.type,
      [arr],
      strict((v) => {
        const out: unknown[] = [];
        for (const x of v as unknown[]) if (!out.some((y) => eq(x ?? null, y ?? null))) out.push(x ?? null);
        return out;
      }),
    );
  }),
  array_join: def(2, 3, (args, c) => {
    let arr = arrayArg(c, args[0], 0);
    // ANSI coercion casts an array of atomic values to ARRAY<STRING> (store-assignable to STRING)
    if (['INT', 'LONG', 'DOUBLE', 'DECIMAL', 'BOOLEAN', 'DATE', 'TIMESTAMP'].includes(arr.type.element!.type)) {
      arr = c.az.implicit(arr, { type: 'ARRAY', element: STRING }, c.pos, 'the array');
    }
    if (arr.type.element!.type !== 'STRING' && arr.type.element!.type !== 'NULL') {
      throw c.az.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        c.sql,
        `argument 1 of array_join requires the "ARRAY<STRING>" type, however ${arr.sql} has the type "${typeName(arr.type)}"; cast it to ARRAY<STRING>`,
        c.pos,
      );
    }
    const rest = args.slice(1).map((a, i) => str(c, a, i + 1));
    return call(c, STRING, [arr, ...rest], ([a, s, r]) => (row) => {
      const v = a(row) as unknown[] | null;
      const sep = s(row);
      if (v == null || sep == null) return null;
      const rep = r === undefined ? undefined : r(row);
      if (r !== undefined && rep == null) return null;
      const parts: string[] = [];
      for (const x of v) {
        if (x != null) parts.push(x as string);
        else if (rep !== undefined) parts.push(rep as string);
      }
      return parts.join(sep as string);
    });
  }),
  sort_array: def(1, 2, (args, c) => {
    const arr = arrayArg(c, args[0], 0);
    const asc = args[1] === undefined ? true : constantArg(c, args[1], 1, 'TRUE or FALSE');
    if (typeof asc !== 'boolean')
      throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, 'the sort order of sort_array must be TRUE (ascending) or FALSE (descending)', c.pos);
    const cmp = nullsFirst(comparator(arr.type.element!));
    return call(
      c,
      arr.type,
      [arr],
      strict((v) => [...(v as unknown[])].sort((x, y) => (asc ? cmp(x ?? null, y ?? null) : cmp(y ?? null, x ?? null)))),
    );
  }),
  flatten: def(1, 1, ([a], c) => {
    const arr = arrayArg(c, a, 0);
    const inner = arr.type.element!;
    if (inner.type !== 'ARRAY')
      throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `flatten takes an array of arrays, however ${arr.sql} has the type "${typeName(arr.type)}"`, c.pos);
    return call(
      c,
      inner,
      [arr],
      strict((v) => ((v as unknown[]).some((x) => x == null) ? null : (v as unknown[][]).flat(1))),
    );
  }),
  slice: def(3, 3, ([a, s, l], c) => {
    const arr = arrayArg(c, a, 0);
    return call(
      c,
      arr.type,
      [arr, int(c, s, 1), int(c, l, 2)],
      strict((v, st, ln) => {
        const xs = v as unknown[];
        const start = st as number;
        const len = ln as number;
        if (start === 0)
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.START',
            'The value of parameter(s) `start` in `slice` is invalid: Expects a positive or a negative value for `start`, but got 0.',
          );
        if (len < 0)
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.LENGTH',
            `The value of parameter(s) \`length\` in \`slice\` is invalid: Expects \`length\` greater than or equal to 0, but got ${len}.`,
          );
        const from = start > 0 ? start - 1 : xs.length + start;
        if (from < 0 || from >= xs.length) return [];
        return xs.slice(from, from + len);
      }),
    );
  }),
  array_max: def(1, 1, ([a], c) => extreme(a, c, 1)),
  array_min: def(1, 1, ([a], c) => extreme(a, c, -1)),
};

function extreme(a: Typed, c: CallCtx, sign: 1 | -1): Typed {
  const arr = arrayArg(c, a, 0);
  const cmp = comparator(arr.type.element!);
  return call(
    c,
    arr.type.element!,
    [arr],
    strict((v) => {
      let best: unknown = null;
      for (const x of v as unknown[]) if (x != null && (best === null || sign * cmp(x, best) > 0)) best = x;
      return best;
    }),
  );
}
