/**
 * Compile-time checks of the query API's types (not run: test/unit/query-types.test.ts compiles
 * this file with tsc). Each `@ts-expect-error` line must be a type error, or tsc fails with
 * "Unused '@ts-expect-error' directive"; each `Expect<Equal<...>>` must hold, or it fails too.
 */
import {
  avg,
  boolAnd,
  collectList,
  count,
  countIf,
  corr,
  maxBy,
  regrCount,
  stddev,
  explode,
  max,
  posexplode,
  readStream,
  sessionWindow,
  staticTable,
  sum,
  window,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type InputValue,
  type RowOf,
  type SchemaColumns,
} from '../../lib/api/query';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

const events = () => readStream.format('json').schema('key STRING, event_time TIMESTAMP, amount DOUBLE, n LONG, ok BOOLEAN').load('s3://b/landing');

// ---- the output row follows from groupBy/agg
const totals = events()
  .withWatermark('event_time', '10 minutes')
  .groupBy(window('event_time', '10 minutes'), 'key')
  .agg(sum('amount').as('total'), count().as('events'), sum('n'), max('key').as('last_key'))
  .writeStream.outputMode('append')
  .plan();
type TotalsRow = RowOf<typeof totals>;
export type Checks = [
  Expect<Equal<keyof TotalsRow, 'window' | 'key' | 'total' | 'events' | 'sum(n)' | 'last_key'>>,
  Expect<Equal<TotalsRow['window'], { readonly start: string; readonly end: string }>>,
  Expect<Equal<TotalsRow['key'], string | null>>,
  Expect<Equal<TotalsRow['events'], number | string | null>>, // a BIGINT: its digits beyond ±(2^53 − 1)
  Expect<Equal<TotalsRow['sum(n)'], number | string | null>>,
  Expect<Equal<TotalsRow['total'], number | 'NaN' | 'Infinity' | '-Infinity' | null>>,
  Expect<Equal<TotalsRow['last_key'], string | null>>,
];

const sessions = events()
  .withWatermark('event_time', '5 minutes')
  .groupBy(sessionWindow('event_time', '5 minutes'))
  .agg(avg('amount').as('mean'))
  .writeStream.outputMode('append')
  .plan();
export type SessionChecks = [Expect<Equal<keyof RowOf<typeof sessions>, 'session_window' | 'mean'>>];

// Stateless stages keep and change the columns too.
const picked = events()
  .withColumn('big', 'BOOLEAN', (r) => (r.amount ?? 0) > 100)
  .select('key', 'big')
  .writeStream.plan();
export type PickedChecks = [Expect<Equal<RowOf<typeof picked>, { key: string | null; big: boolean | null }>>];

// A filter sees TIMESTAMP as epoch microseconds: a number, or a bigint beyond 2^53 − 1 (issue 29).
events().filter((r) => (r.event_time ?? 0) > Date.UTC(2026, 0, 1) * 1000);
export type TimestampChecks = [Expect<Equal<InputValue<'TIMESTAMP'>, number | bigint | null>>];
// @ts-expect-error µs may be a bigint: arithmetic with a number needs a check of its type first
events().filter((r) => (r.event_time ?? 0) - 1000 > 0);

// ---- invalid combinations are compile errors
// @ts-expect-error a column the schema does not declare
events().groupBy('nope');
// @ts-expect-error a window over a column that is not a TIMESTAMP
events().groupBy(window('amount', '10 minutes'));
// @ts-expect-error a watermark on a LONG
events().withWatermark('n', '10 minutes');
// @ts-expect-error sum over a BOOLEAN
events().groupBy('key').agg(sum('ok'));
// @ts-expect-error an aggregate over a column the schema does not declare
events().groupBy('key').agg(max('amout'));
// @ts-expect-error dropDuplicates over an unknown column
events().dropDuplicates(['user']);
// @ts-expect-error select of an unknown column
events().select('key', 'amount2');
// @ts-expect-error a filter comparing a STRING column with a number
events().filter((r) => r.key > 5);

// ---- a schema that is not a literal: any column, rows loosely typed (as before the types)
const ddl: string = 'a STRING, t TIMESTAMP';
readStream.format('json').schema(ddl).load().groupBy('anything', window('t', '1 minute')).agg(sum('x').as('y')).writeStream.plan();

