/**
 * A Kinesis data stream as a replayable streaming source: every record's Data is one JSON object,
 * parsed with the query's declared schema.
 *
 * Offsets are per-shard positions (the last sequence number a batch included), JSON:
 *
 *     { "v": 1, "stream": "orders", "fromMs": 1790000000000,          <- only for LATEST / AT_TIMESTAMP
 *       "shards": {
 *         "shardId-000000000000": { "after": "4968...", "done": true }, <- closed, read to its end
 *         "shardId-000000000002": { "after": "4968...", "next": "4968..." },
 *         "shardId-000000000003": { "after": "4968...", "tipMs": 1790000123456 } } }
 *
 * - `after`: the last sequence number read so far; null (or the shard absent): nothing read yet,
 *   the shard starts at its beginning (TRIM_HORIZON), or at `fromMs` (AT_TIMESTAMP) when the
 *   query started at LATEST or at a timestamp.
 * - `done`: the shard is closed (split or merged) and read to its end. Its children are read only
 *   after all their parents are done, so per-key order holds across resharding. A done shard is
 *   forgotten (dropped from the offsets) once ListShards no longer lists it.
 * - `next` / `tipMs`: what was known when the batch was planned: the sequence number of the record
 *   that follows `after`, or the time at which `after` was the shard's last record. They only serve
 *   the data-loss check below; reading ignores them.
 *
 * A batch (start, end] is, per shard, the records after start's `after` up to and including end's
 * `after`, compared as BigInt: a replay stops exactly there, however many records follow.
 *
 * availableNow: `latestOffset` fixes the run's target as a time, `{ "untilMs": <now> }`: the
 * records that arrived (ApproximateArrivalTimestamp) by the start of the run. Records arriving
 * during the run are left for the next run, so a busy stream never keeps a run alive. Finding the
 * tip this way needs no read: the records are read once, by the batch that takes them.
 *
 *     latestOffset(start)   ListShards (paged)                                   once per run
 *                           [LATEST, first run: GET/PUT sources/<i>/initial]
 *     planBatch(N, s, t)    per shard, once per run: GetShardIterator (AT_SEQUENCE_NUMBER `after`,
 *                           which also checks that `after` is still in the shard)
 *                           GetRecords pages (up to 10,000 records, read ahead, paced to 5 calls/s
 *                           and 2 MB/s per shard), taken round robin across the readable shards up
 *                           to maxRecordsPerTrigger / maxBytesPerTrigger; kept in memory for read(N)
 *     read(N, s, e)         the planned records; after a crash (another instance), a replay:
 *                           GetShardIterator + GetRecords from s until each shard's end number
 *
 * Data loss. A position is lost when its record expired (retention) before the query read past
 * it. Detection works on AWS and on kinesis-mock, without trusting either to fail loudly:
 * 1. A shard in the offsets, not done, that ListShards no longer lists: it closed and expired.
 * 2. `after` no longer in the shard: GetShardIterator AT_SEQUENCE_NUMBER `after` fails (AWS:
 *    InvalidArgumentException, kinesis-mock: ResourceNotFoundException), or its first record is
 *    not `after`. Then the trim horizon is read (TRIM_HORIZON) and its first record h decides:
 *    h <= after: nothing expired (resume after `after`); else with `next` known, records were
 *    lost iff h > next; with `tipMs` known, none were lost iff `tipMs` is younger than the
 *    retention period (minus a clock-skew margin): records after `after` arrived after tipMs and
 *    Kinesis never trims a record younger than the retention; with neither, loss is assumed.
 * 3. A replay that cannot reach its logged end sequence number.
 * By default a loss throws DataLossError naming the shard and the position; with
 * `failOnDataLoss: false` the shard continues from its trim horizon, `stats().dataLossEvents`
 * counts it and `log` receives a `kinesis-data-loss` event with the skipped range (Kinesis cannot
 * count records between two sequence numbers, so the range is given as sequence numbers).
 *
 * Service limits: GetRecords is paced per shard (5 calls/s, 2 MB/s) and asks for at most
 * 10,000 records; throttling (ProvisionedThroughputExceeded, LimitExceeded, KMSThrottling) and
 * 5xx are retried with exponential backoff and full jitter, bounded, never taken for the end of
 * the data; an expired iterator is renewed AFTER_SEQUENCE_NUMBER the last record read.
 */
import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListShardsCommand,
  type GetRecordsCommandOutput,
  type GetShardIteratorCommandInput,
  type KinesisClient,
  type ListShardsCommandOutput,
  type _Record as SdkRecord,
} from '@aws-sdk/client-kinesis';
import { CheckpointMismatchError, DataLossError, InvalidOptionError, SluiceError } from '../../engine/errors';
import type { BatchLimits, CheckpointStore, Clock, DeadLetter, Json, ReadOptions, ReadResult, Row, Source } from '../../engine/ports';
import { systemClock } from '../../engine/ports';
import { type Schema } from '../../engine/schema';
import { LineParsers, type LineParser } from '../../engine/json-scan';
import { CHUNK_LINES } from '../../engine/lines';
import { errorMessage, errorName, httpStatus } from '../request/errors';

/** Where a query without a checkpoint starts reading. */
export type StartingPosition = 'TRIM_HORIZON' | 'LATEST' | { readonly atTimestamp: number };

/** The part of a KinesisClient the source uses (tests wrap it to inject failures). */
export type KinesisSender = Pick<KinesisClient, 'send'>;

export interface KinesisRetryOptions {
  /** Retries of a throttled or failed (5xx) request after the SDK's own. @default 8 */
  readonly maxThrottleRetries?: number;
  /** @default 100 */
  readonly retryBaseDelayMs?: number;
  /** @default 5000 */
  readonly retryMaxDelayMs?: number;
}

