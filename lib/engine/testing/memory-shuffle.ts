/** The ShuffleStore twin (the twins' common rules: twins.ts). */
import type { ShuffleStore } from '../ports';

/** The ShuffleStore port in memory: blobs by key, as the S3 one keeps them (overwritten by a retry). */
export class InMemoryShuffle implements ShuffleStore {
  readonly description = 'memory://shuffle';
  readonly blobs = new Map<string, string>();
  async put(key: string, body: string): Promise<void> {
    this.blobs.set(key, body);
  }
  async get(key: string): Promise<string | null> {
    return this.blobs.get(key) ?? null;
  }
  async getRange(key: string, start: number, end: number): Promise<string | null> {
    const body = this.blobs.get(key);
    if (body === undefined) return null;
    const bytes = Buffer.from(body, 'utf8');
    // S3 answers 416 InvalidRange to a range that starts past the object (any range of an empty one)
    if (start >= bytes.length) throw new Error(`InvalidRange: bytes=${start}-${end - 1} of ${key}, which has ${bytes.length} bytes`);
    return bytes.subarray(start, Math.min(end, bytes.length)).toString('utf8');
  }
  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }
  async purgeBelow(batchId: number): Promise<void> {
    for (const k of [...this.blobs.keys()]) {
      const id = Number(k.split('/')[0]);
      if (Number.isInteger(id) && id < batchId) this.blobs.delete(k);
    }
  }
}
