/** A StateStore wrapper that records what it is asked, for tests and the bench (bench/engine-run.ts). */
import type { LeaseHandle, OperatorStateSpec, StateChange, StateKey, StateStore } from '../ports';

export interface CommitRecord {
  readonly version: number;
  readonly changes: number;
  readonly puts: number;
  readonly deletes: number;
}

/** Delegates to `inner`, recording the keys read and the changes committed per version. */
export class CountingStateStore implements StateStore {
  readonly description: string;
  readonly commits: CommitRecord[] = [];
  keysRead = 0;
  constructor(private readonly inner: StateStore) {
    this.description = inner.description;
  }
  get(op: OperatorStateSpec, keys: StateKey[], version: number) {
    this.keysRead += keys.length;
    return this.inner.get(op, keys, version);
  }
  expired(op: OperatorStateSpec, wm: number, version: number, partitions?: readonly number[]) {
    return this.inner.expired(op, wm, version, partitions);
  }
  all(op: OperatorStateSpec, version: number, partitions?: readonly number[]) {
    return this.inner.all(op, version, partitions);
  }
  count(op: OperatorStateSpec, version: number) {
    return this.inner.count(op, version);
  }
  get retentionMs() {
    return this.inner.retentionMs;
  }
  firstAttempt(version: number) {
    this.inner.firstAttempt?.(version);
  }
  readAhead(op: OperatorStateSpec, partitions?: readonly number[]) {
    this.inner.readAhead?.(op, partitions);
  }
  check(op: OperatorStateSpec, version: number, changes: StateChange[], partitions?: readonly number[]) {
    return this.inner.check ? this.inner.check(op, version, changes, partitions) : Promise.resolve();
  }
  commit(op: OperatorStateSpec, version: number, changes: StateChange[], fence?: LeaseHandle, partitions?: readonly number[]) {
    let deletes = 0;
    for (const c of changes) if (c.value === null) deletes++;
    this.commits.push({ version, changes: changes.length, puts: changes.length - deletes, deletes });
    return this.inner.commit(op, version, changes, fence, partitions);
  }
}
