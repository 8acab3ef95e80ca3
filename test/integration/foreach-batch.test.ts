/**
 * foreachBatch with the DynamoDB effect guard, on the local stack: effects recorded with their
 * batch run at most once across crashes and replays; DynamoDB writes committed with the marker
 * run exactly once; an external effect whose completion record is lost runs again (at-least-once,
 * as documented).
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { type DynamoDBClient, GetItemCommand, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { DynamoDbEffectGuard } from '../../lib/aws/dynamodb/effect-guard';
import { DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { buildExecutor, type PipelineConfig } from '../../lib/aws/pipeline';
import { CrashInjector, type CrashPoint } from '../../lib/engine/testing/crash';
import { InjectedCrash, LeaseLostError } from '../../lib/engine/errors';
import { type EffectGuard, type ForeachBatchFunction, ForeachBatchSink } from '../../lib/engine/foreach-batch';
import type { SinkContext } from '../../lib/engine/ports';
import { ensureBucket, ensureStateTable } from '../../lib/local/resources';
import { windowedTotals } from '../../examples/windowed-totals';
import { clockStart, leaseClock, testClients, testConnection, uniqueName } from '../helpers/stack';

const { s3, dynamodb } = testClients();
const bucket = uniqueName('foreach');
const table = uniqueName('foreach-state');
const effectsTable = uniqueName('foreach-effects');

beforeAll(async () => {
  await Promise.all([ensureBucket(s3, bucket), ensureStateTable(dynamodb, table), ensureStateTable(dynamodb, effectsTable)]);
});

// ---- factories -------------------------------------------------------------------------------

function pipeline(base: string): PipelineConfig {
  return {
    checkpoint: { bucket, prefix: `${base}/checkpoint` },
    stateTable: table,
    source: { kind: 's3', bucket, prefix: `${base}/landing` },
    sink: { kind: 's3', bucket, prefix: `${base}/unused-sink` },
  };
}

async function drop(base: string, name: string, rows: object[]) {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${base}/landing/${name}`, Body: rows.map((r) => JSON.stringify(r)).join('\n') }));
}

const events = (n: number) => Array.from({ length: n }, (_, i) => ({ user: `u${i % 3}`, event_time: `2026-10-01 12:0${i % 10}:00`, amount: 1 }));

/** A non-idempotent DynamoDB effect: ADD the window's total to a running counter. */
function addToCounter(base: string, total: number): TransactWriteItem {
  return {
    Update: {
      TableName: effectsTable,
      Key: { pk: { S: `counter#${base}` }, sk: { S: 'all' } },
      UpdateExpression: 'ADD #t :t',
      ExpressionAttributeNames: { '#t': 'total' },
      ExpressionAttributeValues: { ':t': { N: String(total) } },
    },
  };
}

async function counter(base: string): Promise<number> {
  const res = await dynamodb.send(
    new GetItemCommand({ TableName: effectsTable, Key: { pk: { S: `counter#${base}` }, sk: { S: 'all' } }, ConsistentRead: true }),
  );
  return Number(res.Item?.total?.N ?? 0);
}

function recordingFn(base: string, calls: string[]): ForeachBatchFunction<TransactWriteItem> {
  return async (rows, batchId, context) => {
    await context.runOnce('notify', async () => {
      calls.push(`notify ${batchId} ${context.effectKey('notify')}`);
    });
    await context.transactWithGuard('counter', [
      addToCounter(
        base,
        rows.reduce((s, r) => s + Number(r.total), 0),
      ),
    ]);
  };
}

// ---- scenarios --------------------------------------------------------------------------------

