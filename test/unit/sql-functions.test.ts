/**
 * The functions module (issue 30): each function and Column method renders the Spark SQL text the
 * string form would, the analyzer accepts that text against a schema with the type the module's
 * types say, literals are exact, both forms build the same plan, and a query built with `F` runs.
 */
import { F, expr, readStream } from '../../lib/api/query';
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { InvalidQueryError } from '../../lib/engine/errors';
import type { Column } from '../../lib/engine/query/column';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { createTestRunner } from './engine-factories';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const DDL =
  'country STRING, amount DOUBLE, qty INT, n BIGINT, price DECIMAL(10,2), ts TIMESTAMP, d DATE, ok BOOLEAN, payload STRING, ' +
  'tags ARRAY<STRING>, nums ARRAY<INT>, attrs MAP<STRING, INT>, customer STRUCT<name: STRING, city: STRING>, `odd name` STRING, `end` INT, `interval` INT';
const COLS = parseDdlColumns(DDL);
const typeOf = (c: Column) => typeName(compileExpression(c.sql, COLS).sqlType);
const { col, lit } = F;

describe('the functions render the SQL text of the string form, which the analyzer types', () => {
  it.each<[string, Column, string, string]>([
    ['col', col('country'), 'country', 'STRING'],
    ['col of a path', col('customer.city'), 'customer.city', 'STRING'],
    ['col of an element', col('tags[0]'), 'tags[0]', 'STRING'],
    ['col of a name with a space', col('odd name'), '`odd name`', 'STRING'],
    ['col of a reserved word', col('end'), '`end`', 'INT'],
    ['col named interval, before a minus', col('interval').minus(1), '`interval` - 1', 'INT'],
    ['expr', expr('amount * qty'), 'amount * qty', 'DOUBLE'],
    ['upper', F.upper(col('country')), 'upper(country)', 'STRING'],
    ['lower of a name', F.lower('country'), 'lower(country)', 'STRING'],
    ['trim', F.trim('country'), 'trim(country)', 'STRING'],
    ['ltrim', F.ltrim('country'), 'ltrim(country)', 'STRING'],
    ['rtrim', F.rtrim('country'), 'rtrim(country)', 'STRING'],
    ['initcap', F.initcap('country'), 'initcap(country)', 'STRING'],
    ['concat', F.concat('country', lit('-'), col('customer.city')), "concat(country, '-', customer.city)", 'STRING'],
    ['concat_ws', F.concat_ws(',', 'country', 'payload'), "concat_ws(',', country, payload)", 'STRING'],
    ['substring', F.substring('country', 1, 2), 'substring(country, 1, 2)', 'STRING'],
    ['substring from a position', F.substring('country', -3), 'substring(country, -3)', 'STRING'],
    ['length', F.length('country'), 'length(country)', 'INT'],
    ['regexp_extract', F.regexp_extract('payload', '(\\d+)-(\\d+)', 1), "regexp_extract(payload, '(\\\\d+)-(\\\\d+)', 1)", 'STRING'],
    ['regexp_replace', F.regexp_replace('payload', '\\s+', ' '), "regexp_replace(payload, '\\\\s+', ' ')", 'STRING'],
    ['split', F.split('payload', ','), "split(payload, ',')", 'ARRAY<STRING>'],
    ['split with a limit', F.split('payload', ',', 2), "split(payload, ',', 2)", 'ARRAY<STRING>'],
    ['lpad', F.lpad('country', 5, '?'), "lpad(country, 5, '?')", 'STRING'],
    ['rpad', F.rpad('country', 5, '?'), "rpad(country, 5, '?')", 'STRING'],
    ['instr', F.instr('country', 'E'), "instr(country, 'E')", 'INT'],
    ['locate', F.locate('E', 'country', 2), "locate('E', country, 2)", 'INT'],
    ['repeat', F.repeat('country', 2), 'repeat(country, 2)', 'STRING'],
    ['reverse', F.reverse('country'), 'reverse(country)', 'STRING'],
    ['format_number', F.format_number('amount', 2), 'format_number(amount, 2)', 'STRING'],
    ['ascii', F.ascii('country'), 'ascii(country)', 'INT'],
    ['abs', F.abs(col('amount')), 'abs(amount)', 'DOUBLE'],
    ['round', F.round('price', 1), 'round(price, 1)', 'DECIMAL(10,1)'],
    ['round without a scale', F.round('amount'), 'round(amount)', 'DOUBLE'],
    ['bround', F.bround('amount', 1), 'bround(amount, 1)', 'DOUBLE'],
    ['floor', F.floor('amount'), 'floor(amount)', 'BIGINT'],
    ['ceil', F.ceil('qty'), 'ceil(qty)', 'BIGINT'],
    ['sqrt', F.sqrt('qty'), 'sqrt(qty)', 'DOUBLE'],
    ['pow', F.pow('qty', 2), 'pow(qty, 2)', 'DOUBLE'],
    ['log of a base', F.log(10, 'amount'), 'log(10, amount)', 'DOUBLE'],
    ['log', F.log('amount'), 'ln(amount)', 'DOUBLE'],
    ['signum', F.signum('amount'), 'signum(amount)', 'DOUBLE'],
    ['pmod', F.pmod('qty', 3), 'pmod(qty, 3)', 'INT'],
    ['coalesce', F.coalesce('amount', lit(0)), 'coalesce(amount, 0)', 'DOUBLE'],
    ['nullif', F.nullif('qty', lit(0)), 'nullif(qty, 0)', 'INT'],
    ['nvl', F.nvl('country', lit('?')), "nvl(country, '?')", 'STRING'],
    ['greatest', F.greatest('qty', 'n'), 'greatest(qty, n)', 'BIGINT'],
    ['least', F.least('qty', lit(3)), 'least(qty, 3)', 'INT'],
    ['isnull', F.isnull('qty'), 'isnull(qty)', 'BOOLEAN'],
    [
      'when',
      F.when(col('qty').gt(10), 'big').when(col('qty').gt(1), 'some').otherwise('one'),
      "CASE WHEN qty > 10 THEN 'big' WHEN qty > 1 THEN 'some' ELSE 'one' END",
      'STRING',
    ],
    ['when without otherwise', F.when(col('ok'), col('amount')), 'CASE WHEN ok THEN amount END', 'DOUBLE'],
    ['to_timestamp', F.to_timestamp('payload'), 'to_timestamp(payload)', 'TIMESTAMP'],
    ['to_date', F.to_date('ts'), 'to_date(ts)', 'DATE'],
    ['year', F.year('ts'), 'year(ts)', 'INT'],
    ['month', F.month('d'), 'month(d)', 'INT'],
    ['dayofmonth', F.dayofmonth('d'), 'dayofmonth(d)', 'INT'],
    ['dayofweek', F.dayofweek('d'), 'dayofweek(d)', 'INT'],
    ['quarter', F.quarter('d'), 'quarter(d)', 'INT'],
    ['hour', F.hour('ts'), 'hour(ts)', 'INT'],
    ['minute', F.minute('ts'), 'minute(ts)', 'INT'],
    ['second', F.second('ts'), 'second(ts)', 'INT'],
    ['date_trunc', F.date_trunc('HOUR', 'ts'), "date_trunc('HOUR', ts)", 'TIMESTAMP'],
    ['trunc', F.trunc('d', 'month'), "trunc(d, 'month')", 'DATE'],
    ['date_add', F.date_add('d', 1), 'date_add(d, 1)', 'DATE'],
    ['date_sub', F.date_sub('d', col('qty')), 'date_sub(d, qty)', 'DATE'],
    ['datediff', F.datediff('d', lit('2026-01-01')), "datediff(d, '2026-01-01')", 'INT'],
    ['add_months', F.add_months('d', 1), 'add_months(d, 1)', 'DATE'],
    ['last_day', F.last_day('d'), 'last_day(d)', 'DATE'],
    ['unix_timestamp', F.unix_timestamp('ts'), 'unix_timestamp(ts)', 'BIGINT'],
    ['unix_millis', F.unix_millis('ts'), 'unix_millis(ts)', 'BIGINT'],
    ['timestamp_seconds', F.timestamp_seconds('n'), 'timestamp_seconds(n)', 'TIMESTAMP'],
    ['from_unixtime', F.from_unixtime('n'), 'from_unixtime(n)', 'STRING'],
    ['make_date', F.make_date(2026, 10, col('qty')), 'make_date(2026, 10, qty)', 'DATE'],
    ['from_json', F.from_json('payload', 'a INT, b DOUBLE'), "from_json(payload, 'a INT, b DOUBLE')", 'STRUCT<a: INT, b: DOUBLE>'],
    ['to_json', F.to_json('customer'), 'to_json(customer)', 'STRING'],
    ['get_json_object', F.get_json_object('payload', '$.a.b[1]'), "get_json_object(payload, '$.a.b[1]')", 'STRING'],
    ['size', F.size('tags'), 'size(tags)', 'INT'],
    ['element_at of an array', F.element_at('nums', 1), 'element_at(nums, 1)', 'INT'],
    ['element_at of a map', F.element_at('attrs', 'k'), "element_at(attrs, 'k')", 'INT'],
    ['array_contains', F.array_contains('tags', 'x'), "array_contains(tags, 'x')", 'BOOLEAN'],
    ['struct', F.struct('country', 'qty'), 'struct(country, qty)', 'STRUCT<country: STRING, qty: INT>'],
    ['named_struct', F.named_struct({ c: 'country', q: lit(1) }), "named_struct('c', country, 'q', 1)", 'STRUCT<c: STRING, q: INT>'],
    ['array', F.array('qty', lit(2)), 'array(qty, 2)', 'ARRAY<INT>'],
    ['create_map', F.create_map(lit('a'), 'qty'), "map('a', qty)", 'MAP<STRING, INT>'],
    ['map_keys', F.map_keys('attrs'), 'map_keys(attrs)', 'ARRAY<STRING>'],
    ['map_values', F.map_values('attrs'), 'map_values(attrs)', 'ARRAY<INT>'],
    ['array_distinct', F.array_distinct('tags'), 'array_distinct(tags)', 'ARRAY<STRING>'],
    ['array_join', F.array_join('tags', ' ', '?'), "array_join(tags, ' ', '?')", 'STRING'],
    ['sort_array', F.sort_array('nums', false), 'sort_array(nums, false)', 'ARRAY<INT>'],
    ['slice', F.slice('nums', 1, 2), 'slice(nums, 1, 2)', 'ARRAY<INT>'],
    ['array_max', F.array_max('nums'), 'array_max(nums)', 'INT'],
    ['flatten', F.flatten(F.array('nums', 'nums')), 'flatten(array(nums, nums))', 'ARRAY<INT>'],
    ['md5', F.md5('country'), 'md5(country)', 'STRING'],
    ['sha2', F.sha2('country', 256), 'sha2(country, 256)', 'STRING'],
    ['crc32', F.crc32('country'), 'crc32(country)', 'BIGINT'],
    ['hash', F.hash('country', 'qty'), 'hash(country, qty)', 'INT'],
    ['xxhash64', F.xxhash64('country'), 'xxhash64(country)', 'BIGINT'],
    ['sha', F.sha('country'), 'sha(country)', 'STRING'],
    ['lcase', F.lcase('country'), 'lcase(country)', 'STRING'],
    ['ucase', F.ucase('country'), 'ucase(country)', 'STRING'],
    ['char_length', F.char_length('country'), 'char_length(country)', 'INT'],
    ['left', F.left('country', 2), 'left(country, 2)', 'STRING'],
    ['right', F.right('country', 2), 'right(country, 2)', 'STRING'],
    ['ceiling', F.ceiling('amount'), 'ceiling(amount)', 'BIGINT'],
    ['power', F.power('qty', 2), 'power(qty, 2)', 'DOUBLE'],
    ['sign', F.sign('amount'), 'sign(amount)', 'DOUBLE'],
    ['day', F.day('d'), 'day(d)', 'INT'],
    ['try_add', F.try_add('qty', 1), 'try_add(qty, 1)', 'INT'],
    ['try_subtract', F.try_subtract('n', 'qty'), 'try_subtract(n, qty)', 'BIGINT'],
    ['try_multiply', F.try_multiply('qty', 2), 'try_multiply(qty, 2)', 'INT'],
    ['try_divide', F.try_divide('qty', 2), 'try_divide(qty, 2)', 'DOUBLE'],
    ['try_mod', F.try_mod('qty', 2), 'try_mod(qty, 2)', 'INT'],
    ['cardinality', F.cardinality('attrs'), 'cardinality(attrs)', 'INT'],
    ['get', F.get('nums', 0), 'get(nums, 0)', 'INT'],
    ['try_element_at', F.try_element_at('nums', 5), 'try_element_at(nums, 5)', 'INT'],
  ])('%s: %s', (_what, c, sql, type) => {
    expect(c.sql).toBe(sql);
    expect(typeOf(c)).toBe(type);
  });

  it('renders the generators, which the analyzer takes as generators', () => {
    expect(
      [F.explode('tags'), F.explode_outer('attrs'), F.posexplode('nums'), F.posexplode_outer('tags'), F.inline('lines'), F.inline_outer('lines')].map(
        (c) => c.sql,
      ),
    ).toEqual(['explode(tags)', 'explode_outer(attrs)', 'posexplode(nums)', 'posexplode_outer(tags)', 'inline(lines)', 'inline_outer(lines)']);
    expect(compileExpression(F.explode('tags').sql, COLS).generator).toBeDefined();
    expect(F.stack(2, 'a', F.col('qty'), 'b', 2).sql).toBe("stack(2, 'a', qty, 'b', 2)");
  });
});

