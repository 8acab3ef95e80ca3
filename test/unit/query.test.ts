/** Spark's analysis and unsupported-operation rules, checked when a query is built. */
import { avg, count, sessionWindow, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { windowStarts } from '../../lib/engine/operators/windows';
import { InvalidQueryError } from '../../lib/engine/errors';

const events = () => readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE, n LONG').load();

describe('when a query is built', () => {
  it('refuses append mode on an aggregation without a watermark, naming the fix', () => {
    const build = () => events().groupBy(window('event_time', '10 minutes')).agg(count().as('c')).writeStream.outputMode('append').plan();
    expect(build).toThrow(InvalidQueryError);
    expect(build).toThrow(/Append output mode not supported.*withWatermark/);
  });

  it('refuses append mode when the watermark column is not a grouping key', () => {
    expect(() => events().withWatermark('event_time', '1 minute').groupBy('user').agg(count().as('c')).writeStream.outputMode('append').plan()).toThrow(
      /watermark is on event_time, which is not a grouping key/,
    );
  });

  it('refuses complete mode without an aggregation', () => {
    expect(() => events().writeStream.outputMode('complete').plan()).toThrow(/Complete output mode not supported/);
    expect(() => events().dropDuplicates(['user']).writeStream.outputMode('complete').plan()).toThrow(/Complete output mode/);
  });

  it('refuses a watermark on a column that is not a TIMESTAMP', () => {
    // The types refuse it too (test/types/query-types.ts); the runtime check is for untyped callers.
    // @ts-expect-error n is a LONG, not a TIMESTAMP
    expect(() => events().withWatermark('n', '1 minute')).toThrow(/event time must be a TIMESTAMP column, but n is LONG/);
  });

  it('refuses unknown columns and lists the known ones', () => {
    // @ts-expect-error nope is not a column
    expect(() => events().groupBy('nope').agg(count().as('c')).writeStream.outputMode('update').plan()).toThrow(
      /column "nope" does not exist; the columns are user, event_time, amount, n/,
    );
  });

  it('refuses two time windows in one groupBy', () => {
    expect(() =>
      events()
        .withWatermark('event_time', '1 minute')
        .groupBy(window('event_time', '1 minute'), sessionWindow('event_time', '1 minute'))
        .agg(count().as('c'))
        .writeStream.outputMode('update')
        .plan(),
    ).toThrow(/Multiple time\/session window expressions/);
  });

  it('refuses a slide longer than the window and a start time beyond the slide', () => {
    expect(() => window('event_time', '5 minutes', '10 minutes')).toThrow(/slide duration .* must be less than or equal to the window duration/);
    expect(() => window('event_time', '10 minutes', '5 minutes', '6 minutes')).toThrow(/start time .* must be less than the slide duration/);
  });

  it('refuses dropDuplicatesWithinWatermark without a watermark', () => {
    expect(() => events().dropDuplicatesWithinWatermark(['user']).writeStream.plan()).toThrow(/without a watermark/);
  });

  it('refuses duplicate output names', () => {
    expect(() => events().groupBy('user').agg(sum('amount').as('x'), avg('amount').as('x')).writeStream.outputMode('update').plan()).toThrow(/used twice/);
  });

  it('accepts the windowed-totals query and keeps the rate limits', () => {
    const plan = readStream
      .format('json')
      .schema('t TIMESTAMP')
      .option('maxFilesPerTrigger', 2)
      .load()
      .withWatermark('t', '10 minutes')
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('c'))
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .plan();
    expect(plan.limits).toEqual({ maxFilesPerTrigger: 2 });
    expect(plan.stateful?.kind).toBe('aggregate');
  });

  it('ignores rate limits for the deprecated trigger once, as Spark does', () => {
    const plan = readStream.format('json').schema('t TIMESTAMP').option('maxFilesPerTrigger', 2).load().writeStream.trigger({ once: true }).plan();
    expect(plan.trigger).toBe('once');
    expect(plan.limits).toEqual({});
  });

  it('refuses a processing-time trigger, pointing at the schedule', () => {
    expect(() => events().writeStream.trigger({ processingTime: '1 minute' })).toThrow(/availableNow/);
  });
});

describe('window assignment, as Spark computes it', () => {
  // times and window bounds are epoch µs
  const min = 60_000_000;
  it('puts a row in one tumbling window', () => {
    expect(windowStarts(12 * min + 5, window('t', '10 minutes') as never)).toEqual([10 * min]);
  });
  it('puts a row in every sliding window that covers it', () => {
    expect(windowStarts(12 * min, window('t', '10 minutes', '5 minutes') as never)).toEqual([5 * min, 10 * min]);
  });
  it('honours a start offset', () => {
    expect(windowStarts(12 * min, window('t', '10 minutes', undefined, '3 minutes') as never)).toEqual([3 * min]);
  });
  it('handles times before the epoch', () => {
    expect(windowStarts(-1, window('t', '10 minutes') as never)).toEqual([-10 * min]);
  });
  it('splits windows at the microsecond: [start, end) in µs', () => {
    const w = window('t', '10 seconds') as never;
    const at = 1_790_856_000_000_000; // 2026-10-01T12:00:00Z
    expect(windowStarts(at + 9_999_999, w)).toEqual([at]);
    expect(windowStarts(at + 10_000_000, w)).toEqual([at + 10_000_000]);
    expect(windowStarts(at + 5, window('t', '10 microseconds', '5 microseconds') as never)).toEqual([at, at + 5]);
  });
  it('assigns a bigint time (beyond 2^53 µs: after 2255) exactly, on the bigint path', () => {
    // 9999-12-31T23:59:59.999999Z
    const last = 253402300799999999n;
    expect(windowStarts(last, window('t', '10 seconds') as never)).toEqual([253402300790000000n]);
    expect(windowStarts(last, window('t', '10 microseconds', '5 microseconds') as never)).toEqual([253402300799999990n, 253402300799999995n]);
    // and a bigint before 1685: 0001-01-01T00:00:00.000001Z
    expect(windowStarts(-62135596799999999n, window('t', '1 second') as never)).toEqual([-62135596800000000n]);
  });
  it('gives a number, not a bigint, for a window bound that is a safe integer', () => {
    // just past 2^53 − 1 µs (2255-06-05T23:47:34.740991Z): the window starts before it, a number
    const starts = windowStarts(9007199254740993n, window('t', '1 hour') as never);
    expect(starts).toEqual([9007196400000000]);
    expect(typeof starts[0]).toBe('number');
  });
});
