/**
 * Spark SQL expressions in the query API (issue 30): filter/where, selectExpr, withColumn(name,
 * expr), grouping keys and aggregate inputs as expressions, run on the in-memory ports; the
 * event-time mark a bare column keeps through a selectExpr; a row error as a dead letter before
 * and after a stateful operator; refusals when the query is built. Expected rows are worked out
 * from Spark's rules by hand.
 */
import type { QueryPlan } from '../../lib/engine/plan/types';
import { runPlanOnce } from '../helpers/run-plan';
import { count, expr, first, readStream, sum, window } from '../../lib/api/query';
import { outputColumns } from '../../lib/engine/plan/chain';

const SCHEMA = 'id STRING, ts TIMESTAMP, country STRING, qty INT, price DECIMAL(6,2)';
const input = () => readStream.format('json').schema(SCHEMA).load();

const at = (mmss: string) => `2026-10-01 12:${mmss}`;
const RECORDS = [
  { id: 'a', ts: at('01:00'), country: 'de', qty: 2, price: 1.5 },
  { id: 'b', ts: at('02:00'), country: 'DE', qty: 0, price: 3 },
  { id: 'c', ts: at('03:00'), country: null, qty: 4, price: 0.25 },
  { id: 'd', ts: at('14:00'), country: 'fr', qty: 1, price: 9.99 },
];

async function run(plan: QueryPlan, records: Record<string, unknown>[] | string = RECORDS) {
  const { rows, report, deadLetters } = await runPlanOnce(plan, records);
  return { rows, report, reasons: deadLetters.all('malformed').map((d) => (d as { reason: string }).reason) };
}

