/**
 * Every piece of TIMESTAMP and DATE arithmetic of the expressions, in one module so that the
 * representation can change in one place. A TIMESTAMP value is epoch **microseconds** (a number
 * when it is a safe integer, a bigint beyond, as LONG); a DATE value is "YYYY-MM-DD" (dates.ts).
 * Parsing goes through lib/engine/timestamps.ts, which decides the representation.
 */
import { dateOfEpochDay, epochDayOf, parseDate } from '../dates';
import { canonicalMicros, type Micros } from '../timestamps';

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

/**
 * Spark's stringToTimestamp (CAST(s AS TIMESTAMP), to_timestamp(s), TIMESTAMP '...', a STRING
 * compared with a TIMESTAMP), session time zone UTC, as epoch microseconds, or null when Spark
 * gives null (CAST_INVALID_INPUT under ANSI). After trimming white space and control characters:
 * `[+-]yyyy[-[m]m[-[d]d]]`, then optionally a space or `T` and `[h]h[:[m]m[:[s]s[.fraction]]]`,
 * then, only after the seconds, a zone: `Z`, `±h[h][:mm]`, `±hhmm`, `UTC`/`GMT`/`UT` with or
 * without an offset, a short id (`PST`) or a region (`Europe/Paris`), as Java's ZoneId reads it.
 * The year has 4 to 6 digits, the other fields 1 or 2; the fraction any number of digits, of
 * which the first 6 are kept (truncated, as Spark). Years outside 1 to 9999 (Spark's documented
 * range, sluice's TIMESTAMP range) are null. A time alone (`12:00:00`, `T12:00`) takes the
 * current date in Spark, which a replay could not repeat: it is null here.
 */
