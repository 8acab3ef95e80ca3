/**
 * Date and time functions on DATE and TIMESTAMP (UTC). The pattern forms (`to_timestamp(s, fmt)`,
 * `to_date(s, fmt)`, `unix_timestamp(s, fmt)`, `date_format`, `from_unixtime(n, fmt)`) take a
 * constant Spark datetime pattern, compiled once when the query is built (datetime-patterns.ts):
 * a pattern Spark refuses is refused there with Spark's class, and a text that does not match is
 * the row's CANNOT_PARSE_TIMESTAMP (null for try_to_timestamp). All arithmetic goes through time.ts.
 */
import { compileSparkDatetimePattern, type DatetimePattern, DatetimePatternError } from '../datetime-patterns';
import { dateOfEpochDay, epochDayOf } from '../dates';
import { rescale, unscaledOf } from '../decimal';
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { SparkRowError } from './errors';
import { call, constantArg, def, int, str, what } from './fn-util';
import {
  addMonths,
  bigMicros,
  dateOf,
  dateOfMicros,
  dayOfWeek,
  dayOfYear,
  floorDivMicros,
  formatTimestampText,
  inRange,
  lastDay,
  MICROS_PER_SECOND,
  type Micros,
  microsOfDayAndTime,
  microsValue,
  parseTimestampMicros,
  splitMicros,
  truncDate,
  truncTimestamp,
  weekOfYear,
  sparkZone,
  ymd,
} from './time';
import { strict, type Typed } from './typed';
import { DATE, DOUBLE, INT, isIntegral, LONG, STRING, type SqlType, TIMESTAMP, typeName } from './types';
import { big, overflow } from './values';

/** An argument read as a DATE: a DATE, a TIMESTAMP's day, or a STRING cast (ANSI). */
function dateArg(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type.type;
  if (t === 'DATE') return a;
  if (t === 'TIMESTAMP' || t === 'STRING' || t === 'NULL') return implicitCast(a, DATE);
  throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires the "DATE" type, however ${a.sql} has the type "${typeName(a.type)}"`, c.pos);
}

/** An argument read as a TIMESTAMP: a TIMESTAMP, a DATE's midnight, or a STRING cast (ANSI). */
function timestampArg(c: CallCtx, a: Typed, i: number): Typed {
  const t = a.type.type;
  if (t === 'TIMESTAMP') return a;
  if (t === 'DATE' || t === 'STRING' || t === 'NULL') return implicitCast(a, TIMESTAMP);
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `${what(c, i)} requires the "TIMESTAMP" type, however ${a.sql} has the type "${typeName(a.type)}"`,
    c.pos,
  );
}

/**
 * The days of date_add / date_sub: Spark's DateAdd takes an INT, SMALLINT or TINYINT, and refuses
 * BIGINT, DECIMAL, DOUBLE and a STRING column; a STRING literal is cast to INT when the query is
 * analyzed, and one that is not an integer is SECOND_FUNCTION_ARGUMENT_NOT_INTEGER.
 */
function daysArg(c: CallCtx, n: Typed, i: number): Typed {
  const t = n.type.type;
  if (t === 'INT') return n;
  if (t === 'NULL') return implicitCast(n, INT);
  if (t === 'STRING' && n.constant !== undefined) {
    const v = n.constant.value;
    const text = typeof v === 'string' ? v.trim() : '';
    const k = /^[+-]?[0-9]+$/.test(text) ? Number(text) : Number.NaN;
    if (v !== null && !(Number.isSafeInteger(k) && k >= -2147483648 && k <= 2147483647)) {
      throw c.az.fail(
        'SECOND_FUNCTION_ARGUMENT_NOT_INTEGER',
        `The second argument of ${c.name} function needs to be an integer: ${n.sql} is not an INT; write a whole number of days`,
        c.pos,
      );
    }
    return implicitCast(n, INT);
  }
  throw c.az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    c.sql,
    `${what(c, i)} requires the ("INT" or "SMALLINT" or "TINYINT") type, however ${n.sql} has the type "${typeName(n.type)}"; cast it to INT`,
    c.pos,
  );
}

function dateField(f: (d: string) => number): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [dateArg(c, a, 0)],
      strict((d) => f(d as string)),
    ),
  );
}

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

const DEFAULT_PATTERN = 'yyyy-MM-dd HH:mm:ss';

/**
 * The pattern argument, compiled once for the query: it must be a constant STRING (Spark's forms
 * almost always are; a per-row pattern would compile per row). Null when the pattern is NULL, which
 * makes every result null.
 */
function patternArg(c: CallCtx, a: Typed, i: number, use: 'parse' | 'format'): DatetimePattern | null {
  const v = constantArg(c, a, i, "a pattern in quotes, 'yyyy-MM-dd HH:mm:ss'");
  if (v === null) return null;
  if (typeof v !== 'string') {
    throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, i)} requires the "STRING" type, however ${a.sql} has the type "${typeName(a.type)}"`, c.pos);
  }
  try {
    return compileSparkDatetimePattern(v, use);
  } catch (e) {
    if (e instanceof DatetimePatternError) throw c.az.fail(e.errorClass, `${c.name}: ${e.message} (at index ${e.index} of the pattern)`, c.pos);
    throw e;
  }
}

