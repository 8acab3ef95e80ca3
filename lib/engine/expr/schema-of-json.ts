/**
 * schema_of_json(json[, options]): the schema Spark's JSON schema inference gives a constant JSON
 * text, as a DDL string (`STRUCT<a: BIGINT, b: ARRAY<STRING>>`), the form from_json takes as its
 * schema: `from_json(s, schema_of_json('{"a": 1}'))`. Computed once, when the query is compiled
 * (Spark requires the text to be a constant), by JsonInferSchema's rules: a JSON integer is BIGINT
 * (past a long a DECIMAL of its digits), a fraction DOUBLE, an object a STRUCT of its fields in
 * name order, an array's element the common type of its elements, a null or an empty array's
 * element STRING, and values of types with no common one STRING.
 */
import { parseOrdered, JsonObject } from '../json-ordered';
import type { CallCtx, FunctionDef } from './analyze';
import type { Typed } from './typed';
import { constantString, constantText, def } from './fn-util';
import { isLossless, jacksonInput, jsonOptionsOf } from './json-functions';
import { BOOLEAN, DOUBLE, LONG, MAX_PRECISION, NULL_TYPE, STRING, type SqlType, typeName } from './types';

/** The type JsonInferSchema infers for one parsed value (NULL for null; struct fields in the order met). */
function inferred(v: unknown, prefersDecimal: boolean): SqlType {
  if (v === null) return NULL_TYPE;
  if (typeof v === 'string') return STRING;
  if (typeof v === 'boolean') return BOOLEAN;
  if (typeof v === 'number') return DOUBLE; // NaN and the infinities (Jackson's non-numeric numbers)
  if (isLossless(v)) return numberType(v.value, prefersDecimal);
  if (Array.isArray(v)) return { type: 'ARRAY', element: v.reduce<SqlType>((t, x) => common(t, inferred(x, prefersDecimal)), NULL_TYPE) };
  if (v instanceof JsonObject) {
    const fields = v.entries.map(([name, x]) => ({ ...inferred(x, prefersDecimal), name }));
    // sorted by name (a stable sort: a key given twice gives two fields, as Spark's)
    return { type: 'STRUCT', fields: fields.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  }
  return STRING;
}

/** A JSON number's type: BIGINT for an integer within a long, else a DECIMAL of its digits (DOUBLE past 38); a fraction DOUBLE (or a DECIMAL with prefersDecimal). */
function numberType(text: string, prefersDecimal: boolean): SqlType {
  const integer = /^-?\d+$/.test(text);
  if (integer) {
    const n = BigInt(text);
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return LONG;
  } else if (!prefersDecimal) return DOUBLE;
  // java.math.BigDecimal's precision and scale of the text
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)!;
  const digits = `${m[1]}${m[2] ?? ''}`.replace(/^0+(?=\d)/, '');
  const scale = (m[2]?.length ?? 0) - Number(m[3] ?? 0);
  const precision = digits.length;
  const p = Math.max(precision, scale);
  if (scale < 0 || p > MAX_PRECISION) return DOUBLE;
  return { type: 'DECIMAL', precision: p, scale };
}

/** JsonInferSchema.compatibleType: the common type of two inferred types, STRING when they have none. */
function common(a: SqlType, b: SqlType): SqlType {
  if (a.type === 'NULL') return b;
  if (b.type === 'NULL') return a;
  if (a.type === b.type && a.type !== 'DECIMAL' && a.type !== 'ARRAY' && a.type !== 'STRUCT') return a;
  const decimal = (t: SqlType): SqlType | null => (t.type === 'DECIMAL' ? t : t.type === 'LONG' ? { type: 'DECIMAL', precision: 20, scale: 0 } : null);
  if ((a.type === 'DOUBLE' && (b.type === 'DECIMAL' || b.type === 'LONG')) || (b.type === 'DOUBLE' && (a.type === 'DECIMAL' || a.type === 'LONG')))
    return DOUBLE;
  const da = decimal(a);
  const db = decimal(b);
  if (da && db) {
    const scale = Math.max(da.scale!, db.scale!);
    const range = Math.max(da.precision! - da.scale!, db.precision! - db.scale!);
    return range + scale > MAX_PRECISION ? DOUBLE : { type: 'DECIMAL', precision: range + scale, scale };
  }
  if (a.type === 'ARRAY' && b.type === 'ARRAY') return { type: 'ARRAY', element: common(a.element!, b.element!) };
  if (a.type === 'STRUCT' && b.type === 'STRUCT') {
    const names = [...new Set([...a.fields!, ...b.fields!].map((f) => f.name))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    return {
      type: 'STRUCT',
      fields: names.map((name) => {
        const x = a.fields!.find((f) => f.name === name);
        const y = b.fields!.find((f) => f.name === name);
        return { ...(x && y ? common(x, y) : (x ?? y)!), name };
      }),
    };
  }
  return STRING;
}

/** JsonInferSchema.canonicalizeType: a NULL is STRING (or dropped, with dropFieldIfAllNull), fields with an empty name and empty structs are dropped. */
function canonical(t: SqlType, dropNulls: boolean): SqlType | null {
  if (t.type === 'NULL') return dropNulls ? null : STRING;
  if (t.type === 'ARRAY') {
    const e = canonical(t.element!, dropNulls);
    return e === null ? null : { type: 'ARRAY', element: e };
  }
  if (t.type === 'STRUCT') {
    const fields = t
      .fields!.filter((f) => f.name !== '')
      .flatMap((f) => {
        const c = canonical(f, dropNulls);
        return c === null ? [] : [{ ...c, name: f.name }];
      });
    return fields.length ? { type: 'STRUCT', fields } : null;
  }
  return t;
}

function schemaOfJson(args: readonly Typed[], c: CallCtx): Typed {
  const text = constantText(c, args[0], 0, 'json', 'a JSON text in quotes');
  const o = jsonOptionsOf(c, args[1], 'parse');
  const yes = (k: string) => (o.get(k) ?? '').trim().toLowerCase() === 'true';
  let parsed: unknown;
  try {
    parsed = parseOrdered(jacksonInput(text, false), true);
  } catch (e) {
    throw c.az.fail(
      'INVALID_JSON_SCHEMA_TEXT',
      `${c.name} cannot infer a schema from ${JSON.stringify(text)}: it is not JSON (${(e as Error).message}); give a sample record`,
      c.pos,
    );
  }
  const dropNulls = yes('dropFieldIfAllNull');
  const t = inferred(parsed, yes('prefersDecimal'));
  let schema: SqlType;
  if (t.type === 'STRUCT') schema = canonical(t, dropNulls) ?? { type: 'STRUCT', fields: [] };
  else if (t.type === 'ARRAY' && t.element!.type === 'STRUCT')
    schema = { type: 'ARRAY', element: canonical(t.element!, dropNulls) ?? { type: 'STRUCT', fields: [] } };
  else schema = canonical(t, dropNulls) ?? STRING;
  const ddl = typeName(schema);
  return constantString(c, ddl);
}

export const SCHEMA_OF_JSON_FUNCTIONS: Record<string, FunctionDef> = {
  schema_of_json: def(1, 2, schemaOfJson),
};
