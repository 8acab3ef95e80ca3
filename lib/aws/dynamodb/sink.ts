/**
 * The DynamoDB table sink: each output row is an item keyed by the output's key columns, written
 * under the conditional-write batch-ID guard.
 *
 * The guard. Every row item carries the `batchId` (and `queryId`) that wrote it, and is put only
 * if `attribute_not_exists(batchId) OR queryId <> :queryId OR batchId <= :N`: a replay of N
 * rewrites identical content, and a row from an older batch never overwrites the same row written
 * by a newer one. The rows are written in chunks, one TransactWriteItems per chunk; each
 * transaction also puts the chunk's marker `sink#<query>#<N>#<chunk>` with attribute_not_exists,
 * so the marker commits atomically with exactly the effects it guards, and a ConditionCheck on
 * the run's lease token, so a run whose lease was taken over cannot write (fencing):
 *
 *     TransactWriteItems (one per chunk of at most 98 rows / 4 MB, all or nothing)
 *       Put        sink#orders#7#0 / <queryId>      attribute_not_exists(pk)        the marker
 *       Check      lease#<query> in the state table owner = :me AND token = :token  the fence
 *       Put        orders#3 / ["2026-10-01T12:00Z..",..]  guard: batchId <= 7       row 1
 *       ...                                                                        row 98
 *
 * What a crash looks like from here, and what the replay of batch 7 does:
 *
 *     run 1:  offsets/7 ─▶ chunk 0 ✔ ─▶ chunk 1 ✔ ─▶ ✗ crash (chunk 2 never sent, commits/7 absent)
 *     run 2:  offsets/7 (replay) ─▶ read the markers: chunks 0 and 1 exist → skipped
 *             ─▶ chunk 2 ✔ ─▶ state ─▶ commits/7
 *     a chunk whose marker appeared meanwhile (a concurrent attempt): its transaction is cancelled
 *     with ConditionalCheckFailed on the marker → "already written", success
 *     a row whose guard fails (a newer batch wrote it): the chunk is sent again without that row
 *     the lease check fails (another run took the lease): LeaseLostError, nothing of the chunk
 *
 * Output modes. Append and update upsert by key. Complete mode upserts every row of the result
 * table: the result table of a complete-mode query only grows (complete mode never evicts state,
 * so every key it ever emitted is emitted again in every later batch), hence nothing needs
 * deleting, except for session windows: when sessions merge or grow, the session window (part
 * of the row's key) changes, so in update and complete mode the rows of the sessions a batch's
 * sessions contain are deleted after its chunks (deleteSuperseded). Session rows are placed by
 * their grouping keys (sk `<grouping keys JSON>#<start>/<end>`) so that one Query per group in
 * the batch finds them. Stateless and dedup output has no key columns: its rows are keyed by (batchId, row
 * index), the index given after sorting the batch's rows by content; a streamed stateless batch
 * (addBatchChunks) is numbered in the order it comes, which its replay repeats.
 *
 * Chunks depend only on the SET of rows. A replay emits the same rows in another order (windows
 * evicted from memory vs read back from the store), so before chunking the rows are sorted by
 * their sort key (keyless rows by content, then numbered): chunk i holds the same rows on every
 * attempt. A streamed batch cannot be sorted without holding it; its chunks depend on the rows
 * and their order, which a replay of a stateless batch repeats (the source reads the same
 * offsets in the same order), and the digest check below catches one that does not. Each marker records the sha256 of its chunk's items (keys and values); a replay that
 * finds a marker whose digest is not that of the chunk it would write fails (non-retriable
 * SluiceError) instead of skipping rows it never wrote. `ctx.onPieceWritten(i)` is told after
 * each chunk this call commits (i = 0, 1, ... in commit order; skipped chunks are not told).
 *
 * Layout (table with partition key `pk` S and sort key `sk` S, like the state table; TTL on `ttl`
 * removes old markers):
 *
 *     rows      pk <queryKey>#<shard>        sk <row key: JSON of the key columns' values, or
 *                                               b<batchId 10>#<row index 8>; h:<sha256> if > 1 KB>
 *               attributes: the output columns (native DynamoDB types), batchId, queryId
 *     markers   pk sink#<queryKey>#<N>#<chunk>  sk <queryId>    rows, digest, writtenAtMs, ttl
 *
 * queryKey: the one in the URI (`dynamodb://table/queryKey`), else the checkpoint's query id, so
 * two pipelines of one query name with their own checkpoints never overwrite each other's rows.
 *
 * shard = fnv1a(sk) % shards spreads a query's rows over partitions (a single partition takes
 * about 1000 WCU/s); `readAll` queries the shards.
 *
 * Cost of a batch of N rows of at most 1 KB each (item size rounds up to 1 KB per item; a
 * transactional write costs 2 WCU per item-KB). With the lease fence a chunk holds C = 98 rows
 * (99 without), so T = ceil(N / C) chunks:
 *
 *     requests   1 BatchGetItem of the T markers (one per 100 chunks) + T TransactWriteItems
 *                (streamed: 1 BatchGetItem of the first source chunk's transactions' markers,
 *                more only while they find some, i.e. on a replay)
 *     writes     2 WCU per row-KB (2N for 1 KB rows) + 2 per marker (2T) + 2 per lease check (2T)
 *                (DynamoDB Local reports 2 units for a ConditionCheck on another table, and
 *                matches the rule for items of pairwise different sizes: the dynamodb-sink test)
 *     reads      T strongly consistent marker reads (T RCU)
 *
 *     sessions   + 1 Query per grouping key with a session in the batch (update/complete mode),
 *                + 2 WCU per deleted superseded session row (98 per fenced transaction)
 *
 *     e.g. N = 1000 rows of ≤ 1 KB: 1 + 11 requests, 2000 + 22 + 22 = 2044 WCU, 11 RCU
 *     (a plain non-transactional BatchWriteItem would take 40 requests and 1000 WCU: the guard
 *     costs about twice the write units, for atomic, replay-safe, fenced writes)
 *
 * A replay of a batch that was fully written costs the marker read (one request) and nothing
 * else. Chunks of a fenced batch go one at a time: every chunk's transaction checks the same lease
 * item, and DynamoDB rejects concurrent transactions on one item (TransactionConflict). Unfenced,
 * up to `maxConcurrency` chunks are in flight.
 *
 * A row no attempt could write (an item over 400 KB, a value DynamoDB cannot store) is refused by
 * `check`, which the executor calls before the batch's effects: it becomes a dead letter of kind
 * `unwritable` with the reason, and the other rows are written (addBatch itself still fails on one,
 * for a caller that skipped the check).
 *
 * Files. This one: the Sink port, its writes and reads. sink-items.ts: the row items, their keys,
 * the chunks and their digests, the attribute values. sink-options.ts: the options and counters.
 */
