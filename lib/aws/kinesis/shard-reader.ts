/**
 * Reading shards: listing them, positioning iterators, paging GetRecords into a per-shard cursor,
 * pacing to the service limits, and every request's retries.
 *
 * Service limits: GetRecords is paced per shard (5 calls/s, 2 MB/s: the next call on a shard
 * waits until both allow it) and asks for at most 10,000 records. Throttling
 * (ProvisionedThroughputExceeded, LimitExceeded, KMSThrottling) and 5xx are retried by
 * `withRetry` (lib/aws/request/retry.ts), bounded, never taken for the end of the data; an
 * expired iterator is renewed AFTER_SEQUENCE_NUMBER the last record read.
 *
 *     open(cursor)       GetShardIterator AT_SEQUENCE_NUMBER `after` + GetRecords: the first
 *                        record must be `after` (else the trim horizon decides, data-loss.ts);
 *                        no `after`: TRIM_HORIZON, or AT_TIMESTAMP `fromMs`
 *     fetch(cursor)      GetRecords on the cursor's iterator, one page into its buffer, up to the
 *                        target time (plan) or the end sequence number (replay)
 */
import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  type GetRecordsCommandOutput,
  type GetShardIteratorCommandInput,
  type ListShardsCommandOutput,
  type _Record as SdkRecord,
} from '@aws-sdk/client-kinesis';
import { SluiceError } from '../../engine/errors';
import type { Clock } from '../../engine/ports';
import { errorMessage, errorName, httpStatus, isRetriable } from '../request/errors';
import { withRetry, type RetryFailure, type RetryPolicy } from '../request/retry';
import { isMissingSequence, type DataLossChecks } from './data-loss';
import { compareSeq, type KinesisShardOffset } from './offsets';
import { MAX_RECORDS_PER_CALL, type KinesisSender } from './options';

export interface KinesisSourceStats {
  /** HTTP requests sent (each attempt counts). */
  requests: number;
  listShards: number;
  getShardIterator: number;
  getRecords: number;
  describeStreamSummary: number;
  /** Retries of throttled or failed requests. */
  throttleRetries: number;
  /** Expired iterators renewed. */
  iteratorRenewals: number;
  /** Positions found lost (data-loss.ts); with failOnDataLoss each one threw. */
  dataLossEvents: number;
  /** Records and Data bytes fetched from Kinesis (replays included). */
  recordsFetched: number;
  bytesFetched: number;
  /** GetRecords pages with no records. */
  emptyPages: number;
  /** Time spent waiting to stay under the per-shard read limits. */
  pacedMs: number;
}

export function newStats(): KinesisSourceStats {
  return {
    requests: 0,
    listShards: 0,
    getShardIterator: 0,
    getRecords: 0,
    describeStreamSummary: 0,
    throttleRetries: 0,
    iteratorRenewals: 0,
    dataLossEvents: 0,
    recordsFetched: 0,
    bytesFetched: 0,
    emptyPages: 0,
    pacedMs: 0,
  };
}

type RequestKind = 'listShards' | 'getShardIterator' | 'getRecords' | 'describeStreamSummary';

export interface KinesisRecord {
  readonly seq: string;
  readonly data: Uint8Array;
  readonly arrivalMs: number;
}

export interface ListedShard {
  readonly id: string;
  readonly parents: readonly string[];
}

