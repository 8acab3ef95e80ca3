/**
 * Sending DynamoDB requests, for every adapter in this folder.
 *
 * Every call goes through `withRetry` (lib/aws/request/retry.ts), the only backoff: the SDK
 * client makes one attempt, so one call of `call` is one HTTP request and the adapters count
 * their requests there. A request that fails for good becomes one SluiceError with a remedy.
 *
 * A failed condition is an answer, not a failure: `conditional` turns exactly
 * ConditionalCheckFailedException into `{ written: false, stored }`, where `stored` is the item
 * as it is (when the request asked for ReturnValuesOnConditionCheckFailure ALL_OLD); every other
 * error is thrown.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { errorName, isRetriable, toSluiceError } from '../request/errors';
import { RetryableResult, type RetryFailure, type RetryPolicy, withRetry } from '../request/retry';

export type Item = Record<string, AttributeValue>;

/** DynamoDB's limits. */
export const ITEM_MAX_BYTES = 400 * 1024;
export const SORT_KEY_MAX_BYTES = 1024;
export const BATCH_GET_MAX = 100;
export const BATCH_WRITE_MAX = 25;

const TABLE_REMEDY = 'create the table (pk S, sk S, TTL on `ttl`) with ensureStateTable or the AvailableNowPipeline construct';
const CAPACITY_REMEDY = "raise the table's capacity (or use on-demand); the batch replays safely";
const OTHER_REMEDY = "check the table's key schema (pk S, sk S) and the role's DynamoDB permissions";

/** Whether a DynamoDB request that failed with `e` may succeed when sent again. */
function isRetriableDynamoDb(e: unknown): boolean {
  return isRetriable('dynamodb', e);
}

function isConditionFailed(e: unknown): boolean {
  return errorName(e) === 'ConditionalCheckFailedException';
}

/**
 * The error for request `what` that gave up. A RetryableResult (work left after the last
 * attempt) says what was left; a failed condition passes unchanged, for `conditional`.
 */
function dynamoDbError(failure: RetryFailure, what: string): Error {
  const { error, attempts } = failure;
  if (error instanceof RetryableResult) {
    const details = typeof error.value === 'object' && error.value !== null ? (error.value as Record<string, unknown>) : {};
    return new SluiceError(`${what} ${error.message} after ${attempts} attempts: ${CAPACITY_REMEDY}`, { retriable: true, details: { ...details, attempts } });
  }
  if (isConditionFailed(error)) return error as Error;
  const remedy = errorName(error) === 'ResourceNotFoundException' ? TABLE_REMEDY : isRetriableDynamoDb(error) ? CAPACITY_REMEDY : OTHER_REMEDY;
  return toSluiceError(error, 'dynamodb', what, remedy, attempts);
}

/**
 * Runs `call` (one HTTP request per call) under `policy`; `onRetry` hears of every repeat. `what`
 * names the request in the error, e.g. "DynamoDB GetItem on table t".
 */
export function sendDynamoDb<T>(policy: RetryPolicy, what: string, call: (attempt: number) => Promise<T>, onRetry?: () => void): Promise<T> {
  return withRetry(policy, isRetriableDynamoDb, call, { onRetry, fail: (failure) => dynamoDbError(failure, what) });
}

/** A conditional write's answer: written, or refused by its condition with the item as stored. */
export type Conditional<T> = { readonly written: true; readonly output: T } | { readonly written: false; readonly stored: Item | undefined };

/** Awaits a conditional write; ConditionalCheckFailedException (only) becomes `{ written: false }`. */
export async function conditional<T>(request: Promise<T>): Promise<Conditional<T>> {
  try {
    return { written: true, output: await request };
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    return { written: false, stored: (err as { Item?: Item }).Item };
  }
}

/** DynamoDB's item size: attribute names plus values (numbers over-estimated by their text). */
export function itemSize(item: Item): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name, 'utf8') + attrSize(value);
  return size;
}

function attrSize(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S, 'utf8');
  if (v.N !== undefined) return v.N.length + 1;
  if (v.B !== undefined) return v.B.byteLength;
  if (v.L !== undefined) return 3 + v.L.reduce((s, x) => s + 1 + attrSize(x), 0);
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((s, [k, x]) => s + 1 + Buffer.byteLength(k, 'utf8') + attrSize(x), 0);
  return 1;
}

/** Checks the client option (InvalidOptionError otherwise). */
export function checkClient(client: unknown, who: string): void {
  if (!client || typeof (client as { send?: unknown }).send !== 'function') {
    throw new InvalidOptionError(`${who} needs \`client\`, a DynamoDBClient from @aws-sdk/client-dynamodb: create it once per Lambda container and pass it in`);
  }
}

/** Checks a table name option (InvalidOptionError otherwise). */
export function checkTableName(name: string, what: string): void {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{3,255}$/.test(name)) {
    throw new InvalidOptionError(
      `${what} ${JSON.stringify(name)} is not a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -): pass the name of a table with pk S and sk S`,
    );
  }
}
