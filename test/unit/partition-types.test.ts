/**
 * Spark's type inference of partition columns the schema does not declare
 * (lib/engine/formats/partition-types.ts): PartitioningUtils.inferPartitionColumnValue per value,
 * then the values' types widened (resolvePartitions), each case worked out from Java's parsers
 * and Spark's TypeCoercion by hand; and the landing source's report of such columns.
 */
import { undeclaredPartitionColumns } from '../../lib/aws/s3/file-rules';
import { ddlOf } from '../../lib/engine/ddl';
import { inferPartitionColumnType, inferPartitionValueType, widerPartitionType } from '../../lib/engine/formats/partition-types';
import { readStream } from '../../lib/engine/query/reader';
import { parseSchema } from '../../lib/engine/schema';

const one = (text: string) => {
  const t = inferPartitionValueType(text);
  return t === null ? null : ddlOf(t);
};
const column = (...values: string[]) => ddlOf(inferPartitionColumnType(values));

describe('the type of one partition value (tried in Spark order: int, long, decimal, double, timestamp, date, string)', () => {
  it.each([
    ['5', 'INT'],
    ['05', 'INT'], // Integer.parseInt reads leading zeros
    ['-2147483648', 'INT'],
    ['+7', 'INT'],
    ['2147483648', 'BIGINT'], // one past Integer.MAX_VALUE
    ['20261001', 'INT'],
    ['9223372036854775807', 'BIGINT'],
    ['9223372036854775808', 'DECIMAL(19,0)'], // past Long.MAX_VALUE: a BigDecimal of scale 0
    ['000000000000000000001', 'INT'], // parseInt reads leading zeros, whatever their number
    ['12345678901234567890123456789012345678', 'DECIMAL(38,0)'],
    ['123456789012345678901234567890123456789', 'DOUBLE'], // 39 digits: no DECIMAL, Double.parseDouble reads it
    ['1.5', 'DOUBLE'], // a scale above 0 is no DECIMAL
    ['1e3', 'DOUBLE'], // a negative scale is refused by Spark's Decimal
    ['1.5d', 'DOUBLE'], // Java's suffix
    ['NaN', 'DOUBLE'],
    ['-Infinity', 'DOUBLE'],
    ['2026-10-01', 'DATE'],
    ['2026-02-30', 'STRING'], // not a day: the cast to DATE is null, so Spark refuses DATE
    ['2026-10-01 12:30:00', 'TIMESTAMP'],
    ['2026-10-01 12:30:00.123456', 'TIMESTAMP'],
    ['2026-10-01T12:30:00', 'STRING'], // not Spark's partition pattern (a space, not T)
    ['2026-1-1', 'STRING'],
    ['true', 'STRING'], // inference never gives BOOLEAN
    ['eu-west', 'STRING'],
    ['', 'STRING'],
  ])('%s is %s', (text, ddl) => {
    expect(one(text)).toBe(ddl);
  });

  it('__HIVE_DEFAULT_PARTITION__ is a null, of no type', () => {
    expect(one('__HIVE_DEFAULT_PARTITION__')).toBeNull();
  });
});

describe("a column's type: its values' types widened", () => {
  it.each([
    [['1', '2'], 'INT'],
    [['1', '3000000000'], 'BIGINT'],
    [['1', '99999999999999999999'], 'DECIMAL(20,0)'],
    [['3000000000', '999999999999999999999'], 'DECIMAL(21,0)'],
    [['5', '99999999999999999999'], 'DECIMAL(20,0)'],
    [['5', '1.5'], 'DOUBLE'],
    [['3000000000', '1.5'], 'DOUBLE'],
    [['99999999999999999999', '1.5'], 'DOUBLE'],
    [['2026-10-01', '2026-10-02 00:00:00'], 'TIMESTAMP'],
    [['2026-10-01', '5'], 'STRING'], // a date and a number do not widen
    [['5', 'x'], 'STRING'],
    [['2026-10-01', '__HIVE_DEFAULT_PARTITION__'], 'DATE'], // a null takes the others' type
    [['__HIVE_DEFAULT_PARTITION__'], 'STRING'], // only nulls: STRING, as Spark types a NullType column
    [[], 'STRING'],
  ])('%j is %s', (values, ddl) => {
    expect(column(...values)).toBe(ddl);
  });

  it('widening is symmetric', () => {
    const types = ['1', '3000000000', '99999999999999999999', '1.5', '2026-10-01', '2026-10-01 00:00:00', 'x'].map((v) => inferPartitionValueType(v)!);
    for (const a of types) for (const b of types) expect(ddlOf(widerPartitionType(a, b))).toBe(ddlOf(widerPartitionType(b, a)));
  });
});

describe('the partition columns a listing found that the schema does not declare', () => {
  const files = (...keys: string[]) =>
    keys.map((k) => ({
      partitions: k
        .split('/')
        .slice(0, -1)
        .map((p) => p.split('=') as [string, string]),
    }));

  it('names each undeclared column with the type Spark infers from all its values, declared ones left out', () => {
    const schema = parseSchema('v INT, dt DATE');
    const found = undeclaredPartitionColumns(schema, files('dt=2026-10-01/hour=05/a.json', 'dt=2026-10-02/hour=23/b.json', 'dt=2026-10-02/hour=7/c.json'));
    expect(found).toEqual([{ name: 'hour', ddl: 'hour INT', examples: ['05', '23', '7'] }]);
  });

  it('a name that is no plain identifier is backquoted, as DDL needs it', () => {
    expect(undeclaredPartitionColumns(parseSchema('v INT'), files('event date=2026-10-01/a.json'))).toEqual([
      { name: 'event date', ddl: '`event date` DATE', examples: ['2026-10-01'] },
    ]);
  });

  it('none when the schema declares every partition column, or there are no folders', () => {
    expect(undeclaredPartitionColumns(parseSchema('v INT, dt STRING'), files('dt=x/a.json', 'dt=y/b.json'))).toEqual([]);
    expect(undeclaredPartitionColumns(parseSchema('v INT'), files('a.json'))).toEqual([]);
  });
});

describe('a query that names a partition column the schema does not declare', () => {
  // a DDL of type string: the frame's columns are untyped, so the build's analysis is what refuses (a literal DDL fails to compile too)
  const ddl: string = 'v INT';
  const frame = () => readStream.format('json').schema(ddl).load('s3://bucket/landing/');
  it.each([
    ['select', () => frame().select('dt').writeStream.plan()],
    ['selectExpr', () => frame().selectExpr('upper(dt) AS d').writeStream.plan()],
    ['groupBy', () => frame().groupBy('dt').count().writeStream.outputMode('complete').plan()],
  ])('%s is refused when the query is built, naming the fix: declare it', (_how, build) => {
    expect(build).toThrow(/dt[\s\S]*partition folder is a column only when the schema declares it, e\.g\. \.schema\('\.\.\., dt DATE'\)/);
  });
});