export interface KinesisSourceOptions extends KinesisRetryOptions {
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
  /** When set, each row gets the record's ApproximateArrivalTimestamp (epoch ms) in this column. @default none */
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

/** One shard's position in an offset. */
export interface KinesisShardOffset {
  readonly after: string | null;
  readonly done?: true;
  readonly next?: string;
  readonly tipMs?: number;
}

export interface KinesisOffset {
  readonly v: 1;
  readonly stream: string;
  readonly fromMs?: number;
  readonly shards: Record<string, KinesisShardOffset>;
}

/** The availableNow target: records that arrived by `untilMs`. */
export interface KinesisTarget {
  readonly v: 1;
  readonly stream: string;
  readonly untilMs: number;
  readonly fromMs?: number;
}

export interface KinesisSourceStats {
  /** HTTP requests sent (SDK retries included). */
  requests: number;
  listShards: number;
  getShardIterator: number;
  getRecords: number;
  describeStreamSummary: number;
  /** Retries of throttled or failed requests made here (after the SDK's). */
  throttleRetries: number;
  /** Expired iterators renewed. */
  iteratorRenewals: number;
  /** Positions found lost (see the header); with failOnDataLoss each one threw. */
  dataLossEvents: number;
  /** Records and Data bytes fetched from Kinesis (replays included). */
  recordsFetched: number;
  bytesFetched: number;
  /** GetRecords pages with no records. */
  emptyPages: number;
  /** Time spent waiting to stay under the per-shard read limits. */
  pacedMs: number;
}

interface KRecord {
  readonly seq: string;
  readonly data: Uint8Array;
  readonly arrivalMs: number;
}

interface ListedShard {
  readonly id: string;
  readonly parents: readonly string[];
}

/** One shard being read: its iterator and the records fetched but not yet taken. */
interface Cursor {
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
  buffer: KRecord[];
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
  /** The first record after the target (plan mode). */
  pastTarget?: string;
  /** The position was lost and accepted: the offset moves to the trim horizon even without records. */
  resetToTrimHorizon: boolean;
  emptyPages: number;
}

interface RunState {
  readonly untilMs: number;
  readonly fromMs: number | undefined;
  readonly listing: Map<string, ListedShard>;
  /** Listed shard IDs in creation order (parents before children). */
  readonly order: string[];
  /** Shards lost as a whole and accepted (failOnDataLoss false): dropped from the next end offset. */
  readonly lostShards: Set<string>;
  /** JSON of the offset the cursors continue from. */
  cursorsAt: string;
  cursors: Map<string, Cursor>;
}

interface PlannedBatch {
  readonly startKey: string;
  readonly endKey: string;
  readonly shards: Array<[string, KRecord[]]>;
}

/** Kinesis's own limit on GetRecords' Limit. */
const MAX_LIMIT = 10_000;
/** Consecutive empty pages a shard may return before the run leaves it for the next one. */
const MAX_EMPTY_PAGES = 1_000;
const STREAM_NAME = /^[a-zA-Z0-9_.-]{1,128}$/;
const SEQUENCE = /^\d{1,80}$/;
const INITIAL_LOG = 'initial';

export class KinesisSource implements Source {
  readonly description: string;
  private readonly client: KinesisSender;
  private readonly stream: string;
  /** The declared schema without the arrival-time column (filled from the record, not the payload). */
  private readonly rowSchema: Schema;
  private readonly parsers: LineParsers;
  private readonly arrivalColumn: string | null;
  private readonly checkpoint: CheckpointStore | null;
  private readonly sourceIndex: number;
  private readonly starting: StartingPosition;
  private readonly failOnDataLoss: boolean;
  private readonly perCall: number;
  private readonly maxBuffered: number;
  private readonly minIntervalMs: number;
  private readonly bytesPerSecond: number;
  private readonly skewMarginMs: number;
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly clock: Clock;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly log: (event: Record<string, unknown>) => void;
  private readonly counts: KinesisSourceStats = {
    requests: 0, listShards: 0, getShardIterator: 0, getRecords: 0, describeStreamSummary: 0, throttleRetries: 0,
    iteratorRenewals: 0, dataLossEvents: 0, recordsFetched: 0, bytesFetched: 0, emptyPages: 0, pacedMs: 0,
  };
  /** Earliest time of the next GetRecords per shard. */
  private readonly nextReadAt = new Map<string, number>();
  private run: RunState | null = null;
  private readonly planned = new Map<number, PlannedBatch>();
  /** LATEST resolved by this instance (logged in the checkpoint too). */
  private resolvedFromMs: number | undefined;
  private retentionMsCache: number | undefined;

  constructor(opts: KinesisSourceOptions) {
    if (!opts || !opts.client || typeof (opts.client as { send?: unknown }).send !== 'function') {
      throw new InvalidOptionError('KinesisSource needs `client`, a KinesisClient from @aws-sdk/client-kinesis: create it once per Lambda container and pass it in');
    }
    this.client = opts.client;
    if (typeof opts.streamName !== 'string' || !STREAM_NAME.test(opts.streamName)) {
      throw new InvalidOptionError(
        `KinesisSource streamName ${JSON.stringify(opts.streamName)} is not a Kinesis stream name: 1 to 128 characters of a-z, A-Z, 0-9, "_", "." and "-" (pass the name, not the ARN)`,
      );
    }
    this.stream = opts.streamName;
    if (!opts.schema || !Array.isArray(opts.schema.columns)) {
      throw new InvalidOptionError('KinesisSource needs `schema`: parse the declared columns with parseSchema("user STRING, event_time TIMESTAMP, ...")');
    }
    this.arrivalColumn = opts.arrivalTimeColumn ?? null;
    if (this.arrivalColumn !== null) {
      if (typeof this.arrivalColumn !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.arrivalColumn)) {
        throw new InvalidOptionError(`KinesisSource arrivalTimeColumn ${JSON.stringify(opts.arrivalTimeColumn)} is not a column name: use letters, digits and "_", e.g. "arrival_time"`);
      }
      const declared = opts.schema.columns.find((c) => c.name === this.arrivalColumn);
      if (declared && declared.type !== 'TIMESTAMP' && declared.type !== 'LONG') {
        throw new InvalidOptionError(
          `KinesisSource arrivalTimeColumn ${this.arrivalColumn} is declared ${declared.type} in the schema: the arrival time is epoch milliseconds, declare it TIMESTAMP (or LONG), or leave it out of the schema`,
        );
      }
    }
    const arrival = this.arrivalColumn;
    this.rowSchema = arrival === null ? opts.schema : { ddl: opts.schema.ddl, columns: opts.schema.columns.filter((c) => c.name !== arrival) };
    this.parsers = new LineParsers(this.rowSchema);
    this.checkpoint = opts.checkpoint ?? null;
    this.sourceIndex = opts.sourceIndex ?? 0;
    if (!Number.isInteger(this.sourceIndex) || this.sourceIndex < 0) {
      throw new InvalidOptionError(`KinesisSource sourceIndex ${opts.sourceIndex} must be a non-negative integer: the source's position in the query`);
    }
    this.starting = checkStartingPosition(opts.startingPosition ?? 'TRIM_HORIZON');
    if (this.starting === 'LATEST' && !this.checkpoint) {
      throw new InvalidOptionError(
        'KinesisSource startingPosition LATEST needs `checkpoint`: the first run logs the position "now" there, so that records arriving before the first batch are not skipped by the next run. Pass the query\'s CheckpointStore, or start at TRIM_HORIZON or { atTimestamp }',
      );
    }
    this.failOnDataLoss = opts.failOnDataLoss ?? true;
    this.perCall = intOption(opts.maxRecordsPerCall, MAX_LIMIT, 1, MAX_LIMIT, 'maxRecordsPerCall', 'Kinesis GetRecords takes 1 to 10000 records');
    this.maxBuffered = positiveOption(opts.maxBufferedBytes, 64 * 1024 * 1024, 'maxBufferedBytes');
    this.minIntervalMs = nonNegativeOption(opts.minGetRecordsIntervalMs, 200, 'minGetRecordsIntervalMs');
    this.bytesPerSecond = positiveOption(opts.maxReadBytesPerSecondPerShard, 2 * 1024 * 1024, 'maxReadBytesPerSecondPerShard');
    this.skewMarginMs = nonNegativeOption(opts.clockSkewMarginMs, 60_000, 'clockSkewMarginMs');
    this.maxRetries = intOption(opts.maxThrottleRetries, 8, 0, 100, 'maxThrottleRetries', '0 leaves retries to the SDK');
    this.baseDelayMs = nonNegativeOption(opts.retryBaseDelayMs, 100, 'retryBaseDelayMs');
    this.maxDelayMs = nonNegativeOption(opts.retryMaxDelayMs, 5_000, 'retryMaxDelayMs');
    this.clock = opts.clock ?? systemClock;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.log = opts.log ?? (() => undefined);
    this.description = `kinesis://${this.stream}`;
  }

