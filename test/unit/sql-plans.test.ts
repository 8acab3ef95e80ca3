/**
 * A .sql query module and the TypeScript query written with the frame API build the same plan:
 * for each example in examples/*.sql, its TypeScript twin (examples/windowed-totals.ts, or the
 * calls written here, which docs/sql.md lists as the translation) and the compiled SQL are
 * compared as data: stage kinds, expression texts, keys, aggregates, source spec, options, limits,
 * output mode and name, with the functions and compiled closures left out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { windowedTotals } from '../../examples/windowed-totals';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { expr } from '../../lib/engine/query/column';
import { count, renamed, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { staticTable } from '../../lib/engine/query/static-table';
import { compileSql } from '../../lib/engine/sql';

const example = (name: string) => compileSql(readFileSync(join(__dirname, '..', '..', 'examples', name), 'utf8'));

/** The plan as plain data: functions and the compiled forms of expressions dropped. */
function structure(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(structure);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'function' || k === 'compiled' || k === 'test') continue;
    out[k] = structure(x);
  }
  return out;
}

function expectSamePlan(sql: QueryPlan, ts: QueryPlan): void {
  expect(structure(sql)).toEqual(structure(ts));
}

describe('a .sql example builds the plan of its TypeScript twin', () => {
  it('windowed-totals.sql is examples/windowed-totals.ts in append mode', () => {
    const plan = example('windowed-totals.sql');
    expectSamePlan(plan, windowedTotals({ outputMode: 'append' }));
    // not two empty plans: the window key and the aggregates are there
    expect(plan.stateful).toMatchObject({ kind: 'aggregate', keys: [{ kind: 'window', column: 'event_time' }] });
  });

  it('windowed-totals-update.sql is examples/windowed-totals.ts in update mode', () => {
    expectSamePlan(example('windowed-totals-update.sql'), windowedTotals({ outputMode: 'update' }));
    // and the modes differ, so the comparison can fail
    expect(structure(example('windowed-totals-update.sql'))).not.toEqual(structure(windowedTotals({ outputMode: 'append' })));
  });

  it('clean-events.sql (stateless: WHERE, expressions and explode) is filter(...).selectExpr(...)', () => {
    const ts = readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE, tags ARRAY<STRING>')
      .option('maxFilesPerTrigger', 5)
      .load()
      .filter('amount > 0 AND user IS NOT NULL')
      .selectExpr('user', 'event_time', 'CAST(amount * 100 AS BIGINT) AS cents', 'explode(tags) AS tag')
      .writeStream.outputMode('append')
      .trigger({ availableNow: true })
      .queryName('clean-events')
      .plan();
    const plan = example('clean-events.sql');
    expectSamePlan(plan, ts);
    expect(plan.limits).toEqual({ maxFilesPerTrigger: 5 });
    expect(plan.stages.map((s) => s.kind)).toEqual(['filterExpr', 'selectExpr']);
  });

  it('ad-clicks.sql (stream-stream LEFT OUTER JOIN with a time range) is join(clicks, keys, leftOuter, { timeRange, name })', () => {
    const impressions = readStream
      .format('json')
      .schema('adId STRING, impressionTime TIMESTAMP')
      .load('s3://my-bucket/impressions/')
      .withWatermark('impressionTime', '10 seconds');
    const clicks = readStream
      .format('json')
      .schema('clickAdId STRING, clickTime TIMESTAMP')
      .load('s3://my-bucket/clicks/')
      .withWatermark('clickTime', '20 seconds');
    const ts = impressions
      .join(clicks, { left: 'adId', right: 'clickAdId' }, 'leftOuter', {
        timeRange: { left: 'impressionTime', right: 'clickTime', lower: '-1 minute', upper: '0 seconds' },
        name: 'clicks',
      })
      .writeStream.outputMode('append')
      .queryName('ad-clicks')
      .plan();
    const plan = example('ad-clicks.sql');
    expectSamePlan(plan, ts);
    expect(plan.stateful).toMatchObject({ kind: 'streamJoin', type: 'leftOuter', timeRange: { lowerUs: -60_000_000, upperUs: 0 } });
  });
});

