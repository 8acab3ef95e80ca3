/**
 * A stateful operator that would find two event-time columns is refused (Spark's
 * WatermarkSupport.findEventTimeColumn: "More than one event time columns are available"),
 * typically after a stream-stream join, whose output keeps both sides' watermarked columns.
 * Which operators look, and at which columns, worked by hand from Spark's operators: dropDuplicates
 * reads its input rows (less the columns the optimizer prunes: not a key and not read downstream),
 * an aggregation's state operators only the grouping keys (a window over a marked column is
 * marked), and only in append and update mode unless it is a session window; a projection or a
 * join never looks. Spark fails when the query runs; sluice refuses the plan.
 */
import { InvalidQueryError } from '../../lib/engine/errors';
import { count, sessionWindow, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { StatefulProcessor, type ProcessorRow } from '../../lib/engine/tws/api';

const impressions = () => readStream.format('json').schema('adId STRING, impressionTime TIMESTAMP').load().withWatermark('impressionTime', '0 seconds');
const clicks = () => readStream.format('json').schema('clickAdId STRING, clickTime TIMESTAMP').load().withWatermark('clickTime', '0 seconds');
const joined = () =>
  impressions().join(clicks(), { left: 'adId', right: 'clickAdId' }, 'inner', {
    timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-10 seconds', upper: '0 seconds' },
  });

const REFUSED = /^More than one event time columns are available\. Please ensure there is at most one event time column per stream\. event time columns: /;

describe('after a stream-stream join that keeps both event-time columns', () => {
  it('refuses dropDuplicates over every column, naming both columns and the fix', () => {
    const q = () => joined().dropDuplicates().writeStream.outputMode('append').plan();
    expect(q).toThrow(InvalidQueryError);
    expect(q).toThrow(REFUSED);
    expect(q).toThrow(
      /event time columns: \(impressionTime, clickTime\): dropDuplicates .*select or drop all but one of them before dropDuplicates, e\.g\. drop\("clickTime"\)/,
    );
  });

  it('refuses dropDuplicatesWithinWatermark on a key when the rows reach the sink with both columns', () => {
    expect(() => joined().dropDuplicatesWithinWatermark(['adId']).writeStream.outputMode('append').plan()).toThrow(
      /event time columns: \(impressionTime, clickTime\): dropDuplicatesWithinWatermark/,
    );
  });

  it('takes dropDuplicates when one column is selected away before it, or is no key and is dropped after it (Spark prunes it)', () => {
    expect(() => joined().select('adId', 'impressionTime').dropDuplicates().writeStream.outputMode('append').plan()).not.toThrow();
    expect(() => joined().dropDuplicates(['adId', 'impressionTime']).select('adId', 'impressionTime').writeStream.outputMode('append').plan()).not.toThrow();
    // a key is read by the dedup itself: not pruned
    expect(() => joined().dropDuplicates(['adId', 'clickTime']).select('adId', 'impressionTime').writeStream.outputMode('append').plan()).toThrow(REFUSED);
  });

  it('takes a window aggregation over one of them, and refuses one whose keys carry both', () => {
    expect(() => joined().groupBy(window('impressionTime', '10 seconds')).agg(count().as('n')).writeStream.outputMode('append').plan()).not.toThrow();
    expect(() => joined().groupBy(window('impressionTime', '10 seconds'), 'clickTime').agg(count().as('n')).writeStream.outputMode('append').plan()).toThrow(
      /event time columns: \(window\(impressionTime\), clickTime\): the aggregation .*group by one of them only/,
    );
  });

  it('takes a plain projection that keeps both', () => {
    expect(() => joined().select('adId', 'impressionTime', 'clickTime').writeStream.outputMode('append').plan()).not.toThrow();
  });
});

describe('a renamed copy of the event-time column is a second one (Spark: an alias keeps the watermark metadata)', () => {
  const copied = () => readStream.format('json').schema('k STRING, t TIMESTAMP').load().withWatermark('t', '0 seconds').selectExpr('k', 't', 't AS t2');

  it('refuses an aggregation keyed by both in update mode, not in complete mode (where Spark never evaluates the watermark)', () => {
    expect(() => copied().groupBy('t', 't2').agg(count().as('n')).writeStream.outputMode('update').plan()).toThrow(/event time columns: \(t, t2\)/);
    expect(() => copied().groupBy('t', 't2').agg(count().as('n')).writeStream.outputMode('complete').plan()).not.toThrow();
  });

  it('refuses a session window with the other as key in complete mode too (session windows drop late rows in every mode)', () => {
    expect(() => copied().groupBy(sessionWindow('t', '5 minutes'), 't2').agg(count().as('n')).writeStream.outputMode('complete').plan()).toThrow(
      /event time columns: \(session_window\(t\), t2\): the session-window aggregation/,
    );
    expect(() => copied().groupBy(sessionWindow('t', '5 minutes'), 'k').agg(count().as('n')).writeStream.outputMode('complete').plan()).not.toThrow();
  });
});

describe('transformWithState after the join', () => {
  class Noop extends StatefulProcessor<ProcessorRow, ProcessorRow, object> {
    init(): void {}
    handleInputRows(): Iterable<object> {
      return [];
    }
  }
  const tws = (timeMode: 'none' | 'processingTime') =>
    joined()
      .groupBy('adId')
      .transformWithState(Noop as never, { timeMode, outputSchema: 'adId STRING' })
      .writeStream.outputMode('append')
      .plan();

  it('is refused in every time mode (Spark evaluates the late-row predicate before it looks at the time mode)', () => {
    expect(() => tws('none')).toThrow(/event time columns: \(impressionTime, clickTime\): transformWithState/);
    expect(() => tws('processingTime')).toThrow(REFUSED);
  });
});
