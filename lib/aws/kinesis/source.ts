/**
 * A Kinesis data stream as a replayable streaming source: every record's Data is one JSON object,
 * parsed with the query's declared schema, or a KPL-aggregated record (kpl.ts) whose user records
 * are one JSON object each. Data that is not UTF-8 is a dead letter (Spark flags it corrupt). An
 * aggregated record is one record for the offsets and for maxRecordsPerTrigger: it is read whole
 * by one batch, and its user records' dead letters carry its sequence number and their
 * subSequenceNumber. The parts:
 *
 *     offsets.ts       the per-shard positions in the checkpoint (encode, decode, compare)
 *     options.ts       options, defaults and their checks (at construction, before any request)
 *     shard-reader.ts  ListShards, iterators, GetRecords paging and pacing, retries
 *     data-loss.ts     the checks that records expired unread, and failOnDataLoss
 *     source.ts        this file: the Source port, the run's batches planned round robin over the shards
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
 */
import { isUtf8 } from 'node:buffer';
import { CheckpointMismatchError } from '../../engine/errors';
import type { BatchLimits, Json, DeadLetter, ReadOptions, ReadResult, Row, Source, SourceLocation } from '../../engine/ports';
import type { SourceBacklog } from '../../engine/progress';
import type { Schema } from '../../engine/schema';
import { LineParsers, type LineParser } from '../../engine/json-scan';
import { ChunkBuilder, INVALID_UTF8_REASON } from '../../engine/lines';
import { splitOf } from '../../engine/splits';
import { microsFromMillis } from '../../engine/timestamps';
import { deaggregate, MalformedAggregateError, type UserRecord } from './kpl';
import { DataLossChecks } from './data-loss';
import {
  compareSeq,
  decodeInitialPosition,
  decodeOffset,
  decodeTarget,
  encodeInitialPosition,
  encodeOffset,
  encodeTarget,
  INITIAL_LOG,
  type KinesisOffset,
  type KinesisShardOffset,
} from './offsets';
import { batchLimit, kinesisSettings, type KinesisSettings, type KinesisSourceOptions } from './options';
import { kinesisIdentity } from '../source-identity';
import {
  bufferedCount,
  newCursor,
  newStats,
  ShardReader,
  takeAll,
  takeHead,
  type KinesisRecord,
  type KinesisSourceStats,
  type ListedShard,
  type ShardCursor,
} from './shard-reader';

export { kinesisOptionsFromSpec } from './options';
export type { KinesisSender, KinesisSourceOptions } from './options';
export type { KinesisOffset, KinesisShardOffset } from './offsets';
export type { KinesisSourceStats } from './shard-reader';

/** What one availableNow run knows once it listed the shards. */
interface RunState {
  readonly untilMs: number;
  readonly listing: Map<string, ListedShard>;
  /** Listed shard IDs in creation order (parents before children). */
  readonly order: string[];
  /** Shards lost as a whole and accepted (failOnDataLoss false): dropped from the next end offset. */
  readonly lostShards: Set<string>;
  /** JSON of the offset the cursors continue from. */
  cursorsAt: string;
  cursors: Map<string, ShardCursor>;
}

interface PlannedBatch {
  readonly startKey: string;
  readonly endKey: string;
  readonly shards: Array<[string, KinesisRecord[]]>;
}

export class KinesisSource implements Source {
  readonly description: string;
  private readonly settings: KinesisSettings;
  private readonly stream: string;
  /** The declared schema without the arrival-time column (filled from the record, not the payload). */
  private readonly rowSchema: Schema;
  private readonly parsers: LineParsers;
  private readonly counts: KinesisSourceStats = newStats();
  private readonly dataLoss: DataLossChecks;
  private readonly reader: ShardReader;
  private run: RunState | null = null;
  private readonly planned = new Map<number, PlannedBatch>();
  /** LATEST resolved by this instance (logged in the checkpoint too). */
  private resolvedFromMs: number | undefined;
  /** Whether the arrival-time column is a TIMESTAMP (epoch µs, as every TIMESTAMP value) rather than a LONG of epoch ms. */
  private readonly arrivalAsMicros: boolean;

