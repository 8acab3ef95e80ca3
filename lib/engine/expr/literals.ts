/**
 * The literals of Spark SQL expressions as syntax-tree nodes: numbers with Spark's suffixes and
 * ranges (an INT, BIGINT, DECIMAL or DOUBLE by its text), DATE and TIMESTAMP typed literals, and
 * ANSI interval literals (unit value pairs, from-to ranges and the text form `'1 hour 30 minutes'`).
 */
import { float32OfText } from '../decimal';
import { dateOfText, trimAll } from './cast';
import { ExpressionError } from './errors';
import type { Token } from './lexer';
import type { Ast } from './parser';
import { formatTimestampText, parseTimestampMicros } from './time';
import { dayTimeText, yearMonthText } from './interval-text';
import { DATE, DOUBLE, INT, LONG, TIMESTAMP, decimal, type SqlType } from './types';

/*
 * Interval literals, as Spark 4's AstBuilder builds them (spark.sql.legacy.interval.enabled off):
 * an ANSI interval, YEAR-MONTH (a value is months) or DAY-TIME (a value is microseconds), whose
 * fields are the range of the units written. Three syntaxes:
 *
 * - unit value pairs, `INTERVAL 10 MINUTES`, `INTERVAL '1' HOUR 30 MINUTES` (multiUnitsInterval):
 *   the pairs are read as Spark's stringToInterval reads " 10 MINUTES", so only SECOND takes a
 *   fraction;
 * - a from-to range, `INTERVAL '1-5' YEAR TO MONTH`, `INTERVAL '3 04:05:06.789' DAY TO SECOND`
 *   (unitToUnitInterval), the string in the range's ANSI format (IntervalUtils' year-month and
 *   day-time patterns, each field in its range);
 * - the typed literal `INTERVAL '1 hour 30 minutes'`.
 *
 * A sign before the value applies to it (`INTERVAL -'1-5' YEAR TO MONTH` is -1-5, `-'-1-5'` is
 * 1-5). The literal's SQL text, which names a column without AS, is Spark's Literal.sql of the
 * interval: `INTERVAL '1-5' YEAR TO MONTH`, `INTERVAL '10' MINUTE`, `INTERVAL '02' HOUR`.
 * A year-month interval mixed with day-time units is refused, as Spark 4 does.
 */

/** The fields of Spark's DayTimeIntervalType, largest first (MICROS_OF: their size in microseconds). */
const DT_FIELDS = ['DAY', 'HOUR', 'MINUTE', 'SECOND'] as const;
type DtField = (typeof DT_FIELDS)[number];
type YmField = 'YEAR' | 'MONTH';
const MICROS_OF: Record<DtField, bigint> = { DAY: 86_400_000_000n, HOUR: 3_600_000_000n, MINUTE: 60_000_000n, SECOND: 1_000_000n };

const INT_RANGE = { min: -(2n ** 31n), max: 2n ** 31n - 1n };
const LONG_RANGE = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const inRange = (v: bigint, r: { min: bigint; max: bigint }) => v >= r.min && v <= r.max;

