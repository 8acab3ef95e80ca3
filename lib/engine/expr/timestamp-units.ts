/**
 * Spark's functions that take a datetime unit as a bare word: `timestampadd(MINUTE, 5, ts)` and
 * `timestampdiff(MONTH, a, b)`, with their names `dateadd` / `date_add` and `datediff` /
 * `date_diff` / `timediff` when given three arguments (DateTimeUtils.timestampAdd and
 * timestampDiff). Dates are taken as midnight UTC, the session time zone being UTC.
 *
 * Adding: a time unit adds its microseconds, DAY and WEEK whole days, MONTH, QUARTER and YEAR
 * calendar months (the day clamped to the month's end, as LocalDateTime.plusMonths). The
 * difference is java.time's ChronoUnit.between of the two local date-times: whole units from
 * start to end, truncated towards zero, months counted by the day and time of day as well.
 */
import { type Analyzer, type AstFunction, implicitCast } from './analyze';
import { timestampArg } from './fn-util';
import { SparkRowError } from './errors';
import type { Ast } from './parser';
import { strict, type Typed } from './typed';
import { addMonths, bigMicros, inRange, type Micros, microsOfDayAndTime, microsValue, splitMicros, ymd } from './time';
import { dateOfEpochDay, epochDayOf } from '../dates';
import { isIntegral, LONG, TIMESTAMP, typeName } from './types';

type Call = Extract<Ast, { k: 'call' }>;

const UNIT_MICROS: Readonly<Record<string, bigint>> = {
  MICROSECOND: 1n,
  MILLISECOND: 1_000n,
  SECOND: 1_000_000n,
  MINUTE: 60_000_000n,
  HOUR: 3_600_000_000n,
  DAY: 86_400_000_000n,
  DAYOFYEAR: 86_400_000_000n,
  WEEK: 604_800_000_000n,
};
const UNIT_MONTHS: Readonly<Record<string, number>> = { MONTH: 1, QUARTER: 3, YEAR: 12 };
const UNITS = [...Object.keys(UNIT_MICROS), ...Object.keys(UNIT_MONTHS)];

/** The unit of the first argument: a bare word (`MINUTE`) or a string literal. */
function unitOf(az: Analyzer, c: Call, forDiff: boolean): string {
  const a = c.args[0];
  const text = a.k === 'name' && a.parts.length === 1 ? a.parts[0] : a.k === 'lit' && typeof a.value === 'string' ? a.value : null;
  const unit = text?.toUpperCase();
  if (unit === undefined || !UNITS.includes(unit) || (forDiff && unit === 'DAYOFYEAR')) {
    throw az.fail(
      'INVALID_PARAMETER_VALUE.DATETIME_UNIT',
      `The value of parameter(s) \`unit\` in \`${c.name}\` is invalid: expects one of the units without quotes YEAR, QUARTER, MONTH, WEEK, DAY, ${forDiff ? '' : 'DAYOFYEAR, '}HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, but got ${text === null ? 'an expression' : `'${text}'`}`,
      a.pos,
    );
  }
  return unit;
}

/** Argument `at` read as a TIMESTAMP, as every datetime function reads one (fn-util.ts). */
function argAsTimestamp(az: Analyzer, c: Call, at: number): Typed {
  return timestampArg(az.callCtx(c.name, c.pos, `${c.name}(...)`), az.analyze(c.args[at]), at);
}

function overflow(c: Call, unit: string, n: bigint, ts: Micros): SparkRowError {
  return new SparkRowError(
    'DATETIME_OVERFLOW',
    `Datetime operation overflow: add ${n} ${unit} to TIMESTAMP '${String(ts)}' (µs) leaves years 0001-9999 in ${c.name}`,
  );
}

/** ChronoUnit.MONTHS.between two local date-times (UTC): LocalDateTime.until, then LocalDate.monthsUntil. */
function monthsBetween(start: Micros, end: Micros): bigint {
  const a = splitMicros(start);
  const b = splitMicros(end);
  // the end's date moves a day towards the start when its time of day has not reached the start's
  let endDay = b.day;
  if (b.day > a.day && b.micros < a.micros) endDay -= 1;
  else if (b.day < a.day && b.micros > a.micros) endDay += 1;
  const packed = (day: number) => {
    const [y, m, d] = ymd(dateOfEpochDay(day));
    return (y * 12 + m - 1) * 32 + d;
  };
  return BigInt(Math.trunc((packed(endDay) - packed(a.day)) / 32));
}

function timestampAdd(az: Analyzer, c: Call): Typed {
  const unit = unitOf(az, c, false);
  const n = az.analyze(c.args[1]);
  if (!isIntegral(n.type) && n.type.type !== 'NULL') {
    throw az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      `${c.name}(...)`,
      `argument 2 of ${c.name} requires an integral type, however ${n.sql} has the type "${typeName(n.type)}"`,
      c.pos,
    );
  }
  const qty = implicitCast(n, LONG);
  const ts = argAsTimestamp(az, c, 2);
  const sql = `${c.name}(${unit}, ${n.sql}, ${ts.sql})`;
  const micros = UNIT_MICROS[unit];
  const months = UNIT_MONTHS[unit];
  return {
    type: TIMESTAMP,
    sql,
    name: sql,
    children: [qty, ts],
    build: strict((q, t) => {
      const k = BigInt(q as number | bigint);
      const us = t as Micros;
      if (micros !== undefined) {
        const out = bigMicros(us) + k * micros;
        if (!inRange(out)) throw overflow(c, unit, k, us);
        return microsValue(out);
      }
      const { day, micros: time } = splitMicros(us);
      const shifted = Math.abs(Number(k)) > 120_000 ? null : addMonths(dateOfEpochDay(day), Number(k) * months);
      if (shifted === null) throw overflow(c, unit, k, us);
      return microsOfDayAndTime(epochDayOf(shifted), time);
    }),
  };
}

function timestampDiff(az: Analyzer, c: Call): Typed {
  const unit = unitOf(az, c, true);
  const start = argAsTimestamp(az, c, 1);
  const end = argAsTimestamp(az, c, 2);
  const sql = `${c.name}(${unit}, ${start.sql}, ${end.sql})`;
  const micros = UNIT_MICROS[unit];
  const months = UNIT_MONTHS[unit];
  return {
    type: LONG,
    sql,
    name: sql,
    children: [start, end],
    build: strict((a, b) => {
      // BigInt division truncates towards zero, as ChronoUnit.between
      const d = micros !== undefined ? (bigMicros(b as Micros) - bigMicros(a as Micros)) / micros : monthsBetween(a as Micros, b as Micros) / BigInt(months);
      return microsValue(d);
    }),
  };
}

/** Functions whose first argument is a unit word, by name when given three arguments. */
export function unitFunction(name: string, args: number): AstFunction | undefined {
  if (args !== 3) return undefined;
  if (name === 'timestampadd' || name === 'dateadd' || name === 'date_add') return { args: [3, 3], resolve: timestampAdd };
  if (name === 'timestampdiff' || name === 'datediff' || name === 'date_diff' || name === 'timediff') return { args: [3, 3], resolve: timestampDiff };
  return undefined;
}
