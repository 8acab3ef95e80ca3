/**
 * TIMESTAMP values: Spark's text forms parsed (session time zone UTC), epoch seconds from JSON
 * numbers, Spark's range (years 1 to 9999), and the ISO 8601 text output rows carry.
 */
/** The earliest and latest instants a TIMESTAMP holds, as in Spark: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z. */
const MIN_TIMESTAMP_MS = -62135596800000;
const MAX_TIMESTAMP_MS = 253402300799999;

/** Whether `ms` is an instant a TIMESTAMP column can hold (Spark's range, years 1 to 9999). */
function inTimestampRange(ms: number): boolean {
  return ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;
}

/** Milliseconds in 400 Gregorian years (146,097 days): the calendar repeats after them. */
const FOUR_CENTURIES_MS = 146097 * 86_400_000;

/**
 * Date.UTC for every year from 1 to 9999: Date.UTC reads years 0 to 99 as 1900 to 1999, so those
 * are computed 400 years later (same weekday and leap years) and moved back.
 */
function utcMs(year: number, month0: number, day: number, hour = 0, minute = 0, second = 0): number {
  return year < 100 ? Date.UTC(year + 400, month0, day, hour, minute, second) - FOUR_CENTURIES_MS : Date.UTC(year, month0, day, hour, minute, second);
}

/** The day of the month that `ms` falls on (to reject dates such as 2026-02-30, which Date.UTC rolls over). */
function utcDay(ms: number): number {
  return new Date(ms).getUTCDate();
}

const SPACE_TS = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses a timestamp as Spark does with spark.sql.session.timeZone=UTC:
 * "YYYY-MM-DD HH:MM:SS[.fff]" (UTC), ISO 8601 with T, Z or an offset, or a date alone.
 * Returns epoch ms, or null when the text is not a timestamp.
 */
let cachedHourKey = '';
let cachedHourMs = 0;

function digits(t: string, from: number, n: number): number {
  let v = 0;
  for (let i = from; i < from + n; i++) {
    const c = t.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** "YYYY-MM-DD HH:MM:SS[.fff]" without a zone, the common case, parsed without a regex. */
function parsePlainTimestamp(t: string): number | null {
  const n = t.length;
  if ((n !== 19 && (n < 21 || n > 23)) || t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58) return null;
  const sep = t.charCodeAt(10);
  if (sep !== 32 && sep !== 84) return null;
  const minute = digits(t, 14, 2);
  const second = digits(t, 17, 2);
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let frac = 0;
  if (n > 19) {
    if (t.charCodeAt(19) !== 46) return null;
    frac = digits(t, 20, n - 20);
    if (frac < 0) return null;
    if (n === 21) frac *= 100;
    else if (n === 22) frac *= 10;
  }
  const hourKey = t.slice(0, 13);
  if (hourKey !== cachedHourKey) {
    const y = digits(t, 0, 4);
    const mo = digits(t, 5, 2);
    const d = digits(t, 8, 2);
    const h = digits(t, 11, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23) return null;
    if (y < 1) return null;
    const ms = utcMs(y, mo - 1, d, h);
    if (utcDay(ms) !== d) return null;
    cachedHourKey = hourKey;
    cachedHourMs = ms;
  }
  return cachedHourMs + minute * 60_000 + second * 1000 + frac;
}

export function parseTimestamp(text: string): number | null {
  const fast = parsePlainTimestamp(text);
  if (fast !== null) return fast;
  const m = SPACE_TS.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const year = Number(y);
  if (year < 1) return null;
  let ms = utcMs(year, month - 1, day, hour, minute, second);
  if (utcDay(ms) !== day) return null; // e.g. 2026-02-30
  if (frac) ms += Number(`${frac}000`.slice(0, 3)) + Number(`0.${frac.slice(3) || '0'}`);
  if (zone && zone.toUpperCase() !== 'Z' && zone.toUpperCase() !== 'UTC') {
    const zm = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offsetMinutes = Number(zm[2]) * 60 + Number(zm[3]);
    // Java's ZoneOffset, which Spark parses with: at most ±18:00, minutes below 60
    if (Number(zm[3]) > 59 || offsetMinutes > 18 * 60) return null;
    const offset = offsetMinutes * 60_000;
    ms += zm[1] === '+' ? -offset : offset;
  }
  return inTimestampRange(ms) ? ms : null;
}

/** A JSON number in a TIMESTAMP column (epoch seconds, as Spark reads numbers) as epoch ms, or null outside Spark's range. */
export function epochSecondsMs(seconds: number): number | null {
  const ms = seconds * 1000;
  return Number.isFinite(ms) && inTimestampRange(ms) ? ms : null;
}

/** ISO 8601 UTC with milliseconds, as output rows carry timestamps. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The TIMESTAMP value of a JSON value: a string in one of Spark's text forms, or a number of epoch
 * seconds; null when it is neither or outside Spark's range. Every reader (flat or nested) goes
 * through here, so the representation of a TIMESTAMP value is decided in this module alone.
 */
export function timestampFromJson(v: unknown): number | null {
  if (typeof v === 'string') return parseTimestamp(v);
  if (typeof v === 'number') return epochSecondsMs(v);
  return null;
}
