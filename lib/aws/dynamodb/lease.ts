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
 *
 * Every request asks for the item as stored when its condition fails (ALL_OLD): a refused
 * renew names the current holder, and an acquire whose first attempt landed but whose answer was
 * lost recognises its own lease on the retry.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  UpdateItemCommand,
  type UpdateItemCommandInput,
  type UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, LeaseLostError } from '../../engine/errors';
import { type Clock, type Lease, type LeaseHandle, systemClock } from '../../engine/ports';
import { type RetryOptions, type RetryPolicy, retryPolicy } from '../request/retry';
import { LEASE_PK_PREFIX } from '../namespace';
import { checkClient, checkTableName, conditional, type Conditional, type Item, sendDynamoDb } from './requests';

export interface DynamoDbLeaseOptions extends RetryOptions {
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
const V_NOW = ':sluiceLeaseNow';
const V_EXPIRES = ':sluiceLeaseExpires';

/** The condition clauses of the lease item, by name. */
const CLAUSE = {
  /** The lease was never taken. */
  neverTaken: `attribute_not_exists(${N_PK})`,
  /** The last holder released it. */
  released: `attribute_not_exists(${N_EXPIRES})`,
  /** The holder's time ran out. */
  expired: `${N_EXPIRES} < ${V_NOW}`,
  /** The same owner holds it: a retry of the run that took it (a plan task retried after a failure). */
  heldByOwner: `${N_OWNER} = ${V_OWNER}`,
  /** The handle's owner and token still hold it. */
  heldByHandle: `${N_OWNER} = ${V_OWNER} AND ${N_TOKEN} = ${V_TOKEN}`,
} as const;

/** Free to take: never taken, released, or expired. */
const FREE = [CLAUSE.neverTaken, CLAUSE.released, CLAUSE.expired].join(' OR ');

/**
 * The condition "this handle still holds the lease": owner and token match the lease item. Use it
 * in a TransactWriteItems ConditionCheck on the lease item (`DynamoDbLease.conditionCheck` builds
 * the whole entry), next to the writes it fences; the transaction fails as a whole when another
 * run has taken the lease since.
 */
export function assertLeaseCondition(handle: LeaseHandle): LeaseCondition {
  return {
    expression: CLAUSE.heldByHandle,
    names: { [N_OWNER]: 'owner', [N_TOKEN]: 'token' },
    values: handleValues(handle),
  };
}

/** Who holds the lease, as the stored lease item (ALL_OLD of a refused write) says. */
function describeHolder(stored: Item | undefined): string {
  const holder = stored?.owner?.S;
  const token = stored?.token?.N;
  if (holder) return `${holder} holds it with token ${token}`;
  return token ? `it was released (token ${token})` : 'the lease item is gone';
}

/** The error for a write refused by the lease fence; `stored` is the lease item as it is. */
export function fencedError(handle: LeaseHandle, what: string, stored?: Item): LeaseLostError {
  return new LeaseLostError(
    `${what} was refused, nothing of it applied: this run (owner ${handle.owner}, fencing token ${handle.token}) no longer holds the query's lease (${describeHolder(stored)}): stop this run, and raise the lease duration above the Lambda timeout if it did not stall`,
    { details: { owner: handle.owner, token: handle.token, holder: stored?.owner?.S ?? null } },
  );
}

/**
 * The lease whose token fences `who`'s writes, from its `leaseTable` and `leaseKey` options
 * (both or neither); null when not fenced.
 */
export function fencingLease(who: string, opts: { client: DynamoDBClient; leaseTable?: string; leaseKey?: string }, clock: Clock): DynamoDbLease | null {
  if ((opts.leaseTable === undefined) !== (opts.leaseKey === undefined)) {
    throw new InvalidOptionError(
      `${who} leaseTable (${JSON.stringify(opts.leaseTable)}) and leaseKey (${JSON.stringify(opts.leaseKey)}) go together: pass both to fence its writes on the run's lease, or neither`,
    );
  }
  return opts.leaseTable === undefined ? null : new DynamoDbLease({ client: opts.client, tableName: opts.leaseTable, leaseKey: opts.leaseKey!, clock });
}

export class DynamoDbLease implements Lease {
  readonly description: string;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly leaseKey: string;
  private readonly clock: Clock;
  private readonly retry: RetryPolicy;