export function parseTimestampMicros(text: string): Micros | null {
  let from = 0;
  let to = text.length;
  while (from < to && isTrimmed(text.charCodeAt(from))) from++;
  while (to > from && isTrimmed(text.charCodeAt(to - 1))) to--;
  if (from === to) return null;
  // fields: year, month, day, hour, minute, second, fraction (µs)
  const f = [1, 1, 1, 0, 0, 0, 0];
  let i = 0;
  let value = 0;
  let count = 0;
  let fractionDigits = 0;
  let zone: string | null = null;
  let sign = 1;
  let j = from;
  const c0 = text[j];
  if (c0 === '-' || c0 === '+') {
    sign = c0 === '-' ? -1 : 1;
    j++;
  }
  const valid = (seg: number, digits: number) =>
    seg === 6 ? true : seg === 0 ? digits >= 4 && digits <= 6 : seg === 7 ? digits === 0 : digits > 0 && digits <= 2;
  const close = () => {
    if (!valid(i, count)) return false;
    f[i] = value;
    value = 0;
    count = 0;
    i++;
    return true;
  };
  for (; j < to; j++) {
    const c = text[j];
    const d = text.charCodeAt(j) - 48;
    if (d >= 0 && d <= 9) {
      if (i === 6) {
        if (fractionDigits < 6) value = value * 10 + d;
        fractionDigits++;
        count++;
      } else {
        value = value * 10 + d;
        count++;
        if (count > 7) return null;
      }
      continue;
    }
    if (i < 2) {
      if (c !== '-' || !close()) return null; // (a time alone, `12:00`, is null: see above)
    } else if (i === 2) {
      if ((c !== ' ' && c !== 'T') || !close()) return null;
    } else if (i === 3 || i === 4) {
      if (c !== ':' || !close()) return null;
    } else if (i === 5 || i === 6) {
      if (c === '.' && i === 5) {
        if (!close()) return null;
      } else {
        // the rest of the text is the zone
        if (!close()) return null;
        if (i === 6) i = 7;
        zone = text.slice(j, to).trim();
        j = to;
        break;
      }
    } else return null;
  }
  if (zone === null && !close()) return null;
  let micros = f[6];
  for (let k = fractionDigits; k < 6; k++) micros *= 10;
  const year = sign * f[0];
  const [month, day, hour, minute, second] = [f[1], f[2], f[3], f[4], f[5]];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const date = dateOf(year, month, day);
  if (date === null) return null;
  const local = BigInt(epochDayOf(date)) * BIG_DAY + BigInt(((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND + micros);
  let offsetSeconds = 0;
  if (zone !== null) {
    const z = zoneOf(zone);
    if (z === null) return null;
    offsetSeconds = typeof z === 'number' ? z : regionOffsetSeconds(z, local);
  }
  const us = local - BigInt(offsetSeconds) * 1_000_000n;
  return inRange(us) ? microsValue(us) : null;
}

/** The characters Spark trims around a datetime text: white space and ISO control characters. */
function isTrimmed(c: number): boolean {
  return c <= 0x20 || c === 0x7f;
}

/** Java's ZoneOffset.of text (after the sign): h, hh, hh:mm, hhmm, hh:mm:ss, hhmmss; seconds east of UTC, or null. */
function offsetSecondsOf(sign: string, body: string): number | null {
  const m = /^(\d{1,2})(?:(:?)(\d{2})(?:\2(\d{2}))?)?$/.exec(body);
  if (m === null || (m[1].length === 1 && m[3] !== undefined)) return null;
  const h = Number(m[1]);
  const mi = Number(m[3] ?? 0);
  const s = Number(m[4] ?? 0);
  if (h > 18 || mi > 59 || s > 59) return null;
  const total = h * 3600 + mi * 60 + s;
  if (total > 18 * 3600) return null;
  return sign === '-' ? -total : total;
}

/** Java's ZoneId.SHORT_IDS with a fixed offset (the others name regions, which Intl knows by the same names). */
const FIXED_SHORT_IDS: Record<string, number> = { EST: -5 * 3600, MST: -7 * 3600, HST: -10 * 3600 };
const SHORT_REGIONS: Record<string, string> = {
  ACT: 'Australia/Darwin',
  AET: 'Australia/Sydney',
  AGT: 'America/Argentina/Buenos_Aires',
  ART: 'Africa/Cairo',
  AST: 'America/Anchorage',
  BET: 'America/Sao_Paulo',
  BST: 'Asia/Dhaka',
  CAT: 'Africa/Harare',
  CNT: 'America/St_Johns',
  CST: 'America/Chicago',
  CTT: 'Asia/Shanghai',
  EAT: 'Africa/Addis_Ababa',
  ECT: 'Europe/Paris',
  IET: 'America/Indiana/Indianapolis',
  IST: 'Asia/Kolkata',
  JST: 'Asia/Tokyo',
  MIT: 'Pacific/Apia',
  NET: 'Asia/Yerevan',
  NST: 'Pacific/Auckland',
  PLT: 'Asia/Karachi',
  PNT: 'America/Phoenix',
  PRT: 'America/Puerto_Rico',
  PST: 'America/Los_Angeles',
  SST: 'Pacific/Guadalcanal',
  VST: 'Asia/Ho_Chi_Minh',
};

const regionFormats = new Map<string, Intl.DateTimeFormat | null>();

/** An Intl formatter of a region zone id as Java's ZoneId.of takes it (case-sensitive), or null. */
function regionFormat(id: string): Intl.DateTimeFormat | null {
  let fmt = regionFormats.get(id);
  if (fmt !== undefined) return fmt;
  fmt = null;
  if (/^[A-Z][A-Za-z0-9~/._+-]+$/.test(id)) {
    try {
      const f = new Intl.DateTimeFormat('en-US', {
        timeZone: id,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      const resolved = f.resolvedOptions().timeZone;
      // Intl ignores case, Java does not: a name that differs only in case is not the zone
      if (resolved === id || resolved.toLowerCase() !== id.toLowerCase()) fmt = f;
    } catch {
      fmt = null;
    }
  }
  regionFormats.set(id, fmt);
  return fmt;
}

/**
 * A zone text as Java's ZoneId.of(text, SHORT_IDS) reads it after Spark's fixes of `+h:mm` and
 * `+hh:m`: a fixed offset in seconds east of UTC, a region's formatter, or null when Java refuses it.
 */
function zoneOf(text: string): number | Intl.DateTimeFormat | null {
  const id = text.replace(/^([+-])(\d):/, '$10$2:').replace(/^([+-]\d\d):(\d)$/, '$1:0$2');
  if (id === 'Z' || id === 'UTC' || id === 'GMT' || id === 'UT') return 0;
  if (id[0] === '+' || id[0] === '-') return offsetSecondsOf(id[0], id.slice(1));
  const prefixed = /^(UTC|GMT|UT)([+-])(.*)$/.exec(id);
  if (prefixed !== null) return offsetSecondsOf(prefixed[2], prefixed[3]);
  if (FIXED_SHORT_IDS[id] !== undefined) return FIXED_SHORT_IDS[id];
  return regionFormat(SHORT_REGIONS[id] ?? id);
}

/**
 * A zone id as Spark's getZoneId reads it (from_utc_timestamp, to_utc_timestamp): null when
 * Java would refuse it. `offsetAt(instantMicros)` is its offset then, in seconds east of UTC;
 * `localOffset(localMicros)` the offset of a local date-time, as ZonedDateTime.of resolves it.
 */
export function sparkZone(text: string): { offsetAt: (instant: Micros) => number; localOffset: (local: Micros) => number } | null {
  const z = zoneOf(text.trim());
  if (z === null) return null;
  if (typeof z === 'number') return { offsetAt: () => z, localOffset: () => z };
  return {
    offsetAt: (instant) => offsetAt(z, Number(bigMicros(instant) / 1000n) - (bigMicros(instant) % 1000n < 0n ? 1 : 0)),
    localOffset: (local) => regionOffsetSeconds(z, bigMicros(local)),
  };
}

/** Seconds east of UTC of a region zone at an instant (epoch ms). */
function offsetAt(fmt: Intl.DateTimeFormat, ms: number): number {
  const p: Record<string, number> = {};
  for (const x of fmt.formatToParts(new Date(ms))) if (x.type !== 'literal') p[x.type] = Number(x.value);
  const y = p.year;
  // Date.UTC reads years 0 to 99 as 1900 to 1999: those are computed 400 years (146,097 days) on
  const shown = Date.UTC(y < 100 ? y + 400 : y, p.month - 1, p.day, p.hour, p.minute, p.second) - (y < 100 ? 146097 * 86_400_000 : 0);
  return Math.round((shown - Math.floor(ms / 1000) * 1000) / 1000);
}

/**
 * The offset of a region zone for a local date-time (µs as if UTC), as Java's ZonedDateTime.of
 * resolves it: the one valid offset; in an overlap the earlier instant's (the offset before the
 * transition); in a gap the offset before it, which moves the time forward by the gap.
 */
function regionOffsetSeconds(fmt: Intl.DateTimeFormat, localMicros: bigint): number {
  const local = Number(localMicros / 1000n);
  const before = offsetAt(fmt, local - 36 * 3_600_000);
  const after = offsetAt(fmt, local + 36 * 3_600_000);
  if (offsetAt(fmt, local - before * 1000) === before) return before;
  if (offsetAt(fmt, local - after * 1000) === after) return after;
  return before;
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
