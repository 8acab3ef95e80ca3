/**
 * Spark's ANSI text of an interval value of a type with its start and end fields
 * (IntervalUtils.toDayTimeIntervalString / toYearMonthIntervalString, ANSI style): what a literal's
 * SQL, CAST(... AS STRING) and the JSON writer show. `INTERVAL '10' MINUTE`, `INTERVAL '02' HOUR`,
 * `INTERVAL '1 02:03' DAY TO MINUTE`, `INTERVAL '-0 00:13:20.5' DAY TO SECOND`, `INTERVAL '1-2' YEAR TO MONTH`.
 */
import type { IntervalUnit, SqlType } from './types';

const DAY_TIME = ['DAY', 'HOUR', 'MINUTE', 'SECOND'] as const;
const MICROS: Record<string, bigint> = { DAY: 86_400_000_000n, HOUR: 3_600_000_000n, MINUTE: 60_000_000n };

function qualifier(start: IntervalUnit, end: IntervalUnit): string {
  return start === end ? start : `${start} TO ${end}`;
}

/** A day-time interval of `micros` with fields `start` to `end`: the leading field unpadded for DAY, two digits at least for the others; the fields past `end` left out. */
export function dayTimeText(micros: bigint, start: IntervalUnit, end: IntervalUnit): string {
  let rest = micros < 0n ? -micros : micros;
  const seconds = (us: bigint) => {
    const frac = String(us % 1_000_000n)
      .padStart(6, '0')
      .replace(/0+$/, '');
    return `${us < 10_000_000n ? '0' : ''}${us / 1_000_000n}${frac === '' ? '' : `.${frac}`}`;
  };
  const s = DAY_TIME.indexOf(start as (typeof DAY_TIME)[number]);
  const e = DAY_TIME.indexOf(end as (typeof DAY_TIME)[number]);
  let body = micros < 0n ? '-' : '';
  for (let f = s; f <= e; f++) {
    const field = DAY_TIME[f];
    if (f > s) body += field === 'HOUR' ? ' ' : ':';
    if (field === 'SECOND') body += seconds(rest);
    else {
      const n = rest / MICROS[field];
      rest %= MICROS[field];
      body += field === 'DAY' ? String(n) : String(n).padStart(2, '0');
    }
  }
  return `INTERVAL '${body}' ${qualifier(start, end)}`;
}

/** A year-month interval of `months`: `'1-2' YEAR TO MONTH`, `'1' YEAR` (whole years, the months dropped), `'14' MONTH`. */
export function yearMonthText(months: number, start: IntervalUnit, end: IntervalUnit): string {
  const abs = Math.abs(months);
  const year = `${months < 0 ? '-' : ''}${Math.floor(abs / 12)}`;
  const body = start !== end ? `${year}-${abs % 12}` : start === 'YEAR' ? year : `${months}`;
  return `INTERVAL '${body}' ${qualifier(start, end)}`;
}

/** The fields of an INTERVAL type: its own, else the whole range (DAY TO SECOND, YEAR TO MONTH; DAY for an INTERVAL DAY). */
function intervalUnits(t: SqlType): readonly [IntervalUnit, IntervalUnit] {
  return t.units ?? (t.yearMonth ? ['YEAR', 'MONTH'] : t.days ? ['DAY', 'DAY'] : ['DAY', 'SECOND']);
}

/** The text of a value of INTERVAL type `t` (a number of months, or of microseconds). */
export function intervalText(v: number, t: SqlType): string {
  const [start, end] = intervalUnits(t);
  return t.yearMonth ? yearMonthText(v, start, end) : dayTimeText(BigInt(v), start, end);
}

const ORDER: readonly IntervalUnit[] = ['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND'];

/** The type of a value of either of two INTERVAL types of one kind (Spark's wider interval type: the earliest start, the latest end). */
export function widerInterval(a: SqlType, b: SqlType): SqlType {
  const [as, ae] = intervalUnits(a);
  const [bs, be] = intervalUnits(b);
  const start = ORDER.indexOf(as) <= ORDER.indexOf(bs) ? as : bs;
  const end = ORDER.indexOf(ae) >= ORDER.indexOf(be) ? ae : be;
  return {
    type: 'INTERVAL',
    ...(a.yearMonth ? { yearMonth: true as const } : {}),
    ...(a.days && b.days ? { days: true as const } : {}),
    units: [start, end],
  };
}

/** Spark's name of an INTERVAL type: `INTERVAL MINUTE`, `INTERVAL DAY TO SECOND`, `INTERVAL YEAR TO MONTH`. */
export function intervalTypeName(t: SqlType): string {
  const [start, end] = intervalUnits(t);
  return `INTERVAL ${qualifier(start, end)}`;
}

const UNIT_MICROS: Record<string, bigint> = { DAY: 86_400_000_000n, HOUR: 3_600_000_000n, MINUTE: 60_000_000n, SECOND: 1_000_000n };

/** The microseconds of a day-time INTERVAL type's last field: what a CAST to a number counts (Spark's dayTimeIntervalToLong). */
export function lastFieldMicros(t: SqlType): bigint {
  return UNIT_MICROS[intervalUnits(t)[1]];
}

/** A year-month interval as a number: its months, or its whole years (toward zero) when YEAR is the last field (Spark's yearMonthIntervalToInt). */
export function yearMonthCount(months: number, t: SqlType): number {
  return intervalUnits(t)[1] === 'YEAR' ? Math.trunc(months / 12) + 0 : months;
}
