/**
 * Date and time functions on DATE and TIMESTAMP (UTC): fields, arithmetic, truncation, zones. The
 * conversions to and from text and numbers (the pattern forms, the epoch forms) are in
 * datetime-conversions.ts. All arithmetic goes through time.ts.
 */
import { dateOfEpochDay, epochDayOf } from '../dates';
import { rescale, unscaledOf } from '../decimal';
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { dateOutOfRange, shiftedDate } from './date-range';
import { nullOnRowError, SparkRowError } from './errors';
import { call, constantArg, dateArg, def, int, str, timestampArg, what } from './fn-util';
import {
  addMonths,
  bigMicros,
  dateOf,
  dayOfWeek,
  dayOfYear,
  inRange,
  lastDay,
  MICROS_PER_SECOND,
  type Micros,
  microsOfDayAndTime,
  microsValue,
  splitMicros,
  truncDate,
  truncTimestamp,
  weekOfYear,
  sparkZone,
  ymd,
} from './time';
import { strict, type Typed } from './typed';
import { DATE, INT, sameType, STRING, type SqlType, TIMESTAMP, typeName, WINDOW_TYPE } from './types';
import { overflow } from './values';
import { subMicros } from '../timestamps';

/**
 * The days of date_add / date_sub: Spark's DateAdd takes an INT, SMALLINT or TINYINT, and refuses
 * BIGINT, DECIMAL and DOUBLE; a STRING, literal or column, is cast to INT (AnsiTypeCoercion's
 * string promotion: DateAdd(_, STRING) takes Cast(days, INT)), so text that is not an INT is the
 * row's CAST_INVALID_INPUT (ansi/date.sql.out: date_sub(date'2011-11-11', '1.2')).
 */
function daysArg(c: CallCtx, n: Typed, i: number): Typed {
  const t = n.type.type;
  if (t === 'INT') return n;
  if (t === 'NULL' || t === 'STRING') return implicitCast(n, INT);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `${what(c, i)} requires the ("INT" or "SMALLINT" or "TINYINT") type, however ${n.sql} has the type "${typeName(n.type)}"; cast it to INT`,
    c.pos,
  );
}

/** A function of one DATE (a field, a name, the month's last day): `f` of the day, of type `type`. */
function dateField(f: (d: string) => unknown, type: SqlType = INT): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      type,
      [dateArg(c, a, 0)],
      strict((d) => f(d as string)),
    ),
  );
}

/** date_add (+1) / date_sub (-1): the day `sign` times n days on. */
function addDays(sign: 1 | -1): FunctionDef {
  return def(2, 2, ([d, n], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), daysArg(c, n, 1)],
      strict((x, k) => shiftedDate(x as string, sign * (k as number), c.sql)),
    ),
  );
}

/** date_diff / datediff: the days from the second date to the first. */
const dateDiff = def(2, 2, ([e, s], c) =>
  call(
    c,
    INT,
    [dateArg(c, e, 0), dateArg(c, s, 1)],
    strict((x, y) => epochDayOf(x as string) - epochDayOf(y as string)),
  ),
);

function timeField(f: (microsOfDay: number) => number): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [timestampArg(c, a, 0)],
      strict((t) => f(splitMicros(t as Micros).micros)),
    ),
  );
}

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Spark's getDayOfWeekFromString: two letters, three or the full name, any case, not trimmed; Sunday 1 .. Saturday 7. */
const WEEKDAY_WORDS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];
function dayOfWeekOfText(text: string): number | null {
  const t = text.toUpperCase();
  const i = WEEKDAY_WORDS.findIndex((w) => t === w || t === w.slice(0, 2) || t === w.slice(0, 3));
  return i < 0 ? null : i + 1;
}

/** Spark's monthsBetween: whole months on the same day of month or two month ends, else a 31-day month's fraction of seconds, rounded to 8 digits. */
function monthsBetween(a: Micros, b: Micros, roundOff: boolean): number {
  const sa = splitMicros(a);
  const sb = splitMicros(b);
  const da = dateOfEpochDay(sa.day);
  const db = dateOfEpochDay(sb.day);
  const [ya, ma, dya] = ymd(da);
  const [yb, mb, dyb] = ymd(db);
  const monthDiff = ya * 12 + ma - (yb * 12 + mb);
  if (dya === dyb || (da === lastDay(da) && db === lastDay(db))) return monthDiff;
  const seconds = (dya - dyb) * 86_400 + Math.floor(sa.micros / MICROS_PER_SECOND) - Math.floor(sb.micros / MICROS_PER_SECOND);
  const diff = monthDiff + seconds / (31 * 86_400);
  return roundOff ? Math.round(diff * 1e8) / 1e8 : diff;
}

