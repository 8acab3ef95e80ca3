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
import { outputColumns } from '../../lib/engine/plan/chain';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { expr } from '../../lib/engine/query/column';
import { approxCountDistinct, avg, count, first, last, max, min, renamed, sessionWindow, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { staticTable } from '../../lib/engine/query/static-table';
import { compileSql } from '../../lib/engine/sql';
import { compileExpression } from '../../lib/engine/expr';
import { at, createTestRunner } from './engine-factories';
import { runPlanOnce } from '../helpers/run-plan';

const example = (name: string) => compileSql(readFileSync(join(__dirname, '..', '..', 'examples', name), 'utf8'));

/** The plan as plain data: functions and the compiled forms of expressions dropped. */
function structure(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(structure);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'function' || k === 'compiled' || k === 'test' || k === 'gates') continue;
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

  it("SET keys other than the writer's are reader options; SELECT DISTINCT is an aggregation by every column with no aggregate, as Spark makes it (ReplaceDistinctWithAggregate)", () => {
    const sql = compileSql(`SET maxBytesPerTrigger = 1048576; SET queryName = d; SET outputMode = update; SELECT DISTINCT user, qty ${EVENTS}`);
    const ts = readStream
      .format('json')
      .schema('user STRING, event_time TIMESTAMP, amount DOUBLE, qty INT')
      .option('maxBytesPerTrigger', 1048576)
      .load()
      .selectExpr('user', 'qty')
      .groupBy('user', 'qty')
      .agg()
      .writeStream.queryName('d')
      .outputMode('update')
      .plan();
    expectSamePlan(sql, ts);
    // so in append mode it needs a watermarked column among the distinct ones, as any aggregation
    expect(() => compileSql(`SELECT DISTINCT user, qty ${EVENTS}`)).toThrow(/Append output mode not supported when there are streaming aggregations/);
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
    // read_kinesis (Databricks SQL's name, streamName => as its argument) is the same source
    const named = compileSql(`SET queryName = k;
SELECT * FROM STREAM read_kinesis(streamName => 'events', schema => 'user STRING, amount DOUBLE')
JOIN read_files('s3://ref/users/', format => 'csv', schema => 'user STRING, country STRING') USING (user)`);
    expectSamePlan(named, ts);
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

  it('every aggregate, a sliding and a session window, keys matched in any case; an aggregate without an alias is named as Spark names it', () => {
    const cols = 'user STRING, event_time TIMESTAMP, amount DOUBLE';
    const sql = compileSql(`SET outputMode = update;
SELECT UPPER(user), window(event_time, '10 minutes', '5 minutes'), count(1), count(amount), sum(amount), avg(amount), mean(amount) AS m, min(amount),
  max(amount), first(amount), first_value(amount) AS fv, last(amount), last_value(amount) AS lv, approx_count_distinct(user)
FROM STREAM read_files(schema => '${cols}') WATERMARK event_time DELAY OF INTERVAL 10 MINUTES
GROUP BY upper(user), window(event_time, '10 minutes', '5 minutes')`);
    const ts = readStream
      .format('json')
      .schema(cols)
      .load()
      .withWatermark('event_time', '10 minutes')
      .groupBy(expr('upper(user)'), window('event_time', '10 minutes', '5 minutes'))
      .agg(
        count(),
        count('amount'),
        sum('amount'),
        avg('amount'),
        avg('amount').as('m'),
        min('amount'),
        max('amount'),
        first('amount'),
        first('amount').as('fv'),
        last('amount'),
        last('amount').as('lv'),
        approxCountDistinct('user'),
      )
      .writeStream.outputMode('update')
      .plan();
    expectSamePlan(sql, ts);
    const aggs = (sql.stateful as unknown as { aggs: Array<{ as: string }> }).aggs.map((a) => a.as);
    expect(aggs.slice(0, 3)).toEqual(['count(1)', 'count(amount)', 'sum(amount)']);
    const session = compileSql(`SET outputMode = append; SELECT session_window(event_time, '5 minutes') AS s, user, count(*) AS n
FROM STREAM read_files(schema => '${cols}') WATERMARK event_time DELAY OF INTERVAL 1 MINUTE GROUP BY session_window(event_time, '5 minutes'), user`);
    expectSamePlan(
      session,
      readStream
        .format('json')
        .schema(cols)
        .load()
        .withWatermark('event_time', '1 minute')
        .groupBy(sessionWindow('event_time', '5 minutes'), 'user')
        .agg(count().as('n'))
        .select(renamed('session_window', 's'), renamed('user', 'user'), renamed('n', 'n'))
        .writeStream.outputMode('append')
        .plan(),
    );
  });

  it.each([
    ['JOIN', 'inner'],
    ['INNER JOIN', 'inner'],
    ['LEFT JOIN', 'leftOuter'],
    ['RIGHT OUTER JOIN', 'rightOuter'],
    ['FULL JOIN', 'fullOuter'],
    ['FULL OUTER JOIN', 'fullOuter'],
    ['LEFT SEMI JOIN', 'leftSemi'],
  ])('two streams, %s: join type %s, a column of one side named alone in ON', (join, type) => {
    const sql = compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') WATERMARK t DELAY OF INTERVAL 1 MINUTE
${join} STREAM read_files(schema => 'k2 STRING, t2 TIMESTAMP') WATERMARK t2 DELAY OF INTERVAL 1 MINUTE
ON k = k2 AND t BETWEEN t2 - INTERVAL 30 SECONDS AND t2`);
    const left = readStream.format('json').schema('k STRING, t TIMESTAMP').load().withWatermark('t', '1 minute');
    const right = readStream.format('json').schema('k2 STRING, t2 TIMESTAMP').load().withWatermark('t2', '1 minute');
    const ts = left
      .join(right, [{ left: 'k', right: 'k2' }], type, { timeRange: { left: 't', right: 't2', lower: '-30 seconds', upper: '0 seconds' } })
      .writeStream.plan();
    expectSamePlan(sql, ts);
  });

  it('ON conjuncts beyond the keys and the range are the join condition, aliases written left./right.; the pushed one filters the right input', () => {
    const sql = compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP, amount DOUBLE') AS a WATERMARK t DELAY OF INTERVAL 1 MINUTE
LEFT JOIN STREAM read_files(schema => 'k2 STRING, t2 TIMESTAMP, status STRING, lim DOUBLE') AS b WATERMARK t2 DELAY OF INTERVAL 1 MINUTE
ON a.k = b.k2 AND b.status IN ('ok', 'new') AND a.t BETWEEN b.t2 - INTERVAL 30 SECONDS AND b.t2 AND a.amount > B.lim`);
    const left = readStream.format('json').schema('k STRING, t TIMESTAMP, amount DOUBLE').load().withWatermark('t', '1 minute');
    const right = readStream.format('json').schema('k2 STRING, t2 TIMESTAMP, status STRING, lim DOUBLE').load().withWatermark('t2', '1 minute');
    const ts = left
      .join(right, [{ left: 'k', right: 'k2' }], 'leftOuter', {
        name: 'b',
        timeRange: { left: 't', right: 't2', lower: '-30 seconds', upper: '0 seconds' },
        condition: "(right.status IN ('ok', 'new')) AND (left.amount > right.lim)",
      })
      .writeStream.plan();
    expectSamePlan(sql, ts);
    // a leftOuter join pushes the right-side conjunct into the right input, before its watermark
    const stages = sql.inputs![0].stages;
    const pushed = stages.findIndex((s) => s.kind === 'filterExpr' && s.text.includes('status'));
    expect(pushed).toBeGreaterThanOrEqual(0);
    expect(pushed).toBeLessThan(stages.findIndex((s) => s.kind === 'watermark'));
  });

  it('an ON conjunct with a qualifier that names neither side is refused, with its position', () => {
    expect(() =>
      compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') AS a WATERMARK t DELAY OF INTERVAL 1 MINUTE
JOIN STREAM read_files(schema => 'k2 STRING, t2 TIMESTAMP, s STRING') AS b WATERMARK t2 DELAY OF INTERVAL 1 MINUTE
ON a.k = b.k2 AND c.s = 'x'`),
    ).toThrow(/c\.s: c is not the alias of either side|UNRESOLVED_COLUMN/);
  });

  it('a static table: LEFT SEMI JOIN, and a CSV source with its options as read_files arguments', () => {
    const sql = compileSql(`SELECT * FROM STREAM read_files(format => 'csv', schema => 'k STRING, n INT', header => true, maxFilesPerTrigger => 10)
LEFT SEMI JOIN read_files('s3://ref/t/', schema => 'k STRING') USING (k)`);
    const ts = readStream
      .format('csv')
      .schema('k STRING, n INT')
      .option('header', true)
      .option('maxFilesPerTrigger', 10)
      .load()
      .join(staticTable.s3('s3://ref/t/', { format: 'json', schema: 'k STRING' }), ['k'], 'leftSemi')
      .writeStream.plan();
    expectSamePlan(sql, ts);
    expect(sql.limits).toEqual({ maxFilesPerTrigger: 10 });
  });

  it('a static table: LEFT ANTI JOIN (ANTI JOIN), the rows without a match; refused between two streams, as Spark refuses it', () => {
    const ts = readStream
      .format('json')
      .schema('k STRING, n INT')
      .load()
      .join(staticTable.s3('s3://ref/t/', { format: 'json', schema: 'k STRING' }), ['k'], 'leftAnti')
      .writeStream.plan();
    for (const j of ['LEFT ANTI JOIN', 'ANTI JOIN'])
      expectSamePlan(
        compileSql(`SELECT * FROM STREAM read_files(schema => 'k STRING, n INT') ${j} read_files('s3://ref/t/', schema => 'k STRING') USING (k)`),
        ts,
      );
    expect(() =>
      compileSql(
        `SELECT * FROM STREAM read_files('s3://in/a', schema => 'k STRING, n INT') AS a LEFT ANTI JOIN STREAM read_files('s3://in/b', schema => 'k STRING') AS b USING (k)`,
      ),
    ).toThrow(/^\[UNSUPPORTED_FEATURE\] Left anti joins with a streaming DataFrame\/Dataset on the right are not supported: join a static table/);
  });
});

describe('UNION ALL', () => {
  it("is union: each SELECT a frame, the later ones unioned onto the first, under the module's SETs", () => {
    const sql = compileSql(`SET maxFilesPerTrigger = 4;
SELECT id, amount FROM STREAM read_files('s3://in/orders', format => 'json', schema => 'id STRING, amount INT') WHERE amount > 0
UNION ALL
SELECT ref, value FROM STREAM read_files('s3://in/refunds', format => 'json', schema => 'ref STRING, value BIGINT')`);
    const refunds = readStream
      .format('json')
      .schema('ref STRING, value BIGINT')
      .option('maxFilesPerTrigger', 4)
      .load('s3://in/refunds')
      .selectExpr('ref', 'value');
    const ts = readStream
      .format('json')
      .schema('id STRING, amount INT')
      .option('maxFilesPerTrigger', 4)
      .load('s3://in/orders')
      .filter('amount > 0')
      .selectExpr('id', 'amount')
      .union(refunds)
      .writeStream.trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.inputs).toHaveLength(1);
    expect(sql.inputs![0].limits).toEqual({ maxFilesPerTrigger: 4 });
  });

  it('UNION without ALL (or UNION DISTINCT) is the union made distinct: an aggregation by every column, as Spark makes Distinct(Union)', () => {
    const src = (t: string) => `FROM STREAM read_files('s3://in/${t}', format => 'json', schema => 'k STRING')`;
    const b = () => readStream.format('json').schema('k STRING').load('s3://in/b').selectExpr('k');
    const union = () => readStream.format('json').schema('k STRING').load('s3://in/a').selectExpr('k').union(b());
    for (const word of ['UNION', 'UNION DISTINCT']) {
      const sql = compileSql(`SET outputMode = update; SELECT k ${src('a')} ${word} SELECT k ${src('b')}`);
      expectSamePlan(sql, union().groupBy('k').agg().writeStream.outputMode('update').trigger({ availableNow: true }).plan());
    }
    // an aggregation: append mode needs a watermarked column among the rows
    expect(() => compileSql(`SELECT k ${src('a')} UNION SELECT k ${src('b')}`)).toThrow(
      /Append output mode not supported when there are streaming aggregations/,
    );
    // only the last UNION may drop the ALL: a union may not follow the aggregation
    expect(() => compileSql(`SET outputMode = update; SELECT k ${src('a')} UNION SELECT k ${src('b')} UNION ALL SELECT k ${src('c')}`)).toThrow(
      /a UNION after a UNION without ALL/,
    );
  });

  it('refuses a SELECT that aggregates, at the UNION', () => {
    const src = (t: string) => `FROM STREAM read_files('s3://in/${t}', format => 'json', schema => 'k STRING')`;
    const grouped = `SELECT k, count(*) AS n ${src('a')} GROUP BY k UNION ALL SELECT k, 1 AS n ${src('b')}`;
    expect(() => compileSql(grouped)).toThrow(/UNION ALL of a SELECT with GROUP BY/);
  });
});

describe('subqueries in FROM and WITH', () => {
  const src = (t: string, schema: string) => `STREAM read_files('s3://in/${t}', format => 'json', schema => '${schema}')`;

  it('an aggregation over a UNION ALL in a subquery is union(...).groupBy(...)', () => {
    const sql = compileSql(`SET outputMode = update;
SELECT k, count(*) AS n FROM (
  SELECT k FROM ${src('a', 'k STRING, x INT')}
  UNION ALL
  SELECT k FROM ${src('b', 'k STRING')} WHERE k <> 'skip'
) AS both GROUP BY k`);
    const b = readStream.format('json').schema('k STRING').load('s3://in/b').filter("k <> 'skip'").selectExpr('k');
    const ts = readStream
      .format('json')
      .schema('k STRING, x INT')
      .load('s3://in/a')
      .selectExpr('k')
      .union(b)
      .groupBy('k')
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.inputs).toHaveLength(1);
  });

  it("chains stateful operators: a window aggregation over a subquery's window aggregation, with the WATERMARK inside", () => {
    const sql = compileSql(`SELECT window(w, '10 seconds') AS window, count(*) AS count, sum(n) AS sum FROM (
  SELECT window(eventTime, '5 seconds') AS w, count(*) AS n FROM ${src('e', 'value BIGINT, eventTime TIMESTAMP')}
    WATERMARK eventTime DELAY OF INTERVAL 0 SECONDS
  GROUP BY window(eventTime, '5 seconds')
) GROUP BY window(w, '10 seconds')`);
    const ts = readStream
      .format('json')
      .schema('value BIGINT, eventTime TIMESTAMP')
      .load('s3://in/e')
      .withWatermark('eventTime', '0 seconds')
      .groupBy(window('eventTime', '5 seconds'))
      .agg(count().as('n'))
      .select(renamed('window', 'w'), 'n')
      .groupBy(window('w', '10 seconds'))
      .agg(count().as('count'), sum('n').as('sum'))
      .writeStream.trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.operators.map((o) => o.spec.kind)).toEqual(['aggregate', 'aggregate']);
  });

  it('a WITH query is its subquery where a FROM names it; a WATERMARK may follow a subquery', () => {
    const sql = compileSql(`WITH clean AS (SELECT user, t FROM ${src('e', 'user STRING, t TIMESTAMP, amount DOUBLE')} WHERE amount > 0)
SELECT user, count(*) AS n FROM clean WATERMARK t DELAY OF INTERVAL 1 MINUTE GROUP BY user, window(t, '1 minute')`);
    const ts = readStream
      .format('json')
      .schema('user STRING, t TIMESTAMP, amount DOUBLE')
      .load('s3://in/e')
      .filter('amount > 0')
      .selectExpr('user', 't')
      .withWatermark('t', '1 minute')
      .groupBy('user', window('t', '1 minute'))
      .agg(count().as('n'))
      .select('user', 'n')
      .writeStream.trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
  });

  it("joins a WITH query as the subquery written in place, its name the join's input name and its columns' qualifier", () => {
    const clicks = `SELECT clickAdId, clickTime FROM ${src('c', 'clickAdId STRING, clickTime TIMESTAMP, junk STRING')} WATERMARK clickTime DELAY OF INTERVAL 20 SECONDS`;
    const main = (
      joinTo: string,
    ) => `SELECT i.adId, clicks.clickTime FROM ${src('i', 'adId STRING, impressionTime TIMESTAMP')} AS i WATERMARK impressionTime DELAY OF INTERVAL 10 SECONDS
LEFT JOIN ${joinTo} ON i.adId = clicks.clickAdId AND i.impressionTime BETWEEN clicks.clickTime - INTERVAL 1 MINUTE AND clicks.clickTime`;
    const withQuery = compileSql(`WITH clicks AS (${clicks})\n${main('clicks')}`);
    expectSamePlan(withQuery, compileSql(main(`(${clicks}) AS clicks`)));
    expect(withQuery.inputs!.map((i) => i.name)).toEqual(['clicks']);
  });

  it('takes DISTRIBUTE BY, which changes no row (Spark repartitions by it), once its expressions resolve', () => {
    const plain = compileSql(`SELECT k, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0`);
    expectSamePlan(compileSql(`SELECT k, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0 DISTRIBUTE BY k, a % 4`), plain);
    expect(() => compileSql(`SELECT k FROM ${src('a', 'k STRING, a INT')} DISTRIBUTE BY nope`)).toThrow(
      /^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*`nope`.*\(line 1, column \d+\)$/,
    );
  });

  it("takes DISTRIBUTE BY inside a subquery or a WITH query, checked over the subquery's columns, not the outer SELECT's", () => {
    const update = 'SET outputMode = update; ';
    const inner = `SELECT k, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0`;
    const plain = compileSql(`${update}SELECT k, sum(a) AS total FROM (${inner}) GROUP BY k`);
    expectSamePlan(compileSql(`${update}SELECT k, sum(a) AS total FROM (${inner} DISTRIBUTE BY k) GROUP BY k`), plain);
    expectSamePlan(compileSql(`${update}WITH s AS (${inner} DISTRIBUTE BY a % 4, k) SELECT k, sum(a) AS total FROM s GROUP BY k`), plain);
    // `total` is the outer SELECT's: inside the subquery it does not resolve
    const bad = `${update}SELECT k, sum(a) AS total FROM (${inner} DISTRIBUTE BY total) GROUP BY k`;
    expect(() => compileSql(bad)).toThrow(/^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*`total`.*\(line 1, column (\d+)\)$/);
    expect(() => compileSql(bad)).toThrow(`(line 1, column ${bad.indexOf('total)') + 1})`);
  });

  it("refuses what Spark's checker refuses on a stream, with its class and the fix: a window function, OFFSET, TABLESAMPLE, PIVOT, a subquery in an expression", () => {
    for (const item of ['row_number() OVER (PARTITION BY k ORDER BY k)', 'sum(a) over (partition by k)', 'lag(a, 1) OVER (ORDER BY a) AS prev'])
      expect(() => compileSql(`SELECT k, ${item} FROM ${src('a', 'k STRING, a INT')}`)).toThrow(
        /^\[NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING\] Window function is not supported in "(row_number\(\)|sum\(a\)|lag\(a, 1\))" on streaming DataFrames\/Datasets\. .*group by window\(.*\(line 1, column \d+\)$/,
      );
    // a named window: OVER w is a window function too; a WINDOW clause no item uses is dropped, as Spark's analyzer drops it
    expect(() => compileSql(`SELECT k, sum(a) OVER w AS total FROM ${src('a', 'k STRING, a INT')} WINDOW w AS (PARTITION BY k ORDER BY a)`)).toThrow(
      /^\[NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING\] Window function is not supported in "sum\(a\)" on streaming DataFrames\/Datasets\. .*\(line 1, column 18\)$/,
    );
    expectSamePlan(
      compileSql(`SELECT k, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0 WINDOW w1 AS (PARTITION BY k ORDER BY (a + 1) DESC), w2 AS w1`),
      compileSql(`SELECT k, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0`),
    );
    expect(() => compileSql(`SELECT k FROM ${src('a', 'k STRING, a INT')} WINDOW w AS (PARTITION BY k`)).toThrow(
      /^\[PARSE_SYNTAX_ERROR\] .*expected '\)' to close the window specification opened at line 1, column \d+/,
    );
    // a column or an alias named over is still a name
    expect(() => compileSql(`SELECT k AS over, a FROM ${src('a', 'k STRING, a INT')} WHERE a > 0`)).not.toThrow();
    for (const tail of ['LIMIT 10 OFFSET 5', 'OFFSET 5'])
      expect(() => compileSql(`SELECT k FROM ${src('a', 'k STRING')} ${tail}`)).toThrow(
        /^\[UNSUPPORTED_FEATURE\] Offset is not supported on streaming DataFrames\/Datasets \(OFFSET\)/,
      );
    expect(() => compileSql(`SELECT * FROM ${src('a', 'k STRING, a INT')} PIVOT (sum(a) FOR k IN ('x', 'y'))`)).toThrow(
      /^\[UNSUPPORTED_FEATURE\] PIVOT is not supported: .*sum\(CASE WHEN k = 'x' THEN v END\) AS x/,
    );
    for (const [where, form] of [
      ['k IN (SELECT k FROM t)', 'IN \\(SELECT \\.\\.\\.\\)'],
      ['k NOT IN (SELECT k FROM t)', 'NOT IN \\(SELECT'],
      ['EXISTS (SELECT 1)', 'EXISTS \\(SELECT'],
    ])
      expect(() => compileSql(`SELECT k FROM ${src('a', 'k STRING')} WHERE ${where}`)).toThrow(
        new RegExp(`^\\[UNSUPPORTED_FEATURE\\] a subquery in an expression \\(${form}.*LEFT SEMI JOIN`),
      );
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')}) TABLESAMPLE (10 PERCENT)`)).toThrow(
      /^\[UNSUPPORTED_FEATURE\] Sampling is not supported on streaming DataFrames\/Datasets \(TABLESAMPLE\): .*pmod\(hash\(k\), 10\) = 0/,
    );
  });

  it('refuses ORDER BY, SORT BY, CLUSTER BY or LIMIT inside a subquery, a WITH name given twice, and an unclosed subquery', () => {
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')} ORDER BY k)`)).toThrow(/ORDER BY in a subquery/);
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')} LIMIT 3)`)).toThrow(/LIMIT in a subquery/);
    // a sort of each partition is a sort too (Spark's checker refuses any Sort of a stream before a complete-mode aggregation)
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')} SORT BY k)`)).toThrow(/SORT BY in a subquery: .*write ORDER BY/);
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')} DISTRIBUTE BY k SORT BY k)`)).toThrow(/SORT BY in a subquery/);
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')} CLUSTER BY k)`)).toThrow(
      /CLUSTER BY in a subquery: .*write DISTRIBUTE BY in the subquery and ORDER BY at the end/,
    );
    expect(() => compileSql(`WITH a AS (SELECT k FROM ${src('a', 'k STRING')}), A AS (SELECT k FROM ${src('b', 'k STRING')}) SELECT * FROM a`)).toThrow(
      /A is already a WITH query/,
    );
    expect(() => compileSql(`SELECT * FROM (SELECT k FROM ${src('a', 'k STRING')}`)).toThrow(/'\)' to close the subquery opened at line 1, column 15/);
    // an aggregating branch of a union: the message says to aggregate the union in a subquery
    expect(() => compileSql(`SELECT k, count(*) AS n FROM ${src('a', 'k STRING')} GROUP BY k UNION ALL SELECT k, 1 AS n FROM ${src('b', 'k STRING')}`)).toThrow(
      /aggregate the union in a subquery/,
    );
  });
});