  /** Requests sent, retries, renewals and data-loss events so far. */
  stats(): KinesisSourceStats {
    return { ...this.counts };
  }

  /**
   * The run's target: everything that arrived by now. Lists the shards once (kept for the run's
   * batches) and checks that no shard of the checkpoint expired unread.
   */
  async latestOffset(start: Json | null): Promise<Json | null> {
    const s = this.parseOffset(start, 'start');
    const fromMs = s ? s.fromMs : await this.initialFromMs();
    const run = await this.newRun(s, this.clock.now(), fromMs);
    const target: KinesisTarget = { v: 1, stream: this.stream, untilMs: run.untilMs, ...(fromMs !== undefined ? { fromMs } : {}) };
    return target as unknown as Json;
  }

  async planBatch(batchId: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    const s = this.parseOffset(start, 'start');
    const t = this.parseTarget(target);
    const maxRecords = checkLimit(limits.maxRecordsPerTrigger, 'maxRecordsPerTrigger');
    const maxBytes = Math.min(checkLimit(limits.maxBytesPerTrigger, 'maxBytesPerTrigger'), this.maxBuffered);
    const fromMs = s ? s.fromMs : t.fromMs;
    const run = this.run && this.run.untilMs === t.untilMs ? this.run : await this.newRun(s, t.untilMs, fromMs);
    const startKey = JSON.stringify(start);
    if (run.cursorsAt !== startKey) {
      run.cursors = new Map();
      run.cursorsAt = startKey;
    }
    try {
      return await this.plan(run, batchId, s, startKey, fromMs, maxRecords, maxBytes);
    } catch (e) {
      // The cursors may have handed records to a batch that never came back: start over.
      run.cursors = new Map();
      run.cursorsAt = '';
      throw e;
    }
  }

  private async plan(run: RunState, batchId: number, s: KinesisOffset | null, startKey: string, fromMs: number | undefined, maxRecords: number, maxBytes: number): Promise<Json | null> {

    // The shards' positions as the batch moves them, in an order where parents come first.
    const working = new Map<string, KinesisShardOffset>(Object.entries(s?.shards ?? {}));
    let changed = false;
    for (const id of run.lostShards) if (working.delete(id)) changed = true;
    const taken = new Map<string, KRecord[]>();
    const full = new Set<string>();
    let n = 0;
    let bytes = 0;
    const budgetLeft = () => n < maxRecords && bytes < maxBytes;

    // Round robin: each round splits what is left of the record budget evenly over the shards
    // that can still give records; shards that run dry leave their share to the next round.
    for (let round = 0; budgetLeft(); round++) {
      const active = run.order.filter((id) => !full.has(id) && this.readable(run, id, working) && !this.exhausted(run.cursors.get(id)));
      if (active.length === 0) break;
      const shift = batchId % active.length;
      const rotated = active.slice(shift).concat(active.slice(0, shift));
      const per = maxRecords === Infinity ? Infinity : Math.max(1, Math.floor((maxRecords - n) / rotated.length));
      let progressed = false;
      for (const id of rotated) {
        if (!budgetLeft()) break;
        const c = this.cursorFor(run, id, working.get(id), fromMs);
        let quota = Math.min(per, maxRecords - n);
        if (bufferedCount(c) === 0 && !c.caughtUp) {
          await this.fetch(c, this.limitFor(run, quota));
          progressed = true;
        }
        while (quota > 0 && bufferedCount(c) > 0 && budgetLeft()) {
          const rec = c.buffer[c.head];
          if (n > 0 && bytes + rec.data.byteLength > maxBytes) {
            full.add(id);
            break;
          }
          takeHead(c);
          let list = taken.get(id);
          if (!list) taken.set(id, (list = []));
          list.push(rec);
          n++;
          bytes += rec.data.byteLength;
          quota--;
          progressed = true;
        }
        if (c.ended && bufferedCount(c) === 0 && !working.get(id)?.done) {
          // Closed and read to its end: done, and its children become readable.
          working.set(id, { after: taken.get(id)?.at(-1)?.seq ?? working.get(id)?.after ?? null, done: true });
          changed = true;
          progressed = true;
        }
      }
      if (!progressed) break;
    }

    for (const [id, recs] of taken) {
      const c = run.cursors.get(id)!;
      const prev = working.get(id);
      const entry: { -readonly [K in keyof KinesisShardOffset]: KinesisShardOffset[K] } = { after: recs[recs.length - 1].seq };
      if (prev?.done) entry.done = true;
      else if (bufferedCount(c) > 0) entry.next = c.buffer[c.head].seq;
      else if (c.pastTarget !== undefined) entry.next = c.pastTarget;
      else if (c.tipAtMs !== undefined) entry.tipMs = c.tipAtMs;
      working.set(id, entry);
      changed = true;
    }
    for (const [id, c] of run.cursors) {
      if (c.resetToTrimHorizon && !taken.has(id) && working.get(id)?.after != null && !working.get(id)?.done) {
        working.set(id, { after: null });
        changed = true;
      }
    }
    if (!changed) return null;
    // Finished and then forgotten: a done shard that ListShards no longer lists has expired.
    for (const [id, e] of working) if (e.done && !run.listing.has(id)) working.delete(id);

    const end: KinesisOffset = { v: 1, stream: this.stream, ...(fromMs !== undefined ? { fromMs } : {}), shards: Object.fromEntries(working) };
    const endKey = JSON.stringify(end);
    for (const id of this.planned.keys()) if (id < batchId) this.planned.delete(id);
    this.planned.set(batchId, { startKey, endKey, shards: [...working.keys()].filter((id) => taken.has(id)).map((id) => [id, taken.get(id)!]) });
    run.cursorsAt = endKey;
    for (const c of run.cursors.values()) c.resetToTrimHorizon = false;
    return end as unknown as Json;
  }