describe('Column methods', () => {
  it.each<[string, Column, string, string]>([
    ['multiply', col('amount').multiply(col('qty')), 'amount * qty', 'DOUBLE'],
    ['multiply by a literal', col('qty').multiply(2), 'qty * 2', 'INT'],
    ['plus', col('qty').plus(col('n')), 'qty + n', 'BIGINT'],
    // lit(1) beside a DECIMAL(10,2) is DECIMAL(1,0) (literalPickMinimumPrecision): max(8, 1) + 2 + 1 = 11
    ['minus', col('price').minus(1), 'price - 1', 'DECIMAL(11,2)'],
    ['divide', col('qty').divide(4), 'qty / 4', 'DOUBLE'],
    ['mod', col('qty').mod(3), 'qty % 3', 'INT'],
    ['a sum times a column: parentheses', col('qty').plus(1).multiply(col('amount')), '(qty + 1) * amount', 'DOUBLE'],
    ['a product plus a column: none', col('qty').multiply(2).plus(1), 'qty * 2 + 1', 'INT'],
    ['a difference on the right', col('qty').minus(col('qty').minus(1)), 'qty - (qty - 1)', 'INT'],
    ['negate', col('qty').plus(1).negate(), '-(qty + 1)', 'INT'],
    // (`--` opens a comment in Spark SQL: found by sql-builder-differential.test.ts)
    ['negate of a negation', col('qty').negate().negate(), '-(-qty)', 'INT'],
    ['negate of a negative literal', F.lit(-1).negate(), '-(-1)', 'INT'],
    ['eq', col('country').eq('DE'), "country = 'DE'", 'BOOLEAN'],
    ['neq', col('qty').neq(0), 'qty <> 0', 'BOOLEAN'],
    ['lt', col('qty').lt(col('n')), 'qty < n', 'BOOLEAN'],
    ['leq', col('qty').leq(1.5), 'qty <= 1.5D', 'BOOLEAN'],
    ['gt', col('amount').multiply(col('qty')).gt(100), 'amount * qty > 100', 'BOOLEAN'],
    ['geq', col('ts').geq(new Date(Date.UTC(2026, 9, 1, 12))), "ts >= TIMESTAMP '2026-10-01 12:00:00.000'", 'BOOLEAN'],
    ['eqNullSafe', col('country').eqNullSafe(null), 'country <=> NULL', 'BOOLEAN'],
    ['and / or', col('qty').gt(1).and(col('ok')).or(col('country').eq('FR')), "qty > 1 AND ok OR country = 'FR'", 'BOOLEAN'],
    ['or inside and: parentheses', col('ok').and(col('qty').gt(1).or(col('n').gt(1))), 'ok AND (qty > 1 OR n > 1)', 'BOOLEAN'],
    ['not', col('qty').gt(1).not(), 'NOT qty > 1', 'BOOLEAN'],
    ['not of an and', col('ok').and(col('ok')).not(), 'NOT (ok AND ok)', 'BOOLEAN'],
    ['isNull', col('country').isNull(), 'country IS NULL', 'BOOLEAN'],
    ['isNotNull of a sum', col('qty').plus(1).isNotNull(), 'qty + 1 IS NOT NULL', 'BOOLEAN'],
    ['isin', col('country').isin('DE', 'FR'), "country IN ('DE', 'FR')", 'BOOLEAN'],
    ['isin of an array', col('qty').isin([1, 2, 3]), 'qty IN (1, 2, 3)', 'BOOLEAN'],
    ['between', col('qty').between(1, col('n')), 'qty BETWEEN 1 AND n', 'BOOLEAN'],
    ['like', col('country').like('D%'), "country LIKE 'D%'", 'BOOLEAN'],
    ['rlike', col('country').rlike('^D.$'), "country RLIKE '^D.$'", 'BOOLEAN'],
    ['ilike', col('country').ilike('d%'), "country ILIKE 'd%'", 'BOOLEAN'],
    ['contains', col('country').contains('E'), "contains(country, 'E')", 'BOOLEAN'],
    ['startswith', col('country').startswith('D'), "startswith(country, 'D')", 'BOOLEAN'],
    ['substr', col('country').substr(1, 1), 'substring(country, 1, 1)', 'STRING'],
    ['getField', col('customer').getField('city'), 'customer.city', 'STRING'],
    ['getField of a call', F.from_json('payload', 'a INT').getField('a'), "from_json(payload, 'a INT').a", 'INT'],
    ['getItem of an array', col('tags').getItem(0), 'tags[0]', 'STRING'],
    ['getItem of a map', col('attrs').getItem('k'), "attrs['k']", 'INT'],
    ['cast', col('amount').cast('DECIMAL(10,2)'), 'CAST(amount AS DECIMAL(10,2))', 'DECIMAL(10,2)'],
    ['a method on expr: parentheses', expr('amount + 1').multiply(2), '(amount + 1) * 2', 'DOUBLE'],
  ])('%s: %s', (_what, c, sql, type) => {
    expect(c.sql).toBe(sql);
    expect(typeOf(c)).toBe(type);
  });

  it('names a column with as/alias, and toString is the selectExpr item', () => {
    expect(col('qty').multiply(2).as('double qty').toString()).toBe('qty * 2 AS `double qty`');
    expect(F.upper('country').alias('c').toString()).toBe('upper(country) AS c');
  });
});

