import { inputTimestamp, timestampFromJson } from '../../lib/engine/timestamp-input';

describe("input TIMESTAMP text is read as Spark's DefaultTimestampFormatter reads it (CAST's stringToTimestamp)", () => {
  const at = (iso: string) => Date.parse(iso) * 1000;
  it('takes one-digit fields, zone ids after the seconds and an empty fraction', () => {
    expect(inputTimestamp('2026-1-5 1:2:3')).toBe(at('2026-01-05T01:02:03Z'));
    expect(inputTimestamp('2026-10-01T12:00:00+01')).toBe(at('2026-10-01T11:00:00Z'));
    expect(inputTimestamp('2026-10-01T12:00:00GMT+01:00')).toBe(at('2026-10-01T11:00:00Z'));
    expect(inputTimestamp('2026-10-01T12:00:00 Europe/Paris')).toBe(at('2026-10-01T10:00:00Z'));
    expect(inputTimestamp('2026-10-01T12:00:00.Z')).toBe(at('2026-10-01T12:00:00Z'));
    expect(inputTimestamp('2026-10-01 12:00:00.1234569')).toBe(at('2026-10-01T12:00:00Z') + 123456);
  });
  it('refuses a zone before the seconds', () => {
    expect(inputTimestamp('2026-10-01T12:00Z')).toBeNull();
    expect(inputTimestamp('2026-10-01T12Z')).toBeNull();
    expect(timestampFromJson('2026-10-01T12:00+01:00')).toBeNull();
  });
});
