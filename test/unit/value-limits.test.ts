/**
 * A row whose count argument asks for a huge value (lib/engine/expr/value-limits.ts) is a dead
 * letter naming the function and the limit, and the batch goes on: before, lpad/rpad, sequence,
 * array_repeat and array_insert with a count of two billion killed the Node.js process (a V8 fatal
 * error no code can catch), and repeat, space, format_string and format_number failed the batch,
 * so every run that read the row failed the same way.
 */
import { readStream } from '../../lib/api/query';
import { MAX_BUILT_LENGTH } from '../../lib/engine/expr/value-limits';
import { runPlanOnce } from '../helpers/run-plan';

async function run(expr: string, counts: number[]) {
  const plan = readStream
    .format('json')
    .schema('id STRING, n INT' as string)
    .load()
    .selectExpr('n', `${expr} AS x`)
    .selectExpr('n', 'length(CAST(x AS STRING)) AS len')
    .writeStream.plan();
  const { rows, deadLetters } = await runPlanOnce(
    plan,
    counts.map((n) => ({ id: 'ab', n })),
  );
  return { rows, reasons: deadLetters.all('malformed').map((d) => (d as { reason: string }).reason) };
}

const HUGE = 2_000_000_000;
const JUST_OVER = MAX_BUILT_LENGTH + 1;

describe('a value past the limit of one value', () => {
  it.each([
    ['repeat(id, n)', 'STRING_SIZE_LIMIT_EXCEEDED', 'repeat'],
    ['space(n)', 'STRING_SIZE_LIMIT_EXCEEDED', 'space'],
    ["lpad(id, n, 'x')", 'STRING_SIZE_LIMIT_EXCEEDED', 'lpad'],
    ['rpad(id, n)', 'STRING_SIZE_LIMIT_EXCEEDED', 'rpad'],
    ['format_number(1.5, n)', 'STRING_SIZE_LIMIT_EXCEEDED', 'format_number'],
    ["format_string(concat('%', n, 's'), id)", 'STRING_SIZE_LIMIT_EXCEEDED', 'format_string'],
    ['array_repeat(id, n)', 'COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER', 'array_repeat'],
    ['sequence(1, n)', 'COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER', 'sequence'],
    ['array_insert(array(1), n, 5)', 'COLLECTION_SIZE_LIMIT_EXCEEDED.FUNCTION', 'array_insert'],
  ])('%s: the rows asking for more are dead letters (%s), the others go on', async (expr, errorClass, fn) => {
    const { rows, reasons } = await run(expr, [3, HUGE, JUST_OVER]);
    expect(rows.map((r) => r.n)).toEqual([3]);
    expect(reasons).toHaveLength(2);
    for (const r of reasons) {
      expect(r.startsWith(`[${errorClass}] `)).toBe(true);
      expect(r).toContain(fn);
      expect(r).toContain(String(MAX_BUILT_LENGTH));
    }
  });

  it('a TIMESTAMP sequence past the limit too', async () => {
    // 2026-01-01 00:00:00 UTC is 1767225600 s; n + 1 instants a second apart
    const expr = "sequence(TIMESTAMP'2026-01-01 00:00:00', timestamp_seconds(1767225600 + n), INTERVAL 1 SECOND)";
    const { rows, reasons } = await run(expr, [3, MAX_BUILT_LENGTH]);
    expect(rows.map((r) => r.n)).toEqual([3]);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^\[COLLECTION_SIZE_LIMIT_EXCEEDED\.PARAMETER\] Can't create array with 16777217 elements .* in the function `sequence`/);
  });

  it("past Spark's own limit, the message is Spark's", async () => {
    const { reasons } = await run('sequence(0, n * 2L)', [HUGE]);
    expect(reasons[0]).toMatch(
      /^\[COLLECTION_SIZE_LIMIT_EXCEEDED\.PARAMETER\] Can't create array with 4000000001 elements which exceeding the array size limit 2147483632/,
    );
  });

  it('a value no function checks, too long for a JavaScript string, is the row error too (not a failed batch)', async () => {
    const { rows, reasons } = await run('aggregate(sequence(1, n), id, (acc, x) -> concat(acc, acc))', [2, 40]);
    expect(rows).toEqual([{ n: 2, len: 8 }]);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^\[STRING_SIZE_LIMIT_EXCEEDED\] a value of this row is larger than JavaScript can hold \(Invalid string length\)/);
  });
});