/** A zone argument's zone (Spark's getZoneId); INVALID_TIMEZONE for a text Java's ZoneId.of refuses. */
function zoneArg(zone: string): NonNullable<ReturnType<typeof sparkZone>> {
  const tz = sparkZone(zone);
  if (tz === null) {
    throw new SparkRowError(
      'INVALID_TIMEZONE',
      `The timezone: ${zone} is invalid. The timezone must be either a region-based zone ID or a zone offset. Region IDs must have the form 'area/city', such as 'America/Los_Angeles'. Zone offsets must be in the format '(+|-)HH', '(+|-)HH:mm' or '(+|-)HH:mm:ss', e.g '-08', '+01:00' or '-13:33:33', and must be in the range from -18:00 to +18:00. 'Z' and 'UTC' are accepted as synonyms for '+00:00'.`,
    );
  }
  return tz;
}

/** from_utc_timestamp / to_utc_timestamp: the instant moved by the zone's offset, as Spark's convertTz. */
function utcShift(toLocal: boolean): FunctionDef {
  return def(2, 2, ([t, z], c) =>
    call(
      c,
      TIMESTAMP,
      [timestampArg(c, t, 0), str(c, z, 1)],
      strict((x, zone) => {
        const tz = zoneArg(zone as string);
        const us = bigMicros(x as Micros);
        const offset = toLocal ? tz.offsetAt(x as Micros) : -tz.localOffset(x as Micros);
        const out = us + BigInt(offset) * 1_000_000n;
        if (!inRange(out)) throw overflow(`timestamp overflow in ${c.sql};`, 'try_cast');
        return microsValue(out);
      }),
    ),
  );
}

/** Spark's DatePart.parseExtractField: the field names EXTRACT and date_part take (any case). */
const EXTRACT_FIELDS: Record<string, string> = {};
for (const [field, names] of Object.entries({
  year: ['YEAR', 'Y', 'YEARS', 'YR', 'YRS'],
  quarter: ['QUARTER', 'QTR'],
  month: ['MONTH', 'MON', 'MONS', 'MONTHS'],
  weekofyear: ['WEEK', 'W', 'WEEKS'],
  day: ['DAY', 'D', 'DAYS'],
  dayofweek: ['DAYOFWEEK', 'DOW'],
  dayofweek_iso: ['DAYOFWEEK_ISO', 'DOW_ISO'],
  dayofyear: ['DOY'],
  hour: ['HOUR', 'H', 'HOURS', 'HR', 'HRS'],
  minute: ['MINUTE', 'M', 'MIN', 'MINS', 'MINUTES'],
  second: ['SECOND', 'S', 'SEC', 'SECONDS', 'SECS'],
})) {
  for (const n of names) EXTRACT_FIELDS[n] = field;
}

/** EXTRACT(field FROM source) / date_part('field', source): the field function of the source; SECOND keeps its fraction as DECIMAL(8,6). */
function datePart(extract: boolean): FunctionDef {
  return def(2, 2, ([f, src], c) => {
    const v = constantArg(c, f, 0, "a field name in quotes, 'YEAR'");
    const field = typeof v === 'string' ? EXTRACT_FIELDS[v.toUpperCase()] : undefined;
    const sql = extract ? `extract(${f.constant?.value} FROM ${src.sql})` : c.sql;
    if (field === undefined) {
      throw c.az.fail(
        'INVALID_EXTRACT_FIELD',
        `Cannot extract ${v} from ${src.sql}: the field is one of YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DAYOFWEEK_ISO, DOY, HOUR, MINUTE, SECOND`,
        c.pos,
      );
    }
    const ctx = { ...c, sql };
    let out: Typed;
    if (field === 'second') {
      out = call(
        ctx,
        { type: 'DECIMAL', precision: 8, scale: 6 },
        [timestampArg(c, src, 1)],
        strict((t) => {
          const us = splitMicros(t as Micros).micros % 60_000_000;
          return `${Math.floor(us / MICROS_PER_SECOND)}.${String(us % MICROS_PER_SECOND).padStart(6, '0')}`;
        }),
      );
    } else if (field === 'dayofweek_iso') {
      out = call(
        ctx,
        INT,
        [dateArg(c, src, 1)],
        strict((d) => ((dayOfWeek(d as string) + 5) % 7) + 1),
      );
    } else out = DATETIME_FUNCTIONS[field].resolve([src], ctx);
    return { ...out, sql, name: sql };
  });
}