/** One shard being read: its iterator and the records fetched but not yet taken. */
export interface ShardCursor {
  readonly shardId: string;
  /** The position this cursor started from. */
  readonly from: KinesisShardOffset | undefined;
  readonly fromMs: number | undefined;
  /** Plan mode: stop at the first record that arrived after this. */
  readonly untilMs?: number;
  /** Replay mode: stop after this sequence number. */
  readonly stopAfter?: string;
  /** undefined: not opened yet; null: the closed shard's end was reached. */
  iterator: string | null | undefined;
  /** Last sequence number fetched (renewing an expired iterator resumes after it). */
  lastFetched: string | null;
  buffer: KinesisRecord[];
  head: number;
  bufferedBytes: number;
  /** Nothing more to fetch in this run (target, tip, end of the shard, or replay end reached). */
  caughtUp: boolean;
  /** Closed shard: its last record was fetched. */
  ended: boolean;
  /** Replay: the end sequence number was fetched. */
  reachedStop: boolean;
  /** The tip was reached by a request sent at this time. */
  tipAtMs?: number;
  /** MillisBehindLatest of the last GetRecords page (how far that page was behind the shard's tip). */
  millisBehindLatest?: number;
  /** The first record after the target (plan mode). */
  pastTarget?: string;
  /** The position was lost and accepted: the offset moves to the trim horizon even without records. */
  resetToTrimHorizon: boolean;
  emptyPages: number;
}

export function newCursor(
  shardId: string,
  from: KinesisShardOffset | undefined,
  fromMs: number | undefined,
  mode: { untilMs?: number; stopAfter?: string },
): ShardCursor {
  return {
    shardId,
    from,
    fromMs,
    ...mode,
    iterator: undefined,
    lastFetched: from?.after ?? null,
    buffer: [],
    head: 0,
    bufferedBytes: 0,
    caughtUp: false,
    ended: false,
    reachedStop: false,
    resetToTrimHorizon: false,
    emptyPages: 0,
  };
}

export function bufferedCount(cursor: ShardCursor): number {
  return cursor.buffer.length - cursor.head;
}

/** Takes the cursor's first buffered record. */
export function takeHead(cursor: ShardCursor): KinesisRecord {
  const record = cursor.buffer[cursor.head];
  cursor.bufferedBytes -= record.data.byteLength;
  cursor.head++;
  if (cursor.head === cursor.buffer.length) {
    cursor.buffer = [];
    cursor.head = 0;
  } else if (cursor.head > 4096 && cursor.head * 2 > cursor.buffer.length) {
    cursor.buffer = cursor.buffer.slice(cursor.head);
    cursor.head = 0;
  }
  return record;
}

/** Takes every buffered record. */
export function takeAll(cursor: ShardCursor): KinesisRecord[] {
  const records = cursor.buffer.slice(cursor.head);
  cursor.buffer = [];
  cursor.head = 0;
  cursor.bufferedBytes = 0;
  return records;
}

export interface ShardReaderSettings {
  readonly client: KinesisSender;
  readonly stream: string;
  readonly minGetRecordsIntervalMs: number;
  readonly readBytesPerSecond: number;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly log: (event: Record<string, unknown>) => void;
}

interface Page {
  readonly records: KinesisRecord[];
  readonly next: string | null;
  readonly millisBehind: number;
  readonly sentAtMs: number;
}

/** Consecutive empty pages a shard may return before the run leaves it for the next one. */
const MAX_EMPTY_PAGES = 1_000;
/** Expired iterators renewed for one GetRecords before its error is thrown. */
const MAX_RENEWALS = 3;

export class ShardReader {
  private readonly client: KinesisSender;
  private readonly stream: string;
  /** Earliest time of the next GetRecords per shard. */
  private readonly nextReadAt = new Map<string, number>();
  private retentionMsCache: number | undefined;

  constructor(
    private readonly settings: ShardReaderSettings,
    private readonly counts: KinesisSourceStats,
    private readonly dataLoss: DataLossChecks,
  ) {
    this.client = settings.client;
    this.stream = settings.stream;
  }

  /** The stream's shards, in creation order (parents before children). */
  async listShards(): Promise<ListedShard[]> {
    const out: ListedShard[] = [];
    let token: string | undefined;
    for (;;) {
      let page: ListShardsCommandOutput;
      try {
        page = await this.send('listShards', `ListShards ${this.stream}`, () =>
          this.client.send(new ListShardsCommand(token ? { NextToken: token, MaxResults: 1000 } : { StreamName: this.stream, MaxResults: 1000 })),
        );
      } catch (e) {
        if (token && errorName(e) === 'ExpiredNextTokenException') {
          out.length = 0;
          token = undefined;
          continue;
        }
        throw e;
      }
      const shards = page.Shards ?? [];
      for (const shard of shards) {
        if (!shard.ShardId) continue;
        out.push({ id: shard.ShardId, parents: [shard.ParentShardId, shard.AdjacentParentShardId].filter((id): id is string => !!id) });
      }
      token = page.NextToken;
      if (!token || shards.length === 0) break;
    }
    // Shard IDs grow with creation: parents sort before their children.
    out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out;
  }

