/** The CheckpointStore twin (the twins' common rules: twins.ts). */
import { CheckpointMismatchError } from '../errors';
import type { CheckpointHead, CheckpointStore, CommitEntry, Json, OffsetEntry, QueryMetadata } from '../ports';
import { copy } from './twins';

export class InMemoryCheckpoint implements CheckpointStore {
  readonly description = 'memory://checkpoint';
  metadata: QueryMetadata | null = null;
  readonly offsets = new Map<number, OffsetEntry>();
  readonly commits = new Map<number, CommitEntry>();
  readonly progress = new Map<number, Json>();
  readonly sourceLogs = new Map<string, string>();
  /** Entries (`offsets/3`, `commits/3`, `progress/3`) that exist but do not parse, as a damaged object would. */
  readonly unreadable = new Set<string>();

  async head(): Promise<CheckpointHead> {
    return {
      metadata: this.metadata === null ? null : copy(this.metadata),
      latestOffsetBatch: Math.max(-1, ...this.offsets.keys()),
      latestCommitBatch: Math.max(-1, ...this.commits.keys()),
    };
  }
  async writeMetadata(meta: QueryMetadata) {
    this.metadata = copy(meta);
  }
  async readOffsets(id: number) {
    return this.read(this.offsets, 'offsets', id);
  }
  async writeOffsets(e: OffsetEntry) {
    writeOnce(this.offsets, e.batchId, e, 'offsets');
  }
  async readCommit(id: number) {
    return this.read(this.commits, 'commits', id);
  }
  async writeCommit(e: CommitEntry) {
    // A replay may commit again; only the time of the commit may differ, and the first stays.
    writeOnce(this.commits, e.batchId, e, 'commits', (v) => ({ ...v, committedAtMs: 0 }));
  }
  async writeProgress(id: number, p: Json) {
    this.progress.set(id, copy(p));
  }
  async readProgress(id: number) {
    return this.read(this.progress, 'progress', id);
  }
  async purge(keepFrom: number) {
    for (const m of [this.offsets, this.commits, this.progress] as Map<number, unknown>[]) for (const k of [...m.keys()]) if (k < keepFrom) m.delete(k);
    for (const k of [...this.sourceLogs.keys()]) {
      const name = k.slice(k.indexOf('/') + 1);
      if (/^\d+$/.test(name) && Number(name) < keepFrom) this.sourceLogs.delete(k);
    }
  }
  async readSourceLog(i: number, name: string) {
    return this.sourceLogs.get(`${i}/${name}`) ?? null;
  }
  async writeSourceLog(i: number, name: string, body: string) {
    this.sourceLogs.set(`${i}/${name}`, body);
  }
  async deleteSourceLog(i: number, name: string) {
    this.sourceLogs.delete(`${i}/${name}`);
  }
  async writeSourceLogOnce(i: number, name: string, body: string) {
    const stored = this.sourceLogs.get(`${i}/${name}`);
    if (stored !== undefined) return stored;
    this.sourceLogs.set(`${i}/${name}`, body);
    return null;
  }

  private read<T extends Json | OffsetEntry | CommitEntry>(m: Map<number, T>, log: string, id: number): T | null {
    if (this.unreadable.has(`${log}/${id}`) && m.has(id)) {
      throw new CheckpointMismatchError(
        `checkpoint entry ${this.description}/${log}/${id} is not valid JSON (damaged in the twin): restore the object from a backup or S3 versioning, or start the query on a new checkpoint prefix`,
      );
    }
    const v = m.get(id);
    return v === undefined ? null : copy(v);
  }
}

/**
 * Write-once as S3's `If-None-Match: *` makes it: the first write stays; a second one is refused
 * (412), and the checkpoint then accepts it only when it says the same (`same` drops what may differ).
 */
function writeOnce<T>(m: Map<number, T>, id: number, v: T, what: string, same: (v: T) => unknown = (x) => x) {
  const prev = m.get(id);
  if (prev !== undefined) {
    if (JSON.stringify(same(prev)) !== JSON.stringify(same(copy(v)))) throw logConflict(what, id);
    return;
  }
  m.set(id, copy(v));
}

function logConflict(what: string, id: number): CheckpointMismatchError {
  return new CheckpointMismatchError(`${what}/${id} already exists with different content: another run wrote it; check that only one run per query is active`);
}