/** The units of the unit-value syntax (Spark's unitInMultiUnits), singular or plural, any case. */
const MULTI_UNITS = new Set(['YEAR', 'MONTH', 'WEEK', 'DAY', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND', 'NANOSECOND']);

/** Whether `word` is a unit of `INTERVAL 10 MINUTES` (NANOSECOND is one to the grammar, refused when the value is read). */
export function isIntervalUnit(word: string): boolean {
  const u = word.toUpperCase();
  return MULTI_UNITS.has(u) || (u.endsWith('S') && MULTI_UNITS.has(u.slice(0, -1)));
}

/** The units of a from-to range (Spark's unitInUnitToUnit): singular only. */
export const RANGE_UNITS: ReadonlySet<string> = new Set(['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND']);

/** Java's Character.isWhitespace of an ASCII character (tab to carriage return, U+001C to U+001F, space), as Spark's interval scanner tests bytes. */
function isSpace(c: string | undefined): boolean {
  if (c === undefined) return false;
  const n = c.charCodeAt(0);
  return (n >= 0x09 && n <= 0x0d) || (n >= 0x1c && n <= 0x20);
}

/** An interval read from text: months, days and microseconds, and the units it named (singular, lower case). */
interface CalendarInterval {
  readonly months: bigint;
  readonly days: bigint;
  readonly micros: bigint;
  readonly units: readonly string[];
}

/** Why a text is not an interval: the subclass of Spark's INVALID_INTERVAL_FORMAT and its message. */
interface IntervalFailure {
  readonly sub: string;
  readonly message: string;
}

/** The units stringToInterval reads after a value, tried in this order at the unit's first letter. */
const SCANNED_UNITS = ['year', 'week', 'day', 'hour', 'second', 'month', 'minute', 'millisecond', 'microsecond'];

/**
 * Spark's stringToInterval (SparkIntervalUtils): `[interval] [+|-]value unit[s] ...`, case-insensitive,
 * white space between the parts; a value is a whole number, and only a SECOND value may have a
 * fraction (nanoseconds at most, kept to the microsecond). Months and days are INT, microseconds BIGINT.
 */
function stringToInterval(input: string): CalendarInterval | IntervalFailure {
  const s = trimAll(input).toLowerCase();
  const wordAt = (i: number): string => {
    let a = Math.min(i, s.length - 1);
    while (a > 0 && !isSpace(s[a - 1])) a--;
    let b = a;
    while (b < s.length && !isSpace(s[b])) b++;
    return s.slice(a, b);
  };
  const fail = (sub: string, message: string): IntervalFailure => ({ sub, message });
  if (s === '' || s === 'interval') return fail('INPUT_IS_EMPTY', 'Interval string cannot be empty');
  let i = 0;
  if (s.startsWith('interval')) {
    if (!isSpace(s[8])) return fail('INVALID_PREFIX', `Invalid interval prefix ${wordAt(0)}`);
    i = 9;
  }
  let months = 0n;
  let days = 0n;
  let micros = 0n;
  const units: string[] = [];
  const skipSpaces = () => {
    while (isSpace(s[i])) i++;
  };
  for (;;) {
    skipSpaces();
    if (i >= s.length) break;
    const valueStart = i;
    let negative = false;
    if (s[i] === '-' || s[i] === '+') {
      negative = s[i] === '-';
      i++;
      skipSpaces();
      if (i >= s.length) return fail('MISSING_NUMBER', `Expect a number after ${wordAt(valueStart)} but hit EOL`);
    } else if (!/[0-9.]/.test(s[i])) return fail('UNRECOGNIZED_NUMBER', `Unrecognized number ${wordAt(i)}`);
    const digits = /^[0-9]*/.exec(s.slice(i))![0];
    i += digits.length;
    let fraction: string | undefined;
    if (s[i] === '.') {
      i++;
      fraction = /^[0-9]*/.exec(s.slice(i))![0];
      i += fraction.length;
      if (fraction.length > 9) return fail('INVALID_PRECISION', `Interval can only support nanosecond precision, ${wordAt(valueStart)} is out of range`);
      if (digits === '' && fraction === '') return fail('INVALID_VALUE', `Invalid value ${wordAt(valueStart)}`);
    }
    if (i >= s.length) return fail('MISSING_UNIT', `Expect a unit name after ${wordAt(valueStart)} but hit EOL`);
    if (!isSpace(s[i]) || (digits === '' && fraction === undefined)) return fail('INVALID_VALUE', `Invalid value ${wordAt(valueStart)}`);
    const value = BigInt(digits || '0');
    if (value > LONG_RANGE.max) return fail('ARITHMETIC_EXCEPTION', `Uncaught arithmetic exception while parsing '${trimAll(input)}'`);
    skipSpaces();
    if (fraction !== undefined && s[i] !== 's') return fail('INVALID_FRACTION', `${wordAt(i)} cannot have fractional part`);
    const unit = SCANNED_UNITS.find((u) => s.startsWith(u, i));
    if (unit === undefined) return fail('INVALID_UNIT', `Invalid unit ${wordAt(i)}`);
    i += unit.length;
    if (s[i] === 's') i++;
    if (i < s.length && !isSpace(s[i])) return fail('INVALID_UNIT', `Invalid unit ${wordAt(i)}`);
    const v = negative ? -value : value;
    const nanos = BigInt((fraction ?? '').padEnd(9, '0').slice(0, 9) || '0');
    const fractionMicros = (negative ? -nanos : nanos) / 1000n;
    switch (unit) {
      case 'year':
        months += 12n * v;
        break;
      case 'month':
        months += v;
        break;
      case 'week':
        days += 7n * v;
        break;
      case 'day':
        days += v;
        break;
      case 'second':
        micros += v * 1_000_000n + fractionMicros;
        break;
      case 'millisecond':
        micros += v * 1000n;
        break;
      case 'microsecond':
        micros += v;
        break;
      default:
        micros += v * MICROS_OF[unit.toUpperCase() as DtField];
    }
    if (!inRange(months, INT_RANGE) || !inRange(days, INT_RANGE) || !inRange(micros, LONG_RANGE))
      return fail('ARITHMETIC_EXCEPTION', `Uncaught arithmetic exception while parsing '${trimAll(input)}'`);
    units.push(unit);
  }
  return { months, days, micros, units };
}

/** The ANSI interval literal of an interval read from text (AstBuilder's constructMultiUnitsIntervalLiteral): its fields are its units' range. */
function multiUnitsLiteral(iv: CalendarInterval, text: string, pos: number, source: string): Ast {
  const ym = iv.units.filter((u) => u === 'year' || u === 'month');
  if (ym.length > 0) {
    if (ym.length !== iv.units.length) {
      throw new ExpressionError(
        '_LEGACY_ERROR_TEMP_0029',
        `Cannot mix year-month and day-time fields: ${source}. Spark 4 has no interval of both: write two intervals and add them one after the other`,
        text,
        pos,
      );
    }
    return yearMonthLiteral(Number(iv.months), ym.includes('year') ? 'YEAR' : 'MONTH', ym.includes('month') ? 'MONTH' : 'YEAR', pos);
  }
  const fields = iv.units.map((u): DtField => (u === 'week' ? 'DAY' : u === 'millisecond' || u === 'microsecond' ? 'SECOND' : (u.toUpperCase() as DtField)));
  const order = fields.map((f) => DT_FIELDS.indexOf(f));
  return dayTimeLiteral(iv.micros + iv.days * MICROS_OF.DAY, DT_FIELDS[Math.min(...order)], DT_FIELDS[Math.max(...order)], text, pos);
}

/** `INTERVAL 10 MINUTES`, `INTERVAL '1' HOUR -'30' MINUTE`: the value-unit pairs, each value a number or a string with its sign. */
export function multiUnitsInterval(parts: readonly { sign: string; value: Token; unit: Token }[], text: string, pos: number, source: string): Ast {
  let input = '';
  for (const { sign, value, unit } of parts) {
    let v = value.text;
    if (value.kind === 'str') {
      // SPARK-32840: a unit inside the string ('1 day 2' HOUR) would change what the pairs mean
      if (/\p{L}/u.test(v)) {
        throw new ExpressionError(
          '_LEGACY_ERROR_TEMP_0026',
          `Can only use numbers in the interval value part for multiple unit value pairs interval form, but got invalid value: ${v}. Write the number alone ('1' DAY), or the whole interval as one string (INTERVAL '1 day 2 hours')`,
          text,
          value.pos,
        );
      }
      if (sign === '-') v = v.startsWith('-') ? v.slice(1) : `-${v}`;
    } else v = `${sign}${v}`;
    input += ` ${v} ${unit.text}`;
  }
  const iv = stringToInterval(input);
  if ('sub' in iv) {
    throw new ExpressionError(
      `INVALID_INTERVAL_FORMAT.${iv.sub}`,
      `Error parsing '${input.trim()}' to interval: ${iv.message}. Write a whole number before each unit (a fraction only before SECOND), e.g. INTERVAL 1 HOUR 30 MINUTES or INTERVAL '1.5' SECOND`,
      text,
      pos,
    );
  }
  return multiUnitsLiteral(iv, text, pos, source);
}

/** The typed literal `INTERVAL '1 hour 30 minutes'`: the string is the whole interval. */
export function typedInterval(s: Token, text: string, pos: number, source: string): Ast {
  const iv = stringToInterval(s.text);
  if ('sub' in iv) {
    throw new ExpressionError(
      'INVALID_TYPED_LITERAL',
      `The value of the typed literal "INTERVAL" is invalid: '${s.text}' (${iv.message}): write it as '10 minutes' or '1 hour 30 minutes', or give the unit after the string (INTERVAL '10' MINUTE)`,
      text,
      pos,
    );
  }
  return multiUnitsLiteral(iv, text, pos, source);
}

/** The formats IntervalUtils names when a from-to string does not match its range. */
const RANGE_FORMATS: Record<string, string> = {
  'YEAR TO MONTH': '[+|-]y-m',
  'DAY TO HOUR': '[+|-]d h',
  'DAY TO MINUTE': '[+|-]d h:m',
  'DAY TO SECOND': '[+|-]d h:m:s.n',
  'HOUR TO MINUTE': '[+|-]h:m',
  'HOUR TO SECOND': '[+|-]h:m:s.n',
  'MINUTE TO SECOND': '[+|-]m:s.n',
};

/** A value of each range, for the messages. */
const RANGE_EXAMPLES: Record<string, string> = {
  'YEAR TO MONTH': '1-5',
  'DAY TO HOUR': '3 04',
  'DAY TO MINUTE': '3 04:05',
  'DAY TO SECOND': '3 04:05:06.789',
  'HOUR TO MINUTE': '04:05',
  'HOUR TO SECOND': '04:05:06.789',
  'MINUTE TO SECOND': '05:06.789',
};

/**
 * The patterns of a day-time range (IntervalUtils.castStringToDTInterval): the leading field has
 * its whole range (days 9 digits, hours 10, minutes 12), the others two digits, seconds a fraction
 * of up to 9 digits; the groups are sign, fields, and the fraction.
 */
const DT_PATTERNS: Record<string, RegExp> = {
  'DAY TO HOUR': /^([+|-])?(\d{1,9}) (\d{1,2})$/,
  'DAY TO MINUTE': /^([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2})$/,
  'DAY TO SECOND': /^([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?$/,
  'HOUR TO MINUTE': /^([+|-])?(\d{1,10}):(\d{1,2})$/,
  'HOUR TO SECOND': /^([+|-])?(\d{1,10}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?$/,
  'MINUTE TO SECOND': /^([+|-])?(\d{1,12}):(\d{1,2})(\.\d{1,9})?$/,
};

/** The largest value of a day-time field when it leads (a BIGINT of microseconds), or when it follows a larger one. */
const LEADING_MAX: Record<DtField, bigint> = { DAY: 106_751_991n, HOUR: 2_562_047_788n, MINUTE: 153_722_867_280n, SECOND: 59n };
const FOLLOWING_MAX: Record<DtField, bigint> = { DAY: 106_751_991n, HOUR: 23n, MINUTE: 59n, SECOND: 59n };

/**
 * `INTERVAL '1-5' YEAR TO MONTH`, `INTERVAL -'3 04:05:06.789' DAY TO SECOND`: the string in the
 * range's format (Spark 4's unitToUnitInterval), `value` a string token after its sign. A range
 * Spark does not have (YEAR TO DAY, SECOND TO MINUTE...) is _LEGACY_ERROR_TEMP_0028, a number
 * instead of a string _LEGACY_ERROR_TEMP_0027.
 */
export function unitToUnitInterval(sign: string, value: Token, from: string, to: string, text: string, pos: number): Ast {
  const range = `${from.toUpperCase()} TO ${to.toUpperCase()}`;
  if (value.kind !== 'str') {
    throw new ExpressionError('_LEGACY_ERROR_TEMP_0027', `The value of from-to unit must be a string: write INTERVAL '${value.text}' ${range}`, text, pos);
  }
  const format = RANGE_FORMATS[range];
  if (format === undefined) {
    throw new ExpressionError(
      '_LEGACY_ERROR_TEMP_0028',
      `Intervals FROM ${from.toLowerCase()} TO ${to.toLowerCase()} are not supported: the ranges are YEAR TO MONTH, DAY TO HOUR, DAY TO MINUTE, DAY TO SECOND, HOUR TO MINUTE, HOUR TO SECOND and MINUTE TO SECOND`,
      text,
      pos,
    );
  }
  let raw = value.text;
  if (sign === '-') raw = raw.startsWith('-') ? raw.slice(1) : `-${raw}`;
  const input = trimAll(raw);
  const typeName = `interval ${range.toLowerCase()}`;
  const unmatched = (sub: string, what: string) =>
    new ExpressionError(
      `INVALID_INTERVAL_FORMAT.${sub}`,
      `Error parsing '${raw}' to interval: the interval string does not match ${what} format of \`${format}\`, \`INTERVAL [+|-]'${format}' ${range}\` when cast to ${typeName}: ${raw}. Write it as INTERVAL '${RANGE_EXAMPLES[range]}' ${range}`,
      text,
      pos,
    );
  if (range === 'YEAR TO MONTH') {
    const m = /^([+|-])?(\d+)-(\d+)$/.exec(input);
    if (m === null) throw unmatched('UNMATCHED_FORMAT_STRING', 'year-month');
    const years = BigInt(m[2]);
    const monthsPart = BigInt(m[3]);
    const parsing = (why: string) =>
      new ExpressionError(
        'INVALID_INTERVAL_FORMAT.INTERVAL_PARSING',
        `Error parsing '${input}' to interval: error parsing interval year-month string: ${why}`,
        text,
        pos,
      );
    if (years > 178_956_970n) throw parsing(`requirement failed: year ${years} outside range [0, 178956970]`);
    if (monthsPart > 11n) throw parsing(`requirement failed: month ${monthsPart} outside range [0, 11]`);
    const months = (m[1] === '-' ? -1n : 1n) * (years * 12n + monthsPart);
    if (!inRange(months, INT_RANGE)) throw parsing('integer overflow');
    return yearMonthLiteral(Number(months), 'YEAR', 'MONTH', pos);
  }
  const m = DT_PATTERNS[range].exec(input);
  if (m === null) throw unmatched('UNMATCHED_FORMAT_STRING_WITH_NOTICE', 'day-time');
  const start = DT_FIELDS.indexOf(from.toUpperCase() as DtField);
  const end = DT_FIELDS.indexOf(to.toUpperCase() as DtField);
  let micros = 0n;
  for (let f = start, g = 2; f <= end; f++, g++) {
    const field = DT_FIELDS[f];
    const n = BigInt(m[g]);
    const max = f === start ? LEADING_MAX[field] : FOLLOWING_MAX[field];
    if (n > max) {
      throw new ExpressionError(
        '_LEGACY_ERROR_TEMP_0063',
        `requirement failed: ${field.toLowerCase()} ${n} outside range [0, ${max}]: write INTERVAL '${RANGE_EXAMPLES[range]}' ${range}`,
        text,
        pos,
      );
    }
    micros += n * MICROS_OF[field];
  }
  // the fraction of the seconds: up to nanoseconds, kept to the microsecond
  const fraction = end === 3 ? m[end - start + 3] : undefined;
  if (fraction !== undefined) micros += BigInt(fraction.slice(1).padEnd(9, '0')) / 1000n;
  return dayTimeLiteral(m[1] === '-' ? -micros : micros, DT_FIELDS[start], DT_FIELDS[end], text, pos);
}

/** A year-month interval literal, named as Spark's Literal.sql: `INTERVAL '1-5' YEAR TO MONTH`, `INTERVAL '2' YEAR`, `INTERVAL '-11' MONTH`. */
function yearMonthLiteral(months: number, start: YmField, end: YmField, pos: number): Ast {
  return { k: 'lit', pos, value: months + 0, type: { type: 'INTERVAL', yearMonth: true, units: [start, end] }, sql: yearMonthText(months, start, end) };
}

/**
 * A day-time interval literal (a BIGINT of microseconds), named as Spark's Literal.sql of its
 * fields: `INTERVAL '3 04:05:06.789' DAY TO SECOND`, `INTERVAL '10' MINUTE`, `INTERVAL '02' HOUR`.
 * Of DAY alone it is an INTERVAL DAY. (Past 2^53 µs, about 285 years, the value is a JS number's nearest.)
 */
function dayTimeLiteral(micros: bigint, start: DtField, end: DtField, text: string, pos: number): Ast {
  if (!inRange(micros, LONG_RANGE)) {
    throw new ExpressionError(
      'INVALID_INTERVAL_FORMAT.ARITHMETIC_EXCEPTION',
      `Uncaught arithmetic exception while parsing the interval: it is more than a BIGINT of microseconds (about 106751991 days) holds`,
      text,
      pos,
    );
  }
  const type: SqlType = { type: 'INTERVAL', ...(start === 'DAY' && end === 'DAY' ? { days: true as const } : {}), units: [start, end] };
  return { k: 'lit', pos, value: Number(micros) + 0, type, sql: dayTimeText(micros, start, end) };
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** A LONG value: a number when it is a safe integer, else a bigint. */
function longValue(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

export function numberLiteral(t: Token, text: string, negative = false): Ast {
  const s = t.text;
  const sign = negative ? '-' : '';
  const sql = `${sign}${s}${t.suffix}`;
  const bad = (what: string) => new ExpressionError('INVALID_NUMERIC_LITERAL_RANGE', `${sql} ${what}`, text, t.pos);
  const isWhole = /^[0-9]+$/.test(s);
  const signed = (v: bigint) => (negative ? -v : v);
  switch (t.suffix) {
    case 'L':
    case 'S':
    case 'Y': {
      if (!isWhole)
        throw new ExpressionError('PARSE_SYNTAX_ERROR', `Syntax error at or near '${s}${t.suffix}': expected a whole number before ${t.suffix}`, text, t.pos);
      const v = signed(BigInt(s));
      if (t.suffix === 'L') {
        if (v > LONG_MAX || v < LONG_MIN)
          throw bad('is outside the range of BIGINT [-9223372036854775808, 9223372036854775807]: write it as a decimal (without L)');
        return { k: 'lit', pos: t.pos, value: longValue(v), type: LONG, sql };
      }
      const bits = t.suffix === 'S' ? 16 : 8;
      const m = 2n ** BigInt(bits - 1);
      if (v >= m || v < -m) throw bad(`is outside the range of ${bits === 16 ? 'SMALLINT [-32768, 32767]' : 'TINYINT [-128, 127]'}: use a wider type`);
      return { k: 'lit', pos: t.pos, value: Number(v) + 0, type: { type: 'INT', bits }, sql };
    }
    case 'D':
    case 'F': {
      // (a FLOAT literal is Float.parseFloat's nearest float: not fround of the nearest double, float32OfText)
      const value = t.suffix === 'F' ? float32OfText(`${sign}${s}`) : Number(`${sign}${s}`);
      // Spark checks the literal against the type's range (1e400D is refused, not Infinity)
      if (!Number.isFinite(value)) throw bad(`is outside the range of ${t.suffix === 'F' ? 'FLOAT' : 'DOUBLE'}`);
      return { k: 'lit', pos: t.pos, value, type: t.suffix === 'F' ? { type: 'DOUBLE', binary32: true } : DOUBLE, sql };
    }
  }
  if (t.suffix === '' && /[eE]/.test(s)) {
    const value = Number(`${sign}${s}`);
    if (!Number.isFinite(value)) throw bad('is outside the range of DOUBLE');
    return { k: 'lit', pos: t.pos, value, type: DOUBLE, sql };
  }
  if (t.suffix === '' && isWhole) {
    const v = signed(BigInt(s));
    if (v <= BigInt(INT_MAX) && v >= BigInt(INT_MIN)) return { k: 'lit', pos: t.pos, value: Number(v) + 0, type: INT, sql };
    if (v <= LONG_MAX && v >= LONG_MIN) return { k: 'lit', pos: t.pos, value: longValue(v), type: LONG, sql };
  }
  // A number with a point (or an integer beyond BIGINT) is a DECIMAL literal, as in Spark: 1.5 is DECIMAL(2,1).
  const m = /^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(s)!;
  let digits = `${m[1]}${m[2] ?? ''}`.replace(/^0+(?=[0-9])/, '');
  let scale = (m[2] ?? '').length - (m[3] === undefined ? 0 : Number(m[3]));
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  const unscaled = BigInt(digits || '0');
  const precision = Math.max(unscaled === 0n ? 1 : unscaled.toString().length, scale);
  if (precision > 38)
    throw new ExpressionError(
      'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION',
      `Decimal precision ${precision} exceeds max precision 38: ${sql} has more digits than a DECIMAL holds; write it as a DOUBLE (1e40 or a D suffix)`,
      text,
      t.pos,
    );
  const value = formatUnscaled(negative && unscaled !== 0n ? -unscaled : unscaled, scale);
  return { k: 'lit', pos: t.pos, value, type: decimal(precision, scale), sql };
}

function formatUnscaled(u: bigint, scale: number): string {
  const neg = u < 0n;
  let d = (neg ? -u : u).toString();
  if (scale > 0) {
    if (d.length <= scale) d = '0'.repeat(scale - d.length + 1) + d;
    d = `${d.slice(0, d.length - scale)}.${d.slice(d.length - scale)}`;
  }
  return neg ? `-${d}` : d;
}

export function typedLiteral(word: 'DATE' | 'TIMESTAMP', s: Token, text: string): Ast {
  if (word === 'DATE') {
    const d = dateOfText(s.text);
    if (d === null)
      throw new ExpressionError(
        'INVALID_TYPED_LITERAL',
        `The value of the typed literal DATE '${s.text}' is not a date of years 1 to 9999: write it as 'YYYY-MM-DD'`,
        text,
        s.pos,
      );
    return { k: 'lit', pos: s.pos, value: d, type: DATE, sql: `DATE '${d}'` };
  }
  const us = parseTimestampMicros(s.text);
  if (us === null) {
    throw new ExpressionError(
      'INVALID_TYPED_LITERAL',
      `The value of the typed literal TIMESTAMP '${s.text}' is not a timestamp: write it as 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC) or ISO 8601 with an offset`,
      text,
      s.pos,
    );
  }
  return { k: 'lit', pos: s.pos, value: us, type: TIMESTAMP, sql: `TIMESTAMP '${formatTimestampText(us)}'` };
}