// ---- a stream-static join: the stream's columns and the table's, string keys once
const users = staticTable.dynamodb('users', { key: 'key', schema: 'key STRING, country STRING, since TIMESTAMP' });
const enriched = events().join(users, 'key', 'leftOuter').writeStream.plan();
type EnrichedRow = RowOf<typeof enriched>;
export type JoinChecks = [
  Expect<Equal<keyof EnrichedRow, 'key' | 'event_time' | 'amount' | 'n' | 'ok' | 'country' | 'since'>>,
  Expect<Equal<EnrichedRow['country'], string | null>>,
  Expect<Equal<EnrichedRow['since'], string | null>>,
];
// leftSemi keeps the stream's columns only
const semi = events().join(users, 'key', 'leftSemi').writeStream.plan();
export type SemiChecks = [Expect<Equal<keyof RowOf<typeof semi>, 'key' | 'event_time' | 'amount' | 'n' | 'ok'>>];
// leftAnti likewise
const anti = events().join(users, 'key', 'left_anti').writeStream.plan();
export type AntiChecks = [Expect<Equal<keyof RowOf<typeof anti>, 'key' | 'event_time' | 'amount' | 'n' | 'ok'>>];
// { left, right } keys output both columns; the joined columns can be aggregated
const skus = staticTable.rows('sku STRING, price DOUBLE', [{ sku: 'a', price: 1 }]);
const priced = events()
  .join(skus, { left: 'key', right: 'sku' })
  .withWatermark('event_time', '1 minute')
  .groupBy(window('event_time', '1 minute'), 'sku')
  .agg(sum('price').as('revenue'))
  .writeStream.plan();
export type PricedChecks = [Expect<Equal<keyof RowOf<typeof priced>, 'window' | 'sku' | 'revenue'>>];
// @ts-expect-error a string key must be a column of both sides
events().join(skus, 'key');
// @ts-expect-error the table side of a pair must be one of its columns
events().join(skus, { left: 'key', right: 'nope' });

// ---- nested schemas: the DDL's structure, to any depth
type OrderCols =
  SchemaColumns<'id STRING, `odd name` DATE NOT NULL, amount DECIMAL(10,2), customer STRUCT<name: STRING, address STRUCT<country: STRING, zip INT>>, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, attrs MAP<STRING, ARRAY<BIGINT>>'>;
export type NestedDdlChecks = [
  Expect<Equal<keyof OrderCols, 'id' | 'odd name' | 'amount' | 'customer' | 'lines' | 'attrs'>>,
  Expect<Equal<OrderCols['odd name'], 'DATE'>>,
  Expect<Equal<OrderCols['amount'], 'DECIMAL'>>,
  Expect<Equal<OrderCols['lines']['kind'], 'ARRAY'>>,
];
const orders = () =>
  readStream
    .format('json')
    .schema(
      'id STRING, ts TIMESTAMP, amount DECIMAL(10,2), day DATE, customer STRUCT<name: STRING, address: STRUCT<country: STRING, zip: INT>>, lines ARRAY<STRUCT<sku: STRING, qty: INT, price: DECIMAL(10,2)>>, attrs MAP<STRING, BIGINT>',
    )
    .load();

// functions see nested values typed: DECIMAL and DATE as text, arrays, structs, maps
orders().filter((r) => {
  const amount: string | null = r.amount;
  const day: string | null = r.day;
  const country: string | null | undefined = r.customer?.address?.country;
  const qty: number | null | undefined = r.lines?.[0]?.qty;
  const price: string | null | undefined = r.lines?.[0]?.price;
  const color: number | bigint | null | undefined = r.attrs?.color;
  return [amount, day, country, qty, price, color].length > 0;
});

// paths in select: a field's column is named by its last part, an element or a map value by the path
const picked2 = orders().select('id', 'customer.address.country', 'lines[0]', "attrs['color']", 'customer.*').writeStream.plan();
type Picked2 = RowOf<typeof picked2>;
export type PathChecks = [
  Expect<Equal<keyof Picked2, 'id' | 'country' | 'lines[0]' | 'attrs[color]' | 'name' | 'address'>>,
  Expect<Equal<Picked2['country'], string | null>>,
  Expect<Equal<Picked2['lines[0]'], { sku: string | null; qty: number | null; price: string | null } | null>>,
  Expect<Equal<Picked2['attrs[color]'], number | string | null>>,
];

