/**
 * SqsNotificationDiscovery as the landing source's FileDiscovery (lib/aws/s3/discovery.ts):
 * notification mode plugs into the same source as the listing.
 *
 *   discover()   the queue's files ─▶ {files, complete: false}: notifications never name every file
 *                under the prefix, so the source does not check the prefix's layout (a check that
 *                needs them all); ETags quoted as S3's listing and GetObject give them, so a replay's
 *                ETag check compares like with like; lastModified (the event time) ─▶ lastModifiedMs
 *   announced    true: an object may be gone since its notification, so the source HEADs a batch's
 *                files before logging them and forgets the missing ones
 *   committed    the batch's messages are deleted; forget: those of files the source drops
 *   release()    at the run's end (pipeline.ts): held messages visible again for the next run
 */
import type { DiscoveredFile, DiscoveryStats, FileDiscovery } from '../s3/discovery';
import type { SqsNotificationDiscovery } from './notification-discovery';

export class NotificationFileDiscovery implements FileDiscovery {
  readonly announced = true;

  constructor(readonly notifications: SqsNotificationDiscovery) {}

  async discover(): Promise<{ files: DiscoveredFile[]; complete: boolean }> {
    const notified = await this.notifications.discover();
    // one candidate a key (an object overwritten within the run announces two ETags): the newest
    const byKey = new Map<string, DiscoveredFile>();
    for (const f of notified) {
      const prev = byKey.get(f.key);
      if (!prev || f.lastModified >= prev.lastModifiedMs)
        byKey.set(f.key, { key: f.key, size: f.size, etag: f.etag ? `"${f.etag}"` : '', lastModifiedMs: f.lastModified });
    }
    return { files: [...byKey.values()], complete: false };
  }

  committed(keys: readonly string[]): Promise<void> {
    return this.notifications.committed(keys);
  }

  forget(keys: readonly string[]): Promise<void> {
    return this.notifications.forget(keys);
  }

  /** Makes the messages still held visible again: the run ends without reading their files. */
  release(): Promise<void> {
    return this.notifications.release();
  }

  stats(): DiscoveryStats {
    return { lists: 0, fullListings: 0, incrementalListings: 0, sqs: this.notifications.stats() };
  }
}
