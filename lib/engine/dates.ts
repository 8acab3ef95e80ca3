/**
 * DATE values. A value in a row is its "YYYY-MM-DD" text (years 0001 to 9999, the proleptic
 * Gregorian calendar, as Spark): exact, JSON as it is, ordered by text as by day, and what
 * FORMAT-3 outputs.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `year` is a leap year of the proleptic Gregorian calendar. */
function leap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The DATE value of "YYYY-MM-DD" text, or null when it is not a day of years 1 to 9999 ("2026-02-30"). */
export function parseDate(text: string): string | null {
  const m = DATE.exec(text);
  if (m === null) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return null;
  const days = mo === 2 && leap(y) ? 29 : DAYS[mo - 1];
  return d <= days ? text : null;
}

/** Days since 1970-01-01 of a DATE value (negative before), as Spark and Parquet store a DATE. */
export function epochDayOf(date: string): number {
  const y = Number(date.slice(0, 4));
  const ms = Date.UTC(y < 100 ? y + 400 : y, Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
  return Math.round(ms / 86_400_000) - (y < 100 ? 146097 : 0);
}

/** The DATE value of a day count since 1970-01-01. */
export function dateOfEpochDay(day: number): string {
  const d = new Date(day * 86_400_000);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
}