describe('literals are exact SQL', () => {
  it.each<[string, unknown, string, string]>([
    ['a string', 'DE', "'DE'", 'STRING'],
    ['a string with a quote, a backslash and a newline', "it's a\\b\n", "'it\\'s a\\\\b\\n'", 'STRING'],
    ['an INT', 42, '42', 'INT'],
    ['a negative INT', -7, '-7', 'INT'],
    ['the largest INT', 2147483647, '2147483647', 'INT'],
    ['an integer beyond INT', 3000000000, '3000000000L', 'BIGINT'],
    ['a double', 1.5, '1.5D', 'DOUBLE'],
    ['a large double', 1e21, '1E21D', 'DOUBLE'],
    ['a small double', 5e-7, '5E-7D', 'DOUBLE'],
    ['minus zero', -0, '-0.0D', 'DOUBLE'],
    ['NaN', Number.NaN, "CAST('NaN' AS DOUBLE)", 'DOUBLE'],
    ['infinity', Number.NEGATIVE_INFINITY, "CAST('-Infinity' AS DOUBLE)", 'DOUBLE'],
    ['a bigint', 5n, '5L', 'BIGINT'],
    ['the smallest bigint', -(2n ** 63n), "CAST('-9223372036854775808' AS BIGINT)", 'BIGINT'],
    ['true', true, 'true', 'BOOLEAN'],
    ['null', null, 'NULL', 'VOID'],
    ['a Date', new Date(Date.UTC(2026, 9, 1, 12, 30, 0, 125)), "TIMESTAMP '2026-10-01 12:30:00.125'", 'TIMESTAMP'],
    ['an array', [1, 2], 'array(1, 2)', 'ARRAY<INT>'],
  ])('%s', (_what, v, sql, type) => {
    const c = lit(v as never);
    expect(c.sql).toBe(sql);
    expect(typeOf(c)).toBe(type);
  });

  it('keeps the value: a string, a double, a bigint and a Date evaluate to what was given', () => {
    const value = (c: Column) => compileExpression(c.sql, []).evaluate({});
    expect(value(lit("it's a\\b\n\t%_"))).toBe("it's a\\b\n\t%_");
    expect(value(lit(0.1))).toBe(0.1);
    expect(value(lit(9007199254740993n))).toBe(9007199254740993n);
    expect(value(lit(-3000000000))).toBe(-3000000000);
    expect(value(lit(new Date(Date.UTC(2026, 9, 1, 12, 30, 0, 125))))).toBe(Date.UTC(2026, 9, 1, 12, 30, 0, 125) * 1000);
  });

  it('refuses what has no literal', () => {
    expect(() => lit(2n ** 64n)).toThrow(InvalidQueryError);
    expect(() => lit(new Date(Number.NaN))).toThrow(InvalidQueryError);
    expect(() => col('')).toThrow(InvalidQueryError);
  });
});

