/**
 * The ShuffleStore port on S3 (a partitioned run's hand-offs between tasks): one object per key,
 * a part of one read by a range GET
 * under a prefix beside the checkpoint's (`<checkpoint>-shuffle/`: the checkpoint's head() lists
 * its own prefix, which must stay small). Keys start with the batch id, so the checkpoint's
 * retention deletes a batch's objects with one listing.
 */
import { S3Prefix, type S3PrefixOptions } from './prefix';
import type { ShuffleStore } from '../../engine/ports';

export class S3ShuffleStore extends S3Prefix implements ShuffleStore {
  constructor(opts: S3PrefixOptions) {
    super(opts, 'S3ShuffleStore');
  }

  async put(key: string, body: string): Promise<void> {
    // a retried task writes the same content again: a plain overwrite
    await this.s3.putBytes(this.bucket, this.root + key, Buffer.from(body, 'utf8'), 'application/json');
  }

  get(key: string): Promise<string | null> {
    return this.s3.getText(this.bucket, this.root + key);
  }

  getRange(key: string, start: number, end: number): Promise<string | null> {
    return this.s3.getRangeText(this.bucket, this.root + key, start, end);
  }

  async delete(key: string): Promise<void> {
    await this.s3.deleteKeys(this.bucket, [this.root + key]);
  }

  async purgeBelow(batchId: number): Promise<void> {
    const keys = (await this.s3.listAll(this.bucket, this.root))
      .map((o) => o.key)
      .filter((k) => {
        const id = Number(k.slice(this.root.length).split('/')[0]);
        return Number.isInteger(id) && id < batchId;
      });
    if (keys.length) await this.s3.deleteKeys(this.bucket, keys);
  }
}