  /** The whole batch at once: the chunks of `readChunks`, concatenated. */
  async read(batchId: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const rows: Row[] = [];
    const deadLetters: DeadLetter[] = [];
    let bytes = 0;
    for await (const c of this.readChunks(batchId, start, end, options)) {
      for (const r of c.rows) rows.push(r);
      for (const d of c.deadLetters) deadLetters.push(d);
      bytes += c.bytes;
    }
    return { rows, deadLetters, bytes };
  }

  /**
   * The batch a shard at a time (parents before children), each shard's rows in sequence order:
   * from memory when this instance planned it, else read again from Kinesis (a page per chunk).
   */
  async *readChunks(batchId: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    const s = this.parseOffset(start, 'start');
    const e = this.parseOffset(end, 'end');
    if (!e) return;
    const parse = this.parsers.for(options?.columns);
    const planned = this.planned.get(batchId);
    if (planned && planned.startKey === JSON.stringify(start) && planned.endKey === JSON.stringify(end)) {
      for (const [id, recs] of planned.shards) yield* this.toChunks(id, recs, parse);
      return;
    }
    const fromMs = s ? s.fromMs : e.fromMs;
    for (const [id, ee] of Object.entries(e.shards)) {
      const se = s?.shards[id];
      if (ee.after === null || (se && se.after === ee.after)) continue;
      if (se?.after != null && compareSeq(ee.after, se.after) < 0) {
        throw new CheckpointMismatchError(
          `batch ${batchId} of ${this.description} ends shard ${id} at sequence number ${ee.after}, before its start ${se.after}: the offsets log is damaged; restore it, or start the query on a new checkpoint location`,
          { details: { batchId, shardId: id } },
        );
      }
      yield* this.replayShard(batchId, id, se, ee.after, fromMs, parse);
    }
  }

  /**
   * Records between `from` and `target` that this run has fetched and not yet put in a batch (a
   * lower bound when a shard has not been read up to the target yet).
   */
  async backlog(from: Json | null, target: Json | null): Promise<number> {
    if (target === null) return 0;
    const t = this.parseTarget(target);
    const run = this.run;
    if (!run || run.untilMs !== t.untilMs || run.cursorsAt !== JSON.stringify(from)) return 0;
    let total = 0;
    for (const c of run.cursors.values()) total += bufferedCount(c);
    return total;
  }

  // -------------------------------------------------------------------------------- the run

  /** LATEST or AT_TIMESTAMP as `fromMs` (LATEST: "now", fixed once in the checkpoint). */
  private async initialFromMs(): Promise<number | undefined> {
    const p = this.starting;
    if (p === 'TRIM_HORIZON') return undefined;
    if (p !== 'LATEST') return p.atTimestamp;
    if (this.resolvedFromMs !== undefined) return this.resolvedFromMs;
    const cp = this.checkpoint!;
    const text = await cp.readSourceLog(this.sourceIndex, INITIAL_LOG);
    if (text !== null) {
      let logged: { stream?: unknown; fromMs?: unknown } | null = null;
      try {
        logged = JSON.parse(text) as { stream?: unknown; fromMs?: unknown };
      } catch {
        logged = null;
      }
      if (!logged || typeof logged.fromMs !== 'number' || logged.stream !== this.stream) {
        throw new CheckpointMismatchError(
          `${cp.description}/sources/${this.sourceIndex}/${INITIAL_LOG} does not hold this stream's starting position (${text.slice(0, 200)}): it belongs to another source, or is damaged. Delete it to start at LATEST again, or use the checkpoint this query was started with`,
        );
      }
      return (this.resolvedFromMs = logged.fromMs);
    }
    const fromMs = this.clock.now();
    await cp.writeSourceLog(this.sourceIndex, INITIAL_LOG, JSON.stringify({ v: 1, stream: this.stream, startingPosition: 'LATEST', fromMs }));
    return (this.resolvedFromMs = fromMs);
  }

  /** Lists the shards and checks the start offset's shards still exist. */
  private async newRun(start: KinesisOffset | null, untilMs: number, fromMs: number | undefined): Promise<RunState> {
    const shards = await this.listShards();
    const listing = new Map(shards.map((sh) => [sh.id, sh]));
    const lostShards = new Set<string>();
    for (const [id, e] of Object.entries(start?.shards ?? {})) {
      if (e.done || listing.has(id)) continue;
      // Not done and gone: the shard closed and expired before the query read it to its end.
      this.dataLoss(
        `shard ${id} is in the checkpoint (position: ${e.after === null ? 'its start' : `after sequence number ${e.after}`}) but ListShards no longer lists it: the shard was closed and its records expired (retention) before the query read them all`,
        'forget the shard and continue with its child shards',
        { shardId: id, after: e.after, kind: 'shard-expired' },
      );
      lostShards.add(id);
    }
    const run: RunState = {
      untilMs,
      fromMs,
      listing,
      order: shards.map((sh) => sh.id),
      lostShards,
      cursorsAt: JSON.stringify(start),
      cursors: new Map(),
    };
    this.run = run;
    return run;
  }

