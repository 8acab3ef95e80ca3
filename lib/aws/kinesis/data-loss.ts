/**
 * Data loss: a position is lost when its record expired (retention) before the query read past
 * it. Detection works on AWS and on kinesis-mock, without trusting either to fail loudly:
 *
 * 1. A shard in the offsets, not done, that ListShards no longer lists: it closed and expired
 *    ({@link DataLossChecks.expiredShards}).
 * 2. `after` no longer in the shard: GetShardIterator AT_SEQUENCE_NUMBER `after` fails (AWS:
 *    InvalidArgumentException, kinesis-mock: ResourceNotFoundException, {@link isMissingSequence}),
 *    or its first record is not `after`. The shard reader then reads the trim horizon
 *    (TRIM_HORIZON) and its first record h decides: h <= after: nothing expired (resume after
 *    `after`); else {@link DataLossChecks.trimmedPosition}: with `next` known, records were lost
 *    iff h > next; with `tipMs` known, none were lost iff `tipMs` is younger than the retention
 *    period (minus a clock-skew margin): records after `after` arrived after tipMs and Kinesis
 *    never trims a record younger than the retention; with neither, loss is assumed.
 * 3. A replay that cannot reach its logged end sequence number ({@link DataLossChecks.replayEndMissing}).
 *
 * By default a loss throws DataLossError naming the shard and the position, so that it does not
 * go unnoticed; with `failOnDataLoss: false` the shard continues from its trim horizon,
 * `stats().dataLossEvents` counts it and `log` receives a `kinesis-data-loss` event with the
 * skipped range (Kinesis cannot count records between two sequence numbers, so the range is given
 * as sequence numbers).
 */
import { DataLossError } from '../../engine/errors';
import type { Clock } from '../../engine/ports';
import { errorMessage, errorName } from '../request/errors';
import { compareSeq, type KinesisOffset, type KinesisShardOffset } from './offsets';

export interface DataLossSettings {
  readonly stream: string;
  readonly failOnDataLoss: boolean;
  readonly clockSkewMarginMs: number;
  readonly clock: Clock;
  readonly log: (event: Record<string, unknown>) => void;
}

/** GetShardIterator's answer to a sequence number the shard no longer (or never) held. */
export function isMissingSequence(e: unknown): boolean {
  const name = errorName(e);
  return (name === 'InvalidArgumentException' || name === 'ResourceNotFoundException') && /sequence ?number/i.test(errorMessage(e));
}

export class DataLossChecks {
  constructor(
    private readonly settings: DataLossSettings,
    private readonly counts: { dataLossEvents: number },
  ) {}

  /**
   * Check 1: the shards of `start` that are not done and no longer listed. With failOnDataLoss
   * false they are returned, to be dropped from the next end offset.
   */
  expiredShards(start: KinesisOffset | null, listed: ReadonlyMap<string, unknown>): Set<string> {
    const lost = new Set<string>();
    for (const [id, position] of Object.entries(start?.shards ?? {})) {
      if (position.done || listed.has(id)) continue;
      const at = position.after === null ? 'its start' : `after sequence number ${position.after}`;
      this.report(
        `shard ${id} is in the checkpoint (${at}) but no longer listed, so it closed and its records expired before the query read them all`,
        'forget the shard and continue with its child shards',
        { shardId: id, after: position.after, kind: 'shard-expired' },
      );
      lost.add(id);
    }
    return lost;
  }

  /**
   * Check 2: `from.after` is older than the shard's trim horizon (`horizon`, its oldest record,
   * null when none is left, and newer than `after`). Returns true when records were lost (and
   * failOnDataLoss is false): the shard then continues from the trim horizon.
   */
  async trimmedPosition(
    shardId: string,
    from: KinesisShardOffset & { after: string },
    horizon: string | null,
    retentionMs: () => Promise<number>,
  ): Promise<boolean> {
    let lost: boolean;
    let why: string;
    if (from.next !== undefined) {
      lost = horizon === null || compareSeq(horizon, from.next) > 0;
      why = `the record after it was ${from.next}`;
    } else if (from.tipMs !== undefined) {
      const retention = await retentionMs();
      lost = !(from.tipMs - this.settings.clockSkewMarginMs > this.settings.clock.now() - retention);
      why = `it was the shard's last record at ${new Date(from.tipMs).toISOString()}, retention ${retention / 3_600_000} h`;
    } else {
      lost = true;
      why = 'what followed it is unknown';
    }
    const after = from.after;
    if (!lost) {
      this.settings.log({ event: 'kinesis-position-trimmed', stream: this.settings.stream, shardId, after, resumedAt: horizon, lost: false, why });
      return false;
    }
    const hours = (await retentionMs()) / 3_600_000;
    this.report(
      `shard ${shardId}'s checkpointed position (after sequence number ${after}) is older than its trim horizon (${horizon === null ? 'no record is left' : `the oldest record left is ${horizon}`})`,
      'continue from the trim horizon',
      { shardId, after, resumedAt: horizon, knownNext: from.next ?? null, why, kind: 'position-trimmed' },
      `run the query within the retention (${hours} h) or raise it`,
    );
    return true;
  }

  /** Check 3: a replay of batch `batchId` ended before the batch's last record `endSeq` on `shardId`. */
  replayEndMissing(batchId: number, shardId: string, endSeq: string): void {
    this.report(
      `batch ${batchId} cannot be replayed exactly, as shard ${shardId} no longer holds its last record (sequence number ${endSeq}), which expired before the replay`,
      'replay what is left of the batch',
      { shardId, batchId, endSequenceNumber: endSeq, kind: 'replay-end-missing' },
    );
  }

  /** Counts and logs a loss; throws DataLossError unless failOnDataLoss is false. */
  private report(what: string, skipAction: string, details: Record<string, unknown>, remedy?: string): void {
    const { stream, failOnDataLoss } = this.settings;
    this.counts.dataLossEvents++;
    this.settings.log({ event: 'kinesis-data-loss', stream, failOnDataLoss, ...details });
    if (failOnDataLoss) {
      throw new DataLossError(`Kinesis stream ${stream}: ${what}: ${remedy ? `${remedy}, or ` : ''}set failOnDataLoss: false to ${skipAction}`, {
        details: { stream, ...details },
      });
    }
  }
}
