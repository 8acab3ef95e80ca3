/**
 * More of Spark's collection functions (collectionOperations.scala): an element's position and
 * removal, the set operations over arrays (their results distinct, in first-seen order, a null
 * counted as a value), array_repeat and sequence, and a map's entries, keys tested, maps
 * concatenated or built from entries. Elements compare as the element type's values (a DOUBLE's
 * NaN equals NaN, -0.0 equals 0.0, as Spark's ordering); the arrays and values are widened to a
 * common type first, never to STRING, as array_contains does.
 */
import { checkArrayLength } from './value-limits';
import { hasEntry, mapEntries, setEntry } from '../map-entries';
import type { CallCtx, FunctionDef } from './analyze';
import { implicitCast } from './analyze';
import { arrayArg, mapArg, sameValue } from './collections';
import { SparkRowError } from './errors';
import { call, def, int } from './fn-util';
import { checkKeyType, duplicatedMapKey, keyText, keyTypeOf, keyValue, mapType, nullMapKey } from './map-keys';
import { temporalSequence } from './temporal-sequence';
import { strict, type Typed } from './typed';
import { BOOLEAN, commonType, INT, isIntegral, LONG, type SqlType, typeName } from './types';

/** The array and the value widened to one element type (Spark's ARRAY_FUNCTION_DIFF_TYPES otherwise). */
function arrayAndValue(c: CallCtx, a: Typed, x: Typed): { arr: Typed; value: Typed; t: SqlType } {
  if (a.type.type === 'NULL' || x.type.type === 'NULL') {
    throw c.az.mismatch('NULL_TYPE', c.sql, `Null typed values cannot be used as arguments of \`${c.name}\`: cast the NULL to the element type`, c.pos);
  }
  const arr = arrayArg(c, a, 0);
  const stringOnOneSide = (arr.type.element!.type === 'STRING') !== (x.type.type === 'STRING');
  return widened(c, arr, x, stringOnOneSide ? null : commonType([arr.type.element!, x.type]));
}

/** The array and the value cast to element type `t`; null: they have none (ARRAY_FUNCTION_DIFF_TYPES). */
function widened(c: CallCtx, arr: Typed, x: Typed, t: SqlType | null): { arr: Typed; value: Typed; t: SqlType } {
  if (t === null) {
    throw c.az.mismatch(
      'ARRAY_FUNCTION_DIFF_TYPES',
      c.sql,
      `Input to \`${c.name}\` should have been "ARRAY" followed by a value with same element type, but it's ["${typeName(arr.type)}", "${typeName(x.type)}"]`,
      c.pos,
    );
  }
  return { arr: implicitCast(arr, { type: 'ARRAY', element: t }), value: implicitCast(x, t), t };
}

/** Two arrays widened to one element type (Spark's BINARY_ARRAY_DIFF_TYPES otherwise). */
function twoArrays(c: CallCtx, a: Typed, b: Typed): { as: [Typed, Typed]; t: SqlType } {
  const x = arrayArg(c, a, 0);
  const y = arrayArg(c, b, 1);
  const t = commonType([x.type.element!, y.type.element!]);
  if (t === null) {
    throw c.az.mismatch(
      'BINARY_ARRAY_DIFF_TYPES',
      c.sql,
      `Input to function \`${c.name}\` should have been two "ARRAY" with same element type, but it's ["${typeName(x.type)}", "${typeName(y.type)}"]`,
      c.pos,
    );
  }
  const at: SqlType = { type: 'ARRAY', element: t };
  return { as: [implicitCast(x, at), implicitCast(y, at)], t };
}

/** Distinct values in first-seen order, a null once (Spark's array set functions). */
function distinctInto(out: unknown[], xs: readonly unknown[], eq: (a: unknown, b: unknown) => boolean, keep: (x: unknown) => boolean): void {
  for (const x of xs) {
    const v = x ?? null;
    if (keep(v) && !out.some((y) => eq(v, y))) out.push(v);
  }
}

function setFunction(kind: 'union' | 'intersect' | 'except'): FunctionDef {
  return def(2, 2, ([a, b], c) => {
    const { as, t } = twoArrays(c, a, b);
    const eq = sameValue(t);
    return call(
      c,
      { type: 'ARRAY', element: t },
      as,
      strict((x, y) => {
        const xs = x as unknown[];
        const ys = y as unknown[];
        const out: unknown[] = [];
        const inY = (v: unknown) => ys.some((w) => eq(v, w ?? null));
        if (kind === 'union') {
          distinctInto(out, xs, eq, () => true);
          distinctInto(out, ys, eq, () => true);
        } else distinctInto(out, xs, eq, kind === 'intersect' ? inY : (v) => !inY(v));
        return out;
      }),
    );
  });
}

/**
 * sequence(start, stop[, step]) over integral values: the step 1 or -1 by default, stop included
 * when reached; over DATE or TIMESTAMP values with an INTERVAL step (temporal-sequence.ts).
 */