  /** True when every parent is read to its end (done in the offsets, or long expired). */
  private readable(run: RunState, id: string, working: Map<string, KinesisShardOffset>): boolean {
    if (working.get(id)?.done) return false;
    const shard = run.listing.get(id);
    if (!shard) return false;
    for (const p of shard.parents) {
      const pe = working.get(p);
      if (pe ? !pe.done : run.listing.has(p)) return false;
    }
    return true;
  }

  private exhausted(c: Cursor | undefined): boolean {
    return c !== undefined && c.caughtUp && bufferedCount(c) === 0 && !c.ended;
  }

  private cursorFor(run: RunState, id: string, from: KinesisShardOffset | undefined, fromMs: number | undefined): Cursor {
    let c = run.cursors.get(id);
    if (!c) {
      c = newCursor(id, from, fromMs, { untilMs: run.untilMs });
      run.cursors.set(id, c);
    }
    return c;
  }

  /** GetRecords Limit: a full page while the buffers are small, else only what the batch needs. */
  private limitFor(run: RunState, quota: number): number {
    let buffered = 0;
    for (const c of run.cursors.values()) buffered += c.bufferedBytes;
    if (buffered < this.maxBuffered) return this.perCall;
    return Math.max(1, Math.min(this.perCall, quota));
  }

  // ------------------------------------------------------------------------------- reading

  /** Reads (start, end] of one shard again from Kinesis, a GetRecords page per chunk. */
  private async *replayShard(batchId: number, id: string, from: KinesisShardOffset | undefined, endSeq: string, fromMs: number | undefined, parse: LineParser): AsyncIterable<ReadResult> {
    const c = newCursor(id, from, fromMs, { stopAfter: endSeq });
    while (!c.caughtUp) {
      await this.fetch(c, this.perCall);
      if (bufferedCount(c) > 0) {
        const recs = c.buffer.slice(c.head);
        c.buffer = [];
        c.head = 0;
        c.bufferedBytes = 0;
        yield* this.toChunks(id, recs, parse);
      }
    }
    if (!c.reachedStop && !c.resetToTrimHorizon) {
      this.dataLoss(
        `batch ${batchId} cannot be replayed exactly: shard ${id} no longer holds the batch's last record (sequence number ${endSeq}); its records expired (retention) before the replay`,
        'replay what is left of the batch',
        { shardId: id, batchId, endSequenceNumber: endSeq, kind: 'replay-end-missing' },
      );
    }
  }

  /** Fetches one page into the cursor (opening the shard first if needed). */
  private async fetch(c: Cursor, limit: number): Promise<void> {
    if (c.caughtUp) return;
    if (c.iterator === undefined) {
      await this.open(c, limit);
      return;
    }
    if (c.iterator === null) {
      c.caughtUp = true;
      return;
    }
    const page = await this.getRecords(c, limit);
    this.absorb(c, page.records, page, limit);
  }

  /**
   * Positions the cursor and reads its first page. A checkpointed position is opened
   * AT_SEQUENCE_NUMBER so that the first record proves it is still in the shard.
   */
  private async open(c: Cursor, limit: number): Promise<void> {
    const after = c.from?.after ?? null;
    if (after !== null) {
      let iterator: string | undefined;
      try {
        iterator = await this.getShardIterator(c.shardId, { ShardIteratorType: 'AT_SEQUENCE_NUMBER', StartingSequenceNumber: after });
      } catch (e) {
        if (!isMissingSequence(e)) throw e;
      }
      if (iterator !== undefined) {
        c.iterator = iterator;
        c.lastFetched = after;
        const page = await this.getRecords(c, Math.min(MAX_LIMIT, limit + 1));
        if (page.records.length > 0 && page.records[0].seq === after) {
          this.absorb(c, page.records.slice(1), page, limit + 1);
          return;
        }
      }
      await this.openAtTrimHorizon(c, after, limit);
      return;
    }
    const fromMs = c.fromMs;
    try {
      c.iterator =
        fromMs === undefined
          ? await this.getShardIterator(c.shardId, { ShardIteratorType: 'TRIM_HORIZON' })
          : await this.getShardIterator(c.shardId, { ShardIteratorType: 'AT_TIMESTAMP', Timestamp: new Date(fromMs) });
    } catch (e) {
      // AT_TIMESTAMP ahead of Kinesis's clock (LATEST resolved a moment ago): nothing yet.
      if (fromMs !== undefined && errorName(e) === 'InvalidArgumentException' && /future/i.test(errorMessage(e))) {
        c.iterator = undefined;
        c.caughtUp = true;
        return;
      }
      throw e;
    }
    c.lastFetched = null;
    const page = await this.getRecords(c, limit);
    this.absorb(c, page.records, page, limit);
  }

