/**
 * The Kinesis source's options: their types and defaults, checked once when the source is built
 * (before any request), and the mapping from a query's `readStream....option(...)` values.
 */
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { InvalidOptionError } from '../../engine/errors';
import type { CheckpointStore, Clock } from '../../engine/ports';
import { systemClock } from '../../engine/ports';
import type { Schema } from '../../engine/schema';
import { sleep as realSleep } from '../request/concurrency';
import { retryPolicy, type RetryOptions, type RetryPolicy } from '../request/retry';

/** Where a query without a checkpoint starts reading. */
type StartingPosition = 'TRIM_HORIZON' | 'LATEST' | { readonly atTimestamp: number };

/** The part of a KinesisClient the source uses (tests wrap it to inject failures). */
export type KinesisSender = Pick<KinesisClient, 'send'>;

/**
 * Retries (RetryOptions): a throttled (ProvisionedThroughputExceeded, LimitExceeded, KMSThrottling)
 * or failed (5xx, network) request is sent again up to `maxAttempts` times in all
 * (@default 9), with full-jitter backoff from `baseDelayMs` (@default 100) up to `maxDelayMs`
 * (@default 5000).
 */
export interface KinesisSourceOptions extends RetryOptions {
  readonly client: KinesisSender;
  readonly streamName: string;
  readonly schema: Schema;
  /** The query's checkpoint: needed for LATEST (the first run's position is logged there). */
  readonly checkpoint?: CheckpointStore;
  /** The source's position in the query. @default 0 */
  readonly sourceIndex?: number;
  /** Used only when there is no checkpointed position. @default 'TRIM_HORIZON' */
  readonly startingPosition?: StartingPosition;
  /** Throw DataLossError when records expired before they were read. @default true */
  readonly failOnDataLoss?: boolean;
  /** When set, each row gets the record's ApproximateArrivalTimestamp in this column: a TIMESTAMP (epoch µs) unless the schema declares it LONG (epoch ms). @default none */
  readonly arrivalTimeColumn?: string;
  /** GetRecords Limit (Kinesis allows 1 to 10,000). @default 10000 */
  readonly maxRecordsPerCall?: number;
  /**
   * Record bytes held in memory at once: a batch takes at most this much (larger backlogs become
   * several batches) and shards are read ahead only while the buffers hold less. @default 64 MiB
   */
  readonly maxBufferedBytes?: number;
  /** Minimum time between two GetRecords on one shard (Kinesis: 5 per second). @default 200 */
  readonly minGetRecordsIntervalMs?: number;
  /** Read throughput per shard (Kinesis: 2 MB/s, shared by the stream's shared-throughput consumers). @default 2 MiB */
  readonly maxReadBytesPerSecondPerShard?: number;
  /** Allowance for clock skew between this host and Kinesis in the data-loss check. @default 60000 */
  readonly clockSkewMarginMs?: number;
  /** The wall clock: it bounds the run's target (ApproximateArrivalTimestamp <= now). @default systemClock */
  readonly clock?: Clock;
  /** Waits for backoff and pacing (tests inject a fake). @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Data-loss events, throttling give-ups and other notable events. */
  readonly log?: (event: Record<string, unknown>) => void;
}

/** Kinesis's own limit on GetRecords' Limit. */
export const MAX_RECORDS_PER_CALL = 10_000;

/** The options with every default filled in, checked. */
export interface KinesisSettings {
  readonly client: KinesisSender;
  readonly stream: string;
  readonly schema: Schema;
  readonly arrivalColumn: string | null;
  readonly checkpoint: CheckpointStore | null;
  readonly sourceIndex: number;
  readonly startingPosition: StartingPosition;
  readonly failOnDataLoss: boolean;
  readonly recordsPerCall: number;
  readonly maxBufferedBytes: number;
  readonly minGetRecordsIntervalMs: number;
  readonly readBytesPerSecond: number;
  readonly clockSkewMarginMs: number;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly log: (event: Record<string, unknown>) => void;
}

const DEFAULTS = {
  maxRecordsPerCall: MAX_RECORDS_PER_CALL,
  maxBufferedBytes: 64 * 1024 * 1024,
  minGetRecordsIntervalMs: 200,
  maxReadBytesPerSecondPerShard: 2 * 1024 * 1024,
  clockSkewMarginMs: 60_000,
  maxAttempts: 9,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
} as const;