function sequence(args: readonly Typed[], c: CallCtx): Typed {
  const ends = commonType(args.slice(0, 2).map((a) => a.type));
  if (ends !== null && (ends.type === 'DATE' || ends.type === 'TIMESTAMP')) return temporal(args, c, ends);
  const t = commonType(args.map((a) => a.type));
  if (t === null || !isIntegral(t)) {
    throw c.az.mismatch(
      'SEQUENCE_WRONG_INPUT_TYPES',
      c.sql,
      `\`sequence\` uses the wrong parameter type: start and stop must be integers of one type, with an integral step, or dates or timestamps with an INTERVAL step (${args.map((a) => `"${typeName(a.type)}"`).join(', ')}); cast them`,
      c.pos,
    );
  }
  return call(
    c,
    { type: 'ARRAY', element: t },
    args.map((a) => implicitCast(a, t)),
    strict((...vs) => {
      const [start, stop, given] = vs.map((v) => BigInt(v as number | bigint));
      const step = given ?? (start <= stop ? 1n : -1n);
      if ((step > 0n && start > stop) || (step < 0n && start < stop) || (step === 0n && start !== stop)) {
        throw new SparkRowError(
          'INVALID_PARAMETER_VALUE.SEQUENCE_BOUNDARIES',
          `Illegal sequence boundaries: ${start} to ${stop} by ${step}: the step must go from start towards stop`,
        );
      }
      const n = step === 0n ? 1n : (stop - start) / step + 1n;
      checkArrayLength(n, 'sequence');
      const out: unknown[] = [];
      const asValue = t.type === 'INT' ? (b: bigint) => Number(b) : (b: bigint) => (b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b);
      for (let i = 0n, v = start; i < n; i++, v += step) out.push(asValue(v));
      return out;
    }),
  );
}

/** sequence over DATE or TIMESTAMP ends (their common type `t`), the step an INTERVAL. */
function temporal(args: readonly Typed[], c: CallCtx, t: SqlType): Typed {
  const step = args[2];
  if (step !== undefined && step.type.type !== 'INTERVAL' && step.type.type !== 'NULL') {
    throw c.az.mismatch(
      'SEQUENCE_WRONG_INPUT_TYPES',
      c.sql,
      `\`sequence\` uses the wrong parameter type: the step of a sequence of ${typeName(t)} values must be an INTERVAL ("${typeName(step.type)}" given): write INTERVAL 1 DAY, INTERVAL 1 MONTH, ...`,
      c.pos,
    );
  }
  const months = step?.type.yearMonth === true;
  const isDate = t.type === 'DATE';
  const ends = args.slice(0, 2).map((a) => implicitCast(a, t));
  return call(
    c,
    { type: 'ARRAY', element: t },
    step === undefined ? ends : [...ends, step],
    strict((start, stop, by) => {
      const s = by === undefined ? null : months ? { months: by as number, micros: 0n } : { months: 0, micros: BigInt(by as number | bigint) };
      return temporalSequence(isDate, start, stop, s);
    }),
  );
}

/** Maps of one key and value type (Spark's DATA_DIFF_TYPES otherwise). */
function sameMaps(c: CallCtx, args: readonly Typed[]): SqlType {
  const ms = args.map((a, i) => mapArg(c, a, i));
  const first = ms[0].type;
  for (const m of ms) {
    if (typeName(m.type) !== typeName(first)) {
      throw c.az.mismatch(
        'DATA_DIFF_TYPES',
        c.sql,
        `Input to \`${c.name}\` should all be the same type, but it's [${ms.map((x) => `"${typeName(x.type)}"`).join(', ')}]: cast them to one map type`,
        c.pos,
      );
    }
  }
  return first;
}

/** array_append / array_prepend: the element widened with the array's element type; a null element is added too. */
function arrayAdd(atEnd: boolean): FunctionDef {
  return def(2, 2, ([a, x], c) => {
    const input = arrayArg(c, a, 0);
    const { arr, value, t } = widened(c, input, x, commonType([input.type.element!, x.type]));
    return call(c, { type: 'ARRAY', element: t }, [arr, value], ([ea, ex]) => (row) => {
      const xs = ea(row) as unknown[] | null;
      if (xs == null) return null;
      const v = ex(row) ?? null;
      return atEnd ? [...xs, v] : [v, ...xs];
    });
  });
}

