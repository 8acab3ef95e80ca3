/**
 * An aggregate's own ANSI error (FORMAT-3 departure 2, issue 29): the row that would take a
 * group's BIGINT or DECIMAL sum past its type, or a DECIMAL avg out of its type, is a dead letter,
 * and no aggregate of the group counts it, count(*) included; the check is against the group's
 * running total, across batches, in a partitioned run too (its read tasks then do not
 * pre-aggregate: the partition task checks each row against the stored total). Expected values worked
 * by hand from the type ranges (BIGINT: -2^63..2^63 − 1 = 9223372036854775807; sum of
 * DECIMAL(38,2): DECIMAL(38,2), 36 digits before the point; avg of DECIMAL(38,2): DECIMAL(38,6),
 * 32 digits before the point), not from sluice's output.
 */
import { compileAgg } from '../../lib/engine/aggregates';
import { OverflowGuard } from '../../lib/engine/operators/overflow-guard';
import type { Json } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { avg, count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { partitionedTasks, runPartitioned } from '../../lib/engine/schedule/driver';
import { PartitionedRun } from '../../lib/engine/schedule/partitioned';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemoryLease } from '../../lib/engine/testing/memory-lease';
import { InMemoryShuffle } from '../../lib/engine/testing/memory-shuffle';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import { createTestRunner } from './engine-factories';

type DeadLetter = { raw: string; reason: string };

const lines = (rows: string[]) => rows.join('\n');
const byKey = (rows: Record<string, unknown>[]) => Object.fromEntries(rows.map((r) => [r.k, r]));

describe('a BIGINT sum that would pass 2^63 − 1', () => {
  const plan = readStream
    .schema('k STRING, n BIGINT')
    .load()
    .groupBy('k')
    .agg(count().as('c'), count('n').as('cn'), sum('n').as('total'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('bigint-overflow')
    .plan();

  it('makes the row a dead letter that no aggregate of its group counts, in the batch and against the stored total', async () => {
    const runner = createTestRunner(plan);
    runner.drop(
      lines([
        '{"k":"a","n":9223372036854775800}',
        '{"k":"b","n":1}',
        '{"k":"a","n":5}',
        '{"k":"a","n":10}', // 9223372036854775805 + 10 = ...815: past ...807
        '{"k":"b","n":2}',
        '{"k":"a","n":2}', // ...805 + 2 = ...807: the largest BIGINT, kept
      ]),
    );
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0].raw)).toEqual({ k: 'a', n: 10 });
    expect(dead[0].reason).toMatch(/^\[ARITHMETIC_OVERFLOW\] long overflow: a sum of BIGINT values reached 9223372036854775815, /);
    expect(dead[0].reason).toMatch(/in sum\(n\) AS total of the group where k is "a", with this row's n = 10/);
    expect(byKey(runner.sinkRows())).toEqual({
      a: { k: 'a', c: 3, cn: 3, total: '9223372036854775807' },
      b: { k: 'b', c: 2, cn: 2, total: 3 },
    });

    // the next batch starts from the stored total: +1 overflows it, −7 does not
    runner.drop(lines(['{"k":"a","n":1}', '{"k":"a","n":-7}', '{"k":"a","n":null}']));
    await runner.run();
    const dead2 = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead2).toHaveLength(2);
    expect(JSON.parse(dead2[1].raw)).toEqual({ k: 'a', n: 1 });
    expect(dead2[1].reason).toMatch(/^\[ARITHMETIC_OVERFLOW\] .*reached 9223372036854775808, /);
    expect(runner.sinkRows().slice(2)).toEqual([{ k: 'a', c: 5, cn: 4, total: '9223372036854775800' }]);
  });

  it('refuses a row below -2^63 alike, and a group whose only row is refused is not emitted nor stored', async () => {
    const runner = createTestRunner(plan);
    runner.drop(lines(['{"k":"a","n":-9223372036854775808}']));
    await runner.run();
    runner.drop(lines(['{"k":"a","n":-1}', '{"k":"z","n":4}']));
    const report = await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([{ k: 'a', n: -1 }]);
    expect(dead[0].reason).toMatch(/reached -9223372036854775809/);
    // batch 1 emits z only: a took no row
    expect(report.batches.flatMap((b) => b.rows)).toEqual([{ k: 'z', c: 1, cn: 1, total: 4 }]);
    // and a's stored total is still -2^63: +1 brings it to -2^63 + 1
    runner.drop(lines(['{"k":"a","n":1}']));
    await runner.run();
    expect(runner.sinkRows().at(-1)).toEqual({ k: 'a', c: 2, cn: 2, total: '-9223372036854775807' });
  });
});