/**
 * A pattern given per row (a column, which Spark also takes): compiled once per distinct text; a
 * pattern Spark refuses is that row's error, with Spark's class.
 */
function rowPatterns(c: CallCtx, use: 'parse' | 'format'): (text: string) => DatetimePattern {
  const cache = new Map<string, DatetimePattern | DatetimePatternError>();
  return (text) => {
    let p = cache.get(text);
    if (p === undefined) {
      try {
        p = compileSparkDatetimePattern(text, use);
      } catch (e) {
        if (!(e instanceof DatetimePatternError)) throw e;
        p = e;
      }
      if (cache.size < 1000) cache.set(text, p);
    }
    if (p instanceof DatetimePatternError) throw new SparkRowError(p.errorClass, `${c.name}: ${p.message} (at index ${p.index} of the pattern)`);
    return p;
  };
}

/** A call whose result is null for every row (a NULL pattern). */
function nullCall(c: CallCtx, type: SqlType): Typed {
  return call(c, type, [], () => () => null);
}

/** A text in the pattern as a TIMESTAMP value; a mismatch is the row's CANNOT_PARSE_TIMESTAMP (ANSI), or null when `safe`. */
function parserOf(p: DatetimePattern, safe: boolean): (text: string) => Micros | null {
  return (text) => {
    const us = p.parseTimestamp(text);
    if (us !== null || safe) return us;
    throw new SparkRowError(
      'CANNOT_PARSE_TIMESTAMP',
      `${p.whyNot(text) ?? `Text '${text}' could not be parsed`}. Use \`try_to_timestamp\` to tolerate invalid input string and return NULL instead.`,
    );
  };
}

/**
 * to_timestamp / try_to_timestamp / to_date / unix_timestamp with a pattern: a STRING parsed with
 * it (Spark's GetTimestamp), then `then` of the instant; a DATE or TIMESTAMP argument is taken as
 * its instant, as Spark does.
 */
function parsed(c: CallCtx, [s, f]: readonly Typed[], type: SqlType, safe: boolean, then: (us: Micros) => unknown): Typed {
  const dated = s.type.type === 'DATE' || s.type.type === 'TIMESTAMP';
  if (f.constant === undefined) {
    // a pattern per row (a column): Spark builds its formatter per row
    if (dated) {
      return call(
        c,
        type,
        [timestampArg(c, s, 0), str(c, f, 1)],
        strict((t) => then(t as Micros)),
      );
    }
    const patternOf = rowPatterns(c, 'parse');
    return call(
      c,
      type,
      [str(c, s, 0), str(c, f, 1)],
      strict((text, fmt) => {
        const us = parserOf(patternOf(fmt as string), safe)(text as string);
        return us === null ? null : then(us);
      }),
    );
  }
  const p = patternArg(c, f, 1, 'parse');
  if (p === null) return nullCall(c, type);
  if (dated) {
    return call(
      c,
      type,
      [timestampArg(c, s, 0)],
      strict((t) => then(t as Micros)),
    );
  }
  const parse = parserOf(p, safe);
  return call(
    c,
    type,
    [str(c, s, 0)],
    strict((text) => {
      const us = parse(text as string);
      return us === null ? null : then(us);
    }),
  );
}

function secondsToTimestamp(unit: number): FunctionDef {
  return def(1, 1, ([a], c) => {
    // a STRING is cast to the input type's default: DOUBLE for timestamp_seconds (any number), BIGINT for the others
    const t = a.type.type === 'STRING' ? implicitCast(a, unit === MICROS_PER_SECOND ? DOUBLE : LONG) : a;
    const within = (u: bigint) => {
      if (!inRange(u)) {
        throw new SparkRowError(
          'ARITHMETIC_OVERFLOW',
          `timestamp overflow in ${c.sql}: ${u / BigInt(MICROS_PER_SECOND)} seconds is outside years 1 to 9999. Filter out such values, or check the unit (seconds, milliseconds, microseconds).`,
        );
      }
      return microsValue(u);
    };
    if (isIntegral(t.type))
      return call(
        c,
        TIMESTAMP,
        [t],
        strict((v) => within(big(v) * BigInt(unit))),
      );
    if (t.type.type === 'DECIMAL' && unit === MICROS_PER_SECOND)
      return call(
        c,
        TIMESTAMP,
        [t],
        strict((v) => within(rescale(unscaledOf(v as string), t.type.scale!, 6))),
      );
    if (t.type.type === 'DOUBLE' && unit === MICROS_PER_SECOND) {
      return call(
        c,
        TIMESTAMP,
        [t],
        strict((v) => (Number.isFinite(v as number) ? within(BigInt(Math.trunc((v as number) * unit))) : null)),
      );
    }
    throw c.az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      c.sql,
      `${what(c, 0)} requires ${unit === MICROS_PER_SECOND ? 'a number' : 'an integral type'}, however ${a.sql} has the type "${typeName(a.type)}"`,
      c.pos,
    );
  });
}