const STREAM_NAME = /^[a-zA-Z0-9_.-]{1,128}$/;
const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks `opts` and fills in the defaults; throws InvalidOptionError at the first mistake. */
export function kinesisSettings(opts: KinesisSourceOptions): KinesisSettings {
  if (!opts?.client || typeof (opts.client as { send?: unknown }).send !== 'function') {
    throw new InvalidOptionError(
      'KinesisSource needs `client`, a KinesisClient from @aws-sdk/client-kinesis: create it once per Lambda container and pass it in',
    );
  }
  if (typeof opts.streamName !== 'string' || !STREAM_NAME.test(opts.streamName)) {
    throw new InvalidOptionError(
      `KinesisSource streamName ${JSON.stringify(opts.streamName)} is not a Kinesis stream name: 1 to 128 characters of a-z, A-Z, 0-9, "_", "." and "-" (pass the name, not the ARN)`,
    );
  }
  if (!opts.schema || !Array.isArray(opts.schema.columns)) {
    throw new InvalidOptionError('KinesisSource needs `schema`: parse the declared columns with parseSchema("user STRING, event_time TIMESTAMP, ...")');
  }
  const arrivalColumn = checkArrivalColumn(opts.arrivalTimeColumn, opts.schema);
  const sourceIndex = opts.sourceIndex ?? 0;
  if (!Number.isInteger(sourceIndex) || sourceIndex < 0) {
    throw new InvalidOptionError(
      `KinesisSource sourceIndex ${opts.sourceIndex} must be a non-negative integer: pass the source's position in the query, or leave it out for 0`,
    );
  }
  const startingPosition = checkStartingPosition(opts.startingPosition ?? 'TRIM_HORIZON');
  const checkpoint = opts.checkpoint ?? null;
  if (startingPosition === 'LATEST' && !checkpoint) {
    throw new InvalidOptionError(
      "KinesisSource startingPosition LATEST needs `checkpoint`, where the first run logs its starting position: pass the query's CheckpointStore, or start at TRIM_HORIZON or { atTimestamp }",
    );
  }
  const sleep = opts.sleep ?? realSleep;
  const retryOptions = {
    maxAttempts: intOption(opts.maxAttempts, DEFAULTS.maxAttempts, 1, 100, 'maxAttempts', 'the attempts of one request, the first included'),
    baseDelayMs: nonNegativeOption(opts.baseDelayMs, DEFAULTS.baseDelayMs, 'baseDelayMs'),
    maxDelayMs: nonNegativeOption(opts.maxDelayMs, DEFAULTS.maxDelayMs, 'maxDelayMs'),
  };
  return {
    client: opts.client,
    stream: opts.streamName,
    schema: opts.schema,
    arrivalColumn,
    checkpoint,
    sourceIndex,
    startingPosition,
    failOnDataLoss: opts.failOnDataLoss ?? true,
    recordsPerCall: intOption(
      opts.maxRecordsPerCall,
      DEFAULTS.maxRecordsPerCall,
      1,
      MAX_RECORDS_PER_CALL,
      'maxRecordsPerCall',
      'Kinesis GetRecords takes 1 to 10000 records',
    ),
    maxBufferedBytes: positiveOption(opts.maxBufferedBytes, DEFAULTS.maxBufferedBytes, 'maxBufferedBytes'),
    minGetRecordsIntervalMs: nonNegativeOption(opts.minGetRecordsIntervalMs, DEFAULTS.minGetRecordsIntervalMs, 'minGetRecordsIntervalMs'),
    readBytesPerSecond: positiveOption(opts.maxReadBytesPerSecondPerShard, DEFAULTS.maxReadBytesPerSecondPerShard, 'maxReadBytesPerSecondPerShard'),
    clockSkewMarginMs: nonNegativeOption(opts.clockSkewMarginMs, DEFAULTS.clockSkewMarginMs, 'clockSkewMarginMs'),
    retry: retryPolicy(retryOptions, 'KinesisSource', { sleep }),
    clock: opts.clock ?? systemClock,
    sleep,
    log: opts.log ?? (() => undefined),
  };
}

/** A batch limit (maxRecordsPerTrigger, maxBytesPerTrigger): a positive number, or Infinity when left out. */
export function batchLimit(value: number | undefined, name: string): number {
  if (value === undefined) return Infinity;
  if (typeof value !== 'number' || !(value > 0))
    throw new InvalidOptionError(`${name} ${value} must be a positive number: raise it, or leave it out for no limit`);
  return value;
}

