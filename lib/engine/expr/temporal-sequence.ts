/**
 * sequence(start, stop[, step]) over DATE and TIMESTAMP values, as Spark's Sequence does it
 * (TemporalSequenceImpl, session time zone UTC): the step is an INTERVAL, one day (or minus one day
 * when stop is before start) by default. Element i is start plus i times the step, each computed
 * from start (a month step from January 31 gives February 28, then March 31), up to stop included
 * when reached. A DATE sequence with a day-time step takes whole days only.
 *
 * Spark's checks, kept: the boundaries must go in the step's direction, judged on the step with a
 * month counted as 28 days (`Illegal sequence boundaries: 0 to 2678400000000 by -1 months`, in
 * microseconds); a DATE sequence by days is the integral sequence of its epoch days, and its
 * message counts days (`1 to 0 by 1`).
 */
import { checkArrayLength } from './value-limits';
import { dateOfEpochDay, epochDayOf } from '../dates';
import { SparkRowError } from './errors';
import { addMonths, bigMicros, dateOfMicros, type Micros, microsValue } from './time';

const MICROS_PER_DAY = 86_400_000_000n;
/** Spark's estimate of a month when it checks a month step's direction and the length. */
const MICROS_PER_MONTH_ESTIMATE = 28n * MICROS_PER_DAY;

/** A step: months (a year-month interval) or microseconds (a day-time one). */
export interface TemporalStep {
  readonly months: number;
  readonly micros: bigint;
}

function boundaries(start: bigint | string, stop: bigint | string, step: string): never {
  throw new SparkRowError(
    'INVALID_PARAMETER_VALUE.SEQUENCE_BOUNDARIES',
    `Illegal sequence boundaries: ${start} to ${stop} by ${step}: the step must go from start towards stop`,
  );
}

/** start + months and micros, in UTC: the months first (add_months' rule), then the micros. */
export function plus(start: bigint, months: number, micros: bigint): bigint {
  if (months === 0) return start + micros;
  const dayMicros = ((start % MICROS_PER_DAY) + MICROS_PER_DAY) % MICROS_PER_DAY;
  const date = addMonths(dateOfMicros(microsValue(start)), months);
  if (date === null) {
    throw new SparkRowError('DATETIME_OVERFLOW', `Datetime operation overflow: the sequence goes outside years 1 to 9999 (add ${months} months)`);
  }
  return BigInt(epochDayOf(date)) * MICROS_PER_DAY + dayMicros + micros;
}

/** The sequence's values (DATE texts or TIMESTAMP µs). `step` null: one day towards stop. */
export function temporalSequence(isDate: boolean, start: unknown, stop: unknown, step: TemporalStep | null): unknown[] {
  if (isDate) {
    const from = epochDayOf(start as string);
    const to = epochDayOf(stop as string);
    const s = step ?? { months: 0, micros: from <= to ? MICROS_PER_DAY : -MICROS_PER_DAY };
    if (s.months === 0) {
      if (s.micros % MICROS_PER_DAY !== 0n) {
        throw new SparkRowError('IllegalArgumentException', 'sequence step must be an interval of day granularity if start and end values are dates');
      }
      return daySequence(from, to, Number(s.micros / MICROS_PER_DAY));
    }
    return stepped(BigInt(from) * MICROS_PER_DAY, BigInt(to) * MICROS_PER_DAY, s).map((t) => dateOfEpochDay(Number(t / MICROS_PER_DAY)));
  }
  const from = bigMicros(start as Micros);
  const to = bigMicros(stop as Micros);
  const s = step ?? { months: 0, micros: from <= to ? MICROS_PER_DAY : -MICROS_PER_DAY };
  return stepped(from, to, s).map(microsValue);
}

/** The integral sequence of epoch days (Spark's DATE sequence by whole days). */
function daySequence(from: number, to: number, step: number): string[] {
  if ((step > 0 && from > to) || (step < 0 && from < to) || (step === 0 && from !== to)) boundaries(String(from), String(to), String(step));
  const n = step === 0 ? 1 : Math.floor((to - from) / step) + 1;
  checkArrayLength(n, 'sequence');
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(dateOfEpochDay(from + i * step));
  return out;
}

/** A month step as Spark's CalendarInterval prints it: `1 years 5 months`, `-1 months`. */
function monthsText(months: number): string {
  const years = Math.trunc(months / 12);
  const rest = months % 12;
  return [years !== 0 ? `${years} years` : '', rest !== 0 ? `${rest} months` : ''].filter((x) => x !== '').join(' ');
}

/** Element i = start + i × step (µs), while it has not passed stop (Spark's loop, with its estimate checked first). */
function stepped(start: bigint, stop: bigint, step: TemporalStep): bigint[] {
  const estimate = step.micros + BigInt(step.months) * MICROS_PER_MONTH_ESTIMATE;
  if (!((estimate === 0n && start === stop) || (estimate > 0n && start <= stop) || (estimate < 0n && start >= stop))) {
    boundaries(start, stop, step.months === 0 ? String(step.micros) : monthsText(step.months));
  }
  const length = estimate === 0n ? 1n : (stop - start) / estimate + 1n;
  checkArrayLength(length, 'sequence');
  // (Spark's loop condition, kept as it is: down to stop - 1 µs when the step is negative)
  const sign = estimate > 0n ? 1n : -1n;
  const exclusive = stop + sign;
  const out: bigint[] = [];
  for (let i = 0, t = start; sign > 0n ? t < exclusive : t >= exclusive; ) {
    out.push(t);
    if (estimate === 0n) break;
    i++;
    t = plus(start, i * step.months, BigInt(i) * step.micros);
  }
  return out;
}
