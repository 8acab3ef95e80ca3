/**
 * schema_of_csv(csv[, options]): the schema Spark's CSV schema inference (CSVInferSchema) gives the
 * first record of a constant CSV text, as DDL (`STRUCT<_c0: INT, _c1: STRING>`), the form
 * from_csv takes: `from_csv(s, schema_of_csv('1,abc'))`. Computed once, when the query is compiled.
 * Each field is tried, in Spark's order, as an INT, a BIGINT (Java's parseInt / parseLong: a sign
 * and digits), a DECIMAL(p,0) (a BigDecimal of scale 0 past a long, at most 38 digits), a DOUBLE
 * (Java's parseDouble, or the nanValue/positiveInf/negativeInf texts), a DATE (preferDate, on by
 * default: the dateFormat pattern, `yyyy-MM-dd` strictly), a TIMESTAMP (the timestampFormat
 * pattern, else Spark's lenient forms), a BOOLEAN (true/false in any case), else a STRING; an
 * empty field or the nullValue is STRING.
 */
import { compileSparkDatetimePattern, type DatetimePattern, DatetimePatternError } from '../datetime-patterns';
import { csvRecords, tokenOf } from '../formats/csv';
import { isJavaDoubleText } from '../formats/partition-types';
import type { CallCtx, FunctionDef } from './analyze';
import { constantString, constantText, def } from './fn-util';
import { csvOptionsOf } from './from-csv';
import { jsonOptionsOf } from './json-functions';
import { parseTimestampMicros } from './time';
import type { Typed } from './typed';
import { BOOLEAN, DATE, DOUBLE, INT, LONG, MAX_PRECISION, STRING, type SqlType, TIMESTAMP, typeName } from './types';

const INTEGER = /^[-+]?\d+$/;
/** java.math.BigDecimal's text: a sign, digits with a point somewhere, an exponent. */
const BIG_DECIMAL = /^[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?$/;

interface Inference {
  readonly nullValue: string;
  readonly specials: ReadonlySet<string>;
  /** null: preferDate off */
  readonly date: DatetimePattern | null;
  readonly timestamp: DatetimePattern | undefined;
}

/** CSVInferSchema.inferField of one field from NullType. */
function inferField(field: string, o: Inference): SqlType {
  if (field === '' || field === o.nullValue) return STRING;
  if (INTEGER.test(field)) {
    const n = BigInt(field);
    if (n >= -(2n ** 31n) && n < 2n ** 31n) return INT;
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return LONG;
  }
  // a BigDecimal of scale 0 (a negative scale or a fraction falls through to DOUBLE, as DecimalType refuses it)
  const m = BIG_DECIMAL.exec(field);
  if (m !== null && `${m[1]}${m[2] ?? ''}` !== '' && (m[2]?.length ?? 0) - Number(m[3] ?? 0) === 0) {
    const digits = `${m[1]}${m[2] ?? ''}`.replace(/^0+(?=\d)/, '');
    if (digits.length <= MAX_PRECISION) return { type: 'DECIMAL', precision: digits.length, scale: 0 };
  }
  if (isJavaDoubleText(field) || o.specials.has(field)) return DOUBLE;
  if (o.date !== null && o.date.parseDate(field) !== null) return DATE;
  if ((o.timestamp !== undefined ? o.timestamp.parseTimestamp(field) : parseTimestampMicros(field)) !== null) return TIMESTAMP;
  if (/^(true|false)$/i.test(field)) return BOOLEAN;
  return STRING;
}

function schemaOfCsv(args: readonly Typed[], c: CallCtx): Typed {
  const text = constantText(c, args[0], 0, 'csv', 'a CSV record in quotes');
  const given = jsonOptionsOf(c, args[1], 'parse');
  const csv = csvOptionsOf(c, given);
  const pattern = (p: string) => {
    try {
      return compileSparkDatetimePattern(p, 'parse');
    } catch (e) {
      if (e instanceof DatetimePatternError)
        throw c.az.fail(e.errorClass, `schema_of_csv: ${JSON.stringify(p)} is not a valid datetime pattern: ${e.message}`, c.pos);
      throw e;
    }
  };
  const timestampFormat = given.get('timestampFormat');
  const inference: Inference = {
    nullValue: csv.nullValue,
    specials: new Set([csv.patterns.floats!.nan, csv.patterns.floats!.positiveInf, csv.patterns.floats!.negativeInf]),
    // preferDate (default true) tries the dateFormat, `yyyy-MM-dd` unless given, strictly
    date: (given.get('preferDate') ?? 'true').trim().toLowerCase() === 'false' ? null : pattern(given.get('dateFormat') ?? 'yyyy-MM-dd'),
    timestamp: timestampFormat == null ? undefined : pattern(timestampFormat),
  };
  const first = csvRecords(text, csv).next();
  const fields = first.done ? [] : first.value.fields.map((f) => tokenOf(f, csv));
  const ddl = typeName({ type: 'STRUCT', fields: fields.map((f, i) => ({ ...inferField(f, inference), name: `_c${i}` })) });
  return constantString(c, ddl);
}

export const SCHEMA_OF_CSV_FUNCTIONS: Record<string, FunctionDef> = {
  schema_of_csv: def(1, 2, schemaOfCsv),
};
