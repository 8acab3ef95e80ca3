/**
 * Compile-time checks of the functions module's types (not run: test/unit/query-types.test.ts
 * compiles this file with tsc, and a copy without one directive as a control). Each `@ts-expect-error` line must be a
 * type error; each `Expect<Equal<...>>` must hold.
 */
import { F, expr, readStream, type RowOf, type UnknownType } from '../../lib/api/query';
import type { ArrayOf, StructOf } from '../../lib/engine/query/types';
import type { Column } from '../../lib/engine/query/column';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type TypeOfCol<C> = C extends Column<infer T, string> ? T : never;
type NameOfCol<C> = C extends Column<infer _T, infer N> ? N : never;

const f = readStream
  .format('json')
  .schema('country STRING, amount DOUBLE, qty INT, n BIGINT, price DECIMAL(10,2), ts TIMESTAMP, ok BOOLEAN, tags ARRAY<STRING>, customer STRUCT<city: STRING>')
  .load();

// ---- frame.col gives the frame's type and Spark's name
const amount = f.col('amount');
const city = f.col('customer.city');
export type ColChecks = [
  Expect<Equal<TypeOfCol<typeof amount>, 'DOUBLE'>>,
  Expect<Equal<NameOfCol<typeof amount>, 'amount'>>,
  Expect<Equal<TypeOfCol<typeof city>, 'STRING'>>,
  Expect<Equal<NameOfCol<typeof city>, 'city'>>,
  Expect<Equal<TypeOfCol<ReturnType<typeof F.col>>, UnknownType>>,
  Expect<Equal<TypeOfCol<ReturnType<typeof expr>>, UnknownType>>,
];
// @ts-expect-error a column the frame does not have
f.col('amout');

// ---- results follow Spark's rules
const revenue = f.col('amount').multiply(2);
const units = f.col('qty').multiply(2);
const bigUnits = f.col('qty').plus(f.col('n'));
const half = f.col('qty').divide(2);
const priced = f.col('price').multiply(f.col('qty'));
const scaled = f.col('qty').multiply(1.5);
const upper = F.upper(f.col('country'));
const len = F.length(f.col('country'));
const label = F.when(f.col('qty').gt(10), 'big').otherwise('small');
const either = F.coalesce(f.col('qty'), F.lit(0));
const cast = f.col('amount').cast('DECIMAL(10,2)');
const tag = f.col('tags').getItem(0);
const parsed = F.from_json(f.col('country'), 'a INT, b DOUBLE');
const field = parsed.getField('b');
const parts = F.split(f.col('country'), ',');
const big = f.col('qty').gt(10).and(f.col('ok'));
export type ResultChecks = [
  Expect<Equal<TypeOfCol<typeof revenue>, 'DOUBLE'>>,
  Expect<Equal<TypeOfCol<typeof units>, 'INT'>>,
  Expect<Equal<TypeOfCol<typeof bigUnits>, 'LONG'>>,
  Expect<Equal<TypeOfCol<typeof half>, 'DOUBLE'>>,
  Expect<Equal<TypeOfCol<typeof priced>, 'DECIMAL'>>,
  Expect<Equal<TypeOfCol<typeof scaled>, 'DOUBLE'>>,
  Expect<Equal<TypeOfCol<typeof upper>, 'STRING'>>,
  Expect<Equal<TypeOfCol<typeof len>, 'INT'>>,
  Expect<Equal<TypeOfCol<typeof label>, 'STRING'>>,
  Expect<Equal<TypeOfCol<typeof either>, 'INT'>>,
  Expect<Equal<TypeOfCol<typeof cast>, 'DECIMAL'>>,
  Expect<Equal<TypeOfCol<typeof tag>, 'STRING'>>,
  Expect<Equal<TypeOfCol<typeof parsed>, StructOf<{ a: 'INT'; b: 'DOUBLE' }>>>,
  Expect<Equal<TypeOfCol<typeof field>, 'DOUBLE'>>,
  Expect<Equal<TypeOfCol<typeof parts>, ArrayOf<'STRING'>>>,
  Expect<Equal<TypeOfCol<typeof big>, 'BOOLEAN'>>,
];

// ---- a function refuses a column of another type
// @ts-expect-error upper takes a STRING column, qty is an INT
F.upper(f.col('qty'));
// @ts-expect-error multiply takes a numeric column
f.col('country').multiply(2);
// @ts-expect-error size takes an ARRAY or a MAP
F.size(f.col('amount'));
// @ts-expect-error year takes a DATE, TIMESTAMP or STRING
F.year(f.col('ok'));
// @ts-expect-error a filter is BOOLEAN
f.filter(f.col('amount'));
// @ts-expect-error and takes a BOOLEAN
f.col('ok').and(f.col('qty'));
// @ts-expect-error a STRUCT field the type does not have
f.col('customer').getField('country');
// a column by name or an expr is not typed: any function takes it (the analyzer checks it when the frame uses it)
F.upper('qty');
F.upper(expr('qty'));
F.upper(F.col('qty'));

// ---- withColumn and select give the frame the Column's type and name
const out = f
  .withColumn('revenue', f.col('amount').multiply(f.col('qty')))
  .withColumn('c', F.upper(f.col('country')))
  .select('revenue', 'c', F.year('ts').as('y'))
  .writeStream.plan();
export type FrameChecks = [
  Expect<
    Equal<
      RowOf<typeof out>,
      {
        revenue: number | 'NaN' | 'Infinity' | '-Infinity' | null;
        c: string | null;
        y: number | null;
      }
    >
  >,
];
const untypedName = f.withColumn('x', expr('amount * 2')).select('x', 'qty').writeStream.plan();
export type UntypedChecks = [Expect<Equal<keyof RowOf<typeof untypedName>, 'x' | 'qty'>>];

// ---- groupBy by a Column and aggregates of typed Columns type the output row
const grouped = f
  .groupBy(F.lower(f.col('country')).as('country'), f.col('ok'))
  .agg(
    F.sum(f.col('amount').multiply(f.col('qty'))).as('revenue'),
    F.sum(f.col('qty')).as('units'),
    F.max(f.col('ts')).as('last'),
    F.count(f.col('n')).as('count'),
  )
  .writeStream.outputMode('update')
  .plan();
export type GroupChecks = [
  Expect<
    Equal<
      RowOf<typeof grouped>,
      {
        country: string | null;
        ok: boolean | null;
        revenue: number | 'NaN' | 'Infinity' | '-Infinity' | null;
        units: number | string | null;
        last: string | null;
        count: number | string | null;
      }
    >
  >,
];

// ---- the example of docs/expressions.md, "The functions module" (kept in step by hand)
const orders = readStream.format('json').schema('id STRING, country STRING, amount DOUBLE, qty INT, ts TIMESTAMP').load();
const docExample = orders
  .filter(orders.col('amount').gt(0))
  .withColumn('revenue', orders.col('amount').multiply(orders.col('qty')))
  .select('id', F.upper(F.col('country')).as('country'), F.when(F.col('qty').geq(10), 'bulk').otherwise('unit').as('kind'), F.hour('ts').as('h'))
  .writeStream.plan();
export type DocExampleChecks = [Expect<Equal<keyof RowOf<typeof docExample>, 'id' | 'country' | 'kind' | 'h'>>];