describe('columns qualified by an alias', () => {
  const plain = (text: string) => text.replace(/\b[eic]\.(?=[a-zA-Z*])/g, '');

  it.each([
    [
      'a select list, WHERE, GROUP BY and HAVING',
      `SET outputMode = update;
SELECT e.user, upper(e.user) AS u, count(*) AS n, sum(e.amount * 2) FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') AS e
WHERE e.amount > 0 GROUP BY e.user HAVING sum(e.amount) > 1`,
    ],
    [
      'a lambda and a CASE',
      `SELECT transform(e.tags, x -> upper(x)) AS t, CASE WHEN e.amount > 1 THEN e.user END AS w FROM STREAM read_files(schema => 'user STRING, amount DOUBLE, tags ARRAY<STRING>') AS e`,
    ],
    [
      "an aggregate's FILTER and WITHIN GROUP",
      `SET outputMode = update;
SELECT e.k, listagg(e.v) WITHIN GROUP (ORDER BY e.v DESC) AS l, count(*) FILTER (WHERE e.v > 'a') AS n FROM STREAM read_files(schema => 'k STRING, v STRING') AS e GROUP BY e.k`,
    ],
    ['alias.* of the only relation', `SELECT e.*, 1 AS one FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') e`],
    [
      'ORDER BY',
      `SET outputMode = complete;
SELECT e.user, count(*) AS n FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') AS e GROUP BY e.user ORDER BY e.user DESC`,
    ],
    [
      'both sides of a stream-stream join',
      `SELECT i.adId, c.clickTime, i.impressionTime FROM STREAM read_files(schema => 'adId STRING, impressionTime TIMESTAMP') AS i WATERMARK impressionTime DELAY OF INTERVAL 10 SECONDS
JOIN STREAM read_files(schema => 'clickAdId STRING, clickTime TIMESTAMP') AS c WATERMARK clickTime DELAY OF INTERVAL 20 SECONDS
ON i.adId = c.clickAdId AND i.impressionTime BETWEEN c.clickTime - INTERVAL 1 MINUTE AND c.clickTime`,
    ],
  ])('in %s is the column itself: the plan of the statement written without the aliases', (_, text) => {
    const bare = plain(text);
    // the ON condition keeps its qualifiers: the comparison is with the select list's and clauses' only
    const withOn = bare.replace(
      /ON adId = clickAdId AND impressionTime BETWEEN clickTime - INTERVAL 1 MINUTE AND clickTime/,
      'ON i.adId = c.clickAdId AND i.impressionTime BETWEEN c.clickTime - INTERVAL 1 MINUTE AND c.clickTime',
    );
    expect(withOn).not.toEqual(text);
    expectSamePlan(compileSql(text), compileSql(withOn));
  });

  it("names an output column without the qualifier, as Spark does, and refuses a column its alias's relation lacks, at its place", () => {
    const plan = compileSql(`SELECT e.amount * 2, upper(e.user) FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') AS e`);
    expect(plan.stages.at(-1)).toMatchObject({ kind: 'selectExpr' });
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['(amount * 2)', 'upper(user)']);
    const wrongSide = `SELECT i.clickTime
FROM STREAM read_files(schema => 'adId STRING') AS i JOIN read_files('s3://ref/t/', schema => 'id STRING, clickTime TIMESTAMP') AS c ON i.adId = c.id`;
    expect(() => compileSql(wrongSide)).toThrow(/UNRESOLVED_COLUMN.*`i`\.`clickTime` cannot be resolved: i has the columns `adId` \(line 1, column 8\)/);
    // an error found in the statement without qualifiers points into the statement as written: AND is at column 25 there
    expect(() => compileSql(`SELECT e.user, e.amount AND true FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') AS e`)).toThrow(
      /DATATYPE_MISMATCH.*\(line 1, column 25\)$/,
    );
    // and an error of the frame API too: append mode without a watermark, at the GROUP BY key, e.user (column 102)
    expect(() => compileSql(`SELECT e.user, count(*) FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') AS e GROUP BY e.user`)).toThrow(
      /without watermark.*\(line 1, column 102\)$/,
    );
  });
});

