/**
 * `explain(plan)` / `sluice explain` (lib/observe/explain.ts): the plan as text, each line read
 * off the plan as a batch runs it. The expected texts are written out by hand from the queries.
 */
import { count, desc, explain, readStream, sum, window } from '../../lib/api/query';
import { main } from '../../bin/cli';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('explain', () => {
  it('prints the source, the reader columns, each stage and operator with its columns and event time, and the output', () => {
    const plan = readStream
      .format('json')
      .schema('user STRING, t TIMESTAMP, amount DOUBLE, note STRING')
      .option('maxFilesPerTrigger', 5)
      .load('s3://in/events')
      .withWatermark('t', '10 minutes')
      .groupBy(window('t', '10 minutes'), 'user')
      .agg(sum('amount').as('total'))
      .writeStream.outputMode('append')
      .queryName('totals')
      .plan();
    expect(explain(plan)).toBe(
      [
        '== totals: append mode, trigger availableNow, 1 state partition(s) ==',
        'Source: Files (json) s3://in/events; maxFilesPerTrigger 5',
        '    columns: user STRING, t TIMESTAMP, amount DOUBLE, note STRING',
        '    the reader parses only: user, t, amount',
        'Watermark t delay 10 minutes',
        'Operator op0: Aggregate by window(t, 10 minutes), user: sum(amount) AS total',
        '    takes: user STRING, t TIMESTAMP, amount DOUBLE, note STRING',
        '    event time: t (delay 10m)',
        'Output: window WINDOW, user STRING, total DOUBLE',
        '',
      ].join('\n'),
    );
  });

  it('shows each stage, a sort and limit, a union input and a join input with its time range', () => {
    const sorted = readStream
      .format('json')
      .schema('k STRING, a INT')
      .load()
      .filter('a > 0')
      .groupBy('k')
      .agg(count().as('n'))
      .orderBy(desc('n'))
      .limit(3)
      .writeStream.outputMode('complete')
      .plan();
    const text = explain(sorted);
    expect(text).toContain('\nFilter a > 0\nOperator op0: Aggregate by k: count(*) AS n\n');
    expect(text).toContain("\nSort n DESC (each batch's whole output)\nLimit 3 (each batch's whole output)\nOutput: k STRING, n BIGINT\n");

    const other = readStream.format('json').schema('id STRING, v BIGINT').load('s3://in/b');
    const u = explain(readStream.format('json').schema('id STRING, v INT').load('s3://in/a').union(other).limit(10).writeStream.plan());
    expect(u).toContain('Select id, CAST(v AS BIGINT) AS v\nOperator op0: GlobalLimit 10 (the count passed so far in state)\n');
    expect(u).toContain("Input input2 (unioned: its rows join the stream's after: Select id, CAST(v AS BIGINT) AS v):\n  Source: Files (json) s3://in/b\n");

    const clicks = readStream.format('json').schema('cad STRING, ct TIMESTAMP').load().withWatermark('ct', '1 minute');
    const joined = readStream
      .format('json')
      .schema('ad STRING, it TIMESTAMP')
      .load()
      .withWatermark('it', '1 minute')
      .join(clicks, { left: 'ad', right: 'cad' }, 'inner', {
        timeRange: { left: 'it', right: 'ct', lower: '-5 minutes', upper: '0 seconds', upperStrict: true },
      })
      .writeStream.plan();
    // Spark's it BETWEEN ct - 5 minutes AND ct, the upper bound strict
    expect(explain(joined)).toContain('Operator op0: StreamJoin inner with input2 on ad = cad; it in [ct - 5m, ct)\n');
  });

  it("gives a dropDuplicates only the event time Spark's column pruning leaves below it", () => {
    // the aggregation after the dedup reads only k: t is pruned below the dedup, which then has
    // no event time and drops no late row; a dedup on (k, t) keeps it
    const dedup = (columns: Array<'k' | 't'>) =>
      explain(
        readStream
          .format('json')
          .schema('k STRING, t TIMESTAMP')
          .load()
          .withWatermark('t', '0 seconds')
          .dropDuplicates(columns)
          .groupBy('k')
          .agg(count().as('n'))
          .writeStream.outputMode('update')
          .plan(),
      );
    expect(dedup(['k'])).toMatch(
      /Operator op0: DropDuplicates on k[^\n]*\n {4}takes: k STRING, t TIMESTAMP\n {4}event time: none \(no watermark reaches it\)\n/,
    );
    expect(dedup(['k', 't'])).toMatch(/Operator op0: DropDuplicates on k[^\n]*\n {4}takes: k STRING, t TIMESTAMP\n {4}event time: t \(delay 0ms\)\n/);
  });

  it('is a CLI command over a query module, with no AWS call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-explain-'));
    const file = join(dir, 'q.sql');
    writeFileSync(
      file,
      "SET outputMode = complete;\nSELECT k, count(*) AS n FROM STREAM read_files(schema => 'k STRING') GROUP BY k ORDER BY n DESC LIMIT 2;\n",
    );
    let out = '';
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    try {
      expect(await main(['explain', file])).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(out).toContain('Operator op0: Aggregate by k: count(*) AS n\n');
    expect(out).toContain('Sort n DESC');
    expect(out).toContain('Limit 2');
  });
});
