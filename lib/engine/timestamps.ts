/**
 * TIMESTAMP values: Spark's text forms parsed (session time zone UTC), epoch seconds from JSON
 * numbers, Spark's range (years 1 to 9999), and the ISO 8601 text output rows carry.
 */
/**
 * A TIMESTAMP value: epoch microseconds, as Spark stores it. A number when it is a safe integer
 * (|µs| <= 2^53 − 1, about the years 1685 to 2255), the bigint beyond: one value has one form, as
 * a BIGINT's (schema.ts canonicalLong), so grouping and equality need no normalising, and
 * JavaScript's < and > compare a number with a bigint exactly. Never a fraction.
 */
export type Micros = number | bigint;

/** The earliest and latest instants a TIMESTAMP holds, as in Spark: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z. */
const MIN_TIMESTAMP_US = -62135596800000000n;
const MAX_TIMESTAMP_US = 253402300799999999n;
const MAX_SAFE_BIG = 9007199254740991n;
/** The largest |ms| whose µs (ms × 1000 + up to 999) is still a safe integer. */
const SAFE_MS = 9007199254739;

/** A µs value in its one form (see Micros): a number when it is a safe integer, else the bigint. */
export function canonicalMicros(big: bigint): Micros {
  return big >= -MAX_SAFE_BIG && big <= MAX_SAFE_BIG ? Number(big) : big;
}

/**
 * The µs of an integer number of ms plus `us` (0 to 999,999) more: exact, in its one form. (ms ×
 * 1000 is exact wherever the sum can be safe, a multiple of 8 below 2^56; a true sum past 2^53 − 1
 * rounds to a double that is not a safe integer, so the test below never keeps a rounded sum.)
 */
function microsOf(ms: number, us: number): Micros {
  const r = ms * 1000 + us;
  return Number.isSafeInteger(r) ? r : canonicalMicros(BigInt(ms) * 1000n + BigInt(us));
}

/** The µs of an instant given as integer epoch ms (an arrival time, a watermark), exactly. */
export function microsFromMillis(ms: number): Micros {
  return microsOf(ms, 0);
}

/**
 * The µs of an hour that starts at `hourMs` when every instant of that hour is a safe integer of
 * µs (a line parser's per-hour cache adds minutes, seconds and µs to it as numbers), else null.
 */
export function safeHourMicros(hourMs: number): number | null {
  return hourMs >= -SAFE_MS && hourMs + 3_600_000 <= SAFE_MS ? hourMs * 1000 : null;
}

/** Whether a µs value is an instant a TIMESTAMP column can hold (Spark's range, years 1 to 9999). */
function inTimestampRange(us: Micros): boolean {
  return typeof us === 'number' || (us >= MIN_TIMESTAMP_US && us <= MAX_TIMESTAMP_US);
}

/** a + b, exactly (both integers of µs), in its one form. */
export function addMicros(a: Micros, b: Micros): Micros {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a + b;
    if (Number.isSafeInteger(r)) return r;
  }
  return canonicalMicros(BigInt(a) + BigInt(b));
}

/** a − b, exactly (both integers of µs), in its one form. */
export function subMicros(a: Micros, b: Micros): Micros {
  if (typeof a === 'number' && typeof b === 'number') {
    const r = a - b;
    if (Number.isSafeInteger(r)) return r;
  }
  return canonicalMicros(BigInt(a) - BigInt(b));
}

/** The instant µs truncated to milliseconds (floor): what a watermark keeps of an event time. */
export function floorMillis(us: Micros): number {
  if (typeof us === 'number') {
    const r = us % 1000;
    return (us - (r < 0 ? r + 1000 : r)) / 1000;
  }
  const r = ((us % 1000n) + 1000n) % 1000n;
  return Number((us - r) / 1000n);
}

/**
 * The least whole ms at or after the instant µs: for a watermark W in ms, µs <= W × 1000 exactly
 * when ceilMillis(µs) <= W, so a state entry's eviction time (in ms, as stores keep it) is this.
 */
export function ceilMillis(us: Micros): number {
  return (typeof us === 'number' ? -floorMillis(-us) : -floorMillis(-us)) + 0;
}