  constructor(opts: KinesisSourceOptions) {
    const settings = kinesisSettings(opts);
    this.settings = settings;
    this.stream = settings.stream;
    const arrival = settings.arrivalColumn;
    this.rowSchema = arrival === null ? settings.schema : { ddl: settings.schema.ddl, columns: settings.schema.columns.filter((c) => c.name !== arrival) };
    this.arrivalAsMicros = settings.schema.columns.find((c) => c.name === arrival)?.type !== 'LONG';
    this.parsers = new LineParsers(this.rowSchema);
    this.dataLoss = new DataLossChecks(settings, this.counts);
    this.reader = new ShardReader(settings, this.counts, this.dataLoss);
    this.description = kinesisIdentity(this.stream);
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
    const startOffset = decodeOffset(start, this.stream, 'start');
    const fromMs = startOffset ? startOffset.fromMs : await this.initialFromMs();
    const run = await this.newRun(startOffset, this.settings.clock.now());
    return encodeTarget(this.stream, run.untilMs, fromMs) as unknown as Json;
  }

  async planBatch(batchId: number, start: Json | null, target: Json, limits: BatchLimits): Promise<Json | null> {
    const startOffset = decodeOffset(start, this.stream, 'start');
    const decodedTarget = decodeTarget(target, this.stream);
    const maxRecords = batchLimit(limits.maxRecordsPerTrigger, 'maxRecordsPerTrigger');
    const maxBytes = Math.min(batchLimit(limits.maxBytesPerTrigger, 'maxBytesPerTrigger'), this.settings.maxBufferedBytes);
    const fromMs = startOffset ? startOffset.fromMs : decodedTarget.fromMs;
    const run = this.run && this.run.untilMs === decodedTarget.untilMs ? this.run : await this.newRun(startOffset, decodedTarget.untilMs);
    const startKey = JSON.stringify(start);
    if (run.cursorsAt !== startKey) {
      run.cursors = new Map();
      run.cursorsAt = startKey;
    }
    try {
      return await this.plan(run, batchId, startOffset, startKey, fromMs, maxRecords, maxBytes);
    } catch (e) {
      // The cursors may have handed records to a batch that never came back: start over.
      run.cursors = new Map();
      run.cursorsAt = '';
      throw e;
    }
  }

  private async plan(
    run: RunState,
    batchId: number,
    start: KinesisOffset | null,
    startKey: string,
    fromMs: number | undefined,
    maxRecords: number,
    maxBytes: number,
  ): Promise<Json | null> {
    // The shards' positions as the batch moves them, in an order where parents come first.
    const working = new Map<string, KinesisShardOffset>(Object.entries(start?.shards ?? {}));
    let changed = false;
    for (const id of run.lostShards) if (working.delete(id)) changed = true;
    const taken = new Map<string, KinesisRecord[]>();
    const full = new Set<string>();
    let records = 0;
    let bytes = 0;
    const budgetLeft = () => records < maxRecords && bytes < maxBytes;

    // Round robin: each round splits what is left of the record budget evenly over the shards
    // that can still give records; shards that run dry leave their share to the next round.
    while (budgetLeft()) {
      const active = run.order.filter((id) => !full.has(id) && this.readable(run, id, working) && !exhausted(run.cursors.get(id)));
      if (active.length === 0) break;
      const shift = batchId % active.length;
      const rotated = active.slice(shift).concat(active.slice(0, shift));
      const share = maxRecords === Infinity ? Infinity : Math.max(1, Math.floor((maxRecords - records) / rotated.length));
      let progressed = false;
      for (const id of rotated) {
        if (!budgetLeft()) break;
        const cursor = this.cursorFor(run, id, working.get(id), fromMs);
        let quota = Math.min(share, maxRecords - records);
        if (bufferedCount(cursor) === 0 && !cursor.caughtUp) {
          await this.reader.fetch(cursor, this.limitFor(run, quota));
          progressed = true;
        }
        while (quota > 0 && bufferedCount(cursor) > 0 && budgetLeft()) {
          const size = cursor.buffer[cursor.head].data.byteLength;
          if (records > 0 && bytes + size > maxBytes) {
            full.add(id);
            break;
          }
          let list = taken.get(id);
          if (!list) taken.set(id, (list = []));
          list.push(takeHead(cursor));
          records++;
          bytes += size;
          quota--;
          progressed = true;
        }
        if (cursor.ended && bufferedCount(cursor) === 0 && !working.get(id)?.done) {
          // Closed and read to its end: done, and its children become readable.
          working.set(id, { after: taken.get(id)?.at(-1)?.seq ?? working.get(id)?.after ?? null, done: true });
          changed = true;
          progressed = true;
        }
      }
      if (!progressed) break;
    }

    for (const [id, shardRecords] of taken) {
      const cursor = run.cursors.get(id)!;
      const previous = working.get(id);
      const entry: { -readonly [K in keyof KinesisShardOffset]: KinesisShardOffset[K] } = { after: shardRecords[shardRecords.length - 1].seq };
      if (previous?.done) entry.done = true;
      else if (bufferedCount(cursor) > 0) entry.next = cursor.buffer[cursor.head].seq;
      else if (cursor.pastTarget !== undefined) entry.next = cursor.pastTarget;
      else if (cursor.tipAtMs !== undefined) entry.tipMs = cursor.tipAtMs;
      working.set(id, entry);
      changed = true;
    }
    for (const [id, cursor] of run.cursors) {
      if (cursor.resetToTrimHorizon && !taken.has(id) && working.get(id)?.after != null && !working.get(id)?.done) {
        working.set(id, { after: null });
        changed = true;
      }
    }
    if (!changed) return null;
    // Finished and then forgotten: a done shard that ListShards no longer lists has expired.
    for (const [id, position] of working) if (position.done && !run.listing.has(id)) working.delete(id);

    const end = encodeOffset(this.stream, fromMs, working);
    const endKey = JSON.stringify(end);
    for (const id of this.planned.keys()) if (id < batchId) this.planned.delete(id);
    this.planned.set(batchId, { startKey, endKey, shards: [...working.keys()].filter((id) => taken.has(id)).map((id) => [id, taken.get(id)!]) });
    run.cursorsAt = endKey;
    for (const cursor of run.cursors.values()) cursor.resetToTrimHorizon = false;
    return end as unknown as Json;
  }