// a field of an ARRAY of STRUCTs: the field of every element, an array (Spark's GetArrayStructFields)
const lineFields = orders().select('id', 'lines.sku', 'lines.price').writeStream.plan();
export type ArrayFieldChecks = [Expect<Equal<RowOf<typeof lineFields>, { id: string | null; sku: (string | null)[] | null; price: (string | null)[] | null }>>];
// @ts-expect-error a field the elements do not have
orders().select('lines.skuu');

// explode: `col` (or as named), one row per element; posexplode adds `pos`; a map gives key and value
const exploded = orders().select('id', explode('lines').as('line')).select('id', 'line.sku', 'line.price').writeStream.plan();
export type ExplodeChecks = [Expect<Equal<RowOf<typeof exploded>, { id: string | null; sku: string | null; price: string | null }>>];
const posMap = orders().select(posexplode('attrs')).writeStream.plan();
export type PosMapChecks = [Expect<Equal<keyof RowOf<typeof posMap>, 'pos' | 'key' | 'value'>>];

// grouping on a nested field (named by its last part) and sum/avg of DECIMAL (DECIMAL)
const byCountry = orders()
  .withWatermark('ts', '10 minutes')
  .groupBy(window('ts', '10 minutes'), 'customer.address.country')
  .agg(sum('amount').as('total'), avg('amount').as('mean'), count().as('n'))
  .writeStream.plan();
type ByCountry = RowOf<typeof byCountry>;
export type NestedGroupChecks = [
  Expect<Equal<keyof ByCountry, 'window' | 'country' | 'total' | 'mean' | 'n'>>,
  Expect<Equal<ByCountry['total'], string | null>>,
  Expect<Equal<ByCountry['mean'], string | null>>,
];

// withColumn with a DDL type
const totals2 = orders()
  .withColumn('total', 'DECIMAL(21,2)', (r) => r.amount)
  .select('total')
  .writeStream.plan();
export type WithDdlChecks = [Expect<Equal<RowOf<typeof totals2>, { total: string | null }>>];

// an aggregation's window column is a STRUCT<start, end> to a path: window.start, window.*
const windowed = orders().groupBy(window('ts', '10 minutes'), 'id').agg(count().as('n'));
const windowStart = windowed.select('window.start', 'id').writeStream.plan();
const windowStar = windowed.select('window.*', 'n').writeStream.plan();
export type WindowPathChecks = [
  Expect<Equal<RowOf<typeof windowStart>, { start: string | null; id: string | null }>>,
  Expect<Equal<keyof RowOf<typeof windowStar>, 'start' | 'end' | 'n'>>,
];
// @ts-expect-error a window has no other field
windowed.select('window.middle');

// drop and withColumnRenamed: the columns follow
const dropped = events().drop('ok', 'n').writeStream.plan();
const renamedCols = events().withColumnRenamed('amount', 'value').writeStream.plan();
export type DropRenameChecks = [
  Expect<Equal<keyof RowOf<typeof dropped>, 'key' | 'event_time' | 'amount'>>,
  Expect<Equal<keyof RowOf<typeof renamedCols>, 'key' | 'event_time' | 'value' | 'n' | 'ok'>>,
  Expect<Equal<RowOf<typeof renamedCols>['value'], number | 'NaN' | 'Infinity' | '-Infinity' | null>>,
];

// replace keeps the frame's columns; its subset names them
const replaced = events()
  .replace('N/A', null, ['key'])
  .replace(new Map([[0, 1]]))
  .writeStream.plan();
export type ReplaceChecks = [Expect<Equal<keyof RowOf<typeof replaced>, 'key' | 'event_time' | 'amount' | 'n' | 'ok'>>];
// @ts-expect-error subset names a column the frame does not have
events().replace('a', 'b', ['nope']);
// @ts-expect-error an object's keys are strings: it replaces strings with strings
events().replace({ a: 1 });

