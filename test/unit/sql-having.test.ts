/**
 * HAVING and select items that are expressions over aggregates or grouping columns (sql/aggregate.ts,
 * sql/over-aggregates.ts): evaluated over the aggregation's output, as Spark evaluates them, and
 * named as Spark names them (toPrettySQL: `(sum(a) / count(1))`). Expectations worked by hand from
 * the rows below.
 */
import { compileSql } from '../../lib/engine/sql';
import { readStream } from '../../lib/engine/query/reader';
import { runPlanOnce } from '../helpers/run-plan';

const S = "read_files(schema => 'k STRING, a INT, b DOUBLE')";
const ROWS = [
  { k: 'x', a: 1, b: 2 },
  { k: 'x', a: 3, b: 4 },
  { k: 'y', a: 5, b: 1 },
];
const run = async (q: string, rows: Record<string, unknown>[] = ROWS) => (await runPlanOnce(compileSql(`SET outputMode = update; ${q}`), rows)).rows;

describe('a select item over aggregates', () => {
  it('is computed over the groups and named as Spark names it', async () => {
    // x: sum 4 over 2 rows, avg(b) 3; y: 5 over 1, avg(b) 1
    expect(await run(`SELECT k, sum(a) / count(*), round(avg(b) * 1.25, 1) AS r, max(a) - min(a) FROM STREAM ${S} GROUP BY k`)).toEqual([
      { k: 'x', '(sum(a) / count(1))': 2, r: 3.8, '(max(a) - min(a))': 2 },
      { k: 'y', '(sum(a) / count(1))': 5, r: 1.3, '(max(a) - min(a))': 0 },
    ]);
  });

  it('finds the aggregates in every part of an expression, a CASE branch included, with or without GROUP BY', async () => {
    expect(await run(`SELECT k, CASE WHEN count(*) > 1 THEN 'many' ELSE 'one' END AS c FROM STREAM ${S} GROUP BY k`)).toEqual([
      { k: 'x', c: 'many' },
      { k: 'y', c: 'one' },
    ]);
    expect(await run(`SELECT CASE WHEN max(a) >= 5 THEN sum(b) END AS s FROM STREAM ${S}`)).toEqual([{ s: 7 }]);
    expect(() => compileSql(`SET outputMode = update; SELECT k, CASE WHEN a > 1 THEN count(*) END FROM STREAM ${S} GROUP BY k`)).toThrow(/MISSING_AGGREGATION/);
  });

  it('may be an expression over the grouping columns, and reuse one aggregate twice', async () => {
    expect(await run(`SELECT upper(k) AS u, count(*) * count(*) AS sq, count(*) FROM STREAM ${S} GROUP BY k`)).toEqual([
      { u: 'X', sq: 4, 'count(1)': 2 },
      { u: 'Y', sq: 1, 'count(1)': 1 },
    ]);
  });

  it('is refused when it reads a column outside the GROUP BY and outside an aggregate, or a column that does not exist', () => {
    expect(() => compileSql(`SET outputMode = update; SELECT k, a + count(*) FROM STREAM ${S} GROUP BY k`)).toThrow(/MISSING_AGGREGATION.*"a \+ count\(\*\)"/s);
    expect(() => compileSql(`SET outputMode = update; SELECT k, zzz + count(*) FROM STREAM ${S} GROUP BY k`)).toThrow(
      /UNRESOLVED_COLUMN.*`zzz`.*\[`a`, `b`, `k`\]/s,
    );
  });
});

