import { partitionValues } from '../../lib/aws/s3/file-rules';
import { parseSchema } from '../../lib/engine/schema';
import {
  addMicros,
  ceilMillis,
  epochSecondsMicros,
  floorMillis,
  formatTimestamp,
  microsFromMillis,
  parseTimestamp,
  subMicros,
} from '../../lib/engine/timestamps';
import { timestampFromJson } from '../../lib/engine/timestamp-input';

describe('TIMESTAMP values are epoch microseconds, a number when safe and a bigint beyond', () => {
  it('formats 3 fraction digits, or 6 when there is a part below the millisecond', () => {
    const at = Date.UTC(2026, 9, 1, 12) * 1000;
    expect(formatTimestamp(at)).toBe('2026-10-01T12:00:00.000Z');
    expect(formatTimestamp(at + 500_000)).toBe('2026-10-01T12:00:00.500Z');
    expect(formatTimestamp(at + 9_999_999)).toBe('2026-10-01T12:00:09.999999Z');
    expect(formatTimestamp(at + 1)).toBe('2026-10-01T12:00:00.000001Z');
    expect(formatTimestamp(at + 1_010)).toBe('2026-10-01T12:00:00.001010Z');
    // before the epoch: the fraction counts forward from the second before
    expect(formatTimestamp(-1)).toBe('1969-12-31T23:59:59.999999Z');
    expect(formatTimestamp(-1000)).toBe('1969-12-31T23:59:59.999Z');
  });

  it('formats as Date prints the whole ms, whichever minutes come in turn (the text up to the minute is cached)', () => {
    // neighbouring minutes in turn, a third one, minute edges, before 1970, and the ends of Date's range
    const ms = [1790859589977, 1790859540000, 1790859599999, 1790859600000, 1790859589977, 1790859659999, 1790859540001, -1, -60_000, -60_001, 0, 59_999];
    for (let t = -62135596800000; t < 253402300800000; t += 77_777_777_777) ms.push(t, t + 61_001, t - 1);
    ms.push(8.64e15, -8.64e15);
    for (const t of ms) expect(formatTimestamp(BigInt(t) * 1000n)).toBe(new Date(t).toISOString());
    // past Date's range, Date's error, even right after a time of the same minute
    formatTimestamp(BigInt(8.64e15) * 1000n);
    expect(() => formatTimestamp(BigInt(8.64e15 + 1) * 1000n)).toThrow(RangeError);
  });

  it('formats and parses every year from 0001 to 9999, bigints beyond 2^53 µs', () => {
    for (const text of [
      '0001-01-01T00:00:00.000Z',
      '0001-01-01T00:00:00.000001Z',
      '1684-01-01T00:00:00.123456Z',
      '2300-06-30T12:34:56.789Z',
      '9999-12-31T23:59:59.999999Z',
    ]) {
      const us = parseTimestamp(text)!;
      expect(typeof us).toBe('bigint');
      expect(formatTimestamp(us)).toBe(text);
    }
    expect(parseTimestamp('9999-12-31T23:59:59.999999Z')).toBe(253402300799999999n);
    expect(parseTimestamp('0001-01-01 00:00:00')).toBe(-62135596800000000n);
    // an offset that moves the instant out of the range
    expect(parseTimestamp('9999-12-31T23:59:59-01:00')).toBeNull();
    expect(parseTimestamp('0001-01-01T00:00:00+01:00')).toBeNull();
  });

  it('keeps a safe integer a number: one form per value', () => {
    const us = parseTimestamp('2255-06-05 23:47:34.740991')!; // 2^53 − 1 µs
    expect(us).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseTimestamp('2255-06-05 23:47:34.740992')).toBe(9007199254740992n);
    expect(addMicros(9007199254740992n, -1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(addMicros(Number.MAX_SAFE_INTEGER, 1)).toBe(9007199254740992n);
    expect(subMicros(9007199254740992n, 1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(microsFromMillis(Date.UTC(2026, 9, 1))).toBe(Date.UTC(2026, 9, 1) * 1000);
    expect(microsFromMillis(Date.UTC(9999, 0, 1))).toBe(BigInt(Date.UTC(9999, 0, 1)) * 1000n);
  });

  it('truncates more than 6 fraction digits to the microsecond, as Spark does', () => {
    const base = Date.UTC(2026, 9, 1, 12) * 1000;
    expect(parseTimestamp('2026-10-01 12:00:00.9999999')).toBe(base + 999_999);
    expect(parseTimestamp('2026-10-01T12:00:00.000000999Z')).toBe(base);
    expect(parseTimestamp('2026-10-01 12:00:00.1234567890')).toBeNull();
  });

  it('reads a JSON number as epoch seconds, exactly from its digits', () => {
    expect(epochSecondsMicros(1.5)).toBe(1_500_000);
    expect(epochSecondsMicros(0.000001)).toBe(1);
    expect(epochSecondsMicros(-1.5)).toBe(-1_500_000);
    expect(epochSecondsMicros(1e-7)).toBe(0);
    expect(epochSecondsMicros(253402300799.5)).toBe(253402300799500000n);
    expect(epochSecondsMicros(253402300800)).toBeNull();
    expect(timestampFromJson(1790856000.000001)).toBe(1790856000000001);
    expect(timestampFromJson(true)).toBeNull();
  });

  it('truncates to ms by floor for a watermark, and rounds up for an eviction time, numbers and bigints alike', () => {
    expect(floorMillis(1_999)).toBe(1);
    expect(floorMillis(-1)).toBe(-1);
    expect(floorMillis(253402300799999999n)).toBe(253402300799999);
    expect(ceilMillis(1_001)).toBe(2);
    expect(ceilMillis(1_000)).toBe(1);
    expect(Object.is(ceilMillis(0), 0)).toBe(true);
    expect(ceilMillis(-1_999n)).toBe(-1);
  });

  it('reads a TIMESTAMP partition folder as epoch µs, as a column of the file', () => {
    expect(partitionValues(parseSchema('v INT, hour TIMESTAMP'), [['hour', '2026-10-01 12:00:00.000001']])).toEqual({
      values: [['hour', Date.UTC(2026, 9, 1, 12) * 1000 + 1]],
    });
  });
});
