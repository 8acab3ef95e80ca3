/**
 * Reading the errors of the AWS SDK clients (and of the network under them): one retriable-error
 * decision per service, and one way to turn a failed request into a SluiceError.
 */
import { SluiceError } from '../../engine/errors';

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

export type AwsService = 's3' | 'dynamodb' | 'kinesis' | 'sqs';

/** Socket-level failures: the request may not have reached the service; sending it again is safe for every call we make. */
const NETWORK = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'NetworkingError',
]);

/** Per service: error names that go away when the request is sent again (throttling, transient faults, races). */
const RETRIABLE: Record<AwsService, ReadonlySet<string>> = {
  s3: new Set([
    'SlowDown',
    'Throttling',
    'ThrottlingException',
    'RequestLimitExceeded',
    'TooManyRequestsException',
    'RequestThrottled',
    'ServiceUnavailable',
    'InternalError',
  ]),
  dynamodb: new Set([
    'ProvisionedThroughputExceededException',
    'ThrottlingException',
    'RequestLimitExceeded',
    'InternalServerError',
    'ServiceUnavailable',
    'LimitExceededException',
    'TransactionInProgressException',
    'TransactionConflictException',
  ]),
  kinesis: new Set([
    'ProvisionedThroughputExceededException',
    'LimitExceededException',
    'KMSThrottlingException',
    'ThrottlingException',
    'InternalFailure',
    'InternalFailureException',
    'ServiceUnavailable',
    'ServiceUnavailableException',
  ]),
  // SQS's JSON protocol names (and the query protocol's AWS.SimpleQueueService.* spelling of some).
  sqs: new Set([
    'RequestThrottled',
    'ThrottlingException',
    'KmsThrottled',
    'InternalError',
    'InternalFailure',
    'ServiceUnavailable',
    'AWS.SimpleQueueService.ServiceUnavailable',
    'AWS.SimpleQueueService.InternalError',
  ]),
};

/** Whether a request to `service` that failed with `e` may succeed when sent again. */
export function isRetriable(service: AwsService, e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  if (e instanceof SluiceError) return e.retriable;
  const status = httpStatus(e);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  const name = errorName(e);
  if (RETRIABLE[service].has(name) || NETWORK.has(name)) return true;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK.has(code)) return true;
  if (isWrappedNetworkError(e)) return true;
  return (e as { $retryable?: unknown }).$retryable !== undefined || (e as { $fault?: string }).$fault === 'server';
}

/**
 * The SDK wraps what it cannot recognise as an Error (an error of another realm, such as the
 * http module's under Jest's sandbox) as "AWS SDK error wrapper for <its text>": a socket failure
 * stays one.
 */
function isWrappedNetworkError(e: object): boolean {
  const message = (e as { message?: unknown }).message;
  if (typeof message !== 'string' || !message.startsWith(SDK_WRAPPER)) return false;
  const inner = message.slice(SDK_WRAPPER.length);
  return [...NETWORK].some((n) => inner.startsWith(n) || inner.includes(` ${n}`)) || inner.includes('socket hang up');
}

const SDK_WRAPPER = 'AWS SDK error wrapper for ';

/** For an error from anywhere (the Lambda handler's last word): retriable when any service's table says so. */
export function isTransientError(e: unknown): boolean {
  return isRetriable('dynamodb', e) || isRetriable('s3', e) || isRetriable('kinesis', e) || isRetriable('sqs', e);
}

/**
 * TransactWriteItems cancellation reasons that go away on a resend (a conflicting transaction,
 * throttling). `ConditionalCheckFailed` is an answer, never retried.
 */
export const RETRIABLE_CANCELLATION_REASONS: ReadonlySet<string> = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
  'InternalServerError',
]);

/**
 * A failed request as a SluiceError: what was attempted, the service's error, and the remedy
 * (for a retriable error, that the run can simply be run again). A SluiceError passes unchanged.
 */
export function toSluiceError(err: unknown, service: AwsService, what: string, remedy: string, attempts = 1): SluiceError {
  if (err instanceof SluiceError) return err;
  const name = errorName(err) || 'Error';
  const retriable = isRetriable(service, err);
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  const status = httpStatus(err);
  return new SluiceError(`${what} failed${tries} (${name}${status ? `, HTTP ${status}` : ''}: ${errorMessage(err) || String(err)}): ${remedy}`, {
    cause: err,
    retriable,
    details: { errorName: name, attempts },
  });
}