  /** A partitioned run's splits of the batch: contiguous groups of the shards it moves, at most one a shard. */
  async planSplits(_batchId: number, start: Json | null, end: Json, maxSplits: number): Promise<number> {
    const endOffset = decodeOffset(end, this.stream, 'end');
    if (!endOffset) return 1;
    return Math.max(1, Math.min(maxSplits, movingShards(decodeOffset(start, this.stream, 'start'), endOffset).length));
  }

  /** The whole batch at once: the chunks of `readChunks`, concatenated. */
  async read(batchId: number, start: Json | null, end: Json, options?: ReadOptions): Promise<ReadResult> {
    const rows: Row[] = [];
    const deadLetters: DeadLetter[] = [];
    let bytes = 0;
    for await (const chunk of this.readChunks(batchId, start, end, options)) {
      for (const row of chunk.rows) rows.push(row);
      for (const dead of chunk.deadLetters) deadLetters.push(dead);
      bytes += chunk.bytes;
    }
    return { rows, deadLetters, bytes };
  }

  /**
   * The batch a shard at a time (parents before children), each shard's rows in sequence order:
   * from memory when this instance planned it, else read again from Kinesis (a page per chunk).
   */
  async *readChunks(batchId: number, start: Json | null, end: Json, options?: ReadOptions): AsyncIterable<ReadResult> {
    const startOffset = decodeOffset(start, this.stream, 'start');
    const endOffset = decodeOffset(end, this.stream, 'end');
    if (!endOffset) return;
    const parse = this.parsers.for(options?.columns);
    // a partitioned run's read task takes a contiguous group of the batch's moving shards (parents first)
    const mine = options?.split ? new Set(splitOf(movingShards(startOffset, endOffset), options.split)) : null;
    const planned = this.planned.get(batchId);
    if (planned && planned.startKey === JSON.stringify(start) && planned.endKey === JSON.stringify(end)) {
      for (const [id, records] of planned.shards) if (!mine || mine.has(id)) yield* this.toChunks(id, records, parse);
      return;
    }
    const fromMs = startOffset ? startOffset.fromMs : endOffset.fromMs;
    for (const [id, endPosition] of Object.entries(endOffset.shards)) {
      const startPosition = startOffset?.shards[id];
      if (endPosition.after === null || (startPosition && startPosition.after === endPosition.after)) continue;
      if (mine && !mine.has(id)) continue;
      if (startPosition?.after != null && compareSeq(endPosition.after, startPosition.after) < 0) {
        throw new CheckpointMismatchError(
          `batch ${batchId} of ${this.description} ends shard ${id} at sequence number ${endPosition.after}, before its start ${startPosition.after}, so the offsets log is damaged: restore it, or start the query on a new checkpoint location`,
          { details: { batchId, shardId: id } },
        );
      }
      yield* this.replayShard(batchId, id, startPosition, endPosition.after, fromMs, parse);
    }
  }

