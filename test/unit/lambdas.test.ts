/**
 * Higher-order functions and their lambdas (lib/engine/expr/lambdas.ts), beyond the examples of
 * docs/expressions.md (expr-docs.test.ts): how a lambda's names resolve, its types, nulls, the
 * errors Spark raises when the query is analyzed, and a row error raised inside a lambda. The
 * expectations follow Spark's higherOrderFunctions.scala and its function documentation.
 */
import { compileSql, F, readStream } from '../../lib/api/query';
import { parseDdlColumns } from '../../lib/engine/ddl';
import { compileExpression, compileSelect } from '../../lib/engine/expr';
import { typeName } from '../../lib/engine/expr/types';
import { runPlanOnce } from '../helpers/run-plan';
import { errorMessageOf } from '../helpers/expr-errors';

const COLS = parseDdlColumns('x INT, xs ARRAY<INT>, lines ARRAY<STRUCT<qty: INT, price: DOUBLE>>, tags MAP<STRING, INT>, k STRING');
const ROW = {
  x: 100,
  xs: [1, 2, 3],
  lines: [
    { qty: 2, price: 1.5 },
    { qty: 1, price: 4 },
  ],
  tags: { a: 1, b: 5 },
  k: 'K',
};
const run = (text: string, row: Record<string, unknown> = ROW) => compileExpression(text, COLS).evaluate(row);
const errorOf = (text: string) => errorMessageOf(text, COLS, ROW);

describe('a lambda', () => {
  it('reads its parameters before columns of the same name, and other columns of the row', () => {
    expect(run('transform(xs, x -> x + 1)')).toEqual([2, 3, 4]);
    expect(run('transform(xs, X -> x * 10)')).toEqual([10, 20, 30]);
    expect(run('transform(xs, y -> y + x)')).toEqual([101, 102, 103]);
    expect(run('transform(xs, y -> concat(k, y))')).toEqual(['K1', 'K2', 'K3']);
  });

  it('takes fields of STRUCT elements, and nests (an inner parameter hides an outer one)', () => {
    expect(run('aggregate(lines, 0D, (acc, l) -> acc + l.qty * l.price)')).toBe(7);
    expect(run('transform(xs, x -> transform(xs, x -> x * 2))')).toEqual([
      [2, 4, 6],
      [2, 4, 6],
      [2, 4, 6],
    ]);
    expect(run('transform(xs, a -> filter(xs, b -> b > a))')).toEqual([[2, 3], [3], []]);
  });

  it('is typed from the collection: the element, an INT index, the zero value, a map key and value', () => {
    const type = (text: string) => typeName(compileExpression(text, COLS).sqlType);
    expect(type('transform(lines, l -> l.price)')).toBe('ARRAY<DOUBLE>');
    expect(type('transform(xs, (x, i) -> i)')).toBe('ARRAY<INT>');
    expect(type('aggregate(xs, 0L, (acc, x) -> acc + x)')).toBe('BIGINT');
    expect(type('aggregate(xs, 0, (acc, x) -> acc + x, acc -> acc / 2)')).toBe('DOUBLE');
    expect(type('transform_values(tags, (k, v) -> v > 1)')).toBe('MAP<STRING, BOOLEAN>');
    expect(type('exists(xs, x -> x > 2)')).toBe('BOOLEAN');
  });

  it('gives null for a null collection, and passes null elements to the lambda', () => {
    expect(run('transform(xs, x -> x + 1)', { ...ROW, xs: null })).toBeNull();
    expect(run('aggregate(xs, 0, (acc, x) -> acc + x)', { ...ROW, xs: null })).toBeNull();
    expect(run('transform(xs, x -> coalesce(x, -1))', { ...ROW, xs: [1, null] })).toEqual([1, -1]);
    expect(run('zip_with(xs, array(1), (a, b) -> b)')).toEqual([1, null, null]);
    expect(run('map_filter(tags, (k, v) -> v > 1)')).toEqual({ b: 5 });
  });

  it("raises a row's error from inside it (a dead letter in a query)", () => {
    expect(errorOf('transform(xs, x -> 10 DIV (x - 2))')).toMatch(/^\[DIVIDE_BY_ZERO\]/);
    expect(errorOf("transform_keys(tags, (k, v) -> 'same')")).toMatch(/^\[DUPLICATED_MAP_KEY\]/);
    expect(errorOf('transform_keys(tags, (k, v) -> CAST(NULL AS STRING))')).toMatch(/^\[NULL_MAP_KEY\]/);
  });

  it("map_zip_with: the first map's keys in order, then the second's others; a side's missing value is null", () => {
    expect(run("map_zip_with(tags, map('b', 20, 'z', 26), (k, v1, v2) -> coalesce(v1, 0) + coalesce(v2, 0))")).toEqual({ a: 1, b: 25, z: 26 });
    expect(Object.keys(run("map_zip_with(map('z', 1), map('a', 2, 'z', 3), (k, a, b) -> k)") as object)).toEqual(['z', 'a']);
    expect(run('map_zip_with(tags, CAST(NULL AS MAP<STRING, INT>), (k, a, b) -> a)')).toBeNull();
    expect(errorOf('map_zip_with(tags, map(1, 2), (k, a, b) -> a)')).toMatch(/^\[DATATYPE_MISMATCH\.MAP_ZIP_WITH_DIFF_TYPES\]/);
    expect(errorOf('map_zip_with(tags, tags, (k, v) -> v)')).toMatch(/^\[INVALID_LAMBDA_FUNCTION_CALL\.NUM_ARGS_MISMATCH\]/);
    // the functions module's form is the same call
    expect(
      run(
        F.map_zip_with(
          'tags',
          F.map_filter('tags', (_k, v) => v.gt(1)),
          (_k, a, b) => F.coalesce(b, a),
        ).sql,
      ),
    ).toEqual({ a: 1, b: 5 });
    expect(run(F.map_zip_with('tags', 'tags', (_k, a, b) => a.plus(b)).sql)).toEqual({ a: 2, b: 10 });
  });

  it('array_sort: nulls last and NaN above every number without a comparator; stable with one; a null from it is an error', () => {
    expect(run("array_sort(array(2D, NULL, CAST('NaN' AS DOUBLE), -1D))")).toEqual([-1, 2, Number.NaN, null]);
    expect(run('array_sort(lines, (a, b) -> a.qty - a.qty)')).toEqual(ROW.lines);
    expect(run('array_sort(lines, (a, b) -> a.qty - b.qty)')).toEqual([ROW.lines[1], ROW.lines[0]]);
    expect(errorOf('array_sort(array(1, 2), (a, b) -> CAST(NULL AS INT))')).toMatch(/^\[COMPARATOR_RETURNS_NULL\]/);
    expect(errorOf('array_sort(xs, (a, b) -> a < b)')).toMatch(/^\[DATATYPE_MISMATCH\.UNEXPECTED_RETURN_TYPE\]/);
    expect(errorOf('array_sort(array(tags))')).toMatch(/^\[DATATYPE_MISMATCH\.INVALID_ORDERING_TYPE\]/);
  });

  it('names an unaliased result as Spark does', () => {
    expect(compileSelect(['transform(xs, x -> x + 1)'], COLS).columns[0].name).toBe(
      'transform(xs, lambdafunction((namedlambdavariable() + 1), namedlambdavariable()))',
    );
  });
});

