/**
 * A replay relies on records that expire by TTL: the state store's superseded versions, the
 * DynamoDB sink's chunk markers, foreachBatch's effect markers. The executor refuses a replay of
 * a batch planned longer ago than the shortest of them keeps (issue 14), on DynamoDB Local: a
 * sink whose markers live 1 day refuses a replay at 1 day (the state keeps what a replay reads for as long as it takes), and
 * replays a second earlier.
 */
import { DynamoDbEffectGuard } from '../../lib/aws/dynamodb/effect-guard';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { DynamoDbStateStore } from '../../lib/aws/dynamodb/state-store';
import { CheckpointMismatchError, InjectedCrash } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import { ForeachBatchSink } from '../../lib/engine/foreach-batch';
import type { Sink } from '../../lib/engine/ports';
import type { QueryPlan } from '../../lib/engine/plan/types';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { crashingAt } from '../../lib/engine/testing/crash';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { ensureStateTable } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const table = uniqueName('retention');
const DAY = 86_400_000;

beforeAll(async () => {
  await ensureStateTable(testClients().dynamodb, table);
});

const windowed = (name: string) =>
  readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .load()
    .withWatermark('event_time', '10 minutes')
    .groupBy(window('event_time', '10 minutes'), 'user')
    .agg(sum('amount').as('total'), count().as('n'))
    .writeStream.outputMode('update')
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();

const stateless = (name: string) =>
  readStream
    .format('json')
    .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
    .load()
    .writeStream.outputMode('append')
    .trigger({ availableNow: true })
    .queryName(name)
    .plan();

/** Batch 0 crashes before its commit at `planned`; `replayAt(ms)` runs the replay `ms` after that. */
async function crashedBatch(plan: QueryPlan, sinkFor: (ns: string) => Sink) {
  const ns = uniqueName('q');
  const { dynamodb } = testClients();
  const planned = Date.parse('2026-10-02T00:00:00Z');
  let now = planned;
  const clock = { now: () => now };
  const source = new InMemoryFileSource(plan.source.schema);
  source.add('001.json', [
    { user: 'a', event_time: '2026-10-01 12:01:00', amount: 2 },
    { user: 'b', event_time: '2026-10-01 12:02:00', amount: 3 },
  ]);
  const checkpoint = new InMemoryCheckpoint();
  const state = new DynamoDbStateStore({ client: dynamodb, tableName: table, namespace: ns, clock });
  const sink = sinkFor(ns);
  const deps = { plan, source, checkpoint, state, sink, clock };
  await expect(new MicroBatchExecutor(crashingAt({ point: 'before-commit', batchId: 0 }, deps)).run()).rejects.toBeInstanceOf(InjectedCrash);
  expect(checkpoint.offsets.get(0)!.batchTimestampMs).toBe(planned);
  return {
    sink,
    replayAt: (ms: number) => {
      now = planned + ms;
      return new MicroBatchExecutor(deps).run();
    },
  };
}

describe('when the DynamoDB sink keeps its chunk markers for less time than the state keeps versions', () => {
  const sinkFor = (ns: string) => new DynamoDbSink({ client: testClients().dynamodb, tableName: table, queryKey: ns, markerTtlSeconds: 86_400 });

  it('refuses the replay once its markers may be gone (after 1 day: the state keeps what a replay reads for as long as it takes), naming the sink and the remedy', async () => {
    const { replayAt } = await crashedBatch(windowed('retention-sink'), sinkFor);
    const err = await replayAt(DAY).catch((e) => e);
    expect(err).toBeInstanceOf(CheckpointMismatchError);
    expect(err.message).toMatch(
      /^batch 0 of query retention-sink waits for its replay since 2026-10-02T00:00:00.000Z \(1\.0 days\), longer than dynamodb:\/\/retention-\S+ keeps the records that make its replay skip what it wrote \(1\.0 days\): restore the sink table/,
    );
    expect(err.details).toMatchObject({ batchId: 0, ageMs: DAY, retentionMs: DAY });
  });

  it('replays a second inside the bound', async () => {
    const { replayAt, sink } = await crashedBatch(windowed('retention-sink-ok'), sinkFor);
    const r = await replayAt(DAY - 1000);
    expect(r.batches[0]).toMatchObject({ batchId: 0, replay: true, numInputRows: 2 });
    expect((await (sink as DynamoDbSink).readAll()).map((row) => [row.user, row.total]).sort()).toEqual([
      ['a', 2],
      ['b', 3],
    ]);
  });

  it('applies to a stateless query too, which has no state versions to lose', async () => {
    const { replayAt } = await crashedBatch(stateless('retention-stateless'), sinkFor);
    await expect(replayAt(DAY)).rejects.toThrow(/keeps the records that make its replay skip what it wrote \(1\.0 days\)/);
  });
});

describe("when foreachBatch's effect guard keeps its markers for 2 days", () => {
  it('a replay at 2 days is refused: past it, a recorded effect would run again', async () => {
    const ran: number[] = [];
    const sinkFor = () =>
      new ForeachBatchSink({
        guard: new DynamoDbEffectGuard({ client: testClients().dynamodb, tableName: table, markerTtlSeconds: 2 * 86_400 }),
        fn: async (_rows, batchId, ctx) => {
          await ctx.runOnce('count', async () => void ran.push(batchId));
        },
      });
    const { replayAt } = await crashedBatch(windowed('retention-guard'), sinkFor);
    expect(ran).toEqual([0]);
    await expect(replayAt(2 * DAY)).rejects.toThrow(/\(2\.0 days\), longer than foreachBatch \(guard: dynamodb:\/\/\S+\) keeps the records .* \(2\.0 days\)/);
    expect(ran).toEqual([0]);
    const ok = await replayAt(2 * DAY - 1000);
    expect(ok.batches[0]).toMatchObject({ batchId: 0, replay: true });
    expect(ran.filter((b) => b === 0)).toEqual([0]); // the marker was still there: the replay skipped batch 0's effect
  });
});
