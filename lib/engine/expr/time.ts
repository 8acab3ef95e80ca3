/**
 * Every piece of TIMESTAMP and DATE arithmetic of the expressions, in one module so that the
 * representation can change in one place. A TIMESTAMP value is epoch **microseconds** (a number
 * when it is a safe integer, a bigint beyond, as LONG); a DATE value is "YYYY-MM-DD" (dates.ts).
 * Parsing goes through lib/engine/timestamps.ts, which decides the representation.
 */
import { dateOfEpochDay, epochDayOf, parseDate } from '../dates';
import { canonicalMicros, type Micros, parseTimestamp } from '../timestamps';

export type { Micros };

export const MICROS_PER_SECOND = 1_000_000;
const MICROS_PER_DAY = 86_400_000_000;
const BIG_DAY = 86_400_000_000n;

/** A microsecond count as a TIMESTAMP value: a number when safe, else a bigint. */
export function microsValue(v: bigint): Micros {
  return canonicalMicros(v);
}

export function bigMicros(v: Micros): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}

/** Spark's timestamp text forms (session time zone UTC) as epoch microseconds, or null. */
export function parseTimestampMicros(text: string): Micros | null {
  const t = text.trim();
  const us = parseTimestamp(t);
  if (us !== null) return us;
  // Spark's stringToTimestamp also takes a year or a year and month alone
  const m = /^(\d{4})(?:-(\d{1,2}))?$/.exec(t);
  if (m === null) return null;
  const d = parseDate(`${m[1]}-${(m[2] ?? '1').padStart(2, '0')}-01`);
  return d === null ? null : microsOfDate(d);
}

/** Days since 1970-01-01 and microseconds into that day (0 to 86,399,999,999) of a TIMESTAMP value. */
export function splitMicros(us: Micros): { day: number; micros: number } {
  if (typeof us === 'number') {
    const day = Math.floor(us / MICROS_PER_DAY);
    return { day, micros: us - day * MICROS_PER_DAY };
  }
  let day = us / BIG_DAY;
  let rest = us % BIG_DAY;
  if (rest < 0n) {
    day -= 1n;
    rest += BIG_DAY;
  }
  return { day: Number(day), micros: Number(rest) };
}

/** The TIMESTAMP value of a day since the epoch plus microseconds into it. */
export function microsOfDayAndTime(day: number, micros: number): Micros {
  const n = day * MICROS_PER_DAY + micros;
  return Number.isSafeInteger(n) ? n : microsValue(BigInt(day) * BIG_DAY + BigInt(micros));
}

/** Midnight UTC of a DATE value. */
export function microsOfDate(date: string): Micros {
  return microsOfDayAndTime(epochDayOf(date), 0);
}

/** The DATE a TIMESTAMP value falls on (UTC). */
export function dateOfMicros(us: Micros): string {
  return dateOfEpochDay(splitMicros(us).day);
}

/** Spark's text of a TIMESTAMP cast to STRING: "2026-10-01 12:00:00", with the fraction's trailing zeros dropped ("12:00:00.5"). */
export function formatTimestampText(us: Micros): string {
  const { day, micros } = splitMicros(us);
  const secs = Math.floor(micros / MICROS_PER_SECOND);
  const frac = micros % MICROS_PER_SECOND;
  const hh = String(Math.floor(secs / 3600)).padStart(2, '0');
  const mm = String(Math.floor(secs / 60) % 60).padStart(2, '0');
  const ss = String(secs % 60).padStart(2, '0');
  const f = frac === 0 ? '' : `.${String(frac).padStart(6, '0').replace(/0+$/, '')}`;
  return `${dateOfEpochDay(day)} ${hh}:${mm}:${ss}${f}`;
}

/** ISO 8601 with milliseconds and Z, as Spark's to_json writes a TIMESTAMP ("2026-10-01T12:00:00.000Z"). */
export function formatTimestampIso(us: Micros): string {
  const { day, micros } = splitMicros(us);
  const text = formatTimestampText(microsOfDayAndTime(day, micros - (micros % 1000)));
  const [date, time] = text.split(' ');
  const [hms, frac = ''] = time.split('.');
  return `${date}T${hms}.${frac.padEnd(3, '0')}Z`;
}

