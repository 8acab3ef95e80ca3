/**
 * What a task container (a worker thread, a task Lambda's container) keeps from one task of a
 * partitioned run (partitioned.ts) for its next: the batch's `offsets/N` and its task plan
 * `N/plan`, which no task rewrites once written within a run (a replay plans a batch as it was
 * logged), and the run's record as the batch's plan task wrote it (only the batch's commit task
 * writes it again, and notes that here too). Kept for one (run, batch) at a time, and never a
 * miss: a task that finds nothing here reads the object as before, so a memo only saves requests.
 * The plan task notes what it wrote, so the batch's tasks on its container read none of it.
 */
export class RunMemo {
  private at = '';
  private readonly values = new Map<string, unknown>();

  async get<T>(runId: string, batchId: number, key: string, load: () => Promise<T>): Promise<T> {
    const at = this.moveTo(runId, batchId);
    if (this.values.has(key)) return this.values.get(key) as T;
    const value = await load();
    if (value !== null && this.at === at) this.values.set(key, value);
    return value;
  }

  /** Notes what a task just wrote for (run, batch), for the tasks after it. */
  set(runId: string, batchId: number, key: string, value: unknown): void {
    this.moveTo(runId, batchId);
    this.values.set(key, value);
  }

  /** The memo of (run, batch): another batch's values are dropped. */
  private moveTo(runId: string, batchId: number): string {
    const at = `${runId}\u0000${batchId}`;
    if (at !== this.at) {
      this.at = at;
      this.values.clear();
    }
    return at;
  }
}