  /** `after` is gone from the shard: read its trim horizon and decide whether records were lost. */
  private async openAtTrimHorizon(c: Cursor, after: string, limit: number): Promise<void> {
    c.iterator = await this.getShardIterator(c.shardId, { ShardIteratorType: 'TRIM_HORIZON' });
    c.lastFetched = null;
    let page = await this.getRecords(c, limit);
    for (let i = 0; page.records.length === 0 && page.next && page.millisBehind > 0 && i < MAX_EMPTY_PAGES; i++) {
      c.iterator = page.next;
      page = await this.getRecords(c, limit);
    }
    const h = page.records.length > 0 ? page.records[0].seq : null;
    if (h !== null && compareSeq(h, after) <= 0) {
      // `after` is still there (the AT_SEQUENCE_NUMBER probe misled us): resume right after it.
      c.iterator = await this.getShardIterator(c.shardId, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: after });
      c.lastFetched = after;
      const p2 = await this.getRecords(c, limit);
      this.absorb(c, p2.records, p2, limit);
      return;
    }
    const from = c.from!;
    let lost: boolean;
    let why: string;
    if (from.next !== undefined) {
      lost = h === null || compareSeq(h, from.next) > 0;
      why = `the record after it was ${from.next}`;
    } else if (from.tipMs !== undefined) {
      const retentionMs = await this.retentionMs();
      lost = !(from.tipMs - this.skewMarginMs > this.clock.now() - retentionMs);
      why = `it was the shard's last record at ${new Date(from.tipMs).toISOString()}, retention ${retentionMs / 3_600_000} h`;
    } else {
      lost = true;
      why = 'what followed it is unknown';
    }
    if (lost) {
      const retentionMs = await this.retentionMs();
      this.dataLoss(
        `shard ${c.shardId}: the checkpoint's position (after sequence number ${after}) is older than the shard's trim horizon (${h === null ? 'no record is left' : `the oldest record left is ${h}`}; ${why}): records expired before the query read them (retention ${retentionMs / 3_600_000} h). Run the query more often than the retention period, or raise it (IncreaseStreamRetentionPeriod)`,
        'skip what expired and continue from the trim horizon',
        { shardId: c.shardId, after, resumedAt: h, knownNext: from.next ?? null, kind: 'position-trimmed' },
      );
      c.resetToTrimHorizon = true;
    } else {
      this.log({ event: 'kinesis-position-trimmed', stream: this.stream, shardId: c.shardId, after, resumedAt: h, lost: false, why });
    }
    this.absorb(c, page.records, page, limit);
  }

  /** Adds a page's records to the cursor, up to the target (plan) or the end number (replay). */
  private absorb(c: Cursor, records: KRecord[], page: Page, limit: number): void {
    let stopped = false;
    for (const rec of records) {
      if (c.stopAfter !== undefined && compareSeq(rec.seq, c.stopAfter) > 0) {
        stopped = true;
        break;
      }
      if (c.untilMs !== undefined && rec.arrivalMs > c.untilMs) {
        c.pastTarget = rec.seq;
        stopped = true;
        break;
      }
      c.buffer.push(rec);
      c.bufferedBytes += rec.data.byteLength;
      c.lastFetched = rec.seq;
      if (c.stopAfter !== undefined && rec.seq === c.stopAfter) {
        c.reachedStop = true;
        stopped = true;
        break;
      }
    }
    c.iterator = page.next;
    if (stopped) {
      c.caughtUp = true;
      return;
    }
    if (records.length === 0 && page.records.length === 0) c.emptyPages++;
    else c.emptyPages = 0;
    if (page.next === null) {
      c.ended = true;
      c.caughtUp = true;
    } else if (page.millisBehind === 0 && page.records.length < limit) {
      c.caughtUp = true;
      c.tipAtMs = page.sentAtMs;
    } else if (c.emptyPages >= MAX_EMPTY_PAGES) {
      // Kinesis keeps answering empty pages behind the tip: leave the shard for the next run
      // (its position has not moved, so nothing is skipped).
      this.log({ event: 'kinesis-empty-pages', stream: this.stream, shardId: c.shardId, pages: c.emptyPages, millisBehindLatest: page.millisBehind });
      c.caughtUp = true;
    }
  }

  /** The records as chunks of at most CHUNK_LINES rows (lib/engine/lines.ts): rows die young. */
  private *toChunks(shardId: string, recs: KRecord[], parse: LineParser): Generator<ReadResult> {
    for (let i = 0; i < recs.length; i += CHUNK_LINES) yield this.toChunk(shardId, recs.slice(i, i + CHUNK_LINES), parse);
  }

  private toChunk(shardId: string, recs: KRecord[], parse: LineParser): ReadResult {
    const rows: Row[] = [];
    const deadLetters: DeadLetter[] = [];
    let bytes = 0;
    const col = this.arrivalColumn;
    for (const rec of recs) {
      bytes += rec.data.byteLength;
      const text = Buffer.from(rec.data.buffer, rec.data.byteOffset, rec.data.byteLength).toString('utf8');
      const reason = parse.into(text, rows);
      if (reason !== null) deadLetters.push({ source: { shardId, sequenceNumber: rec.seq }, raw: text, reason });
      else if (col !== null) rows[rows.length - 1][col] = rec.arrivalMs;
    }
    return { rows, deadLetters, bytes };
  }

  private dataLoss(what: string, skipAction: string, details: Record<string, unknown>): void {
    this.counts.dataLossEvents++;
    this.log({ event: 'kinesis-data-loss', stream: this.stream, failOnDataLoss: this.failOnDataLoss, ...details });
    if (this.failOnDataLoss) {
      throw new DataLossError(
        `Kinesis stream ${this.stream}: ${what}. The query stopped so that the loss does not go unnoticed; to ${skipAction}, set failOnDataLoss: false on the Kinesis source (it then counts the loss in stats().dataLossEvents and reports it to its log)`,
        { details: { stream: this.stream, ...details } },
      );
    }
  }

  // ------------------------------------------------------------------------------ requests

  private async listShards(): Promise<ListedShard[]> {
    const out: ListedShard[] = [];
    let token: string | undefined;
    for (;;) {
      let page: ListShardsCommandOutput;
      try {
        page = await this.request('listShards', `ListShards ${this.stream}`, () =>
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
      for (const sh of shards) {
        if (!sh.ShardId) continue;
        out.push({ id: sh.ShardId, parents: [sh.ParentShardId, sh.AdjacentParentShardId].filter((p): p is string => !!p) });
      }
      token = page.NextToken;
      if (!token || shards.length === 0) break;
    }
    // Shard IDs grow with creation: parents sort before their children.
    out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out;
  }

  private async getShardIterator(shardId: string, input: Omit<GetShardIteratorCommandInput, 'StreamName' | 'ShardId'>): Promise<string> {
    const out = await this.request('getShardIterator', `GetShardIterator ${input.ShardIteratorType} on ${this.stream}/${shardId}`, () =>
      this.client.send(new GetShardIteratorCommand({ StreamName: this.stream, ShardId: shardId, ...input })),
    );
    if (!out.ShardIterator) {
      throw new SluiceError(`GetShardIterator on ${this.stream}/${shardId} returned no iterator: the shard may be deleting; run again`, { retriable: true });
    }
    return out.ShardIterator;
  }

  /** One GetRecords page, paced per shard; an expired iterator is renewed after the last record read. */
  private async getRecords(c: Cursor, limit: number): Promise<Page> {
    for (let renewals = 0; ; renewals++) {
      const wait = (this.nextReadAt.get(c.shardId) ?? 0) - this.clock.now();
      if (wait > 0) {
        this.counts.pacedMs += wait;
        await this.sleep(wait);
      }
      const sentAtMs = this.clock.now();
      let out: GetRecordsCommandOutput;
      try {
        out = await this.request('getRecords', `GetRecords on ${this.stream}/${c.shardId}`, () =>
          this.client.send(new GetRecordsCommand({ ShardIterator: c.iterator!, Limit: Math.max(1, Math.min(MAX_LIMIT, limit)) })),
        );
      } catch (e) {
        this.nextReadAt.set(c.shardId, this.clock.now() + this.minIntervalMs);
        if (errorName(e) !== 'ExpiredIteratorException' || renewals >= 3) throw e;
        this.counts.iteratorRenewals++;
        c.iterator = await this.renewIterator(c);
        continue;
      }
      const records: KRecord[] = [];
      let bytes = 0;
      for (const r of out.Records ?? []) {
        const rec = toRecord(r);
        bytes += rec.data.byteLength;
        records.push(rec);
      }
      if (records.length === 0) this.counts.emptyPages++;
      this.counts.recordsFetched += records.length;
      this.counts.bytesFetched += bytes;
      const now = this.clock.now();
      this.nextReadAt.set(c.shardId, now + Math.max(this.minIntervalMs, (bytes * 1000) / this.bytesPerSecond));
      return { records, next: out.NextShardIterator ?? null, millisBehind: out.MillisBehindLatest ?? 0, sentAtMs };
    }
  }

  /** A fresh iterator at the cursor's position: after the last record fetched, else where it started. */
  private renewIterator(c: Cursor): Promise<string> {
    if (c.lastFetched !== null) return this.getShardIterator(c.shardId, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: c.lastFetched });
    if (c.fromMs !== undefined && !c.resetToTrimHorizon && c.from?.after == null) {
      return this.getShardIterator(c.shardId, { ShardIteratorType: 'AT_TIMESTAMP', Timestamp: new Date(c.fromMs) });
    }
    return this.getShardIterator(c.shardId, { ShardIteratorType: 'TRIM_HORIZON' });
  }

  private async retentionMs(): Promise<number> {
    if (this.retentionMsCache === undefined) {
      const out = await this.request('describeStreamSummary', `DescribeStreamSummary ${this.stream}`, () =>
        this.client.send(new DescribeStreamSummaryCommand({ StreamName: this.stream })),
      );
      this.retentionMsCache = (out.StreamDescriptionSummary?.RetentionPeriodHours ?? 24) * 3_600_000;
    }
    return this.retentionMsCache;
  }

  /** Sends a request: counts it, retries throttling and 5xx with backoff and full jitter. */
  private async request<T extends { $metadata?: { attempts?: number } }>(kind: keyof KinesisSourceStats, what: string, call: () => Promise<T>): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        const out = await call();
        this.count(kind, out.$metadata?.attempts);
        return out;
      } catch (e) {
        this.count(kind, attemptsOf(e));
        if (errorName(e) === 'ResourceNotFoundException' && /stream/i.test(errorMessage(e)) && !/sequence/i.test(errorMessage(e))) {
          throw new SluiceError(
            `${what}: stream ${this.stream} does not exist (${errorMessage(e)}): create it (deploy the stack, or ensureStream for the local stack) or fix the stream name`,
            { cause: e },
          );
        }
        if (!isRetriable(e)) throw e;
        if (retry >= this.maxRetries) {
          this.log({ event: 'kinesis-retries-exhausted', stream: this.stream, request: what, error: errorName(e) });
          throw new SluiceError(
            `${what} still failed after ${retry + 1} tries (${errorName(e) || 'error'}, HTTP ${httpStatus(e) ?? '-'}): Kinesis is throttling or unavailable. ` +
              `Nothing was skipped; the run can be retried. If it persists, other consumers share the shard's 5 reads/s and 2 MB/s: lower maxRecordsPerCall, raise minGetRecordsIntervalMs, or give this query enhanced fan-out`,
            { cause: e, retriable: true, details: { stream: this.stream, error: errorName(e) } },
          );
        }
        this.counts.throttleRetries++;
        await this.sleep(Math.random() * Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** retry));
      }
    }
  }

  private count(kind: keyof KinesisSourceStats, attempts: number | undefined): void {
    const n = attempts && attempts > 0 ? attempts : 1;
    this.counts.requests += n;
    this.counts[kind] += n;
  }

  // ------------------------------------------------------------------------------- parsing

  private parseOffset(offset: Json | null | undefined, what: string): KinesisOffset | null {
    if (offset === null || offset === undefined) return null;
    const o = offset as unknown as KinesisOffset;
    const bad = (why: string) =>
      new CheckpointMismatchError(
        `${what} offset ${JSON.stringify(offset).slice(0, 300)} is not a Kinesis offset {"v": 1, "stream": ..., "shards": {...}} (${why}): the checkpoint was written for another kind of source or is damaged. ` +
          `Use the source the checkpoint was made with, or start this query on a new checkpoint location`,
        { details: { offset } },
      );
    if (typeof o !== 'object' || Array.isArray(o) || o.v !== 1 || typeof o.shards !== 'object' || o.shards === null || Array.isArray(o.shards)) throw bad('wrong shape');
    if (o.stream !== this.stream) {
      throw new CheckpointMismatchError(
        `${what} offset was written for Kinesis stream ${JSON.stringify(o.stream)}, but this source reads ${this.stream}: sequence numbers of one stream mean nothing in another. Point the query at ${JSON.stringify(o.stream)}, or start it on a new checkpoint location`,
        { details: { offset } },
      );
    }
    if (o.fromMs !== undefined && !Number.isFinite(o.fromMs)) throw bad('fromMs is not a number');
    for (const [id, e] of Object.entries(o.shards)) {
      if (!e || typeof e !== 'object') throw bad(`shard ${id} has no position`);
      if (e.after !== null && (typeof e.after !== 'string' || !SEQUENCE.test(e.after))) throw bad(`shard ${id} after is not a sequence number`);
      if (e.next !== undefined && (typeof e.next !== 'string' || !SEQUENCE.test(e.next))) throw bad(`shard ${id} next is not a sequence number`);
    }
    return o;
  }

  private parseTarget(target: Json): KinesisTarget {
    const t = target as unknown as KinesisTarget;
    if (!t || typeof t !== 'object' || t.v !== 1 || typeof t.untilMs !== 'number' || t.stream !== this.stream) {
      throw new CheckpointMismatchError(
        `target ${JSON.stringify(target).slice(0, 300)} is not this Kinesis source's target {"v": 1, "stream": "${this.stream}", "untilMs": ...}: pass what latestOffset returned`,
      );
    }
    return t;
  }
}

