/**
 * The years 1 to 9999 sluice's DATE and TIMESTAMP hold, for the functions and operators that
 * move a date (date_add, add_months, DATE ± n, DATE ± INTERVAL). Spark's DATE is an int of days
 * (its date_add wraps that int; its add_months fails past it) and prints a year past 9999 as
 * "+10000": sluice makes such a row a dead letter (ARITHMETIC_OVERFLOW), as it does a TIMESTAMP
 * result outside those years, rather than a malformed or null date.
 */
import { dateOfEpochDay, epochDayOf } from '../dates';
import { SparkRowError } from './errors';

const FIRST_DAY = epochDayOf('0001-01-01');
const LAST_DAY = epochDayOf('9999-12-31');

/** The row error of a DATE result outside years 1 to 9999, naming the expression. */
export function dateOutOfRange(sql: string): SparkRowError {
  return new SparkRowError('ARITHMETIC_OVERFLOW', `date overflow in ${sql}: the result is outside years 1 to 9999. Filter out such dates or day counts first.`);
}

/** The date `days` days after `date` (before, when negative); throws dateOutOfRange(sql) past the years 1 to 9999. */
export function shiftedDate(date: string, days: number, sql: string): string {
  const day = epochDayOf(date) + days;
  if (day < FIRST_DAY || day > LAST_DAY) throw dateOutOfRange(sql);
  return dateOfEpochDay(day);
}