const orders = () =>
  readStream.format('json').schema('id STRING, country STRING, amount DOUBLE, qty INT, ts TIMESTAMP, lines ARRAY<STRUCT<sku: STRING, n: INT>>').load();
/** The texts of a plan's stages (the compiled parts are functions, which differ between two builds). */
const texts = (f: { writeStream: { plan(): QueryPlan } }) =>
  f.writeStream.plan().stages.map((s) => {
    if (s.kind === 'selectExpr') return { kind: s.kind, items: s.items };
    if (s.kind === 'withColumnExpr') return { kind: s.kind, name: s.name, text: s.text };
    if (s.kind === 'filterExpr') return { kind: s.kind, text: s.text };
    return { kind: s.kind };
  });

describe('both forms build the same plan', () => {
  it('select(F...) is selectExpr(text)', () => {
    const f = orders();
    expect(texts(orders().select(F.upper(col('country')).as('c')))).toEqual(texts(orders().selectExpr('upper(country) AS c')));
    expect(texts(f.select('id', f.col('amount').multiply(f.col('qty')).as('revenue'), F.round('amount', 1)))).toEqual(
      texts(orders().selectExpr('id', 'amount * qty AS revenue', 'round(amount, 1)')),
    );
  });

  it('filter, withColumn and an explode with F are their text forms', () => {
    const typed = orders()
      .filter(col('amount').gt(0).and(col('country').isin('DE', 'FR')))
      .withColumn('c', F.lower('country'))
      .withColumn('size', F.when(col('qty').geq(10), 'big').otherwise('small'))
      .select('id', F.explode('lines').as('line'));
    const text = orders()
      .filter("amount > 0 AND country IN ('DE', 'FR')")
      .withColumn('c', 'lower(country)')
      .withColumn('size', "CASE WHEN qty >= 10 THEN 'big' ELSE 'small' END")
      .selectExpr('id', 'explode(lines) AS line');
    expect(texts(typed)).toEqual(texts(text));
    expect(texts(typed).map((s) => s.kind)).toEqual(['filterExpr', 'withColumnExpr', 'withColumnExpr', 'selectExpr']);
  });

  it('a grouping by a function and an aggregate of a Column are those of expr(...)', () => {
    const byF = orders()
      .groupBy(F.lower('country').as('country'))
      .agg(F.sum(col('amount').multiply(col('qty'))).as('revenue'))
      .writeStream.outputMode('update')
      .plan();
    const byText = orders()
      .groupBy(expr('lower(country)').as('country'))
      .agg(F.sum(expr('amount * qty')).as('revenue'))
      .writeStream.outputMode('update')
      .plan();
    const strip = (p: unknown) => JSON.stringify(p, (_k, v) => (typeof v === 'function' ? 'fn' : v));
    expect(strip(byF)).toEqual(strip(byText));
  });

  it('frame.col refuses a column the frame does not have, with Spark suggestion', () => {
    expect(() => orders().col('amout' as never)).toThrow(/UNRESOLVED_COLUMN[\s\S]*amount/);
  });
});