describe('a lambda in a SQL statement', () => {
  it('parses and runs as in selectExpr', () => {
    const plan = compileSql(
      "SELECT id, transform(xs, x -> x + 1) AS ys, filter(xs, (x, i) -> x > i) AS zs FROM STREAM read_files(schema => 'id INT, xs ARRAY<INT>')",
    );
    const [stage] = plan.stages;
    expect(stage.kind === 'selectExpr' && stage.compiled.project({ id: 1, xs: [0, 5, 1] })).toEqual({ id: 1, ys: [1, 6, 2], zs: [5] });
  });
});

describe('a query with a lambda Spark refuses', () => {
  it.each([
    ['transform(xs, 1)', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*must be a lambda function/],
    ['transform(x, y -> y)', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*requires the "ARRAY" type/],
    ['transform(xs, (a, b, c) -> a)', /^\[INVALID_LAMBDA_FUNCTION_CALL\.NUM_ARGS_MISMATCH\]/],
    ['transform(xs, (a, A) -> a)', /^\[INVALID_LAMBDA_FUNCTION_CALL\.DUPLICATE_ARG_NAMES\]/],
    ['filter(xs, x -> x + 1)', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*must return "BOOLEAN"/],
    ['aggregate(lines, 0, (acc, l) -> acc + l.price)', /^\[DATATYPE_MISMATCH\.UNEXPECTED_INPUT_TYPE\].*requires the "INT" type/],
    ['abs(x -> x)', /^\[INVALID_LAMBDA_FUNCTION_CALL\.NON_HIGHER_ORDER_FUNCTION\]/],
    ['transform(xs, x -> nope)', /^\[UNRESOLVED_COLUMN/],
  ])('%s', (text, error) => {
    expect(errorOf(text)).toMatch(error);
  });
});

describe('the functions module F with lambdas (pyspark style)', () => {
  it('builds the same SQL a lambda written as text does, and runs it', async () => {
    const plan = readStream
      .format('json')
      .schema('id INT, xs ARRAY<INT>, tags MAP<STRING, INT>')
      .load('s3://b/in/')
      .select(
        'id',
        F.transform('xs', (x) => x.plus(1)).as('ys'),
        F.filter('xs', (x, i) => x.gt(i)).as('zs'),
        F.aggregate('xs', 0, (acc, x) => acc.plus(x)).as('total'),
        F.exists('xs', (x) =>
          F.transform('xs', (y) => y.plus(x))
            .getItem(1)
            .gt(9),
        ).as('deep'),
        F.transform_values('tags', (_k, v) => v.multiply(10)).as('tens'),
        F.array_sort('xs', (a, b) => b.minus(a)).as('desc'),
      )
      .writeStream.plan();
    const [stage] = plan.stages;
    expect(stage.kind === 'selectExpr' && stage.items.slice(1, 5)).toEqual([
      'transform(xs, x_1 -> x_1 + 1) AS ys',
      'filter(xs, (x_1, y_1) -> x_1 > y_1) AS zs',
      'aggregate(xs, 0, (x_1, y_1) -> x_1 + y_1) AS total',
      'exists(xs, x_1 -> transform(xs, x_2 -> x_2 + x_1)[1] > 9) AS deep',
    ]);
    const { rows } = await runPlanOnce(plan, [{ id: 1, xs: [0, 5, 1], tags: { a: 2 } }]);
    expect(rows).toEqual([{ id: 1, ys: [1, 6, 2], zs: [5], total: 6, deep: true, tens: { a: 20 }, desc: [5, 1, 0] }]);
  });
});
