/**
 * The Kinesis source's positions as they stand in the checkpoint: offsets, the run's target and
 * the LATEST starting position, encoded, decoded (checked) and compared.
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
 *   the data-loss check (data-loss.ts); reading ignores them.
 *
 * A batch (start, end] is, per shard, the records after start's `after` up to and including end's
 * `after`, compared as BigInt ({@link compareSeq}): a replay stops exactly there, however many
 * records follow.
 *
 * The availableNow target is a time, `{ "v": 1, "stream": ..., "untilMs": <now>, "fromMs"? }`: the
 * records that arrived (ApproximateArrivalTimestamp) by the start of the run.
 *
 * LATEST is fixed once, by the first run, in the checkpoint's `sources/<i>/initial` log:
 * `{ "v": 1, "stream": ..., "startingPosition": "LATEST", "fromMs": <now> }`.
 */
import { CheckpointMismatchError } from '../../engine/errors';
import type { Json } from '../../engine/ports';

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

/** The source log that holds the LATEST position fixed by the first run. */
export const INITIAL_LOG = 'initial';

const SEQUENCE = /^\d{1,80}$/;

/** Compares two sequence numbers (decimal strings of up to 128 bits) as numbers. */
export function compareSeq(a: string, b: string): number {
  if (a.length !== b.length && !a.startsWith('0') && !b.startsWith('0')) return a.length < b.length ? -1 : 1;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function encodeOffset(stream: string, fromMs: number | undefined, shards: ReadonlyMap<string, KinesisShardOffset>): KinesisOffset {
  return { v: 1, stream, ...(fromMs !== undefined ? { fromMs } : {}), shards: Object.fromEntries(shards) };
}

export function encodeTarget(stream: string, untilMs: number, fromMs: number | undefined): KinesisTarget {
  return { v: 1, stream, untilMs, ...(fromMs !== undefined ? { fromMs } : {}) };
}

/** `offset` as a Kinesis offset of `stream` (null: no position yet); `what` ("start", "end") names it in errors. */
export function decodeOffset(offset: Json | null | undefined, stream: string, what: string): KinesisOffset | null {
  if (offset === null || offset === undefined) return null;
  const decoded = offset as unknown as KinesisOffset;
  const bad = (why: string) =>
    new CheckpointMismatchError(
      `${what} offset ${JSON.stringify(offset).slice(0, 80)} is not a Kinesis offset {"v": 1, "stream": ..., "shards": {...}} (${why}): use the source the checkpoint was made with, or start the query on a new checkpoint location`,
      { details: { offset } },
    );
  if (typeof decoded !== 'object' || Array.isArray(decoded) || decoded.v !== 1) throw bad('wrong shape');
  if (typeof decoded.shards !== 'object' || decoded.shards === null || Array.isArray(decoded.shards)) throw bad('wrong shape');
  if (decoded.stream !== stream) {
    throw new CheckpointMismatchError(
      `${what} offset was written for Kinesis stream ${JSON.stringify(decoded.stream)}, but this source reads ${stream}: point the query at ${JSON.stringify(decoded.stream)}, or start it on a new checkpoint location`,
      { details: { offset } },
    );
  }
  if (decoded.fromMs !== undefined && !Number.isFinite(decoded.fromMs)) throw bad('fromMs is not a number');
  for (const [id, position] of Object.entries(decoded.shards)) {
    if (!position || typeof position !== 'object') throw bad(`shard ${id} has no position`);
    if (position.after !== null && (typeof position.after !== 'string' || !SEQUENCE.test(position.after)))
      throw bad(`shard ${id} after is not a sequence number`);
    if (position.next !== undefined && (typeof position.next !== 'string' || !SEQUENCE.test(position.next)))
      throw bad(`shard ${id} next is not a sequence number`);
  }
  return decoded;
}

/** `target` as the target latestOffset returned for `stream`. */
export function decodeTarget(target: Json, stream: string): KinesisTarget {
  const decoded = target as unknown as KinesisTarget;
  if (!decoded || typeof decoded !== 'object' || decoded.v !== 1 || typeof decoded.untilMs !== 'number' || decoded.stream !== stream) {
    throw new CheckpointMismatchError(
      `target ${JSON.stringify(target).slice(0, 80)} is not this Kinesis source's target {"v": 1, "stream": "${stream}", "untilMs": ...}: pass what latestOffset returned`,
    );
  }
  return decoded;
}

/** The text of the `initial` log for LATEST resolved at `fromMs`. */
export function encodeInitialPosition(stream: string, fromMs: number): string {
  return JSON.stringify({ v: 1, stream, startingPosition: 'LATEST', fromMs });
}

/** The LATEST position logged in `text`, or null when the log is damaged or belongs to another stream. */
export function decodeInitialPosition(text: string, stream: string): number | null {
  let logged: { stream?: unknown; fromMs?: unknown } | null;
  try {
    logged = JSON.parse(text) as { stream?: unknown; fromMs?: unknown };
  } catch {
    return null;
  }
  return logged && typeof logged.fromMs === 'number' && logged.stream === stream ? logged.fromMs : null;
}