import { BatchGetItemCommand, type DynamoDBClient, QueryCommand, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { Clock, OutputColumnType, OutputRow, RefusedRow, Sink, SinkContext } from '../../engine/ports';
import { systemClock } from '../../engine/ports';
import { parseTimestamp } from '../../engine/timestamps';
import { compareStrings, fnv1a, mapLimit } from '../request/concurrency';
import { RetryableResult, type RetryPolicy, retryPolicy } from '../request/retry';
import { type DynamoDbLease, fencedError, fencingLease } from './lease';
import { forEachPartitionItem } from './query';
import { BATCH_GET_MAX, checkClient, checkTableName, type Item, ITEM_MAX_BYTES, itemSize, sendDynamoDb } from './requests';
import {
  canonicalJson,
  checkBatchId,
  checkColumns,
  checkQueryKey,
  type Chunk,
  Chunker,
  type DynamoDbSinkItem,
  fromItem,
  pad,
  positiveInt,
  type PreparedRow,
  range,
  RESERVED_ATTRIBUTES,
  reservedColumn,
  rowKey,
  type SessionOfRow,
  sessionOf,
  toTypedAttr,
  transactionalWriteUnits,
} from './sink-items';
import type { DynamoDbSinkOptions, DynamoDbSinkStats } from './sink-options';
import { transactGuarded, TRANSACTION_MAX_ACTIONS } from './transaction';

export class DynamoDbSink implements Sink {
  readonly description: string;
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly queryKeyOption?: string;
  private readonly lease: DynamoDbLease | null;
  private readonly maxConcurrency: number;
  private readonly shards: number;
  private readonly clock: Clock;
  private readonly retry: RetryPolicy;
  private readonly markerTtlSeconds: number;
  private lastQueryKey?: string;
  private counters = {
    transactions: 0,
    markerReads: 0,
    chunksWritten: 0,
    chunksSkipped: 0,
    rowsWritten: 0,
    rowsDeleted: 0,
    sessionQueries: 0,
    rowsSkippedNewer: 0,
    retries: 0,
    writeUnits: 0,
    consumedWriteUnits: 0,
  };

  constructor(opts: DynamoDbSinkOptions) {
    checkClient(opts.client, 'DynamoDbSink');
    checkTableName(opts.tableName, 'DynamoDbSink tableName');
    if (opts.queryKey !== undefined) checkQueryKey(opts.queryKey);
    this.maxConcurrency = positiveInt('maxConcurrency', opts.maxConcurrency, 4);
    this.shards = positiveInt('shards', opts.shards, 8);
    this.markerTtlSeconds = positiveInt('markerTtlSeconds', opts.markerTtlSeconds, 30 * 86_400);
    this.retry = retryPolicy(opts, 'DynamoDbSink');
    this.client = opts.client;
    this.tableName = opts.tableName;
    this.queryKeyOption = opts.queryKey;
    this.clock = opts.clock ?? systemClock;
    this.lease = fencingLease('DynamoDbSink', opts, this.clock);
    this.description = `dynamodb://${this.tableName}${opts.queryKey ? `/${opts.queryKey}` : ''}`;
  }

  /** How long a chunk's marker lives (markerTtlSeconds): the executor refuses older replays. */
  get retentionMs(): number {
    return this.markerTtlSeconds * 1000;
  }

  stats(): DynamoDbSinkStats {
    return { ...this.counters };
  }

  async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void> {
    checkBatchId(batchId);
    const queryKey = this.queryKeyFor(ctx);
    checkColumns(ctx.columns);
    const fence = this.lease && ctx.lease ? this.lease.conditionCheck(ctx.lease) : null;
    const prepared = this.prepare(queryKey, batchId, rows, ctx);
    const chunker = new Chunker(fence !== null);
    const chunks = prepared.map((r) => chunker.add(r)).filter((c): c is Chunk => c !== null);
    const last = chunker.finish();
    if (last) chunks.push(last);
    await this.writeChunks(queryKey, batchId, chunks, ctx, fence, { probing: true, pieces: 0 });
    // Append mode emits a session once, closed: nothing it wrote is ever superseded.
    if (ctx.outputMode !== 'append') await this.deleteSuperseded(queryKey, batchId, prepared, ctx, fence);
  }

  /**
   * The rows no attempt could write (Sink.check, called by the executor before the batch's
   * effects; they become dead letters with the reason, the rest is written): an item over
   * DynamoDB's 400 KB, a value DynamoDB cannot store (a non-finite number). The verdict depends on
   * the row alone (a keyless row's sort key has the same length at every position), so a replay
   * refuses the same rows. Costs a second build of each row's item, no request.
   */
  check(batchId: number, rows: readonly OutputRow[], ctx: SinkContext): RefusedRow[] {
    checkBatchId(batchId);
    const queryKey = this.queryKeyFor(ctx);
    checkColumns(ctx.columns);
    const refused: RefusedRow[] = [];
    for (let index = 0; index < rows.length; index++) {
      try {
        this.prepareRow(queryKey, batchId, rows[index], index, ctx);
      } catch (e) {
        if (!(e instanceof SluiceError) || e instanceof InvalidOptionError) throw e;
        refused.push({ index, reason: e.message });
      }
    }
    return refused;
  }

  /**
   * A stateless batch as the executor streams it (Sink.addBatchChunks): its keyless rows are
   * numbered by their position in the stream (a replay yields the same chunks, same rows, same
   * order) and written a transaction at a time as they come, so the sink holds one source chunk
   * and one transaction's rows, not the batch. Output with key columns (never streamed by the
   * executor) is collected and written by addBatch, which sorts it and keeps one row per key.
   *
   *     chunk 0 of the stream ─▶ transactions 0..k (markers probed) ─▶ chunk 1 ─▶ ... ─▶ the last,
   *     partly filled transaction
   *
   * The markers of each group of transactions a source chunk fills are read before they are sent
   * while a previous attempt left any: the first group without markers ends the probing (a batch's
   * first attempt reads once); a marker met later still cancels its transaction, and its digest
   * is checked as addBatch checks it.
   */
  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx: SinkContext): Promise<void> {
    if (ctx.keyColumns.length > 0) {
      const rows: OutputRow[] = [];
      for await (const chunk of chunks) for (const r of chunk) rows.push(r);
      return this.addBatch(batchId, rows, ctx);
    }
    checkBatchId(batchId);
    const queryKey = this.queryKeyFor(ctx);
    checkColumns(ctx.columns);
    const fence = this.lease && ctx.lease ? this.lease.conditionCheck(ctx.lease) : null;
    const chunker = new Chunker(fence !== null);
    const progress = { probing: true, pieces: 0 };
    let position = 0;
    for await (const rows of chunks) {
      const ready: Chunk[] = [];
      for (const row of rows) {
        const full = chunker.add(this.prepareRow(queryKey, batchId, row, position++, ctx));
        if (full) ready.push(full);
      }
      await this.writeChunks(queryKey, batchId, ready, ctx, fence, progress);
    }
    const last = chunker.finish();
    if (last) await this.writeChunks(queryKey, batchId, [last], ctx, fence, progress);
  }

  /**
   * Every row of the query, without bookkeeping, in key order (tests, the conformance comparison).
   * With the query's output column types (`outputColumnTypes(plan)`), each row is the output row
   * that was written: a DECIMAL with its scale ("12.30", which DynamoDB answers as 12.3), a BIGINT
   * beyond 2^53 as its digits; without, numbers as doubles (and integers beyond 2^53 as digits).
   */
  async readAll(queryKey?: string, types?: Readonly<Record<string, OutputColumnType>>): Promise<OutputRow[]> {
    return (await this.readItems(queryKey, types)).map((i) => i.row);
  }

  /** Every row of the query with the batch that wrote it, in key order; `types` as in readAll. */
  async readItems(queryKey?: string, types?: Readonly<Record<string, OutputColumnType>>): Promise<DynamoDbSinkItem[]> {
    const qk = queryKey ?? this.queryKeyOption ?? this.lastQueryKey;
    if (qk === undefined) {
      throw new InvalidOptionError(`DynamoDbSink.readAll on ${this.tableName}: which query? Pass readAll(queryKey) or construct the sink with \`queryKey\``);
    }
    checkQueryKey(qk);
    const parts = await mapLimit(range(this.shards), this.maxConcurrency, (s) => this.queryPartition(`${qk}#${s}`));
    const items = parts.flat().map((item) => fromItem(item, types));
    return items.sort((a, b) => compareStrings(a.key, b.key));
  }

  /** The chunk indexes (below `chunks`) of one batch whose marker exists, for tests and diagnostics. */
  async readMarkers(batchId: number, queryId: string, chunks: number, queryKey?: string): Promise<Set<number>> {
    const qk = queryKey ?? this.queryKeyOption ?? this.lastQueryKey;
    if (qk === undefined) throw new InvalidOptionError(`DynamoDbSink.readMarkers on ${this.tableName}: pass the queryKey`);
    return new Set((await this.existingMarkers(qk, batchId, queryId, 0, chunks)).keys());
  }

  /**
   * The sort key of a row of this query, and its partition, as stored (for readers of the table).
   * A session window's rows are placed by their grouping keys' part (`shardBy`), so that one
   * Query finds every stored session of a group.
   */
  itemKey(queryKey: string, sk: string, shardBy = sk): { pk: string; sk: string } {
    return { pk: `${queryKey}#${fnv1a(shardBy) % this.shards}`, sk };
  }

  // ------------------------------------------------------------------------------------------

  /**
   * The URI's queryKey, else the checkpoint's query id: two pipelines of one query name with
   * different checkpoints never share rows by accident.
   */
  private queryKeyFor(ctx: SinkContext): string {
    const qk = this.queryKeyOption ?? ctx.queryId;
    checkQueryKey(qk);
    this.lastQueryKey = qk;
    return qk;
  }

  /**
   * The batch's items, in an order that depends only on the SET of rows, never on the order the
   * operators emitted them (a replay emits the same rows in another order): keyed rows sorted by
   * their sort key; keyless rows sorted by their content first, then numbered.
   */
  private prepare(queryKey: string, batchId: number, rows: OutputRow[], ctx: SinkContext): PreparedRow[] {
    const keyed = ctx.keyColumns.length > 0;
    const ordered = keyed
      ? rows
      : rows
          .map((row) => ({ row, content: canonicalJson(row) }))
          .sort((a, b) => compareStrings(a.content, b.content))
          .map((r) => r.row);
    const out = ordered.map((row, i) => this.prepareRow(queryKey, batchId, row, i, ctx));
    if (!keyed) return out;
    // One key twice in a batch would be two actions on one item (DynamoDB refuses that): of rows
    // with one key, the one whose content sorts last wins, whatever order they came in.
    out.sort((a, b) => compareStrings(a.sk, b.sk) || compareStrings(a.content, b.content));
    return out.filter((r, i) => i === out.length - 1 || out[i + 1].sk !== r.sk);
  }

  /** One row's item: keyed by its key columns, or (keyless) by its position `i` in the batch's order. */
  private prepareRow(queryKey: string, batchId: number, row: OutputRow, i: number, ctx: SinkContext): PreparedRow {
    const keyed = ctx.keyColumns.length > 0;
    const session = keyed ? sessionOf(row, ctx.keyColumns) : undefined;
    const sk = session
      ? `${session.group}#${session.start}/${session.end}`
      : keyed
        ? rowKey(ctx.keyColumns.map((c) => (row[c] === undefined ? null : row[c])))
        : `b${pad(batchId, 10)}#${pad(i, 8)}`;
    const key = this.itemKey(queryKey, sk, session?.group);
    const item: Item = { pk: { S: key.pk }, sk: { S: key.sk }, batchId: { N: String(batchId) }, queryId: { S: ctx.queryId } };
    for (const [col, v] of Object.entries(row)) {
      if ((RESERVED_ATTRIBUTES as readonly string[]).includes(col)) throw reservedColumn(col);
      // by the column's type: a DECIMAL's text and a BIGINT's digits (FORMAT-3) as exact N strings
      item[col] = toTypedAttr(v, ctx.columnTypes?.[col], col);
    }
    const bytes = itemSize(item);
    if (bytes > ITEM_MAX_BYTES) {
      throw new SluiceError(
        `an output row of batch ${batchId} (key ${sk.slice(0, 120)}) is ${bytes} bytes as a DynamoDB item; DynamoDB items hold at most ${ITEM_MAX_BYTES} bytes: write fewer or shorter columns to this sink, or use the S3 file sink`,
        { details: { batchId, key: sk.slice(0, 200), sizeBytes: bytes } },
      );
    }
    return { sk, item, bytes, content: canonicalJson(item), ...(session ? { session } : {}) };
  }

  /**
   * Writes `chunks` (consecutive, in index order): skips those a previous attempt committed (one
   * read of their markers while `progress.probing`; a read that finds none ends it), then writes
   * the others, telling onPieceWritten after each. The marker's own condition still decides,
   * should one appear meanwhile; a committed chunk is skipped only if it holds exactly what this
   * attempt would write.
   */
  private async writeChunks(
    queryKey: string,
    batchId: number,
    chunks: Chunk[],
    ctx: SinkContext,
    fence: TransactWriteItem | null,
    progress: { probing: boolean; pieces: number },
  ): Promise<void> {
    if (chunks.length === 0) return;
    let done = new Map<number, string | undefined>();
    if (progress.probing) {
      done = await this.existingMarkers(queryKey, batchId, ctx.queryId, chunks[0].index, chunks[chunks.length - 1].index + 1);
      if (done.size === 0) progress.probing = false;
    }
    for (const c of chunks) if (done.has(c.index)) this.checkDigest(queryKey, batchId, c, done.get(c.index));
    const todo = chunks.filter((c) => !done.has(c.index));
    this.counters.chunksSkipped += chunks.length - todo.length;
    await mapLimit(todo, fence ? 1 : this.maxConcurrency, async (c) => {
      if (await this.writeChunk(queryKey, batchId, c, ctx, fence)) ctx.onPieceWritten?.(progress.pieces++);
    });
  }

  /** Fails unless the stored marker of `chunk` records the digest of the chunk this attempt would write. */
  private checkDigest(queryKey: string, batchId: number, chunk: Chunk, stored: string | undefined): void {
    if (stored === chunk.digest) return;
    throw new SluiceError(
      `chunk ${chunk.index} of batch ${batchId} of query ${queryKey} in ${this.tableName} holds rows (digest ${stored?.slice(0, 12) ?? 'none'}) that differ from this replay's (${chunk.digest.slice(0, 12)}): a replay must emit the same rows; make the query deterministic and restore it and its input as they were when batch ${batchId} first ran`,
      { retriable: false, details: { queryKey, batchId, chunk: chunk.index, storedDigest: stored ?? null, replayDigest: chunk.digest } },
    );
  }

  private markerKey(queryKey: string, batchId: number, queryId: string, chunk: number): Item {
    return { pk: { S: `sink#${queryKey}#${batchId}#${chunk}` }, sk: { S: queryId } };
  }

  /** The markers that exist of the batch's chunks `first` to `end` - 1: chunk index → the digest it records. */
  private async existingMarkers(queryKey: string, batchId: number, queryId: string, first: number, end: number): Promise<Map<number, string | undefined>> {
    const found = new Map<number, string | undefined>();
    for (let from = first; from < end; from += BATCH_GET_MAX) {
      let keys: Item[] = range(Math.min(BATCH_GET_MAX, end - from)).map((i) => this.markerKey(queryKey, batchId, queryId, from + i));
      // Unprocessed keys (throttling) are asked for again, with backoff.
      await this.send(`DynamoDB BatchGetItem of sink markers on ${this.tableName}`, async () => {
        this.counters.markerReads++;
        const res = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [this.tableName]: {
                Keys: keys,
                ConsistentRead: true,
                ProjectionExpression: '#pk, #d',
                ExpressionAttributeNames: { '#pk': 'pk', '#d': 'digest' },
              },
            },
          }),
        );
        for (const it of res.Responses?.[this.tableName] ?? []) found.set(Number(it.pk.S!.slice(it.pk.S!.lastIndexOf('#') + 1)), it.digest?.S);
        keys = res.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
        if (keys.length > 0) throw new RetryableResult(`left ${keys.length} keys unprocessed`, { table: this.tableName });
      });
    }
    return found;
  }

  /** Writes one chunk; true if this call committed it, false if it had been committed before. */
  private async writeChunk(queryKey: string, batchId: number, chunk: Chunk, ctx: SinkContext, fence: TransactWriteItem | null): Promise<boolean> {
    const now = this.clock.now();
    const what = `DynamoDB TransactWriteItems of chunk ${chunk.index} of batch ${batchId} on ${this.tableName}`;
    let rows = chunk.rows;
    for (;;) {
      const marker = this.markerItem(queryKey, batchId, ctx.queryId, chunk, rows.length, now);
      const items = rows.map((r) => this.guardedPut(r.item, batchId, ctx.queryId));
      const outcome = await transactGuarded(this.client, this.retry, what, { table: this.tableName, marker, fence, items }, this.counters);
      switch (outcome.kind) {
        case 'ok':
          this.counters.chunksWritten++;
          this.counters.rowsWritten += rows.length;
          this.counters.writeUnits += transactionalWriteUnits(marker) + (fence ? 2 : 0) + rows.reduce((s, r) => s + transactionalWriteUnits(r.item), 0);
          return true;
        case 'marker-exists':
          // This chunk committed before (a concurrent or earlier attempt), with these rows or not.
          this.checkDigest(queryKey, batchId, chunk, outcome.stored?.digest?.S);
          this.counters.chunksSkipped++;
          return false;
        case 'fenced':
          throw fencedError(ctx.lease!, `the sink write of chunk ${chunk.index} of batch ${batchId} to ${this.tableName}`, outcome.holder);
        case 'items-refused': {
          // A newer batch wrote these keys: not an error, they stay as they are. Send the rest.
          const newer = new Set(outcome.indices);
          this.counters.rowsSkippedNewer += newer.size;
          rows = rows.filter((_, i) => !newer.has(i));
        }
      }
    }
  }

  private markerItem(queryKey: string, batchId: number, queryId: string, chunk: Chunk, rows: number, now: number): Item {
    return {
      ...this.markerKey(queryKey, batchId, queryId, chunk.index),
      rows: { N: String(rows) },
      digest: { S: chunk.digest },
      writtenAtMs: { N: String(now) },
      ttl: { N: String(Math.floor(now / 1000) + this.markerTtlSeconds) },
    };
  }

  private guardedPut(item: Item, batchId: number, queryId: string): TransactWriteItem {
    return {
      Put: {
        TableName: this.tableName,
        Item: item,
        // A row from an older batch of this query never overwrites one from a newer batch.
        ConditionExpression: 'attribute_not_exists(#b) OR #q <> :q OR #b <= :n',
        ExpressionAttributeNames: { '#b': 'batchId', '#q': 'queryId' },
        ExpressionAttributeValues: { ':n': { N: String(batchId) }, ':q': { S: queryId } },
        ReturnValuesOnConditionCheckFailure: 'NONE',
      },
    };
  }

  /**
   * Deletes the stored rows of sessions that this batch's sessions superseded: when sessions
   * merge (or one grows), its row's key (the session window) changes, and the row under the old
   * window must go. Per group with a session in the batch, one Query of its stored sessions; a
   * stored session of this query, from an older batch, inside a session this batch wrote, is
   * superseded. The deletes go after the batch's chunks, fenced, without markers: a replay
   * repeats them harmlessly (each is conditional on an older batch of this query having written
   * the row).
   *
   *     batch 0:  a [10 s, 20 s)   a [30 s, 40 s)          (two rows)
   *     batch 1:  a [10 s, 40 s)   (the merge: put)  ─▶  delete a [10 s, 20 s), a [30 s, 40 s)
   */
  private async deleteSuperseded(
    queryKey: string,
    batchId: number,
    rows: readonly PreparedRow[],
    ctx: SinkContext,
    fence: TransactWriteItem | null,
  ): Promise<void> {
    const byGroup = new Map<string, SessionOfRow[]>();
    const written = new Set<string>();
    for (const r of rows) {
      if (!r.session) continue;
      written.add(r.sk);
      byGroup.set(r.session.group, [...(byGroup.get(r.session.group) ?? []), r.session]);
    }
    if (byGroup.size === 0) return;
    const doomed: Item[] = [];
    await mapLimit([...byGroup], this.maxConcurrency, async ([group, sessions]) => {
      for (const it of await this.queryGroup(queryKey, group)) {
        const sk = it.sk?.S ?? '';
        if (written.has(sk) || it.queryId?.S !== ctx.queryId || !(Number(it.batchId?.N) < batchId)) continue;
        const [start, end] = sk.slice(group.length + 1).split('/');
        // (as instants: a bound with 6 fraction digits and one with 3 do not order as text)
        const [at, until] = [parseTimestamp(start), parseTimestamp(end)];
        if (at === null || until === null) continue;
        if (sessions.some((s) => (parseTimestamp(s.start) ?? Infinity) <= at && until <= (parseTimestamp(s.end) ?? -Infinity))) doomed.push(it);
      }
    });
    doomed.sort((a, b) => compareStrings(a.sk.S!, b.sk.S!));
    const perTransaction = TRANSACTION_MAX_ACTIONS - (fence ? 1 : 0);
    for (let from = 0; from < doomed.length; from += perTransaction) {
      let part = doomed.slice(from, from + perTransaction);
      const what = `DynamoDB TransactWriteItems deleting superseded sessions of batch ${batchId} on ${this.tableName}`;
      while (part.length > 0) {
        const items = part.map((it) => this.guardedDelete(it, batchId, ctx.queryId));
        const outcome = await transactGuarded(this.client, this.retry, what, { table: this.tableName, marker: null, fence, items }, this.counters);
        if (outcome.kind === 'fenced')
          throw fencedError(ctx.lease!, `the deletes of superseded sessions of batch ${batchId} in ${this.tableName}`, outcome.holder);
        if (outcome.kind === 'items-refused') {
          // Deleted meanwhile, or rewritten by a newer batch: leave those, delete the rest.
          const refused = new Set(outcome.indices);
          part = part.filter((_, i) => !refused.has(i));
          continue;
        }
        this.counters.rowsDeleted += part.length;
        this.counters.writeUnits += (fence ? 2 : 0) + part.reduce((n, it) => n + transactionalWriteUnits(it), 0);
        break;
      }
    }
  }

  /** Every stored session of one group of this query (its partition, sort keys `<group>#...`). */
  private async queryGroup(queryKey: string, group: string): Promise<Item[]> {
    const { pk } = this.itemKey(queryKey, group, group);
    const items: Item[] = [];
    let start: Item | undefined;
    do {
      const exclusiveStart = start;
      const res = await this.send(`DynamoDB Query of stored sessions on ${this.tableName}`, () => {
        this.counters.sessionQueries++;
        return this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :group)',
            ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
            ExpressionAttributeValues: { ':pk': { S: pk }, ':group': { S: `${group}#` } },
            ConsistentRead: true,
            ExclusiveStartKey: exclusiveStart,
          }),
        );
      });
      items.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start);
    return items;
  }

  private guardedDelete(stored: Item, batchId: number, queryId: string): TransactWriteItem {
    return {
      Delete: {
        TableName: this.tableName,
        Key: { pk: stored.pk, sk: stored.sk },
        // Only a row an older batch of this query wrote: never one a newer batch rewrote.
        ConditionExpression: '#q = :q AND #b < :n',
        ExpressionAttributeNames: { '#b': 'batchId', '#q': 'queryId' },
        ExpressionAttributeValues: { ':n': { N: String(batchId) }, ':q': { S: queryId } },
      },
    };
  }

  private async queryPartition(pk: string): Promise<Item[]> {
    const items: Item[] = [];
    await forEachPartitionItem(
      this.client,
      this.tableName,
      pk,
      (request) => this.send(`DynamoDB Query on ${this.tableName}`, request),
      (it) => items.push(it),
    );
    return items;
  }

  private send<T>(what: string, call: () => Promise<T>): Promise<T> {
    return sendDynamoDb(this.retry, what, call, () => this.counters.retries++);
  }
}