/**
 * The Kinesis source options a query's `readStream....option(...)` may carry, as
 * KinesisSourceOptions (for the pipeline wiring): `startingPosition` (or Databricks'
 * `initialPosition`): "trim_horizon" / "earliest", "latest", or a timestamp (epoch ms or ISO
 * text); `failOnDataLoss`; `arrivalTimeColumn`; `maxRecordsPerFetch` (GetRecords Limit).
 */
export function kinesisOptionsFromSpec(options: Readonly<Record<string, string | number | boolean>>): Partial<KinesisSourceOptions> {
  const out: { -readonly [K in keyof KinesisSourceOptions]?: KinesisSourceOptions[K] } = {};
  const pos = options.startingPosition ?? options.initialPosition;
  if (pos !== undefined) {
    const text = String(pos).trim();
    const lower = text.toLowerCase();
    if (lower === 'trim_horizon' || lower === 'earliest') out.startingPosition = 'TRIM_HORIZON';
    else if (lower === 'latest') out.startingPosition = 'LATEST';
    else {
      const ms = typeof pos === 'number' ? pos : /^\d+$/.test(text) ? Number(text) : Date.parse(text);
      if (!Number.isFinite(ms)) {
        throw new InvalidOptionError(`Kinesis option startingPosition ${JSON.stringify(pos)} is not trim_horizon, latest or a timestamp: use one of those (a timestamp as epoch ms or ISO 8601)`);
      }
      out.startingPosition = { atTimestamp: ms };
    }
  }
  if (options.failOnDataLoss !== undefined) {
    const v = options.failOnDataLoss;
    if (v === true || v === 'true') out.failOnDataLoss = true;
    else if (v === false || v === 'false') out.failOnDataLoss = false;
    else throw new InvalidOptionError(`Kinesis option failOnDataLoss ${JSON.stringify(v)} must be true or false`);
  }
  if (options.arrivalTimeColumn !== undefined) out.arrivalTimeColumn = String(options.arrivalTimeColumn);
  if (options.maxRecordsPerFetch !== undefined) out.maxRecordsPerCall = Number(options.maxRecordsPerFetch);
  return out;
}

