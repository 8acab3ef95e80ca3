/**
 * The EffectGuard port (lib/engine/foreach-batch.ts) on DynamoDB: one marker item per effect of
 * a batch, `effect#<queryId>#<batchId>#<effect>` / `done`, created with attribute_not_exists.
 *
 *     runOnce:            GetItem marker (consistent) ─▶ absent: effect() ─▶ Put marker
 *                         (a crash between the effect and the Put repeats the effect on replay:
 *                         at-least-once, see foreach-batch.ts)
 *     transactWithGuard:  TransactWriteItems [ Put marker if absent, lease check, ...items ]
 *                         marker present ─▶ cancelled with ConditionalCheckFailed on it ─▶ 'skipped'
 *                         (exactly once: the items and the marker commit together or not at all)
 *
 * With `leaseTable` and `leaseKey`, the marker (and the items with it) are fenced on the run's
 * lease token, as the DynamoDB sink's chunks are.
 *
 * Cost: runOnce is one strongly consistent read (1 RCU) plus one write (1 WCU, or 2 WCU + 2 for
 * the lease check as a transaction when fenced). transactWithGuard is one TransactWriteItems:
 * 2 WCU per item-KB of the items, 2 for the marker, 2 for the lease check; at most 98 items
 * (100 actions less the marker and the check) and 4 MB.
 */
import { type DynamoDBClient, GetItemCommand, PutItemCommand, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { EffectGuard, EffectKey, EffectOutcome } from '../../engine/foreach-batch';
import type { Clock, LeaseHandle } from '../../engine/ports';
import { systemClock } from '../../engine/ports';
import { type RetryOptions, type RetryPolicy, retryPolicy } from '../request/retry';
import { type DynamoDbLease, fencedError, fencingLease } from './lease';
import { checkClient, checkTableName, conditional, sendDynamoDb } from './requests';
import { MARKER_ABSENT, transactGuarded, TRANSACTION_MAX_ACTIONS } from './transaction';

export interface DynamoDbEffectGuardOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  /** A table with `pk` (S) and `sk` (S), e.g. the sink table or the state table. */
  readonly tableName: string;
  /** The lease's table (the state table); with leaseKey, markers are fenced on the run's lease. */
  readonly leaseTable?: string;
  readonly leaseKey?: string;
  /** How long markers live (via `ttl`). @default 2592000 (30 days) */
  readonly markerTtlSeconds?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

export class DynamoDbEffectGuard implements EffectGuard<TransactWriteItem> {
  readonly description: string;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly lease: DynamoDbLease | null;
  private readonly ttlSeconds: number;
  private readonly clock: Clock;
  private readonly retry: RetryPolicy;

  constructor(opts: DynamoDbEffectGuardOptions) {
    checkClient(opts.client, 'DynamoDbEffectGuard');
    checkTableName(opts.tableName, 'DynamoDbEffectGuard tableName');
    this.ttlSeconds = opts.markerTtlSeconds ?? 30 * 86_400;
    if (!Number.isSafeInteger(this.ttlSeconds) || this.ttlSeconds <= 0) {
      throw new InvalidOptionError(`DynamoDbEffectGuard markerTtlSeconds (${this.ttlSeconds}) must be a positive integer: leave it out for 30 days`);
    }
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.clock = opts.clock ?? systemClock;
    this.retry = retryPolicy(opts, 'DynamoDbEffectGuard');
    this.lease = fencingLease('DynamoDbEffectGuard', opts, this.clock);
    this.description = `dynamodb://${this.tableName}/effect#`;
  }

  /** How long an effect's record lives (markerTtlSeconds): the executor refuses older replays. */
  get retentionMs(): number {
    return this.ttlSeconds * 1000;
  }

  async isDone(key: EffectKey): Promise<boolean> {
    const res = await sendDynamoDb(this.retry, `DynamoDB GetItem of effect marker on ${this.tableName}`, () =>
      this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(key), ConsistentRead: true, ProjectionExpression: 'pk' })),
    );
    return res.Item !== undefined;
  }

  async markDone(key: EffectKey, lease?: LeaseHandle): Promise<'recorded' | 'already-recorded'> {
    const fence = this.lease && lease ? this.lease.conditionCheck(lease) : null;
    if (fence) return (await this.transactWith(key, [], fence, lease!)) === 'ran' ? 'recorded' : 'already-recorded';
    const put = await conditional(
      sendDynamoDb(this.retry, `DynamoDB PutItem of effect marker on ${this.tableName}`, () =>
        this.client.send(new PutItemCommand({ TableName: this.tableName, Item: this.marker(key), ...MARKER_ABSENT })),
      ),
    );
    return put.written ? 'recorded' : 'already-recorded';
  }

  async transact(key: EffectKey, items: TransactWriteItem[], lease?: LeaseHandle): Promise<EffectOutcome> {
    const fence = this.lease && lease ? this.lease.conditionCheck(lease) : null;
    const room = TRANSACTION_MAX_ACTIONS - 1 - (fence ? 1 : 0);
    if (!Array.isArray(items) || items.length > room) {
      throw new InvalidOptionError(
        `transactWithGuard("${key.effect}") got ${Array.isArray(items) ? items.length : typeof items} items; one transaction holds at most ${room} next to the marker${fence ? ' and the lease check' : ''}: split the writes into several named effects`,
      );
    }
    return this.transactWith(key, items, fence, lease);
  }

  private async transactWith(
    key: EffectKey,
    items: TransactWriteItem[],
    fence: TransactWriteItem | null,
    lease: LeaseHandle | undefined,
  ): Promise<EffectOutcome> {
    const what = `DynamoDB TransactWriteItems of effect ${key.effect} (batch ${key.batchId}) on ${this.tableName}`;
    const outcome = await transactGuarded(this.client, this.retry, what, { table: this.tableName, marker: this.marker(key), fence, items });
    switch (outcome.kind) {
      case 'ok':
        return 'ran';
      case 'marker-exists':
        return 'skipped';
      case 'fenced':
        throw fencedError(lease!, `the effect ${key.effect} of batch ${key.batchId}`, outcome.holder);
      case 'items-refused':
        throw new SluiceError(
          `transactWithGuard("${key.effect}") of batch ${key.batchId}: the condition of item(s) ${outcome.indices.join(', ')} failed, so nothing was written and the effect is not recorded: check those items' ConditionExpression`,
          { details: { effect: key.effect, batchId: key.batchId, failedItems: outcome.indices } },
        );
    }
  }

  private key(k: EffectKey) {
    return { pk: { S: `effect#${k.queryId}#${k.batchId}#${k.effect}` }, sk: { S: 'done' } };
  }

  private marker(k: EffectKey) {
    const now = this.clock.now();
    return { ...this.key(k), doneAtMs: { N: String(now) }, ttl: { N: String(Math.floor(now / 1000) + this.ttlSeconds) } };
  }
}