  /** Fetches one page into the cursor (opening the shard first if needed). */
  async fetch(cursor: ShardCursor, limit: number): Promise<void> {
    if (cursor.caughtUp) return;
    if (cursor.iterator === undefined) {
      await this.open(cursor, limit);
      return;
    }
    if (cursor.iterator === null) {
      cursor.caughtUp = true;
      return;
    }
    const page = await this.getRecords(cursor, limit);
    this.absorb(cursor, page.records, page, limit);
  }

  /** The stream's retention period (DescribeStreamSummary, once per reader). */
  async retentionMs(): Promise<number> {
    if (this.retentionMsCache === undefined) {
      const out = await this.send('describeStreamSummary', `DescribeStreamSummary ${this.stream}`, () =>
        this.client.send(new DescribeStreamSummaryCommand({ StreamName: this.stream })),
      );
      this.retentionMsCache = (out.StreamDescriptionSummary?.RetentionPeriodHours ?? 24) * 3_600_000;
    }
    return this.retentionMsCache;
  }

  /**
   * Positions the cursor and reads its first page. A checkpointed position is opened
   * AT_SEQUENCE_NUMBER so that the first record proves it is still in the shard.
   */
  private async open(cursor: ShardCursor, limit: number): Promise<void> {
    const after = cursor.from?.after ?? null;
    if (after !== null) {
      let iterator: string | undefined;
      try {
        iterator = await this.getShardIterator(cursor.shardId, { ShardIteratorType: 'AT_SEQUENCE_NUMBER', StartingSequenceNumber: after });
      } catch (e) {
        if (!isMissingSequence(e)) throw e;
      }
      if (iterator !== undefined) {
        cursor.iterator = iterator;
        cursor.lastFetched = after;
        const page = await this.getRecords(cursor, Math.min(MAX_RECORDS_PER_CALL, limit + 1));
        if (page.records.length > 0 && page.records[0].seq === after) {
          this.absorb(cursor, page.records.slice(1), page, limit + 1);
          return;
        }
      }
      await this.openAtTrimHorizon(cursor, after, limit);
      return;
    }
    const fromMs = cursor.fromMs;
    try {
      cursor.iterator =
        fromMs === undefined
          ? await this.getShardIterator(cursor.shardId, { ShardIteratorType: 'TRIM_HORIZON' })
          : await this.getShardIterator(cursor.shardId, { ShardIteratorType: 'AT_TIMESTAMP', Timestamp: new Date(fromMs) });
    } catch (e) {
      // AT_TIMESTAMP ahead of Kinesis's clock (LATEST resolved a moment ago): nothing yet.
      if (fromMs !== undefined && errorName(e) === 'InvalidArgumentException' && /future/i.test(errorMessage(e))) {
        cursor.iterator = undefined;
        cursor.caughtUp = true;
        return;
      }
      throw e;
    }
    cursor.lastFetched = null;
    const page = await this.getRecords(cursor, limit);
    this.absorb(cursor, page.records, page, limit);
  }