export const DATETIME_FUNCTIONS: Record<string, FunctionDef> = {
  extract: datePart(true),
  date_part: datePart(false),
  datepart: datePart(false),
  weekday: dateField((d) => (dayOfWeek(d) + 5) % 7),
  dayname: dateField((d) => DAY_NAMES[dayOfWeek(d) - 1], STRING),
  monthname: dateField((d) => MONTH_NAMES[ymd(d)[1] - 1], STRING),
  next_day: def(2, 2, ([d, w], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), str(c, w, 1)],
      strict((x, word) => {
        const target = dayOfWeekOfText(word as string);
        if (target === null) {
          throw new SparkRowError('ILLEGAL_DAY_OF_WEEK', `Illegal input for day of week: ${word}. Write MO, MON or MONDAY (any case).`);
        }
        const ahead = (((target - dayOfWeek(x as string)) % 7) + 7) % 7 || 7;
        return shiftedDate(x as string, ahead, c.sql);
      }),
    ),
  ),
  months_between: def(2, 3, (args, c) => {
    const roundOff = args.length === 3 ? c.az.implicit(args[2], { type: 'BOOLEAN' }, c.pos, what(c, 2)) : null;
    return call(
      c,
      { type: 'DOUBLE' },
      [timestampArg(c, args[0], 0), timestampArg(c, args[1], 1), ...(roundOff ? [roundOff] : [])],
      strict((a, b, r) => monthsBetween(a as Micros, b as Micros, r === undefined ? true : (r as boolean))),
    );
  }),
  from_utc_timestamp: utcShift(true),
  to_utc_timestamp: utcShift(false),
  year: dateField((d) => ymd(d)[0]),
  month: dateField((d) => ymd(d)[1]),
  day: dateField((d) => ymd(d)[2]),
  dayofmonth: dateField((d) => ymd(d)[2]),
  dayofweek: dateField(dayOfWeek),
  dayofyear: dateField(dayOfYear),
  weekofyear: dateField(weekOfYear),
  quarter: dateField((d) => Math.floor((ymd(d)[1] - 1) / 3) + 1),
  hour: timeField((us) => Math.floor(us / 3_600_000_000)),
  minute: timeField((us) => Math.floor(us / 60_000_000) % 60),
  second: timeField((us) => Math.floor(us / 1_000_000) % 60),
  // Spark's window_time(window): the window's end − 1 µs, the time its aggregate stands for (a
  // select of it over a marked window keeps the watermark: compileSelect's eventTimeSources)
  window_time: def(1, 1, ([w], c) => {
    if (!sameType(w.type, WINDOW_TYPE))
      throw c.az.fail(
        'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE',
        `Cannot resolve "${c.sql}" due to data type mismatch: ${w.sql} has the type ${typeName(w.type)}, but window_time takes a window column (STRUCT<start: TIMESTAMP, end: TIMESTAMP>): name an aggregation's window`,
        c.pos,
      );
    return call(
      c,
      TIMESTAMP,
      [w],
      strict((x) => subMicros((x as { end: Micros }).end, 1)),
    );
  }),
  date_add: addDays(1),
  dateadd: addDays(1), // Spark 3.4's alias of date_add
  date_sub: addDays(-1),
  date_diff: dateDiff,
  datediff: dateDiff,
  add_months: def(2, 2, ([d, n], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), int(c, n, 1)],
      strict((x, k) => {
        const out = addMonths(x as string, k as number);
        if (out === null) throw dateOutOfRange(c.sql);
        return out;
      }),
    ),
  ),
  last_day: dateField(lastDay, DATE),
  make_date: def(3, 3, (args, c) =>
    call(
      c,
      DATE,
      args.map((a, i) => int(c, a, i)),
      strict((y, m, d) => {
        const out = dateOf(y as number, m as number, d as number);
        if (out === null) {
          throw new SparkRowError(
            'DATETIME_FIELD_OUT_OF_BOUNDS',
            `make_date(${y}, ${m}, ${d}) is not a day of the calendar (years 1-9999, months 1-12, days within the month). Fix the fields, or filter out such rows first.`,
          );
        }
        return out;
      }),
    ),
  ),
  date_trunc: def(2, 2, ([u, t], c) =>
    call(
      c,
      TIMESTAMP,
      [str(c, u, 0), timestampArg(c, t, 1)],
      strict((unit, x) => truncTimestamp(unit as string, x as Micros)),
    ),
  ),
  trunc: def(2, 2, ([d, u], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), str(c, u, 1)],
      strict((x, unit) => truncDate(x as string, unit as string)),
    ),
  ),
  make_timestamp: makeTimestamp(false),
  try_make_timestamp: makeTimestamp(true),
  // the same with the session's default type written out, TIMESTAMP (TIMESTAMP_LTZ)
  make_timestamp_ltz: makeTimestamp(false),
  try_make_timestamp_ltz: makeTimestamp(true),
};

