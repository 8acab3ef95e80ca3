/**
 * Reading the errors of the AWS SDK clients (and of the network under them), for the adapters'
 * retry and error-message code.
 */

/** The error's AWS code (`Code`, as S3's XML errors carry it) or its name; '' when it has neither. */
export function errorName(e: unknown): string {
  const x = e as { name?: unknown; Code?: unknown } | null;
  if (x && typeof x.Code === 'string') return x.Code;
  return x && typeof x.name === 'string' ? x.name : '';
}

export function errorMessage(e: unknown): string {
  const m = (e as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : '';
}

export function httpStatus(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** DynamoDB errors that go away when the request is sent again (throttling, transient faults, transaction races). */
const DYNAMODB_RETRIABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'LimitExceededException',
  'TransactionInProgressException',
  'TransactionConflictException',
]);

/** Whether a DynamoDB request that failed with `e` may succeed when sent again. */
export function isRetriableDynamoDbError(e: unknown): boolean {
  if (!e) return false;
  if (DYNAMODB_RETRIABLE.has(errorName(e))) return true;
  const status = httpStatus(e);
  return (status !== undefined && status >= 500) || (e as { $fault?: string }).$fault === 'server';
}
