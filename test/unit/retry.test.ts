/**
 * withRetry, the one retry loop of the adapters: what it retries, how long it waits, when it stops.
 */
import { backoffMs, retryPolicy, RetryableResult, withRetry } from '../../lib/aws/request/retry';
import { isRetriable, toSluiceError } from '../../lib/aws/request/errors';
import { InvalidOptionError, SluiceError } from '../../lib/engine/errors';

function recordingPolicy(opts: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number } = {}, random = () => 0.5) {
  const waits: number[] = [];
  const policy = retryPolicy(opts, 'Test', { sleep: async (ms) => void waits.push(ms), random });
  return { policy, waits };
}

const throttled = () => Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
const denied = () => Object.assign(new Error('no'), { name: 'AccessDeniedException', $metadata: { httpStatusCode: 403 } });

describe('withRetry', () => {
  it('retries a retriable error until the call succeeds, waiting a full-jitter backoff that doubles', async () => {
    const { policy, waits } = recordingPolicy({ baseDelayMs: 100, maxDelayMs: 250 });
    let calls = 0;
    const got = await withRetry(
      policy,
      (e) => isRetriable('dynamodb', e),
      async (attempt) => {
        calls++;
        if (attempt < 4) throw throttled();
        return 'done';
      },
    );
    expect([got, calls]).toEqual(['done', 4]);
    // random() = 0.5 of caps 100, 200, then 250 (the maximum)
    expect(waits).toEqual([50, 100, 125]);
  });

  it('throws a non-retriable error at once', async () => {
    const { policy, waits } = recordingPolicy();
    let calls = 0;
    await expect(
      withRetry(
        policy,
        (e) => isRetriable('dynamodb', e),
        async () => {
          calls++;
          throw denied();
        },
      ),
    ).rejects.toThrow('no');
    expect([calls, waits.length]).toEqual([1, 0]);
  });

  it('gives up after maxAttempts and hands the last error, the attempts and retriable to fail()', async () => {
    const { policy } = recordingPolicy({ maxAttempts: 3 });
    let calls = 0;
    const err = await withRetry(
      policy,
      (e) => isRetriable('s3', e),
      async () => {
        calls++;
        throw Object.assign(new Error('busy'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } });
      },
      { fail: ({ attempts, retriable }) => new SluiceError(`gave up after ${attempts}`, { retriable }) },
    ).catch((e: unknown) => e as SluiceError);
    expect(calls).toBe(3);
    expect(err.message).toBe('gave up after 3');
    expect(err.retriable).toBe(true);
  });

  it('always retries a RetryableResult (a partial answer) and tells onRetry of each retry', async () => {
    const { policy } = recordingPolicy();
    const retried: number[] = [];
    const got = await withRetry(
      policy,
      () => false,
      async (attempt) => {
        if (attempt < 3) throw new RetryableResult('2 keys unprocessed', { left: 2 });
        return attempt;
      },
      { onRetry: (_e, attempt) => retried.push(attempt) },
    );
    expect([got, retried]).toEqual([3, [1, 2]]);
  });
});

describe('retryPolicy', () => {
  it('refuses options out of range with the value, the rule and the default', () => {
    expect(() => retryPolicy({ maxAttempts: 0 }, 'DynamoDbSink')).toThrow(
      new InvalidOptionError('DynamoDbSink maxAttempts (0) must be an integer from 1 to 100: leave it out for 8'),
    );
    expect(() => retryPolicy({ baseDelayMs: -1 }, 'S3')).toThrow(InvalidOptionError);
    expect(() => retryPolicy({ baseDelayMs: 500, maxDelayMs: 100 }, 'S3')).toThrow(/maxDelayMs \(100\) must be at least baseDelayMs \(500\)/);
  });

  it('caps each wait at min(maxDelayMs, baseDelayMs * 2^(attempt - 1))', () => {
    const p = retryPolicy({ baseDelayMs: 10, maxDelayMs: 1000 }, 'T', { random: () => 0.999999 });
    expect([1, 2, 3, 8, 20].map((a) => Math.ceil(backoffMs(p, a)))).toEqual([10, 20, 40, 1000, 1000]);
  });
});

describe('toSluiceError', () => {
  it("says what failed, after how many attempts, the service's error and the remedy, and keeps the cause", () => {
    const cause = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    const e = toSluiceError(cause, 'dynamodb', 'DynamoDB BatchWriteItem on t', "raise the table's capacity; the batch replays safely", 8);
    expect(e.message).toBe(
      "DynamoDB BatchWriteItem on t failed after 8 attempts (ThrottlingException, HTTP 400: Rate exceeded): raise the table's capacity; the batch replays safely",
    );
    expect([e.retriable, e.cause]).toEqual([true, cause]);
  });
});

describe('isRetriable', () => {
  it("follows each service's table, HTTP 5xx and 429, and socket errors", () => {
    expect(isRetriable('dynamodb', throttled())).toBe(true);
    expect(isRetriable('dynamodb', denied())).toBe(false);
    expect(isRetriable('s3', Object.assign(new Error(), { name: 'SlowDown' }))).toBe(true);
    expect(isRetriable('kinesis', Object.assign(new Error(), { name: 'ProvisionedThroughputExceededException' }))).toBe(true);
    expect(isRetriable('kinesis', Object.assign(new Error(), { name: 'ExpiredIteratorException', $metadata: { httpStatusCode: 400 } }))).toBe(false);
    expect(isRetriable('s3', Object.assign(new Error(), { name: 'Error', $metadata: { httpStatusCode: 503 } }))).toBe(true);
    expect(isRetriable('s3', Object.assign(new Error(), { name: 'Error', $metadata: { httpStatusCode: 429 } }))).toBe(true);
    expect(isRetriable('dynamodb', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isRetriable('s3', null)).toBe(false);
  });
});

describe('isRetriable on errors the SDK wraps', () => {
  it('retries a socket failure the SDK could only wrap as text (an error of another realm), and nothing else wrapped', () => {
    const { isRetriable: retriable } = jest.requireActual('../../lib/aws/request/errors') as typeof import('../../lib/aws/request/errors');
    expect(retriable('dynamodb', new Error('AWS SDK error wrapper for TimeoutError: socket hang up'))).toBe(true);
    expect(retriable('s3', new Error('AWS SDK error wrapper for Error: read ECONNRESET'))).toBe(true);
    expect(retriable('dynamodb', new Error('AWS SDK error wrapper for ValidationException: bad key'))).toBe(false);
  });
});