describe('stateless expression stages', () => {
  it("a generator's columns take the names of AS (a, b); other uses of several aliases are refused as Spark refuses them", async () => {
    const schema = 'id INT, arr ARRAY<STRING>';
    const frame = () => readStream.format('json').schema(schema).load();
    const plan = frame().selectExpr('id', 'posexplode(arr) AS (p, v)').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['id', 'p', 'v']);
    expect(() => frame().selectExpr('id AS (a, b)')).toThrow(/MULTI_ALIAS_WITHOUT_GENERATOR/);
    expect(() => frame().selectExpr('posexplode(arr) AS (p)')).toThrow(/UDTF_ALIAS_NUMBER_MISMATCH/);
  });

  it("json_tuple's columns take the names of AS (x, y) (Spark's JsonTuple is a generator)", async () => {
    const plan = readStream.format('json').schema('s STRING').load().selectExpr("json_tuple(s, 'a', 'b') AS (x, y)").writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['x', 'y']);
    const { rows } = await run(plan, [{ s: '{"a": 1, "b": "q"}' }, { s: 'not json' }]);
    expect(rows).toEqual([
      { x: '1', y: 'q' },
      { x: null, y: null },
    ]);
  });

  it('stack unpivots: n rows of the values in order, a NULL typed by its column, the rest refused as Spark refuses it', async () => {
    const plan = input()
      .selectExpr('id', "stack(2, 'qty', CAST(qty AS DECIMAL(12,2)), 'price', CAST(price AS DECIMAL(12,2))) AS (name, value)")
      .writeStream.plan();
    expect(outputColumns(plan).map((c) => `${c.name} ${c.type}`)).toEqual(['id STRING', 'name STRING', 'value DECIMAL']);
    const { rows } = await run(plan, RECORDS.slice(0, 2));
    expect(rows).toEqual([
      { id: 'a', name: 'qty', value: '2.00' },
      { id: 'a', name: 'price', value: '1.50' },
      { id: 'b', name: 'qty', value: '0.00' },
      { id: 'b', name: 'price', value: '3.00' },
    ]);
    // 5 values in 3 rows: 2 columns, the last row's second null; the NULL takes its column's type (INT)
    const odd = input().selectExpr('stack(3, id, qty, country, NULL, id)').writeStream.plan();
    expect(outputColumns(odd).map((c) => `${c.name} ${c.type}`)).toEqual(['col0 STRING', 'col1 INT']);
    expect((await run(odd, RECORDS.slice(0, 1))).rows).toEqual([
      { col0: 'a', col1: 2 },
      { col0: 'de', col1: null },
      { col0: 'a', col1: null },
    ]);
    expect(() => input().selectExpr("stack(2, 'qty', qty, 'price', price)")).toThrow(/STACK_COLUMN_DIFF_TYPES/);
    expect(() => input().selectExpr('stack(0, qty)')).toThrow(/VALUE_OUT_OF_RANGE/);
    expect(() => input().selectExpr('stack(qty, 1)')).toThrow(/NON_FOLDABLE_INPUT/);
  });

  it("withColumn replaces a column where it stands, found ignoring case as Spark's resolver does, under the new spelling", async () => {
    const plan = input().withColumn('QTY', 'qty * 2').withColumn('country', 'upper(country)').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['id', 'ts', 'country', 'QTY', 'price']);
    const { rows } = await run(plan, RECORDS.slice(0, 1));
    expect(rows).toEqual([{ id: 'a', ts: '2026-10-01T12:01:00.000Z', country: 'DE', QTY: 4, price: '1.50' }]);
  });

  it("filter keeps a row when the expression is true: null (c's country) and false drop it", async () => {
    const { rows } = await run(input().filter("upper(country) IN ('DE', 'FR') AND qty > 0").select('id').writeStream.plan());
    expect(rows).toEqual([{ id: 'a' }, { id: 'd' }]);
  });

  it('selectExpr computes typed columns: INT * DECIMAL(6,2) is DECIMAL(17,2), exact', async () => {
    const plan = input().selectExpr('id', 'qty * price AS total', 'coalesce(country, ?) AS c'.replace('?', "'none'")).writeStream.plan();
    expect(outputColumns(plan).map((c) => [c.name, c.type, c.precision, c.scale])).toEqual([
      ['id', 'STRING', undefined, undefined],
      ['total', 'DECIMAL', 17, 2],
      ['c', 'STRING', undefined, undefined],
    ]);
    const { rows } = await run(plan);
    expect(rows).toEqual([
      { id: 'a', total: '3.00', c: 'de' },
      { id: 'b', total: '0.00', c: 'DE' },
      { id: 'c', total: '1.00', c: 'none' },
      { id: 'd', total: '9.99', c: 'fr' },
    ]);
  });

  it("a '*' argument of a function expands to the columns in a selectExpr or withColumn (Spark's Project), not in a filter", async () => {
    // to_json of a TIMESTAMP writes Spark's JSON default yyyy-MM-dd'T'HH:mm:ss.SSSXXX (UTC: Z), a
    // DECIMAL(6,2) keeps its scale, a null field is left out (ignoreNullFields)
    const plan = input().selectExpr('to_json(struct(*)) AS value', 'hash(*) = hash(id, ts, country, qty, price) AS same').writeStream.plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['value', 'same']);
    const { rows } = await run(plan);
    expect(rows.slice(1, 3)).toEqual([
      { value: '{"id":"b","ts":"2026-10-01T12:02:00.000Z","country":"DE","qty":0,"price":3.00}', same: true },
      { value: '{"id":"c","ts":"2026-10-01T12:03:00.000Z","qty":4,"price":0.25}', same: true },
    ]);
    // unnamed, the column is named by the expanded call; withColumn's '*' is the columns before it
    const named = input().selectExpr('id', 'qty').withColumn('j', 'to_json(struct(*))').selectExpr('*', 'struct(*)').writeStream.plan();
    expect(outputColumns(named).map((c) => c.name)).toEqual(['id', 'qty', 'j', 'struct(id, qty, j)']);
    expect((await run(named)).rows[0]).toEqual({
      id: 'a',
      qty: 2,
      j: '{"id":"a","qty":2}',
      'struct(id, qty, j)': { id: 'a', qty: 2, j: '{"id":"a","qty":2}' },
    });
    expect(() => input().where('hash(*) > 0')).toThrow(/INVALID_USAGE_OF_STAR_OR_REGEX/);
  });

  it('withColumn(name, expr) replaces a column in place of the old one, where(expr) filters', async () => {
    const { rows } = await run(input().withColumn('country', 'lower(country)').where('country IS NOT NULL').select('id', 'country').writeStream.plan());
    expect(rows).toEqual([
      { id: 'a', country: 'de' },
      { id: 'b', country: 'de' },
      { id: 'd', country: 'fr' },
    ]);
  });

  it('a row whose expression fails (DIVIDE_BY_ZERO) is a dead letter naming the class and the stage; the others go on', async () => {
    const { rows, report, reasons } = await run(input().withColumn('unit', 'price / qty').select('id', 'unit').writeStream.plan());
    expect(rows.map((r) => r.id)).toEqual(['a', 'c', 'd']);
    expect(report.deadLetters).toBe(1);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^\[DIVIDE_BY_ZERO\] /);
    expect(reasons[0]).toContain('(in withColumn("unit", "price / qty"))');
  });

  it('writes bad input and row errors as dead letters in input order (FORMAT-3 deadLetterErrors), not the bad input first', async () => {
    const lines = [
      { id: 'a', qty: 2, price: 1.5 },
      { id: 'b', qty: 0, price: 3 },
      { id: 'c', qty: 'x', price: 1 },
      { id: 'd', qty: 0, price: 1 },
      { id: 'e', qty: 1, price: 1 },
      { id: 'f', qty: 'y', price: 1 },
    ].map((r) => JSON.stringify(r));
    const { rows, reasons } = await run(input().withColumn('unit', 'price / qty').select('id', 'unit').writeStream.plan(), lines.join('\n'));
    expect(rows.map((r) => r.id)).toEqual(['a', 'e']);
    expect(reasons.map((r) => (r.startsWith('[DIVIDE_BY_ZERO]') ? 'b/d' : /column qty/.test(r) ? 'c/f' : r))).toEqual(['b/d', 'c/f', 'b/d', 'c/f']);
  });

  it('raise_error and assert_true fail the rows they guard against (dead letters with the message); the others go on with their types', async () => {
    const plan = input()
      .selectExpr(
        'id',
        "CASE WHEN qty = 0 THEN raise_error(concat('no qty in ', id)) ELSE qty END AS qty",
        "assert_true(country IS NOT NULL, 'country missing') AS checked",
      )
      .writeStream.plan();
    expect(outputColumns(plan).find((c) => c.name === 'qty')?.type).toBe('INT');
    const { rows, report, reasons } = await run(plan);
    expect(rows).toEqual([
      { id: 'a', qty: 2, checked: null },
      { id: 'd', qty: 1, checked: null },
    ]);
    expect(report.deadLetters).toBe(2);
    expect(reasons.map((r) => r.split(' (in ')[0]).sort()).toEqual(['[USER_RAISED_EXCEPTION] country missing', '[USER_RAISED_EXCEPTION] no qty in b']);
    const plain = await run(input().selectExpr('id', 'assert_true(qty > 1) AS ok').writeStream.plan());
    expect(plain.rows.map((r) => r.id)).toEqual(['a', 'c']);
    expect(plain.reasons.map((r) => r.split(' (in ')[0])).toEqual([
      "[USER_RAISED_EXCEPTION] '(qty > 1)' is not true!",
      "[USER_RAISED_EXCEPTION] '(qty > 1)' is not true!",
    ]);
  });
});