  /**
   * Records between `from` and `target` that this run has fetched and not yet put in a batch (a
   * lower bound when a shard has not been read up to the target yet), and how far behind the
   * stream's tip the reads are: per shard read this run, its last GetRecords page's
   * MillisBehindLatest plus the arrival span of the records still buffered before that page's
   * end; the largest over the shards. Nothing is requested: it is what the run's reads told.
   */
  async backlog(from: Json | null, target: Json | null): Promise<SourceBacklog> {
    if (target === null) return { records: 0 };
    const decodedTarget = decodeTarget(target, this.stream);
    const run = this.run;
    if (!run || run.untilMs !== decodedTarget.untilMs || run.cursorsAt !== JSON.stringify(from)) return { records: 0 };
    let records = 0;
    let behind: number | undefined;
    for (const cursor of run.cursors.values()) {
      const buffered = bufferedCount(cursor);
      records += buffered;
      if (cursor.millisBehindLatest === undefined) continue;
      const span = buffered > 0 ? cursor.buffer[cursor.buffer.length - 1].arrivalMs - cursor.buffer[cursor.head].arrivalMs : 0;
      behind = Math.max(behind ?? 0, cursor.millisBehindLatest + Math.max(0, span));
    }
    return { records, ...(behind !== undefined ? { millisBehindLatest: behind } : {}) };
  }

  // -------------------------------------------------------------------------------- the run

  /** LATEST or AT_TIMESTAMP as `fromMs` (LATEST: "now", fixed once in the checkpoint). */
  private async initialFromMs(): Promise<number | undefined> {
    const position = this.settings.startingPosition;
    if (position === 'TRIM_HORIZON') return undefined;
    if (position !== 'LATEST') return position.atTimestamp;
    if (this.resolvedFromMs !== undefined) return this.resolvedFromMs;
    const checkpoint = this.settings.checkpoint!;
    const sourceIndex = this.settings.sourceIndex;
    const text = await checkpoint.readSourceLog(sourceIndex, INITIAL_LOG);
    if (text !== null) {
      const logged = decodeInitialPosition(text, this.stream);
      if (logged === null) {
        throw new CheckpointMismatchError(
          `${checkpoint.description}/sources/${sourceIndex}/${INITIAL_LOG} (${text.slice(0, 80)}) is not stream ${this.stream}'s starting position: delete it to start at LATEST again, or use the checkpoint this query was started with`,
        );
      }
      return (this.resolvedFromMs = logged);
    }
    const fromMs = this.settings.clock.now();
    await checkpoint.writeSourceLog(sourceIndex, INITIAL_LOG, encodeInitialPosition(this.stream, fromMs));
    return (this.resolvedFromMs = fromMs);
  }

