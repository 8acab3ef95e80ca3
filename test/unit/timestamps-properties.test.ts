/**
 * Properties of TIMESTAMP and DATE values (lib/engine/timestamps.ts, lib/engine/dates.ts) against
 * references written here on bigint and a civil-calendar day count (days from 0000-03-01, the
 * proleptic Gregorian calendar Spark uses), on generated instants over Spark's whole range (years
 * 1 to 9999): the fast paths (an hour cache, number arithmetic while safe, a minute cache in the
 * output text) must agree with them everywhere, including past 2^53 µs where values are bigints.
 * The seed is fixed (SLUICE_PROPERTY_SEED overrides it) so that a run is reproducible.
 */
import fc from 'fast-check';
import { dateOfEpochDay, epochDayOf, parseDate } from '../../lib/engine/dates';
import { addMicros, ceilMillis, floorMillis, formatTimestamp, type Micros, parsePlainTimestamp, parseTimestamp, subMicros } from '../../lib/engine/timestamps';
import { daysFromCivil } from '../helpers/civil-calendar';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261206);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 300);
const params = { seed: SEED, numRuns: RUNS };

const MIN_US = -62135596800000000n; // 0001-01-01T00:00:00Z
const MAX_US = 253402300799999999n; // 9999-12-31T23:59:59.999999Z
const SAFE = 9007199254740991n;

/** The one form of a µs value: a number when safe, else the bigint. */
function canonical(big: bigint): Micros {
  return big >= -SAFE && big <= SAFE ? Number(big) : big;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** An instant of Spark's range, weighted towards the edges: the range's ends, 2^53 µs and the epoch. */
const micros: fc.Arbitrary<bigint> = fc.oneof(
  fc.bigInt({ min: MIN_US, max: MAX_US }),
  fc.bigInt({ min: -SAFE - 5000n, max: -SAFE + 5000n }),
  fc.bigInt({ min: SAFE - 5000n, max: SAFE + 5000n }),
  fc.bigInt({ min: -5000n, max: 5000n }),
  fc.bigInt({ min: MIN_US, max: MIN_US + 5000n }),
  fc.bigInt({ min: MAX_US - 5000n, max: MAX_US }),
);

/** A civil date-time of years 1 to 9999, with day possibly past its month's end (invalid). */
const civil = fc.record({
  y: fc.oneof(fc.integer({ min: 1, max: 9999 }), fc.constantFrom(1, 99, 100, 1582, 1600, 1900, 1970, 2000, 2100, 9999)),
  m: fc.integer({ min: 1, max: 12 }),
  d: fc.integer({ min: 1, max: 31 }),
  h: fc.integer({ min: 0, max: 23 }),
  mi: fc.integer({ min: 0, max: 59 }),
  s: fc.integer({ min: 0, max: 59 }),
  fracDigits: fc.integer({ min: 0, max: 9 }),
  frac: fc.integer({ min: 0, max: 999_999_999 }),
  sep: fc.constantFrom(' ', 'T'),
});

describe('TIMESTAMP properties (fixed seed)', () => {
  it('the plain "YYYY-MM-DD HH:MM:SS[.f]" parser gives the civil reference, null for a day past its month, through its hour cache', () => {
    fc.assert(
      fc.property(fc.array(civil, { minLength: 1, maxLength: 6 }), (dates) => {
        // several in a row: the parser's hour cache holds the hour of the one before
        for (const c of dates) {
          const fracText = c.fracDigits === 0 ? '' : `.${pad(c.frac, 9).slice(0, c.fracDigits)}`;
          const text = `${pad(c.y, 4)}-${pad(c.m, 2)}-${pad(c.d, 2)}${c.sep}${pad(c.h, 2)}:${pad(c.mi, 2)}:${pad(c.s, 2)}${fracText}`;
          const want =
            c.d > daysInMonth(c.y, c.m)
              ? null
              : canonical(
                  BigInt(daysFromCivil(c.y, c.m, c.d)) * 86_400_000_000n +
                    BigInt(c.h * 3600 + c.mi * 60 + c.s) * 1_000_000n +
                    // a fraction is truncated to the microsecond
                    BigInt(Number(pad(c.frac, 9).slice(0, c.fracDigits).padEnd(9, '0').slice(0, 6))),
                );
          expect([text, parsePlainTimestamp(text)]).toEqual([text, want]);
          expect([text, parseTimestamp(text)]).toEqual([text, want]);
        }
      }),
      params,
    );
  });

  it('formatTimestamp writes ISO 8601 UTC that parseTimestamp reads back to the same instant, with 3 or 6 fraction digits', () => {
    fc.assert(
      fc.property(micros, (big) => {
        const us = canonical(big);
        const text = formatTimestamp(us);
        const subMs = ((big % 1000n) + 1000n) % 1000n;
        expect(text).toMatch(subMs === 0n ? /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        // the civil date of the instant's day, from the reference
        const day = Number((big - (((big % 86_400_000_000n) + 86_400_000_000n) % 86_400_000_000n)) / 86_400_000_000n);
        expect(text.slice(0, 10)).toBe(dateOfEpochDay(day));
        expect(parseTimestamp(text)).toEqual(us);
      }),
      params,
    );
  });

  it('floorMillis and ceilMillis are the floor and ceiling of µs / 1000, and µs <= W × 1000 exactly when ceilMillis(µs) <= W', () => {
    fc.assert(
      fc.property(micros, fc.integer({ min: -3000, max: 3000 }), (big, dw) => {
        const us = canonical(big);
        const floor = big >= 0n || big % 1000n === 0n ? big / 1000n : big / 1000n - 1n;
        const ceil = big <= 0n || big % 1000n === 0n ? big / 1000n : big / 1000n + 1n;
        expect(floorMillis(us)).toBe(Number(floor));
        expect(ceilMillis(us)).toBe(Number(ceil));
        const w = Number(floor) + dw;
        expect(ceilMillis(us) <= w).toBe(big <= BigInt(w) * 1000n);
      }),
      params,
    );
  });

  it('addMicros and subMicros are exact and give the one form (a number exactly when safe)', () => {
    fc.assert(
      fc.property(micros, micros, (a, b) => {
        const sum = addMicros(canonical(a), canonical(b));
        const diff = subMicros(canonical(a), canonical(b));
        expect(sum).toEqual(canonical(a + b));
        expect(diff).toEqual(canonical(a - b));
        expect(typeof sum === 'bigint').toBe(a + b > SAFE || a + b < -SAFE);
      }),
      params,
    );
  });
});

describe('DATE properties (fixed seed)', () => {
  it('parseDate takes exactly the days of years 1 to 9999; epochDayOf and dateOfEpochDay are the civil day count and its inverse', () => {
    fc.assert(
      fc.property(civil, ({ y, m, d }) => {
        const text = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
        const valid = d <= daysInMonth(y, m);
        expect([text, parseDate(text)]).toEqual([text, valid ? text : null]);
        if (!valid) return;
        const day = daysFromCivil(y, m, d);
        expect([text, epochDayOf(text)]).toEqual([text, day]);
        expect(dateOfEpochDay(day)).toBe(text);
      }),
      params,
    );
  });
});
