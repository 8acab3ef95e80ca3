/**
 * The landing source's seen logs (sources/<i>/seen-<N>): what the source has read as of each of
 * its offsets, written as a snapshot every COMPACT_EVERY batches and as the files read since the
 * snapshot in between, so that a run reads at most two; the logs below a committed snapshot are
 * deleted. The pure rules of what is new are in seen-files.ts.
 */
import { CheckpointMismatchError } from '../../engine/errors';
import type { CheckpointStore, Json } from '../../engine/ports';
import { type FilesLog, type LoggedFile, parseOffset, type SeenLog } from './landing-logs';
import { compareKeys } from './requests';
import { compacted, emptySeen, inKeyOrder, type SeenFiles } from './seen-files';

/** A snapshot of the seen files every this many of the source's batches (Spark's compactInterval). */
const COMPACT_EVERY = 10;
/** What the source has seen as of an offset, and how its seen log chains. */
export interface SeenAt {
  readonly offset: string;
  readonly seen: SeenFiles;
  /**
   * The seen log of the offset's batch (null: none yet): its depth, the snapshot it adds to, and
   * the files it holds since that snapshot.
   */
  readonly head: { readonly batch: number; readonly depth: number; readonly snapshot: number; readonly delta: ReadonlyArray<readonly [string, number]> } | null;
}

/** The seen logs of one source of a checkpoint; remembers the last offset it read or wrote. */
export class SeenLogs {
  private at: SeenAt | null = null;

  constructor(
    private readonly checkpoint: CheckpointStore,
    private readonly sourceIndex: number,
    /** The file list of a batch of the source (its `start` chains the batches), or null. */
    private readonly filesLog: (batch: number) => Promise<FilesLog | null>,
    private readonly log: (event: Record<string, unknown>) => void,
  ) {}

  /**
   * seen-<N>: a pure function of the start's seen files and the batch's files, so a plan again
   * after a crash writes what is there. A snapshot (files within maxFileAge of the newest) when
   * there is none yet or COMPACT_EVERY logs added to the last one; else the files read since that
   * snapshot, this batch's included, so that a run reads at most two seen logs. Returns what is
   * seen as of batchId (the source's next start).
   */
  async write(batchId: number, at: SeenAt, files: readonly LoggedFile[], maxFileAgeMs: number): Promise<SeenAt> {
    const snapshot = at.head === null || at.head.depth + 1 >= COMPACT_EVERY;
    let newestMs = at.seen.newestMs;
    for (const f of files) if (f.lastModifiedMs > newestMs) newestMs = f.lastModifiedMs;
    const delta: ReadonlyArray<readonly [string, number]> = snapshot
      ? []
      : [...at.head!.delta, ...files.map((f): [string, number] => [f.key, f.lastModifiedMs])];
    const body: SeenLog = {
      version: 2,
      batchId,
      base: snapshot ? null : at.head!.snapshot,
      depth: snapshot ? 0 : at.head!.depth + 1,
      files: snapshot ? compacted({ ...at.seen, newestMs }, maxFileAgeMs, files) : delta,
      newestMs: Number.isFinite(newestMs) ? newestMs : null,
      legacyLastKey: at.seen.legacyLastKey,
    };
    // Deterministic: a body already there came from the same start and files.
    await this.checkpoint.writeSourceLogOnce(this.sourceIndex, `seen-${batchId}`, JSON.stringify(body));
    // what is seen now: the snapshot just written, or the same snapshot with the files since
    const seen: SeenFiles = snapshot ? emptySeen(at.seen.legacyLastKey, body.files) : { ...at.seen, files: new Map(at.seen.files) };
    seen.newestMs = newestMs;
    if (!snapshot) for (const f of files) seen.files.set(f.key, f.lastModifiedMs);
    const head = { batch: batchId, depth: body.depth, snapshot: snapshot ? batchId : at.head!.snapshot, delta };
    this.at = { offset: JSON.stringify({ batch: batchId }), seen, head };
    return this.at;
  }

  /** What was seen as of `start`: in memory when this instance planned it, else from its seen log and that log's snapshot. */
  async as(start: Json | null): Promise<SeenAt> {
    const key = JSON.stringify(start ?? null);
    if (this.at && this.at.offset === key) return this.at;
    const off = parseOffset(start, 'start');
    let at: SeenAt;
    if (off.kind === 'none') at = { offset: key, seen: emptySeen(), head: null };
    else if (off.kind === 'legacy') at = { offset: key, seen: emptySeen(off.lastKey), head: null };
    else {
      const log = await this.readSeenLog(off.batch);
      const snap = log.base === null ? log : await this.readSeenLog(log.base);
      // a snapshot is written in key order (compacted): looked up as it is, never copied into a map
      const base = inKeyOrder(snap.files) ? snap.files : [...snap.files].sort((a, b) => compareKeys(a[0], b[0]));
      const seen = emptySeen(snap.legacyLastKey, base);
      if (log !== snap) for (const [k, ms] of log.files) seen.files.set(k, ms);
      for (const l of [snap, log]) if (l.newestMs !== null && l.newestMs > seen.newestMs) seen.newestMs = l.newestMs;
      at = { offset: key, seen, head: { batch: off.batch, depth: log.depth, snapshot: snap.batchId, delta: log === snap ? [] : log.files } };
    }
    this.at = at;
    return at;
  }

  private async readSeenLog(batch: number): Promise<SeenLog> {
    const text = await this.checkpoint.readSourceLog(this.sourceIndex, `seen-${batch}`);
    if (text === null) {
      throw new CheckpointMismatchError(
        `the seen files of batch ${batch} (${this.checkpoint.description}/sources/${this.sourceIndex}/seen-${batch}) are missing, so the source cannot tell which files it read: ` +
          `restore the object (e.g. from S3 versioning), or start the query on a new checkpoint prefix`,
        { details: { batch } },
      );
    }
    return JSON.parse(text) as SeenLog;
  }

  /** The seen logs a committed snapshot at `batch` makes useless: deleted, best effort. */
  async dropOld(batch: number): Promise<void> {
    if (!this.checkpoint.deleteSourceLog) return;
    // known here without a GET: this instance planned or read the batch's seen log
    const head = this.at?.head;
    if (head && head.batch === batch && head.depth !== 0) return;
    try {
      const text = await this.checkpoint.readSourceLog(this.sourceIndex, `seen-${batch}`);
      const log = text === null ? null : (JSON.parse(text) as SeenLog);
      if (!log || log.base !== null) return;
      const prev = await this.checkpoint.readSourceLog(this.sourceIndex, 'seen-compacted');
      const from = prev === null ? -1 : Number(prev);
      if (from >= batch) return;
      // the chain below this snapshot: every seen log of batches in [from, batch)
      const older = (await this.chainBelow(batch)).filter((b) => b >= from);
      for (const b of older) await this.checkpoint.deleteSourceLog(this.sourceIndex, `seen-${b}`);
      await this.checkpoint.writeSourceLog(this.sourceIndex, 'seen-compacted', String(batch));
    } catch (e) {
      this.log({ event: 'seen-log-cleanup-failed', batch, error: (e as Error).message });
    }
  }

  /** The batches of this source's file lists before `batch` (following each list's start), newest first, down to a missing one. */
  private async chainBelow(batch: number): Promise<number[]> {
    const out: number[] = [];
    let log = await this.filesLog(batch);
    while (log) {
      const s = parseOffset(log.start, 'start');
      if (s.kind !== 'files') break;
      out.push(s.batch);
      log = await this.filesLog(s.batch);
    }
    return out;
  }
}
