/**
 * Column projection (ReadOptions.columns): an aggregation behind watermarks reads only the
 * columns it uses, yet a bad value in any declared column is still a dead letter. And the
 * in-memory state store holds what DynamoDB would: deletions go once no read can see them.
 */
import { columnsRead } from '../../lib/engine/run/runtime';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryDeadLetters } from '../../lib/engine/testing/memory-dead-letters';
import { InMemorySink } from '../../lib/engine/testing/memory-sink';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { InMemoryStateStore } from '../../lib/engine/testing/memory-state';
import type { OperatorStateSpec } from '../../lib/engine/ports';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';

const schema = 'user STRING, country STRING, device INT, event_time TIMESTAMP, amount DOUBLE';
const src = () => readStream.format('json').schema(schema).load();
const totals = () =>
  src().withWatermark('event_time', '5 minutes').groupBy(window('event_time', '10 minutes'), 'user').agg(sum('amount').as('total'), count().as('n'));

describe('columnsRead', () => {
  it('names the key, aggregated and watermark columns of an aggregation, in schema order', () => {
    expect(columnsRead(totals().writeStream.outputMode('append').plan(), false)).toEqual(['user', 'event_time', 'amount']);
  });

  it('reads every column when rows may leave whole: late rows written out, deduplication, stateless queries, user code', () => {
    expect(columnsRead(totals().writeStream.outputMode('append').plan(), true)).toBeUndefined();
    expect(
      columnsRead(src().withWatermark('event_time', '5 minutes').dropDuplicates(['user', 'event_time']).writeStream.outputMode('append').plan(), false),
    ).toBeUndefined();
    expect(columnsRead(src().writeStream.outputMode('append').plan(), false)).toBeUndefined();
    const filtered = src()
      .filter((r) => r.country === 'DE', 'DE only')
      .withWatermark('event_time', '5 minutes')
      .groupBy(window('event_time', '10 minutes'), 'user')
      .agg(count().as('n'))
      .writeStream.outputMode('append')
      .plan();
    expect(columnsRead(filtered, false)).toBeUndefined();
  });
});

describe('when the source reads only the columns the query uses', () => {
  it('still sends a bad value in an unused column to the dead letters, and counts the rest', async () => {
    const plan = totals().writeStream.outputMode('update').plan();
    const source = new InMemoryFileSource(plan.source.schema);
    source.add(
      'a.json',
      [
        '{"user":"a","country":"DE","device":1,"event_time":"2026-10-01 12:01:00","amount":2}',
        '{"user":"a","country":"DE","device":"tablet","event_time":"2026-10-01 12:02:00","amount":5}',
        '{"user":"a","country":"DE","device":2,"event_time":"2026-10-01 12:03:00","amount":3}',
      ].join('\n'),
    );
    const deadLetters = new InMemoryDeadLetters();
    const report = await new MicroBatchExecutor({
      plan,
      source,
      checkpoint: new InMemoryCheckpoint(),
      state: new InMemoryStateStore(),
      sink: new InMemorySink(),
      deadLetters,
    }).run({ collectRows: true });
    expect(report.batches[0].rows).toEqual([{ window: { start: '2026-10-01T12:00:00.000Z', end: '2026-10-01T12:10:00.000Z' }, user: 'a', total: 5, n: 2 }]);
    const dead = deadLetters.all('malformed') as Array<{ source: { file: string; line: number }; reason: string }>;
    expect(dead.map((d) => d.source)).toEqual([{ file: 'a.json', line: 2 }]);
    expect(dead[0].reason).toMatch(/device/);
  });
});

describe('InMemoryStateStore', () => {
  const op: OperatorStateSpec = { operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 60_000 };
  const key = (id: string) => ({ id, evictAt: 1 });

  it('keeps a deletion while a replay can read before it, and drops it after the next commit', async () => {
    const s = new InMemoryStateStore();
    await s.commit(op, 0, [
      { key: key('a'), value: 1 },
      { key: key('b'), value: 2 },
    ]);
    await s.commit(op, 1, [{ key: key('a'), value: null }]);
    // a replay of batch 1 reads at version 0 and still sees a
    expect((await s.get(op, [key('a'), key('b')], 0)).get('a')?.value).toBe(1);
    expect(s.size()).toBe(2);
    await s.commit(op, 2, [{ key: key('b'), value: 3 }]);
    expect(s.size()).toBe(1);
    expect([...(await s.get(op, [key('a'), key('b')], 1)).keys()]).toEqual(['b']);
    expect((await s.get(op, [key('b')], 2)).get('b')?.value).toBe(3);
    expect((await s.get(op, [key('b')], 1)).get('b')?.value).toBe(2);
  });
});