describe('alias.* beside a JOIN or LATERAL VIEW', () => {
  const I = "STREAM read_files(schema => 'adId STRING, impressionTime TIMESTAMP') AS i WATERMARK impressionTime DELAY OF INTERVAL 10 SECONDS";
  const C = "STREAM read_files(schema => 'clickAdId STRING, clickTime TIMESTAMP, `odd name` INT') AS c WATERMARK clickTime DELAY OF INTERVAL 20 SECONDS";
  const ON = 'ON i.adId = c.clickAdId AND i.impressionTime BETWEEN c.clickTime - INTERVAL 1 MINUTE AND c.clickTime';

  it.each([
    [
      "one side's star and the other's column",
      `SELECT c.*, i.adId FROM ${I} JOIN ${C} ${ON}`,
      `SELECT clickAdId, clickTime, \`odd name\`, adId FROM ${I} JOIN ${C} ${ON}`,
    ],
    [
      'both stars, right side first',
      `SELECT c.*, i.* FROM ${I} LEFT OUTER JOIN ${C} ${ON}`,
      `SELECT clickAdId, clickTime, \`odd name\`, adId, impressionTime FROM ${I} LEFT OUTER JOIN ${C} ${ON}`,
    ],
    [
      'a star inside struct()',
      `SELECT to_json(struct(i.*)) AS j FROM ${I} JOIN ${C} ${ON}`,
      `SELECT to_json(struct(adId, impressionTime)) AS j FROM ${I} JOIN ${C} ${ON}`,
    ],
    [
      "a static table's star",
      "SELECT e.*, r.name FROM STREAM read_files(schema => 'id STRING, amount DOUBLE') AS e JOIN read_files('s3://ref/t/', schema => 'rid STRING, name STRING') AS r ON e.id = r.rid",
      "SELECT id, amount, name FROM STREAM read_files(schema => 'id STRING, amount DOUBLE') AS e JOIN read_files('s3://ref/t/', schema => 'rid STRING, name STRING') AS r ON e.id = r.rid",
    ],
    [
      "a LATERAL VIEW's named columns",
      "SELECT e.user, t.* FROM STREAM read_files(schema => 'user STRING, tags ARRAY<STRING>') AS e LATERAL VIEW posexplode(tags) t AS p, tag",
      "SELECT user, p, tag FROM STREAM read_files(schema => 'user STRING, tags ARRAY<STRING>') AS e LATERAL VIEW posexplode(tags) t AS p, tag",
    ],
  ])('%s is the columns of that relation, in order: the plan of the statement with them listed', (_, star, listed) => {
    expectSamePlan(compileSql(star), compileSql(listed));
  });

  it("is refused where the relation's columns are not its own: an outer join's USING key, a LATERAL VIEW without column names", () => {
    const A = "STREAM read_files(schema => 'k STRING, t TIMESTAMP') AS a WATERMARK t DELAY OF INTERVAL 10 SECONDS";
    const B = "STREAM read_files(schema => 'k STRING, u TIMESTAMP') AS b WATERMARK u DELAY OF INTERVAL 10 SECONDS";
    const outer = `SELECT b.* FROM ${A} LEFT OUTER JOIN ${B} USING (k)`;
    expect(() => compileSql(outer)).toThrow(/UNSUPPORTED_FEATURE.*b\.\* of a relation holding an outer join's USING key.*\(line 1, column 8\)/);
    expect(() => compileSql("SELECT t.* FROM STREAM read_files(schema => 'tags ARRAY<STRING>') AS e LATERAL VIEW explode(tags) t")).toThrow(
      /t\.\* of a relation holding an outer join's USING key \(one output column, not that side's own\), or of a LATERAL VIEW without column names/,
    );
  });

  it("places an error about one of the star's columns at the star", () => {
    // the aggregation's MISSING_AGGREGATION names a column of c.*, which starts at column 8
    expect(() => compileSql(`SET outputMode = update;\nSELECT c.*, count(*) AS n FROM ${I} JOIN ${C} ${ON}`)).toThrow(/\(line 2, column 8\)/);
  });
});