/**
 * make_timestamp (Spark's MakeTimestamp) and try_make_timestamp (Spark 4's, MakeTimestamp with
 * failOnError false): fields that make no instant are the row's error, or NULL for the try_ form.
 * An argument's own error (a seconds value that does not fit DECIMAL(8,6)) stays the row's error.
 */
function makeTimestamp(tolerant: boolean): FunctionDef {
  return def(6, 7, (args, c) => {
    const fields = args.slice(0, 5).map((a, i) => int(c, a, i));
    // Spark's MakeTimestamp takes the seconds as DECIMAL(8,6): 100 or more is NUMERIC_VALUE_OUT_OF_RANGE
    const secs = c.az.implicit(args[5], { type: 'DECIMAL', precision: 8, scale: 6 }, c.pos, what(c, 5));
    // the optional 7th argument is the zone the fields are read in (else the session's, UTC)
    const zone = args[6] === undefined ? [] : [str(c, args[6], 6)];
    return call(
      c,
      TIMESTAMP,
      [...fields, secs, ...zone],
      strict(
        tolerantIf(tolerant, (y, mo, d, h, mi, s, z) => {
          const date = dateOf(y as number, mo as number, d as number);
          const micros = rescale(unscaledOf(s as string), 6, 6);
          const hour = h as number;
          const minute = mi as number;
          if (micros > 60_000_000n && micros < 61_000_000n) {
            throw new SparkRowError(
              'INVALID_FRACTION_OF_SECOND',
              `make_timestamp(${y}, ${mo}, ${d}, ${h}, ${mi}, ${s}): the fraction of sec must be zero when sec is 60. Valid range is [0, 60].`,
            );
          }
          if (date === null || hour < 0 || hour > 23 || minute < 0 || minute > 59 || micros < 0n || micros > 60_000_000n) {
            throw new SparkRowError(
              'DATETIME_FIELD_OUT_OF_BOUNDS',
              `make_timestamp(${y}, ${mo}, ${d}, ${h}, ${mi}, ${s}) is not an instant (hours 0-23, minutes 0-59, seconds 0-60). Use try_make_timestamp, or fix the fields.`,
            );
          }
          // Spark takes 60 seconds as the next minute
          const day = epochDayOf(date);
          const local = microsOfDayAndTime(day, Number(BigInt(hour * 3600 + minute * 60) * 1_000_000n + micros));
          if (z === undefined) {
            // (9999-12-31 23:59:60 is the next year's first minute)
            if (!inRange(bigMicros(local))) throw overflow(`timestamp overflow in ${c.sql};`, 'try_make_timestamp');
            return local;
          }
          // the local date-time in that zone (a gap moves it forward, an overlap takes the earlier offset, as ZonedDateTime.of)
          const out = bigMicros(local) - BigInt(zoneArg(z as string).localOffset(local)) * 1_000_000n;
          if (!inRange(out)) throw overflow(`timestamp overflow in ${c.sql};`, 'try_make_timestamp');
          return microsValue(out);
        }),
      ),
    );
  });
}

/** `fn`, or `fn` with its row errors as NULL when `tolerant`. */
function tolerantIf(tolerant: boolean, fn: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  return tolerant ? nullOnRowError(fn) : fn;
}
