/**
 * from_csv(csv, schema[, options]) as Spark's CsvToStructs reads a text: the first CSV record of
 * the text by the CSV reader's own rules (formats/csv.ts: the separator, quotes, escapes, nullValue,
 * emptyValue, the datetime patterns and NaN/Inf texts of the options), its fields by position into
 * the schema's columns, each converted as the CSV reader converts a token (formats/text-values.ts).
 * A record that does not fit (a value its column cannot hold, fewer or more fields than columns) is,
 * in PERMISSIVE mode (the default), the struct of what fitted, the rest null, with the text in the
 * corrupt-record column when the schema declares it; in FAILFAST mode a row error.
 */
import { parseDdlColumns, parseDdlType } from '../ddl';
import { InvalidOptionError } from '../errors';
import { type CsvOptions, csvOptions, csvRecords, tokenOf } from '../formats/csv';
import { pickOptions, type ReaderOptions } from '../formats/options';
import { BadText, valueOfText } from '../formats/text-values';
import type { Column } from '../schema';
import type { CallCtx, FunctionDef } from './analyze';
import { call, constantArg, def, stringOnly } from './fn-util';
import { type JsonOptions, jsonOptionsOf } from './json-functions';
import { malformedRecord, parseModeOf } from './parse-modes';
import { strict, type Typed } from './typed';
import { type SqlType, toDataType, typeName } from './types';

/** The CSV reader options a function reads from its options map (their names as Spark's CSVOptions spell them; the map's keys in any case). */
const OPTION_NAMES = [
  'sep',
  'delimiter',
  'quote',
  'escape',
  'charToEscapeQuoteEscaping',
  'nullValue',
  'emptyValue',
  'dateFormat',
  'timestampFormat',
  'nanValue',
  'positiveInf',
  'negativeInf',
  'ignoreLeadingWhiteSpace',
  'ignoreTrailingWhiteSpace',
];

/** The CSV reader's options from a function's options map (from_csv, schema_of_csv); a bad one is Spark's INVALID_OPTIONS. */
export function csvOptionsOf(c: CallCtx, given: JsonOptions): CsvOptions {
  const options = pickOptions((k) => given.get(k), OPTION_NAMES);
  try {
    return csvOptions(options as ReaderOptions);
  } catch (e) {
    if (e instanceof InvalidOptionError) throw c.az.fail('INVALID_OPTIONS', `${c.name}: ${e.message}`, c.pos);
    throw e;
  }
}

/** The schema argument: columns (`a INT, b STRING`) or `STRUCT<...>`, of types a CSV token can hold. */
function csvSchema(c: CallCtx, arg: Typed): SqlType {
  const text = constantArg(c, arg, 1, "a DDL schema in quotes, 'a INT, b STRING'");
  if (typeof text !== 'string') throw c.az.mismatch('INVALID_SCHEMA', c.sql, 'the schema of from_csv must be a DDL string', c.pos);
  let t: SqlType;
  try {
    t = /^\s*STRUCT\s*</i.test(text) ? parseDdlType(text, true) : { type: 'STRUCT', fields: parseDdlColumns(text, true) };
  } catch (e) {
    throw c.az.fail('INVALID_SCHEMA.PARSE_ERROR', `The input schema ${JSON.stringify(text)} is not a valid schema string: ${(e as Error).message}`, c.pos);
  }
  if (t.type !== 'STRUCT')
    throw c.az.fail('INVALID_SCHEMA.NON_STRUCT_TYPE', `The input schema ${JSON.stringify(text)} must be a struct: give columns ('a INT, b STRING')`, c.pos);
  const nested = t.fields!.find((f) => f.type === 'ARRAY' || f.type === 'MAP' || f.type === 'STRUCT');
  if (nested !== undefined) {
    throw c.az.fail(
      'UNSUPPORTED_DATATYPE',
      `Unsupported data type "${typeName(nested)}" for the field ${nested.name} of from_csv: a CSV value is text; read it as STRING and parse it (from_json, split)`,
      c.pos,
    );
  }
  return t;
}

function fromCsv(args: readonly Typed[], c: CallCtx): Typed {
  const text = stringOnly(c, args[0], 0);
  const t = csvSchema(c, args[1]);
  const given = jsonOptionsOf(c, args[2], 'parse');
  const { failFast, corrupt } = parseModeOf(c, 'from_csv', given, t);
  const o = csvOptionsOf(c, given);
  const columns = t.fields!.filter((f) => f !== corrupt).map((f) => ({ ...toDataType(f), name: f.name }) as Column);
  return call(
    c,
    t,
    [text],
    strict((v) => {
      const s = v as string;
      const out: Record<string, unknown> = {};
      for (const f of t.fields!) out[f.name] = null;
      const first = csvRecords(s.charCodeAt(0) === 0xfeff ? s.slice(1) : s, o).next();
      const fields = first.done ? [] : first.value.fields;
      // (another field count: the record is malformed, the fields there are still read)
      let bad = first.done || fields.length !== columns.length;
      columns.forEach((col, i) => {
        if (i >= fields.length) return;
        const token = tokenOf(fields[i], o);
        if (token === o.nullValue) return;
        try {
          out[col.name] = valueOfText(col, token, o.patterns);
        } catch (e) {
          if (!(e instanceof BadText)) throw e;
          bad = true;
        }
      });
      if (!bad) return out;
      if (failFast) {
        throw malformedRecord(s);
      }
      if (corrupt !== undefined) out[corrupt.name] = s;
      return out;
    }),
  );
}

export const FROM_CSV_FUNCTIONS: Record<string, FunctionDef> = {
  from_csv: def(2, 3, fromCsv),
};
