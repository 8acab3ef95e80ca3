/**
 * The guarded transaction, shared by the DynamoDB sink (one per chunk of rows) and the effect
 * guard (one per transactWithGuard): a marker, an optional lease fence and the items the marker
 * guards, in one TransactWriteItems, all or nothing.
 *
 *     [0]     Put marker      attribute_not_exists(pk)        refused: committed before  → marker-exists
 *     [1]     ConditionCheck  owner = :me AND token = :token  refused: lease taken over  → fenced
 *     [1|2..] the items       their own conditions            refused: those items       → items-refused
 *
 * Without a marker (`marker: null`, for writes whose repetition is harmless, e.g. the sink's
 * deletes of superseded sessions) the fence comes first and the items after it.
 *
 * A cancellation's reasons are read once, position by position, in that order. A cancellation
 * with no refused condition but a retriable reason (TransactionConflict, throttling;
 * RETRIABLE_CANCELLATION_REASONS) is sent again through withRetry, as are retriable errors;
 * any other cancellation is an error.
 */
import { type DynamoDBClient, type TransactWriteItem, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { SluiceError } from '../../engine/errors';
import { errorName, RETRIABLE_CANCELLATION_REASONS } from '../request/errors';
import { RetryableResult, type RetryPolicy } from '../request/retry';
import { type Item, sendDynamoDb } from './requests';

/** DynamoDB's limits for one TransactWriteItems. */
export const TRANSACTION_MAX_ACTIONS = 100;
/** 4 MB aggregate, with room for request overhead. */
export const TRANSACTION_MAX_BYTES = 4_000_000;

/** The condition of a marker put: it is written once (names `#pk`: pk). */
export const MARKER_ABSENT = { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': 'pk' } } as const;

export interface GuardedWrite {
  /** The marker's table. */
  readonly table: string;
  /** The marker item, put if absent; null for writes that need none (harmless to repeat). */
  readonly marker: Item | null;
  /** The lease's ConditionCheck (DynamoDbLease.conditionCheck), or null when not fenced. */
  readonly fence: TransactWriteItem | null;
  /** The writes the marker guards. */
  readonly items: readonly TransactWriteItem[];
}

export type GuardedOutcome =
  | { readonly kind: 'ok' }
  /** The marker is there: these writes committed before (an earlier or concurrent attempt). */
  | { readonly kind: 'marker-exists'; readonly stored: Item | undefined }
  /** The run no longer holds the lease; `holder` is the lease item as stored. */
  | { readonly kind: 'fenced'; readonly holder: Item | undefined }
  /** The conditions of these items (indexes into `items`) refused them; nothing was written. */
  | { readonly kind: 'items-refused'; readonly indices: readonly number[] };

/** Counters a caller keeps; `transactions` counts every HTTP attempt. */
export interface TransactionCounters {
  transactions: number;
  retries: number;
  consumedWriteUnits: number;
}

interface CancellationReason {
  readonly Code?: string;
  readonly Item?: Item;
}

const REFUSED = 'ConditionalCheckFailed';

/** Sends `write` (retried under `policy`) and says how it ended; `what` names it in errors. */
export function transactGuarded(
  client: DynamoDBClient,
  policy: RetryPolicy,
  what: string,
  write: GuardedWrite,
  counters?: TransactionCounters,
): Promise<GuardedOutcome> {
  const marker: TransactWriteItem[] = write.marker
    ? [{ Put: { TableName: write.table, Item: write.marker, ...MARKER_ABSENT, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }]
    : [];
  const actions = [...marker, ...(write.fence ? [write.fence] : []), ...write.items];
  const call = async (): Promise<GuardedOutcome> => {
    if (counters) counters.transactions++;
    let reasons: CancellationReason[];
    try {
      const res = await client.send(new TransactWriteItemsCommand({ TransactItems: actions, ReturnConsumedCapacity: 'TOTAL' }));
      if (counters) for (const c of res.ConsumedCapacity ?? []) counters.consumedWriteUnits += c.CapacityUnits ?? 0;
      return { kind: 'ok' };
    } catch (err) {
      if (errorName(err) !== 'TransactionCanceledException') throw err;
      reasons = (err as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
    }
    return readCancellation(what, write, reasons);
  };
  return sendDynamoDb(policy, what, call, () => counters && counters.retries++);
}

/** The outcome a cancellation's reasons describe; throws for a retriable or an unexpected one. */
function readCancellation(what: string, write: GuardedWrite, reasons: readonly CancellationReason[]): GuardedOutcome {
  const code = (i: number) => reasons[i]?.Code ?? 'None';
  const fenceAt = write.marker ? 1 : 0;
  const first = fenceAt + (write.fence ? 1 : 0);
  if (write.fence && code(fenceAt) === REFUSED) return { kind: 'fenced', holder: reasons[fenceAt]?.Item };
  if (write.marker && code(0) === REFUSED) return { kind: 'marker-exists', stored: reasons[0]?.Item };
  const indices = write.items.map((_, i) => i).filter((i) => code(first + i) === REFUSED);
  if (indices.length > 0) return { kind: 'items-refused', indices };
  const codes = reasons.map((r) => r.Code ?? 'None');
  if (codes.some((c) => RETRIABLE_CANCELLATION_REASONS.has(c))) {
    throw new RetryableResult(`was cancelled (${codes.join(', ')})`, { reasons: codes });
  }
  throw new SluiceError(
    `${what} was cancelled (${codes.join(', ')}): check the items (no two actions on one item, tables with pk S and sk S, at most ${TRANSACTION_MAX_ACTIONS} actions and 4 MB)`,
    { details: { reasons: codes } },
  );
}
