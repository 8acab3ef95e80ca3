/**
 * DynamoDbLease on DynamoDB Local: one holder at a time, takeover after expiry with a larger
 * fencing token, and writes fenced on the token.
 */
import { type DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { assertLeaseCondition, DynamoDbLease } from '../../lib/aws/dynamodb/lease';
import { InvalidOptionError, LeaseLostError } from '../../lib/engine/errors';
import type { LeaseHandle } from '../../lib/engine/ports';
import { ensureStateTable } from '../../lib/local/resources';
import { testClients, uniqueName } from '../helpers/stack';

const MINUTE = 60_000;

describe('DynamoDbLease', () => {
  let dynamodb: DynamoDBClient;
  let tableName: string;
  let now = Date.UTC(2024, 0, 1);
  const clock = { now: () => now };

  /** Two runs competing for the same query's lease (each with its own instance). */
  const twoRuns = () => {
    const leaseKey = uniqueName('query');
    return [new DynamoDbLease({ client: dynamodb, tableName, leaseKey, clock }), new DynamoDbLease({ client: dynamodb, tableName, leaseKey, clock })] as const;
  };

  beforeAll(async () => {
    dynamodb = testClients().dynamodb;
    tableName = uniqueName('lease');
    await ensureStateTable(dynamodb, tableName);
  });

  beforeEach(() => {
    now = Date.UTC(2024, 0, 1);
  });

  describe('when one run holds the lease', () => {
    it('returns null to a second run while the lease is live', async () => {
      const [a, b] = twoRuns();
      const held = await a.acquire('run-a', 5 * MINUTE);
      expect(held).toEqual({ owner: 'run-a', token: 1, expiresAtMs: now + 5 * MINUTE });
      now += 5 * MINUTE - 1;
      expect(await b.acquire('run-b', 5 * MINUTE)).toBeNull();
    });

    it('lets the same owner take it again (a retried run) with a new token that fences out its failed attempt', async () => {
      const [a] = twoRuns();
      const first = (await a.acquire('run-a', 5 * MINUTE))!;
      now += MINUTE;
      const again = await a.acquire('run-a', 5 * MINUTE);
      expect(again).toEqual({ owner: 'run-a', token: first.token + 1, expiresAtMs: now + 5 * MINUTE });
      await expect(a.renew(first, MINUTE)).rejects.toThrow(LeaseLostError);
    });

    it('keeps it live past the first expiry when renewed', async () => {
      const [a, b] = twoRuns();
      const held = (await a.acquire('run-a', MINUTE))!;
      now += MINUTE - 1000;
      const renewed = await a.renew(held, MINUTE);
      expect(renewed).toEqual({ owner: 'run-a', token: held.token, expiresAtMs: now + MINUTE });
      now += MINUTE - 1000;
      expect(await b.acquire('run-b', MINUTE)).toBeNull();
    });
  });

  describe('when the holder lets the lease expire', () => {
    it('lets another run take it with a larger token, and the old holder cannot renew', async () => {
      const [a, b] = twoRuns();
      const old = (await a.acquire('run-a', MINUTE))!;
      now += MINUTE + 1;
      const taken = await b.acquire('run-b', MINUTE);
      expect(taken?.owner).toBe('run-b');
      expect(taken!.token).toBeGreaterThan(old.token);

      const err = await a.renew(old, MINUTE).catch((e) => e);
      expect(err).toBeInstanceOf(LeaseLostError);
      expect(err.message).toMatch(/no longer held by run-a with token 1: run-b holds it with token 2/);
      expect(err.details).toMatchObject({ owner: 'run-a', token: 1, holder: 'run-b', holderToken: 2 });
    });

    it('lets the old holder renew when nobody took it (the token still fences)', async () => {
      const [a] = twoRuns();
      const held = (await a.acquire('run-a', MINUTE))!;
      now += 2 * MINUTE;
      await expect(a.renew(held, MINUTE)).resolves.toMatchObject({ token: held.token });
    });
  });

  describe('when the holder releases the lease', () => {
    it('frees it at once and keeps the token growing', async () => {
      const [a, b] = twoRuns();
      const first = (await a.acquire('run-a', 10 * MINUTE))!;
      await a.release(first);
      const second = (await b.acquire('run-b', 10 * MINUTE))!;
      expect(second.token).toBe(first.token + 1);
      await b.release(second);
      const third = (await a.acquire('run-a', 10 * MINUTE))!;
      expect(third.token).toBe(second.token + 1);

      const item = await dynamodb.send(new GetItemCommand({ TableName: tableName, Key: a.key, ConsistentRead: true }));
      expect(item.Item).toMatchObject({ owner: { S: 'run-a' }, token: { N: '3' } });
    });

    it('ignores releasing a lease that was already lost', async () => {
      const [a, b] = twoRuns();
      const old = (await a.acquire('run-a', MINUTE))!;
      now += 2 * MINUTE;
      const current = (await b.acquire('run-b', MINUTE))!;
      await expect(a.release(old)).resolves.toBeUndefined();
      // The holder's lease is untouched.
      expect(await a.acquire('run-a', MINUTE)).toBeNull();
      await expect(b.renew(current, MINUTE)).resolves.toMatchObject({ owner: 'run-b' });
    });

    it('refuses to renew a released lease', async () => {
      const [a] = twoRuns();
      const held = (await a.acquire('run-a', MINUTE))!;
      await a.release(held);
      await expect(a.renew(held, MINUTE)).rejects.toThrow(/it was released \(token 1\)/);
    });
  });

  describe('when a write is fenced on the lease token', () => {
    /** A sink-like write: put an output row in the same transaction as the lease check. */
    const fencedWrite = (lease: DynamoDbLease, handle: LeaseHandle, row: string) =>
      dynamodb.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            lease.conditionCheck(handle),
            { Put: { TableName: tableName, Item: { pk: { S: `out#${lease.key.pk.S}` }, sk: { S: row }, token: { N: String(handle.token) } } } },
          ],
        }),
      );

    it('lets the holder write and refuses the run whose lease was taken over', async () => {
      const [a, b] = twoRuns();
      const old = (await a.acquire('run-a', MINUTE))!;
      await expect(fencedWrite(a, old, 'row-1')).resolves.toBeDefined();

      now += 2 * MINUTE;
      const current = (await b.acquire('run-b', MINUTE))!;
      await expect(fencedWrite(a, old, 'row-2')).rejects.toMatchObject({ name: 'TransactionCanceledException' });
      await expect(fencedWrite(b, current, 'row-2')).resolves.toBeDefined();
    });

    it('exposes the condition parts for other writers', () => {
      const c = assertLeaseCondition({ owner: 'run-a', token: 7, expiresAtMs: 0 });
      expect(c.expression).toBe('#sluiceLeaseOwner = :sluiceLeaseOwner AND #sluiceLeaseToken = :sluiceLeaseToken');
      expect(c.names).toEqual({ '#sluiceLeaseOwner': 'owner', '#sluiceLeaseToken': 'token' });
      expect(c.values).toEqual({ ':sluiceLeaseOwner': { S: 'run-a' }, ':sluiceLeaseToken': { N: '7' } });
    });
  });

  describe('when the answer to an acquire is lost and the request is sent again', () => {
    it('recognises its own lease on the retry instead of reporting it held', async () => {
      const leaseKey = uniqueName('query');
      let calls = 0;
      // The first UpdateItem lands, but its answer is lost (a socket reset): withRetry sends it again.
      const losing = {
        send: async (command: never) => {
          const call = ++calls;
          const res = await dynamodb.send(command);
          if (call === 1) throw Object.assign(new Error('socket hang up'), { name: 'ECONNRESET' });
          return res;
        },
      } as unknown as DynamoDBClient;
      const lease = new DynamoDbLease({ client: losing, tableName, leaseKey, clock, baseDelayMs: 1, maxDelayMs: 2 });
      // (the retry takes it again as its owner, with the next token)
      expect(await lease.acquire('run-a', MINUTE)).toEqual({ owner: 'run-a', token: 2, expiresAtMs: now + MINUTE });
      expect(calls).toBe(2);
      // Anybody else still finds it held.
      expect(await new DynamoDbLease({ client: dynamodb, tableName, leaseKey, clock }).acquire('run-b', MINUTE)).toBeNull();
    });
  });

  describe('when the arguments are wrong', () => {
    it('rejects an empty owner and a non-positive duration before any request', async () => {
      const [a] = twoRuns();
      await expect(a.acquire('', MINUTE)).rejects.toThrow(/lease owner \(""\) must be non-empty/);
      await expect(a.acquire('run-a', 0)).rejects.toThrow(/lease duration \(0 ms\) must be a positive number/);
      await expect(a.acquire('', MINUTE)).rejects.toBeInstanceOf(InvalidOptionError);
    });

    it('rejects bad options at construction', () => {
      expect(() => new DynamoDbLease({ client: dynamodb, tableName: 'x', leaseKey: 'q' })).toThrow(InvalidOptionError);
      expect(() => new DynamoDbLease({ client: dynamodb, tableName, leaseKey: '' })).toThrow(/leaseKey \(""\) must be a non-empty string/);
      expect(() => new DynamoDbLease({ client: dynamodb, tableName, leaseKey: 'q', maxAttempts: 0 })).toThrow(InvalidOptionError);
    });
  });
});
