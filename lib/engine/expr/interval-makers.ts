/**
 * Spark's makers of ANSI intervals (intervalExpressions.scala's MakeDTInterval and MakeYMInterval,
 * IntervalUtils.makeDayTimeInterval / makeYearMonthInterval):
 * - `make_dt_interval([days[, hours[, mins[, secs]]]])`: INT days, hours and minutes and
 *   DECIMAL(18,6) seconds (each 0 when left out) as an INTERVAL DAY TO SECOND, exactly in
 *   microseconds; a total past a long is Spark's ARITHMETIC_OVERFLOW ("long overflow");
 * - `make_ym_interval([years[, months]])`: INT years and months as an INTERVAL YEAR TO MONTH; a
 *   total past an int is ARITHMETIC_OVERFLOW ("integer overflow").
 * A null argument makes the result null. A day-time interval is held here as a number of
 * microseconds, exact to ±(2^53 − 1) µs (about 285 years): a total beyond that, which Spark holds
 * as a long, is a row error too rather than a rounded value.
 */
import { unscaledOf } from '../decimal';
import { type CallCtx, type FunctionDef, literal } from './analyze';
import { SparkRowError } from './errors';
import { call, def, int } from './fn-util';
import type { Typed } from './typed';
import { decimal, INT, type SqlType } from './types';

const MICROS_PER_MINUTE = 60_000_000n;
const MICROS_PER_HOUR = 60n * MICROS_PER_MINUTE;
const MICROS_PER_DAY = 24n * MICROS_PER_HOUR;
const LONG_MAX = 9223372036854775807n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const DAY_TIME: SqlType = { type: 'INTERVAL', units: ['DAY', 'SECOND'] };
const YEAR_MONTH: SqlType = { type: 'INTERVAL', yearMonth: true, units: ['YEAR', 'MONTH'] };
const SECONDS = decimal(18, 6);

function overflow(what: 'long' | 'integer', sql: string): SparkRowError {
  return new SparkRowError('ARITHMETIC_OVERFLOW', `${what} overflow in ${sql}: make the parts smaller`);
}

/** The arguments as Spark fills them in (its constructors' literal zeros), typed INT... and DECIMAL(18,6) seconds. */
function filled(args: readonly Typed[], c: CallCtx, kinds: readonly SqlType[]): Typed[] {
  return kinds.map((k, i) => {
    if (args[i] === undefined) return k.type === 'DECIMAL' ? literal('0.000000', k, '0.000000') : literal(0, INT, '0');
    return k.type === 'DECIMAL' ? c.az.implicit(args[i], k, c.pos, `argument ${i + 1} of ${c.name}`) : int(c, args[i], i);
  });
}

/** The call's SQL with the filled-in arguments (Spark's name of `make_dt_interval(1)` is `make_dt_interval(1, 0, 0, 0.000000)`). */
function named(t: Typed, c: CallCtx, children: readonly Typed[]): Typed {
  const sql = `${c.name}(${children.map((a) => a.sql).join(', ')})`;
  return { ...t, sql, name: sql };
}

/**
 * A day-time interval's microseconds as the number that holds them, exact: a value a double
 * cannot hold (past ±(2^53 − 1) µs, about 285 years, unless a multiple of a power of two such as
 * whole days) would be rounded, so it is a row error instead (Spark holds up to a long).
 */
export function exactDayTime(micros: bigint, sql: string): number {
  const n = Number(micros);
  if (BigInt(n) !== micros) {
    throw new SparkRowError(
      'ARITHMETIC_OVERFLOW',
      `${micros} microseconds in ${sql} cannot be held exactly by sluice's day-time interval (a double of microseconds: exact to ±${SAFE} µs, about 285 years; Spark holds up to a long): use a smaller span, or compute in days (datediff)`,
    );
  }
  return n;
}

export const INTERVAL_MAKERS: Record<string, FunctionDef> = {
  make_dt_interval: def(0, 4, (args, c) => {
    const children = filled(args, c, [INT, INT, INT, SECONDS]);
    const t = call(c, DAY_TIME, children, ([d, h, m, s]) => (row) => {
      const days = d(row);
      const hours = h(row);
      const mins = m(row);
      const secs = s(row);
      if (days == null || hours == null || mins == null || secs == null) return null;
      const micros =
        unscaledOf(secs as string) +
        BigInt(days as number) * MICROS_PER_DAY +
        BigInt(hours as number) * MICROS_PER_HOUR +
        BigInt(mins as number) * MICROS_PER_MINUTE;
      // (each product fits a long: an INT times a day's microseconds; only the sum may not)
      if (micros > LONG_MAX || micros < -LONG_MAX - 1n) throw overflow('long', c.sql);
      return exactDayTime(micros, c.sql);
    });
    return named(t, c, children);
  }),
  make_ym_interval: def(0, 2, (args, c) => {
    const children = filled(args, c, [INT, INT]);
    const t = call(c, YEAR_MONTH, children, ([y, m]) => (row) => {
      const years = y(row);
      const months = m(row);
      if (years == null || months == null) return null;
      const total = (years as number) * 12 + (months as number);
      if (total > 2147483647 || total < -2147483648) throw overflow('integer', c.sql);
      return total;
    });
    return named(t, c, children);
  }),
};