export const ARRAY_MAP_FUNCTIONS: Record<string, FunctionDef> = {
  array_size: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [arrayArg(c, a, 0)],
      strict((xs) => (xs as unknown[]).length),
    ),
  ),
  array_compact: def(1, 1, ([a], c) => {
    const arr = arrayArg(c, a, 0);
    return call(
      c,
      arr.type,
      [arr],
      strict((xs) => (xs as unknown[]).filter((x) => x != null)),
    );
  }),
  array_append: arrayAdd(true),
  array_prepend: arrayAdd(false),
  array_position: def(2, 2, ([a, x], c) => {
    const { arr, value, t } = arrayAndValue(c, a, x);
    const eq = sameValue(t);
    return call(
      c,
      LONG,
      [arr, value],
      strict((v, y) => {
        const xs = v as unknown[];
        for (let i = 0; i < xs.length; i++) if (xs[i] != null && eq(xs[i], y)) return i + 1;
        return 0;
      }),
    );
  }),
  array_remove: def(2, 2, ([a, x], c) => {
    const { arr, value, t } = arrayAndValue(c, a, x);
    const eq = sameValue(t);
    return call(
      c,
      arr.type,
      [arr, value],
      strict((v, y) => (v as unknown[]).filter((e) => e == null || !eq(e, y)).map((e) => e ?? null)),
    );
  }),
  arrays_overlap: def(2, 2, ([a, b], c) => {
    const { as, t } = twoArrays(c, a, b);
    const eq = sameValue(t);
    return call(
      c,
      BOOLEAN,
      as,
      strict((x, y) => {
        const xs = x as unknown[];
        const ys = y as unknown[];
        let sawNull = false;
        for (const v of xs) {
          if (v == null) sawNull = true;
          else if (ys.some((w) => w != null && eq(v, w))) return true;
        }
        // no common value: null when both have elements and one of them holds a null
        return sawNull || ys.some((w) => w == null) ? (xs.length > 0 && ys.length > 0 ? null : false) : false;
      }),
    );
  }),
  array_union: setFunction('union'),
  array_intersect: setFunction('intersect'),
  array_except: setFunction('except'),
  array_repeat: def(2, 2, ([x, n], c) => {
    const count = int(c, n, 1);
    return call(c, { type: 'ARRAY', element: x.type }, [x, count], (evs) => (row) => {
      const k = evs[1](row) as number | null;
      if (k == null) return null;
      checkArrayLength(k, 'array_repeat');
      const v = evs[0](row) ?? null;
      return Array.from({ length: Math.max(0, k) }, () => v);
    });
  }),
  sequence: def(2, 3, sequence),
  map_entries: def(1, 1, ([m], c) => {
    const a = mapArg(c, m, 0);
    const kt = keyTypeOf(a.type);
    const key = keyValue(kt);
    return call(
      c,
      {
        type: 'ARRAY',
        element: {
          type: 'STRUCT',
          fields: [
            { ...kt, name: 'key' },
            { ...a.type.value!, name: 'value' },
          ],
        },
      },
      [a],
      strict((v) => mapEntries(v as object).map(([k, x]) => ({ key: key(k), value: x ?? null }))),
    );
  }),
  map_contains_key: def(2, 2, ([m, k], c) => {
    const a = mapArg(c, m, 0);
    const kt = keyTypeOf(a.type);
    const text = keyText(kt);
    return call(
      c,
      BOOLEAN,
      [a, c.az.implicit(k, kt, c.pos, 'the key')],
      strict((v, key) => hasEntry(v as object, text(key))),
    );
  }),
  map_concat: def(1, Number.POSITIVE_INFINITY, (args, c) => {
    const t = sameMaps(c, args);
    const kt = keyTypeOf(t);
    const key = keyValue(kt);
    return call(
      c,
      t,
      args,
      strict((...ms) => {
        const out: Record<string, unknown> = {};
        for (const m of ms) {
          for (const [k, x] of mapEntries(m as object)) {
            if (hasEntry(out, k)) throw duplicatedMapKey(key(k));
            setEntry(out, k, x);
          }
        }
        return out;
      }),
    );
  }),
  map_from_entries: def(1, 1, ([a], c) => {
    const arr = arrayArg(c, a, 0);
    const el = arr.type.element!;
    if (el.type !== 'STRUCT' || el.fields!.length !== 2) {
      throw c.az.mismatch(
        'MAP_FROM_ENTRIES_WRONG_TYPE',
        c.sql,
        `The argument of \`map_from_entries\` should be an array of 2-field structs (key, value), however ${arr.sql} is "${typeName(arr.type)}"`,
        c.pos,
      );
    }
    const [kf, vf] = el.fields!;
    const { name: keyName, ...kt } = kf;
    const { name: valueName, ...vt } = vf;
    checkKeyType(c, kt);
    const text = keyText(kt);
    return call(
      c,
      mapType(kt, vt),
      [arr],
      strict((v) => {
        const out: Record<string, unknown> = {};
        for (const e of v as Array<Record<string, unknown> | null>) {
          // an entry that is null makes the map null (Spark's MapFromEntries)
          if (e == null) return null;
          const k = e[keyName];
          if (k == null) throw nullMapKey();
          const t = text(k);
          if (hasEntry(out, t)) throw duplicatedMapKey(k);
          setEntry(out, t, e[valueName] ?? null);
        }
        return out;
      }),
    );
  }),
};