describe('GROUP BY ALL', () => {
  const S = "STREAM read_files(schema => 'user STRING, t TIMESTAMP, amount DOUBLE') WATERMARK t DELAY OF INTERVAL 1 MINUTE";

  it('groups by every select item without an aggregate, as the same GROUP BY written out', () => {
    const items = "window(t, '10 minutes') AS w, upper(user) AS u, count(*) AS n, sum(amount)";
    expectSamePlan(compileSql(`SELECT ${items} FROM ${S} GROUP BY ALL`), compileSql(`SELECT ${items} FROM ${S} GROUP BY window(t, '10 minutes'), upper(user)`));
    // every item an aggregate: one group of every row
    const global = compileSql(`SET outputMode = complete;\nSELECT count(*) AS n FROM ${S} GROUP BY ALL`);
    expect(global.operators[0].spec).toMatchObject({ kind: 'aggregate', keys: [] });
    // a column named all is still a column
    expect(
      compileSql(`SET outputMode = update;\nSELECT \`all\`, count(*) AS n FROM STREAM read_files(schema => '\`all\` STRING') GROUP BY \`all\``).operators[0]
        .spec,
    ).toMatchObject({
      keys: [{ kind: 'column', name: 'all' }],
    });
  });

  it('places an error after a qualified key where it is written (the key is found once, as a select item)', () => {
    // e.amount starts at column 127 of line 2
    expect(() =>
      compileSql(
        `SET outputMode = update;\nSELECT upper(e.user) AS u, count(*) AS n FROM STREAM read_files(schema => 'user STRING, amount DOUBLE') e GROUP BY ALL HAVING e.amount AND true`,
      ),
    ).toThrow(/MISSING_AGGREGATION.*\(line 2, column 127\)/);
  });

  it('is the column all when the input has one, as Spark resolves a column first', () => {
    const withAll = "STREAM read_files(schema => '`all` STRING, user STRING')";
    const plan = compileSql(`SET outputMode = update;\nSELECT \`all\`, count(*) AS n FROM ${withAll} GROUP BY all`);
    expect(plan.operators[0].spec).toMatchObject({ keys: [{ kind: 'column', name: 'all' }] });
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['all', 'n']);
    // so user, which GROUP BY ALL would have made a key, is not grouped on
    expect(() => compileSql(`SET outputMode = update;\nSELECT user, count(*) AS n FROM ${withAll} GROUP BY ALL`)).toThrow(/MISSING_AGGREGATION.*"user"/);
  });
});

