/**
 * References for the property tests (test/unit/*-properties.test.ts): the civil calendar's day
 * count, written out apart from the engine's Date-based code so that the two can disagree.
 */

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the era arithmetic of days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
