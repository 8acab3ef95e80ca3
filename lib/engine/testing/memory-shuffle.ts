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
