/**
 * from_json as Spark's JsonToStructs reads a text: Jackson's parse, JacksonParser's conversion to
 * the schema with partial results, and FailureSafeParser's modes (PERMISSIVE, the default, and
 * FAILFAST) with the column of corrupt records.
 */
import { LosslessNumber } from 'lossless-json';
import { parseDdlColumns, parseDdlType } from '../ddl';
import { JsonObject, parseOrdered } from '../json-ordered';
import { setEntry } from '../map-entries';
import type { DataType } from '../schema';
import { jsonValueOf } from '../json-record';
import type { CallCtx, FunctionDef } from './analyze';
import { castFunction } from './cast';
import { SparkRowError } from './errors';
import { call, constantArg, def, stringOnly } from './fn-util';
import { isLossless, jacksonCopy, jacksonInput, type JsonOptions, jsonOptionsOf } from './json-functions';
import { malformedRecord, parseModeOf } from './parse-modes';
import { microsValue, parseTimestampMicros } from './time';
import { strict, type Typed } from './typed';
import { STRING, type SqlType, typeName } from './types';

/** Whether a value that does not fit its type was met (the record is then bad, for FailureSafeParser). */
interface Badness {
  bad: boolean;
}

const stringToDate = castFunction(STRING, { type: 'DATE' }, true);

/**
 * The typed value of parsed JSON for from_json, as Spark's JacksonParser converts it with partial
 * results (its default): undefined when the value does not fit. A struct keeps the fields that fit
 * and sets the others null; an array or a map with an element or value that does not fit does
 * not fit as a whole (it becomes null in the nearest struct). An integral type takes only a JSON
 * integer, a TIMESTAMP a string or integer seconds, a DECIMAL a number or its text, a STRING any
 * value (a non-string as Jackson's copy of it). A value that does not fit makes the record bad
 * (`seen.bad`), as Spark's partial results do.
 */
