/**
 * The one retry loop of the AWS adapters.
 *
 * The SDK clients are built with `maxAttempts: 1` (lib/aws/clients.ts), so every attempt goes
 * through here and is counted: one layer decides what is retried, how long it waits, and when it
 * gives up. Nothing stacks a loop of its own on top of the SDK's.
 *
 *   attempt 1 ─✗ retriable ─▶ wait U(0, min(max, base)) ─▶ attempt 2 ─✗ ─▶ wait U(0, min(max, base·2)) ─▶ …
 *   attempt maxAttempts ─✗ ─▶ the last error is thrown (the caller turns it into a SluiceError)
 *   any attempt ─✗ not retriable ─▶ thrown at once
 *
 * Partial results (BatchWriteItem's UnprocessedItems, a TransactionConflict cancellation) go
 * through the same loop: the call throws a {@link RetryableResult} for them.
 */
import { InvalidOptionError } from '../../engine/errors';
import { sleep } from './concurrency';

/** How an adapter retries (one spelling for every adapter's options). */
export interface RetryOptions {
  /** Attempts of one request, the first included. @default 8 */
  readonly maxAttempts?: number;
  /** Cap of the first backoff (full jitter, doubling per attempt), ms. @default 25 */
  readonly baseDelayMs?: number;
  /** Largest backoff cap, ms. @default 3000 */
  readonly maxDelayMs?: number;
}

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Waits between attempts (tests inject a fake). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Uniform [0, 1) for the jitter (tests inject a fixed one). */
  readonly random: () => number;
}

const DEFAULT_RETRY = { maxAttempts: 8, baseDelayMs: 25, maxDelayMs: 3000 } as const;

/** The policy for `opts`, checked once at construction; `who` names the adapter in errors. */
export function retryPolicy(opts: RetryOptions = {}, who: string, io: { sleep?: (ms: number) => Promise<void>; random?: () => number } = {}): RetryPolicy {
  const p = {
    maxAttempts: opts.maxAttempts ?? DEFAULT_RETRY.maxAttempts,
    baseDelayMs: opts.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: opts.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs,
  };
  if (!Number.isSafeInteger(p.maxAttempts) || p.maxAttempts < 1 || p.maxAttempts > 100) {
    throw new InvalidOptionError(`${who} maxAttempts (${p.maxAttempts}) must be an integer from 1 to 100: leave it out for ${DEFAULT_RETRY.maxAttempts}`);
  }
  for (const k of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(p[k]) || p[k] < 0)
      throw new InvalidOptionError(`${who} ${k} (${p[k]}) must be a number of milliseconds >= 0: leave it out for ${DEFAULT_RETRY[k]}`);
  }
  if (p.maxDelayMs < p.baseDelayMs) {
    throw new InvalidOptionError(`${who} maxDelayMs (${p.maxDelayMs}) must be at least baseDelayMs (${p.baseDelayMs}): raise maxDelayMs or lower baseDelayMs`);
  }
  return { ...p, sleep: io.sleep ?? sleep, random: io.random ?? Math.random };
}

/** Full jitter: a uniform wait in [0, min(max, base · 2^(attempt − 1))) after failed attempt `attempt` (1-based). */
export function backoffMs(p: RetryPolicy, attempt: number): number {
  return p.random() * Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (attempt - 1));
}

/**
 * Thrown by a call whose request succeeded but left work to redo (unprocessed keys, a
 * transaction conflict): always retried; `value` is what the caller needs when attempts run out.
 */
export class RetryableResult<T = unknown> extends Error {
  constructor(
    message: string,
    readonly value: T,
  ) {
    super(message);
    this.name = 'RetryableResult';
  }
}

/** What the last attempt threw once a request gave up, with the number of attempts made. */
export interface RetryFailure {
  readonly error: unknown;
  readonly attempts: number;
  readonly retriable: boolean;
}

/**
 * Runs `call(attempt)` until it succeeds, throws an error `isRetriable` refuses, or `maxAttempts`
 * are spent; `onRetry` hears of every retry (counters, logs). The final error is passed to
 * `fail` (default: rethrown as is), which says how the caller reports it.
 */
export async function withRetry<T>(
  policy: RetryPolicy,
  isRetriable: (error: unknown) => boolean,
  call: (attempt: number) => Promise<T>,
  hooks: { onRetry?: (error: unknown, attempt: number) => void; fail?: (failure: RetryFailure) => Error } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(attempt);
    } catch (error) {
      const retriable = error instanceof RetryableResult || isRetriable(error);
      if (!retriable || attempt >= policy.maxAttempts) {
        if (hooks.fail) throw hooks.fail({ error, attempts: attempt, retriable });
        throw error;
      }
      hooks.onRetry?.(error, attempt);
      await policy.sleep(backoffMs(policy, attempt));
    }
  }
}
