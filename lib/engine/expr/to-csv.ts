/**
 * to_csv(struct[, options]) as Spark's StructsToCsv writes a row: each field's text as
 * UnivocityGenerator makes it (a DATE by dateFormat, `yyyy-MM-dd`; a TIMESTAMP by timestampFormat,
 * `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in UTC; a DOUBLE or DECIMAL as Java prints it; the rest as text),
 * then the record as univocity's CSV writer writes it with CSVOptions' writer settings
 * (formats/csv-writer.ts), without a line end. A null struct is null.
 */
import { javaDecimalText } from '../decimal';
import { InvalidOptionError } from '../errors';
import { type CsvWriteOptions, csvRecordText, csvWriteOptionsOf, SPARK_CSV_TIMESTAMP } from '../formats/csv-writer';
import type { CallCtx, FunctionDef } from './analyze';
import { call, def } from './fn-util';
import { jsonOptionsOf } from './json-functions';
import { type Micros, microsOfDate } from './time';
import { strict, type Typed } from './typed';
import { type SqlType, typeName } from './types';
import { javaDoubleText } from './values';

function toCsv(args: readonly Typed[], c: CallCtx): Typed {
  const struct = args[0];
  const t = struct.type;
  const unsupported = t.type === 'STRUCT' ? t.fields!.find((f) => ['ARRAY', 'MAP', 'STRUCT', 'INTERVAL'].includes(f.type)) : undefined;
  if (t.type !== 'STRUCT' || unsupported !== undefined) {
    throw c.az.mismatch(
      'UNSUPPORTED_INPUT_TYPE',
      c.sql,
      t.type !== 'STRUCT'
        ? `The input of \`to_csv\` can't be "${typeName(t)}" type data: pass a struct (named_struct('a', a, 'b', b))`
        : `the field ${unsupported!.name} of \`to_csv\`'s struct is "${typeName(unsupported!)}", which sluice does not write as CSV text: write it with to_json or CAST(... AS STRING) first`,
      c.pos,
    );
  }
  const o = jsonOptionsOf(c, args[1], 'format');
  let w: CsvWriteOptions;
  try {
    w = csvWriteOptionsOf((k) => o.get(k));
  } catch (e) {
    if (e instanceof InvalidOptionError) throw c.az.fail('INVALID_OPTIONS', `to_csv: ${e.message}`, c.pos);
    throw e;
  }
  const timestamp = o.timestamp ?? SPARK_CSV_TIMESTAMP;
  const date = o.date;
  const fieldText = (f: SqlType): ((v: unknown) => string) => {
    switch (f.type) {
      case 'DOUBLE':
        return (v) => javaDoubleText(v as number, f.binary32);
      case 'DECIMAL':
        return (v) => javaDecimalText(v as string);
      case 'DATE':
        return date === undefined ? (v) => v as string : (v) => date.format(microsOfDate(v as string));
      case 'TIMESTAMP':
        return (v) => timestamp.format(v as Micros);
      case 'BOOLEAN':
        return (v) => (v ? 'true' : 'false');
      default:
        return (v) => String(v);
    }
  };
  const fields = t.fields!.map((f) => ({ name: f.name, text: fieldText(f) }));
  return call(
    c,
    { type: 'STRING' },
    [struct],
    strict((v) => {
      const row = v as Record<string, unknown>;
      return csvRecordText(
        fields.map((f) => {
          const x = row[f.name];
          return x == null ? null : f.text(x);
        }),
        w,
      );
    }),
  );
}

export const TO_CSV_FUNCTIONS: Record<string, FunctionDef> = {
  to_csv: def(1, 2, toCsv),
};