function typeJson(t: SqlType, v: unknown, o: JsonOptions, seen: Badness): unknown {
  if (v == null) return null;
  switch (t.type) {
    case 'STRUCT': {
      if (!(v instanceof JsonObject)) return undefined;
      const out: Record<string, unknown> = {};
      for (const f of t.fields!) out[f.name] = null;
      // each member in turn, as JacksonParser's convertObject: a key given twice is converted twice,
      // a value that fits replaces the one before, one that does not fit leaves it
      for (const [k, x] of v.entries) {
        const f = t.fields!.find((g) => g.name === k);
        if (f === undefined) continue;
        const y = typeJson(f, x, o, seen);
        if (y !== undefined) out[f.name] = y;
        else seen.bad = true;
      }
      return out;
    }
    case 'ARRAY': {
      if (!Array.isArray(v)) return undefined;
      const out = v.map((x) => typeJson(t.element!, x, o, seen));
      return out.includes(undefined) ? undefined : out;
    }
    case 'MAP': {
      if (!(v instanceof JsonObject)) return undefined;
      const out: Record<string, unknown> = {};
      // a key given twice: each value must fit; the map keeps the last (Spark's map keeps both entries)
      for (const [k, x] of v.entries) {
        const y = typeJson(t.value!, x, o, seen);
        if (y === undefined) return undefined;
        setEntry(out, k, y);
      }
      return out;
    }
    case 'STRING':
      return typeof v === 'string' ? v : jacksonCopy(v);
    case 'INT':
    case 'LONG':
      // a JSON number with a fraction or an exponent is Jackson's VALUE_NUMBER_FLOAT: no integral type takes it
      if (!isLossless(v) || !/^-?\d+$/.test(v.value)) return undefined;
      return jsonValueOf(t as DataType, v);
    case 'TIMESTAMP': {
      if (typeof v === 'string') return (o.timestamp !== undefined ? o.timestamp.parseTimestamp(v) : parseTimestampMicros(v)) ?? undefined;
      // a JSON integer is seconds since the epoch; a fraction is not taken
      if (!isLossless(v) || !/^-?\d+$/.test(v.value)) return undefined;
      return microsValue(BigInt(v.value) * 1_000_000n);
    }
    case 'DECIMAL': {
      if (typeof v !== 'string') return jsonValueOf(t as DataType, v);
      // Spark reads a DECIMAL from a JSON string too, as Java's BigDecimal of the text without its commas
      const text = v.replaceAll(',', '').replace(/^\+/, '');
      if (!/^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
      return jsonValueOf(t as DataType, new LosslessNumber(text.replace(/^(-?)\./, '$10.').replace(/\.(?=[eE]|$)/, '')));
    }
    case 'DATE':
      if (typeof v !== 'string') return undefined;
      // without dateFormat Spark's default date parser is CAST's (stringToDate): `2026-10`, `2026-10-01T10:00`, spaces trimmed
      return (o.date !== undefined ? o.date.parseDate(v) : (stringToDate(v) as string | null)) ?? undefined;
    default:
      return jsonValueOf(t as DataType, v);
  }
}

/** Whether a MAP at any depth of `t` has keys of another type than STRING. */
function hasTypedMapKey(t: SqlType): boolean {
  if (t.type === 'MAP') return t.key !== undefined || hasTypedMapKey(t.value!);
  if (t.type === 'ARRAY') return hasTypedMapKey(t.element!);
  if (t.type === 'STRUCT') return t.fields!.some(hasTypedMapKey);
  return false;
}

/** The schema argument of from_json: a DDL type (ARRAY<...>, MAP<...>, STRUCT<...>) or a list of columns. */
function schemaOf(c: CallCtx, arg: Typed): SqlType {
  const schemaText = constantArg(c, arg, 1, "a DDL schema in quotes, 'a INT, b STRING'");
  if (typeof schemaText !== 'string') throw c.az.mismatch('INVALID_SCHEMA', c.sql, 'the schema of from_json must be a DDL string', c.pos);
  // Spark's DataType.fromDDL: a type first (ARRAY<INT>, or INT, refused below), then a list of columns
  let t: SqlType;
  try {
    t = parseDdlType(schemaText, true);
  } catch (typeError) {
    try {
      // (a text that starts as a nested type reports why that type does not parse)
      if (/^\s*(ARRAY|MAP|STRUCT)\s*</i.test(schemaText)) throw typeError;
      t = { type: 'STRUCT', fields: parseDdlColumns(schemaText, true) };
    } catch (e) {
      throw c.az.fail(
        'INVALID_SCHEMA.PARSE_ERROR',
        `The input schema ${JSON.stringify(schemaText)} is not a valid schema string: ${(e as Error).message}`,
        c.pos,
      );
    }
  }
  if (t.type !== 'STRUCT' && t.type !== 'ARRAY' && t.type !== 'MAP') {
    throw c.az.mismatch(
      'INVALID_JSON_SCHEMA',
      c.sql,
      `Input schema "${typeName(t)}" must be a struct, an array or a map: give columns ('value ${typeName(t)}') or ARRAY<${typeName(t)}>`,
      c.pos,
    );
  }
  // Spark's ExprUtils.checkJsonSchema: JSON object keys are strings
  if (hasTypedMapKey(t)) {
    throw c.az.mismatch(
      'INVALID_JSON_MAP_KEY_TYPE',
      c.sql,
      `Input schema "${typeName(t)}" can only contain "STRING" as a key type for a "MAP": declare MAP<STRING, ...> and cast the keys after reading`,
      c.pos,
    );
  }
  return t;
}

/**
 * from_json(text, schema[, options]). A text with no JSON token is null. A bad record (malformed
 * text, a root that is not the schema's, a value that does not fit) is, in PERMISSIVE mode, the
 * struct of what fitted (the other fields null; an ARRAY or MAP schema: its partial value, or null) with the text in the
 * corrupt-record column when the schema declares it (columnNameOfCorruptRecord, default
 * `_corrupt_record`, a STRING field left out of the parse); in FAILFAST mode a row error,
 * MALFORMED_RECORD_IN_PARSING. Spark refuses DROPMALFORMED here (PARSE_MODE_UNSUPPORTED).
 */
function fromJson(args: readonly Typed[], c: CallCtx): Typed {
  const text = stringOnly(c, args[0], 0);
  const t = schemaOf(c, args[1]);
  const o = jsonOptionsOf(c, args[2], 'parse');
  const { failFast, corrupt } = parseModeOf(c, 'from_json', o, t);
  const parsedType: SqlType = corrupt === undefined ? t : { type: 'STRUCT', fields: t.fields!.filter((f) => f !== corrupt) };
  const nulls = () => Object.fromEntries(t.fields!.map((f) => [f.name, null]));
  const badRecord = (s: string, partial: unknown, arrayForStruct = false): unknown => {
    if (failFast) {
      if (arrayForStruct) {
        throw new SparkRowError(
          'MALFORMED_RECORD_IN_PARSING.CANNOT_PARSE_JSON_ARRAYS_AS_STRUCTS',
          `Malformed records are detected in record parsing: ${s}. Parse Mode: FAILFAST. Parsing JSON arrays as structs is forbidden: give an ARRAY<STRUCT<...>> schema, or set the option 'mode' as 'PERMISSIVE'.`,
        );
      }
      throw malformedRecord(s);
    }
    // an ARRAY or MAP schema keeps its partial value (a struct element with a field that did not fit)
    if (t.type !== 'STRUCT') return partial;
    const out: Record<string, unknown> = nulls();
    if (partial !== null) for (const f of parsedType.fields!) out[f.name] = (partial as Record<string, unknown>)[f.name];
    if (corrupt !== undefined) out[corrupt.name] = s;
    return out;
  };
  return call(
    c,
    t,
    [text],
    strict((v) => {
      const s = v as string;
      // no JSON token at all (an empty text) is no row: null, not a row of nulls
      if (/^[ \t\r\n]*$/.test(s)) return null;
      let parsed: unknown;
      try {
        // from_json's Jackson takes the bare NaN and infinity words (allowNonNumericNumbers, on by default)
        parsed = parseOrdered(jacksonInput(s, false), true);
      } catch {
        return badRecord(s, null);
      }
      // an object for an ARRAY<STRUCT> schema is an array of that one struct (SPARK-19595)
      if (t.type === 'ARRAY' && t.element!.type === 'STRUCT' && parsed instanceof JsonObject) parsed = [parsed];
      const seen: Badness = { bad: false };
      const typed = typeJson(parsedType, parsed, o, seen);
      if (typed === undefined || typed === null) return badRecord(s, null, t.type === 'STRUCT' && Array.isArray(parsed));
      if (seen.bad) return badRecord(s, typed);
      if (corrupt === undefined) return typed;
      return { ...(typed as Record<string, unknown>), [corrupt.name]: null };
    }),
  );
}

export const FROM_JSON_FUNCTIONS: Record<string, FunctionDef> = {
  from_json: def(2, 3, fromJson),
};