  /** Lists the shards and checks the start offset's shards still exist. */
  private async newRun(start: KinesisOffset | null, untilMs: number): Promise<RunState> {
    const shards = await this.reader.listShards();
    const listing = new Map(shards.map((shard) => [shard.id, shard]));
    const run: RunState = {
      untilMs,
      listing,
      order: shards.map((shard) => shard.id),
      lostShards: this.dataLoss.expiredShards(start, listing),
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
    for (const parent of shard.parents) {
      const parentPosition = working.get(parent);
      if (parentPosition ? !parentPosition.done : run.listing.has(parent)) return false;
    }
    return true;
  }

  private cursorFor(run: RunState, id: string, from: KinesisShardOffset | undefined, fromMs: number | undefined): ShardCursor {
    let cursor = run.cursors.get(id);
    if (!cursor) {
      cursor = newCursor(id, from, fromMs, { untilMs: run.untilMs });
      run.cursors.set(id, cursor);
    }
    return cursor;
  }

  /** GetRecords Limit: a full page while the buffers are small, else only what the batch needs. */
  private limitFor(run: RunState, quota: number): number {
    const { recordsPerCall, maxBufferedBytes } = this.settings;
    let buffered = 0;
    for (const cursor of run.cursors.values()) buffered += cursor.bufferedBytes;
    if (buffered < maxBufferedBytes) return recordsPerCall;
    return Math.max(1, Math.min(recordsPerCall, quota));
  }

  // ------------------------------------------------------------------------------- reading

  /** Reads (start, end] of one shard again from Kinesis, a GetRecords page per chunk. */
  private async *replayShard(
    batchId: number,
    id: string,
    from: KinesisShardOffset | undefined,
    endSeq: string,
    fromMs: number | undefined,
    parse: LineParser,
  ): AsyncIterable<ReadResult> {
    const cursor = newCursor(id, from, fromMs, { stopAfter: endSeq });
    while (!cursor.caughtUp) {
      await this.reader.fetch(cursor, this.settings.recordsPerCall);
      if (bufferedCount(cursor) > 0) yield* this.toChunks(id, takeAll(cursor), parse);
    }
    if (!cursor.reachedStop && !cursor.resetToTrimHorizon) this.dataLoss.replayEndMissing(batchId, id, endSeq);
  }

  /**
   * The records as chunks of at most CHUNK_LINES rows and dead letters (lib/engine/lines.ts: rows
   * die young, and a chunk's dead letters come before its rows, so they stay in record order).
   */
  private *toChunks(shardId: string, records: KinesisRecord[], parse: LineParser): Generator<ReadResult> {
    const out = new ChunkBuilder();
    for (const record of records) {
      out.bytes += record.data.byteLength;
      let users: UserRecord[] | null;
      try {
        users = deaggregate(record.data);
      } catch (e) {
        if (!(e instanceof MalformedAggregateError)) throw e;
        const before = out.dead({ source: { shardId, sequenceNumber: record.seq }, raw: asText(record.data), reason: malformedAggregateReason(e) });
        if (before !== null) yield before;
        continue;
      }
      if (users === null) {
        const before = this.parseRecord(record.data, { shardId, sequenceNumber: record.seq }, record.arrivalMs, parse, out);
        if (before !== null) yield before;
      } else {
        for (const user of users) {
          const where = { shardId, sequenceNumber: record.seq, subSequenceNumber: user.subSequenceNumber };
          const before = this.parseRecord(user.data, where, record.arrivalMs, parse, out);
          if (before !== null) yield before;
        }
      }
      const full = out.full();
      if (full !== null) yield full;
    }
    const last = out.take();
    if (last.rows.length + last.deadLetters.length > 0 || last.bytes > 0) yield last;
  }

  /**
   * One JSON record (a Kinesis record's data, or a user record of an aggregated one) into a row or
   * a dead letter of `out`; returns the chunk to yield before it, as ChunkBuilder.dead does.
   */
  private parseRecord(data: Uint8Array, where: SourceLocation, arrivalMs: number, parse: LineParser, out: ChunkBuilder): ReadResult | null {
    const text = asText(data);
    const reason = isUtf8(data) ? parse.into(text, out.rows) : INVALID_UTF8_REASON;
    if (reason !== null) return out.dead({ source: where, raw: text, reason });
    if (this.settings.arrivalColumn !== null)
      out.rows[out.rows.length - 1][this.settings.arrivalColumn] = this.arrivalAsMicros ? microsFromMillis(arrivalMs) : arrivalMs;
    return null;
  }
}

function asText(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
}

function malformedAggregateReason(e: MalformedAggregateError): string {
  return `KPL-aggregated record cannot be read (${e.message}): its magic prefix and digest are the KPL's but its protobuf is damaged, so fix or upgrade the producer's KPL`;
}

/** The cursor has fetched up to the target (or the tip) and handed out everything, and the shard is still open. */
function exhausted(cursor: ShardCursor | undefined): boolean {
  return cursor?.caughtUp === true && bufferedCount(cursor) === 0 && !cursor.ended;
}

/** The shards a batch moves (in its end offset's order, parents first): those a read covers. */
function movingShards(start: KinesisOffset | null, end: KinesisOffset): string[] {
  const out: string[] = [];
  for (const [id, endPosition] of Object.entries(end.shards)) {
    const startPosition = start?.shards[id];
    if (endPosition.after === null || (startPosition && startPosition.after === endPosition.after)) continue;
    out.push(id);
  }
  return out;
}