function timestampTo(unit: number): FunctionDef {
  return def(1, 1, ([a], c) =>
    call(
      c,
      LONG,
      [timestampArg(c, a, 0)],
      strict((t) => floorDivMicros(t as Micros, unit)),
    ),
  );
}

const PLAIN_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

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

/** from_utc_timestamp / to_utc_timestamp: the instant moved by the zone's offset, as Spark's convertTz. */
function utcShift(toLocal: boolean): FunctionDef {
  return def(2, 2, ([t, z], c) =>
    call(
      c,
      TIMESTAMP,
      [timestampArg(c, t, 0), str(c, z, 1)],
      strict((x, zone) => {
        const tz = sparkZone(zone as string);
        if (tz === null) {
          throw new SparkRowError(
            'INVALID_TIMEZONE',
            `The timezone: ${zone} is invalid. The timezone must be either a region-based zone ID or a zone offset. Region IDs must have the form 'area/city', such as 'America/Los_Angeles'. Zone offsets must be in the format '(+|-)HH', '(+|-)HH:mm' or '(+|-)HH:mm:ss', e.g '-08', '+01:00' or '-13:33:33', and must be in the range from -18:00 to +18:00. 'Z' and 'UTC' are accepted as synonyms for '+00:00'.`,
          );
        }
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
  dayname: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [dateArg(c, a, 0)],
      strict((d) => DAY_NAMES[dayOfWeek(d as string) - 1]),
    ),
  ),
  monthname: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [dateArg(c, a, 0)],
      strict((d) => MONTH_NAMES[ymd(d as string)[1] - 1]),
    ),
  ),
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
        const day = epochDayOf(x as string);
        const ahead = (((target - dayOfWeek(x as string)) % 7) + 7) % 7 || 7;
        return dateOfEpochDay(day + ahead);
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
  date_add: def(2, 2, ([d, n], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), daysArg(c, n, 1)],
      strict((x, k) => dateOfEpochDay(epochDayOf(x as string) + (k as number))),
    ),
  ),
  date_sub: def(2, 2, ([d, n], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), daysArg(c, n, 1)],
      strict((x, k) => dateOfEpochDay(epochDayOf(x as string) - (k as number))),
    ),
  ),
  date_diff: def(2, 2, ([e, s], c) =>
    call(
      c,
      INT,
      [dateArg(c, e, 0), dateArg(c, s, 1)],
      strict((x, y) => epochDayOf(x as string) - epochDayOf(y as string)),
    ),
  ),
  datediff: def(2, 2, ([e, s], c) =>
    call(
      c,
      INT,
      [dateArg(c, e, 0), dateArg(c, s, 1)],
      strict((x, y) => epochDayOf(x as string) - epochDayOf(y as string)),
    ),
  ),
  add_months: def(2, 2, ([d, n], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0), int(c, n, 1)],
      strict((x, k) => addMonths(x as string, k as number)),
    ),
  ),
  last_day: def(1, 1, ([d], c) =>
    call(
      c,
      DATE,
      [dateArg(c, d, 0)],
      strict((x) => lastDay(x as string)),
    ),
  ),
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
            `make_date(${y}, ${m}, ${d}) is not a day of the calendar (years 1-9999, months 1-12, days within the month). Use try_make_date, or fix the fields.`,
          );
        }
        return out;
      }),
    ),
  ),
  to_date: def(1, 2, (args, c) => {
    if (args.length === 2) return parsed(c, args, DATE, false, dateOfMicros);
    return { ...c.az.cast(args[0], DATE, false, c.pos), sql: c.sql, name: c.sql };
  }),
  to_timestamp: def(1, 2, (args, c) => {
    if (args.length === 2) return parsed(c, args, TIMESTAMP, false, (us) => us);
    return { ...c.az.cast(args[0], TIMESTAMP, false, c.pos), sql: c.sql, name: c.sql };
  }),
  try_to_timestamp: def(1, 2, (args, c) => {
    if (args.length === 2) return parsed(c, args, TIMESTAMP, true, (us) => us);
    return { ...c.az.cast(args[0], TIMESTAMP, true, c.pos), sql: c.sql, name: c.sql };
  }),
  date_format: def(2, 2, ([t, f], c) => {
    if (f.constant === undefined) {
      const patternOf = rowPatterns(c, 'format');
      return call(
        c,
        STRING,
        [timestampArg(c, t, 0), str(c, f, 1)],
        strict((x, fmt) => patternOf(fmt as string).format(x as Micros)),
      );
    }
    const p = patternArg(c, f, 1, 'format');
    if (p === null) return nullCall(c, STRING);
    return call(
      c,
      STRING,
      [timestampArg(c, t, 0)],
      strict((x) => p.format(x as Micros)),
    );
  }),
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
  unix_timestamp: def(0, 2, (args, c) => {
    if (args.length === 0) {
      throw c.az.fail(
        'INVALID_NON_DETERMINISTIC_EXPRESSIONS',
        'unix_timestamp() without an argument is the current time, which is not deterministic: pass a column, unix_timestamp(event_time)',
        c.pos,
      );
    }
    if (args.length === 2) return parsed(c, args, LONG, false, (us) => floorDivMicros(us, MICROS_PER_SECOND));
    const a = args[0];
    if (a.type.type === 'STRING') {
      return call(
        c,
        LONG,
        [a],
        strict((s) => {
          const us = PLAIN_TIMESTAMP.test(s as string) ? parseTimestampMicros(s as string) : null;
          if (us === null) {
            throw new SparkRowError(
              'CANNOT_PARSE_TIMESTAMP',
              `Text '${s}' could not be parsed with the pattern 'yyyy-MM-dd HH:mm:ss'. Use \`try_to_timestamp\` to tolerate invalid input string and return NULL instead.`,
            );
          }
          return floorDivMicros(us, MICROS_PER_SECOND);
        }),
      );
    }
    return call(
      c,
      LONG,
      [timestampArg(c, a, 0)],
      strict((t) => floorDivMicros(t as Micros, MICROS_PER_SECOND)),
    );
  }),
  unix_seconds: timestampTo(MICROS_PER_SECOND),
  unix_millis: timestampTo(1000),
  unix_micros: timestampTo(1),
  unix_date: def(1, 1, ([d], c) =>
    call(
      c,
      INT,
      [dateArg(c, d, 0)],
      strict((x) => epochDayOf(x as string)),
    ),
  ),
  date_from_unix_date: def(1, 1, ([n], c) =>
    call(
      c,
      DATE,
      [int(c, n, 0)],
      strict((x) => dateOfEpochDay(x as number)),
    ),
  ),
  timestamp_seconds: secondsToTimestamp(MICROS_PER_SECOND),
  timestamp_millis: secondsToTimestamp(1000),
  timestamp_micros: secondsToTimestamp(1),
  from_unixtime: def(1, 2, (args, c) => {
    const p = args.length === 2 ? patternArg(c, args[1], 1, 'format') : null;
    if (args.length === 2 && p === null) return nullCall(c, STRING);
    const format = p === null || p.pattern === DEFAULT_PATTERN ? formatTimestampText : p.format;
    const n = c.az.implicit(args[0], LONG, c.pos, what(c, 0));
    return call(
      c,
      STRING,
      [n],
      strict((s) => {
        const us = big(s) * 1_000_000n;
        if (!inRange(us)) throw overflow(`timestamp overflow in ${c.sql};`, 'try_cast');
        return format(microsValue(us));
      }),
    );
  }),
  make_timestamp: def(6, 6, (args, c) => {
    const fields = args.slice(0, 5).map((a, i) => int(c, a, i));
    // Spark's MakeTimestamp takes the seconds as DECIMAL(8,6): 100 or more is NUMERIC_VALUE_OUT_OF_RANGE
    const secs = c.az.implicit(args[5], { type: 'DECIMAL', precision: 8, scale: 6 }, c.pos, what(c, 5));
    return call(
      c,
      TIMESTAMP,
      [...fields, secs],
      strict((y, mo, d, h, mi, s) => {
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
        return microsOfDayAndTime(day, Number(BigInt(hour * 3600 + minute * 60) * 1_000_000n + micros));
      }),
    );
  }),
  date: def(1, 1, ([a], c) => ({ ...c.az.cast(a, DATE, false, c.pos), sql: c.sql, name: c.sql })),
  timestamp: def(1, 1, ([a], c) => ({ ...c.az.cast(a, TIMESTAMP, false, c.pos), sql: c.sql, name: c.sql })),
};
