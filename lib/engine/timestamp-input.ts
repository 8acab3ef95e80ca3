/**
 * TIMESTAMP values of input files (JSON lines, CSV) read without a timestampFormat. Spark's
 * readers then parse with DefaultTimestampFormatter, which follows CAST's rules
 * (SparkDateTimeUtils.stringToTimestamp: one-digit fields, a zone only after the seconds, `Z`,
 * `±h[h][:mm]`, `UTC`/`GMT` with an offset, a region such as `Europe/Paris`, a fraction of any
 * length truncated to µs), so the text forms are the expressions' (expr/time.ts), with the plain
 * "YYYY-MM-DD HH:MM:SS[.ffffff]" form, by far the most common, parsed first without them.
 */
import { parseTimestampMicros } from './expr/time';
import { epochSecondsMicros, type Micros, parsePlainTimestamp } from './timestamps';

/** A TIMESTAMP text of an input file as epoch µs, or null when Spark's reader refuses it. */
export function inputTimestamp(text: string): Micros | null {
  return parsePlainTimestamp(text) ?? parseTimestampMicros(text);
}

/**
 * The TIMESTAMP value of a JSON value: a string in one of Spark's text forms, or a number of epoch
 * seconds; null when it is neither or outside Spark's range. Every JSON reader (flat or nested)
 * goes through here.
 */
export function timestampFromJson(v: unknown): Micros | null {
  if (typeof v === 'string') return inputTimestamp(v);
  if (typeof v === 'number') return epochSecondsMicros(v);
  return null;
}
