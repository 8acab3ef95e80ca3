/** Collection functions (arrays, maps, structs) and concat; the JSON functions are in json-functions.ts. */
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { SparkRowError } from './errors';
import { call, constantArg, def, int, str } from './fn-util';
import { strict, type Typed } from './typed';
import { BOOLEAN, commonType, INT, NULL_TYPE, STRING, type SqlField, type SqlType, typeName } from './types';
import { checkKeyType, duplicatedMapKey, keyText, keyTypeOf, keyValue, mapType, nullMapKey } from './map-keys';
import { entryValue, hasEntry, mapKeys, setEntry } from '../map-entries';
import { comparator, nullsFirst } from './values';

export function arrayArg(c: CallCtx, a: Typed, i: number): Typed {
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

export function mapArg(c: CallCtx, a: Typed, i: number): Typed {
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
    // ElementAt casts the key only to the tightest common type with the map's keys, which a STRING
    // and a non-STRING never have (MAP_FUNCTION_DIFF_TYPES)
    const kt = keyTypeOf(a.type);
    if (k.type.type !== 'NULL' && (kt.type === 'STRING') !== (k.type.type === 'STRING')) {
      throw c.az.mismatch(
        'MAP_FUNCTION_DIFF_TYPES',
        c.sql,
        `Input to \`${c.name}\` should have been "MAP" followed by a value with same key type, but it's ["${typeName(a.type)}", "${typeName(k.type)}"]: cast the key`,
        c.pos,
      );
    }
    return mapLookup(c, a, k);
  }
  const arr = arrayArg(c, a, 0);
  // the index is an INT, or a TINYINT or SMALLINT cast to one; a BIGINT or a STRING is not cast (UNEXPECTED_INPUT_TYPE)
  if (k.type.type !== 'INT' && k.type.type !== 'NULL') {
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `argument 2 of ${c.name} requires the "INT" type, however ${k.sql} has the type "${typeName(k.type)}": cast it to INT`,
      c.pos,
    );
  }
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
  if (a.fieldName !== undefined) return a.fieldName;
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

/**
 * The value of key `k` in map `a` (element_at, try_element_at, `m[k]`), null when absent: the key
 * is cast to the map's key type (Spark's implicit cast of GetMapValue's key), then found by its text.
 */
function mapLookup(c: CallCtx, a: Typed, k: Typed): Typed {
  const kt = keyTypeOf(a.type);
  const text = keyText(kt);
  return call(
    c,
    a.type.value!,
    [a, c.az.implicit(k, kt, c.pos, 'the key')],
    strict((m, key) => {
      return entryValue(m as object, text(key)) ?? null;
    }),
  );
}

/** A map from keys and values in order: a null key is NULL_MAP_KEY, a key given twice DUPLICATED_MAP_KEY (Spark's ArrayBasedMapBuilder). */
function buildMap(kt: SqlType, text: (k: unknown) => string, keys: readonly unknown[], values: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (k == null) throw nullMapKey();
    const t = text(k);
    // a DOUBLE key shown as Spark shows it, normalized (-0.0 is 0.0)
    if (hasEntry(out, t)) throw duplicatedMapKey(kt.type === 'DOUBLE' ? t : k);
    setEntry(out, t, values[i] ?? null);
  }
  return out;
}

export function sameValue(t: SqlType): (a: unknown, b: unknown) => boolean {
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
    // array() and array(NULL, ...) are ARRAY<VOID>, as in Spark: that common type gives way to any other
    // array's (coalesce(xs, array()) is an ARRAY<STRUCT<...>> when xs is)
    return call(c, { type: 'ARRAY', element: t }, as, (evs) => (row) => evs.map((e) => e(row)));
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
    const keyArgs = args.filter((_, i) => i % 2 === 0);
    const kt0 = commonType(keyArgs.map((k) => k.type));
    if (kt0 === null)
      throw c.az.mismatch(
        'CREATE_MAP_KEY_DIFF_TYPES',
        c.sql,
        `The given keys of function \`map\` should all be the same type, but they are [${keyArgs.map((k) => `"${typeName(k.type)}"`).join(', ')}]; cast them to one type`,
        c.pos,
      );
    // map() has VOID keys and values, as in Spark, which give way to any other map's types
    // (coalesce(m, map())); a map of NULL keys only is refused when built (NULL_MAP_KEY)
    const kt = kt0.type === 'NULL' && keyArgs.length > 0 ? STRING : kt0;
    checkKeyType(c, kt);
    const keys = keyArgs.map((k) => implicitCast(k, kt));
    const vt = commonType(args.filter((_, i) => i % 2 === 1).map((v) => v.type));
    if (vt === null) throw c.az.mismatch('MAP_FUNCTION_DIFF_TYPES', c.sql, 'the values of `map` should all be the same type; cast them to one type', c.pos);
    const vals = args.filter((_, i) => i % 2 === 1).map((v) => implicitCast(v, vt));
    const n = keys.length;
    const text = keyText(kt);
    return call(c, mapType(kt, vt), [...keys, ...vals], (evs) => (row) => {
      const ks = evs.slice(0, n).map((e) => e(row));
      return buildMap(
        kt,
        text,
        ks,
        evs.slice(n).map((e) => e(row)),
      );
    });
  }),
  map_from_arrays: def(2, 2, ([ka, va], c) => {
    const keys = arrayArg(c, ka, 0);
    const vals = arrayArg(c, va, 1);
    const kt = keys.type.element!.type === 'NULL' ? STRING : keys.type.element!;
    checkKeyType(c, kt);
    const text = keyText(kt);
    const vt = vals.type.element!.type === 'NULL' ? STRING : vals.type.element!;
    return call(
      c,
      mapType(kt, vt),
      [keys, vals],
      strict((k, v) => {
        const ks = k as unknown[];
        const vs = v as unknown[];
        if (ks.length !== vs.length) {
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.MAP_KEY_VALUE_LENGTH',
            `The key array and value array of map_from_arrays must have the same length, but they have ${ks.length} and ${vs.length} elements: pass arrays of equal length`,
          );
        }
        return buildMap(kt, text, ks, vs);
      }),
    );
  }),
  map_keys: def(1, 1, ([m], c) => {
    const a = mapArg(c, m, 0);
    const kt = keyTypeOf(a.type);
    const value = keyValue(kt);
    return call(
      c,
      { type: 'ARRAY', element: kt },
      [a],
      strict((v) => (kt.type === 'STRING' ? mapKeys(v as object) : mapKeys(v as object).map(value))),
    );
  }),
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