describe('window_time', () => {
  it("chains a window aggregation over another's window_time in SQL, as the frame API's window over the window column", async () => {
    const SRC = "STREAM read_files(format => 'json', schema => 't TIMESTAMP, k STRING') WATERMARK t DELAY OF INTERVAL 0 SECONDS";
    const sql = compileSql(`SELECT window(window_time(w), '1 hour') AS hour, sum(n) AS n FROM (
  SELECT window(t, '10 minutes') AS w, count(*) AS n FROM ${SRC} GROUP BY window(t, '10 minutes')
) GROUP BY window(window_time(w), '1 hour')`);
    const ts = readStream
      .format('json')
      .schema('t TIMESTAMP, k STRING')
      .load()
      .withWatermark('t', '0 seconds')
      .groupBy(window('t', '10 minutes'))
      .agg(count().as('n'))
      .select(renamed('window', 'w'), 'n')
      .groupBy(window('w', '1 hour'))
      .agg(sum('n').as('n'))
      .select(renamed('window', 'hour'), 'n')
      .writeStream.plan();
    const emitted = async (plan: QueryPlan) => {
      const r = createTestRunner(plan);
      const out: unknown[] = [];
      for (const rows of [[{ t: at('12:01') }, { t: at('12:05') }, { t: at('12:15') }, { t: at('12:31') }], [{ t: at('13:30') }], [{ t: at('15:00') }]]) {
        r.drop(rows);
        out.push(...(await r.run()).batches.flatMap((b) => b.rows));
      }
      return out;
    };
    const hour = (h: number) => ({ start: `2026-10-01T${h}:00:00.000Z`, end: `2026-10-01T${h + 1}:00:00.000Z` });
    // the 10-minute windows 12:00 (2 rows), 12:10 (1) and 12:30 (1) summed in the hour 12:00-13:00,
    // then 13:30's in 13:00-14:00, each emitted once the watermark (13:30, then 15:00) passes its hour
    const expected = [
      { hour: hour(12), n: 4 },
      { hour: hour(13), n: 1 },
    ];
    expect(await emitted(sql)).toEqual(expected);
    expect(await emitted(ts)).toEqual(expected);
  });

  it("keeps the window's watermark in the frame API's selectExpr and withColumn too: the second aggregation may run in append mode", () => {
    const counted = () =>
      readStream.format('json').schema('t TIMESTAMP, k STRING').load().withWatermark('t', '0 seconds').groupBy(window('t', '10 minutes')).agg(count().as('n'));
    const viaSelect = counted().selectExpr('window_time(window) AS wt', 'n');
    // (the typed frame knows wt only as an expression's column: the untyped view groups by it)
    const viaColumn = counted().withColumn('wt', expr('window_time(window)')) as unknown as typeof viaSelect;
    const plans = [
      viaSelect.groupBy(window('wt', '1 hour')).agg(sum('n').as('n')).writeStream.outputMode('append').plan(),
      viaColumn.groupBy(window('wt', '1 hour')).agg(sum('n').as('n')).writeStream.outputMode('append').plan(),
    ];
    for (const plan of plans) expect(plan.operators.map((o) => o.spec.kind)).toEqual(['aggregate', 'aggregate']);
    // a computed TIMESTAMP that is not window_time carries no watermark: Spark refuses the append
    expect(() =>
      counted().selectExpr('window.end AS wt', 'n').groupBy(window('wt', '1 hour')).agg(sum('n').as('n')).writeStream.outputMode('append').plan(),
    ).toThrow(/without watermark/);
  });

  it('is the window end less a microsecond, and needs a window column', () => {
    const cols = [
      { name: 'w', type: 'TIMESTAMP' as const, window: true },
      { name: 't', type: 'TIMESTAMP' as const },
    ];
    expect(compileExpression('window_time(w)', cols).evaluate({ w: { start: 1_000_000, end: 601_000_000 } })).toBe(600_999_999);
    expect(() => compileExpression('window_time(t)', cols)).toThrow(/window_time takes a window column/);
  });
});