/**
 * The Kinesis source options a query's `readStream....option(...)` may carry, as
 * KinesisSourceOptions (for the pipeline wiring): `startingPosition` (or Databricks'
 * `initialPosition`): "trim_horizon" / "earliest", "latest", or a timestamp (epoch ms or ISO
 * text); `failOnDataLoss`; `arrivalTimeColumn`; `maxRecordsPerFetch` (GetRecords Limit).
 */
export function kinesisOptionsFromSpec(options: Readonly<Record<string, string | number | boolean>>): Partial<KinesisSourceOptions> {
  const out: { -readonly [K in keyof KinesisSourceOptions]?: KinesisSourceOptions[K] } = {};
  const position = options.startingPosition ?? options.initialPosition;
  if (position !== undefined) {
    const text = String(position).trim();
    const lower = text.toLowerCase();
    if (lower === 'trim_horizon' || lower === 'earliest') out.startingPosition = 'TRIM_HORIZON';
    else if (lower === 'latest') out.startingPosition = 'LATEST';
    else {
      const ms = typeof position === 'number' ? position : /^\d+$/.test(text) ? Number(text) : Date.parse(text);
      if (!Number.isFinite(ms)) {
        throw new InvalidOptionError(
          `Kinesis option startingPosition ${JSON.stringify(position)} is not trim_horizon, latest or a timestamp: use one of those (a timestamp as epoch ms or ISO 8601)`,
        );
      }
      out.startingPosition = { atTimestamp: ms };
    }
  }
  if (options.failOnDataLoss !== undefined) {
    const value = options.failOnDataLoss;
    if (value === true || value === 'true') out.failOnDataLoss = true;
    else if (value === false || value === 'false') out.failOnDataLoss = false;
    else throw new InvalidOptionError(`Kinesis option failOnDataLoss ${JSON.stringify(value)} is not a boolean: set it to true or false`);
  }
  if (options.arrivalTimeColumn !== undefined) out.arrivalTimeColumn = String(options.arrivalTimeColumn);
  if (options.maxRecordsPerFetch !== undefined) out.maxRecordsPerCall = Number(options.maxRecordsPerFetch);
  return out;
}

function checkArrivalColumn(column: string | undefined, schema: Schema): string | null {
  if (column === undefined || column === null) return null;
  if (typeof column !== 'string' || !COLUMN_NAME.test(column)) {
    throw new InvalidOptionError(
      `KinesisSource arrivalTimeColumn ${JSON.stringify(column)} is not a column name: use letters, digits and "_", e.g. "arrival_time"`,
    );
  }
  const declared = schema.columns.find((c) => c.name === column);
  if (declared && declared.type !== 'TIMESTAMP' && declared.type !== 'LONG') {
    throw new InvalidOptionError(
      `KinesisSource arrivalTimeColumn ${column} is declared ${declared.type} in the schema: the arrival time is an instant, declare it TIMESTAMP (epoch µs within a query) or LONG (epoch ms), or leave it out of the schema`,
    );
  }
  return column;
}

function checkStartingPosition(position: StartingPosition): StartingPosition {
  if (position === 'TRIM_HORIZON' || position === 'LATEST') return position;
  if (
    position &&
    typeof position === 'object' &&
    typeof position.atTimestamp === 'number' &&
    Number.isFinite(position.atTimestamp) &&
    position.atTimestamp >= 0
  )
    return position;
  throw new InvalidOptionError(
    `KinesisSource startingPosition ${JSON.stringify(position)} is not 'TRIM_HORIZON', 'LATEST' or { atTimestamp: <epoch ms> }: pick one (it applies only when the checkpoint has no position yet)`,
  );
}

function intOption(value: number | undefined, fallback: number, min: number, max: number, name: string, rule: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(`KinesisSource ${name} ${value} must be an integer from ${min} to ${max} (${rule}): leave it out for the default ${fallback}`);
  }
  return value;
}

function positiveOption(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0))
    throw new InvalidOptionError(`KinesisSource ${name} ${value} must be a positive number: leave it out for the default ${fallback}`);
  return value;
}

function nonNegativeOption(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
    throw new InvalidOptionError(`KinesisSource ${name} ${value} must be a number >= 0: leave it out for the default ${fallback}`);
  }
  return value;
}