describe.each<CrashPoint>(['after-offsets', 'mid-read', 'after-sink', 'mid-state', 'before-commit'])(
  'when batch 0 crashes at %s and the next run replays it',
  (point) => {
    it('runs the recorded effect once and commits the guarded DynamoDB write once', async () => {
      const base = uniqueName(point);
      const plan = windowedTotals({ outputMode: 'update', name: `foreach-${point}` });
      await drop(base, '001.json', events(30));
      const calls: string[] = [];
      const sink = () => new ForeachBatchSink({ fn: recordingFn(base, calls), guard: new DynamoDbEffectGuard({ client: dynamodb, tableName: effectsTable }) });
      const time = leaseClock();
      await expect(
        buildExecutor(testConnection(), plan, pipeline(base), { crash: new CrashInjector({ point }), sink: sink(), clock: time.clock }).executor.run(),
      ).rejects.toBeInstanceOf(InjectedCrash);
      time.waitOutLease(); // the crashed run kept its lease
      const report = await buildExecutor(testConnection(), plan, pipeline(base), { sink: sink(), clock: time.clock }).executor.run();
      expect(report.batches[0]).toMatchObject({ batchId: 0, replay: true });
      // Batch 1 is the no-data batch the watermark makes due: its own effect, once.
      const batch0 = calls.filter((c) => c.startsWith('notify 0 '));
      expect(batch0).toHaveLength(1);
      expect(batch0[0]).toMatch(/^notify 0 [0-9a-f-]+#0#notify$/);
      expect(calls.filter((c) => c.startsWith('notify 1 '))).toHaveLength(1);
      expect(await counter(base)).toBe(30);
    });
  },
);

describe('when the effect ran but its completion record was lost (crash between effect and record)', () => {
  it('runs the external effect AGAIN on replay: runOnce is at-least-once for effects outside DynamoDB', async () => {
    const base = uniqueName('lost-record');
    const plan = windowedTotals({ outputMode: 'update', name: 'foreach-lost-record' });
    await drop(base, '001.json', events(5));
    const calls: string[] = [];
    const real = new DynamoDbEffectGuard({ client: dynamodb, tableName: effectsTable });
    // The first attempt dies right after the effect, before markDone reaches DynamoDB.
    const dying: EffectGuard<TransactWriteItem> = {
      description: 'dying',
      isDone: (k) => real.isDone(k),
      markDone: async () => {
        throw new InjectedCrash('between-effect-and-record', 0);
      },
      transact: (k, items, lease) => real.transact(k, items, lease),
    };
    const fn = recordingFn(base, calls);
    const time = leaseClock();
    await expect(
      buildExecutor(testConnection(), plan, pipeline(base), { sink: new ForeachBatchSink({ fn, guard: dying }), clock: time.clock }).executor.run(),
    ).rejects.toBeInstanceOf(InjectedCrash);
    time.waitOutLease(); // the crashed run kept its lease
    await buildExecutor(testConnection(), plan, pipeline(base), { sink: new ForeachBatchSink({ fn, guard: real }), clock: time.clock }).executor.run();
    const batch0 = calls.filter((c) => c.startsWith('notify 0 '));
    expect(batch0).toHaveLength(2);
    expect(batch0[0]).toBe(batch0[1]); // same effect key: an idempotent callee drops the repeat
  });
});

describe("when the run's lease was taken over", () => {
  it('refuses to record the effect or commit guarded writes with the stale token', async () => {
    const leaseKey = uniqueName('lease');
    let now = clockStart();
    const clock = { now: () => now };
    const stale = (await new DynamoDbLease({ client: dynamodb, tableName: table, leaseKey, clock }).acquire('run-a', 1000))!;
    now += 2000;
    await new DynamoDbLease({ client: dynamodb, tableName: table, leaseKey, clock }).acquire('run-b', 1000);
    const base = uniqueName('fenced');
    const guard = new DynamoDbEffectGuard({ client: dynamodb, tableName: effectsTable, leaseTable: table, leaseKey });
    const ctx: SinkContext = { queryId: 'q1', queryName: 'q', outputMode: 'update', columns: ['total'], keyColumns: [], lease: stale };
    const calls: string[] = [];
    const sink = new ForeachBatchSink({ fn: recordingFn(base, calls), guard });
    await expect(sink.addBatch(0, [{ total: 3 }], ctx)).rejects.toBeInstanceOf(LeaseLostError);
    // The effect itself ran (it is outside DynamoDB); its record and the counter write did not.
    expect(await guard.isDone({ queryId: 'q1', batchId: 0, effect: 'notify' })).toBe(false);
    expect(await counter(base)).toBe(0);
  });
});

describe('when the condition of a guarded item fails', () => {
  it('writes nothing, records nothing, and names the item', async () => {
    const guard = new DynamoDbEffectGuard({ client: dynamodb, tableName: effectsTable });
    const base = uniqueName('refused');
    const key = { queryId: 'q', batchId: 0, effect: base };
    const mustExist: TransactWriteItem = {
      ConditionCheck: { TableName: effectsTable, Key: { pk: { S: `absent#${base}` }, sk: { S: 'x' } }, ConditionExpression: 'attribute_exists(pk)' },
    };
    const err = await guard.transact(key, [addToCounter(base, 5), mustExist]).catch((e) => e);
    expect(err.message).toMatch(/the condition of item\(s\) 1 failed, so nothing was written/);
    expect(err.details).toMatchObject({ failedItems: [1] });
    expect(await counter(base)).toBe(0);
    expect(await guard.isDone(key)).toBe(false);
  });
});

describe('when transactWithGuard is given more than one transaction holds', () => {
  it('says how to split it', async () => {
    const guard = new DynamoDbEffectGuard({ client: dynamodb as DynamoDBClient, tableName: effectsTable });
    const items = Array.from({ length: 100 }, () => addToCounter('x', 1));
    await expect(guard.transact({ queryId: 'q', batchId: 0, effect: 'big' }, items)).rejects.toThrow(
      /got 100 items; one transaction holds at most 99 .* split the writes into several named effects/,
    );
  });
});

describe('when the function commits guarded effects on DynamoDB (mid-sink hook)', () => {
  it('tells ctx.onPieceWritten after each committed effect, and after none on the replay', async () => {
    const base = uniqueName('pieces');
    const guard = new DynamoDbEffectGuard({ client: dynamodb, tableName: effectsTable });
    const calls: string[] = [];
    const sink = new ForeachBatchSink({ fn: recordingFn(base, calls), guard });
    const pieces: number[] = [];
    const ctx: SinkContext = { queryId: base, queryName: 'q', outputMode: 'update', columns: ['total'], keyColumns: [], onPieceWritten: (i) => pieces.push(i) };
    await sink.addBatch(0, [{ total: 3 }], ctx);
    await sink.addBatch(0, [{ total: 3 }], ctx);
    expect(pieces).toEqual([0, 1]);
    expect(await counter(base)).toBe(3);
  });
});