describe('LATERAL VIEW', () => {
  const S = "STREAM read_files('s3://in/e', format => 'json', schema => 'user STRING, tags ARRAY<STRING>, m MAP<STRING, INT>')";
  const base = () => readStream.format('json').schema('user STRING, tags ARRAY<STRING>, m MAP<STRING, INT>').load('s3://in/e');

  it("is selectExpr('*', generator AS columns) before WHERE, the OUTER form for OUTER, one after another", () => {
    const sql = compileSql(`SELECT user, t.tag, k FROM ${S} LATERAL VIEW explode(tags) t AS tag LATERAL VIEW OUTER explode(map_keys(m)) u k WHERE tag <> 'x'`);
    const ts = base()
      .selectExpr('*', 'explode(tags) AS `tag`')
      .selectExpr('*', 'explode_outer(map_keys(m)) AS `k`')
      .filter("tag <> 'x'")
      .selectExpr('user', 'tag', 'k')
      .writeStream.trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    const pos = compileSql(`SELECT * FROM ${S} LATERAL VIEW posexplode(tags) t AS p, tag`);
    expectSamePlan(pos, base().selectExpr('*', 'posexplode(tags) AS (`p`, `tag`)').writeStream.trigger({ availableNow: true }).plan());
  });

  it('gives each input row its generated rows, a null row for an empty array with OUTER, and refuses another generator', async () => {
    const rows = [
      { user: 'a', tags: ['x', 'y'], m: {} },
      { user: 'b', tags: [], m: {} },
    ];
    const run = async (text: string) => (await runPlanOnce(compileSql(text), rows)).rows;
    expect(await run(`SELECT user, p, tag FROM ${S} LATERAL VIEW posexplode(tags) t AS p, tag`)).toEqual([
      { user: 'a', p: 0, tag: 'x' },
      { user: 'a', p: 1, tag: 'y' },
    ]);
    expect(await run(`SELECT user, tag FROM ${S} LATERAL VIEW OUTER explode(tags) t AS tag`)).toEqual([
      { user: 'a', tag: 'x' },
      { user: 'a', tag: 'y' },
      { user: 'b', tag: null },
    ]);
    const orders = "STREAM read_files(schema => 'id STRING, lines ARRAY<STRUCT<sku: STRING, qty: INT>>')";
    expect(
      (
        await runPlanOnce(compileSql(`SELECT id, l.sku, qty FROM ${orders} LATERAL VIEW inline(lines) l WHERE qty > 1`), [
          { id: 'o1', lines: [{ sku: 'A', qty: 2 }, null, { sku: 'B', qty: 1 }] },
          { id: 'o2', lines: [{ sku: 'C', qty: 3 }] },
        ])
      ).rows,
    ).toEqual([
      { id: 'o1', sku: 'A', qty: 2 },
      { id: 'o2', sku: 'C', qty: 3 },
    ]);
    expect(() => compileSql(`SELECT * FROM ${S} LATERAL VIEW json_tuple(user, 'a') t AS a`)).toThrow(/the generator is explode or posexplode/);
    expect(() => compileSql(`SELECT * FROM ${S} LATERAL explode(tags) t`)).toThrow(/VIEW after LATERAL/);
    // Hive's form without the view's name
    expect(await run(`SELECT user, tag FROM ${S} LATERAL VIEW explode(tags) AS tag`)).toEqual([
      { user: 'a', tag: 'x' },
      { user: 'a', tag: 'y' },
    ]);
  });

  it('UNPIVOT is the frame API unpivot, rows with a null value dropped unless INCLUDE NULLS, an alias naming the row', async () => {
    const wide = "STREAM read_files('s3://in/w', format => 'json', schema => 'id STRING, q1 INT, q2 INT')";
    const frame = () => readStream.format('json').schema('id STRING, q1 INT, q2 INT').load('s3://in/w');
    expectSamePlan(
      compileSql(`SELECT * FROM ${wide} UNPIVOT (sales FOR quarter IN (q1, q2))`),
      frame().unpivot('id', ['q1', 'q2'], 'quarter', 'sales').filter('sales IS NOT NULL').writeStream.trigger({ availableNow: true }).plan(),
    );
    const rows = [{ id: 'a', q1: 5, q2: null }];
    const run = async (text: string) => (await runPlanOnce(compileSql(text), rows)).rows;
    expect(await run(`SELECT * FROM ${wide} UNPIVOT (sales FOR quarter IN (q1 AS first, q2 second))`)).toEqual([{ id: 'a', quarter: 'first', sales: 5 }]);
    expect(await run(`SELECT quarter, sales FROM ${wide} UNPIVOT INCLUDE NULLS (sales FOR quarter IN (q1, q2)) AS u`)).toEqual([
      { quarter: 'q1', sales: 5 },
      { quarter: 'q2', sales: null },
    ]);
    expect(() => compileSql(`SELECT * FROM ${wide} UNPIVOT ((a, b) FOR n IN ((q1, q2)))`)).toThrow(/PARSE_SYNTAX_ERROR.*UNPIVOT once per value/);
    expect(() => compileSql(`SELECT * FROM ${wide} UNPIVOT (v FOR n IN (q1, id))`)).toThrow(/UNPIVOT_VALUE_DATA_TYPE_MISMATCH.*\(line 1, column \d+\)/);
  });

  it('takes stack, the unpivot of Spark SQL queries: two columns into name and value rows', async () => {
    const wide = "STREAM read_files(schema => 'id STRING, clicks INT, views INT')";
    const plan = compileSql(`SELECT id, name, value FROM ${wide} LATERAL VIEW stack(2, 'clicks', clicks, 'views', views) t AS name, value WHERE value > 0`);
    expect((await runPlanOnce(plan, [{ id: 'p', clicks: 3, views: 0 }])).rows).toEqual([{ id: 'p', name: 'clicks', value: 3 }]);
  });
});