/** The watermark W (ms) in µs: an event time t is at or before it when t <= this (exact for number and bigint t). */
export function watermarkMicros(ms: number): Micros {
  return microsFromMillis(ms);
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

/** 10^k for the fraction digits read: µs = digits × FRACTION_SCALE[count] (count 1 to 6). */
const FRACTION_SCALE = [1, 100_000, 10_000, 1000, 100, 10, 1];

const SPACE_TS = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i;

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

/**
 * The µs of the fraction digits t[from, to): the first 6 exactly, any more (up to 9) checked to
 * be digits and dropped, as Spark truncates a fraction to microseconds (stringToTimestamp); -1
 * when one is not a digit.
 */
function fractionMicros(t: string, from: number, to: number): number {
  const count = to - from;
  if (count > 6 && digits(t, from + 6, count - 6) < 0) return -1;
  const kept = Math.min(count, 6);
  const v = digits(t, from, kept);
  return v < 0 ? -1 : v * FRACTION_SCALE[kept];
}

/** "YYYY-MM-DD HH:MM:SS[.f{1,9}]" without a zone, the common case, parsed without a regex. */
export function parsePlainTimestamp(t: string): Micros | null {
  const n = t.length;
  if ((n !== 19 && (n < 21 || n > 29)) || t.charCodeAt(4) !== 45 || t.charCodeAt(7) !== 45 || t.charCodeAt(13) !== 58 || t.charCodeAt(16) !== 58) return null;
  const sep = t.charCodeAt(10);
  if (sep !== 32 && sep !== 84) return null;
  const minute = digits(t, 14, 2);
  const second = digits(t, 17, 2);
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  let frac = 0;
  if (n > 19) {
    if (t.charCodeAt(19) !== 46) return null;
    frac = fractionMicros(t, 20, n);
    if (frac < 0) return null;
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
  return microsOf(cachedHourMs + minute * 60_000 + second * 1000, frac);
}

/**
 * Parses a timestamp as Spark does with spark.sql.session.timeZone=UTC:
 * "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC), ISO 8601 with T, Z or an offset, or a date alone.
 * Returns epoch µs (Micros), or null when the text is not a timestamp. Up to 6 fraction digits
 * are read exactly; more (up to 9) are truncated to the microsecond, as Spark does.
 */
export function parseTimestamp(text: string): Micros | null {
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
  if (zone && zone.toUpperCase() !== 'Z' && zone.toUpperCase() !== 'UTC') {
    const zm = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const offsetMinutes = Number(zm[2]) * 60 + Number(zm[3]);
    // Java's ZoneOffset, which Spark parses with: at most ±18:00, minutes below 60
    if (Number(zm[3]) > 59 || offsetMinutes > 18 * 60) return null;
    const offset = offsetMinutes * 60_000;
    ms += zm[1] === '+' ? -offset : offset;
  }
  const us = microsOf(ms, frac ? fractionMicros(frac, 0, frac.length) : 0);
  return inTimestampRange(us) ? us : null;
}

const SECONDS_TEXT = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:e([+-]?[0-9]+))?$/i;

/**
 * A JSON number in a TIMESTAMP column (epoch seconds, as Spark reads numbers) as epoch µs, or
 * null outside Spark's range. Exact from the number: its shortest decimal text (the digits the
 * JSON carried, for any number a double holds exactly enough to print back) is scaled by 10^6
 * as digits, never multiplied as a double, so 1.5 is 1,500,000 µs and 0.000001 is 1 µs; digits
 * below the microsecond are truncated toward zero, as Spark's decimal to timestamp.
 */
export function epochSecondsMicros(seconds: number): Micros | null {
  if (!Number.isFinite(seconds)) return null;
  if (Number.isInteger(seconds) && seconds <= 9_007_199_254 && seconds >= -9_007_199_254) return seconds * 1_000_000 + 0;
  const m = SECONDS_TEXT.exec(String(seconds));
  if (!m) return null;
  const [, sign, whole, frac = '', exp = '0'] = m;
  const shift = Number(exp) - frac.length + 6;
  if (shift > 30) return null; // far beyond the range: not worth the digits
  const mantissa = BigInt(whole + frac);
  let big = shift >= 0 ? mantissa * 10n ** BigInt(shift) : mantissa / 10n ** BigInt(-shift);
  if (sign) big = -big;
  const us = canonicalMicros(big);
  return inTimestampRange(us) ? us : null;
}

/** The ISO 8601 text of the whole ms of an instant, as Date prints it (years 0001 to 9999 in 4 digits). */
function isoOfMillis(ms: number): string {
  // the text up to the minute is made once per minute (two minutes kept: a joined row carries two
  // times, often in neighbouring minutes), the seconds and milliseconds written here
  if (!(Math.abs(ms) <= MAX_DATE_MS)) return new Date(ms).toISOString(); // (out of Date's range: its error)
  const minute = Math.floor(ms / 60_000);
  let prefix: string;
  if (minute === minute0) prefix = prefix0;
  else if (minute === minute1) prefix = prefix1;
  else {
    prefix = new Date(minute * 60_000).toISOString().slice(0, -7);
    minute1 = minute0;
    prefix1 = prefix0;
    minute0 = minute;
    prefix0 = prefix;
  }
  const inMinute = ms - minute * 60_000;
  const sec = Math.floor(inMinute / 1000);
  const milli = inMinute - sec * 1000;
  return `${prefix}${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** The largest epoch ms a Date holds. */
const MAX_DATE_MS = 8.64e15;
/** The last two minutes isoOfMillis wrote, and their text up to the minute (`2026-10-01T12:00:`). */
let minute0 = Number.NaN;
let prefix0 = '';
let minute1 = Number.NaN;
let prefix1 = '';

/**
 * ISO 8601 UTC, as output rows carry timestamps: 3 fraction digits, or 6 when the instant has a
 * part below the millisecond (`2026-10-01T12:00:00.500Z`, `2026-10-01T12:00:09.999999Z`).
 */
export function formatTimestamp(us: Micros): string {
  let sub: number;
  let ms: number;
  if (typeof us === 'number') {
    const r = us % 1000;
    sub = r < 0 ? r + 1000 : r;
    ms = (us - sub) / 1000;
  } else {
    sub = Number(((us % 1000n) + 1000n) % 1000n);
    ms = Number((us - BigInt(sub)) / 1000n);
  }
  const text = isoOfMillis(ms);
  if (sub === 0) return text;
  return `${text.slice(0, -1)}${String(sub).padStart(3, '0')}Z`;
}