/** Year, month (1-12) and day of month of a DATE value. */
export function ymd(date: string): [number, number, number] {
  return [Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))];
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function dateOf(y: number, m: number, d: number): string | null {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d) || y < 1 || y > 9999) return null;
  return parseDate(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? ((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

/** Day of week, 1 = Sunday ... 7 = Saturday (Spark's dayofweek). */
export function dayOfWeek(date: string): number {
  // 1970-01-01 was a Thursday (5)
  return ((((epochDayOf(date) + 4) % 7) + 7) % 7) + 1;
}

export function dayOfYear(date: string): number {
  const [y] = ymd(date);
  return epochDayOf(date) - epochDayOf(`${pad(y, 4)}-01-01`) + 1;
}

/** ISO 8601 week of the year (weeks start on Monday; week 1 holds the year's first Thursday), as Spark's weekofyear. */
export function weekOfYear(date: string): number {
  const day = epochDayOf(date);
  const isoDow = ((((day + 3) % 7) + 7) % 7) + 1; // Monday 1 ... Sunday 7
  const thursday = dateOfEpochDay(day - isoDow + 4);
  const [ty] = ymd(thursday);
  return Math.floor((epochDayOf(thursday) - epochDayOf(`${pad(ty, 4)}-01-01`)) / 7) + 1;
}

/** Spark's add_months: the same day `n` months later, the month's last day when it has fewer days. */
export function addMonths(date: string, n: number): string | null {
  const [y, m, d] = ymd(date);
  const total = y * 12 + (m - 1) + n;
  const ny = Math.floor(total / 12);
  const nm = (total % 12) + 1;
  return dateOf(ny, nm, Math.min(d, daysInMonth(ny, nm)));
}

export function lastDay(date: string): string {
  const [y, m] = ymd(date);
  return dateOf(y, m, daysInMonth(y, m))!;
}

/** Spark's trunc(date, fmt): YEAR/YYYY/YY, QUARTER, MONTH/MM/MON, WEEK (to Monday); null for another unit. */
export function truncDate(date: string, unit: string): string | null {
  const [y, m] = ymd(date);
  switch (unit.toUpperCase()) {
    case 'YEAR':
    case 'YYYY':
    case 'YY':
      return dateOf(y, 1, 1);
    case 'QUARTER':
      return dateOf(y, m - ((m - 1) % 3), 1);
    case 'MONTH':
    case 'MM':
    case 'MON':
      return dateOf(y, m, 1);
    case 'WEEK': {
      const day = epochDayOf(date);
      const isoDow = ((((day + 3) % 7) + 7) % 7) + 1;
      return dateOfEpochDay(day - isoDow + 1);
    }
    default:
      return null;
  }
}

const TIME_UNITS: Record<string, number> = {
  DAY: MICROS_PER_DAY,
  DD: MICROS_PER_DAY,
  HOUR: 3_600_000_000,
  MINUTE: 60_000_000,
  SECOND: 1_000_000,
  MILLISECOND: 1000,
  MICROSECOND: 1,
};

/** Spark's date_trunc(fmt, ts): the date units of trunc, and DAY/DD, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND; null for another unit. */
export function truncTimestamp(unit: string, us: Micros): Micros | null {
  const u = unit.toUpperCase();
  const size = TIME_UNITS[u];
  const { day, micros } = splitMicros(us);
  if (size !== undefined) return microsOfDayAndTime(day, micros - (micros % size));
  const d = truncDate(dateOfEpochDay(day), u);
  return d === null ? null : microsOfDate(d);
}

/** Floor division of a TIMESTAMP value by a unit in microseconds (unix_timestamp: seconds; unix_millis: ms). */
export function floorDivMicros(us: Micros, unit: number): number | bigint {
  if (typeof us === 'number') return Math.floor(us / unit);
  const u = BigInt(unit);
  let q = us / u;
  if (us % u < 0n) q -= 1n;
  return microsValue(q);
}

/** The earliest and latest TIMESTAMP, as Spark: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z. */
const MIN_MICROS = -62135596800000000n;
const MAX_MICROS = 253402300799999999n;

/** Whether a microsecond count is within Spark's TIMESTAMP range. */
export function inRange(us: bigint): boolean {
  return us >= MIN_MICROS && us <= MAX_MICROS;
}
