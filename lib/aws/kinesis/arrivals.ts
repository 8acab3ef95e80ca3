/**
 * Samples the lateness of a Kinesis stream for `sluice lateness`: each row's arrival is its
 * record's ApproximateArrivalTimestamp, its event time the given column of the record's JSON.
 *
 *     ListShards (closed parents too: their records may be inside --since)
 *     each shard: AT_TIMESTAMP since (TRIM_HORIZON when --since reaches past retention), up to now
 *     GetRecords round robin over the shards, one page each, paced and retried by the source's
 *     ShardReader, until `sample` rows are taken or every shard is read to now
 *
 * Kinesis reads forward only, so with a cap the sample is the oldest rows after --since; a
 * shorter --since samples more recent data. KPL-aggregated records are split into their user
 * records (each with the aggregate's arrival time); what cannot be read is counted with its reason.
 */
import { InvalidOptionError } from '../../engine/errors';
import { parseSchema } from '../../engine/schema';
import { LatenessSampler, type ArrivalSample } from '../../observe/lateness';
import { DataLossChecks } from './data-loss';
import { deaggregate, MalformedAggregateError, type UserRecord } from './kpl';
import { kinesisSettings, MAX_RECORDS_PER_CALL, type KinesisSender } from './options';
import { newCursor, newStats, ShardReader, takeAll, type ShardCursor } from './shard-reader';

export interface KinesisArrivalsOptions {
  readonly client: KinesisSender;
  readonly streamName: string;
  readonly column: string;
  /** Read records that arrived at or after this instant (epoch ms). */
  readonly sinceMs: number;
  /** Up to records that arrived by this instant (epoch ms). @default Date.now() */
  readonly untilMs?: number;
  /** At most this many rows (readable or not). */
  readonly sample: number;
}

export async function sampleKinesisArrivals(opts: KinesisArrivalsOptions): Promise<ArrivalSample> {
  if (!Number.isSafeInteger(opts.sample) || opts.sample <= 0) {
    throw new InvalidOptionError(`--sample ${opts.sample} must be a positive integer: give the number of rows to measure, e.g. 100000`);
  }
  const settings = kinesisSettings({
    client: opts.client,
    streamName: opts.streamName,
    schema: parseSchema(`${opts.column} TIMESTAMP`),
    failOnDataLoss: false,
  });
  const stats = newStats();
  const reader = new ShardReader(settings, stats, new DataLossChecks(settings, stats));
  const untilMs = opts.untilMs ?? Date.now();
  const shards = await reader.listShards();
  const cursors: ShardCursor[] = shards.map((s) => newCursor(s.id, undefined, opts.sinceMs, { untilMs }));
  const sampler = new LatenessSampler(opts.column, opts.sample);
  let records = 0;
  const decoder = new TextDecoder('utf-8');
  for (;;) {
    const open = cursors.filter((c) => !c.caughtUp);
    if (open.length === 0 || sampler.full) break;
    for (const cursor of open) {
      if (sampler.full) break;
      await reader.fetch(cursor, MAX_RECORDS_PER_CALL);
      for (const record of takeAll(cursor)) {
        records++;
        const where = `${opts.streamName}/${cursor.shardId} ${record.seq}`;
        let users: UserRecord[] | null;
        try {
          users = deaggregate(record.data);
        } catch (e) {
          if (!(e instanceof MalformedAggregateError)) throw e;
          sampler.unreadable(where, `KPL-aggregated record cannot be read (${e.message})`);
          continue;
        }
        for (const data of users ? users.map((u) => u.data) : [record.data]) sampler.add(decoder.decode(data), record.arrivalMs, where);
      }
    }
  }
  return {
    latenessMs: sampler.latenessMs,
    unreadable: sampler.summary(),
    sampled: `from ${records} records of ${shards.length} shards that arrived since ${new Date(opts.sinceMs).toISOString()}`,
    capped: sampler.full && cursors.some((c) => !c.caughtUp),
  };
}
