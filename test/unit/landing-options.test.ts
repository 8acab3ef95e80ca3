/**
 * The landing source's readStream options (lib/aws/s3/landing-options.ts) as Spark's
 * FileStreamOptions reads them: maxFileAge through JavaUtils.timeStringAsMs, booleans through
 * Scala's toBoolean.
 */
import { landingOptionsFromSpec } from '../../lib/aws/s3/landing-options';

describe('maxFileAge: a whole number and an optional unit (timeStringAsMs)', () => {
  it.each([
    ['7d', 7 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    ['5min', 5 * 60_000],
    ['10s', 10_000],
    ['500ms', 500],
    ['2500us', 2],
    ['1000', 1000],
    [1000, 1000],
    ['0', 0],
    [' 1H ', 3_600_000],
  ])('%j is %d ms', (v, ms) => {
    expect(landingOptionsFromSpec({ maxFileAge: v })).toEqual({ maxFileAgeMs: ms });
  });

  it.each([['1.5h'], ['-1d'], ['7 days'], ['d'], [true]])('%j is refused', (v) => {
    expect(() => landingOptionsFromSpec({ maxFileAge: v })).toThrow(/option maxFileAge=.* must be a duration/);
  });
});

describe('boolean options: true or false in any case', () => {
  it('reads latestFirst, fileNameOnly and recursiveFileLookup', () => {
    expect(landingOptionsFromSpec({ latestFirst: 'TRUE', fileNameOnly: true, recursiveFileLookup: 'False' })).toEqual({
      latestFirst: true,
      fileNameOnly: true,
      recursiveFileLookup: false,
    });
    expect(() => landingOptionsFromSpec({ fileNameOnly: 'yes' })).toThrow(/option fileNameOnly="yes" must be true or false/);
  });
});

describe('maxFilesPerTrigger and maxBytesPerTrigger (the plan reads the limits)', () => {
  it("can't be both set on a file source, as in Spark (SPARK-46641); each alone is a limit", async () => {
    const { sourceLimits } = await import('../../lib/engine/plan/to-plan');
    const { parseSchema } = await import('../../lib/engine/schema');
    const files = (options: Record<string, number>) => ({ kind: 'files' as const, format: 'json' as const, schema: parseSchema('id INT'), options });
    expect(() => sourceLimits(files({ maxFilesPerTrigger: 1, maxBytesPerTrigger: 1000 }))).toThrow(
      /Options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be both set at the same time/,
    );
    expect(sourceLimits(files({ maxBytesPerTrigger: 1000 }))).toEqual({ maxBytesPerTrigger: 1000 });
    expect(sourceLimits(files({ maxFilesPerTrigger: 2 }))).toEqual({ maxFilesPerTrigger: 2 });
  });

  it("reads a limit given as text as Spark's toInt does: a sign and digits, nothing else", async () => {
    const { sourceLimits } = await import('../../lib/engine/plan/to-plan');
    const { parseSchema } = await import('../../lib/engine/schema');
    const files = (options: Record<string, string>) => ({ kind: 'files' as const, format: 'json' as const, schema: parseSchema('id INT'), options });
    expect(sourceLimits(files({ maxFilesPerTrigger: '05' }))).toEqual({ maxFilesPerTrigger: 5 });
    expect(sourceLimits(files({ maxBytesPerTrigger: '+1000' }))).toEqual({ maxBytesPerTrigger: 1000 });
    for (const bad of [' 5', '5 ', '1e3', '5.0', '0x10', '', '0', '-2'])
      expect(() => sourceLimits(files({ maxFilesPerTrigger: bad }))).toThrow(`option maxFilesPerTrigger=${JSON.stringify(bad)} must be a positive integer`);
  });
});

describe("option names in any case (Spark's options are a case-insensitive map)", () => {
  it('reads the landing options and the limits whatever their case; the exact name wins', async () => {
    expect(landingOptionsFromSpec({ LATESTFIRST: 'true', pathglobfilter: '*.json', MaxFileAge: '1h' })).toEqual({
      latestFirst: true,
      pathGlobFilter: '*.json',
      maxFileAgeMs: 3_600_000,
    });
    expect(landingOptionsFromSpec({ latestfirst: 'false', latestFirst: 'true' })).toEqual({ latestFirst: true });
    const { sourceLimits } = await import('../../lib/engine/plan/to-plan');
    const { parseSchema } = await import('../../lib/engine/schema');
    const files = (options: Record<string, number>) => ({ kind: 'files' as const, format: 'json' as const, schema: parseSchema('id INT'), options });
    expect(sourceLimits(files({ maxfilespertrigger: 2 }))).toEqual({ maxFilesPerTrigger: 2 });
    expect(() => sourceLimits(files({ MAXFILESPERTRIGGER: 1, maxbytespertrigger: 9 }))).toThrow(/can't be both set/);
  });
});
