/** The options and counters of DynamoDbSink (sink.ts). */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../engine/ports';
import type { RetryOptions } from '../request/retry';

export interface DynamoDbSinkOptions extends RetryOptions {
  readonly client: DynamoDBClient;
  /** A table with partition key `pk` (S) and sort key `sk` (S). TTL on `ttl` cleans up markers. */
  readonly tableName: string;
  /**
   * This query's namespace in the table (rows go under `<queryKey>#<shard>`). Must not contain `#`.
   * @default the checkpoint's query id (SinkContext.queryId): pipelines with their own checkpoints never share rows
   */
  readonly queryKey?: string;
  /**
   * The table holding the run's lease (the state table). With `leaseKey`, every transaction checks
   * that the run still holds the lease with its token (SinkContext.lease).
   * @default no fencing
   */
  readonly leaseTable?: string;
  /** The lease's key, as given to DynamoDbLease (the pipeline uses `<query>@<bucket>/<prefix>`). */
  readonly leaseKey?: string;
  /** Transactions in flight at once when not fenced (fenced chunks go one at a time). @default 4 */
  readonly maxConcurrency?: number;
  /** Partitions a query's rows are spread over. Part of the stored layout. @default 8 */
  readonly shards?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** How long chunk markers live (via the `ttl` attribute). Keep it above the longest outage after which a batch may replay. @default 2592000 (30 days) */
  readonly markerTtlSeconds?: number;
}

/** Counters since the sink was created (for tests and benchmarks, never for logic). */
export interface DynamoDbSinkStats {
  /** TransactWriteItems requests, retries included. */
  readonly transactions: number;
  /** BatchGetItem requests for markers, retries included. */
  readonly markerReads: number;
  /** Chunks committed by this sink. */
  readonly chunksWritten: number;
  /** Chunks found already written (marker present): a replay. */
  readonly chunksSkipped: number;
  /** Row puts committed. */
  readonly rowsWritten: number;
  /** Rows of sessions that a merge superseded, deleted (update and complete mode). */
  readonly rowsDeleted: number;
  /** Queries for a group's stored sessions (one per group with a session in the batch). */
  readonly sessionQueries: number;
  /** Rows not written because a newer batch had written the same key. */
  readonly rowsSkippedNewer: number;
  /** Requests repeated after throttling, a conflict, a 5xx or unprocessed keys. */
  readonly retries: number;
  /**
   * Write units of the committed transactions by AWS's rule for transactional writes: 2 per
   * item-KB (rounded up per item) for every row and marker, 2 per lease check.
   */
  readonly writeUnits: number;
  /**
   * Capacity units as DynamoDB reports them (ReturnConsumedCapacity TOTAL), all tables. DynamoDB
   * Local adds up only the DISTINCT per-item units of a transaction (99 rows of < 1 KB and their
   * marker report 2): it equals `writeUnits` when the items differ in size, and is lower when
   * they do not. Use `writeUnits` for estimates.
   */
  readonly consumedWriteUnits: number;
}
