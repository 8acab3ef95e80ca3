/**
 * input_file_name(), input_file_block_start(), input_file_block_length() and the hidden
 * `_metadata` column of a file source (lib/engine/expr/input-file.ts) on the in-memory twins: each
 * row its own file's, before any stateful operator; none after one.
 */
import { F, readStream } from '../../lib/api/query';
import { fileUri } from '../../lib/engine/input-file';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { compileSql } from '../../lib/engine/sql';
import { runPlanOnFiles } from '../helpers/run-plan';

const FILES: Record<string, string> = {
  'day=1/a.json': '{"id":"a1","n":1}\n{"id":"a2","n":2}\n',
  'day=2/b c.json': '{"id":"b1","n":3}\n',
};

async function run(plan: QueryPlan, files: Record<string, string> = FILES): Promise<Array<Record<string, unknown>>> {
  return (await runPlanOnFiles(plan, files)).rows.map((r) => ({ ...r }));
}

const input = () =>
  readStream
    .format('json')
    .schema('id STRING, n INT' as string)
    .load();
const A = { path: 'memory://landing/day=1/a.json', size: Buffer.byteLength(FILES['day=1/a.json']) };
const B = { path: 'memory://landing/day=2/b%20c.json', size: Buffer.byteLength(FILES['day=2/b c.json']) };

describe('input_file_name() and its block functions', () => {
  it("give each row its own file's URI, 0 and the file's length, across the files of one batch", async () => {
    const rows = await run(
      input().selectExpr('id', 'input_file_name() AS f', 'input_file_block_start() AS s', 'input_file_block_length() AS l').writeStream.plan(),
    );
    expect(rows).toEqual([
      { id: 'a1', f: A.path, s: 0, l: A.size },
      { id: 'a2', f: A.path, s: 0, l: A.size },
      { id: 'b1', f: B.path, s: 0, l: B.size },
    ]);
  });

  it('F.input_file_name() is the same call', async () => {
    const rows = await run(input().select(F.col('id'), F.input_file_name().as('f')).writeStream.plan());
    expect(rows.map((r) => r.f)).toEqual([A.path, A.path, B.path]);
  });

  it('are "" and -1 after a stateful operator, as Spark gives them after a shuffle', async () => {
    const plan = input()
      .groupBy('id')
      .count()
      .selectExpr('id', 'input_file_name() AS f', 'input_file_block_length() AS l', '_metadata AS m')
      .writeStream.outputMode('update')
      .plan();
    expect((await run(plan)).map((r) => [r.f, r.l, r.m])).toEqual([
      ['', -1, null],
      ['', -1, null],
      ['', -1, null],
    ]);
  });

  it('are taken as deterministic: a replay reads the same files for a batch', () => {
    expect(() => input().selectExpr('input_file_name()')).not.toThrow();
    expect(() => input().selectExpr('uuid()')).toThrow(/INVALID_NON_DETERMINISTIC_EXPRESSIONS/);
  });
});

describe('the _metadata column', () => {
  it('is a STRUCT of the file, left out of *', async () => {
    const rows = await run(input().selectExpr('*', '_metadata').writeStream.plan());
    expect(rows[2]).toEqual({
      id: 'b1',
      n: 3,
      _metadata: { file_path: B.path, file_name: 'b c.json', file_size: B.size, file_block_start: 0, file_block_length: B.size, file_modification_time: null },
    });
    expect(Object.keys((await run(input().selectExpr('*').writeStream.plan()))[0])).toEqual(['id', 'n']);
  });

  it('is read by select, withColumn, filter and groupBy', async () => {
    expect(await run(input().select('id', '_metadata.file_name').writeStream.plan())).toEqual([
      { id: 'a1', file_name: 'a.json' },
      { id: 'a2', file_name: 'a.json' },
      { id: 'b1', file_name: 'b c.json' },
    ]);
    const filtered = input()
      .withColumn('size', '_metadata.file_size' as never)
      .filter("_metadata.file_name = 'b c.json'");
    expect(await run(filtered.writeStream.plan())).toEqual([{ id: 'b1', n: 3, size: B.size }]);
    const counted = await run(input().groupBy('_metadata.file_name').count().writeStream.outputMode('update').plan());
    expect(counted.sort((x, y) => String(x.file_name).localeCompare(String(y.file_name)))).toEqual([
      { file_name: 'a.json', count: 2 },
      { file_name: 'b c.json', count: 1 },
    ]);
  });

  it('in SQL, in the select list and GROUP BY', async () => {
    const plan = compileSql(`SET outputMode = update;
SELECT _metadata.file_path AS path, count(*) AS rows FROM STREAM read_files(schema => 'id STRING, n INT') GROUP BY _metadata.file_path`);
    expect((await run(plan)).sort((x, y) => String(x.path).localeCompare(String(y.path)))).toEqual([
      { path: A.path, rows: 2 },
      { path: B.path, rows: 1 },
    ]);
  });

  it('gives way to a data column of that name, as in Spark', async () => {
    const plan = readStream
      .format('json')
      .schema('id STRING, _metadata STRING' as string)
      .load()
      .selectExpr('_metadata')
      .writeStream.plan();
    expect(await run(plan, { 'x.json': '{"id":"a","_metadata":"mine"}\n' })).toEqual([{ _metadata: 'mine' }]);
  });

  it('names a field it does not have with the fields it has', () => {
    expect(() => input().selectExpr('_metadata.file_nme')).toThrow(/FIELD_NOT_FOUND.*`file_nme` in `file_path`, `file_name`, `file_size`/);
  });
});

describe('a file URI, as Hadoop quotes a path', () => {
  it('%-quotes what a URI path cannot hold and keeps the rest', () => {
    expect(fileUri('s3://b', 'in/dt=2026-12-01/a b.json')).toBe('s3://b/in/dt=2026-12-01/a%20b.json');
    expect(fileUri('s3://b', 'x/100%#?[]{}|^`"<>\\.json')).toBe('s3://b/x/100%25%23%3F%5B%5D%7B%7D%7C%5E%60%22%3C%3E%5C.json');
    expect(fileUri('s3://b', "k/-_.!~*'(),;:$&+=@ü.json")).toBe("s3://b/k/-_.!~*'(),;:$&+=@ü.json");
  });
});
