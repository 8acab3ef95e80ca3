/**
 * What from_json and from_csv share of Spark's FailureSafeParser: the mode (PERMISSIVE unless
 * FAILFAST; DROPMALFORMED refused, PARSE_MODE_UNSUPPORTED), the corrupt-record column
 * (columnNameOfCorruptRecord, default `_corrupt_record`, a STRING field the parse leaves out), and
 * FAILFAST's row error.
 */
import type { CallCtx } from './analyze';
import { SparkRowError } from './errors';
import type { JsonOptions } from './json-functions';
import { type SqlType, typeName } from './types';

/** The mode and corrupt-record column of a parse function's options, checked as Spark checks them. */
export function parseModeOf(c: CallCtx, fn: string, o: JsonOptions, t: SqlType): { failFast: boolean; corrupt: (SqlType & { name: string }) | undefined } {
  // Spark's ParseMode.fromString: any other name is PERMISSIVE
  const mode = (o.get('mode') ?? '').toUpperCase();
  if (mode === 'DROPMALFORMED') {
    throw c.az.fail(
      'PARSE_MODE_UNSUPPORTED',
      `The function \`${fn}\` doesn't support the DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST.`,
      c.pos,
    );
  }
  const corruptName = o.get('columnNameOfCorruptRecord') ?? '_corrupt_record';
  const corrupt = t.type === 'STRUCT' ? (t.fields!.find((f) => f.name === corruptName) as (SqlType & { name: string }) | undefined) : undefined;
  if (corrupt !== undefined && corrupt.type !== 'STRING') {
    throw c.az.fail(
      'INVALID_CORRUPT_RECORD_TYPE',
      `The column \`${corruptName}\` for corrupt records must have the nullable STRING type, but got ${typeName(corrupt)}: declare it STRING`,
      c.pos,
    );
  }
  return { failFast: mode === 'FAILFAST', corrupt };
}

/** FAILFAST's row error for the record `s`. */
export function malformedRecord(s: string): SparkRowError {
  return new SparkRowError(
    'MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION',
    `Malformed records are detected in record parsing: ${s}. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'.`,
  );
}
