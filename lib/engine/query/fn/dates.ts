/**
 * pyspark's date and time functions. A DATE or TIMESTAMP argument may also be a STRING (Spark
 * casts it); a format is a literal (patterns other than Spark's defaults are refused by the
 * analyzer until the datetime-pattern module lands: docs/expressions.md, "Not supported yet").
 */
import type { Column } from '../column';
import type { ColArg, NumericType } from '../column-types';
import { arg, call, litArg } from './core';

type Time = ColArg<'DATE' | 'TIMESTAMP' | 'STRING'>;
type Int = ColArg<'INT' | 'LONG'> | number;
const intArg = (v: Int, fn: string, what: string): string => (typeof v === 'number' ? litArg(v, fn, what) : arg(v));

/** `to_timestamp(s[, format])`. */
export function to_timestamp(s: Time, format?: string): Column<'TIMESTAMP'> {
  return format === undefined ? call('to_timestamp', arg(s)) : call('to_timestamp', arg(s), litArg(format, 'to_timestamp', 'a format'));
}
/** `to_date(s[, format])`. */
export function to_date(s: Time, format?: string): Column<'DATE'> {
  return format === undefined ? call('to_date', arg(s)) : call('to_date', arg(s), litArg(format, 'to_date', 'a format'));
}
/** `date_format(t, format)`. */
export const date_format = (t: Time, format: string): Column<'STRING'> => call('date_format', arg(t), litArg(format, 'date_format', 'a format'));
/** `year(t)`. */
export const year = (t: Time): Column<'INT'> => call('year', arg(t));
/** `quarter(t)`. */
export const quarter = (t: Time): Column<'INT'> => call('quarter', arg(t));
/** `month(t)`. */
export const month = (t: Time): Column<'INT'> => call('month', arg(t));
/** `day(t)`: the day of the month. */
export const day = (t: Time): Column<'INT'> => call('day', arg(t));
/** `dayofmonth(t)`. */
export const dayofmonth = (t: Time): Column<'INT'> => call('dayofmonth', arg(t));
/** `dayofweek(t)`: 1 (Sunday) to 7 (Saturday). */
export const dayofweek = (t: Time): Column<'INT'> => call('dayofweek', arg(t));
/** `dayofyear(t)`. */
export const dayofyear = (t: Time): Column<'INT'> => call('dayofyear', arg(t));
/** `weekofyear(t)`: ISO 8601 week. */
export const weekofyear = (t: Time): Column<'INT'> => call('weekofyear', arg(t));
/** `hour(t)`. */
export const hour = (t: Time): Column<'INT'> => call('hour', arg(t));
/** `minute(t)`. */
export const minute = (t: Time): Column<'INT'> => call('minute', arg(t));
/** `second(t)`. */
export const second = (t: Time): Column<'INT'> => call('second', arg(t));
/** `date_trunc(format, t)`: 'YEAR', 'MONTH', 'DAY', 'HOUR', ... */
export const date_trunc = (format: string, t: Time): Column<'TIMESTAMP'> => call('date_trunc', litArg(format, 'date_trunc', 'a unit'), arg(t));
/** `trunc(d, format)`: a DATE truncated to 'year', 'month', 'week', ... */
export const trunc = (d: Time, format: string): Column<'DATE'> => call('trunc', arg(d), litArg(format, 'trunc', 'a unit'));
/** `window_time(window)`: a window column's end − 1 µs, which keeps the window's watermark (chained window aggregations). */
export const window_time = (w: ColArg<'WINDOW'>): Column<'TIMESTAMP'> => call('window_time', arg(w));
/** `date_add(d, days)`. */
export const date_add = (d: Time, days: Int): Column<'DATE'> => call('date_add', arg(d), intArg(days, 'date_add', 'a number of days'));
/** `date_sub(d, days)`. */
export const date_sub = (d: Time, days: Int): Column<'DATE'> => call('date_sub', arg(d), intArg(days, 'date_sub', 'a number of days'));
/** `datediff(end, start)`: days from start to end. */
export const datediff = (end: Time, start: Time): Column<'INT'> => call('datediff', arg(end), arg(start));
/** `add_months(d, months)`. */
export const add_months = (d: Time, months: Int): Column<'DATE'> => call('add_months', arg(d), intArg(months, 'add_months', 'a number of months'));
/** `last_day(d)`. */
export const last_day = (d: Time): Column<'DATE'> => call('last_day', arg(d));
/** `make_date(year, month, day)`. */
export const make_date = (y: Int, m: Int, d: Int): Column<'DATE'> =>
  call('make_date', intArg(y, 'make_date', 'a year'), intArg(m, 'make_date', 'a month'), intArg(d, 'make_date', 'a day'));
/** `unix_timestamp(t[, format])`: seconds since the epoch (without t, the current time: refused as non-deterministic). */
export function unix_timestamp(t: Time, format?: string): Column<'LONG'> {
  return format === undefined ? call('unix_timestamp', arg(t)) : call('unix_timestamp', arg(t), litArg(format, 'unix_timestamp', 'a format'));
}
/** `from_unixtime(seconds[, format])`: the time as text. */
export function from_unixtime(seconds: ColArg<NumericType>, format?: string): Column<'STRING'> {
  return format === undefined ? call('from_unixtime', arg(seconds)) : call('from_unixtime', arg(seconds), litArg(format, 'from_unixtime', 'a format'));
}
/** `timestamp_seconds(n)`. */
export const timestamp_seconds = (n: ColArg<NumericType>): Column<'TIMESTAMP'> => call('timestamp_seconds', arg(n));
/** `timestamp_millis(n)`. */
export const timestamp_millis = (n: ColArg<'INT' | 'LONG'>): Column<'TIMESTAMP'> => call('timestamp_millis', arg(n));
/** `timestamp_micros(n)`. */
export const timestamp_micros = (n: ColArg<'INT' | 'LONG'>): Column<'TIMESTAMP'> => call('timestamp_micros', arg(n));
/** `unix_seconds(t)`. */
export const unix_seconds = (t: ColArg<'TIMESTAMP'>): Column<'LONG'> => call('unix_seconds', arg(t));
/** `unix_millis(t)`. */
export const unix_millis = (t: ColArg<'TIMESTAMP'>): Column<'LONG'> => call('unix_millis', arg(t));
/** `unix_micros(t)`. */
export const unix_micros = (t: ColArg<'TIMESTAMP'>): Column<'LONG'> => call('unix_micros', arg(t));
/** `unix_date(d)`: days since 1970-01-01. */
export const unix_date = (d: ColArg<'DATE'>): Column<'INT'> => call('unix_date', arg(d));
/** `date_from_unix_date(days)`. */
export const date_from_unix_date = (days: ColArg<'INT'>): Column<'DATE'> => call('date_from_unix_date', arg(days));
