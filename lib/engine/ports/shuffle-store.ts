/**
 * Blobs of a partitioned run under its checkpoint (`<checkpoint>/shuffle/...`): what a read task
 * hands the partition tasks, what they hand the commit. Keys are deterministic, so a retried task
 * overwrites what an earlier attempt wrote with the same content.
 */
export interface ShuffleStore {
  readonly description: string;
  put(key: string, body: string): Promise<void>;
  /** The body under `key`, null when absent. */
  get(key: string): Promise<string | null>;
  /**
   * Bytes [start, end) of the UTF-8 body under `key` as text (S3's range GET), null when absent;
   * end past the body stops at its end, a start past it is an error, as on S3.
   */
  getRange(key: string, start: number, end: number): Promise<string | null>;
  /** Removes the blob under `key` (nothing when absent). */
  delete(key: string): Promise<void>;
  /** Removes every blob of batches below `batchId` (the checkpoint's retention). */
  purgeBelow(batchId: number): Promise<void>;
}