// ---------------------------------------------------------------------------------- helpers

interface Page {
  readonly records: KRecord[];
  readonly next: string | null;
  readonly millisBehind: number;
  readonly sentAtMs: number;
}

function newCursor(shardId: string, from: KinesisShardOffset | undefined, fromMs: number | undefined, mode: { untilMs?: number; stopAfter?: string }): Cursor {
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

function bufferedCount(c: Cursor): number {
  return c.buffer.length - c.head;
}

function takeHead(c: Cursor): void {
  c.bufferedBytes -= c.buffer[c.head].data.byteLength;
  c.head++;
  if (c.head === c.buffer.length) {
    c.buffer = [];
    c.head = 0;
  } else if (c.head > 4096 && c.head * 2 > c.buffer.length) {
    c.buffer = c.buffer.slice(c.head);
    c.head = 0;
  }
}

function toRecord(r: SdkRecord): KRecord {
  return { seq: r.SequenceNumber!, data: r.Data ?? new Uint8Array(0), arrivalMs: r.ApproximateArrivalTimestamp?.getTime() ?? 0 };
}

/** Compares two sequence numbers (decimal strings of up to 128 bits) as numbers. */
export function compareSeq(a: string, b: string): number {
  if (a.length !== b.length && !a.startsWith('0') && !b.startsWith('0')) return a.length < b.length ? -1 : 1;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function checkStartingPosition(p: StartingPosition): StartingPosition {
  if (p === 'TRIM_HORIZON' || p === 'LATEST') return p;
  if (p && typeof p === 'object' && typeof p.atTimestamp === 'number' && Number.isFinite(p.atTimestamp) && p.atTimestamp >= 0) return p;
  throw new InvalidOptionError(
    `KinesisSource startingPosition ${JSON.stringify(p)} is not 'TRIM_HORIZON', 'LATEST' or { atTimestamp: <epoch ms> }: pick one (it applies only when the checkpoint has no position yet)`,
  );
}

function checkLimit(v: number | undefined, name: string): number {
  if (v === undefined) return Infinity;
  if (typeof v !== 'number' || !(v > 0)) throw new InvalidOptionError(`${name} ${v} must be a positive number; leave it out for no limit`);
  return v;
}

function intOption(v: number | undefined, dflt: number, min: number, max: number, name: string, rule: string): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < min || v > max) throw new InvalidOptionError(`KinesisSource ${name} ${v} must be an integer from ${min} to ${max} (${rule})`);
  return v;
}

function positiveOption(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !(v > 0)) throw new InvalidOptionError(`KinesisSource ${name} ${v} must be a positive number; leave it out for the default ${dflt}`);
  return v;
}

function nonNegativeOption(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new InvalidOptionError(`KinesisSource ${name} ${v} must be a number >= 0; leave it out for the default ${dflt}`);
  return v;
}

const RETRIABLE = new Set([
  'ProvisionedThroughputExceededException',
  'LimitExceededException',
  'KMSThrottlingException',
  'ThrottlingException',
  'InternalFailure',
  'InternalFailureException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'RequestTimeout',
  'TimeoutError',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
]);

function isRetriable(e: unknown): boolean {
  const status = httpStatus(e);
  if (status !== undefined && status >= 500) return true;
  if (RETRIABLE.has(errorName(e))) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRIABLE.has(code);
}

/** GetShardIterator's answer to a sequence number the shard no longer (or never) held. */
function isMissingSequence(e: unknown): boolean {
  const name = errorName(e);
  return (name === 'InvalidArgumentException' || name === 'ResourceNotFoundException') && /sequence ?number/i.test(errorMessage(e));
}


function attemptsOf(e: unknown): number | undefined {
  return (e as { $metadata?: { attempts?: number } } | null)?.$metadata?.attempts;
}