// union keeps this stream's columns; unionByName gives any columns
const unioned = events().union(events()).writeStream.plan();
// another stream's types may widen this one's (an INT beside a DECIMAL is a DECIMAL, held as text): not known to the types
const widened = readStream.format('json').schema('a INT').load().union(readStream.format('json').schema('a DECIMAL(10,2)').load()).writeStream.plan();
export type UnionChecks = [
  Expect<Equal<keyof RowOf<typeof unioned>, 'key' | 'event_time' | 'amount' | 'n' | 'ok'>>,
  Expect<Equal<string extends keyof RowOf<typeof widened> ? true : false, true>>,
];

// @ts-expect-error a typo in a nested field name
orders().select('customer.address.contry');
// @ts-expect-error a typo in a nested grouping key
orders().groupBy('customer.adress.country');
// @ts-expect-error .* of a column that is not a STRUCT
orders().select('id.*');
// @ts-expect-error a DECIMAL is text in a function, not a number
orders().filter((r) => r.amount > 5);

// ---- transformWithState: the processor's output rows follow the output schema, its rows the frame
class CountProcessor extends StatefulProcessor<{ key: string }, { key: string; amount: number }, { key: string; total: number }> {
  init(_h: StatefulProcessorHandle): void {}
  handleInputRows(key: { key: string }, rows: IterableIterator<{ key: string; amount: number }>) {
    let total = 0;
    for (const r of rows) total += r.amount;
    return [{ key: key.key, total }];
  }
}
const twsPlan = events()
  .groupBy('key')
  .transformWithState(new CountProcessor(), { timeMode: 'none', outputSchema: 'key STRING, total DOUBLE' })
  .writeStream.outputMode('update')
  .plan();
export type TwsChecks = [Expect<Equal<RowOf<typeof twsPlan>, { key: string | null; total: number | 'NaN' | 'Infinity' | '-Infinity' | null }>>];
const byKey = events().groupBy('key');
const badOut = new CountProcessor() as unknown as StatefulProcessor<{ key: string }, { key: string }, { key: string; total: string }>;
const badIn = new CountProcessor() as unknown as StatefulProcessor<{ key: string }, { missing: boolean }, { key: string }>;
// @ts-expect-error a DOUBLE column total cannot come from a processor emitting it as a string
byKey.transformWithState(badOut, { timeMode: 'none', outputSchema: 'key STRING, total DOUBLE' });
// @ts-expect-error an input column the frame does not have
byKey.transformWithState(badIn, { timeMode: 'none', outputSchema: 'key STRING' });

// ---- the aggregates whose type is fixed (stddev DOUBLE, count_if BIGINT, bool_and BOOLEAN, collect_list ARRAY), max_by its value's
const stats = events()
  .groupBy('key')
  .agg(stddev('amount').as('sd'), countIf('ok').as('oks'), boolAnd('ok').as('allOk'), collectList('n').as('ns'), maxBy('amount', 'event_time').as('latest'))
  .writeStream.outputMode('update')
  .plan();
type StatsRow = RowOf<typeof stats>;
export type StatsChecks = [
  Expect<Equal<keyof StatsRow, 'key' | 'sd' | 'oks' | 'allOk' | 'ns' | 'latest'>>,
  Expect<Equal<StatsRow['sd'], number | 'NaN' | 'Infinity' | '-Infinity' | null>>,
  Expect<Equal<StatsRow['oks'], number | string | null>>,
  Expect<Equal<StatsRow['allOk'], boolean | null>>,
  Expect<Equal<StatsRow['latest'], number | 'NaN' | 'Infinity' | '-Infinity' | null>>,
];
// @ts-expect-error stddev needs a numeric column
events().groupBy('key').agg(stddev('key'));
// @ts-expect-error count_if needs a BOOLEAN column
events().groupBy('key').agg(countIf('amount'));

// ---- the pair aggregates: corr DOUBLE, regr_count BIGINT, over numeric columns
const pairs = events().groupBy('key').agg(corr('amount', 'n').as('r'), regrCount('amount', 'n').as('pairs')).writeStream.outputMode('update').plan();
type PairsRow = RowOf<typeof pairs>;
export type PairsChecks = [
  Expect<Equal<PairsRow['r'], number | 'NaN' | 'Infinity' | '-Infinity' | null>>,
  Expect<Equal<PairsRow['pairs'], number | string | null>>,
];
// @ts-expect-error corr needs a numeric y
events().groupBy('key').agg(corr('key', 'n'));
