/**
 * A lease lost mid-run, on DynamoDB Local (lease, state and sink): the run stalls past its lease
 * after batch 0 committed, another run takes the lease, and the stalled run's renewal between
 * batches fails. The run stops with LeaseLostError before batch 1: no offsets/1, nothing of
 * batch 1 in the sink or the state, and the newer holder's lease stays held.
 */
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { DynamoDbSink } from '../../lib/aws/dynamodb/sink';
import { DynamoDbStateStore } from '../../lib/aws/dynamodb/state-store';
import { LeaseLostError } from '../../lib/engine/errors';
import { MicroBatchExecutor } from '../../lib/engine/schedule/single';
import type { CheckpointStore, CommitEntry } from '../../lib/engine/ports';
import { count, sum, window } from '../../lib/engine/query/functions';
import { readStream } from '../../lib/engine/query/reader';
import { InMemoryCheckpoint } from '../../lib/engine/testing/memory-checkpoint';
import { InMemoryFileSource } from '../../lib/engine/testing/memory-source';
import { ensureStateTable } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const stateTable = uniqueName('leaselost-state');
const sinkTable = uniqueName('leaselost-sink');
const LEASE_MS = 60_000;

beforeAll(async () => {
  const { dynamodb } = testClients();
  await Promise.all([ensureStateTable(dynamodb, stateTable), ensureStateTable(dynamodb, sinkTable)]);
});

const plan = readStream
  .format('json')
  .schema('user STRING, event_time TIMESTAMP, amount DOUBLE')
  .option('maxFilesPerTrigger', 1)
  .load()
  .withWatermark('event_time', '10 minutes')
  .groupBy(window('event_time', '10 minutes'), 'user')
  .agg(sum('amount').as('total'), count().as('n'))
  .writeStream.outputMode('update')
  .trigger({ availableNow: true })
  .queryName('lease-lost')
  .plan();

describe('when a run loses its lease between batches', () => {
  it('the renewal fails with LeaseLostError and nothing of the next batch is written', async () => {
    const key = uniqueName('ll');
    const { dynamodb } = testClients();
    const time = { now: Date.now() };
    const clock = { now: () => time.now };
    const lease = new DynamoDbLease({ client: dynamodb, tableName: stateTable, leaseKey: key, clock });
    const state = new DynamoDbStateStore({ client: dynamodb, tableName: stateTable, namespace: key, clock });
    const sink = new DynamoDbSink({ client: dynamodb, tableName: sinkTable, queryKey: key, leaseTable: stateTable, leaseKey: key, clock });
    const source = new InMemoryFileSource(plan.source.schema);
    source.add('001.json', [{ user: 'a', event_time: '2026-10-01 12:01:00', amount: 1 }]);
    source.add('002.json', [{ user: 'b', event_time: '2026-10-01 12:02:00', amount: 2 }]);
    const checkpoint = new InMemoryCheckpoint();

    // Once commits/0 lands, the run stalls past its lease and another run takes it over.
    let taken: Awaited<ReturnType<DynamoDbLease['acquire']>> = null;
    const stalling: CheckpointStore = Object.assign(Object.create(checkpoint), {
      writeCommit: async (entry: CommitEntry) => {
        await checkpoint.writeCommit(entry);
        if (entry.batchId === 0) {
          time.now += LEASE_MS + 1000;
          taken = await new DynamoDbLease({ client: dynamodb, tableName: stateTable, leaseKey: key, clock }).acquire('newer-run', LEASE_MS);
        }
      },
    });
    const executor = new MicroBatchExecutor({ plan, source, checkpoint: stalling, state, sink, lease, clock }, { leaseDurationMs: LEASE_MS });
    const err = await executor.run().catch((e) => e);

    expect(taken).not.toBeNull();
    expect(err).toBeInstanceOf(LeaseLostError);
    expect([...checkpoint.commits.keys()]).toEqual([0]);
    expect([...checkpoint.offsets.keys()]).toEqual([0]); // batch 1 was never planned
    expect((await sink.readAll()).map((r) => r.user)).toEqual(['a']);
    const op = { operatorId: 'op0', fixedEviction: true, evictionGranularityMs: 600_000 };
    expect(await state.count(op, 0)).toBe(1); // batch 0's (window, a)
    expect(await state.count(op, 1)).toBe(1); // and no (window, b) from batch 1
    // The newer run still holds its lease: the stalled run's release was refused.
    expect(await new DynamoDbLease({ client: dynamodb, tableName: stateTable, leaseKey: key, clock }).acquire('third-run', LEASE_MS)).toBeNull();
  });
});