describe('ORDER BY and LIMIT', () => {
  const SRC = "FROM STREAM read_files('s3://in/e', format => 'json', schema => 'k STRING, a INT')";

  it('are orderBy and limit after the aggregation, an ordinal naming the select item', () => {
    const sql = compileSql(`SET outputMode = complete;
SELECT k, count(*) AS n ${SRC} GROUP BY k ORDER BY 2 DESC, k NULLS LAST LIMIT 3`);
    const ts = readStream
      .format('json')
      .schema('k STRING, a INT')
      .load('s3://in/e')
      .groupBy('k')
      .agg(count().as('n'))
      .orderBy({ key: expr('`n`'), desc: true }, { key: expr('k'), nullsFirst: false })
      .limit(3)
      .writeStream.outputMode('complete')
      .trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.post.map((st) => (st.kind === 'sort' ? st.keys.map((k) => [k.text, k.desc, k.nullsFirst]) : st))).toEqual([
      [
        ['`n`', true, false],
        ['k', false, false],
      ],
      { kind: 'limit', n: 3 },
    ]);
  });

  it('LIMIT in append mode is the limit operator (the first n rows over all runs)', () => {
    const sql = compileSql(`SELECT k, a ${SRC} WHERE a > 0 LIMIT 5`);
    const ts = readStream
      .format('json')
      .schema('k STRING, a INT')
      .load('s3://in/e')
      .filter('a > 0')
      .selectExpr('k', 'a')
      .limit(5)
      .writeStream.trigger({ availableNow: true })
      .plan();
    expectSamePlan(sql, ts);
    expect(sql.operators.map((o) => o.spec)).toEqual([{ kind: 'limit', n: 5 }]);
  });

  it('are refused where Spark refuses them, at the clause: ORDER BY outside complete mode, LIMIT in update mode', () => {
    expect(() => compileSql(`SELECT k ${SRC} ORDER BY k`)).toThrow(/^Sorting is not supported on streaming DataFrames\/Datasets, .* \(line 1, column \d+\)$/);
    expect(() => compileSql(`SET outputMode = update; SELECT k, count(*) AS n ${SRC} GROUP BY k LIMIT 2`)).toThrow(
      /^Limits are not supported on streaming DataFrames\/Datasets in Update output mode/,
    );
  });
});