describe('HAVING', () => {
  it('keeps the groups whose aggregates pass, an aggregate the select list does not have included', async () => {
    expect(await run(`SELECT k, count(*) AS c FROM STREAM ${S} GROUP BY k HAVING sum(b) > 5`)).toEqual([{ k: 'x', c: 2 }]);
    expect(await run(`SELECT k FROM STREAM ${S} GROUP BY k HAVING max(a) >= 5`)).toEqual([{ k: 'y' }]);
  });

  it('reads a select alias and a grouping column, and filters a global aggregation', async () => {
    expect(await run(`SELECT k, count(*) AS c FROM STREAM ${S} GROUP BY k HAVING c > 1 OR k = 'y'`)).toEqual([
      { k: 'x', c: 2 },
      { k: 'y', c: 1 },
    ]);
    expect(await run(`SELECT k, count(*) AS c FROM STREAM ${S} GROUP BY k HAVING c > 1 AND k = 'y'`)).toEqual([]);
    // a grouping expression, as written (words in any case) or by its alias
    expect(await run(`SELECT upper(k), count(*) AS c FROM STREAM ${S} GROUP BY upper(k) HAVING UPPER(k) <> 'Y'`)).toEqual([{ 'upper(k)': 'X', c: 2 }]);
    expect(await run(`SELECT concat(upper(k), '!') AS loud, max(a) FROM STREAM ${S} GROUP BY upper(k)`)).toEqual([
      { loud: 'X!', 'max(a)': 3 },
      { loud: 'Y!', 'max(a)': 5 },
    ]);
    expect(await run(`SELECT upper(k) AS uk, count(*) AS c FROM STREAM ${S} GROUP BY upper(k) HAVING uk = 'Y'`)).toEqual([{ uk: 'Y', c: 1 }]);
    expect(await run(`SELECT count(*) FROM STREAM ${S} HAVING count(*) > 2`)).toEqual([{ 'count(1)': 3 }]);
    expect(await run(`SELECT count(*) FROM STREAM ${S} HAVING count(*) > 3`)).toEqual([]);
  });

  it('reads a grouping expression that is no call (a + b, -a) wherever it is a whole part of an expression, in parentheses or not', async () => {
    // a + b: x rows 1 + 2 = 3 and 3 + 4 = 7, y 5 + 1 = 6 (a INT + b DOUBLE: DOUBLE); one group each
    expect(await run(`SELECT a + b AS s, count(*) AS c FROM STREAM ${S} GROUP BY a + b HAVING a + b > 3`)).toEqual([
      { s: 7, c: 1 },
      { s: 6, c: 1 },
    ]);
    expect(await run(`SELECT (a + b) * 2 AS d FROM STREAM ${S} GROUP BY (a + b) HAVING (A + B) < 7`)).toEqual([{ d: 6 }, { d: 12 }]);
    expect(await run(`SELECT -a AS m, count(*) AS c FROM STREAM ${S} GROUP BY -a HAVING -a < -2`)).toEqual([
      { m: -3, c: 1 },
      { m: -5, c: 1 },
    ]);
    // 2 * a + b is (2 * a) + b: it holds no a + b, and a and b are not grouped
    expect(() => compileSql(`SET outputMode = update; SELECT 2 * a + b AS d FROM STREAM ${S} GROUP BY a + b`)).toThrow(/MISSING_AGGREGATION/);
  });

  it('takes an aggregate with WITHIN GROUP inside an expression and in HAVING, its clause and all', async () => {
    // x: a 1 and 3 (b 2 and 4), y: a 5 (b 1): listagg of k by a descending, the mode of b (a tie: the lowest) plus 1
    const q = `SELECT k, upper(listagg(k, '-') WITHIN GROUP (ORDER BY a DESC)) AS u, mode() WITHIN GROUP (ORDER BY b) + 1 AS m FROM STREAM ${S}
GROUP BY k HAVING percentile_cont(0.5) WITHIN GROUP (ORDER BY a) > 1`;
    expect(await run(q)).toEqual([
      { k: 'x', u: 'X-X', m: 3 },
      { k: 'y', u: 'Y', m: 2 },
    ]);
  });

  it('holds back an append-mode window until it closes, and then emits it only if it passes', async () => {
    const plan = compileSql(`SET outputMode = append;
SELECT window(t, '10 minutes') AS w, k, sum(a) * 2 AS s2
FROM STREAM read_files(schema => 'k STRING, a INT, t TIMESTAMP') WATERMARK t DELAY OF INTERVAL 1 MINUTE
GROUP BY window(t, '10 minutes'), k HAVING count(*) > 1`);
    const { rows } = await runPlanOnce(plan, [
      { k: 'x', a: 1, t: '2026-10-01 12:00:00' },
      { k: 'x', a: 3, t: '2026-10-01 12:01:00' },
      { k: 'y', a: 5, t: '2026-10-01 12:02:00' },
      // moves the watermark to 12:29: the 12:00 window closes, the 12:30 one does not
      { k: 'y', a: 5, t: '2026-10-01 12:30:00' },
    ]);
    // the 12:00 window: x has two rows (kept, 2 × 4), y one (filtered out)
    expect(rows).toEqual([{ w: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, k: 'x', s2: 8 }]);
  });

  it('reads the window of a windowed aggregation by its column, window', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT window.start AS at, k, count(*) AS n
FROM STREAM read_files(schema => 'k STRING, t TIMESTAMP') WATERMARK t DELAY OF INTERVAL 1 MINUTE
GROUP BY window(t, '10 minutes'), k HAVING window.end > TIMESTAMP '2026-10-01 12:10:00'`);
    const { rows } = await runPlanOnce(plan, [
      { k: 'x', t: '2026-10-01 12:00:00' },
      { k: 'x', t: '2026-10-01 12:11:00' },
    ]);
    expect(rows).toEqual([{ at: '2026-10-01T12:10:00.000Z', k: 'x', n: 1 }]);
  });

  it("is refused as Spark refuses it: a column outside the GROUP BY, a condition that is not BOOLEAN (named by its aggregate's name)", () => {
    expect(() => compileSql(`SET outputMode = update; SELECT k, count(*) FROM STREAM ${S} GROUP BY k HAVING a > 1`)).toThrow(/MISSING_AGGREGATION.*"a > 1"/s);
    expect(() => compileSql(`SET outputMode = update; SELECT k, count(*) FROM STREAM ${S} GROUP BY k HAVING count(*)`)).toThrow(
      /FILTER_NOT_BOOLEAN.*"count\(1\)" of type "BIGINT"/s,
    );
    expect(() => compileSql(`SET outputMode = update; SELECT k, count(*) FROM STREAM ${S} GROUP BY k HAVING zzz > 1`)).toThrow(/UNRESOLVED_COLUMN.*`zzz`/s);
  });
});

describe('a cast without AS', () => {
  // Spark's ResolveAliases names Cast(column) by the column and any other expression by its pretty
  // SQL; Dataset.selectExpr (Column.named) also names a cast of casts of a column by the column.
  it('is named by its column when it is a cast of one, in SQL and in selectExpr alike', async () => {
    expect(await run(`SELECT CAST(a AS STRING), CAST(a + 1 AS STRING) FROM STREAM ${S}`, ROWS.slice(0, 1))).toEqual([
      { a: '1', 'CAST((a + 1) AS STRING)': '2' },
    ]);
  });

  it('over a grouping column is named by it, over an aggregate by its SQL text', async () => {
    expect(
      await run(
        `SELECT CAST(k AS STRING) AS ok, CAST(K AS STRING), CAST(sum(a) AS STRING), CAST(CAST(a AS DOUBLE) AS STRING) FROM STREAM ${S} GROUP BY k, a`,
        ROWS.slice(0, 1),
      ),
    ).toEqual([{ ok: 'x', k: 'x', 'CAST(sum(a) AS STRING)': '1', 'CAST(CAST(a AS DOUBLE) AS STRING)': '1.0' }]);
  });

  it('a field of the window without AS is named by the field, as Spark resolves window.start to an alias of it', async () => {
    const T = "read_files(schema => 'k STRING, t TIMESTAMP')";
    expect(await run(`SELECT window.start, k, count(*) FROM STREAM ${T} GROUP BY window(t, '10 minutes'), k`, [{ k: 'x', t: '2026-10-01 12:03:00' }])).toEqual([
      { start: '2026-10-01T12:00:00.000Z', k: 'x', 'count(1)': 1 },
    ]);
  });

  it('of a cast of a column is named by its SQL text in SQL, by the column in selectExpr', async () => {
    expect(await run(`SELECT CAST(CAST(a AS DOUBLE) AS STRING), b FROM STREAM ${S}`, ROWS.slice(0, 1))).toEqual([
      { 'CAST(CAST(a AS DOUBLE) AS STRING)': '1.0', b: 2 },
    ]);
    const plan = readStream
      .format('json')
      .schema('k STRING, a INT, b DOUBLE')
      .load('s3://in/')
      .selectExpr('CAST(CAST(a AS DOUBLE) AS STRING)', 'b')
      .writeStream.outputMode('update')
      .plan();
    expect((await runPlanOnce(plan, ROWS.slice(0, 1))).rows).toEqual([{ a: '1.0', b: 2 }]);
  });
});
