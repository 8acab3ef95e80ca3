import { InvalidOptionError } from '../errors';
import { CSV_WRITE_OPTION_NAMES, type CsvWriteOptions, csvRecordText, csvValueText, csvWriteOptionsOf, SPARK_CSV_TIMESTAMP } from '../formats/csv-writer';
import { pickOptions } from '../formats/options';
import type { CallCtx, FunctionDef } from './analyze';
import { call, def } from './fn-util';
import { jsonOptionsOf } from './json-functions';
import { strict, type Typed } from './typed';
import { typeName } from './types';

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
    w = csvWriteOptionsOf(pickOptions((k) => o.get(k), CSV_WRITE_OPTION_NAMES));
  } catch (e) {
    if (e instanceof InvalidOptionError) throw c.az.fail('INVALID_OPTIONS', `to_csv: ${e.message}`, c.pos);
    throw e;
  }
  const patterns = { timestamp: o.timestamp ?? SPARK_CSV_TIMESTAMP, date: o.date };
  const fields = t.fields!;
  return call(
    c,
    { type: 'STRING' },
    [struct],
    strict((v) => {
      const row = v as Record<string, unknown>;
      return csvRecordText(
        fields.map((f) => {
          const x = row[f.name];
          return x == null ? null : csvValueText(f, x, patterns);
        }),
        w,
      );
    }),
  );
}

export const TO_CSV_FUNCTIONS: Record<string, FunctionDef> = {
  to_csv: def(1, 2, toCsv),
};