describe('docs/sql.md', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'sql.md'), 'utf8');
  const samples = [...doc.matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

  it('has SQL samples, and each compiles (the one of "Errors" is refused where the page says)', () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    for (const sample of samples) {
      if (sample.includes('amout')) expect(() => compileSql(sample)).toThrow(/^\[UNRESOLVED_COLUMN\.WITH_SUGGESTION\] .*\(line 3, column 7\)$/);
      else expect(() => compileSql(sample)).not.toThrow();
    }
  });

  it('shows examples/windowed-totals.sql and examples/ad-clicks.sql as they are (comments left out)', () => {
    const strip = (f: string) =>
      readFileSync(join(__dirname, '..', '..', 'examples', f), 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('--'))
        .join('\n');
    expect(samples).toContain(strip('windowed-totals.sql'));
    expect(samples).toContain(strip('ad-clicks.sql'));
  });
});

describe('a generator outside a select item', () => {
  const from = "FROM STREAM read_files(schema => 'id STRING, tags ARRAY<STRING>, flags ARRAY<BOOLEAN>')";
  it('is refused in WHERE, HAVING, GROUP BY, an aggregate and another expression, as Spark refuses them', () => {
    expect(() => compileSql(`SELECT id ${from} WHERE explode(flags)`)).toThrow(/\[UNSUPPORTED_GENERATOR\.OUTSIDE_SELECT\].*Filter explode\(flags\)/);
    expect(() => compileSql(`SET outputMode = update; SELECT id, count(*) ${from} GROUP BY id HAVING explode(array(true))`)).toThrow(/OUTSIDE_SELECT/);
    expect(() => compileSql(`SET outputMode = update; SELECT count(*) ${from} GROUP BY explode(tags)`)).toThrow(
      /\[UNSUPPORTED_GENERATOR\.OUTSIDE_SELECT\].*Aggregate explode\(tags\)/,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT id, max(explode(tags)) ${from} GROUP BY id`)).toThrow(
      /\[UNSUPPORTED_GENERATOR\.NESTED_IN_EXPRESSIONS\].*"max\(explode\(tags\)\)"/,
    );
    expect(() => compileSql(`SELECT upper(explode(tags)) ${from}`)).toThrow(/NESTED_IN_EXPRESSIONS.*"upper\(explode\(tags\)\)"/);
  });
  it('is taken as a select item', () => {
    expect(outputColumns(compileSql(`SELECT id, explode(tags) AS tag ${from}`)).map((c) => c.name)).toEqual(['id', 'tag']);
  });
});