describe('a query built with F runs', () => {
  it('emits the rows Spark would', async () => {
    const f = orders();
    const g = f.filter(f.col('amount').gt(0)).withColumn('revenue', f.col('amount').multiply(f.col('qty')).cast('DECIMAL(10,2)'));
    const plan = g
      .select(
        'id',
        F.upper(f.col('country')).as('country'),
        g.col('revenue'),
        F.when(f.col('qty').geq(10), 'bulk').otherwise('unit').as('kind'),
        F.hour('ts').as('h'),
        F.size('lines').as('lines'),
        F.coalesce(F.element_at('lines', 1).getField('sku'), lit('none')).as('first_sku'),
      )
      .writeStream.plan();
    const t = createTestRunner(plan);
    t.drop([
      { id: 'a', country: 'de', amount: 2.5, qty: 12, ts: '2026-10-01T09:15:00Z', lines: [{ sku: 'x', n: 1 }] },
      { id: 'b', country: 'fr', amount: -1, qty: 1, ts: '2026-10-01T10:00:00Z', lines: [] },
      { id: 'c', country: "it's", amount: 1.25, qty: 1, ts: '2026-10-01T23:59:59Z', lines: [{ sku: null, n: 2 }] },
      { id: 'd', country: 'es', amount: 1, qty: 1, ts: '2026-10-01T00:00:00Z', lines: [] },
    ]);
    const r = await t.run();
    expect(r.batches.flatMap((b) => b.rows)).toEqual([
      { id: 'a', country: 'DE', revenue: '30.00', kind: 'bulk', h: 9, lines: 1, first_sku: 'x' },
      { id: 'c', country: "IT'S", revenue: '1.25', kind: 'unit', h: 23, lines: 1, first_sku: 'none' },
    ]);
    // element_at(lines, 1) of an empty array is an ANSI error: the row is a dead letter, as the string form's would be
    expect(JSON.stringify([...t.deadLetters.records.values()])).toContain('INVALID_ARRAY_INDEX_IN_ELEMENT_AT');
  });
});