  /** `after` is gone from the shard: read its trim horizon, and let its first record decide whether records were lost. */
  private async openAtTrimHorizon(cursor: ShardCursor, after: string, limit: number): Promise<void> {
    cursor.iterator = await this.getShardIterator(cursor.shardId, { ShardIteratorType: 'TRIM_HORIZON' });
    cursor.lastFetched = null;
    let page = await this.getRecords(cursor, limit);
    for (let skipped = 0; page.records.length === 0 && page.next && page.millisBehind > 0 && skipped < MAX_EMPTY_PAGES; skipped++) {
      cursor.iterator = page.next;
      page = await this.getRecords(cursor, limit);
    }
    const horizon = page.records.length > 0 ? page.records[0].seq : null;
    if (horizon !== null && compareSeq(horizon, after) <= 0) {
      // `after` is still there (the AT_SEQUENCE_NUMBER probe misled us): resume right after it.
      cursor.iterator = await this.getShardIterator(cursor.shardId, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: after });
      cursor.lastFetched = after;
      const resumed = await this.getRecords(cursor, limit);
      this.absorb(cursor, resumed.records, resumed, limit);
      return;
    }
    const from = { ...cursor.from!, after };
    if (await this.dataLoss.trimmedPosition(cursor.shardId, from, horizon, () => this.retentionMs())) cursor.resetToTrimHorizon = true;
    this.absorb(cursor, page.records, page, limit);
  }

  /** Adds a page's records to the cursor, up to the target (plan) or the end number (replay). */
  private absorb(cursor: ShardCursor, records: KinesisRecord[], page: Page, limit: number): void {
    let stopped = false;
    for (const record of records) {
      if (cursor.stopAfter !== undefined && compareSeq(record.seq, cursor.stopAfter) > 0) {
        stopped = true;
        break;
      }
      if (cursor.untilMs !== undefined && record.arrivalMs > cursor.untilMs) {
        cursor.pastTarget = record.seq;
        stopped = true;
        break;
      }
      cursor.buffer.push(record);
      cursor.bufferedBytes += record.data.byteLength;
      cursor.lastFetched = record.seq;
      if (cursor.stopAfter !== undefined && record.seq === cursor.stopAfter) {
        cursor.reachedStop = true;
        stopped = true;
        break;
      }
    }
    cursor.iterator = page.next;
    cursor.millisBehindLatest = page.millisBehind;
    if (stopped) {
      cursor.caughtUp = true;
      return;
    }
    if (records.length === 0 && page.records.length === 0) cursor.emptyPages++;
    else cursor.emptyPages = 0;
    if (page.next === null) {
      cursor.ended = true;
      cursor.caughtUp = true;
    } else if (page.millisBehind === 0 && page.records.length < limit) {
      cursor.caughtUp = true;
      cursor.tipAtMs = page.sentAtMs;
    } else if (cursor.emptyPages >= MAX_EMPTY_PAGES) {
      // Kinesis keeps answering empty pages behind the tip: leave the shard for the next run
      // (its position has not moved, so nothing is skipped).
      this.settings.log({
        event: 'kinesis-empty-pages',
        stream: this.stream,
        shardId: cursor.shardId,
        pages: cursor.emptyPages,
        millisBehindLatest: page.millisBehind,
      });
      cursor.caughtUp = true;
    }
  }

  private async getShardIterator(shardId: string, input: Omit<GetShardIteratorCommandInput, 'StreamName' | 'ShardId'>): Promise<string> {
    const out = await this.send('getShardIterator', `GetShardIterator ${input.ShardIteratorType} on ${this.stream}/${shardId}`, () =>
      this.client.send(new GetShardIteratorCommand({ StreamName: this.stream, ShardId: shardId, ...input })),
    );
    if (!out.ShardIterator) {
      throw new SluiceError(`GetShardIterator on ${this.stream}/${shardId} returned no iterator, so the shard may be deleting: run again`, { retriable: true });
    }
    return out.ShardIterator;
  }

  /** One GetRecords page, paced per shard; an expired iterator is renewed after the last record read. */
  private async getRecords(cursor: ShardCursor, limit: number): Promise<Page> {
    const { clock, minGetRecordsIntervalMs, readBytesPerSecond } = this.settings;
    for (let renewals = 0; ; renewals++) {
      const wait = (this.nextReadAt.get(cursor.shardId) ?? 0) - clock.now();
      if (wait > 0) {
        this.counts.pacedMs += wait;
        await this.settings.sleep(wait);
      }
      const sentAtMs = clock.now();
      let out: GetRecordsCommandOutput;
      try {
        out = await this.send('getRecords', `GetRecords on ${this.stream}/${cursor.shardId}`, () =>
          this.client.send(new GetRecordsCommand({ ShardIterator: cursor.iterator!, Limit: Math.max(1, Math.min(MAX_RECORDS_PER_CALL, limit)) })),
        );
      } catch (e) {
        this.nextReadAt.set(cursor.shardId, clock.now() + minGetRecordsIntervalMs);
        if (errorName(e) !== 'ExpiredIteratorException' || renewals >= MAX_RENEWALS) throw e;
        this.counts.iteratorRenewals++;
        cursor.iterator = await this.renewIterator(cursor);
        continue;
      }
      const records: KinesisRecord[] = [];
      let bytes = 0;
      for (const sdkRecord of out.Records ?? []) {
        const record = toRecord(sdkRecord);
        bytes += record.data.byteLength;
        records.push(record);
      }
      if (records.length === 0) this.counts.emptyPages++;
      this.counts.recordsFetched += records.length;
      this.counts.bytesFetched += bytes;
      this.nextReadAt.set(cursor.shardId, clock.now() + Math.max(minGetRecordsIntervalMs, (bytes * 1000) / readBytesPerSecond));
      return { records, next: out.NextShardIterator ?? null, millisBehind: out.MillisBehindLatest ?? 0, sentAtMs };
    }
  }

  /** A fresh iterator at the cursor's position: after the last record fetched, else where it started. */
  private renewIterator(cursor: ShardCursor): Promise<string> {
    if (cursor.lastFetched !== null) {
      return this.getShardIterator(cursor.shardId, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: cursor.lastFetched });
    }
    if (cursor.fromMs !== undefined && !cursor.resetToTrimHorizon && cursor.from?.after == null) {
      return this.getShardIterator(cursor.shardId, { ShardIteratorType: 'AT_TIMESTAMP', Timestamp: new Date(cursor.fromMs) });
    }
    return this.getShardIterator(cursor.shardId, { ShardIteratorType: 'TRIM_HORIZON' });
  }

  /**
   * Sends one request through `withRetry`: each attempt is one HTTP request (the SDK client makes
   * one attempt) and is counted; throttling and 5xx are retried, anything else is thrown as is.
   */
  private send<T>(kind: RequestKind, what: string, call: () => Promise<T>): Promise<T> {
    return withRetry(
      this.settings.retry,
      (e) => isRetriable('kinesis', e),
      () => {
        this.counts.requests++;
        this.counts[kind]++;
        return call();
      },
      { onRetry: () => void this.counts.throttleRetries++, fail: (failure) => this.failure(what, failure) },
    );
  }

  /** What a request that gave up throws: a missing stream or spent retries as a SluiceError, else the error itself. */
  private failure(what: string, { error, attempts, retriable }: RetryFailure): Error {
    const name = errorName(error);
    const message = errorMessage(error);
    if (name === 'ResourceNotFoundException' && /stream/i.test(message) && !/sequence/i.test(message)) {
      return new SluiceError(
        `${what}: stream ${this.stream} does not exist (${message}): create it (deploy the stack, or ensureStream for the local stack) or fix the stream name`,
        { cause: error },
      );
    }
    if (!retriable) return error as Error;
    this.settings.log({ event: 'kinesis-retries-exhausted', stream: this.stream, request: what, error: name });
    return new SluiceError(
      `${what} still failed after ${attempts} tries (${name || 'error'}, HTTP ${httpStatus(error) ?? '-'}), so Kinesis is throttling or unavailable: run again (nothing was skipped), and if it persists lower maxRecordsPerCall or raise minGetRecordsIntervalMs`,
      { cause: error, retriable: true, details: { stream: this.stream, error: name, attempts } },
    );
  }
}

function toRecord(record: SdkRecord): KinesisRecord {
  return { seq: record.SequenceNumber!, data: record.Data ?? new Uint8Array(0), arrivalMs: record.ApproximateArrivalTimestamp?.getTime() ?? 0 };
}
