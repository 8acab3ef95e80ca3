/**
 * Spark interval strings ("10 minutes", "1 hour 30 minutes", "interval 5 seconds", "10
 * microseconds") as microseconds, the precision of a TIMESTAMP; a watermark delay as
 * milliseconds, the precision of a watermark (Spark's EventTimeWatermark.getDelayMs).
 */
import { InvalidOptionError } from './errors';

const UNIT_US: Record<string, number> = {
  microsecond: 1,
  millisecond: 1000,
  second: 1_000_000,
  minute: 60_000_000,
  hour: 3_600_000_000,
  day: 86_400_000_000,
  week: 7 * 86_400_000_000,
};

/** Spark's watermark treats a month as 31 days (EventTimeWatermark.getDelayMs). */
const MONTH_MS_FOR_WATERMARK = 31 * 86_400_000;

export interface ParsedInterval {
  /** The fixed part in µs (a safe integer). */
  readonly us: number;
  readonly months: number;
}

export function parseInterval(text: string, what: string): ParsedInterval {
  const fix = `write it as Spark does, e.g. "10 seconds", "5 minutes", "1 hour 30 minutes"`;
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidOptionError(`${what} ${JSON.stringify(text)} is not an interval: ${fix}`);
  }
  const tokens = text.trim().toLowerCase().split(/\s+/);
  if (tokens[0] === 'interval') tokens.shift();
  if (tokens.length === 0 || tokens.length % 2 !== 0) {
    throw new InvalidOptionError(`${what} "${text}" is not an interval of "<number> <unit>" pairs: ${fix}`);
  }
  let us = 0;
  let months = 0;
  for (let i = 0; i < tokens.length; i += 2) {
    const n = Number(tokens[i]);
    let unit = tokens[i + 1];
    if (!Number.isFinite(n) || tokens[i] === '') {
      throw new InvalidOptionError(`${what} "${text}": ${JSON.stringify(tokens[i])} is not a number: ${fix}`);
    }
    if (unit.endsWith('s')) unit = unit.slice(0, -1);
    if (unit === 'month' || unit === 'year') {
      months += unit === 'year' ? n * 12 : n;
      continue;
    }
    const per = UNIT_US[unit];
    if (per === undefined) {
      throw new InvalidOptionError(
        `${what} "${text}": unit ${JSON.stringify(tokens[i + 1])} is not one of ${Object.keys(UNIT_US).join(', ')}, month, year: ${fix}`,
      );
    }
    us += n * per;
  }
  if (!Number.isSafeInteger(us)) {
    throw new InvalidOptionError(
      `${what} "${text}" is not a whole number of microseconds within ±2^53 (about 285 years), the precision and range of a duration: ${fix}`,
    );
  }
  return { us: us + 0, months };
}

/** A window length, slide or start offset in µs: a positive (or, for startTime, any) fixed duration. */
export function parseWindowDuration(text: string, what: string, allowZero = false): number {
  const { us, months } = parseInterval(text, what);
  if (months !== 0) {
    throw new InvalidOptionError(`${what} "${text}" uses months or years, which have no fixed length: express it in weeks, days, hours or smaller units`);
  }
  if (us < 0 || (!allowZero && us === 0)) {
    throw new InvalidOptionError(`${what} "${text}" must be ${allowZero ? 'zero or positive' : 'positive'}: give a duration such as "10 minutes"`);
  }
  return us;
}

/** A fixed duration in ms (an option such as idleTimeout, not an event-time length). */
export function parseDurationMs(text: string, what: string): number {
  return parseWindowDuration(text, what) / 1000;
}

/**
 * A watermark delay in ms; months count 31 days as in Spark, and a part below the millisecond is
 * dropped, as Spark's getDelayMs divides the microseconds by 1000.
 */
export function parseWatermarkDelay(text: string): number {
  const { us, months } = parseInterval(text, 'withWatermark delay');
  const total = Math.trunc(us / 1000) + months * MONTH_MS_FOR_WATERMARK;
  if (total < 0) {
    throw new InvalidOptionError(`withWatermark delay "${text}" is negative: the delay must be zero or positive, e.g. "10 minutes"`);
  }
  return total;
}