describe('a grouping built with F runs', () => {
  it('groups by a function and a column and sums a product, with the names the types give', async () => {
    const f = readStream.format('json').schema('country STRING, ok BOOLEAN, amount DOUBLE, qty INT').load();
    const plan = f
      .groupBy(F.lower(f.col('country')).as('country'), f.col('ok'))
      .agg(F.sum(f.col('amount').multiply(f.col('qty'))).as('revenue'), F.sum(f.col('qty')).as('units'))
      .writeStream.outputMode('update')
      .plan();
    const t = createTestRunner(plan);
    t.drop([
      { country: 'DE', ok: true, amount: 2.5, qty: 2 },
      { country: 'de', ok: true, amount: 1, qty: 3 },
      { country: 'FR', ok: false, amount: 4, qty: 1 },
    ]);
    const rows = (await t.run()).batches.flatMap((b) => b.rows);
    const sorted = [...rows].sort((a, b) => String(a.country).localeCompare(String(b.country)));
    expect(sorted).toEqual([
      { country: 'de', ok: true, revenue: 8, units: 5 },
      { country: 'fr', ok: false, revenue: 4, units: 1 },
    ]);
  });
});

describe('docs/expressions.md, "The functions module"', () => {
  const page = readFileSync(join(__dirname, '../../docs/expressions.md'), 'utf8');
  const section = page.slice(page.indexOf('## The functions module'));
  const rows = section
    .split('\n')
    .map((line) => /^\| `(.+)` \| `(.+)` \|$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1], m[2]]);

  it('has its table', () => {
    expect(rows.length).toBeGreaterThan(25);
  });

  it('lists every function of F, and every Column method it lists exists', () => {
    const names = (from: string, to: string) => [...section.slice(section.indexOf(from), section.indexOf(to)).matchAll(/`([a-z_A-Z0-9]+)`/g)].map((m) => m[1]);
    const functions = names('The functions:', 'Column methods:');
    const methods = names('Column methods:', 'Not there yet');
    expect(functions.length).toBeGreaterThan(120);
    expect(methods.length).toBeGreaterThan(30);
    const exported = Object.keys(F).filter((k) => typeof (F as Record<string, unknown>)[k] === 'function' && !['Column', 'CaseColumn'].includes(k));
    expect([...exported].sort()).toEqual([...new Set(functions)].sort());
    const proto = F.Column.prototype as unknown as Record<string, unknown>;
    expect(methods.filter((m) => typeof proto[m] !== 'function')).toEqual([]);
  });

  it.each(rows)('%s is %s', (call, sql) => {
    const column = new Function('F', `return ${call}`)(F) as Column;
    expect(column.toString()).toBe(sql);
  });
});
