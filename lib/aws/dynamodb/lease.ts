/**
 * The Lease port on a DynamoDB item: one run per query at a time, with a fencing token.
 *
 * Item: pk `lease#<leaseKey>`, sk `lease`; attributes `owner`, `expiresAtMs` (while held) and
 * `token` (kept forever, so it only grows). Every acquire increments the token; a holder proves it
 * still holds the lease by owner AND token, so a run that lost its lease (it paused past expiry
 * and another run took over) is refused by every conditional write fenced with
 * `assertLeaseCondition`, even if its clock says it still holds it.
 *
 *     run A: acquire (token 7, until t0+d) ....... pause ..................... renew -> LeaseLostError
 *     run B:                                 t0+d: acquire (token 8) -> writes fenced on token 8
 *     run A's late sink write, fenced on token 7 -> ConditionalCheckFailed: nothing written
 *
 * Expiry compares the clocks of different machines: keep durations well above clock skew (minutes,
 * not seconds); the token, not the clock, is what keeps a late writer out.
 */
import { AttributeValue, DynamoDBClient, UpdateItemCommand, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { LeaseLostError, SluiceError } from '../../engine/errors';
import { Clock, Lease, LeaseHandle, systemClock } from '../../engine/ports';

export interface DynamoDbLeaseOptions {
  readonly client: DynamoDBClient;
  /** A table with partition key `pk` (S) and sort key `sk` (S), e.g. the state table. */
  readonly tableName: string;
  /** What the lease guards, e.g. the query name. */
  readonly leaseKey: string;
  /** @default systemClock */
  readonly clock?: Clock;
}

/** Expression parts of a lease fence; merge them into another request's condition. */
export interface LeaseCondition {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, AttributeValue>;
}

/** Placeholders are prefixed so that they do not collide with the caller's own. */
const N_OWNER = '#sluiceLeaseOwner';
const N_TOKEN = '#sluiceLeaseToken';
const N_EXPIRES = '#sluiceLeaseExpiresAtMs';
const N_PK = '#sluiceLeasePk';
const V_OWNER = ':sluiceLeaseOwner';
const V_TOKEN = ':sluiceLeaseToken';

const NAMES = { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs', [N_PK]: 'pk' };

/**
 * The condition "this handle still holds the lease": owner and token match the lease item. Use it
 * in a TransactWriteItems ConditionCheck on the lease item (`DynamoDbLease.conditionCheck` builds
 * the whole entry), next to the writes it fences; the transaction fails as a whole when another
 * run has taken the lease since.
 */
export function assertLeaseCondition(handle: LeaseHandle): LeaseCondition {
  return {
    expression: `${N_OWNER} = ${V_OWNER} AND ${N_TOKEN} = ${V_TOKEN}`,
    names: { [N_OWNER]: 'owner', [N_TOKEN]: 'token' },
    values: { [V_OWNER]: { S: handle.owner }, [V_TOKEN]: { N: String(handle.token) } },
  };
}

export class DynamoDbLease implements Lease {
  readonly description: string;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly leaseKey: string;
  private readonly clock: Clock;

  constructor(opts: DynamoDbLeaseOptions) {
    if (!opts.tableName || opts.tableName.length < 3) {
      throw new SluiceError(`DynamoDbLease tableName (${JSON.stringify(opts.tableName)}) must be a DynamoDB table name of at least 3 characters: pass the state table's name.`);
    }
    if (!opts.leaseKey) {
      throw new SluiceError(`DynamoDbLease leaseKey (${JSON.stringify(opts.leaseKey)}) must be non-empty: use the query name.`);
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.leaseKey = opts.leaseKey;
    this.clock = opts.clock ?? systemClock;
    this.description = `dynamodb://${this.tableName}/lease#${this.leaseKey}`;
  }

  /** The lease item's key. */
  get key(): Record<string, AttributeValue> {
    return { pk: { S: `lease#${this.leaseKey}` }, sk: { S: 'lease' } };
  }

  /** A TransactWriteItems entry that fails the transaction unless `handle` still holds the lease. */
  conditionCheck(handle: LeaseHandle) {
    const c = assertLeaseCondition(handle);
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: this.key,
        ConditionExpression: c.expression,
        ExpressionAttributeNames: c.names,
        ExpressionAttributeValues: c.values,
      },
    };
  }

  async acquire(owner: string, durationMs: number): Promise<LeaseHandle | null> {
    checkArgs(owner, durationMs);
    const now = this.clock.now();
    const expiresAtMs = now + durationMs;
    try {
      const res = await this.update('acquire', {
        // Free: never taken, released (no expiry), or expired. The token only grows.
        ConditionExpression: `attribute_not_exists(${N_PK}) OR attribute_not_exists(${N_EXPIRES}) OR ${N_EXPIRES} < :now`,
        UpdateExpression: `SET ${N_OWNER} = ${V_OWNER}, ${N_EXPIRES} = :expires ADD ${N_TOKEN} :one`,
        ExpressionAttributeNames: NAMES,
        ExpressionAttributeValues: {
          ':now': { N: String(now) },
          ':expires': { N: String(expiresAtMs) },
          ':one': { N: '1' },
          [V_OWNER]: { S: owner },
        },
        ReturnValues: 'ALL_NEW',
      });
      return { owner, token: Number(res.Attributes!.token.N), expiresAtMs };
    } catch (err) {
      if (isConditionFailed(err)) return null;
      throw err;
    }
  }

  async renew(handle: LeaseHandle, durationMs: number): Promise<LeaseHandle> {
    checkArgs(handle.owner, durationMs);
    const expiresAtMs = this.clock.now() + durationMs;
    try {
      await this.update('renew', {
        ConditionExpression: `${N_OWNER} = ${V_OWNER} AND ${N_TOKEN} = ${V_TOKEN}`,
        UpdateExpression: `SET ${N_EXPIRES} = :expires`,
        ExpressionAttributeNames: { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs' },
        ExpressionAttributeValues: {
          ':expires': { N: String(expiresAtMs) },
          [V_OWNER]: { S: handle.owner },
          [V_TOKEN]: { N: String(handle.token) },
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { owner: handle.owner, token: handle.token, expiresAtMs };
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const item = (err as { Item?: Record<string, AttributeValue> }).Item;
      const holder = item?.owner?.S;
      const token = item?.token?.N;
      throw new LeaseLostError(
        `lease ${this.leaseKey} is no longer held by ${handle.owner} with token ${handle.token}: ` +
          (holder ? `${holder} holds it with token ${token}` : token ? `it was released (token ${token})` : 'the lease item is gone') +
          '. Another run took over after the lease expired: stop this run without further writes; the holder continues from the checkpoint.',
        { details: { leaseKey: this.leaseKey, owner: handle.owner, token: handle.token, holder: holder ?? null, holderToken: token === undefined ? null : Number(token) } },
      );
    }
  }

  async release(handle: LeaseHandle): Promise<void> {
    try {
      await this.update('release', {
        ConditionExpression: `${N_OWNER} = ${V_OWNER} AND ${N_TOKEN} = ${V_TOKEN}`,
        // The token stays, so the next holder's is larger.
        UpdateExpression: `REMOVE ${N_OWNER}, ${N_EXPIRES}`,
        ExpressionAttributeNames: { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs' },
        ExpressionAttributeValues: { [V_OWNER]: { S: handle.owner }, [V_TOKEN]: { N: String(handle.token) } },
      });
    } catch (err) {
      // Already lost: nothing of ours to release.
      if (isConditionFailed(err)) return;
      throw err;
    }
  }

  private async update(action: string, input: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>) {
    try {
      return await this.client.send(new UpdateItemCommand({ TableName: this.tableName, Key: this.key, ...input }));
    } catch (err) {
      if (isConditionFailed(err)) throw err;
      const name = (err as { name?: string }).name ?? 'Error';
      const remedy = name === 'ResourceNotFoundException' ? ' Create the table (pk S, sk S) with ensureStateTable or the AvailableNowPipeline construct.' : '';
      throw new SluiceError(`lease ${action} on ${this.description} failed: ${name}: ${(err as Error).message}.${remedy}`, {
        cause: err,
        retriable: name !== 'ResourceNotFoundException' && name !== 'ValidationException' && name !== 'AccessDeniedException',
        details: { leaseKey: this.leaseKey, action, errorName: name },
      });
    }
  }
}

function isConditionFailed(err: unknown): boolean {
  return (err as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

function checkArgs(owner: string, durationMs: number): void {
  if (!owner) throw new SluiceError(`lease owner (${JSON.stringify(owner)}) must be non-empty: use the run's id.`);
  if (!Number.isFinite(durationMs) || durationMs <= 0) {
    throw new SluiceError(`lease duration (${durationMs} ms) must be a positive number of milliseconds, e.g. the Lambda timeout plus a margin.`);
  }
}