describe('a BIGINT sum over several batches of one run (the groups kept between them)', () => {
  const plan = readStream
    .schema('k STRING, n BIGINT')
    .option('maxFilesPerTrigger', 1)
    .load()
    .groupBy('k')
    .agg(count().as('c'), sum('n').as('total'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('bigint-overflow-batches')
    .plan();

  it('checks each row against the total the previous batch left, kept or read back after a refusal', async () => {
    const runner = createTestRunner(plan);
    runner.drop(lines(['{"k":"a","n":9223372036854775800}', '{"k":"b","n":1}']));
    await runner.run();
    // one run, three batches (one file each): from batch 1 on, the groups stay in memory with
    // their state between batches; a is read from the store in batch 1, where its only row is
    // refused, so it is read again in batch 2
    runner.drop(lines(['{"k":"a","n":8}', '{"k":"b","n":2}'])); // a: …800 + 8 = …808, refused; b: 1 + 2 = 3
    runner.drop(lines(['{"k":"b","n":9223372036854775805}', '{"k":"a","n":-7}', '{"k":"a","n":1}'])); // b: 3 + …805 = …808, refused; a: …793, …794
    runner.drop(lines(['{"k":"b","n":3}', '{"k":"a","n":7}'])); // b: 6; a: …801
    const report = await runner.run();
    expect(report.batches.map((b) => b.rows)).toEqual([
      [{ k: 'b', c: 2, total: 3 }],
      [{ k: 'a', c: 3, total: '9223372036854775794' }],
      [
        { k: 'b', c: 3, total: 6 },
        { k: 'a', c: 4, total: '9223372036854775801' },
      ],
    ]);
    expect((runner.deadLetters.all('malformed') as DeadLetter[]).map((d) => JSON.parse(d.raw))).toEqual([
      { k: 'a', n: 8 },
      { k: 'b', n: '9223372036854775805' }, // (a dead letter's row text holds a BIGINT beyond 2^53 as its digits)
    ]);
  });
});

describe('a BIGINT sum in complete mode', () => {
  const plan = readStream
    .schema('k STRING, n BIGINT')
    .load()
    .groupBy('k')
    .agg(count().as('c'), sum('n').as('total'))
    .writeStream.outputMode('complete')
    .trigger({ availableNow: true })
    .queryName('bigint-overflow-complete')
    .plan();

  it('outputs every group, the one that refused a row as it was', async () => {
    const runner = createTestRunner(plan);
    runner.drop(lines(['{"k":"a","n":9223372036854775800}', '{"k":"b","n":1}']));
    await runner.run();
    runner.drop(lines(['{"k":"a","n":8}', '{"k":"b","n":2}'])); // a: …808, refused; b: 3
    const report = await runner.run();
    expect(byKey(report.batches.flatMap((b) => b.rows))).toEqual({
      a: { k: 'a', c: 1, total: '9223372036854775800' },
      b: { k: 'b', c: 2, total: 3 },
    });
    expect(runner.deadLetters.all('malformed')).toHaveLength(1);
  });
});

describe('a DECIMAL(38,2) sum that would pass 36 digits before the point', () => {
  const nines = '9'.repeat(36);
  const plan = readStream
    .schema('k STRING, v DECIMAL(38,2)')
    .load()
    .groupBy('k')
    .agg(sum('v').as('total'), count().as('c'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('decimal-overflow')
    .plan();

  it('makes the row a dead letter and leaves count(*) and the sum as they were', async () => {
    const runner = createTestRunner(plan);
    runner.drop(lines([`{"k":"a","v":${nines}.00}`, '{"k":"a","v":1.00}', '{"k":"a","v":0.99}', '{"k":"b","v":-1.50}']));
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([{ k: 'a', v: '1.00' }]);
    expect(dead[0].reason).toMatch(
      /^\[ARITHMETIC_OVERFLOW\] Overflow in sum of decimals: sum\(v\) reached 1000000000000000000000000000000000000\.00, which does not fit its type DECIMAL\(38,2\)/,
    );
    expect(dead[0].reason).toMatch(/sum\(v\) AS total of the group where k is "a", with this row's v = "1\.00"/);
    expect(byKey(runner.sinkRows())).toEqual({
      a: { k: 'a', total: `${nines}.99`, c: 2 },
      b: { k: 'b', total: '-1.50', c: 1 },
    });
    // across batches: the stored sum is the largest DECIMAL(38,2); 0.01 more is refused, -0.01 is not
    runner.drop(lines(['{"k":"a","v":0.01}', '{"k":"a","v":-0.01}']));
    await runner.run();
    expect((runner.deadLetters.all('malformed') as DeadLetter[]).map((d) => JSON.parse(d.raw))).toEqual([
      { k: 'a', v: '1.00' },
      { k: 'a', v: '0.01' },
    ]);
    expect(runner.sinkRows().slice(2)).toEqual([{ k: 'a', total: `${nines}.98`, c: 3 }]);
  });
});

describe('a DECIMAL(38,2) avg that would leave DECIMAL(38,6)', () => {
  const plan = readStream
    .schema('k STRING, v DECIMAL(38,2)')
    .load()
    .groupBy('k')
    .agg(avg('v').as('mean'), count().as('c'), sum('v').as('total'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('decimal-avg-overflow')
    .plan();
  const e31 = (d: number) => `${d}${'0'.repeat(31)}.00`; // d × 10^31

  it('refuses the row that takes the group avg to 10^32 or past, NUMERIC_VALUE_OUT_OF_RANGE, and no other aggregate takes it', async () => {
    const runner = createTestRunner(plan);
    runner.drop(
      lines([
        `{"k":"a","v":${e31(5)}}`,
        `{"k":"a","v":${e31(9)}}`, // avg 7 × 10^31
        `{"k":"a","v":${e31(30)}}`, // avg (5 + 9 + 30) / 3 × 10^31 = 1.4666… × 10^32: 33 digits before the point
        `{"k":"a","v":${e31(-2)}}`, // avg (5 + 9 − 2) / 3 × 10^31 = 4 × 10^31
      ]),
    );
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([{ k: 'a', v: e31(30) }]);
    expect(dead[0].reason).toMatch(
      /^\[NUMERIC_VALUE_OUT_OF_RANGE\] avg\(v\) is 146666666666666666666666666666666\.666667, which cannot be represented as DECIMAL\(38,6\)/,
    );
    expect(dead[0].reason).toMatch(/avg\(v\) AS mean of the group where k is "a"/);
    expect(runner.sinkRows()).toEqual([{ k: 'a', mean: `4${'0'.repeat(31)}.000000`, c: 3, total: `12${'0'.repeat(31)}.00` }]);
  });
});

describe('a row in several windows (sliding)', () => {
  const plan = readStream
    .schema('k STRING, t TIMESTAMP, n BIGINT')
    .load()
    .groupBy(window('t', '10 minutes', '5 minutes'), 'k')
    .agg(count().as('c'), sum('n').as('total'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName('sliding-overflow')
    .plan();

  it('is refused by every window when it overflows the sum of one of them', async () => {
    const runner = createTestRunner(plan);
    runner.drop(
      lines([
        '{"k":"a","t":"2026-10-01 12:02:00","n":9223372036854775000}', // windows [11:55, 12:05) and [12:00, 12:10)
        '{"k":"a","t":"2026-10-01 12:07:00","n":1000}', // [12:00, 12:10) would pass 2^63 − 1; [12:05, 12:15) would not
        '{"k":"a","t":"2026-10-01 12:08:00","n":7}', // [12:00, 12:10) and [12:05, 12:15)
      ]),
    );
    await runner.run();
    const dead = runner.deadLetters.all('malformed') as DeadLetter[];
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0].raw)).toMatchObject({ k: 'a', n: 1000 });
    expect(dead[0].reason).toMatch(
      /of the group where window is \[2026-10-01T12:00:00\.000Z, 2026-10-01T12:10:00\.000Z\) and k is "a", with this row's n = 1000/,
    );
    const rows = runner.sinkRows().map((r) => [(r.window as { start: string }).start, r.c, r.total]);
    expect(rows.sort()).toEqual([
      ['2026-10-01T11:55:00.000Z', 1, '9223372036854775000'],
      ['2026-10-01T12:00:00.000Z', 2, '9223372036854775007'],
      ['2026-10-01T12:05:00.000Z', 1, 7],
    ]);
  });
});

describe('in a partitioned run (no pre-aggregation: the partition tasks check each row, in input order, against the stored total)', () => {
  const plan: QueryPlan = readStream
    .schema('k STRING, n BIGINT')
    .load()
    .groupBy('k')
    .agg(count().as('c'), sum('n').as('total'))
    .writeStream.outputMode('update')
    .option('statePartitions', 2)
    .trigger({ availableNow: true })
    .queryName('partitioned-overflow')
    .plan();

  function ports() {
    return {
      plan,
      source: new InMemoryFileSource(plan.source.schema),
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
      deadLetters: new InMemoryDeadLetters(),
      lease: new InMemoryLease(),
      shuffle: new InMemoryShuffle(),
    };
  }
  const run = (p: ReturnType<typeof ports>, runId: string) =>
    runPartitioned(
      partitionedTasks(() => new PartitionedRun(p, { maxSplits: 2 })),
      { runId, concurrency: 2 },
    );

  it('refuses the row that overflows the group across two files, as one task would', async () => {
    const p = ports();
    p.source.add('f0.json', lines(['{"k":"a","n":9223372036854775800}', '{"k":"a","n":8}', '{"k":"a","n":7}'])); // …800, …808 refused, …807
    p.source.add('f1.json', lines(['{"k":"b","n":1}', '{"k":"a","n":1}'])); // a: …808 refused again
    await run(p, 'r1');
    const dead = p.deadLetters.all('malformed') as DeadLetter[];
    expect(dead.map((d) => JSON.parse(d.raw))).toEqual([
      { k: 'a', n: 8 },
      { k: 'a', n: 1 },
    ]);
    expect(dead.every((d) => d.reason.startsWith('[ARITHMETIC_OVERFLOW] '))).toBe(true);
    const rows = [...p.sink.batches.values()].flat() as Json[];
    expect(byKey(rows as Record<string, unknown>[])).toEqual({
      a: { k: 'a', c: 2, total: '9223372036854775807' },
      b: { k: 'b', c: 1, total: 1 },
    });
  });

  it('refuses a row that overflows the stored total, and goes on from that total', async () => {
    const p = ports();
    p.source.add('f0.json', lines(['{"k":"a","n":9223372036854775800}']));
    await run(p, 'r1');
    p.source.add('f1.json', lines(['{"k":"a","n":8}'])); // …808: refused, a stays …800 (not emitted: no row of it counted)
    await run(p, 'r2');
    p.source.add('f2.json', lines(['{"k":"a","n":7}'])); // …807
    await run(p, 'r3');
    expect((p.deadLetters.all('malformed') as DeadLetter[]).map((d) => JSON.parse(d.raw))).toEqual([{ k: 'a', n: 8 }]);
    expect([...p.sink.batches.entries()].map(([id, rows]) => [id, rows])).toEqual([
      [0, [{ k: 'a', c: 1, total: '9223372036854775800' }]],
      [1, []],
      [2, [{ k: 'a', c: 2, total: '9223372036854775807' }]],
    ]);
  });
});

describe('an overflow met where partials merge', () => {
  it('fails the batch naming the group, and advises widening the column the aggregate adds (regr_avgx(y, x): x)', () => {
    // regr_avgx averages x: a DECIMAL(38,2) x sums in DECIMAL(38,2), 36 digits before the point;
    // two partials of 6 x 10^35 each merge past it
    const dec = { type: 'DECIMAL', precision: 38, scale: 2 } as const;
    const agg = compileAgg({ fn: 'regr_avgx', column: 'y', by: 'x', as: 'ax' }, { type: 'INT' }, dec);
    const guard = OverflowGuard.of([agg], [{ kind: 'column', name: 'k' }])!;
    const part = (): Json[] => [agg.update(agg.init(), { y: 1, x: `6${'0'.repeat(35)}.00` })];
    expect(() => guard.mergeChecked(part(), part(), ['a'], 7, "two read tasks' partials")).toThrow(
      /^\[ARITHMETIC_OVERFLOW\] regr_avgx\(y, x\) AS ax of the group where k is "a" overflows where batch 7 merges .* or declare x with a wider type under a new checkpoint$/s,
    );
  });
});