describe('event time through expression stages', () => {
  it('a bare column renamed by selectExpr keeps its watermark: a window over it runs in append mode', async () => {
    const plan = input()
      .withWatermark('ts', '5 minutes')
      .selectExpr('ts AS event_time', 'lower(country) AS country')
      .groupBy(window('event_time', '10 minutes'))
      .agg(count().as('n'))
      .writeStream.outputMode('append')
      .plan();
    // max 12:14 -> watermark 12:09: nothing closes in the data batch; the no-data batch closes nothing either ([12:00,12:10) ends 12:10 > 12:09)
    const { report } = await run(plan);
    expect(report.watermark).toBe('2026-10-01T12:09:00.000Z');
    expect(report.stateRows).toBe(2);
  });

  it('a computed TIMESTAMP carries no watermark: an append-mode window over it is refused when built', () => {
    expect(() =>
      input()
        .withWatermark('ts', '5 minutes')
        .selectExpr('ts + INTERVAL 1 MINUTE AS event_time')
        .groupBy(window('event_time', '10 minutes'))
        .agg(count().as('n'))
        .writeStream.outputMode('append')
        .plan(),
    ).toThrow(/watermark/i);
  });
});

describe('grouping and aggregating by expressions', () => {
  it("a key computed under a column's name; an aggregate of that column still reads the column as it came in", async () => {
    const plan = input()
      .filter('country IS NOT NULL')
      .groupBy(expr('upper(country)').as('country'))
      .agg(first('country').as('seen'), sum(expr('qty * price')).as('revenue'), count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    expect(outputColumns(plan).map((c) => c.name)).toEqual(['country', 'seen', 'revenue', 'n']);
    const { rows } = await run(plan);
    const byKey = Object.fromEntries(rows.map((r) => [r.country as string, r]));
    // DE: a (de, 2 * 1.50) and b (DE, 0 * 3.00); first() sees the first row's own value, lower case
    expect(byKey.DE).toEqual({ country: 'DE', seen: 'de', revenue: '3.00', n: 2 });
    expect(byKey.FR).toEqual({ country: 'FR', seen: 'fr', revenue: '9.99', n: 1 });
  });

  it('window(...) as an expression is the window key, named as its alias says', async () => {
    const plan = input()
      .withWatermark('ts', '5 minutes')
      .groupBy(expr("window(ts, '10 minutes')").as('w'))
      .agg(count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    const { rows } = await run(plan);
    expect(rows).toEqual(
      expect.arrayContaining([
        { w: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 3 },
        { w: { start: '2026-10-01T12:10:00.000Z', end: '2026-10-01T12:20:00.000Z' }, n: 1 },
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it('window over a computed time, with an INTERVAL duration; session_window as an expression', async () => {
    // ts + 5 minutes: a 12:01 -> 12:06, b 12:02 -> 12:07, c 12:03 -> 12:08 in [12:00,12:10); d 12:14 -> 12:19 in [12:10,12:20)
    const shifted = input().groupBy(expr('window(ts + INTERVAL 5 MINUTES, INTERVAL 10 MINUTES)')).agg(count().as('n')).writeStream.outputMode('update').plan();
    expect((await run(shifted)).rows).toEqual(
      expect.arrayContaining([
        { window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, n: 3 },
        { window: { start: '2026-10-01T12:10:00.000Z', end: '2026-10-01T12:20:00.000Z' }, n: 1 },
      ]),
    );
    // the same without the shift: a, b, c, d all in windows of their own time; only the stage differs
    expect(shifted.stages.map((s) => s.kind)).toEqual(['selectExpr']);
    const plain = input().groupBy(expr("window(ts, '10 minutes')")).agg(count().as('n')).writeStream.outputMode('update').plan();
    expect(plain.stages).toEqual([]);
    // sessions with a 5-minute gap: 12:01, 12:02, 12:03 are one session [12:01, 12:08), 12:14 another
    // (a streaming session window needs a grouping column besides it, and refuses update mode, as in Spark)
    const sessions = input()
      .withWatermark('ts', '1 minute')
      .groupBy(expr("session_window(ts, '5 minutes')"), expr("'all'").as('k'))
      .agg(count().as('n'))
      .writeStream.outputMode('complete')
      .plan();
    expect((await run(sessions)).rows).toEqual(
      expect.arrayContaining([
        { session_window: { start: '2026-10-01T12:01:00.000Z', end: '2026-10-01T12:08:00.000Z' }, k: 'all', n: 3 },
        { session_window: { start: '2026-10-01T12:14:00.000Z', end: '2026-10-01T12:19:00.000Z' }, k: 'all', n: 1 },
      ]),
    );
  });

  it('an aggregate input that fails for a row makes it a dead letter that no aggregate counts, not even count(*)', async () => {
    const plan = input()
      .groupBy(expr('lower(country)').as('c'))
      .agg(sum(expr('price / qty')).as('s'), count().as('n'))
      .writeStream.outputMode('update')
      .plan();
    const { rows, report, reasons } = await run(plan);
    expect(report.deadLetters).toBe(1);
    expect(reasons[0]).toMatch(/^\[DIVIDE_BY_ZERO\]/);
    const de = rows.find((r) => r.c === 'de');
    expect(de?.n).toBe(1); // a only: b divided by zero
  });

  it('a row error after the aggregation is a dead letter too, not a failed batch', async () => {
    const plan = input().groupBy('country').agg(sum('qty').as('q')).selectExpr('country', '10 DIV q AS tenth').writeStream.outputMode('update').plan();
    // groups: de q = 2, DE q = 0 (b), null q = 4, fr q = 1: 10 DIV 0 fails for DE
    const { rows, report, reasons } = await run(plan);
    expect(report.deadLetters).toBe(1);
    expect(reasons[0]).toMatch(/^\[DIVIDE_BY_ZERO\].*\(in selectExpr\("country", "10 DIV q AS tenth"\)\)$/);
    expect(rows).toEqual(
      expect.arrayContaining([
        { country: 'de', tenth: 5 },
        { country: null, tenth: 2 },
        { country: 'fr', tenth: 10 },
      ]),
    );
    expect(rows).toHaveLength(3);
  });
});

describe('refused when the query is built', () => {
  it.each([
    ['filter', () => input().filter('qtty > 1'), /UNRESOLVED_COLUMN.*qty/],
    ['filter not boolean', () => input().filter('qty + 1'), /DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN/],
    ['selectExpr syntax', () => input().selectExpr('qty +'), /PARSE_SYNTAX_ERROR/],
    ['non-deterministic', () => input().withColumn('r', 'rand()'), /not deterministic|NON_DETERMINISTIC/],
    ['generator in withColumn', () => input().withColumn('x', 'explode(array(1, 2))'), /UNSUPPORTED_GENERATOR/],
    ['groupBy expression', () => input().groupBy(expr('lower(contry)')).agg(count().as('n')), /UNRESOLVED_COLUMN/],
    [
      'aggregate input',
      () =>
        input()
          .groupBy('id')
          .agg(sum(expr('qty +')).as('s')),
      /PARSE_SYNTAX_ERROR/,
    ],
  ])('%s', (_name, build, error) => {
    expect(build).toThrow(error);
  });
});
