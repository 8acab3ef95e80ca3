/**
 * Spark interval strings ("10 minutes", "1 hour 30 minutes", "interval 5 seconds") as milliseconds.
 */
import { InvalidOptionError } from './errors';

const UNIT_MS: Record<string, number> = {
  microsecond: 0.001,
  millisecond: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
};

/** Spark's watermark treats a month as 31 days (EventTimeWatermark.getDelayMs). */
const MONTH_MS_FOR_WATERMARK = 31 * 86_400_000;

export interface ParsedInterval {
  readonly ms: number;
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
  let ms = 0;
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
    const per = UNIT_MS[unit];
    if (per === undefined) {
      throw new InvalidOptionError(
        `${what} "${text}": unit ${JSON.stringify(tokens[i + 1])} is not one of ${Object.keys(UNIT_MS).join(', ')}, month, year: ${fix}`,
      );
    }
    ms += n * per;
  }
  return { ms, months };
}

/** A window length, slide or start offset: a positive (or, for startTime, any) fixed duration. */
export function parseWindowDuration(text: string, what: string, allowZero = false): number {
  const { ms, months } = parseInterval(text, what);
  if (months !== 0) {
    throw new InvalidOptionError(`${what} "${text}" uses months or years, which have no fixed length: express it in weeks, days, hours or smaller units`);
  }
  if (ms < 0 || (!allowZero && ms === 0)) {
    throw new InvalidOptionError(`${what} "${text}" must be ${allowZero ? 'zero or positive' : 'positive'}: give a duration such as "10 minutes"`);
  }
  return ms;
}

/** A watermark delay; months count 31 days as in Spark. */
export function parseWatermarkDelay(text: string): number {
  const { ms, months } = parseInterval(text, 'withWatermark delay');
  const total = ms + months * MONTH_MS_FOR_WATERMARK;
  if (total < 0) {
    throw new InvalidOptionError(`withWatermark delay "${text}" is negative: the delay must be zero or positive, e.g. "10 minutes"`);
  }
  return total;
}