describe('other SQL forms build the frame API plan they stand for', () => {
  const EVENTS = "FROM STREAM read_files(format => 'json', schema => 'user STRING, event_time TIMESTAMP, amount DOUBLE, qty INT')";
  const events = () => readStream.format('json').schema('user STRING, event_time TIMESTAMP, amount DOUBLE, qty INT').load();

  it('the select list in another order than keys-then-aggregates, with aliases, adds a select of renamed columns', () => {
    const sql = compileSql(`SET outputMode = update;
SELECT sum(amount) AS total, user AS who, window(event_time, '10 minutes') AS w
${EVENTS} WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
WHERE amount > 0
GROUP BY window(event_time, '10 minutes'), user`);
    const ts = events()
      .withWatermark('event_time', '10 minutes')
      .filter('amount > 0')
      .groupBy(window('event_time', '10 minutes'), 'user')
      .agg(sum('amount').as('total'))
      .select(renamed('total', 'total'), renamed('user', 'who'), renamed('window', 'w'))
      .writeStream.outputMode('update')
      .queryName('query')
      .plan();
    expectSamePlan(sql, ts);
  });

  it('expressions as keys and aggregate inputs go through expr(...), the select order matching the aggregation', () => {
    const sql = compileSql(`SET outputMode = update;
SELECT lower(user) AS u, sum(amount * qty) AS revenue, count(*) ${EVENTS} GROUP BY lower(user)`);
    const ts = events()
      .groupBy(expr('lower(user)').as('u'))
      .agg(sum(expr('amount * qty')).as('revenue'), count())
      .writeStream.outputMode('update')
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.stages.map((s) => s.kind)).toEqual(['selectExpr']);
  });

  it('GROUP BY an ordinal or a select alias is GROUP BY the select item', () => {
    const byText = compileSql(`SET outputMode = update; SELECT upper(user) AS u, count(*) AS n ${EVENTS} GROUP BY upper(user)`);
    expectSamePlan(compileSql(`SET outputMode = update; SELECT upper(user) AS u, count(*) AS n ${EVENTS} GROUP BY 1`), byText);
    expectSamePlan(compileSql(`SET outputMode = update; SELECT upper(user) AS u, count(*) AS n ${EVENTS} GROUP BY u`), byText);
  });

  it("SET keys other than the writer's are reader options; SELECT DISTINCT is dropDuplicates", () => {
    const sql = compileSql(`SET maxBytesPerTrigger = 1048576; SET queryName = d; SELECT DISTINCT user, qty ${EVENTS}`);
    const ts = readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE, qty INT')
      .option('maxBytesPerTrigger', 1048576)
      .load()
      .selectExpr('user', 'qty')
      .dropDuplicates()
      .writeStream.queryName('d')
      .plan();
    expectSamePlan(sql, ts);
  });

  it('a Kinesis stream, and a stream-static join with USING', () => {
    const sql = compileSql(`SET queryName = k;
SELECT * FROM STREAM kinesis('events', schema => 'user STRING, amount DOUBLE')
JOIN read_files('s3://ref/users/', format => 'csv', schema => 'user STRING, country STRING') USING (user)`);
    const ts = readStream
      .format('json')
      .schema('user STRING, amount DOUBLE')
      .kinesis('events')
      .join(staticTable.s3('s3://ref/users/', { format: 'csv', schema: 'user STRING, country STRING' }), ['user'], 'inner')
      .writeStream.queryName('k')
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.source.kind).toBe('kinesis');
  });

  it("SET takes the writer's settings: trigger, lateRows, statePartitions, idleTimeout, multipleWatermarkPolicy", () => {
    const sql = compileSql(`SET outputMode = update;
SET trigger = once;
SET lateRows = 'dead-letter';
SET statePartitions = 4;
SET idleTimeout = '30 minutes';
SET multipleWatermarkPolicy = max;
SELECT window(event_time, '10 minutes') AS window, count(*) AS n
${EVENTS} WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
GROUP BY window(event_time, '10 minutes')`);
    const ts = events()
      .withWatermark('event_time', '10 minutes')
      .groupBy(window('event_time', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .trigger({ once: true })
      .lateRows('dead-letter')
      .option('statePartitions', 4)
      .option('idleTimeout', '30 minutes')
      .option('multipleWatermarkPolicy', 'max')
      .plan();
    expectSamePlan(sql, ts);
    expect(sql).toMatchObject({ trigger: 'once', lateRows: 'dead-letter', statePartitions: 4, idleTimeoutMs: 1_800_000, watermarkPolicy: 'max' });
  });

  it('a stream-static join with a DynamoDB table (dynamodb(name, key => ..., schema => ...)) and ON with two names', () => {
    const sql = compileSql(`SET queryName = enriched;
SELECT * FROM STREAM read_files(schema => 'userId STRING, amount DOUBLE') AS e
LEFT JOIN dynamodb('users', key => 'id', schema => 'id STRING, country STRING') AS u ON e.userId = u.id`);
    const ts = readStream
      .format('json')
      .schema('userId STRING, amount DOUBLE')
      .load()
      .join(staticTable.dynamodb('users', { key: 'id', schema: 'id STRING, country STRING' }), [{ left: 'userId', right: 'id' }], 'leftOuter')
      .writeStream.queryName('enriched')
      .plan();
    expectSamePlan(sql, ts);
  });
});