  constructor(opts: DynamoDbLeaseOptions) {
    checkClient(opts.client, 'DynamoDbLease');
    checkTableName(opts.tableName, 'DynamoDbLease tableName');
    if (typeof opts.leaseKey !== 'string' || opts.leaseKey === '') {
      throw new InvalidOptionError(`DynamoDbLease leaseKey (${JSON.stringify(opts.leaseKey)}) must be a non-empty string: use the query name`);
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.leaseKey = opts.leaseKey;
    this.clock = opts.clock ?? systemClock;
    this.retry = retryPolicy(opts, 'DynamoDbLease');
    this.description = `dynamodb://${this.tableName}/${LEASE_PK_PREFIX}${this.leaseKey}`;
  }

  /** The lease item's key. */
  get key(): Record<string, AttributeValue> {
    return { pk: { S: `${LEASE_PK_PREFIX}${this.leaseKey}` }, sk: { S: 'lease' } };
  }

  /**
   * A TransactWriteItems entry that fails the transaction unless `handle` still holds the lease;
   * its cancellation reason then carries the lease item as stored (who holds it now).
   */
  conditionCheck(handle: LeaseHandle) {
    const c = assertLeaseCondition(handle);
    return {
      ConditionCheck: {
        TableName: this.tableName,
        Key: this.key,
        ConditionExpression: c.expression,
        ExpressionAttributeNames: c.names,
        ExpressionAttributeValues: c.values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
  }

  async acquire(owner: string, durationMs: number): Promise<LeaseHandle | null> {
    checkArgs(owner, durationMs);
    const now = this.clock.now();
    const expiresAtMs = now + durationMs;
    let attempts = 0;
    const res = await this.update('acquire', () => attempts++, {
      // The token only grows: a retry by the same owner takes a new one, which fences out
      // whatever its failed attempt may still write.
      ConditionExpression: `${FREE} OR ${CLAUSE.heldByOwner}`,
      UpdateExpression: `SET ${N_OWNER} = ${V_OWNER}, ${N_EXPIRES} = ${V_EXPIRES} ADD ${N_TOKEN} :one`,
      ExpressionAttributeNames: { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs', [N_PK]: 'pk' },
      ExpressionAttributeValues: { [V_NOW]: { N: String(now) }, [V_EXPIRES]: { N: String(expiresAtMs) }, ':one': { N: '1' }, [V_OWNER]: { S: owner } },
      ReturnValues: 'ALL_NEW',
    });
    if (res.written) return { owner, token: Number(res.output.Attributes!.token.N), expiresAtMs };
    // A retry that meets exactly the lease an earlier attempt of this call took: ours.
    const stored = res.stored;
    if (attempts > 1 && stored?.owner?.S === owner && stored?.expiresAtMs?.N === String(expiresAtMs)) {
      return { owner, token: Number(stored.token.N), expiresAtMs };
    }
    return null;
  }

  async renew(handle: LeaseHandle, durationMs: number): Promise<LeaseHandle> {
    checkArgs(handle.owner, durationMs);
    const expiresAtMs = this.clock.now() + durationMs;
    const res = await this.update('renew', () => {}, {
      ConditionExpression: CLAUSE.heldByHandle,
      UpdateExpression: `SET ${N_EXPIRES} = ${V_EXPIRES}`,
      ExpressionAttributeNames: { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs' },
      ExpressionAttributeValues: { [V_EXPIRES]: { N: String(expiresAtMs) }, ...handleValues(handle) },
    });
    if (res.written) return { owner: handle.owner, token: handle.token, expiresAtMs };
    const holder = res.stored?.owner?.S;
    const token = res.stored?.token?.N;
    throw new LeaseLostError(
      `lease ${this.leaseKey} is no longer held by ${handle.owner} with token ${handle.token}: ${describeHolder(res.stored)}; another run took over after it expired: stop this run without further writes, the holder continues from the checkpoint`,
      {
        details: {
          leaseKey: this.leaseKey,
          owner: handle.owner,
          token: handle.token,
          holder: holder ?? null,
          holderToken: token === undefined ? null : Number(token),
        },
      },
    );
  }

  async release(handle: LeaseHandle): Promise<void> {
    // Refused: already lost, nothing of ours to release. The token stays, so the next holder's is larger.
    await this.update('release', () => {}, {
      ConditionExpression: CLAUSE.heldByHandle,
      UpdateExpression: `REMOVE ${N_OWNER}, ${N_EXPIRES}`,
      ExpressionAttributeNames: { [N_OWNER]: 'owner', [N_TOKEN]: 'token', [N_EXPIRES]: 'expiresAtMs' },
      ExpressionAttributeValues: handleValues(handle),
    });
  }

  /** One conditional UpdateItem on the lease item, retried; `onAttempt` hears of every HTTP attempt. */
  private update(
    action: string,
    onAttempt: () => void,
    input: Omit<UpdateItemCommandInput, 'TableName' | 'Key' | 'ReturnValuesOnConditionCheckFailure'>,
  ): Promise<Conditional<UpdateItemCommandOutput>> {
    const command = new UpdateItemCommand({ TableName: this.tableName, Key: this.key, ReturnValuesOnConditionCheckFailure: 'ALL_OLD', ...input });
    return conditional(
      sendDynamoDb(this.retry, `DynamoDB UpdateItem (lease ${action}) on ${this.description}`, () => {
        onAttempt();
        return this.client.send(command);
      }),
    );
  }
}

function handleValues(handle: LeaseHandle): Record<string, AttributeValue> {
  return { [V_OWNER]: { S: handle.owner }, [V_TOKEN]: { N: String(handle.token) } };
}

function checkArgs(owner: string, durationMs: number): void {
  if (!owner) throw new InvalidOptionError(`lease owner (${JSON.stringify(owner)}) must be non-empty: use the run's id`);
  if (!Number.isFinite(durationMs) || durationMs <= 0) {
    throw new InvalidOptionError(`lease duration (${durationMs} ms) must be a positive number of milliseconds, e.g. the Lambda timeout plus a margin`);
  }
}
