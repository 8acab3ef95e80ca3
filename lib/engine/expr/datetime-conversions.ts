/**
 * The conversions of DATE and TIMESTAMP to and from text and numbers. The pattern forms
 * (`to_timestamp(s, fmt)`, `to_date(s, fmt)`, `unix_timestamp(s, fmt)`, `date_format`,
 * `from_unixtime(n, fmt)`) take a constant Spark datetime pattern, compiled once when the query is
 * built (datetime-patterns.ts): a pattern Spark refuses is refused there with Spark's class, and a
 * text that does not match is the row's CANNOT_PARSE_TIMESTAMP (null for try_to_timestamp). A
 * pattern given per row is compiled per distinct text. The epoch forms (unix_*, timestamp_*,
 * date_from_unix_date) count seconds, milliseconds, microseconds or days from 1970-01-01 UTC.
 */
import { compileSparkDatetimePattern, type DatetimePattern, DatetimePatternError } from '../datetime-patterns';
import { epochDayOf } from '../dates';
import { rescale, unscaledOf } from '../decimal';
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { shiftedDate } from './date-range';
import { SparkRowError } from './errors';
import { call, constantArg, dateArg, def, int, str, timestampArg, what } from './fn-util';
import { dateOfMicros, floorDivMicros, formatTimestampText, inRange, MICROS_PER_SECOND, type Micros, microsValue, parseTimestampMicros } from './time';
import { strict, type Typed } from './typed';
import { BOOLEAN, DATE, DOUBLE, INT, isIntegral, LONG, STRING, type SqlType, TIMESTAMP, typeName } from './types';
import { big, overflow } from './values';

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

/** The argument cast to `type` (null for a value that does not cast when `safe`, else the row's error), named as the call. */
function castCall(c: CallCtx, a: Typed, type: SqlType, safe: boolean): Typed {
  return { ...c.az.cast(a, type, safe, c.pos), sql: c.sql, name: c.sql };
}

/** date(x), timestamp(x), int(x)...: Spark's CAST under its function name (a cast alias). */
function castTo(type: SqlType): FunctionDef {
  return def(1, 1, ([a], c) => castCall(c, a, type, false));
}

/** to_date / to_timestamp / try_to_timestamp: one argument is a cast; with a pattern, the text parsed with it (`parsed`). */
function parseOrCast(type: SqlType, safe: boolean, then: (us: Micros) => unknown): FunctionDef {
  return def(1, 2, (args, c) => (args.length === 2 ? parsed(c, args, type, safe, then) : castCall(c, args[0], type, safe)));
}

function secondsToTimestamp(unit: number): FunctionDef {
  return def(1, 1, ([a], c) => {
    // AnsiTypeCoercion.implicitCast: a STRING becomes DOUBLE for timestamp_seconds (its NumericType input), but has no
    // cast to the IntegralType input of timestamp_millis / timestamp_micros (refused below); a NULL is the default type's
    const seconds = unit === MICROS_PER_SECOND;
    const k = a.type.type;
    const t = k === 'NULL' ? implicitCast(a, seconds ? DOUBLE : INT) : k === 'STRING' && seconds ? implicitCast(a, DOUBLE) : a;
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
        strict((v) => {
          // Spark multiplies the exact value by 10^6 and takes longValueExact: a fraction finer than a
          // microsecond fails the query (java.lang.ArithmeticException, no error class); here a dead letter
          const u = unscaledOf(v as string);
          const scale = t.type.scale!;
          if (scale > 6 && u % 10n ** BigInt(scale - 6) !== 0n) {
            throw new SparkRowError(
              'java.lang.ArithmeticException',
              `Rounding necessary in ${c.sql}: ${v} seconds is not a whole number of microseconds (Spark raises this without an error class). Round the seconds to 6 decimals first.`,
            );
          }
          return within(rescale(u, scale, 6));
        }),
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

export const DATETIME_CONVERSIONS: Record<string, FunctionDef> = {
  to_date: parseOrCast(DATE, false, dateOfMicros),
  to_timestamp: parseOrCast(TIMESTAMP, false, (us) => us),
  try_to_timestamp: parseOrCast(TIMESTAMP, true, (us) => us),
  // to_timestamp with the session's default type, TIMESTAMP (TIMESTAMP_LTZ), written out
  to_timestamp_ltz: parseOrCast(TIMESTAMP, false, (us) => us),
  date: castTo(DATE),
  timestamp: castTo(TIMESTAMP),
  // Spark's other cast aliases (FunctionRegistry.castAlias): int(x) is CAST(x AS INT), named int(x)
  boolean: castTo(BOOLEAN),
  tinyint: castTo({ type: 'INT', bits: 8 }),
  smallint: castTo({ type: 'INT', bits: 16 }),
  int: castTo(INT),
  bigint: castTo(LONG),
  float: castTo({ type: 'DOUBLE', binary32: true }),
  double: castTo(DOUBLE),
  decimal: castTo({ type: 'DECIMAL', precision: 10, scale: 0 }),
  string: castTo(STRING),
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
  unix_timestamp: def(0, 2, (args, c) => {
    if (args.length === 0) {
      throw c.az.fail(
        'INVALID_NON_DETERMINISTIC_EXPRESSIONS',
        'unix_timestamp() without an argument is the current time, which is not deterministic: pass a column, unix_timestamp(event_time)',
        c.pos,
      );
    }
    return unixTimestamp(args, c);
  }),
  // Spark's to_unix_timestamp: unix_timestamp without the no-argument form (which is the clock)
  to_unix_timestamp: def(1, 2, (args, c) => unixTimestamp(args, c)),
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
      strict((x) => shiftedDate('1970-01-01', x as number, c.sql)),
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
};

/** unix_timestamp(s [, fmt]) and to_unix_timestamp: the epoch seconds of a TIMESTAMP, DATE or STRING (parsed with fmt, by default 'yyyy-MM-dd HH:mm:ss'). */
function unixTimestamp(args: readonly Typed[], c: CallCtx): Typed {
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
}
